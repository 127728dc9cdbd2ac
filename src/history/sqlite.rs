//! The SQLite store: WAL, a busy timeout, and `BEGIN IMMEDIATE` for every write, so several
//! `gate` processes recording at once queue instead of failing or losing a leg.

use super::evidence::{Flake, Rollup};
use super::rollup::Tx;
use super::schema::{self, Dialect, SCHEMA_VERSION, migrations};
use super::{Change, Leg, Param, StoreError, Value, fail, outcome_name};
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
        // A store already at this schema needs no lock: a read (the ledger's look-up before
        // every run) must not queue behind another process's write to learn that.
        let seen: Option<String> = self
            .conn
            .query_row(schema::READ_VERSION, [], |row| row.get(0))
            .optional()
            .unwrap_or(None);
        if seen.as_deref() == Some(SCHEMA_VERSION.to_string().as_str()) {
            return Ok(());
        }
        let tx = self.write_tx(&name, "cannot lock the store to migrate it")?;
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
    fn write_tx(&mut self, name: &str, what: &str) -> Result<Transaction<'_>, StoreError> {
        self.conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(fail::<Err>(name, what))
    }

    pub(super) fn query(
        &mut self,
        text: &str,
        params: &[Param<'_>],
    ) -> Result<Vec<Vec<Value>>, StoreError> {
        query(&self.conn, &self.name, text, params)
    }

    /// Runs `f` in one write transaction, committed when it succeeds.
    pub(super) fn write<T>(
        &mut self,
        f: impl FnOnce(&mut dyn Tx) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let name = self.name.clone();
        let tx = self.write_tx(&name, "cannot lock the store to write it")?;
        let mut w = Writer { tx, name };
        let out = f(&mut w)?;
        w.tx.commit()
            .map_err(fail::<Err>(&w.name, "cannot commit"))?;
        Ok(out)
    }
}

/// A read in the shared form, on a connection or inside a transaction.
fn query(
    conn: &Connection,
    name: &str,
    text: &str,
    params: &[Param<'_>],
) -> Result<Vec<Vec<Value>>, StoreError> {
    let err = |what: &str| fail::<Err>(name, what);
    let mut q = conn
        .prepare_cached(&sql(text))
        .map_err(err("cannot read the store"))?;
    let values: Vec<rusqlite::types::Value> = params.iter().map(value).collect();
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

fn value(p: &Param<'_>) -> rusqlite::types::Value {
    match p {
        Param::Int(v) => rusqlite::types::Value::Integer(*v),
        Param::Small(v) => rusqlite::types::Value::Integer(i64::from(*v)),
        Param::Text(t) => rusqlite::types::Value::Text(t.to_string()),
        Param::Null => rusqlite::types::Value::Null,
    }
}

/// A write transaction, as the shared record and rollup code uses it.
struct Writer<'c> {
    tx: Transaction<'c>,
    name: String,
}

impl Tx for Writer<'_> {
    fn query(&mut self, text: &str, params: &[Param<'_>]) -> Result<Vec<Vec<Value>>, StoreError> {
        query(&self.tx, &self.name, text, params)
    }

    fn execute(&mut self, text: &str, params: &[Param<'_>]) -> Result<(), StoreError> {
        let values: Vec<rusqlite::types::Value> = params.iter().map(value).collect();
        self.tx
            .execute(&sql(text), rusqlite::params_from_iter(values))
            .map(|_| ())
            .map_err(fail::<Err>(&self.name, "cannot write the store"))
    }

    fn insert_run(&mut self, leg: &Leg, digest: &str) -> Result<i64, StoreError> {
        self.tx
            .execute(
                &sql(schema::INSERT_RUN),
                params![
                    leg.run,
                    leg.attempt,
                    leg.name(),
                    leg.commit,
                    leg.branch,
                    leg.env.to_string(),
                    leg.source,
                    digest,
                    i64::from(leg.mainline),
                    leg.base,
                    leg.inputs,
                    leg.leg,
                    leg.shard.map(|s| s.to_string()),
                ],
            )
            .map_err(fail::<Err>(&self.name, "cannot write the leg"))?;
        Ok(self.tx.last_insert_rowid())
    }

    fn insert_rows(
        &mut self,
        seq: i64,
        results: &[TestResult],
        evidence: (&[Flake], &[Option<&str>]),
        change: &Change,
    ) -> Result<(), StoreError> {
        insert_rows(&self.tx, seq, results, evidence, change)
            .map_err(fail::<Err>(&self.name, "cannot write the leg's rows"))
    }

    fn upsert_rollup(&mut self, leg: &str, rows: &[Rollup]) -> Result<(), StoreError> {
        upsert(&self.tx, leg, rows).map_err(fail::<Err>(&self.name, "cannot write the rollup"))
    }
}

/// A leg's results, changed paths and selection, each through one prepared statement.
fn insert_rows(
    tx: &Transaction<'_>,
    seq: i64,
    results: &[TestResult],
    (flakes, fingerprints): (&[Flake], &[Option<&str>]),
    change: &Change,
) -> Result<(), Err> {
    let mut insert = tx.prepare_cached(
        "INSERT INTO results (seq, test_id, file, try, outcome, duration_ms, flake, fingerprint) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?;
    for ((r, flake), fingerprint) in results.iter().zip(flakes).zip(fingerprints) {
        insert.execute(params![
            seq,
            r.id,
            r.file,
            r.attempt,
            outcome_name(r.outcome),
            r.duration_ms as i64,
            flake.code(),
            fingerprint
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

fn upsert(tx: &Transaction<'_>, leg: &str, rows: &[Rollup]) -> Result<(), Err> {
    let mut q = tx.prepare_cached(&sql(schema::UPSERT_ROLLUP))?;
    for s in rows {
        let main = s.failing_on_main.as_ref();
        q.execute(params![
            s.test,
            leg,
            s.file,
            s.through_seq,
            s.last_unix,
            s.window_from,
            s.runs,
            s.passed,
            s.failed,
            s.errors,
            s.skipped,
            s.flaky,
            s.fail_then_pass,
            main.map(|f| f.since.as_str()),
            main.map_or(0, |f| f.since_seq),
            main.map_or(0, |f| f.runs),
            s.durations.text(),
            s.median_ms(),
            s.p90_ms(),
        ])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Opening a store at this schema takes no lock: it opens while another connection holds
    /// the write lock (a store that migrated on every open would wait out the busy timeout).
    #[test]
    fn a_current_store_opens_while_another_process_writes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        drop(Store::open(&path).unwrap());
        let mut writer = Connection::open(&path).unwrap();
        let held = writer
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .unwrap();
        let (done, opened) = std::sync::mpsc::channel();
        let at = path.clone();
        std::thread::spawn(move || done.send(Store::open(&at).is_ok()));
        let answer = opened.recv_timeout(std::time::Duration::from_secs(10));
        drop(held);
        assert_eq!(answer, Ok(true), "the open waited for the writer");
    }

    /// A store gate wrote at schema version 1 is migrated on open: its legs keep their
    /// results, get their store time from `recorded_at`, and their name as their environment.
    #[test]
    fn a_version_1_store_is_migrated() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        {
            let c = Connection::open(&path).unwrap();
            c.execute_batch(schema::META_TABLE).unwrap();
            c.execute_batch(&DIALECT.spell(schema::MIGRATIONS[0]))
                .unwrap();
            c.execute_batch(
                "INSERT INTO meta VALUES ('schema_version', '1');
                 INSERT INTO runs (run_id, attempt, leg, commit_sha, env, source, digest, recorded_at)
                   VALUES ('r', 1, 'py', 'abc', '{}', 'junit', 'd', '2026-01-02T03:04:05.000Z');
                 INSERT INTO results VALUES (1, 't.py::t', 't.py', 1, 'failed', 5);",
            )
            .unwrap();
        }
        let mut store = Store::open(&path).unwrap();
        let rows = store
            .query(
                "SELECT r.recorded_unix, x.flake, (SELECT value FROM meta), r.environment, r.shard FROM runs r JOIN results x ON x.seq = r.seq",
                &[],
            )
            .unwrap();
        assert_eq!(
            rows,
            [[
                Value::Int(1_767_323_045),
                Value::Int(0),
                Value::Text(SCHEMA_VERSION.to_string()),
                Value::Text("py".into()),
                Value::Null
            ]]
        );
    }
}
