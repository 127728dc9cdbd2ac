//! The gate pipeline, the one seam every command that gates calls (`gate --affected`, `verify`,
//! the pre-push hook, `shadow`, `record`, `export`): inputs → configuration → project →
//! verdicts (`analyze`), then history, ledger, run plan, decision (`select`), the steps with
//! every result one event stream (`execute`), what the run leaves behind (`remember`), and the
//! closing report.

mod execute;
mod governing;
mod remember;
mod select;
mod split;

use crate::error::{Error, Result};
use crate::history::recorder::{RecordTo, Recorder};
use crate::project::{Keep, Project};
use crate::repo::input::Input;
use crate::report::{json::Report, styles::Styles};
use crate::run::events::Collected;
use crate::verdict::{self, Decision};
use std::path::Path;
use std::time::Instant;

pub(crate) use crate::proof::shadow::Shadow;
pub(crate) use crate::repo::input::Target;

/// Who asked: it decides which steps run and how a refusal tells the user to cite a decision.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Caller {
    /// `gate --affected …`: the affected tests only.
    Command,
    PrePush,
    Verify,
}

#[derive(Clone)]
pub(crate) struct Options<'a> {
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
    /// The user's arguments for the runners (`gate … -- ARGS`), after gate's own.
    pub runner_args: &'a [String],
    /// A recommendations file whose test files are added to the selection.
    pub recommendations: Option<&'a Path>,
    /// Run one shard of the selection (`--shard K/N`), of the split `decision` froze when
    /// given (`--decision ID`).
    pub shard: Option<crate::run::shard::Shard>,
    pub decision: Option<&'a str>,
    /// Split by pytest test rather than by test file (`--shard-by test`).
    pub by_test: bool,
    /// The history store (`--db`): where decisions are frozen and durations read.
    pub db: Option<&'a str>,
    /// The environment this leg runs in (`--leg`): whose recorded durations a split reads.
    pub leg: Option<&'a str>,
}

impl<'a> Options<'a> {
    /// A gate that runs what it selects, as `caller` runs it, shown with `styles`; `retry` is
    /// the same gate with a decision cited.
    pub(crate) fn new(caller: Caller, styles: &'a Styles, retry: String) -> Self {
        Options {
            caller,
            citation: None,
            list: false,
            json: false,
            verbose: false,
            styles,
            retry,
            keep_json: false,
            record: None,
            reuse: true,
            decision_out: None,
            shadow: Shadow::Off,
            runner_args: &[],
            recommendations: None,
            shard: None,
            decision: None,
            by_test: false,
            db: None,
            leg: None,
        }
    }
}

/// The exit code and the JSON report (a `verify` receipt is this report).
pub(crate) struct Gated {
    pub code: u8,
    pub json: String,
}

/// What a gate knows once its target is analysed.
struct Inputs<'a> {
    pub repo: &'a git2::Repository,
    pub input: &'a Input,
    pub project: &'a Project,
    pub decided: &'a Decision,
}

/// What a target is before anything runs: its changes and tree, the project gated under the
/// governing configuration, and every change's verdict.
pub(crate) struct Analyzed {
    pub input: Input,
    pub project: Project,
    pub decided: Decision,
}

/// The stages before the run plan: inputs → configuration → project → verdicts.
pub(crate) fn analyze(repo: &git2::Repository, target: Target) -> Result<Analyzed> {
    let input = crate::repo::input::read(repo, target)?;
    crate::timings::mark("changes and tree read");
    let governing = governing::governing(repo, &input.snapshot, &input.bases)?;
    let deleted = input.deleted();
    let mut project = Project::load_under(
        repo,
        &input.snapshot,
        &deleted,
        governing.config,
        Keep::Reuse,
        false,
        &mut crate::terminal::warn,
    )?;
    flag_syntax_errors(repo, &input, &mut project);
    crate::timings::mark("project loaded");
    let mut decided = verdict::decide(
        &input.changes,
        &project.context(),
        input.range_refusal.is_some() || project.broken.is_some(),
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

/// The gate: the target analysed, its selection made and frozen, its rows shown, the steps
/// run with each result one event on one stream (the live lines, the report, the recording),
/// what the run saw remembered, and the closing report.
pub(crate) fn gate(repo: &git2::Repository, target: Target, opts: &Options<'_>) -> Result<Gated> {
    let started = Instant::now();
    let Analyzed {
        input,
        project,
        mut decided,
    } = analyze(repo, target)?;
    crate::lang::suite::check_args(&project, opts.runner_args).map_err(Error::Usage)?;
    select::add_history(repo, &project, &input, select::store_of(opts), &mut decided);
    if let Some(file) = opts.recommendations {
        select::recommend(repo, &input, &project, file, &mut decided)?;
    }
    let opts: &Options<'_> = &select::audit(opts, &project);
    let record_to = select::record_to(opts, &project);
    let at = Inputs {
        repo,
        input: &input,
        project: &project,
        decided: &decided,
    };
    let chosen = select::choose(&at, opts, record_to.as_ref())?;
    let select_ms = started.elapsed().as_millis() as u64;
    let view = chosen.view(&at, opts);
    execute::show_rows(&view, opts)?;
    let mut collected = Collected::default();
    let mut recorder = record_to.as_ref().map(Recorder::new);
    let ran = execute::execute(&at, &view, opts, &mut collected, recorder.as_mut())?;
    let remember::Concluded {
        code,
        judged,
        entered,
    } = remember::conclude(
        &at,
        &chosen,
        opts,
        (ran.as_ref(), &collected, select_ms),
        recorder,
    )?;
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
    report.ledger = chosen.ledger.states(entered.as_ref());
    let json = execute::finish(&report, opts)?;
    drop(report);
    drop(view);
    leave(Box::new((project, input)));
    Ok(Gated { code, json })
}

/// What the last gate built and no longer needs (its project and tree). A CLI's last act is to
/// exit, and the OS frees a large graph and tree listing faster than dropping them piece by
/// piece: `main` takes the last one and leaves it undropped. A hook gating several commits
/// drops each earlier one as the next arrives, so memory stays that of one gate.
static LEFTOVERS: std::sync::Mutex<Option<Box<dyn std::any::Any + Send>>> =
    std::sync::Mutex::new(None);

pub(crate) fn leave(value: Box<dyn std::any::Any + Send>) {
    let previous = LEFTOVERS
        .lock()
        .map(|mut slot| slot.replace(value))
        .unwrap_or(None);
    drop(previous);
}

/// The last gate's leftovers, for `main` to leave undropped at exit.
pub fn leftovers() -> Option<Box<dyn std::any::Any + Send>> {
    LEFTOVERS.lock().ok().and_then(|mut slot| slot.take())
}

/// A language may analyse its files only up to their imports (Go does); a changed one is parsed
/// whole, so a syntax error below them is named on its row.
fn flag_syntax_errors(repo: &git2::Repository, input: &Input, project: &mut Project) {
    let sources = input.changes.iter().map(|c| &c.path).filter_map(|p| {
        let language = crate::lang::of_source(p).filter(|l| l.stops_at_imports())?;
        (input.snapshot.contains(p) && !input.snapshot.links.contains_key(p.as_str()))
            .then_some((p, language))
    });
    for (path, language) in sources {
        let Ok((_, bytes)) = input.snapshot.read(repo, path) else {
            continue;
        };
        let lines = language.changed_parse_errors(&bytes);
        if !lines.is_empty() {
            let flags = project.flagged.entry(path.to_string()).or_default();
            flags.parse_errors.extend(lines);
            flags.parse_errors.sort_unstable();
            flags.parse_errors.dedup();
        }
    }
}
