//! What an observation export reads of the store (a recorded leg's results) and what an import
//! writes to it (the export, kept whole by its digest); what a shadow compare reads of a
//! commit's recorded failures; `gate audit`'s tallies, kept for `gate evaluate`'s graph
//! completeness, and its traces of a committed tree, read back by an export.

use super::schema;
use super::{Param, Store, StoreError, rollup};
use crate::run::events::{TestOutcome, TestResult};
use std::collections::{BTreeMap, BTreeSet};

/// An imported export to keep.
pub(crate) struct Imported<'a> {
    pub digest: &'a str,
    pub repository: &'a str,
    pub commit: &'a str,
    pub run: &'a str,
    pub body: &'a str,
}

impl Store {
    /// Every attempt of every test leg `seq` recorded.
    pub(crate) fn results_of_leg(&mut self, seq: i64) -> Result<Vec<TestResult>, StoreError> {
        let rows = self.query(schema::RESULTS_OF_LEG, &[Param::Int(seq)])?;
        Ok(rows
            .iter()
            .map(|r| TestResult {
                id: r[0].string(),
                file: r[1].text(),
                attempt: u32::try_from(r[2].int()).unwrap_or(1),
                outcome: match r[3].string().as_str() {
                    "passed" => TestOutcome::Passed,
                    "failed" => TestOutcome::Failed,
                    "skipped" => TestOutcome::Skipped,
                    // `error`, and anything else a store holds: not a pass.
                    _ => TestOutcome::Error,
                },
                duration_ms: u64::try_from(r[4].int()).unwrap_or(0),
            })
            .collect())
    }

    /// The tests of `unit` that failed in any run recorded at `commit`.
    pub(crate) fn failed_at(
        &mut self,
        commit: &str,
        unit: &str,
    ) -> Result<BTreeSet<String>, StoreError> {
        let rows = self.query(schema::FAILED_AT, &[Param::Text(commit), Param::Text(unit)])?;
        Ok(rows.iter().map(|r| r[0].string()).collect())
    }

    /// Keeps an audit's tallies: (observed, covered, named_full, missed).
    pub(crate) fn audited(
        &mut self,
        tree: &str,
        (observed, covered, named_full, missed): (usize, usize, usize, usize),
    ) -> Result<(), StoreError> {
        let n = |v: usize| Param::Int(i64::try_from(v).unwrap_or(i64::MAX));
        let write = |tx: &mut dyn rollup::Tx| {
            tx.execute(
                schema::AUDIT,
                &[
                    Param::Text(tree),
                    n(observed),
                    n(covered),
                    n(named_full),
                    n(missed),
                ],
            )
        };
        match self {
            Store::Sqlite(s) => s.write(write),
            Store::Postgres(s) => s.write(write),
        }
    }

    /// Graph completeness over the audits kept in the last `days` days: (covered + named_full)
    /// / observed, summed; none with no audit (or nothing observed).
    pub(crate) fn completeness(&mut self, days: u64) -> Result<Option<f64>, StoreError> {
        let from = self.now_unix()? - super::window_secs(days);
        let rows = self.query(schema::AUDITED, &[Param::Int(from)])?;
        Ok(rows.first().and_then(|r| {
            (r[0].int() > 0 && r[1].int() > 0).then(|| r[2].int() as f64 / r[1].int() as f64)
        }))
    }

    /// Keeps what each unit's traced run opened in the committed tree `tree`.
    pub(crate) fn traced(
        &mut self,
        tree: &str,
        traces: &BTreeMap<String, BTreeSet<String>>,
    ) -> Result<(), StoreError> {
        let write = |tx: &mut dyn rollup::Tx| {
            for (unit, files) in traces {
                let files = serde_json::to_string(files).expect("paths serialize");
                tx.execute(
                    schema::TRACE,
                    &[Param::Text(tree), Param::Text(unit), Param::Text(&files)],
                )?;
            }
            Ok(())
        };
        match self {
            Store::Sqlite(s) => s.write(write),
            Store::Postgres(s) => s.write(write),
        }
    }

    /// The traces kept for `tree`, unit → the files its run opened; a row that is not a list of
    /// paths is not a trace (counted in the second value, never read as "opened nothing").
    pub(crate) fn traces_of(
        &mut self,
        tree: &str,
    ) -> Result<(BTreeMap<String, BTreeSet<String>>, usize), StoreError> {
        let rows = self.query(schema::TRACES_OF, &[Param::Text(tree)])?;
        let mut traces = BTreeMap::new();
        let mut unreadable = 0;
        for r in &rows {
            match serde_json::from_str::<BTreeSet<String>>(&r[1].string()) {
                Ok(files) => {
                    traces.insert(r[0].string(), files);
                }
                Err(_) => unreadable += 1,
            }
        }
        Ok((traces, unreadable))
    }

    /// Keeps an imported export under its digest; false when the store held it already.
    pub(crate) fn keep_observations(&mut self, o: &Imported<'_>) -> Result<bool, StoreError> {
        let keep = |tx: &mut dyn rollup::Tx| {
            let before = tx.query(schema::OBSERVATIONS_KEPT, &[Param::Text(o.digest)])?;
            if !before.is_empty() {
                return Ok(false);
            }
            tx.execute(
                schema::KEEP_OBSERVATIONS,
                &[
                    Param::Text(o.digest),
                    Param::Text(o.repository),
                    Param::Text(o.commit),
                    Param::Text(o.run),
                    Param::Text(o.body),
                ],
            )?;
            Ok(true)
        };
        match self {
            Store::Sqlite(s) => s.write(keep),
            Store::Postgres(s) => s.write(keep),
        }
    }
}
