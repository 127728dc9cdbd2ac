//! Where the tests run: untracked files do not decide a run in the working tree, and stop
//! signals reach the runner and leave nothing behind.

use crate::support::{BREAK_MONEY, TestRepo};

#[test]
fn an_untracked_conftest_that_skips_everything_cannot_let_a_broken_commit_pass() {
    let r = crate::push_support::Remote::with_fixture("shop");
    r.install_hook();
    r.append("src/shop/money.py", BREAK_MONEY);
    r.commit("break money");
    r.write(
        "conftest.py",
        "import pytest\n\n\ndef pytest_collection_modifyitems(items):\n    for item in items:\n        item.add_marker(pytest.mark.skip(reason='untracked'))\n",
    );
    let ran = r.push(&["origin", "master"], &[]);
    assert!(!ran.ok, "{}", ran.text);
    assert!(
        ran.text.contains("running in a temporary checkout")
            && ran
                .text
                .contains("untracked conftest.py would change what runs"),
        "{}",
        ran.text
    );
    assert!(
        ran.text
            .contains("FAILED tests/test_money.py::test_to_cents"),
        "{}",
        ran.text
    );
}

/// Starts `gate --affected` over a change whose selected test waits, in a temporary checkout
/// (a tracked file differs in the working tree); returns gate, the test's pid, its checkout.
fn start_a_waiting_run(
    t: &TestRepo,
    ready: &std::path::Path,
) -> (std::process::Child, i32, std::path::PathBuf) {
    t.write(
        "tests/test_wait.py",
        "import os\nimport time\nimport shop.money\n\n\ndef test_wait():\n    with open(os.environ['GATE_TEST_READY'], 'w') as f:\n        f.write(str(os.getpid()))\n    time.sleep(30)\n",
    );
    t.commit("a waiting test");
    t.append("src/shop/money.py", "\n");
    t.commit("touch money");
    t.append("README.md", "dirty\n");
    let child = t
        .gate_process(&["--affected", "HEAD~1...HEAD"])
        .env("GATE_TEST_READY", ready)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while !ready.exists() || std::fs::read_to_string(ready).unwrap().is_empty() {
        assert!(started.elapsed().as_secs() < 30, "the test never started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let pid: i32 = std::fs::read_to_string(ready)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let checkout = checkouts_of(child.id())
        .pop()
        .expect("a temporary checkout");
    (child, pid, checkout)
}

fn checkouts_of(gate: u32) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!("gate-run-{gate}-"))
        })
        .map(|e| e.path())
        .collect()
}

fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only asks whether the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

fn wait_for(child: &mut std::process::Child) -> Option<i32> {
    let started = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        assert!(started.elapsed().as_secs() < 30, "gate did not end");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn a_stop_signal_reaches_the_runner_and_removes_the_temporary_checkout() {
    for sig in [libc::SIGTERM, libc::SIGHUP, libc::SIGINT] {
        let t = TestRepo::from_fixture("shop");
        let ready = t.root.parent().unwrap().join("ready");
        let (mut gate, pytest, checkout) = start_a_waiting_run(&t, &ready);
        assert!(checkout.is_dir());
        // SAFETY: signals the gate process this test started.
        unsafe { libc::kill(gate.id() as i32, sig) };
        let code = wait_for(&mut gate);
        assert_eq!(code, Some(128 + sig), "signal {sig}");
        assert!(!alive(pytest), "signal {sig}: pytest outlived gate");
        assert!(
            !checkout.exists(),
            "signal {sig}: {} is left",
            checkout.display()
        );
    }
}

#[test]
fn a_checkout_left_by_a_killed_run_is_removed_by_the_next_run() {
    let t = TestRepo::from_fixture("shop");
    let ready = t.root.parent().unwrap().join("ready");
    let (mut gate, pytest, checkout) = start_a_waiting_run(&t, &ready);
    gate.kill().unwrap();
    gate.wait().unwrap();
    // SAFETY: ends the orphaned test this test started.
    unsafe { libc::kill(pytest, libc::SIGKILL) };
    assert!(checkout.is_dir(), "SIGKILL leaves it");
    t.append("src/shop/plugins/discount.py", "\n");
    t.commit("touch the plugin");
    t.gate(&["--affected", "HEAD~1...HEAD"]).assert().success();
    assert!(!checkout.exists(), "{} is left", checkout.display());
}
