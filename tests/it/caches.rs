//! Caches are checked before they are trusted, and records survive a killed run.

use crate::support::{TestRepo, selected, text};

/// A small seeded generator: the same flips on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn random_byte_flips_in_every_cache_are_caught_and_never_change_a_selection() {
    let t = TestRepo::from_fixture("shop");
    t.append("src/shop/money.py", "\n");
    t.append("tests/data/prices.json", "\n");
    t.commit("change");
    let args = ["--affected", "HEAD~1...HEAD"];
    let key = |r: &serde_json::Value| {
        let rows: Vec<(String, String)> = r["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| (f["path"].to_string(), f["verdict"].to_string()))
            .collect();
        (selected(r), rows, r["test_files"].clone())
    };
    let baseline = key(&t.report(&args));
    assert!(!baseline.0.is_empty());
    let cache = t.root.join(".git/gate/cache");
    let files = ["tree.bin", "graph.bin", "python.json"];
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    let mut warned = 0;
    for i in 0..150 {
        let file = cache.join(files[i % files.len()]);
        let mut bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let at = (rng.next() % bytes.len() as u64) as usize;
        bytes[at] ^= 1 << (rng.next() % 8);
        std::fs::write(&file, &bytes).unwrap();
        if files[i % 3] == "python.json" {
            // The facts are read only when no kept graph serves the tree.
            std::fs::remove_file(cache.join("graph.bin")).unwrap();
        }
        let out = t
            .gate(&["--affected", "HEAD~1...HEAD", "--json", "--list"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "flip {i} at byte {at} of {}: {stderr}",
            files[i % 3]
        );
        warned += usize::from(stderr.contains("corrupt"));
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            key(&r),
            baseline,
            "flip {i} at byte {at} of {}",
            files[i % 3]
        );
    }
    // A flip in a file's leading tag reads as another version (rebuilt without a word);
    // every other flip is named.
    assert!(warned >= 140, "only {warned} of 150 flips were reported");
}

/// What a run keeps, the next run reads back: no cache is ever called corrupt after runs that
/// fingerprint (the interpreter's identity kept beside the facts) and patch the graph.
#[test]
fn a_warm_run_reads_back_every_cache_the_last_one_wrote() {
    let t = TestRepo::from_fixture("shop");
    t.append("src/shop/money.py", "\n");
    t.commit("change");
    let db = format!("sqlite:{}", t.root.join(".git/gate/h.sqlite").display());
    for run in 0..3 {
        if run == 2 {
            // A new commit: the kept graph is patched, the facts cache read.
            t.append("src/shop/money.py", "\n# again\n");
            t.commit("again");
        }
        let out = t
            .gate(&["--affected", "HEAD~1...HEAD", "--json"])
            .env("GATE_DB", &db)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "run {run}: {stderr}");
        assert!(!stderr.contains("corrupt"), "run {run}: {stderr}");
    }
}

#[test]
fn a_torn_decision_line_is_read_past_and_never_glued_to_the_next_record() {
    let t = TestRepo::from_fixture("shop");
    t.append("scripts/deploy.ini", "port = 22\n");
    t.commit("script");
    let log = t.root.join(".git/gate/decisions.jsonl");
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    std::fs::write(&log, "{\"citation\":\"OPS-1\",\"us").unwrap();
    let out = t
        .gate(&[
            "--affected",
            "HEAD~1...HEAD",
            "--list",
            "--affected-decision",
            "OPS-2 reviewed",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("line 1 is not a whole record"),
        "{}",
        text(&out)
    );
    let written = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = written.lines().collect();
    assert_eq!(lines.len(), 2, "{written}");
    let record: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
    assert_eq!(record["citation"], "OPS-2 reviewed");
}

#[test]
fn temporary_files_a_killed_run_left_in_the_cache_are_removed() {
    let t = TestRepo::from_fixture("shop");
    let cache = t.root.join(".git/gate/cache");
    std::fs::create_dir_all(&cache).unwrap();
    // No process has these pids.
    let stale = [
        "python.json.tmp4000000001",
        "graph.bin.tmp4000000002",
        "tree.bin.tmp4000000003",
    ];
    for name in stale {
        std::fs::write(cache.join(name), "half a file").unwrap();
    }
    t.append("src/shop/money.py", "\n");
    t.commit("touch money");
    t.gate(&["--affected", "HEAD~1...HEAD", "--list"])
        .assert()
        .success();
    for name in stale {
        assert!(!cache.join(name).exists(), "{name} is still there");
    }
    assert!(cache.join("python.json").is_file() && cache.join("graph.bin").is_file());
}
