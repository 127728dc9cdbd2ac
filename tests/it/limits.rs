//! No input depth or size aborts gate, and what it could not read whole is named on its row.

use crate::support::{TestRepo, row, selected, strings, text};

#[test]
fn deep_expressions_anywhere_in_the_tree_do_not_abort_gate_and_are_flagged() {
    let t = TestRepo::from_fixture("shop");
    let sum = format!("X = {}\n", vec!["1"; 12_000].join("+"));
    let parens = format!("Y = {}1{}\n", "(".repeat(30_000), ")".repeat(30_000));
    t.write("data/sum.py", &sum);
    t.write("data/parens.py", &parens);
    t.write(
        "tests/test_deep.py",
        &format!("import shop.money\n{sum}\n\ndef test_deep():\n    assert X == 12000\n"),
    );
    t.commit("deep files");
    let out = t.gate(&["plan"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("flagged data/sum.py: expressions nested more than 200 levels deep"),
        "{}",
        text(&out)
    );
    t.append("src/shop/money.py", "\n");
    t.commit("touch money");
    let out = t
        .gate(&["--affected", "HEAD~2...HEAD", "--json", "--list"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        selected(&r).contains(&"tests/test_deep.py".to_string()),
        "{r:#}"
    );
    assert!(
        row(&r, "data/sum.py")["reasons"]
            .to_string()
            .contains("nested more than 200 levels deep"),
        "{r:#}"
    );
}

#[test]
fn a_file_larger_than_the_parse_limit_keeps_the_imports_past_the_limit() {
    let t = TestRepo::from_fixture("shop");
    let mut big = String::from("import json\n");
    while big.len() < (2 << 20) + 4096 {
        big.push_str("VALUE = 'a line of generated data that goes on'\n");
    }
    big.push_str("from shop.money import (\n    to_cents,\n)\n\n\ndef test_big():\n    assert to_cents(1) == 100\n");
    t.write("tests/test_big.py", &big);
    t.commit("a big generated test");
    t.append("src/shop/money.py", "\n");
    t.commit("touch money");
    let r = t.report(&["--affected", "HEAD~2...HEAD"]);
    assert!(
        selected(&r).contains(&"tests/test_big.py".to_string()),
        "{r:#}"
    );
    assert!(
        row(&r, "tests/test_big.py")["reasons"]
            .to_string()
            .contains("larger than 2 MiB: parsed up to line"),
        "{r:#}"
    );
}

#[test]
fn a_go_syntax_error_below_the_imports_is_flagged_on_its_row() {
    let t = TestRepo::from_fixture("goshop");
    t.append("ws/shop/money/money.go", "\nfunc Broken( {\n");
    t.commit("break the syntax");
    let r = t.report(&["--affected", "HEAD~1...HEAD"]);
    let reasons = row(&r, "ws/shop/money/money.go")["reasons"].to_string();
    assert!(reasons.contains("parsed with errors (line"), "{reasons}");
}

#[test]
fn a_row_whose_tests_max_depth_cut_does_not_say_no_test_reaches_it() {
    let t = TestRepo::from_fixture("shop");
    t.write(".gate.toml", "max_depth = 0\n");
    t.commit("no depth");
    t.append("src/shop/money.py", "\n");
    t.commit("touch money");
    let r = t.report(&["--affected", "HEAD~1...HEAD"]);
    let reasons: Vec<String> = strings(&row(&r, "src/shop/money.py")["reasons"]);
    assert_eq!(
        reasons[0], "no test within max_depth = 0 import hop(s) reaches it",
        "{reasons:?}"
    );
    assert!(
        reasons[1].starts_with("max_depth = 0 cut 4 test file(s)"),
        "{reasons:?}"
    );
}
