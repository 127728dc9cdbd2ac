//! `./install.sh --hook REPO` from this checkout: the real installer, then a real push.

use crate::push_support::Remote;
use std::process::Command;

#[test]
fn install_sh_installs_gate_and_the_hook_and_a_push_runs_the_gate() {
    let r = Remote::with_fixture("shop");
    let prefix = r.dir.path().join("prefix");
    let out = Command::new("bash")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/install.sh"))
        .args(["--prefix", prefix.to_str().unwrap(), "--hook"])
        .arg(&r.clone)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    let bin = prefix.join("bin/gate");
    assert!(text.contains(&format!("at {}", bin.display())), "{text}");
    let hook = std::fs::read_to_string(r.clone.join(".git/hooks/pre-push")).unwrap();
    assert!(
        hook.contains(&format!("gate_bin='{}'", bin.display())),
        "{hook}"
    );

    r.append("src/shop/money.py", "\n");
    r.commit("money");
    let ran = r.push(&["origin", "master"], &[]);
    assert!(ran.ok, "{}", ran.text);
    assert!(ran.text.contains("tests/test_money.py ."), "{}", ran.text);
    assert!(
        ran.text.contains("step `affected-tests` passed"),
        "{}",
        ran.text
    );
}
