//! Doctests are tests: with `--doctest-modules` every module pytest walks to runs its
//! docstring examples, with `--doctest-glob` the matching text files run theirs; what those
//! examples import is what they depend on. Checked against real pytest runs.

use crate::support::{TestRepo, selected, text};

/// Breaks what a module's docstring example imports and what a Markdown file's example
/// imports; neither is imported by any test module's code.
fn break_example_imports(t: &TestRepo) {
    t.write("src/pkg/helpers.py", "def double(x):\n    return 3 * x\n");
    t.write("src/pkg/other.py", "def untested():\n    return 2\n");
    t.commit("change what the examples import");
}

#[test]
fn a_change_selects_the_doctests_whose_examples_import_it() {
    let t = TestRepo::from_fixture("doctests");
    break_example_imports(&t);
    let r = t.report(&["--affected", "HEAD~1...HEAD"]);
    assert_eq!(
        selected(&r),
        [
            "docs/guide.md",
            "src/pkg/core.py",
            "src/pkg/helpers.py",
            "src/pkg/other.py",
            "tests/test_core.py"
        ]
    );
    // The truth: real pytest fails exactly the two doctests, and gate's run sees both.
    let out = t.gate(&["--affected", "HEAD~1...HEAD"]).output().unwrap();
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    for failing in ["docs/guide.md::guide.md", "src/pkg/core.py::pkg.core.add"] {
        assert!(said.contains(failing), "{failing} not run: {said}");
    }
}

#[test]
fn without_doctest_options_text_files_and_modules_are_no_tests() {
    let plain = "[tool.pytest.ini_options]\npythonpath = [\"src\"]\ntestpaths = [\"src\", \"tests\", \"docs\"]\n";
    let t = TestRepo::from_fixture("doctests");
    t.write("pyproject.toml", plain);
    t.commit("no doctest options");
    break_example_imports(&t);
    let r = t.report(&["--affected", "HEAD~1...HEAD"]);
    assert!(selected(&r).is_empty(), "{r}");
    // The runner's own options count as addopts do: the modules are tests again.
    let t = TestRepo::from_fixture("doctests");
    t.write("pyproject.toml", plain);
    t.write(
        ".gate.toml",
        "runner = \"python3 -m pytest --doctest-modules\"\n",
    );
    t.commit("doctests through the runner");
    break_example_imports(&t);
    let r = t.report(&["--affected", "HEAD~1...HEAD"]);
    let got = selected(&r);
    assert!(got.contains(&"src/pkg/core.py".to_string()), "{got:?}");
    assert!(!got.contains(&"docs/guide.md".to_string()), "{got:?}");
}

/// A `--doctest-glob` with a `/` matches the path's end after any folders, and fnmatch's `*`
/// crosses folders: `docs/*.md` collects `docs/deep/guide.md` and `more/docs/extra.md`. `PYTEST_ADDOPTS` in the `[env]`
/// table counts as addopts does. Both checked against the real pytest run.
#[test]
fn a_glob_with_a_folder_and_pytest_addopts_from_the_env_table() {
    let t = TestRepo::from_fixture("doctests");
    t.write(
        "pyproject.toml",
        "[tool.pytest.ini_options]\npythonpath = [\"src\"]\ntestpaths = [\"src\", \"tests\", \"docs\", \"more\"]\n",
    );
    t.write(
        ".gate.toml",
        "[env]\nPYTEST_ADDOPTS = \"--doctest-glob='docs/*.md' --doctest-modules\"\n",
    );
    let guide = std::fs::read_to_string(t.root.join("docs/guide.md")).unwrap();
    t.remove("docs/guide.md");
    t.write("docs/deep/guide.md", &guide);
    t.write("more/docs/extra.md", &guide);
    t.write("docs/notes.md", "Notes\n\n    >>> 1 + 1\n    2\n");
    t.write("README.md", "Read me\n\n    >>> 1 + 1\n    3\n");
    t.commit("doctests from the environment, nested");
    break_example_imports(&t);
    let r = t.report(&["--affected", "HEAD~1...HEAD"]);
    assert_eq!(
        selected(&r),
        [
            "docs/deep/guide.md",
            "more/docs/extra.md",
            "src/pkg/core.py",
            "src/pkg/helpers.py",
            "src/pkg/other.py",
            "tests/test_core.py"
        ]
    );
    let out = t.gate(&["--affected", "HEAD~1...HEAD"]).output().unwrap();
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    for failing in [
        "docs/deep/guide.md::guide.md",
        "more/docs/extra.md::extra.md",
        "src/pkg/core.py::pkg.core.add",
    ] {
        assert!(said.contains(failing), "{failing} not run: {said}");
    }
    // pytest itself, run whole, collects exactly these text files.
    let whole = std::process::Command::new("python3")
        .args(["-m", "pytest", "--collect-only", "-q"])
        .env(
            "PYTEST_ADDOPTS",
            "--doctest-glob='docs/*.md' --doctest-modules",
        )
        .current_dir(&t.root)
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&whole.stdout);
    assert!(listed.contains("docs/deep/guide.md::guide.md"), "{listed}");
    assert!(listed.contains("docs/notes.md::notes.md"), "{listed}");
    assert!(!listed.contains("README.md"), "{listed}");
}

/// A module a build generates (setuptools-scm's `_version.py`) is git-ignored, yet pytest's
/// `--doctest-modules` walk finds it on disk and runs its examples in every full run: it is a
/// test unit of the gate too, its imports its edges, its content read from disk. Checked
/// against the real full run, then again after the file on disk changes what it imports.
#[test]
fn a_git_ignored_module_pytest_collects_from_disk_is_a_test_unit() {
    let t = TestRepo::from_fixture("doctests");
    t.write(".gitignore", "src/pkg/_version.py\n");
    t.write(
        "src/pkg/_version.py",
        "\"\"\"\n>>> from pkg.other import untested\n>>> untested()\n1\n\"\"\"\nversion = '1.0'\n",
    );
    t.commit("ignore the generated module");
    assert!(
        t.repo
            .index()
            .unwrap()
            .get_path(std::path::Path::new("src/pkg/_version.py"), 0)
            .is_none(),
        "the generated module must stay out of git"
    );
    t.write("src/pkg/other.py", "def untested():\n    return 2\n");
    t.commit("break what the generated module's example imports");
    // The truth: the full run fails the generated module's doctest.
    let full = std::process::Command::new("python3")
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .current_dir(&t.root)
        .output()
        .unwrap();
    let said = text(&full);
    assert!(
        said.contains("FAILED src/pkg/_version.py::pkg._version"),
        "{said}"
    );
    let r = t.report(&["--affected", "HEAD~1...HEAD"]);
    assert!(
        selected(&r).contains(&"src/pkg/_version.py".to_string()),
        "{r}"
    );
    // The plans name it, with the blob id of the bytes on disk (git's own hash of them).
    let dir = t.root.parent().unwrap().join("plans");
    let out = t
        .gate(&["plan", "--out", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("ast-plan.json")).unwrap()).unwrap();
    let on_disk = plan["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "src/pkg/_version.py")
        .unwrap_or_else(|| panic!("{plan}"));
    let bytes = std::fs::read(t.root.join("src/pkg/_version.py")).unwrap();
    let blob = git2::Oid::hash_object(git2::ObjectType::Blob, &bytes).unwrap();
    assert_eq!(on_disk["blob"], blob.to_string(), "{on_disk}");
    let out = t.gate(&["--affected", "HEAD~1...HEAD"]).output().unwrap();
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("src/pkg/_version.py::pkg._version"), "{said}");
    // The file on disk now imports another module: a change to that one selects it, the
    // stored graph notwithstanding (it is keyed by the file's content).
    t.write(
        "src/pkg/_version.py",
        "\"\"\"\n>>> from pkg.helpers import double\n>>> double(1)\n2\n\"\"\"\n",
    );
    t.write("src/pkg/helpers.py", "def double(x):\n    return 3 * x\n");
    t.commit("break what the edited generated module imports");
    let r = t.report(&["--affected", "HEAD~1...HEAD"]);
    assert!(
        selected(&r).contains(&"src/pkg/_version.py".to_string()),
        "{r}"
    );
    let r = t.report(&["--affected", "HEAD~2...HEAD~1"]);
    assert!(
        !selected(&r).contains(&"src/pkg/_version.py".to_string()),
        "other.py no longer reaches it: {r}"
    );
}
