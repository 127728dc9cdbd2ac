//! Every test's result, from the runners themselves (pytest's JUnit report, `go test -json`),
//! in the JSON report and per file — while the human output stays what the runners print.

use crate::support::{TestRepo, text};
use serde_json::Value;

fn results(r: &Value) -> Vec<(String, String, String)> {
    r["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["id"].as_str().unwrap().to_string(),
                t["file"].as_str().unwrap_or("-").to_string(),
                t["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn pytest_results_are_per_test_with_ids_the_selection_uses() {
    let t = TestRepo::from_fixture("shop");
    t.write(
        "tests/test_more.py",
        "import pytest\nimport shop.money\n\n\n@pytest.mark.parametrize('n', [1, 2])\ndef test_n(n):\n    assert n == 1\n\n\nclass TestMore:\n    def test_skip(self):\n        pytest.skip('later')\n",
    );
    t.commit("more tests");
    t.append("src/shop/money.py", "\n");
    t.commit("touch money");
    let out = t
        .gate(&["--affected", "HEAD~2...HEAD", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    crate::plans::validate("report.schema.json", &r);
    let got = results(&r);
    for want in [
        (
            "tests/test_more.py::test_n[1]",
            "tests/test_more.py",
            "passed",
        ),
        (
            "tests/test_more.py::test_n[2]",
            "tests/test_more.py",
            "failed",
        ),
        (
            "tests/test_more.py::TestMore::test_skip",
            "tests/test_more.py",
            "skipped",
        ),
        (
            "tests/test_money.py::test_to_cents",
            "tests/test_money.py",
            "passed",
        ),
        (
            "tests/test_checkout.py::test_pay",
            "tests/test_checkout.py",
            "passed",
        ),
    ] {
        let want = (want.0.to_string(), want.1.to_string(), want.2.to_string());
        assert!(got.contains(&want), "{want:?} in {got:?}");
    }
    let more = r["test_summary"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["file"] == "tests/test_more.py")
        .unwrap();
    assert_eq!(
        (&more["passed"], &more["failed"], &more["skipped"]),
        (&1.into(), &1.into(), &1.into())
    );
    // The human output is pytest's own: gate's JUnit report is not announced in it. (The
    // same run again would reuse the files that passed: `--no-reuse` runs them all.)
    let out = t
        .gate(&["--affected", "HEAD~2...HEAD", "--no-reuse"])
        .output()
        .unwrap();
    assert!(!text(&out).contains("generated xml file"), "{}", text(&out));
    assert!(
        text(&out).contains("1 failed, 5 passed, 1 skipped"),
        "{}",
        text(&out)
    );
}

#[test]
fn go_results_are_per_test_and_the_output_is_plain_go_test() {
    let t = TestRepo::from_fixture("goshop");
    t.write(
        "ws/shop/money/more_test.go",
        "package money\n\nimport \"testing\"\n\nfunc TestSub(t *testing.T) {\n\tt.Run(\"one\", func(t *testing.T) {})\n\tt.Run(\"two\", func(t *testing.T) { t.Fatal(\"broken on purpose\") })\n}\n",
    );
    t.commit("subtests");
    let out = crate::golang::gate(&t, &["--files", "ws/shop/money/money.go", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    crate::plans::validate("report.schema.json", &r);
    let got = results(&r);
    for want in [
        ("ws/shop/money::TestFormat", "passed"),
        ("ws/shop/money::TestSub/one", "passed"),
        ("ws/shop/money::TestSub/two", "failed"),
        ("ws/shop/money::TestSub", "failed"),
    ] {
        let want = (
            want.0.to_string(),
            "./ws/shop/money".to_string(),
            want.1.to_string(),
        );
        assert!(got.contains(&want), "{want:?} in {got:?}");
    }
    let out = crate::golang::gate(&t, &["--files", "ws/shop/money/money.go"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("--- FAIL: TestSub/two") && stdout.contains("broken on purpose"),
        "{stdout}"
    );
    assert!(stdout.contains("FAIL\texample.com/shop/money"), "{stdout}");
    assert!(
        !stdout.contains("=== RUN") && !stdout.contains("--- PASS"),
        "plain go test output: {stdout}"
    );
    assert!(
        !stdout.contains("\"Action\""),
        "no JSON in the human output: {stdout}"
    );
}

#[test]
fn a_go_package_that_does_not_build_is_an_error_result() {
    let t = TestRepo::from_fixture("goshop");
    t.append(
        "ws/shop/money/money.go",
        "\nfunc Broken() int { return \"not an int\" }\n",
    );
    t.commit("a type error");
    let out = crate::golang::gate(&t, &["--affected", "HEAD~1...HEAD", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        results(&r).contains(&(
            "ws/shop/money".into(),
            "./ws/shop/money".into(),
            "error".into()
        )),
        "{:?}",
        results(&r)
    );
    let stdout = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains("FAIL\texample.com/shop/money [build failed]"),
        "{stdout}"
    );
}
