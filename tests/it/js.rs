//! JavaScript and TypeScript: real git repositories built from `tests/fixtures/js/*`, the real
//! `gate` binary, and the real Vitest and Jest (installed once in `tests/fixtures/js` by
//! `npm ci`, as `.ci/run` does, and linked into each repository's ignored `node_modules`).
//! Each change's selection is checked file by file, and each run by the results the runner
//! itself reported: which files ran, each test's outcome, the exit code.

use crate::support::{TestRepo, fixture, row, selected, strings, text};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;

mod stated;

/// The shared install every repository links to.
fn installed() -> PathBuf {
    let modules = fixture("js/node_modules");
    for tool in ["vitest", "jest"] {
        assert!(
            modules.join(".bin").join(tool).exists(),
            "{tool} is not installed in {}: run `npm ci` in tests/fixtures/js (.ci/run does)",
            modules.display()
        );
    }
    modules
}

/// `dir/node_modules` (ignored by the fixture's `.gitignore`): a folder of links to each
/// installed package, so what Vitest caches there stays in this repository, and `extra`
/// (name → folder of the repository, as npm links a workspace package).
pub(crate) fn link_modules(dir: &Path, extra: &[(&str, &str)]) {
    let target = dir.join("node_modules");
    std::fs::create_dir_all(&target).unwrap();
    for entry in std::fs::read_dir(installed()).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == ".vite" || name == ".cache" || name == ".package-lock.json" {
            continue;
        }
        std::os::unix::fs::symlink(entry.path(), target.join(&name)).unwrap();
    }
    for (name, folder) in extra {
        let link = target.join(name);
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(dir.join(folder), link).unwrap();
    }
}

/// A repository of the fixture `js/NAME`, its packages linked at its root.
pub(crate) fn repo(name: &str) -> TestRepo {
    let t = TestRepo::from_fixture(&format!("js/{name}"));
    link_modules(&t.root, &[]);
    t
}

/// `gate ARGS --json`, run: what it printed and its report.
fn run(t: &TestRepo, args: &[&str]) -> (Output, Value) {
    let mut all = args.to_vec();
    all.push("--json");
    let out = t.gate(&all).output().unwrap();
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(&out)));
    (out, report)
}

/// Every result of a run: (id, file, outcome).
fn results(r: &Value) -> Vec<(String, String, String)> {
    r["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["id"].as_str().unwrap().to_string(),
                t["file"].as_str().unwrap_or("-").to_string(),
                t["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The files a run has results for.
fn ran(r: &Value) -> BTreeSet<String> {
    results(r).into_iter().map(|(_, file, _)| file).collect()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// The selected test files of `gate --files FILE --list`, the file's row resolved.
fn selects(t: &TestRepo, file: &str) -> BTreeSet<String> {
    let r = t.report(&["--files", file]);
    assert_eq!(row(&r, file)["verdict"], "resolved", "{file}: {r:#}");
    selected(&r).into_iter().collect()
}

/// The details of the import edges `file`'s row shows, each chain's links.
fn details(r: &Value, file: &str) -> String {
    row(r, file)["edges"].to_string()
}

#[test]
fn vitest_selects_the_tests_each_form_of_import_reaches() {
    let t = repo("vitest");
    let every = [
        "test/alias.test.ts",
        "test/json.test.ts",
        "test/legacy.test.ts",
        "test/math.test.ts",
        "test/mock.test.ts",
        "test/registry.test.ts",
        "test/setup.test.ts",
        "test/snap.test.ts",
        "test/sum.test.ts",
        "test/tilde.test.ts",
    ];
    for (file, want) in [
        // `import`, directly, and through `export … from` and a `.js` name of a `.ts` file.
        (
            "src/math.ts",
            &["test/math.test.ts", "test/sum.test.ts"][..],
        ),
        ("src/calc.ts", &["test/sum.test.ts"]),
        ("src/index.ts", &["test/sum.test.ts"]),
        // CommonJS `require`, through `createRequire` and from one `.cjs` file to another.
        ("src/legacy.cjs", &["test/legacy.test.ts"]),
        ("src/twice.cjs", &["test/legacy.test.ts"]),
        // tsconfig `paths` (`@/*`) and a Vite `resolve.alias` regular expression (`~`).
        ("src/util/str.ts", &["test/alias.test.ts"]),
        ("src/tilde.ts", &["test/tilde.test.ts"]),
        // `vi.mock("../src/clock")` and the `__mocks__` file it loads instead.
        ("src/clock.ts", &["test/mock.test.ts"]),
        ("src/__mocks__/clock.ts", &["test/mock.test.ts"]),
        // `import.meta.glob("./plugins/*.ts")`.
        ("src/plugins/beta.ts", &["test/registry.test.ts"]),
        // `new URL("./fixtures/a.json", import.meta.url)`.
        ("test/fixtures/a.json", &["test/json.test.ts"]),
        // A snapshot selects its own test file only.
        (
            "test/__snapshots__/snap.test.ts.snap",
            &["test/snap.test.ts"],
        ),
        // A test file selects itself.
        ("test/math.test.ts", &["test/math.test.ts"]),
        // The setup file runs before every test of the project.
        ("test/setup.ts", &every),
        // Nothing imports it.
        ("src/untested.ts", &[]),
    ] {
        assert_eq!(selects(&t, file), set(want), "{file}");
    }
    // The chains name each form as the file wrote it.
    let r = t.report(&["--files", "src/math.ts"]);
    let chain = details(&r, "src/math.ts");
    for link in ["\"../src/index\"", "\"./calc\"", "\"./math.js\""] {
        assert!(chain.contains(link), "{link}: {chain}");
    }
    let r = t.report(&["--files", "src/__mocks__/clock.ts"]);
    assert!(
        details(&r, "src/__mocks__/clock.ts").contains("__mocks__ of ../src/clock"),
        "{r:#}"
    );
    // A plugin added in a commit is among the glob's files.
    t.write("src/plugins/gamma.ts", "export const name = 'gamma';\n");
    t.commit("a plugin");
    let r = t.report(&["--affected", "HEAD~1...HEAD"]);
    assert_eq!(selected(&r), ["test/registry.test.ts"], "{r:#}");
}

#[test]
fn vitest_runs_the_selected_files_and_reports_each_test() {
    let t = repo("vitest");
    // A change to math: its two tests' files run, every test passes.
    t.append(
        "src/math.ts",
        "export const sub = (a: number, b: number): number => a - b;\n",
    );
    t.commit("sub");
    let (out, r) = run(&t, &["--affected", "HEAD~1...HEAD"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let mut got = results(&r);
    got.sort();
    let want = [
        ("test/math.test.ts::math > adds", "test/math.test.ts"),
        ("test/math.test.ts::math > multiplies", "test/math.test.ts"),
        (
            "test/sum.test.ts::sums through a re-export",
            "test/sum.test.ts",
        ),
    ];
    let want: Vec<(String, String, String)> = want
        .iter()
        .map(|(id, file)| (id.to_string(), file.to_string(), "passed".to_string()))
        .collect();
    assert_eq!(got, want, "{}", text(&out));
    assert_eq!(r["run"]["outcome"], "passed", "{r:#}");
    // Broken: gate exits 1, and the failing tests are named, in the report and the output.
    t.write(
        "src/math.ts",
        "export const add = (a: number, b: number): number => a - b;\nexport const mul = (a: number, b: number): number => a * b;\n",
    );
    t.commit("break add");
    let (out, r) = run(&t, &["--affected", "HEAD~1...HEAD"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let failed: BTreeSet<String> = results(&r)
        .into_iter()
        .filter(|(_, _, outcome)| outcome == "failed")
        .map(|(id, _, _)| id)
        .collect();
    assert_eq!(
        failed,
        set(&[
            "test/math.test.ts::math > adds",
            "test/sum.test.ts::sums through a re-export"
        ]),
        "{r:#}"
    );
    let all = text(&out);
    assert!(all.contains("math > adds"), "{all}");
    // The human run names the failing test too, and exits 1.
    let out = t.gate(&["--affected", "HEAD~1...HEAD"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("test/math.test.ts > math > adds"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_vitest_setup_file_runs_every_test_of_its_project_and_each_form_passes_for_real() {
    let t = repo("vitest");
    t.append("test/setup.ts", "// touched\n");
    t.commit("touch setup");
    let (out, r) = run(&t, &["--affected", "HEAD~1...HEAD"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // Every form of the fixture resolves at run time too: each file ran and passed.
    let every = set(&[
        "test/alias.test.ts",
        "test/json.test.ts",
        "test/legacy.test.ts",
        "test/math.test.ts",
        "test/mock.test.ts",
        "test/registry.test.ts",
        "test/setup.test.ts",
        "test/snap.test.ts",
        "test/sum.test.ts",
        "test/tilde.test.ts",
    ]);
    assert_eq!(ran(&r), every, "{}", text(&out));
    assert!(
        results(&r).iter().all(|(_, _, o)| o == "passed"),
        "{:?}",
        results(&r)
    );
    assert_eq!(results(&r).len(), 11, "{:?}", results(&r));
    // A snapshot that no longer matches fails its test, which its change selected.
    t.write(
        "test/__snapshots__/snap.test.ts.snap",
        "// Vitest Snapshot v1, https://vitest.dev/guide/snapshot.html\n\nexports[`renders 1`] = `\n{\n  \"a\": 2,\n  \"b\": \"two\",\n}\n`;\n",
    );
    t.commit("a stale snapshot");
    let (out, r) = run(&t, &["--affected", "HEAD~1...HEAD"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(
        results(&r),
        vec![(
            "test/snap.test.ts::renders".to_string(),
            "test/snap.test.ts".to_string(),
            "failed".to_string()
        )],
        "{}",
        text(&out)
    );
}

#[test]
fn what_installs_compiles_or_configures_the_tests_is_named_full_and_runs_the_suite_by_name() {
    let t = repo("vitest");
    for file in [
        "package-lock.json",
        "package.json",
        "vitest.config.ts",
        "tsconfig.json",
    ] {
        let r = t.report(&["--files", file]);
        assert_eq!(row(&r, file)["verdict"], "named_full", "{file}: {r:#}");
        assert_eq!(r["verdict"], "named_full", "{file}: {r:#}");
    }
    // With `named_full = "full"`, a lock file's change runs every test file, each by name.
    t.write(".gate.toml", "named_full = \"full\"\n");
    t.commit("run the whole suite on named_full");
    t.write(
        "package-lock.json",
        &std::fs::read_to_string(t.root.join("package-lock.json"))
            .unwrap()
            .replace("\"requires\": true", "\"requires\": false"),
    );
    t.commit("lock");
    let (out, r) = run(&t, &["--affected", "HEAD~1...HEAD"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(results(&r).len(), 11, "{:?}", results(&r));
    // The suite gate runs by name is the one Vitest collects itself.
    let listed = std::process::Command::new("node_modules/.bin/vitest")
        .args(["list", "--filesOnly", "--json"])
        .current_dir(&t.root)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(listed.status.success(), "{}", text(&listed));
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let root = t.root.canonicalize().unwrap();
    let vitest: BTreeSet<String> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let file = Path::new(f["file"].as_str().unwrap());
            file.strip_prefix(&root)
                .unwrap_or(file)
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(ran(&r), vitest, "{}", text(&out));
}

#[test]
fn untracked_javascript_that_would_change_the_run_moves_it_to_a_temporary_checkout() {
    let t = repo("exact");
    t.append("test/math.test.ts", "// touched\n");
    t.commit("touch math");
    // Not committed: a configuration Vitest would load, and the setup file it names.
    t.write(
        "vitest.config.ts",
        "import { defineConfig } from 'vitest/config';\nexport default defineConfig({ test: { setupFiles: ['./boom.ts'] } });\n",
    );
    t.write(
        "boom.ts",
        "throw new Error('an untracked setup file ran');\n",
    );
    let (out, r) = run(&t, &["--affected", "HEAD~1...HEAD"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        r["run"]["directory"]
            .as_str()
            .is_some_and(|d| d.starts_with("temporary checkout")),
        "{r:#}"
    );
    assert_eq!(ran(&r), set(&["test/math.test.ts"]), "{}", text(&out));
}

#[test]
fn a_vitest_configuration_gate_cannot_read_as_literals_is_refused_by_file_and_key() {
    let t = repo("vitest");
    let config = std::fs::read_to_string(t.root.join("vitest.config.ts")).unwrap();
    t.write(
        "vitest.config.ts",
        &config
            .replace(
                "import path from 'node:path';",
                "import path from 'node:path';\n\nconst tests = (dir: string): string[] => [`${dir}/**/*.test.ts`];",
            )
            .replace("include: ['test/**/*.test.ts'],", "include: tests('test'),"),
    );
    t.commit("computed include");
    // A change elsewhere, under a configuration that cannot be read: refused, nothing runs.
    t.append("src/math.ts", "// touched\n");
    t.commit("touch math");
    let (out, r) = run(&t, &["--affected", "HEAD~1...HEAD"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(r["verdict"], "refused", "{r:#}");
    let why = r["tree_refusal"].as_str().expect("the refusal is named");
    assert!(why.starts_with("vitest.config.ts: "), "{why}");
    assert!(why.contains("`test.include`"), "{why}");
    assert!(r["tests"].as_array().is_none_or(Vec::is_empty), "{r:#}");
    let out = t.gate(&["--affected", "HEAD~1...HEAD"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let all = text(&out);
    assert!(
        all.contains("vitest.config.ts") && all.contains("test.include"),
        "{all}"
    );
    assert!(!all.contains("RUN"), "Vitest ran: {all}");
}

#[test]
fn vitest_runs_exactly_the_listed_file_never_a_name_it_contains_nor_an_option() {
    let t = repo("exact");
    // Names that a substring filter, a case-insensitive match or an option reading would confuse.
    let case_sensitive = {
        std::fs::write(t.root.join("probe"), "").unwrap();
        let sensitive = !t.root.join("PROBE").exists();
        std::fs::remove_file(t.root.join("probe")).unwrap();
        sensitive
    };
    let body = |name: &str| {
        format!(
            "import {{ it, expect }} from 'vitest';\n\nit('is {name}', () => {{\n  expect(1).toBe(1);\n}});\n"
        )
    };
    if case_sensitive {
        t.write("test/MATH.test.ts", &body("MATH"));
    }
    t.write("test/--reporter=x.test.ts", &body("hostile"));
    t.commit("more names");
    t.append("test/math.test.ts", "// touched\n");
    t.commit("touch math");
    let (out, r) = run(&t, &["--affected", "HEAD~1...HEAD"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(selected(&r), ["test/math.test.ts"], "{r:#}");
    assert_eq!(
        results(&r),
        vec![(
            "test/math.test.ts::is test/math".to_string(),
            "test/math.test.ts".to_string(),
            "passed".to_string()
        )],
        "{}",
        text(&out)
    );
    // A file named like an option is a file: it runs, and nothing else does.
    t.append("test/--reporter=x.test.ts", "// touched\n");
    t.commit("touch the hostile name");
    let (out, r) = run(&t, &["--affected", "HEAD~1...HEAD"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(selected(&r), ["test/--reporter=x.test.ts"], "{r:#}");
    assert_eq!(
        ran(&r),
        set(&["test/--reporter=x.test.ts"]),
        "{}",
        text(&out)
    );
    assert!(
        !text(&out).contains("Failed to load custom Reporter"),
        "{}",
        text(&out)
    );
}

#[test]
fn jest_selects_through_require_and_its_configuration_and_runs_exactly_the_selection() {
    let t = repo("jest");
    for (file, want) in [
        (
            "lib/money.js",
            &["spec/cart.spec.js", "spec/money.spec.js"][..],
        ),
        // `require('#lib/cart')` through `moduleNameMapper`.
        ("lib/cart.js", &["spec/cart.spec.js"]),
        ("lib/words.js", &["spec/words.spec.js"]),
        // `setupFiles` runs before every test file.
        (
            "spec/setup.js",
            &[
                "spec/cart.spec.js",
                "spec/money.spec.js",
                "spec/words.spec.js",
            ],
        ),
        ("scripts/release.js", &[]),
    ] {
        assert_eq!(selects(&t, file), set(want), "{file}");
    }
    let r = t.report(&["--files", "jest.config.js"]);
    assert_eq!(row(&r, "jest.config.js")["verdict"], "named_full", "{r:#}");
    let r = t.report(&["--files", "lib/cart.js"]);
    assert!(details(&r, "lib/cart.js").contains("#lib/cart"), "{r:#}");
    // A file named like an option is only a file (`--` ends Jest's options).
    t.write(
        "spec/--testNamePattern=nothing.spec.js",
        "test('a hostile name', () => {\n  expect(1).toBe(1);\n});\n",
    );
    t.commit("a hostile name");
    t.append("lib/money.js", "// touched\n");
    t.commit("touch money");
    let (out, r) = run(&t, &["--affected", "HEAD~2...HEAD"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let mut got = results(&r);
    got.sort();
    let want: Vec<(String, String, String)> = [
        (
            "spec/--testNamePattern=nothing.spec.js::a hostile name",
            "spec/--testNamePattern=nothing.spec.js",
        ),
        ("spec/cart.spec.js::the setup file ran", "spec/cart.spec.js"),
        ("spec/cart.spec.js::totals in cents", "spec/cart.spec.js"),
        (
            "spec/money.spec.js::money > rounds to cents",
            "spec/money.spec.js",
        ),
    ]
    .iter()
    .map(|(id, file)| (id.to_string(), file.to_string(), "passed".to_string()))
    .collect();
    assert_eq!(got, want, "{}", text(&out));
    // Broken: exit 1, the failing tests named; the test that does not reach money is not run.
    t.write(
        "lib/money.js",
        "const cents = (amount) => Math.floor(amount * 10);\n\nmodule.exports = { cents };\n",
    );
    t.commit("break money");
    let (out, r) = run(&t, &["--affected", "HEAD~1...HEAD"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let failed: BTreeSet<String> = results(&r)
        .into_iter()
        .filter(|(_, _, o)| o == "failed")
        .map(|(id, _, _)| id)
        .collect();
    assert_eq!(
        failed,
        set(&[
            "spec/cart.spec.js::totals in cents",
            "spec/money.spec.js::money > rounds to cents"
        ]),
        "{r:#}"
    );
    assert_eq!(
        ran(&r),
        set(&["spec/cart.spec.js", "spec/money.spec.js"]),
        "{r:#}"
    );
    assert!(text(&out).contains("rounds to cents"), "{}", text(&out));
}

#[test]
fn a_workspace_package_imported_by_name_selects_the_importing_packages_tests() {
    let t = TestRepo::from_fixture("js/workspaces");
    // As npm links a workspace: `node_modules/@org/util` is the package's folder.
    link_modules(&t.root, &[("@org/util", "packages/util")]);
    assert_eq!(
        selects(&t, "packages/util/src/slug.js"),
        set(&["packages/app/test/title.test.ts"])
    );
    let r = t.report(&["--files", "packages/util/src/slug.js"]);
    assert!(
        details(&r, "packages/util/src/slug.js").contains("\"@org/util\""),
        "{r:#}"
    );
    assert_eq!(
        selects(&t, "packages/other/test/other.test.ts"),
        set(&["packages/other/test/other.test.ts"])
    );
    // packages/app is a Vitest project of its own (its test script), run from its folder;
    // packages/cjs a Jest project, its Jest hoisted to the root's `node_modules`;
    // packages/other's test is the root project's.
    t.append("packages/util/src/slug.js", "// touched\n");
    t.append("packages/other/test/other.test.ts", "// touched\n");
    t.append("packages/cjs/count.js", "// touched\n");
    t.commit("touch util, cjs and other");
    let (out, r) = run(&t, &["--affected", "HEAD~1...HEAD"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let mut got = results(&r);
    got.sort();
    assert_eq!(
        got,
        vec![
            (
                "packages/app/test/title.test.ts::slugs the title".to_string(),
                "packages/app/test/title.test.ts".to_string(),
                "passed".to_string()
            ),
            (
                "packages/cjs/count.test.js::counts".to_string(),
                "packages/cjs/count.test.js".to_string(),
                "passed".to_string()
            ),
            (
                "packages/other/test/other.test.ts::stands alone".to_string(),
                "packages/other/test/other.test.ts".to_string(),
                "passed".to_string()
            ),
        ],
        "{}",
        text(&out)
    );
    // The whole suite runs each project's own tests once, from its own folder: the root's
    // Vitest does not collect the nested project's test as well.
    t.write(".gate.toml", "named_full = \"full\"\n");
    t.commit("whole suite on named_full");
    t.write(
        "package.json",
        &std::fs::read_to_string(t.root.join("package.json"))
            .unwrap()
            .replace(
                "\"private\": true,",
                "\"private\": true,\n  \"description\": \"mono\",",
            ),
    );
    t.commit("describe");
    let (out, r) = run(&t, &["--affected", "HEAD~1...HEAD"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(results(&r).len(), 3, "{}", text(&out));
    assert_eq!(
        ran(&r),
        set(&[
            "packages/app/test/title.test.ts",
            "packages/cjs/count.test.js",
            "packages/other/test/other.test.ts"
        ]),
        "{}",
        text(&out)
    );
}

#[test]
fn a_temporary_checkout_runs_with_the_packages_the_working_tree_installed() {
    let t = TestRepo::from_fixture("js/workspaces");
    link_modules(&t.root, &[("@org/util", "packages/util")]);
    t.append("packages/util/src/slug.js", "// touched\n");
    t.append("packages/cjs/count.js", "// touched\n");
    t.commit("touch util and cjs");
    // A tracked file differs from the commit: its tests run in a temporary checkout, which
    // holds no `node_modules`; the root's install (Jest hoisted there too) is linked in.
    t.append("packages/other/test/other.test.ts", "// not committed\n");
    let (out, r) = run(&t, &["--affected", "HEAD~1...HEAD"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        r["run"]["directory"]
            .as_str()
            .is_some_and(|d| d.starts_with("temporary checkout")),
        "{r:#}"
    );
    assert_eq!(
        ran(&r),
        set(&[
            "packages/app/test/title.test.ts",
            "packages/cjs/count.test.js"
        ]),
        "{}",
        text(&out)
    );
    assert!(
        results(&r).iter().all(|(_, _, o)| o == "passed"),
        "{:?}",
        results(&r)
    );
}

#[test]
fn gate_audit_traces_a_vitest_file_run_alone() {
    let t = repo("exact");
    let out_file = t.root.parent().unwrap().join("observed.json");
    let out = t
        .gate(&[
            "audit",
            "--tests",
            "test/math.test.ts",
            "--out",
            out_file.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let observed: Value =
        serde_json::from_str(&std::fs::read_to_string(&out_file).unwrap()).unwrap();
    let opened: BTreeSet<String> = observed["tests"]["test/math.test.ts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    // Its own file, never the files whose names contain its name (`vitest run FILE` filters
    // by substring: it would run them too, and the trace would hold them).
    assert!(opened.contains("test/math.test.ts"), "{opened:?}");
    for other in ["test/mathx.test.ts", "pkg/test/math.test.ts"] {
        assert!(!opened.contains(other), "{other} in {opened:?}");
    }
}

#[test]
fn a_python_and_typescript_repository_gets_one_report_and_both_runners_run() {
    let t = TestRepo::from_fixture("js/mixed");
    link_modules(&t.root.join("web"), &[]);
    t.append("src/calc/core.py", "\n\ndef triple(x):\n    return 3 * x\n");
    t.append(
        "web/src/fmt.ts",
        "export const zero = (): string => money(0);\n",
    );
    t.commit("both");
    let (out, r) = run(&t, &["--affected", "HEAD~1...HEAD"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        selected(&r).into_iter().collect::<BTreeSet<_>>(),
        set(&["tests/test_core.py", "web/test/fmt.test.ts"]),
        "{r:#}"
    );
    let got: BTreeSet<(String, String, String)> = results(&r).into_iter().collect();
    for (id, file) in [
        ("tests/test_core.py::test_double", "tests/test_core.py"),
        (
            "web/test/fmt.test.ts::formats money",
            "web/test/fmt.test.ts",
        ),
    ] {
        let want = (id.to_string(), file.to_string(), "passed".to_string());
        assert!(got.contains(&want), "{want:?} in {got:?}");
    }
    // Breaking the TypeScript side alone fails the run, and only Vitest runs.
    t.write(
        "web/src/fmt.ts",
        "export const money = (cents: number): string => `${cents}`;\n",
    );
    t.commit("break fmt");
    let (out, r) = run(&t, &["--affected", "HEAD~1...HEAD"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(ran(&r), set(&["web/test/fmt.test.ts"]), "{r:#}");
}

/// The fixture's `vitest.config.ts` with `test.include`'s line replaced by `line`, committed,
/// then a change to `src/math.ts` committed: gate's report of the last commit, listed only.
fn with_test_line(t: &TestRepo, imports: &str, line: &str) -> Value {
    let config = std::fs::read_to_string(t.root.join("vitest.config.ts")).unwrap();
    t.write(
        "vitest.config.ts",
        &config
            .replace("import path from 'node:path';", imports)
            .replace("include: ['test/**/*.test.ts'],", line),
    );
    t.commit("configuration");
    t.append("src/math.ts", "// touched\n");
    t.commit("touch math");
    t.report(&["--affected", "HEAD~1...HEAD"])
}

#[test]
fn vitest_s_own_defaults_spread_into_exclude_are_read() {
    let t = repo("vitest");
    let r = with_test_line(
        &t,
        "import path from 'node:path';\nimport { configDefaults } from 'vitest/config';",
        "include: ['test/**/*.test.ts'],\n    exclude: [...configDefaults.exclude, 'e2e/**'],",
    );
    assert_eq!(r["tree_refusal"], Value::Null, "{r:#}");
    assert_eq!(
        selected(&r),
        ["test/math.test.ts", "test/sum.test.ts"],
        "{r:#}"
    );
}

#[test]
fn a_refused_vitest_key_is_quoted_as_the_file_wrote_it() {
    let t = repo("vitest");
    let r = with_test_line(
        &t,
        "import path from 'node:path';\nimport more from './more';",
        "include: [...more, 'test/**/*.test.ts'],",
    );
    let why = r["tree_refusal"].as_str().expect("refused");
    assert!(why.contains("`test.include`"), "{why}");
    assert!(why.contains("...more"), "{why}");
    assert!(!why.contains("Arr(") && !why.contains("Unknown("), "{why}");
}

#[test]
fn a_runner_that_is_not_installed_or_an_argument_gate_cannot_vet_is_no_pass() {
    for (fixture, test, runner) in [
        ("exact", "test/math.test.ts", "Vitest"),
        ("jest", "spec/words.spec.js", "Jest"),
    ] {
        // No `node_modules`: the runner cannot start, and the run is not a pass (exit 4).
        let t = TestRepo::from_fixture(&format!("js/{fixture}"));
        t.append(test, "// touched\n");
        t.commit("touch");
        let (out, r) = run(&t, &["--affected", "HEAD~1...HEAD"]);
        assert_eq!(out.status.code(), Some(4), "{fixture}: {}", text(&out));
        assert_eq!(r["run"]["outcome"], "broken", "{fixture}: {r:#}");
        assert!(
            text(&out).contains(&format!("{runner} is not installed")),
            "{fixture}: {}",
            text(&out)
        );
        // A runner argument that would replace the report gate reads: refused by name before
        // anything runs (exit 3).
        let out = t
            .gate(&["--affected", "HEAD~1...HEAD", "--", "--reporter=verbose"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3), "{fixture}: {}", text(&out));
        assert!(text(&out).contains("--reporter=verbose"), "{}", text(&out));
    }
}

/// `gate ARGS` refused before anything runs: exit 3, one line on stderr naming `named`.
fn refused(t: &TestRepo, args: &[&str], env: &[(&str, &str)], named: &str) {
    let out = t.gate(args).envs(env.iter().copied()).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{args:?}: {}", text(&out));
    assert!(stderr.contains(named), "{args:?}: {stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
}

/// `gate --affected HEAD~1...HEAD --json -- ARGS`, run: what it printed and its report.
fn run_with(t: &TestRepo, args: &[&str]) -> (Output, Value) {
    let all = [&["--affected", "HEAD~1...HEAD", "--json", "--"][..], args].concat();
    let out = t.gate(&all).output().unwrap();
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(&out)));
    (out, report)
}

/// Each result of a run: (id, outcome).
fn outcomes(r: &Value) -> BTreeSet<(String, String)> {
    results(r).into_iter().map(|(id, _, o)| (id, o)).collect()
}

fn pairs(items: &[(&str, &str)]) -> BTreeSet<(String, String)> {
    items
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn vitest_is_given_the_runner_arguments_on_its_list_through_its_own_parser() {
    let t = repo("vitest");
    t.write(
        "test/plan.test.ts",
        "import { it, expect } from 'vitest';\n\nit('fails first', () => {\n  expect(1).toBe(2);\n});\n\nit('fails again', () => {\n  expect(1).toBe(3);\n});\n\nit('waits', async () => {\n  await new Promise((r) => setTimeout(r, 300));\n});\n",
    );
    t.commit("a plan");
    t.append("test/math.test.ts", "// touched\n");
    t.commit("touch math");
    let range = ["--affected", "HEAD~1...HEAD", "--"];
    let with = |args: &[&'static str]| [&range[..], args].concat();
    // Off the list, refused by name before anything runs: a snapshot rewritten passes the test
    // it fails, another configuration, a word Vitest reads as a filter on the files, and what
    // the project has not allowed; `UPDATE_SNAPSHOT` is `--update` from the environment.
    for (args, named) in [
        (&["--update"][..], "`--update`"),
        (&["-u"], "`-u`"),
        (&["--config", "x"], "`--config`"),
        (&["test/sum.test.ts"], "`test/sum.test.ts` is not an option"),
        (&["--passWithNoTests"], "`--passWithNoTests`"),
    ] {
        refused(&t, &with(args), &[], named);
    }
    refused(
        &t,
        &range[..2],
        &[("UPDATE_SNAPSHOT", "all")],
        "`UPDATE_SNAPSHOT` (`all`)",
    );
    // `-t` narrows the run to the one test of two it names: that one passes, the other is
    // skipped; Vitest's command in the report holds the arguments.
    let (out, r) = run_with(&t, &["-t", "adds"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        outcomes(&r),
        pairs(&[
            ("test/math.test.ts::math > adds", "passed"),
            ("test/math.test.ts::math > multiplies", "skipped"),
        ]),
        "{}",
        text(&out)
    );
    assert_eq!(
        strings(&r["commands"][0]["argv"]),
        ["vitest", "run", "-t", "adds", "test/math.test.ts"],
        "{r:#}"
    );
    // Narrowed to nothing: no pass (exit 13), nothing recorded.
    let (out, r) = run_with(&t, &["-t", "nomatch"]);
    assert_eq!(out.status.code(), Some(13), "{}", text(&out));
    assert!(results(&r).is_empty(), "{r:#}");
    // `--bail 1` stops the file at its first failure: the tests it never started are skipped,
    // never passes (Vitest's JUnit report writes them with no failure).
    t.append("test/plan.test.ts", "// touched\n");
    t.commit("touch the plan");
    let (out, r) = run_with(&t, &["--bail", "1"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(
        outcomes(&r),
        pairs(&[
            ("test/plan.test.ts::fails first", "failed"),
            ("test/plan.test.ts::fails again", "skipped"),
            ("test/plan.test.ts::waits", "skipped"),
        ]),
        "{}",
        text(&out)
    );
    // `--testTimeout` bounds each test: the test that waits 300 ms passes, then times out.
    let (out, r) = run_with(&t, &["-t", "waits"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        outcomes(&r).contains(&("test/plan.test.ts::waits".into(), "passed".into())),
        "{r:#}"
    );
    let (out, r) = run_with(&t, &["-t", "waits", "--testTimeout=50"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        outcomes(&r).contains(&("test/plan.test.ts::waits".into(), "failed".into())),
        "{r:#}"
    );
    assert!(text(&out).contains("timed out in 50ms"), "{}", text(&out));
    // The project's `[js] allow_args` lets an option off the list through, in any spelling
    // Vitest reads.
    t.write(".gate.toml", "[js]\nallow_args = [\"--passWithNoTests\"]\n");
    t.commit("allow --passWithNoTests");
    t.append("test/math.test.ts", "// touched again\n");
    t.commit("touch math again");
    let (out, r) = run_with(&t, &["--pass-with-no-tests", "-t", "adds"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        outcomes(&r).contains(&("test/math.test.ts::math > adds".into(), "passed".into())),
        "{r:#}"
    );
}

#[test]
fn jest_is_given_the_runner_arguments_on_its_list_before_its_paths() {
    let t = repo("jest");
    t.append("lib/cart.js", "// touched\n");
    t.commit("touch cart");
    let range = ["--affected", "HEAD~1...HEAD", "--"];
    let with = |args: &[&'static str]| [&range[..], args].concat();
    for (args, named) in [
        (&["--updateSnapshot"][..], "`--updateSnapshot`"),
        (&["-u"], "`-u`"),
        (&["--config", "x"], "`--config`"),
        (
            &["spec/money.spec.js"],
            "`spec/money.spec.js` is not an option",
        ),
        // yargs reads `--bail` as a flag, and `1` as a path.
        (&["--bail", "1"], "`1` is not an option"),
        (&["--passWithNoTests"], "`--passWithNoTests`"),
    ] {
        refused(&t, &with(args), &[], named);
    }
    refused(
        &t,
        &range[..2],
        &[("JEST_JASMINE", "1")],
        "`JEST_JASMINE` (`1`)",
    );
    let (out, r) = run_with(&t, &["-t", "totals"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        outcomes(&r),
        pairs(&[
            ("spec/cart.spec.js::totals in cents", "passed"),
            ("spec/cart.spec.js::the setup file ran", "skipped"),
        ]),
        "{}",
        text(&out)
    );
    assert_eq!(
        strings(&r["commands"][0]["argv"]),
        [
            "jest",
            "-t",
            "totals",
            "--runTestsByPath",
            "--",
            "spec/cart.spec.js"
        ],
        "{r:#}"
    );
    let (out, r) = run_with(&t, &["-t", "nomatch"]);
    assert_eq!(out.status.code(), Some(13), "{}", text(&out));
    assert!(results(&r).is_empty(), "{r:#}");
    t.write(".gate.toml", "[js]\nallow_args = [\"--passWithNoTests\"]\n");
    t.commit("allow --passWithNoTests");
    t.append("lib/cart.js", "// touched again\n");
    t.commit("touch cart again");
    let (out, r) = run_with(&t, &["--passWithNoTests", "-ib"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        outcomes(&r),
        pairs(&[
            ("spec/cart.spec.js::totals in cents", "passed"),
            ("spec/cart.spec.js::the setup file ran", "passed"),
        ]),
        "{}",
        text(&out)
    );
}
