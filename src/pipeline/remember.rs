//! What a run leaves behind: its exit code, a shadow run's judgements, the traced edges of what
//! its test files opened, the ledger's entries, and the recorded leg — each result with its
//! unit's static fingerprint digest.

use super::Inputs;
use super::select::Chosen;
use super::{Options, Shadow};
use crate::error::Result;
use crate::exit_codes;
use crate::history::recorder::{self, Recorder};
use crate::history::traced;
use crate::ledger::Entered;
use crate::proof::shadow::Judged;
use crate::run::events::Collected;
use crate::run::steps::Ran;
use crate::verdict::RunVerdict;
use std::collections::{BTreeMap, BTreeSet};

/// What a run left: its exit code, a shadow run's judgements, what the ledger entered.
pub(super) struct Concluded {
    pub code: u8,
    pub judged: Option<Vec<Judged>>,
    pub entered: Option<Entered>,
}

/// The run's exit code and, for a shadow run, its judgements; with the run's traces and
/// ledger entries kept and the leg recorded. A run that ran no test (every change inert,
/// nothing changed, a refusal, `--list`) has nothing to remember.
pub(super) fn conclude(
    at: &Inputs<'_>,
    chosen: &Chosen<'_>,
    opts: &Options<'_>,
    (ran, collected, select_ms): (Option<&Ran>, &Collected, u64),
    recorder: Option<Recorder<'_>>,
) -> Result<Concluded> {
    let mut code = match ran {
        Some(r) => r.code,
        None if at.decided.verdict == RunVerdict::Refused && chosen.record.is_none() => {
            exit_codes::REFUSED
        }
        None => exit_codes::OK,
    };
    let Some(ran) = ran.filter(|_| chosen.plan.runs()) else {
        return Ok(Concluded {
            code,
            judged: None,
            entered: None,
        });
    };
    let complete = ran.run.as_ref().is_some_and(|run| run.outcome != "broken");
    let mut judged = None;
    let mut entered = None;
    if opts.shadow != Shadow::Off {
        let db = opts.record.as_ref().and_then(|t| t.db.as_deref());
        let run = (&chosen.frozen, collected, complete, select_ms);
        let mode = (ran.code, opts.shadow);
        (code, judged) =
            crate::proof::shadow::compare(at.repo, at.project, at.input, run, db, mode)?;
    }
    if opts.by_test {
        // A shard of tests ran part of a file: its pass does not stand for the whole file,
        // nor does what it opened.
        crate::terminal::warn(
            "a shard split by test runs parts of files: no pass enters the ledger and no traced edge is kept"
                .to_string(),
        );
    } else if opts.runner_args.is_empty() {
        let temporary = ran.run.as_ref().is_some_and(|r| r.directory.is_some());
        entered = Some(keep(at, chosen, opts, collected, (complete, temporary)));
    } else {
        // The user's arguments may have narrowed what ran (`-k`, `-run=`, `-x`): a file's run
        // may look whole while only a part of it ran, so neither a trace (which a whole run
        // replaces) nor a pass (which stands for every test of the unit) is kept.
        crate::terminal::warn(format!(
            "a run with runner arguments (`{}`): no pass enters the ledger and no traced edge is kept, and its leg is recorded as run with them",
            opts.runner_args.join(" ")
        ));
    }
    if let Some(recorder) = recorder {
        let gated = recorder::Gated {
            repo: at.repo,
            head: at.input.head,
            base: at.input.range.as_ref().and_then(|r| r.base.clone()),
            project: at.project,
            decided: at.decided,
            runner_args: opts.runner_args,
            // A working tree is not recorded: nothing to fingerprint for it.
            fingerprints: match at.input.head {
                Some(_) => fingerprints(at, chosen, collected, entered.as_ref()),
                None => BTreeMap::new(),
            },
        };
        code = recorder.finish(&gated, code);
    }
    Ok(Concluded {
        code,
        judged,
        entered,
    })
}

/// What the run's test files opened is kept as their traced edges, then the ledger enters its
/// units (their digests taking in those traces). `temporary`: the tests ran in a temporary
/// checkout.
fn keep(
    at: &Inputs<'_>,
    chosen: &Chosen<'_>,
    opts: &Options<'_>,
    collected: &Collected,
    (complete, temporary): (bool, bool),
) -> Entered {
    let scope = crate::fingerprint::Scope {
        repo: at.repo,
        snapshot: &at.input.snapshot,
        project: at.project,
        root: &chosen.root,
    };
    let state = crate::repo::state_dir(at.repo);
    let head = at.input.head;
    let commit = head.map_or_else(|| "working tree".into(), |h| h.to_string());
    let files = &at.input.snapshot.files;
    let db = super::select::store_of(opts);
    let kept = traced::keep(&state, db, at.project, files, &commit, collected);
    kept.into_iter().for_each(crate::terminal::warn);
    let entered = chosen
        .ledger
        .enter(collected, complete, &chosen.this_run, (&scope, temporary));
    entered
        .notes
        .iter()
        .cloned()
        .for_each(crate::terminal::warn);
    entered
}

/// Each test unit that has a result, with its fingerprint digest as this run knew it (the
/// ledger's: `Ledger::recorded`): a same-commit pass is flaky evidence only under the same one.
fn fingerprints(
    at: &Inputs<'_>,
    chosen: &Chosen<'_>,
    collected: &Collected,
    entered: Option<&Entered>,
) -> BTreeMap<String, String> {
    let scope = crate::fingerprint::Scope {
        repo: at.repo,
        snapshot: &at.input.snapshot,
        project: at.project,
        root: &chosen.root,
    };
    let units: BTreeSet<&str> = collected
        .tests
        .iter()
        .filter_map(|t| t.file.as_deref())
        .filter(|unit| at.project.tests.contains(*unit))
        .collect();
    chosen
        .ledger
        .recorded(units.into_iter(), entered, (collected, &scope))
}
