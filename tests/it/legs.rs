//! Triage across legs, on both stores: a leg is the environment it ran in (`--leg`) and the
//! shard of the suite it ran (`--shard K/N`). History evidence is matched by test and
//! environment, whichever shard ran it, and each verdict names the run and leg its evidence
//! came from: main recorded as 3 shards, a pull request's run as 2 shards or as one unsharded
//! leg, give the same verdicts. Another environment's history is never evidence, and legs
//! recorded without a shard keep their name as their environment, as before.

use crate::history::{Kind, Store, p, record};
use crate::support::{TestRepo, text};
use crate::triage::{CART, MONEY, PLUGINS, feature, junit, triage};
use serde_json::Value;

/// Records `cases` as leg `leg` (with `shard`, if any) of run `run`, attempt 1.
fn rec(
    t: &TestRepo,
    store: &Store,
    run: &str,
    leg: &str,
    shard: Option<&str>,
    cases: &[(&str, &str)],
) {
    let name = format!("{run}-{leg}-{}", shard.unwrap_or("all").replace('/', "of"));
    let xml = junit(t, &name, cases);
    let mut args = vec!["--junit", p(&xml), "--run", run, "--leg", leg];
    if let Some(s) = shard {
        args.extend(["--shard", s]);
    }
    let out = record(t, store, &args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

/// Each verdict as (test, verdict, confidence, evidence, from), sorted by test: what must not
/// depend on how the triaged run was sharded.
pub(crate) fn judged(doc: &Value) -> Vec<(String, String, String, String, Value)> {
    let mut out: Vec<_> = doc["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let s = |k: &str| v[k].as_str().unwrap().to_string();
            (
                s("test"),
                s("verdict"),
                s("confidence"),
                s("evidence"),
                v["from"].clone(),
            )
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// On the default branch: run m1 of environment `py` as three shards, test_plugins failing in
/// the second; run m1 of environment `mac`, unsharded, with test_cart failing there only.
fn main_in_shards(t: &TestRepo, store: &Store) {
    rec(t, store, "m1", "py", Some("1/3"), &[(MONEY, "passed")]);
    rec(t, store, "m1", "py", Some("2/3"), &[(PLUGINS, "failed")]);
    rec(t, store, "m1", "py", Some("3/3"), &[(CART, "passed")]);
    rec(
        t,
        store,
        "m1",
        "mac",
        None,
        &[(MONEY, "passed"), (PLUGINS, "passed"), (CART, "failed")],
    );
}

on_both!(evidence_is_the_environments_whichever_shard_ran_it: shards_sqlite, shards_postgres);
/// Main as 3 shards; the change's run as 2 shards (test_plugins in another shard than on
/// main) and again as one unsharded leg: the same verdicts, the pre-existing failure named by
/// main's run and shard leg, and `mac`'s failing test_cart never evidence for `py`.
fn evidence_is_the_environments_whichever_shard_ran_it(kind: Kind) {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(kind, &t);
    main_in_shards(&t, &store);
    // The change touches money.py: it selects test_money and test_cart, never test_plugins.
    feature(&t);
    let failing = [(MONEY, "failed"), (PLUGINS, "failed"), (CART, "failed")];
    rec(&t, &store, "pr-2", "py", Some("1/2"), &failing[..2]);
    rec(&t, &store, "pr-2", "py", Some("2/2"), &failing[2..]);
    rec(&t, &store, "pr-1", "py", None, &failing);
    let (code, sharded) = triage(&t, &store, "pr-2");
    assert_eq!(code, 1, "new regressions exit 1");
    let (_, whole) = triage(&t, &store, "pr-1");
    let main_leg = serde_json::json!({"seq": 2, "run": "m1", "leg": "py#2/3"});
    let got = judged(&sharded);
    assert_eq!(
        got.iter()
            .map(|(t, v, c, _, _)| (t.as_str(), v.as_str(), c.as_str()))
            .collect::<Vec<_>>(),
        [
            (CART, "new_regression", "high"),
            (MONEY, "new_regression", "high"),
            (PLUGINS, "pre_existing", "high"),
        ],
        "{sharded}"
    );
    assert!(
        got[2].3.starts_with("failing on main on py since "),
        "{sharded}"
    );
    assert_eq!(got[2].4, main_leg, "{sharded}");
    assert_eq!(
        got[0].4,
        Value::Null,
        "the change is the evidence: {sharded}"
    );
    assert_eq!(judged(&whole), got, "sharded or not, the same verdicts");
    // The legs say their environment and shard; a verdict says its own leg by name.
    let legs: Vec<(&str, &str, &Value)> = sharded["legs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["leg"].as_str().unwrap(),
                l["environment"].as_str().unwrap(),
                &l["shard"],
            )
        })
        .collect();
    assert_eq!(
        legs,
        [
            ("py#1/2", "py", &Value::from("1/2")),
            ("py#2/2", "py", &Value::from("2/2"))
        ]
    );
    assert_eq!(whole["legs"][0]["shard"], Value::Null);
    // The human form names the run and leg the evidence came from.
    let out = t
        .gate(&["triage", "--run", "pr-2", "--db", &store.url])
        .output()
        .unwrap();
    let human = text(&out);
    assert!(
        human.contains("pre_existing    high    tests/test_plugins.py::test_discount  [py#1/2]"),
        "{human}"
    );
    assert!(
        human.contains("(1 main run); from run m1, leg py#2/3 (#2)"),
        "{human}"
    );
}

on_both!(flaky_evidence_crosses_shards_never_environments: flaky_sqlite, flaky_postgres);
/// A pass on the same commit in another shard's leg of the same environment is flaky
/// evidence, named by its run and leg; a pass in another environment is not.
fn flaky_evidence_crosses_shards_never_environments(kind: Kind) {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(kind, &t);
    feature(&t);
    // test_plugins passes in mac, then in py's shard 1/2 of run 1; run 2 splits otherwise.
    rec(&t, &store, "1", "mac", None, &[(PLUGINS, "passed")]);
    rec(&t, &store, "2", "py", Some("2/2"), &[(PLUGINS, "failed")]);
    let (_, doc) = triage(&t, &store, "2");
    assert_eq!(doc["verdicts"][0]["verdict"], "unknown", "{doc}");
    rec(&t, &store, "3", "py", Some("1/2"), &[(PLUGINS, "passed")]);
    rec(&t, &store, "4", "py", Some("2/2"), &[(PLUGINS, "failed")]);
    let (_, doc) = triage(&t, &store, "4");
    assert_eq!(doc["verdicts"][0]["verdict"], "flaky", "{doc}");
    assert_eq!(
        doc["verdicts"][0]["from"],
        serde_json::json!({"seq": 3, "run": "3", "leg": "py#1/2"}),
        "{doc}"
    );
}

on_both!(legs_without_a_shard_are_their_own_environment: unsharded_sqlite, unsharded_postgres);
/// Legs recorded without `--shard` (as every leg was before shards) are each their own
/// environment, by name: main's shards named `py-shard-1…3` are not the pull request's
/// `py-shard-1`, so the test failing on main in `py-shard-2` is unknown there, as before —
/// and is pre-existing once recorded as `--leg py --shard K/N`.
fn legs_without_a_shard_are_their_own_environment(kind: Kind) {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(kind, &t);
    rec(&t, &store, "m1", "py-shard-1", None, &[(MONEY, "passed")]);
    rec(&t, &store, "m1", "py-shard-2", None, &[(PLUGINS, "failed")]);
    rec(&t, &store, "m1", "py-shard-3", None, &[(CART, "passed")]);
    rec(&t, &store, "m2", "py", Some("2/3"), &[(PLUGINS, "failed")]);
    feature(&t);
    rec(&t, &store, "pr", "py-shard-1", None, &[(PLUGINS, "failed")]);
    rec(&t, &store, "pr", "py", Some("1/2"), &[(PLUGINS, "failed")]);
    let (_, doc) = triage(&t, &store, "pr");
    let verdicts: Vec<(&str, &str)> = doc["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| (v["leg"].as_str().unwrap(), v["verdict"].as_str().unwrap()))
        .collect();
    assert_eq!(
        verdicts,
        [("py#1/2", "pre_existing"), ("py-shard-1", "unknown")],
        "{doc}"
    );
}

on_both!(a_shard_is_k_of_n: shard_usage_sqlite, shard_usage_postgres);
/// `--shard` is K/N with 1 <= K <= N; a run's shard legs never overwrite each other and
/// each is re-uploaded idempotently.
fn a_shard_is_k_of_n(kind: Kind) {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(kind, &t);
    let xml = junit(&t, "one", &[(MONEY, "passed")]);
    for bad in ["0/3", "4/3", "3", "a/b"] {
        let out = record(
            &t,
            &store,
            &["--junit", p(&xml), "--run", "1", "--shard", bad],
        );
        assert_eq!(out.status.code(), Some(3), "{bad}: {}", text(&out));
        assert!(text(&out).contains("--shard"), "{}", text(&out));
    }
    for _ in 0..2 {
        rec(&t, &store, "1", "py", Some("1/2"), &[(MONEY, "passed")]);
        rec(&t, &store, "1", "py", Some("2/2"), &[(CART, "passed")]);
    }
    let rows = store.rows("SELECT leg, environment, shard FROM runs ORDER BY seq");
    assert_eq!(
        rows,
        [["py#1/2", "py", "1/2"], ["py#2/2", "py", "2/2"]],
        "a re-upload is the same leg"
    );
}
