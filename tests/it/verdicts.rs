//! One row per changed file with the right verdict, the run-level verdicts, what each runs,
//! and the exit codes — with real pytest.

use crate::support::{TestRepo, row, selected, strings};

#[test]
fn each_per_file_verdict() {
    let t = TestRepo::from_fixture("shop");
    t.append("src/shop/money.py", "\n");
    t.append("README.md", "more\n");
    t.append("docs/guide.md", "more\n");
    t.append("pyproject.toml", "\n");
    t.append("scripts/deploy.ini", "port = 22\n");
    t.append("src/shop/untested.py", "\n");
    t.commit("mixed");
    let r = t.report(&["--affected", "HEAD~1...HEAD"]);
    let verdict = |p: &str| row(&r, p)["verdict"].as_str().unwrap().to_string();
    assert_eq!(verdict("src/shop/money.py"), "resolved");
    assert_eq!(verdict("README.md"), "inert");
    assert_eq!(verdict("docs/guide.md"), "inert");
    assert_eq!(verdict("pyproject.toml"), "named_full");
    assert_eq!(
        strings(&row(&r, "pyproject.toml")["reasons"]),
        ["project and pytest configuration"]
    );
    assert_eq!(verdict("scripts/deploy.ini"), "refused");
    assert_eq!(
        strings(&row(&r, "scripts/deploy.ini")["reasons"]),
        [
            "scripts/deploy.ini: no import, reference edge or [[depends]] rule reaches it, and it is not inert"
        ]
    );
    let untested = row(&r, "src/shop/untested.py");
    assert_eq!(untested["verdict"], "resolved");
    assert_eq!(untested["tests"].as_array().unwrap().len(), 0);
    assert!(
        untested["reasons"][0]
            .as_str()
            .unwrap()
            .contains("untested file")
    );
    assert_eq!(r["verdict"], "refused");
    assert_eq!(
        r["files"].as_array().unwrap().len(),
        6,
        "exactly one row per changed file"
    );
}

#[test]
fn bounded_runs_the_subset_and_says_it_is_not_the_full_suite() {
    let t = TestRepo::from_fixture("shop");
    t.append("src/shop/plugins/discount.py", "\n");
    t.commit("plugin");
    let out = t.gate(&["--affected", "HEAD~1...HEAD"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("tests/test_plugins.py ."),
        "pytest ran the selected file: {stdout}"
    );
    assert!(stdout.contains("1 passed"), "{stdout}");
    assert!(
        stdout.contains("subset run — non-authoritative, full suite still owed"),
        "{stdout}"
    );
    assert!(
        stdout
            .trim_end()
            .ends_with("gate: 1 changed file → 1 resolved; 1 of 7 test files selected (bounded)"),
        "{stdout}"
    );
}

#[test]
fn a_failing_selected_test_exits_1() {
    let t = TestRepo::from_fixture("shop");
    t.write(
        "src/shop/money.py",
        "CENTS = 10\n\n\ndef to_cents(amount):\n    return round(amount * CENTS)\n",
    );
    t.commit("break money");
    let out = t.gate(&["--affected", "HEAD~1...HEAD"]).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let r: serde_json::Value = serde_json::from_slice(
        &t.gate(&["--affected", "HEAD~1...HEAD", "--json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert_eq!(r["run"]["outcome"], "failed");
}

#[test]
fn refused_aborts_with_exit_2_and_runs_nothing() {
    let t = TestRepo::from_fixture("shop");
    t.append("scripts/deploy.ini", "port = 22\n");
    t.append("src/shop/money.py", "\n");
    t.commit("script");
    let out = t.gate(&["--affected", "HEAD~1...HEAD"]).output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(!stdout.contains("passed"), "nothing ran: {stdout}");
    assert!(
        stderr.contains("refused — scripts/deploy.ini: no import"),
        "{stderr}"
    );
    assert!(
        stderr.contains("--affected-decision"),
        "says how to record a decision: {stderr}"
    );
}

#[test]
fn a_decision_runs_the_bounded_remainder_and_is_recorded() {
    let t = TestRepo::from_fixture("shop");
    t.append("scripts/deploy.ini", "port = 22\n");
    t.append("src/shop/plugins/discount.py", "\n");
    t.commit("script");
    let out = t
        .gate(&[
            "--affected",
            "HEAD~1...HEAD",
            "--affected-decision",
            "OPS-7: deploy script reviewed by hand",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("1 passed"), "{stdout}");
    assert!(
        stdout.contains("decision: OPS-7: deploy script reviewed by hand"),
        "{stdout}"
    );
    let log = std::fs::read_to_string(t.root.join(".git/gate/decisions.jsonl")).unwrap();
    let record: serde_json::Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    assert_eq!(record["citation"], "OPS-7: deploy script reviewed by hand");
    assert_eq!(record["range"], "HEAD~1...HEAD");
    assert_eq!(record["refused"][0]["path"], "scripts/deploy.ini");
    crate::plans::validate("decision.schema.json", &record);
    // the same citation on a run with no refusal is recorded too
    t.gate(&[
        "--files",
        "src/shop/money.py",
        "--list",
        "--affected-decision",
        "ship-42",
    ])
    .assert()
    .success();
    let log = std::fs::read_to_string(t.root.join(".git/gate/decisions.jsonl")).unwrap();
    assert_eq!(log.lines().count(), 2);
}

#[test]
fn named_full_runs_the_subset_and_names_the_reason_or_the_whole_suite_when_configured() {
    let t = TestRepo::from_fixture("shop");
    t.write("requirements.txt", "requests==2.0\n");
    t.append("src/shop/plugins/discount.py", "\n");
    t.commit("deps");
    let out = t.gate(&["--affected", "HEAD~1...HEAD"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("named_full: requirements.txt: dependency versions"),
        "{stdout}"
    );
    assert!(
        stdout.contains("1 passed"),
        "only the resolved subset ran: {stdout}"
    );
    t.write(".gate.toml", "named_full = \"full\"\n");
    t.commit("config");
    t.write("requirements.txt", "requests==3.0\n");
    t.commit("deps again");
    let r = t.report(&["--affected", "HEAD~1...HEAD"]);
    assert_eq!(r["verdict"], "named_full");
    let command = strings(&r["command"]);
    // The whole suite goes on past a file that fails to collect, judged file by file.
    assert_eq!(
        command[command.len() - 3..],
        ["-m", "pytest", "--continue-on-collection-errors"],
        "the whole suite, by name: {command:?}"
    );
}

#[test]
fn all_inert_runs_nothing_and_passes() {
    let t = TestRepo::from_fixture("shop");
    t.append("README.md", "x\n");
    t.commit("docs");
    let out = t.gate(&["--affected", "HEAD~1...HEAD"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout.contains("all changes inert (non-code)"), "{stdout}");
    assert!(!stdout.contains("passed"), "{stdout}");
}

#[test]
fn config_rules_always_run_max_depth_and_fallback() {
    let t = TestRepo::from_fixture("shop");
    t.write(
        ".gate.toml",
        "always_run = [\"tests/unit/**\"]\nknown_flaky = [\"tests/test_money.py\"]\nmax_depth = 2\n\n[[depends]]\ntests = \"tests/test_money.py\"\non = [\"scripts/*.ini\", \"!scripts/skip.ini\"]\n",
    );
    t.write("scripts/skip.ini", "[skip]\n");
    t.commit("config");
    let r = t.report(&["--files", "scripts/deploy.ini"]);
    assert_eq!(row(&r, "scripts/deploy.ini")["verdict"], "resolved");
    assert_eq!(
        selected(&r),
        ["tests/test_money.py", "tests/unit/test_nested.py"]
    );
    assert!(
        r["selected"][1]["reasons"][0]
            .as_str()
            .unwrap()
            .contains("always_run")
    );
    assert!(
        r["selected"][0]["reasons"][1]
            .as_str()
            .unwrap()
            .starts_with("known flaky")
    );
    let r = t.report(&["--files", "scripts/skip.ini"]);
    assert_eq!(
        row(&r, "scripts/skip.ini")["verdict"],
        "refused",
        "`!` excludes from a [[depends]] rule"
    );
    // money → tax → cart → checkout → test is four hops: max_depth = 2 cuts it, and says so
    let r = t.report(&["--files", "src/shop/money.py"]);
    assert!(!selected(&r).contains(&"tests/test_checkout.py".to_string()));
    let cut: Vec<&str> = r["cut"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert!(cut.contains(&"tests/test_checkout.py"), "{cut:?}");
    assert!(
        row(&r, "src/shop/money.py")["reasons"][1]
            .as_str()
            .unwrap()
            .starts_with("max_depth = 2 cut")
    );
    t.write(".gate.toml", "fallback = \"full\"\n");
    t.commit("fallback");
    let r = t.report(&["--files", "scripts/skip.ini"]);
    assert_eq!(row(&r, "scripts/skip.ini")["verdict"], "named_full");
    assert_eq!(r["verdict"], "named_full");
}

#[test]
fn an_empty_range_runs_nothing() {
    let t = TestRepo::from_fixture("shop");
    let r = t.report(&["--affected", "HEAD...HEAD"]);
    assert_eq!(r["verdict"], "empty");
    assert!(r["command"].is_null());
    t.gate(&["--affected", "HEAD...HEAD"]).assert().code(0);
}
