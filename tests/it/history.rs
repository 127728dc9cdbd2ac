//! `gate record` into the SQLite history store: JUnit from real pytest runs (both families),
//! `go test -json` from a real go test, idempotent re-uploads and replacement, malformed inputs
//! and a newer schema that leave the store untouched, and legs recorded by processes at once.

use crate::support::{TestRepo, text};
use std::path::{Path, PathBuf};

const PARAMS: &str = "import pytest\n\n@pytest.mark.parametrize('a,b', [(2, 3), (1, 1)])\ndef test_add(a, b):\n    assert a + b > 1\n\n\
class TestKinds:\n    def test_fail(self):\n        assert 1 == 2\n\n    @pytest.mark.skip(reason='later')\n    def test_skip(self):\n        pass\n";

/// The fixture with a parametrised, a failing and a skipped test, committed.
fn repo() -> TestRepo {
    let t = TestRepo::from_fixture("shop");
    t.write("tests/test_params.py", PARAMS);
    t.commit("params");
    t
}

/// Real pytest writing a JUnit report of `family` into the repository's parent folder.
fn junit(t: &TestRepo, family: &str) -> PathBuf {
    let out = t.root.parent().unwrap().join(format!("{family}.xml"));
    let run = std::process::Command::new("python3")
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "-o"])
        .arg(format!("junit_family={family}"))
        .arg(format!("--junitxml={}", out.display()))
        .arg("tests")
        .current_dir(&t.root)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1), "{}", text(&run));
    out
}

fn db(t: &TestRepo) -> rusqlite::Connection {
    rusqlite::Connection::open(t.root.join(".git/gate/history.sqlite")).unwrap()
}

/// A stored result: (test id, try, outcome).
type Stored = (String, u32, String);
/// A stored leg: run, attempt, leg, and its results in id order.
type StoredLeg = (String, u32, String, Vec<Stored>);

/// Every stored leg, in (run, attempt, leg) order.
fn legs(t: &TestRepo) -> Vec<StoredLeg> {
    let c = db(t);
    let mut runs = c
        .prepare("SELECT seq, run_id, attempt, leg FROM runs ORDER BY run_id, attempt, leg")
        .unwrap();
    let rows: Vec<(i64, String, u32, String)> = runs
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    rows.into_iter()
        .map(|(seq, run, attempt, leg)| {
            let mut q = c
                .prepare("SELECT test_id, try, outcome FROM results WHERE seq = ?1 ORDER BY test_id, try")
                .unwrap();
            let results = q
                .query_map([seq], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            (run, attempt, leg, results)
        })
        .collect()
}

fn record(t: &TestRepo, args: &[&str]) -> std::process::Output {
    let mut all = vec!["record"];
    all.extend(args);
    t.gate(&all).env_remove("GITHUB_RUN_ID").output().unwrap()
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Both JUnit families pytest writes give the same ids — the selection's, parameters whole —
/// and matrix legs of one run are stored apart, never over each other.
#[test]
fn both_junit_families_record_the_ids_the_selection_uses_per_leg() {
    let t = repo();
    let x2 = junit(&t, "xunit2");
    let x1 = junit(&t, "xunit1");
    let out = record(&t, &["--junit", p(&x2), "--run", "77", "--leg", "py-x2"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("recorded leg `py-x2` of run 77 attempt 1"),
        "{}",
        text(&out)
    );
    let out = record(&t, &["--junit", p(&x1), "--run", "77", "--leg", "py-x1"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let legs = legs(&t);
    assert_eq!(legs.len(), 2, "{legs:?}");
    let ids = |i: usize| -> Vec<(String, String)> {
        legs[i]
            .3
            .iter()
            .map(|(id, _, o)| (id.clone(), o.clone()))
            .collect()
    };
    assert_eq!(ids(0), ids(1), "xunit1 and xunit2 give the same ids");
    for want in [
        ("tests/test_params.py::test_add[2-3]", "passed"),
        ("tests/test_params.py::test_add[1-1]", "passed"),
        ("tests/test_params.py::TestKinds::test_fail", "failed"),
        ("tests/test_params.py::TestKinds::test_skip", "skipped"),
        ("tests/test_money.py::test_to_cents", "passed"),
    ] {
        let want = (want.0.to_string(), want.1.to_string());
        assert!(ids(0).contains(&want), "{want:?} in {:?}", ids(0));
    }
    let env: String = db(&t)
        .query_row("SELECT env FROM runs WHERE leg = 'py-x2'", [], |r| r.get(0))
        .unwrap();
    let env: serde_json::Value = serde_json::from_str(&env).unwrap();
    assert_eq!(env["os"], std::env::consts::OS);
    assert!(env["python"].as_str().unwrap().starts_with('3'), "{env}");
}

/// The same upload twice stores one copy; other content for the same (run, attempt, leg)
/// replaces it; a CI re-run (attempt 2, from GITHUB_RUN_ATTEMPT) keeps both attempts; with no
/// run id anywhere, one is generated and printed for the steps that follow.
#[test]
fn uploads_are_idempotent_replace_atomically_and_keep_attempts() {
    let t = repo();
    let x2 = junit(&t, "xunit2");
    let first = record(&t, &["--junit", p(&x2), "--run", "9"]);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    let again = record(&t, &["--junit", p(&x2), "--run", "9"]);
    assert!(
        text(&again).contains("already recorded, unchanged"),
        "{}",
        text(&again)
    );
    assert_eq!(legs(&t).len(), 1);
    // Other content under the same key: the test now passes.
    let fixed = std::fs::read_to_string(&x2)
        .unwrap()
        .replace("<failure", "<system-out")
        .replace("</failure>", "</system-out>");
    let fixed_path = t.root.parent().unwrap().join("fixed.xml");
    std::fs::write(&fixed_path, fixed).unwrap();
    let replaced = record(&t, &["--junit", p(&fixed_path), "--run", "9"]);
    assert!(
        text(&replaced).contains("replaced the earlier upload"),
        "{}",
        text(&replaced)
    );
    let legs_now = legs(&t);
    assert_eq!(legs_now.len(), 1);
    assert!(
        legs_now[0].3.iter().all(|(_, _, o)| o != "failed"),
        "{legs_now:?}"
    );
    // A CI re-run keeps the run id and raises the attempt: both are kept.
    let rerun = t
        .gate(&["record", "--junit", p(&x2)])
        .env("GITHUB_RUN_ID", "9")
        .env("GITHUB_RUN_ATTEMPT", "2")
        .output()
        .unwrap();
    assert_eq!(rerun.status.code(), Some(0), "{}", text(&rerun));
    let attempts: Vec<(String, u32)> = legs(&t).into_iter().map(|l| (l.0, l.1)).collect();
    assert_eq!(attempts, [("9".to_string(), 1), ("9".to_string(), 2)]);
    let local = record(&t, &["--junit", p(&x2)]);
    let said = text(&local);
    assert!(said.contains("gate record: run local-"), "{said}");
    assert!(said.contains("pass --run local-"), "{said}");
}

/// A truncated report, a file that is not JUnit, a truncated `go test -json` stream, a missing
/// file: each is one error line naming the file and where it broke, a distinct exit code, and
/// the store is left exactly as it was — even when a good file comes first.
#[test]
fn malformed_inputs_record_nothing() {
    let t = repo();
    let good = junit(&t, "xunit2");
    assert_eq!(
        record(&t, &["--junit", p(&good), "--run", "1"])
            .status
            .code(),
        Some(0)
    );
    let store = t.root.join(".git/gate/history.sqlite");
    let before = legs(&t);
    let dir = t.root.parent().unwrap();
    let xml = std::fs::read_to_string(&good).unwrap();
    let cut = dir.join("cut.xml");
    std::fs::write(&cut, &xml[..xml.len() / 2]).unwrap();
    let html = dir.join("page.xml");
    std::fs::write(&html, "<html><body/></html>").unwrap();
    let stream = dir.join("cut.json");
    std::fs::write(
        &stream,
        "{\"Action\":\"run\",\"Package\":\"example.com/shop/money\",\"Test\":\"TestFormat\"}\n{\"Action\":\"pass\",\"Pack",
    )
    .unwrap();
    let open = dir.join("open.json");
    std::fs::write(
        &open,
        "{\"Action\":\"run\",\"Package\":\"example.com/shop/money\",\"Test\":\"TestFormat\"}\n",
    )
    .unwrap();
    for (args, code, says) in [
        (vec!["--junit", p(&good), p(&cut)], 10, "cut.xml: "),
        (
            vec!["--junit", p(&html)],
            10,
            "page.xml: not a JUnit report: its root element is `html`",
        ),
        (
            vec!["--go-json", p(&stream)],
            10,
            "cut.json: line 2: not a `go test -json` event",
        ),
        (
            vec!["--go-json", p(&open)],
            10,
            "open.json: the stream ends while example.com/shop/money TestFormat is still running",
        ),
        (
            vec!["--junit", "missing.xml"],
            7,
            "missing.xml: cannot read",
        ),
        (vec![], 3, "give --junit FILE… or --go-json FILE…"),
    ] {
        let mut all = args.clone();
        all.extend(["--run", "2"]);
        let out = record(&t, &all);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(legs(&t), before, "{args:?}: the store is unchanged");
    }
    assert!(store.exists());
}

/// A store written by a newer gate is refused, never written; a store that cannot be opened
/// is exit 8 with its path.
#[test]
fn a_newer_schema_or_an_unusable_store_is_refused() {
    let t = repo();
    let good = junit(&t, "xunit2");
    assert_eq!(
        record(&t, &["--junit", p(&good), "--run", "1"])
            .status
            .code(),
        Some(0)
    );
    db(&t)
        .execute(
            "UPDATE meta SET value = '99' WHERE key = 'schema_version'",
            [],
        )
        .unwrap();
    let before = legs(&t);
    let out = record(&t, &["--junit", p(&good), "--run", "2"]);
    assert_eq!(out.status.code(), Some(8), "{}", text(&out));
    assert!(
        text(&out).contains("schema version 99, newer than this gate's 1"),
        "{}",
        text(&out)
    );
    assert_eq!(legs(&t), before);
    let blocker = t.root.parent().unwrap().join("not-a-folder");
    std::fs::write(&blocker, "x").unwrap();
    let url = format!("sqlite:{}/h.sqlite", blocker.display());
    let out = record(&t, &["--junit", p(&good), "--db", &url]);
    assert_eq!(out.status.code(), Some(8), "{}", text(&out));
    assert!(
        text(&out).contains("cannot open the history store"),
        "{}",
        text(&out)
    );
    let out = record(&t, &["--junit", p(&good), "--db", "postgres://localhost/x"]);
    assert_eq!(out.status.code(), Some(8), "{}", text(&out));
}

/// Eight processes recording eight legs into one SQLite store at once lose nothing.
#[test]
fn eight_processes_recording_at_once_lose_nothing() {
    let t = repo();
    let good = junit(&t, "xunit2");
    let children: Vec<std::process::Child> = (0..8)
        .map(|i| {
            t.gate_process(&[
                "record",
                "--junit",
                p(&good),
                "--run",
                "42",
                "--leg",
                &format!("leg{i}"),
            ])
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let legs = legs(&t);
    assert_eq!(legs.len(), 8, "{legs:?}");
    assert!(
        legs.iter()
            .all(|l| l.3.len() == legs[0].3.len() && !l.3.is_empty())
    );
}

/// `go test -json` from a real go test: one result per test and subtest under the ids the
/// selection uses, a failing package included.
#[test]
fn go_json_from_a_real_go_test_is_recorded_per_test() {
    let t = TestRepo::from_fixture("goshop");
    t.write(
        "ws/shop/money/more_test.go",
        "package money\n\nimport \"testing\"\n\nfunc TestSub(t *testing.T) {\n\tt.Run(\"one\", func(t *testing.T) {})\n\tt.Run(\"two\", func(t *testing.T) { t.Fatal(\"broken on purpose\") })\n}\n",
    );
    t.commit("subtests");
    let out = std::process::Command::new("go")
        .args(["test", "-json", "./money/..."])
        .current_dir(t.root.join("ws/shop"))
        .envs(crate::golang::go_vars())
        .output()
        .unwrap();
    let stream = t.root.parent().unwrap().join("go.json");
    std::fs::write(&stream, &out.stdout).unwrap();
    let rec = record(&t, &["--go-json", p(&stream), "--run", "5", "--leg", "go"]);
    assert_eq!(rec.status.code(), Some(0), "{}", text(&rec));
    let legs = legs(&t);
    let got: Vec<(String, String)> = legs[0]
        .3
        .iter()
        .map(|(id, _, o)| (id.clone(), o.clone()))
        .collect();
    for want in [
        ("ws/shop/money::TestFormat", "passed"),
        ("ws/shop/money::TestSub/one", "passed"),
        ("ws/shop/money::TestSub/two", "failed"),
    ] {
        let want = (want.0.to_string(), want.1.to_string());
        assert!(got.contains(&want), "{want:?} in {got:?}");
    }
}
