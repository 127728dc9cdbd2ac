//! `always_run` entries in each form, matched against a tree's tests.

use std::collections::BTreeSet;

#[test]
fn always_run_forms() {
    let tests: BTreeSet<String> = [
        "tests/test_health.py",
        "tests/smoke/test_a.py",
        "tests/test_cart.py",
        "other/tests/test_health.py",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let matches = |entry: &str| {
        let c = crate::config::Config::parse(None, &format!("always_run = [{entry:?}]\n")).unwrap();
        c.always_run[0].matches(&tests)
    };
    assert_eq!(matches("tests/smoke/**"), ["tests/smoke/test_a.py"]);
    assert_eq!(
        matches("tests.test_health::*"),
        ["other/tests/test_health.py", "tests/test_health.py"]
    );
    assert_eq!(
        matches("tests/test_cart.py::test_total"),
        ["tests/test_cart.py::test_total"]
    );
    assert!(matches("tests/test_gone.py").is_empty());
    // A dotted id whose glob cannot compile is an error when the file is read.
    assert!(crate::config::Config::parse(None, "always_run = [\"a.b[\"]\n").is_err());
}
