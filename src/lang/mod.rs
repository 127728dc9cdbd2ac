//! The languages gate gates, each one module that owns what is its own: which files are its,
//! the facts of a file, its test discovery, its runners and their report formats, its
//! toolchain's identity. The stages ask the tables rather than naming a language, the way
//! difftastic and ast-grep keep languages as data. A language has two faces, each a small
//! interface with its table: `Language` (here: its files and their facts, which the analysis
//! low in the stages asks) and `suite::Suite` (its tests: their runners and toolchain, which
//! the run plan, fingerprints and audit ask, and which needs the project the analysis builds);
//! split so the analysis never imports what sits above it. What a stage still asks of Python
//! or Go by name is listed in ARCHITECTURE.md.

pub(crate) mod args;
pub(crate) mod go;
pub(crate) mod python;
pub(crate) mod suite;
pub(crate) mod toolchain;

use crate::analyze::facts::Facts;

/// One language, as the stages see it.
pub(crate) trait Language: Sync {
    /// Whether `path` is one of its source files.
    fn is_source(&self, path: &str) -> bool;
    /// What one of its source files says: imports, references, paths, flags. From the bytes
    /// alone, so the facts are cached by blob id.
    fn facts(&self, bytes: &[u8]) -> Facts;
    /// The grammar its facts are read with: a cached fact is valid only under the same one.
    fn grammar(&self) -> &'static str;
}

/// Every language gate gates, in the order a path is offered to them.
pub(crate) static LANGUAGES: [&dyn Language; 2] = [&python::Python, &go::Go];

/// The language whose source `path` is, if any.
pub(crate) fn of_source(path: &str) -> Option<&'static dyn Language> {
    LANGUAGES.iter().copied().find(|l| l.is_source(path))
}
