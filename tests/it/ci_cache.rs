//! The CI cache key the shipped workflows document (`gate-<os>-<sha>`, restoring the newest
//! `gate-<os>-` when this commit has none): `.git/gate/cache` is keyed by blob id and checked
//! before it is trusted, so a cache an earlier commit left is a valid start for a later one.
//! Real clones of a real remote, as CI checks them out: the restored cache gives the answer a
//! cold clone gives, parsing only what changed; a damaged one gives it too.

use crate::push_support::Remote;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The remote with commit A (a change on master, the "main" build that left a cache) and a
/// later commit B that changes a module and adds a test file importing it: a new file set, so
/// no kept graph serves B and the facts cache is what a warm gate reads.
struct Commits {
    r: Remote,
    a: String,
    b: String,
}

fn commits() -> Commits {
    let r = Remote::with_fixture("shop");
    r.append("src/shop/money.py", "\nX = 1\n");
    r.commit("A: money");
    let a = r.head();
    r.append("src/shop/tax.py", "\n# rates reviewed\n");
    r.write(
        "tests/test_rates.py",
        "from shop.tax import *\n\n\ndef test_rates():\n    assert True\n",
    );
    r.commit("B: tax and a test");
    let b = r.head();
    r.git(&["push", "-q", "origin", "master"]);
    Commits { r, a, b }
}

impl Commits {
    /// A fresh clone of the remote (its own folder, as a CI runner's checkout), at `commit`.
    fn clone_at(&self, name: &str, commit: &str) -> PathBuf {
        let dir = self.r.dir.path();
        self.r.git_in(dir, &["clone", "-q", "remote.git", name]);
        let clone = dir.join(name);
        self.r.git_in(&clone, &["checkout", "-q", commit]);
        clone
    }

    /// `gate --affected RANGE --json --list` in `clone`: the report (exit 0 asserted) and stderr.
    fn select(&self, clone: &Path, range: &str) -> (Value, String) {
        let ran = self
            .r
            .gate_in(clone, &["--affected", range, "--json", "--list"]);
        assert!(ran.ok, "{}", ran.text);
        let report: Value = serde_json::from_str(&ran.stdout).unwrap();
        (report, ran.text[ran.stdout.len()..].to_string())
    }
}

/// The report without its wall time: everything else — rows, reasons, selection, command,
/// the frozen decision's id — must match byte for byte.
fn answer(mut report: Value) -> Value {
    report.as_object_mut().unwrap().remove("duration_ms");
    report
}

/// The facts cache's entry keys (blob ids, prefixed for non-Python files).
fn facts_keys(clone: &Path) -> BTreeSet<String> {
    let path = clone.join(".git/gate/cache/python.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let cache: Value = serde_json::from_str(&text).unwrap();
    cache["entries"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

/// What actions/cache does: the saved folder put back under another clone's `.git`.
fn restore(from: &Path, to: &Path) {
    let cache = to.join(".git/gate/cache");
    crate::support::copy_tree(&from.join(".git/gate/cache"), &cache);
}

#[test]
fn a_cache_restored_from_an_earlier_commit_gives_the_cold_answer_and_parses_only_what_changed() {
    let c = commits();
    // Clone 1: the build of A (a push to main) gates A and leaves its cache.
    let one = c.clone_at("one", &c.a);
    let range_a = format!("{}~1...{}", c.a, c.a);
    let (built, _) = c.select(&one, &range_a);
    assert_eq!(
        crate::support::selected(&built),
        [
            "tests/test_cart.py",
            "tests/test_checkout.py",
            "tests/test_money.py",
            "tests/test_patch.py"
        ]
    );
    let saved = facts_keys(&one);

    // Clone 2: B's pull request, its cache restored from A's (the `restore-keys` prefix match).
    let two = c.clone_at("two", &c.b);
    restore(&one, &two);
    let range = format!("{}...{}", c.a, c.b);
    let (warm, said) = c.select(&two, &range);
    assert!(
        !said.contains("cache"),
        "a restored cache is read, never warned of: {said}"
    );
    // Clone 3: the same commit, no cache.
    let three = c.clone_at("three", &c.b);
    assert!(!three.join(".git/gate/cache").exists());
    let (cold, _) = c.select(&three, &range);
    assert_eq!(answer(warm.clone()), answer(cold));
    assert!(
        crate::support::selected(&warm).contains(&"tests/test_rates.py".to_string()),
        "{warm:#}"
    );

    // The restored cache was used: the warm clone parsed exactly B's two changed files (their
    // new blobs are the only entries it added to the facts it restored), where the cold clone
    // parsed every analysed file of B.
    let changed: BTreeSet<String> = ["src/shop/tax.py", "tests/test_rates.py"]
        .iter()
        .map(|p| {
            c.r.git(&["rev-parse", &format!("{}:{p}", c.b)])
                .trim()
                .to_string()
        })
        .collect();
    let warm_keys = facts_keys(&two);
    assert!(
        warm_keys.is_superset(&saved),
        "the restored entries are kept"
    );
    let added: BTreeSet<String> = warm_keys.difference(&saved).cloned().collect();
    assert_eq!(added, changed, "only the changed files were parsed");
    let cold_keys = facts_keys(&three);
    assert!(cold_keys.is_superset(&changed));
    assert!(
        cold_keys.len() > changed.len() + 10,
        "the cold clone parsed the whole tree: {cold_keys:?}"
    );
}

#[test]
fn a_truncated_or_corrupt_restored_cache_never_changes_the_answer() {
    let c = commits();
    let one = c.clone_at("one", &c.a);
    c.select(&one, &format!("{}~1...{}", c.a, c.a));
    let range = format!("{}...{}", c.a, c.b);
    let cold_clone = c.clone_at("cold", &c.b);
    let (cold, _) = c.select(&cold_clone, &range);

    let files = ["python.json", "graph.bin", "tree.bin"];
    for (i, damage) in ["truncated", "corrupt"].iter().enumerate() {
        let clone = c.clone_at(&format!("damaged-{i}"), &c.b);
        restore(&one, &clone);
        for name in files {
            let file = clone.join(".git/gate/cache").join(name);
            let mut bytes = std::fs::read(&file).unwrap();
            if *damage == "truncated" {
                // An upload or a download cut short.
                bytes.truncate(bytes.len() / 2);
            } else {
                // Same length, one byte flipped in the middle of the data.
                let at = bytes.len() * 2 / 3;
                bytes[at] ^= 0x20;
            }
            std::fs::write(&file, bytes).unwrap();
        }
        let (warm, said) = c.select(&clone, &range);
        assert_eq!(answer(warm), answer(cold.clone()), "{damage} cache");
        // Each damaged file is named, and rebuilt rather than trusted.
        assert!(said.contains("corrupt"), "{damage}: {said}");
        let keys = facts_keys(&clone);
        assert!(
            keys.len() >= 20,
            "{damage}: the facts cache was rebuilt whole: {keys:?}"
        );
    }
}

/// The kept graph travels too: a commit with the same files as the one whose cache was
/// restored patches the restored graph (`GATE_TIMINGS` names the stage) instead of building
/// one, and answers as a cold clone does.
#[test]
fn a_restored_graph_serves_a_later_commit_with_the_same_files() {
    let c = commits();
    // C: B's files, one of them changed.
    c.r.append("src/shop/tax.py", "\n# and again\n");
    c.r.commit("C: tax");
    let later = c.r.head();
    c.r.git(&["push", "-q", "origin", "master"]);
    let two = c.clone_at("two", &c.b);
    c.select(&two, &format!("{}...{}", c.a, c.b));
    assert!(two.join(".git/gate/cache/graph.bin").is_file());

    let range = format!("{}...{}", c.b, later);
    let stages = |clone: &Path| {
        let out = std::process::Command::new(crate::push_support::gate_bin())
            .args(["--affected", &range, "--json", "--list"])
            .current_dir(clone)
            .env("HOME", c.r.dir.path())
            .env("NO_COLOR", "1")
            .env("GATE_TIMINGS", "1")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", crate::support::text(&out));
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        (
            answer(report),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let warm_clone = c.clone_at("warm", &later);
    restore(&two, &warm_clone);
    let (warm, said) = stages(&warm_clone);
    assert!(said.contains("stored graph loaded"), "{said}");
    assert!(said.contains("changed files parsed"), "{said}");
    assert!(!said.contains("facts ready"), "{said}");
    let (cold, said) = stages(&c.clone_at("cold", &later));
    assert!(!said.contains("stored graph loaded"), "{said}");
    assert!(said.contains("facts ready"), "{said}");
    assert_eq!(warm, cold);
}
