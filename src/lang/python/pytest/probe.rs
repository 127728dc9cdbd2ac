//! What gate's probe (`gate_probe.py`) saw of a pytest run, and pytest's exit code read with
//! it: whether the run passed, failed or broke, the notes that say why, and the traces each
//! test file's run left. Apart from running pytest, which only hands the record over.

use super::Command;
use crate::run::Outcome;
use crate::run::events::{Event, Sink};
use std::collections::BTreeMap;

/// What a pytest run ended with, and what gate has to say about it (a selected file that held
/// no test, a file pytest never collected, a run cut short).
pub(super) struct Ran {
    pub outcome: Outcome,
    pub notes: Vec<String>,
}

/// What the probe wrote: per collected file, relative to where pytest ran.
#[derive(serde::Deserialize)]
pub(super) struct Probe {
    pub(super) files: BTreeMap<String, ProbeFile>,
    /// Per test file, what its collection and run opened under the directory pytest ran in.
    #[serde(default)]
    pub(super) opened: BTreeMap<String, Vec<String>>,
    /// Per repository module, what it read while it was being imported.
    #[serde(default)]
    pub(super) read_by: BTreeMap<String, Vec<String>>,
    /// Per test file, the environment variables its own code read (`*`: the whole mapping).
    #[serde(default)]
    pub(super) env: BTreeMap<String, Vec<String>>,
    /// Per test file, the repository modules loaded in the process when its last test ended.
    #[serde(default)]
    pub(super) loaded: BTreeMap<String, Vec<String>>,
    /// What the process read that commits may not hold: every module file loaded and every
    /// file read outside the repository, in the order first seen.
    #[serde(default)]
    pub(super) outside: Outside,
    /// What pytest reported without running a test body.
    #[serde(default)]
    pub(super) unrun: Unrun,
    /// JUnit's `classname` NUL `name` → the test's file and its classname as written from
    /// where pytest ran, for each test whose report names it otherwise (a moved rootdir, a
    /// `--junit-prefix`).
    #[serde(default)]
    pub(super) moved: BTreeMap<String, (String, String)>,
    /// The `classname` NUL `name` keys two collected tests share: neither can be told from
    /// the report.
    #[serde(default)]
    pub(super) ambiguous: std::collections::BTreeSet<String>,
}

/// Tests pytest reported without running their body: it only collected (`--collect-only`), or
/// set tests up and reported them passed (`--setup-only`, `--setup-plan`), however asked.
#[derive(serde::Deserialize, Default)]
pub(super) struct Unrun {
    /// pytest's modes that run no test body as written (`--collect-only`, `--trace`), set.
    modes: Vec<String>,
    uncalled: u64,
    /// Collected tests whose run never started in a session that ended well (`--fixtures`).
    #[serde(default)]
    unstarted: u64,
    first: Vec<String>,
}

impl Unrun {
    /// Why the run's results are no results, when they are not.
    pub(super) fn why(&self) -> Option<String> {
        if let Some(mode) = self.modes.first() {
            return Some(format!(
                "pytest ran in a mode that runs no test body as written (`{mode}`): no result is recorded, and the run is no pass"
            ));
        }
        let more = |n: u64| {
            let more = if n > self.first.len() as u64 {
                ", …"
            } else {
                ""
            };
            format!("{}{more}", self.first.join(", "))
        };
        if self.uncalled > 0 {
            return Some(format!(
                "pytest reported {} test(s) without running their body ({}): set up only (`--setup-only`, `--setup-plan`), so their results are not recorded and the run is no pass",
                self.uncalled,
                more(self.uncalled)
            ));
        }
        (self.unstarted > 0).then(|| {
            format!(
                "pytest collected {} selected test(s) it never ran ({}) and ended its session well: an option ran something else (`--fixtures`?), and the run is no pass",
                self.unstarted,
                more(self.unstarted)
            )
        })
    }
}

/// The files a run read outside the tree, in the order first seen, and per test file how many
/// of them had been read when its last test ended.
#[derive(serde::Deserialize, Default)]
pub(super) struct Outside {
    files: Vec<String>,
    at: BTreeMap<String, usize>,
    /// Per test file, the process its run started (or that ran on while it ran) whose reads
    /// the probe does not see: a Python interpreter, a shell, a fork.
    #[serde(default)]
    spawned: BTreeMap<String, String>,
}

#[derive(serde::Deserialize)]
pub(super) struct ProbeFile {
    pub(super) collected: bool,
    pub(super) error: bool,
    pub(super) items: u64,
    pub(super) deselected: u64,
    pub(super) selected: u64,
    pub(super) failed: u64,
    /// Tests whose call passed (none with a probe older than this gate).
    #[serde(default)]
    pub(super) passed: u64,
}

impl Ran {
    pub(super) fn emit(self, sink: &mut dyn Sink) -> Outcome {
        for note in &self.notes {
            sink.event(Event::Note(note));
        }
        self.outcome
    }
}

pub(super) fn passed(notes: Vec<String>) -> Ran {
    Ran {
        outcome: Outcome::Passed,
        notes,
    }
}

pub(super) fn failed() -> Ran {
    Ran {
        outcome: Outcome::Failed(1),
        notes: Vec::new(),
    }
}

pub(super) fn broken(code: Option<i32>, note: String) -> Ran {
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
pub(super) fn judge(code: Option<i32>, probe: Option<&Probe>, command: &Command) -> Ran {
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
    if let Some(why) = probe.unrun.why() {
        return broken(Some(code), why);
    }
    // A file that failed to collect is a failure of that file (a whole-suite run goes on past
    // it, and pytest exits 1).
    let failures: u64 = probe
        .files
        .values()
        .map(|f| f.failed + u64::from(f.error))
        .sum();
    // The user's arguments (`-k`, `-m`, `--deselect`) left no selected test to run: nothing
    // was tested, which is no pass.
    if !command.extra.is_empty() && failures == 0 && probe.files.values().all(|f| f.selected == 0) {
        return Ran {
            outcome: Outcome::NothingRan,
            notes: vec![format!(
                "the runner arguments `{}` left none of the selected tests to run: nothing was tested",
                command.extra.join(" ")
            )],
        };
    }
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
            // Given node ids (a shard of tests), pytest reports no collection of their file:
            // its items say it was collected.
            Some(f) if !f.collected && !f.error && f.items == 0 => missing.push(file),
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

/// `ran`, unless pytest reported results under ids no selected file defines (`foreign`): the
/// run's root or ids were moved, its results are not recorded, and it is no pass.
pub(super) fn placed(ran: Ran, foreign: &[String]) -> Ran {
    let Some(first) = foreign.first() else {
        return ran;
    };
    let code = match ran.outcome {
        Outcome::Failed(n) | Outcome::Broken(Some(n)) => Some(n),
        _ => None,
    };
    let mut notes = vec![format!(
        "pytest reported {} result(s) under ids no selected file defines alone (`{first}`{}): a root or ids an option or a configuration moved (`--rootdir`, `-c`, `--junit-prefix`), or two tests the report names alike; they are not recorded, and the run is no pass",
        foreign.len(),
        if foreign.len() > 1 { ", …" } else { "" }
    )];
    notes.extend(ran.notes);
    Ran {
        outcome: Outcome::Broken(code),
        notes,
    }
}

impl Probe {
    /// `cases` as if pytest had run from the repository root with no prefix: a case the
    /// report names otherwise is given its file and its own classname, so its id is the one
    /// its file defines.
    /// The cases two tests share are taken out (returned by their name as the report gives
    /// it): filed under either, a failure could land on the test that passed.
    pub(super) fn unmove(&self, cases: &mut Vec<crate::run::junit::Case>) -> Vec<String> {
        let key = |case: &crate::run::junit::Case| format!("{}\0{}", case.classname, case.name);
        let mut shared = Vec::new();
        cases.retain(|case| {
            let alike = self.ambiguous.contains(&key(case));
            if alike {
                shared.push(format!("{}::{}", case.classname, case.name));
            }
            !alike
        });
        if !self.moved.is_empty() {
            for case in cases.iter_mut() {
                if let Some((file, classname)) = self.moved.get(&key(case)) {
                    case.file = Some(file.clone());
                    case.classname = classname.clone();
                }
            }
        }
        shared
    }

    /// What the probe traced, per test file and module, to `sink`.
    pub(super) fn report(&self, command: &Command, sink: &mut dyn Sink) {
        for (unit, files) in &self.opened {
            let whole = whole(command, self, unit);
            sink.event(Event::Opened { unit, files, whole });
        }
        for (module, files) in &self.read_by {
            sink.event(Event::ReadAtImport { module, files });
        }
        for (unit, names) in &self.env {
            sink.event(Event::EnvRead { unit, names });
        }
        for (unit, files) in &self.loaded {
            sink.event(Event::Loaded { unit, files });
        }
        if !self.outside.at.is_empty() {
            let Outside { files, at, spawned } = &self.outside;
            sink.event(Event::Outside { files, at });
            for (unit, what) in spawned {
                sink.event(Event::Unobserved { unit, what });
            }
        }
    }
}

/// Whether `unit`'s trace is all it opens: pytest was given the whole file (not a node id of
/// it), collected it, and every one of its tests ran and passed — none deselected, skipped,
/// failed or errored. A run cut short (`-x`, `--maxfail`, an interruption), a deselection, or
/// a test failing before the code that opens a file, each saw a part of it.
pub(super) fn whole(command: &Command, probe: &Probe, unit: &str) -> bool {
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
