//! The history store: every recorded leg of every run, with its per-test results — SQLite by
//! default (`.git/gate/history.sqlite`, or `--db sqlite:PATH`), PostgreSQL for a CI fleet
//! (`--db postgres://…`, or `GATE_DB`). One schema and one behaviour on both. Later parts —
//! rollup, triage, the green ledger, shadow audits — read it; its schema is versioned and
//! migrated on first use, and a store whose schema is newer than this gate is never written.

mod postgres;
mod sqlite;

use crate::run::events::{TestOutcome, TestResult};
use std::path::{Path, PathBuf};

type Source = Box<dyn std::error::Error + Send + Sync>;

/// The history store could not be used: unreachable, locked past the wait, or of a schema
/// this gate does not know.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{store}: cannot open the history store")]
    Open {
        store: String,
        #[source]
        source: Source,
    },
    #[error("{store}: {what}")]
    Query {
        store: String,
        what: String,
        #[source]
        source: Source,
    },
    #[error(
        "{store}: the history store has schema version {found}, newer than this gate's {known}; upgrade gate (the store is left untouched)"
    )]
    Newer {
        store: String,
        found: i64,
        known: i64,
    },
    #[error("`{0}`: not a store URL gate can use (`postgres://…`, `sqlite:PATH` or a file path)")]
    Url(String),
}

/// An error of `store` while doing `what`.
fn fail<E: std::error::Error + Send + Sync + 'static>(
    store: &str,
    what: &str,
) -> impl FnOnce(E) -> StoreError + use<E> {
    let (store, what) = (store.to_string(), what.to_string());
    move |source| StoreError::Query {
        store,
        what,
        source: Box::new(source),
    }
}

/// Where the store is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Location {
    Sqlite(PathBuf),
    Postgres(String),
}

/// Where the store is: `--db`, else `GATE_DB`, else `.git/gate/history.sqlite`.
pub(crate) fn location(db: Option<&str>, state: &Path) -> Result<Location, StoreError> {
    let url = db
        .map(str::to_string)
        .or_else(|| std::env::var("GATE_DB").ok().filter(|v| !v.is_empty()));
    match url {
        None => Ok(Location::Sqlite(state.join("history.sqlite"))),
        Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
            Ok(Location::Postgres(url))
        }
        Some(url) => match url.split_once("://") {
            Some(_) => Err(StoreError::Url(url)),
            None => Ok(Location::Sqlite(PathBuf::from(
                url.strip_prefix("sqlite:").unwrap_or(&url),
            ))),
        },
    }
}

/// An open store, of either kind.
pub(crate) enum Store {
    Sqlite(sqlite::Store),
    Postgres(postgres::Store),
}

impl Store {
    /// Opens (creating it when missing) and migrates the store.
    pub(crate) fn open(at: &Location) -> Result<Store, StoreError> {
        Ok(match at {
            Location::Sqlite(path) => Store::Sqlite(sqlite::Store::open(path)?),
            Location::Postgres(url) => Store::Postgres(postgres::Store::open(url)?),
        })
    }

    /// Records one leg's results, all or nothing. The same (run, attempt, leg) with the same
    /// content is left as it is; with other content it is replaced in the same transaction.
    pub(crate) fn record(
        &mut self,
        leg: &Leg,
        results: &[TestResult],
    ) -> Result<Recorded, StoreError> {
        let results = numbered(results);
        let digest = digest(leg, &results);
        match self {
            Store::Sqlite(s) => s.record(leg, &results, &digest),
            Store::Postgres(s) => s.record(leg, &results, &digest),
        }
    }

    /// The most recent `limit` recorded runs of test `id`, newest first, with every attempt.
    pub(crate) fn runs_of(&mut self, id: &str, limit: u32) -> Result<Vec<TestRun>, StoreError> {
        let rows = match self {
            Store::Sqlite(s) => s.runs_of(id, limit)?,
            Store::Postgres(s) => s.runs_of(id, limit)?,
        };
        let mut out: Vec<TestRun> = Vec::new();
        for row in rows {
            let attempt = Attempt {
                outcome: row.outcome,
                duration_ms: row.duration_ms,
            };
            match out.last_mut() {
                Some(last) if last.seq == row.seq => last.attempts.push(attempt),
                _ => out.push(TestRun {
                    seq: row.seq,
                    run: row.run,
                    attempt: row.attempt,
                    leg: row.leg,
                    commit: row.commit,
                    branch: row.branch,
                    attempts: vec![attempt],
                }),
            }
        }
        Ok(out)
    }

    /// The store as the user named it, for messages (a URL without its password).
    pub(crate) fn name(&self) -> String {
        match self {
            Store::Sqlite(s) => s.name().to_string(),
            Store::Postgres(s) => s.name().to_string(),
        }
    }
}

/// The schema, one migration per version (version N is the first N applied in order), written
/// once for both stores: `{serial}` and `{now}` are each dialect's. `runs.seq` is the store's
/// own monotonic order (never reused): triage orders by it, never by the timestamps producers
/// write in their files. `results` has no foreign key — a per-row check would cost more than
/// the leg's insert — and goes with its leg in the same transaction.
const MIGRATIONS: &[&str] = &[r#"
CREATE TABLE runs (
    seq {serial},
    run_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    leg TEXT NOT NULL,
    commit_sha TEXT NOT NULL,
    branch TEXT,
    env TEXT NOT NULL,
    source TEXT NOT NULL,
    digest TEXT NOT NULL,
    recorded_at {now},
    UNIQUE (run_id, attempt, leg)
);
CREATE TABLE results (
    seq BIGINT NOT NULL,
    test_id TEXT NOT NULL,
    file TEXT,
    try INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    duration_ms BIGINT NOT NULL,
    PRIMARY KEY (seq, test_id, try)
);
CREATE INDEX results_by_test ON results (test_id, seq);
"#];

/// Both stores are at the same version.
const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// A store's spelling of the schema's dialect-specific parts.
struct Dialect {
    /// A monotonic integer key.
    serial: &'static str,
    /// A time column that defaults to the time of the insert.
    now: &'static str,
}

/// The table the schema version is kept in, and the statements that read and write it (`$1`
/// placeholders; SQLite's are `?1`).
const META_TABLE: &str =
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)";
const READ_VERSION: &str = "SELECT value FROM meta WHERE key = 'schema_version'";
const WRITE_VERSION: &str = "INSERT INTO meta (key, value) VALUES ('schema_version', $1) \
     ON CONFLICT (key) DO UPDATE SET value = excluded.value";

/// The migrations a store at `found` (the stored version text, none for a new store) still
/// needs, in `dialect` — or the refusal of a store newer than this gate.
fn migrations(
    store: &str,
    dialect: &'static Dialect,
    found: Option<String>,
) -> Result<impl Iterator<Item = String>, StoreError> {
    let found = found.map_or(0, |v| v.parse().unwrap_or(i64::MAX));
    if found > SCHEMA_VERSION {
        return Err(StoreError::Newer {
            store: store.to_string(),
            found,
            known: SCHEMA_VERSION,
        });
    }
    Ok(MIGRATIONS.iter().skip(found.max(0) as usize).map(|m| {
        m.replace("{serial}", dialect.serial)
            .replace("{now}", dialect.now)
    }))
}

/// What a leg's content is: its stored fields and every result, hashed.
fn digest(leg: &Leg, results: &[TestResult]) -> String {
    /// The serialized bytes go straight into the hash: no text, no value tree.
    struct Hasher(xxhash_rust::xxh3::Xxh3);
    impl std::io::Write for Hasher {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.update(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut h = Hasher(xxhash_rust::xxh3::Xxh3::new());
    // Serializing plain structs into a writer that never fails cannot fail.
    let _ = serde_json::to_writer(&mut h, &(leg, results));
    format!("{:032x}", h.0.digest128())
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

/// One stored result row of a test, as the stores read it (newest leg first, attempts in order).
pub(crate) struct Row {
    pub seq: i64,
    pub run: String,
    pub attempt: u32,
    pub leg: String,
    pub commit: String,
    pub branch: Option<String>,
    pub outcome: String,
    pub duration_ms: i64,
}

/// The query both stores answer for `runs_of`: a test's rows in its latest `?2` legs.
const RUNS_OF: &str = "SELECT r.seq, r.run_id, r.attempt, r.leg, r.commit_sha, r.branch, x.outcome, x.duration_ms \
     FROM results x JOIN runs r ON r.seq = x.seq \
     WHERE x.test_id = $1 AND x.seq IN \
       (SELECT seq FROM results WHERE test_id = $1 GROUP BY seq ORDER BY seq DESC LIMIT $2) \
     ORDER BY r.seq DESC, x.try";

/// A test in one recorded leg.
#[derive(Debug, serde::Serialize)]
pub(crate) struct TestRun {
    /// The store's sequence number of the leg: its place in recording order.
    pub seq: i64,
    pub run: String,
    pub attempt: u32,
    pub leg: String,
    pub commit: String,
    pub branch: Option<String>,
    /// Every attempt within the run, in order (a rerun's failure then pass).
    pub attempts: Vec<Attempt>,
}

#[derive(Debug, serde::Serialize)]
pub(crate) struct Attempt {
    pub outcome: String,
    pub duration_ms: i64,
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
            Location::Sqlite(PathBuf::from("/tmp/h.db"))
        );
        assert_eq!(
            location(Some("rel.db"), state).unwrap(),
            Location::Sqlite(PathBuf::from("rel.db"))
        );
        assert_eq!(
            location(Some("postgres://u@h/db"), state).unwrap(),
            Location::Postgres("postgres://u@h/db".into())
        );
        assert!(matches!(
            location(Some("mysql://h/db"), state),
            Err(StoreError::Url(_))
        ));
    }
}
