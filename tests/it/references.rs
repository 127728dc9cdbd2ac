//! Reference edges: the dependencies no import graph sees, each selecting exactly the test that
//! breaks when the file breaks — shown by a real pytest run.

use crate::plans::validate;
use crate::support::{TestRepo, row, selected};

/// (changed file, broken content, the test that breaks, the edge that says why); the selection
/// is exactly that test unless `ALSO` names another one that really reaches the file.
const CASES: &[(&str, &str, &str, &str)] = &[
    (
        "src/app/data/prices.json",
        "{not json",
        "tests/test_prices.py",
        "builds the path",
    ),
    (
        "src/app/rates.json",
        "{}",
        "tests/test_rates.py",
        "src/app/rates.py",
    ),
    (
        "src/app/templates/page.html",
        "<p>no heading</p>",
        "tests/test_web.py",
        "src/app/web.py",
    ),
    (
        "src/app/plugins/alpha.py",
        "NAME = 'renamed'\n",
        "tests/test_plugins.py",
        "imports a module named at run time",
    ),
    (
        "scripts/check.sh",
        "#!/bin/sh\nexit 3\n",
        "tests/test_script.py",
        "runs scripts/check.sh",
    ),
    (
        "config/settings.ini",
        "[main]\nmode = lax\n",
        "tests/test_script.py",
        "scripts/check.sh runs",
    ),
    (
        "src/app/cli.py",
        "def main():\n    print('changed')\n",
        "tests/test_cli.py",
        "imports app.cli",
    ),
    (
        "src/app/static/site.css",
        "",
        "",
        "creates a Flask app (its static/ folder)",
    ),
    (
        "tests/features/cart.feature",
        "Feature: Cart\n",
        "tests/test_bdd.py",
        "binds the feature",
    ),
    (
        "tools/gen.py",
        "VALUE = (\n",
        "tests/test_tools.py",
        "runs `tools`",
    ),
    (
        "rules/facts.pl",
        "oops.\n",
        "tests/test_prolog.py",
        "[[reference]] rule 1",
    ),
    (
        "tests/test_data_dir/input.txt",
        "41\n",
        "tests/test_data_dir.py",
        // `Path(__file__).with_suffix("")` is evaluated: an exact path, before the convention.
        "builds the path tests/test_data_dir/input.txt",
    ),
];

/// Tests that reach a file as well as the one that breaks: `scripts/check.sh` runs
/// `python -m app.cli` (it only checks the exit code, so it survives the change).
const ALSO: &[(&str, &str)] = &[
    ("src/app/cli.py", "tests/test_script.py"),
    ("src/app/static/site.css", "tests/test_web.py"),
];

#[test]
fn each_reference_kind_selects_exactly_the_test_that_breaks() {
    for (file, broken, test, why) in CASES {
        let t = TestRepo::from_fixture("refs");
        t.write(file, broken);
        t.commit("break it");
        let out = t
            .gate(&["--affected", "HEAD~1...HEAD", "--json"])
            .output()
            .unwrap();
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let mut want: Vec<&str> = ALSO
            .iter()
            .filter(|(f, _)| f == file)
            .map(|(_, t)| *t)
            .chain(Some(*test).filter(|t| !t.is_empty()))
            .collect();
        want.sort();
        assert_eq!(selected(&report), want, "{file}: {report:#}");
        let reasons = report["selected"].to_string();
        assert!(reasons.contains(why), "{file}: `{why}` in {reasons}");
        if test.is_empty() {
            // No test reads the stylesheet's content: selected by convention, and it passes.
            assert_eq!(out.status.code(), Some(0), "{file}: {stderr}");
            continue;
        }
        assert_eq!(
            out.status.code(),
            Some(1),
            "{file}: the test really fails: {stderr}"
        );
        assert!(
            stderr.contains(&format!("FAILED {test}")),
            "{file}: {stderr}"
        );
    }
}

#[test]
fn the_unchanged_fixture_passes_its_selection() {
    let t = TestRepo::from_fixture("refs");
    t.append("src/app/data/prices.json", "\n");
    t.append("tests/features/cart.feature", "\n");
    t.commit("harmless");
    let out = t.gate(&["--affected", "HEAD~1...HEAD"]).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn near_misses_make_no_edge() {
    let t = TestRepo::from_fixture("refs");
    t.write("outside.json", "{}\n");
    t.write("data/secret.json", "{}\n");
    t.write("text/plain.txt", "a file a MIME type string looks like\n");
    t.write(
        "tests/test_near.py",
        "import json\n\n# open('data/secret.json')\nCONTENT_TYPE = 'text/plain'\n\n\
         def test_near():\n    assert json.loads('{}') == {}\n\n\
         def never():\n    return open('../../outside.json')\n",
    );
    t.commit("near misses");
    for path in ["outside.json", "data/secret.json", "text/plain.txt"] {
        let r = t.report(&["--files", path]);
        assert_eq!(row(&r, path)["verdict"], "refused", "{path}: {r:#}");
    }
}

/// A run-time-named import (`__import__(name)`) may load any module, but only where its file
/// runs: a module nothing imports, loaded by name, selects the tests that reach the importing
/// file (a `may_load` edge naming file and line) — and real pytest fails exactly there.
#[test]
fn a_run_time_named_import_selects_the_tests_that_reach_its_file() {
    let t = TestRepo::from_fixture("refs");
    t.write(
        "src/app/registry.py",
        "def get(name):\n    return __import__(name, fromlist=['VALUE'])\n",
    );
    t.write("src/app/extra.py", "VALUE = 1\n");
    t.write(
        "tests/test_registry.py",
        "from app.registry import get\n\nNAME = '.'.join(['app', 'extra'])\n\ndef test_get():\n    assert get(NAME).VALUE == 1\n",
    );
    t.commit("registry");
    t.write("src/app/extra.py", "VALUE = 2\n");
    t.commit("break the module loaded by name");
    let r = t.report(&["--affected", "HEAD~1...HEAD"]);
    let extra = row(&r, "src/app/extra.py");
    assert_eq!(extra["verdict"], "resolved", "{r:#}");
    assert_eq!(selected(&r), ["tests/test_registry.py"], "{r:#}");
    let chain = extra["edges"][0]["chain"].as_array().unwrap();
    let last = chain.last().unwrap();
    assert_eq!(last["kind"], "may_load", "{r:#}");
    assert_eq!(last["from"], "src/app/registry.py");
    assert_eq!(last["line"], 2);
    let reasons = extra["reasons"].to_string();
    assert!(
        reasons.contains("src/app/registry.py line 2 imports a module named at run time"),
        "{reasons}"
    );
    assert!(
        reasons.contains("[[loads]] file = \\\"src/app/registry.py\\\""),
        "{reasons}"
    );
    let out = t.gate(&["--affected", "HEAD~1...HEAD"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", crate::support::text(&out));
    assert!(
        crate::support::text(&out).contains("test_registry.py"),
        "{}",
        crate::support::text(&out)
    );
    // A module the import may load changes nothing for the tests that never reach the
    // importing file: the rest of the suite is not selected for it.
    let r = t.report(&["--files", "src/app/mini.py"]);
    assert_eq!(
        selected(&r),
        ["tests/test_registry.py", "tests/test_web.py"],
        "{r:#}"
    );
    // The team declares what the call can load: only those modules reach it.
    t.write(
        ".gate.toml",
        &format!(
            "{}\n[[loads]]\nfile = \"src/app/registry.py\"\nmodules = [\"src/app/extra.py\"]\n",
            std::fs::read_to_string(t.root.join(".gate.toml")).unwrap()
        ),
    );
    t.commit("bound it");
    let r = t.report(&["--files", "src/app/extra.py"]);
    assert_eq!(row(&r, "src/app/extra.py")["verdict"], "resolved", "{r:#}");
    assert_eq!(selected(&r), ["tests/test_registry.py"], "{r:#}");
    assert!(
        r["selected"].to_string().contains("[[loads]] rule 1"),
        "{r:#}"
    );
    let r = t.report(&["--files", "src/app/mini.py"]);
    assert_eq!(selected(&r), ["tests/test_web.py"], "{r:#}");
}

/// When every test reaches the importing file (a conftest loads plugins by name), a module it
/// may load is the whole suite, by name — `named_full`, never a refusal that blocks the push.
#[test]
fn a_run_time_named_import_every_test_reaches_is_named_full() {
    let t = TestRepo::from_fixture("refs");
    t.write(
        "tests/conftest.py",
        "import os\nimport importlib\n\nfor name in os.environ.get('EXTRA_PLUGINS', '').split():\n    importlib.import_module(name)\n",
    );
    t.write("src/app/orphan.py", "VALUE = 1\n");
    t.commit("conftest loads plugins by name");
    let r = t.report(&["--files", "src/app/orphan.py"]);
    let orphan = row(&r, "src/app/orphan.py");
    assert_eq!(orphan["verdict"], "named_full", "{r:#}");
    assert_eq!(r["verdict"], "named_full", "{r:#}");
    let reasons = orphan["reasons"].to_string();
    assert!(
        reasons.contains("tests/conftest.py line 5") && reasons.contains("every test"),
        "{reasons}"
    );
    assert_eq!(
        selected(&r).len(),
        r["test_files"].as_u64().unwrap() as usize,
        "{r:#}"
    );
}

#[test]
fn proximity_keeps_a_data_file_under_tests_and_docs_stay_inert() {
    let t = TestRepo::from_fixture("refs");
    t.write("tests/README.md", "how the tests are laid out\n");
    t.commit("readme");
    let r = t.report(&["--files", "tests/assets/blob.bin", "tests/README.md"]);
    let blob = row(&r, "tests/assets/blob.bin");
    assert_eq!(blob["verdict"], "resolved");
    assert!(
        blob["reasons"]
            .to_string()
            .contains("proximity: the tests under tests/"),
        "{r:#}"
    );
    let tests: Vec<String> = crate::support::strings(&blob["tests"]);
    assert_eq!(tests.len(), 10, "every test under tests/: {tests:?}");
    assert_eq!(row(&r, "tests/README.md")["verdict"], "inert");
}

#[test]
fn name_mapping_is_the_edge_of_last_resort() {
    let t = TestRepo::from_fixture("refs");
    t.write("scripts/report.py", "print('report')\n");
    t.write(
        "tests/scripts/test_report.py",
        "def test_report():\n    assert True\n",
    );
    t.commit("report");
    let r = t.report(&["--files", "scripts/report.py"]);
    assert_eq!(selected(&r), ["tests/scripts/test_report.py"]);
    assert!(
        r["selected"][0]["reasons"]
            .to_string()
            .contains("name mapping"),
        "{r:#}"
    );
    // An imported module never falls back to its name: the import graph says who needs it.
    let r = t.report(&["--files", "src/app/mini.py"]);
    assert_eq!(selected(&r), ["tests/test_web.py"]);
}

#[test]
fn the_reference_plan_lists_every_edge_with_its_literal_and_explain_shows_it() {
    let t = TestRepo::from_fixture("refs");
    let dir = t.root.parent().unwrap().join("plans");
    let out = t
        .gate(&["plan", "--out", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(dir.join("reference-edges.json")).unwrap();
    let plan: serde_json::Value = serde_json::from_str(&text).unwrap();
    validate("edges.schema.json", &plan);
    let ast: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("ast-plan.json")).unwrap()).unwrap();
    validate("ast-plan.schema.json", &ast);
    let has = |from: &str, to: &str, kind: &str| {
        plan["edges"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["from"] == from && e["to"] == to && e["kind"] == kind)
    };
    assert!(
        has(
            "src/app/prices.py",
            "src/app/data/prices.json",
            "computed_path"
        ),
        "{text}"
    );
    assert!(has(
        "src/app/web.py",
        "src/app/static/site.css",
        "convention"
    ));
    assert!(has(
        "src/app/loader.py",
        "src/app/plugins/beta.py",
        "dynamic_import"
    ));
    assert!(has(
        "tests/test_script.py",
        "scripts/check.sh",
        "subprocess"
    ));
    assert!(
        has("scripts/check.sh", "src/app/cli.py", "subprocess"),
        "python -m app.cli"
    );
    assert!(has(
        "tests/test_bdd.py",
        "tests/features/cart.feature",
        "feature"
    ));
    assert!(has("rules/main.pl", "rules/facts.pl", "user_reference"));
    let imports: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("import-graph.json")).unwrap())
            .unwrap();
    assert!(
        imports["edges"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["from"] == "tests/test_cli.py"
                && e["to"] == "src/app/cli.py"
                && e["line"] == 11),
        "python -c code is parsed as Python: {imports:#}"
    );
    let out = t
        .gate(&["explain", "src/app/data/prices.json"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("src/app/prices.py builds the path src/app/data/prices.json at line 4"),
        "{text}"
    );
}

/// A path naming a folder reads every file under it: a change to any of them selects the test,
/// and the test really fails.
#[test]
fn a_folder_named_as_a_path_selects_its_reader_for_any_file_in_it() {
    let t = TestRepo::from_fixture("refs");
    t.write(
        "tests/test_listing.py",
        "import os\n\n\ndef test_every_data_file_is_json():\n    for name in os.listdir('src/app/data'):\n        assert name.endswith('.json'), name\n",
    );
    t.commit("a test reading a folder");
    t.write("src/app/data/notes.txt", "not json\n");
    t.commit("a new file in the folder");
    let r = t.report(&["--affected", "HEAD~1...HEAD"]);
    assert!(
        selected(&r).contains(&"tests/test_listing.py".to_string()),
        "{r:#}"
    );
    let out = t.gate(&["--affected", "HEAD~1...HEAD"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("FAILED tests/test_listing.py"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// A path built on another module's file (`Path(app.__file__).parent.parent.parent / "suite"`,
/// as jsonschema finds its shared JSON suite) names what is under that folder: a case file
/// changed there selects the test that reads it, and real pytest fails there. An aliased
/// import of a plain module anchors on the folder that module is in.
#[test]
fn a_path_built_on_an_imported_modules_file_selects_its_reader() {
    let t = TestRepo::from_fixture("refs");
    t.write("suite/cases/one.json", "[1, 2]\n");
    t.write("src/app/data/extra.json", "3\n");
    t.write(
        "tests/_suite.py",
        "import json\nfrom pathlib import Path\n\nimport app\nimport app.cli as cli\n\n\
         def cases():\n    root = Path(app.__file__).parent.parent.parent / 'suite'\n    \
         return [json.loads(p.read_text()) for p in sorted(root.rglob('*.json'))]\n\n\
         def extra():\n    return json.loads((Path(cli.__file__).parent / 'data' / 'extra.json').read_text())\n",
    );
    t.write(
        "tests/test_suite.py",
        "from _suite import cases, extra\n\ndef test_cases():\n    assert cases() == [[1, 2]]\n\n\
         def test_extra():\n    assert extra() == 3\n",
    );
    t.commit("a shared suite");
    for (file, broken) in [
        ("suite/cases/one.json", "[1]\n"),
        ("src/app/data/extra.json", "4\n"),
    ] {
        t.write(file, broken);
        t.commit("break a case");
        let r = t.report(&["--affected", "HEAD~1...HEAD"]);
        assert_eq!(row(&r, file)["verdict"], "resolved", "{r:#}");
        assert!(
            selected(&r).iter().any(|t| t == "tests/test_suite.py"),
            "{file}: {r:#}"
        );
        assert!(
            r["selected"]
                .to_string()
                .contains("tests/_suite.py builds the path"),
            "{file}: {r:#}"
        );
        let out = t.gate(&["--affected", "HEAD~1...HEAD"]).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", crate::support::text(&out));
        assert!(
            crate::support::text(&out).contains("FAILED tests/test_suite.py"),
            "{}",
            crate::support::text(&out)
        );
    }
}
