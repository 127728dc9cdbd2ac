//! The history store: every recorded leg of every run, with its per-test results, in SQLite
//! (`.git/gate/history.sqlite` by default, or `--db sqlite:PATH` / `GATE_DB`). Later parts —
//! rollup, triage, the green ledger, shadow audits — read it; its schema is versioned and
//! migrated on first use, and a store whose schema is newer than this gate is never written.

mod sqlite;

use crate::run::events::{TestOutcome, TestResult};
use std::path::{Path, PathBuf};

pub(crate) use sqlite::Store;

/// The history store could not be used: unreachable, locked past the wait, or of a schema
/// this gate does not know.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: cannot open the history store")]
    Open {
        path: String,
        #[source]
        source: rusqlite::Error,
    },
    #[error("{path}: {what}")]
    Query {
        path: String,
        what: String,
        #[source]
        source: rusqlite::Error,
    },
    #[error(
        "{path}: the history store has schema version {found}, newer than this gate's {known}; upgrade gate (the store is left untouched)"
    )]
    Newer {
        path: String,
        found: i64,
        known: i64,
    },
    #[error("`{0}`: not a store URL gate can use (`sqlite:PATH` or a file path)")]
    Url(String),
}

/// Where the store is: `--db`, else `GATE_DB`, else `.git/gate/history.sqlite`.
pub(crate) fn location(db: Option<&str>, state: &Path) -> std::result::Result<PathBuf, StoreError> {
    let url = db
        .map(str::to_string)
        .or_else(|| std::env::var("GATE_DB").ok().filter(|v| !v.is_empty()));
    match url {
        None => Ok(state.join("history.sqlite")),
        Some(url) => match url.split_once("://") {
            // `postgres://…` and other servers are not stores this gate can open.
            Some(_) => Err(StoreError::Url(url)),
            None => Ok(PathBuf::from(url.strip_prefix("sqlite:").unwrap_or(&url))),
        },
    }
}

/// One leg of one CI run (or one local run), as `gate record` names it: the key
/// (run, attempt, leg) and what is stored with it.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Leg {
    pub run: String,
    pub attempt: u32,
    pub leg: String,
    pub commit: String,
    pub branch: Option<String>,
    /// The leg's environment: OS, architecture, interpreter and toolchain versions.
    pub env: serde_json::Value,
    /// What the results were read from: `junit`, `go-json`.
    pub source: String,
}

/// What recording a leg did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Recorded {
    /// A new leg, under this store sequence number.
    New(i64),
    /// The same leg with the same content was already there: nothing written.
    Unchanged(i64),
    /// The same leg with other content: replaced, atomically, under a new sequence number.
    Replaced(i64),
}

impl Recorded {
    pub(crate) fn seq(self) -> i64 {
        match self {
            Recorded::New(s) | Recorded::Unchanged(s) | Recorded::Replaced(s) => s,
        }
    }
}

/// The results in the order they are stored, each test's attempts numbered 1, 2, … in the
/// order they ran: the same test reported by two files of one leg (a rerun written apart)
/// is a further attempt, never a lost row.
pub(crate) fn numbered(results: &[TestResult]) -> Vec<TestResult> {
    let mut sorted: Vec<TestResult> = results.to_vec();
    sorted.sort_by(|a, b| a.id.cmp(&b.id).then(a.attempt.cmp(&b.attempt)));
    let mut out: Vec<TestResult> = Vec::with_capacity(sorted.len());
    for mut r in sorted {
        r.attempt = match out.last() {
            Some(prev) if prev.id == r.id => prev.attempt + 1,
            _ => 1,
        };
        out.push(r);
    }
    out
}

pub(crate) fn outcome_name(outcome: TestOutcome) -> &'static str {
    match outcome {
        TestOutcome::Passed => "passed",
        TestOutcome::Failed => "failed",
        TestOutcome::Error => "error",
        TestOutcome::Skipped => "skipped",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(id: &str, attempt: u32, outcome: TestOutcome) -> TestResult {
        TestResult {
            id: id.into(),
            file: None,
            outcome,
            duration_ms: 1,
            attempt,
        }
    }

    /// A test reported twice in one leg keeps both attempts, in order.
    #[test]
    fn repeated_tests_are_further_attempts() {
        let got = numbered(&[
            r("b", 1, TestOutcome::Passed),
            r("a", 1, TestOutcome::Failed),
            r("a", 2, TestOutcome::Passed),
            r("a", 1, TestOutcome::Failed),
        ]);
        let keys: Vec<(&str, u32)> = got.iter().map(|r| (r.id.as_str(), r.attempt)).collect();
        assert_eq!(keys, [("a", 1), ("a", 2), ("a", 3), ("b", 1)]);
    }

    #[test]
    fn store_locations() {
        let state = Path::new("/repo/.git/gate");
        assert_eq!(
            location(Some("sqlite:/tmp/h.db"), state).unwrap(),
            PathBuf::from("/tmp/h.db")
        );
        assert_eq!(
            location(Some("rel.db"), state).unwrap(),
            PathBuf::from("rel.db")
        );
        assert!(matches!(
            location(Some("mysql://h/db"), state),
            Err(StoreError::Url(_))
        ));
    }
}
