//! The SQLite store: WAL, a busy timeout, and `BEGIN IMMEDIATE` for every write, so several
//! `gate` processes recording at once queue instead of failing or losing a leg.

use super::{
    Dialect, Leg, META_TABLE, READ_VERSION, RUNS_OF, Recorded, Row, SCHEMA_VERSION, StoreError,
    WRITE_VERSION, fail, migrations, outcome_name,
};
use crate::run::events::TestResult;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use std::path::Path;

const DIALECT: Dialect = Dialect {
    serial: "INTEGER PRIMARY KEY AUTOINCREMENT",
    now: "TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
};

pub(crate) struct Store {
    conn: Connection,
    name: String,
}

impl Store {
    pub(crate) fn open(path: &Path) -> Result<Store, StoreError> {
        let name = path.display().to_string();
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            // A folder that cannot be made is the open's error to report, with the path.
            let _ = std::fs::create_dir_all(parent);
        }
        let conn = Connection::open(path).map_err(|source| StoreError::Open {
            store: name.clone(),
            source: Box::new(source),
        })?;
        let mut store = Store { conn, name };
        store.setup()?;
        Ok(store)
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    fn setup(&mut self) -> Result<(), StoreError> {
        let name = self.name.clone();
        let err = |what: &str| fail::<rusqlite::Error>(&name, what);
        self.conn
            .busy_timeout(std::time::Duration::from_secs(60))
            .map_err(err("cannot set the busy timeout"))?;
        self.conn
            .pragma_update(None, "journal_mode", "WAL")
            .map_err(err("cannot switch to WAL"))?;
        // WAL keeps the store consistent on a crash at NORMAL; only the last commit may be
        // lost on power failure, and a leg recorded again is stored again.
        self.conn
            .pragma_update(None, "synchronous", "NORMAL")
            .map_err(err("cannot set the sync mode"))?;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err("cannot lock the store to migrate it"))?;
        tx.execute_batch(META_TABLE)
            .map_err(err("cannot create the schema table"))?;
        let found: Option<String> = tx
            .query_row(READ_VERSION, [], |row| row.get(0))
            .optional()
            .map_err(err("cannot read the schema version"))?;
        for migration in migrations(&name, &DIALECT, found)? {
            tx.execute_batch(&migration)
                .map_err(err("cannot migrate the schema"))?;
        }
        tx.execute(
            &WRITE_VERSION.replace('$', "?"),
            params![SCHEMA_VERSION.to_string()],
        )
        .map_err(err("cannot write the schema version"))?;
        tx.commit().map_err(err("cannot commit the migration"))
    }

    pub(super) fn record(
        &mut self,
        leg: &Leg,
        results: &[TestResult],
        digest: &str,
    ) -> Result<Recorded, StoreError> {
        let name = self.name.clone();
        let err = |what: &str| fail::<rusqlite::Error>(&name, what);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err("cannot lock the store to record"))?;
        let existing: Option<(i64, String)> = tx
            .query_row(
                "SELECT seq, digest FROM runs WHERE run_id = ?1 AND attempt = ?2 AND leg = ?3",
                params![leg.run, leg.attempt, leg.leg],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()
            .map_err(err("cannot look the leg up"))?;
        match &existing {
            Some((seq, old)) if old == digest => return Ok(Recorded::Unchanged(*seq)),
            Some((seq, _)) => {
                // No foreign key: a per-row check would cost more than the leg's insert; the
                // results go with their leg here, in the same transaction.
                tx.execute("DELETE FROM results WHERE seq = ?1", params![seq])
                    .map_err(err("cannot replace the leg"))?;
                tx.execute("DELETE FROM runs WHERE seq = ?1", params![seq])
                    .map_err(err("cannot replace the leg"))?;
            }
            None => {}
        }
        tx.execute(
            "INSERT INTO runs (run_id, attempt, leg, commit_sha, branch, env, source, digest) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
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
        .map_err(err("cannot write the leg"))?;
        let seq = tx.last_insert_rowid();
        {
            let mut insert = tx
                .prepare_cached(
                    "INSERT INTO results (seq, test_id, file, try, outcome, duration_ms) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )
                .map_err(err("cannot prepare the results"))?;
            for r in results {
                insert
                    .execute(params![
                        seq,
                        r.id,
                        r.file,
                        r.attempt,
                        outcome_name(r.outcome),
                        r.duration_ms as i64
                    ])
                    .map_err(err("cannot write a result"))?;
            }
        }
        tx.commit().map_err(err("cannot commit the leg"))?;
        Ok(match existing {
            Some(_) => Recorded::Replaced(seq),
            None => Recorded::New(seq),
        })
    }

    pub(super) fn runs_of(&mut self, id: &str, limit: u32) -> Result<Vec<Row>, StoreError> {
        let err = |what: &str| fail::<rusqlite::Error>(&self.name, what);
        // The shared query's `$n` placeholders are SQLite's `?n`.
        let sql = RUNS_OF.replace('$', "?");
        let mut q = self
            .conn
            .prepare(&sql)
            .map_err(err("cannot read the test's runs"))?;
        let rows = q
            .query_map(params![id, limit], |r| {
                Ok(Row {
                    seq: r.get(0)?,
                    run: r.get(1)?,
                    attempt: r.get(2)?,
                    leg: r.get(3)?,
                    commit: r.get(4)?,
                    branch: r.get(5)?,
                    outcome: r.get(6)?,
                    duration_ms: r.get(7)?,
                })
            })
            .map_err(err("cannot read the test's runs"))?;
        rows.collect::<Result<Vec<Row>, _>>()
            .map_err(err("cannot read the test's runs"))
    }
}
