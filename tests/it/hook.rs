//! The pre-push hook through real pushes to a real bare remote.

use crate::push_support::{Remote, sessions};

const FAILING: &str = "\n\ndef test_fails_on_purpose():\n    assert False\n";

#[test]
fn a_clean_push_runs_the_selection_and_lands() {
    let r = Remote::with_fixture("shop");
    r.install_hook();
    r.append("src/shop/plugins/discount.py", "\n");
    r.commit("plugin");
    let ran = r.push(&["origin", "master"], &[]);
    assert!(ran.ok, "{}", ran.text);
    assert!(ran.text.contains("tests/test_plugins.py ."), "{}", ran.text);
    assert!(!ran.text.contains("tests/test_money.py"), "{}", ran.text);
    assert_eq!(sessions(&ran.text), 1, "{}", ran.text);
    assert_eq!(r.remote_ref("master"), Some(r.head()));
}

#[test]
fn a_push_whose_selected_test_fails_is_blocked() {
    let r = Remote::with_fixture("shop");
    r.install_hook();
    let before = r.remote_ref("master");
    r.append("tests/test_money.py", FAILING);
    r.commit("break a test");
    let ran = r.push(&["origin", "master"], &[]);
    assert!(!ran.ok, "{}", ran.text);
    assert!(ran.text.contains("test_fails_on_purpose"), "{}", ran.text);
    assert!(
        ran.text
            .contains("step `affected-tests` failed — the push is blocked"),
        "{}",
        ran.text
    );
    assert_eq!(r.remote_ref("master"), before, "nothing landed");
}

#[test]
fn a_refused_push_is_blocked_and_a_decision_lets_it_through_and_is_logged() {
    let r = Remote::with_fixture("shop");
    r.install_hook();
    let before = r.remote_ref("master");
    r.append("scripts/deploy.ini", "port = 22\n");
    r.commit("script");
    let ran = r.push(&["origin", "master"], &[]);
    assert!(!ran.ok, "{}", ran.text);
    assert!(ran.text.contains("error: refused"), "{}", ran.text);
    assert!(ran.text.contains("scripts/deploy.ini"), "{}", ran.text);
    assert!(
        ran.text.contains("GATE_DECISION=\"<citation>\" git push"),
        "{}",
        ran.text
    );
    assert_eq!(r.remote_ref("master"), before);

    let ran = r.push(
        &["origin", "master"],
        &[("GATE_DECISION", "OPS-42 script only")],
    );
    assert!(ran.ok, "{}", ran.text);
    assert_eq!(r.remote_ref("master"), Some(r.head()));
    let log = std::fs::read_to_string(r.clone.join(".git/gate/decisions.jsonl")).unwrap();
    let record: serde_json::Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    assert_eq!(record["citation"], "OPS-42 script only");
    assert_eq!(record["refused"][0]["path"], "scripts/deploy.ini");
    assert!(
        record["range"].as_str().unwrap().ends_with(&r.head()),
        "{record}"
    );
}

#[test]
fn a_new_branch_is_gated_from_its_merge_base_with_the_default_branch() {
    let r = Remote::with_fixture("shop");
    r.install_hook();
    r.git(&["checkout", "-q", "-b", "feature"]);
    r.append("src/shop/plugins/discount.py", "\n");
    r.commit("plugin");
    // master moves on after the branch point: its change must not count against the branch.
    r.git(&["checkout", "-q", "master"]);
    r.append("src/shop/money.py", "\n");
    r.commit("money");
    let ran = r.push(&["origin", "master"], &[]);
    assert!(ran.ok, "{}", ran.text);
    r.git(&["checkout", "-q", "feature"]);
    let ran = r.push(&["-u", "origin", "feature"], &[]);
    assert!(ran.ok, "{}", ran.text);
    assert!(
        ran.text.contains("refs/remotes/origin/HEAD..."),
        "{}",
        ran.text
    );
    assert!(ran.text.contains("tests/test_plugins.py ."), "{}", ran.text);
    assert!(!ran.text.contains("tests/test_money.py"), "{}", ran.text);
}

#[test]
fn a_new_branch_with_no_base_to_compare_is_refused_naming_the_fact() {
    let r = Remote::with_fixture("shop");
    r.install_hook();
    r.git(&["remote", "set-head", "origin", "-d"]);
    r.git(&["branch", "-q", "-r", "-d", "origin/master"]);
    r.git(&["checkout", "-q", "-b", "feature"]);
    r.append("src/shop/plugins/discount.py", "\n");
    r.commit("plugin");
    let ran = r.push(&["origin", "feature"], &[]);
    assert!(!ran.ok, "{}", ran.text);
    assert!(
        ran.text.contains(
            "refs/heads/feature is a new branch on origin and none of refs/remotes/origin/HEAD"
        ),
        "{}",
        ran.text
    );
    assert!(ran.text.contains("git fetch origin"), "{}", ran.text);
    assert_eq!(r.remote_ref("feature"), None);
}

#[test]
fn deletions_and_tags_are_skipped_with_a_line_each() {
    let r = Remote::with_fixture("shop");
    r.git(&["checkout", "-q", "-b", "doomed"]);
    r.append("tests/test_money.py", FAILING);
    r.commit("a failing test, pushed before the hook");
    r.push(&["origin", "doomed"], &[]);
    r.install_hook();
    // The tag points at a commit whose tests fail: tags are not gated.
    r.git(&["tag", "v1"]);
    let ran = r.push(&["origin", "v1"], &[]);
    assert!(ran.ok, "{}", ran.text);
    assert!(
        ran.text.contains("refs/tags/v1: a tag, not gated"),
        "{}",
        ran.text
    );
    assert_eq!(sessions(&ran.text), 0, "{}", ran.text);
    let ran = r.push(&["origin", "--delete", "doomed"], &[]);
    assert!(ran.ok, "{}", ran.text);
    assert!(
        ran.text
            .contains("refs/heads/doomed: deleted on origin, nothing to gate"),
        "{}",
        ran.text
    );
    assert_eq!(r.remote_ref("doomed"), None);
}

#[test]
fn a_force_push_gates_from_the_merge_base_not_the_rewritten_tip() {
    let r = Remote::with_fixture("shop");
    r.install_hook();
    r.git(&["checkout", "-q", "-b", "feature"]);
    r.append("src/shop/plugins/discount.py", "\n");
    r.commit("plugin");
    assert!(r.push(&["origin", "feature"], &[]).ok);
    // Rewrite the branch: the plugin change is gone, money changed instead.
    r.git(&["reset", "-q", "--hard", "master"]);
    r.append("src/shop/money.py", "\n");
    r.commit("money instead");
    let ran = r.push(&["--force", "origin", "feature"], &[]);
    assert!(ran.ok, "{}", ran.text);
    assert!(ran.text.contains("(merge-base;"), "{}", ran.text);
    assert!(ran.text.contains("tests/test_money.py ."), "{}", ran.text);
    // A two-dot diff from the old tip would count the dropped plugin change too.
    assert!(!ran.text.contains("test_plugins"), "{}", ran.text);
    assert_eq!(r.remote_ref("feature"), Some(r.head()));
}

#[test]
fn refs_pushed_together_at_one_commit_run_once() {
    let r = Remote::with_fixture("shop");
    r.install_hook();
    r.append("src/shop/money.py", "\n");
    r.commit("money");
    let ran = r.push(&["origin", "master", "master:refs/heads/release"], &[]);
    assert!(ran.ok, "{}", ran.text);
    assert!(
        ran.text
            .contains("pushing refs/heads/master, refs/heads/release to origin"),
        "{}",
        ran.text
    );
    assert_eq!(
        sessions(&ran.text),
        1,
        "one run for both refs: {}",
        ran.text
    );
    assert_eq!(r.remote_ref("release"), Some(r.head()));
}

#[test]
fn refs_at_different_commits_are_each_gated_in_their_own_tree() {
    let r = Remote::with_fixture("shop");
    r.install_hook();
    r.git(&["checkout", "-q", "-b", "broken"]);
    r.append("tests/test_money.py", FAILING);
    r.commit("break");
    r.git(&["checkout", "-q", "master"]);
    r.append("src/shop/plugins/discount.py", "\n");
    r.commit("plugin");
    // master is checked out and clean; `broken` is tested in a temporary checkout of its tree.
    let ran = r.push(&["origin", "master", "broken"], &[]);
    assert!(!ran.ok, "{}", ran.text);
    assert!(ran.text.contains("tests/test_plugins.py ."), "{}", ran.text);
    assert!(ran.text.contains("test_fails_on_purpose"), "{}", ran.text);
    assert!(ran.text.contains("temporary checkout"), "{}", ran.text);
    assert_eq!(sessions(&ran.text), 2, "{}", ran.text);
    assert_eq!(r.remote_ref("broken"), None, "a blocked push lands no ref");
    let master = r.remote_ref("master");
    assert_ne!(master, Some(r.head()), "a blocked push lands no ref");
}

#[test]
fn a_dirty_working_tree_does_not_leak_into_the_pushed_commit_s_run() {
    let r = Remote::with_fixture("shop");
    r.install_hook();
    r.append("src/shop/money.py", "\n");
    r.commit("money");
    // An uncommitted edit that would fail the tests if gate ran them in the working tree.
    r.append("tests/test_money.py", FAILING);
    let ran = r.push(&["origin", "master"], &[]);
    assert!(ran.ok, "{}", ran.text);
    assert!(ran.text.contains("temporary checkout"), "{}", ran.text);
    assert!(!ran.text.contains("test_fails_on_purpose"), "{}", ran.text);
}

#[test]
fn core_hooks_path_is_honoured() {
    let r = Remote::with_fixture("shop");
    r.git(&["config", "core.hooksPath", ".githooks"]);
    // The installed hook records this machine's binary path: it is not for committing.
    std::fs::write(r.clone.join(".git/info/exclude"), ".githooks/\n").unwrap();
    r.install_hook();
    assert!(r.clone.join(".githooks/pre-push").is_file());
    assert!(!r.clone.join(".git/hooks/pre-push").exists());
    r.append("tests/test_money.py", FAILING);
    r.commit("break");
    let ran = r.push(&["origin", "master"], &[]);
    assert!(!ran.ok, "the hook in core.hooksPath ran: {}", ran.text);
    assert!(ran.text.contains("test_fails_on_purpose"), "{}", ran.text);
}

#[test]
fn a_foreign_hook_is_never_clobbered_and_can_be_chained() {
    let r = Remote::with_fixture("shop");
    let hook = r.clone.join(".git/hooks/pre-push");
    let foreign = "#!/bin/sh\nwhile read l; do echo \"foreign saw $l\" >&2; done\nexit 0\n";
    std::fs::write(&hook, foreign).unwrap();
    make_executable(&hook);
    let ran = r.gate(&["install-hook"]);
    assert_eq!(ran.code, Some(3), "{}", ran.text);
    assert!(
        ran.text
            .contains("was not installed by gate; left untouched"),
        "{}",
        ran.text
    );
    assert_eq!(std::fs::read_to_string(&hook).unwrap(), foreign);

    let ran = r.gate(&["install-hook", "--chain"]);
    assert!(ran.ok, "{}", ran.text);
    r.append("tests/test_money.py", FAILING);
    r.commit("break");
    let ran = r.push(&["origin", "master"], &[]);
    assert!(!ran.ok, "{}", ran.text);
    assert!(
        ran.text.contains("foreign saw refs/heads/master"),
        "{}",
        ran.text
    );
    assert!(ran.text.contains("test_fails_on_purpose"), "{}", ran.text);

    let ran = r.gate(&["uninstall-hook"]);
    assert!(ran.ok, "{}", ran.text);
    assert_eq!(std::fs::read_to_string(&hook).unwrap(), foreign, "put back");
    let ran = r.gate(&["uninstall-hook"]);
    assert_eq!(
        ran.code,
        Some(3),
        "a foreign hook is not removed: {}",
        ran.text
    );
    assert!(hook.exists());
}

#[test]
fn a_missing_gate_binary_fails_the_push_with_one_line() {
    let r = Remote::with_fixture("shop");
    let bin = r.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let copy = bin.join("gate");
    std::fs::copy(crate::push_support::gate_bin(), &copy).unwrap();
    // A test thread that forks while the copy's write descriptor is open holds it until its
    // child execs: running the copy then fails with ETXTBSY until that child has exec'd.
    let out = (0..100)
        .find_map(|_| {
            match std::process::Command::new(&copy)
                .args(["install-hook"])
                .current_dir(&r.clone)
                .output()
            {
                Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    None
                }
                other => Some(other.unwrap()),
            }
        })
        .expect("the copy is executable within 2 s");
    assert!(out.status.success());
    std::fs::remove_file(&copy).unwrap();
    r.append("src/shop/money.py", "\n");
    r.commit("money");
    let ran = r.push(&["origin", "master"], &[("PATH", "/usr/bin:/bin")]);
    assert!(!ran.ok, "{}", ran.text);
    let line = ran
        .text
        .lines()
        .find(|l| l.contains("gate pre-push hook"))
        .unwrap_or_else(|| panic!("{}", ran.text));
    assert!(line.contains("no gate binary"), "{line}");
    assert!(line.contains("--no-verify"), "{line}");
    assert!(
        !ran.text.contains("not found"),
        "no shell noise: {}",
        ran.text
    );
}

pub(crate) fn make_executable(path: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn a_push_runs_the_pre_push_steps_in_order_and_a_failing_step_blocks() {
    let r = Remote::with_fixture("shop");
    r.install_hook();
    let log = r.dir.path().join("steps.log");
    let log_env = [("STEP_LOG", log.to_str().unwrap())];
    // A configuration governs the pushes after the one that lands it.
    r.write(".gate.toml", crate::steps::STEPS);
    r.commit("steps");
    let ran = r.push(&["origin", "master"], &log_env);
    assert!(ran.ok, "{}", ran.text);
    assert!(!log.exists(), "the new steps did not run yet: {}", ran.text);
    r.append("src/shop/money.py", "\n");
    r.commit("money");
    let ran = r.push(&["origin", "master"], &log_env);
    assert!(ran.ok, "{}", ran.text);
    let order = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        order, "lint\nnotify\n",
        "`package` is verify-only: {}",
        ran.text
    );
    assert!(
        ran.text
            .contains("step `docs` skipped — no changed file matches"),
        "{}",
        ran.text
    );
    assert!(
        ran.text.contains("step `affected-tests` passed"),
        "{}",
        ran.text
    );

    std::fs::remove_file(&log).unwrap();
    r.write(
        ".gate.toml",
        &crate::steps::STEPS.replace("echo notify", "exit 9; echo notify"),
    );
    r.commit("notify breaks");
    let ran = r.push(&["origin", "master"], &log_env);
    assert!(ran.ok, "gated under the landed steps: {}", ran.text);
    r.append("src/shop/money.py", "\n");
    r.commit("money again");
    let ran = r.push(&["origin", "master"], &log_env);
    assert!(!ran.ok, "{}", ran.text);
    assert!(
        ran.text.contains("step `notify` failed (exit 9)"),
        "{}",
        ran.text
    );
    assert!(
        ran.text.contains("gate: push blocked (exit 5)"),
        "{}",
        ran.text
    );
}

#[test]
fn with_history_record_on_a_push_records_the_subset_it_ran() {
    let r = Remote::with_fixture("shop");
    r.install_hook();
    r.write(".gate.toml", "[history]\nrecord = true\n");
    r.commit("record runs");
    let ran = r.push(&["origin", "master"], &[("GATE_DECISION", "")]);
    assert!(ran.ok, "{}", ran.text);
    r.append("src/shop/plugins/discount.py", "\n");
    r.commit("plugin");
    let ran = r.push(&["origin", "master"], &[]);
    assert!(ran.ok, "{}", ran.text);
    assert!(
        ran.text
            .contains("gate record: recorded leg `default` of run "),
        "{}",
        ran.text
    );
    let history = r.gate(&["history", "tests/test_plugins.py::test_discount"]);
    assert!(history.ok, "{}", history.text);
    assert!(history.text.contains("leg default"), "{}", history.text);
    assert!(history.text.contains("passed"), "{}", history.text);
    // Only what ran was recorded.
    let money = r.gate(&["history", "tests/test_money.py::test_to_cents"]);
    assert_eq!(money.code, Some(3), "{}", money.text);
}

#[test]
fn a_re_push_after_an_unrelated_step_failed_reruns_no_test() {
    let r = Remote::with_fixture("shop");
    r.install_hook();
    r.write(
        ".gate.toml",
        "[[step]]\nname = \"affected-tests\"\n\n[[step]]\nname = \"changelog\"\nrun = \"test -z \\\"$BLOCK\\\"\"\n",
    );
    r.commit("steps");
    let ran = r.push(&["origin", "master"], &[]);
    assert!(ran.ok, "{}", ran.text);
    r.append("src/shop/plugins/discount.py", "\n");
    r.commit("plugin");
    let before = r.remote_ref("master");
    let ran = r.push(&["origin", "master"], &[("BLOCK", "1")]);
    assert!(!ran.ok, "{}", ran.text);
    assert!(ran.text.contains("tests/test_plugins.py ."), "{}", ran.text);
    assert!(ran.text.contains("step `changelog` failed"), "{}", ran.text);
    assert_eq!(r.remote_ref("master"), before);
    // The step fixed (here: its condition gone), the same push: the passed test is reused.
    let ran = r.push(&["origin", "master"], &[]);
    assert!(ran.ok, "{}", ran.text);
    assert_eq!(sessions(&ran.text), 0, "no pytest session: {}", ran.text);
    assert!(
        ran.text.contains("tests/test_plugins.py  (passed at "),
        "{}",
        ran.text
    );
    assert!(ran.text.contains("1 reused, 0 run"), "{}", ran.text);
    assert_eq!(r.remote_ref("master"), Some(r.head()));
}
