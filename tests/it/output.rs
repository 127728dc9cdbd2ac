//! Output a caller can rely on: a closed stdout ends it quietly, a runner cut short is a broken
//! run, and under `--json` an error is JSON too.

use crate::support::{TestRepo, text};

fn with_closed_stdout(
    mut cmd: std::process::Command,
    read_first_line: bool,
) -> (Option<i32>, String) {
    use std::io::{BufRead, Read};
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    if read_first_line {
        let mut line = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .unwrap();
    } else {
        drop(stdout);
    }
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (child.wait().unwrap().code(), err)
}

#[test]
fn every_command_ends_quietly_on_a_closed_stdout() {
    let t = TestRepo::from_fixture("shop");
    for args in [
        vec!["explain", "src/shop/money.py"],
        vec!["explain", "tests/test_cart.py"],
        vec!["plan"],
        vec!["--files", "src/shop/money.py", "--list"],
        vec!["--files", "src/shop/money.py", "--list", "--json"],
    ] {
        let (code, err) = with_closed_stdout(t.gate_process(&args), false);
        assert_eq!(code, Some(0), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn pytest_cut_short_by_a_closed_pipe_is_a_broken_run_not_failed_tests() {
    let t = TestRepo::from_fixture("shop");
    t.append("src/shop/money.py", "\n");
    t.commit("touch money");
    let (code, err) = with_closed_stdout(t.gate_process(&["--affected", "HEAD~1...HEAD"]), true);
    assert_eq!(code, Some(4), "{err}");
    assert!(
        err.contains("the run was cut short") || err.contains("without finishing its session"),
        "{err}"
    );
}

#[test]
fn an_error_under_json_is_a_json_document_and_verify_writes_its_receipt() {
    let t = TestRepo::from_fixture("shop");
    for args in [
        vec!["--affected", "nosuchrev...HEAD", "--json"],
        vec!["--files", "tests/test_mony.py", "--json"],
        vec!["verify", "nosuchrev...HEAD", "--json"],
        vec!["--affected", "HEAD", "--json", "--bogus"],
    ] {
        let out = t.gate(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(3), "{args:?}: {}", text(&out));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {}", text(&out)));
        crate::plans::validate("error.schema.json", &doc);
        assert_eq!(doc["exit_code"], 3);
        assert!(!doc["error"].as_str().unwrap().is_empty());
    }
    let receipt = t.root.parent().unwrap().join("receipt.json");
    let out = t
        .gate(&[
            "verify",
            "nosuchrev...HEAD",
            "--receipt",
            receipt.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&receipt).unwrap()).unwrap();
    crate::plans::validate("error.schema.json", &doc);
    assert!(
        doc["error"]
            .as_str()
            .unwrap()
            .contains("unknown revision `nosuchrev`"),
        "{doc:#}"
    );
}
