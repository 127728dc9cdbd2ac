//! `./install.sh` from this checkout: the real installer (binary, man pages, completions, the
//! hook), then a real push.

use crate::push_support::Remote;
use std::path::Path;
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
    // It says what the wait is for, and cargo's own progress is not silenced.
    assert!(
        text.starts_with("install.sh: compiling gate from source with cargo"),
        "{text}"
    );
    assert!(text.contains("package `gate v"), "{text}");
    let bin = prefix.join("bin/gate");
    assert!(text.contains(&format!("at {}", bin.display())), "{text}");
    let share = prefix.join("share");
    assert_installed_pages_and_completions(
        &text,
        &share.join("man/man1"),
        &share.join("bash-completion/completions/gate"),
        &share.join("zsh/site-functions/_gate"),
        &share.join("fish/vendor_completions.d/gate.fish"),
    );
    // man finds the pages next to the binary, through PATH alone.
    if let Ok(found) = Command::new("man")
        .args(["-w", "gate"])
        .env_remove("MANPATH")
        .env(
            "PATH",
            format!("{}:/usr/bin:/bin", prefix.join("bin").display()),
        )
        .output()
    {
        assert_eq!(
            String::from_utf8_lossy(&found.stdout).trim(),
            share.join("man/man1/gate.1").to_str().unwrap()
        );
    }
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

/// Without `--prefix`: the binary where cargo installs (here CARGO_INSTALL_ROOT), its man pages
/// beside it, the completions in the user's own directories (here XDG_DATA_HOME and
/// XDG_CONFIG_HOME, so the test touches no real home).
#[test]
fn install_sh_without_a_prefix_puts_completions_in_the_users_directories() {
    let dir = tempfile::tempdir().unwrap();
    let (root, data, config) = (
        dir.path().join("cargo"),
        dir.path().join("data"),
        dir.path().join("config"),
    );
    let out = Command::new("bash")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/install.sh"))
        .env("CARGO_INSTALL_ROOT", &root)
        .env("XDG_DATA_HOME", &data)
        .env("XDG_CONFIG_HOME", &config)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains(&format!("at {}", root.join("bin/gate").display())),
        "{text}"
    );
    assert_installed_pages_and_completions(
        &text,
        &root.join("share/man/man1"),
        &data.join("bash-completion/completions/gate"),
        &data.join("zsh/site-functions/_gate"),
        &config.join("fish/completions/gate.fish"),
    );
}

/// The man pages and the three completion scripts are where install.sh says, and they work:
/// bash loads its script and registers gate's completion.
fn assert_installed_pages_and_completions(
    text: &str,
    man1: &Path,
    bash: &Path,
    zsh: &Path,
    fish: &Path,
) {
    assert!(
        text.contains(&format!("installed the man pages in {}", man1.display())),
        "{text}"
    );
    let page = std::fs::read_to_string(man1.join("gate.1")).unwrap();
    assert!(
        page.contains(".SH NAME") && page.contains("gate\\-verify(1)"),
        "{page}"
    );
    assert!(man1.join("gate-verify.1").is_file());
    for script in [bash, zsh, fish] {
        assert!(
            text.contains(&script.display().to_string()),
            "{}: {text}",
            script.display()
        );
    }
    let loaded = Command::new("bash")
        .arg("-c")
        .arg(format!("source '{}' && complete -p gate", bash.display()))
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&loaded.stdout).contains("-F _gate gate"),
        "{}",
        String::from_utf8_lossy(&loaded.stderr)
    );
    assert!(
        std::fs::read_to_string(zsh)
            .unwrap()
            .starts_with("#compdef gate")
    );
    assert!(
        std::fs::read_to_string(fish)
            .unwrap()
            .contains("complete -c gate ")
    );
    assert!(
        text.contains(&format!("fpath=({}", zsh.parent().unwrap().display())),
        "{text}"
    );
}
