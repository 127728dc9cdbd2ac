//! Observation exports, on both stores with real pytest: a recorded run exported with its
//! identities, inventory, outcomes, durations and dependencies; the compact form and the null
//! fallback under `--max-bytes`, and nothing written past them; both forms imported into
//! another store (one digest: kept once); an edited export refused.

use crate::history::{Kind, Store};
use crate::support::{TestRepo, text};
use serde_json::Value;
use std::path::Path;

fn export(t: &TestRepo, db: &str, out: &Path, max: Option<usize>) -> std::process::Output {
    let mut cmd = t.gate(&[
        "export",
        "--observations",
        out.to_str().unwrap(),
        "--db",
        db,
    ]);
    if let Some(max) = max {
        cmd.args(["--max-bytes", &max.to_string()]);
    }
    cmd.output().unwrap()
}

fn import(t: &TestRepo, db: &str, file: &Path) -> std::process::Output {
    t.gate(&[
        "import",
        "--observations",
        file.to_str().unwrap(),
        "--db",
        db,
    ])
    .output()
    .unwrap()
}

fn file<'a>(doc: &'a Value, path: &str) -> &'a Value {
    doc["observations"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["file"] == path)
        .unwrap_or_else(|| panic!("{path} not in {doc:#}"))
}

on_both!(a_recorded_run_is_exported_and_imported_in_both_forms: export_sqlite, export_postgres);
fn a_recorded_run_is_exported_and_imported_in_both_forms(kind: Kind) {
    let t = TestRepo::from_fixture("shop");
    t.branch("feature");
    t.checkout("feature");
    t.write(
        "src/shop/money.py",
        "CENTS = 100\n\n\ndef to_cents(amount):\n    return round(amount * CENTS) + 1\n",
    );
    t.commit("money off by one");
    let store = Store::new(kind, &t);
    let db = store.url.as_str();
    let gated = t
        .gate(&[
            "--affected",
            "master...HEAD",
            "--record",
            "--json",
            "--db",
            db,
        ])
        .output()
        .unwrap();
    assert_eq!(gated.status.code(), Some(1), "{}", text(&gated));
    let report: Value = serde_json::from_slice(&gated.stdout).unwrap();
    let dir = t.root.parent().unwrap();
    let out = dir.join("obs.json");
    let done = export(&t, db, &out, None);
    assert_eq!(done.status.code(), Some(0), "{}", text(&done));
    let bytes = std::fs::read(&out).unwrap();
    let doc: Value = serde_json::from_slice(&bytes).unwrap();
    crate::plans::validate("observations.schema.json", &doc);
    assert_eq!(doc["observations"]["version"], 1);
    assert_eq!(
        doc["decision"], report["frozen_decision"],
        "the run's own decision"
    );
    let head = t.repo.head().unwrap().target().unwrap().to_string();
    assert_eq!(doc["commit"], head.as_str());
    // The selected, failing file: its outcome, time and what it depends on.
    let money = file(&doc, "tests/test_money.py");
    assert_eq!(money["outcome"], "failed", "{money:#}");
    assert!(money["tests"].as_u64() > Some(0) && money["duration_ms"].is_u64());
    let deps = crate::support::strings(&money["dependencies"]);
    assert!(deps.contains(&"src/shop/money.py".to_string()), "{deps:?}");
    // A test the change did not select: no result, unknown (never a pass), its dependencies
    // still known from the graph.
    let selected = crate::support::selected(&report);
    let unselected = doc["inventory"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .find(|u| !selected.iter().any(|s| s == u))
        .expect("a test the change did not reach");
    let other = file(&doc, unselected);
    assert_eq!(other["outcome"], "unknown");
    assert_eq!(other["duration_ms"], Value::Null);
    assert!(other["dependencies"].is_array());
    // No test names, error text or log lines.
    let raw = String::from_utf8_lossy(&bytes);
    assert!(!raw.contains("::test_") && !raw.contains("assert"), "{raw}");

    // One byte too few: the compact form, the same digest.
    let compact = dir.join("compact.json");
    let done = export(&t, db, &compact, Some(bytes.len() - 1));
    assert_eq!(done.status.code(), Some(0), "{}", text(&done));
    let c: Value = serde_json::from_slice(&std::fs::read(&compact).unwrap()).unwrap();
    crate::plans::validate("observations.schema.json", &c);
    assert_eq!(c["observations"]["version"], 2);
    assert_eq!(c["digest"], doc["digest"]);
    let paths = c["observations"]["dependency_paths"].as_array().unwrap();
    assert!(paths.iter().any(|p| p == "src/shop/money.py"));
    let compact_len = std::fs::metadata(&compact).unwrap().len() as usize;
    // Too small for that: no dependencies (null, never []), and a warning.
    let bare = dir.join("bare.json");
    let done = export(&t, db, &bare, Some(compact_len - 1));
    assert_eq!(done.status.code(), Some(0), "{}", text(&done));
    assert!(
        text(&done).contains("dependencies left out"),
        "{}",
        text(&done)
    );
    let b: Value = serde_json::from_slice(&std::fs::read(&bare).unwrap()).unwrap();
    crate::plans::validate("observations.schema.json", &b);
    let files = b["observations"]["files"].as_array().unwrap();
    assert!(files.iter().all(|f| f["dependencies"].is_null()), "{b:#}");
    assert_eq!(b["warnings"].as_array().unwrap().len(), 1);
    // Too small for anything: nothing written, the limit named, the old file untouched.
    let done = export(&t, db, &out, Some(300));
    assert_eq!(done.status.code(), Some(7), "{}", text(&done));
    assert!(
        text(&done).contains("over the limit of 300 (--max-bytes)"),
        "{}",
        text(&done)
    );
    assert_eq!(std::fs::read(&out).unwrap(), bytes);

    imported(&t, kind, [&out, &compact, &bare], &doc);
}

/// Into another store: both forms of one export are kept once, the null fallback is another
/// export; an export edited after it was written is refused (exit 10, the file named).
fn imported(t: &TestRepo, kind: Kind, [out, compact, bare]: [&Path; 3], doc: &Value) {
    let bytes = std::fs::read(out).unwrap();
    let dir = out.parent().unwrap();
    let head = doc["commit"].as_str().unwrap();
    let other = other_store(kind, t);
    let first = import(t, &other.url, out);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    assert!(text(&first).contains("kept in"), "{}", text(&first));
    let again = import(t, &other.url, compact);
    assert!(text(&again).contains("already in"), "{}", text(&again));
    let kept = other.rows("SELECT digest, commit_sha FROM observations");
    assert_eq!(kept, [[doc["digest"].as_str().unwrap(), head]]);
    let bare_in = import(t, &other.url, bare);
    assert_eq!(bare_in.status.code(), Some(0), "{}", text(&bare_in));
    // An export edited after it was written: exit 10, the file named, nothing kept.
    let edited = dir.join("edited.json");
    let forged = String::from_utf8_lossy(&bytes).replacen("\"failed\"", "\"passed\"", 1);
    std::fs::write(&edited, forged).unwrap();
    let refused = import(t, &other.url, &edited);
    assert_eq!(refused.status.code(), Some(10), "{}", text(&refused));
    assert!(
        text(&refused).contains("edited.json: its digest"),
        "{}",
        text(&refused)
    );
    assert_eq!(other.rows("SELECT digest FROM observations").len(), 2);
}

/// A second store of the same kind, apart from the first.
fn other_store(kind: Kind, t: &TestRepo) -> Store {
    match kind {
        Kind::Postgres => Store::new(kind, t),
        Kind::Sqlite => Store::sqlite_at(&t.root.parent().unwrap().join("other.sqlite")),
    }
}

/// Nothing recorded: an error naming the store, never an empty export.
#[test]
fn nothing_recorded_is_no_export() {
    let t = TestRepo::from_fixture("shop");
    let db = format!("sqlite:{}", t.root.join(".git/gate/h.sqlite").display());
    let out = t.root.parent().unwrap().join("obs.json");
    let done = export(&t, &db, &out, None);
    assert_eq!(done.status.code(), Some(3), "{}", text(&done));
    assert!(
        text(&done).contains("nothing is recorded in"),
        "{}",
        text(&done)
    );
    assert!(!out.exists());
}

on_both!(an_audit_of_the_exported_tree_adds_what_its_runs_opened: traced_sqlite, traced_postgres);
fn an_audit_of_the_exported_tree_adds_what_its_runs_opened(kind: Kind) {
    let t = TestRepo::from_fixture("hidden");
    t.write(
        "src/hidden/report.py",
        "def render(rows):\n    return \"\\n\".join(rows)\n",
    );
    t.commit("report joins lines");
    let store = Store::new(kind, &t);
    let db = store.url.as_str();
    let gated = t
        .gate(&["--affected", "HEAD~1...HEAD", "--record", "--db", db])
        .output()
        .unwrap();
    assert!(gated.status.code().is_some(), "{}", text(&gated));
    let out = t.root.parent().unwrap().join("obs.json");
    let docs = |t: &TestRepo| {
        let done = export(t, db, &out, None);
        assert_eq!(done.status.code(), Some(0), "{}", text(&done));
        let doc: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
        crate::plans::validate("observations.schema.json", &doc);
        doc
    };
    let audit = |t: &TestRepo| {
        t.gate(&["audit", "--tests", "tests/test_docs.py", "--db", db])
            .output()
            .unwrap()
    };
    // The graph alone: test_docs.py reads docs/example.json through a path built at run time.
    let doc = docs(&t);
    let before = file(&doc, "tests/test_docs.py");
    let graph = crate::support::strings(&before["dependencies"]);
    assert!(
        graph.contains(&"tests/test_docs.py".to_string()),
        "{before:#}"
    );
    assert!(
        !graph.contains(&"docs/example.json".to_string()),
        "{before:#}"
    );
    assert!(before.get("traced").is_none(), "{before:#}");

    // An audit of a working tree that is not HEAD's tree is not the exported tree's.
    t.write("notes.txt", "untracked\n");
    let dirty = audit(&t);
    assert!(
        text(&dirty).contains("the traces are not kept for exports"),
        "{}",
        text(&dirty)
    );
    assert!(docs(&t).to_string().find("\"traced\"").is_none());
    std::fs::remove_file(t.root.join("notes.txt")).unwrap();

    // Of HEAD's own tree: the file its run opened is joined to the graph's dependencies.
    let clean = audit(&t);
    assert!(!text(&clean).contains("not kept"), "{}", text(&clean));
    let doc = docs(&t);
    let after = file(&doc, "tests/test_docs.py");
    assert_eq!(after["traced"], true, "{after:#}");
    let joined = crate::support::strings(&after["dependencies"]);
    assert!(
        joined.contains(&"docs/example.json".to_string()),
        "{after:#}"
    );
    assert!(graph.iter().all(|f| joined.contains(f)), "the graph's stay");
    // A test the audit did not trace keeps the graph's alone.
    assert!(file(&doc, "tests/test_plain.py").get("traced").is_none());

    // A store's trace is checked before it is used: a path the tree does not hold is said and
    // left out.
    store.execute("UPDATE traces SET files = '[\"docs/example.json\", \"../../etc/passwd\"]'");
    let done = export(&t, db, &out, None);
    assert!(
        text(&done).contains("1 path(s) not in the tree"),
        "{}",
        text(&done)
    );
    let raw = std::fs::read_to_string(&out).unwrap();
    assert!(!raw.contains("passwd"), "{raw}");
}
