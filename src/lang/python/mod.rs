//! Python: its sources (`.py`, `.pyi`) and their facts (`analyze`, and `scan`, the fast path
//! that reads most files without a syntax tree), pytest's discovery and
//! configuration (`pytest_ini`), the framework a project tests with (`framework`), its import
//! roots (`roots`), the modules `--doctest-modules` collects from disk (`untracked`), and the
//! runner with its collection probe (`pytest`, `gate_probe.py`).

pub(crate) mod analyze;
pub(crate) mod args;
pub(crate) mod framework;
pub(crate) mod pytest;
pub(crate) mod pytest_ini;
pub(crate) mod roots;
pub(crate) mod scan;
mod shims;
mod suite;
pub(crate) mod toolchain;
pub(crate) mod untracked;

use crate::analyze::facts::Facts;

pub(crate) struct Python;

impl super::Language for Python {
    fn is_source(&self, path: &str) -> bool {
        crate::path::is_python(path)
    }

    fn facts(&self, bytes: &[u8]) -> Facts {
        analyze::analyze(bytes)
    }

    fn grammar(&self) -> &'static str {
        analyze::GRAMMAR
    }
}
