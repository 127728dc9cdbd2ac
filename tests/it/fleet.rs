//! A CI fleet, end to end: the workflow's steps as concurrent processes on a fixture project
//! against the real PostgreSQL (a fresh database, dropped at the end), each job in its own
//! `git clone` of a bare remote, as CI checks out. Main records a whole run as 3 shard legs at
//! once, one of them re-run (attempt 2); a pull request is selected once (the select job
//! freezes the split), run as 3 legs at once that share the decision, triaged, shadowed and
//! summarised — then run again as 2 shards and as one unsharded leg, triaged the same. Every
//! selected test file runs in exactly one leg; the verdicts name the main leg their evidence
//! came from; the comment is pinned as `docs/src/ci-example-summary.md` (`GATE_BLESS=1`
//! rewrites it). Each phase's wall time is printed.

use crate::history::Store;
use crate::legs::judged;
use crate::support::text;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

/// The environment every leg runs in.
const LEG: &str = "py-linux";
/// Planted by the pull request: passes on main, fails on the branch.
const REGRESSION: &str = "tests/test_pricing.py::test_discount";
/// Fails on main already; its module is touched by the pull request.
const ON_MAIN: &str = "tests/test_legacy.py::test_legacy_round";
/// Fails unless the marker file exists: failed then passed on main's commit.
const FLAKY: &str = "tests/test_network.py::test_reachable";
/// The pull request's range, as CI gives it.
const PR_RANGE: &str = "origin/main...HEAD";

/// Main's first commit: the project's frame.
const FRAME: &[(&str, &str)] = &[
    (
        "pyproject.toml",
        "[project]\nname = \"fleet\"\nversion = \"0.1.0\"\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\npythonpath = [\"src\"]\n",
    ),
    ("README.md", "fleet\n"),
    ("src/fleet/__init__.py", ""),
];

/// Main's second commit, the one recorded: modules and their tests, some slow.
const PROJECT: &[(&str, &str)] = &[
    (
        "src/fleet/pricing.py",
        "def price(qty, unit):\n    return qty * unit\n\n\ndef discount(total):\n    return total * 0.9 if total >= 100 else total\n",
    ),
    (
        "src/fleet/orders.py",
        "from fleet.pricing import price\n\n\ndef order_total(items):\n    return sum(price(q, u) for q, u in items)\n",
    ),
    (
        "src/fleet/invoice.py",
        "from fleet.pricing import price\n\n\ndef lines(items):\n    return [f\"{q} x {u} = {price(q, u)}\" for q, u in items]\n",
    ),
    (
        "src/fleet/legacy.py",
        "def legacy_round(x):\n    return int(x)\n",
    ),
    (
        "src/fleet/net.py",
        "import os\n\n\ndef reachable(marker):\n    return os.path.exists(marker)\n",
    ),
    (
        "tests/test_pricing.py",
        "from fleet.pricing import discount, price\n\n\ndef test_price():\n    assert price(3, 5) == 15\n\n\ndef test_discount():\n    assert discount(100) == 90\n",
    ),
    (
        "tests/test_orders.py",
        "import time\n\nfrom fleet.orders import order_total\n\n\ndef test_order_total():\n    time.sleep(0.2)\n    assert order_total([(1, 2), (3, 4)]) == 14\n",
    ),
    (
        "tests/test_invoice.py",
        "import time\n\nfrom fleet.invoice import lines\n\n\ndef test_lines():\n    time.sleep(0.4)\n    assert lines([(2, 3)]) == [\"2 x 3 = 6\"]\n",
    ),
    (
        "tests/test_legacy.py",
        "from fleet.legacy import legacy_round\n\n\ndef test_legacy_round():\n    assert legacy_round(2.5) == 3\n\n\ndef test_legacy_floor():\n    assert legacy_round(2.2) == 2\n",
    ),
    (
        "tests/test_network.py",
        "import os\n\nfrom fleet.net import reachable\n\n\ndef test_reachable():\n    assert reachable(os.environ[\"FLAKY_MARKER\"])\n",
    ),
];

/// Seven more modules, each with a quick test file (two of them a little slower).
const PLAIN: [&str; 7] = [
    "colors",
    "dates",
    "geometry",
    "inventory",
    "stats",
    "text",
    "units",
];

fn plain(module: &str) -> [(String, String); 2] {
    let pause = match module {
        "dates" => "    time.sleep(0.1)\n",
        "stats" => "    time.sleep(0.3)\n",
        _ => "",
    };
    [
        (
            format!("src/fleet/{module}.py"),
            "def ident(x):\n    return x\n".to_string(),
        ),
        (
            format!("tests/test_{module}.py"),
            format!(
                "import time\n\nfrom fleet.{module} import ident\n\n\ndef test_ident():\n{pause}    assert ident(1) == 1\n\n\ndef test_pair():\n    assert ident((1, 2)) == (1, 2)\n"
            ),
        ),
    ]
}

/// The variables that name a run, an attempt or a branch in some CI: none leaks in from the
/// machine the test runs on.
const CI_VARIABLES: [&str; 17] = [
    "GATE_DB",
    "GITHUB_RUN_ID",
    "GITHUB_RUN_ATTEMPT",
    "GITHUB_REF_NAME",
    "GITHUB_HEAD_REF",
    "GITHUB_WORKFLOW",
    "GITHUB_STEP_SUMMARY",
    "CI_PIPELINE_ID",
    "BUILDKITE_BUILD_ID",
    "CIRCLE_WORKFLOW_ID",
    "BUILD_BUILDID",
    "BUILD_NUMBER",
    "CIRCLE_BUILD_NUM_ATTEMPT",
    "CI_COMMIT_REF_NAME",
    "BUILDKITE_BRANCH",
    "CIRCLE_BRANCH",
    "GATE_TIMINGS",
];

/// A folder holding the author's repository, the bare remote and every job's clone; the
/// store every job shares.
struct Fleet {
    dir: tempfile::TempDir,
    store: Store,
    commits: std::cell::Cell<i64>,
}

impl Fleet {
    fn new() -> Fleet {
        Fleet {
            dir: tempfile::tempdir().unwrap(),
            store: Store::postgres(),
            commits: std::cell::Cell::new(0),
        }
    }

    fn at(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The file whose presence makes the flaky test pass.
    fn marker(&self) -> PathBuf {
        self.at("flaky-pass")
    }

    /// `git ARGS` in `dir`, with no user or system configuration; its stdout.
    fn git(&self, dir: &Path, args: &[&str], env: &[(&str, String)]) -> String {
        let mut cmd = Command::new("git");
        cmd.args(args)
            .current_dir(dir)
            .env("HOME", self.dir.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "gate test")
            .env("GIT_AUTHOR_EMAIL", "test@example.com")
            .env("GIT_COMMITTER_NAME", "gate test")
            .env("GIT_COMMITTER_EMAIL", "test@example.com");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "git {args:?}: {}", text(&out));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Writes `files` into the author's repository and commits them at a fixed, rising date,
    /// so every commit id is the same on every machine.
    fn commit(&self, files: &[(String, String)], message: &str) {
        let work = self.at("work");
        for (path, content) in files {
            let full = work.join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, content).unwrap();
        }
        let n = self.commits.get();
        self.commits.set(n + 1);
        let date = format!("@{} +0000", 1_790_000_000 + 60 * n);
        let dates = [
            ("GIT_AUTHOR_DATE", date.clone()),
            ("GIT_COMMITTER_DATE", date),
        ];
        self.git(&work, &["add", "-A"], &[]);
        self.git(&work, &["commit", "-q", "-m", message], &dates);
    }

    /// A job's checkout: a clone of the remote at `branch`.
    fn clone(&self, name: &str, branch: &str) -> PathBuf {
        self.git(
            self.dir.path(),
            &["clone", "-q", "--branch", branch, "remote.git", name],
            &[],
        );
        self.at(name)
    }

    /// The real binary in `dir` on the shared store, in a clean environment with `ci`'s
    /// variables.
    fn gate(&self, dir: &Path, args: &[&str], ci: &[(&str, &str)]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_gate"));
        cmd.args(args)
            .args(["--db", &self.store.url])
            .current_dir(dir)
            .env("HOME", self.dir.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("NO_COLOR", "1")
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("FLAKY_MARKER", self.marker());
        for name in CI_VARIABLES {
            cmd.env_remove(name);
        }
        for (k, v) in ci {
            cmd.env(k, v);
        }
        cmd
    }

    /// Main with its two commits and a pull request branch, pushed to a bare remote whose
    /// default branch is main.
    fn repositories(&self) {
        let work = self.at("work");
        std::fs::create_dir_all(&work).unwrap();
        self.git(&work, &["init", "-q", "-b", "main"], &[]);
        let owned = |files: &[(&str, &str)]| -> Vec<(String, String)> {
            files
                .iter()
                .map(|(p, c)| ((*p).to_string(), (*c).to_string()))
                .collect()
        };
        self.commit(&owned(FRAME), "frame");
        let mut project = owned(PROJECT);
        project.extend(PLAIN.iter().flat_map(|m| plain(m)));
        self.commit(&project, "the project");
        self.git(
            self.dir.path(),
            &["init", "-q", "--bare", "-b", "main", "remote.git"],
            &[],
        );
        self.git(&work, &["remote", "add", "origin", "../remote.git"], &[]);
        self.git(&work, &["push", "-q", "origin", "main"], &[]);
        self.git(&work, &["checkout", "-q", "-b", "feature"], &[]);
        let pricing = PROJECT[0].1.replace("0.9", "0.8");
        let legacy = format!("{}\n\n# kept for the old reports\n", PROJECT[3].1);
        self.commit(
            &[
                ("src/fleet/pricing.py".into(), pricing),
                ("src/fleet/legacy.py".into(), legacy),
            ],
            "pricing: a deeper discount; legacy: a note",
        );
        self.git(&work, &["push", "-q", "origin", "feature"], &[]);
    }

    /// The select job: in its own clone, the selection frozen with its split into `n`
    /// (`--shard 1/n --list --json`): the report, whose `frozen_decision` the legs share.
    fn select(&self, name: &str, branch: &str, range: &str, n: u32) -> Value {
        let dir = self.clone(name, branch);
        let shard = format!("1/{n}");
        let args = [
            "--affected",
            range,
            "--shard",
            &shard,
            "--list",
            "--json",
            "--leg",
            LEG,
        ];
        let out = self.gate(&dir, &args, &[]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        json(&out)
    }

    /// Legs started at once, each in its own clone at the run's branch, each running its shard
    /// (`K/N`; `""`: the whole selection, unsharded) of `decision` (none: the one frozen for
    /// the commit, or a split of its own) and recording it under the run: their JSON reports,
    /// in the order of `shards`.
    fn legs(&self, run: &Run<'_>, shards: &[&str], decision: Option<&str>) -> Vec<Value> {
        let dirs: Vec<PathBuf> = shards
            .iter()
            .map(|k| {
                let name = format!("{}-{}-{}", run.id, run.attempt, k.replace('/', "of"));
                self.clone(&name, run.branch)
            })
            .collect();
        let ci = run.variables();
        std::thread::scope(|s| {
            let legs: Vec<_> = dirs
                .iter()
                .zip(shards)
                .map(|(dir, shard)| {
                    let args = ["--affected", run.range, "--record", "--leg", LEG, "--json"];
                    let mut cmd = self.gate(dir, &args, &ci);
                    if !shard.is_empty() {
                        cmd.args(["--shard", shard]);
                    }
                    if let Some(id) = decision {
                        cmd.args(["--decision", id]);
                    }
                    s.spawn(move || cmd.output().unwrap())
                })
                .collect();
            legs.into_iter()
                .map(|leg| {
                    let out = leg.join().unwrap();
                    assert!(
                        matches!(out.status.code(), Some(0 | 1)),
                        "a leg passes or fails its tests: {}",
                        text(&out)
                    );
                    json(&out)
                })
                .collect()
        })
    }

    /// `gate triage --run RUN --json`: the exit code and the document.
    fn triage(&self, dir: &Path, run: &str) -> (i32, Value) {
        let out = self
            .gate(dir, &["triage", "--run", run, "--json"], &[])
            .output()
            .unwrap();
        crate::plans::validate("triage.schema.json", &json(&out));
        (out.status.code().unwrap(), json(&out))
    }
}

/// A CI run: its id, attempt, branch and the range its legs gate.
struct Run<'a> {
    id: &'a str,
    attempt: &'a str,
    branch: &'a str,
    range: &'a str,
}

impl Run<'_> {
    /// The variables GitHub Actions sets: the run, the attempt, the branch (a pull request's
    /// head, or the pushed ref on main).
    fn variables(&self) -> Vec<(&str, &str)> {
        let branch = if self.branch == "main" {
            "GITHUB_REF_NAME"
        } else {
            "GITHUB_HEAD_REF"
        };
        vec![
            ("GITHUB_RUN_ID", self.id),
            ("GITHUB_RUN_ATTEMPT", self.attempt),
            (branch, self.branch),
        ]
    }
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(out)))
}

fn paths(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not a list: {v}"))
        .iter()
        .map(|x| {
            x.as_str()
                .or_else(|| x["path"].as_str())
                .unwrap()
                .to_string()
        })
        .collect()
}

/// Checks that every selected unit ran in exactly one leg: the legs' shards (an unsharded
/// leg's: the whole selection) are disjoint and cover the selection; what each leg ran (its
/// shard's units less the ledger's reuses) is exactly the files its results come from. Each
/// unit's leg (from 1).
fn each_unit_once(selection: &[String], legs: &[Value]) -> BTreeMap<String, usize> {
    let mut placed: BTreeMap<String, usize> = BTreeMap::new();
    for (i, leg) in legs.iter().enumerate() {
        let units = match &leg["shard"] {
            Value::Null => paths(&leg["selected"]),
            shard => paths(&shard["units"]),
        };
        let reused: BTreeSet<String> = paths(&leg["reused"]).into_iter().collect();
        for unit in &units {
            if let Some(other) = placed.insert(unit.clone(), i + 1) {
                panic!("{unit} is in shard {other} and shard {}", i + 1);
            }
        }
        let ran: BTreeSet<&str> = units
            .iter()
            .filter(|u| !reused.contains(*u))
            .map(String::as_str)
            .collect();
        let results: BTreeSet<&str> = leg["tests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["file"].as_str().unwrap())
            .collect();
        assert_eq!(results, ran, "leg {} ran its shard: {leg:#}", i + 1);
    }
    let covered: Vec<&String> = placed.keys().collect();
    assert_eq!(
        covered,
        selection.iter().collect::<Vec<_>>(),
        "the shards cover the selection"
    );
    placed
}

fn timed<T>(phases: &mut Vec<(String, u128)>, name: &str, f: impl FnOnce() -> T) -> T {
    let started = Instant::now();
    let out = f();
    phases.push((name.to_string(), started.elapsed().as_millis()));
    out
}

/// Phases and their wall times, printed at the end.
type Phases = Vec<(String, u128)>;

/// The store's latest attempt of main's run `main-1` at leg `leg`: its sequence.
fn main_seq(f: &Fleet, leg: &str) -> i64 {
    let rows = f.store.rows(&format!(
        "SELECT seq FROM runs WHERE run_id = 'main-1' AND leg = '{leg}' ORDER BY attempt DESC"
    ));
    rows[0][0].parse().unwrap()
}

/// Main's run `main-1` of its last commit: the select job, 3 legs at once sharing its
/// decision, then the flaky test's leg re-run as attempt 2 (the marker present: it passes).
/// The decision and the shard each unit ran in.
fn main_run(f: &Fleet, phases: &mut Phases) -> (String, BTreeMap<String, usize>) {
    let range = "HEAD~1...HEAD";
    let selected = timed(phases, "main: select", || {
        f.select("main-select", "main", range, 3)
    });
    let decision = selected["frozen_decision"].as_str().unwrap().to_string();
    let selection = paths(&selected["selected"]);
    assert_eq!(
        selection.len(),
        12,
        "main's commit adds every test: {selection:?}"
    );
    let run = Run {
        id: "main-1",
        attempt: "1",
        branch: "main",
        range,
    };
    let legs = timed(phases, "main: 3 legs", || {
        f.legs(&run, &["1/3", "2/3", "3/3"], Some(&decision))
    });
    let placed = each_unit_once(&selection, &legs);
    let k = placed["tests/test_network.py"];
    std::fs::write(f.marker(), "").unwrap();
    let again = Run {
        attempt: "2",
        ..run
    };
    let shard = format!("{k}/3");
    let rerun = timed(phases, "main: a leg re-run", || {
        f.legs(&again, &[&shard], Some(&decision))
    });
    std::fs::remove_file(f.marker()).unwrap();
    assert_eq!(
        paths(&rerun[0]["shard"]["units"]),
        paths(&legs[k - 1]["shard"]["units"]),
        "a re-run leg runs the same shard"
    );
    let outcome = |leg: &Value| {
        leg["tests"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == FLAKY)
            .map(|t| t["outcome"].clone())
    };
    assert_eq!(outcome(&legs[k - 1]), Some("failed".into()));
    assert_eq!(outcome(&rerun[0]), Some("passed".into()));
    let rows = f.store.rows(
        "SELECT leg, environment, shard, attempt, mainline FROM runs WHERE run_id = 'main-1' ORDER BY shard, attempt",
    );
    assert_eq!(rows.len(), 4, "3 legs and a re-run: {rows:?}");
    assert!(
        rows.iter().all(|r| r[1] == LEG && r[4] == "1"),
        "main's legs are mainline, in one environment: {rows:?}"
    );
    (decision, placed)
}

/// The pull request's verdicts: the planted regression new, the test failing on main
/// pre-existing with the main leg that last failed it, the flaky test flaky with the main leg
/// whose pass showed it.
fn verdicts_hold(f: &Fleet, doc: &Value, on_main: &BTreeMap<String, usize>) {
    let got = judged(doc);
    let brief: Vec<(&str, &str, &str)> = got
        .iter()
        .map(|(t, v, c, _, _)| (t.as_str(), v.as_str(), c.as_str()))
        .collect();
    assert_eq!(
        brief,
        [
            (ON_MAIN, "pre_existing", "high"),
            (FLAKY, "flaky", "medium"),
            (REGRESSION, "new_regression", "high"),
        ],
        "{doc:#}"
    );
    let main_head = f.git(&f.at("work"), &["rev-parse", "main"], &[]);
    assert!(
        got[0].3.starts_with(&format!(
            "failing on main on {LEG} since {}",
            &main_head[..12]
        )),
        "{doc:#}"
    );
    let leg_of = |file: &str| format!("{LEG}#{}/3", on_main[file]);
    let from = |file: &str| {
        let leg = leg_of(file);
        serde_json::json!({"seq": main_seq(f, &leg), "run": "main-1", "leg": leg})
    };
    assert_eq!(got[0].4, from("tests/test_legacy.py"), "{doc:#}");
    assert_eq!(got[1].4, from("tests/test_network.py"), "{doc:#}");
    assert_eq!(got[2].4, Value::Null, "the change is the evidence: {doc:#}");
}

/// The workflow on the pull request, then the same commit run as 2 shards and as one
/// unsharded leg: every selected file runs once per run, and triage gives the same verdicts.
#[test]
fn a_pull_request_on_three_legs_at_once_is_triaged_by_mains_shards() {
    let f = Fleet::new();
    f.repositories();
    let mut phases = Phases::new();
    let (main_decision, on_main) = main_run(&f, &mut phases);
    let selected = timed(&mut phases, "select", || {
        f.select("pr-select", "feature", PR_RANGE, 3)
    });
    let decision = selected["frozen_decision"].as_str().unwrap().to_string();
    let selection = paths(&selected["selected"]);
    assert_eq!(
        selection,
        [
            "tests/test_invoice.py",
            "tests/test_legacy.py",
            "tests/test_network.py",
            "tests/test_orders.py",
            "tests/test_pricing.py",
        ],
        "the change's tests, and the flaky one history adds from the store --db names"
    );
    let run = Run {
        id: "pr-3",
        attempt: "1",
        branch: "feature",
        range: PR_RANGE,
    };
    let legs = timed(&mut phases, "3 legs", || {
        f.legs(&run, &["1/3", "2/3", "3/3"], Some(&decision))
    });
    each_unit_once(&selection, &legs);
    for leg in &legs {
        assert_eq!(leg["frozen_decision"], decision.as_str(), "one decision");
    }
    let rows = f
        .store
        .rows("SELECT leg, environment, shard FROM runs WHERE run_id = 'pr-3' ORDER BY shard");
    assert_eq!(
        rows,
        (1..=3)
            .map(|k| vec![format!("{LEG}#{k}/3"), LEG.to_string(), format!("{k}/3")])
            .collect::<Vec<_>>()
    );
    let dir = f.at("pr-select");
    let (code, sharded) = timed(&mut phases, "triage", || f.triage(&dir, "pr-3"));
    assert_eq!(code, 1, "a new regression exits 1: {sharded:#}");
    verdicts_hold(&f, &sharded, &on_main);
    shadowed(&f, &dir, &decision, &mut phases);
    let markdown = timed(&mut phases, "report", || summary(&f, &dir));
    the_comment_holds(&f, &markdown);
    pinned(&markdown);
    rerun_otherwise(&f, &selection, &sharded, &mut phases);
    edges_of_sharding(&f, &dir, &main_decision);
    let shown: Vec<String> = phases
        .iter()
        .map(|(name, ms)| format!("{name} {ms} ms"))
        .collect();
    eprintln!("fleet phases (wall time): {}", shown.join(", "));
}

/// `gate shadow`: the whole suite, judged against the decision the legs shared: no miss
/// (the regression caught, the failure on main pre-existing, the flaky test flaky).
fn shadowed(f: &Fleet, dir: &Path, decision: &str, phases: &mut Phases) {
    let ci = [("GITHUB_RUN_ID", "pr-3-shadow")];
    let out = timed(phases, "shadow", || {
        f.gate(dir, &["shadow", PR_RANGE, "--leg", LEG, "--json"], &ci)
            .output()
            .unwrap()
    });
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "failures, none missed: {all}");
    assert_eq!(json(&out)["frozen_decision"], decision, "{all}");
    assert!(
        all.contains(
            "gate shadow: 3 failing test file(s): 1 caught, 0 missed, 1 flaky, 1 pre-existing"
        ),
        "{all}"
    );
}

/// `gate report --markdown --workflow gate` of the pull request's run.
fn summary(f: &Fleet, dir: &Path) -> String {
    let args = [
        "report",
        "--markdown",
        "--workflow",
        "gate",
        "--run",
        "pr-3",
    ];
    let out = f.gate(dir, &args, &[]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    String::from_utf8(out.stdout).unwrap()
}

/// The comment: the marker with the head and attempt, the new regression first, every test
/// that ran, the shadow's compare, the slowest test first.
fn the_comment_holds(f: &Fleet, markdown: &str) {
    let head = f.git(&f.at("work"), &["rev-parse", "feature"], &[]);
    assert_eq!(
        markdown.lines().next(),
        Some(format!("<!-- gate-report workflow=gate head={head} attempt=1 -->").as_str()),
        "{markdown}"
    );
    let section = |title: &str| {
        let from = markdown.split(&format!("### {title}\n")).nth(1).unwrap();
        from.split("\n### ").next().unwrap().to_string()
    };
    let triage = section("Triage");
    let rows: Vec<&str> = triage
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| verdict"))
        .collect();
    let md = |id: &str| id.replace('_', "\\_");
    assert!(rows[0].contains(&format!("| new\\_regression | high | {} |", md(REGRESSION))));
    assert!(rows[1].contains(&format!("| pre\\_existing | high | {} |", md(ON_MAIN))));
    assert!(rows[2].contains(&format!("| flaky | medium | {} |", md(FLAKY))));
    assert_eq!(rows.len(), 3, "{markdown}");
    let ran = section("Tests that ran");
    for file in ["invoice", "legacy", "network", "orders", "pricing"] {
        assert!(
            ran.contains(&format!("| tests/test\\_{file}.py |")),
            "{markdown}"
        );
    }
    assert!(markdown.contains(": 3 failing in the whole suite: 1 caught, 0 missed"));
    let slowest = markdown
        .split("| slowest test | time |\n|---|---|\n")
        .nth(1);
    assert!(
        slowest.is_some_and(|s| s.starts_with("| tests/test\\_invoice.py::test\\_lines |")),
        "{markdown}"
    );
}

/// The comment with what differs between runs made stable: the decision's id (it hashes the
/// interpreter), the shard a test ran in (a split follows the durations recorded before the
/// current ten minutes), the times, and the slowest tests after the two that sleep (which
/// of the quick ones are slowest is the machine's).
fn stable(markdown: &str) -> String {
    let decision = regex::Regex::new(r"decision [0-9a-f]{12}").unwrap();
    let shard = regex::Regex::new(r"\\#[0-9]+/3").unwrap();
    let time = regex::Regex::new(r"[0-9]+\.[0-9]{3}s").unwrap();
    let text = decision.replace_all(markdown, "decision <id>");
    let text = shard.replace_all(&text, "\\#<k>/3");
    let text = time.replace_all(&text, "<t>s");
    let (head, durations) = text.split_once("### Durations").unwrap();
    let mut slowest = 0;
    let durations: Vec<String> = durations
        .lines()
        .map(|line| {
            if !line.starts_with("| tests/") {
                return line.to_string();
            }
            slowest += 1;
            if slowest <= 2 {
                line.to_string()
            } else {
                "| <a quick test> | <t>s |".to_string()
            }
        })
        .collect();
    format!("{head}### Durations{}\n", durations.join("\n"))
}

/// The stable comment is `docs/src/ci-example-summary.md`, rewritten with `GATE_BLESS=1`.
fn pinned(markdown: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src/ci-example-summary.md");
    let got = stable(markdown);
    if std::env::var("GATE_BLESS").as_deref() == Ok("1") {
        std::fs::write(&path, &got).unwrap();
        return;
    }
    let pinned = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        pinned, got,
        "docs/src/ci-example-summary.md drifted (GATE_BLESS=1 rewrites it)"
    );
}

/// The same commit run again as 2 shards (its own select job) and as one unsharded leg:
/// every selected file runs once per run, and the verdicts are the 3-shard run's.
fn rerun_otherwise(f: &Fleet, selection: &[String], sharded: &Value, phases: &mut Phases) {
    let selected = timed(phases, "2 shards: select", || {
        f.select("pr2-select", "feature", PR_RANGE, 2)
    });
    assert_eq!(paths(&selected["selected"]), selection);
    let decision = selected["frozen_decision"].as_str().unwrap();
    let run = Run {
        id: "pr-2",
        attempt: "1",
        branch: "feature",
        range: PR_RANGE,
    };
    let legs = timed(phases, "2 shards: legs", || {
        f.legs(&run, &["1/2", "2/2"], Some(decision))
    });
    each_unit_once(selection, &legs);
    let whole = Run { id: "pr-1", ..run };
    let leg = timed(phases, "unsharded: leg", || f.legs(&whole, &[""], None));
    assert_eq!(leg[0]["shard"], Value::Null);
    each_unit_once(selection, &leg);
    let dir = f.at("pr-select");
    for id in ["pr-2", "pr-1"] {
        let (code, doc) = f.triage(&dir, id);
        assert_eq!(code, 1, "{doc:#}");
        assert_eq!(judged(&doc), judged(sharded), "run {id}: the same verdicts");
    }
}

/// An empty shard runs nothing and says so; a decision frozen for another commit is refused.
fn edges_of_sharding(f: &Fleet, dir: &Path, main_decision: &str) {
    let ci = [("GITHUB_RUN_ID", "pr-9")];
    let args = [
        "--affected",
        PR_RANGE,
        "--shard",
        "9/9",
        "--record",
        "--leg",
        LEG,
    ];
    let out = f.gate(dir, &args, &ci).output().unwrap();
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert!(all.contains("\nshard 9/9: 0 of 5 test units"), "{all}");
    assert!(all.contains("nothing to run"), "{all}");
    assert!(!all.contains("====="), "no runner ran: {all}");
    let args = [
        "--affected",
        PR_RANGE,
        "--shard",
        "1/3",
        "--decision",
        main_decision,
        "--record",
        "--leg",
        LEG,
    ];
    let out = f.gate(dir, &args, &ci).output().unwrap();
    let all = text(&out);
    assert_eq!(out.status.code(), Some(3), "{all}");
    let head = f.git(&f.at("work"), &["rev-parse", "feature"], &[]);
    assert!(
        all.contains(&format!(
            "--decision {main_decision} was frozen for commit "
        )) && all.contains(&format!("not for this gate's commit {head} ")),
        "{all}"
    );
    let recorded = f.store.rows("SELECT seq FROM runs WHERE run_id = 'pr-9'");
    assert!(recorded.is_empty(), "neither recorded a leg: {recorded:?}");
}
