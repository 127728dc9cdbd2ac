//! Paths on the command line are read as git reads them.

use crate::support::{TestRepo, row, selected, text};

#[test]
fn files_are_relative_to_the_working_directory_and_a_path_naming_nothing_is_an_error() {
    let t = TestRepo::from_fixture("shop");
    let out = t
        .gate(&["--files", "test_money.py", "--json", "--list"])
        .current_dir(t.root.join("tests"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(selected(&r), ["tests/test_money.py"]);
    assert_eq!(row(&r, "tests/test_money.py")["status"], "modified");
    // -C first, then the path relative to it.
    let out = t
        .gate(&[
            "-C",
            "src/shop",
            "--files",
            "../../tests/test_money.py",
            "--json",
            "--list",
        ])
        .output()
        .unwrap();
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(selected(&r), ["tests/test_money.py"], "{}", text(&out));
    for (path, says) in [
        (
            "tests/test_mony.py",
            "tests/test_mony.py: no such file in the working tree or in HEAD",
        ),
        ("../elsewhere.py", "../elsewhere.py: outside the repository"),
    ] {
        let out = t.gate(&["--files", path]).output().unwrap();
        assert_eq!(out.status.code(), Some(3), "{path}: {}", text(&out));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(says),
            "{}",
            text(&out)
        );
        assert!(out.stdout.is_empty(), "nothing selected: {}", text(&out));
    }
    // A file deleted from the working tree but in HEAD is a deletion; a folder is its files.
    t.remove("tests/test_money.py");
    let r = t.report(&["--files", "tests/test_money.py", "src/shop/plugins"]);
    assert_eq!(row(&r, "tests/test_money.py")["status"], "deleted");
    row(&r, "src/shop/plugins/discount.py");
    let abs = t.root.join("src/shop/money.py");
    let out = t
        .gate(&["explain", abs.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("src/shop/money.py is reached by"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_repository_owned_by_another_user_is_named_with_the_safe_directory_fix() {
    let t = TestRepo::from_fixture("shop");
    // CI runs as root, which may hand the checkout to `nobody`.
    std::os::unix::fs::chown(&t.root, Some(65534), Some(65534))
        .expect("this test gives the repository to another user (run as root)");
    let out = t.gate(&["--files", "src/shop/money.py"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{err}");
    assert!(
        err.contains("owned by another user") && err.contains("safe.directory"),
        "{err}"
    );
    assert!(!err.contains("not inside a git repository"), "{err}");
}

/// `-C DIR` goes before any subcommand, as with `git -C DIR log`.
#[test]
fn dash_c_goes_before_a_subcommand_as_in_git() {
    let t = TestRepo::from_fixture("shop");
    let elsewhere = t.root.parent().unwrap();
    for args in [
        vec!["-C", "repo", "plan"],
        vec!["-C", "repo", "explain", "src/shop/money.py"],
        vec!["explain", "-C", "repo", "src/shop/money.py"],
    ] {
        let out = t.gate(&args).current_dir(elsewhere).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out));
    }
    let out = t.gate(&["--list", "plan"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
}
