//! Plans and reports against the schemas in `plans/`, the blob-id cache, determinism, explain.

use crate::support::TestRepo;
use serde_json::Value;
use std::path::Path;

struct PlansDir;

impl jsonschema::Retrieve for PlansDir {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        let name = uri
            .path()
            .as_str()
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .to_string();
        let text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("plans")
                .join(name),
        )?;
        Ok(serde_json::from_str(&text)?)
    }
}

/// Validates `value` against `plans/<schema>`, with cross-file `$ref`s read from `plans/`.
pub(crate) fn validate(schema: &str, value: &Value) {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("plans")
            .join(schema),
    )
    .unwrap();
    let schema_value: Value = serde_json::from_str(&text).unwrap();
    let validator = jsonschema::options()
        .with_retriever(PlansDir)
        .build(&schema_value)
        .unwrap();
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{schema}: {errors:#?}\n{value:#}");
}

/// A schema that does not parse fails only the tests that happen to validate against it; this
/// reads every one, so a broken schema is caught by name even when no test uses it yet.
#[test]
fn every_schema_in_plans_parses_and_compiles() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("plans");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let schema: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        jsonschema::options()
            .with_retriever(PlansDir)
            .build(&schema)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        seen += 1;
    }
    assert!(seen >= 14, "read {seen} schemas in {}", dir.display());
}

#[test]
fn reports_match_the_schema() {
    let t = TestRepo::from_fixture("shop");
    t.append("src/shop/money.py", "\n");
    t.append("README.md", "x\n");
    t.append("scripts/deploy.ini", "x\n");
    t.rename("src/shop/untested.py", "src/shop/still_untested.py");
    t.commit("mixed");
    validate(
        "report.schema.json",
        &t.report(&["--affected", "HEAD~1...HEAD"]),
    );
    validate(
        "report.schema.json",
        &t.report(&["--affected", "HEAD~1...HEAD", "--affected-decision", "T-1"]),
    );
    validate(
        "report.schema.json",
        &t.report(&["--affected", "origin/master"]),
    );
    validate("report.schema.json", &t.report(&["--since", "HEAD~1"]));
    let ran = t
        .gate(&["--files", "src/shop/plugins/discount.py", "--json"])
        .output()
        .unwrap();
    let ran: Value = serde_json::from_slice(&ran.stdout).unwrap();
    assert_eq!(
        ran["run"]["outcome"], "passed",
        "pytest's output went to stderr, JSON alone on stdout"
    );
    validate("report.schema.json", &ran);
}

#[test]
fn plan_exports_match_the_schemas_and_are_deterministic() {
    let t = TestRepo::from_fixture("shop");
    // A shell script, so the plans hold its facts too.
    t.write("scripts/build.sh", "#!/bin/sh\nsh scripts/lint.sh\n");
    t.commit("a build script");
    let out_a = t.root.parent().unwrap().join("plans-a");
    let out_b = t.root.parent().unwrap().join("plans-b");
    let first = t
        .gate(&["plan", "--out", out_a.to_str().unwrap()])
        .env("RAYON_NUM_THREADS", "2")
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&first.stdout)
            .contains("18 Python files, 0 Go files, 0 JavaScript and TypeScript files, 1 shell scripts and 2 text files read for doctest examples (21 parsed, 0 from cache)"),
        "{}",
        String::from_utf8_lossy(&first.stdout)
    );
    std::fs::remove_dir_all(t.root.join(".git/gate")).unwrap();
    t.gate(&["plan", "--out", out_b.to_str().unwrap()])
        .env("RAYON_NUM_THREADS", "1")
        .assert()
        .success();
    let second = t.gate(&["plan", "--rev", "HEAD"]).output().unwrap();
    assert!(
        String::from_utf8_lossy(&second.stdout).contains("(0 parsed, 21 from cache)"),
        "an unchanged blob is never parsed twice"
    );
    for (name, schema) in [
        ("ast-plan.json", "ast-plan.schema.json"),
        ("import-graph.json", "edges.schema.json"),
        ("reference-edges.json", "edges.schema.json"),
    ] {
        let a = std::fs::read(out_a.join(name)).unwrap();
        let b = std::fs::read(out_b.join(name)).unwrap();
        assert!(a == b, "{name} differs between thread counts");
        validate(schema, &serde_json::from_slice(&a).unwrap());
    }
    let ast: Value =
        serde_json::from_slice(&std::fs::read(out_a.join("ast-plan.json")).unwrap()).unwrap();
    let cart = ast["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "src/shop/cart.py")
        .unwrap();
    assert_eq!(cart["module"], "shop.cart");
    assert_eq!(cart["role"], "source");
    assert_eq!(
        cart["imports"][1],
        serde_json::json!({"line": 3, "level": 1, "module": "tax", "names": ["with_tax"]})
    );
    let refs: Value =
        serde_json::from_slice(&std::fs::read(out_a.join("reference-edges.json")).unwrap())
            .unwrap();
    assert!(
        refs["edges"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["from"] == "tests/test_prices.py" && e["to"] == "tests/data/prices.json")
    );
}

#[test]
fn a_plan_describes_exactly_the_gated_tree() {
    let t = TestRepo::from_fixture("shop");
    t.write("src/shop/fresh.py", "");
    t.write("tests/test_fresh.py", "import shop.fresh\n");
    t.commit("new files");
    // the working tree has moved on; the plan of the commit must not see that
    t.remove("tests/test_fresh.py");
    let r = t.report(&["--affected", "HEAD~1...HEAD"]);
    assert!(crate::support::selected(&r).contains(&"tests/test_fresh.py".to_string()));
    let out = t.gate(&["plan"]).output().unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("19 Python files"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn explain_prints_chains_both_ways() {
    let t = TestRepo::from_fixture("shop");
    let out = t.gate(&["explain", "src/shop/money.py"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("src/shop/money.py is reached by 4 test file(s)"),
        "{text}"
    );
    assert!(text.contains("tests/test_patch.py imports shop.tax at line 3; src/shop/tax.py imports shop.money at line 1"), "{text}");
    let out = t
        .gate(&["explain", "tests/test_checkout.py"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("tests/test_checkout.py is a test"), "{text}");
    assert!(text.contains("tests/test_checkout.py imports shop.checkout at line 1; src/shop/checkout.py imports shop.cart at line 1; src/shop/cart.py imports .tax at line 3"), "{text}");
    assert_eq!(
        t.gate(&["explain", "nope.py"])
            .output()
            .unwrap()
            .status
            .code(),
        Some(3)
    );
}

/// The report minus what differs between two runs of the same gate (durations).
fn comparable(mut report: Value) -> Value {
    report.as_object_mut().unwrap().remove("duration_ms");
    report
}

#[test]
fn a_reused_graph_selects_exactly_what_a_fresh_build_selects() {
    let t = TestRepo::from_fixture("shop");
    let graph = t.root.join(".git/gate/cache/graph.bin");
    let steps: &[(&str, &str)] = &[
        ("src/shop/money.py", "\nimport shop.untested\n"),
        ("tests/test_cart.py", "\nimport shop.checkout\n"),
        ("src/shop/checkout.py", "\n# no import change\n"),
        ("tests/helpers.py", "\nDATA = 'tests/data/prices.json'\n"),
        (
            "src/shop/plugins/discount.py",
            "\nimport importlib\nX = importlib.import_module(f'shop.plugins.{1}')\n",
        ),
    ];
    t.report(&["--affected", "HEAD"]);
    // The stored graph stays the first one: each later run patches it across every commit
    // since (patched graphs are not written back for a few files).
    let first = std::fs::read(&graph).expect("the first run kept its graph");
    for (file, text) in steps {
        t.append(file, text);
        t.commit(file);
        let reused = comparable(t.report(&["--affected", "HEAD~1...HEAD"]));
        std::fs::remove_file(&graph).unwrap();
        let fresh = comparable(t.report(&["--affected", "HEAD~1...HEAD"]));
        assert_eq!(reused, fresh, "{file}");
        std::fs::write(&graph, &first).unwrap();
    }
    // A new file changes the file set: the graph is rebuilt, and still agrees.
    t.write("src/shop/fresh.py", "import shop.money\n");
    t.write("tests/test_fresh.py", "import shop.fresh\n");
    t.commit("new files");
    let reused = comparable(t.report(&["--affected", "HEAD~1...HEAD"]));
    assert!(crate::support::selected(&reused).contains(&"tests/test_fresh.py".to_string()));
    std::fs::remove_file(&graph).unwrap();
    assert_eq!(
        reused,
        comparable(t.report(&["--affected", "HEAD~1...HEAD"]))
    );
    // And an import added to an unchanged-set tree is seen through the patch.
    t.append("tests/test_plugins.py", "\nimport shop.untested\n");
    t.commit("new edge");
    let r = t.report(&["--files", "src/shop/untested.py"]);
    assert!(
        crate::support::selected(&r).contains(&"tests/test_plugins.py".to_string()),
        "{r:#}"
    );
}
