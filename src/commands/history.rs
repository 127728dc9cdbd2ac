//! `gate history TEST`: a test's recent recorded runs, newest first, every attempt of each,
//! and its rollup on each leg (flaky evidence, failing on main since when); `gate decision ID`:
//! a frozen decision.

use crate::error::{Error, Result};
use crate::exit_codes;
use crate::repo;
use std::path::Path;

/// Version of the `gate history --json` document (`plans/history.schema.json`).
const HISTORY_VERSION: u32 = 2;

/// `gate decision ID`: a frozen decision as the store holds it.
pub(super) fn decision(dir: &Path, id: &str, db: Option<&str>) -> Result<u8> {
    let repo = repo::open(dir)?;
    let (mut store, _) = crate::history::open_store(&repo, db)?;
    match store.decision(id)? {
        // A decision whose body no longer hashes to its id is not shown as the decision.
        Some(json) => match crate::proof::frozen::verify(id, &json) {
            Ok(()) => {
                println!("{json}");
                Ok(exit_codes::OK)
            }
            Err(why) => Err(Error::Input {
                path: store.name().into(),
                message: format!(
                    "the decision {} is not the one frozen: {why}",
                    crate::terminal::shown(id)
                ),
            }),
        },
        // An id that names nothing is an error, never an empty answer.
        None => Err(Error::Usage(format!(
            "{}: no frozen decision with this id in {} (a run's JSON report names its `frozen_decision`)",
            crate::terminal::shown(id),
            store.name()
        ))),
    }
}

pub(super) fn run(dir: &Path, test: &str, limit: u32, json: bool, db: Option<&str>) -> Result<u8> {
    let repo = repo::open(dir)?;
    let (mut store, _) = crate::history::open_store(&repo, db)?;
    let runs = store.runs_of(test, limit)?;
    if runs.is_empty() {
        // A test id that matches nothing is an error, never an empty answer.
        return Err(Error::Usage(format!(
            "{}: no recorded result in {} (ids are as `gate record` stores them: tests/test_x.py::test_y, pkg/dir::TestName)",
            crate::terminal::shown(test),
            store.name()
        )));
    }
    let rollup = store.rollup_of(test)?;
    if json {
        let rollup: Vec<serde_json::Value> = rollup
            .iter()
            .map(|(leg, r)| {
                serde_json::json!({
                    "leg": leg,
                    "runs": r.runs,
                    "passed": r.passed,
                    "failed": r.failed,
                    "errors": r.errors,
                    "skipped": r.skipped,
                    "flaky": r.flaky,
                    "failing_since": r.failing_on_main.as_ref().map(|f| &f.since),
                    "failing_main_runs": r.failing_on_main.as_ref().map_or(0, |f| f.runs),
                    "median_ms": r.median_ms(),
                    "p90_ms": r.p90_ms(),
                })
            })
            .collect();
        let doc = serde_json::json!({
            "version": HISTORY_VERSION,
            "kind": "history",
            "gate": crate::version::ANALYZER,
            "test": test,
            "store": store.name(),
            "runs": runs,
            "rollup": rollup,
        });
        let doc = crate::terminal::sorted(doc);
        say!("{}", crate::terminal::json(&doc));
        return Ok(exit_codes::OK);
    }
    for r in &runs {
        let outcomes: Vec<&str> = r.attempts.iter().map(|a| a.outcome.as_str()).collect();
        say!(
            "#{:<6} run {} attempt {}  leg {}  {}{}  {}",
            r.seq,
            crate::terminal::shown(&r.run),
            r.attempt,
            crate::terminal::shown(&r.leg),
            crate::terminal::shown(&r.commit[..12.min(r.commit.len())]),
            r.branch
                .as_deref()
                .map(|b| format!(
                    " ({}{})",
                    crate::terminal::shown(b),
                    if r.mainline { ", main" } else { "" }
                ))
                .unwrap_or_default(),
            outcomes.join(" then ")
        );
    }
    for (leg, r) in &rollup {
        let main = match &r.failing_on_main {
            Some(f) => format!(
                "failing on main since {} ({} main runs)",
                &f.since[..12.min(f.since.len())],
                f.runs
            ),
            None => "not failing on main".into(),
        };
        say!(
            "leg {}: {} run(s): {} passed, {} failed, {} error, {} skipped; flaky {} time(s); {main}; median {} ms, p90 {} ms",
            crate::terminal::shown(leg),
            r.runs,
            r.passed,
            r.failed,
            r.errors,
            r.skipped,
            r.flaky,
            r.median_ms().map_or("-".into(), |v| v.to_string()),
            r.p90_ms().map_or("-".into(), |v| v.to_string()),
        );
    }
    say!(
        "gate history: {}: {} recorded run(s), newest first ({})",
        crate::terminal::shown(test),
        runs.len(),
        store.name()
    );
    Ok(exit_codes::OK)
}
