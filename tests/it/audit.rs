//! `gate audit` on a fixture with dependencies no static analysis can see: every miss found,
//! a rule suggested for each, and the next audit complete once the rules are in.

use crate::plans::validate;
use crate::support::TestRepo;
use serde_json::Value;

fn audit(t: &TestRepo, args: &[&str]) -> (Option<i32>, Value, String) {
    let mut all = vec!["audit", "--json"];
    all.extend(args);
    let out = t.gate(&all).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let value: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{stderr}", String::from_utf8_lossy(&out.stdout)));
    validate("audit.schema.json", &value);
    (out.status.code(), value, stderr)
}

fn misses(a: &Value) -> Vec<(String, String)> {
    a["misses"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| {
            m["tests"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| {
                    (
                        t.as_str().unwrap().to_string(),
                        m["file"].as_str().unwrap().to_string(),
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn audit_finds_each_hidden_dependency_and_its_rules_make_the_next_audit_complete() {
    let t = TestRepo::from_fixture("hidden");
    let (code, a, stderr) = audit(&t, &[]);
    let first = a.clone();
    assert_eq!(code, Some(1), "misses found: {stderr}");
    assert_eq!(
        misses(&a),
        [
            ("tests/test_docs.py".into(), "docs/example.json".into()),
            ("tests/test_tool.py".into(), "tools/summarize.py".into()),
        ]
    );
    assert_eq!(a["missed"], 2);
    // test_plain → hidden/__init__.py, hidden/report.py; test_plugin → plugins/extra.py (its
    // `os.path.join(*["plugins", name + ".py"])` is the glob plugins/*.py); every test →
    // pyproject.toml (named_full).
    assert_eq!(a["covered"], 3, "{a:#}");
    assert_eq!(a["named_full"], 4, "{a:#}");
    assert_eq!(a["shared"], serde_json::json!(["pyproject.toml"]));
    // `from hidden import types` under TYPE_CHECKING is a static edge no run confirms; so is
    // test_plugin's `name + ".py"`, a path of any Python file (`**/*.py`) as far as the text says.
    assert_eq!(
        a["over_selection"]["top"][0],
        serde_json::json!(["src/hidden/types.py", 2])
    );
    let rules: Vec<String> = a["misses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["rule"].as_str().unwrap().to_string())
        .collect();
    assert!(
        rules[0]
            .contains("[[depends]]\ntests = \"tests/test_docs.py\"\non = \"docs/example.json\""),
        "{rules:?}"
    );

    t.write(".gate.toml", &(rules.join("\n\n") + "\n"));
    t.commit("the audit's rules");
    let (code, a, stderr) = audit(&t, &[]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(a["missed"], 0, "{a:#}");
    assert_eq!(a["completeness"], 1.0);
    // And gate now selects the test that reads each file.
    let r = t.report(&["--files", "tools/summarize.py"]);
    assert_eq!(
        crate::support::selected(&r),
        ["tests/test_plugin.py", "tests/test_tool.py"]
    );
    // Both audits were kept: evaluate's graph completeness is theirs, summed.
    let shadow = t.gate(&["shadow", "HEAD~1...HEAD"]).output().unwrap();
    assert!(
        shadow.status.code().is_some(),
        "{}",
        crate::support::text(&shadow)
    );
    let out = t.gate(&["evaluate", "--json"]).output().unwrap();
    let e: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", crate::support::text(&out)));
    let n = |v: &Value, k: &str| v[k].as_f64().unwrap();
    let accounted = |v: &Value| n(v, "covered") + n(v, "named_full");
    let expected =
        (accounted(&first) + accounted(&a)) / (n(&first, "observed") + n(&a, "observed"));
    let got = e["graph_completeness"].as_f64().unwrap();
    assert!((got - expected).abs() < 1e-12, "{got} vs {expected}: {e:#}");
    assert!(got < 1.0, "the first audit's misses count");
}

#[test]
fn an_interrupted_audit_resumes_and_out_reports_what_changed_since() {
    let t = TestRepo::from_fixture("hidden");
    let kept = t.root.parent().unwrap().join("observed.json");
    let out = kept.to_str().unwrap();
    let (_, a, _) = audit(&t, &["--tests", "tests/test_docs.py", "--out", out]);
    assert_eq!(
        (a["traced"].as_u64(), a["reused"].as_u64()),
        (Some(1), Some(0))
    );
    let (_, a, _) = audit(&t, &["--out", out]);
    assert_eq!(
        (a["traced"].as_u64(), a["reused"].as_u64()),
        (Some(3), Some(1)),
        "{a:#}"
    );
    let since = &a["since"];
    assert!(
        since["added"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p == &serde_json::json!(["tests/test_tool.py", "tools/summarize.py"])),
        "{since:#}"
    );
    assert_eq!(since["removed"], serde_json::json!([]));
    // A changed tree is traced afresh.
    t.append("tests/test_plain.py", "\n");
    let (_, a, _) = audit(&t, &["--out", out]);
    assert_eq!(a["reused"], 0);
    let kept: Value = serde_json::from_str(&std::fs::read_to_string(&kept).unwrap()).unwrap();
    assert!(
        kept["tests"]["tests/test_docs.py"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f == "docs/example.json")
    );
}

#[test]
fn audit_without_strace_says_so() {
    let t = TestRepo::from_fixture("hidden");
    let out = t
        .gate(&["audit"])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    // A tool gate drives that cannot start is a runner problem (4), not usage (3).
    assert_eq!(out.status.code(), Some(4));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("error: strace is not installed: gate audit traces each test with it"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn audit_traces_go_packages_and_finds_testdata_read_through_a_computed_path() {
    let t = TestRepo::from_fixture("goshop");
    t.write("ws/shop/money/testdata/rates.json", "{\"eur\": 1}\n");
    t.write(
        "ws/shop/cart/rates_test.go",
        r#"package cart_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// The path is computed at run time: money's testdata, seen from this file.
func TestRatesShared(t *testing.T) {
	_, here, _, _ := runtime.Caller(0)
	// Decoded, not written: no path expression gate evaluates (joins and concatenations
	// anchored on runtime.Caller are: tests/it/go_anchors.rs).
	rest, _ := base64.StdEncoding.DecodeString("Ly4uL21vbmV5L3Rlc3RkYXRhL3JhdGVzLmpzb24=")
	if _, err := os.ReadFile(filepath.Dir(here) + string(rest)); err != nil {
		t.Fatal(err)
	}
}
"#,
    );
    t.commit("a shared testdata file");
    let go_audit = |t: &TestRepo| {
        let out = t
            .gate(&["audit", "--json", "--tests", "./ws/shop/*"])
            .envs(crate::golang::go_vars())
            .output()
            .unwrap();
        let a: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        validate("audit.schema.json", &a);
        (out.status.code(), a)
    };
    let (code, a) = go_audit(&t);
    assert_eq!(code, Some(1), "{a:#}");
    assert_eq!(
        misses(&a),
        [(
            "./ws/shop/cart".to_string(),
            "ws/shop/money/testdata/rates.json".to_string()
        )]
    );
    assert!(
        a["runs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["exit_code"] == 0),
        "{a:#}"
    );
    let rule = a["misses"][0]["rule"].as_str().unwrap().to_string();
    t.write(".gate.toml", &(rule + "\n"));
    t.commit("the audit's rule");
    let (code, a) = go_audit(&t);
    assert_eq!(code, Some(0), "{a:#}");
    assert_eq!(a["missed"], 0);
    assert_eq!(a["completeness"], 1.0, "{a:#}");
}
