//! Bad input: one clear line naming the file and the fact, a distinct exit code, never a panic
//! and never a silently empty selection.

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
    assert!(stderr_of(&out).contains("nothing to gate"));
    assert_eq!(
        t.gate(&["--bogus"]).output().unwrap().status.code(),
        Some(3)
    );
}
