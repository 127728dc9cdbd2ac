//! The gate itself, shared by `gate --affected | --since | --files`, `gate verify` and the
//! pre-push hook, as the pipeline in order: inputs → configuration → project → verdicts → run
//! plan → (ledger) → decision → steps → (record) → report.

use crate::cli::GateArgs;
use crate::config::{Step, When};
use crate::decision;
use crate::error::{Error, Result};
use crate::exit_codes;
use crate::history::traced;
use crate::ledger::Ledger;
use crate::project::{Keep, Project};
use crate::repo::input::{self, Input};
use crate::repo::{self, range};
use crate::report::json::Report;
use crate::report::view::View;
use crate::report::{human, styles::Styles};
use crate::run;
use crate::run::events::{Collected, Tee};
use crate::run::steps::{self, Steps};
use crate::verdict::{self, Decision, RunVerdict, Verdict};
use owo_colors::OwoColorize;
use std::borrow::Cow;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

/// Who asked: it decides which steps run and how a refusal tells the user to cite a decision.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Caller {
    /// `gate --affected …`: the affected tests only.
    Command,
    PrePush,
    Verify,
}

pub(super) use crate::repo::input::Target;

#[derive(Clone)]
pub(super) struct Options<'a> {
    pub caller: Caller,
    pub citation: Option<&'a str>,
    pub list: bool,
    pub json: bool,
    /// Every selected test and chain in the human rows, not a cut.
    pub verbose: bool,
    pub styles: &'a Styles,
    /// The same gate with a decision, shown when it refuses.
    pub retry: String,
    /// Build the JSON report even without `--json` (a receipt is written from it).
    pub keep_json: bool,
    /// Record the run in the history store (`--record`; `[history] record` for the hook and
    /// `verify`).
    pub record: Option<RecordTo>,
    /// Reuse the ledger's passes (`--no-reuse` turns it off).
    pub reuse: bool,
    /// Where to write the frozen decision too (`--decision-out`).
    pub decision_out: Option<&'a Path>,
    /// Run the whole suite and judge its failures against the frozen decision.
    pub shadow: Shadow,
}

/// Whether a run is a shadow run, and why.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Shadow {
    Off,
    /// `gate shadow`: a miss is its exit code.
    Asked,
    /// Chosen by `audit_rate` for this CI run: the whole suite runs, the compare is recorded,
    /// and the run's outcome is its tests' (a shadow run never changes it).
    Audit,
}

/// Where and as what a run is recorded.
#[derive(Clone)]
pub(super) struct RecordTo {
    pub leg: String,
    pub db: Option<String>,
}

/// The exit code and the JSON report (a `verify` receipt is this report).
pub(super) struct Gated {
    pub code: u8,
    pub json: String,
}

pub(super) fn run(dir: &Path, args: &GateArgs, styles: &Styles) -> Result<u8> {
    let repo = repo::open(dir)?;
    let (target, retry) = if let Some(spec) = &args.affected {
        (
            Target::Ranges(vec![range::resolve(&repo, spec)?]),
            format!("gate --affected {spec} --affected-decision \"<citation>\""),
        )
    } else if let Some(rev) = &args.since {
        (
            Target::Since(rev.clone()),
            format!("gate --since {rev} --affected-decision \"<citation>\""),
        )
    } else if !args.files.is_empty() {
        let files = args
            .files
            .iter()
            .map(|f| crate::repo::pathspec::resolve(&repo, dir, f))
            .collect::<Result<Vec<_>>>()?;
        (
            Target::Files(files),
            format!(
                "gate --files {} --affected-decision \"<citation>\"",
                args.files.join(" ")
            ),
        )
    } else {
        return Err(Error::Usage(
            "nothing to gate: give --affected RANGE, --since REV or --files PATH…".into(),
        ));
    };
    let opts = Options {
        caller: Caller::Command,
        citation: args.affected_decision.as_deref(),
        list: args.list,
        json: args.json,
        verbose: args.verbose,
        styles,
        retry,
        keep_json: false,
        record: args.record.then(|| RecordTo {
            leg: args.leg.clone().unwrap_or_else(|| "default".into()),
            db: args.db.clone(),
        }),
        reuse: !args.no_reuse,
        decision_out: args.decision_out.as_deref(),
        shadow: Shadow::Off,
    };
    gate(&repo, target, &opts).map(|g| g.code)
}

/// What a target is before anything runs: its changes and tree, the project gated under the
/// governing configuration, and every change's verdict.
pub(super) struct Analyzed {
    pub input: Input,
    pub project: Project,
    pub decided: Decision,
}

/// After a run: what its test files opened is kept as their traced edges, then the ledger
/// enters its units (their digests taking in those traces).
fn remember(
    scope: &crate::fingerprint::Scope<'_>,
    head: Option<git2::Oid>,
    ledger: &Ledger,
    collected: &Collected,
    complete: bool,
    this_run: &crate::ledger::Run<'_>,
) {
    let state = repo::state_dir(scope.repo);
    let at = head.map_or_else(|| "working tree".into(), |h| h.to_string());
    let files = &scope.snapshot.files;
    let kept = traced::keep(&state, scope.project, files, &at, collected);
    kept.into_iter()
        .chain(ledger.enter(collected, complete, this_run, scope))
        .for_each(super::warn);
}

/// What history adds to a selection: its signals (tests failing on main, co-failures) and
/// the tests whose traced runs opened a changed file.
fn add_history(state: &Path, project: &Project, input: &Input, decided: &mut Decision) {
    let signals = crate::history::signals::add(state, project, &input.changed(), decided);
    let traced = traced::add(state, project, decided);
    signals.into_iter().chain(traced).for_each(super::warn);
}

/// The human rows, rendered whole, then written through the escaping backstop every human
/// line has.
fn print_rows(view: &View<'_>, styles: &Styles) -> Result<()> {
    let mut rows = Vec::new();
    human::rows(&mut rows, view, styles).expect("writing to memory does not fail");
    let rows = String::from_utf8_lossy(&rows);
    super::ignore_broken_pipe(write!(
        std::io::stdout().lock(),
        "{}",
        crate::report::line(&rows)
    ))
}
/// The stages before the run plan: inputs → configuration → project → verdicts.
pub(super) fn analyze(repo: &git2::Repository, target: Target) -> Result<Analyzed> {
    let input = input::read(repo, target)?;
    crate::timings::mark("changes and tree read");
    let governing = super::config_change::governing(repo, &input.snapshot, &input.bases)?;
    let deleted = input.deleted();
    let mut project = Project::load_under(
        repo,
        &input.snapshot,
        &deleted,
        governing.config,
        Keep::Reuse,
        &mut super::warn,
    )?;
    flag_go_syntax_errors(repo, &input, &mut project);
    crate::timings::mark("project loaded");
    let mut decided = verdict::decide(
        &input.changes,
        &project.context(),
        input.range_refusal.is_some() || project.discovery.broken.is_some(),
    );
    if let Some(change) = governing.change {
        change.explain(repo, &input, &deleted, &project, &mut decided)?;
    }
    crate::timings::mark("verdicts decided");
    Ok(Analyzed {
        input,
        project,
        decided,
    })
}

pub(super) fn gate(repo: &git2::Repository, target: Target, opts: &Options<'_>) -> Result<Gated> {
    let started = Instant::now();
    let root = repo::workdir(repo)?;
    let Analyzed {
        input,
        project,
        mut decided,
    } = analyze(repo, target)?;
    let state = repo::state_dir(repo);
    add_history(&state, &project, &input, &mut decided);
    let opts: &Options<'_> = &audit(opts, &project);
    let record_to = record_to(opts, &project);
    let this_run = this_run(repo, &input, record_to.as_ref());
    let mut memo = crate::fingerprint::Memo::default();
    let ledger = look_up(repo, &input, &project, &decided, &this_run, opts, &mut memo);
    let plan = plan_of(opts, &decided, &project, &input, &ledger, &root);
    let record = cite(repo, opts.citation, &input, &project, &decided)?;
    let frozen = freeze(
        &crate::frozen::Parts {
            repo,
            root: &root,
            input: &input,
            project: &project,
            decided: &decided,
            ledger: &ledger,
        },
        &mut memo,
        record_to.as_ref().and_then(|r| r.db.as_deref()),
        opts.shadow,
        opts.decision_out,
    )?;
    let select_ms = started.elapsed().as_millis() as u64;
    let view = View {
        range: input.range.as_ref(),
        tree: input.snapshot.describe(),
        decision: &decided,
        plan: &plan,
        range_refusal: input.range_refusal.as_deref(),
        tree_refusal: project.discovery.broken.as_deref(),
        test_files: project.tests.len(),
        framework: &project.framework,
        record: record.as_ref(),
        reused: &ledger.reused,
        frozen: &frozen.0,
        shadow: opts.shadow != Shadow::Off,
        verbose: opts.verbose,
    };
    if !opts.json {
        print_rows(&view, opts.styles)?;
    }
    crate::timings::mark("rows printed");
    let mut collected = Collected::default();
    let mut judged = None;
    let ran = execute(repo, &input, &project, &view, opts, &mut collected)?;
    let mut code = match &ran {
        Some(r) => r.code,
        None if decided.verdict == RunVerdict::Refused && record.is_none() => exit_codes::REFUSED,
        None => exit_codes::OK,
    };
    if let Some(r) = &ran
        && plan.runs()
    {
        let complete = r.run.as_ref().is_some_and(|run| run.outcome != "broken");
        if opts.shadow != Shadow::Off {
            let db = record_to.as_ref().and_then(|t| t.db.as_deref());
            let run = (&frozen, &collected, complete, select_ms);
            let mode = (r.code, opts.shadow);
            (code, judged) = super::shadow::compare(repo, &project, &input, run, db, mode)?;
        }
        let scope = crate::fingerprint::Scope {
            repo,
            snapshot: &input.snapshot,
            project: &project,
            root: &root,
        };
        remember(&scope, input.head, &ledger, &collected, complete, &this_run);
    }
    // A run that ran no test (every change inert, nothing changed) has nothing to record.
    if let (Some(to), Some(_), true) = (&record_to, &ran, plan.runs()) {
        code = record_run(repo, &input, &project, &decided, &collected, to, code);
    }
    // Steps are reported where a caller runs them, and only when they ran.
    let steps_ran = ran.is_some() && opts.caller != Caller::Command;
    let mut report = Report::new(
        &view,
        collected,
        ran.and_then(|r| r.run),
        steps_ran,
        code,
        started.elapsed().as_millis() as u64,
    );
    report.shadow = judged;
    let json = finish(&report, opts)?;
    drop(report);
    drop(view);
    super::leave(Box::new((project, input)));
    Ok(Gated { code, json })
}

/// The run plan: the selection without the ledger's reuses; the whole suite, whatever was
/// selected, for a shadow run.
fn plan_of(
    opts: &Options<'_>,
    decided: &Decision,
    project: &Project,
    input: &Input,
    ledger: &Ledger,
    root: &Path,
) -> run::select::RunPlan {
    if opts.shadow != Shadow::Off {
        return run::select::whole(project, root);
    }
    run::select::select(
        decided,
        project,
        opts.citation.is_some(),
        &input.snapshot.files,
        root,
        &ledger.reused_units(),
    )
}

/// `opts` as an audit run, when `audit_rate` (the governing configuration's) chooses this CI
/// run: by a hash of its run id alone, so a retry of the run makes the same choice. Outside CI
/// (no run id) and in the pre-push hook, never.
fn audit<'o, 'a>(opts: &'o Options<'a>, project: &Project) -> Cow<'o, Options<'a>> {
    let rate = project.config.audit_rate;
    if opts.shadow != Shadow::Off || opts.caller == Caller::PrePush || rate <= 0.0 || opts.list {
        return Cow::Borrowed(opts);
    }
    let (run, generated) = super::record::run_id(None);
    if generated || !audit_chooses(&run, rate) {
        return Cow::Borrowed(opts);
    }
    super::warn(format!(
        "audit run: audit_rate {rate} chose CI run {run}: the whole suite runs in shadow mode"
    ));
    Cow::Owned(Options {
        shadow: Shadow::Audit,
        ..opts.clone()
    })
}

/// Whether run `run` is among the `rate` fraction audited: the first 8 bytes of its SHA-256,
/// as a fraction of 2^64, below the rate.
pub(super) fn audit_chooses(run: &str, rate: f64) -> bool {
    use sha2::Digest;
    let h = sha2::Sha256::digest(run.as_bytes());
    let x = u64::from_be_bytes(h[..8].try_into().expect("8 bytes"));
    (x as f64) / 18_446_744_073_709_551_616.0 < rate
}

/// Where the run is recorded: `--record`'s, else `[history] record`'s for the hook and
/// `verify`.
fn record_to(opts: &Options<'_>, project: &Project) -> Option<RecordTo> {
    opts.record.clone().or_else(|| {
        (opts.caller != Caller::Command && project.config.history.record).then(|| RecordTo {
            leg: "default".into(),
            db: None,
        })
    })
}

/// The selected tests' fingerprints looked up in the ledger. `--list` runs nothing and enters
/// nothing: fingerprinting (a cost linear in the selected tests' inputs) is for runs.
fn look_up(
    repo: &git2::Repository,
    input: &Input,
    project: &Project,
    decided: &Decision,
    this_run: &crate::ledger::Run<'_>,
    opts: &Options<'_>,
    memo: &mut crate::fingerprint::Memo,
) -> Ledger {
    if opts.list {
        return Ledger::default();
    }
    let ledger = Ledger::look_up(
        repo,
        &input.snapshot,
        project,
        decided,
        this_run,
        opts.reuse,
        memo,
    );
    for note in &ledger.notes {
        super::warn(note.clone());
    }
    ledger
}

/// Freezes the selection before anything runs, in the history store (`db`, else the
/// configured one) and in `out` when asked: its id and JSON. A shadow run judges against the
/// decision frozen before it for the same commit and base, when there is one.
pub(super) fn freeze(
    parts: &crate::frozen::Parts<'_>,
    memo: &mut crate::fingerprint::Memo,
    db: Option<&str>,
    shadow: Shadow,
    out: Option<&Path>,
) -> Result<(String, String)> {
    if shadow != Shadow::Off
        && let Some(found) = super::shadow::frozen_before(parts, db)?
    {
        return Ok(found);
    }
    let frozen = crate::frozen::freeze(parts, memo);
    let store = crate::history::location(
        db,
        parts.project.config.history.url.as_deref(),
        &repo::state_dir(parts.repo),
    );
    let (json, note) = frozen.keep(store, out)?;
    if let Some(note) = note {
        super::warn(note);
    }
    crate::timings::mark("decision frozen");
    Ok((frozen.id, json))
}

/// What the ledger enters this run as: its commit, branch, whether it is the default branch,
/// and its leg.
fn this_run<'a>(
    repo: &git2::Repository,
    input: &Input,
    record_to: Option<&'a RecordTo>,
) -> crate::ledger::Run<'a> {
    let branch = super::record::branch_of(repo);
    let main = repo::range::default_branch(repo);
    crate::ledger::Run {
        commit: input
            .head
            .map_or_else(|| "working tree".to_string(), |h| h.to_string()),
        mainline: super::record::is_mainline(branch.as_deref(), main.as_ref()),
        branch,
        leg: record_to.map_or("default", |r| r.leg.as_str()),
    }
}

/// Records the run's results and selection in the history store. The run has happened, so
/// a store that cannot take it is said on one line and fails the run (exit 8) only when the
/// tests themselves passed.
fn record_run(
    repo: &git2::Repository,
    input: &Input,
    project: &Project,
    decided: &Decision,
    collected: &Collected,
    to: &RecordTo,
    code: u8,
) -> u8 {
    let Some(head) = input.head else {
        super::warn(
            "not recorded: the working tree is not a commit (gate a range to record it)".into(),
        );
        return code;
    };
    let recorded = (|| -> Result<()> {
        let branch = super::record::branch_of(repo);
        let main = repo::range::default_branch(repo);
        let mainline = super::record::is_mainline(branch.as_deref(), main.as_ref());
        let has_go = collected
            .tests
            .iter()
            .any(|t| t.file.as_deref().is_some_and(crate::graph::is_go_unit));
        let env = super::record::environment(!has_go, has_go, &to.leg);
        let leg = crate::history::Leg {
            run: super::record::run_id(None).0,
            attempt: super::record::attempt(None)?,
            leg: to.leg.clone(),
            commit: head.to_string(),
            branch,
            mainline,
            base: input.range.as_ref().and_then(|r| r.base.clone()),
            inputs: crate::fingerprint::run_inputs(&project.config, &env),
            env,
            source: "gate".into(),
        };
        super::record::store_leg(
            repo,
            &project.config.history,
            to.db.as_deref(),
            &leg,
            &collected.tests,
            &super::record::change_of(decided),
            &mut |line| {
                tell!("{line}");
                Ok(())
            },
        )
    })();
    match recorded {
        Ok(()) => code,
        Err(e) => {
            tell!("error: the run was not recorded: {e}");
            if code == exit_codes::OK {
                e.exit_code()
            } else {
                code
            }
        }
    }
}

/// The run: nothing for a refusal that stands (it is named, with how to cite a decision) or
/// for `--list`; otherwise the caller's steps, each step and test reported as it goes.
fn execute(
    repo: &git2::Repository,
    input: &Input,
    project: &Project,
    view: &View<'_>,
    opts: &Options<'_>,
    collected: &mut Collected,
) -> Result<Option<steps::Ran>> {
    // A shadow run runs the whole suite whatever the verdict: it judges the decision, it does
    // not act on it.
    if view.decision.verdict == RunVerdict::Refused
        && view.record.is_none()
        && opts.shadow == Shadow::Off
    {
        refuse(view, opts);
        return Ok(None);
    }
    if opts.list {
        return Ok(None);
    }
    let root = repo::workdir(repo)?;
    let steps = Steps {
        steps: steps_of(opts.caller, project),
        plan: view.plan,
        project,
        root: &root,
        head: input.head,
        changed: &input.changed(),
        tree: &view.tree,
        quiet_stdout: opts.json,
    };
    let mut live = human::Live {
        styles: opts.styles,
        steps: opts.caller != Caller::Command && !opts.json,
    };
    let ran = steps::run_all(repo, &steps, &mut Tee(vec![&mut live, collected]))?;
    if let (Some(name), true) = (&ran.blocked_by, live.steps) {
        tell!("error: step `{name}` failed — {}", blocked(opts.caller));
    }
    Ok(Some(ran))
}

/// The steps a caller runs: the affected tests alone for `gate --affected`, the configured
/// steps of its context for the hook and `verify`.
fn steps_of(caller: Caller, project: &Project) -> Vec<&Step> {
    static BUILTIN: std::sync::LazyLock<Step> = std::sync::LazyLock::new(Step::affected_tests);
    match caller {
        Caller::Command => vec![&*BUILTIN],
        Caller::PrePush => steps::for_context(&project.config.steps, When::PrePush).collect(),
        Caller::Verify => steps::for_context(&project.config.steps, When::Verify).collect(),
    }
}

fn blocked(caller: Caller) -> &'static str {
    match caller {
        Caller::PrePush => "the push is blocked (bypass once with `git push --no-verify`)",
        _ => "verify failed",
    }
}

/// The decision a citation records, appended to `.git/gate/decisions.jsonl` before anything
/// runs.
fn cite(
    repo: &git2::Repository,
    citation: Option<&str>,
    input: &Input,
    project: &Project,
    decided: &Decision,
) -> Result<Option<decision::Record>> {
    let Some(citation) = citation else {
        return Ok(None);
    };
    let spec = input
        .range
        .as_ref()
        .map_or_else(|| input.snapshot.describe(), |r| r.spec.clone());
    let selected: Vec<String> = decided.selected.keys().cloned().collect();
    let refusals: Vec<&str> = input
        .range_refusal
        .iter()
        .chain(&project.discovery.broken)
        .map(String::as_str)
        .collect();
    let refused = (!refusals.is_empty()).then(|| refusals.join("; "));
    let record = decision::record(
        repo,
        citation,
        &spec,
        &decided.rows,
        refused.as_deref(),
        &selected,
    )?;
    decision::append(&repo::state_dir(repo), &record)?;
    Ok(Some(record))
}

/// A refusal without a decision: each missing fact, and how to record a decision.
fn refuse(view: &View<'_>, opts: &Options<'_>) {
    if opts.json {
        return;
    }
    let mut facts: Vec<&str> = view
        .range_refusal
        .into_iter()
        .chain(view.tree_refusal)
        .collect();
    facts.extend(
        view.decision
            .rows
            .iter()
            .filter(|r| r.verdict == Verdict::Refused)
            .flat_map(|r| r.reasons.iter().map(String::as_str)),
    );
    tell!("error: refused — {}", facts.join("; "));
    tell!(
        "\nhint: fix the missing fact (fetch the base, add a [[depends]] rule or an edge), or record a decision:\n      {}",
        opts.retry
    );
}

/// The closing output — the JSON report, or the summary line — and the JSON text for a receipt
/// (built only when someone reads it).
fn finish(report: &Report<'_>, opts: &Options<'_>) -> Result<String> {
    let json = if opts.json || opts.keep_json {
        serde_json::to_string_pretty(report).expect("reports serialize")
    } else {
        String::new()
    };
    let mut stdout = std::io::stdout().lock();
    if opts.json {
        super::ignore_broken_pipe(writeln!(stdout, "{json}"))?;
    } else {
        super::ignore_broken_pipe(writeln!(
            stdout,
            "{}",
            report.summary.style(opts.styles.bold)
        ))?;
    }
    Ok(json)
}

/// Go files are analysed only up to their imports; a changed one is parsed whole, so a syntax
/// error below them is named on its row.
fn flag_go_syntax_errors(repo: &git2::Repository, input: &Input, project: &mut Project) {
    let go = input.changes.iter().map(|c| &c.path).filter(|p| {
        crate::analyze::gomod::is_go(p)
            && input.snapshot.contains(p)
            && !input.snapshot.links.contains_key(p.as_str())
    });
    for path in go {
        let Ok((_, bytes)) = input.snapshot.read(repo, path) else {
            continue;
        };
        let lines = crate::analyze::golang::parse_errors(&bytes);
        if !lines.is_empty() {
            let flags = project.flagged.entry(path.to_string()).or_default();
            flags.parse_errors.extend(lines);
            flags.parse_errors.sort_unstable();
            flags.parse_errors.dedup();
        }
    }
}
