//! The green ledger, on both stores with real pytest runs: a test that passed with the same
//! inputs is reused, not run — after a rebase onto an unrelated main commit, after a failure
//! in an unrelated step — and runs again when any input of its changes, after it failed, when
//! it is known flaky, with `--no-reuse`, on a branch whose passes are not trusted, and when
//! the store is down.

use crate::history::{Kind, Store};
use crate::support::{TestRepo, text};
use serde_json::Value;

/// `gate --affected master...HEAD --json` with `db` as the store: the report.
fn gate(t: &TestRepo, db: &str, extra: &[&str]) -> Value {
    let mut args = vec!["--affected", "master...HEAD", "--json"];
    args.extend(extra);
    let out = t.gate(&args).env("GATE_DB", db).output().unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(&out)));
    crate::plans::validate("report.schema.json", &doc);
    doc
}

fn reused(doc: &Value) -> Vec<String> {
    doc["reused"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap().to_string())
        .collect()
}

/// The test files that ran (had results).
fn ran(doc: &Value) -> Vec<String> {
    let mut files: Vec<String> = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["file"].as_str().map(str::to_string))
        .collect();
    files.dedup();
    files
}

const MONEY_TESTS: [&str; 4] = [
    "tests/test_cart.py",
    "tests/test_checkout.py",
    "tests/test_money.py",
    "tests/test_patch.py",
];

on_both!(a_pass_is_reused_until_an_input_changes: reuse_sqlite, reuse_postgres);
fn a_pass_is_reused_until_an_input_changes(kind: Kind) {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(kind, &t);
    let db = store.url.as_str();
    t.branch("feature");
    t.checkout("feature");
    t.append("src/shop/money.py", "\n# reviewed\n");
    t.commit("money");
    let first = gate(&t, db, &[]);
    assert_eq!(ran(&first), MONEY_TESTS, "{first:#}");
    assert!(reused(&first).is_empty());
    // The same inputs again: nothing runs, every pass is reused with where it passed.
    let again = gate(&t, db, &[]);
    assert_eq!(reused(&again), MONEY_TESTS, "{again:#}");
    assert!(ran(&again).is_empty(), "{again:#}");
    assert_eq!(again["exit_code"], 0);
    let summary = again["summary"].as_str().unwrap();
    assert!(
        summary.contains("4 of 7 test files selected, 4 reused, 0 run"),
        "{summary}"
    );
    assert_eq!(again["reused"][0]["branch"], "feature");
    // A rebase onto an unrelated master commit: another commit, the same inputs.
    t.checkout("master");
    t.append("docs/guide.md", "\nunrelated\n");
    t.commit("docs on master");
    t.checkout("feature");
    let master = t
        .repo
        .revparse_single("master")
        .unwrap()
        .peel_to_commit()
        .unwrap();
    let tip = t.repo.head().unwrap().peel_to_commit().unwrap();
    let mut index = t.repo.cherrypick_commit(&tip, &master, 0, None).unwrap();
    let tree = t
        .repo
        .find_tree(index.write_tree_to(&t.repo).unwrap())
        .unwrap();
    let sig = tip.author();
    let rebased = t
        .repo
        .commit(None, &sig, &sig, "money, rebased", &tree, &[&master])
        .unwrap();
    t.repo
        .reference("refs/heads/feature", rebased, true, "rebase")
        .unwrap();
    t.checkout("feature");
    let rebased_run = gate(&t, db, &[]);
    assert_eq!(reused(&rebased_run), MONEY_TESTS, "{rebased_run:#}");
    assert!(ran(&rebased_run).is_empty());
    // `--no-reuse` runs them all.
    let forced = gate(&t, db, &["--no-reuse"]);
    assert_eq!(ran(&forced), MONEY_TESTS);
    // A conftest edit: every test of the folder runs again.
    t.append("tests/conftest.py", "\n# fixture note\n");
    t.commit("conftest");
    let after = gate(&t, db, &[]);
    assert!(reused(&after).is_empty(), "{after:#}");
    assert!(ran(&after).contains(&"tests/test_money.py".to_string()));
    // A source file of one test's closure: that test runs, the rest are reused.
    t.append("tests/test_money.py", "\n# note\n");
    t.commit("money test");
    let one = gate(&t, db, &[]);
    assert_eq!(ran(&one), ["tests/test_money.py"], "{one:#}");
    // (The conftest change in the range selects the folder's every test: all but test_money
    // passed with these inputs on the run before.)
    let selected = one["selected"].as_array().unwrap().len();
    assert_eq!(reused(&one).len(), selected - 1, "{one:#}");
}

on_both!(a_failure_known_flakiness_and_distrust_are_never_reused: never_sqlite, never_postgres);
fn a_failure_known_flakiness_and_distrust_are_never_reused(kind: Kind) {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(kind, &t);
    let db = store.url.as_str();
    // test_money passes unless SHOP_FAIL is set: the variable is read by name, so it is an
    // input; its value is part of the fingerprint.
    t.write(
        "tests/test_money.py",
        "import os\n\nfrom shop.money import to_cents\n\n\ndef test_to_cents(price):\n    assert os.environ.get('SHOP_FAIL') != '1'\n    assert to_cents(price) == 1000\n",
    );
    t.write(".gate.toml", "known_flaky = [\"tests/test_patch.py\"]\n");
    t.commit("money reads SHOP_FAIL");
    t.branch("feature");
    t.checkout("feature");
    t.append("src/shop/money.py", "\n# reviewed\n");
    t.commit("money");
    let first = gate(&t, db, &[]);
    assert_eq!(ran(&first), MONEY_TESTS);
    let second = gate(&t, db, &[]);
    assert_eq!(
        reused(&second),
        [
            "tests/test_cart.py",
            "tests/test_checkout.py",
            "tests/test_money.py"
        ],
        "known_flaky test_patch always runs: {second:#}"
    );
    assert_eq!(ran(&second), ["tests/test_patch.py"]);
    // The same inputs fail once (a flake no fingerprint sees: here, forced with --no-reuse
    // and an input-free failure is impossible, so the store is told directly): after a
    // failure under a fingerprint, an older pass under it is never reused.
    let entries = store.rows(
        "SELECT fingerprint FROM ledger WHERE unit = 'tests/test_money.py' ORDER BY entry DESC",
    );
    store.execute(&format!(
        "INSERT INTO ledger (unit, fingerprint, outcome, commit_sha, branch, mainline, leg, recorded_unix) \
         SELECT unit, fingerprint, 'failed', commit_sha, branch, mainline, leg, recorded_unix + 1 FROM ledger \
         WHERE unit = 'tests/test_money.py' AND fingerprint = '{}'",
        entries[0][0]
    ));
    let third = gate(&t, db, &[]);
    assert!(
        ran(&third).contains(&"tests/test_money.py".to_string()),
        "{third:#}"
    );
    // A variable the test reads: another fingerprint, so it runs (and fails).
    let failing = {
        let out = t
            .gate(&["--affected", "master...HEAD", "--json"])
            .env("GATE_DB", db)
            .env("SHOP_FAIL", "1")
            .output()
            .unwrap();
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    assert_eq!(failing["exit_code"], 1, "{failing:#}");
    assert!(!reused(&failing).contains(&"tests/test_money.py".to_string()));
    // Another branch at the same commit: feature's passes are not trusted there.
    t.branch("other");
    t.checkout("other");
    let other = gate(&t, db, &[]);
    assert!(reused(&other).is_empty(), "{other:#}");
    // The store down: everything runs, and a warning says why.
    let out = t
        .gate(&["--affected", "master...HEAD"])
        .env("GATE_DB", "postgres://root@127.0.0.1:1/gate")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("the ledger cannot be read"),
        "{}",
        text(&out)
    );
    assert!(
        text(&out).contains("4 of 7 test files selected (bounded)"),
        "{}",
        text(&out)
    );
}
