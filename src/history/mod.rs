//! The history store: every recorded leg of every run, with its per-test results — SQLite by
//! default (`.git/gate/history.sqlite`, or `--db sqlite:PATH`), PostgreSQL for a CI fleet
//! (`--db postgres://…`, or `GATE_DB`). One schema and one behaviour on both. Later parts —
//! rollup, triage, the green ledger, shadow audits — read it; its schema is versioned and
//! migrated on first use, and a store whose schema is newer than this gate is never written.

mod decisions;
mod durations;
pub(crate) mod error;
pub(crate) mod evidence;
mod ledger;
mod location;
pub(crate) mod observations;
mod open;
mod outside;
mod postgres;
pub(crate) mod provenance;
mod record;
pub(crate) mod recorder;
mod rollup;
mod runs;
mod schema;
pub(crate) mod signals;
mod sql;
mod sqlite;
#[cfg(test)]
mod tests;
pub(crate) mod traced;
pub(crate) mod triage;

use error::{Source, fail};
use record::outcome_name;
use runs::past;
use sql::{CHUNK, Param, Value, execute_in, insert_pairs, keyed};

pub(crate) use decisions::ShadowRun;
pub(crate) use error::StoreError;
pub(crate) use ledger::Entry;
pub(crate) use location::{Location, location};
pub(crate) use open::{RecordedRun, open_for, open_store, recorded_run, run_or_latest};
pub(crate) use outside::OutsideKept;
pub(crate) use record::{Leg, Recorded};
pub(crate) use triage::Change;

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

    fn query(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Vec<Value>>, StoreError> {
        match self {
            Store::Sqlite(s) => s.query(sql, params),
            Store::Postgres(s) => s.query(sql, params),
        }
    }

    /// The rows of `sql`, whose `{keys}` stands for a list of `keys`: one query per `CHUNK` of
    /// them, never one per key.
    fn query_in(&mut self, sql: &str, keys: &[&str]) -> Result<Vec<Vec<Value>>, StoreError> {
        let mut rows = Vec::new();
        for chunk in keys.chunks(CHUNK) {
            let params: Vec<Param<'_>> = chunk.iter().map(|k| Param::Text(k)).collect();
            rows.extend(self.query(&keyed(sql, chunk.len()), &params)?);
        }
        Ok(rows)
    }

    /// The store's clock, in seconds since the epoch.
    fn now_unix(&mut self) -> Result<i64, StoreError> {
        Ok(self
            .query("SELECT {unix_now}", &[])?
            .first()
            .map_or(0, |r| r[0].int()))
    }

    /// The store as the user named it, for messages (a URL without its password).
    pub(crate) fn name(&self) -> String {
        match self {
            Store::Sqlite(s) => s.name().to_string(),
            Store::Postgres(s) => s.name().to_string(),
        }
    }
}

pub(super) fn window_secs(days: u64) -> i64 {
    (days as i64).saturating_mul(86_400)
}
