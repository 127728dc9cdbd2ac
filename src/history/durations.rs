//! How long each test unit (a Python test file, a Go test package) takes, from the legs
//! recorded in one environment: what a shard split packs by and `gate shards` suggests from.

use super::{Param, Store, StoreError};
use std::collections::BTreeMap;

/// Recorded legs of an environment a unit's duration is read from: the latest ones.
pub(crate) const LEGS: i64 = 50;

/// The legs of environment `$1` recorded before store time `$2`, the latest `$3` of them; each
/// one's results with a unit (`file`), every attempt: the leg, the unit, the test, how it
/// ended and its milliseconds.
const UNIT_RESULTS: &str = "SELECT x.seq, x.file, x.test_id, x.outcome, x.duration_ms FROM results x \
     WHERE x.file IS NOT NULL AND x.seq IN \
       (SELECT seq FROM runs WHERE environment = $1 AND recorded_unix < $2 ORDER BY seq DESC LIMIT $3)";

/// Every environment a leg was recorded under, by name.
const ENVIRONMENTS: &str = "SELECT DISTINCT environment FROM runs ORDER BY environment";

impl Store {
    /// The environments legs were recorded under (`--leg`), sorted: what a reader that found
    /// nothing under the one it was given can name instead.
    pub(crate) fn environments(&mut self) -> Result<Vec<String>, StoreError> {
        Ok(self
            .query(ENVIRONMENTS, &[])?
            .iter()
            .filter_map(|r| r[0].text())
            .collect())
    }

    /// Each unit's (or, `by_test`, each test's) median milliseconds over the recorded legs of
    /// `environment` (before `before`, seconds since the epoch) in which it ran and passed: a
    /// leg's time for it is the sum of its attempts; a leg where it failed or erred is left
    /// out, a failure's time being no guide to a pass's. Reading only legs before a fixed time
    /// is what lets every leg of a run, started while others record, read the same figures.
    pub(crate) fn unit_durations(
        &mut self,
        environment: &str,
        before: i64,
        by_test: bool,
    ) -> Result<BTreeMap<String, u64>, StoreError> {
        let rows = self.query(
            UNIT_RESULTS,
            &[
                Param::Text(environment),
                Param::Int(before),
                Param::Int(LEGS),
            ],
        )?;
        // (unit, leg) → (milliseconds, whether every attempt passed or was skipped)
        let mut legs: BTreeMap<(String, i64), (u64, bool)> = BTreeMap::new();
        for r in &rows {
            let key = if by_test { r[2].text() } else { r[1].text() };
            let Some(key) = key else { continue };
            let entry = legs.entry((key, r[0].int())).or_insert((0, true));
            entry.0 += r[4].int().max(0) as u64;
            entry.1 &= matches!(r[3].string().as_str(), "passed" | "skipped");
        }
        let mut each: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        for ((unit, _), (ms, passed)) in legs {
            if passed {
                each.entry(unit).or_default().push(ms);
            }
        }
        Ok(each
            .into_iter()
            .map(|(unit, mut ms)| {
                ms.sort_unstable();
                (unit, ms[(ms.len() - 1) / 2])
            })
            .collect())
    }
}
