//! A whole-suite run judged: its failing units against the frozen decision, with the
//! evidence the store held before the run (flaky, failing at the base); the misses said with
//! the rule that would have caught them, and the compare recorded.

use super::Shadow;
use crate::error::{Error, Result};
use crate::exit_codes;
use crate::history::ShadowRun;
use crate::project::Project;
use crate::repo::input::Input;
use crate::run::events::Collected;
use std::collections::BTreeSet;

/// Judges the run's failing units against the frozen decision `(id, json)`, says so and
/// records it; the exit code — when the shadow was asked for, `MISSED` on a miss and
/// `NOTHING_JUDGED` when no unit had a result (where the run's own code said nothing was wrong);
/// else the run's `code` (an audit never changes a run's outcome) — and the judgements. A run
/// that broke (`complete` false) is judged not at all: its missing results are unknown, never
/// passes, and its code stands.
pub(crate) fn compare(
    repo: &git2::Repository,
    project: &Project,
    input: &Input,
    (frozen, collected, complete, select_ms): (&(String, String), &Collected, bool, u64),
    db: Option<&str>,
    (code, mode): (u8, Shadow),
) -> Result<(u8, Option<Vec<super::Judged>>)> {
    if !complete {
        tell!("gate shadow: the run broke before its end: nothing judged, nothing recorded");
        return Ok((code, None));
    }
    let decision: super::Frozen = serde_json::from_str(&frozen.1).map_err(|e| {
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
    let units = super::by_unit(&collected.tests);
    let failing: BTreeSet<String> = units
        .iter()
        .filter(|(_, u)| !u.failing.is_empty())
        .map(|(unit, _)| unit.clone())
        .collect();
    let mut store = crate::history::open_for(repo, project, db)?;
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
            && super::failed_at_base(&units[unit.as_str()].failing, &store.failed_at(base, unit)?)
        {
            pre_existing.insert(unit.clone());
        }
    }
    let before = super::Before {
        flaky: &|u| flaky.contains(u),
        pre_existing: &|u| pre_existing.contains(u),
    };
    let judged = super::judge(&decision, &failing, &before);
    for j in judged.iter().filter(|j| j.class == "missed") {
        tell!(
            "missed: {} — {}",
            crate::terminal::shown(&j.unit),
            crate::terminal::shown(j.cause.as_deref().unwrap_or_default())
        );
        if let Some(rule) = &j.rule {
            tell!("  the rule that would have caught it:");
            for line in rule.lines() {
                tell!("    {}", crate::terminal::shown(line));
            }
        }
    }
    // A unit with no result was not judged: said, never counted as one that did not fail.
    let silent = decision
        .inventory
        .iter()
        .filter(|u| !units.contains_key(u.as_str()))
        .count();
    if !units.is_empty() {
        if silent > 0 {
            tell!(
                "gate shadow: {silent} of {} test file(s) had no result: unknown, not judged",
                decision.inventory.len()
            );
        }
        tell!("{}", super::summary(&judged));
    }
    let classes: Vec<&str> = judged.iter().map(|j| j.class).collect();
    store.shadow(&ShadowRun {
        decision: &frozen.0,
        commit: &head.to_string(),
        base: base.as_deref(),
        judged: &serde_json::to_string(&judged).expect("judgements serialize"),
        classes: &classes,
        durations: &units
            .iter()
            .map(|(u, r)| (u.clone(), r.duration_ms))
            .collect(),
        select_ms,
    })?;
    let code = match mode {
        Shadow::Asked if judged.iter().any(|j| j.class == "missed") => exit_codes::MISSED,
        // An audit that judged nothing proved nothing: its step must not pass. A code that
        // already fails the step says more, and stands.
        Shadow::Asked if units.is_empty() && code == exit_codes::OK => exit_codes::NOTHING_JUDGED,
        _ => code,
    };
    if units.is_empty() {
        // Said once the compare is recorded: its units are unknown, never passes.
        let why = if code == exit_codes::NOTHING_JUDGED {
            format!("; a shadow run that judged nothing is not a pass (exit {code})")
        } else {
            String::new()
        };
        tell!(
            "gate shadow: no test file had a result — nothing judged, {silent} test file(s) unknown{why}"
        );
    }
    Ok((code, Some(judged)))
}
