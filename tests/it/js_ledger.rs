//! The ledger with real Vitest runs on both stores: a Vitest file's pass is entered bound to
//! what its run read outside the tree — observed by strace, since Node has no audit hook —
//! and reused while none of it changed; an installed package's file edited in place (its
//! version and size unchanged) and a git-ignored `.env.local` Vite loads appearing each make
//! the test run again and fail instead of being reused, and another `NODE_ENV` runs it again.

use crate::history::{Kind, Store};
use crate::js::repo;
use crate::ledger::{gate, gate_with, ran, reused};
use crate::ledger_inputs::settle;
use std::path::PathBuf;

/// An installed package the project declares (`gate-ext`, `RATE = 1`), its files no commit
/// holds: its folder.
fn installed(t: &crate::support::TestRepo) -> PathBuf {
    let package = t.root.join("node_modules/gate-ext");
    std::fs::create_dir_all(&package).unwrap();
    std::fs::write(
        package.join("package.json"),
        r#"{"name":"gate-ext","version":"1.0.0","main":"index.js"}"#,
    )
    .unwrap();
    std::fs::write(package.join("index.js"), "exports.RATE = 1;\n").unwrap();
    package
}

on_both!(what_a_vitest_run_read_outside_the_tree_binds_its_pass: outside_sqlite, outside_postgres);
fn what_a_vitest_run_read_outside_the_tree_binds_its_pass(kind: Kind) {
    let t = repo("vitest");
    let store = Store::new(kind, &t);
    let db = store.url.as_str();
    let package = installed(&t);
    t.write(
        "package.json",
        r#"{"name":"vt","private":true,"type":"module","dependencies":{"gate-ext":"1.0.0"},"devDependencies":{"vitest":"^4.1.12"}}"#,
    );
    t.write(".gitignore", "node_modules/\n.env.local\n");
    t.write(
        "test/ext.test.ts",
        "import { test, expect } from 'vitest';\nimport { RATE } from 'gate-ext';\nimport { add } from '../src/math';\n\ntest('rate', () => {\n  expect(add(RATE, 0)).toBe(1);\n});\n",
    );
    t.write(
        "test/flag.test.ts",
        "import { test, expect } from 'vitest';\nimport { add } from '../src/math';\n\ntest('flag', () => {\n  expect(import.meta.env.VITE_FLAG).toBeUndefined();\n  expect(add(1, 1)).toBe(2);\n});\n",
    );
    t.commit("tests of an installed package and of Vite's environment");
    t.branch("feature");
    t.checkout("feature");
    t.append("src/math.ts", "\n// reviewed\n");
    t.commit("math");
    settle();
    let first = gate(&t, db, &[]);
    assert_eq!(first["exit_code"], 0, "{first:#}");
    for unit in ["test/ext.test.ts", "test/flag.test.ts"] {
        assert!(ran(&first).contains(&unit.to_string()), "{unit}: {first:#}");
    }
    let again = gate(&t, db, &[]);
    assert_eq!(again["exit_code"], 0, "{again:#}");
    for unit in ["test/ext.test.ts", "test/flag.test.ts"] {
        assert!(
            reused(&again).contains(&unit.to_string()),
            "{unit}: {again:#}"
        );
    }
    // The same size, the same version: only the content says it changed.
    std::fs::write(package.join("index.js"), "exports.RATE = 2;\n").unwrap();
    let edited = gate(&t, db, &[]);
    assert_eq!(edited["exit_code"], 1, "{edited:#}");
    assert!(
        ran(&edited).contains(&"test/ext.test.ts".to_string()),
        "{edited:#}"
    );
    std::fs::write(package.join("index.js"), "exports.RATE = 1;\n").unwrap();
    settle();
    let restored = gate(&t, db, &[]);
    assert_eq!(restored["exit_code"], 0, "{restored:#}");
    // How Node runs, whatever the tests read: another mode is another input.
    let (production, _) = gate_with(&t, db, &[("NODE_ENV", Some("production"))]);
    assert!(reused(&production).is_empty(), "{production:#}");
    assert!(
        ran(&production).contains(&"test/ext.test.ts".to_string()),
        "{production:#}"
    );
    // A file Vite looked for and did not find, appearing.
    std::fs::write(t.root.join(".env.local"), "VITE_FLAG=on\n").unwrap();
    let flagged = gate(&t, db, &[]);
    assert_eq!(flagged["exit_code"], 1, "{flagged:#}");
    assert!(
        ran(&flagged).contains(&"test/flag.test.ts".to_string()),
        "{flagged:#}"
    );
}

on_both!(what_a_jest_run_read_outside_the_tree_binds_its_pass: jest_sqlite, jest_postgres);
/// The same for Jest, whose own cache (read and rewritten by every run) is its state: a pass is
/// reused, and an installed package's file edited in place runs the test again.
fn what_a_jest_run_read_outside_the_tree_binds_its_pass(kind: Kind) {
    let t = repo("jest");
    let store = Store::new(kind, &t);
    let db = store.url.as_str();
    let package = installed(&t);
    t.write(
        "package.json",
        r#"{"name":"jt","private":true,"dependencies":{"gate-ext":"1.0.0"},"devDependencies":{"jest":"^30.5.2"}}"#,
    );
    t.write(
        "spec/ext.spec.js",
        "const { RATE } = require('gate-ext');\nconst { cents } = require('../lib/money');\n\ntest('rate', () => {\n  expect(cents(RATE)).toBe(100);\n});\n",
    );
    t.commit("a test of an installed package");
    t.branch("feature");
    t.checkout("feature");
    t.append("lib/money.js", "\n// reviewed\n");
    t.commit("money");
    settle();
    let first = gate(&t, db, &[]);
    assert_eq!(first["exit_code"], 0, "{first:#}");
    assert!(
        ran(&first).contains(&"spec/ext.spec.js".to_string()),
        "{first:#}"
    );
    let again = gate(&t, db, &[]);
    assert!(
        reused(&again).contains(&"spec/ext.spec.js".to_string()),
        "{again:#}"
    );
    std::fs::write(package.join("index.js"), "exports.RATE = 2;\n").unwrap();
    let edited = gate(&t, db, &[]);
    assert_eq!(edited["exit_code"], 1, "{edited:#}");
    assert!(
        ran(&edited).contains(&"spec/ext.spec.js".to_string()),
        "{edited:#}"
    );
}

on_both!(what_a_vitest_run_reads_beyond_its_imports_binds_its_pass: beyond_sqlite, beyond_postgres);
/// What a run reads that no import reaches, each changed after a pass: a committed `.env`
/// Vite loads (changed on master, merged: the range's diff is still one module), a variable
/// the Vitest configuration reads, what a folder outside the tree holds, and a file opened
/// read-write — each test runs again and fails instead of being reused.
fn what_a_vitest_run_reads_beyond_its_imports_binds_its_pass(kind: Kind) {
    let t = repo("vitest");
    let store = Store::new(kind, &t);
    let db = store.url.as_str();
    let home = t.root.parent().unwrap().to_path_buf();
    std::fs::create_dir_all(home.join("plugins")).unwrap();
    std::fs::write(home.join("plugins/one.js"), "").unwrap();
    std::fs::write(home.join("state.txt"), "ok").unwrap();
    t.write(".env", "VITE_FLAG=off\n");
    t.append(
        "vitest.config.ts",
        "\nprocess.env.CFG_MODE = process.env.GATE_CFG_MODE ?? 'a';\n",
    );
    let test = |name: &str, body: &str| {
        t.write(
            &format!("test/{name}.test.ts"),
            &format!(
                "import {{ test, expect }} from 'vitest';\nimport {{ readdirSync, openSync, readSync }} from 'node:fs';\nimport {{ homedir }} from 'node:os';\nimport {{ join }} from 'node:path';\nimport {{ add }} from '../src/math';\n\ntest('{name}', () => {{\n  expect(add(1, 1)).toBe(2);\n  {body}\n}});\n"
            ),
        );
    };
    test("envfile", "expect(import.meta.env.VITE_FLAG).toBe('off');");
    test("cfg", "expect(process.env.CFG_MODE).toBe('a');");
    test(
        "listing",
        "expect(readdirSync(join(homedir(), 'plugins')).length).toBe(1);",
    );
    test(
        "rplus",
        "const b = Buffer.alloc(2); readSync(openSync(join(homedir(), 'state.txt'), 'r+'), b); expect(b.toString()).toBe('ok');",
    );
    t.commit("tests of what a run reads beyond its imports");
    t.branch("feature");
    t.checkout("feature");
    t.append("src/math.ts", "\n// reviewed\n");
    t.commit("math");
    settle();
    let units = [
        "test/cfg.test.ts",
        "test/envfile.test.ts",
        "test/listing.test.ts",
        "test/rplus.test.ts",
    ];
    let first = gate(&t, db, &[]);
    assert_eq!(first["exit_code"], 0, "{first:#}");
    let again = gate(&t, db, &[]);
    for unit in units {
        assert!(
            reused(&again).contains(&unit.to_string()),
            "{unit}: {again:#}"
        );
    }
    let runs = |doc: &serde_json::Value, unit: &str| {
        assert_eq!(doc["exit_code"], 1, "{unit}: {doc:#}");
        assert!(ran(doc).contains(&unit.to_string()), "{unit}: {doc:#}");
    };
    let (cfg, _) = gate_with(&t, db, &[("GATE_CFG_MODE", Some("b"))]);
    runs(&cfg, "test/cfg.test.ts");
    std::fs::write(home.join("plugins/two.js"), "").unwrap();
    runs(&gate(&t, db, &[]), "test/listing.test.ts");
    std::fs::write(home.join("state.txt"), "no").unwrap();
    runs(&gate(&t, db, &[]), "test/rplus.test.ts");
    t.checkout("master");
    t.write(".env", "VITE_FLAG=on\n");
    t.commit("the flag on");
    t.checkout("feature");
    t.merge("master", "master");
    runs(&gate(&t, db, &[]), "test/envfile.test.ts");
}
