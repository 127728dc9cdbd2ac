//! Part 9: fewer refusals and no silent misses — stubs count only for type checkers, repository
//! metadata is inert, a pytest plugin the project registers reaches every test, a
//! pyproject.toml pytest cannot read is a named refusal, a runner without pytest is named, and
//! a big selection prints short.

use crate::support::{TestRepo, row, selected, text};

/// `import shop.money` also found `money.pyi`, and the stub's imports were followed as if they
/// ran. Now a stub reaches only the tests that run a type checker over it; a stub or
/// `py.typed` change nothing else reaches is inert — and what the module really imports still
/// selects its tests (real pytest fails there).
#[test]
fn a_stub_counts_only_for_tests_that_run_a_type_checker() {
    let t = TestRepo::from_fixture("shop");
    t.write(
        "src/shop/money.pyi",
        "from shop.checkout import Checkout\nCENTS: int\ndef to_cents(amount: float) -> int: ...\n",
    );
    t.write("src/shop/py.typed", "");
    t.commit("stubs");
    // checkout.py is imported by the stub only: the tests of money.py do not run it.
    let r = t.report(&["--files", "src/shop/checkout.py"]);
    let chosen = selected(&r);
    assert!(
        chosen.contains(&"tests/test_checkout.py".to_string()),
        "{r:#}"
    );
    assert!(
        !chosen.contains(&"tests/test_money.py".to_string()),
        "{r:#}"
    );
    for stub in ["src/shop/money.pyi", "src/shop/py.typed"] {
        let r = t.report(&["--files", stub]);
        let stub_row = row(&r, stub);
        assert_eq!(stub_row["verdict"], "inert", "{r:#}");
        assert!(
            stub_row["reasons"]
                .to_string()
                .contains("type information only"),
            "{r:#}"
        );
        assert!(selected(&r).is_empty(), "{r:#}");
    }
    // A test that runs mypy over the package reaches the stub, and through it what it names.
    t.write(
        "tests/test_types.py",
        "import subprocess, sys\n\ndef test_types():\n    subprocess.run([sys.executable, '-m', 'mypy', 'src/shop'], check=False)\n",
    );
    // So does a pytest-mypy-plugins case file (a YAML test) of a project that uses the
    // plugin; a YAML file of data is no test.
    t.append(
        "pyproject.toml",
        "\n[project.optional-dependencies]\ntyping = [\"pytest-mypy-plugins\"]\n",
    );
    t.write(
        "tests/test_typing.yml",
        "- case: to_cents_types\n  main: |\n    from shop.money import to_cents\n    reveal_type(to_cents(1.0))  # N: Revealed type is \"builtins.int\"\n",
    );
    t.write("tests/test_settings.yml", "currency: EUR\n");
    t.commit("type-checking tests");
    let r = t.report(&["--files", "src/shop/money.pyi"]);
    assert_eq!(
        row(&r, "src/shop/money.pyi")["verdict"],
        "resolved",
        "{r:#}"
    );
    assert_eq!(
        selected(&r),
        ["tests/test_types.py", "tests/test_typing.yml"],
        "{r:#}"
    );
    // The case's snippet imports shop.money: the module's change selects it as well.
    let r = t.report(&["--files", "src/shop/money.py"]);
    assert!(
        selected(&r).contains(&"tests/test_typing.yml".to_string()),
        "{r:#}"
    );
    assert!(
        !selected(&r).contains(&"tests/test_settings.yml".to_string()),
        "{r:#}"
    );
    // A YAML file of data is not a test: it does not select itself.
    let r = t.report(&["--files", "tests/test_settings.yml"]);
    assert!(
        !selected(&r).contains(&"tests/test_settings.yml".to_string()),
        "{r:#}"
    );
    // A conftest that cannot be imported breaks the whole session, the case file's too.
    let r = t.report(&["--files", "tests/conftest.py"]);
    assert!(
        selected(&r).contains(&"tests/test_typing.yml".to_string()),
        "{r:#}"
    );
    // Without the plugin (not installed here) pytest would reject the case file: it goes.
    t.remove("tests/test_typing.yml");
    t.commit("no case file");
    // The module itself still selects every test that imports it, and they fail under pytest.
    crate::support::breaking_money_fails(&t, &["tests/test_money.py::test_to_cents"]);
}

/// Repository metadata and tool configuration no test reads are inert by default; a Makefile a
/// test runs is not; workflows stay named_full; `inert_defaults = false` drops the list.
#[test]
fn repository_metadata_is_inert_unless_something_reads_it() {
    let t = TestRepo::from_fixture("shop");
    let metadata = [
        ".github/dependabot.yml",
        ".github/FUNDING.yml",
        ".github/ISSUE_TEMPLATE/bug.md",
        ".github/CODEOWNERS",
        ".pre-commit-config.yaml",
        ".readthedocs.yaml",
        "mkdocs.yml",
        "CITATION.cff",
        ".devcontainer/devcontainer.json",
        ".vscode/settings.json",
        "MANIFEST.in",
        "Makefile",
        ".golangci.yml",
        ".flake8",
        "ruff.toml",
        ".prettierrc.json",
        "codecov.yml",
        ".git_archival.txt",
        "changelog.d/123.feature",
        "newsfragments/45.bugfix",
    ];
    for file in metadata {
        t.write(file, "x: 1\n");
    }
    t.write(".github/workflows/ci.yml", "on: push\n");
    t.commit("metadata");
    let mut args = vec!["--files"];
    args.extend(metadata);
    args.push(".github/workflows/ci.yml");
    let r = t.report(&args);
    for file in metadata {
        assert_eq!(row(&r, file)["verdict"], "inert", "{file}: {r:#}");
    }
    assert_eq!(row(&r, ".github/workflows/ci.yml")["verdict"], "named_full");
    // A test that runs `make` reads the Makefile: then a change to it selects that test, and a
    // real pytest run fails when the Makefile breaks it.
    t.write(
        "tests/test_make.py",
        "import pathlib\n\ndef test_make():\n    import subprocess\n    argv = ['make', '--version']\n    assert 'broken' not in pathlib.Path('Makefile').read_text(), argv\n",
    );
    t.commit("a test that runs make");
    let r = t.report(&["--files", "Makefile"]);
    assert_eq!(row(&r, "Makefile")["verdict"], "resolved", "{r:#}");
    assert_eq!(selected(&r), ["tests/test_make.py"], "{r:#}");
    t.write("Makefile", "broken:\n");
    t.commit("break the Makefile");
    let out = t.gate(&["--affected", "HEAD~1...HEAD"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    // Without the defaults, metadata nothing reaches is refused again.
    t.write(".gate.toml", "inert_defaults = false\n");
    t.commit("no inert defaults");
    let r = t.report(&["--files", ".github/FUNDING.yml"]);
    assert_eq!(
        row(&r, ".github/FUNDING.yml")["verdict"],
        "refused",
        "{r:#}"
    );
}

/// A plugin the project registers (`-p` in addopts, a `pytest11` entry point) is loaded for
/// every test: a change to it, or to what it imports, selects every test — before, no test
/// reached it and a broken plugin passed the gate.
#[test]
fn a_pytest_plugin_the_project_registers_reaches_every_test() {
    let t = TestRepo::from_fixture("shop");
    t.write(
        "pyproject.toml",
        "[project]\nname = \"shop\"\nversion = \"0.1.0\"\n\n[project.entry-points.pytest11]\nshop = \"shop.entry_plugin\"\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\npythonpath = [\"src\", \"tests\"]\naddopts = [\"-p\", \"shop.pytest_plugin\"]\n",
    );
    t.write(
        "src/shop/pytest_plugin.py",
        "from shop import untested\n\ndef pytest_runtest_setup(item):\n    assert untested.nobody_tests_me() == 42\n",
    );
    t.write("src/shop/entry_plugin.py", "OPTIONS = []\n");
    t.commit("plugins");
    let tests = t.report(&["--files", "src/shop/cart.py"])["test_files"]
        .as_u64()
        .unwrap() as usize;
    for file in [
        "src/shop/pytest_plugin.py",
        "src/shop/untested.py",
        "src/shop/entry_plugin.py",
    ] {
        let r = t.report(&["--files", file]);
        assert_eq!(selected(&r).len(), tests, "{file}: {r:#}");
        assert!(
            r["selected"]
                .to_string()
                .contains("loads the pytest plugin"),
            "{file}: {r:#}"
        );
    }
    t.write(
        "src/shop/untested.py",
        "def nobody_tests_me():\n    return 0\n",
    );
    t.commit("break what the plugin imports");
    let out = t.gate(&["--affected", "HEAD~1...HEAD"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("tests/test_money.py"), "{}", text(&out));
}

/// A pyproject.toml pytest cannot parse is a fact about the tree: every row still gets its
/// verdict, the run is refused naming the file, the line and the parser's message, and
/// `--json` stays a report.
#[test]
fn a_malformed_pyproject_is_a_named_refusal_and_the_json_stays_a_report() {
    let t = TestRepo::from_fixture("shop");
    t.write(
        "pyproject.toml",
        "[project]\nname = \"shop\"\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"\n",
    );
    t.commit("break pyproject");
    t.append("src/shop/cart.py", "\n# touched\n");
    t.commit("touch cart");
    let out = t
        .gate(&["--affected", "HEAD~1...HEAD", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
    assert_eq!(r["verdict"], "refused", "{r:#}");
    assert_eq!(row(&r, "src/shop/cart.py")["verdict"], "resolved", "{r:#}");
    let fact = r["tree_refusal"].as_str().expect("the refusal is named");
    assert!(fact.starts_with("pyproject.toml: "), "{fact}");
    assert!(fact.contains("line 5"), "{fact}");
    let out = t.gate(&["--affected", "HEAD~1...HEAD"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).contains("error: refused — pyproject.toml: "),
        "{}",
        text(&out)
    );
    // A decision lets the bounded remainder run, as for any refusal.
    let out = t
        .gate(&[
            "--affected",
            "HEAD~1...HEAD",
            "--list",
            "--affected-decision",
            "ticket 9",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

/// An interpreter without pytest is a runner that cannot start (exit 4), named with its fix —
/// not "tests failed".
#[test]
fn an_interpreter_without_pytest_is_named_before_anything_runs() {
    let t = TestRepo::from_fixture("shop");
    // `-S`: no site-packages, so this python has no pytest.
    t.write(
        ".gate.toml",
        "runner = [\"python3\", \"-S\", \"-m\", \"pytest\"]\n",
    );
    t.commit("a runner without pytest");
    let out = t.gate(&["--files", "src/shop/money.py"]).output().unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("`python3 -S` has no module `pytest`: install it into that interpreter"),
        "{err}"
    );
    assert!(!err.contains("FAILED"), "{err}");
}

/// A one-file change that selects many tests prints a few chains per row and the first tests,
/// each cut with its count; `--verbose` and `--json` have everything.
#[test]
fn a_big_selection_prints_short() {
    let t = TestRepo::from_fixture("shop");
    for i in 0..40 {
        t.write(
            &format!("tests/many/test_m{i:02}.py"),
            "from shop.money import to_cents\n\ndef test_ok():\n    assert to_cents(1) == 100\n",
        );
    }
    t.commit("many tests");
    let out = t
        .gate(&["--files", "src/shop/money.py", "--list"])
        .output()
        .unwrap();
    let short = text(&out);
    assert_eq!(out.status.code(), Some(0), "{short}");
    assert!(short.lines().count() < 45, "{short}");
    assert!(
        short.contains("more test file(s) this change selects; --verbose or --json for all"),
        "{short}"
    );
    let all = selected(&t.report(&["--files", "src/shop/money.py"])).len();
    assert!(all > 40, "{all}");
    assert!(
        short.contains(&format!(
            "… and {} more selected; --verbose or --json for all",
            all - 20
        )),
        "{short}"
    );
    let out = t
        .gate(&["--files", "src/shop/money.py", "--list", "--verbose"])
        .output()
        .unwrap();
    let long = text(&out);
    assert!(long.contains("tests/many/test_m39.py"), "{long}");
    assert!(!long.contains("--verbose or --json for all"), "{long}");
    assert_eq!(
        long.lines().filter(|l| l.starts_with("  tests/")).count(),
        all,
        "{long}"
    );
}

/// A folder a conftest puts on `sys.path` is an import root: its modules are reached through
/// imports and module-name strings, each by the tests that name it — not every file under it
/// by every test below the conftest.
#[test]
fn a_folder_put_on_sys_path_is_an_import_root_not_data() {
    let t = TestRepo::from_fixture("shop");
    t.write(
        "tests/webapps/conftest.py",
        "import sys\nfrom pathlib import Path\n\nHERE = Path(__file__).parent\nsys.path.insert(0, str(HERE / \"apps\"))\n",
    );
    for app in ["alpha", "beta"] {
        t.write(&format!("tests/webapps/apps/{app}/__init__.py"), "");
        t.write(
            &format!("tests/webapps/apps/{app}/app.py"),
            &format!("def create_app():\n    return {app:?}\n"),
        );
    }
    t.write(
        "tests/webapps/test_alpha.py",
        "from importlib import import_module\n\ndef test_alpha():\n    assert import_module(\"alpha.app\").create_app() == \"alpha\"\n",
    );
    t.write(
        "tests/webapps/test_beta.py",
        "import pkgutil\n\nTARGET = \"beta.app:create_app\"\n\ndef test_beta():\n    assert pkgutil.resolve_name(TARGET)() == \"beta\"\n",
    );
    t.commit("apps on sys.path");
    for (app, test) in [
        ("alpha", "tests/webapps/test_alpha.py"),
        ("beta", "tests/webapps/test_beta.py"),
    ] {
        let file = format!("tests/webapps/apps/{app}/app.py");
        let r = t.report(&["--files", &file]);
        assert_eq!(selected(&r), [test], "{file}: {r:#}");
    }
    t.write(
        "tests/webapps/apps/alpha/app.py",
        "def create_app():\n    return \"broken\"\n",
    );
    t.commit("break alpha");
    let out = t.gate(&["--affected", "HEAD~1...HEAD"]).output().unwrap();
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(
        all.contains("FAILED tests/webapps/test_alpha.py::test_alpha"),
        "{all}"
    );
    assert!(!all.contains("test_beta"), "{all}");
}

/// An example project's own manifests (`examples/demo/pyproject.toml`, its requirements) are
/// not the suite's: inert when the example holds none of the gated tests and nothing outside
/// it depends on its files. A sub-project the suite imports keeps its requirements the
/// suite's (the whole suite, by name), and one a test reads is resolved to that test.
#[test]
fn an_example_projects_manifests_are_not_the_suites() {
    let t = TestRepo::from_fixture("shop");
    t.write(
        "examples/demo/pyproject.toml",
        "[project]\nname = \"demo\"\n",
    );
    t.write("examples/demo/requirements.txt", "flask==3.0\n");
    t.write("docs/requirements.txt", "sphinx\n");
    t.write("examples/demo/demo/app.py", "import shop\n");
    t.write(
        "libs/extra/setup.py",
        "from setuptools import setup\nsetup()\n",
    );
    t.write("libs/extra/requirements.txt", "attrs\n");
    t.write("libs/extra/extra_mod.py", "VALUE = 1\n");
    t.write(
        "tests/test_extra.py",
        "from pathlib import Path\n\ndef test_value():\n    assert 'VALUE' in Path('libs/extra/extra_mod.py').read_text()\n",
    );
    t.commit("an example and a library");
    let files = [
        "examples/demo/pyproject.toml",
        "examples/demo/requirements.txt",
        "libs/extra/requirements.txt",
        "docs/requirements.txt",
    ];
    let mut args = vec!["--files"];
    args.extend(files);
    let r = t.report(&args);
    for file in &files[..2] {
        assert_eq!(row(&r, file)["verdict"], "inert", "{file}: {r:#}");
        assert!(
            row(&r, file)["reasons"]
                .to_string()
                .contains("the project in examples/demo/"),
            "{r:#}"
        );
    }
    // `tests/test_extra.py` reads a file of libs/extra: its requirements are the suite's.
    assert_eq!(
        row(&r, "libs/extra/requirements.txt")["verdict"],
        "named_full",
        "{r:#}"
    );
    assert_eq!(r["verdict"], "named_full", "{r:#}");
    // The docs build's pins: the inert globs cover docs/.
    assert_eq!(
        row(&r, "docs/requirements.txt")["verdict"],
        "inert",
        "{r:#}"
    );
    // A test that reads the example's requirements selects that test, and really fails.
    t.write(
        "tests/test_pins.py",
        "from pathlib import Path\n\ndef test_pins():\n    text = Path(__file__).parent.parent.joinpath('examples/demo/requirements.txt').read_text()\n    assert text.startswith('flask')\n",
    );
    t.commit("a test that reads the pins");
    t.write("examples/demo/requirements.txt", "django\n");
    t.commit("change the pins");
    let r = t.report(&["--affected", "HEAD~1...HEAD"]);
    let pins = row(&r, "examples/demo/requirements.txt");
    assert_eq!(pins["verdict"], "resolved", "{r:#}");
    assert_eq!(selected(&r), ["tests/test_pins.py"], "{r:#}");
    let out = t.gate(&["--affected", "HEAD~1...HEAD"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("FAILED tests/test_pins.py"),
        "{}",
        text(&out)
    );
    // The team's own `[[whole_suite]]` entry is never second-guessed.
    t.write(
        ".gate.toml",
        "[[whole_suite]]\non = \"examples/**/requirements.txt\"\nreason = \"the examples pin the docs build\"\n",
    );
    t.commit("the team says the pins are the suite's");
    let r = t.report(&[
        "--files",
        "examples/demo/pyproject.toml",
        "examples/demo/requirements.txt",
    ]);
    assert_eq!(
        row(&r, "examples/demo/requirements.txt")["verdict"],
        "named_full",
        "{r:#}"
    );
    assert_eq!(row(&r, "examples/demo/pyproject.toml")["verdict"], "inert");
}

/// A CI script no test runs is an untested file, not a refusal (a test that runs it has an
/// argv edge, and then selects); an interpreter pin under any `.python-version*` name is the
/// whole suite, by name.
#[test]
fn an_unreferenced_script_is_untested_and_a_version_pin_is_named_full() {
    let t = TestRepo::from_fixture("shop");
    t.write("ci_tools/nightly.sh", "#!/bin/sh\nexit 0\n");
    t.write("scripts/check.sh", "#!/bin/sh\nexit 0\n");
    t.write(".python-version-default", "3.13\n");
    t.write(
        "tests/test_check.py",
        "import subprocess\n\ndef test_check():\n    assert subprocess.run(['sh', 'scripts/check.sh']).returncode == 0\n",
    );
    t.commit("scripts");
    let r = t.report(&[
        "--files",
        "ci_tools/nightly.sh",
        "scripts/check.sh",
        ".python-version-default",
    ]);
    let nightly = row(&r, "ci_tools/nightly.sh");
    assert_eq!(nightly["verdict"], "resolved", "{r:#}");
    assert_eq!(nightly["tests"], serde_json::json!([]), "{r:#}");
    assert!(
        nightly["reasons"].to_string().contains("untested file"),
        "{r:#}"
    );
    assert_eq!(
        row(&r, "scripts/check.sh")["tests"],
        serde_json::json!(["tests/test_check.py"]),
        "{r:#}"
    );
    assert_eq!(
        row(&r, ".python-version-default")["verdict"],
        "named_full",
        "{r:#}"
    );
    // The script a test runs breaks it: selected, and real pytest fails there.
    t.write("scripts/check.sh", "#!/bin/sh\nexit 3\n");
    t.commit("break the script");
    let out = t.gate(&["--affected", "HEAD~1...HEAD"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("FAILED tests/test_check.py"),
        "{}",
        text(&out)
    );
}
