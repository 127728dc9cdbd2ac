//! Bad input: one clear line naming the file and the fact, a distinct exit code, never a panic
//! and never a silently empty selection.

use crate::push_support::Remote;
use crate::support::{TestRepo, selected};

fn stderr_of(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn unknown_revision_exits_3() {
    let t = TestRepo::from_fixture("shop");
    let out = t
        .gate(&["--affected", "nosuchrev...HEAD"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stderr_of(&out).starts_with("error: unknown revision `nosuchrev`"),
        "{}",
        stderr_of(&out)
    );
    assert!(out.stdout.is_empty(), "no selection printed");
}

#[test]
fn a_missing_base_is_a_refusal_naming_the_fix() {
    let t = TestRepo::from_fixture("shop");
    let out = t
        .gate(&["--affected", "origin/master...HEAD"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    let err = stderr_of(&out);
    assert!(
        err.contains("base `origin/master` is not in this checkout"),
        "{err}"
    );
    assert!(
        err.contains("git fetch") && err.contains("--affected-decision"),
        "{err}"
    );
    let r = t.report(&["--affected", "origin/master...HEAD"]);
    assert_eq!(r["verdict"], "refused");
    assert!(
        r["range_refusal"]
            .as_str()
            .unwrap()
            .contains("origin/master")
    );
}

/// A CI-style shallow clone: the base a range names is beyond where its history was cut, and the
/// refusal says so and how to deepen it — which then works.
#[test]
fn a_shallow_clone_missing_the_base_says_to_deepen_it() {
    let r = Remote::with_fixture("shop");
    r.append("src/shop/money.py", "\n");
    r.commit("money");
    r.git(&["push", "-q", "origin", "master"]);
    r.git(&["checkout", "-q", "-b", "feature"]);
    r.append("src/shop/cart.py", "\n");
    r.commit("cart");
    r.git(&["push", "-q", "origin", "feature"]);
    r.git(&["checkout", "-q", "master"]);
    r.append("src/shop/money.py", "\n");
    r.commit("money again");
    r.git(&["push", "-q", "origin", "master"]);
    let url = format!("file://{}", r.bare.display());
    r.git_in(
        r.dir.path(),
        &[
            "clone",
            "-q",
            "--depth",
            "1",
            "--no-single-branch",
            "-b",
            "feature",
            &url,
            "shallow",
        ],
    );
    let shallow = r.dir.path().join("shallow");

    // An ancestor past the cut, and two branches whose histories the cut keeps apart.
    for (spec, fact) in [
        (
            "HEAD~1...HEAD",
            "base `HEAD~1` is not in this clone, which is shallow",
        ),
        (
            "origin/master...HEAD",
            "`origin/master` and `HEAD` share no history in this clone, which is shallow",
        ),
    ] {
        let ran = r.gate_in(&shallow, &["--affected", spec]);
        assert_eq!(ran.code, Some(2), "{spec}: {}", ran.text);
        assert!(ran.text.contains(fact), "{spec}: {}", ran.text);
        assert!(
            ran.text.contains("`git fetch --unshallow`"),
            "{spec}: {}",
            ran.text
        );
        let json = r.gate_in(&shallow, &["--affected", spec, "--list", "--json"]);
        let report: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
        assert_eq!(report["verdict"], "refused", "{spec}");
        assert!(
            report["range_refusal"]
                .as_str()
                .unwrap()
                .contains("git fetch --unshallow"),
            "{spec}: {report}"
        );
    }

    r.git_in(&shallow, &["fetch", "-q", "--unshallow"]);
    for spec in ["HEAD~1...HEAD", "origin/master...HEAD"] {
        let json = r.gate_in(&shallow, &["--affected", spec, "--list", "--json"]);
        let report: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
        assert_ne!(report["verdict"], "refused", "{spec}: {}", json.text);
        assert!(report["range_refusal"].is_null(), "{spec}: {report}");
    }
}

/// A remote branch the remote did not have at its last fetch is a typo far more often than a
/// missing fetch: the refusal says it does not exist there and names the nearest branch.
#[test]
fn a_misspelt_remote_branch_is_named_with_the_nearest_one() {
    let r = Remote::with_fixture("shop");
    let ran = r.gate(&["--affected", "origin/mastr...HEAD"]);
    assert_eq!(ran.code, Some(2), "{}", ran.text);
    assert!(
        ran.text.contains(
            "`origin/mastr` does not exist on the remote `origin` (as of its last fetch; the nearest is `origin/master`)"
        ),
        "{}",
        ran.text
    );
    assert!(!ran.text.contains("not in this checkout"), "{}", ran.text);
    let json = r.gate(&["--affected", "origin/mastr...HEAD", "--list", "--json"]);
    let report: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(report["verdict"], "refused");
    assert!(
        report["range_refusal"]
            .as_str()
            .unwrap()
            .contains("the nearest is `origin/master`"),
        "{report}"
    );
}

#[test]
fn malformed_config_names_the_file_key_and_line() {
    let t = TestRepo::from_fixture("shop");
    t.write(".gate.toml", "always_run = []\nmax_dept = 3\n");
    t.commit("bad config");
    let out = t.gate(&["--affected", "HEAD~1...HEAD"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = stderr_of(&out);
    assert!(
        err.starts_with("error: .gate.toml: line 2: unknown field `max_dept`"),
        "{err}"
    );
    t.write(
        ".gate.toml",
        "[[depends]]\ntests = \"tests/**\"\non = \"src/[\"\n",
    );
    t.commit("bad glob");
    let err = stderr_of(&t.gate(&["--affected", "HEAD~1...HEAD"]).output().unwrap());
    assert!(
        err.starts_with("error: .gate.toml: line 3: `depends.on`: bad glob `src/[`"),
        "{err}"
    );
}

#[test]
fn a_python_file_with_syntax_errors_is_flagged_and_keeps_what_was_recovered() {
    let t = TestRepo::from_fixture("shop");
    t.write(
        "tests/test_broken.py",
        "import shop.money\n\ndef test_x(:\n    pass\n",
    );
    t.commit("broken");
    let r = t.report(&["--files", "src/shop/money.py"]);
    assert!(
        selected(&r).contains(&"tests/test_broken.py".to_string()),
        "the recovered import still selects it"
    );
    let r = t.report(&["--files", "tests/test_broken.py"]);
    let reasons = r["files"][0]["reasons"].to_string();
    assert!(reasons.contains("parsed with errors (line 3)"), "{reasons}");
    let out = t.gate(&["plan"]).output().unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("flagged tests/test_broken.py: parsed with errors (line 3)")
    );
}

#[test]
fn a_corrupt_plan_cache_is_rebuilt_with_a_warning() {
    let t = TestRepo::from_fixture("shop");
    let before = t.report(&["--files", "src/shop/money.py"]);
    let cache = t.root.join(".git/gate/cache/python.json");
    assert!(cache.is_file(), "the first run wrote the cache");
    // The graph kept from that run is corrupt too: neither is trusted.
    let graph = t.root.join(".git/gate/cache/graph.bin");
    assert!(graph.is_file(), "the first run kept its graph");
    std::fs::write(&graph, b"\xff\xff\xff").unwrap();
    std::fs::write(&cache, "{ not json").unwrap();
    let out = t
        .gate(&["--files", "src/shop/money.py", "--json", "--list"])
        .output()
        .unwrap();
    assert!(
        stderr_of(&out).contains("corrupt plan cache"),
        "{}",
        stderr_of(&out)
    );
    assert!(
        stderr_of(&out).contains("corrupt graph cache"),
        "{}",
        stderr_of(&out)
    );
    let after: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(selected(&after), selected(&before));
    std::fs::write(
        &cache,
        r#"{"format":999,"analyzer":"gate 9","grammar":"x","entries":{}}"#,
    )
    .unwrap();
    let out = t.gate(&["plan"]).output().unwrap();
    assert!(
        stderr_of(&out).contains("rebuilding it"),
        "{}",
        stderr_of(&out)
    );
}

#[test]
fn no_input_and_bad_flags_exit_3() {
    let t = TestRepo::from_fixture("shop");
    let out = t.gate(&[]).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = stderr_of(&out);
    assert!(
        err.starts_with("error: nothing to gate: give a range (`--affected origin/main...HEAD`)"),
        "{err}"
    );
    assert!(err.contains("see 'gate --help'"), "{err}");
    assert_eq!(
        t.gate(&["--bogus"]).output().unwrap().status.code(),
        Some(3)
    );
}
