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
    fn name(&self) -> &'static str {
        "python"
    }

    fn is_source(&self, path: &str) -> bool {
        crate::path::is_python(path)
    }

    fn facts(&self, _path: &str, bytes: &[u8]) -> Facts {
        analyze::analyze(bytes)
    }

    fn cache_tag(&self, _path: &str) -> &'static str {
        ""
    }

    fn reads_whole(&self) -> bool {
        true
    }

    /// A module: not a stub or a conftest (collected, never imported by name).
    fn loadable(&self, path: &str) -> bool {
        crate::path::is_python(path)
            && !path.ends_with(".pyi")
            && crate::path::file_name(path) != "conftest.py"
    }

    fn grammar(&self) -> &'static str {
        analyze::GRAMMAR
    }
}
