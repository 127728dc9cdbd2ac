//! The SQLite store: WAL, a busy timeout, and `BEGIN IMMEDIATE` for every write, so several
//! `gate` processes recording at once queue instead of failing or losing a leg.

use super::schema::{self, Dialect, SCHEMA_VERSION, migrations};
use super::{Change, Leg, Param, Recorded, StoreError, Summary, Value, fail, outcome_name};
use crate::run::events::TestResult;
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};
use std::path::Path;

pub(super) const DIALECT: Dialect = Dialect {
    serial: "INTEGER PRIMARY KEY AUTOINCREMENT",
    now: "TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
    unix_now: "CAST(strftime('%s', 'now') AS INTEGER)",
    unix_of_recorded_at: "CAST(strftime('%s', recorded_at) AS INTEGER)",
};

/// The shared statements' `$n` placeholders are SQLite's `?n`.
fn sql(text: &str) -> String {
    DIALECT.spell(text).replace('$', "?")
}

pub(crate) struct Store {
    conn: Connection,
    name: String,
}

type Err = rusqlite::Error;

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
        let err = |what: &str| fail::<Err>(&name, what);
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
        let tx = self.write(&name, "cannot lock the store to migrate it")?;
        tx.execute_batch(schema::META_TABLE)
            .map_err(err("cannot create the schema table"))?;
        let found: Option<String> = tx
            .query_row(schema::READ_VERSION, [], |row| row.get(0))
            .optional()
            .map_err(err("cannot read the schema version"))?;
        let current = found.as_deref() == Some(SCHEMA_VERSION.to_string().as_str());
        for migration in migrations(&name, &DIALECT, found)? {
            tx.execute_batch(&migration)
                .map_err(err("cannot migrate the schema"))?;
        }
        if !current {
            tx.execute(
                &sql(schema::WRITE_VERSION),
                params![SCHEMA_VERSION.to_string()],
            )
            .map_err(err("cannot write the schema version"))?;
        }
        tx.commit().map_err(err("cannot commit the migration"))
    }

    /// A write transaction, taken at once: writers queue on the busy timeout.
    fn write(&mut self, name: &str, what: &str) -> Result<Transaction<'_>, StoreError> {
        self.conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(fail::<Err>(name, what))
    }

    pub(super) fn query(
        &mut self,
        text: &str,
        params: &[Param<'_>],
    ) -> Result<Vec<Vec<Value>>, StoreError> {
        let err = |what: &str| fail::<Err>(&self.name, what);
        let mut q = self
            .conn
            .prepare_cached(&sql(text))
            .map_err(err("cannot read the store"))?;
        let values: Vec<rusqlite::types::Value> = params
            .iter()
            .map(|p| match p {
                Param::Int(v) => rusqlite::types::Value::Integer(*v),
                Param::Text(t) => rusqlite::types::Value::Text(t.to_string()),
            })
            .collect();
        let n = q.column_count();
        let rows = q
            .query_map(rusqlite::params_from_iter(values), |r| {
                (0..n)
                    .map(|i| {
                        Ok(match r.get_ref(i)? {
                            rusqlite::types::ValueRef::Integer(v) => Value::Int(v),
                            rusqlite::types::ValueRef::Text(t) => {
                                Value::Text(String::from_utf8_lossy(t).into_owned())
                            }
                            rusqlite::types::ValueRef::Real(v) => Value::Int(v as i64),
                            _ => Value::Null,
                        })
                    })
                    .collect()
            })
            .map_err(err("cannot read the store"))?;
        rows.collect::<Result<Vec<Vec<Value>>, _>>()
            .map_err(err("cannot read the store"))
    }

    pub(super) fn record(
        &mut self,
        leg: &Leg,
        results: &[TestResult],
        change: &Change,
        digest: &str,
    ) -> Result<Recorded, StoreError> {
        let name = self.name.clone();
        let err = |what: &str| fail::<Err>(&name, what);
        let tx = self.write(&name, "cannot lock the store to record")?;
        let existing: Option<(i64, String)> = tx
            .query_row(
                &sql(schema::FIND_RUN),
                params![leg.run, leg.attempt, leg.leg],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()
            .map_err(err("cannot look the leg up"))?;
        match &existing {
            Some((seq, old)) if old == digest => return Ok(Recorded::Unchanged(*seq)),
            Some((seq, _)) => {
                for table in schema::LEG_TABLES {
                    tx.execute(&format!("DELETE FROM {table} WHERE seq = ?1"), params![seq])
                        .map_err(err("cannot replace the leg"))?;
                }
            }
            None => {}
        }
        tx.execute(
            &sql(schema::INSERT_RUN),
            params![
                leg.run,
                leg.attempt,
                leg.leg,
                leg.commit,
                leg.branch,
                leg.env.to_string(),
                leg.source,
                digest,
                i64::from(leg.mainline),
                leg.base,
            ],
        )
        .map_err(err("cannot write the leg"))?;
        let seq = tx.last_insert_rowid();
        insert_rows(&tx, seq, results, change).map_err(err("cannot write the leg's rows"))?;
        tx.commit().map_err(err("cannot commit the leg"))?;
        Ok(match existing {
            Some(_) => Recorded::Replaced(seq),
            None => Recorded::New(seq),
        })
    }

    pub(super) fn write_rollup(&mut self, leg: &str, rows: &[Summary]) -> Result<(), StoreError> {
        let name = self.name.clone();
        let tx = self.write(&name, "cannot lock the store to roll up")?;
        upsert(&tx, leg, rows).map_err(fail::<Err>(&name, "cannot write the rollup"))?;
        tx.commit()
            .map_err(fail::<Err>(&name, "cannot commit the rollup"))
    }

    pub(super) fn replace_rollup(
        &mut self,
        legs: &[(String, Vec<Summary>)],
    ) -> Result<(), StoreError> {
        let name = self.name.clone();
        let err = |what: &str| fail::<Err>(&name, what);
        let tx = self.write(&name, "cannot lock the store to roll up")?;
        tx.execute("DELETE FROM rollup", [])
            .map_err(err("cannot clear the rollup"))?;
        for (leg, rows) in legs {
            upsert(&tx, leg, rows).map_err(err("cannot write the rollup"))?;
        }
        tx.commit().map_err(err("cannot commit the rollup"))
    }
}

/// A leg's results, changed paths and selection, each through one prepared statement.
fn insert_rows(
    tx: &Transaction<'_>,
    seq: i64,
    results: &[TestResult],
    change: &Change,
) -> Result<(), Err> {
    let mut insert = tx.prepare_cached(
        "INSERT INTO results (seq, test_id, file, try, outcome, duration_ms) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for r in results {
        insert.execute(params![
            seq,
            r.id,
            r.file,
            r.attempt,
            outcome_name(r.outcome),
            r.duration_ms as i64
        ])?;
    }
    let mut paths =
        tx.prepare_cached("INSERT INTO changes (seq, path, verdict) VALUES (?1, ?2, ?3)")?;
    for (path, verdict) in &change.paths {
        paths.execute(params![seq, path, verdict])?;
    }
    let mut selected =
        tx.prepare_cached("INSERT INTO selected (seq, unit, cause) VALUES (?1, ?2, ?3)")?;
    for (unit, cause) in &change.selected {
        selected.execute(params![seq, unit, cause])?;
    }
    Ok(())
}

fn upsert(tx: &Transaction<'_>, leg: &str, rows: &[Summary]) -> Result<(), Err> {
    let mut q = tx.prepare_cached(&sql(schema::UPSERT_ROLLUP))?;
    for s in rows {
        let main = s.failing_on_main.as_ref();
        q.execute(params![
            s.test,
            leg,
            s.file,
            s.through_seq,
            s.runs,
            s.passed,
            s.failed,
            s.errors,
            s.skipped,
            s.flaky.len() as i64,
            main.map(|f| f.since.as_str()),
            main.map_or(0, |f| f.runs),
            s.median_ms,
            s.p90_ms,
        ])?;
    }
    Ok(())
}
