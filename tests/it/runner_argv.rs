//! A file name never becomes an option of a runner, and pytest's exit code is read with what
//! it collected: no name can turn a breaking change into a pass.

use crate::support::{BREAK_MONEY, TestRepo, selected, text};

/// The shop fixture without `testpaths`, so pytest collects test files anywhere.
fn shop_without_testpaths() -> TestRepo {
    let t = TestRepo::from_fixture("shop");
    t.write(
        "pyproject.toml",
        "[project]\nname = \"shop\"\nversion = \"0.1.0\"\n\n[tool.pytest.ini_options]\npythonpath = [\"src\", \"tests\"]\n",
    );
    t.commit("no testpaths");
    t
}

#[test]
fn a_test_file_named_like_an_option_runs_as_a_file_and_its_failure_blocks() {
    let t = shop_without_testpaths();
    t.write(
        "-kx_test.py",
        "from shop.money import to_cents\n\n\ndef test_cents():\n    assert to_cents(1) == 100\n",
    );
    t.commit("a test named like an option");
    t.append("src/shop/money.py", BREAK_MONEY);
    t.commit("break money");
    let r = t.report(&["--affected", "HEAD~1...HEAD"]);
    assert!(selected(&r).contains(&"-kx_test.py".to_string()), "{r:#}");
    let command: Vec<&str> = r["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        command.contains(&"./-kx_test.py") && !command.contains(&"-kx_test.py"),
        "the test is given as a path: {command:?}"
    );
    let out = t.gate(&["--affected", "HEAD~1...HEAD"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("-kx_test.py::test_cents"),
        "{}",
        text(&out)
    );
    let out = t.gate(&["verify", "HEAD~1...HEAD"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
}

#[test]
fn a_test_file_with_brackets_in_its_name_runs_and_does_not_block_the_others() {
    let t = TestRepo::from_fixture("shop");
    t.write(
        "tests/test_[cents].py",
        "from shop.money import to_cents\n\n\ndef test_cents():\n    assert to_cents(1) == 100\n",
    );
    t.commit("a bracketed test");
    let all = crate::support::breaking_money_fails(
        &t,
        &[
            "tests/test_[cents].py::test_cents",
            "tests/test_money.py::test_to_cents",
        ],
    );
    // The selected five ran, and the unselected tests of that folder stayed out.
    assert!(all.contains("5 failed in"), "{all}");
    assert!(!all.contains("passed"), "{all}");
}

#[test]
fn a_selected_file_whose_tests_the_project_deselects_passes_and_says_so() {
    let t = TestRepo::from_fixture("shop");
    t.write(
        "pyproject.toml",
        "[project]\nname = \"shop\"\nversion = \"0.1.0\"\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\npythonpath = [\"src\", \"tests\"]\naddopts = \"-m 'not slow'\"\nmarkers = [\"slow\"]\n",
    );
    t.write(
        "tests/test_slow.py",
        "import pytest\nimport shop.plugins.discount\n\n\n@pytest.mark.slow\ndef test_slow():\n    assert True\n",
    );
    t.commit("a slow test");
    t.append("src/shop/plugins/discount.py", "\n");
    t.commit("touch the plugin");
    let out = t
        .gate(&["--affected", "HEAD~1...HEAD", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let notes = r["notes"].to_string();
    assert!(
        notes.contains("tests/test_slow.py yielded no test: all 1 of its tests were deselected"),
        "{notes}"
    );
    assert_eq!(r["run"]["outcome"], "passed");
}

/// A file pytest cannot be given by name is collected through its folder, where the project's
/// own `--ignore` can drop it: that run is broken, never a silent pass.
#[test]
fn a_selected_file_pytest_does_not_collect_is_a_broken_run() {
    let t = TestRepo::from_fixture("shop");
    t.write(
        "pyproject.toml",
        "[project]\nname = \"shop\"\nversion = \"0.1.0\"\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\npythonpath = [\"src\", \"tests\"]\naddopts = \"--ignore=tests/test_[cents].py\"\n",
    );
    t.write(
        "tests/test_[cents].py",
        "from shop.money import to_cents\n\n\ndef test_cents():\n    assert to_cents(1) == 100\n",
    );
    t.commit("an ignored test");
    t.append("src/shop/money.py", "\n");
    t.commit("touch money");
    let out = t.gate(&["--affected", "HEAD~1...HEAD"]).output().unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
    assert!(
        text(&out).contains("pytest did not collect 1 selected file(s): tests/test_[cents].py"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_go_package_folder_named_like_an_option_is_passed_as_a_path() {
    let t = TestRepo::from_fixture("goshop");
    t.write(
        "ws/shop/-v/v.go",
        "package v\n\nfunc V() int { return 1 }\n",
    );
    t.write(
        "ws/shop/-v/v_test.go",
        "package v\n\nimport \"testing\"\n\nfunc TestV(t *testing.T) {}\n",
    );
    t.commit("an option-like package folder");
    let r = t.report(&["--files", "ws/shop/-v/v.go"]);
    let argv = r["go_commands"].to_string();
    assert!(argv.contains("\"./-v\""), "{argv}");
    assert!(!argv.contains("\"-v\""), "{argv}");
}

#[test]
fn the_printed_command_is_quoted_for_a_posix_shell() {
    let t = TestRepo::from_fixture("shop");
    let name = "tests/test_x$(touch PWNED) y.py";
    t.write(name, "import shop.money\n\n\ndef test_x():\n    pass\n");
    t.commit("a test with a hostile name");
    let out = t
        .gate(&["--files", "src/shop/money.py", "--list"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let command = stdout
        .lines()
        .find_map(|l| l.strip_prefix("command: "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(
        command.contains("'./tests/test_x$(touch PWNED) y.py'"),
        "{command}"
    );
    let ran = std::process::Command::new("sh")
        .args(["-c", command])
        .current_dir(&t.root)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    let ran_text = String::from_utf8_lossy(&ran.stdout);
    assert!(ran.status.success(), "{ran_text}");
    assert!(
        !t.root.join("PWNED").exists(),
        "pasting the command ran the name"
    );
    assert!(
        ran_text.contains("test_x$(touch PWNED) y.py ."),
        "{ran_text}"
    );
}
