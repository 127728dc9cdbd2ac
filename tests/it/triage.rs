//! Rollup, triage and history in selection, on both stores: every triage rule (per-leg
//! pre_existing, same-commit and fail-then-pass flakiness, known_flaky, the link to the
//! change), triage never peeking at later runs, the window's edges, a store that is down, and
//! the README's walk-through run verbatim.

use crate::history::{Kind, Store, p, record};
use crate::support::{TestRepo, text};
use serde_json::Value;
use std::path::PathBuf;

/// A JUnit report (xunit1, as pytest writes it) of `cases`: (test id, outcome), an id's
/// repeats being its retries.
fn junit(t: &TestRepo, name: &str, cases: &[(&str, &str)]) -> PathBuf {
    let mut xml = String::from("<?xml version=\"1.0\"?><testsuites><testsuite name=\"pytest\">");
    for (id, outcome) in cases {
        let (file, test) = id.split_once("::").unwrap();
        let classname = file.trim_end_matches(".py").replace('/', ".");
        let body = match *outcome {
            "passed" => "",
            "failed" => "<failure message=\"boom\">assert False</failure>",
            "error" => "<error message=\"setup\">fixture broke</error>",
            "skipped" => "<skipped message=\"later\"/>",
            other => panic!("{other}"),
        };
        xml.push_str(&format!(
            "<testcase classname=\"{classname}\" name=\"{test}\" file=\"{file}\" time=\"0.010\">{body}</testcase>"
        ));
    }
    xml.push_str("</testsuite></testsuites>");
    let path = t.root.parent().unwrap().join(format!("{name}.xml"));
    std::fs::write(&path, xml).unwrap();
    path
}

const MONEY: &str = "tests/test_money.py::test_to_cents";
const CART: &str = "tests/test_cart.py::test_total";
const PLUGINS: &str = "tests/test_plugins.py::test_discount";

/// Records `cases` as leg `leg` of run `run`, attempt `attempt`.
fn rec(t: &TestRepo, store: &Store, run: &str, attempt: &str, leg: &str, cases: &[(&str, &str)]) {
    let xml = junit(t, &format!("{run}-{attempt}-{leg}"), cases);
    let out = record(
        t,
        store,
        &[
            "--junit",
            p(&xml),
            "--run",
            run,
            "--attempt",
            attempt,
            "--leg",
            leg,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

/// `gate triage --run RUN --json`: the exit code and the document (checked against its schema).
fn triage(t: &TestRepo, store: &Store, run: &str) -> (i32, Value) {
    let out = t
        .gate(&["triage", "--run", run, "--json", "--db", &store.url])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(&out)));
    crate::plans::validate("triage.schema.json", &doc);
    (out.status.code().unwrap(), doc)
}

/// (test, leg, verdict, confidence) of each verdict.
fn verdicts(doc: &Value) -> Vec<(String, String, String, String)> {
    let mut out: Vec<_> = doc["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let s = |k: &str| v[k].as_str().unwrap().to_string();
            (s("test"), s("leg"), s("verdict"), s("confidence"))
        })
        .collect();
    out.sort();
    out
}

fn v(test: &str, leg: &str, verdict: &str, confidence: &str) -> (String, String, String, String) {
    (test.into(), leg.into(), verdict.into(), confidence.into())
}

/// The shop fixture on `master` (the default branch), with a feature branch checked out whose
/// commit changes `src/shop/money.py` (which selects test_money, test_cart and others, never
/// test_plugins).
fn feature(t: &TestRepo) {
    t.branch("feature");
    t.checkout("feature");
    t.append("src/shop/money.py", "\n# rounding reviewed\n");
    t.commit("money");
}

on_both!(every_rule_decides_once_per_failing_test: rules_sqlite, rules_postgres);
/// pre_existing is per leg; a pass on the same commit is flaky; a linked failure is a new
/// regression; an unlinked one with no history is unknown; a known_flaky one is flaky.
fn every_rule_decides_once_per_failing_test(kind: Kind) {
    let t = TestRepo::from_fixture("shop");
    t.write(".gate.toml", "known_flaky = [\"tests/unit/**\"]\n");
    t.commit("known flaky");
    let store = Store::new(kind, &t);
    // On master: test_money fails on linux only; test_cart passes everywhere.
    rec(
        &t,
        &store,
        "m1",
        "1",
        "linux",
        &[(MONEY, "failed"), (CART, "passed")],
    );
    rec(
        &t,
        &store,
        "m1",
        "1",
        "mac",
        &[(MONEY, "passed"), (CART, "passed")],
    );
    feature(&t);
    // Attempt 1 of run 9: test_plugins passes on mac; attempt 2 it fails there.
    rec(&t, &store, "9", "1", "mac", &[(PLUGINS, "passed")]);
    let nested = "tests/unit/test_nested.py::test_nested";
    rec(
        &t,
        &store,
        "9",
        "2",
        "linux",
        &[
            (MONEY, "failed"),
            (CART, "failed"),
            (PLUGINS, "failed"),
            (nested, "failed"),
        ],
    );
    rec(
        &t,
        &store,
        "9",
        "2",
        "mac",
        &[(MONEY, "failed"), (PLUGINS, "failed"), (CART, "passed")],
    );
    let (code, doc) = triage(&t, &store, "9");
    assert_eq!(
        verdicts(&doc),
        [
            v(CART, "linux", "new_regression", "high"),
            v(MONEY, "linux", "pre_existing", "high"),
            v(MONEY, "mac", "new_regression", "high"),
            v(PLUGINS, "linux", "unknown", "low"),
            v(PLUGINS, "mac", "flaky", "high"),
            v(nested, "linux", "flaky", "medium"),
        ]
    );
    assert_eq!(code, 1, "a new regression exits 1");
    assert_eq!(doc["counts"]["new_regression"], 2);
    let evidence: Vec<&str> = doc["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["evidence"].as_str().unwrap())
        .collect();
    assert!(
        evidence.contains(&"tests/test_cart.py tests changed src/shop/money.py"),
        "{evidence:?}"
    );
    assert!(
        evidence.iter().any(
            |e| e.starts_with("failing on main on linux since ") && e.ends_with("(1 main run)")
        ),
        "{evidence:?}"
    );
    // The human form: verdict, confidence, id, one evidence line; the closing counts.
    let out = t
        .gate(&["triage", "--run", "9", "--db", &store.url])
        .output()
        .unwrap();
    let human = text(&out);
    assert!(
        human.contains(
            "gate: 6 failing test(s): 2 new regression, 1 pre existing, 2 flaky, 1 unknown"
        ),
        "{human}"
    );
    assert!(
        human.contains("pre_existing    high    tests/test_money.py::test_to_cents  [linux]"),
        "{human}"
    );
    // A run with no new regression exits 0; triage of the latest run by default.
    rec(&t, &store, "10", "1", "mac", &[(PLUGINS, "failed")]);
    let out = t.gate(&["triage", "--db", &store.url]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("1 failing test(s): 0 new regression"),
        "{}",
        text(&out)
    );
    // A run nothing was recorded under is an error, not an empty triage.
    let out = t
        .gate(&["triage", "--run", "nope", "--db", &store.url])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
}

on_both!(triage_never_peeks_at_later_runs: never_peeks_sqlite, never_peeks_postgres);
/// A run's verdicts are the same before and after later runs are recorded — ones that would
/// have made its failures pre-existing or flaky, had they come first.
fn triage_never_peeks_at_later_runs(kind: Kind) {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(kind, &t);
    feature(&t);
    rec(
        &t,
        &store,
        "1",
        "1",
        "py",
        &[(MONEY, "failed"), (PLUGINS, "failed")],
    );
    let (_, before) = triage(&t, &store, "1");
    assert_eq!(
        verdicts(&before),
        [
            v(MONEY, "py", "new_regression", "high"),
            v(PLUGINS, "py", "unknown", "low"),
        ]
    );
    // Later: the same commit passes both; master fails both.
    rec(
        &t,
        &store,
        "2",
        "1",
        "py",
        &[(MONEY, "passed"), (PLUGINS, "passed")],
    );
    t.checkout("master");
    rec(
        &t,
        &store,
        "3",
        "1",
        "py",
        &[(MONEY, "failed"), (PLUGINS, "failed")],
    );
    let (_, after) = triage(&t, &store, "1");
    assert_eq!(after["verdicts"], before["verdicts"]);
    // The same failures in a later run do see them.
    t.checkout("feature");
    rec(
        &t,
        &store,
        "4",
        "1",
        "py",
        &[(MONEY, "failed"), (PLUGINS, "failed")],
    );
    let (_, later) = triage(&t, &store, "4");
    assert_eq!(
        verdicts(&later),
        [
            v(MONEY, "py", "flaky", "high"),
            v(PLUGINS, "py", "flaky", "high"),
        ]
    );
}

on_both!(the_window_bounds_what_counts: window_sqlite, window_postgres);
/// A main failure inside the window makes a failure pre-existing; one a day past it does not;
/// a fail-then-pass inside it is flaky evidence. The rollup drops what fell out.
fn the_window_bounds_what_counts(kind: Kind) {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(kind, &t);
    rec(
        &t,
        &store,
        "m1",
        "1",
        "py",
        &[(MONEY, "failed"), (CART, "passed")],
    );
    // A retry within one run: failed, then passed.
    let twice = junit(&t, "retry", &[(PLUGINS, "failed"), (PLUGINS, "passed")]);
    let out = record(
        &t,
        &store,
        &["--junit", p(&twice), "--run", "m2", "--leg", "py"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let age = |run: &str, days: i64| {
        store.execute(&format!(
            "UPDATE runs SET recorded_unix = recorded_unix - {} WHERE run_id = '{run}'",
            days * 86_400
        ));
    };
    age("m1", 89);
    age("m2", 89);
    feature(&t);
    rec(
        &t,
        &store,
        "p1",
        "1",
        "py",
        &[(MONEY, "failed"), (PLUGINS, "failed")],
    );
    let (_, doc) = triage(&t, &store, "p1");
    assert_eq!(
        verdicts(&doc),
        [
            v(MONEY, "py", "pre_existing", "high"),
            v(PLUGINS, "py", "flaky", "medium"),
        ]
    );
    let evidence = doc["verdicts"][1]["evidence"].as_str().unwrap();
    assert_eq!(evidence, "flaky 1 time in 90 days (1 fail-then-pass)");
    // Two days pass: the main runs are 91 days old, out of the window of a new run.
    for run in ["m1", "m2", "p1"] {
        age(run, 2);
    }
    rec(
        &t,
        &store,
        "p2",
        "1",
        "py",
        &[(MONEY, "failed"), (PLUGINS, "failed")],
    );
    let (_, doc) = triage(&t, &store, "p2");
    assert_eq!(
        verdicts(&doc),
        [
            v(MONEY, "py", "new_regression", "high"),
            v(PLUGINS, "py", "unknown", "low"),
        ]
    );
    // p1's verdicts stand: its window is its own.
    let (_, again) = triage(&t, &store, "p1");
    assert_eq!(verdicts(&again)[0].2, "pre_existing");
    // The full rollup counts only the window: the main runs are gone from it.
    let out = t.gate(&["rollup", "--db", &store.url]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        store.rows(&format!(
            "SELECT leg, runs, failed, failing_main_runs, flaky FROM rollup WHERE test_id = '{MONEY}'"
        )),
        [["py", "2", "2", "0", "0"]]
    );
    assert!(
        store
            .rows(&format!("SELECT runs FROM rollup WHERE test_id = '{CART}'"))
            .is_empty(),
        "a test with no run in the window has no rollup row"
    );
}
