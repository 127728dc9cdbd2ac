//! The languages gate gates, each one module that owns what is its own: which files are its,
//! the facts of a file, its test discovery, its runners and their report formats. The stages
//! ask the table below rather than naming a language, the way difftastic and ast-grep keep
//! languages as data; what a stage still asks of Python or Go by name is listed in
//! ARCHITECTURE.md, the next to move behind this interface.

pub(crate) mod go;
pub(crate) mod python;
pub(crate) mod toolchain;

use crate::analyze::facts::Facts;
use crate::project::Project;
use crate::run::Runner;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One language, as the stages see it.
pub(crate) trait Language: Sync {
    /// Whether `path` is one of its source files.
    fn is_source(&self, path: &str) -> bool;
    /// What one of its source files says: imports, references, paths, flags. From the bytes
    /// alone, so the facts are cached by blob id.
    fn facts(&self, bytes: &[u8]) -> Facts;
    /// The grammar its facts are read with: a cached fact is valid only under the same one.
    fn grammar(&self) -> &'static str;
    /// Whether the selection unit `unit` (a test file, a Go package's tests) is one of its
    /// tests.
    fn is_test_unit(&self, unit: &str) -> bool;
    /// The commands that run `tests` in `project`'s tree (whose files are `files`, its working
    /// tree `root`); none when it has nothing to run.
    fn commands(
        &self,
        project: &Project,
        tests: Tests<'_>,
        files: &BTreeSet<String>,
        root: &Path,
    ) -> Vec<Box<dyn Runner>>;
    /// Its name: what the run plan's commands and kept toolchains are grouped by.
    fn name(&self) -> &'static str;
    /// Its runner's argv before the test arguments, as `project` configures it.
    fn runner_argv(&self, project: &Project, root: &Path) -> Vec<String>;
    /// The toolchain that runs its test `unit`, by name (`python3`, `go`), or why gate cannot
    /// hash what it runs.
    fn toolchain(&self, project: &Project, root: &Path, unit: &str) -> Result<String, String>;
    /// The identity of its toolchain `name` (asked under the runner's `env`, kept under
    /// `state`), or why it cannot be known.
    fn toolchain_identity(
        &self,
        name: &str,
        root: &Path,
        state: &Path,
        env: &BTreeMap<String, String>,
    ) -> Result<String, String>;
    /// How its test `unit` runs alone, as `gate audit` traces it: the argv and the folder.
    fn alone(&self, project: &Project, root: &Path, unit: &str) -> (Vec<String>, PathBuf);
}

/// What a language's runners are asked to run.
#[derive(Clone, Copy)]
pub(crate) enum Tests<'a> {
    /// Its whole suite, by name.
    Whole,
    /// These selected units of its own (never empty).
    Some(&'a [&'a str]),
}

/// Every language gate gates, in the order a path is offered to them.
pub(crate) static LANGUAGES: [&dyn Language; 2] = [&python::Python, &go::Go];

/// The language whose test `unit` is, if any.
pub(crate) fn of_test_unit(unit: &str) -> Option<&'static dyn Language> {
    LANGUAGES.iter().copied().find(|l| l.is_test_unit(unit))
}

/// The language whose source `path` is, if any.
pub(crate) fn of_source(path: &str) -> Option<&'static dyn Language> {
    LANGUAGES.iter().copied().find(|l| l.is_source(path))
}
