//! Go: every changed file's selection compared with what `go list -deps -test` says, on a
//! fixture with a go.work workspace, a vendored module, a local replace of a nested module,
//! internal and external tests, embed, testdata, cgo and build-tagged files — and `go test`
//! really running.

use crate::support::{TestRepo, row, selected};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

const MODULES: &[&str] = &["ws/shop", "ws/lib", "vend", "rep", "rep/helper"];

/// go's caches live beside the build, not in each test's temporary HOME; no proxy is reachable.
pub(crate) fn go_vars() -> Vec<(&'static str, std::ffi::OsString)> {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    vec![
        ("GOCACHE", tmp.join("gocache").into()),
        ("GOPATH", tmp.join("gopath").into()),
        ("GOPROXY", "off".into()),
        ("GOFLAGS", "".into()),
        ("GOTOOLCHAIN", "local".into()),
    ]
}

pub(crate) fn gate(t: &TestRepo, args: &[&str]) -> std::process::Output {
    t.gate(args).envs(go_vars()).output().unwrap()
}

fn report(t: &TestRepo, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["--json", "--list"]);
    let out = gate(t, &all);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
    })
}

/// Package folder → the folders of the packages whose test binaries depend on it, from
/// `go list -deps -test -json ./...` in every module.
fn oracle(root: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let root = root.canonicalize().unwrap();
    let rel = |dir: &str| {
        Path::new(dir)
            .strip_prefix(&root)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| format!("<outside>{dir}"))
    };
    let base = |path: &str| path.split(" [").next().unwrap_or(path).to_string();
    let mut dirs: BTreeMap<String, String> = BTreeMap::new();
    let mut binaries: Vec<(String, Vec<String>)> = Vec::new();
    for module in MODULES {
        let out = Command::new("go")
            .envs(go_vars())
            .args(["list", "-deps", "-test", "-json", "./..."])
            .current_dir(root.join(module))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for pkg in serde_json::Deserializer::from_slice(&out.stdout).into_iter::<Value>() {
            let pkg = pkg.unwrap();
            let path = pkg["ImportPath"].as_str().unwrap().to_string();
            if let Some(dir) = pkg["Dir"].as_str() {
                dirs.entry(base(&path)).or_insert_with(|| rel(dir));
            }
            if let Some(tested) = path.strip_suffix(".test") {
                let deps = pkg["Deps"]
                    .as_array()
                    .map(|d| d.iter().map(|v| base(v.as_str().unwrap())).collect())
                    .unwrap_or_default();
                binaries.push((tested.to_string(), deps));
            }
        }
    }
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (tested, deps) in binaries {
        let test_dir = dirs[&tested].clone();
        for dep in deps.iter().chain(std::iter::once(&tested)) {
            if let Some(dir) = dirs.get(dep) {
                out.entry(dir.clone()).or_default().insert(test_dir.clone());
            }
        }
    }
    out
}

fn go_units(r: &Value) -> BTreeSet<String> {
    selected(r)
        .into_iter()
        .filter_map(|s| s.strip_prefix("./").map(str::to_string))
        .collect()
}

fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

#[test]
fn every_changed_file_selects_what_go_list_says() {
    let t = TestRepo::from_fixture("goshop");
    let truth = oracle(&t.root);
    let files: Vec<String> = t
        .repo
        .index()
        .unwrap()
        .iter()
        .map(|e| String::from_utf8(e.path).unwrap())
        .filter(|p| !p.ends_with("go.mod") && !p.ends_with("go.work") && !p.ends_with(".md"))
        .collect();
    assert!(files.len() > 20, "{files:?}");
    for file in &files {
        let r = report(&t, &["--files", file]);
        let got = go_units(&r);
        // The package a file belongs to: its folder; testdata and embedded files belong to the
        // package above them, a test file or testdata only to its own package's tests.
        let (pkg, own_only) = if let Some((p, _)) = file.split_once("/testdata/") {
            (p.to_string(), true)
        } else if file.contains("/templates/") {
            (file.split_once("/templates/").unwrap().0.to_string(), false)
        } else if file.ends_with("modules.txt") {
            continue; // vendor metadata: no package
        } else {
            (parent(file).to_string(), file.ends_with("_test.go"))
        };
        let want: BTreeSet<String> = if own_only {
            [pkg.clone()].into_iter().collect()
        } else {
            truth.get(&pkg).cloned().unwrap_or_default()
        };
        assert!(
            got.is_superset(&want),
            "{file}: gate {got:?} ⊉ go list {want:?}"
        );
        let extra: BTreeSet<&String> = got.difference(&want).collect();
        if file == "ws/shop/extra/extra.go" {
            // tax_other.go (`//go:build !linux`) imports extra: gate counts every build tag.
            assert_eq!(
                extra,
                [&"ws/shop/cart".to_string()].into_iter().collect(),
                "{file}"
            );
        } else {
            assert!(
                extra.is_empty(),
                "{file}: gate selects more than go list: {extra:?}"
            );
        }
        assert_eq!(row(&r, file)["verdict"], "resolved", "{file}: {r:#}");
    }
}

#[test]
fn the_report_shows_import_chains_with_lines_and_one_command_per_module() {
    let t = TestRepo::from_fixture("goshop");
    let r = report(&t, &["--files", "ws/lib/strutil/strutil.go"]);
    assert_eq!(
        go_units(&r),
        ["ws/lib/strutil", "ws/shop/cart", "ws/shop/money"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    );
    let reasons = r["selected"].to_string();
    assert!(
        reasons.contains("the tests of ./ws/shop/cart build package ws/shop/cart; package ws/shop/cart is built from ws/shop/cart/cart.go; ws/shop/cart/cart.go imports example.com/shop/tax at line 3"),
        "{reasons}"
    );
    assert!(
        reasons.contains("ws/shop/money/money.go imports example.com/lib/strutil at line 6"),
        "{reasons}"
    );
    assert_eq!(
        r["go_commands"],
        serde_json::json!([
            {"module": "ws/lib", "argv": ["go", "test", "./strutil"]},
            {"module": "ws/shop", "argv": ["go", "test", "./cart", "./money"]},
        ])
    );
    // `gate explain ./dir` names the files whose change selects a package's tests.
    let out = gate(&t, &["explain", "./ws/shop/cart"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("./ws/shop/cart is a test; a change to any of these 9 files selects it"),
        "{text}"
    );
    assert!(
        text.contains("\n  ws/shop/cart/testdata/items.json\n"),
        "{text}"
    );
    assert!(!text.contains("\n  go:"), "{text}");
    // A test file's own imports are edges too: the external test imports its package.
    let dir = t.root.parent().unwrap().join("plans");
    gate(&t, &["plan", "--out", dir.to_str().unwrap()]);
    let imports: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("import-graph.json")).unwrap())
            .unwrap();
    assert!(
        imports["edges"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["from"] == "ws/shop/cart/cart_test.go"
                && e["to"] == "go:ws/shop/cart"
                && e["line"] == 8
                && e["detail"] == "example.com/shop/cart"),
        "{imports:#}"
    );
    // Two paths of one import hop each — through the package's source, and through a test file
    // that imports strutil itself: the chain shown is the one of fewer edges.
    t.write(
        "ws/shop/money/upper_test.go",
        "package money\n\nimport (\n\t\"testing\"\n\n\t\"example.com/lib/strutil\"\n)\n\nfunc TestUpper(t *testing.T) {\n\tif strutil.Upper(\"a\") != \"A\" {\n\t\tt.Fatal(\"upper\")\n\t}\n}\n",
    );
    t.commit("money tests strutil too");
    let r = report(&t, &["--files", "ws/lib/strutil/strutil.go"]);
    let reasons = r["selected"].to_string();
    assert!(
        reasons.contains("the tests of ./ws/shop/money use ws/shop/money/upper_test.go; ws/shop/money/upper_test.go imports example.com/lib/strutil at line 6; package ws/lib/strutil is built from ws/lib/strutil/strutil.go"),
        "{reasons}"
    );
    let r = report(&t, &["--files", "ws/shop/go.mod"]);
    assert_eq!(row(&r, "ws/shop/go.mod")["verdict"], "named_full");
    assert!(
        row(&r, "ws/shop/go.mod")["reasons"]
            .to_string()
            .contains("Go module requirements")
    );
}

#[test]
fn go_test_really_runs_the_selection_and_a_failure_fails_the_gate() {
    let t = TestRepo::from_fixture("goshop");
    t.write(".gate.toml", "[go]\nflags = [\"-count=1\"]\n");
    t.commit("flags");
    t.append("ws/shop/web/templates/index.html", "<p>more</p>\n");
    t.commit("template");
    let out = gate(&t, &["--affected", "HEAD~1...HEAD"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("command: go test -count=1 ./web (in ws/shop)"),
        "{stdout}"
    );
    assert!(stdout.contains("ok  \texample.com/shop/web"), "{stdout}");

    t.write("ws/shop/web/templates/index.html", "no heading\n");
    t.commit("break the template");
    let out = gate(&t, &["--affected", "HEAD~1...HEAD"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("FAIL\texample.com/shop/web"), "{stdout}");
}

#[test]
fn a_deleted_package_selects_its_importers_whose_build_then_fails() {
    let t = TestRepo::from_fixture("goshop");
    let truth = oracle(&t.root);
    for f in ["tax.go", "tax_linux.go", "tax_other.go"] {
        t.remove(&format!("ws/shop/tax/{f}"));
    }
    t.commit("drop tax");
    let r = report(&t, &["--affected", "HEAD~1...HEAD"]);
    assert_eq!(go_units(&r), truth["ws/shop/tax"], "{r:#}");
    let out = gate(&t, &["--affected", "HEAD~1...HEAD"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "cart no longer builds: {}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn python_and_go_in_one_repository_run_in_one_gate() {
    let t = TestRepo::from_fixture("goshop");
    t.write("py/calc.py", "def double(x):\n    return 2 * x\n");
    t.write(
        "py/test_calc.py",
        "from calc import double\n\ndef test_double():\n    assert double(2) == 4\n",
    );
    t.commit("python too");
    t.append("py/calc.py", "\n");
    t.append("rep/helper/greet/greet.go", "\n");
    t.commit("both");
    let r = report(&t, &["--affected", "HEAD~1...HEAD"]);
    assert_eq!(
        selected(&r),
        ["./rep/app", "./rep/helper/greet", "py/test_calc.py"]
    );
    let out = gate(&t, &["--affected", "HEAD~1...HEAD"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("1 passed"), "{stdout}");
    assert!(
        stdout.contains("ok  \texample.com/helper/greet"),
        "{stdout}"
    );
    assert!(stdout.contains("ok  \texample.com/rep/app"), "{stdout}");
}

/// A test that anchors a path on its own file — `runtime.Caller(0)`, Go's `__file__` — and
/// reads the module's root `testdata/` is selected when that file changes, and `go test` fails
/// there; a fixture path handed to a helper of another package (`testutil.CaseFile`) keeps
/// selecting its package.
#[test]
fn a_path_anchored_on_runtime_caller_selects_its_test() {
    let t = TestRepo::from_fixture("goshop");
    t.write("rep/testdata/greeting.txt", "hello world\n");
    t.write(
        "rep/app/caller_test.go",
        "package app\n\nimport (\n\t\"os\"\n\t\"path\"\n\t\"runtime\"\n\t\"strings\"\n\t\"testing\"\n)\n\nfunc TestGreetingFile(t *testing.T) {\n\t_, filename, _, _ := runtime.Caller(0)\n\tdir := path.Join(path.Dir(filename), \"../testdata\")\n\tb, err := os.ReadFile(path.Join(dir, \"greeting.txt\"))\n\tif err != nil {\n\t\tt.Fatal(err)\n\t}\n\tif strings.TrimSpace(string(b)) != Greet() {\n\t\tt.Fatal(\"greeting.txt is not the greeting\")\n\t}\n}\n",
    );
    t.write(
        "rep/testutil/testutil.go",
        "package testutil\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\n// CaseFile reads a fixture relative to the calling test's package folder.\nfunc CaseFile(t *testing.T, name string) string {\n\tb, err := os.ReadFile(name)\n\tif err != nil {\n\t\tt.Fatal(err)\n\t}\n\treturn string(b)\n}\n",
    );
    t.write("rep/app/_cases/table.txt", "hello world\n");
    t.write(
        "rep/app/table_test.go",
        "package app\n\nimport (\n\t\"strings\"\n\t\"testing\"\n\n\t\"example.com/rep/testutil\"\n)\n\nfunc TestTable(t *testing.T) {\n\tif strings.TrimSpace(testutil.CaseFile(t, \"_cases/table.txt\")) != Greet() {\n\t\tt.Fatal(\"table\")\n\t}\n}\n",
    );
    t.commit("tests reading fixtures");
    for file in ["rep/testdata/greeting.txt", "rep/app/_cases/table.txt"] {
        let r = report(&t, &["--files", file]);
        assert_eq!(row(&r, file)["verdict"], "resolved", "{file}: {r:#}");
        assert_eq!(selected(&r), ["./rep/app"], "{file}: {r:#}");
    }
    let r = report(&t, &["--files", "rep/testdata/greeting.txt"]);
    assert!(
        r["selected"].to_string().contains("rep/app/caller_test.go"),
        "{r:#}"
    );
    t.write("rep/testdata/greeting.txt", "goodbye\n");
    t.commit("break the root fixture");
    let out = gate(&t, &["--affected", "HEAD~1...HEAD"]);
    let all = crate::support::text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(all.contains("TestGreetingFile"), "{all}");
}
