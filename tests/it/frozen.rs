//! Frozen decisions, on both stores: every gate that selects writes its decision before
//! anything runs — the full inventory, the changes with both sides of a rename, every row and
//! the selection, the identities as digests — bound by an id anyone can recompute; the same
//! decision is stored once and never rewritten; a working tree and a missing base are data
//! gaps, said so; a secret's value never appears.

use crate::history::{Kind, Store};
use crate::support::{TestRepo, text};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The canonical form the id hashes, built here independently: compact, keys sorted.
fn canonical(v: &Value) -> String {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .iter()
                .map(|k| format!("{}:{}", Value::String((*k).clone()), canonical(&map[*k])))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(items) => {
            format!(
                "[{}]",
                items.iter().map(canonical).collect::<Vec<_>>().join(",")
            )
        }
        scalar => scalar.to_string(),
    }
}

fn id_of(decision: &Value) -> String {
    let mut body = decision.clone();
    body.as_object_mut().unwrap().remove("id");
    Sha256::digest(canonical(&body).as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `gate ARGS --json --decision-out FILE` with `db` as the store: the report and the decision.
fn gate(t: &TestRepo, db: &str, args: &[&str], env: &[(&str, &str)]) -> (Value, Value) {
    let out_file = t.root.parent().unwrap().join("decision.json");
    let mut all = args.to_vec();
    let file = out_file.to_str().unwrap();
    all.extend(["--json", "--decision-out", file]);
    let out = t
        .gate(&all)
        .env("GATE_DB", db)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(&out)));
    let decision: Value = serde_json::from_slice(&std::fs::read(&out_file).unwrap()).unwrap();
    crate::plans::validate("report.schema.json", &report);
    crate::plans::validate("frozen.schema.json", &decision);
    (report, decision)
}

on_both!(every_selection_is_frozen_before_it_runs: frozen_sqlite, frozen_postgres);
fn every_selection_is_frozen_before_it_runs(kind: Kind) {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(kind, &t);
    let db = store.url.as_str();
    t.append("src/shop/money.py", "\n# reviewed\n");
    t.rename("src/shop/untested.py", "src/shop/still_untested.py");
    t.commit("money, renamed");
    let secret = "s3cr3t-value-never-written";
    let range = ["--affected", "HEAD~1...HEAD"];
    let (report, decision) = gate(&t, db, &range, &[("PYTHONPATH", secret)]);
    // The id binds the body, and the run reports it.
    assert_eq!(decision["id"], id_of(&decision), "{decision:#}");
    assert_eq!(report["frozen_decision"], decision["id"]);
    // The commit and tree, the base and its tree.
    let head = t.repo.head().unwrap().peel_to_commit().unwrap();
    let parent = head.parent(0).unwrap();
    assert_eq!(decision["commit"], head.id().to_string());
    assert_eq!(decision["tree"], head.tree_id().to_string());
    assert_eq!(decision["base"], parent.id().to_string());
    assert_eq!(decision["base_tree"], parent.tree_id().to_string());
    assert_eq!(decision["gaps"], serde_json::json!([]), "{decision:#}");
    // Every test file, not only the selected ones; the selection with its reasons.
    let inventory: Vec<&str> = decision["inventory"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(inventory.len(), 7, "{inventory:?}");
    let selected = decision["selected"].as_object().unwrap();
    assert!(selected.contains_key("tests/test_money.py"), "{decision:#}");
    assert!(selected.len() < inventory.len(), "{decision:#}");
    assert!(selected.keys().all(|s| inventory.contains(&s.as_str())));
    assert!(
        !selected["tests/test_money.py"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    // Both sides of the rename, and the rows as the report has them.
    let changes = &decision["changes"];
    assert!(
        changes
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["path"] == "src/shop/still_untested.py"
                && c["status"] == "renamed"
                && c["other"] == "src/shop/untested.py"),
        "{changes:#}"
    );
    assert!(
        changes
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["path"] == "src/shop/untested.py" && c["status"] == "deleted"),
        "{changes:#}"
    );
    assert_eq!(decision["rows"], report["files"]);
    // The value of a variable that changes the run moves the environment digest and is
    // never written.
    let raw = std::fs::read_to_string(t.root.parent().unwrap().join("decision.json")).unwrap();
    assert!(!raw.contains(secret));
    let (_, other_env) = gate(&t, db, &range, &[("PYTHONPATH", "elsewhere")]);
    assert_ne!(
        other_env["environment_digest"],
        decision["environment_digest"]
    );
    assert_eq!(other_env["config_digest"], decision["config_digest"]);
    assert_eq!(other_env["lock_digest"], decision["lock_digest"]);
    assert_ne!(other_env["id"], decision["id"]);
    // A lock file's change moves the lock digest.
    t.append("pyproject.toml", "\n# pinned\n");
    t.commit("pyproject");
    let (_, locked) = gate(&t, db, &range, &[("PYTHONPATH", secret)]);
    assert_ne!(locked["lock_digest"], decision["lock_digest"], "{locked:#}");
    // Stored as written, read back by id; the same decision again is not a second row.
    let (again, _) = gate(&t, db, &range, &[("PYTHONPATH", secret)]);
    let shown = t
        .gate(&[
            "decision",
            again["frozen_decision"].as_str().unwrap(),
            "--db",
            db,
        ])
        .output()
        .unwrap();
    assert_eq!(shown.status.code(), Some(0), "{}", text(&shown));
    let stored: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(stored, locked);
    let id = locked["id"].as_str().unwrap();
    let count = store.rows(&format!("SELECT count(*) FROM decisions WHERE id = '{id}'"));
    assert_eq!(count, [["1"]]);
    assert_eq!(
        store.rows("SELECT count(*) FROM decisions"),
        [["3"]],
        "three decisions (two environments, one lock file) in four runs"
    );
    // An id that names nothing is an error, not an empty answer.
    let none = t
        .gate(&["decision", &"0".repeat(64), "--db", db])
        .output()
        .unwrap();
    assert_eq!(none.status.code(), Some(3), "{}", text(&none));
    assert!(
        text(&none).contains("no frozen decision"),
        "{}",
        text(&none)
    );
}

#[test]
fn a_working_tree_and_a_missing_base_are_gaps() {
    let t = TestRepo::from_fixture("shop");
    let db = format!("sqlite:{}", t.root.join(".git/gate/h.sqlite").display());
    let (_, tree) = gate(&t, &db, &["--files", "src/shop/money.py", "--list"], &[]);
    assert!(tree["commit"].is_null(), "{tree:#}");
    assert!(
        tree["gaps"][0]
            .as_str()
            .unwrap()
            .contains("the working tree is gated"),
        "{tree:#}"
    );
    let (report, missing) = gate(&t, &db, &["--affected", "origin/master...HEAD"], &[]);
    assert_eq!(report["verdict"], "refused");
    assert!(missing["base"].is_null(), "{missing:#}");
    assert!(
        missing["gaps"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g.as_str().unwrap().contains("origin/master")),
        "{missing:#}"
    );
    // A decision file that cannot be written is an error before anything runs.
    let out = t
        .gate(&[
            "--files",
            "src/shop/money.py",
            "--decision-out",
            "/nonexistent/dir/d.json",
        ])
        .env("GATE_DB", &db)
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("/nonexistent/dir/d.json: cannot write the decision"),
        "{}",
        text(&out)
    );
}
