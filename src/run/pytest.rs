//! pytest: `python -m pytest ./<test files>`, run from the root of the gated tree.
//! The runner is never called without test arguments unless the whole suite is meant:
//! pytest with no arguments runs everything, which gate never does silently. No file name can
//! become an option: every path is given as `./path` (pytest reads a `-k…` name as an option
//! even after `--`, and an `@…` name as a file of arguments). pytest's exit code is read with what the probe
//! (`gate_probe.py`) saw, so "no tests collected" and a run cut short are never taken for a pass.

use super::Outcome;
use super::events::{Event, Sink};
use crate::analyze::framework::Framework;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::repo::checkout::Workspace;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

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

    fn argv_with(&self, extra: &[String]) -> Vec<String> {
        let mut argv = self.base.clone();
        argv.extend(extra.iter().cloned());
        argv.extend(self.options.iter().cloned());
        argv.extend(self.paths.iter().cloned());
        argv
    }

    /// Whether the runner is pytest itself (`python -m pytest`, `uv run pytest`), so the probe
    /// can be loaded into it. A wrapper (`tox`, a script) may not pass the probe on.
    fn is_pytest(&self) -> bool {
        self.base
            .iter()
            .any(|w| matches!(crate::path::file_name(w), "pytest" | "py.test"))
    }
}

/// What a pytest run ended with, and what gate has to say about it (a selected file that held
/// no test, a file pytest never collected, a run cut short).
struct Ran {
    pub outcome: Outcome,
    pub notes: Vec<String>,
}

/// What the probe wrote: per collected file, relative to where pytest ran.
#[derive(serde::Deserialize)]
struct Probe {
    files: BTreeMap<String, ProbeFile>,
    /// Per test file, what its collection and run opened under the directory pytest ran in.
    #[serde(default)]
    opened: BTreeMap<String, Vec<String>>,
    /// Per repository module, what it read while it was being imported.
    #[serde(default)]
    read_by: BTreeMap<String, Vec<String>>,
    /// Per test file, the environment variables its own code read (`*`: the whole mapping).
    #[serde(default)]
    env: BTreeMap<String, Vec<String>>,
    /// Per test file, the repository modules loaded in the process when its last test ended.
    #[serde(default)]
    loaded: BTreeMap<String, Vec<String>>,
}

#[derive(serde::Deserialize)]
struct ProbeFile {
    collected: bool,
    error: bool,
    items: u64,
    deselected: u64,
    selected: u64,
    failed: u64,
    /// Tests whose call passed (none with a probe older than this gate).
    #[serde(default)]
    passed: u64,
}

const PROBE: &str = include_str!("gate_probe.py");

/// Runs `command` in the workspace (see `run::exit_code`); its selected files are checked
/// against what pytest collected, and each test's result (from pytest's JUnit report, placed
/// on the test files `tests`) and every note go to `sink`.
pub(crate) fn run(
    command: &Command,
    tests: &BTreeSet<String>,
    env: &BTreeMap<String, String>,
    workspace: &Workspace,
    root: &Path,
    quiet_stdout: bool,
    sink: &mut dyn Sink,
) -> Result<Outcome> {
    if !command.is_pytest() {
        let code = super::exit_code(&command.argv(), env, workspace, root, quiet_stdout)?;
        let ran = match code {
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
        };
        return Ok(ran.emit(sink));
    }
    preflight(command, env, workspace, root)?;
    let scratch = crate::process::temp_dir("gate-probe")
        .map_err(|e| Error::io(std::env::temp_dir(), "cannot create the probe folder", e))?;
    let probe_py = scratch.path().join("gate_probe.py");
    let out = scratch.path().join("probe.json");
    let junit = scratch.path().join("junit.xml");
    std::fs::write(&probe_py, PROBE)
        .map_err(|e| Error::io(&probe_py, "cannot write the probe", e))?;
    let mut env = env.clone();
    let inherited = env
        .get("PYTHONPATH")
        .cloned()
        .or_else(|| std::env::var("PYTHONPATH").ok())
        .filter(|p| !p.is_empty());
    let dir = scratch.path().display().to_string();
    env.insert(
        "PYTHONPATH".into(),
        inherited.map_or_else(|| dir.clone(), |p| format!("{dir}:{p}")),
    );
    env.insert("GATE_PROBE_OUT".into(), out.display().to_string());
    env.insert("GATE_PROBE_TRACE".into(), "1".into());
    let argv = command.argv_with(&[
        "-p".into(),
        "gate_probe".into(),
        format!("--junitxml={}", junit.display()),
    ]);
    let code = super::exit_code(&argv, &env, workspace, root, quiet_stdout)?;
    let probe: Option<Probe> = std::fs::read(&out)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    // No report when pytest never got to write one (it stopped early): the exit code and the
    // probe say what happened.
    if let Ok(bytes) = std::fs::read(&junit) {
        match super::junit::parse(&bytes) {
            Ok(cases) => {
                for result in super::junit::results(&cases, tests) {
                    sink.event(Event::Test(&result));
                }
            }
            Err(e) => sink.event(Event::Note(&format!(
                "pytest's JUnit report cannot be read ({e}): its tests have no results"
            ))),
        }
    }
    if let Some(p) = &probe {
        for (unit, files) in &p.opened {
            let whole = whole(command, p, unit);
            sink.event(Event::Opened { unit, files, whole });
        }
        for (module, files) in &p.read_by {
            sink.event(Event::ReadAtImport { module, files });
        }
        for (unit, names) in &p.env {
            sink.event(Event::EnvRead { unit, names });
        }
        for (unit, files) in &p.loaded {
            sink.event(Event::Loaded { unit, files });
        }
    }
    Ok(judge(code, probe.as_ref(), command).emit(sink))
}

/// Whether `unit`'s trace is all it opens: pytest was given the whole file (not a node id of
/// it), collected it, and every one of its tests ran and passed — none deselected, skipped,
/// failed or errored. A run cut short (`-x`, `--maxfail`, an interruption), a deselection, or
/// a test failing before the code that opens a file, each saw a part of it.
fn whole(command: &Command, probe: &Probe, unit: &str) -> bool {
    let node_id = command.paths.iter().any(|p| {
        p.strip_prefix("./")
            .and_then(|p| p.strip_prefix(unit))
            .is_some_and(|rest| rest.starts_with("::"))
    });
    probe.files.get(unit).is_some_and(|f| {
        !node_id
            && f.collected
            && !f.error
            && f.items > 0
            && f.deselected == 0
            && f.selected == f.items
            && f.failed == 0
            && f.passed == f.items
    })
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
    let Some(mut cmd) = super::command(&argv, env, workspace, root) else {
        return Ok(());
    };
    cmd.stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // An interpreter that does not start is reported by the run itself, with its error.
    match cmd.status() {
        Ok(status) if status.code() == Some(3) => Err(super::RunnerError::NoModule {
            interpreter: command.base[..at].join(" "),
            module: "pytest",
        }
        .into()),
        _ => Ok(()),
    }
}

impl Ran {
    fn emit(self, sink: &mut dyn Sink) -> Outcome {
        for note in &self.notes {
            sink.event(Event::Note(note));
        }
        self.outcome
    }
}

fn passed(notes: Vec<String>) -> Ran {
    Ran {
        outcome: Outcome::Passed,
        notes,
    }
}

fn failed() -> Ran {
    Ran {
        outcome: Outcome::Failed(1),
        notes: Vec::new(),
    }
}

fn broken(code: Option<i32>, note: String) -> Ran {
    Ran {
        outcome: Outcome::Broken(code),
        notes: if note.is_empty() {
            Vec::new()
        } else {
            vec![note]
        },
    }
}

/// pytest's exit code read with the probe's record: 0 and 5 pass only when every selected file
/// was collected (a file that holds no test, or whose tests the project's own options
/// deselected, is named); 1 is a failure only when a test failed.
fn judge(code: Option<i32>, probe: Option<&Probe>, command: &Command) -> Ran {
    let Some(code) = code else {
        return broken(None, "pytest was killed by a signal".into());
    };
    if !matches!(code, 0 | 1 | 5) {
        return broken(Some(code), String::new());
    }
    let Some(probe) = probe else {
        return broken(
            Some(code),
            format!(
                "pytest exited {code} without finishing its session (gate's probe wrote no record)"
            ),
        );
    };
    // A file that failed to collect is a failure of that file (a whole-suite run goes on past
    // it, and pytest exits 1).
    let failures: u64 = probe
        .files
        .values()
        .map(|f| f.failed + u64::from(f.error))
        .sum();
    if code == 1 {
        return if failures > 0 {
            failed()
        } else {
            broken(
                Some(1),
                "pytest exited 1 but no test failed: the run was cut short (a closed output pipe?)"
                    .into(),
            )
        };
    }
    if command.files.is_empty() {
        return if code == 5 {
            broken(Some(5), "the whole suite collected no test".into())
        } else {
            passed(Vec::new())
        };
    }
    let mut notes = Vec::new();
    let mut missing = Vec::new();
    for file in command.files.iter().map(String::as_str) {
        match probe.files.get(file) {
            None => missing.push(file),
            Some(f) if !f.collected && !f.error => missing.push(file),
            Some(f) if f.error || f.selected > 0 => {}
            Some(f) if f.items == 0 => {
                notes.push(format!("{file} yielded no test: it holds none"));
            }
            Some(f) if f.deselected >= f.items => notes.push(format!(
                "{file} yielded no test: all {} of its tests were deselected by the project's own options (`-m`, `-k` or `--deselect` in addopts)",
                f.items
            )),
            Some(f) => notes.push(format!(
                "{file} yielded no test: the project's own collection hooks removed its {} test(s)",
                f.items
            )),
        }
    }
    if !missing.is_empty() {
        let mut all = vec![format!(
            "pytest did not collect {} selected file(s): {} — excluded by the project's own configuration (`--ignore`, `collect_ignore`, `norecursedirs`?), so none of its tests ran",
            missing.len(),
            missing.join(", ")
        )];
        all.extend(notes);
        return Ran {
            outcome: Outcome::Broken(Some(code)),
            notes: all,
        };
    }
    passed(notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(files: &[&str]) -> BTreeSet<String> {
        files.iter().map(|f| f.to_string()).collect()
    }

    #[test]
    fn paths_are_given_as_paths_and_unpassable_names_go_through_their_folder() {
        let files = set(&[
            "-kx_test.py",
            "tests/__init__.py",
            "tests/conftest.py",
            "tests/data/x.json",
            "tests/test_[x].py",
            "tests/test_a.py",
            "tests/test_b.py",
        ]);
        let base = vec!["pytest".to_string()];
        let c = Command::new(base.clone(), &["-kx_test.py", "tests/test_a.py"], &files);
        assert_eq!(c.argv(), ["pytest", "./-kx_test.py", "./tests/test_a.py"]);
        let c = Command::new(base, &["tests/test_[x].py", "tests/test_a.py"], &files);
        assert_eq!(
            c.argv(),
            [
                "pytest",
                "--ignore=./tests/data",
                "--ignore=./tests/test_b.py",
                "./tests",
                "./tests/test_a.py"
            ]
        );
        // The whole suite goes on past a file that fails to collect; a wrapper is not told.
        assert_eq!(
            Command::whole_suite(vec!["pytest".into()]).argv(),
            ["pytest", "--continue-on-collection-errors"]
        );
        assert_eq!(
            Command::whole_suite(vec!["tox".into(), "-e".into(), "py".into()]).argv(),
            ["tox", "-e", "py"]
        );
    }

    /// (file, collected, items, deselected, failed); what is neither deselected nor failed ran.
    fn probe(files: &[(&str, bool, u64, u64, u64)]) -> Probe {
        Probe {
            files: files
                .iter()
                .map(|&(p, collected, items, deselected, failed)| {
                    (
                        p.to_string(),
                        ProbeFile {
                            collected,
                            error: false,
                            items,
                            deselected,
                            selected: items - deselected,
                            failed,
                            passed: items - deselected - failed,
                        },
                    )
                })
                .collect(),
            opened: BTreeMap::new(),
            read_by: BTreeMap::new(),
            loaded: BTreeMap::new(),
            env: BTreeMap::new(),
        }
    }

    #[test]
    fn a_trace_is_whole_only_when_every_test_of_the_whole_file_ran_and_passed() {
        let files = set(&["t/test_a.py", "t/test_b.py"]);
        let file = Command::new(vec!["pytest".into()], &["t/test_a.py"], &files);
        let node = Command::new(vec!["pytest".into()], &["t/test_a.py::test_x"], &files);
        // (items, deselected, failed, passed)
        let ran = |(items, deselected, failed, passed): (u64, u64, u64, u64)| {
            let mut p = probe(&[("t/test_a.py", true, items, deselected, failed)]);
            p.files.get_mut("t/test_a.py").unwrap().passed = passed;
            p
        };
        assert!(whole(&file, &ran((2, 0, 0, 2)), "t/test_a.py"));
        for (case, why) in [
            ((2, 1, 0, 1), "a deselected test"),
            ((2, 0, 1, 1), "a failed test"),
            (
                (2, 0, 0, 1),
                "a test that never ran (-x, an interruption) or was skipped",
            ),
            ((0, 0, 0, 0), "no test"),
        ] {
            assert!(!whole(&file, &ran(case), "t/test_a.py"), "{why}");
        }
        assert!(
            !whole(&node, &ran((1, 0, 0, 1)), "t/test_a.py"),
            "a node id"
        );
        assert!(
            !whole(&file, &ran((2, 0, 0, 2)), "t/test_b.py"),
            "never collected"
        );
    }

    #[test]
    fn exit_codes_are_read_with_what_pytest_collected() {
        let c = Command::new(
            vec!["pytest".into()],
            &["t/test_a.py", "t/test_b.py"],
            &set(&["t/test_a.py", "t/test_b.py"]),
        );
        let is = |r: &Ran| match r.outcome {
            Outcome::Passed => "passed",
            Outcome::Failed(_) => "failed",
            Outcome::Broken(_) => "broken",
        };
        let both = probe(&[
            ("t/test_a.py", true, 2, 0, 0),
            ("t/test_b.py", true, 0, 0, 0),
        ]);
        let r = judge(Some(0), Some(&both), &c);
        assert_eq!(is(&r), "passed");
        assert_eq!(r.notes, ["t/test_b.py yielded no test: it holds none"]);
        let deselected = probe(&[
            ("t/test_a.py", true, 2, 2, 0),
            ("t/test_b.py", true, 1, 1, 0),
        ]);
        let r = judge(Some(5), Some(&deselected), &c);
        assert_eq!(is(&r), "passed");
        assert!(
            r.notes.iter().all(|n| n.contains("deselected")),
            "{:?}",
            r.notes
        );
        let one = probe(&[("t/test_a.py", true, 2, 0, 0)]);
        let r = judge(Some(5), Some(&one), &c);
        assert_eq!(is(&r), "broken");
        assert!(r.notes[0].contains("did not collect 1 selected file(s): t/test_b.py"));
        assert_eq!(is(&judge(Some(0), None, &c)), "broken");
        assert_eq!(is(&judge(Some(1), Some(&both), &c)), "broken");
        let failing = probe(&[
            ("t/test_a.py", true, 2, 0, 1),
            ("t/test_b.py", true, 1, 0, 0),
        ]);
        assert_eq!(is(&judge(Some(1), Some(&failing), &c)), "failed");
        assert_eq!(is(&judge(Some(2), Some(&both), &c)), "broken");
        assert_eq!(is(&judge(None, Some(&both), &c)), "broken");
    }
}
