//! Python projects that do not use pytest: unittest (`test*.py` inside packages, so `tests.py`
//! is a test file) and Django (`manage.py test` with dotted labels) — detected, said why, and
//! really run with their own command.

use crate::support::{TestRepo, row, selected, text};

#[test]
fn a_unittest_project_is_detected_and_runs_with_unittest() {
    let t = TestRepo::from_fixture("unitshop");
    let r = t.report(&["--files", "shop/money.py"]);
    assert_eq!(r["framework"]["kind"], "unittest", "{r:#}");
    assert!(
        r["framework"]["why"]
            .as_str()
            .unwrap()
            .contains("import unittest and none names pytest"),
        "{r:#}"
    );
    // unittest's pattern is `test*.py`: `tests.py` is a test file.
    assert_eq!(
        selected(&r),
        ["tests/tests.py", "tests/unit/test_money.py"],
        "{r:#}"
    );
    assert_eq!(
        r["command"],
        serde_json::json!([
            "python3",
            "-m",
            "unittest",
            "tests.tests",
            "tests.unit.test_money"
        ])
    );
    let r = t.report(&["--files", "shop/cart.py"]);
    assert_eq!(selected(&r), ["tests/tests.py"], "{r:#}");
    let out = t.gate(&["--files", "shop/cart.py"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("python tests: unittest — "),
        "{}",
        text(&out)
    );
    t.write(
        "shop/cart.py",
        "from shop.money import to_cents\n\n\ndef total(prices):\n    return 0\n",
    );
    t.commit("break the cart");
    let out = t.gate(&["--affected", "HEAD~1...HEAD"]).output().unwrap();
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(
        all.contains("FAIL: test_total (tests.tests.CartTest"),
        "{all}"
    );
    // Said in .gate.toml, the framework needs no detection; pytest is still the default.
    t.write(".gate.toml", "[python]\nframework = \"pytest\"\n");
    t.commit("pytest after all");
    let r = t.report(&["--files", "shop/money.py"]);
    assert_eq!(r["framework"]["kind"], "pytest", "{r:#}");
    assert_eq!(selected(&r), ["tests/unit/test_money.py"], "{r:#}");
}

#[test]
fn a_django_project_runs_manage_py_test_with_dotted_labels() {
    let t = TestRepo::from_fixture("djshop");
    let r = t.report(&["--files", "shop/prices.py"]);
    assert_eq!(r["framework"]["kind"], "django", "{r:#}");
    assert_eq!(r["framework"]["script"], "manage.py", "{r:#}");
    assert_eq!(row(&r, "shop/prices.py")["verdict"], "resolved");
    assert_eq!(selected(&r), ["shop/tests.py"], "{r:#}");
    assert_eq!(
        r["command"],
        serde_json::json!(["python3", "manage.py", "test", "shop.tests"])
    );
    t.write(
        "shop/labels.py",
        "def label(name):\n    return name.upper()\n",
    );
    t.commit("break the labels");
    let out = t.gate(&["--affected", "HEAD~1...HEAD"]).output().unwrap();
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(
        all.contains("FAIL: test_label (shop.test_labels.LabelsTest"),
        "{all}"
    );
    assert!(!all.contains("test_with_tax"), "{all}");
}
