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

/// A stored result: (test id, try, outcome).
pub(crate) type Stored = (String, u32, String);
/// A stored leg: run, attempt, leg, and its results in id order.
pub(crate) type StoredLeg = (String, u32, String, Vec<Stored>);

/// The store kinds every test here runs against: SQLite, and the real PostgreSQL at
/// 127.0.0.1:5432 in a fresh database of its own, dropped afterwards.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    Sqlite,
    Postgres,
}

const SERVER: &str = "postgres://root@127.0.0.1:5432";

/// A store a test records into and reads back from.
pub(crate) struct Store {
    pub(crate) url: String,
    /// PostgreSQL: the test's own database, dropped with the store.
    database: Option<String>,
}

impl Store {
    pub(crate) fn new(kind: Kind, t: &TestRepo) -> Store {
        match kind {
            Kind::Sqlite => Store {
                url: format!(
                    "sqlite:{}",
                    t.root.join(".git/gate/history.sqlite").display()
                ),
                database: None,
            },
            Kind::Postgres => Store::postgres(),
        }
    }

    /// A fresh database of its own on the real PostgreSQL, dropped with the store.
    pub(crate) fn postgres() -> Store {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let name = format!("gate_it_{}_{n}", std::process::id());
        let mut admin = postgres::Client::connect(&format!("{SERVER}/postgres"), postgres::NoTls)
            .expect("PostgreSQL answers at 127.0.0.1:5432 (.ci/run checks it)");
        admin
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .unwrap();
        Store {
            url: format!("{SERVER}/{name}"),
            database: Some(name),
        }
    }

    /// A SQLite store at `path`.
    pub(crate) fn sqlite_at(path: &Path) -> Store {
        Store {
            url: format!("sqlite:{}", path.display()),
            database: None,
        }
    }

    /// The rows of `sql` (text and integer columns), each as text.
    pub(crate) fn rows(&self, sql: &str) -> Vec<Vec<String>> {
        match &self.database {
            None => {
                let c = rusqlite::Connection::open(self.url.trim_start_matches("sqlite:")).unwrap();
                let mut q = c.prepare(sql).unwrap();
                let n = q.column_count();
                q.query_map([], |r| {
                    (0..n)
                        .map(|i| {
                            Ok(match r.get_ref(i)? {
                                rusqlite::types::ValueRef::Integer(v) => v.to_string(),
                                rusqlite::types::ValueRef::Text(t) => {
                                    String::from_utf8_lossy(t).into_owned()
                                }
                                rusqlite::types::ValueRef::Null => String::new(),
                                other => format!("{other:?}"),
                            })
                        })
                        .collect()
                })
                .unwrap()
                .map(Result::unwrap)
                .collect()
            }
            Some(_) => {
                let mut c = postgres::Client::connect(&self.url, postgres::NoTls).unwrap();
                let sql = format!("SELECT * FROM ({sql}) AS q");
                c.query(sql.as_str(), &[])
                    .unwrap()
                    .iter()
                    .map(|row| {
                        (0..row.len())
                            .map(|i| {
                                row.try_get::<_, Option<String>>(i)
                                    .map(Option::unwrap_or_default)
                                    .or_else(|_| {
                                        row.try_get::<_, Option<i64>>(i)
                                            .map(|v| v.map(|v| v.to_string()).unwrap_or_default())
                                    })
                                    .or_else(|_| {
                                        row.try_get::<_, Option<i32>>(i)
                                            .map(|v| v.map(|v| v.to_string()).unwrap_or_default())
                                    })
                                    .unwrap()
                            })
                            .collect()
                    })
                    .collect()
            }
        }
    }

    /// PostgreSQL: the transactions committed or rolled back in the test's database so far (a
    /// query outside one is one), read from another database once no session is connected
    /// to this one: a session's counts reach the server's statistics as it ends.
    pub(crate) fn transactions(&self) -> i64 {
        let name = self.database.as_ref().expect("a PostgreSQL store");
        let mut admin =
            postgres::Client::connect(&format!("{SERVER}/postgres"), postgres::NoTls).unwrap();
        for _ in 0..200 {
            let sessions: i64 = admin
                .query_one(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = $1",
                    &[name],
                )
                .unwrap()
                .get(0);
            if sessions == 0 {
                return admin
                    .query_one(
                        "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = $1",
                        &[name],
                    )
                    .unwrap()
                    .get(0);
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        panic!("sessions stayed connected to {name}");
    }

    pub(crate) fn execute(&self, sql: &str) {
        match &self.database {
            None => {
                rusqlite::Connection::open(self.url.trim_start_matches("sqlite:"))
                    .unwrap()
                    .execute_batch(sql)
                    .unwrap();
            }
            Some(_) => postgres::Client::connect(&self.url, postgres::NoTls)
                .unwrap()
                .batch_execute(sql)
                .unwrap(),
        }
    }

    /// Every stored leg, in (run, attempt, leg) order.
    pub(crate) fn legs(&self) -> Vec<StoredLeg> {
        self.rows("SELECT seq, run_id, attempt, leg FROM runs ORDER BY run_id, attempt, leg")
            .into_iter()
            .map(|r| {
                let results = self
                    .rows(&format!(
                        "SELECT test_id, try, outcome FROM results WHERE seq = {} ORDER BY test_id, try",
                        r[0]
                    ))
                    .into_iter()
                    .map(|x| (x[0].clone(), x[1].parse().unwrap(), x[2].clone()))
                    .collect();
                (r[1].clone(), r[2].parse().unwrap(), r[3].clone(), results)
            })
            .collect()
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        if let Some(name) = &self.database
            && let Ok(mut admin) =
                postgres::Client::connect(&format!("{SERVER}/postgres"), postgres::NoTls)
        {
            let _ = admin.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
        }
    }
}

/// `gate record ARGS --db STORE`, with no CI run id from the environment.
pub(crate) fn record(t: &TestRepo, store: &Store, args: &[&str]) -> std::process::Output {
    let mut all = vec!["record"];
    all.extend(args);
    all.extend(["--db", store.url.as_str()]);
    t.gate(&all)
        .env_remove("GITHUB_RUN_ID")
        .env_remove("GITHUB_RUN_ATTEMPT")
        .output()
        .unwrap()
}

/// Each test body, once per store kind.
macro_rules! on_both {
    ($body:ident: $sqlite:ident, $postgres:ident) => {
        #[test]
        fn $sqlite() {
            $body(Kind::Sqlite)
        }
        #[test]
        fn $postgres() {
            $body(Kind::Postgres)
        }
    };
}

pub(crate) fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

on_both!(both_junit_families_record_the_ids_the_selection_uses_per_leg: junit_families_sqlite, junit_families_postgres);
/// Both JUnit families pytest writes give the same ids — the selection's, parameters whole —
/// and matrix legs of one run are stored apart, never over each other.
fn both_junit_families_record_the_ids_the_selection_uses_per_leg(kind: Kind) {
    let t = repo();
    let store = Store::new(kind, &t);
    let x2 = junit(&t, "xunit2");
    let x1 = junit(&t, "xunit1");
    let out = record(
        &t,
        &store,
        &["--junit", p(&x2), "--run", "77", "--leg", "py-x2"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("recorded leg `py-x2` of run 77 attempt 1"),
        "{}",
        text(&out)
    );
    let out = record(
        &t,
        &store,
        &["--junit", p(&x1), "--run", "77", "--leg", "py-x1"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let legs = store.legs();
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
    let env = store.rows("SELECT env FROM runs WHERE leg = 'py-x2'")[0][0].clone();
    let env: serde_json::Value = serde_json::from_str(&env).unwrap();
    assert_eq!(env["os"], std::env::consts::OS);
    assert!(env["python"].as_str().unwrap().starts_with('3'), "{env}");
}

on_both!(uploads_are_idempotent_replace_atomically_and_keep_attempts: idempotent_sqlite, idempotent_postgres);
/// The same upload twice stores one copy; other content for the same (run, attempt, leg)
/// replaces it; a CI re-run (attempt 2, from GITHUB_RUN_ATTEMPT) keeps both attempts; with no
/// run id anywhere, one is generated and printed for the steps that follow.
fn uploads_are_idempotent_replace_atomically_and_keep_attempts(kind: Kind) {
    let t = repo();
    let store = Store::new(kind, &t);
    let x2 = junit(&t, "xunit2");
    let first = record(&t, &store, &["--junit", p(&x2), "--run", "9"]);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    let again = record(&t, &store, &["--junit", p(&x2), "--run", "9"]);
    assert!(
        text(&again).contains("already recorded, unchanged"),
        "{}",
        text(&again)
    );
    assert_eq!(store.legs().len(), 1);
    // Other content under the same key: the test now passes.
    let fixed = std::fs::read_to_string(&x2)
        .unwrap()
        .replace("<failure", "<system-out")
        .replace("</failure>", "</system-out>");
    let fixed_path = t.root.parent().unwrap().join("fixed.xml");
    std::fs::write(&fixed_path, fixed).unwrap();
    let replaced = record(&t, &store, &["--junit", p(&fixed_path), "--run", "9"]);
    assert!(
        text(&replaced).contains("replaced the earlier upload"),
        "{}",
        text(&replaced)
    );
    let legs_now = store.legs();
    assert_eq!(legs_now.len(), 1);
    assert!(
        legs_now[0].3.iter().all(|(_, _, o)| o != "failed"),
        "{legs_now:?}"
    );
    // A CI re-run keeps the run id and raises the attempt: both are kept.
    let rerun = t
        .gate(&["record", "--junit", p(&x2), "--db", &store.url])
        .env("GITHUB_RUN_ID", "9")
        .env("GITHUB_RUN_ATTEMPT", "2")
        .output()
        .unwrap();
    assert_eq!(rerun.status.code(), Some(0), "{}", text(&rerun));
    let attempts: Vec<(String, u32)> = store.legs().into_iter().map(|l| (l.0, l.1)).collect();
    assert_eq!(attempts, [("9".to_string(), 1), ("9".to_string(), 2)]);
    let local = record(&t, &store, &["--junit", p(&x2)]);
    let said = text(&local);
    assert!(said.contains("gate record: run local-"), "{said}");
    assert!(said.contains("pass --run local-"), "{said}");
}

on_both!(malformed_inputs_record_nothing: malformed_sqlite, malformed_postgres);
/// A truncated report, a file that is not JUnit, a truncated `go test -json` stream, a missing
/// file: each is one error line naming the file and where it broke, a distinct exit code, and
/// the store is left exactly as it was — even when a good file comes first.
fn malformed_inputs_record_nothing(kind: Kind) {
    let t = repo();
    let store = Store::new(kind, &t);
    let good = junit(&t, "xunit2");
    assert_eq!(
        record(&t, &store, &["--junit", p(&good), "--run", "1"])
            .status
            .code(),
        Some(0)
    );
    let before = store.legs();
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
        let out = record(&t, &store, &all);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(store.legs(), before, "{args:?}: the store is unchanged");
    }
}

on_both!(a_report_with_no_result_never_replaces_a_leg_with_results: no_result_sqlite, no_result_postgres);
/// A file of another kind given as `go test -json` (JUnit XML, bytes, prose) is exit 10, never a
/// leg of zero results; a real report with no result (an empty suite) cannot take the place of
/// the leg with results recorded under the same (run, attempt, leg) — its failing test would
/// vanish from triage — but is recorded as a new attempt.
fn a_report_with_no_result_never_replaces_a_leg_with_results(kind: Kind) {
    let t = repo();
    let store = Store::new(kind, &t);
    let good = junit(&t, "xunit2");
    let first = record(
        &t,
        &store,
        &["--junit", p(&good), "--run", "1", "--leg", "unit"],
    );
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    let before = store.legs();
    assert!(
        before[0].3.iter().any(|(_, _, o)| o == "failed"),
        "{before:?}"
    );
    let dir = t.root.parent().unwrap();
    let bytes = dir.join("bytes.json");
    std::fs::write(&bytes, [0u8, 159, 146, 150, 10, 255, 0, 7]).unwrap();
    let prose = dir.join("prose.json");
    std::fs::write(&prose, "ok  \texample.com/shop/money\t0.01s\nall good\n").unwrap();
    let empty = dir.join("empty.xml");
    std::fs::write(
        &empty,
        "<?xml version=\"1.0\"?><testsuites><testsuite name=\"pytest\" tests=\"0\"/></testsuites>",
    )
    .unwrap();
    for (args, says) in [
        (
            vec!["--go-json", p(&good)],
            "xunit2.xml: not a `go test -json` stream: no line is a test event",
        ),
        (
            vec!["--go-json", p(&bytes)],
            "bytes.json: not a `go test -json` stream",
        ),
        (
            vec!["--go-json", p(&prose)],
            "prose.json: not a `go test -json` stream",
        ),
        (
            vec!["--junit", p(&empty)],
            "leg `unit` of run 1 attempt 1 already holds",
        ),
    ] {
        let mut all = args.clone();
        all.extend(["--run", "1", "--leg", "unit"]);
        let out = record(&t, &store, &all);
        assert_eq!(out.status.code(), Some(10), "{args:?}: {}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(store.legs(), before, "{args:?}: the store is unchanged");
    }
    let next = record(
        &t,
        &store,
        &[
            "--junit",
            p(&empty),
            "--run",
            "1",
            "--attempt",
            "2",
            "--leg",
            "unit",
        ],
    );
    assert_eq!(next.status.code(), Some(0), "{}", text(&next));
    assert!(
        text(&next).contains("uploaded zero results"),
        "{}",
        text(&next)
    );
    assert_eq!(store.legs().len(), 2);
    // Triage judges the latest attempt: one with no result says so, never "nothing failed".
    let triage = t
        .gate(&["triage", "--db", &store.url, "--run", "1"])
        .output()
        .unwrap();
    let said = text(&triage);
    assert!(
        said.contains("leg `unit` attempt 2 recorded no test result: nothing in it was judged"),
        "{said}"
    );
    assert!(
        said.contains("0 unknown; 1 of 1 leg(s) recorded no result"),
        "{said}"
    );
}

on_both!(control_characters_in_test_names_are_escaped_on_every_human_line: control_sqlite, control_postgres);
/// Anyone who names a test in a pull request controls what triage and history print: a name
/// with a newline, a screen clear (`ESC[2J`) and a terminal retitle (`ESC]0;…BEL`) is printed
/// as escapes — no line is forged, the terminal is not driven — and kept as it was in JSON.
fn control_characters_in_test_names_are_escaped_on_every_human_line(kind: Kind) {
    let t = repo();
    let store = Store::new(kind, &t);
    let dir = t.root.parent().unwrap();
    let hostile = dir.join("hostile.xml");
    std::fs::write(
        &hostile,
        "<testsuites><testsuite name=\"pytest\"><testcase classname=\"tests.test_money\" \
         name=\"test_x&#27;[2J&#27;]0;owned&#7;&#10;new regression  high    tests/forged.py\" \
         file=\"tests/test_money.py\"><failure message=\"m\"/></testcase></testsuite></testsuites>",
    )
    .unwrap();
    let leg = "py\u{1b}[2J";
    let out = record(
        &t,
        &store,
        &["--junit", p(&hostile), "--run", "1", "--leg", leg],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let id = "tests/test_money.py::test_x\u{1b}[2J\u{1b}]0;owned\u{7}\nnew regression  high    tests/forged.py";
    for args in [vec!["triage", "--run", "1"], vec!["history", id]] {
        let mut all = args.clone();
        all.extend(["--db", store.url.as_str()]);
        let out = t.gate(&all).env("NO_COLOR", "1").output().unwrap();
        for stream in [&out.stdout, &out.stderr] {
            let said = String::from_utf8_lossy(stream);
            assert!(
                !said.chars().any(|c| c.is_control() && c != '\n'),
                "{args:?} printed a control character: {said:?}"
            );
            assert!(
                !said
                    .lines()
                    .any(|l| l.starts_with("new regression  high    tests/forged.py")),
                "{args:?} forged a line: {said}"
            );
        }
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            said.contains("test_x\\u{1b}[2J\\u{1b}]0;owned\\u{7}\\nnew regression"),
            "{args:?}: {said}"
        );
    }
    // JSON keeps the name as it was.
    let json = t
        .gate(&["triage", "--run", "1", "--json", "--db", &store.url])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(doc["verdicts"][0]["test"], id, "{doc}");
    assert_eq!(doc["legs"][0]["leg"], leg, "{doc}");
}

on_both!(a_pass_under_other_inputs_is_no_flaky_evidence: inputs_sqlite, inputs_postgres);
/// A pass on the same commit under another interpreter variable (`TZ`) is another experiment:
/// the failure is not triaged flaky on its strength. Under the same inputs it is.
fn a_pass_under_other_inputs_is_no_flaky_evidence(kind: Kind) {
    let t = repo();
    let store = Store::new(kind, &t);
    let failing = junit(&t, "xunit2");
    let passing = t.root.parent().unwrap().join("passing.xml");
    std::fs::write(
        &passing,
        std::fs::read_to_string(&failing)
            .unwrap()
            .replace("<failure", "<system-out")
            .replace("</failure>", "</system-out>"),
    )
    .unwrap();
    let at = |file: &Path, run: &str, tz: &str| {
        let out = t
            .gate(&[
                "record",
                "--junit",
                p(file),
                "--run",
                run,
                "--db",
                &store.url,
            ])
            .env_remove("GITHUB_RUN_ID")
            .env_remove("GITHUB_RUN_ATTEMPT")
            .env("TZ", tz)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    };
    let triage = |run: &str| {
        let out = t
            .gate(&["triage", "--run", run, "--json", "--db", &store.url])
            .output()
            .unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        crate::plans::validate("triage.schema.json", &doc);
        doc["verdicts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["test"].as_str().unwrap().ends_with("test_fail"))
            .map(|v| v["verdict"].as_str().unwrap().to_string())
            .unwrap()
    };
    at(&passing, "1", "UTC");
    at(&failing, "2", "Asia/Tokyo");
    assert_ne!(
        triage("2"),
        "flaky",
        "a pass under another TZ is not flaky evidence"
    );
    at(&failing, "3", "UTC");
    assert_eq!(
        triage("3"),
        "flaky",
        "the same inputs: the pass is a retry's"
    );
}

on_both!(a_newer_schema_or_an_unusable_store_is_refused: newer_schema_sqlite, newer_schema_postgres);
/// A store written by a newer gate is refused, never written; a store that cannot be opened
/// is exit 8 with its path.
fn a_newer_schema_or_an_unusable_store_is_refused(kind: Kind) {
    let t = repo();
    let store = Store::new(kind, &t);
    let good = junit(&t, "xunit2");
    assert_eq!(
        record(&t, &store, &["--junit", p(&good), "--run", "1"])
            .status
            .code(),
        Some(0)
    );
    store.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'");
    let before = store.legs();
    let out = record(&t, &store, &["--junit", p(&good), "--run", "2"]);
    assert_eq!(out.status.code(), Some(8), "{}", text(&out));
    assert!(
        text(&out).contains("schema version 99, newer than this gate's 13"),
        "{}",
        text(&out)
    );
    assert_eq!(store.legs(), before);
    // A store that cannot be opened: a SQLite path under a file, a server that does not
    // answer, a URL of another database.
    let blocker = t.root.parent().unwrap().join("not-a-folder");
    std::fs::write(&blocker, "x").unwrap();
    for url in [
        format!("sqlite:{}/h.sqlite", blocker.display()),
        "postgres://root@127.0.0.1:1/gate".to_string(),
        "mysql://root@127.0.0.1/gate".to_string(),
    ] {
        let out = t
            .gate(&["record", "--junit", p(&good), "--db", &url])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(8), "{url}: {}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("cannot open the history store") || err.contains("not a store URL"),
            "{url}: {err}"
        );
    }
}

on_both!(eight_processes_recording_at_once_lose_nothing: concurrent_legs_sqlite, concurrent_legs_postgres);
/// Eight processes recording eight legs into one store at once lose nothing.
fn eight_processes_recording_at_once_lose_nothing(kind: Kind) {
    let t = repo();
    let store = Store::new(kind, &t);
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
                "--db",
                &store.url,
            ])
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let legs = store.legs();
    assert_eq!(legs.len(), 8, "{legs:?}");
    assert!(
        legs.iter()
            .all(|l| l.3.len() == legs[0].3.len() && !l.3.is_empty())
    );
}

on_both!(go_json_from_a_real_go_test_is_recorded_per_test: go_json_sqlite, go_json_postgres);
/// `go test -json` from a real go test: one result per test and subtest under the ids the
/// selection uses, a failing package included.
fn go_json_from_a_real_go_test_is_recorded_per_test(kind: Kind) {
    let t = TestRepo::from_fixture("goshop");
    let store = Store::new(kind, &t);
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
    let rec = record(
        &t,
        &store,
        &["--go-json", p(&stream), "--run", "5", "--leg", "go"],
    );
    assert_eq!(rec.status.code(), Some(0), "{}", text(&rec));
    let legs = store.legs();
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

on_both!(a_tests_history_lists_its_runs_newest_first: history_sqlite, history_postgres);
/// `gate history TEST`: the test's recorded runs newest first (by the store's order, not the
/// files' timestamps), each with its attempts; `--json` follows its schema; an id nothing was
/// recorded for is an error, as JSON under `--json`.
fn a_tests_history_lists_its_runs_newest_first(kind: Kind) {
    let t = repo();
    let store = Store::new(kind, &t);
    let failing = junit(&t, "xunit2");
    let fixed = t.root.parent().unwrap().join("fixed.xml");
    std::fs::write(
        &fixed,
        std::fs::read_to_string(&failing)
            .unwrap()
            .replace("<failure", "<system-out")
            .replace("</failure>", "</system-out>"),
    )
    .unwrap();
    for (file, run) in [(&failing, "1"), (&fixed, "2")] {
        let out = record(&t, &store, &["--junit", p(file), "--run", run]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    }
    let id = "tests/test_params.py::TestKinds::test_fail";
    let out = t
        .gate(&["history", id, "--json", "--db", &store.url])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    crate::plans::validate("history.schema.json", &doc);
    let runs: Vec<(String, String)> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["run"].as_str().unwrap().to_string(),
                r["attempts"][0]["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        runs,
        [
            ("2".to_string(), "passed".to_string()),
            ("1".to_string(), "failed".to_string())
        ]
    );
    let human = t
        .gate(&["history", id, "--limit", "1", "--db", &store.url])
        .output()
        .unwrap();
    let said = text(&human);
    assert!(said.contains("run 2 attempt 1  leg default"), "{said}");
    assert!(!said.contains("run 1 attempt"), "--limit 1: {said}");
    assert!(said.contains("1 recorded run(s), newest first"), "{said}");
    let unknown = t
        .gate(&[
            "history",
            "tests/test_nope.py::test_x",
            "--json",
            "--db",
            &store.url,
        ])
        .output()
        .unwrap();
    assert_eq!(unknown.status.code(), Some(3), "{}", text(&unknown));
    let err: serde_json::Value = serde_json::from_slice(&unknown.stdout).unwrap();
    crate::plans::validate("error.schema.json", &err);
    assert!(
        err["error"]
            .as_str()
            .unwrap()
            .contains("no recorded result"),
        "{err}"
    );
}

/// TLS to PostgreSQL, as libpq's `sslmode` names it: `require` encrypts, `verify-full` checks
/// the server's certificate and name (here against the server's own certificate), and a name
/// the certificate does not hold is refused (exit 8). A server without TLS refuses `require`.
#[test]
fn postgres_over_tls_encrypts_and_verifies() {
    let t = repo();
    let store = Store::new(Kind::Postgres, &t);
    let good = junit(&t, "xunit2");
    let mut admin = postgres::Client::connect(&store.url, postgres::NoTls).unwrap();
    let show = |admin: &mut postgres::Client, what: &str| -> String {
        admin
            .query_one(&format!("SHOW {what}"), &[])
            .unwrap()
            .get(0)
    };
    let ssl = show(&mut admin, "ssl");
    let run = |url: &str, run: &str| {
        t.gate(&["record", "--junit", p(&good), "--run", run, "--db", url])
            .env_remove("GITHUB_RUN_ID")
            .output()
            .unwrap()
    };
    if ssl != "on" {
        let out = run(&format!("{}?sslmode=require", store.url), "1");
        assert_eq!(out.status.code(), Some(8), "{}", text(&out));
        return;
    }
    let cert = show(&mut admin, "ssl_cert_file");
    let out = run(&format!("{}?sslmode=require", store.url), "1");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let by_name = store.url.replace("127.0.0.1", "localhost");
    let out = run(
        &format!("{by_name}?sslmode=verify-full&sslrootcert={cert}"),
        "2",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(store.legs().len(), 2);
    // The certificate names `localhost`, not the address.
    let out = run(
        &format!("{}?sslmode=verify-full&sslrootcert={cert}", store.url),
        "3",
    );
    assert_eq!(out.status.code(), Some(8), "{}", text(&out));
    assert!(
        text(&out).contains("cannot open the history store"),
        "{}",
        text(&out)
    );
    assert_eq!(store.legs().len(), 2, "nothing written");
}
