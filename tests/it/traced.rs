//! Traced edges: what a gated pytest run really opened joins the selection. A test reads a
//! data file through a path gate cannot evaluate; once a gated run has traced it, a change to
//! that file selects it, shown as a traced edge — checked with real pytest runs.

use crate::history::{Kind, Store};
use crate::plans::validate;
use crate::support::{TestRepo, row, selected, strings, text};

fn change_data(t: &TestRepo) {
    t.write("data/x.json", "{\"v\": 2}\n");
    t.commit("change the data both tests read");
}

#[test]
fn a_file_a_traced_run_opened_selects_that_test() {
    // Before any trace: the static graph knows only the literal path.
    let t = TestRepo::from_fixture("traced");
    change_data(&t);
    let r = t.report(&["--affected", "HEAD~1...HEAD"]);
    assert_eq!(selected(&r), ["tests/test_a.py"]);

    let t = TestRepo::from_fixture("traced");
    t.append("tests/test_b.py", "# touched\n");
    let touched = t.commit("touch test_b");
    let out = t.gate(&["--affected", "HEAD~1...HEAD"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    change_data(&t);
    let r = t.report(&["--affected", "HEAD~1...HEAD"]);
    assert_eq!(selected(&r), ["tests/test_a.py", "tests/test_b.py"], "{r}");
    let why = format!(
        "tests/test_b.py opened data/x.json when traced at {}",
        &touched.to_string()[..12]
    );
    let data = row(&r, "data/x.json");
    assert!(
        data["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s == &why),
        "{data}"
    );
    let edge = data["edges"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["test"] == "tests/test_b.py")
        .unwrap();
    assert_eq!(edge["chain"][0]["kind"], "traced", "{edge}");
    validate("report.schema.json", &r);
    // The run itself: both tests fail on the new data, and both ran.
    let out = t.gate(&["--affected", "HEAD~1...HEAD"]).output().unwrap();
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("tests/test_b.py::test_b"), "{said}");
    // A shadow run judges against the decision that held the traced edge: both caught, and
    // evaluate lists the static gap the trace covered.
    let shadow = t.gate(&["shadow", "HEAD~1...HEAD"]).output().unwrap();
    assert_eq!(shadow.status.code(), Some(1), "{}", text(&shadow));
    let out = t.gate(&["evaluate", "--json"]).output().unwrap();
    let e: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    validate("evaluate.schema.json", &e);
    assert_eq!(e["caught"], 2, "{e:#}");
    let head = t.repo.head().unwrap().target().unwrap().to_string();
    assert_eq!(
        e["static_gaps"],
        serde_json::json!([format!(
            "{}: tests/test_b.py opened data/x.json",
            &head[..12]
        )]),
        "{e:#}"
    );
}

on_both!(a_rows_count_includes_the_tests_traced_edges_add: recount_sqlite, recount_postgres);
fn a_rows_count_includes_the_tests_traced_edges_add(kind: Kind) {
    let t = TestRepo::from_fixture("traced");
    let store = Store::new(kind, &t);
    a_module_reading_a_table(&t);
    passes(&t, &store);
    t.append("tests/test_b.py", "# touched\n");
    t.commit("touch test_b");
    passes(&t, &store);
    change_data(&t);
    t.write("src/pkg/table.json", "{\"v\": 2}\n");
    t.commit("change the table too");
    // data/x.json: test_a names it, test_b's run opened it. src/pkg/table.json: test_a by its
    // rule, test_x and test_y through config.py, which read it while it was imported.
    let counts = [
        ("data/x.json", "selects 2 test file(s) (1 by traced edges)"),
        (
            "src/pkg/table.json",
            "selects 3 test file(s) (2 by traced edges)",
        ),
    ];
    let r = listed(&t, &store, "HEAD~2...HEAD");
    for (path, count) in counts {
        assert_eq!(row(&r, path)["reasons"][0], count, "{r:#}");
    }
    let out = gate(&t, &store, &["--affected", "HEAD~2...HEAD", "--list"]);
    let human = text(&out);
    for (path, count) in counts {
        let at = human
            .find(&format!("modified {path}"))
            .unwrap_or_else(|| panic!("{human}"));
        let next = human[at..].lines().nth(1).unwrap();
        assert_eq!(next.trim(), count, "{human}");
    }
}

/// `gate ARGS` on `store`: the output.
fn gate(t: &TestRepo, store: &Store, args: &[&str]) -> std::process::Output {
    t.gate(args).env("GATE_DB", &store.url).output().unwrap()
}

/// `gate --affected HEAD~1...HEAD` on `store` runs its tests: they pass.
fn passes(t: &TestRepo, store: &Store) {
    let out = gate(t, store, &["--affected", "HEAD~1...HEAD"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

/// `gate --affected RANGE --json --list` on `store`: the report, checked against its schema.
fn listed(t: &TestRepo, store: &Store, range: &str) -> serde_json::Value {
    let out = gate(t, store, &["--affected", range, "--json", "--list"]);
    let r: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(&out)));
    validate("report.schema.json", &r);
    r
}

/// A `[[depends]]` rule binding the paths `on` (globs) to test_a, so a change to one is
/// bounded by the static graph and the traced edges can only add to it.
fn bound_to_test_a(t: &TestRepo, on: &[&str]) {
    t.write(
        ".gate.toml",
        &format!("[[depends]]\ntests = \"tests/test_a.py\"\non = {on:?}\n"),
    );
}

/// The tests a report's row for `path` selects through a traced edge.
fn traced_tests(r: &serde_json::Value, path: &str) -> Vec<String> {
    row(r, path)["edges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            e["chain"]
                .as_array()
                .unwrap()
                .iter()
                .any(|l| l["kind"] == "traced")
        })
        .map(|e| e["test"].as_str().unwrap().to_string())
        .collect()
}

on_both!(a_test_that_changes_folder_is_traced_where_it_started: chdir_sqlite, chdir_postgres);
fn a_test_that_changes_folder_is_traced_where_it_started(kind: Kind) {
    let t = TestRepo::from_fixture("traced");
    let store = Store::new(kind, &t);
    bound_to_test_a(&t, &["sub/**"]);
    t.write("sub/data.json", "{\"v\": 1}\n");
    t.commit("a data folder");
    // The first test moves into sub/ and leaves the run there; the second opens its data
    // relatively, where it is.
    t.write(
        "tests/test_chdir.py",
        "import json\nimport os\n\nROOT = os.getcwd()\n\n\ndef test_enter():\n    os.chdir(\"sub\")\n\n\n\
         def test_read():\n    try:\n        with open(\"data.json\") as f:\n            assert json.load(f)[\"v\"] == 1\n    finally:\n        os.chdir(ROOT)\n",
    );
    t.commit("a test that changes folder");
    passes(&t, &store);
    t.write("sub/data.json", "{\"v\": 2}\n");
    t.commit("change the data");
    let r = listed(&t, &store, "HEAD~1...HEAD");
    assert_eq!(
        selected(&r),
        ["tests/test_a.py", "tests/test_chdir.py"],
        "{r:#}"
    );
    assert_eq!(traced_tests(&r, "sub/data.json"), ["tests/test_chdir.py"]);
}

on_both!(a_read_through_a_symlink_selects_on_the_link_and_its_target: symlink_sqlite, symlink_postgres);
fn a_read_through_a_symlink_selects_on_the_link_and_its_target(kind: Kind) {
    let t = TestRepo::from_fixture("traced");
    let store = Store::new(kind, &t);
    bound_to_test_a(&t, &["data/**", "other/**", "fixtures"]);
    t.write("other/x.json", "{\"v\": 1}\n");
    t.commit("another data folder");
    std::os::unix::fs::symlink("data", t.root.join("fixtures")).unwrap();
    // A path no analysis evaluates (`fixtures/x.json`), read through the linked folder.
    t.write(
        "tests/test_link.py",
        "import base64\nimport json\n\nPATH = base64.b64decode(\"Zml4dHVyZXMveC5qc29u\").decode()\n\n\n\
         def test_link():\n    with open(PATH) as f:\n        assert json.load(f)[\"v\"] == 1\n",
    );
    t.commit("a test reading through a linked folder");
    passes(&t, &store);
    // Repointing the link changes what the test reads: the link's row selects it.
    std::fs::remove_file(t.root.join("fixtures")).unwrap();
    std::os::unix::fs::symlink("other", t.root.join("fixtures")).unwrap();
    t.commit("repoint the link");
    let r = listed(&t, &store, "HEAD~1...HEAD");
    assert_eq!(
        selected(&r),
        ["tests/test_a.py", "tests/test_link.py"],
        "{r:#}"
    );
    assert_eq!(traced_tests(&r, "fixtures"), ["tests/test_link.py"]);
    // The file it resolves to selects it too (traced again through the new link).
    passes(&t, &store);
    t.write("other/x.json", "{\"v\": 2}\n");
    t.commit("change the data behind the link");
    let r = listed(&t, &store, "HEAD~1...HEAD");
    assert_eq!(
        traced_tests(&r, "other/x.json"),
        ["tests/test_link.py"],
        "{r:#}"
    );
}

/// A test file whose first test reads data/flag.json, and only when its value is 1 goes on to
/// read data/y.json; its second test reads data/z.json. The paths are ones no analysis
/// evaluates.
const TWO: &str = "import base64\nimport json\n\n\ndef read(encoded):\n    with open(base64.b64decode(encoded).decode()) as f:\n        return json.load(f)[\"v\"]\n\n\n\
def test_first():\n    assert read(\"ZGF0YS9mbGFnLmpzb24=\") == 1\n    assert read(\"ZGF0YS95Lmpzb24=\") == 1\n\n\n\
def test_second():\n    assert read(\"ZGF0YS96Lmpzb24=\") == 1\n";

/// The traced fixture, `-x` in pytest's addopts, its data bound to test_a, and `TWO` added
/// in a commit of its own (HEAD).
fn two_files(t: &TestRepo) {
    t.write(
        "pyproject.toml",
        "[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\naddopts = \"-x\"\n",
    );
    bound_to_test_a(t, &["data/**"]);
    for name in ["flag", "y", "z"] {
        t.write(&format!("data/{name}.json"), "{\"v\": 1}\n");
    }
    t.commit("stop at the first failure; more data");
    t.write("tests/test_two.py", TWO);
    t.commit("a test file reading three data files");
}

/// Changes `data/NAME.json` to `v` in a commit.
fn set(t: &TestRepo, name: &str, v: u32) {
    t.write(&format!("data/{name}.json"), &format!("{{\"v\": {v}}}\n"));
    t.commit(&format!("{name} = {v}"));
}

on_both!(a_run_cut_short_adds_to_a_trace_and_a_whole_run_replaces_it: partial_sqlite, partial_postgres);
fn a_run_cut_short_adds_to_a_trace_and_a_whole_run_replaces_it(kind: Kind) {
    let t = TestRepo::from_fixture("traced");
    let store = Store::new(kind, &t);
    two_files(&t);
    passes(&t, &store);
    // test_first fails before it reads y.json, and -x stops the run before test_second reads
    // z.json: this trace is a part of the file's, which it must not replace.
    set(&t, "flag", 2);
    let out = gate(&t, &store, &["--affected", "HEAD~1...HEAD"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    for name in ["y", "z"] {
        set(&t, name, 2);
        let r = listed(&t, &store, "HEAD~1...HEAD");
        let path = format!("data/{name}.json");
        assert_eq!(traced_tests(&r, &path), ["tests/test_two.py"], "{r:#}");
    }
    // A whole, passing run of the file is all it opens now: it replaces the trace.
    set(&t, "y", 1);
    set(&t, "z", 1);
    t.write("data/flag.json", "{\"v\": 1}\n");
    t.write(
        "tests/test_two.py",
        &TWO.replace("    assert read(\"ZGF0YS95Lmpzb24=\") == 1\n", ""),
    );
    t.commit("test_first reads no y.json");
    passes(&t, &store);
    set(&t, "y", 3);
    let r = listed(&t, &store, "HEAD~1...HEAD");
    assert!(traced_tests(&r, "data/y.json").is_empty(), "{r:#}");
    assert_eq!(selected(&r), ["tests/test_a.py"], "{r:#}");
}

on_both!(an_audit_of_a_failing_run_adds_to_the_traced_edges: audit_partial_sqlite, audit_partial_postgres);
fn an_audit_of_a_failing_run_adds_to_the_traced_edges(kind: Kind) {
    let t = TestRepo::from_fixture("traced");
    let store = Store::new(kind, &t);
    two_files(&t);
    let audit = |t: &TestRepo| {
        let out = gate(t, &store, &["audit", "--tests", "tests/test_two.py"]);
        assert!(matches!(out.status.code(), Some(0 | 1)), "{}", text(&out));
    };
    audit(&t);
    // The traced run fails (exit 1) before it reads y.json or z.json: added, not replaced.
    set(&t, "flag", 2);
    audit(&t);
    for name in ["y", "z"] {
        set(&t, name, 2);
        let r = listed(&t, &store, "HEAD~1...HEAD");
        let path = format!("data/{name}.json");
        assert_eq!(traced_tests(&r, &path), ["tests/test_two.py"], "{r:#}");
    }
}

/// `src/pkg/config.py` loads `src/pkg/table.json` when it is imported, through a path no
/// analysis evaluates; two test files import it.
fn a_module_reading_a_table(t: &TestRepo) {
    t.write(
        "pyproject.toml",
        "[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\npythonpath = [\"src\"]\n",
    );
    bound_to_test_a(t, &["data/**", "src/pkg/*.json"]);
    t.write("src/pkg/__init__.py", "");
    t.write("src/pkg/table.json", "{\"v\": 1}\n");
    t.commit("a package with a table");
    t.write(
        "src/pkg/config.py",
        "import base64\nimport json\n\n\ndef _load():\n    with open(base64.b64decode(\"c3JjL3BrZy90YWJsZS5qc29u\").decode()) as f:\n        return json.load(f)\n\n\nTABLE = _load()\n",
    );
    for name in ["x", "y"] {
        t.write(
            &format!("tests/test_{name}.py"),
            "from pkg.config import TABLE\n\n\ndef test_table():\n    assert TABLE[\"v\"] == 1\n",
        );
    }
    t.commit("a module that reads its table when imported, and two tests of it");
}

on_both!(a_read_while_a_module_is_imported_counts_for_every_test_of_it: read_by_sqlite, read_by_postgres);
fn a_read_while_a_module_is_imported_counts_for_every_test_of_it(kind: Kind) {
    let t = TestRepo::from_fixture("traced");
    let store = Store::new(kind, &t);
    a_module_reading_a_table(&t);
    // One process imports config once, in test_x's collection: test_y's own trace never
    // sees the table read.
    passes(&t, &store);
    t.write("src/pkg/table.json", "{\"v\": 2}\n");
    let changed = t.commit("change the table");
    let r = listed(&t, &store, "HEAD~1...HEAD");
    assert_eq!(
        selected(&r),
        ["tests/test_a.py", "tests/test_x.py", "tests/test_y.py"],
        "{r:#}"
    );
    let table = row(&r, "src/pkg/table.json");
    let y = table["edges"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["test"] == "tests/test_y.py")
        .unwrap();
    let chain = y["chain"].as_array().unwrap();
    let read = chain.last().unwrap();
    assert_eq!(
        (&read["kind"], &read["from"], &read["to"]),
        (
            &"traced".into(),
            &"src/pkg/config.py".into(),
            &"src/pkg/table.json".into()
        ),
        "{y}"
    );
    assert!(chain[0]["from"] == "tests/test_y.py", "{y}");
    let reasons = strings(&table["reasons"]);
    assert!(
        reasons
            .iter()
            .any(|s| s.starts_with("src/pkg/config.py opened src/pkg/table.json when traced at ")),
        "{reasons:?}"
    );
    // The ledger hashes the table into test_y's fingerprint: its pass before the change is
    // not reused, so the run sees it fail on the new table.
    let out = gate(&t, &store, &["--affected", "HEAD~1...HEAD", "--json"]);
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{r:#}");
    assert!(r["reused"].as_array().unwrap().is_empty(), "{r:#}");
    let failed: Vec<&str> = r["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["outcome"] == "failed")
        .map(|t| t["file"].as_str().unwrap())
        .collect();
    assert_eq!(
        failed,
        ["tests/test_x.py", "tests/test_y.py"],
        "{changed} {r:#}"
    );
}

/// Data files read by test files whose paths no analysis evaluates: test `k` of `tests` reads
/// every `files` / `tests` of them.
fn many(t: &TestRepo, files: usize, tests: usize) {
    for i in 0..files {
        t.write(&format!("many/f{i:04}.json"), "1\n");
    }
    t.commit("many data files");
    for k in 0..tests {
        t.write(
            &format!("tests/test_many_{k:02}.py"),
            &format!(
                "import base64\nimport os\n\nFOLDER = base64.b64decode(\"bWFueQ==\").decode()\n\n\n\
                 def test_read():\n    for name in sorted(os.listdir(FOLDER)):\n        if int(name[1:5]) % {tests} == {k}:\n\
                 \x20           with open(os.path.join(FOLDER, name)) as f:\n                assert f.read()\n"
            ),
        );
    }
    t.commit("tests that read them");
}

/// How many times a gate run asked the store something: on PostgreSQL the transactions it
/// made in the store's database (each query outside one is one: the server's own count), on
/// SQLite the locks its reads took (`fcntl` on the store's files, seen by strace: each read
/// takes and drops its locks).
fn store_reads(
    kind: Kind,
    t: &TestRepo,
    store: &Store,
    args: &[&str],
) -> (std::process::Output, usize) {
    if let Kind::Postgres = kind {
        let before = store.transactions();
        let out = gate(t, store, args);
        return (out, (store.transactions() - before) as usize);
    }
    let log = t.root.parent().unwrap().join("fcntl.log");
    let cmd = t.gate_process(args);
    let out = std::process::Command::new("strace")
        .args(["-qq", "-e", "trace=fcntl", "-o"])
        .arg(&log)
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .current_dir(&t.root)
        .envs(cmd.get_envs().filter_map(|(k, v)| v.map(|v| (k, v))))
        .env("GATE_DB", &store.url)
        .output()
        .unwrap();
    let locks = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .filter(|l| l.contains("F_SETLK") || l.contains("F_OFD_SETLK"))
        .count();
    (out, locks)
}

on_both!(the_store_is_read_per_chunk_never_per_path_or_unit: batched_sqlite, batched_postgres);
fn the_store_is_read_per_chunk_never_per_path_or_unit(kind: Kind) {
    const FILES: usize = 1200;
    const TESTS: usize = 120;
    let t = TestRepo::from_fixture("traced");
    let store = Store::new(kind, &t);
    // History's own signals read the store per changed path: off, so the count is the traces'.
    t.write(
        ".gate.toml",
        "[history]\nsignals = false\n\n[[depends]]\ntests = \"tests/test_a.py\"\non = \"many/**\"\n",
    );
    t.commit("bind the data to test_a");
    many(&t, FILES, TESTS);
    passes(&t, &store);
    for i in 0..FILES {
        t.write(&format!("many/f{i:04}.json"), "2\n");
    }
    t.commit("change every data file");
    // The traced edges of every changed path (three chunks of them), read for the selection.
    let args = ["--affected", "HEAD~1...HEAD", "--json", "--no-reuse"];
    let (out, selecting) = store_reads(kind, &t, &store, &[&args[..], &["--list"]].concat());
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(selected(&r).len(), TESTS + 1, "{r:#}");
    // The run: the ledger reads what every selected unit's runs opened, before and after.
    let (out, running) = store_reads(kind, &t, &store, &args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // One read per path would be FILES reads; one per unit, 2 × TESTS (before and after the
    // run). Batched, both are a handful, whatever the sizes.
    assert!(selecting < TESTS, "{selecting} reads to select");
    assert!(running < 2 * TESTS, "{running} reads to run");
}
