//! The history store: every recorded leg of every run, with its per-test results — SQLite by
//! default (`.git/gate/history.sqlite`, or `--db sqlite:PATH`), PostgreSQL for a CI fleet
//! (`--db postgres://…`, or `GATE_DB`). One schema and one behaviour on both. Later parts —
//! rollup, triage, the green ledger, shadow audits — read it; its schema is versioned and
//! migrated on first use, and a store whose schema is newer than this gate is never written.

pub(crate) mod evidence;
pub(crate) mod observations;
mod open;
mod postgres;
pub(crate) mod provenance;
pub(crate) mod recorder;
mod rollup;
mod schema;
pub(crate) mod signals;
mod sqlite;
pub(crate) mod traced;
pub(crate) mod triage;

use crate::run::events::{TestOutcome, TestResult};
use evidence::{Past, Rollup};
pub(crate) use open::{open_for, open_store, run_or_latest};
use std::path::{Path, PathBuf};
pub(crate) use triage::{Change, LegInfo};

type Source = Box<dyn std::error::Error + Send + Sync>;

/// The history store could not be used: unreachable, locked past the wait, or of a schema
/// this gate does not know.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{store}: cannot open the history store")]
    Open {
        store: String,
        #[source]
        source: Source,
    },
    #[error("{store}: {what}")]
    Query {
        store: String,
        what: String,
        #[source]
        source: Source,
    },
    #[error(
        "{store}: the history store has schema version {found}, newer than this gate's {known}; upgrade gate (the store is left untouched)"
    )]
    Newer {
        store: String,
        found: i64,
        known: i64,
    },
    #[error("`{0}`: not a store URL gate can use (`postgres://…`, `sqlite:PATH` or a file path)")]
    Url(String),
}

impl StoreError {
    /// The error and its causes on one line.
    pub(crate) fn one_line(&self) -> String {
        let mut line = self.to_string();
        let mut source = std::error::Error::source(self);
        while let Some(cause) = source {
            line.push_str(&format!(": {cause}"));
            source = cause.source();
        }
        line
    }
}

/// An error of `store` while doing `what`.
fn fail<E: std::error::Error + Send + Sync + 'static>(
    store: &str,
    what: &str,
) -> impl FnOnce(E) -> StoreError + use<E> {
    let (store, what) = (store.to_string(), what.to_string());
    move |source| StoreError::Query {
        store,
        what,
        source: Box::new(source),
    }
}

/// Where the store is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Location {
    Sqlite(PathBuf),
    Postgres(String),
}

/// Where the store is: `--db`, else `GATE_DB`, else `[history] url`, else
/// `.git/gate/history.sqlite`.
pub(crate) fn location(
    db: Option<&str>,
    configured: Option<&str>,
    state: &Path,
) -> Result<Location, StoreError> {
    let url = db
        .map(str::to_string)
        .or_else(|| std::env::var("GATE_DB").ok().filter(|v| !v.is_empty()))
        .or_else(|| configured.map(str::to_string));
    match url {
        None => Ok(Location::Sqlite(state.join("history.sqlite"))),
        Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
            Ok(Location::Postgres(url))
        }
        Some(url) => match url.split_once("://") {
            Some(_) => Err(StoreError::Url(url)),
            None => Ok(Location::Sqlite(PathBuf::from(
                url.strip_prefix("sqlite:").unwrap_or(&url),
            ))),
        },
    }
}

/// Keys in one `IN (…)` list, parameters in one multi-row insert: far below SQLite's (32,766)
/// and PostgreSQL's (65,535) limits on a statement's parameters.
const CHUNK: usize = 500;

/// `sql` with `{keys}` spelled as the placeholders `$1, …, $n`.
fn keyed(sql: &str, n: usize) -> String {
    let list: Vec<String> = (1..=n).map(|i| format!("${i}")).collect();
    sql.replace("{keys}", &list.join(", "))
}

/// In a write: `sql`, whose `{keys}` stands for a list of `keys`, run once per `CHUNK` of them.
fn execute_in(tx: &mut dyn rollup::Tx, sql: &str, keys: &[&str]) -> Result<(), StoreError> {
    for chunk in keys.chunks(CHUNK) {
        let params: Vec<Param<'_>> = chunk.iter().map(|k| Param::Text(k)).collect();
        tx.execute(&keyed(sql, chunk.len()), &params)?;
    }
    Ok(())
}

/// In a write: `insert`, whose `{rows}` stands for its VALUES list, run once per `CHUNK`
/// parameters: a row `($n, $m, $1, {unix_now})` per pair, `$1` being `shared`.
fn insert_pairs(
    tx: &mut dyn rollup::Tx,
    insert: &str,
    shared: &str,
    pairs: &[(&str, &str)],
) -> Result<(), StoreError> {
    for chunk in pairs.chunks(CHUNK / 2) {
        let mut params = vec![Param::Text(shared)];
        let mut rows = Vec::with_capacity(chunk.len());
        for (a, b) in chunk {
            rows.push(format!(
                "(${}, ${}, $1, {{unix_now}})",
                params.len() + 1,
                params.len() + 2
            ));
            params.extend([Param::Text(a), Param::Text(b)]);
        }
        tx.execute(&insert.replace("{rows}", &rows.join(", ")), &params)?;
    }
    Ok(())
}

/// A parameter of a read query: the reads are written once, for both stores.
#[derive(Debug, Clone, Copy)]
pub(super) enum Param<'a> {
    Int(i64),
    /// An `INTEGER` column's value (PostgreSQL's is 32 bits).
    Small(i32),
    Text(&'a str),
    Null,
}

/// A column value a read query returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Value {
    Int(i64),
    Text(String),
    Null,
}

impl Value {
    pub(super) fn int(&self) -> i64 {
        match self {
            Value::Int(v) => *v,
            Value::Text(t) => t.parse().unwrap_or_default(),
            Value::Null => 0,
        }
    }

    pub(super) fn text(&self) -> Option<String> {
        match self {
            Value::Text(t) => Some(t.clone()),
            Value::Int(v) => Some(v.to_string()),
            Value::Null => None,
        }
    }

    pub(super) fn string(&self) -> String {
        self.text().unwrap_or_default()
    }
}

/// A shadow compare to record.
pub(crate) struct ShadowRun<'a> {
    pub decision: &'a str,
    pub commit: &'a str,
    pub base: Option<&'a str>,
    pub judged: &'a [crate::proof::shadow::Judged],
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

    /// Records one leg's results and what it knows of its change, all or nothing. The same
    /// (run, attempt, leg) with the same content is left as it is; with other content it is
    /// replaced in the same transaction.
    /// The rollup of the leg's tests moves on to it in the same transaction.
    pub(crate) fn record(
        &mut self,
        leg: &Leg,
        results: &[TestResult],
        change: &Change,
        window_days: u64,
    ) -> Result<Recorded, StoreError> {
        let started = std::time::Instant::now();
        let results = numbered(results);
        let digest = digest(leg, &results, change);
        let write = |tx: &mut dyn rollup::Tx| {
            rollup::record(tx, leg, &results, change, &digest, window_days, started)
        };
        match self {
            Store::Sqlite(s) => s.write(write),
            Store::Postgres(s) => s.write(write),
        }
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

    /// A test's rollup on each leg it was recorded on.
    pub(crate) fn rollup_of(&mut self, id: &str) -> Result<Vec<(String, Rollup)>, StoreError> {
        let rows = self.query(schema::ROLLUP_OF, &[Param::Text(id)])?;
        Ok(rows
            .iter()
            .map(|r| (r[16].string(), rollup::state(r)))
            .collect())
    }

    /// Rebuilds the whole rollup over the window: every leg recorded in it, and nothing of
    /// what fell out of it. Returns the (test, leg) pairs rolled up.
    pub(crate) fn rollup_all(&mut self, window_days: u64) -> Result<usize, StoreError> {
        let rebuild = |tx: &mut dyn rollup::Tx| rollup::rebuild(tx, window_days);
        match self {
            Store::Sqlite(s) => s.write(rebuild),
            Store::Postgres(s) => s.write(rebuild),
        }
    }

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

    /// Records a shadow compare: the decision judged, the counts, each failing unit's class.
    pub(crate) fn shadow(&mut self, s: &ShadowRun<'_>) -> Result<(), StoreError> {
        let count = |class| s.judged.iter().filter(|j| j.class == class).count() as i32;
        let judged = serde_json::to_string(s.judged).expect("judgements serialize");
        let durations = serde_json::to_string(s.durations).expect("durations serialize");
        let write = |tx: &mut dyn rollup::Tx| {
            tx.execute(
                schema::SHADOW,
                &[
                    Param::Text(s.decision),
                    Param::Text(s.commit),
                    s.base.map_or(Param::Null, Param::Text),
                    Param::Small(s.judged.len() as i32),
                    Param::Small(count("caught")),
                    Param::Small(count("missed")),
                    Param::Small(count("flaky")),
                    Param::Text(&judged),
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

    /// Every failing test of `leg`, each with one verdict from what was recorded before it.
    pub(crate) fn triage(
        &mut self,
        leg: &LegInfo,
        rules: &triage::Rules<'_>,
    ) -> Result<Vec<triage::Triaged>, StoreError> {
        let from = leg.recorded_unix - window_secs(rules.window_days);
        let rows = past(self.query(
            &schema::past_of_failing(),
            &[
                Param::Text(&leg.leg),
                Param::Int(from),
                Param::Int(leg.seq),
                Param::Int(leg.seq),
            ],
        )?);
        let change = self.change_of(leg.seq)?;
        Ok(triage::triage_leg(leg, &rows, &change, rules))
    }

    /// The tests failing on the default branch now, on any leg, by the rollup.
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
        })
        .collect()
}

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

/// A test failing on the default branch, on one leg.
#[derive(Debug, Clone)]
pub(crate) struct FailingTest {
    pub file: Option<String>,
    pub leg: String,
    pub since: String,
    pub runs: u32,
}

/// What a leg's content is: its stored fields and every result, hashed.
fn digest(leg: &Leg, results: &[TestResult], change: &Change) -> String {
    /// The serialized bytes go straight into the hash: no text, no value tree.
    struct Hasher(xxhash_rust::xxh3::Xxh3);
    impl std::io::Write for Hasher {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.update(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut h = Hasher(xxhash_rust::xxh3::Xxh3::new());
    // Serializing plain structs into a writer that never fails cannot fail.
    let _ = serde_json::to_writer(&mut h, &(leg, results, change));
    format!("{:032x}", h.0.digest128())
}

/// One leg of one CI run (or one local run), as `gate record` names it: the key
/// (run, attempt, leg) and what is stored with it.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Leg {
    pub run: String,
    pub attempt: u32,
    pub leg: String,
    pub commit: String,
    pub branch: Option<String>,
    /// Whether the leg ran on the default branch (its failures are "failing on main").
    pub mainline: bool,
    /// The commit its change was taken against (the merge-base with the default branch).
    pub base: Option<String>,
    /// The leg's environment: OS, architecture, interpreter and toolchain versions.
    pub env: serde_json::Value,
    /// What the results were read from: `junit`, `go-json`.
    pub source: String,
    /// The digest of what can change an outcome besides the code (`fingerprint::run_inputs`):
    /// a pass counts as flaky evidence against a failure only under the same inputs.
    pub inputs: String,
}

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

/// What recording a leg did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Recorded {
    /// A new leg, under this store sequence number.
    New(i64),
    /// The same leg with the same content was already there: nothing written.
    Unchanged(i64),
    /// The same leg with other content: replaced, atomically, under a new sequence number.
    Replaced(i64),
    /// The upload had no result and the leg recorded under the same name had `results`:
    /// nothing written.
    Kept { seq: i64, results: i64 },
}

impl Recorded {
    pub(crate) fn seq(self) -> i64 {
        match self {
            Recorded::New(s)
            | Recorded::Unchanged(s)
            | Recorded::Replaced(s)
            | Recorded::Kept { seq: s, .. } => s,
        }
    }
}

/// The results in the order they are stored, each test's attempts numbered 1, 2, … in the
/// order they ran: the same test reported by two files of one leg (a rerun written apart)
/// is a further attempt, never a lost row.
pub(crate) fn numbered(results: &[TestResult]) -> Vec<TestResult> {
    let mut sorted: Vec<TestResult> = results.to_vec();
    sorted.sort_by(|a, b| a.id.cmp(&b.id).then(a.attempt.cmp(&b.attempt)));
    let mut out: Vec<TestResult> = Vec::with_capacity(sorted.len());
    for mut r in sorted {
        r.attempt = match out.last() {
            Some(prev) if prev.id == r.id => prev.attempt + 1,
            _ => 1,
        };
        out.push(r);
    }
    out
}

pub(crate) fn outcome_name(outcome: TestOutcome) -> &'static str {
    match outcome {
        TestOutcome::Passed => "passed",
        TestOutcome::Failed => "failed",
        TestOutcome::Error => "error",
        TestOutcome::Skipped => "skipped",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(id: &str, attempt: u32, outcome: TestOutcome) -> TestResult {
        TestResult {
            id: id.into(),
            file: None,
            outcome,
            duration_ms: 1,
            attempt,
        }
    }

    /// A test reported twice in one leg keeps both attempts, in order.
    #[test]
    fn repeated_tests_are_further_attempts() {
        let got = numbered(&[
            r("b", 1, TestOutcome::Passed),
            r("a", 1, TestOutcome::Failed),
            r("a", 2, TestOutcome::Passed),
            r("a", 1, TestOutcome::Failed),
        ]);
        let keys: Vec<(&str, u32)> = got.iter().map(|r| (r.id.as_str(), r.attempt)).collect();
        assert_eq!(keys, [("a", 1), ("a", 2), ("a", 3), ("b", 1)]);
    }

    #[test]
    fn store_locations() {
        let state = Path::new("/repo/.git/gate");
        assert_eq!(
            location(Some("sqlite:/tmp/h.db"), None, state).unwrap(),
            Location::Sqlite(PathBuf::from("/tmp/h.db"))
        );
        assert_eq!(
            location(Some("rel.db"), None, state).unwrap(),
            Location::Sqlite(PathBuf::from("rel.db"))
        );
        assert_eq!(
            location(None, Some("postgres://u@h/db"), state).unwrap(),
            Location::Postgres("postgres://u@h/db".into())
        );
        assert!(matches!(
            location(Some("mysql://h/db"), Some("sqlite:x"), state),
            Err(StoreError::Url(_))
        ));
    }
}
