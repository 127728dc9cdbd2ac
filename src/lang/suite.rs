//! A language's tests, as the run plan, fingerprints and audit ask them: which selection units
//! are its tests, the commands that run them, how one runs alone, and the toolchain that runs
//! them with its identity. The analysis' face of a language is `Language`; this one needs the
//! project and the runners, which sit above the analysis.

use super::{go, js, python};
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
    /// tree `root`), with the user's runner arguments `extra` (checked by `check_args`) after
    /// gate's own and before the tests; none when it has nothing to run.
    fn commands(
        &self,
        project: &Project,
        tests: Tests<'_>,
        files: &BTreeSet<String>,
        root: &Path,
        extra: &[String],
    ) -> Vec<Box<dyn Runner>>;
    /// Why the user's runner arguments `args` (`gate … -- ARGS`), or the options its runner
    /// reads from the environment (`PYTEST_ADDOPTS`, `GOFLAGS`), cannot be given to its runner
    /// in `project`, when they cannot: one not on its allow-list (`lang::args`) nor in the
    /// project's `allow_args`. Cheap when there are none: it runs on the warm path.
    fn check_args(&self, project: &Project, args: &[String]) -> Result<(), String>;
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
    /// Whether its runs show what they read outside the tree (the files no commit holds that a
    /// unit's process loaded or read, which a pass is entered with): `Some(true)` when its
    /// runner under `project` reports them, `Some(false)` when it cannot — such a pass cannot
    /// name them and is not entered —, `None` when its toolchain's identity stands for them.
    fn reads_outside(&self, _project: &Project, _root: &Path) -> Option<bool> {
        None
    }
    /// How its test `unit` runs alone, as `gate audit` traces it: the argv and the folder.
    fn alone(&self, project: &Project, root: &Path, unit: &str) -> (Vec<String>, PathBuf);
    /// Its tests in `units`, each unit → the ids of the tests it holds, for a shard split by
    /// test (`--shard-by test`); a unit left out runs whole. Why it cannot, when it cannot.
    fn tests_in(
        &self,
        _project: &Project,
        _root: &Path,
        _units: &[&str],
    ) -> Result<BTreeMap<String, Vec<String>>, String> {
        Ok(BTreeMap::new())
    }
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
pub(crate) static SUITES: [&dyn Suite; 3] = [&python::Python, &go::Go, &js::Js];

/// Why the user's runner arguments cannot be given to the runner of a language `project` has
/// tests of, when they cannot. `--` is refused for every runner: it would end the runner's
/// options, so what follows it (gate's tests among them) is read as something else.
pub(crate) fn check_args(project: &Project, args: &[String]) -> Result<(), String> {
    if args.iter().any(|a| a == "--") {
        return Err(
            "runner argument `--`: it would end the runner's options before gate's tests; give options only".into(),
        );
    }
    SUITES
        .iter()
        .try_for_each(|suite| suite.check_args(project, args))
}

/// The value of the runner's environment variable `name` as the caller's environment sets it,
/// when the project's `[env]` does not: set there, it is the project's own configuration (as
/// pytest's `addopts` is), which a commit cannot loosen unseen. `None` when unset or empty.
pub(crate) fn runner_env(project: &Project, name: &str) -> Option<String> {
    if project.config.env.contains_key(name) {
        return None;
    }
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// Whether `project` has tests of `suite` (a walk over its tests: only when there is
/// something to check).
pub(crate) fn has_tests(project: &Project, suite: &dyn Suite) -> bool {
    project.tests.iter().any(|t| suite.is_test_unit(t))
}

/// The language whose test `unit` is, if any.
pub(crate) fn of_test_unit(unit: &str) -> Option<&'static dyn Suite> {
    SUITES.iter().copied().find(|l| l.is_test_unit(unit))
}
