//! What the probe sees of a run, and what it does not, with real pytest runs: a test that
//! starts a Python process (whose imports the probe cannot see), a file changed while the run
//! ran, a git-ignored file a session hook reads for every test, two checkouts whose
//! virtualenvs are at other paths sharing one store, and a path no encoding can spell — each
//! is never a reused pass that fails when run.

use crate::history::{Kind, Store};
use crate::ledger::{gate, money_on_a_branch, ran, reused, venv};
use crate::ledger_inputs::{causes, settle, site_of, use_venv};
use crate::support::{TestRepo, text};

/// A virtualenv with `shopext` 1.0 (`RATE = 1`) beside `t`, linked as its `.venv`.
fn with_venv(t: &TestRepo, name: &str) -> std::path::PathBuf {
    let dir = venv(&t.root.parent().unwrap().join(name), "1.0", 1);
    use_venv(t, &dir);
    dir
}

/// A test that runs a Python child importing an installed distribution: the probe does not
/// see the child's imports, so its pass is not entered (said with the process), and after an
/// edit in place of what the child imports, the test runs, and fails.
#[test]
fn a_test_that_starts_python_is_not_entered() {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(Kind::Sqlite, &t);
    let db = store.url.as_str();
    t.write(
        "tests/test_child.py",
        "import subprocess\nimport sys\n\nfrom shop.money import to_cents\n\n\ndef test_child():\n    subprocess.run([sys.executable, '-c', 'import shopext; assert shopext.RATE == 1'], check=True)\n",
    );
    t.commit("a test that starts Python");
    let dir = with_venv(&t, "venv");
    money_on_a_branch(&t);
    settle();
    let unit = "tests/test_child.py";
    let first = gate(&t, db, &[]);
    assert_eq!(first["exit_code"], 0, "{first:#}");
    assert_eq!(causes(&first, unit), ["no_pass", "unobserved"], "{first:#}");
    let again = gate(&t, db, &[]);
    assert!(!reused(&again).contains(&unit.to_string()), "{again:#}");
    assert!(
        reused(&again).contains(&"tests/test_money.py".to_string()),
        "{again:#}"
    );
    std::fs::write(site_of(&dir).join("shopext.py"), "RATE = 2\n").unwrap();
    let edited = gate(&t, db, &[]);
    assert_eq!(edited["exit_code"], 1, "{edited:#}");
    assert!(ran(&edited).contains(&unit.to_string()), "{edited:#}");
}

/// A git-ignored file that a conftest reads as the session starts (`pytest_configure`, before
/// any test file runs), by a path no analysis can evaluate (a folder named in a data file,
/// listed): the run saw it read, so it is on every test file's list, and an edit to it runs
/// them again — and they fail.
#[test]
fn a_file_a_session_hook_reads_is_every_test_file_s_input() {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(Kind::Sqlite, &t);
    let db = store.url.as_str();
    t.write(".gitignore", "settings/\n");
    t.write(
        "tests/conftest.py",
        "import os\n\nimport pytest\n\nMODE = {}\n\n\ndef pytest_configure(config):\n    folder = open('tests/where.txt').read().strip()\n    for name in os.listdir(folder):\n        MODE['mode'] = open(os.path.join(folder, name)).read()\n\n\n@pytest.fixture\ndef price():\n    return 10.0\n\n\n@pytest.fixture(autouse=True)\ndef _mode():\n    assert MODE.get('mode') == 'ok'\n",
    );
    t.write("tests/where.txt", "settings\n");
    t.commit("a conftest that reads local settings at configure");
    t.write("settings/local.txt", "ok");
    money_on_a_branch(&t);
    settle();
    let unit = "tests/test_money.py".to_string();
    let first = gate(&t, db, &[]);
    assert_eq!(first["exit_code"], 0, "{first:#}");
    let again = gate(&t, db, &[]);
    assert!(reused(&again).contains(&unit), "{again:#}");
    t.write("settings/local.txt", "no");
    let edited = gate(&t, db, &[]);
    assert_eq!(edited["exit_code"], 1, "{edited:#}");
    assert!(ran(&edited).contains(&unit), "{edited:#}");
}

/// A file the look-up hashed as it was before the run, changed while the run ran (here by the
/// test itself): the run may have read either state, so nothing is entered — and the next run
/// runs the test rather than reuse a pass under a state it never ran from.
#[test]
fn a_file_changed_while_the_run_ran_enters_nothing() {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(Kind::Sqlite, &t);
    let db = store.url.as_str();
    let shared = t.root.parent().unwrap().join("shared.txt");
    std::fs::write(&shared, "1\n").unwrap();
    t.write(
        "tests/test_counter.py",
        "from shop.money import to_cents\n\n\ndef test_counter():\n    n = int(open('../shared.txt').read())\n    open('../shared.txt', 'w').write(f'{n + 1}\\n')\n    assert n < 3\n",
    );
    t.commit("a test that counts its runs in a file above the repository");
    money_on_a_branch(&t);
    settle();
    let unit = "tests/test_counter.py".to_string();
    let first = gate(&t, db, &[]);
    assert_eq!(first["exit_code"], 0, "{first:#}");
    assert!(
        causes(&first, &unit).contains(&"read_changed".to_string()),
        "{first:#}"
    );
    let second = gate(&t, db, &[]);
    assert!(ran(&second).contains(&unit), "{second:#}");
    let third = gate(&t, db, &[]);
    assert_eq!(third["exit_code"], 1, "{third:#}");
    assert!(ran(&third).contains(&unit), "{third:#}");
}

/// Two checkouts of one commit sharing one store, each with its own virtualenv at another path
/// (the same distribution, the same version, another `RATE`): the one's pass is not the
/// other's, which runs its test — and it fails.
#[test]
fn another_checkout_s_interpreter_elsewhere_is_another_input() {
    let a = TestRepo::from_fixture("shop");
    let b = TestRepo::from_fixture("shop");
    let store = Store::new(Kind::Sqlite, &a);
    let db = store.url.as_str();
    for t in [&a, &b] {
        t.write(
            "tests/test_ext.py",
            "import shopext\n\nfrom shop.money import to_cents\n\n\ndef test_rate():\n    assert shopext.RATE == 1\n",
        );
        t.commit("a test of an installed distribution");
    }
    with_venv(&a, "venv");
    let other = with_venv(&b, "venv");
    std::fs::write(site_of(&other).join("shopext.py"), "RATE = 2\n").unwrap();
    money_on_a_branch(&a);
    money_on_a_branch(&b);
    assert_eq!(
        a.repo.head().unwrap().target(),
        b.repo.head().unwrap().target()
    );
    settle();
    let unit = "tests/test_ext.py".to_string();
    let here = gate(&a, db, &[]);
    assert_eq!(here["exit_code"], 0, "{here:#}");
    assert!(reused(&gate(&a, db, &[])).contains(&unit));
    let there = gate(&b, db, &[]);
    assert_eq!(there["exit_code"], 1, "{there:#}");
    assert!(ran(&there).contains(&unit), "{there:#}");
}

/// A test that reads a file whose name no encoding spells: the run is judged as any other,
/// and only the units whose reads cannot be named are not entered.
#[test]
fn a_path_no_encoding_spells_is_read_and_never_named() {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(Kind::Sqlite, &t);
    let db = store.url.as_str();
    let outside = t.root.parent().unwrap();
    let name: &std::ffi::OsStr = std::os::unix::ffi::OsStrExt::from_bytes(b"caf\xe9.txt");
    std::fs::write(outside.join(name), "ok").unwrap();
    t.write(
        "tests/test_zbytes.py",
        "import os\n\nfrom shop.money import to_cents\n\n\ndef test_bytes():\n    assert open(os.path.join(b'..', b'caf\\xe9.txt'), 'rb').read() == b'ok'\n",
    );
    t.commit("a test that reads a file named in bytes");
    money_on_a_branch(&t);
    let out = t
        .gate(&["--affected", "master...HEAD", "--json"])
        .env("GATE_DB", db)
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["exit_code"], 0, "{}", text(&out));
    assert!(
        causes(&doc, "tests/test_zbytes.py").contains(&"unknown_input".to_string()),
        "{doc:#}"
    );
    assert!(ran(&doc).contains(&"tests/test_money.py".to_string()));
}
