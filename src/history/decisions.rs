//! Frozen decisions, written once and read back by id or by commit, and the shadow compares
//! recorded against them for `gate evaluate`.

use super::{Param, Store, StoreError, rollup, schema, window_secs};

/// A shadow compare to record.
pub(crate) struct ShadowRun<'a> {
    pub decision: &'a str,
    pub commit: &'a str,
    pub base: Option<&'a str>,
    /// The judgements as JSON (the proof loop's `Judged`, kept as the text it wrote) and each
    /// one's class (`caught`, `missed`, `flaky`), which the store counts.
    pub judged: &'a str,
    pub classes: &'a [&'a str],
    /// Every unit that ran → its recorded milliseconds (the last attempt of each test).
    pub durations: &'a std::collections::BTreeMap<String, u64>,
    /// gate's own time before the runner started: analysis, selection, the decision frozen.
    pub select_ms: u64,
}

/// A recorded shadow compare, as `gate evaluate` reads it: JSON texts, parsed by the reader.
pub(crate) struct StoredShadow {
    pub decision: String,
    pub commit: String,
    pub judged: String,
    pub durations: String,
    pub body: String,
    /// None for a compare recorded before the store kept it.
    pub select_ms: Option<i64>,
    /// The latest leg recorded at the commit: how long its recording took.
    pub record_ms: Option<i64>,
}

impl Store {
    /// Freezes a decision (`frozen::Frozen`): written once, never rewritten.
    pub(crate) fn freeze(
        &mut self,
        id: &str,
        commit: Option<&str>,
        base: Option<&str>,
        body: &str,
    ) -> Result<(), StoreError> {
        let write = |tx: &mut dyn rollup::Tx| {
            tx.execute(
                schema::FREEZE,
                &[
                    Param::Text(id),
                    commit.map_or(Param::Null, Param::Text),
                    base.map_or(Param::Null, Param::Text),
                    Param::Text(body),
                ],
            )
        };
        match self {
            Store::Sqlite(s) => s.write(write),
            Store::Postgres(s) => s.write(write),
        }
    }

    /// A frozen decision's JSON, by id.
    pub(crate) fn decision(&mut self, id: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .query(schema::DECISION, &[Param::Text(id)])?
            .first()
            .map(|r| r[0].string()))
    }

    /// The decision frozen last for `commit` against `base`: its id and JSON.
    pub(crate) fn decision_for(
        &mut self,
        commit: &str,
        base: Option<&str>,
    ) -> Result<Option<(String, String)>, StoreError> {
        Ok(self
            .query(
                schema::DECISION_FOR,
                &[Param::Text(commit), base.map_or(Param::Null, Param::Text)],
            )?
            .first()
            .map(|r| (r[0].string(), r[1].string())))
    }

    /// Every decision frozen for `commit` against `base`, the first frozen first: their ids
    /// and JSON.
    pub(crate) fn decisions_for(
        &mut self,
        commit: &str,
        base: Option<&str>,
    ) -> Result<Vec<(String, String)>, StoreError> {
        Ok(self
            .query(
                schema::DECISIONS_FOR,
                &[Param::Text(commit), base.map_or(Param::Null, Param::Text)],
            )?
            .iter()
            .map(|r| (r[0].string(), r[1].string()))
            .collect())
    }

    /// Records a shadow compare: the decision judged, the counts, each failing unit's class.
    pub(crate) fn shadow(&mut self, s: &ShadowRun<'_>) -> Result<(), StoreError> {
        let count = |class| s.classes.iter().filter(|c| **c == class).count() as i32;
        let durations = serde_json::to_string(s.durations).expect("durations serialize");
        let write = |tx: &mut dyn rollup::Tx| {
            tx.execute(
                schema::SHADOW,
                &[
                    Param::Text(s.decision),
                    Param::Text(s.commit),
                    s.base.map_or(Param::Null, Param::Text),
                    Param::Small(s.classes.len() as i32),
                    Param::Small(count("caught")),
                    Param::Small(count("missed")),
                    Param::Small(count("flaky")),
                    Param::Text(s.judged),
                    Param::Text(&durations),
                    Param::Int(i64::try_from(s.select_ms).unwrap_or(i64::MAX)),
                ],
            )
        };
        match self {
            Store::Sqlite(x) => x.write(write),
            Store::Postgres(x) => x.write(write),
        }
    }

    /// The shadow compares recorded in the last `days` days, oldest first.
    pub(crate) fn shadows(&mut self, days: u64) -> Result<Vec<StoredShadow>, StoreError> {
        let from = self.now_unix()? - window_secs(days);
        Ok(self
            .query(schema::SHADOWS, &[Param::Int(from)])?
            .iter()
            .map(|r| StoredShadow {
                decision: r[0].string(),
                commit: r[1].string(),
                judged: r[2].string(),
                durations: r[3].string(),
                body: r[4].string(),
                select_ms: r[5].text().map(|_| r[5].int()),
                record_ms: r[6].text().map(|_| r[6].int()),
            })
            .collect())
    }
}
