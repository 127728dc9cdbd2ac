//! What a run leaves behind: its exit code, a shadow run's judgements, the traced edges of what
//! its test files opened, the ledger's entries, and the recorded leg — each result with its
//! unit's fingerprint digest, the one the ledger looked the unit up under when it knew one.

use super::Inputs;
use super::select::Chosen;
use super::{Options, Shadow};
use crate::error::Result;
use crate::exit_codes;
use crate::history::recorder::{self, Recorder};
use crate::history::traced;
use crate::proof::shadow::Judged;
use crate::run::events::Collected;
use crate::run::steps::Ran;
use crate::verdict::RunVerdict;
use std::collections::{BTreeMap, BTreeSet};

/// The run's exit code and, for a shadow run, its judgements; with the run's traces and
/// ledger entries kept and the leg recorded. A run that ran no test (every change inert,
/// nothing changed, a refusal, `--list`) has nothing to remember.
pub(super) fn conclude(
    at: &Inputs<'_>,
    chosen: &Chosen<'_>,
    opts: &Options<'_>,
    (ran, collected, select_ms): (Option<&Ran>, &Collected, u64),
    recorder: Option<Recorder<'_>>,
) -> Result<(u8, Option<Vec<Judged>>)> {
    let mut code = match ran {
        Some(r) => r.code,
        None if at.decided.verdict == RunVerdict::Refused && chosen.record.is_none() => {
            exit_codes::REFUSED
        }
        None => exit_codes::OK,
    };
    let Some(ran) = ran.filter(|_| chosen.plan.runs()) else {
        return Ok((code, None));
    };
    let complete = ran.run.as_ref().is_some_and(|run| run.outcome != "broken");
    let mut judged = None;
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
        keep(at, chosen, opts, collected, complete);
    } else {
        // The user's arguments may have narrowed what ran (`-k`, `-run=`, `-x`): a file's run
        // may look whole while only a part of it ran, so neither a trace (which a whole run
        // replaces) nor a pass (which stands for every test of the unit) is kept.
        crate::terminal::warn(format!(
            "runner arguments `{}` may narrow what ran: no pass enters the ledger and no traced edge is kept",
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
            // A working tree is not recorded: nothing to fingerprint for it.
            fingerprints: match at.input.head {
                Some(_) => fingerprints(at, chosen, collected),
                None => BTreeMap::new(),
            },
        };
        code = recorder.finish(&gated, code);
    }
    Ok((code, judged))
}

/// What the run's test files opened is kept as their traced edges, then the ledger enters its
/// units (their digests taking in those traces).
fn keep(
    at: &Inputs<'_>,
    chosen: &Chosen<'_>,
    opts: &Options<'_>,
    collected: &Collected,
    complete: bool,
) {
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
    kept.into_iter()
        .chain(
            chosen
                .ledger
                .enter(collected, complete, &chosen.this_run, &scope),
        )
        .for_each(crate::terminal::warn);
}

/// Each test unit that has a result, with its fingerprint digest: the ledger's, looked up
/// before the run, when it knew one; else computed now, once per unit (the units of a shadow or
/// whole-suite run, where the ledger fingerprinted none); left out when an input cannot be
/// hashed. A same-commit pass is flaky evidence only under the same digest.
fn fingerprints(
    at: &Inputs<'_>,
    chosen: &Chosen<'_>,
    collected: &Collected,
) -> BTreeMap<String, String> {
    let scope = crate::fingerprint::Scope {
        repo: at.repo,
        snapshot: &at.input.snapshot,
        project: at.project,
        root: &chosen.root,
    };
    let mut memo = crate::fingerprint::Memo::default();
    let units: BTreeSet<&str> = collected
        .tests
        .iter()
        .filter_map(|t| t.file.as_deref())
        .filter(|unit| at.project.tests.contains(*unit))
        .collect();
    units
        .into_iter()
        .filter_map(|unit| {
            let digest = match chosen.ledger.digest_of(unit) {
                Some(known) => known.to_string(),
                None => scope.digest(unit, &mut memo)?,
            };
            Some((unit.to_string(), digest))
        })
        .collect()
}
