//! `gate triage`: every failing test of a recorded run, one verdict each, from what was
//! recorded before it. Exits 1 when a failure is a new regression, so CI can gate on it.

use crate::error::Result;
use crate::exit_codes;
use crate::history::triage::{self, Confidence, Rules, Triaged};
use crate::repo;
use std::path::Path;

/// Version of the `gate triage --json` document (`plans/triage.schema.json`). 2: each leg's
/// environment and shard, each verdict's `from` (the leg its evidence came from).
const TRIAGE_VERSION: u32 = 2;

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
    let counts = triage::counts(&verdicts);
    let code = if counts[0].1 > 0 {
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
            "counts": counts.iter().map(|(v, n)| (v.name(), *n)).collect::<std::collections::BTreeMap<_, _>>(),
        });
        say!(
            "{}",
            serde_json::to_string_pretty(&doc).expect("triage serializes")
        );
        return Ok(code);
    }
    // A leg with no result judged nothing: said, never counted as a leg without failures.
    for leg in legs.iter().filter(|l| l.results == 0) {
        say!(
            "no result       leg `{}` attempt {} recorded no test result: nothing in it was judged",
            crate::terminal::shown(&leg.leg),
            leg.attempt
        );
    }
    let several = legs.len() > 1;
    for t in &verdicts {
        let confidence = match t.confidence {
            Confidence::High => "high",
            Confidence::Medium => "medium",
            Confidence::Low => "low",
        };
        let leg = if several {
            format!("  [{}]", crate::terminal::shown(&t.leg))
        } else {
            String::new()
        };
        say!(
            "{:<15} {:<7} {}{leg}",
            t.verdict.name(),
            confidence,
            crate::terminal::shown(&t.test)
        );
        match &t.from {
            Some(from) => say!(
                "    {}; from run {}, leg {} (#{})",
                crate::terminal::shown(&t.evidence),
                crate::terminal::shown(&from.run),
                crate::terminal::shown(&from.leg),
                from.seq
            ),
            None => say!("    {}", crate::terminal::shown(&t.evidence)),
        }
    }
    let empty = legs.iter().filter(|l| l.results == 0).count();
    let empty = if empty > 0 {
        format!("; {empty} of {} leg(s) recorded no result", legs.len())
    } else {
        String::new()
    };
    say!(
        "gate: {} failing test(s): {} new regression, {} pre existing, {} flaky, {} unknown{empty}",
        verdicts.len(),
        counts[0].1,
        counts[1].1,
        counts[2].1,
        counts[3].1
    );
    Ok(code)
}
