//! The command line as a user meets it: `gate` alone, `--help`, and the man pages and shell
//! completions generated from the same definition.

use crate::push_support::gate_bin;
use std::process::{Command, Output};

fn gate_in(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(gate_bin())
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn stdout_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `gate` alone, even outside a repository: what it needs and where the help is, exit 3 (usage),
/// and a JSON error when JSON was asked for.
#[test]
fn gate_alone_says_what_it_needs_and_where_help_is() {
    let dir = tempfile::tempdir().unwrap();
    let out = gate_in(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--affected origin/main...HEAD"), "{err}");
    assert!(err.contains("--files PATH"), "{err}");
    assert!(err.contains("or a subcommand"), "{err}");
    assert!(err.contains("see 'gate --help'"), "{err}");
    assert!(out.stdout.is_empty());

    let out = gate_in(dir.path(), &["--json"]);
    assert_eq!(out.status.code(), Some(3));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["exit_code"], 3);
    assert!(
        report["error"]
            .as_str()
            .unwrap()
            .starts_with("nothing to gate")
    );
    assert_eq!(report["hint"], "see 'gate --help'");
}

/// The internal `hook` and `generate` are not listed, but still run (the installed hook script
/// calls `gate hook pre-push`; the push tests run it for real).
#[test]
fn help_lists_the_users_commands_only() {
    let dir = tempfile::tempdir().unwrap();
    for flag in ["-h", "--help"] {
        let help = stdout_of(&gate_in(dir.path(), &[flag]));
        let commands: Vec<&str> = help
            .lines()
            .skip_while(|l| *l != "Commands:")
            .skip(1)
            .take_while(|l| !l.is_empty())
            .filter_map(|l| l.split_whitespace().next())
            .collect();
        assert!(commands.contains(&"verify"), "{help}");
        assert!(commands.contains(&"install-hook"), "{help}");
        assert!(!commands.contains(&"hook"), "{help}");
        assert!(!commands.contains(&"generate"), "{help}");
    }
    let out = gate_in(dir.path(), &["hook", "pre-push", "--help"]);
    assert!(out.status.success());
    assert!(stdout_of(&out).contains("pre-push protocol"));
    let long = stdout_of(&gate_in(dir.path(), &["--help"]));
    assert!(
        long.contains("Examples:\n  gate --affected origin/main...HEAD"),
        "{long}"
    );
}

/// gate.1 and a page per visible subcommand, rendered by `man` when the machine has it.
#[test]
fn the_man_pages_render_with_their_sections_and_subcommands() {
    let dir = tempfile::tempdir().unwrap();
    let out = gate_in(dir.path(), &["generate", "man"]);
    assert!(out.status.success());
    let roff = stdout_of(&out);
    for section in [
        ".SH NAME",
        ".SH SYNOPSIS",
        ".SH OPTIONS",
        ".SH SUBCOMMANDS",
        ".SH EXAMPLES",
    ] {
        assert!(roff.contains(section), "{section}: {roff}");
    }
    assert!(roff.contains("gate\\-verify(1)"), "{roff}");
    assert!(
        roff.contains("\\fBgate \\-\\-affected origin/main...HEAD\\fR"),
        "{roff}"
    );
    assert!(
        !roff.contains("gate\\-hook(1)") && !roff.contains("gate\\-help(1)"),
        "{roff}"
    );

    let man1 = dir.path().join("man/man1");
    let out = gate_in(
        dir.path(),
        &["generate", "man", "--dir", man1.to_str().unwrap()],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut pages: Vec<String> = std::fs::read_dir(&man1)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    pages.sort();
    for page in [
        "gate.1",
        "gate-verify.1",
        "gate-ledger-prune.1",
        "gate-install-hook.1",
    ] {
        assert!(pages.iter().any(|p| p == page), "{page}: {pages:?}");
    }
    assert!(
        !pages
            .iter()
            .any(|p| p.starts_with("gate-hook") || p.starts_with("gate-generate")),
        "{pages:?}"
    );
    assert_eq!(std::fs::read_to_string(man1.join("gate.1")).unwrap(), roff);

    // `man -l` renders the page as a reader sees it (where man is installed).
    let Ok(rendered) = Command::new("man")
        .args(["-l", man1.join("gate-verify.1").to_str().unwrap()])
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "100")
        .output()
    else {
        return;
    };
    let text = stdout_of(&rendered);
    assert!(rendered.status.success(), "{text}");
    for want in ["NAME", "gate-verify", "SYNOPSIS", "--receipt <FILE>"] {
        assert!(text.contains(want), "{want}: {text}");
    }
}

/// The bash script loads and completes gate's visible commands and their flags; zsh's and
/// fish's are the scripts those shells expect. None offers a hidden command.
#[test]
fn completion_scripts_load_and_complete_the_visible_commands() {
    let dir = tempfile::tempdir().unwrap();
    let script = |shell: &str| {
        let out = gate_in(dir.path(), &["generate", "completions", shell]);
        assert!(out.status.success(), "{shell}");
        stdout_of(&out)
    };
    let bash = dir.path().join("gate.bash");
    std::fs::write(&bash, script("bash")).unwrap();
    // What bash offers after `gate ` and after `gate verify --r`.
    let probe = format!(
        "source '{}' && complete -p gate && \
         COMP_WORDS=(gate ''); COMP_CWORD=1; _gate gate '' gate; echo \"first: ${{COMPREPLY[*]}}\"; \
         COMP_WORDS=(gate verify --r); COMP_CWORD=2; _gate gate --r verify; echo \"verify: ${{COMPREPLY[*]}}\"",
        bash.display()
    );
    let out = Command::new("bash").args(["-c", &probe]).output().unwrap();
    let text = stdout_of(&out);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.starts_with("complete ") && text.contains(" -F _gate gate\n"),
        "{text}"
    );
    let first: Vec<&str> = text
        .lines()
        .find_map(|l| l.strip_prefix("first: "))
        .unwrap()
        .split(' ')
        .collect();
    for want in ["plan", "verify", "install-hook", "--affected"] {
        assert!(first.contains(&want), "{want}: {first:?}");
    }
    assert!(
        !first.contains(&"hook") && !first.contains(&"generate"),
        "{first:?}"
    );
    assert!(text.contains("verify: --receipt"), "{text}");

    let zsh = script("zsh");
    assert!(zsh.starts_with("#compdef gate"), "{zsh}");
    let fish = script("fish");
    assert!(fish.contains("complete -c gate "), "{fish}");
    for text in [&zsh, &fish] {
        assert!(text.contains("install-hook"));
        assert!(
            !text.contains("Entry points for git hooks")
                && !text.contains("completions, generated")
        );
    }
}
