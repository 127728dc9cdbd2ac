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
