//! The ledger with real Vitest runs on both stores: a Vitest file's pass is entered bound to
//! what its run read outside the tree — observed by strace, since Node has no audit hook —
//! and reused while none of it changed; an installed package's file edited in place (its
//! version and size unchanged) and a git-ignored `.env.local` Vite loads appearing each make
//! the test run again and fail instead of being reused, and another `NODE_ENV` runs it again.

use crate::history::{Kind, Store};
use crate::js::repo_in;
use crate::ledger::{gate, gate_with, ran, reused};
use crate::ledger_inputs::settle;
use std::path::PathBuf;

/// A folder for `kind`'s repository whose parents no other test writes to while it runs:
/// Node and Vite look files up in every folder above the project (`package.json`,
/// `pnpm-workspace.yaml`, `node_modules`), and a file looked for and absent whose folder
/// changed during the run may have been there for a moment — such a run is not entered, and
/// the shared temporary folder changes all the time.
fn quiet(kind: Kind) -> PathBuf {
    let top = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("js-ledger");
    for each in ["sqlite", "postgres"] {
        std::fs::create_dir_all(top.join(each)).unwrap();
    }
    top.join(match kind {
        Kind::Sqlite => "sqlite",
        Kind::Postgres => "postgres",
    })
}

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
    let t = repo_in("vitest", &quiet(kind));
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
    let t = repo_in("jest", &quiet(kind));
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
