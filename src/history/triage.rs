//! Triage: every failing test of a recorded leg gets exactly one verdict, by ordered rules —
//! passed on the same commit → `flaky`; failing on main on the same leg → `pre_existing`;
//! selected because of a changed file, with no flaky evidence → `new_regression`; unlinked but
//! known flaky or with flaky evidence → `flaky`; otherwise `unknown`. It never peeks: only
//! what was recorded before the leg (by the store's sequence) counts, so a verdict never
//! changes when later runs arrive. Pure: the store fetches, this decides.

use super::evidence::{self, Past};
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Verdict {
    NewRegression,
    PreExisting,
    Flaky,
    Unknown,
}

impl Verdict {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Verdict::NewRegression => "new_regression",
            Verdict::PreExisting => "pre_existing",
            Verdict::Flaky => "flaky",
            Verdict::Unknown => "unknown",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Confidence {
    High,
    Medium,
    Low,
}

/// A recorded leg, as triage reads it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct LegInfo {
    pub seq: i64,
    pub run: String,
    pub attempt: u32,
    pub leg: String,
    pub commit: String,
    pub branch: Option<String>,
    pub mainline: bool,
    /// The base its change was taken against; none on the default branch.
    pub base: Option<String>,
    pub recorded_unix: i64,
    /// How many results it holds: a leg with none judged nothing.
    pub results: i64,
    /// Its inputs digest (none: recorded before gate kept it).
    pub inputs: Option<String>,
}

/// What a leg knows of its change: each changed path with its verdict, and each selected test
/// unit with the changed path that selected it.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub(crate) struct Change {
    pub paths: Vec<(String, String)>,
    pub selected: Vec<(String, String)>,
}

/// One failing test's verdict.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub(crate) struct Triaged {
    pub test: String,
    pub leg: String,
    pub verdict: Verdict,
    pub confidence: Confidence,
    /// One line: why.
    pub evidence: String,
}

/// What triage is told besides the history.
pub(crate) struct Rules<'a> {
    /// The window, in days, for messages.
    pub window_days: u64,
    /// The `known_flaky` glob a test file matches, if any.
    pub known_flaky: &'a dyn Fn(&str) -> Option<String>,
}

/// The verdicts of `leg`'s failing tests, from `rows`: the history of those tests on the
/// leg, ordered by test, sequence and attempt (rows of later legs may be among them; they
/// are never read).
pub(crate) fn triage_leg(
    leg: &LegInfo,
    rows: &[Past],
    change: &Change,
    rules: &Rules<'_>,
) -> Vec<Triaged> {
    rows.chunk_by(|a, b| a.test == b.test)
        .filter_map(|test_rows| {
            let own: Vec<&Past> = test_rows.iter().filter(|r| r.seq == leg.seq).collect();
            let last = own.last()?;
            if !evidence::failing(&last.outcome) {
                return None;
            }
            // Never peeks: the rows before this leg, and nothing after it.
            let prior: Vec<&Past> = test_rows.iter().filter(|r| r.seq < leg.seq).collect();
            Some(judge(leg, last, &own, &prior, change, rules))
        })
        .collect()
}

/// A verdict, how sure it is, and its one line of evidence.
type Judgement = (Verdict, Confidence, String);

fn judge(
    leg: &LegInfo,
    last: &Past,
    own: &[&Past],
    prior: &[&Past],
    change: &Change,
    rules: &Rules<'_>,
) -> Triaged {
    let (verdict, confidence, evidence) = passed_on_commit(leg, own, prior)
        .unwrap_or_else(|| from_history(leg, last, prior, change, rules));
    Triaged {
        test: last.test.clone(),
        leg: leg.leg.clone(),
        verdict,
        confidence,
        evidence,
    }
}

/// The first rule: a pass on the leg's commit, on an earlier leg or an earlier try of this one.
fn passed_on_commit(leg: &LegInfo, own: &[&Past], prior: &[&Past]) -> Option<Judgement> {
    // A pass on the same commit is flaky evidence only under the same inputs: with another
    // `[env]` value or interpreter variable it is another experiment, not a retry.
    if let Some(p) = prior.iter().find(|r| {
        r.commit == leg.commit
            && r.outcome == "passed"
            && leg.inputs.is_some()
            && r.inputs == leg.inputs
    }) {
        return Some((
            Verdict::Flaky,
            Confidence::High,
            format!(
                "passed on the same commit {} in run {} (#{})",
                short(&leg.commit),
                p.run,
                p.seq
            ),
        ));
    }
    own.iter().any(|r| r.outcome == "passed").then(|| {
        (
            Verdict::Flaky,
            Confidence::High,
            format!(
                "passed on an earlier try of this run, on the same commit {}",
                short(&leg.commit)
            ),
        )
    })
}

/// The rules after a same-commit pass, from the test's history on the leg and the change:
/// failing on main, a regression the change selected, known or recorded flakiness, else
/// unknown.
fn from_history(
    leg: &LegInfo,
    last: &Past,
    prior: &[&Past],
    change: &Change,
    rules: &Rules<'_>,
) -> Judgement {
    let summary = (!prior.is_empty()).then(|| evidence::rollup_of(prior, 0));
    if let Some(f) = summary.as_ref().and_then(|s| s.failing_on_main.as_ref()) {
        return (
            Verdict::PreExisting,
            Confidence::High,
            format!(
                "failing on main on {} since {} ({} main run{})",
                leg.leg,
                short(&f.since),
                f.runs,
                if f.runs == 1 { "" } else { "s" }
            ),
        );
    }
    let flakes = summary.as_ref().map_or(Flakes::default(), |s| Flakes {
        all: s.flaky,
        reruns: s.fail_then_pass,
    });
    let file = last.file.as_deref();
    let causes = links(change, &last.test, file);
    if !causes.is_empty() && flakes.all == 0 {
        return (
            Verdict::NewRegression,
            Confidence::High,
            format!(
                "{} tests changed {}",
                file.unwrap_or(&last.test),
                causes.join(", ")
            ),
        );
    }
    let in_window = format!("in {} days", rules.window_days);
    let unlinked = causes
        .is_empty()
        .then(|| unlinked_flaky(file, &flakes, &in_window, rules));
    unlinked.flatten().unwrap_or_else(|| {
        (
            Verdict::Unknown,
            Confidence::Low,
            unknown_why(change, &causes, &flakes, &in_window),
        )
    })
}

/// A failure nothing in the change links to: flaky when its file is known flaky, or when the
/// window holds flaky evidence of it.
fn unlinked_flaky(
    file: Option<&str>,
    flakes: &Flakes,
    in_window: &str,
    rules: &Rules<'_>,
) -> Option<Judgement> {
    if let Some(glob) = file.and_then(|f| (rules.known_flaky)(f)) {
        return Some((
            Verdict::Flaky,
            Confidence::Medium,
            format!("unlinked to the change, and known flaky (`known_flaky`: {glob})"),
        ));
    }
    (flakes.all > 0).then(|| {
        (
            Verdict::Flaky,
            Confidence::Medium,
            format!(
                "flaky {} {in_window} ({})",
                times(flakes.all),
                flakes.kinds()
            ),
        )
    })
}

/// A commit as messages show it.
fn short(commit: &str) -> String {
    commit[..12.min(commit.len())].to_string()
}

/// Why nothing explains a failure.
fn unknown_why(change: &Change, causes: &[String], flakes: &Flakes, in_window: &str) -> String {
    if !causes.is_empty() {
        format!(
            "tests changed {}, but flaky {} {in_window} ({})",
            causes.join(", "),
            times(flakes.all),
            flakes.kinds()
        )
    } else if let Some((path, v)) = change
        .paths
        .iter()
        .find(|(_, v)| v == "named_full" || v == "refused")
    {
        format!("no edge links it to the change; {path} ({v}) may affect the whole suite")
    } else if change.paths.is_empty() {
        "no change recorded for this run (on the default branch, or no base): nothing links it"
            .to_string()
    } else {
        format!(
            "no edge links it to the {} changed file(s), and no history explains it",
            change.paths.len()
        )
    }
}

/// The changed paths that selected the test (its file or Go unit, or a node id of it).
fn links(change: &Change, test: &str, file: Option<&str>) -> Vec<String> {
    let mut causes: Vec<String> = change
        .selected
        .iter()
        .filter(|(unit, _)| {
            Some(unit.as_str()) == file
                || unit == test
                || test
                    .strip_prefix(unit.as_str())
                    .is_some_and(|rest| rest.starts_with("::") || rest.starts_with('['))
        })
        .map(|(_, cause)| cause.clone())
        .collect();
    causes.sort();
    causes.dedup();
    causes
}

fn times(n: u32) -> String {
    if n == 1 {
        "1 time".into()
    } else {
        format!("{n} times")
    }
}

/// How much flaky evidence a test has in the window, and how much of it is fail-then-pass.
#[derive(Default)]
struct Flakes {
    all: u32,
    reruns: u32,
}

impl Flakes {
    fn kinds(&self) -> String {
        let same = self.all - self.reruns;
        let mut parts = Vec::new();
        if self.reruns > 0 {
            parts.push(format!("{} fail-then-pass", self.reruns));
        }
        if same > 0 {
            parts.push(format!("{same} failed and passed on one commit"));
        }
        parts.join(", ")
    }
}

/// The closing line's counts, in the verdicts' order.
pub(crate) fn counts(verdicts: &[Triaged]) -> [(Verdict, usize); 4] {
    [
        Verdict::NewRegression,
        Verdict::PreExisting,
        Verdict::Flaky,
        Verdict::Unknown,
    ]
    .map(|v| (v, verdicts.iter().filter(|t| t.verdict == v).count()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// One random leg: its commit (of three), whether on main, and each of three tests'
    /// attempts (none: not run).
    type Spec = (u8, bool, Vec<Vec<u8>>);

    fn history(specs: &[Spec]) -> (Vec<LegInfo>, Vec<Past>) {
        const OUTCOMES: [&str; 4] = ["passed", "failed", "error", "skipped"];
        let mut legs = Vec::new();
        let mut rows = Vec::new();
        for (i, (commit, mainline, tests)) in specs.iter().enumerate() {
            let seq = i as i64 + 1;
            let commit = format!("c{commit}");
            legs.push(LegInfo {
                seq,
                run: format!("r{seq}"),
                attempt: 1,
                leg: "py".into(),
                commit: commit.clone(),
                branch: None,
                mainline: *mainline,
                base: None,
                recorded_unix: seq,
                results: 1,
                inputs: Some("i".into()),
            });
            for (t, attempts) in tests.iter().enumerate() {
                // The evidence `gate record` stores: from this test's earlier legs.
                let outcomes: Vec<&str> =
                    attempts.iter().map(|o| OUTCOMES[*o as usize % 4]).collect();
                let earlier = |pred: fn(&str) -> bool| {
                    rows.iter().any(|r: &Past| {
                        r.test == format!("t{t}.py::t") && r.commit == commit && pred(&r.outcome)
                    })
                };
                let flake = evidence::flake_of(
                    &outcomes,
                    earlier(evidence::failing),
                    earlier(|o| o == "passed"),
                );
                for (a, o) in attempts.iter().enumerate() {
                    rows.push(Past {
                        test: format!("t{t}.py::t"),
                        file: Some(format!("t{t}.py")),
                        seq,
                        run: format!("r{seq}"),
                        commit: commit.clone(),
                        mainline: *mainline,
                        attempt: a as u32 + 1,
                        outcome: OUTCOMES[*o as usize % 4].into(),
                        duration_ms: 1,
                        recorded_unix: seq,
                        flake,
                        inputs: Some("i".into()),
                    });
                }
            }
        }
        rows.sort_by(|a, b| (&a.test, a.seq, a.attempt).cmp(&(&b.test, b.seq, b.attempt)));
        (legs, rows)
    }

    fn spec() -> impl Strategy<Value = Spec> {
        (
            0u8..3,
            any::<bool>(),
            proptest::collection::vec(proptest::collection::vec(0u8..4, 0..3), 3),
        )
    }

    proptest! {
        /// A leg's verdicts depend only on what was recorded before it: appending any later
        /// legs to the history changes none of them.
        #[test]
        fn never_peeks(
            specs in proptest::collection::vec(spec(), 1..12),
            later in proptest::collection::vec(spec(), 1..8),
        ) {
            let change = Change {
                paths: vec![("src/x.py".into(), "resolved".into())],
                selected: vec![("t0.py".into(), "src/x.py".into())],
            };
            let flaky = |f: &str| (f == "t2.py").then(|| "t2.py".to_string());
            let rules = Rules { window_days: 90, known_flaky: &flaky };
            let (legs, rows) = history(&specs);
            let all: Vec<Spec> = specs.iter().chain(&later).cloned().collect();
            let (_, longer) = history(&all);
            for leg in &legs {
                let before = triage_leg(leg, &rows, &change, &rules);
                let after = triage_leg(leg, &longer, &change, &rules);
                prop_assert_eq!(&before, &after);
                // Exactly one verdict per failing test of the leg.
                let failing = rows
                    .chunk_by(|a, b| a.test == b.test)
                    .filter(|t| {
                        t.iter()
                            .rfind(|r| r.seq == leg.seq)
                            .is_some_and(|r| evidence::failing(&r.outcome))
                    })
                    .count();
                prop_assert_eq!(before.len(), failing);
            }
        }
    }

    fn leg(seq: i64, commit: &str) -> LegInfo {
        LegInfo {
            seq,
            run: format!("r{seq}"),
            attempt: 1,
            leg: "py".into(),
            commit: commit.into(),
            branch: None,
            mainline: false,
            base: None,
            recorded_unix: 0,
            results: 1,
            inputs: Some("i".into()),
        }
    }

    fn row(seq: i64, commit: &str, mainline: bool, attempt: u32, outcome: &str) -> Past {
        Past {
            test: "t.py::t".into(),
            file: Some("t.py".into()),
            seq,
            run: format!("r{seq}"),
            commit: commit.into(),
            mainline,
            attempt,
            outcome: outcome.into(),
            duration_ms: 1,
            recorded_unix: seq,
            flake: evidence::Flake::None,
            inputs: Some("i".into()),
        }
    }

    /// The rules' order: a same-commit pass outranks failing on main, which outranks the link.
    #[test]
    fn the_first_rule_that_holds_decides() {
        let linked = Change {
            paths: vec![("src/x.py".into(), "resolved".into())],
            selected: vec![("t.py".into(), "src/x.py".into())],
        };
        let none = |_: &str| None;
        let rules = Rules {
            window_days: 90,
            known_flaky: &none,
        };
        let judge = |rows: &[Past], change: &Change| {
            let got = triage_leg(&leg(9, "b"), rows, change, &rules);
            assert_eq!(got.len(), 1, "{got:?}");
            (got[0].verdict, got[0].confidence)
        };
        let fail = row(9, "b", false, 1, "failed");
        let main_fail = row(1, "a", true, 1, "failed");
        let same_pass = row(2, "b", false, 1, "passed");
        assert_eq!(
            judge(&[main_fail.clone(), same_pass, fail.clone()], &linked),
            (Verdict::Flaky, Confidence::High)
        );
        assert_eq!(
            judge(&[main_fail, fail.clone()], &linked),
            (Verdict::PreExisting, Confidence::High)
        );
        assert_eq!(
            judge(std::slice::from_ref(&fail), &linked),
            (Verdict::NewRegression, Confidence::High)
        );
        assert_eq!(
            judge(std::slice::from_ref(&fail), &Change::default()),
            (Verdict::Unknown, Confidence::Low)
        );
        // Linked, but with a fail-then-pass before: not a new regression.
        let rerun = |attempt, outcome| Past {
            flake: evidence::Flake::FailThenPass,
            ..row(3, "z", false, attempt, outcome)
        };
        let retry = [rerun(1, "failed"), rerun(2, "passed"), fail.clone()];
        assert_eq!(judge(&retry, &linked), (Verdict::Unknown, Confidence::Low));
        assert_eq!(
            judge(&retry, &Change::default()),
            (Verdict::Flaky, Confidence::Medium)
        );
        // A pass on main ends the streak; a test that passed in the end is not failing.
        let healed = [
            row(1, "a", true, 1, "failed"),
            row(2, "c", true, 1, "passed"),
            fail,
        ];
        assert_eq!(
            judge(&healed, &linked),
            (Verdict::NewRegression, Confidence::High)
        );
        let passed = [
            row(9, "b", false, 1, "failed"),
            row(9, "b", false, 2, "passed"),
        ];
        assert!(triage_leg(&leg(9, "b"), &passed, &linked, &rules).is_empty());
    }
}
