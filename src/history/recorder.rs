//! Recording a run: a reader of the run's event stream, beside the human and JSON reporters,
//! that keeps each test's result and, when the run is over, stores them as one leg with the
//! change that selected them and rolls the leg's tests up.

use crate::error::{Error, Result};
use crate::history::{self, Change, Leg, Recorded, Store, provenance};
use crate::project::Project;
use crate::repo;
use crate::run::events::{Event, Sink, TestOutcome, TestResult};
use crate::terminal::shown;
use std::collections::BTreeMap;

/// Where and as what a run is recorded: its leg's environment and shard, and the store
/// (`--db`, else the configured one).
#[derive(Clone)]
pub(crate) struct RecordTo {
    pub leg: String,
    pub shard: Option<crate::run::shard::Shard>,
    pub db: Option<String>,
}

/// The sink that records a run: every test result the stream carries, stored by `finish`.
pub(crate) struct Recorder<'a> {
    to: &'a RecordTo,
    tests: Vec<TestResult>,
}

impl Sink for Recorder<'_> {
    fn event(&mut self, event: Event<'_>) {
        if let Event::Test(test) = event {
            self.tests.push(test.clone());
        }
    }
}

/// What a gate run knows of itself when it is recorded.
pub(crate) struct Gated<'a> {
    pub repo: &'a git2::Repository,
    pub head: Option<git2::Oid>,
    pub base: Option<String>,
    pub project: &'a Project,
    pub decided: &'a crate::verdict::Decision,
    /// Each unit that ran with its fingerprint digest, where known (`Leg::fingerprints`).
    pub fingerprints: BTreeMap<String, String>,
    /// The user's runner arguments (`gate … -- ARGS`): the leg is recorded as run with them.
    pub runner_args: &'a [String],
}

impl<'a> Recorder<'a> {
    pub(crate) fn new(to: &'a RecordTo) -> Self {
        Recorder {
            to,
            tests: Vec::new(),
        }
    }

    /// Stores the run's results and selection. The run has happened, so a store that cannot
    /// take it is said on one line and fails the run (its exit code) only when the tests
    /// themselves passed; `code` otherwise stands.
    pub(crate) fn finish(self, gated: &Gated<'_>, code: u8) -> u8 {
        let Some(head) = gated.head else {
            crate::terminal::warn(
                "not recorded: the working tree is not a commit (gate a range to record it)".into(),
            );
            return code;
        };
        match self.store(gated, head) {
            Ok(()) => code,
            Err(e) => {
                tell!("error: the run was not recorded: {e}");
                if code == crate::exit_codes::OK {
                    e.exit_code()
                } else {
                    code
                }
            }
        }
    }

    fn store(&self, gated: &Gated<'_>, head: git2::Oid) -> Result<()> {
        let branch = provenance::branch_of(gated.repo);
        let main = repo::range::default_branch(gated.repo);
        let mainline = provenance::is_mainline(branch.as_deref(), main.as_ref());
        let has_go = self
            .tests
            .iter()
            .any(|t| t.file.as_deref().is_some_and(crate::graph::is_go_unit));
        let mut env = provenance::environment(!has_go, has_go, &self.to.leg);
        // A run given arguments is marked so in its environment, and so in its inputs: its
        // pass is never evidence against a failure without them (`--runxfail`, `-W error`, an
        // option the project allowed), nor theirs against its.
        if !gated.runner_args.is_empty() {
            env["runner_args"] = serde_json::json!(gated.runner_args);
        }
        let env = crate::terminal::sorted(env);
        let project = gated.project;
        let leg = Leg {
            run: provenance::run_id(None).0,
            attempt: provenance::attempt(None)?,
            leg: self.to.leg.clone(),
            shard: self.to.shard,
            commit: head.to_string(),
            branch,
            mainline,
            base: gated.base.clone(),
            inputs: crate::fingerprint::run_inputs(&project.config, &env),
            env,
            source: "gate".into(),
            fingerprints: gated.fingerprints.clone(),
        };
        store_leg(
            gated.repo,
            &project.config.history,
            self.to.db.as_deref(),
            &leg,
            &self.tests,
            &change_of(gated.decided),
            &mut |line| {
                tell!("{line}");
                Ok(())
            },
        )
    }
}

/// Records `leg` and rolls up its tests; says what it did. Shared by `gate record` and a gate
/// run with `--record`.
pub(crate) fn store_leg(
    repo: &git2::Repository,
    history: &crate::config::History,
    db: Option<&str>,
    leg: &Leg,
    results: &[TestResult],
    change: &Change,
    say: &mut dyn FnMut(String) -> Result<()>,
) -> Result<()> {
    let at = history::location(db, history.url.as_deref(), &repo::state_dir(repo))?;
    let mut store = Store::open(&at)?;
    crate::timings::mark("store open");
    let recorded = store.record(leg, results, change, history.window_days)?;
    crate::timings::mark("leg recorded");
    let what = match recorded {
        Recorded::Kept { results: had, .. } => {
            return Err(Error::Refused(format!(
                "leg `{}` of run {} attempt {} already holds {had} result(s) and this upload has none: the recorded leg is kept, nothing changed (record a new attempt with --attempt {})",
                shown(&leg.name()),
                shown(&leg.run),
                leg.attempt,
                leg.attempt + 1
            )));
        }
        Recorded::New(_) => "recorded",
        Recorded::Unchanged(_) => "already recorded, unchanged",
        Recorded::Replaced(_) => "replaced the earlier upload of",
    };
    say(format!(
        "gate record: {what} leg `{}` of run {} attempt {} at {}: {} ({} #{})",
        shown(&leg.name()),
        shown(&leg.run),
        leg.attempt,
        &leg.commit[..12.min(leg.commit.len())],
        counts(results),
        store.name(),
        recorded.seq()
    ))?;
    if results.is_empty() {
        crate::terminal::warn(format!(
            "leg `{}` uploaded zero results — recorded as such, not as a pass",
            shown(&leg.name())
        ));
    }
    Ok(())
}

/// What a gate knows of its change, for the store: every changed path with its verdict, and
/// every test a changed path selected (by an edge or a `[[depends]]` rule).
pub(crate) fn change_of(decided: &crate::verdict::Decision) -> Change {
    let mut change = Change::default();
    for row in &decided.rows {
        let verdict = serde_json::to_value(row.verdict)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        change.paths.push((row.path.to_string(), verdict));
        for test in &row.tests {
            change.selected.push((test.clone(), row.path.to_string()));
        }
    }
    change.paths.sort();
    change.paths.dedup_by(|a, b| a.0 == b.0);
    change.selected.sort();
    change.selected.dedup();
    change
}

pub(crate) fn counts(results: &[TestResult]) -> String {
    let n = |o: TestOutcome| results.iter().filter(|r| r.outcome == o).count();
    format!(
        "{} result(s): {} passed, {} failed, {} error, {} skipped",
        results.len(),
        n(TestOutcome::Passed),
        n(TestOutcome::Failed),
        n(TestOutcome::Error),
        n(TestOutcome::Skipped)
    )
}
