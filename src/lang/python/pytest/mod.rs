//! pytest: `python -m pytest ./<test files>`, run from the root of the gated tree.
//! The runner is never called without test arguments unless the whole suite is meant:
//! pytest with no arguments runs everything, which gate never does silently. No file name can
//! become an option: every path is given as `./path` (pytest reads a `-k…` name as an option
//! even after `--`, and an `@…` name as a file of arguments). pytest's exit code is read with what the probe
//! (`gate_probe.py`) saw, so "no tests collected" and a run cut short are never taken for a pass.

use crate::config::Config;
use crate::error::{Error, Result};
use crate::lang::python::framework::Framework;
use crate::lang::suite::Suite;
use crate::repo::checkout::Workspace;
use crate::run::events::{Event, Sink};
use crate::run::{At, Outcome};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

pub(crate) mod collect;
mod probe;

use probe::{Probe, Ran, broken, failed, judge, passed};

/// The runner's argv before the test arguments: `runner` from `.gate.toml`, else
/// `.venv/bin/python -m pytest` when the repository has that virtualenv, else `python3` (or
/// `python` where no `python3` is on PATH) `-m pytest`.
pub(crate) fn base_argv(config: &Config, framework: &Framework, root: &Path) -> Vec<String> {
    if let Some(argv) = &config.runner {
        return argv.clone();
    }
    let python = if root.join(".venv/bin/python").is_file() {
        ".venv/bin/python".to_string()
    } else if on_path("python3") {
        "python3".to_string()
    } else {
        "python".to_string()
    };
    framework.default_argv(python)
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

/// One pytest run: the runner, options gate adds, and the test arguments after `--`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Command {
    pub base: Vec<String>,
    /// `--ignore=…` for the siblings of a test whose name pytest cannot take as an argument.
    pub options: Vec<String>,
    /// Test files and node ids (or the folder of a file pytest cannot be given by name);
    /// empty for the whole suite.
    pub paths: Vec<String>,
    /// The selected test files, each of which pytest must collect.
    pub files: BTreeSet<String>,
    /// The user's runner arguments (`gate … -- ARGS`), after gate's options and before a `--`
    /// that ends them: whatever they are, no test argument is read as their value.
    pub extra: Vec<String>,
}

/// A name pytest reads as more than a path: `[` starts a parametrization and `::` a test
/// name, so pytest rejects the argument (and with it the whole run).
fn unpassable(file: &str) -> bool {
    file.contains('[') || file.contains("::")
}

impl Command {
    /// The command for `tests` (files, or `file::name` node ids) of a tree holding `files`.
    /// A file pytest cannot be given by name is collected through its folder instead, with
    /// every other entry of that folder ignored.
    pub(crate) fn new(base: Vec<String>, tests: &[&str], files: &BTreeSet<String>) -> Command {
        let mut paths = Vec::new();
        let mut folders: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        let mut selected = BTreeSet::new();
        for test in tests {
            let file = if files.contains(*test) {
                *test
            } else {
                test.split_once("::").map_or(*test, |(f, _)| f)
            };
            selected.insert(file.to_string());
            if unpassable(file) {
                // A node id of such a file runs the whole file, which holds the test.
                folders
                    .entry(crate::path::parent(file))
                    .or_default()
                    .insert(file);
            } else {
                paths.push(format!("./{test}"));
            }
        }
        let mut options = Vec::new();
        for (dir, keep) in &folders {
            let prefix = if dir.is_empty() {
                String::new()
            } else {
                format!("{dir}/")
            };
            let mut entries: BTreeSet<&str> = BTreeSet::new();
            for f in files
                .range(prefix.clone()..)
                .take_while(|f| f.starts_with(&prefix))
            {
                let rest = &f[prefix.len()..];
                let entry = rest.split_once('/').map_or(rest, |(d, _)| d);
                entries.insert(&f[..prefix.len() + entry.len()]);
            }
            for entry in entries {
                let name = crate::path::file_name(entry);
                let kept = keep.contains(entry)
                    || paths.iter().any(|p| {
                        let p = p.strip_prefix("./").unwrap_or(p);
                        p == entry || p.starts_with(&format!("{entry}/"))
                    })
                    || name == "conftest.py"
                    || name == "__init__.py";
                if !kept {
                    options.push(format!("--ignore=./{entry}"));
                }
            }
            paths.push(if dir.is_empty() {
                ".".to_string()
            } else {
                format!("./{dir}")
            });
        }
        paths.sort();
        paths.dedup();
        Command {
            base,
            options,
            paths,
            files: selected,
            extra: Vec::new(),
        }
    }

    /// unittest's or Django's command for `tests`: each a dotted label (`tests.test_cart`,
    /// `app.tests.TestX.test_y`), which can never be read as an option.
    pub(crate) fn labels(base: Vec<String>, tests: &[&str], framework: &Framework) -> Command {
        let mut paths: Vec<String> = tests.iter().map(|t| framework.label(t)).collect();
        paths.sort();
        paths.dedup();
        Command {
            base,
            options: Vec::new(),
            paths,
            files: tests
                .iter()
                .map(|t| t.split_once("::").map_or(*t, |(f, _)| f).to_string())
                .collect(),
            extra: Vec::new(),
        }
    }

    /// The whole suite: the runner alone. pytest goes on past a file that fails to collect
    /// (a whole-suite run is judged file by file: an import broken in one module must be that
    /// module's tests' error, not a session cut short that judges nothing).
    pub(crate) fn whole_suite(base: Vec<String>) -> Command {
        let mut command = Command {
            base,
            options: Vec::new(),
            paths: Vec::new(),
            files: BTreeSet::new(),
            extra: Vec::new(),
        };
        if command.is_pytest() {
            command
                .options
                .push("--continue-on-collection-errors".into());
        }
        command
    }

    pub(crate) fn argv(&self) -> Vec<String> {
        self.argv_with(&[])
    }

    /// The runner, `gate`'s own options (`own`: the probe's, then the command's), the user's
    /// arguments, and the tests. The user's are closed by `--` (pytest's, unittest's and
    /// Django's argparse all read it so): an option of theirs left without its value (`-k`)
    /// then stops the runner with a usage error instead of taking the first test as its value.
    fn argv_with(&self, own: &[String]) -> Vec<String> {
        let mut argv = self.base.clone();
        argv.extend(own.iter().cloned());
        argv.extend(self.options.iter().cloned());
        if !self.extra.is_empty() {
            argv.extend(self.extra.iter().cloned());
            argv.push("--".into());
        }
        argv.extend(self.paths.iter().cloned());
        argv
    }

    /// Whether the runner is pytest itself (`python -m pytest`, `uv run pytest`), so the probe
    /// can be loaded into it. A wrapper (`tox`, a script) may not pass the probe on.
    fn is_pytest(&self) -> bool {
        runs_pytest(&self.base)
    }
}

/// Whether a runner's argv runs pytest itself (`python -m pytest`, `uv run pytest`), which
/// gate's probe is loaded into.
pub(crate) fn runs_pytest(argv: &[String]) -> bool {
    argv.iter()
        .any(|w| matches!(crate::path::file_name(w), "pytest" | "py.test"))
}

const PROBE: &str = include_str!("../gate_probe.py");

impl crate::run::Runner for Command {
    fn language(&self) -> &'static str {
        "python"
    }

    fn argv(&self) -> Vec<String> {
        Command::argv(self)
    }

    fn test_args(&self) -> usize {
        self.paths.len()
    }

    fn missing(&self, dir: &Path) -> Option<&str> {
        self.files
            .iter()
            .find(|p| !dir.join(p).exists())
            .map(String::as_str)
    }

    /// The project's Python tests are where the JUnit report's results are placed.
    fn run(&self, at: &At<'_>, sink: &mut dyn Sink) -> Result<Outcome> {
        let tests = at
            .project
            .tests
            .iter()
            .filter(|t| super::Python.is_test_unit(t))
            .cloned()
            .collect();
        run(
            self,
            &tests,
            at.env,
            at.workspace,
            at.root,
            at.quiet_stdout,
            sink,
        )
    }
}

/// Runs `command` in the workspace (see `run::exit_code`); its selected files are checked
/// against what pytest collected, and each test's result (from pytest's JUnit report, placed
/// on the test files `tests`) and every note go to `sink`.
fn run(
    command: &Command,
    tests: &BTreeSet<String>,
    env: &BTreeMap<String, String>,
    workspace: &Workspace,
    root: &Path,
    quiet_stdout: bool,
    sink: &mut dyn Sink,
) -> Result<Outcome> {
    if !command.is_pytest() {
        let code = crate::run::exit_code(&command.argv(), env, workspace, root, quiet_stdout)?;
        return Ok(wrapper(command, code).emit(sink));
    }
    preflight(command, env, workspace, root)?;
    let scratch = crate::process::temp_dir("gate-probe")
        .map_err(|e| Error::io(std::env::temp_dir(), "cannot create the probe folder", e))?;
    let probe_py = scratch.path().join("gate_probe.py");
    let out = scratch.path().join("probe.json");
    let junit = scratch.path().join("junit.xml");
    std::fs::write(&probe_py, PROBE)
        .map_err(|e| Error::io(&probe_py, "cannot write the probe", e))?;
    let env = probe_env(env, scratch.path(), &out);
    let argv = command.argv_with(&[
        "-p".into(),
        "gate_probe".into(),
        format!("--junitxml={}", junit.display()),
    ]);
    let code = crate::run::exit_code(&argv, &env, workspace, root, quiet_stdout)?;
    let probe: Option<Probe> = std::fs::read(&out)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    // No report when pytest never got to write one (it stopped early): the exit code and the
    // probe say what happened. A report of tests whose body never ran holds no result.
    let unrun = probe.as_ref().is_some_and(|p| p.unrun.why().is_some());
    let mut foreign = Vec::new();
    let report = std::fs::read(&junit);
    if let (Ok(bytes), false) = (&report, unrun) {
        foreign = report_junit(bytes, (tests, &command.files), probe.as_ref(), sink);
    }
    if let Some(p) = &probe {
        p.report(command, sink);
    }
    let ran = probe::placed(judge(code, probe.as_ref(), command), &foreign);
    // A session that finished wrote its report, unless the project's own configuration turned
    // the report off (`-p no:junitxml` in its addopts): then no test has a result to record.
    if report.is_err() && probe.is_some() && !unrun {
        return Ok(broken(
            code,
            "pytest finished its session but wrote no JUnit report (`-p no:junitxml` in the project's addopts?): its results cannot be read, and the run is no pass".into(),
        )
        .emit(sink));
    }
    Ok(ran.emit(sink))
}

/// A runner that is not pytest itself (a wrapper gate cannot load the probe into): its exit
/// code alone.
fn wrapper(command: &Command, code: Option<i32>) -> Ran {
    match code {
        Some(0) => passed(Vec::new()),
        Some(1) => failed(),
        Some(5) => broken(
            Some(5),
            format!(
                "`{}` ran no test of the selected files (exit 5); gate asks why only when the runner is pytest itself",
                command.base.join(" ")
            ),
        ),
        other => broken(other, String::new()),
    }
}

/// The run's environment: the probe's folder first on `PYTHONPATH` (so `-p gate_probe` finds
/// it), and where the probe writes its record (`out`).
fn probe_env(
    env: &BTreeMap<String, String>,
    scratch: &Path,
    out: &Path,
) -> BTreeMap<String, String> {
    let mut env = env.clone();
    let inherited = env
        .get("PYTHONPATH")
        .cloned()
        .or_else(|| std::env::var("PYTHONPATH").ok())
        .filter(|p| !p.is_empty());
    let dir = scratch.display().to_string();
    env.insert(
        "PYTHONPATH".into(),
        inherited.map_or_else(|| dir.clone(), |p| format!("{dir}:{p}")),
    );
    env.insert("GATE_PROBE_OUT".into(), out.display().to_string());
    env.insert("GATE_PROBE_TRACE".into(), "1".into());
    env
}

/// Each test's result from pytest's JUnit report, placed on the test files `tests` — where the
/// report names a test from elsewhere (a moved rootdir, a `--junit-prefix`), by what the
/// probe saw it collect. A subset run's result goes to `sink` only under an id one of its
/// `selected` files defines, computed from the repository root: any other (returned) would
/// file a failure under a test that does not exist.
fn report_junit(
    bytes: &[u8],
    (tests, selected): (&BTreeSet<String>, &BTreeSet<String>),
    probe: Option<&Probe>,
    sink: &mut dyn Sink,
) -> Vec<String> {
    let mut foreign = Vec::new();
    match crate::run::junit::parse(bytes) {
        Ok(mut cases) => {
            if let Some(probe) = probe {
                foreign = probe.unmove(&mut cases);
            }
            for result in crate::run::junit::results(&cases, tests) {
                let placed = result.file.as_ref().is_some_and(|f| selected.contains(f));
                if placed || selected.is_empty() {
                    sink.event(Event::Test(&result));
                } else {
                    foreign.push(result.id);
                }
            }
        }
        Err(e) => sink.event(Event::Note(&format!(
            "pytest's JUnit report cannot be read ({e}): its tests have no results"
        ))),
    }
    foreign
}

/// `<interpreter> -m pytest` with an interpreter that lacks pytest would exit 1 — "tests
/// failed" — with no test run: asked first (a module lookup, no import), it is a runner that
/// cannot start (exit 4), named with its fix.
fn preflight(
    command: &Command,
    env: &BTreeMap<String, String>,
    workspace: &Workspace,
    root: &Path,
) -> Result<()> {
    let Some(at) = command
        .base
        .windows(2)
        .position(|w| w[0] == "-m" && w[1] == "pytest")
    else {
        return Ok(());
    };
    let mut argv = command.base[..at].to_vec();
    argv.extend([
        "-c".to_string(),
        "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('pytest') else 3)"
            .to_string(),
    ]);
    let Some(mut cmd) = crate::run::command(&argv, env, workspace, root) else {
        return Ok(());
    };
    cmd.stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // An interpreter that does not start is reported by the run itself, with its error.
    match cmd.status() {
        Ok(status) if status.code() == Some(3) => Err(crate::run::RunnerError::NoModule {
            interpreter: command.base[..at].join(" "),
            module: "pytest",
        }
        .into()),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests;
