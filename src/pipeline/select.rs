//! From verdicts to what runs: what history adds to the selection, whether this CI run is an
//! audit, the ledger's reuses, the run plan, the cited decision, and the decision frozen
//! before anything runs.

use super::{Caller, Inputs, Options, Shadow};
use crate::decision;
use crate::error::Result;
use crate::history::{provenance, recorder::RecordTo, traced};
use crate::ledger::Ledger;
use crate::project::Project;
use crate::proof::frozen;
use crate::repo::{self, input::Input};
use crate::report::view::View;
use crate::run::select::RunPlan;
use crate::verdict::Decision;
use std::borrow::Cow;
use std::path::PathBuf;

/// What a gate chose before anything runs.
pub(super) struct Chosen<'a> {
    pub root: PathBuf,
    pub ledger: Ledger,
    pub plan: RunPlan,
    /// The decision a citation recorded.
    pub record: Option<decision::Record>,
    /// The frozen decision: its id and JSON.
    pub frozen: (String, String),
    /// What the ledger enters this run as.
    pub this_run: crate::ledger::Run<'a>,
    /// This leg's shard of a split selection (`--shard K/N`).
    pub sharded: Option<crate::run::shard::Sharded>,
}

/// What history adds to a selection: its signals (tests failing on main, co-failures) and
/// the tests whose traced runs opened a changed file.
pub(super) fn add_history(
    repo: &git2::Repository,
    project: &Project,
    input: &Input,
    db: Option<&str>,
    decided: &mut Decision,
) {
    let state = repo::state_dir(repo);
    let signals = crate::history::signals::add(&state, db, project, &input.changed(), decided);
    let traced = traced::add(&state, db, project, decided);
    signals
        .into_iter()
        .chain(traced)
        .for_each(crate::terminal::warn);
}

/// The test files a recommendations file names, added to the selection once its context is
/// checked against this tree (`proof::recommendations`).
pub(super) fn recommend(
    repo: &git2::Repository,
    input: &Input,
    project: &Project,
    file: &std::path::Path,
    decided: &mut Decision,
) -> Result<()> {
    let root = repo::workdir(repo)?;
    let scope = crate::fingerprint::Scope {
        repo,
        snapshot: &input.snapshot,
        project,
        root: &root,
    };
    crate::proof::recommendations::add(file, &scope, input.head, decided)
}

/// The ledger's reuses, the run plan, the cited decision and the frozen one.
pub(super) fn choose<'a>(
    at: &Inputs<'_>,
    opts: &Options<'_>,
    record_to: Option<&'a RecordTo>,
) -> Result<Chosen<'a>> {
    let root = repo::workdir(at.repo)?;
    let this_run = this_run(at.repo, at.input, record_to);
    let mut memo = crate::fingerprint::Memo::default();
    let ledger = look_up(at, &this_run, opts, &mut memo);
    let sharded = super::split::split(at, opts, &ledger, &mut memo, &root)?;
    let plan = plan_of(at, opts, &ledger, &root, sharded.as_ref());
    let record = cite(at, opts.citation)?;
    let frozen = match sharded.as_ref().and_then(|s| s.decision.clone()) {
        // The decision whose split this leg runs is this run's decision.
        Some(earlier) => earlier,
        None => {
            let parts = frozen::Parts {
                repo: at.repo,
                root: &root,
                input: at.input,
                project: at.project,
                decided: at.decided,
                ledger: &ledger,
                split: sharded.as_ref().map(|s| &s.split),
            };
            let db = opts.db.or(record_to.and_then(|r| r.db.as_deref()));
            let earlier = opts.shadow != Shadow::Off;
            frozen::decide(&parts, &mut memo, db, earlier, opts.decision_out)?
        }
    };
    Ok(Chosen {
        root,
        ledger,
        plan,
        record,
        frozen,
        this_run,
        sharded,
    })
}

impl Chosen<'_> {
    /// What the reporters show of the gate.
    pub(super) fn view<'v>(&'v self, at: &Inputs<'v>, opts: &Options<'_>) -> View<'v> {
        View {
            range: at.input.range.as_ref(),
            tree: at.input.snapshot.describe(),
            decision: at.decided,
            plan: &self.plan,
            range_refusal: at.input.range_refusal.as_deref(),
            tree_refusal: at.project.broken.as_deref(),
            test_files: at.project.tests.len(),
            framework: &at.project.framework,
            record: self.record.as_ref(),
            reused: &self.ledger.reused,
            frozen: &self.frozen.0,
            shadow: opts.shadow != Shadow::Off,
            verbose: opts.verbose,
            shard: self.sharded.as_ref().map(|s| s.described()),
        }
    }
}

/// The run plan: the selection without the ledger's reuses; the whole suite, whatever was
/// selected, for a shadow run.
fn plan_of(
    at: &Inputs<'_>,
    opts: &Options<'_>,
    ledger: &Ledger,
    root: &std::path::Path,
    sharded: Option<&crate::run::shard::Sharded>,
) -> RunPlan {
    if opts.shadow != Shadow::Off {
        return crate::run::select::whole(at.project, &at.input.snapshot.files, root);
    }
    crate::run::select::select(
        at.decided,
        at.project,
        opts.citation.is_some(),
        &at.input.snapshot.files,
        root,
        (&ledger.reused_units(), opts.runner_args),
        sharded.map(|s| &s.own),
    )
}

/// `opts` as an audit run, when `audit_rate` (the governing configuration's) chooses this CI
/// run: by a hash of its run id alone, so a retry of the run makes the same choice. Outside CI
/// (no run id) and in the pre-push hook, never.
pub(super) fn audit<'o, 'a>(opts: &'o Options<'a>, project: &Project) -> Cow<'o, Options<'a>> {
    let rate = project.config.audit_rate;
    // A shard leg runs its part of the selection; the whole suite of an audit is the final
    // job's (`gate shadow`), not every leg's.
    let leg = opts.shard.is_some();
    if opts.shadow != Shadow::Off
        || opts.caller == Caller::PrePush
        || rate <= 0.0
        || opts.list
        || leg
    {
        return Cow::Borrowed(opts);
    }
    let (run, generated) = provenance::run_id(None);
    if generated || !audit_chooses(&run, rate) {
        return Cow::Borrowed(opts);
    }
    crate::terminal::warn(format!(
        "audit run: audit_rate {rate} chose CI run {}: the whole suite runs in shadow mode",
        crate::terminal::shown(&run)
    ));
    Cow::Owned(Options {
        shadow: Shadow::Audit,
        ..opts.clone()
    })
}

/// Whether run `run` is among the `rate` fraction audited: the first 8 bytes of its SHA-256,
/// as a fraction of 2^64, below the rate.
fn audit_chooses(run: &str, rate: f64) -> bool {
    use sha2::Digest;
    let h = sha2::Sha256::digest(run.as_bytes());
    let x = u64::from_be_bytes(h[..8].try_into().expect("8 bytes"));
    (x as f64) / 18_446_744_073_709_551_616.0 < rate
}

/// Where the run is recorded: `--record`'s, else `[history] record`'s for the hook and
/// `verify`.
pub(super) fn record_to(opts: &Options<'_>, project: &Project) -> Option<RecordTo> {
    opts.record.clone().or_else(|| {
        (opts.caller != Caller::Command && project.config.history.record).then(|| RecordTo {
            leg: opts.leg.unwrap_or("default").into(),
            shard: opts.shard,
            db: opts.db.map(str::to_string),
        })
    })
}

/// The selected tests' fingerprints looked up in the ledger. `--list` runs nothing and enters
/// nothing: fingerprinting (a cost linear in the selected tests' inputs) is for runs.
fn look_up(
    at: &Inputs<'_>,
    this_run: &crate::ledger::Run<'_>,
    opts: &Options<'_>,
    memo: &mut crate::fingerprint::Memo,
) -> Ledger {
    // A select job (`--list --shard`) looks up what the legs will reuse: its split packs
    // by what they will run.
    if opts.list && opts.shard.is_none() {
        return Ledger::default();
    }
    let ledger = Ledger::look_up(
        at.repo,
        &at.input.snapshot,
        at.project,
        at.decided,
        this_run,
        (opts.reuse, store_of(opts)),
        memo,
    );
    for note in &ledger.notes {
        crate::terminal::warn(note.clone());
    }
    ledger
}

/// The store the run reads history from and records into: `--db`, or `gate shadow`'s.
pub(super) fn store_of<'o>(opts: &'o Options<'_>) -> Option<&'o str> {
    opts.db
        .or(opts.record.as_ref().and_then(|r| r.db.as_deref()))
}

/// What the ledger enters this run as: its commit, branch, whether it is the default branch,
/// and its leg.
fn this_run<'a>(
    repo: &git2::Repository,
    input: &Input,
    record_to: Option<&'a RecordTo>,
) -> crate::ledger::Run<'a> {
    let branch = provenance::branch_of(repo);
    let main = repo::range::default_branch(repo);
    crate::ledger::Run {
        commit: input
            .head
            .map_or_else(|| "working tree".to_string(), |h| h.to_string()),
        mainline: provenance::is_mainline(branch.as_deref(), main.as_ref()),
        branch,
        leg: record_to.map_or("default", |r| r.leg.as_str()),
    }
}

/// The decision a citation records, appended to `.git/gate/decisions.jsonl` before anything
/// runs.
fn cite(at: &Inputs<'_>, citation: Option<&str>) -> Result<Option<decision::Record>> {
    let Some(citation) = citation else {
        return Ok(None);
    };
    let input = at.input;
    let spec = input
        .range
        .as_ref()
        .map_or_else(|| input.snapshot.describe(), |r| r.spec.clone());
    let selected: Vec<String> = at.decided.selected.keys().cloned().collect();
    let refusals: Vec<&str> = input
        .range_refusal
        .iter()
        .chain(&at.project.broken)
        .map(String::as_str)
        .collect();
    let refused = (!refusals.is_empty()).then(|| refusals.join("; "));
    let record = decision::record(
        at.repo,
        citation,
        &spec,
        &at.decided.rows,
        refused.as_deref(),
        &selected,
    )?;
    decision::append(&repo::state_dir(at.repo), &record)?;
    Ok(Some(record))
}
