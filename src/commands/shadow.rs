//! `gate shadow [RANGE]`: the whole suite runs through the gate pipeline (the decision frozen
//! for this commit and base, else one frozen now, before the suite runs), and every failing
//! test file or Go package is judged against that decision (`crate::shadow`). The run and the
//! judgements are recorded in the history store.

use super::gate::{self, Caller, Options, RecordTo, Shadow, Target};
use crate::cli::ShadowArgs;
use crate::error::{Error, Result};
use crate::exit_codes;
use crate::frozen::Parts;
use crate::history::{self, ShadowRun, Store};
use crate::project::Project;
use crate::repo::input::Input;
use crate::repo::{self, range};
use crate::report::styles::Styles;
use crate::run::events::Collected;
use std::collections::BTreeSet;
use std::path::Path;

pub(super) fn run(dir: &Path, args: &ShadowArgs, styles: &Styles) -> Result<u8> {
    let repo = repo::open(dir)?;
    let spec = match args.range.as_deref() {
        Some(s) => s.to_string(),
        None => match range::default_branch(&repo) {
            Some(main) => format!("{}...HEAD", main.name),
            None => {
                return Err(Error::Usage(
                    "gate shadow: no default branch to compare with: give RANGE (`origin/main...HEAD`)"
                        .into(),
                ));
            }
        },
    };
    let target = Target::Ranges(vec![range::resolve(&repo, &spec)?]);
    if !args.junit.is_empty() || !args.go_json.is_empty() {
        return ingest(&repo, target, args);
    }
    let opts = Options {
        caller: Caller::Command,
        citation: None,
        list: false,
        json: args.json,
        verbose: false,
        styles,
        retry: format!("gate shadow {spec}"),
        keep_json: false,
        record: Some(RecordTo {
            leg: args.leg.to_string(),
            db: args.db.clone(),
        }),
        reuse: true,
        decision_out: None,
        shadow: Shadow::Asked,
    };
    gate::gate(&repo, target, &opts).map(|g| g.code)
}

/// A whole-suite run made elsewhere (its JUnit or `go test -json` files), judged against the
/// decision frozen for the range's commit and base — else one frozen now from the same
/// inputs, with no ledger reuse (no gate ran, so none reused anything). The compare is
/// recorded; the run's results are `gate record`'s to store (the same files).
fn ingest(repo: &git2::Repository, target: Target, args: &ShadowArgs) -> Result<u8> {
    let started = std::time::Instant::now();
    let gate::Analyzed {
        input,
        project,
        mut decided,
    } = gate::analyze(repo, target)?;
    let state = repo::state_dir(repo);
    for note in history::signals::add(&state, &project, &input.changed(), &mut decided) {
        super::warn(note);
    }
    let root = repo::workdir(repo)?;
    let parts = Parts {
        repo,
        root: &root,
        input: &input,
        project: &project,
        decided: &decided,
        ledger: &crate::ledger::Ledger::default(),
    };
    let db = args.db.as_deref();
    let memo = &mut crate::fingerprint::Memo::default();
    let frozen = gate::freeze(&parts, memo, db, Shadow::Asked, None)?;
    let select_ms = started.elapsed().as_millis() as u64;
    let results = super::record::read_results(&args.junit, &args.go_json, &project)?;
    let collected = Collected {
        tests: results,
        ..Collected::default()
    };
    let failed = crate::shadow::by_unit(&collected.tests)
        .values()
        .any(|u| !u.failing.is_empty());
    let code = if failed {
        exit_codes::TESTS_FAILED
    } else {
        exit_codes::OK
    };
    let (code, judged) = compare(
        repo,
        &project,
        &input,
        (&frozen, &collected, true, select_ms),
        db,
        (code, Shadow::Asked),
    )?;
    if args.json {
        let doc = serde_json::json!({
            "version": crate::report::json::REPORT_VERSION,
            "frozen_decision": frozen.0,
            "shadow": judged,
            "exit_code": code,
        });
        println!("{doc:#}");
    }
    Ok(code)
}

/// The decision frozen before this run for the same commit and base, if the store holds one
/// whose body still hashes to its id. A shared store is another party's input: a body edited
/// after it was frozen (a miss rewritten as selected) is said so and not used, and the caller
/// freezes the decision anew.
pub(super) fn frozen_before(
    parts: &Parts<'_>,
    db: Option<&str>,
) -> Result<Option<(String, String)>> {
    let Some(head) = parts.input.head else {
        return Ok(None);
    };
    let mut store = open(parts.repo, parts.project, db)?;
    let base = parts.input.bases.first().map(ToString::to_string);
    let Some((id, json)) = store.decision_for(&head.to_string(), base.as_deref())? else {
        return Ok(None);
    };
    if let Err(why) = crate::frozen::verify(&id, &json) {
        super::warn(format!(
            "the decision {id} in the store is not used: {why}; a new one is frozen"
        ));
        return Ok(None);
    }
    Ok(Some((id, json)))
}

fn open(repo: &git2::Repository, project: &Project, db: Option<&str>) -> Result<Store> {
    let at = history::location(
        db,
        project.config.history.url.as_deref(),
        &repo::state_dir(repo),
    )?;
    Ok(Store::open(&at)?)
}

/// Judges the run's failing units against the frozen decision `(id, json)`, says so and
/// records it; the exit code — `MISSED` on a miss when the shadow was asked for, else the
/// run's `code` (an audit never changes a run's outcome) — and the judgements. A run that broke
/// (`complete` false) is judged not at all: its missing results are unknown, never passes.
pub(super) fn compare(
    repo: &git2::Repository,
    project: &Project,
    input: &Input,
    (frozen, collected, complete, select_ms): (&(String, String), &Collected, bool, u64),
    db: Option<&str>,
    (code, mode): (u8, Shadow),
) -> Result<(u8, Option<Vec<crate::shadow::Judged>>)> {
    if !complete {
        tell!("gate shadow: the run broke before its end: nothing judged, nothing recorded");
        return Ok((code, None));
    }
    let decision: crate::shadow::Frozen = serde_json::from_str(&frozen.1).map_err(|e| {
        Error::Internal(format!(
            "the frozen decision {} cannot be read: {e}",
            frozen.0
        ))
    })?;
    let Some(head) = input.head else {
        return Err(Error::Usage(
            "gate shadow judges a commit: the working tree is not one".into(),
        ));
    };
    let units = crate::shadow::by_unit(&collected.tests);
    let failing: BTreeSet<String> = units
        .iter()
        .filter(|(_, u)| !u.failing.is_empty())
        .map(|(unit, _)| unit.clone())
        .collect();
    let mut store = open(repo, project, db)?;
    // Evidence from before this run (it is recorded after this compare): flaky evidence, and
    // the same tests failing at the base.
    let window = project.config.history.window_days;
    let base = input.bases.first().map(ToString::to_string);
    let (mut flaky, mut pre_existing) = (BTreeSet::new(), BTreeSet::new());
    for unit in &failing {
        if project.config.known_flaky.is_match(unit) || store.flaky_unit(unit, window)? {
            flaky.insert(unit.clone());
        }
        if let Some(base) = &base
            && crate::shadow::failed_at_base(
                &units[unit.as_str()].failing,
                &store.failed_at(base, unit)?,
            )
        {
            pre_existing.insert(unit.clone());
        }
    }
    let before = crate::shadow::Before {
        flaky: &|u| flaky.contains(u),
        pre_existing: &|u| pre_existing.contains(u),
    };
    let judged = crate::shadow::judge(&decision, &failing, &before);
    for j in judged.iter().filter(|j| j.class == "missed") {
        tell!(
            "missed: {} — {}",
            crate::report::shown(&j.unit),
            crate::report::shown(j.cause.as_deref().unwrap_or_default())
        );
        if let Some(rule) = &j.rule {
            tell!("  the rule that would have caught it:");
            for line in rule.lines() {
                tell!("    {}", crate::report::shown(line));
            }
        }
    }
    // A unit with no result was not judged: said, never counted as one that did not fail.
    let silent = decision
        .inventory
        .iter()
        .filter(|u| !units.contains_key(u.as_str()))
        .count();
    if units.is_empty() {
        tell!(
            "gate shadow: no test file had a result — nothing judged, {silent} test file(s) unknown"
        );
    } else {
        if silent > 0 {
            tell!(
                "gate shadow: {silent} of {} test file(s) had no result: unknown, not judged",
                decision.inventory.len()
            );
        }
        tell!("{}", crate::shadow::summary(&judged));
    }
    store.shadow(&ShadowRun {
        decision: &frozen.0,
        commit: &head.to_string(),
        base: base.as_deref(),
        judged: &judged,
        durations: &units
            .iter()
            .map(|(u, r)| (u.clone(), r.duration_ms))
            .collect(),
        select_ms,
    })?;
    let code = if mode == Shadow::Asked && judged.iter().any(|j| j.class == "missed") {
        exit_codes::MISSED
    } else {
        code
    };
    Ok((code, Some(judged)))
}
