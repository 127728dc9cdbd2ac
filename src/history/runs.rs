//! What was recorded, read back: a test's runs and rollup, a run's legs and what each knew of
//! its change, a leg's failures triaged, and what fails on the default branch or with a path.

use super::evidence::{self, Past, Rollup};
use super::triage::{self, Change, LegInfo};
use super::{Param, Store, StoreError, Value, rollup, schema, window_secs};

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
    pub mainline: bool,
    /// Every attempt within the run, in order (a rerun's failure then pass).
    pub attempts: Vec<Attempt>,
}

#[derive(Debug, serde::Serialize)]
pub(crate) struct Attempt {
    pub outcome: String,
    pub duration_ms: i64,
}

/// A test failing on the default branch, in one environment.
#[derive(Debug, Clone)]
pub(crate) struct FailingTest {
    pub file: Option<String>,
    /// The environment (a leg's name without its shard).
    pub leg: String,
    pub since: String,
    pub runs: u32,
}

impl Store {
    /// The most recent `limit` recorded runs of test `id`, newest first, with every attempt.
    pub(crate) fn runs_of(&mut self, id: &str, limit: u32) -> Result<Vec<TestRun>, StoreError> {
        let rows = self.query(
            schema::RUNS_OF,
            &[Param::Text(id), Param::Int(i64::from(limit))],
        )?;
        let mut out: Vec<TestRun> = Vec::new();
        for row in rows {
            let attempt = Attempt {
                outcome: row[7].string(),
                duration_ms: row[8].int(),
            };
            match out.last_mut() {
                Some(last) if last.seq == row[0].int() => last.attempts.push(attempt),
                _ => out.push(TestRun {
                    seq: row[0].int(),
                    run: row[1].string(),
                    attempt: row[2].int() as u32,
                    leg: row[3].string(),
                    commit: row[4].string(),
                    branch: row[5].text(),
                    mainline: row[6].int() != 0,
                    attempts: vec![attempt],
                }),
            }
        }
        Ok(out)
    }

    /// A test's rollup in each environment it was recorded in.
    pub(crate) fn rollup_of(&mut self, id: &str) -> Result<Vec<(String, Rollup)>, StoreError> {
        let rows = self.query(schema::ROLLUP_OF, &[Param::Text(id)])?;
        Ok(rows
            .iter()
            .map(|r| (r[16].string(), rollup::state(r)))
            .collect())
    }

    /// The latest recorded run's id.
    pub(crate) fn latest_run(&mut self) -> Result<Option<String>, StoreError> {
        Ok(self
            .query(schema::LATEST_RUN, &[])?
            .first()
            .map(|r| r[0].string()))
    }

    /// A run's legs (the latest attempt of each), by leg name.
    pub(crate) fn legs_of_run(&mut self, run: &str) -> Result<Vec<LegInfo>, StoreError> {
        let rows = self.query(schema::LEGS_OF_RUN, &[Param::Text(run)])?;
        Ok(rows
            .iter()
            .map(|r| LegInfo {
                seq: r[0].int(),
                run: r[1].string(),
                attempt: r[2].int() as u32,
                leg: r[3].string(),
                commit: r[4].string(),
                branch: r[5].text(),
                mainline: r[6].int() != 0,
                base: r[7].text(),
                recorded_unix: r[8].int(),
                results: r[9].int(),
                inputs: r[10].text(),
                environment: r[11].string(),
                shard: r[12].text(),
            })
            .collect())
    }

    /// What leg `seq` recorded of its change.
    pub(crate) fn change_of(&mut self, seq: i64) -> Result<Change, StoreError> {
        let pairs = |rows: Vec<Vec<Value>>| {
            rows.iter()
                .map(|r| (r[0].string(), r[1].string()))
                .collect()
        };
        Ok(Change {
            paths: pairs(self.query(schema::CHANGES_OF, &[Param::Int(seq)])?),
            selected: pairs(self.query(schema::SELECTED_OF, &[Param::Int(seq)])?),
        })
    }

    /// Every failing test of `leg`, each with one verdict from what was recorded before it in
    /// its environment, by legs of any shard.
    pub(crate) fn triage(
        &mut self,
        leg: &LegInfo,
        rules: &triage::Rules<'_>,
    ) -> Result<Vec<triage::Triaged>, StoreError> {
        let from = leg.recorded_unix - window_secs(rules.window_days);
        let rows = past(self.query(
            &schema::past_of_failing(),
            &[
                Param::Text(&leg.environment),
                Param::Int(from),
                Param::Int(leg.seq),
                Param::Int(leg.seq),
            ],
        )?);
        let change = self.change_of(leg.seq)?;
        Ok(triage::triage_leg(leg, &rows, &change, rules))
    }

    /// The tests failing on the default branch now, in any environment, by the rollup.
    pub(crate) fn failing_on_main(
        &mut self,
        window_days: u64,
    ) -> Result<Vec<FailingTest>, StoreError> {
        let from = self.now_unix()? - window_secs(window_days);
        let rows = self.query(schema::FAILING_ON_MAIN, &[Param::Int(from)])?;
        Ok(rows
            .iter()
            .map(|r| FailingTest {
                file: r[1].text(),
                leg: r[2].string(),
                since: r[3].string(),
                runs: r[4].int() as u32,
            })
            .collect())
    }

    /// The test units that failed, in the window, in runs whose change touched `path`, each
    /// with one such run.
    pub(crate) fn co_failed(
        &mut self,
        path: &str,
        window_days: u64,
    ) -> Result<Vec<(String, String)>, StoreError> {
        let from = self.now_unix()? - window_secs(window_days);
        let rows = self.query(schema::CO_FAILED, &[Param::Int(from), Param::Text(path)])?;
        let mut out: Vec<(String, String)> = Vec::new();
        for r in rows {
            let (unit, run) = (r[0].string(), r[1].string());
            if out.last().is_none_or(|(u, _)| *u != unit) {
                out.push((unit, run));
            }
        }
        Ok(out)
    }
}

/// Evidence rows read back in `Past`'s column order.
pub(super) fn past(rows: Vec<Vec<Value>>) -> Vec<Past> {
    rows.iter()
        .map(|r| Past {
            test: r[0].string(),
            file: r[1].text(),
            seq: r[2].int(),
            run: r[3].string(),
            commit: r[4].string(),
            mainline: r[5].int() != 0,
            attempt: r[6].int() as u32,
            outcome: r[7].string(),
            duration_ms: r[8].int(),
            recorded_unix: r[9].int(),
            flake: evidence::Flake::of_code(r[10].int()),
            inputs: r[11].text(),
            leg: r[12].string(),
            fingerprint: r[13].text(),
        })
        .collect()
}
