//! Recording a leg and keeping the rollup, written once over a store's write transaction
//! (`Tx`): the leg's flaky evidence is decided from the earlier legs of its commit under the
//! same inputs (the leg's, and each test's fingerprint where both sides know it), its rows
//! are written, and the rollup of its tests is moved on by that leg — the legs that left the
//! window retired, the new one added — so a leg costs its own tests' rows, never their whole
//! history. The rollup is kept per (test, environment): a leg's shard never splits it. `gate
//! rollup` rebuilds every (test, environment) from the window.

use super::evidence::{self, Flake, Past, Rollup, Sighting};
use super::schema;
use super::{Change, Leg, Param, Recorded, StoreError, Value, past, window_secs};
use crate::run::events::TestResult;
use std::collections::BTreeMap;

/// What a store does inside one write transaction (reads in the shared `$n` form).
pub(super) trait Tx {
    fn query(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Vec<Value>>, StoreError>;

    /// The store's clock, in seconds since the epoch: windows are the store's time, never a
    /// producer's.
    fn now_unix(&mut self) -> Result<i64, StoreError> {
        Ok(self
            .query("SELECT {unix_now}", &[])?
            .first()
            .map_or(0, |r| r[0].int()))
    }
    fn execute(&mut self, sql: &str, params: &[Param<'_>]) -> Result<(), StoreError>;
    /// Writes the leg's `runs` row at the store's time; its sequence number.
    fn insert_run(&mut self, leg: &Leg, digest: &str) -> Result<i64, StoreError>;
    /// Writes the leg's results (each with its flaky evidence and its unit's fingerprint
    /// digest, when known), changed paths and selection.
    fn insert_rows(
        &mut self,
        seq: i64,
        results: &[TestResult],
        evidence: (&[Flake], &[Option<&str>]),
        change: &Change,
    ) -> Result<(), StoreError>;
    /// Writes rollup rows over the earlier ones of the same (test, environment).
    fn upsert_rollup(&mut self, environment: &str, rows: &[Rollup]) -> Result<(), StoreError>;
}

/// Records one leg (results `numbered`), all or nothing, and moves its tests' rollup on.
pub(super) fn record(
    tx: &mut dyn Tx,
    leg: &Leg,
    results: &[TestResult],
    change: &Change,
    digest: &str,
    window_days: u64,
    started: std::time::Instant,
) -> Result<Recorded, StoreError> {
    let found = tx.query(
        schema::FIND_RUN,
        &[
            Param::Text(&leg.run),
            Param::Small(leg.attempt as i32),
            Param::Text(&leg.name()),
        ],
    )?;
    let replaced = match found.first() {
        Some(row) if row[1].string() == digest => return Ok(Recorded::Unchanged(row[0].int())),
        // An upload with no result (a report of the wrong kind, a run that died before its
        // tests) never takes the place of one that had results: its failures would vanish.
        Some(row) if results.is_empty() => {
            let had = tx
                .query(
                    "SELECT COUNT(*) FROM results WHERE seq = $1",
                    &[Param::Int(row[0].int())],
                )?
                .first()
                .map_or(0, |r| r[0].int());
            if had > 0 {
                return Ok(Recorded::Kept {
                    seq: row[0].int(),
                    results: had,
                });
            }
            replace(tx, row[0].int())?
        }
        Some(row) => replace(tx, row[0].int())?,
        None => false,
    };
    let seq = tx.insert_run(leg, digest)?;
    let now = tx
        .query(
            "SELECT recorded_unix FROM runs WHERE seq = $1",
            &[Param::Int(seq)],
        )?
        .first()
        .map_or(0, |r| r[0].int());
    let from = now - window_secs(window_days);
    let fingerprints: Vec<Option<&str>> = results.iter().map(|r| leg.fingerprint_of(r)).collect();
    let flakes = flakes(tx, leg, seq, from, (results, &fingerprints))?;
    crate::timings::mark("flaky evidence decided");
    tx.insert_rows(seq, results, (&flakes, &fingerprints), change)?;
    crate::timings::mark("rows written");
    let legs = sightings_of(results, &flakes, seq, leg, now);
    advance(tx, &leg.leg, seq, from, legs, replaced)?;
    crate::timings::mark("rollup moved on");
    // gate's own cost of recording, for `gate costs --from-history` (its commit aside).
    tx.execute(
        schema::RECORD_MS,
        &[
            Param::Int(i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX)),
            Param::Int(seq),
        ],
    )?;
    Ok(if replaced {
        Recorded::Replaced(seq)
    } else {
        Recorded::New(seq)
    })
}

/// Deletes the leg stored under `seq` with its rows; true (it was replaced).
fn replace(tx: &mut dyn Tx, seq: i64) -> Result<bool, StoreError> {
    // Results have no foreign key (a per-row check costs more than the leg's insert): they go
    // with their leg here, in the same transaction.
    for table in schema::LEG_TABLES {
        tx.execute(
            &format!("DELETE FROM {table} WHERE seq = $1"),
            &[Param::Int(seq)],
        )?;
    }
    Ok(true)
}

/// Each result's flaky evidence (the same for every attempt of a test), from the attempts of
/// the leg and the earlier legs of its commit in its environment, any shard, in the window,
/// under the same inputs: the leg's, and the test's own fingerprint (`fingerprints`, one per
/// result) where both results carry one.
fn flakes(
    tx: &mut dyn Tx,
    leg: &Leg,
    seq: i64,
    from: i64,
    (results, fingerprints): (&[TestResult], &[Option<&str>]),
) -> Result<Vec<Flake>, StoreError> {
    // Per test: each earlier result's (failed, passed, fingerprint).
    let mut earlier: BTreeMap<String, Vec<(bool, bool, Option<String>)>> = BTreeMap::new();
    let rows = tx.query(
        schema::SAME_COMMIT,
        &[
            Param::Text(&leg.leg),
            Param::Text(&leg.commit),
            Param::Int(seq),
            Param::Int(from),
            Param::Text(&leg.inputs),
        ],
    )?;
    for r in rows {
        let outcome = r[1].string();
        earlier.entry(r[0].string()).or_default().push((
            evidence::failing(&outcome),
            outcome == "passed",
            r[2].text(),
        ));
    }
    let mut out = Vec::with_capacity(results.len());
    let mut at = 0;
    for test in results.chunk_by(|a, b| a.id == b.id) {
        let attempts: Vec<&str> = test
            .iter()
            .map(|r| super::outcome_name(r.outcome))
            .collect();
        // Every attempt of a test is of one unit: its first result's fingerprint is theirs.
        let own = fingerprints[at];
        let (failed, passed) = earlier
            .get(&test[0].id)
            .into_iter()
            .flatten()
            .filter(|(_, _, print)| evidence::same_fingerprint(print.as_deref(), own))
            .fold((false, false), |(f, p), (failed, passed, _)| {
                (f || *failed, p || *passed)
            });
        let flake = evidence::flake_of(&attempts, failed, passed);
        out.extend(std::iter::repeat_n(flake, test.len()));
        at += test.len();
    }
    Ok(out)
}

/// The new leg's sighting of each of its tests.
fn sightings_of(
    results: &[TestResult],
    flakes: &[Flake],
    seq: i64,
    leg: &Leg,
    now: i64,
) -> Vec<(String, Option<String>, Sighting)> {
    let mut out = Vec::new();
    let mut at = 0;
    for test in results.chunk_by(|a, b| a.id == b.id) {
        let last = &test[test.len() - 1];
        out.push((
            last.id.clone(),
            last.file.clone(),
            Sighting {
                seq,
                commit: leg.commit.clone(),
                mainline: leg.mainline,
                recorded_unix: now,
                outcome: super::outcome_name(last.outcome).to_string(),
                duration_ms: last.duration_ms as i64,
                flake: flakes[at],
            },
        ));
        at += test.len();
    }
    out
}

/// Moves the rollup of the leg's tests in its `environment` on to it: what left the window
/// retired, the leg added. A replaced leg, or a failing streak whose first leg left, is read
/// again instead.
fn advance(
    tx: &mut dyn Tx,
    environment: &str,
    seq: i64,
    from: i64,
    legs: Vec<(String, Option<String>, Sighting)>,
    replaced: bool,
) -> Result<(), StoreError> {
    let mut states: BTreeMap<String, Rollup> = if replaced {
        BTreeMap::new()
    } else {
        tx.query(
            schema::ROLLUP_STATE,
            &[Param::Text(environment), Param::Int(seq)],
        )?
        .iter()
        .map(|r| (r[0].string(), state(r)))
        .collect()
    };
    crate::timings::mark("rollup read");
    let mut reread: Vec<String> = Vec::new();
    if replaced {
        reread = legs.iter().map(|(t, _, _)| t.clone()).collect();
    } else if let Some(oldest) = states.values().map(|s| s.window_from).min()
        && oldest < from
        && !tx
            .query(
                schema::ANY_LEG_BETWEEN,
                &[
                    Param::Text(environment),
                    Param::Int(oldest),
                    Param::Int(from),
                ],
            )?
            .is_empty()
    {
        let gone = past(tx.query(
            &schema::past_of_leg_tests(),
            &[
                Param::Text(environment),
                Param::Int(oldest),
                Param::Int(from),
                Param::Int(seq),
            ],
        )?);
        for rows in gone.chunk_by(|a, b| a.test == b.test) {
            let Some(s) = states.get_mut(&rows[0].test) else {
                continue;
            };
            let refs: Vec<&Past> = rows.iter().collect();
            for sighting in evidence::sightings(&refs) {
                if sighting.recorded_unix >= s.window_from && s.retire(&sighting).is_err() {
                    reread.push(rows[0].test.clone());
                    break;
                }
            }
        }
    }
    for test in reread {
        let rows = past(tx.query(
            &schema::past_of_test(),
            &[
                Param::Text(environment),
                Param::Int(from),
                Param::Text(&test),
                Param::Int(seq),
            ],
        )?);
        let refs: Vec<&Past> = rows.iter().collect();
        states.insert(test, evidence::rollup_of(&refs, from));
    }
    crate::timings::mark("window's end retired");
    let mut out = Vec::with_capacity(legs.len());
    for (test, file, sighting) in legs {
        let mut s = states
            .remove(&test)
            .unwrap_or_else(|| Rollup::new(&test, None, from));
        s.test = test;
        s.file = file.or(s.file);
        s.window_from = from;
        s.advance(&sighting);
        out.push(s);
    }
    tx.upsert_rollup(environment, &out)
}

/// A rollup row as stored (`ROLLUP_STATE`'s columns).
pub(super) fn state(r: &[Value]) -> Rollup {
    let mut s = Rollup::new(&r[0].string(), r[1].text(), r[4].int());
    s.through_seq = r[2].int();
    s.last_unix = r[3].int();
    s.runs = r[5].int() as u32;
    s.passed = r[6].int() as u32;
    s.failed = r[7].int() as u32;
    s.errors = r[8].int() as u32;
    s.skipped = r[9].int() as u32;
    s.flaky = r[10].int() as u32;
    s.fail_then_pass = r[11].int() as u32;
    s.failing_on_main = r[12].text().map(|since| evidence::FailingOnMain {
        since,
        since_seq: r[13].int(),
        runs: r[14].int() as u32,
    });
    s.durations = evidence::Histogram::parse(&r[15].string());
    s
}

/// Rebuilds the whole rollup from the window: every leg recorded in it, nothing of what fell
/// out. Returns the (test, environment) pairs.
pub(super) fn rebuild(tx: &mut dyn Tx, window_days: u64) -> Result<usize, StoreError> {
    let from = tx.now_unix()? - window_secs(window_days);
    let environments: Vec<String> = tx
        .query(schema::ENVIRONMENTS_SINCE, &[Param::Int(from)])?
        .iter()
        .map(|r| r[0].string())
        .collect();
    tx.execute("DELETE FROM rollup", &[])?;
    let mut n = 0;
    for environment in environments {
        let rows = past(tx.query(
            &schema::past_of_environment(),
            &[Param::Text(&environment), Param::Int(from)],
        )?);
        let all = evidence::summarize(&rows, from);
        n += all.len();
        tx.upsert_rollup(&environment, &all)?;
    }
    Ok(n)
}
