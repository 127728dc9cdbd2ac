//! `--shard K/N`: a selection split over N legs. Every selected unit is in exactly one shard,
//! whatever the selection and N (a seeded space of generated projects and changes); the split
//! follows recorded durations; legs given one decision share its split even after newer
//! durations are recorded; a leg without one finds the split frozen for its commit; an empty
//! shard runs nothing and exits 0; a decision that does not fit is refused by name; and two
//! shards really run by pytest run exactly the tests the unsharded run does.

use crate::history::{Kind, Store, p, record};
use crate::support::{Rng, TestRepo, text};
use serde_json::Value;
use std::collections::BTreeSet;

/// A project of `modules` modules and `tests` test files, each test file importing a few
/// modules picked by `rng`.
fn project(rng: &mut Rng, modules: usize, tests: usize) -> TestRepo {
    let t = TestRepo::from_fixture("shop");
    for m in 0..modules {
        t.write(&format!("src/gen/m{m}.py"), &format!("VALUE = {m}\n"));
    }
    t.write("src/gen/__init__.py", "");
    for k in 0..tests {
        let imports: BTreeSet<usize> = (0..1 + rng.below(3)).map(|_| rng.below(modules)).collect();
        let mut body = String::new();
        for m in &imports {
            body.push_str(&format!("from gen import m{m}\n"));
        }
        body.push_str(&format!(
            "\n\ndef test_{k}():\n    assert {} >= 0\n",
            imports
                .iter()
                .map(|m| format!("m{m}.VALUE"))
                .collect::<Vec<_>>()
                .join(" + ")
        ));
        t.write(&format!("tests/gen/test_g{k}.py"), &body);
    }
    t.write(
        "pyproject.toml",
        "[tool.pytest.ini_options]\npythonpath = [\"src\"]\n",
    );
    t.commit("generated project");
    t
}

fn units(report: &Value) -> Vec<String> {
    report["shard"]["units"]
        .as_array()
        .unwrap_or_else(|| panic!("no shard in {report}"))
        .iter()
        .map(|u| u.as_str().unwrap().to_string())
        .collect()
}

fn sel(report: &Value) -> BTreeSet<String> {
    crate::support::selected(report).into_iter().collect()
}

/// Seeded: projects of 6–14 modules and 5–30 test files, a change to 1–3 modules, N from 1 to
/// 7. The shards' units are pairwise disjoint and together the selection, and the legs name
/// one decision.
#[test]
fn every_selected_unit_is_in_exactly_one_shard() {
    let mut rng = Rng(0x5eed_0032);
    let mut cases = 0;
    for case in 0..12 {
        let modules = 6 + rng.below(9);
        let tests = 5 + rng.below(26);
        let t = project(&mut rng, modules, tests);
        t.branch("change");
        t.checkout("change");
        for _ in 0..1 + rng.below(3) {
            let m = rng.below(modules);
            t.append(&format!("src/gen/m{m}.py"), "\n# touched\n");
        }
        t.commit("change");
        let whole = sel(&t.report(&["--affected", "master...HEAD"]));
        for _ in 0..3 {
            let n = 1 + rng.below(7);
            let mut seen: BTreeSet<String> = BTreeSet::new();
            let mut decisions = BTreeSet::new();
            for k in 1..=n {
                let shard = format!("{k}/{n}");
                let r = t.report(&["--affected", "master...HEAD", "--shard", &shard]);
                assert_eq!(r["shard"]["shard"], shard.as_str());
                decisions.insert(r["frozen_decision"].as_str().unwrap().to_string());
                for u in units(&r) {
                    assert!(
                        seen.insert(u.clone()),
                        "case {case}: {u} is in two shards of {n}"
                    );
                }
            }
            assert_eq!(
                seen, whole,
                "case {case}: the {n} shards are not the selection"
            );
            assert_eq!(
                decisions.len(),
                1,
                "case {case}: the legs froze {decisions:?}"
            );
            cases += 1;
        }
    }
    assert_eq!(cases, 36);
}

/// A JUnit report of one test per unit, each taking `ms`.
fn junit(t: &TestRepo, name: &str, units: &[(&str, u64)]) -> std::path::PathBuf {
    let mut xml = String::from("<?xml version=\"1.0\"?><testsuites><testsuite name=\"pytest\">");
    for (file, ms) in units {
        let classname = file.trim_end_matches(".py").replace('/', ".");
        xml.push_str(&format!(
            "<testcase classname=\"{classname}\" name=\"test_a\" file=\"{file}\" time=\"{:.3}\"/>",
            *ms as f64 / 1000.0
        ));
    }
    xml.push_str("</testsuite></testsuites>");
    let path = t.root.parent().unwrap().join(format!("{name}.xml"));
    std::fs::write(&path, xml).unwrap();
    path
}

const SHOP: [&str; 5] = [
    "tests/test_cart.py",
    "tests/test_checkout.py",
    "tests/test_money.py",
    "tests/test_patch.py",
    "tests/test_plugins.py",
];

/// Records `durations` for the shop's five selected test files under environment `py`, dated
/// before the test repository's commits (a split reads the legs recorded before its commit
/// was made).
fn recorded(t: &TestRepo, store: &Store, run: &str, durations: [u64; 5]) {
    let units: Vec<(&str, u64)> = SHOP.iter().copied().zip(durations).collect();
    let xml = junit(t, run, &units);
    let out = record(t, store, &["--junit", p(&xml), "--run", run, "--leg", "py"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    store.execute("UPDATE runs SET recorded_unix = 1600000000");
}

fn change(t: &TestRepo) {
    t.branch("change");
    t.checkout("change");
    t.append("src/shop/__init__.py", "\n# touched\n");
    t.commit("change");
}

fn leg(t: &TestRepo, store: &Store, shard: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "--affected",
        "master...HEAD",
        "--shard",
        shard,
        "--leg",
        "py",
        "--db",
        store.url.as_str(),
    ];
    args.extend(extra);
    t.report(&args)
}

on_both!(legs_share_the_frozen_split_and_it_follows_the_durations: frozen_split_sqlite, frozen_split_postgres);
/// One long test file and four short ones on 2 shards: the long one alone. Then the
/// durations turn around: legs given the select job's decision keep its split; the same
/// commit without --decision finds that split too; a new commit packs by the new figures.
fn legs_share_the_frozen_split_and_it_follows_the_durations(kind: Kind) {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(kind, &t);
    recorded(&t, &store, "m1", [9_000, 1_000, 1_000, 1_000, 1_000]);
    change(&t);
    let select = leg(&t, &store, "1/2", &[]);
    let id = select["frozen_decision"].as_str().unwrap().to_string();
    let long = "tests/test_cart.py";
    let first: Vec<Vec<String>> = ["1/2", "2/2"]
        .iter()
        .map(|s| units(&leg(&t, &store, s, &["--decision", &id])))
        .collect();
    assert!(
        first.contains(&vec![long.to_string()]),
        "the 9 s file is not alone: {first:?}"
    );
    assert_eq!(select["shard"]["stand_in"], "none");
    assert_eq!(select["shard"]["environment"], "py");
    // The figures turn around: the long file is now short, another long.
    recorded(&t, &store, "m2", [10, 1_000, 1_000, 1_000, 60_000]);
    recorded(&t, &store, "m3", [10, 1_000, 1_000, 1_000, 60_000]);
    for (k, s) in ["1/2", "2/2"].iter().enumerate() {
        let again = leg(&t, &store, s, &["--decision", &id]);
        assert_eq!(
            units(&again),
            first[k],
            "leg {s} moved after newer durations"
        );
        assert_eq!(again["frozen_decision"], id.as_str());
        assert_eq!(again["shard"]["earlier"], true);
        let found = leg(&t, &store, s, &[]);
        assert_eq!(units(&found), first[k], "leg {s} without --decision");
        assert_eq!(found["frozen_decision"], id.as_str());
    }
    // A new commit is a new split, by the new figures.
    t.append("src/shop/__init__.py", "\n# again\n");
    t.commit("change again");
    let next: Vec<Vec<String>> = ["1/2", "2/2"]
        .iter()
        .map(|s| units(&leg(&t, &store, s, &[])))
        .collect();
    assert!(
        next.contains(&vec!["tests/test_plugins.py".to_string()]),
        "the 60 s file is not alone: {next:?}"
    );
}

on_both!(an_unrecorded_unit_weighs_the_mean_of_the_recorded: stand_in_sqlite, stand_in_postgres);
/// Two of the five have no recorded duration: each weighs the mean of the recorded, said so.
fn an_unrecorded_unit_weighs_the_mean_of_the_recorded(kind: Kind) {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(kind, &t);
    let units: Vec<(&str, u64)> = vec![(SHOP[0], 3_000), (SHOP[1], 1_000), (SHOP[2], 2_000)];
    let xml = junit(&t, "partial", &units);
    let out = record(
        &t,
        &store,
        &["--junit", p(&xml), "--run", "m1", "--leg", "py"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    store.execute("UPDATE runs SET recorded_unix = 1600000000");
    change(&t);
    let r = leg(&t, &store, "1/2", &[]);
    assert_eq!(r["shard"]["stand_in"], "mean");
    assert_eq!(r["shard"]["stand_in_ms"], 2_000);
    assert_eq!(r["shard"]["unrecorded"], 2);
    let out = t
        .gate(&[
            "--affected",
            "master...HEAD",
            "--shard",
            "1/2",
            "--leg",
            "py",
            "--db",
            &store.url,
            "--list",
        ])
        .output()
        .unwrap();
    let shown = text(&out);
    assert!(
        shown.contains("2 unrecorded weigh the mean, 2.0 s"),
        "{shown}"
    );
}

/// Nothing recorded: units are packed by their size, and the report says so.
#[test]
fn with_nothing_recorded_units_are_packed_by_size() {
    let t = TestRepo::from_fixture("shop");
    change(&t);
    let r = t.report(&["--affected", "master...HEAD", "--shard", "2/2"]);
    assert_eq!(r["shard"]["stand_in"], "file_size");
    let out = t
        .gate(&["--affected", "master...HEAD", "--shard", "2/2", "--list"])
        .output()
        .unwrap();
    let shown = text(&out);
    assert!(shown.contains("by size (nothing recorded under `default`)"));
    let unshared = "legs on other machines may split it otherwise";
    assert!(!shown.contains(unshared), "outside CI: {shown}");
    // In CI, a leg splitting from its own machine's store is told how to share one split.
    let out = t
        .gate(&["--affected", "master...HEAD", "--shard", "1/3", "--list"])
        .env("GITHUB_RUN_ID", "7")
        .output()
        .unwrap();
    assert!(text(&out).contains(unshared), "{}", text(&out));
}

/// More shards than selected units: the empty ones run nothing (no runner starts, so no
/// "no tests collected"), say so in one line, and exit 0.
#[test]
fn an_empty_shard_runs_nothing_and_exits_0() {
    let t = TestRepo::from_fixture("shop");
    change(&t);
    let mut empty = 0;
    for k in 1..=9 {
        let shard = format!("{k}/9");
        let out = t
            .gate(&["--affected", "master...HEAD", "--shard", &shard])
            .env("PATH", "/nonexistent")
            .output()
            .unwrap();
        let shown = text(&out);
        let r = t.report(&["--affected", "master...HEAD", "--shard", &shard]);
        if units(&r).is_empty() {
            empty += 1;
            assert_eq!(out.status.code(), Some(0), "{shown}");
            assert!(
                shown.contains(&format!("shard {k}/9: 0 of 5 test units")),
                "{shown}"
            );
            assert!(shown.contains("command: none — nothing to run"), "{shown}");
            assert!(!shown.contains("no tests"), "{shown}");
        } else {
            // With no python3 on PATH, a shard that runs something cannot start its runner.
            assert_ne!(out.status.code(), Some(0), "{shown}");
        }
    }
    assert_eq!(empty, 4);
}

/// A decision that does not fit the leg is refused by name, exit 3: unknown, another commit,
/// another N, one frozen without a split.
#[test]
fn a_decision_that_does_not_fit_is_refused() {
    let t = TestRepo::from_fixture("shop");
    change(&t);
    let id = t.report(&["--affected", "master...HEAD", "--shard", "1/3"])["frozen_decision"]
        .as_str()
        .unwrap()
        .to_string();
    let unsplit = t.report(&["--affected", "master...HEAD"])["frozen_decision"]
        .as_str()
        .unwrap()
        .to_string();
    let refused = |args: &[&str], says: &str| {
        let mut all = vec!["--affected", "master...HEAD", "--list"];
        all.extend(args);
        let out = t.gate(&all).output().unwrap();
        let shown = text(&out);
        assert_eq!(out.status.code(), Some(3), "{shown}");
        assert!(shown.contains(says), "{args:?}: {shown}");
    };
    refused(
        &["--shard", "1/3", "--decision", &"0".repeat(64)],
        "the store holds no decision with this id",
    );
    refused(
        &["--shard", "1/2", "--decision", &id],
        "splits the selection into 3 shards, not 2",
    );
    refused(
        &["--shard", "1/3", "--decision", &unsplit],
        "was frozen without a split",
    );
    t.append("src/shop/__init__.py", "\n# later\n");
    t.commit("later");
    refused(
        &["--shard", "1/3", "--decision", &id],
        "was frozen for commit",
    );
    let out = t
        .gate(&["--affected", "master...HEAD", "--decision", &id])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "--decision without --shard");
}

/// Two shards run for real by pytest run, together, exactly the tests one unsharded run does,
/// each once.
#[test]
fn two_real_shards_run_what_one_run_does() {
    let t = TestRepo::from_fixture("shop");
    change(&t);
    let ids = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["--affected", "master...HEAD", "--json", "--no-reuse"];
        all.extend(args);
        let out = t.gate(&all).output().unwrap();
        let r: Value = serde_json::from_slice(&out.stdout).unwrap();
        r["tests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["id"].as_str().unwrap().to_string())
            .collect()
    };
    let whole: BTreeSet<String> = ids(&[]).into_iter().collect();
    assert_eq!(whole.len(), 5, "{whole:?}");
    let mut both = ids(&["--shard", "1/2"]);
    both.extend(ids(&["--shard", "2/2"]));
    let once: BTreeSet<String> = both.iter().cloned().collect();
    assert_eq!(
        once.len(),
        both.len(),
        "a test ran in both shards: {both:?}"
    );
    assert_eq!(once, whole);
}

/// `--shard-by test`: one file holds most of the tests; split by test, both shards run some of
/// it, together exactly what one run does, each test once; the ledger keeps no pass of a part
/// of a file.
#[test]
fn a_long_file_is_split_by_test() {
    let t = TestRepo::from_fixture("shop");
    let mut big = String::from("import shop\n\n");
    for i in 0..8 {
        big.push_str(&format!("\ndef test_{i}():\n    assert shop is not None\n"));
    }
    t.write("tests/test_big.py", &big);
    t.commit("a long file");
    change(&t);
    let run = |args: &[&str]| -> (Vec<String>, Value) {
        let mut all = vec!["--affected", "master...HEAD", "--json", "--no-reuse"];
        all.extend(args);
        let out = t.gate(&all).output().unwrap();
        let r: Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
        // Every test passes: a leg given node ids is not "broken" for naming no whole file.
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out));
        let ids = r["tests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["id"].as_str().unwrap().to_string())
            .collect();
        (ids, r)
    };
    // What a run of the change would reuse (it runs the rest).
    let reused = || {
        let out = t
            .gate(&["--affected", "master...HEAD", "--json"])
            .output()
            .unwrap();
        let again: Value = serde_json::from_slice(&out.stdout).unwrap();
        again["reused"].to_string()
    };
    let (one, r1) = run(&["--shard", "1/2", "--shard-by", "test"]);
    let (two, r2) = run(&["--shard", "2/2", "--shard-by", "test"]);
    // No pass of a part of a file enters the ledger: the next run reuses none of it.
    let after_shards = reused();
    assert!(
        !after_shards.contains("tests/test_big.py"),
        "a part of the file entered the ledger: {after_shards}"
    );
    let (whole, _) = run(&[]);
    let whole: BTreeSet<String> = whole.into_iter().collect();
    assert_eq!(
        whole
            .iter()
            .filter(|i| i.starts_with("tests/test_big.py::"))
            .count(),
        8
    );
    // The control: a whole file's pass is reused.
    assert!(reused().contains("tests/test_big.py"));
    for (ids, r) in [(&one, &r1), (&two, &r2)] {
        assert!(
            ids.iter().any(|i| i.starts_with("tests/test_big.py::")),
            "a shard ran none of the long file: {ids:?}"
        );
        assert!(units(r).iter().any(|u| u.contains("::")), "{r}");
    }
    let mut both = one.clone();
    both.extend(two);
    let once: BTreeSet<String> = both.iter().cloned().collect();
    assert_eq!(
        once.len(),
        both.len(),
        "a test ran in both shards: {both:?}"
    );
    assert_eq!(once, whole);
    let out = t
        .gate(&[
            "--affected",
            "master...HEAD",
            "--list",
            "--shard-by",
            "test",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "--shard-by without --shard: {}",
        text(&out)
    );
}

/// `gate verify` runs its shard too, and its receipt says which: the two shards' units are
/// the selection, and their tests ran.
#[test]
fn verify_runs_its_shard() {
    let t = TestRepo::from_fixture("shop");
    change(&t);
    let mut seen = BTreeSet::new();
    for k in ["1/2", "2/2"] {
        let out = t
            .gate(&["verify", "master...HEAD", "--shard", k, "--json"])
            .output()
            .unwrap();
        let r: Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        assert_eq!(r["shard"]["shard"], k);
        let ran: BTreeSet<String> = r["test_summary"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["file"].as_str().unwrap().to_string())
            .collect();
        let own: BTreeSet<String> = units(&r).into_iter().collect();
        assert_eq!(ran, own, "verify {k} ran other files than its shard's");
        seen.extend(own);
    }
    assert_eq!(seen, SHOP.iter().map(|s| s.to_string()).collect());
}

/// `--shard-by test` where pytest's rootdir is not the repository root (a runner option moves
/// it): node ids are relative to the rootdir, so `sub/tests/test_a.py::test_x` reads
/// `tests/test_a.py::test_x` — another selected file's name. Each test is placed by its own
/// file: the failing root test runs in a shard and fails it.
#[test]
fn split_by_test_places_each_test_by_its_own_file_whatever_the_rootdir() {
    let t = TestRepo::from_fixture("shop");
    t.write(
        ".gate.toml",
        "runner = [\"python3\", \"-m\", \"pytest\", \"--rootdir=sub\", \"--import-mode=importlib\"]\n",
    );
    t.write(
        "pyproject.toml",
        "[tool.pytest.ini_options]\ntestpaths = [\"tests\", \"sub/tests\"]\npythonpath = [\"src\", \"tests\"]\n",
    );
    t.write(
        "tests/test_a.py",
        "import shop\n\n\ndef test_x():\n    assert shop\n\n\ndef test_y():\n    assert not hasattr(shop, 'BROKEN')\n",
    );
    t.write(
        "sub/tests/test_a.py",
        "import shop\n\n\ndef test_x():\n    assert shop\n",
    );
    t.commit("two files of one name");
    t.branch("change");
    t.checkout("change");
    t.append("src/shop/__init__.py", "\nBROKEN = True\n");
    t.commit("break test_y");
    let mut failed = 0;
    let mut ran = Vec::new();
    for k in ["1/2", "2/2"] {
        let out = t
            .gate(&[
                "--affected",
                "master...HEAD",
                "--json",
                "--shard",
                k,
                "--shard-by",
                "test",
            ])
            .output()
            .unwrap();
        let r: Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
        if out.status.code() == Some(1) {
            failed += 1;
        }
        ran.extend(units(&r));
    }
    assert_eq!(failed, 1, "the failing test ran in no shard: {ran:?}");
    assert!(
        ran.contains(&"tests/test_a.py::test_y".to_string()),
        "{ran:?}"
    );
    assert!(
        ran.contains(&"sub/tests/test_a.py::test_x".to_string()),
        "{ran:?}"
    );
}

/// `--shard-by test` lists the working tree's tests: when the gated commit is not what the
/// working tree holds, it is refused (a test only the gated commit has would be in no shard).
#[test]
fn split_by_test_refuses_a_working_tree_that_is_not_the_gated_tree() {
    let t = TestRepo::from_fixture("shop");
    change(&t);
    t.checkout("master");
    let out = t
        .gate(&[
            "--affected",
            "master...change",
            "--list",
            "--shard",
            "1/2",
            "--shard-by",
            "test",
        ])
        .output()
        .unwrap();
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(3), "{shown}");
    assert!(shown.contains("not the gated commit's tree"), "{shown}");
    // By file, the tests run in a checkout of the gated commit: allowed.
    let out = t
        .gate(&["--affected", "master...change", "--list", "--shard", "1/2"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

/// More shards than any matrix holds is refused before anything is allocated.
#[test]
fn too_many_shards_are_refused() {
    let t = TestRepo::from_fixture("shop");
    change(&t);
    let out = t
        .gate(&[
            "--affected",
            "master...HEAD",
            "--list",
            "--json",
            "--shard",
            "1/4294967295",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc.to_string().contains("at most 1024 shards"), "{doc}");
}

/// A project run by unittest cannot be split by test: refused by name.
#[test]
fn a_unittest_project_is_not_split_by_test() {
    let u = TestRepo::from_fixture("unitshop");
    u.append("shop/money.py", "\n# touched\n");
    u.commit("change");
    let out = u
        .gate(&[
            "--since",
            "HEAD~1",
            "--list",
            "--shard",
            "1/2",
            "--shard-by",
            "test",
        ])
        .output()
        .unwrap();
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(3), "{shown}");
    assert!(
        shown.contains("--shard-by test splits pytest's node ids"),
        "{shown}"
    );
}
