//! `gate … -- ARGS`: the user's arguments reach the real runner after gate's own and before
//! the tests, and can never take a test as their value, end the runner's options early or
//! replace what gate reads results from; a run given them enters no pass in the ledger.

use crate::support::{BREAK_MONEY, TestRepo, strings, text};

/// The shop with money broken in its last commit: every money test fails.
fn shop_with_money_broken() -> TestRepo {
    let t = TestRepo::from_fixture("shop");
    t.append("src/shop/money.py", BREAK_MONEY);
    t.commit("break money");
    t
}

#[test]
fn runner_arguments_reach_pytest_after_gates_options_and_before_the_tests() {
    let t = shop_with_money_broken();
    let out = t
        .gate(&[
            "--affected",
            "HEAD~1...HEAD",
            "--json",
            "--list",
            "--",
            "-x",
            "-q",
        ])
        .output()
        .unwrap();
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    crate::plans::validate("report.schema.json", &r);
    let command = strings(&r["command"]);
    let x = command.iter().position(|w| w == "-x").expect("-x given");
    assert_eq!(command[x + 1], "-q", "{command:?}");
    assert_eq!(command[x + 2], "--", "{command:?}");
    assert!(
        command[x + 3..].iter().all(|w| w.starts_with("./tests/")),
        "every test after them, as a path: {command:?}"
    );
    let listed = t
        .gate(&["--affected", "HEAD~1...HEAD", "--list", "--", "-x"])
        .output()
        .unwrap();
    assert!(
        text(&listed).contains("-m pytest -x -- ./tests/"),
        "{}",
        text(&listed)
    );

    let out = t
        .gate(&["--affected", "HEAD~1...HEAD", "--", "-x"])
        .output()
        .unwrap();
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(
        all.contains("stopping after 1 failures"),
        "pytest read -x: {all}"
    );
    assert!(all.contains("no pass enters the ledger"), "{all}");
}

#[test]
fn verify_passes_runner_arguments_on_too() {
    let t = shop_with_money_broken();
    let out = t
        .gate(&["verify", "HEAD~1...HEAD", "--", "-x"])
        .output()
        .unwrap();
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(all.contains("stopping after 1 failures"), "{all}");
}

#[test]
fn a_runner_argument_that_would_take_a_test_or_gates_report_is_refused() {
    let t = shop_with_money_broken();
    for (args, named) in [
        (&["-k"][..], "`-k` takes a value"),
        (&["-x", "--deselect"][..], "`--deselect` takes a value"),
        (&["--junitxml=mine.xml"][..], "`--junitxml=mine.xml`"),
        (&["-p", "no:gate_probe"][..], "`-p` is not one gate knows"),
        (
            &["--setup-plan"][..],
            "`--setup-plan` is not one gate knows",
        ),
        (&["tests/test_money.py"][..], "is not an option"),
        (&["-x", "--", "-k"][..], "runner argument `--`"),
    ] {
        let mut all = vec!["--affected", "HEAD~1...HEAD", "--"];
        all.extend(args);
        let out = t.gate(&all).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {}", text(&out));
        assert!(stderr.contains(named), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
        assert!(!stderr.contains("passed"), "nothing ran: {stderr}");
    }
}

#[test]
fn runner_arguments_reach_go_test_before_the_packages() {
    let t = TestRepo::from_fixture("goshop");
    t.append("ws/shop/web/templates/index.html", "<p>more</p>\n");
    t.commit("template");
    let out = crate::golang::gate(
        &t,
        &[
            "--affected",
            "HEAD~1...HEAD",
            "--json",
            "--list",
            "--",
            "-v",
            "-count=1",
        ],
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    crate::plans::validate("report.schema.json", &r);
    let argv = strings(&r["go_commands"][0]["argv"]);
    assert_eq!(argv, ["go", "test", "-v", "-count=1", "./web"], "{r:#}");

    // The user's narrowing is theirs, but a run it left with no test is no pass: go test ran
    // no test of the package and said so, and gate exits 13.
    let out = crate::golang::gate(
        &t,
        &["--affected", "HEAD~1...HEAD", "--", "-run=NoSuchTest"],
    );
    let all = text(&out);
    assert_eq!(out.status.code(), Some(13), "{all}");
    assert!(
        all.contains("[no tests to run]") && all.contains("left none of the selected"),
        "go test read -run: {all}"
    );

    for (arg, named) in [
        ("-run", "write `-run=VALUE`"),
        ("TestIndex", "`TestIndex` is not a flag"),
        ("-args", "to the test binary"),
    ] {
        let out = crate::golang::gate(&t, &["--affected", "HEAD~1...HEAD", "--", arg]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{arg}: {}", text(&out));
        assert!(stderr.contains(named), "{arg}: {stderr}");
    }
}

#[test]
fn runner_arguments_reach_unittest_before_its_labels() {
    let t = TestRepo::from_fixture("unitshop");
    let out = t
        .gate(&["--files", "shop/cart.py", "--json", "--list", "--", "-v"])
        .output()
        .unwrap();
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(
        strings(&r["command"]),
        ["python3", "-m", "unittest", "-v", "--", "tests.tests"],
        "{r:#}"
    );
    let out = t
        .gate(&["--files", "shop/cart.py", "--", "-v"])
        .output()
        .unwrap();
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert!(
        all.contains("tests.tests.CartTest") && all.contains("... ok"),
        "unittest read -v: {all}"
    );
}
