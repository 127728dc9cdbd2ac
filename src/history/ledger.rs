//! The green ledger's rows: test units' outcomes under their fingerprints, entered, read back
//! within the window and pruned — what `crate::ledger` decides reuse from.

use super::{Param, Store, StoreError, rollup, schema, window_secs};

/// A ledger entry to write: a test unit's outcome under its fingerprint.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub unit: String,
    pub fingerprint: String,
    /// `passed` (every case passed or was skipped) or `failed`.
    pub outcome: &'static str,
    pub commit: String,
    pub branch: Option<String>,
    pub mainline: bool,
    pub leg: String,
}

/// A stored ledger entry.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Entered {
    pub passed: bool,
    pub commit: String,
    pub branch: Option<String>,
    pub mainline: bool,
    pub leg: String,
    pub recorded_unix: i64,
}

impl Store {
    /// Enters test units' outcomes under their fingerprints, in one transaction.
    pub(crate) fn enter(&mut self, entries: &[Entry]) -> Result<(), StoreError> {
        let write = |tx: &mut dyn rollup::Tx| {
            for e in entries {
                tx.execute(
                    schema::ENTER,
                    &[
                        Param::Text(&e.unit),
                        Param::Text(&e.fingerprint),
                        Param::Text(e.outcome),
                        Param::Text(&e.commit),
                        e.branch.as_deref().map_or(Param::Null, Param::Text),
                        Param::Small(i32::from(e.mainline)),
                        Param::Text(&e.leg),
                    ],
                )?;
            }
            Ok(())
        };
        match self {
            Store::Sqlite(s) => s.write(write),
            Store::Postgres(s) => s.write(write),
        }
    }

    /// A unit's entries under `fingerprint` in the window, newest first.
    pub(crate) fn entries(
        &mut self,
        unit: &str,
        fingerprint: &str,
        window_days: u64,
    ) -> Result<Vec<Entered>, StoreError> {
        let from = self.now_unix()? - window_secs(window_days);
        let rows = self.query(
            schema::ENTRIES,
            &[
                Param::Text(unit),
                Param::Text(fingerprint),
                Param::Int(from),
            ],
        )?;
        Ok(rows
            .iter()
            .map(|r| Entered {
                passed: r[0].string() == "passed",
                commit: r[1].string(),
                branch: r[2].text(),
                mainline: r[3].int() != 0,
                leg: r[4].string(),
                recorded_unix: r[5].int(),
            })
            .collect())
    }

    /// Whether a test of `unit` has flaky evidence in the window.
    pub(crate) fn flaky_unit(&mut self, unit: &str, window_days: u64) -> Result<bool, StoreError> {
        let from = self.now_unix()? - window_secs(window_days);
        Ok(!self
            .query(schema::FLAKY_UNIT, &[Param::Text(unit), Param::Int(from)])?
            .is_empty())
    }

    /// Drops ledger entries older than the window and all but the newest of each (unit,
    /// fingerprint).
    /// Returns the entry counts before and after.
    pub(crate) fn prune(&mut self, window_days: u64) -> Result<(i64, i64), StoreError> {
        let prune = |tx: &mut dyn rollup::Tx| {
            let count = |tx: &mut dyn rollup::Tx| -> Result<i64, StoreError> {
                Ok(tx
                    .query("SELECT count(*) FROM ledger", &[])?
                    .first()
                    .map_or(0, |r| r[0].int()))
            };
            let before = count(tx)?;
            let from = tx.now_unix()? - window_secs(window_days);
            tx.execute(schema::PRUNE, &[Param::Int(from)])?;
            Ok((before, count(tx)?))
        };
        match self {
            Store::Sqlite(s) => s.write(prune),
            Store::Postgres(s) => s.write(prune),
        }
    }
}
