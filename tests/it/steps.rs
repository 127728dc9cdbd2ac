//! `[[step]]`s around the affected tests, and `gate verify`'s receipt.

use crate::plans::validate;
use crate::support::TestRepo;
use serde_json::Value;

/// Steps that append their name to `$STEP_LOG`, so the order they ran in can be read back.
pub(crate) const STEPS: &str = r#"
[[step]]
name = "lint"
run = "echo lint >> \"$STEP_LOG\""

[[step]]
name = "docs"
run = ["sh", "-c", "echo docs >> \"$STEP_LOG\""]
on = ["docs/**"]

[[step]]
name = "affected-tests"

[[step]]
name = "package"
run = "echo package >> \"$STEP_LOG\""
when = "verify"

[[step]]
name = "notify"
run = "echo notify >> \"$STEP_LOG\""
when = "pre-push"
"#;

fn verify(t: &TestRepo, args: &[&str], log: &std::path::Path) -> (Option<i32>, Value, String) {
    let receipt = log.with_extension("receipt.json");
    let mut all = vec!["verify"];
    all.extend(args);
    all.extend(["--receipt", receipt.to_str().unwrap()]);
    let out = t.gate(&all).env("STEP_LOG", log).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let value = serde_json::from_str(&std::fs::read_to_string(&receipt).unwrap()).unwrap();
    (out.status.code(), value, text)
}

fn ran(log: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

fn outcomes(receipt: &Value) -> Vec<(String, String)> {
    receipt["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn verify_runs_its_steps_in_order_filters_by_on_and_writes_a_receipt() {
    let t = TestRepo::from_fixture("shop");
    t.write(".gate.toml", STEPS);
    t.commit("steps");
    t.append("src/shop/money.py", "\n");
    t.commit("money");
    let log = t.root.parent().unwrap().join("steps.log");
    let (code, receipt, text) = verify(&t, &["HEAD~1...HEAD"], &log);
    assert_eq!(code, Some(0), "{text}");
    // `docs` matched no changed file; `notify` is pre-push only.
    assert_eq!(ran(&log), ["lint", "package"], "{text}");
    assert_eq!(
        outcomes(&receipt),
        [
            ("lint".into(), "passed".into()),
            ("docs".into(), "skipped".into()),
            ("affected-tests".into(), "passed".into()),
            ("package".into(), "passed".into()),
        ]
    );
    validate("report.schema.json", &receipt);
    let head = t.repo.head().unwrap().target().unwrap().to_string();
    assert_eq!(receipt["range"]["head"], head);
    assert_eq!(receipt["exit_code"], 0);
    assert_eq!(receipt["run"]["outcome"], "passed");
    assert!(
        receipt["gate"]
            .as_str()
            .unwrap()
            .contains(env!("CARGO_PKG_VERSION"))
    );
    assert!(!text.contains('\u{1b}'), "no colour in verify: {text}");
}

#[test]
fn the_first_failing_step_blocks_the_rest_and_is_named() {
    let t = TestRepo::from_fixture("shop");
    t.write(
        ".gate.toml",
        &STEPS.replace(
            "run = \"echo lint >> \\\"$STEP_LOG\\\"\"",
            "run = \"echo lint >> \\\"$STEP_LOG\\\"; exit 7\"",
        ),
    );
    t.commit("steps");
    t.append("src/shop/money.py", "\n");
    t.append("docs/guide.md", "more\n");
    t.commit("money and docs");
    let log = t.root.parent().unwrap().join("steps.log");
    let (code, receipt, text) = verify(&t, &["HEAD~1...HEAD"], &log);
    assert_eq!(code, Some(5), "{text}");
    assert_eq!(ran(&log), ["lint"], "{text}");
    assert!(text.contains("step `lint` failed"), "{text}");
    let steps = receipt["steps"].as_array().unwrap();
    assert_eq!(steps[0]["exit_code"], 7);
    assert!(steps[1..].iter().all(|s| {
        s["outcome"] == "skipped"
            && s["reason"]
                .as_str()
                .unwrap()
                .contains("blocked by the failure of `lint`")
    }));
    assert!(receipt["run"].is_null(), "the tests never ran");
    validate("report.schema.json", &receipt);
}

#[test]
fn a_refused_verify_exits_2_with_a_receipt_and_a_decision_lets_it_run() {
    let t = TestRepo::from_fixture("shop");
    t.append("scripts/deploy.ini", "port = 22\n");
    t.append("src/shop/money.py", "\n");
    t.commit("script and money");
    let log = t.root.parent().unwrap().join("steps.log");
    let (code, receipt, text) = verify(&t, &["HEAD~1...HEAD"], &log);
    assert_eq!(code, Some(2), "{text}");
    assert_eq!(receipt["verdict"], "refused");
    assert!(
        receipt["steps"].is_null(),
        "a refusal blocks before any step"
    );
    assert!(
        text.contains("gate verify HEAD~1...HEAD --affected-decision"),
        "{text}"
    );

    let receipt_path = log.with_extension("receipt.json");
    let out = t
        .gate(&[
            "verify",
            "HEAD~1...HEAD",
            "--receipt",
            receipt_path.to_str().unwrap(),
        ])
        .env("GATE_DECISION", "REL-7 deploy script reviewed")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let receipt: Value =
        serde_json::from_str(&std::fs::read_to_string(&receipt_path).unwrap()).unwrap();
    assert_eq!(
        receipt["decision"]["citation"],
        "REL-7 deploy script reviewed"
    );
    assert_eq!(receipt["run"]["outcome"], "passed");
    validate("report.schema.json", &receipt);
}

#[test]
fn a_failing_test_in_verify_exits_1() {
    let t = TestRepo::from_fixture("shop");
    t.append(
        "tests/test_money.py",
        "\n\ndef test_no():\n    assert False\n",
    );
    t.commit("break");
    let log = t.root.parent().unwrap().join("steps.log");
    let (code, receipt, text) = verify(&t, &["HEAD~1"], &log);
    assert_eq!(code, Some(1), "{text}");
    assert_eq!(receipt["run"]["outcome"], "failed");
    assert_eq!(
        outcomes(&receipt),
        [("affected-tests".into(), "failed".into())]
    );
}

#[test]
fn steps_get_the_changed_files_nul_separated_in_a_file() {
    let t = TestRepo::from_fixture("shop");
    let log = t.root.parent().unwrap().join("files0");
    // `sh -c 'cp -- "$GATE_CHANGED_FILES0" "$0"' <log>`
    t.write(
        ".gate.toml",
        &format!(
            "[[step]]\nname = \"list\"\nrun = [\"sh\", \"-c\", 'cp -- \"$GATE_CHANGED_FILES0\" \"$0\"', \"{}\"]\n",
            log.display()
        ),
    );
    t.commit("a step that keeps the list");
    t.write("docs/a\nnewline.md", "x\n");
    t.append("src/shop/money.py", "\n");
    t.commit("a name with a newline");
    let out = t.gate(&["verify", "HEAD~1...HEAD"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", crate::support::text(&out));
    let list = std::fs::read(&log).unwrap();
    let names: Vec<&[u8]> = list.split(|&b| b == 0).filter(|n| !n.is_empty()).collect();
    assert_eq!(names, [&b"docs/a\nnewline.md"[..], b"src/shop/money.py"]);
}
