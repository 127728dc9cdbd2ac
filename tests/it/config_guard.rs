//! A commit cannot loosen the configuration that gates it, and configuration that matches
//! nothing is an error, not an empty selection.

use crate::support::{BREAK_MONEY, TestRepo, row, text};

#[test]
fn a_commit_that_breaks_code_and_loosens_gate_toml_is_gated_under_the_base_configuration() {
    for (loosening, says) in [
        (
            "runner = \"true\"\n",
            "runs another runner: `true` instead of",
        ),
        ("max_depth = 0\n", "would select fewer tests"),
        ("[python]\nroots = [\"docs\"]\n", "would select fewer tests"),
    ] {
        let t = TestRepo::from_fixture("shop");
        t.write(".gate.toml", loosening);
        t.append("src/shop/money.py", BREAK_MONEY);
        t.commit("break money and loosen the gate");
        let out = t
            .gate(&["verify", "HEAD~1...HEAD", "--json"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{loosening}: {}", text(&out));
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let reasons = row(&r, ".gate.toml")["reasons"].to_string();
        assert!(
            reasons.contains("gated under the configuration of the base"),
            "{loosening}: {reasons}"
        );
        assert!(reasons.contains(says), "{loosening}: {reasons}");
        assert!(
            r["notes"]
                .to_string()
                .contains("gated under the base's configuration"),
            "{r:#}"
        );
        // Once landed, the new configuration governs.
        t.append("src/shop/money.py", "\n");
        t.commit("next");
        let r = t.report(&["--affected", "HEAD~1...HEAD"]);
        assert!(
            !r["notes"].to_string().contains("base's configuration"),
            "{r:#}"
        );
    }
}

#[test]
fn import_roots_that_name_no_folder_are_a_configuration_error() {
    for (roots, says) in [
        (
            "[\"nowhere\"]",
            "line 2: `python.roots`: `nowhere` is no folder of the gated tree",
        ),
        ("[\"/\"]", "line 2: `python.roots`: `/` is an absolute path"),
        (
            "[\"../..\"]",
            "line 2: `python.roots`: `../..` leaves the repository",
        ),
    ] {
        let t = TestRepo::from_fixture("shop");
        t.write(".gate.toml", &format!("[python]\nroots = {roots}\n"));
        t.commit("roots");
        t.append("src/shop/money.py", BREAK_MONEY);
        t.commit("break money");
        let out = t.gate(&["--affected", "HEAD~1...HEAD"]).output().unwrap();
        assert_eq!(out.status.code(), Some(3), "{roots}: {}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with(&format!("error: .gate.toml: {says}")),
            "{roots}: {err}"
        );
    }
}

#[test]
fn a_depends_rule_whose_tests_match_nothing_is_an_error_or_keeps_the_refusal() {
    let t = TestRepo::from_fixture("shop");
    t.write(
        ".gate.toml",
        "[[depends]]\ntests = \"tests/test_deploy*.py\"\non = \"scripts/*.ini\"\n",
    );
    t.commit("a rule naming no test");
    t.append("scripts/deploy.ini", "port = 22\n");
    t.commit("deploy");
    let out = t.gate(&["--affected", "HEAD~1...HEAD"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "`[[depends]]` rule 1: `tests` (tests/test_deploy*.py) matches no test file of the gated tree"
        ),
        "{}",
        text(&out)
    );
    // A rule that matched until this change deleted its tests keeps the refusal, and says so.
    let t = TestRepo::from_fixture("shop");
    t.write("tests/test_deploy.py", "def test_deploy():\n    pass\n");
    t.write(
        ".gate.toml",
        "[[depends]]\ntests = \"tests/test_deploy*.py\"\non = \"scripts/*.ini\"\n",
    );
    t.commit("a rule and its test");
    t.remove("tests/test_deploy.py");
    t.append("scripts/deploy.ini", "port = 22\n");
    t.commit("drop the test, change the script");
    let r = t.report(&["--affected", "HEAD~1...HEAD"]);
    assert_eq!(r["verdict"], "refused", "{r:#}");
    let script = row(&r, "scripts/deploy.ini");
    assert_eq!(script["verdict"], "refused");
    assert!(
        script["reasons"]
            .to_string()
            .contains("matches no test file any more"),
        "{script:#}"
    );
}

#[test]
fn a_new_branch_cannot_aim_base_branch_at_itself() {
    let r = crate::push_support::Remote::with_fixture("shop");
    r.install_hook();
    // No remote HEAD, so `base_branch` would be asked first.
    r.git(&["remote", "set-head", "origin", "-d"]);
    r.git(&["checkout", "-q", "-b", "feature"]);
    r.write(".gate.toml", "base_branch = \"refs/heads/feature\"\n");
    r.append("src/shop/money.py", BREAK_MONEY);
    r.commit("break money, compare the branch with itself");
    let ran = r.push(&["origin", "feature"], &[]);
    assert!(!ran.ok, "{}", ran.text);
    assert!(
        ran.text.contains("refs/remotes/origin/master..."),
        "{}",
        ran.text
    );
    assert!(
        ran.text
            .contains("FAILED tests/test_money.py::test_to_cents"),
        "{}",
        ran.text
    );
    assert_eq!(r.remote_ref("feature"), None);
}
