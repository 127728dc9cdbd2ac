//! `gate history TEST`: a test's recent recorded runs, newest first, every attempt of each.

use crate::error::{Error, Result};
use crate::exit_codes;
use crate::history::{self, Store};
use crate::repo;
use std::path::Path;

/// Version of the `gate history --json` document (`plans/history.schema.json`).
const HISTORY_VERSION: u32 = 1;

pub(super) fn run(dir: &Path, test: &str, limit: u32, json: bool, db: Option<&str>) -> Result<u8> {
    let repo = repo::open(dir)?;
    let at = history::location(db, &repo::state_dir(&repo))?;
    let mut store = Store::open(&at)?;
    let runs = store.runs_of(test, limit)?;
    if runs.is_empty() {
        // A test id that matches nothing is an error, never an empty answer.
        return Err(Error::Usage(format!(
            "{test}: no recorded result in {} (ids are as `gate record` stores them: tests/test_x.py::test_y, pkg/dir::TestName)",
            store.name()
        )));
    }
    if json {
        let doc = serde_json::json!({
            "version": HISTORY_VERSION,
            "kind": "history",
            "gate": crate::version::ANALYZER,
            "test": test,
            "store": store.name(),
            "runs": runs,
        });
        say!(
            "{}",
            serde_json::to_string_pretty(&doc).expect("history serializes")
        );
        return Ok(exit_codes::OK);
    }
    for r in &runs {
        let outcomes: Vec<&str> = r.attempts.iter().map(|a| a.outcome.as_str()).collect();
        say!(
            "#{:<6} run {} attempt {}  leg {}  {}{}  {}",
            r.seq,
            r.run,
            r.attempt,
            r.leg,
            &r.commit[..12.min(r.commit.len())],
            r.branch
                .as_deref()
                .map(|b| format!(" ({b})"))
                .unwrap_or_default(),
            outcomes.join(" then ")
        );
    }
    say!(
        "gate history: {test}: {} recorded run(s), newest first ({})",
        runs.len(),
        store.name()
    );
    Ok(exit_codes::OK)
}
