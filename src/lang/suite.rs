//! A language's tests, as the run plan, fingerprints and audit ask them: which selection units
//! are its tests, the commands that run them, how one runs alone, and the toolchain that runs
//! them with its identity. The analysis' face of a language is `Language`; this one needs the
//! project and the runners, which sit above the analysis.

use super::{go, python};
use crate::project::Project;
use crate::run::Runner;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One language's tests.
pub(crate) trait Suite: Sync {
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

/// Every language's tests, in the order their runners run.
pub(crate) static SUITES: [&dyn Suite; 2] = [&python::Python, &go::Go];

/// The language whose test `unit` is, if any.
pub(crate) fn of_test_unit(unit: &str) -> Option<&'static dyn Suite> {
    SUITES.iter().copied().find(|l| l.is_test_unit(unit))
}
