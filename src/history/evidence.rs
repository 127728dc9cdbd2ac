//! What a test's recorded history says, computed the same way for the rollup and for triage:
//! its runs and outcomes in a window, its flaky evidence, whether it is failing on the default
//! branch (since which commit, over how many main runs) and its durations. Pure: the stores
//! fetch the rows, this decides.

use serde::Serialize;

/// One stored attempt of one test in one leg, with what the leg knows (rows come ordered by
/// test, then leg sequence, then attempt).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Past {
    pub test: String,
    pub file: Option<String>,
    pub seq: i64,
    pub run: String,
    pub commit: String,
    pub mainline: bool,
    pub attempt: u32,
    pub outcome: String,
    pub duration_ms: i64,
}

/// Whether an outcome is a failure: a failed assertion or a test that could not run.
pub(crate) fn failing(outcome: &str) -> bool {
    outcome == "failed" || outcome == "error"
}

/// One leg's record of a test: every attempt, in order.
#[derive(Debug)]
pub(crate) struct Sighting<'a> {
    pub seq: i64,
    pub run: &'a str,
    pub commit: &'a str,
    pub mainline: bool,
    pub attempts: Vec<(&'a str, i64)>,
}

impl Sighting<'_> {
    /// How the leg ended for the test: its last attempt.
    pub(crate) fn outcome(&self) -> &str {
        self.attempts.last().map_or("error", |a| a.0)
    }

    fn passed_after_failing(&self) -> bool {
        let first_fail = self.attempts.iter().position(|a| failing(a.0));
        first_fail.is_some_and(|i| self.attempts[i..].iter().any(|a| a.0 == "passed"))
    }

    fn any(&self, pred: impl Fn(&str) -> bool) -> bool {
        self.attempts.iter().any(|a| pred(a.0))
    }
}

/// One test's rows grouped into its legs, in sequence order.
pub(crate) fn sightings(rows: &[Past]) -> Vec<Sighting<'_>> {
    let mut out: Vec<Sighting<'_>> = Vec::new();
    for r in rows {
        match out.last_mut() {
            Some(last) if last.seq == r.seq => last.attempts.push((&r.outcome, r.duration_ms)),
            _ => out.push(Sighting {
                seq: r.seq,
                run: &r.run,
                commit: &r.commit,
                mainline: r.mainline,
                attempts: vec![(&r.outcome, r.duration_ms)],
            }),
        }
    }
    out
}

/// Why a test counts as flaky.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Flake {
    /// It failed, then passed on a retry within one run.
    FailThenPass { run: String, commit: String },
    /// It failed and passed on the same commit, in different runs or attempts.
    SameCommit { commit: String },
}

/// The test is failing on the default branch: its latest main runs failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct FailingOnMain {
    /// The first commit of the failing streak.
    pub since: String,
    /// How many consecutive main runs failed (skips neither break nor extend it).
    pub runs: u32,
}

/// A test's history on one leg.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Summary {
    pub test: String,
    pub file: Option<String>,
    /// The last leg sequence the summary includes.
    pub through_seq: i64,
    pub runs: u32,
    pub passed: u32,
    pub failed: u32,
    pub errors: u32,
    pub skipped: u32,
    pub flaky: Vec<Flake>,
    pub failing_on_main: Option<FailingOnMain>,
    pub median_ms: Option<i64>,
    pub p90_ms: Option<i64>,
}

/// Each test's summary, from rows ordered by test, sequence and attempt.
pub(crate) fn summarize(rows: &[Past]) -> Vec<Summary> {
    rows.chunk_by(|a, b| a.test == b.test)
        .map(summary_of)
        .collect()
}

/// One test's summary (its rows only).
pub(crate) fn summary_of(rows: &[Past]) -> Summary {
    let seen = sightings(rows);
    let count = |o: &str| seen.iter().filter(|s| s.outcome() == o).count() as u32;
    let mut durations: Vec<i64> = seen
        .iter()
        .filter(|s| s.outcome() != "skipped")
        .map(|s| s.attempts.last().map_or(0, |a| a.1))
        .collect();
    durations.sort_unstable();
    Summary {
        test: rows.first().map(|r| r.test.clone()).unwrap_or_default(),
        file: rows.iter().rev().find_map(|r| r.file.clone()),
        through_seq: seen.last().map_or(0, |s| s.seq),
        runs: seen.len() as u32,
        passed: count("passed"),
        failed: count("failed"),
        errors: count("error"),
        skipped: count("skipped"),
        flaky: flakes(&seen),
        failing_on_main: failing_on_main(&seen),
        median_ms: rank(&durations, 50),
        p90_ms: rank(&durations, 90),
    }
}

/// Flaky evidence: each fail-then-pass within a leg, and each commit it both failed and
/// passed on (in different legs) that no fail-then-pass already accounts for.
fn flakes(seen: &[Sighting<'_>]) -> Vec<Flake> {
    let mut out: Vec<Flake> = seen
        .iter()
        .filter(|s| s.passed_after_failing())
        .map(|s| Flake::FailThenPass {
            run: s.run.to_string(),
            commit: s.commit.to_string(),
        })
        .collect();
    let mut commits: Vec<&str> = seen.iter().map(|s| s.commit).collect();
    commits.sort_unstable();
    commits.dedup();
    for commit in commits {
        let on: Vec<&Sighting<'_>> = seen.iter().filter(|s| s.commit == commit).collect();
        let explained = on.iter().any(|s| s.passed_after_failing());
        let passed = on.iter().any(|s| s.any(|o| o == "passed"));
        let failed = on.iter().any(|s| s.any(failing));
        if passed && failed && !explained {
            out.push(Flake::SameCommit {
                commit: commit.to_string(),
            });
        }
    }
    out
}

/// The failing streak of the latest main runs, newest backwards.
fn failing_on_main(seen: &[Sighting<'_>]) -> Option<FailingOnMain> {
    let mut streak: Option<FailingOnMain> = None;
    for s in seen.iter().rev().filter(|s| s.mainline) {
        match s.outcome() {
            "skipped" => continue,
            o if failing(o) => {
                let runs = streak.as_ref().map_or(0, |f| f.runs) + 1;
                streak = Some(FailingOnMain {
                    since: s.commit.to_string(),
                    runs,
                });
            }
            _ => break,
        }
    }
    streak
}

/// The nearest-rank percentile `p` of sorted values.
fn rank(sorted: &[i64], p: usize) -> Option<i64> {
    if sorted.is_empty() {
        return None;
    }
    let at = (p * sorted.len()).div_ceil(100).max(1) - 1;
    Some(sorted[at.min(sorted.len() - 1)])
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn past(seq: i64, commit: &str, mainline: bool, attempts: &[&str]) -> Vec<Past> {
        attempts
            .iter()
            .enumerate()
            .map(|(i, o)| Past {
                test: "t.py::t".into(),
                file: Some("t.py".into()),
                seq,
                run: format!("r{seq}"),
                commit: commit.into(),
                mainline,
                attempt: i as u32 + 1,
                outcome: o.to_string(),
                duration_ms: 10 * seq,
            })
            .collect()
    }

    #[test]
    fn counts_flakes_and_the_failing_streak_on_main() {
        let rows: Vec<Past> = [
            past(1, "a", true, &["passed"]),
            past(2, "b", true, &["failed"]),
            past(3, "b", false, &["passed"]),
            past(4, "c", false, &["failed", "passed"]),
            past(5, "d", true, &["skipped"]),
            past(6, "e", true, &["error"]),
        ]
        .concat();
        let s = summary_of(&rows);
        assert_eq!(
            (s.runs, s.passed, s.failed, s.errors, s.skipped),
            (6, 3, 1, 1, 1)
        );
        assert_eq!(
            s.flaky,
            [
                Flake::FailThenPass {
                    run: "r4".into(),
                    commit: "c".into()
                },
                Flake::SameCommit { commit: "b".into() },
            ]
        );
        assert_eq!(
            s.failing_on_main,
            Some(FailingOnMain {
                since: "b".into(),
                runs: 2
            })
        );
        // Durations of the five legs that ran (10, 20, 30, 40, 60): nearest rank.
        assert_eq!((s.median_ms, s.p90_ms), (Some(30), Some(60)));
        assert_eq!(s.through_seq, 6);
    }

    #[test]
    fn a_pass_on_main_ends_the_streak() {
        let rows = [
            past(1, "a", true, &["failed"]),
            past(2, "b", true, &["passed"]),
        ]
        .concat();
        assert_eq!(summary_of(&rows).failing_on_main, None);
        assert!(summary_of(&rows).flaky.is_empty());
    }

    #[test]
    fn ranks() {
        assert_eq!(rank(&[], 50), None);
        assert_eq!(rank(&[7], 90), Some(7));
        assert_eq!(rank(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90), Some(9));
        assert_eq!(rank(&[1, 2, 3, 4], 50), Some(2));
    }
}
