//! The green ledger, on both stores with real pytest runs: a test that passed with the same
//! inputs is reused, not run — after a rebase onto an unrelated main commit, after a failure
//! in an unrelated step — and runs again when any input of its changes, after it failed, when
//! it is known flaky, with `--no-reuse`, on a branch whose passes are not trusted, and when
//! the store is down.

use crate::history::{Kind, Store};
use crate::support::{TestRepo, text};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `gate --affected master...HEAD --json` with `db` as the store: the report.
pub(crate) fn gate(t: &TestRepo, db: &str, extra: &[&str]) -> Value {
    let mut args = vec!["--affected", "master...HEAD", "--json"];
    args.extend(extra);
    let out = t.gate(&args).env("GATE_DB", db).output().unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(&out)));
    crate::plans::validate("report.schema.json", &doc);
    doc
}

/// `gate --affected master...HEAD --json` with `db` as the store and the process's variables
/// set (`Some`) or removed (`None`): the report (checked against its schema) and stderr.
pub(crate) fn gate_with(t: &TestRepo, db: &str, vars: &[(&str, Option<&str>)]) -> (Value, String) {
    let mut cmd = t.gate(&["--affected", "master...HEAD", "--json"]);
    cmd.env("GATE_DB", db);
    for (name, value) in vars {
        match value {
            Some(v) => cmd.env(name, v),
            None => cmd.env_remove(name),
        };
    }
    let out = cmd.output().unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(&out)));
    crate::plans::validate("report.schema.json", &doc);
    (doc, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// A branch `feature` off master whose one commit touches `src/shop/money.py` (every money
/// test selected), checked out.
pub(crate) fn money_on_a_branch(t: &TestRepo) {
    t.branch("feature");
    t.checkout("feature");
    t.append("src/shop/money.py", "\n# reviewed\n");
    t.commit("money");
}

pub(crate) fn reused(doc: &Value) -> Vec<String> {
    doc["reused"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap().to_string())
        .collect()
}

/// The test files that ran (had results).
pub(crate) fn ran(doc: &Value) -> Vec<String> {
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
    money_on_a_branch(&t);
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

on_both!(a_skip_is_never_entered_as_a_pass: skip_sqlite, skip_postgres);
/// A test skipped by a condition on the environment (a tool not on PATH) is not a pass: its unit
/// is not entered, so when the condition flips it runs — and fails — instead of being reused.
fn a_skip_is_never_entered_as_a_pass(kind: Kind) {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(kind, &t);
    let db = store.url.as_str();
    t.write(
        "tests/test_tool.py",
        "import shutil\n\nimport pytest\n\nfrom shop.money import to_cents\n\n\n\
         @pytest.mark.skipif(shutil.which('gate-skip-tool') is None, reason='no tool')\n\
         def test_tool():\n    assert to_cents(1) == 0\n",
    );
    t.commit("a test that needs a tool");
    money_on_a_branch(&t);
    let bin = t.root.parent().unwrap().join("tool-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let path = |with_tool: bool| {
        let old = std::env::var("PATH").unwrap_or_default();
        if with_tool {
            format!("{}:{old}", bin.display())
        } else {
            old
        }
    };
    let run = |with_tool: bool| gate_with(&t, db, &[("PATH", Some(&path(with_tool)))]).0;
    let first = run(false);
    assert!(
        ran(&first).contains(&"tests/test_tool.py".to_string()),
        "{first:#}"
    );
    let again = run(false);
    assert!(
        !reused(&again).contains(&"tests/test_tool.py".to_string()),
        "an all-skipped unit is never reused: {again:#}"
    );
    assert!(
        reused(&again).contains(&"tests/test_money.py".to_string()),
        "{again:#}"
    );
    // The tool appears: the test runs, and fails.
    let tool = bin.join("gate-skip-tool");
    std::fs::write(&tool, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let flipped = run(true);
    assert_eq!(flipped["exit_code"], 1, "{flipped:#}");
    assert!(
        ran(&flipped).contains(&"tests/test_tool.py".to_string()),
        "{flipped:#}"
    );
}

on_both!(the_environment_a_fingerprint_cannot_name_is_never_reused: env_sqlite, env_postgres);
/// A variable read by a computed name makes the fingerprint unknown (never reused, and `gate
/// explain --fingerprint` names the line); an interpreter variable (`PYTHONOPTIMIZE`) is in
/// every fingerprint. Each flips a passing test to failing with no file changed.
fn the_environment_a_fingerprint_cannot_name_is_never_reused(kind: Kind) {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(kind, &t);
    let db = store.url.as_str();
    t.write(
        "tests/test_mode.py",
        "import os\n\nfrom shop.money import to_cents\n\nKEY = 'SHOP' + '_MODE'\n\n\n\
         def test_mode():\n    assert os.environ.get(KEY, 'ok') == 'ok'\n",
    );
    t.write(
        "tests/test_debug.py",
        "from shop.money import to_cents\n\n\ndef test_debug():\n    if not __debug__:\n        raise AssertionError('optimized')\n",
    );
    t.commit("tests that read the environment");
    money_on_a_branch(&t);
    let run = |vars: &[(&str, &str)]| {
        let mut all: Vec<(&str, Option<&str>)> =
            vec![("SHOP_MODE", None), ("PYTHONOPTIMIZE", None)];
        all.extend(vars.iter().map(|(k, v)| (*k, Some(*v))));
        gate_with(&t, db, &all).0
    };
    let first = run(&[]);
    assert_eq!(first["exit_code"], 0, "{first:#}");
    let again = run(&[]);
    let reused_now = reused(&again);
    assert!(
        !reused_now.contains(&"tests/test_mode.py".to_string()),
        "{again:#}"
    );
    assert!(
        reused_now.contains(&"tests/test_debug.py".to_string()),
        "{again:#}"
    );
    let mode = run(&[("SHOP_MODE", "bad")]);
    assert_eq!(mode["exit_code"], 1, "{mode:#}");
    assert!(
        ran(&mode).contains(&"tests/test_mode.py".to_string()),
        "{mode:#}"
    );
    let optimized = run(&[("PYTHONOPTIMIZE", "1")]);
    assert_eq!(optimized["exit_code"], 1, "{optimized:#}");
    assert!(
        ran(&optimized).contains(&"tests/test_debug.py".to_string()),
        "{optimized:#}"
    );
    let explain = t
        .gate(&["explain", "tests/test_mode.py", "--fingerprint"])
        .output()
        .unwrap();
    assert!(
        text(&explain).contains(
            "tests/test_mode.py:9: reads the environment by a name gate cannot know (`os.environ.get(KEY, 'ok')`)"
        ),
        "{}",
        text(&explain)
    );
}

on_both!(a_git_ignored_file_read_by_a_literal_path_is_hashed_by_content: ignored_sqlite, ignored_postgres);
/// A file git ignores (`tests/local.env`) is no blob of the tree, but the test reads it where
/// it runs: its content is the input, whatever git says — editing it runs the test again
/// (and it fails), with no commit in between and the closure cache warm.
fn a_git_ignored_file_read_by_a_literal_path_is_hashed_by_content(kind: Kind) {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(kind, &t);
    let db = store.url.as_str();
    t.write(".gitignore", "tests/local.env\n");
    t.write(
        "tests/test_local.py",
        "from pathlib import Path\n\nfrom shop.money import to_cents\n\n\n\
         def test_local():\n    assert (Path(__file__).parent / 'local.env').read_text() == 'MODE=ok\\n'\n",
    );
    t.commit("a test that reads an ignored file");
    t.write("tests/local.env", "MODE=ok\n");
    money_on_a_branch(&t);
    let first = gate(&t, db, &[]);
    assert_eq!(first["exit_code"], 0, "{first:#}");
    assert!(
        ran(&first).contains(&"tests/test_local.py".to_string()),
        "{first:#}"
    );
    let again = gate(&t, db, &[]);
    assert!(
        reused(&again).contains(&"tests/test_local.py".to_string()),
        "{again:#}"
    );
    t.write("tests/local.env", "MODE=bad\n");
    let edited = gate(&t, db, &[]);
    assert_eq!(edited["exit_code"], 1, "{edited:#}");
    assert!(
        ran(&edited).contains(&"tests/test_local.py".to_string()),
        "{edited:#}"
    );
    let explain = t
        .gate(&["explain", "tests/test_local.py", "--fingerprint"])
        .output()
        .unwrap();
    assert!(
        text(&explain).contains("tests/local.env"),
        "{}",
        text(&explain)
    );
}

on_both!(pytest_configuration_above_the_repository_is_an_input: above_sqlite, above_postgres);
/// With no pytest configuration at its root, pytest's rootdir search walks above the
/// repository: a `pytest.ini` there (`filterwarnings = error`) turns a pass into a failure, so
/// it is hashed into every fingerprint; a `conftest.py` there cannot be bounded: unknown.
fn pytest_configuration_above_the_repository_is_an_input(kind: Kind) {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(kind, &t);
    let db = store.url.as_str();
    t.remove("pyproject.toml");
    t.write(
        "tests/test_warn.py",
        "import warnings\n\n\ndef test_warn():\n    warnings.warn(UserWarning('careful'))\n",
    );
    t.commit("no pytest configuration at the root");
    t.branch("feature");
    t.checkout("feature");
    t.append("tests/test_warn.py", "\n# reviewed\n");
    t.commit("warn");
    let first = gate(&t, db, &[]);
    assert_eq!(first["exit_code"], 0, "{first:#}");
    let again = gate(&t, db, &[]);
    assert_eq!(reused(&again), ["tests/test_warn.py"], "{again:#}");
    let parent = t.root.parent().unwrap();
    // A configuration above that changes nothing: a new input, run once, then reused — the
    // closures kept after the first run do not hold the file above as one of the tree's.
    std::fs::write(parent.join("pytest.ini"), "[pytest]\n").unwrap();
    // As in a fresh clone: no closure kept yet.
    std::fs::remove_dir_all(t.root.join(".git/gate/cache")).unwrap();
    let plain = gate(&t, db, &[]);
    assert!(reused(&plain).is_empty(), "{plain:#}");
    let plain_again = gate(&t, db, &[]);
    assert_eq!(
        reused(&plain_again),
        ["tests/test_warn.py"],
        "{plain_again:#}"
    );
    std::fs::write(
        parent.join("pytest.ini"),
        "[pytest]\nfilterwarnings = error\n",
    )
    .unwrap();
    let above = gate(&t, db, &[]);
    assert!(reused(&above).is_empty(), "{above:#}");
    assert_eq!(
        above["exit_code"], 1,
        "the parent's pytest.ini fails it: {above:#}"
    );
    std::fs::remove_file(parent.join("pytest.ini")).unwrap();
    std::fs::write(parent.join("conftest.py"), "").unwrap();
    let explain = t
        .gate(&["explain", "tests/test_warn.py", "--fingerprint"])
        .output()
        .unwrap();
    assert!(
        text(&explain).contains("a conftest.py above the repository, loaded by every test"),
        "{}",
        text(&explain)
    );
}

on_both!(code_outside_the_repository_on_the_import_path_is_never_reused: outside_sqlite, outside_postgres);
/// A `[env] PYTHONPATH` folder outside the repository holds code the test imports: gate hashes
/// none of it, so the fingerprint is unknown (named) and an edit there is run, not reused.
fn code_outside_the_repository_on_the_import_path_is_never_reused(kind: Kind) {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(kind, &t);
    let db = store.url.as_str();
    let outside = t.root.parent().unwrap().join("outside-lib");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("extlib.py"), "RATE = 1\n").unwrap();
    t.write(
        ".gate.toml",
        &format!("[env]\nPYTHONPATH = \"{}\"\n", outside.display()),
    );
    t.write(
        "tests/test_extlib.py",
        "import extlib\n\nfrom shop.money import to_cents\n\n\ndef test_rate():\n    assert extlib.RATE == 1\n",
    );
    t.commit("a test that imports code from outside the repository");
    money_on_a_branch(&t);
    let first = gate(&t, db, &[]);
    assert_eq!(first["exit_code"], 0, "{first:#}");
    let again = gate(&t, db, &[]);
    assert!(reused(&again).is_empty(), "{again:#}");
    std::fs::write(outside.join("extlib.py"), "RATE = 2\n").unwrap();
    let edited = gate(&t, db, &[]);
    assert_eq!(edited["exit_code"], 1, "{edited:#}");
    let explain = t
        .gate(&["explain", "tests/test_extlib.py", "--fingerprint"])
        .output()
        .unwrap();
    assert!(
        text(&explain).contains("a folder on the import path outside the repository"),
        "{}",
        text(&explain)
    );
}

on_both!(a_variable_the_run_was_seen_reading_keeps_its_pass_out: observed_sqlite, observed_postgres);
/// A variable read in a form the analyser does not know (`os` under another name) is not in
/// the fingerprint; the run's probe sees the read, so the pass is not entered, said with the
/// name — and when the variable changes, the test runs and fails instead of being reused.
fn a_variable_the_run_was_seen_reading_keeps_its_pass_out(kind: Kind) {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(kind, &t);
    let db = store.url.as_str();
    t.write(
        "src/shop/region.py",
        "import os as _system\n\nREGION = _system.environ['SHOP_REGION']\n",
    );
    t.write(
        "tests/test_region.py",
        "from shop.money import to_cents\nfrom shop.region import REGION\n\n\ndef test_region():\n    assert REGION == 'eu'\n",
    );
    t.commit("a module that reads a variable through an alias of os");
    money_on_a_branch(&t);
    let run = |region: &str| gate_with(&t, db, &[("SHOP_REGION", Some(region))]);
    let (first, said) = run("eu");
    assert_eq!(first["exit_code"], 0, "{first:#}");
    assert!(
        said.contains(
            "ledger: 1 test file(s) read variables their fingerprint does not hold: their passes are not entered (name the variables in [ledger] env) — tests/test_region.py: SHOP_REGION"
        ),
        "{said}"
    );
    let (again, _) = run("eu");
    assert!(
        !reused(&again).contains(&"tests/test_region.py".to_string()),
        "{again:#}"
    );
    assert!(
        reused(&again).contains(&"tests/test_money.py".to_string()),
        "{again:#}"
    );
    let (changed, _) = run("us");
    assert_eq!(changed["exit_code"], 1, "{changed:#}");
    assert!(
        ran(&changed).contains(&"tests/test_region.py".to_string()),
        "{changed:#}"
    );
}

on_both!(observed_loads_bound_an_import_named_at_run_time: loads_sqlite, loads_postgres);
/// An import named at run time (`import_module(name)`, the name read from a file) makes a
/// fingerprint unknown until a whole, passing run was observed: the repository modules loaded
/// by the end of it (whichever test file loaded them first) bound what the name resolved to,
/// and join the fingerprint — so the pass is reused, and an edit to a loaded module (or to
/// the file naming it) runs it again.
fn observed_loads_bound_an_import_named_at_run_time(kind: Kind) {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(kind, &t);
    let db = store.url.as_str();
    t.write(
        "src/shop/loader.py",
        "import importlib\nimport os\n\nHERE = os.path.dirname(__file__)\n\n\ndef load():\n    with open(os.path.join(HERE, 'addons.txt')) as f:\n        names = f.read().split()\n    return [importlib.import_module(n) for n in names]\n",
    );
    t.write("src/shop/addons.txt", "shop.addons.first\n");
    t.write("src/shop/addons/__init__.py", "");
    t.write("src/shop/addons/first.py", "VALUE = 1\n");
    t.write("src/shop/addons/second.py", "VALUE = 2\n");
    // The first test file loads the add-on; the second finds it in sys.modules, unopened.
    for name in ["tests/test_addons_early.py", "tests/test_loader.py"] {
        t.write(
            name,
            "from shop.loader import load\nfrom shop.money import to_cents\n\n\ndef test_load():\n    assert [m.VALUE for m in load()] == [1]\n",
        );
    }
    t.commit("add-ons loaded by a name read from a file");
    money_on_a_branch(&t);
    let loader_tests = ["tests/test_addons_early.py", "tests/test_loader.py"];
    let first = gate(&t, db, &[]);
    assert_eq!(first["exit_code"], 0, "{first:#}");
    for test in loader_tests {
        assert!(ran(&first).contains(&test.to_string()), "{first:#}");
    }
    let again = gate(&t, db, &[]);
    for test in loader_tests {
        assert!(reused(&again).contains(&test.to_string()), "{again:#}");
    }
    // An edit to the loaded module: both run again, and fail.
    t.write("src/shop/addons/first.py", "VALUE = 5\n");
    t.commit("the add-on changes");
    let edited = gate(&t, db, &[]);
    assert_eq!(edited["exit_code"], 1, "{edited:#}");
    for test in loader_tests {
        assert!(ran(&edited).contains(&test.to_string()), "{edited:#}");
    }
    // Back to the passing module, then the file naming what loads changes.
    t.write("src/shop/addons/first.py", "VALUE = 1\n");
    t.commit("the add-on as it was");
    let back = gate(&t, db, &[]);
    assert_eq!(back["exit_code"], 0, "{back:#}");
    t.write("src/shop/addons.txt", "shop.addons.second\n");
    t.commit("another add-on is named");
    let renamed = gate(&t, db, &[]);
    assert_eq!(renamed["exit_code"], 1, "{renamed:#}");
    for test in loader_tests {
        assert!(ran(&renamed).contains(&test.to_string()), "{renamed:#}");
    }
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
    money_on_a_branch(&t);
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

/// A deterministic generator (xorshift64*): the trial's seed fixes every mutation.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) % n
    }
}

/// How often the trial moved each class's input.
fn say_per_class(moved: &[usize; CLASSES.len()]) {
    let per_class: Vec<String> = CLASSES
        .iter()
        .zip(moved)
        .map(|(c, n)| format!("{c:?} {n}"))
        .collect();
    eprintln!(
        "ledger safety: mutations per class: {}",
        per_class.join(", ")
    );
}

/// Every mutation that can fail a test did, in some state: the trial's classes reach the
/// tests they are meant to (the interpreter's and the Go dependency's among them).
fn every_class_failed_a_test<K: std::fmt::Debug>(truths: &BTreeMap<K, BTreeMap<String, bool>>) {
    for test in [
        "tests/test_ext.py",
        "tests/test_flags.py",
        "tests/test_mode.py",
        "tests/test_debug.py",
        "tests/test_kind.py",
        "tests/test_region.py",
        "tests/test_local.py",
        "tests/test_tool.py",
        "tests/test_addon.py",
        "tests/test_addon_again.py",
        "tests/test_conf.py",
        "tests/test_settings.py",
        "tests/test_shared.py",
        "./go/calc",
    ] {
        assert!(
            truths.values().any(|truth| truth.get(test) == Some(&false)),
            "{test} never failed: {truths:?}"
        );
    }
}

/// The mutation classes of the safety trial, each toggling one input between states a test
/// passes and fails in (or, for the lock file, one no test reads).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    /// A source blob: `to_cents` off by a cent.
    Source,
    /// A conftest fixture: the price every money test is given.
    Conftest,
    /// A data file read through a path expression.
    Data,
    /// A lock file entry (no test reads it; every fingerprint holds it).
    Lock,
    /// A variable a package reads by name (`os.environ.get("SHOP_FAIL")`).
    Env,
    /// The runner's configuration: `[env]` in `.gate.toml`, committed.
    Runner,
    /// A parent package's constant the tests reach.
    Parent,
    /// The interpreter's installed packages: `.venv` switched to a second virtualenv whose
    /// `shopext` distribution is another version.
    Interpreter,
    /// A Go dependency package: the locally replaced module the Go test imports.
    GoDependency,
    /// An interpreter variable: `PYTHONOPTIMIZE` strips `__debug__` code.
    Optimize,
    /// A variable read by a name the analyser cannot know (`os.environ.get(KEY)`).
    Computed,
    /// A variable read through `os` under another name: only the run's probe sees it.
    Observed,
    /// A git-ignored file a test reads by a literal path.
    Ignored,
    /// A skip condition: a tool appearing on `PATH` un-skips a test that fails.
    Skip,
    /// A module loaded by a name read at run time (`import_module(name)`): only the run's
    /// observed loads bound it, and the second test file finds it in `sys.modules`.
    Loaded,
    /// An installed distribution's module edited in place, its version unchanged (both
    /// virtualenvs' `shopext.py`).
    Installed,
    /// A git-ignored root `conftest.py` whose autouse fixture fails one test.
    IgnoredConftest,
    /// A git-ignored module a tracked one imports under `try`: it appears and goes.
    IgnoredModule,
    /// A git-ignored `.go` file of the Go package's folder: it appears and goes.
    GoIgnored,
    /// A file above the repository that a Python test and the Go test read by a relative path.
    Shared,
}

// Code outside the repository on the import path is no class here: it makes every Python
// fingerprint unknown (the interpreter's identity), so nothing of it could be reused;
// `code_outside_the_repository_on_the_import_path_is_never_reused` shows it.
const CLASSES: [Class; 20] = [
    Class::Source,
    Class::Conftest,
    Class::Data,
    Class::Lock,
    Class::Env,
    Class::Runner,
    Class::Parent,
    Class::Interpreter,
    Class::GoDependency,
    Class::Optimize,
    Class::Computed,
    Class::Observed,
    Class::Ignored,
    Class::Skip,
    Class::Loaded,
    Class::Installed,
    Class::IgnoredConftest,
    Class::IgnoredModule,
    Class::GoIgnored,
    Class::Shared,
];

/// The classes whose input is the process's environment (set by the run, not by `mutate`).
fn variables(state: &[bool; CLASSES.len()], tools: &Path) -> Vec<(&'static str, String)> {
    let path = std::env::var("PATH").unwrap_or_default();
    let on = |class: Class| state[CLASSES.iter().position(|c| *c == class).unwrap()];
    vec![
        ("SHOP_FAIL", if on(Class::Env) { "1" } else { "" }.into()),
        (
            "PYTHONOPTIMIZE",
            if on(Class::Optimize) { "1" } else { "" }.into(),
        ),
        (
            "SHOP_KIND",
            if on(Class::Computed) { "b" } else { "a" }.into(),
        ),
        (
            "SHOP_REGION",
            if on(Class::Observed) { "us" } else { "eu" }.into(),
        ),
        (
            "PATH",
            if on(Class::Skip) {
                format!("{}:{path}", tools.display())
            } else {
                path
            },
        ),
    ]
}

/// Moves `class`'s input to its `on` (or off) state.
fn mutate(t: &TestRepo, venvs: &[PathBuf; 2], class: Class, on: bool, trial: u64) {
    match class {
        Class::Source => {
            let body = if on { " + 1" } else { "" };
            t.write(
                "src/shop/money.py",
                &format!("CENTS = 100\n\n\ndef to_cents(amount):\n    return round(amount * CENTS){body}\n"),
            );
        }
        Class::Conftest => {
            let price = if on { "11.0" } else { "10.0" };
            t.write(
                "tests/conftest.py",
                &format!("import pytest\n\n\n@pytest.fixture\ndef price():\n    return {price}\n"),
            );
        }
        Class::Data => {
            let apple = if on { 4 } else { 3 };
            t.write(
                "tests/data/prices.json",
                &format!("{{\"apple\": {apple}}}\n"),
            );
        }
        Class::Lock => {
            t.write(
                "requirements.txt",
                if on { "pytest==8.1\n" } else { "pytest==8.0\n" },
            );
        }
        Class::Env | Class::Optimize | Class::Computed | Class::Observed | Class::Skip => {}
        Class::Ignored => {
            t.write(
                "tests/local.env",
                if on { "MODE=bad\n" } else { "MODE=ok\n" },
            );
        }
        Class::Runner => {
            let mode = if on { "strict" } else { "lax" };
            t.write(".gate.toml", &format!("[env]\nSHOP_MODE = \"{mode}\"\n"));
            t.commit(&format!("runner {trial}"));
        }
        Class::Parent => {
            t.write(
                "src/shop/__init__.py",
                if on { "LIMIT = 99\n" } else { "LIMIT = 100\n" },
            );
        }
        Class::Interpreter => {
            let link = t.root.join(".venv");
            std::fs::remove_file(&link).unwrap();
            std::os::unix::fs::symlink(&venvs[usize::from(on)], &link).unwrap();
        }
        Class::Loaded => {
            t.write(
                "src/shop/addon.py",
                if on { "VALUE = 2\n" } else { "VALUE = 1\n" },
            );
        }
        Class::GoDependency => {
            let rate = if on { 2 } else { 1 };
            t.write(
                "go/helper/rate/rate.go",
                &format!("package rate\n\nconst Rate = {rate}\n"),
            );
        }
        Class::Installed
        | Class::IgnoredConftest
        | Class::IgnoredModule
        | Class::GoIgnored
        | Class::Shared => beside(t, venvs, class, on),
    }
}

/// Moves the input of a class outside the tree (part 20's) to its `on` (or off) state.
fn beside(t: &TestRepo, venvs: &[PathBuf; 2], class: Class, on: bool) {
    match class {
        Class::Installed => {
            for (venv, rate) in venvs.iter().zip([1, 2]) {
                let rate = if on { rate + 10 } else { rate };
                let site = crate::ledger_inputs::site_of(venv);
                std::fs::write(site.join("shopext.py"), format!("RATE = {rate}\n")).unwrap();
            }
        }
        Class::IgnoredConftest => {
            let failing = if on { "test_conf.py" } else { "none" };
            t.write(
                "conftest.py",
                &format!("import pytest\n\n\n@pytest.fixture(autouse=True)\ndef _local(request):\n    if request.node.path.name == '{failing}':\n        raise AssertionError('the local conftest')\n"),
            );
        }
        Class::IgnoredModule => {
            let module = t.root.join("src/shop/local_settings.py");
            if on {
                t.write("src/shop/local_settings.py", "LIMIT = 5\n");
            } else {
                std::fs::remove_file(module).unwrap();
            }
        }
        Class::GoIgnored => {
            if on {
                t.write(
                    "go/calc/zz_local.go",
                    "package calc\n\nfunc init() { bump = 1 }\n",
                );
            } else {
                t.remove("go/calc/zz_local.go");
            }
        }
        Class::Shared => {
            let text = if on { "no\n" } else { "ok\n" };
            std::fs::write(t.root.parent().unwrap().join("trial-shared.txt"), text).unwrap();
        }
        _ => unreachable!("{class:?} is a class of the tree"),
    }
}

/// Every test file's (and Go package's) outcome in a report: passed when every case passed
/// or was skipped.
fn outcomes(doc: &Value) -> BTreeMap<String, bool> {
    let mut out = BTreeMap::new();
    for t in doc["tests"].as_array().unwrap() {
        let file = t["file"].as_str().unwrap().to_string();
        let ok = matches!(t["outcome"].as_str(), Some("passed" | "skipped"));
        let entry = out.entry(file).or_insert(true);
        *entry &= ok;
    }
    out
}

/// A virtualenv over the interpreter that has pytest, with a hand-installed `shopext`
/// distribution of `version` whose `RATE` is `rate`.
pub(crate) fn venv(at: &Path, version: &str, rate: u32) -> PathBuf {
    let made = std::process::Command::new("python3")
        .args(["-m", "venv", "--system-site-packages", "--without-pip"])
        .arg(at)
        .status()
        .unwrap();
    assert!(made.success(), "python3 -m venv {}", at.display());
    let purelib = std::process::Command::new(at.join("bin/python"))
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ])
        .output()
        .unwrap();
    let site = PathBuf::from(String::from_utf8(purelib.stdout).unwrap().trim());
    std::fs::write(site.join("shopext.py"), format!("RATE = {rate}\n")).unwrap();
    let info = site.join(format!("shopext-{version}.dist-info"));
    std::fs::create_dir_all(&info).unwrap();
    std::fs::write(
        info.join("METADATA"),
        format!("Metadata-Version: 2.1\nName: shopext\nVersion: {version}\n"),
    )
    .unwrap();
    // As pip installs it: the distribution owns its module (a module no distribution owns is
    // code gate does not hash, and makes every fingerprint unknown).
    std::fs::write(
        info.join("RECORD"),
        format!("shopext.py,,\nshopext-{version}.dist-info/METADATA,,\n"),
    )
    .unwrap();
    at.to_path_buf()
}

/// The trial's inputs beside the tree: a git-ignored root conftest, a git-ignored module a
/// tracked one imports under `try`, a file above the repository a Python test reads (the Go
/// test reads it too), and the tests each of them can fail.
fn beside_fixture(t: &TestRepo) {
    let none = [PathBuf::new(), PathBuf::new()];
    t.write(
        ".gitignore",
        "tests/local.env\n/conftest.py\nsrc/shop/local_settings.py\ngo/calc/zz_local.go\n",
    );
    beside(t, &none, Class::IgnoredConftest, false);
    beside(t, &none, Class::Shared, false);
    t.write(
        "src/shop/settings.py",
        "try:\n    from shop.local_settings import LIMIT\nexcept ImportError:\n    LIMIT = 100\n",
    );
    t.write(
        "tests/test_settings.py",
        "from shop.settings import LIMIT\n\n\ndef test_limit():\n    assert LIMIT == 100\n",
    );
    t.write("tests/test_conf.py", "def test_conf():\n    pass\n");
    t.write(
        "tests/test_shared.py",
        "def test_shared():\n    assert open('../trial-shared.txt').read() == 'ok\\n'\n",
    );
}

/// The shop fixture with tests that read a variable by name, the runner's `[env]`, a parent
/// package's constant and an installed distribution, a lock file, and a Go module whose test
/// reaches a locally replaced module. `.venv` is the first of the two virtualenvs.
fn trial_repo() -> (TestRepo, [PathBuf; 2]) {
    let t = TestRepo::from_fixture("shop");
    t.write("src/shop/__init__.py", "LIMIT = 100\n");
    t.write(
        "src/shop/flags.py",
        "import os\n\nFAIL = os.environ.get('SHOP_FAIL') == '1'\n",
    );
    t.write(
        "tests/test_flags.py",
        "from shop import LIMIT\nfrom shop.flags import FAIL\n\n\ndef test_flags():\n    assert not FAIL\n    assert LIMIT == 100\n",
    );
    t.write(
        "tests/test_mode.py",
        "import os\n\n\ndef test_mode():\n    assert os.environ.get('SHOP_MODE', 'lax') == 'lax'\n",
    );
    t.write(
        "tests/test_ext.py",
        "import shopext\n\n\ndef test_rate():\n    assert shopext.RATE == 1\n",
    );
    t.write("requirements.txt", "pytest==8.0\n");
    t.write(
        "tests/test_debug.py",
        "def test_debug():\n    if not __debug__:\n        raise AssertionError('optimized')\n",
    );
    t.write(
        "tests/test_kind.py",
        "import os\n\nKEY = 'SHOP' + '_KIND'\n\n\ndef test_kind():\n    if os.environ.get(KEY, 'a') != 'a':\n        raise AssertionError('kind')\n",
    );
    t.write(
        "src/shop/region.py",
        "import os as _system\n\nREGION = _system.environ.get('SHOP_REGION', 'eu')\n",
    );
    t.write(
        "tests/test_region.py",
        "from shop.region import REGION\n\n\ndef test_region():\n    if REGION != 'eu':\n        raise AssertionError(REGION)\n",
    );
    t.write("tests/local.env", "MODE=ok\n");
    t.write(
        "tests/test_local.py",
        "from pathlib import Path\n\n\ndef test_local():\n    text = (Path(__file__).parent / 'local.env').read_text()\n    if text != 'MODE=ok\\n':\n        raise AssertionError(text)\n",
    );
    t.write(
        "tests/test_tool.py",
        "import shutil\n\nimport pytest\n\n\n@pytest.mark.skipif(shutil.which('gate-trial-tool') is None, reason='no tool')\ndef test_tool():\n    raise AssertionError('the tool is here')\n",
    );
    t.write(
        "src/shop/loader.py",
        "import importlib\n\n\ndef load(name):\n    return importlib.import_module(name)\n",
    );
    t.write("src/shop/addon.py", "VALUE = 1\n");
    t.write("tests/addon.txt", "shop.addon\n");
    for name in ["tests/test_addon.py", "tests/test_addon_again.py"] {
        t.write(
            name,
            "from pathlib import Path\n\nfrom shop.loader import load\n\n\ndef test_addon():\n    name = (Path(__file__).parent / 'addon.txt').read_text().strip()\n    if load(name).VALUE != 1:\n        raise AssertionError(name)\n",
        );
    }
    let tools = t.root.parent().unwrap().join("trial-tools");
    std::fs::create_dir_all(&tools).unwrap();
    let tool = tools.join("gate-trial-tool");
    std::fs::write(&tool, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    t.write(
        "go/go.mod",
        "module example.com/trial\n\ngo 1.19\n\nrequire example.com/helper v0.0.0\n\nreplace example.com/helper => ./helper\n",
    );
    t.write("go/helper/go.mod", "module example.com/helper\n\ngo 1.19\n");
    t.write("go/helper/rate/rate.go", "package rate\n\nconst Rate = 1\n");
    t.write(
        "go/calc/calc.go",
        "package calc\n\nimport \"example.com/helper/rate\"\n\nvar bump = 0\n\nfunc Total(n int) int { return n*rate.Rate + bump }\n",
    );
    t.write(
        "go/calc/calc_test.go",
        "package calc\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestTotal(t *testing.T) {\n\tif Total(3) != 3 {\n\t\tt.Fatal(Total(3))\n\t}\n}\n\nfunc TestShared(t *testing.T) {\n\tif b, _ := os.ReadFile(\"../../../trial-shared.txt\"); string(b) != \"ok\\n\" {\n\t\tt.Fatal(string(b))\n\t}\n}\n",
    );
    beside_fixture(&t);
    t.commit("trial fixture");
    let base = t.root.parent().unwrap();
    let venvs = [
        venv(&base.join("venv-a"), "1.0", 1),
        venv(&base.join("venv-b"), "2.0", 2),
    ];
    std::os::unix::fs::symlink(&venvs[0], t.root.join(".venv")).unwrap();
    let exclude = t.root.join(".git/info/exclude");
    let mut ignored = std::fs::read_to_string(&exclude).unwrap_or_default();
    ignored.push_str("/.venv\n");
    std::fs::write(&exclude, ignored).unwrap();
    (t, venvs)
}

/// Random series of mutations of twenty input classes; after each, the gate run with reuse is
/// checked against the whole suite run for real with the same inputs: every test the ledger
/// reused must really pass. The truth of a state (which class is on) is run once and then
/// kept, and run again every `RECHECK` trials to show it is the same: the suite is
/// deterministic in its inputs, so the kept truth is the truth. `GATE_LEDGER_TRIALS` sets the
/// size (CI: the default), the seed is fixed (`GATE_LEDGER_SEED` picks another, to run long
/// trials in parallel).
#[test]
fn no_reused_test_would_have_failed() {
    const RECHECK: u64 = 25;
    let trials: u64 = std::env::var("GATE_LEDGER_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    let (t, venvs) = trial_repo();
    let mut tests: Vec<String> = std::fs::read_dir(t.root.join("tests"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("test_") && n.ends_with(".py"))
        .map(|n| format!("tests/{n}"))
        .collect();
    tests.sort();
    tests.push("go/calc/calc_test.go".to_string());
    let seed = std::env::var("GATE_LEDGER_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x9E37_79B9_7F4A_7C15);
    let mut rng = Rng(seed);
    let mut state = [false; CLASSES.len()];
    let mut moved = [0usize; CLASSES.len()];
    let mut truths: BTreeMap<[bool; CLASSES.len()], BTreeMap<String, bool>> = BTreeMap::new();
    let (mut reused_total, mut candidates, mut false_reuses) = (0usize, 0usize, Vec::new());
    let (mut green, mut green_reused, mut suites) = (0usize, 0usize, 0usize);
    let tools = t.root.parent().unwrap().join("trial-tools");
    let run = |args: &[&str], state: &[bool; CLASSES.len()]| -> Value {
        let mut all = vec!["--files"];
        all.extend(tests.iter().map(String::as_str));
        all.extend(args);
        all.push("--json");
        let mut cmd = t.gate(&all);
        cmd.env_remove("GATE_DB").envs(crate::golang::go_vars());
        for (name, value) in variables(state, &tools) {
            if value.is_empty() {
                cmd.env_remove(name);
            } else {
                cmd.env(name, value);
            }
        }
        let out = cmd.output().unwrap();
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(&out)))
    };
    for trial in 0..trials {
        if trial > 0 && trial % 500 == 0 {
            eprintln!(
                "ledger safety: {trial} trials, {reused_total} reuses, {} false",
                false_reuses.len()
            );
        }
        // Each class is turned on and back off first — from the state where every test passes,
        // so no other class's failure hides it, whatever the seed —, then the series is random.
        let i = if trial < 2 * CLASSES.len() as u64 {
            (trial / 2) as usize
        } else {
            rng.below(CLASSES.len() as u64) as usize
        };
        state[i] = !state[i];
        moved[i] += 1;
        mutate(&t, &venvs, CLASSES[i], state[i], trial);
        let gated = run(&[], &state);
        let kept = truths.get(&state).cloned();
        let truth = match kept {
            Some(truth) if trial % RECHECK != 0 => truth,
            _ => {
                suites += 1;
                let truth = outcomes(&run(&["--no-reuse"], &state));
                assert_eq!(truth.len(), tests.len(), "{truth:?}");
                if let Some(kept) = truths.insert(state, truth.clone()) {
                    assert_eq!(kept, truth, "the suite is not deterministic in {state:?}");
                }
                truth
            }
        };
        let reused = reused(&gated);
        candidates += tests.len();
        green += truth.values().filter(|ok| **ok).count();
        for r in &reused {
            reused_total += 1;
            match truth.get(r) {
                Some(true) => green_reused += 1,
                _ => false_reuses.push((trial, CLASSES[i], r.clone())),
            }
        }
    }
    eprintln!(
        "ledger safety: {trials} trials ({suites} whole-suite runs), {reused_total} reuses of \
         {candidates} selected tests ({green_reused} of {green} green ones), {} false",
        false_reuses.len()
    );
    say_per_class(&moved);
    assert!(
        false_reuses.is_empty(),
        "reused tests that fail: {false_reuses:?}"
    );
    assert!(
        reused_total > 0,
        "the trial reused nothing: it tested nothing"
    );
    every_class_failed_a_test(&truths);
}

/// What the probe reads of `sys.modules` to bound run-time imports never fails the run: a
/// module object whose `__file__` raises (as lazy proxies' do) leaves that file's loads
/// unseen — its pass is not entered, it is run again — and every test still runs and passes.
#[test]
fn a_module_the_probe_cannot_read_never_fails_the_run() {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(Kind::Sqlite, &t);
    let db = store.url.as_str();
    t.write(
        "tests/test_proxy.py",
        "import importlib\nimport sys\nfrom pathlib import Path\n\nfrom shop.money import to_cents\n\n\nclass Proxy:\n    @property\n    def __file__(self):\n        raise RuntimeError('a lazy proxy')\n\n\nsys.modules['gate_trial_proxy'] = Proxy()\n\n\ndef test_proxy():\n    name = (Path(__file__).parent / 'proxy.txt').read_text().strip()\n    assert importlib.import_module(name).to_cents(1) == 100\n",
    );
    t.write("tests/proxy.txt", "shop.money\n");
    t.commit("a module object that cannot say its file");
    money_on_a_branch(&t);
    let first = gate(&t, db, &[]);
    assert_eq!(first["exit_code"], 0, "{first:#}");
    assert!(
        ran(&first).contains(&"tests/test_proxy.py".to_string()),
        "{first:#}"
    );
    let again = gate(&t, db, &[]);
    assert_eq!(again["exit_code"], 0, "{again:#}");
    assert!(
        ran(&again).contains(&"tests/test_proxy.py".to_string()),
        "{again:#}"
    );
    assert!(
        reused(&again).contains(&"tests/test_money.py".to_string()),
        "{again:#}"
    );
}
