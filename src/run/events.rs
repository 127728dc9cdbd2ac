//! The run as one stream of events: each step as it starts and ends, each test's result, each
//! note the runners have. Every reporter reads this stream (the human lines on stderr, the JSON
//! report; the history store next), the way cargo-nextest feeds its display and its JUnit
//! writer; no reporter reads back what another wrote.

use serde::Serialize;

/// How a step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum StepOutcome {
    Passed,
    Failed,
    /// Not run: its `on` globs matched no changed file, or an earlier step failed.
    Skipped,
    /// Could not start, or was killed by a signal.
    Broken,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct StepResult {
    pub name: String,
    pub outcome: StepOutcome,
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl StepResult {
    pub(crate) fn skipped(name: &str, reason: String) -> Self {
        StepResult {
            name: name.to_string(),
            outcome: StepOutcome::Skipped,
            exit_code: None,
            duration_ms: 0,
            reason: Some(reason),
        }
    }
}

/// How one attempt of one test ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TestOutcome {
    Passed,
    Failed,
    /// It could not run: a setup or collection error, a package that did not build.
    Error,
    Skipped,
}

/// One attempt of one test, as the runner reported it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct TestResult {
    /// `tests/test_money.py::TestCart::test_total[2-3]`, or `ws/shop/cart::TestTotal/sub` for
    /// Go (the package folder, then the test).
    pub id: String,
    /// The test file (`tests/test_money.py`) or Go test unit (`./ws/shop/cart`) it belongs to;
    /// `None` when the runner named a file gate cannot place in the tree.
    pub file: Option<String>,
    pub outcome: TestOutcome,
    pub duration_ms: u64,
    /// 1 for the first run of a test; a retry within the run (pytest-rerunfailures) counts up,
    /// so a failure then a pass stays visible.
    pub attempt: u32,
}

#[derive(Clone, Copy)]
pub(crate) enum Event<'a> {
    StepStarted {
        name: &'a str,
        argv: Option<&'a [String]>,
    },
    StepFinished(&'a StepResult),
    Test(&'a TestResult),
    /// Something a runner's outcome needs said (a selected file that held no test, a run cut
    /// short, where the tests ran).
    Note(&'a str),
    /// What a test file's run opened in the repository (its paths relative to the root).
    Opened {
        unit: &'a str,
        files: &'a [String],
        /// The whole file ran and passed: this is all it opens, not a part of it.
        whole: bool,
    },
    /// What a repository module read while it was being imported (paths relative to the root).
    ReadAtImport {
        module: &'a str,
        files: &'a [String],
    },
    /// The environment variables a test file's own code read in its run (`*`: all of them).
    EnvRead {
        unit: &'a str,
        names: &'a [String],
    },
    /// The repository modules loaded in the runner's process when a test file's last test
    /// ended: whatever its imports named at run time resolved to is among them.
    Loaded {
        unit: &'a str,
        files: &'a [String],
    },
    /// What a runner's process read that commits may not hold — every module file it loaded,
    /// every file it read outside the repository (repository-relative under its root,
    /// absolute elsewhere) — in the order first seen, and per test file how many of them had
    /// been read when its last test ended.
    Outside {
        files: &'a [String],
        at: &'a std::collections::BTreeMap<String, usize>,
    },
    /// A test file's run started (or ran on beside) a process whose reads the runner does not
    /// show (`what`: a Python interpreter, a shell, a fork): what it read is not known.
    Unobserved {
        unit: &'a str,
        what: &'a str,
    },
}

/// Where events go.
pub(crate) trait Sink {
    fn event(&mut self, event: Event<'_>);
}

/// What a run produced, for the report at its end.
#[derive(Default)]
pub(crate) struct Collected {
    pub steps: Vec<StepResult>,
    pub tests: Vec<TestResult>,
    pub notes: Vec<String>,
    /// Test file → what its run opened in the repository, where the runner could tell.
    pub opened: std::collections::BTreeMap<String, Trace>,
    /// Module file → what it read while it was being imported.
    pub read_by: std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
    /// Test file → the environment variables its own code was seen to read.
    pub env_read: std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
    /// Test file → the repository modules loaded when its last test ended.
    pub loaded: std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
    /// Each runner process's outside reads (`Event::Outside`), and per test file which of them
    /// and how many of its first files.
    pub outside: Vec<Vec<String>>,
    pub outside_at: std::collections::BTreeMap<String, (usize, usize)>,
    /// Test file → the process its run started whose reads are not observed.
    pub unobserved: std::collections::BTreeMap<String, String>,
}

/// What a test file's run opened in the repository.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Trace {
    pub files: std::collections::BTreeSet<String>,
    /// A run of the whole file that ran and passed every one of its tests saw it all: only
    /// such a trace replaces the one kept. A run cut short (a failure, `-x`, a deselection,
    /// an interruption) saw a part, which is added to it.
    pub whole: bool,
}

impl Sink for Collected {
    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::StepStarted { .. } => {}
            Event::StepFinished(step) => self.steps.push(step.clone()),
            Event::Test(test) => self.tests.push(test.clone()),
            Event::Note(note) => self.notes.push(note.to_string()),
            Event::Opened { unit, files, whole } => {
                // Runs of one file add up: with one whole run among them, the union holds
                // all it opens.
                let seen = self.opened.entry(unit.to_string()).or_default();
                seen.files.extend(files.iter().cloned());
                seen.whole |= whole;
            }
            Event::ReadAtImport { module, files } => {
                let read = self.read_by.entry(module.to_string()).or_default();
                read.extend(files.iter().cloned());
            }
            Event::EnvRead { unit, names } => {
                let read = self.env_read.entry(unit.to_string()).or_default();
                read.extend(names.iter().cloned());
            }
            Event::Loaded { unit, files } => {
                let loaded = self.loaded.entry(unit.to_string()).or_default();
                loaded.extend(files.iter().cloned());
            }
            Event::Unobserved { unit, what } => {
                self.unobserved.insert(unit.to_string(), what.to_string());
            }
            Event::Outside { files, at } => {
                let list = self.outside.len();
                self.outside.push(files.to_vec());
                for (unit, count) in at {
                    self.outside_at.insert(unit.clone(), (list, *count));
                }
            }
        }
    }
}

/// Every event to each of several sinks, in order.
pub(crate) struct Tee<'s>(pub Vec<&'s mut dyn Sink>);

impl Sink for Tee<'_> {
    fn event(&mut self, event: Event<'_>) {
        for sink in &mut self.0 {
            sink.event(event);
        }
    }
}
