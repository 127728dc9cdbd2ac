//! `gate triage`: every failing test of a recorded run, one verdict each, from what was
//! recorded before it. Exits 1 when a failure is a new regression, so CI can gate on it, and
//! 14 when the run is not whole — a shard with no leg, a leg with no result for some of its
//! shard's units — whatever its verdicts: a run that did not run is never a pass.

use crate::error::Result;
use crate::exit_codes;
use crate::history::triage::{self, Confidence, LegInfo, Rules, Triaged};
use crate::proof::whole::Whole;
use crate::repo;
use crate::terminal::shown;
use std::path::Path;

/// Version of the `gate triage --json` document (`plans/triage.schema.json`). 2: each leg's
/// environment and shard, each verdict's `from` (the leg its evidence came from). 3: `shards`,
/// each sharded environment's missing shards and units not run.
const TRIAGE_VERSION: u32 = 3;
/// How many units a human line names before it counts the rest (`--json` has them all).
const NAMED: usize = 10;

pub(super) fn run(dir: &Path, run: Option<&str>, json: bool, db: Option<&str>) -> Result<u8> {
    let repo = repo::open(dir)?;
    let crate::history::RecordedRun {
        mut store,
        config,
        run,
        legs,
    } = crate::history::recorded_run(&repo, db, run)?;
    let known_flaky = |file: &str| config.known_flaky_of(file);
    let rules = Rules {
        window_days: config.history.window_days,
        known_flaky: &known_flaky,
    };
    let mut verdicts: Vec<Triaged> = Vec::new();
    for leg in &legs {
        verdicts.extend(store.triage(leg, &rules)?);
    }
    let whole = crate::proof::whole::read(&mut store, &legs)?;
    let counts = triage::counts(&verdicts);
    // A run that is not whole is not judged green or red by what ran: its code says so first.
    let code = if !whole.is_whole() {
        exit_codes::INCOMPLETE
    } else if counts[0].1 > 0 {
        exit_codes::TESTS_FAILED
    } else {
        exit_codes::OK
    };
    if json {
        let doc = serde_json::json!({
            "version": TRIAGE_VERSION,
            "kind": "triage",
            "gate": crate::version::ANALYZER,
            "store": store.name(),
            "run": run,
            "window_days": rules.window_days,
            "legs": legs,
            "verdicts": verdicts,
            "shards": whole.groups,
            "counts": counts.iter().map(|(v, n)| (v.name(), *n)).collect::<std::collections::BTreeMap<_, _>>(),
        });
        let doc = crate::terminal::sorted(doc);
        say!("{}", crate::terminal::json(&doc));
        return Ok(code);
    }
    human(&legs, &verdicts, &counts, &whole)?;
    Ok(code)
}

/// The human form: each leg with no result, each verdict with its evidence, each gap of the
/// run, and the counts.
fn human(
    legs: &[LegInfo],
    verdicts: &[Triaged],
    counts: &[(triage::Verdict, usize)],
    whole: &Whole,
) -> Result<()> {
    // A leg with no result judged nothing: said, never counted as a leg without failures.
    for leg in legs.iter().filter(|l| l.results == 0) {
        say!(
            "no result       leg `{}` attempt {} recorded no test result: nothing in it was judged",
            shown(&leg.leg),
            leg.attempt
        );
    }
    let several = legs.len() > 1;
    for t in verdicts {
        let confidence = match t.confidence {
            Confidence::High => "high",
            Confidence::Medium => "medium",
            Confidence::Low => "low",
        };
        let leg = if several {
            format!("  [{}]", shown(&t.leg))
        } else {
            String::new()
        };
        say!(
            "{:<15} {:<7} {}{leg}",
            t.verdict.name(),
            confidence,
            shown(&t.test)
        );
        match &t.from {
            Some(from) => say!(
                "    {}; from run {}, leg {} (#{})",
                shown(&t.evidence),
                shown(&from.run),
                shown(&from.leg),
                from.seq
            ),
            None => say!("    {}", shown(&t.evidence)),
        }
    }
    gaps(whole)?;
    let empty = legs.iter().filter(|l| l.results == 0).count();
    let empty = if empty > 0 {
        format!("; {empty} of {} leg(s) recorded no result", legs.len())
    } else {
        String::new()
    };
    say!(
        "gate: {} failing test(s): {} new regression, {} pre existing, {} flaky, {} unknown{empty}{}",
        verdicts.len(),
        counts[0].1,
        counts[1].1,
        counts[2].1,
        counts[3].1,
        incomplete(whole)
    );
    Ok(())
}

/// A line per shard no leg recorded and per leg that recorded no result for some of its
/// shard's units, each naming the units.
fn gaps(whole: &Whole) -> Result<()> {
    for g in &whole.groups {
        for m in &g.missing {
            if g.decision.is_none() {
                say!(
                    "missing shard   {}: no leg recorded it (no decision in the store split this run: its units are not known)",
                    shown(&m.leg)
                );
            } else {
                say!(
                    "missing shard   {}: no leg recorded it; {} test unit(s) did not run: {}",
                    shown(&m.leg),
                    m.units.len(),
                    named(&m.units)
                );
            }
        }
        for s in &g.not_run {
            say!(
                "not run         leg `{}` attempt {} recorded no result for {} of its shard's {} test unit(s): {}",
                shown(&s.leg),
                s.attempt,
                s.units.len(),
                s.given,
                named(&s.units)
            );
        }
    }
    Ok(())
}

/// The summary's clause for a run that is not whole: what is missing, and that it is exit 14.
fn incomplete(whole: &Whole) -> String {
    if whole.is_whole() {
        return String::new();
    }
    let missing = whole.missing_legs();
    let not_run = whole.not_run().len();
    let shards: Vec<String> = missing.iter().map(|l| shown(l).to_string()).collect();
    format!(
        "; not whole: {} shard(s) with no leg{}, {not_run} test unit(s) known not run",
        missing.len(),
        if shards.is_empty() {
            String::new()
        } else {
            format!(" ({})", shards.join(", "))
        }
    )
}

/// The first `NAMED` units, then how many more.
fn named(units: &[String]) -> String {
    let first: Vec<String> = units
        .iter()
        .take(NAMED)
        .map(|u| shown(u).to_string())
        .collect();
    match units.len().saturating_sub(NAMED) {
        0 => first.join(", "),
        more => format!(
            "{} and {more} more (--json lists them all)",
            first.join(", ")
        ),
    }
}
