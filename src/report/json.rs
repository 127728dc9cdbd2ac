//! The `--json` report. Its shape is `plans/report.schema.json`, version `REPORT_VERSION`.

use super::view::View;
use crate::decision::Record;
use crate::repo::input::RangeInfo;
use crate::run::events::StepResult;
use crate::run::events::{Collected, TestOutcome, TestResult};
use crate::run::steps::RunResult;
use crate::verdict::{Row, RunVerdict};
use serde::Serialize;
use std::collections::BTreeMap;

/// 2 added `steps`, `exit_code`, `duration_ms` and the run's `duration_ms` and `directory`;
/// 3 added `go_commands`; 4 added `tests` (every test's result) and `test_summary` (per test
/// file or Go package); 7 added `frozen_decision`; 8 added `shadow` (a shadow run's
/// judgements); 9 added `shard` (a leg's shard of a split selection); 10 added `ledger` (each
/// selected unit as the ledger saw it, and why it was not reused or entered); 11 the run
/// outcome `nothing_ran`; 12 `commands` (every runner's command with its language and folder).
pub(crate) const REPORT_VERSION: u32 = 12;

/// The report of one gate, built once at its end from what was known before the run (`View`)
/// and what the run's events said: output, never state.
#[derive(Serialize)]
pub(crate) struct Report<'a> {
    pub version: u32,
    pub gate: &'static str,
    pub range: Option<&'a RangeInfo>,
    /// The tree analysed: `commit <sha>` or `working tree`.
    pub tree: &'a str,
    pub verdict: RunVerdict,
    pub files: &'a [Row],
    pub selected: Vec<Selected<'a>>,
    /// Selected tests not run: the ledger holds a pass of theirs with these very inputs.
    pub reused: Vec<Reused<'a>>,
    /// Tests `max_depth` kept out → the changes that reach them.
    pub cut: Vec<Selected<'a>>,
    /// Set when the range itself cannot be bounded (its base is missing): the fact and the fix.
    pub range_refusal: Option<&'a str>,
    /// Set when a file the run depends on cannot be read (a malformed pyproject.toml): the
    /// file, the line and the parser's message.
    pub tree_refusal: Option<&'a str>,
    pub notes: Vec<String>,
    pub test_files: usize,
    /// What runs the Python tests (`pytest`, `unittest`, `django`) and why.
    pub framework: &'a crate::lang::python::framework::Framework,
    /// The ready-to-run pytest command, or null when no Python test runs.
    pub command: Option<Vec<String>>,
    /// The `go test` commands, one per module (run from the module's folder).
    pub go_commands: Vec<InFolder>,
    /// Every runner's command, in the order they run: its language, its folder, its argv.
    pub commands: Vec<LanguageCommand>,
    pub decision: Option<&'a Record>,
    /// The id of the decision frozen before the run (`plans/frozen.schema.json`).
    pub frozen_decision: &'a str,
    pub summary: String,
    /// What the run did; null with `--list` or when nothing ran.
    pub run: Option<RunResult>,
    /// The gate steps in order (pre-push hook and `verify`); null for `gate --affected`.
    pub steps: Option<Vec<StepResult>>,
    /// Every test's result, in the order the runners gave them.
    pub tests: Vec<TestResult>,
    /// Per test file (pytest) or test unit (Go): how its tests ended.
    pub test_summary: Vec<FileSummary>,
    /// A shadow run's judgement of each failing test file or Go package against the frozen
    /// decision (caught, missed with cause and rule, flaky, pre_existing); null when the run
    /// was no shadow run or was not judged (it broke).
    pub shadow: Option<Vec<crate::proof::shadow::Judged>>,
    /// Each selected test file or Go package as the green ledger saw it: its digest, whether
    /// it was reused, whether its run was entered, and why not; empty when the ledger was not
    /// asked (`--list`, a run that is not bounded, the ledger off).
    pub ledger: Vec<crate::ledger::UnitState>,
    /// This leg's shard of a split selection (`--shard K/N`); null when the run was not split.
    pub shard: Option<&'a crate::run::shard::Described<'a>>,
    /// gate's exit code for this report.
    pub exit_code: u8,
    pub duration_ms: u64,
}

#[derive(Serialize)]
pub(crate) struct Selected<'a> {
    pub path: &'a str,
    pub reasons: &'a [String],
}

#[derive(Serialize, Default, Debug, PartialEq, Eq)]
pub(crate) struct FileSummary {
    /// The test file or Go unit; `null` for results gate could not place in the tree.
    pub file: Option<String>,
    pub passed: usize,
    pub failed: usize,
    pub errors: usize,
    pub skipped: usize,
    pub duration_ms: u64,
}

/// The results counted per file (the last attempt of each test counts; earlier ones are kept
/// in `tests`).
pub(crate) fn summarize(tests: &[TestResult]) -> Vec<FileSummary> {
    let mut last: BTreeMap<&str, &TestResult> = BTreeMap::new();
    for t in tests {
        let kept = last.entry(&t.id).or_insert(t);
        if t.attempt >= kept.attempt {
            *kept = t;
        }
    }
    let mut files: BTreeMap<Option<&str>, FileSummary> = BTreeMap::new();
    for t in last.values() {
        let f = files
            .entry(t.file.as_deref())
            .or_insert_with(|| FileSummary {
                file: t.file.clone(),
                ..FileSummary::default()
            });
        match t.outcome {
            TestOutcome::Passed => f.passed += 1,
            TestOutcome::Failed => f.failed += 1,
            TestOutcome::Error => f.errors += 1,
            TestOutcome::Skipped => f.skipped += 1,
        }
        f.duration_ms += t.duration_ms;
    }
    files.into_values().collect()
}

impl<'a> Report<'a> {
    /// The report of `view` after its run: the steps' results and tests from `collected`,
    /// `steps` when the caller reports them (the hook and `verify`).
    pub(crate) fn new(
        view: &'a View<'a>,
        collected: Collected,
        run: Option<RunResult>,
        steps: bool,
        exit_code: u8,
        duration_ms: u64,
    ) -> Report<'a> {
        let listing = |map: &'a BTreeMap<String, Vec<String>>| {
            map.iter()
                .map(|(p, r)| Selected {
                    path: p,
                    reasons: r,
                })
                .collect()
        };
        let mut notes = view.decision.notes.clone();
        notes.extend(collected.notes);
        Report {
            version: REPORT_VERSION,
            gate: crate::version::ANALYZER,
            range: view.range,
            tree: &view.tree,
            verdict: view.decision.verdict,
            files: &view.decision.rows,
            selected: listing(&view.decision.selected),
            reused: view
                .reused
                .iter()
                .map(|(path, from)| Reused { path, from })
                .collect(),
            cut: listing(&view.decision.cut),
            range_refusal: view.range_refusal,
            tree_refusal: view.tree_refusal,
            notes,
            test_files: view.test_files,
            framework: view.framework,
            command: view.plan.of("python").next().map(|c| c.argv()),
            commands: view
                .plan
                .commands
                .iter()
                .map(|c| LanguageCommand {
                    language: c.language(),
                    dir: c.dir().to_string(),
                    argv: c.argv(),
                })
                .collect(),
            go_commands: view
                .plan
                .of("go")
                .map(|c| InFolder {
                    module: c.dir().to_string(),
                    argv: c.argv(),
                })
                .collect(),
            frozen_decision: view.frozen,
            decision: view.record,
            summary: super::human::summary(view),
            run,
            steps: steps.then_some(collected.steps),
            test_summary: summarize(&collected.tests),
            tests: collected.tests,
            shadow: None,
            ledger: Vec::new(),
            shard: view.shard.as_ref(),
            exit_code,
            duration_ms,
        }
    }
}

/// A runner's command and the folder it runs in (schema 3's `go_commands` items).
#[derive(Serialize)]
pub(crate) struct InFolder {
    /// Relative to the tree's root; empty for the root.
    pub module: String,
    pub argv: Vec<String>,
}

/// One runner command of the plan (schema 12's `commands` items).
#[derive(Serialize)]
pub(crate) struct LanguageCommand {
    /// `python`, `go`, `js`.
    pub language: &'static str,
    /// The folder it runs in, relative to the tree's root; empty for the root.
    pub dir: String,
    pub argv: Vec<String>,
}

/// A reused test and where it passed.
#[derive(Serialize)]
pub(crate) struct Reused<'a> {
    pub path: &'a str,
    #[serde(flatten)]
    pub from: &'a crate::ledger::Provenance,
}

/// An error as a JSON document (`plans/error.schema.json`): what `--json` prints and a
/// `verify` receipt holds when gate could not gate at all, so every outcome has a record.
#[derive(Serialize)]
pub struct ErrorReport {
    pub version: u32,
    pub kind: &'static str,
    pub gate: &'static str,
    pub exit_code: u8,
    pub error: String,
    pub causes: Vec<String>,
    pub hint: Option<String>,
}

pub(crate) const ERROR_VERSION: u32 = 1;

impl ErrorReport {
    pub fn new(err: &crate::error::Error) -> ErrorReport {
        let mut causes = Vec::new();
        let mut source = std::error::Error::source(err);
        while let Some(cause) = source {
            causes.push(cause.to_string());
            source = cause.source();
        }
        ErrorReport {
            version: ERROR_VERSION,
            kind: "error",
            gate: crate::version::ANALYZER,
            exit_code: err.exit_code(),
            error: err.to_string(),
            causes,
            hint: err.hint(),
        }
    }
}
