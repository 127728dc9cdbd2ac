//! The ledger's inputs no commit holds, with real pytest and go test runs on both stores: an
//! installed distribution's module edited in place (its version unchanged), git-ignored code
//! and configuration beside the tree's (a conftest, a module a `try` imports, a Go file of a
//! package's folder), files read by a path that climbs out of the repository (Python and Go),
//! a run in a temporary checkout that lacks what the working tree has — each changed after a
//! pass, the test runs again and fails instead of being reused — and the line and the report
//! items that say why a run reused or entered less than it could.

use crate::history::{Kind, Store};
use crate::ledger::{gate, gate_with, money_on_a_branch, ran, reused, venv};
use crate::support::{TestRepo, text};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// `dir` linked as the repository's `.venv` (the runner gate picks), which git ignores.
pub(crate) fn use_venv(t: &TestRepo, dir: &Path) {
    std::os::unix::fs::symlink(dir, t.root.join(".venv")).unwrap();
    let exclude = t.root.join(".git/info/exclude");
    let mut ignored = std::fs::read_to_string(&exclude).unwrap_or_default();
    ignored.push_str("/.venv\n");
    std::fs::write(&exclude, ignored).unwrap();
}

/// The site-packages folder of the virtualenv `dir`.
pub(crate) fn site_of(dir: &Path) -> PathBuf {
    let out = std::process::Command::new(dir.join("bin/python"))
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ])
        .output()
        .unwrap();
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// Lets the files just written grow older than a run that starts now: a file no commit holds
/// that changed as a run began may have been written by it, and that run is not entered.
pub(crate) fn settle() {
    std::thread::sleep(std::time::Duration::from_millis(150));
}

/// The report's ledger item for `unit`.
fn item<'a>(doc: &'a Value, unit: &str) -> &'a Value {
    doc["ledger"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["path"] == unit)
        .unwrap_or_else(|| panic!("no ledger item for {unit}: {doc:#}"))
}

/// The causes a report's ledger item for `unit` gives.
pub(crate) fn causes(doc: &Value, unit: &str) -> Vec<String> {
    item(doc, unit)["why"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["cause"].as_str().unwrap().to_string())
        .collect()
}

on_both!(an_installed_file_edited_in_place_is_run_again: installed_sqlite, installed_postgres);
/// A module of an installed distribution edited in place — a hot-fix, a rebuilt wheel of the
/// same version — leaves the interpreter's identity as it was (its distributions' names and
/// versions), but the run loaded it: its content is in the digest of every unit whose run had
/// loaded it, so the pass is not reused and the test runs, and fails.
fn an_installed_file_edited_in_place_is_run_again(kind: Kind) {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(kind, &t);
    let db = store.url.as_str();
    t.write(
        "tests/test_ext.py",
        "import shopext\n\nfrom shop.money import to_cents\n\n\ndef test_rate():\n    assert shopext.RATE == 1\n",
    );
    t.commit("a test of an installed distribution");
    let dir = venv(&t.root.parent().unwrap().join("venv"), "1.0", 1);
    use_venv(&t, &dir);
    money_on_a_branch(&t);
    settle();
    let first = gate(&t, db, &[]);
    assert_eq!(first["exit_code"], 0, "{first:#}");
    assert_eq!(
        item(&first, "tests/test_ext.py")["entered"],
        "passed",
        "{first:#}"
    );
    let again = gate(&t, db, &[]);
    assert!(
        reused(&again).contains(&"tests/test_ext.py".to_string()),
        "{again:#}"
    );
    // The same size, the same version: only the content says it changed.
    std::fs::write(site_of(&dir).join("shopext.py"), "RATE = 2\n").unwrap();
    let edited = gate(&t, db, &[]);
    assert_eq!(edited["exit_code"], 1, "{edited:#}");
    assert!(
        ran(&edited).contains(&"tests/test_ext.py".to_string()),
        "{edited:#}"
    );
}

on_both!(git_ignored_code_and_configuration_beside_the_tree_are_inputs: beside_sqlite, beside_postgres);
/// A git-ignored `conftest.py` that pytest collects in its folder, and a git-ignored module a
/// tracked one imports under `try` (absent at first: no run ever loaded it), are no blobs of the
/// tree but the runner loads them where it runs: an edit to the one, the other appearing, and
/// the test runs again and fails. `gate explain --fingerprint` names them, and a `pytest.ini`
/// beside the test that pytest would read.
fn git_ignored_code_and_configuration_beside_the_tree_are_inputs(kind: Kind) {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(kind, &t);
    let db = store.url.as_str();
    t.write(
        ".gitignore",
        "tests/local/conftest.py\ntests/local/pytest.ini\nsrc/shop/local_settings.py\n",
    );
    t.write(
        "src/shop/settings.py",
        "try:\n    from shop.local_settings import LIMIT\nexcept ImportError:\n    LIMIT = 100\n",
    );
    t.write(
        "tests/local/test_local.py",
        "from shop.money import to_cents\nfrom shop.settings import LIMIT\n\n\ndef test_limit():\n    assert LIMIT == 100\n\n\ndef test_mode(mode):\n    assert mode == 'ok'\n",
    );
    t.commit("a test with a local conftest and settings");
    let conftest = |mode: &str| {
        t.write(
            "tests/local/conftest.py",
            &format!("import pytest\n\n\n@pytest.fixture\ndef mode():\n    return '{mode}'\n"),
        );
    };
    conftest("ok");
    money_on_a_branch(&t);
    settle();
    let unit = "tests/local/test_local.py".to_string();
    let first = gate(&t, db, &[]);
    assert_eq!(first["exit_code"], 0, "{first:#}");
    assert!(ran(&first).contains(&unit), "{first:#}");
    let again = gate(&t, db, &[]);
    assert!(reused(&again).contains(&unit), "{again:#}");
    conftest("no");
    let edited = gate(&t, db, &[]);
    assert_eq!(edited["exit_code"], 1, "{edited:#}");
    assert!(ran(&edited).contains(&unit), "{edited:#}");
    conftest("ok");
    let back = gate(&t, db, &[]);
    assert_eq!(back["exit_code"], 0, "{back:#}");
    assert!(reused(&back).contains(&unit), "{back:#}");
    t.write("src/shop/local_settings.py", "LIMIT = 5\n");
    let appeared = gate(&t, db, &[]);
    assert_eq!(appeared["exit_code"], 1, "{appeared:#}");
    assert!(ran(&appeared).contains(&unit), "{appeared:#}");
    t.write("tests/local/pytest.ini", "[pytest]\n");
    let explain = t
        .gate(&["explain", "tests/local/test_local.py", "--fingerprint"])
        .output()
        .unwrap();
    for path in [
        "tests/local/conftest.py",
        "tests/local/pytest.ini",
        "src/shop/local_settings.py",
    ] {
        assert!(
            text(&explain).contains(&format!("{path}  not in the tree, on disk: file ")),
            "{path}: {}",
            text(&explain)
        );
    }
}

/// A Go module under `go/` whose package `calc` reads `../../../shared.txt` — above the
/// repository — and a Python test that reads `../shared.txt` from the root, both passing while
/// the file says `ok`; `go/calc/zz_local.go` is git-ignored.
fn reads_outside(t: &TestRepo) -> PathBuf {
    t.write(".gitignore", "go/calc/zz_local.go\n");
    t.write("go/go.mod", "module example.com/trial\n\ngo 1.19\n");
    t.write(
        "go/calc/calc.go",
        "package calc\n\nvar rate = 1\n\nfunc Total(n int) int { return n * rate }\n",
    );
    t.write(
        "go/calc/calc_test.go",
        "package calc\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestTotal(t *testing.T) {\n\tif Total(3) != 3 {\n\t\tt.Fatal(Total(3))\n\t}\n}\n\nfunc TestShared(t *testing.T) {\n\tb, _ := os.ReadFile(\"../../../shared.txt\")\n\tif string(b) != \"ok\\n\" {\n\t\tt.Fatal(string(b))\n\t}\n}\n",
    );
    t.write(
        "tests/test_shared.py",
        "from shop.money import to_cents\n\n\ndef test_shared():\n    assert open('../shared.txt').read() == 'ok\\n'\n",
    );
    let shared = t.root.parent().unwrap().join("shared.txt");
    std::fs::write(&shared, "ok\n").unwrap();
    t.commit("tests that read a file above the repository");
    t.branch("feature");
    t.checkout("feature");
    t.append("src/shop/money.py", "\n# reviewed\n");
    t.append("go/calc/calc.go", "\n// reviewed\n");
    t.commit("money and calc");
    shared
}

/// `gate --affected master...HEAD --json` with Go's variables: the report.
fn gate_go(t: &TestRepo, db: &str) -> Value {
    let out = t
        .gate(&["--affected", "master...HEAD", "--json"])
        .env("GATE_DB", db)
        .envs(crate::golang::go_vars())
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(&out)))
}

on_both!(files_read_outside_the_repository_and_go_files_beside_the_tree_are_inputs: outside_read_sqlite, outside_read_postgres);
/// A file read by a relative path that climbs out of the repository is hashed by its content
/// where the runner runs (Go's tests run in their package's folder, Python's at the root): an
/// edit there runs both tests again, and they fail; put back, both passes are reused. A
/// git-ignored `.go` file of the package's folder is compiled into it: it appearing runs the
/// package again.
fn files_read_outside_the_repository_and_go_files_beside_the_tree_are_inputs(kind: Kind) {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(kind, &t);
    let db = store.url.as_str();
    let shared = reads_outside(&t);
    settle();
    let (python, go) = ("tests/test_shared.py".to_string(), "./go/calc".to_string());
    let first = gate_go(&t, db);
    assert_eq!(first["exit_code"], 0, "{first:#}");
    let again = gate_go(&t, db);
    for unit in [&python, &go] {
        assert!(reused(&again).contains(unit), "{unit}: {again:#}");
    }
    std::fs::write(&shared, "no\n").unwrap();
    let edited = gate_go(&t, db);
    assert_eq!(edited["exit_code"], 1, "{edited:#}");
    for unit in [&python, &go] {
        assert!(!reused(&edited).contains(unit), "{unit}: {edited:#}");
    }
    std::fs::write(&shared, "ok\n").unwrap();
    let back = gate_go(&t, db);
    for unit in [&python, &go] {
        assert!(reused(&back).contains(unit), "{unit}: {back:#}");
    }
    t.write(
        "go/calc/zz_local.go",
        "package calc\n\nfunc init() { rate = 2 }\n",
    );
    let appeared = gate_go(&t, db);
    assert_eq!(appeared["exit_code"], 1, "{appeared:#}");
    assert!(!reused(&appeared).contains(&go), "{appeared:#}");
}

/// A pass made in a temporary checkout (the gated branch is not the one checked out) ran
/// without the git-ignored root `conftest.py` the working tree has: it is not entered under a
/// digest that names that file, so the next run in the working tree runs the test — and the
/// conftest fails it — instead of reusing a pass that never saw it.
#[test]
fn a_run_in_a_temporary_checkout_enters_nothing_it_did_not_see() {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(Kind::Sqlite, &t);
    let db = store.url.as_str();
    t.write(".gitignore", "/conftest.py\n");
    t.write(
        "tests/test_local.py",
        "from shop.money import to_cents\n\n\ndef test_local():\n    assert to_cents(1) == 100\n",
    );
    t.commit("a test");
    t.branch("feature");
    t.checkout("feature");
    t.append("src/shop/money.py", "\n# reviewed\n");
    t.commit("money");
    t.checkout("master");
    t.write(
        "conftest.py",
        "import pytest\n\n\n@pytest.fixture(autouse=True)\ndef _local(request):\n    if request.node.path.name == 'test_local.py':\n        raise AssertionError('the local conftest')\n",
    );
    let out = t
        .gate(&["--affected", "master...feature", "--json"])
        .env("GATE_DB", db)
        .output()
        .unwrap();
    let elsewhere: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(elsewhere["exit_code"], 0, "{elsewhere:#}");
    assert!(
        elsewhere["run"]["directory"].is_string(),
        "ran in a temporary checkout: {elsewhere:#}"
    );
    assert_eq!(
        causes(&elsewhere, "tests/test_local.py"),
        ["no_pass", "checkout"],
        "{elsewhere:#}"
    );
    assert!(
        text(&out).contains("ran in a temporary checkout, which lacks files the working tree has"),
        "{}",
        text(&out)
    );
    t.checkout("feature");
    let here = gate(&t, db, &[]);
    assert_eq!(here["exit_code"], 1, "{here:#}");
    assert!(
        ran(&here).contains(&"tests/test_local.py".to_string()),
        "{here:#}"
    );
}

/// A run that reuses or enters less than it could says why on one line per cause, and the
/// report says it per unit: a skipped test, no pass yet; then a virtualenv whose editable
/// install points at another checkout, which makes every Python fingerprint unknown — the
/// user's "the ledger does not work", said with the install named.
#[test]
fn a_run_that_reuses_less_says_why_once_per_cause() {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(Kind::Sqlite, &t);
    let db = store.url.as_str();
    t.write(
        "tests/test_tool.py",
        "import shutil\n\nimport pytest\n\nfrom shop.money import to_cents\n\n\n\
         @pytest.mark.skipif(shutil.which('gate-skip-tool') is None, reason='no tool')\n\
         def test_tool():\n    assert to_cents(1) == 0\n",
    );
    t.commit("a test that needs a tool");
    let dir = venv(&t.root.parent().unwrap().join("venv"), "1.0", 1);
    use_venv(&t, &dir);
    money_on_a_branch(&t);
    settle();
    let (first, said) = gate_with(&t, db, &[]);
    assert_eq!(first["exit_code"], 0, "{first:#}");
    let skipped: Vec<&str> = said
        .lines()
        .filter(|l| l.contains("ran with a skipped test"))
        .collect();
    assert_eq!(
        skipped,
        [
            "warning: ledger: 1 test file(s) ran with a skipped test: their passes are not entered (a skip condition may read what no fingerprint sees) — tests/test_tool.py: tests/test_tool.py::test_tool skipped"
        ],
        "{said}"
    );
    assert_eq!(causes(&first, "tests/test_tool.py"), ["no_pass", "skipped"]);
    assert_eq!(item(&first, "tests/test_money.py")["entered"], "passed");
    // An editable install whose source is another checkout: its code is not hashed.
    let info = site_of(&dir).join("shopext-1.0.dist-info");
    std::fs::write(
        info.join("direct_url.json"),
        r#"{"url": "file:///srv/other-checkout", "dir_info": {"editable": true}}"#,
    )
    .unwrap();
    let (unknown, said) = gate_with(&t, db, &[]);
    assert_eq!(unknown["exit_code"], 0, "{unknown:#}");
    assert!(reused(&unknown).is_empty(), "{unknown:#}");
    let selected = unknown["selected"].as_array().unwrap().len();
    let lines: Vec<&str> = said.lines().filter(|l| l.contains("ledger:")).collect();
    assert_eq!(
        lines,
        [format!(
            "warning: ledger: {selected} test file(s) cannot be reused or entered: an input of their fingerprint cannot be hashed — the interpreter imports code gate does not hash: an editable install whose source is outside the repository: shopext /srv/other-checkout ({selected} test files)"
        )],
        "{said}"
    );
    for unit in unknown["ledger"].as_array().unwrap() {
        assert_eq!(unit["fingerprint"], Value::Null, "{unit}");
        assert_eq!(unit["entered"], Value::Null, "{unit}");
        assert_eq!(unit["why"][0]["cause"], "unknown_input", "{unit}");
    }
}

/// A Go module `example.com/gatedep` v1.0.0 served by a file proxy at `at` (the module proxy
/// protocol's layout), whose `Rate` is 1.
fn go_proxy(at: &Path) {
    let dir = at.join("example.com/gatedep/@v");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("list"), "v1.0.0\n").unwrap();
    std::fs::write(
        dir.join("v1.0.0.info"),
        r#"{"Version":"v1.0.0","Time":"2026-01-01T00:00:00Z"}"#,
    )
    .unwrap();
    let module = "module example.com/gatedep\n\ngo 1.19\n";
    std::fs::write(dir.join("v1.0.0.mod"), module).unwrap();
    let zipped = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys, zipfile\n\
             with zipfile.ZipFile(sys.argv[1], 'w') as z:\n\
             \x20   z.writestr('example.com/gatedep@v1.0.0/go.mod', sys.argv[2])\n\
             \x20   z.writestr('example.com/gatedep@v1.0.0/rate.go', 'package gatedep\\n\\nconst Rate = 1\\n')\n",
        ])
        .arg(dir.join("v1.0.0.zip"))
        .arg(module)
        .status()
        .unwrap();
    assert!(zipped.success());
}

on_both!(a_go_dependency_edited_in_place_is_run_again: go_cache_sqlite, go_cache_postgres);
/// A file of Go's module cache edited in place — its version, and so its `go.sum` line,
/// unchanged — is compiled into the test binary (go's build cache keys by content): `go list
/// -deps -test` named it after the run, its content is in the package's digest, so the pass is
/// not reused and the test runs, and fails.
fn a_go_dependency_edited_in_place_is_run_again(kind: Kind) {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(kind, &t);
    let db = store.url.as_str();
    let base = t.root.parent().unwrap();
    go_proxy(&base.join("proxy"));
    let cache = base.join("modcache");
    let vars = |cmd: &mut assert_cmd::Command| {
        cmd.envs(crate::golang::go_vars())
            .env(
                "GOPROXY",
                format!("file://{}", base.join("proxy").display()),
            )
            .env("GOSUMDB", "off")
            .env("GOMODCACHE", &cache)
            .env("GOFLAGS", "-mod=mod");
    };
    t.write(
        "go/go.mod",
        "module example.com/trial\n\ngo 1.19\n\nrequire example.com/gatedep v1.0.0\n",
    );
    t.write(
        "go/calc/calc.go",
        "package calc\n\nimport \"example.com/gatedep\"\n\nfunc Total(n int) int { return n * gatedep.Rate }\n",
    );
    t.write(
        "go/calc/calc_test.go",
        "package calc\n\nimport \"testing\"\n\nfunc TestTotal(t *testing.T) {\n\tif Total(3) != 3 {\n\t\tt.Fatal(Total(3))\n\t}\n}\n",
    );
    let fetched = std::process::Command::new("go")
        .args(["mod", "tidy"])
        .current_dir(t.root.join("go"))
        .envs(crate::golang::go_vars())
        .env(
            "GOPROXY",
            format!("file://{}", base.join("proxy").display()),
        )
        .env("GOSUMDB", "off")
        .env("GOMODCACHE", &cache)
        .output()
        .unwrap();
    assert!(fetched.status.success(), "{}", text(&fetched));
    t.commit("a Go package with a dependency from the module cache");
    t.branch("feature");
    t.checkout("feature");
    t.append("go/calc/calc.go", "\n// reviewed\n");
    t.commit("calc");
    settle();
    let run = || {
        let mut cmd = t.gate(&["--affected", "master...HEAD", "--json"]);
        cmd.env("GATE_DB", db);
        vars(&mut cmd);
        let out = cmd.output().unwrap();
        serde_json::from_slice::<Value>(&out.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(&out)))
    };
    let unit = "./go/calc".to_string();
    let first = run();
    assert_eq!(first["exit_code"], 0, "{first:#}");
    assert_eq!(item(&first, &unit)["entered"], "passed", "{first:#}");
    let again = run();
    assert!(reused(&again).contains(&unit), "{again:#}");
    let source = cache.join("example.com/gatedep@v1.0.0/rate.go");
    let mut mode = std::fs::metadata(&source).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut mode, 0o644);
    std::fs::set_permissions(&source, mode).unwrap();
    std::fs::write(&source, "package gatedep\n\nconst Rate = 2\n").unwrap();
    let edited = run();
    assert_eq!(edited["exit_code"], 1, "{edited:#}");
    assert!(ran(&edited).contains(&unit), "{edited:#}");
}
