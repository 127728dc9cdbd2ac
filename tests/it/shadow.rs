//! Shadow runs, on both stores with real pytest: the whole suite runs and every failing test
//! file is judged against the decision frozen for its commit and base — a planted regression
//! the selection catches, one it misses because the configuration marked its input inert on
//! purpose (named with its cause and the rule that would have caught it), and a flaky test
//! (failed then passed on one commit before) counted apart. Recorded in the store.

use crate::history::{Kind, Store};
use crate::support::{TestRepo, text};
use serde_json::Value;
use std::path::Path;

pub(crate) fn fixture() -> TestRepo {
    let t = TestRepo::from_fixture("shop");
    let counter = t.root.parent().unwrap().join("flaky-count");
    // The rate file is named only through the runner's environment: no edge reaches it, and
    // the team marked config/ inert on purpose.
    t.write(
        ".gate.toml",
        &format!(
            "inert = [\"config/**\"]\n\n[env]\nRATE_FILE = \"config/rate.cfg\"\nFLAKY_COUNTER = \"{}\"\n",
            counter.display()
        ),
    );
    t.write("config/rate.cfg", "1\n");
    // Committed before the runs below, so no gated run traces it (a traced run's edge would
    // select it: tests/it/traced.rs): the miss stays one no edge explains.
    t.write(
        "tests/test_rate.py",
        "import os\n\n\ndef test_rate():\n    assert open(os.environ['RATE_FILE']).read().strip() == '1'\n",
    );
    t.commit("configuration");
    // Fails on every odd run: a flaky test.
    t.write(
        "tests/test_flaky.py",
        "import os\n\n\ndef test_flaky():\n    path = os.environ['FLAKY_COUNTER']\n    n = int(open(path).read()) + 1 if os.path.exists(path) else 1\n    open(path, 'w').write(str(n))\n    assert n % 2 == 0\n",
    );
    t.commit("rate and flaky");
    t
}

fn gate_json(t: &TestRepo, db: &str, args: &[&str]) -> (Option<i32>, Value, String) {
    let out = t.gate(args).env("GATE_DB", db).output().unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(&out)));
    (
        out.status.code(),
        doc,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

on_both!(a_shadow_run_judges_every_failure: shadow_sqlite, shadow_postgres);
fn a_shadow_run_judges_every_failure(kind: Kind) {
    let t = fixture();
    let store = Store::new(kind, &t);
    let db = store.url.as_str();
    // The flaky test fails, then passes, on one commit: evidence recorded before the shadow.
    let range = ["--affected", "HEAD~1...HEAD", "--record", "--json"];
    let (first, _, _) = gate_json(&t, db, &range);
    assert_eq!(first, Some(1));
    let (second, doc, _) = gate_json(&t, db, &range);
    assert_eq!(second, Some(0), "{doc:#}");
    // On a branch: a regression in money (selected: caught) and a rate change (inert: the
    // test that reads it is missed).
    t.branch("feature");
    t.checkout("feature");
    t.write(
        "src/shop/money.py",
        "CENTS = 100\n\n\ndef to_cents(amount):\n    return round(amount * CENTS) + 1\n",
    );
    t.write("config/rate.cfg", "2\n");
    t.commit("money off by one, rate 2");
    // The gate of the push freezes its decision; the shadow judges against that one.
    let (_, gated, _) = gate_json(&t, db, &["--affected", "master...HEAD", "--json", "--list"]);
    let frozen = gated["frozen_decision"].as_str().unwrap().to_string();
    let (code, shadow, stderr) = gate_json(&t, db, &["shadow", "master...HEAD", "--json"]);
    assert_eq!(code, Some(11), "{stderr}");
    assert_eq!(shadow["frozen_decision"], frozen.as_str(), "{stderr}");
    judged_in_reports(&gated, &shadow);
    // The whole suite ran.
    let ran: std::collections::BTreeSet<&str> = shadow["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["file"].as_str())
        .collect();
    assert!(ran.contains("tests/test_plugins.py"), "{ran:?}");
    assert!(ran.contains("tests/test_rate.py"), "{ran:?}");
    assert!(
        stderr.contains("missed: tests/test_rate.py — no edge linked "),
        "{stderr}"
    );
    assert!(
        stderr.contains("tests = \"tests/test_rate.py\"") && stderr.contains("\"config/rate.cfg\""),
        "{stderr}"
    );
    let line = stderr
        .lines()
        .find(|l| l.starts_with("gate shadow: "))
        .unwrap_or_else(|| panic!("{stderr}"));
    // Every failing file but the rate and the flaky test is one the money change selected.
    let failing: Vec<&str> = shadow["test_summary"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["failed"].as_u64() > Some(0) || s["errors"].as_u64() > Some(0))
        .filter_map(|s| s["file"].as_str())
        .collect();
    assert!(failing.contains(&"tests/test_money.py"), "{failing:?}");
    let selected = shadow["selected"].as_array().unwrap();
    let money_failing = failing
        .iter()
        .filter(|f| selected.iter().any(|s| s["path"] == **f))
        .count();
    assert_eq!(money_failing, failing.len() - 2, "{failing:?}");
    assert!(money_failing >= 1, "{shadow:#}");
    assert_eq!(
        line,
        format!(
            "gate shadow: {} failing test file(s): {money_failing} caught, 1 missed, 1 flaky",
            money_failing + 2
        )
    );
    // Recorded: the shadow against the decision, with its counts and judgements.
    let rows = store.rows("SELECT decision_id, caught, missed, flaky, judged FROM shadows");
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0][0], frozen);
    assert_eq!(rows[0][1], money_failing.to_string());
    assert_eq!(rows[0][2..4], ["1", "1"]);
    let judged: Value = serde_json::from_str(&rows[0][4]).unwrap();
    assert!(
        judged
            .as_array()
            .unwrap()
            .iter()
            .any(|j| j["unit"] == "tests/test_flaky.py" && j["class"] == "flaky"),
        "{judged:#}"
    );
    // With the rule added on master (a change gated under master's configuration), the next
    // shadow of the same change catches it.
    t.checkout("master");
    t.append(
        ".gate.toml",
        "\n[[depends]]\ntests = \"tests/test_rate.py\"\non = [\"config/rate.cfg\"]\n",
    );
    t.commit("the rule");
    t.checkout("feature");
    t.merge("master", "merge master");
    let (code, _, stderr) = gate_json(&t, db, &["shadow", "master...HEAD", "--json"]);
    assert!(
        stderr.contains("0 missed"),
        "with the rule the rate test is caught: {stderr}"
    );
    assert_eq!(code, Some(1), "failures caught exit as failures: {stderr}");
    evaluated(&t, db, money_failing as u64);
    costed(&t, &store);
}

/// The JSON report holds a shadow run's judgements, and null for a gate that is no shadow run.
fn judged_in_reports(gated: &Value, shadow: &Value) {
    assert_eq!(gated["shadow"], Value::Null, "a gate that is no shadow run");
    crate::plans::validate("report.schema.json", shadow);
    let rate = shadow["shadow"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["unit"] == "tests/test_rate.py")
        .unwrap_or_else(|| panic!("{:#}", shadow["shadow"]));
    assert_eq!(rate["class"], "missed");
    assert!(rate["rule"].as_str().unwrap().contains("config/rate.cfg"));
}

/// `gate costs --from-history` over the test's two shadows: one job each, its baseline the
/// compare's recorded seconds, retained what its decision selected (computed here from the
/// stored rows), its overhead gate's recorded selection time and its time recording the leg at
/// that commit (a shadow run is recorded); the report's runner seconds follow (no audit, no
/// quantum: candidate = retained part + overhead).
fn costed(t: &TestRepo, store: &Store) {
    let out_file = t.root.parent().unwrap().join("built-scenario.json");
    let out = t
        .gate(&["costs", "--from-history", "--json", "--db", &store.url])
        .args(["--scenario-out", out_file.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    crate::plans::validate("costs.schema.json", &report);
    let scenario: Value = serde_json::from_slice(&std::fs::read(&out_file).unwrap()).unwrap();
    let rows = store.rows(
        "SELECT s.durations, d.body, s.select_ms, (SELECT r.record_ms FROM runs r WHERE r.commit_sha = s.commit_sha ORDER BY r.seq DESC LIMIT 1) \
         FROM shadows s JOIN decisions d ON d.id = s.decision_id ORDER BY s.entry",
    );
    assert!(
        !text(&out).contains("with no"),
        "each shadow run was recorded, its times with it: {}",
        text(&out)
    );
    let jobs = scenario["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), rows.len());
    assert_eq!(scenario["mode"], "projection");
    let mut candidate = 0.0;
    for (i, (job, row)) in jobs.iter().zip(&rows).enumerate() {
        let durations: std::collections::BTreeMap<String, u64> =
            serde_json::from_str(&row[0]).unwrap();
        let decision: Value = serde_json::from_str(&row[1]).unwrap();
        let total: u64 = durations.values().sum();
        let kept: u64 = durations
            .iter()
            .filter(|(u, _)| decision["selected"].get(u.as_str()).is_some())
            .map(|(_, ms)| ms)
            .sum();
        let f = |k: &str| job[k].as_f64().unwrap();
        assert!(
            (f("baselineSeconds") - total as f64 / 1000.0).abs() < 1e-9,
            "{job:#}"
        );
        let retained = if total == 0 {
            1.0
        } else {
            kept as f64 / total as f64
        };
        assert!((f("retainedFraction") - retained).abs() < 1e-9, "{job:#}");
        // Recorded milliseconds may round to 0 on a fast run: what is kept is checked by the
        // selection, never by a duration.
        assert_eq!(
            decision["selected"].get("tests/test_rate.py").is_none(),
            i == 0,
            "the first decision left the rate test out, the second (with the rule) took it: {job:#}"
        );
        let select_ms: f64 = row[2].parse().unwrap();
        assert!(select_ms > 0.0);
        let record_ms: f64 = row[3].parse().unwrap();
        assert!(
            (f("overheadSeconds") - (select_ms + record_ms) / 1000.0).abs() < 1e-9,
            "{job:#} {row:?}"
        );
        assert_eq!(job["usdPerMinute"], Value::Null, "a price is never made up");
        candidate += f("retainedFraction") * f("baselineSeconds") + f("overheadSeconds");
    }
    let got = report["runner_seconds"]["candidate"].as_f64().unwrap();
    assert!((got - candidate).abs() < 1e-9, "{got} vs {candidate}");
    assert_eq!(report["list_usd"]["candidate"], Value::Null);
}

/// Whether `audit_rate` audits CI run `run`: the documented choice, computed here on its own.
fn chosen(run: &str, rate: f64) -> bool {
    use sha2::Digest;
    let h = sha2::Sha256::digest(run.as_bytes());
    let x = u64::from_be_bytes(h[..8].try_into().unwrap());
    (x as f64) / 2f64.powi(64) < rate
}

#[test]
fn audit_rate_chooses_ci_runs_by_their_id_and_a_retry_chooses_the_same() {
    let t = TestRepo::from_fixture("shop");
    t.write(".gate.toml", "audit_rate = 0.5\n");
    t.commit("audit half the runs");
    t.append("src/shop/money.py", "\n# reviewed\n");
    t.commit("money");
    let db = format!("sqlite:{}", t.root.join(".git/gate/h.sqlite").display());
    let mut audited = Vec::new();
    for run in 1..=8 {
        let mut seen = Vec::new();
        for attempt in ["1", "2"] {
            let out = t
                .gate(&["--affected", "HEAD~1...HEAD", "--json"])
                .env("GATE_DB", &db)
                .env("GITHUB_RUN_ID", run.to_string())
                .env("GITHUB_RUN_ATTEMPT", attempt)
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(0), "{}", text(&out));
            let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
            // The money change does not select test_plugins: only the whole suite runs it.
            let whole = doc["tests"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["file"] == "tests/test_plugins.py");
            assert_eq!(
                whole,
                text(&out).contains("audit run: audit_rate 0.5 chose CI run"),
                "{}",
                text(&out)
            );
            seen.push(whole);
        }
        assert_eq!(seen[0], seen[1], "run {run}: a retry chooses the same");
        assert_eq!(seen[0], chosen(&run.to_string(), 0.5), "run {run}");
        audited.push(seen[0]);
    }
    assert!(
        audited.contains(&true) && audited.contains(&false),
        "{audited:?}"
    );
    // Outside CI (no run id) a run is never an audit.
    let out = t
        .gate(&["--affected", "HEAD~1...HEAD", "--json", "--list"])
        .env("GATE_DB", &db)
        .env_remove("GITHUB_RUN_ID")
        .output()
        .unwrap();
    assert!(!text(&out).contains("audit run"), "{}", text(&out));
    // A rate that is no fraction is a configuration error naming its line.
    t.write(".gate.toml", "\naudit_rate = 1.5\n");
    let out = t.gate(&["--files", "src/shop/money.py"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(
        text(&out).contains("line 2: `audit_rate`: 1.5 is not a fraction from 0 to 1"),
        "{}",
        text(&out)
    );
}

/// `gate costs` reads seed 001's scenario format: the JSON follows its schema, the Markdown
/// table is written, and a scenario with a bad field is exit 10 naming the file and the field.
#[test]
fn costs_read_a_scenario_and_name_a_bad_field() {
    let t = TestRepo::from_fixture("shop");
    let file = t.root.parent().unwrap().join("scenario.json");
    let job = |retained: f64| {
        serde_json::json!({
            "id": "unit-fast", "baselineSeconds": 600, "selectableSeconds": 500,
            "retainedFraction": retained, "auditRate": 0.1, "overheadSeconds": 15,
            "auditOverheadSeconds": 30, "dropEmptyJob": false, "usdPerMinute": 0.008,
            "billingQuantumSeconds": 60, "allocatedVcpus": 2
        })
    };
    let scenario = |retained| {
        serde_json::json!({
            "version": 1, "mode": "projection", "jobs": [job(retained)],
            "modelUsage": {
                "baseline": {"inputTokens": 0, "outputTokens": 0, "inputUsdPerMillion": 0, "outputUsdPerMillion": 0},
                "candidate": {"inputTokens": null, "outputTokens": null, "inputUsdPerMillion": null, "outputUsdPerMillion": null}
            }
        })
    };
    std::fs::write(&file, scenario(0.2).to_string()).unwrap();
    let md = t.root.parent().unwrap().join("costs.md");
    let out = t
        .gate(&[
            "costs",
            "--scenario",
            file.to_str().unwrap(),
            "--json",
            "--markdown",
            md.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    crate::plans::validate("costs.schema.json", &doc);
    assert_eq!(doc["runner_seconds"]["saving"], 342.0, "{doc:#}");
    // The candidate's model usage is unknown: its cost is unknown, not zero.
    assert!(doc["model_usd"]["candidate"].is_null(), "{doc:#}");
    let table = std::fs::read_to_string(&md).unwrap();
    assert!(
        table.contains("| runner seconds | 600.00 s | 258.00 s | 342.00 s |"),
        "{table}"
    );
    std::fs::write(&file, scenario(1.5).to_string()).unwrap();
    let out = t
        .gate(&["costs", "--scenario", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(10), "{}", text(&out));
    assert!(
        text(&out)
            .contains("scenario.json: jobs[0].retainedFraction: 1.5 is not a fraction from 0 to 1"),
        "{}",
        text(&out)
    );
}

/// `gate evaluate` over the test's two shadows, by hand: the first caught m and missed 1 (and
/// 1 flaky), the second caught m + 1 — recall (2m + 1) / (2m + 2); both changes had one caught.
fn evaluated(t: &TestRepo, db: &str, m: u64) {
    let out = t
        .gate(&["evaluate", "--json", "--db", db])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let e: Value = serde_json::from_slice(&out.stdout).unwrap();
    crate::plans::validate("evaluate.schema.json", &e);
    assert_eq!(e["runs"], 2);
    assert_eq!(e["failing"], 2 * m + 2, "{e:#}");
    assert_eq!(e["caught"], 2 * m + 1, "{e:#}");
    assert_eq!(e["faulty_changes"], 2);
    assert_eq!(e["faulty_changes_caught"], 2);
    assert_eq!(e["flaky"], 1);
    assert_eq!(e["unknown"], 0);
    assert_eq!(
        e["misses"][0]["cause"],
        "no edge linked the change to the test"
    );
    assert_eq!(e["misses"][0]["count"], 1);
    let recall = e["failure_recall"].as_f64().unwrap();
    assert!((recall - (2 * m + 1) as f64 / (2 * m + 2) as f64).abs() < 1e-12);
    assert!(e["failure_recall_lower"].as_f64().unwrap() < recall);
}

/// A whole-suite run made elsewhere is judged from its JUnit report: with no decision frozen
/// for the range, one is frozen from the same inputs first. The flaky test has no evidence
/// from before this run, so its failure is a miss: never excused as flaky after the fact.
#[test]
fn a_run_made_elsewhere_is_judged_from_its_junit_report() {
    let t = fixture();
    let db = format!("sqlite:{}", t.root.join(".git/gate/h.sqlite").display());
    t.branch("feature");
    t.checkout("feature");
    t.write(
        "src/shop/money.py",
        "CENTS = 100\n\n\ndef to_cents(amount):\n    return round(amount * CENTS) + 1\n",
    );
    t.write("config/rate.cfg", "2\n");
    t.commit("money off by one, rate 2");
    let junit = t.root.parent().unwrap().join("full.xml");
    let counter = t.root.parent().unwrap().join("flaky-count");
    let ran = std::process::Command::new("python3")
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(format!("--junitxml={}", junit.display()))
        .current_dir(&t.root)
        .env("RATE_FILE", "config/rate.cfg")
        .env("FLAKY_COUNTER", &counter)
        .output()
        .unwrap();
    assert_eq!(ran.status.code(), Some(1), "{}", text(&ran));
    let judge = || {
        let args = [
            "shadow",
            "master...HEAD",
            "--junit",
            junit.to_str().unwrap(),
        ];
        t.gate(&args)
            .args(["--db", &db, "--json"])
            .output()
            .unwrap()
    };
    let out = judge();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(11), "{stderr}");
    assert!(stderr.contains("missed: tests/test_rate.py"), "{stderr}");
    // --json: the judgements on stdout, with the decision's id.
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["exit_code"], 11);
    assert!(
        doc["frozen_decision"]
            .as_str()
            .is_some_and(|d| d.len() == 64)
    );
    let classes: Vec<(&str, &str)> = doc["shadow"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| (j["unit"].as_str().unwrap(), j["class"].as_str().unwrap()))
        .collect();
    assert!(
        classes.contains(&("tests/test_rate.py", "missed")),
        "{doc:#}"
    );
    assert!(stderr.contains("missed: tests/test_flaky.py"), "{stderr}");
    assert!(stderr.contains(", 2 missed, 0 flaky"), "{stderr}");
    assert_eq!(count(&db, "decisions"), 1);
    forged_once(&judge, &db);
    // A file that is not JUnit is exit 10 naming it; nothing is judged.
    std::fs::write(&junit, "not xml").unwrap();
    let out = judge();
    assert_eq!(out.status.code(), Some(10), "{}", text(&out));
    assert!(text(&out).contains("full.xml"), "{}", text(&out));
    assert_eq!(
        count(&db, "shadows"),
        3,
        "the three compares above, none more"
    );
    // Forged again: `gate decision` refuses to show it as the decision (exit 10), and evaluate
    // leaves its compares out and counts them, never reading the forged selection.
    let forged = forge_selection(&db, "tests/test_rate.py");
    let out = t
        .gate(&["decision", &forged, "--db", &db])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(10), "{}", text(&out));
    assert!(
        text(&out).contains("is not the one frozen: its body does not hash to its id"),
        "{}",
        text(&out)
    );
    let out = t
        .gate(&["evaluate", "--json", "--db", &db])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let e: Value = serde_json::from_slice(&out.stdout).unwrap();
    crate::plans::validate("evaluate.schema.json", &e);
    assert_eq!(
        (e["runs"].as_u64(), e["untrusted"].as_u64()),
        (Some(0), Some(3))
    );
    assert_eq!(e["failure_recall"], Value::Null, "{e:#}");
}

/// A stored decision edited to say the missed test was selected is not trusted: the body no
/// longer hashes to its id. The compare freezes the decision anew (putting the true body
/// back) and still names the miss.
fn forged_once(judge: &dyn Fn() -> std::process::Output, db: &str) {
    let forged = forge_selection(db, "tests/test_rate.py");
    let out = judge();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(11), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "the decision {forged} in the store is not used: its body does not hash to its id"
        )),
        "{stderr}"
    );
    assert!(stderr.contains("missed: tests/test_rate.py"), "{stderr}");
    assert_eq!(count(db, "decisions"), 1);
    let out = judge();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("is not used"),
        "the true body is back: {stderr}"
    );
}

/// Adds `unit` to the selection of the one decision a SQLite store holds, as someone with
/// write access to a shared store could: its id.
fn forge_selection(db: &str, unit: &str) -> String {
    let c = rusqlite::Connection::open(db.trim_start_matches("sqlite:")).unwrap();
    let (id, body): (String, String) = c
        .query_row("SELECT id, body FROM decisions", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    let mut doc: Value = serde_json::from_str(&body).unwrap();
    doc["selected"][unit] = serde_json::json!(["forged"]);
    c.execute(
        "UPDATE decisions SET body = ?1 WHERE id = ?2",
        (doc.to_string(), &id),
    )
    .unwrap();
    id
}

/// The rows of a SQLite store's table.
fn count(db: &str, table: &str) -> i64 {
    count_where(db, table, "1 = 1")
}

/// A change that breaks an import fails the files that import it at collection: the whole
/// suite goes on past them and each is judged (caught), not a session cut short that judges
/// nothing. A test failing at the base already, in a run recorded before, is counted apart as
/// pre-existing: the change did not break it, and no rule is suggested for it.
#[test]
fn an_import_broken_by_the_change_is_judged_and_a_failure_at_the_base_is_apart() {
    let t = TestRepo::from_fixture("shop");
    let db = format!("sqlite:{}", t.root.join(".git/gate/h.sqlite").display());
    t.write(
        "tests/test_broken.py",
        "def test_broken():\n    assert False\n",
    );
    t.commit("a test broken on master");
    let shadow = |range: &str| {
        let out = t.gate(&["shadow", range, "--db", &db]).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, stderr, _) = shadow("HEAD~1...HEAD");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("1 failing test file(s): 1 caught"),
        "{stderr}"
    );
    t.branch("feature");
    t.checkout("feature");
    t.append("src/shop/tax.py", "\nraise RuntimeError('planted')\n");
    t.commit("tax breaks on import");
    let (code, stderr, stdout) = shadow("master...HEAD");
    assert!(!stderr.contains("the run broke"), "{stderr}");
    assert!(!stdout.contains("full suite still owed"), "{stdout}");
    assert!(
        stdout.contains("shadow run — the whole suite, judged against decision "),
        "{stdout}"
    );
    assert_eq!(
        code,
        Some(1),
        "every failure the change made was caught: {stderr}"
    );
    let line = stderr
        .lines()
        .find(|l| l.starts_with("gate shadow: "))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        line.ends_with(" caught, 0 missed, 0 flaky, 1 pre-existing"),
        "{line}"
    );
    let judged = count_where(
        &db,
        "shadows",
        "caught >= 2 AND judged LIKE '%tests/test_checkout.py%'",
    );
    assert_eq!(
        judged, 1,
        "the file that failed to collect is judged: {stderr}"
    );
    assert!(
        !stderr.contains("tests = \"tests/test_broken.py\""),
        "{stderr}"
    );
}

/// The rows of a SQLite store's table that match `condition`.
fn count_where(db: &str, table: &str, condition: &str) -> i64 {
    rusqlite::Connection::open(db.trim_start_matches("sqlite:"))
        .unwrap()
        .query_row(
            &format!("SELECT count(*) FROM {table} WHERE {condition}"),
            [],
            |r| r.get(0),
        )
        .unwrap()
}

on_both!(the_guide_proof_walk_through_runs_verbatim: proof_walk_sqlite, proof_walk_postgres);
/// The shadow → evaluate → costs walk-through of the guide's proof-loop page
/// (`docs/src/proof-loop.md`), verbatim but for its build line: the
/// miss named with its rule, recall with its bound, the costs from history, the export
/// imported into another store.
fn the_guide_proof_walk_through_runs_verbatim(kind: Kind) {
    let scratch = TestRepo::from_fixture("shop");
    let store = Store::new(kind, &scratch);
    let db = matches!(kind, Kind::Postgres).then_some(store.url.as_str());
    let out = crate::support::guide_block("proof-loop.md", "proof-walkthrough", &scratch, db);
    let all = text(&out);
    for line in [
        "missed: tests/test_rate.py — no edge linked config/rate.cfg and 1 more to it",
        "    on = [\"config/rate.cfg\", \"src/shop/money.py\"]",
        "gate shadow: 5 failing test file(s): 4 caught, 1 missed, 0 flaky",
        "gate evaluate: 1 shadow run(s)",
        "  failure recall: 80.0% (4 of 5 failing test files caught; 95% lower bound 37.6%)",
        "  faulty-change recall: 100.0% (1 of 1 changes with a failure had one caught)",
        "  missed 1×: no edge linked the change to the test",
        "| runner list cost | unknown | unknown | unknown |",
        "test file observation(s), expanded,",
        "kept in ",
    ] {
        assert!(all.contains(line), "missing `{line}`:\n{all}");
    }
    let dir = all
        .lines()
        .find_map(|l| l.strip_prefix("walk-through dir: "))
        .unwrap();
    let team = Path::new(dir).parent().unwrap().join("team.sqlite");
    let kept = rusqlite::Connection::open(&team)
        .unwrap()
        .query_row("SELECT count(*) FROM observations", [], |r| {
            r.get::<_, i64>(0)
        })
        .unwrap();
    assert_eq!(kept, 1);
    let _ = std::fs::remove_dir_all(Path::new(dir).parent().unwrap());
}

/// Go, end to end with real `go test` runs: a one-hop `max_depth` (too short on purpose)
/// selects the changed package's own tests and its direct importer's — both caught — and cuts
/// the package two imports further, which is missed with that cause and a rule; with the rule
/// it is caught. The same run made elsewhere (`go test -json`) is judged the same, against the
/// same frozen decision.
#[test]
fn a_go_shadow_run_judges_each_failing_package() {
    let t = TestRepo::from_fixture("goshop");
    let db = format!("sqlite:{}", t.root.join(".git/gate/h.sqlite").display());
    t.write(
        ".gate.toml",
        "max_depth = 1\n\n[go]\nflags = [\"-count=1\"]\n",
    );
    t.commit("a one-hop cap");
    t.branch("feature");
    t.checkout("feature");
    t.write(
        "ws/lib/strutil/strutil.go",
        "package strutil\n\n// Upper no longer shouts.\nfunc Upper(s string) string { return s }\n",
    );
    t.commit("Upper is the identity");
    let shadow = |range: &str, extra: &[&str]| {
        let out = t
            .gate(&["shadow", range, "--db", &db, "--json"])
            .args(extra)
            .envs(crate::golang::go_vars())
            .output()
            .unwrap();
        let doc: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(&out)));
        (out.status.code(), doc, text(&out))
    };
    let classes = |doc: &Value| -> Vec<(String, String)> {
        doc["shadow"]
            .as_array()
            .unwrap_or_else(|| panic!("{doc:#}"))
            .iter()
            .map(|j| {
                (
                    j["unit"].as_str().unwrap().into(),
                    j["class"].as_str().unwrap().into(),
                )
            })
            .collect()
    };
    let (code, doc, said) = shadow("master...HEAD", &[]);
    assert_eq!(code, Some(11), "{said}");
    let want = |cart: &str| {
        vec![
            ("./ws/lib/strutil".to_string(), "caught".to_string()),
            ("./ws/shop/cart".to_string(), cart.to_string()),
            ("./ws/shop/money".to_string(), "caught".to_string()),
        ]
    };
    assert_eq!(classes(&doc), want("missed"), "{said}");
    let frozen = doc["frozen_decision"].as_str().unwrap().to_string();
    let cart = doc["shadow"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["unit"] == "./ws/shop/cart")
        .unwrap();
    assert_eq!(
        cart["cause"], "max_depth cut the chain from ws/lib/strutil/strutil.go to it",
        "{cart:#}"
    );
    assert!(
        said.contains("gate shadow: 3 failing test file(s): 2 caught, 1 missed, 0 flaky"),
        "{said}"
    );

    // The same run, made elsewhere: `go test -json` in each module, judged from its stream.
    let mut stream = Vec::new();
    for module in ["ws/lib", "ws/shop"] {
        let ran = std::process::Command::new("go")
            .args(["test", "-count=1", "-json", "./..."])
            .current_dir(t.root.join(module))
            .envs(crate::golang::go_vars())
            .output()
            .unwrap();
        assert_eq!(ran.status.code(), Some(1), "{}", text(&ran));
        stream.extend(ran.stdout);
    }
    let file = t.root.parent().unwrap().join("go-test.json");
    std::fs::write(&file, &stream).unwrap();
    let (code, ingested, said) = shadow("master...HEAD", &["--go-json", file.to_str().unwrap()]);
    assert_eq!(code, Some(11), "{said}");
    assert_eq!(
        ingested["frozen_decision"],
        frozen.as_str(),
        "the same decision"
    );
    assert_eq!(classes(&ingested), want("missed"), "{said}");

    // The rule it printed, added on master: the next shadow of the change catches the cart.
    let rule = cart["rule"].as_str().unwrap().to_string();
    t.checkout("master");
    t.append(".gate.toml", &format!("\n{rule}\n"));
    t.commit("the rule");
    t.checkout("feature");
    t.merge("master", "merge master");
    let (code, doc, said) = shadow("master...HEAD", &[]);
    assert_eq!(code, Some(1), "failures, all caught: {said}");
    assert_eq!(classes(&doc), want("caught"), "{said}");
}
