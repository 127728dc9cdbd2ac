//! The SQLite store: WAL, a busy timeout, and `BEGIN IMMEDIATE` for every write, so several
//! `gate` processes recording at once queue instead of failing or losing a leg.

use super::{Leg, Recorded, StoreError, numbered, outcome_name};
use crate::run::events::TestResult;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use std::path::Path;

/// The schema, one migration per version: version N is `MIGRATIONS[..N]` applied in order.
/// `runs.seq` is the store's own monotonic order (AUTOINCREMENT never reuses a number): triage
/// orders by it, never by the timestamps producers write in their files.
const MIGRATIONS: &[&str] = &[r#"
CREATE TABLE runs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    leg TEXT NOT NULL,
    commit_sha TEXT NOT NULL,
    branch TEXT,
    env TEXT NOT NULL,
    source TEXT NOT NULL,
    digest TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    UNIQUE (run_id, attempt, leg)
);
CREATE TABLE results (
    seq INTEGER NOT NULL REFERENCES runs(seq) ON DELETE CASCADE,
    test_id TEXT NOT NULL,
    file TEXT,
    try INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    duration_ms INTEGER NOT NULL,
    PRIMARY KEY (seq, test_id, try)
);
CREATE INDEX results_by_test ON results (test_id, seq);
"#];

pub(crate) struct Store {
    conn: Connection,
    path: String,
}

impl Store {
    /// Opens (creating it when missing) and migrates the store at `path`.
    pub(crate) fn open(path: &Path) -> Result<Store, StoreError> {
        let name = path.display().to_string();
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            // A missing folder is the open's error to report, with the path.
            let _ = std::fs::create_dir_all(parent);
        }
        let conn = Connection::open(path).map_err(|source| StoreError::Open {
            path: name.clone(),
            source,
        })?;
        let mut store = Store { conn, path: name };
        store.setup()?;
        Ok(store)
    }

    fn setup(&mut self) -> Result<(), StoreError> {
        let path = self.path.clone();
        let err = |what: &str| fail(&path, what);
        self.conn
            .busy_timeout(std::time::Duration::from_secs(60))
            .map_err(err("cannot set the busy timeout"))?;
        self.conn
            .pragma_update(None, "journal_mode", "WAL")
            .map_err(err("cannot switch to WAL"))?;
        self.conn
            .pragma_update(None, "foreign_keys", "ON")
            .map_err(err("cannot enable foreign keys"))?;
        let known = MIGRATIONS.len() as i64;
        let path = self.path.clone();
        let query = |what: &str| fail(&path, what);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(query("cannot lock the store to migrate it"))?;
        tx.execute_batch(
            "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);",
        )
        .map_err(query("cannot create the schema table"))?;
        let found: i64 = tx
            .query_row(
                "SELECT value FROM meta WHERE key = 'schema_version'",
                [],
                |row| row.get::<_, String>(0),
            )
            .optional()
            .map_err(query("cannot read the schema version"))?
            .map_or(0, |v| v.parse().unwrap_or(i64::MAX));
        if found > known {
            return Err(StoreError::Newer { path, found, known });
        }
        for migration in &MIGRATIONS[found as usize..] {
            tx.execute_batch(migration)
                .map_err(query("cannot migrate the schema"))?;
        }
        tx.execute(
            "INSERT INTO meta (key, value) VALUES ('schema_version', ?1) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            params![known.to_string()],
        )
        .map_err(query("cannot write the schema version"))?;
        tx.commit().map_err(query("cannot commit the migration"))
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
        let path = self.path.clone();
        let query = |what: &str| fail(&path, what);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(query("cannot lock the store to record"))?;
        let existing: Option<(i64, String)> = tx
            .query_row(
                "SELECT seq, digest FROM runs WHERE run_id = ?1 AND attempt = ?2 AND leg = ?3",
                params![leg.run, leg.attempt, leg.leg],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()
            .map_err(query("cannot look the leg up"))?;
        if let Some((seq, old)) = &existing
            && *old == digest
        {
            return Ok(Recorded::Unchanged(*seq));
        }
        if let Some((seq, _)) = &existing {
            tx.execute("DELETE FROM runs WHERE seq = ?1", params![seq])
                .map_err(query("cannot replace the leg"))?;
        }
        tx.execute(
            "INSERT INTO runs (run_id, attempt, leg, commit_sha, branch, env, source, digest, recorded_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
            params![
                leg.run,
                leg.attempt,
                leg.leg,
                leg.commit,
                leg.branch,
                leg.env.to_string(),
                leg.source,
                digest
            ],
        )
        .map_err(query("cannot write the leg"))?;
        let seq = tx.last_insert_rowid();
        {
            let mut insert = tx
                .prepare_cached(
                    "INSERT INTO results (seq, test_id, file, try, outcome, duration_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )
                .map_err(query("cannot prepare the results"))?;
            for r in &results {
                insert
                    .execute(params![
                        seq,
                        r.id,
                        r.file,
                        r.attempt,
                        outcome_name(r.outcome),
                        r.duration_ms as i64
                    ])
                    .map_err(query("cannot write a result"))?;
            }
        }
        tx.commit().map_err(query("cannot commit the leg"))?;
        Ok(match existing {
            Some(_) => Recorded::Replaced(seq),
            None => Recorded::New(seq),
        })
    }
}

/// An error of the store at `path` while doing `what`.
fn fail(path: &str, what: &str) -> impl FnOnce(rusqlite::Error) -> StoreError + use<> {
    let (path, what) = (path.to_string(), what.to_string());
    move |source| StoreError::Query { path, what, source }
}

/// What a leg's content is: its stored fields and every result, hashed.
fn digest(leg: &Leg, results: &[TestResult]) -> String {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    let text = serde_json::json!([leg, results]).to_string();
    h.update(text.as_bytes());
    format!("{:032x}", h.digest128())
}
