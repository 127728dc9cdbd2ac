//! A shadow run that judged nothing is no success, on both stores: a whole-suite report with
//! no result (a JUnit file with no test case; a real `go test -json` stream that ran no test)
//! is said on one line and exits 12 — its JSON too —, its compare recorded and counted
//! unknown by `gate evaluate`, never as a pass.

use crate::history::{Kind, Store};
use crate::shadow::fixture;
use crate::support::{TestRepo, text};
use serde_json::Value;

on_both!(a_report_with_no_result_judges_nothing_and_exits_12: nothing_judged_sqlite, nothing_judged_postgres);
/// A whole-suite report that holds no result judged nothing: said so on one line, never "0
/// missed", and exit 12 (its JSON says so too) — a CI step that audited nothing must not pass.
/// The compare is recorded all the same: `gate evaluate` counts its test files unknown, never
/// passes. A file of another kind given as `go test -json` is exit 10, never a stream with no
/// result.
fn a_report_with_no_result_judges_nothing_and_exits_12(kind: Kind) {
    let t = fixture();
    let store = Store::new(kind, &t);
    let db = store.url.as_str();
    t.branch("feature");
    t.checkout("feature");
    t.write("config/rate.cfg", "2\n");
    t.commit("rate 2");
    let junit = t.root.parent().unwrap().join("full.xml");
    std::fs::write(
        &junit,
        "<testsuites><testsuite name=\"pytest\" tests=\"0\"/></testsuites>",
    )
    .unwrap();
    let args = [
        "shadow",
        "master...HEAD",
        "--junit",
        junit.to_str().unwrap(),
    ];
    let out = t.gate(&args).args(["--db", db, "--json"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(12), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "gate shadow: no test file had a result — nothing judged, {INVENTORY} test file(s) unknown; a shadow run that judged nothing is not a pass (exit 12)"
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("0 missed"), "{stderr}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["exit_code"], 12, "{doc:#}");
    assert_eq!(doc["shadow"], serde_json::json!([]), "{doc:#}");
    nothing_judged_is_unknown(&t, db, INVENTORY);
    // A JUnit file given as `go test -json` is not a stream with no result: exit 10.
    let junit_as_go = t
        .gate(&[
            "shadow",
            "master...HEAD",
            "--go-json",
            junit.to_str().unwrap(),
        ])
        .args(["--db", db])
        .output()
        .unwrap();
    assert_eq!(
        junit_as_go.status.code(),
        Some(10),
        "{}",
        text(&junit_as_go)
    );
    assert!(
        text(&junit_as_go).contains("not a `go test -json` stream"),
        "{}",
        text(&junit_as_go)
    );
}

/// The test files of `fixture()`: a shadow run with no result leaves each unknown.
const INVENTORY: u64 = 9;

/// `gate evaluate` after one shadow compare that judged nothing: counted, each of its
/// `inventory` test files unknown, no failure and no recall — nothing counted as a pass.
fn nothing_judged_is_unknown(t: &TestRepo, db: &str, inventory: u64) {
    let out = t
        .gate(&["evaluate", "--json", "--db", db])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let e: Value = serde_json::from_slice(&out.stdout).unwrap();
    crate::plans::validate("evaluate.schema.json", &e);
    assert_eq!(e["runs"], 1, "{e:#}");
    assert_eq!(e["unknown"], inventory, "{e:#}");
    assert_eq!(
        (e["failing"].as_u64(), e["caught"].as_u64()),
        (Some(0), Some(0)),
        "{e:#}"
    );
    assert_eq!(e["failure_recall"], Value::Null, "{e:#}");
}

on_both!(a_go_stream_that_ran_no_test_judges_nothing: go_nothing_sqlite, go_nothing_postgres);
/// A real `go test -json` stream of every package with `-run '^$'`: each package started and
/// said `[no tests to run]`, no test ran, so the stream holds no result — the shadow judged
/// nothing and exits 12, its compare counted unknown.
fn a_go_stream_that_ran_no_test_judges_nothing(kind: Kind) {
    let t = TestRepo::from_fixture("goshop");
    let store = Store::new(kind, &t);
    let db = store.url.as_str();
    t.branch("feature");
    t.checkout("feature");
    t.write(
        "ws/lib/strutil/strutil.go",
        "package strutil\n\n// Upper no longer shouts.\nfunc Upper(s string) string { return s }\n",
    );
    t.commit("Upper is the identity");
    let mut stream = Vec::new();
    for module in ["ws/lib", "ws/shop"] {
        let ran = std::process::Command::new("go")
            .args(["test", "-count=1", "-json", "-run", "^$", "./..."])
            .current_dir(t.root.join(module))
            .envs(crate::golang::go_vars())
            .output()
            .unwrap();
        assert_eq!(ran.status.code(), Some(0), "{}", text(&ran));
        stream.extend(ran.stdout);
    }
    assert!(
        String::from_utf8_lossy(&stream).contains("[no tests to run]"),
        "a real stream of packages that ran no test"
    );
    let file = t.root.parent().unwrap().join("go-test.json");
    std::fs::write(&file, &stream).unwrap();
    let out = t
        .gate(&[
            "shadow",
            "master...HEAD",
            "--go-json",
            file.to_str().unwrap(),
        ])
        .args(["--db", db, "--json"])
        .envs(crate::golang::go_vars())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(12), "{stderr}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["exit_code"], 12, "{doc:#}");
    let line = stderr
        .lines()
        .find(|l| l.starts_with("gate shadow: no test file had a result — nothing judged, "))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(line.ends_with("(exit 12)"), "{line}");
    let unknown: u64 = line
        .split(", ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!(unknown > 0, "{line}");
    nothing_judged_is_unknown(&t, db, unknown);
}
