//! What a test's recorded history says, one definition for the rollup (kept up to date leg by
//! leg) and for triage: its runs and outcomes in a window, its flaky evidence, whether it is
//! failing on the default branch (since which commit, over how many main runs) and its
//! durations. Pure: the stores fetch the rows, this decides.
//!
//! Flaky evidence is decided once, when the leg that shows it is recorded, from legs recorded
//! before it (so it never peeks) and stored with its results: a fail-then-pass within the leg,
//! or a leg that passed where an earlier leg of the same commit, in the window, under the same
//! inputs (the leg's, and the test's own fingerprint where both results carry one), failed (or
//! the reverse). A rollup adds a leg's evidence and retires it when the leg leaves the window.

use serde::Serialize;
use std::collections::BTreeMap;

/// One stored attempt of one test in one leg, with what the leg knows (rows come ordered by
/// test, then leg sequence, then attempt).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Past {
    pub test: String,
    pub file: Option<String>,
    pub seq: i64,
    pub run: String,
    /// The name of the leg that holds it (its environment and shard): where evidence came from.
    pub leg: String,
    pub commit: String,
    pub mainline: bool,
    pub recorded_unix: i64,
    pub attempt: u32,
    pub outcome: String,
    pub duration_ms: i64,
    /// The leg's flaky evidence for this test, decided when it was recorded.
    pub flake: Flake,
    /// Its leg's inputs digest; none when recorded before gate kept it (never the same).
    pub inputs: Option<String>,
    /// Its unit's fingerprint digest; none when unknown or not kept (`same_fingerprint`).
    pub fingerprint: Option<String>,
}

/// Whether two results of one test ran under the same fingerprint, as far as both know. A
/// digest missing on either side (a row recorded before gate kept them, `gate record`'s
/// results from another machine) says nothing either way: the leg's inputs alone decide, as
/// they did before. Two digests that differ are two experiments — a variable the test reads by
/// name was set otherwise, an installed file was edited — not a retry; and a run whose inputs
/// gate could not name (`UNKNOWN`) is never the same as another.
pub(crate) fn same_fingerprint(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (Some(UNKNOWN), _) | (_, Some(UNKNOWN)) => false,
        (Some(a), Some(b)) => a == b,
        _ => true,
    }
}

/// The digest a gated run records for a unit whose inputs it could not all name.
pub(crate) const UNKNOWN: &str = "unknown";

/// Whether an outcome is a failure: a failed assertion or a test that could not run.
pub(crate) fn failing(outcome: &str) -> bool {
    outcome == "failed" || outcome == "error"
}

/// A leg's flaky evidence for one test (stored as 0, 1, 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Flake {
    #[default]
    None,
    /// It failed, then passed on a retry within the leg.
    FailThenPass,
    /// It passed where an earlier leg of the same commit failed, or the reverse.
    SameCommit,
}

impl Flake {
    pub(crate) fn code(self) -> i64 {
        match self {
            Flake::None => 0,
            Flake::FailThenPass => 1,
            Flake::SameCommit => 2,
        }
    }

    pub(crate) fn of_code(code: i64) -> Flake {
        match code {
            1 => Flake::FailThenPass,
            2 => Flake::SameCommit,
            _ => Flake::None,
        }
    }
}

/// The flaky evidence of a leg whose attempts of one test were `attempts` (in order), given
/// whether earlier legs of the same commit in the window failed it or passed it.
pub(crate) fn flake_of(attempts: &[&str], earlier_failed: bool, earlier_passed: bool) -> Flake {
    let first_fail = attempts.iter().position(|o| failing(o));
    if first_fail.is_some_and(|i| attempts[i..].contains(&"passed")) {
        return Flake::FailThenPass;
    }
    let passed = attempts.contains(&"passed");
    let failed = first_fail.is_some();
    if (passed && earlier_failed) || (failed && earlier_passed) {
        Flake::SameCommit
    } else {
        Flake::None
    }
}

/// One leg's record of a test: how it ended, and what the rollup keeps of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sighting {
    pub seq: i64,
    pub commit: String,
    pub mainline: bool,
    pub recorded_unix: i64,
    /// The last attempt's outcome.
    pub outcome: String,
    pub duration_ms: i64,
    pub flake: Flake,
}

/// One test's rows (ordered by sequence and attempt) as its legs.
pub(crate) fn sightings(rows: &[&Past]) -> Vec<Sighting> {
    rows.chunk_by(|a, b| a.seq == b.seq)
        .map(|leg| {
            let last = leg[leg.len() - 1];
            Sighting {
                seq: last.seq,
                commit: last.commit.clone(),
                mainline: last.mainline,
                recorded_unix: last.recorded_unix,
                outcome: last.outcome.clone(),
                duration_ms: last.duration_ms,
                flake: leg
                    .iter()
                    .map(|r| r.flake)
                    .max_by_key(|f| f.code())
                    .unwrap_or_default(),
            }
        })
        .collect()
}

/// Durations in log-spaced buckets (exact to 16 ms, then four per doubling: within 19%), so
/// a rollup adds and retires a leg's duration without reading the others.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Histogram(BTreeMap<u32, u32>);

impl Histogram {
    fn bucket(ms: i64) -> u32 {
        let ms = ms.max(0) as f64;
        if ms < 16.0 {
            ms as u32
        } else {
            16 + (4.0 * (ms / 16.0).log2()).floor() as u32
        }
    }

    /// The smallest duration of a bucket.
    fn floor_of(bucket: u32) -> i64 {
        if bucket < 16 {
            i64::from(bucket)
        } else {
            (16.0 * 2f64.powf(f64::from(bucket - 16) / 4.0)).ceil() as i64
        }
    }

    fn add(&mut self, ms: i64) {
        *self.0.entry(Self::bucket(ms)).or_default() += 1;
    }

    fn remove(&mut self, ms: i64) {
        let b = Self::bucket(ms);
        if let Some(n) = self.0.get_mut(&b) {
            *n -= 1;
            if *n == 0 {
                self.0.remove(&b);
            }
        }
    }

    /// The nearest-rank percentile `p`, as its bucket's smallest duration.
    pub(crate) fn rank(&self, p: u64) -> Option<i64> {
        let total: u64 = self.0.values().map(|n| u64::from(*n)).sum();
        if total == 0 {
            return None;
        }
        let want = (p * total).div_ceil(100).max(1);
        let mut seen = 0;
        for (b, n) in &self.0 {
            seen += u64::from(*n);
            if seen >= want {
                return Some(Self::floor_of(*b));
            }
        }
        None
    }

    /// `bucket:count,…`, as stored.
    pub(crate) fn text(&self) -> String {
        let parts: Vec<String> = self.0.iter().map(|(b, n)| format!("{b}:{n}")).collect();
        parts.join(",")
    }

    /// The stored text back; anything unreadable in it is dropped.
    pub(crate) fn parse(text: &str) -> Histogram {
        Histogram(
            text.split(',')
                .filter_map(|p| p.split_once(':'))
                .filter_map(|(b, n)| Some((b.parse().ok()?, n.parse().ok()?)))
                .collect(),
        )
    }
}

/// The test is failing on the default branch: its latest main runs in the window failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct FailingOnMain {
    /// The first commit of the failing streak.
    pub since: String,
    /// The sequence of that commit's leg.
    #[serde(skip)]
    pub since_seq: i64,
    /// How many consecutive main runs failed (skips neither break nor extend it).
    pub runs: u32,
}

/// A test's history on one leg, over the window: what the rollup table holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rollup {
    pub test: String,
    pub file: Option<String>,
    /// The last leg sequence it includes.
    pub through_seq: i64,
    /// The store time of that leg.
    pub last_unix: i64,
    /// Legs recorded before this store time are out of it.
    pub window_from: i64,
    pub runs: u32,
    pub passed: u32,
    pub failed: u32,
    pub errors: u32,
    pub skipped: u32,
    /// Flaky evidence in the window, and how much of it is fail-then-pass.
    pub flaky: u32,
    pub fail_then_pass: u32,
    pub failing_on_main: Option<FailingOnMain>,
    pub durations: Histogram,
}

/// What retiring a leg could not do alone: the failing streak lost its first commit, so the
/// test's window must be read again.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Reread;

impl Rollup {
    pub(crate) fn new(test: &str, file: Option<String>, window_from: i64) -> Rollup {
        Rollup {
            test: test.to_string(),
            file,
            through_seq: 0,
            last_unix: 0,
            window_from,
            runs: 0,
            passed: 0,
            failed: 0,
            errors: 0,
            skipped: 0,
            flaky: 0,
            fail_then_pass: 0,
            failing_on_main: None,
            durations: Histogram::default(),
        }
    }

    fn count(&mut self, outcome: &str) -> &mut u32 {
        match outcome {
            "passed" => &mut self.passed,
            "failed" => &mut self.failed,
            "skipped" => &mut self.skipped,
            _ => &mut self.errors,
        }
    }

    /// Adds a leg recorded after every leg it holds.
    pub(crate) fn advance(&mut self, s: &Sighting) {
        self.runs += 1;
        *self.count(&s.outcome) += 1;
        if s.flake != Flake::None {
            self.flaky += 1;
        }
        if s.flake == Flake::FailThenPass {
            self.fail_then_pass += 1;
        }
        if s.outcome != "skipped" {
            self.durations.add(s.duration_ms);
        }
        if s.mainline {
            match s.outcome.as_str() {
                "skipped" => {}
                o if failing(o) => match &mut self.failing_on_main {
                    Some(f) => f.runs += 1,
                    None => {
                        self.failing_on_main = Some(FailingOnMain {
                            since: s.commit.clone(),
                            since_seq: s.seq,
                            runs: 1,
                        });
                    }
                },
                _ => self.failing_on_main = None,
            }
        }
        self.through_seq = s.seq;
        self.last_unix = s.recorded_unix;
    }

    /// Takes out a leg that left the window (one it holds).
    pub(crate) fn retire(&mut self, s: &Sighting) -> Result<(), Reread> {
        self.runs = self.runs.saturating_sub(1);
        let n = self.count(&s.outcome);
        *n = n.saturating_sub(1);
        if s.flake != Flake::None {
            self.flaky = self.flaky.saturating_sub(1);
        }
        if s.flake == Flake::FailThenPass {
            self.fail_then_pass = self.fail_then_pass.saturating_sub(1);
        }
        if s.outcome != "skipped" {
            self.durations.remove(s.duration_ms);
        }
        match &self.failing_on_main {
            Some(f) if s.mainline && s.seq >= f.since_seq => Err(Reread),
            _ => Ok(()),
        }
    }

    pub(crate) fn median_ms(&self) -> Option<i64> {
        self.durations.rank(50)
    }

    pub(crate) fn p90_ms(&self) -> Option<i64> {
        self.durations.rank(90)
    }
}

/// Each test's rollup from rows of a window (ordered by test, sequence and attempt).
pub(crate) fn summarize(rows: &[Past], window_from: i64) -> Vec<Rollup> {
    rows.chunk_by(|a, b| a.test == b.test)
        .map(|rows| rollup_of(&rows.iter().collect::<Vec<_>>(), window_from))
        .collect()
}

/// One test's rollup from its rows in the window.
pub(crate) fn rollup_of(rows: &[&Past], window_from: i64) -> Rollup {
    let first = rows.first();
    let mut r = Rollup::new(
        first.map_or("", |r| r.test.as_str()),
        rows.iter().rev().find_map(|r| r.file.clone()),
        window_from,
    );
    for s in sightings(rows) {
        r.advance(&s);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn past(seq: i64, commit: &str, mainline: bool, attempts: &[&str], flake: Flake) -> Vec<Past> {
        attempts
            .iter()
            .enumerate()
            .map(|(i, o)| Past {
                test: "t.py::t".into(),
                file: Some("t.py".into()),
                seq,
                run: format!("r{seq}"),
                leg: "py".into(),
                commit: commit.into(),
                mainline,
                recorded_unix: seq * 10,
                attempt: i as u32 + 1,
                outcome: o.to_string(),
                duration_ms: 10 * seq,
                flake,
                inputs: Some("i".into()),
                fingerprint: None,
            })
            .collect()
    }

    #[test]
    fn flaky_evidence_is_a_retry_or_a_commit_that_both_failed_and_passed() {
        assert_eq!(
            flake_of(&["failed", "passed"], false, false),
            Flake::FailThenPass
        );
        assert_eq!(
            flake_of(&["error", "passed"], true, true),
            Flake::FailThenPass
        );
        assert_eq!(flake_of(&["passed"], true, false), Flake::SameCommit);
        assert_eq!(flake_of(&["failed"], false, true), Flake::SameCommit);
        assert_eq!(flake_of(&["failed"], true, false), Flake::None);
        assert_eq!(flake_of(&["passed"], false, true), Flake::None);
        assert_eq!(flake_of(&["skipped"], true, true), Flake::None);
        assert_eq!(flake_of(&["passed", "failed"], false, false), Flake::None);
    }

    #[test]
    fn counts_flakes_and_the_failing_streak_on_main() {
        let rows: Vec<Past> = [
            past(1, "a", true, &["passed"], Flake::None),
            past(2, "b", true, &["failed"], Flake::None),
            past(3, "b", false, &["passed"], Flake::SameCommit),
            past(4, "c", false, &["failed", "passed"], Flake::FailThenPass),
            past(5, "d", true, &["skipped"], Flake::None),
            past(6, "e", true, &["error"], Flake::None),
        ]
        .concat();
        let s = &summarize(&rows, 0)[0];
        assert_eq!(
            (s.runs, s.passed, s.failed, s.errors, s.skipped),
            (6, 3, 1, 1, 1)
        );
        assert_eq!((s.flaky, s.fail_then_pass), (2, 1));
        let f = s.failing_on_main.as_ref().unwrap();
        assert_eq!((f.since.as_str(), f.since_seq, f.runs), ("b", 2, 2));
        // Durations of the five legs that ran (10, 20, 30, 40, 60), by bucket floors.
        assert_eq!((s.median_ms(), s.p90_ms()), (Some(27), Some(54)));
        assert_eq!((s.through_seq, s.last_unix), (6, 60));
    }

    /// Retiring the legs that left the window gives what reading the window afresh gives —
    /// unless the failing streak's first leg left, which asks for a reread.
    #[test]
    fn retiring_a_leg_is_reading_without_it() {
        let rows: Vec<Past> = [
            past(1, "a", false, &["failed", "passed"], Flake::FailThenPass),
            past(2, "b", true, &["passed"], Flake::None),
            past(3, "c", true, &["failed"], Flake::None),
            past(4, "c", false, &["passed"], Flake::SameCommit),
        ]
        .concat();
        let mut all = summarize(&rows, 0).remove(0);
        let refs: Vec<&Past> = rows.iter().collect();
        let legs = sightings(&refs);
        all.retire(&legs[0]).unwrap();
        all.retire(&legs[1]).unwrap();
        let rest: Vec<Past> = rows.iter().filter(|r| r.seq > 2).cloned().collect();
        let mut fresh = summarize(&rest, 0).remove(0);
        fresh.window_from = all.window_from;
        assert_eq!(all, fresh);
        assert_eq!(all.retire(&legs[2]), Err(Reread));
    }

    #[test]
    fn a_pass_on_main_ends_the_streak() {
        let rows = [
            past(1, "a", true, &["failed"], Flake::None),
            past(2, "b", true, &["passed"], Flake::None),
        ]
        .concat();
        assert_eq!(summarize(&rows, 0)[0].failing_on_main, None);
    }

    #[test]
    fn histogram_ranks_and_round_trips() {
        let mut h = Histogram::default();
        assert_eq!(h.rank(50), None);
        for ms in [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] {
            h.add(ms);
        }
        assert_eq!((h.rank(50), h.rank(90)), (Some(5), Some(9)));
        h.add(1000);
        h.remove(1);
        assert_eq!(Histogram::parse(&h.text()), h);
        let b = Histogram::bucket(1000);
        assert!(Histogram::floor_of(b) <= 1000 && Histogram::floor_of(b + 1) > 1000);
        assert!(Histogram::floor_of(b) as f64 >= 1000.0 / 1.19);
    }
}
