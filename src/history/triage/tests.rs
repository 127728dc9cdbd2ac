//! The rules' order and the never-peeks property, over generated histories.

use super::*;
use proptest::prelude::*;

/// One random leg: its commit (of three), whether on main, and each of three tests'
/// attempts (none: not run).
type Spec = (u8, bool, Vec<Vec<u8>>);

/// Legs of one environment, each a shard of three: evidence is the environment's, whichever
/// shard holds it.
fn shard_leg(seq: i64) -> String {
    format!("py#{}/3", seq % 3 + 1)
}

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
            leg: shard_leg(seq),
            commit: commit.clone(),
            branch: None,
            mainline: *mainline,
            base: None,
            recorded_unix: seq,
            results: 1,
            inputs: Some("i".into()),
            environment: "py".into(),
            shard: Some(shard_leg(seq)[3..].to_string()),
        });
        for (t, attempts) in tests.iter().enumerate() {
            // The evidence `gate record` stores: from this test's earlier legs.
            let outcomes: Vec<&str> = attempts.iter().map(|o| OUTCOMES[*o as usize % 4]).collect();
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
                    leg: shard_leg(seq),
                    commit: commit.clone(),
                    mainline: *mainline,
                    attempt: a as u32 + 1,
                    outcome: OUTCOMES[*o as usize % 4].into(),
                    duration_ms: 1,
                    recorded_unix: seq,
                    flake,
                    inputs: Some("i".into()),
                    fingerprint: None,
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
        environment: "py".into(),
        shard: None,
    }
}

fn row(seq: i64, commit: &str, mainline: bool, attempt: u32, outcome: &str) -> Past {
    Past {
        test: "t.py::t".into(),
        file: Some("t.py".into()),
        seq,
        run: format!("r{seq}"),
        leg: "py".into(),
        commit: commit.into(),
        mainline,
        attempt,
        outcome: outcome.into(),
        duration_ms: 1,
        recorded_unix: seq,
        flake: evidence::Flake::None,
        inputs: Some("i".into()),
        fingerprint: None,
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
        judge(&[main_fail.clone(), fail.clone()], &linked),
        (Verdict::PreExisting, Confidence::High)
    );
    // The evidence names the main leg that failed it; a regression's is the change.
    let from = |rows: &[Past]| {
        triage_leg(&leg(9, "b"), rows, &linked, &rules)[0]
            .from
            .clone()
    };
    assert_eq!(
        from(&[main_fail, fail.clone()]),
        Some(Source {
            seq: 1,
            run: "r1".into(),
            leg: "py".into()
        })
    );
    assert_eq!(from(std::slice::from_ref(&fail)), None);
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

/// A same-commit pass under the same leg inputs is flaky evidence when the two results'
/// fingerprints are equal or one is unknown; when they differ (a variable the test reads by
/// name was set otherwise) the next rule decides.
#[test]
fn a_same_commit_pass_counts_only_under_the_same_fingerprint() {
    let linked = Change {
        paths: vec![("src/x.py".into(), "resolved".into())],
        selected: vec![("t.py".into(), "src/x.py".into())],
    };
    let none = |_: &str| None;
    let rules = Rules {
        window_days: 90,
        known_flaky: &none,
    };
    let with = |row: Past, print: Option<&str>| Past {
        fingerprint: print.map(str::to_string),
        ..row
    };
    let judge = |pass: Option<&str>, fail: Option<&str>| {
        let rows = [
            with(row(2, "b", false, 1, "passed"), pass),
            with(row(9, "b", false, 1, "failed"), fail),
        ];
        let got = triage_leg(&leg(9, "b"), &rows, &linked, &rules);
        assert_eq!(got.len(), 1, "{got:?}");
        (got[0].verdict, got[0].confidence, got[0].from.is_some())
    };
    let flaky = (Verdict::Flaky, Confidence::High, true);
    assert_eq!(judge(Some("f1"), Some("f1")), flaky, "equal");
    assert_eq!(
        judge(Some("f1"), Some("f2")),
        (Verdict::NewRegression, Confidence::High, false),
        "they differ: the change's link decides"
    );
    assert_eq!(judge(None, Some("f2")), flaky, "the pass's is unknown");
    assert_eq!(judge(Some("f1"), None), flaky, "the failure's is unknown");
    assert_eq!(judge(None, None), flaky, "neither is known");
}
