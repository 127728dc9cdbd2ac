//! Rollup, triage and history in selection, on both stores: every triage rule (per-leg
//! pre_existing, same-commit and fail-then-pass flakiness, known_flaky, the link to the
//! change), triage never peeking at later runs, the window's edges, a store that is down, and
//! the guide's walk-through (`docs/src/history.md`) run verbatim.

use crate::history::{Kind, Store, p, record};
use crate::support::{TestRepo, text};
use serde_json::Value;
use std::path::PathBuf;

/// A JUnit report (xunit1, as pytest writes it) of `cases`: (test id, outcome), an id's
/// repeats being its retries.
pub(crate) fn junit(t: &TestRepo, name: &str, cases: &[(&str, &str)]) -> PathBuf {
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

pub(crate) const MONEY: &str = "tests/test_money.py::test_to_cents";
pub(crate) const CART: &str = "tests/test_cart.py::test_total";
pub(crate) const PLUGINS: &str = "tests/test_plugins.py::test_discount";

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
pub(crate) fn triage(t: &TestRepo, store: &Store, run: &str) -> (i32, Value) {
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
pub(crate) fn feature(t: &TestRepo) {
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

/// The selected test files of `gate --affected master...HEAD` with `db` as the store (none: no
/// store configured), each with its reasons; and gate's stderr.
fn selection(t: &TestRepo, db: Option<&str>) -> (Vec<(String, Vec<String>)>, String) {
    let mut cmd = t.gate(&["--affected", "master...HEAD", "--json", "--list"]);
    match db {
        Some(db) => cmd.env("GATE_DB", db),
        None => cmd.env_remove("GATE_DB"),
    };
    let out = cmd.output().unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(&out)));
    let selected = doc["selected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["path"].as_str().unwrap().to_string(),
                crate::support::strings(&s["reasons"]),
            )
        })
        .collect();
    (selected, String::from_utf8_lossy(&out.stderr).into_owned())
}

fn reasons_of<'a>(selected: &'a [(String, Vec<String>)], file: &str) -> Option<&'a [String]> {
    selected
        .iter()
        .find(|(f, _)| f == file)
        .map(|(_, r)| r.as_slice())
}

on_both!(history_only_adds_tests_to_a_selection: signals_sqlite, signals_postgres);
/// A test failing on main and a test that failed with a change to the same file are added,
/// each with a history reason; `[history] signals = false` and a store that is down add
/// nothing and change nothing else.
fn history_only_adds_tests_to_a_selection(kind: Kind) {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(kind, &t);
    // Master: test_plugins fails.
    rec(
        &t,
        &store,
        "m1",
        "1",
        "py",
        &[(PLUGINS, "failed"), (MONEY, "passed")],
    );
    // A branch whose change touched src/shop/untested.py (no test imports it) saw
    // test_prices fail.
    t.branch("untested");
    t.checkout("untested");
    t.append("src/shop/untested.py", "\n# touched\n");
    t.commit("untested");
    let prices = "tests/test_prices.py::test_price";
    rec(&t, &store, "c1", "1", "py", &[(prices, "failed")]);
    // A new branch touching both files.
    t.checkout("master");
    t.branch("both");
    t.checkout("both");
    t.append("src/shop/money.py", "\n# plain\n");
    t.append("src/shop/untested.py", "\n# again\n");
    t.commit("both");
    // No history there: the graph's selection alone (the store is made to freeze the
    // decision in, and holds nothing else).
    let nowhere = t.root.parent().unwrap().join("none.sqlite");
    let (plain, _) = selection(&t, Some(&format!("sqlite:{}", nowhere.display())));
    let runs: i64 = rusqlite::Connection::open(&nowhere)
        .unwrap()
        .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
        .unwrap();
    assert_eq!(runs, 0);
    assert!(
        reasons_of(&plain, "tests/test_money.py").is_some(),
        "{plain:?}"
    );
    let (with, _) = selection(&t, Some(&store.url));
    let plugins = reasons_of(&with, "tests/test_plugins.py").expect("failing on main: added");
    assert_eq!(plugins.len(), 1, "{plugins:?}");
    assert!(
        plugins[0].starts_with("history: failing on main since ")
            && plugins[0].ends_with("(1 main run on py)"),
        "{plugins:?}"
    );
    assert_eq!(
        reasons_of(&with, "tests/test_prices.py").expect("co-failure: added"),
        ["history: failed with a change to src/shop/untested.py in run c1"]
    );
    // Everything the graph selected is still there, with the same reasons.
    for (file, reasons) in &plain {
        assert_eq!(reasons_of(&with, file), Some(reasons.as_slice()), "{file}");
    }
    assert_eq!(with.len(), plain.len() + 2, "{with:?}");
    // A store that is down: the graph's selection, and one warning.
    let (down, err) = selection(&t, Some("postgres://root@127.0.0.1:1/gate"));
    assert_eq!(down, plain);
    assert!(err.contains("history signals skipped"), "{err}");
    // `[history] signals = false` (on the base, where it governs): the graph's selection.
    t.checkout("master");
    t.write(".gate.toml", "[history]\nsignals = false\n");
    t.commit("no signals");
    t.checkout("both");
    t.merge("master", "both, on master");
    let (off, _) = selection(&t, Some(&store.url));
    assert_eq!(off, plain);
}

on_both!(a_store_that_is_down_is_one_line_and_exit_8: store_down_sqlite, store_down_postgres);
/// rollup, triage, history and a recorded run each say so on one line with exit 8 — a
/// recorded run after its tests ran and passed.
fn a_store_that_is_down_is_one_line_and_exit_8(kind: Kind) {
    let t = TestRepo::from_fixture("shop");
    let _store = Store::new(kind, &t);
    let down = match kind {
        Kind::Sqlite => {
            let blocker = t.root.parent().unwrap().join("file");
            std::fs::write(&blocker, "x").unwrap();
            format!("sqlite:{}/h.sqlite", blocker.display())
        }
        Kind::Postgres => "postgres://root@127.0.0.1:1/gate".into(),
    };
    for args in [
        vec!["rollup", "--db", &down],
        vec!["triage", "--db", &down],
        vec!["triage", "--json", "--db", &down],
        vec!["history", MONEY, "--db", &down],
    ] {
        let out = t.gate(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(8), "{args:?}: {}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.lines()
                .next()
                .unwrap()
                .contains("cannot open the history store"),
            "{args:?}: {err}"
        );
        if args.contains(&"--json") {
            let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(doc["kind"], "error", "{doc}");
        }
    }
    feature(&t);
    let out = t
        .gate(&["--affected", "master...HEAD", "--record", "--db", &down])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(8), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("error: the run was not recorded: "), "{err}");
    assert!(
        text(&out).contains("passed"),
        "the tests ran: {}",
        text(&out)
    );
}

on_both!(the_guide_walk_through_runs_verbatim: walk_through_sqlite, walk_through_postgres);
/// The walk-through of the guide's History page (`docs/src/history.md`), verbatim but for its
/// build line (the binary under test is first on PATH): a recorded selected run, two legs from JUnit and go-json, a rollup, and a triage
/// showing each of the four verdicts.
fn the_guide_walk_through_runs_verbatim(kind: Kind) {
    let scratch = TestRepo::from_fixture("shop");
    let store = Store::new(kind, &scratch);
    let db = matches!(kind, Kind::Postgres).then_some(store.url.as_str());
    let out = crate::support::guide_block("history.md", "walkthrough", &scratch, db);
    let all = text(&out);
    for line in [
        "gate record: recorded leg `py` of run main-1 attempt 1",
        "gate record: recorded leg `py` of run 7 attempt 1",
        "gate record: recorded leg `py` of run 7 attempt 2",
        "gate record: recorded leg `go` of run 7 attempt 2",
        "new_regression  high    tests/test_money.py::test_to_cents  [py]",
        "pre_existing    high    tests/test_rounding.py::test_rounding  [py]",
        "flaky           medium  tests/test_net.py::test_fetch  [py]",
        "unknown         low     tests/test_clock.py::test_utc  [py]",
        "gate: 7 failing test(s): 4 new regression, 1 pre existing, 1 flaky, 1 unknown",
        "history: failing on main since ",
        "gate history: tests/test_rounding.py::test_rounding: 3 recorded run(s)",
    ] {
        assert!(all.contains(line), "missing `{line}`:\n{all}");
    }
    let dir = all
        .lines()
        .find_map(|l| l.strip_prefix("walk-through dir: "))
        .unwrap();
    let mut triage = std::process::Command::new(env!("CARGO_BIN_EXE_gate"));
    triage
        .args(["triage", "--run", "7", "--json"])
        .current_dir(dir);
    if let Kind::Postgres = kind {
        triage.env("GATE_DB", &store.url);
    } else {
        triage.env_remove("GATE_DB");
    }
    let out = triage.output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "a new regression: {}",
        text(&out)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    crate::plans::validate("triage.schema.json", &doc);
    assert_eq!(doc["legs"].as_array().unwrap().len(), 2, "{doc}");
    let _ = std::fs::remove_dir_all(std::path::Path::new(dir).parent().unwrap());
}

on_both!(the_rollup_kept_leg_by_leg_is_the_rollup_rebuilt: incremental_sqlite, incremental_postgres);
/// After stretches of legs, the rollup rows of their tests — moved on leg by leg, with legs
/// leaving the window and a failing streak losing its first leg — are what `gate rollup`
/// rebuilds from the window.
fn the_rollup_kept_leg_by_leg_is_the_rollup_rebuilt(kind: Kind) {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(kind, &t);
    let commits: Vec<String> = (0..3)
        .map(|i| {
            t.append("docs/guide.md", &format!("\nedit {i}\n"));
            t.commit(&format!("c{i}")).to_string()
        })
        .collect();
    // (commit, branch, days that pass before it, outcomes of MONEY / CART / PLUGINS).
    let legs: &[(usize, &str, i64, [&str; 3])] = &[
        (0, "master", 0, ["failed", "passed", "passed"]),
        (0, "topic", 1, ["passed", "failed", "skipped"]),
        (1, "master", 40, ["failed", "failed", "passed"]),
        (1, "master", 1, ["error", "passed", "failed"]),
        (1, "topic", 30, ["passed", "passed", "passed"]),
        (2, "master", 25, ["failed", "skipped", "passed"]),
        (2, "topic", 40, ["failed", "failed", "failed"]),
        (2, "master", 60, ["passed", "failed", "passed"]),
    ];
    let rollup = |tests: &[&str]| -> Vec<Vec<String>> {
        let list: Vec<String> = tests.iter().map(|t| format!("'{t}'")).collect();
        store.rows(&format!(
            "SELECT test_id, leg, file, through_seq, last_unix, runs, passed, failed, errors, skipped, flaky, \
             fail_then_pass, failing_since, failing_since_seq, failing_main_runs, durations, median_ms, p90_ms \
             FROM rollup WHERE test_id IN ({}) ORDER BY test_id, leg",
            list.join(", ")
        ))
    };
    for (i, (commit, branch, days, outcomes)) in legs.iter().enumerate() {
        if i > 0 {
            // Time passes: every stored time moves back.
            let d = days * 86_400;
            store.execute(&format!(
                "UPDATE runs SET recorded_unix = recorded_unix - {d}; \
                 UPDATE rollup SET window_from = window_from - {d}, last_unix = last_unix - {d}"
            ));
        }
        // A retry on the third test of every fourth leg: failed, then its outcome.
        let mut cases = vec![(MONEY, outcomes[0]), (CART, outcomes[1])];
        if i % 4 == 3 {
            cases.push((PLUGINS, "failed"));
        }
        cases.push((PLUGINS, outcomes[2]));
        let xml = junit(&t, &format!("leg{i}"), &cases);
        let run = format!("r{i}");
        let out = record(
            &t,
            &store,
            &[
                "--junit",
                p(&xml),
                "--run",
                &run,
                "--leg",
                "py",
                "--commit",
                &commits[*commit],
                "--branch",
                branch,
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        // Compared after a stretch of legs kept one by one (retiring several).
        if i % 4 == 3 {
            let kept = rollup(&[MONEY, CART, PLUGINS]);
            let out = t.gate(&["rollup", "--db", &store.url]).output().unwrap();
            assert_eq!(out.status.code(), Some(0), "{}", text(&out));
            assert_eq!(kept, rollup(&[MONEY, CART, PLUGINS]), "after leg {i}");
        }
    }
    // The last state, spelled out for one test: MONEY's legs in the window (the last 90
    // days: legs 5 to 7), the streak ended by the pass on master.
    let money = &rollup(&[MONEY])[0];
    assert_eq!(&money[5..10], ["2", "1", "1", "0", "0"], "{money:?}");
    assert_eq!(money[14], "0", "{money:?}");
}
