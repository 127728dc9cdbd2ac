//! A run that did not run never looks like a pass (issue 49): runner arguments are read
//! against an allow-list; what runs no test body, moves the ids, narrows the run to nothing or
//! comes in through a configuration file or the environment is refused by name or judged no
//! pass — and a result is recorded only under an id a selected file defines.
//!
//! The space, not the example: every option of the real `pytest --help` and of `go help
//! testflag`/`build`/`test` is run against a fixture with one planted failing test and one
//! passing, as shipped and again with the option allowed in `.gate.toml`, and each is checked
//! to be refused by name or to record the true outcome under the true id.

use crate::history::Store;
use crate::support::{TestRepo, text};
use std::collections::BTreeMap;
use std::process::{Command, Output};
use std::time::Duration;

const FAIL: &str = "tests/test_calc.py::test_fail";
const PASS: &str = "tests/test_calc.py::test_pass";

/// The planted project, `base`'s files (path, content) written into the base, and a change
/// every test reaches.
fn planted(base: &[(&str, &str)]) -> TestRepo {
    let t = TestRepo::from_fixture("planted");
    if !base.is_empty() {
        for (path, content) in base {
            t.write(path, content);
        }
        t.commit("the base");
    }
    t.append("src/calc.py", "# touched\n");
    t.commit("touch calc");
    t
}

/// A SQLite store of `t`'s named `name`.
fn store_at(t: &TestRepo, name: &str) -> String {
    format!(
        "sqlite:{}",
        t.root.join(format!(".git/gate/{name}.sqlite")).display()
    )
}

/// `gate --affected HEAD~1...HEAD --record` into a fresh store, with `args` after `--` and
/// `env`, stdin closed (an interactive option must not wait) and a bound on its time.
fn run(t: &TestRepo, db: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut all = vec!["--affected", "HEAD~1...HEAD", "--record", "--db", db, "--"];
    all.extend(args);
    let mut cmd = t.gate(&all);
    cmd.envs(crate::golang::go_vars())
        .env("PYTEST_ADDOPTS", "")
        .env("PYTEST_PLUGINS", "")
        .envs(env.iter().copied())
        .write_stdin("")
        .timeout(Duration::from_secs(120));
    cmd.output().unwrap()
}

/// Every recorded result: id → outcomes.
fn recorded(db: &str) -> BTreeMap<String, Vec<String>> {
    let store = Store::sqlite_at(std::path::Path::new(db.trim_start_matches("sqlite:")));
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    if !std::path::Path::new(db.trim_start_matches("sqlite:")).exists() {
        return out;
    }
    for row in store.rows("SELECT test_id, outcome FROM results") {
        out.entry(row[0].clone()).or_default().push(row[1].clone());
    }
    out
}

/// How a run with an option landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Landed {
    Refused,
    Failed,
    NothingRan,
    Broken,
}

/// The rule for one run with `option` (as spelled): refused by name (exit 3, one line naming
/// it), or the true outcome under the true id — the failing test never a pass, every id one
/// of the selected file's, exit 0 never with nothing run — else a failed assertion naming it.
fn judge(option: &str, out: &Output, db: &str, (fail, pass): (&str, &str)) -> Landed {
    let all = text(out);
    let code = out.status.code();
    if code == Some(3) {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(option),
            "{option}: refused without naming it: {all}"
        );
        assert_eq!(
            stderr.trim().lines().count(),
            1,
            "{option}: one line: {all}"
        );
        assert!(
            recorded(db).is_empty(),
            "{option}: refused, yet recorded: {all}"
        );
        return Landed::Refused;
    }
    let results = recorded(db);
    let file = fail.split("::").next().unwrap();
    for (id, outcomes) in &results {
        assert!(
            id.starts_with(&format!("{file}::")) || id == file,
            "{option}: recorded under an id no selected file defines: {id} ({all})"
        );
        if id == fail {
            assert!(
                !outcomes.iter().any(|o| o == "passed"),
                "{option}: the failing test recorded as passed: {all}"
            );
        }
    }
    match code {
        Some(1) => {
            // The failing test failed, or its whole file or package did (did not build, a
            // flag's value go rejected).
            let failed = results
                .get(fail)
                .is_some_and(|o| o.iter().any(|o| o == "failed"))
                || results
                    .get(file)
                    .is_some_and(|o| o.iter().any(|o| o == "error"));
            assert!(
                failed,
                "{option}: exit 1 without the failure recorded: {results:?} {all}"
            );
            Landed::Failed
        }
        Some(13) => {
            assert!(
                results.is_empty(),
                "{option}: nothing ran, yet: {results:?}"
            );
            Landed::NothingRan
        }
        Some(4) => Landed::Broken,
        Some(0) => panic!(
            "{option}: exit 0 with the failing test selected ({results:?}, {pass} among them?): {all}"
        ),
        other => panic!("{option}: exit {other:?}: {all}"),
    }
}

/// One option of a runner's help, as it can be spelled on the command line, with a value when
/// it takes one.
#[derive(Debug, Clone)]
struct Spelled {
    name: String,
    /// The words given (the name with its value).
    words: Vec<String>,
    takes_value: bool,
}

/// A value the option can take, from its metavariable.
fn value_for(name: &str, meta: &str) -> String {
    if let Some(choices) = meta.strip_prefix('{') {
        return choices.split([',', '}']).next().unwrap().to_string();
    }
    match (name, meta) {
        ("-k", _) => "test_".into(),
        ("-m", _) => "not nomark".into(),
        ("--rootdir", _) => "/".into(),
        ("--junit-prefix", _) => "X".into(),
        ("-c" | "--config-file", _) => "/dev/null".into(),
        ("-o" | "--override-ini", _) => "python_functions=nothing_".into(),
        (_, "num" | "N" | "n" | "VERBOSE") => "1".into(),
        (_, "PYTHONWARNINGS") => "default".into(),
        (_, "style") => "short".into(),
        (_, "method") => "sys".into(),
        (_, "color") => "no".into(),
        (_, "chars") => "A".into(),
        _ => "x".into(),
    }
}

/// Every option spelling of `python3 -m pytest --help`.
fn pytest_options() -> Vec<Spelled> {
    let help = Command::new("python3")
        .args(["-m", "pytest", "--help"])
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    let mut out = Vec::new();
    for line in help.lines() {
        // An option's line: two spaces, then its spellings up to two spaces or the end.
        let Some(rest) = line.strip_prefix("  ").filter(|r| r.starts_with('-')) else {
            continue;
        };
        let spec = rest.split("  ").next().unwrap();
        for spelling in spec.split(", ") {
            let (name, meta, attached) = match spelling.split_once('=') {
                Some((n, m)) => (n, m, true),
                None => match spelling.split_once(' ') {
                    Some((n, m)) => (n, m, false),
                    None => (spelling, "", false),
                },
            };
            // `--cache-show=[CACHESHOW]`: an optional value, left out.
            let takes_value = !meta.is_empty() && !meta.starts_with('[');
            let words = match (takes_value, attached) {
                (false, _) => vec![name.to_string()],
                (true, true) => vec![format!("{name}={}", value_for(name, meta))],
                (true, false) => vec![name.to_string(), value_for(name, meta)],
            };
            out.push(Spelled {
                name: name.to_string(),
                words,
                takes_value,
            });
        }
    }
    assert!(
        out.len() > 100,
        "pytest --help lists its options: {} read",
        out.len()
    );
    out
}

/// Every flag `go help testflag`, `go help build` and `go help test` list.
fn go_flags() -> Vec<Spelled> {
    let mut out: Vec<Spelled> = Vec::new();
    for topic in ["testflag", "build", "test"] {
        let help = Command::new("go").args(["help", topic]).output().unwrap();
        for line in String::from_utf8_lossy(&help.stdout).lines() {
            let Some(rest) = line
                .strip_prefix("\t-")
                .filter(|r| !r.starts_with([' ', '\t']))
            else {
                continue;
            };
            let (name, meta) = rest.split_once(' ').unwrap_or((rest, ""));
            let name = format!("-{name}");
            if out.iter().any(|s| s.name == name) {
                continue;
            }
            let takes_value = !meta.is_empty();
            let value = match name.as_str() {
                "-run" | "-skip" | "-list" | "-bench" => "Test".to_string(),
                "-count" | "-parallel" | "-p" | "-cpu" => "1".into(),
                "-timeout" => "1m".into(),
                "-covermode" => "set".into(),
                "-shuffle" => "on".into(),
                "-vet" => "off".into(),
                _ => "x".into(),
            };
            out.push(Spelled {
                words: vec![if takes_value {
                    format!("{name}={value}")
                } else {
                    name.clone()
                }],
                name,
                takes_value,
            });
        }
    }
    assert!(out.len() > 40, "go's help lists its flags: {out:?}");
    out
}

/// Runs every option in `options` on a fresh planted project (`make`, given the option's
/// `allow_args` entry when allowed) and judges each; the classes each landed in.
fn each(
    options: &[Spelled],
    make: &dyn Fn(Option<String>) -> TestRepo,
    allowed: bool,
    ids: (&str, &str),
) -> BTreeMap<Landed, Vec<String>> {
    let shared = make(None);
    let mut landed: BTreeMap<Landed, Vec<String>> = BTreeMap::new();
    for (n, option) in options.iter().enumerate() {
        let entry = if option.takes_value {
            format!("{} VALUE", option.name)
        } else {
            option.name.clone()
        };
        let own;
        let t = if allowed {
            own = make(Some(entry));
            &own
        } else {
            &shared
        };
        let db = store_at(t, &n.to_string());
        let words: Vec<&str> = option.words.iter().map(String::as_str).collect();
        let out = run(t, &db, &words, &[]);
        let class = judge(&option.name, &out, &db, ids);
        landed
            .entry(class)
            .or_default()
            .push(option.words.join(" "));
    }
    landed
}

fn summary(what: &str, landed: &BTreeMap<Landed, Vec<String>>) -> String {
    let mut s = format!("{what}:");
    for (class, options) in landed {
        s.push_str(&format!(
            "\n  {class:?} ({}): {}",
            options.len(),
            options.join(" | ")
        ));
    }
    s
}

/// Where a spelling must land under gate's allow-list alone: refused, or a run whose
/// failure is recorded (or that narrowed to nothing).
#[test]
fn every_pytest_option_is_refused_by_name_or_records_the_true_outcome() {
    let options = pytest_options();
    let landed = each(&options, &|_| planted(&[]), false, (FAIL, PASS));
    eprintln!("{}", summary("pytest, as shipped", &landed));
    // gate's own table is in the help: what it accepts ran and recorded the failure.
    let ran = landed.get(&Landed::Failed).map_or(0, Vec::len);
    assert!(ran >= 20, "{}", summary("pytest", &landed));
    assert!(
        !landed.contains_key(&Landed::Broken),
        "{}",
        summary("pytest", &landed)
    );
}

/// The same options each allowed by the project (`[python] allow_args`): what they do to a run
/// is then not gate's to know, yet none may record a pass for the failing test, an id no
/// selected file defines, or exit 0 having run nothing.
#[test]
fn every_pytest_option_allowed_by_the_project_still_never_records_a_false_pass() {
    let t = planted(&[]);
    let refused: Vec<Spelled> = pytest_options()
        .into_iter()
        // The network (bpaste.net) is not reachable here; the rest run.
        .filter(|o| o.name != "--pastebin")
        // Refused as shipped: `--list` selects only, after the arguments are read.
        .filter(|o| {
            let mut all = vec!["--affected", "HEAD~1...HEAD", "--list", "--"];
            all.extend(o.words.iter().map(String::as_str));
            t.gate(&all).output().unwrap().status.code() == Some(3)
        })
        .collect();
    assert!(refused.len() > 40, "{refused:?}");
    let make = |entry: Option<String>| match entry {
        Some(e) => planted(&[(".gate.toml", &format!("[python]\nallow_args = [{e:?}]\n"))]),
        None => planted(&[]),
    };
    let landed = each(&refused, &make, true, (FAIL, PASS));
    eprintln!("{}", summary("pytest, each allowed", &landed));
}

/// The same for `go test`'s flags.
#[test]
fn every_go_test_flag_is_refused_by_name_or_records_the_true_outcome() {
    let flags = go_flags();
    let make = |entry: Option<String>| {
        let t = TestRepo::from_fixture("goplanted");
        if let Some(entry) = entry {
            t.write(".gate.toml", &format!("[go]\nallow_args = [{entry:?}]\n"));
            t.commit("configuration");
        }
        t.append("calc/calc.go", "// touched\n");
        t.commit("touch calc");
        t
    };
    let ids = ("calc::TestFail", "calc::TestPass");
    let landed = each(&flags, &make, false, ids);
    eprintln!("{}", summary("go test, as shipped", &landed));
    assert!(
        landed.get(&Landed::Failed).map_or(0, Vec::len) >= 10,
        "{}",
        summary("go", &landed)
    );
    let refused: Vec<Spelled> = flags
        .into_iter()
        .filter(|f| landed[&Landed::Refused].contains(&f.words.join(" ")))
        // Everything after `-args` goes to the test binary, the packages too: never allowed.
        .filter(|f| f.name != "-args")
        .collect();
    let landed = each(&refused, &make, true, ids);
    eprintln!("{}", summary("go test, each allowed", &landed));
}

/// Item 1: `--setup-plan`/`--setup-only`/`--collect-only` are refused after `--`, in
/// `PYTEST_ADDOPTS`, and — reaching pytest through the project's own `addopts` — judged no
/// pass by the probe: the failing test is never stored as passed, nothing is flaky evidence.
#[test]
fn a_run_that_runs_no_test_body_is_refused_or_no_pass() {
    let t = planted(&[]);
    for option in ["--setup-plan", "--setup-only", "--collect-only", "--co"] {
        let db = store_at(&t, "r");
        let out = run(&t, &db, &[option], &[]);
        assert_eq!(judge(option, &out, &db, (FAIL, PASS)), Landed::Refused);
        let out = run(&t, &db, &[], &[("PYTEST_ADDOPTS", option)]);
        assert_eq!(out.status.code(), Some(3), "{option}: {}", text(&out));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("PYTEST_ADDOPTS"),
            "{}",
            text(&out)
        );
    }
    for option in ["--setup-plan", "--setup-only", "--collect-only", "--trace"] {
        let t = planted(&[(
            "pyproject.toml",
            &format!(
                "[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\npythonpath = [\"src\"]\naddopts = \"{option}\"\n"
            ),
        )]);
        let db = store_at(&t, "a");
        let out = run(&t, &db, &[], &[]);
        assert_eq!(out.status.code(), Some(4), "{option}: {}", text(&out));
        assert!(
            text(&out).contains(&format!("(`{option}`)")),
            "{option}: {}",
            text(&out)
        );
        assert!(recorded(&db).is_empty(), "{option}: {:?}", recorded(&db));
    }
}

/// Item 2: options that move the root or the ids are refused; allowed by the project (or a
/// `pytest.ini` above the repository moving the rootdir), each result is still filed under the
/// id its file defines from the repository root — never under one the options reshaped, which
/// a later triage would find no test for.
#[test]
fn results_are_recorded_only_under_ids_the_selected_files_define() {
    let t = planted(&[]);
    for words in [
        &["--rootdir=/"][..],
        &["-c", "/dev/null"],
        &["--junit-prefix=X"],
    ] {
        let db = store_at(&t, "r");
        let out = run(&t, &db, words, &[]);
        assert_eq!(judge(words[0], &out, &db, (FAIL, PASS)), Landed::Refused);
    }
    for (entry, words) in [
        ("--junit-prefix VALUE", &["--junit-prefix=X"][..]),
        ("--rootdir VALUE", &["--rootdir=/"]),
        ("--rootdir VALUE", &["--rootdir=tests"]),
    ] {
        let t = planted(&[(
            ".gate.toml",
            &format!("[python]\nallow_args = [{entry:?}]\n"),
        )]);
        let db = store_at(&t, "p");
        let out = run(&t, &db, words, &[]);
        assert_eq!(judge(words[0], &out, &db, (FAIL, PASS)), Landed::Failed);
        let ids: Vec<String> = recorded(&db).into_keys().collect();
        assert_eq!(ids, [FAIL, PASS], "{words:?}: {}", text(&out));
    }
    // The rootdir pytest finds above the repository, with no configuration at its root.
    let t = TestRepo::from_fixture("planted");
    t.remove("pyproject.toml");
    t.write(
        "tests/conftest.py",
        "import sys\nsys.path.insert(0, 'src')\n",
    );
    t.commit("no configuration at the root");
    std::fs::write(t.root.parent().unwrap().join("pytest.ini"), "[pytest]\n").unwrap();
    t.append("src/calc.py", "# touched\n");
    t.commit("touch calc");
    let db = store_at(&t, "u");
    let out = run(&t, &db, &[], &[]);
    assert!(text(&out).contains("rootdir: /"), "{}", text(&out));
    assert_eq!(
        judge("rootdir above", &out, &db, (FAIL, PASS)),
        Landed::Failed
    );
    let ids: Vec<String> = recorded(&db).into_keys().collect();
    assert_eq!(ids, [FAIL, PASS], "{}", text(&out));
}

/// Item 3: a configuration file given by option is refused, whatever it holds, and so is an
/// option of gate's own through `PYTEST_ADDOPTS` or `GOFLAGS`.
#[test]
fn refused_options_cannot_come_in_through_a_config_file_or_the_environment() {
    let t = planted(&[]);
    t.write(
        "evil.ini",
        "[pytest]\naddopts = -p no:gate_probe -p no:junitxml --setup-plan\n",
    );
    for words in [
        &["-c", "evil.ini"][..],
        &["--config-file=evil.ini"],
        &["-xc", "evil.ini"],
    ] {
        let db = store_at(&t, "c");
        let out = run(&t, &db, words, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{words:?}: {}", text(&out));
        assert!(stderr.contains("is not one gate knows"), "{stderr}");
    }
    for (addopts, named) in [
        ("-p no:gate_probe", "`-p`"),
        ("-k nomatch", "narrows the run"),
        ("-v '-k x'", "quotes its words"),
    ] {
        let out = run(&t, "sqlite::memory:", &[], &[("PYTEST_ADDOPTS", addopts)]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{addopts}: {}", text(&out));
        assert!(
            stderr.contains(named) && stderr.contains("PYTEST_ADDOPTS"),
            "{stderr}"
        );
    }
    // A plugin named in the environment is loaded as `-p` loads it.
    let out = run(
        &t,
        "sqlite::memory:",
        &[],
        &[("PYTEST_PLUGINS", "myplugin")],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(
        stderr.contains("`PYTEST_PLUGINS`") && stderr.contains("`-p`"),
        "{stderr}"
    );
    // Output options in the environment are the user's, as after `--`.
    let db = store_at(&t, "v");
    let out = run(&t, &db, &[], &[("PYTEST_ADDOPTS", "-v --tb=short")]);
    assert_eq!(judge("-v", &out, &db, (FAIL, PASS)), Landed::Failed);

    let g = TestRepo::from_fixture("goplanted");
    g.append("calc/calc.go", "// touched\n");
    g.commit("touch calc");
    for goflags in ["-n", "-run=Nope", "-mod=mod -list=."] {
        let out = run(&g, "sqlite::memory:", &[], &[("GOFLAGS", goflags)]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{goflags}: {}", text(&out));
        assert!(stderr.contains("`GOFLAGS`"), "{stderr}");
    }
}

/// Item 4: arguments that leave no selected test to run exit 13, with nothing recorded.
#[test]
fn a_run_narrowed_to_nothing_exits_13() {
    let t = planted(&[]);
    for words in [
        &["-k", "nomatch"][..],
        &["-m", "nomark"],
        &["--deselect", "tests/test_calc.py"],
    ] {
        let db = store_at(&t, "k");
        let out = run(&t, &db, words, &[]);
        assert_eq!(out.status.code(), Some(13), "{words:?}: {}", text(&out));
        assert!(
            text(&out).contains("left none of the selected tests to run"),
            "{}",
            text(&out)
        );
        assert!(recorded(&db).is_empty());
    }
    // Narrowed to the passing test alone: a real pass of what ran.
    let db = store_at(&t, "p");
    let out = run(&t, &db, &["-k", "test_pass"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(recorded(&db).keys().collect::<Vec<_>>(), [PASS]);
}

/// An option the project allows runs, enters nothing in the ledger, and its leg is recorded
/// as run with it: its pass is not evidence against a run without it.
#[test]
fn an_allowed_option_runs_and_its_leg_is_marked_with_its_arguments() {
    let t = planted(&[(
        ".gate.toml",
        "[python]\nallow_args = [\"--basetemp VALUE\"]\n",
    )]);
    let db = store_at(&t, "b");
    let out = run(&t, &db, &["--basetemp", "tmpbase"], &[]);
    assert_eq!(judge("--basetemp", &out, &db, (FAIL, PASS)), Landed::Failed);
    assert!(
        text(&out).contains("no pass enters the ledger"),
        "{}",
        text(&out)
    );
    let out = run(&t, &db, &[], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let store = Store::sqlite_at(std::path::Path::new(db.trim_start_matches("sqlite:")));
    let legs = store.rows("SELECT env, inputs FROM runs ORDER BY seq");
    assert_eq!(legs.len(), 2, "{legs:?}");
    let env: serde_json::Value = serde_json::from_str(&legs[0][0]).unwrap();
    assert_eq!(
        env["runner_args"],
        serde_json::json!(["--basetemp", "tmpbase"])
    );
    let plain: serde_json::Value = serde_json::from_str(&legs[1][0]).unwrap();
    assert!(plain.get("runner_args").is_none(), "{plain}");
    assert_ne!(legs[0][1], legs[1][1], "the inputs differ");
}

/// A leg run with arguments is recorded as such: a pass without them on the same commit is no
/// flaky evidence against its failure (nor, the other way round, a fake pass of a run that
/// changed what a test does).
#[test]
fn a_pass_under_other_arguments_is_no_flaky_evidence() {
    let t = planted(&[
        (
            "tests/test_warn.py",
            "import warnings\n\nfrom calc import add\n\n\ndef test_warn():\n    warnings.warn(UserWarning('careful'))\n    assert add(1, 1) == 2\n",
        ),
        // Every selected test runs each time: no pass is reused from the ledger.
        (".gate.toml", "[ledger]\nenabled = false\n"),
    ]);
    let db = store_at(&t, "w");
    // Without arguments it passes; then, warnings made errors, the warning fails it (triage
    // reads only what was recorded before the leg it judges).
    let plain = run(&t, &db, &[], &[("GITHUB_RUN_ID", "plain")]);
    assert_eq!(plain.status.code(), Some(1), "{}", text(&plain));
    let strict = run(&t, &db, &["-W", "error"], &[("GITHUB_RUN_ID", "strict")]);
    assert_eq!(strict.status.code(), Some(1), "{}", text(&strict));
    let ids = recorded(&db);
    assert!(ids["tests/test_warn.py::test_warn"].contains(&"passed".to_string()));
    let store = Store::sqlite_at(std::path::Path::new(db.trim_start_matches("sqlite:")));
    let (_, doc) = crate::triage::triage(&t, &store, "strict");
    let verdict = doc["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["test"] == "tests/test_warn.py::test_warn")
        .unwrap_or_else(|| panic!("a verdict for test_warn: {doc:#}"));
    assert_ne!(verdict["verdict"], "flaky", "{doc:#}");
}

/// Two tests the JUnit report names alike (`tests/test_a.py::TestX_test::test_m` and
/// `tests/test_a/TestX_test.py::test_m` are both `tests.test_a.TestX_test` / `test_m`): which
/// failed cannot be read back, so neither is recorded and the run is broken — never a failure
/// filed under the test that passed. And a project whose own `addopts` turn pytest's JUnit
/// report off has no result to record: broken, not a pass.
#[test]
fn results_the_report_cannot_tell_apart_or_does_not_hold_are_no_pass() {
    let t = planted(&[
        (
            "tests/test_a.py",
            "from calc import add\n\n\nclass TestX_test:\n    def test_m(self):\n        assert add(2, 2) == 5\n",
        ),
        (
            "tests/test_a/TestX_test.py",
            "from calc import add\n\n\ndef test_m():\n    assert add(2, 2) == 4\n",
        ),
    ]);
    let db = store_at(&t, "n");
    let out = run(&t, &db, &[], &[]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    assert!(
        text(&out).contains("two tests the report names alike"),
        "{}",
        text(&out)
    );
    let ids = recorded(&db);
    assert!(
        ids.keys().all(|id| !id.contains("test_m")),
        "neither alike test is recorded: {ids:?}"
    );
    assert_eq!(ids[FAIL], ["failed"], "the others still are: {ids:?}");

    let t = planted(&[(
        "pyproject.toml",
        "[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\npythonpath = [\"src\"]\naddopts = \"-p no:junitxml\"\n",
    )]);
    let db = store_at(&t, "j");
    let out = run(&t, &db, &[], &[]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    assert!(
        text(&out).contains("wrote no JUnit report"),
        "{}",
        text(&out)
    );
}
