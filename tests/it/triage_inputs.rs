//! Triage's same-commit rule by the test's own inputs, on both stores with real pytest runs
//! gated and recorded (`gate --affected … --record`, `gate shadow`): a pass under another
//! value of a variable the test reads by name is not flaky evidence against its failure, while
//! a failure whose inputs did not move between the two runs is; every recorded result holds
//! its unit's fingerprint, the ledger's or one computed as it is recorded.

use crate::history::{Kind, Store};
use crate::support::{TestRepo, text};
use crate::triage::{PLUGINS, feature};
use serde_json::Value;

/// Reads `SHOP_X` by its literal name: it fails when the variable says so.
const ENV_TEST: &str = "tests/test_env.py::test_env";
/// Fails on every second run, counted in the file `SHOP_COUNTER` names (outside the
/// repository, the same in every run): a flaky test whose inputs never move.
const FLIP_TEST: &str = "tests/test_flip.py::test_flip";

/// `gate --affected master...HEAD --record --leg py`, `SHOP_X` set to `x` (`None`: unset): the
/// exit code.
fn gated(t: &TestRepo, store: &Store, counter: &str, x: Option<&str>, extra: &[&str]) -> i32 {
    let mut cmd = t.gate(&["--affected", "master...HEAD", "--record", "--leg", "py"]);
    cmd.args(extra)
        .args(["--db", &store.url])
        .env("SHOP_COUNTER", counter)
        .env_remove("GITHUB_RUN_ID");
    match x {
        Some(x) => cmd.env("SHOP_X", x),
        None => cmd.env_remove("SHOP_X"),
    };
    let out = cmd.output().unwrap();
    out.status
        .code()
        .unwrap_or_else(|| panic!("{}", text(&out)))
}

/// The stored (fingerprint, flaky evidence) of `test`'s results, oldest first.
fn stored(store: &Store, test: &str) -> Vec<(String, String)> {
    store
        .rows(&format!(
            "SELECT fingerprint, flake FROM results WHERE test_id = '{test}' ORDER BY seq"
        ))
        .into_iter()
        .map(|r| (r[0].clone(), r[1].clone()))
        .collect()
}

on_both!(a_pass_under_another_value_of_a_variable_the_test_reads_is_not_flaky_evidence: inputs_sqlite, inputs_postgres);
/// Two gated runs of one commit in one environment (the same leg inputs): between them
/// `SHOP_X`, which one test reads by name, changed, and that test went from pass to fail —
/// its two results carry different fingerprints, so the pass is no flaky evidence and its
/// failure is the change's new regression. The flaky test beside it, under the same
/// fingerprint both times, is flaky with high confidence.
fn a_pass_under_another_value_of_a_variable_the_test_reads_is_not_flaky_evidence(kind: Kind) {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(kind, &t);
    feature(&t);
    t.write(
        "tests/test_env.py",
        "import os\n\n\ndef test_env():\n    assert os.environ.get(\"SHOP_X\") != \"broken\"\n",
    );
    t.write(
        "tests/test_flip.py",
        "import os\n\n\ndef test_flip():\n    path = os.environ[\"SHOP_COUNTER\"]\n    n = int(open(path).read()) + 1 if os.path.exists(path) else 1\n    open(path, \"w\").write(str(n))\n    assert n % 2 == 1\n",
    );
    t.commit("two tests");
    let counter = t.root.parent().unwrap().join("flip-count");
    let counter = counter.to_str().unwrap();
    assert_eq!(gated(&t, &store, counter, None, &[]), 0, "both pass");
    // The same commit again, every test run (the ledger would reuse the flaky test's pass).
    let code = gated(&t, &store, counter, Some("broken"), &["--no-reuse"]);
    assert_eq!(code, 1, "both fail");
    let env = stored(&store, ENV_TEST);
    let flip = stored(&store, FLIP_TEST);
    assert!(
        env.iter().chain(&flip).all(|(print, _)| print.len() == 64),
        "each result holds its unit's fingerprint: {env:?} {flip:?}"
    );
    assert_ne!(env[0].0, env[1].0, "SHOP_X is in test_env's fingerprint");
    assert_eq!(flip[0].0, flip[1].0, "nothing test_flip reads moved");
    // Flaky evidence, decided as the second run was recorded: none for test_env.
    assert_eq!((env[1].1.as_str(), flip[1].1.as_str()), ("0", "2"));
    let out = t
        .gate(&["triage", "--json", "--db", &store.url])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(&out)));
    crate::plans::validate("triage.schema.json", &doc);
    let verdict = |test: &str| -> (String, String) {
        let v = doc["verdicts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["test"] == test)
            .unwrap_or_else(|| panic!("no verdict for {test}: {doc:#}"));
        let s = |k: &str| v[k].as_str().unwrap().to_string();
        (s("verdict"), s("confidence"))
    };
    assert_eq!(
        verdict(ENV_TEST),
        ("new_regression".into(), "high".into()),
        "{doc:#}"
    );
    assert_eq!(
        verdict(FLIP_TEST),
        ("flaky".into(), "high".into()),
        "{doc:#}"
    );
    assert_eq!(out.status.code(), Some(1), "a new regression: {doc:#}");
    // A shadow run of the commit records the whole suite: a unit the ledger never looked up
    // (test_plugins, which the change does not select) has its fingerprint computed as it is
    // recorded; with SHOP_X unset again, test_env's is its first run's.
    let out = t
        .gate(&["shadow", "master...HEAD", "--leg", "py", "--db", &store.url])
        .env("SHOP_COUNTER", counter)
        .env_remove("SHOP_X")
        .env_remove("GITHUB_RUN_ID")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(stored(&store, ENV_TEST)[2].0, env[0].0);
    let plugins = stored(&store, PLUGINS);
    assert_eq!(plugins.len(), 1, "{plugins:?}");
    assert_eq!(plugins[0].0.len(), 64, "{plugins:?}");
}
