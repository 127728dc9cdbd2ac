//! The warm pre-push path starts no process: once a run has filled the caches, a select
//! (`--list`, what the hook asks) learns everything from files — the interpreter behind a
//! pyenv shim, the Go toolchain's `go env` — counted by strace, never timed.

use crate::support::{TestRepo, text};
use std::path::Path;

/// The `execve` calls `gate <args>` makes in `t` (gate's own excepted), with `path` first on
/// `PATH` and `vars` set, as strace sees them.
fn processes_started(
    t: &TestRepo,
    args: &[&str],
    path: &Path,
    vars: &[(&str, &str)],
) -> Vec<String> {
    let log = t.root.parent().unwrap().join("execve.log");
    let mut cmd = t.gate_process(args);
    let program = cmd.get_program().to_owned();
    let mut argv = vec![
        "-f".into(),
        "-qq".into(),
        "-e".into(),
        "trace=execve,execveat".into(),
        "-o".into(),
        log.clone().into_os_string(),
        program,
    ];
    argv.extend(cmd.get_args().map(|a| a.to_owned()));
    let joined = std::env::join_paths(
        std::iter::once(path.to_path_buf())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    cmd.env("PATH", &joined);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let mut strace = std::process::Command::new("strace");
    strace.args(&argv).current_dir(&t.root);
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => strace.env(k, v),
            None => strace.env_remove(k),
        };
    }
    let out = strace.output().expect("strace runs (CI installs it)");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let lines = std::fs::read_to_string(&log).unwrap();
    let calls: Vec<String> = lines
        .lines()
        .filter(|l| l.contains("execve"))
        .map(str::to_string)
        .collect();
    assert!(
        calls.first().is_some_and(|c| c.contains("gate")),
        "strace saw gate start: {lines}"
    );
    calls[1..].to_vec()
}

/// A pyenv installation as pyenv lays it out: `shims/python3` (a script that runs `pyenv
/// exec`, here reduced to what it picks) and `versions/3.99/bin/python3`, this machine's
/// interpreter. Returns the shims folder.
fn fake_pyenv(at: &Path) -> std::path::PathBuf {
    let real = std::process::Command::new("python3")
        .args([
            "-c",
            "import os, sys; print(os.path.realpath(sys.executable))",
        ])
        .output()
        .unwrap();
    let real = String::from_utf8(real.stdout).unwrap().trim().to_string();
    let bin = at.join("versions/3.99/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(&real, bin.join("python3")).unwrap();
    let shims = at.join("shims");
    std::fs::create_dir_all(&shims).unwrap();
    let shim = shims.join("python3");
    std::fs::write(
        &shim,
        format!(
            "#!/usr/bin/env bash\n# a pyenv shim: pyenv exec picks the version\nexport PYENV_ROOT=\"{}\"\nexec \"$PYENV_ROOT/versions/$PYENV_VERSION/bin/python3\" \"$@\"\n",
            at.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
    shims
}

#[test]
fn a_warm_select_through_a_pyenv_shim_starts_no_process() {
    let t = TestRepo::from_fixture("shop");
    let shims = fake_pyenv(&t.root.parent().unwrap().join("pyenv"));
    t.append("src/shop/money.py", "\n# reviewed\n");
    t.commit("money");
    let vars = [("PYENV_VERSION", "3.99")];
    let range = ["--affected", "HEAD~1...HEAD"];
    // A run through the shim fills every cache (facts, graph, closures, the interpreter's
    // identity); the first select after it may still write what it lacks.
    let cold = processes_started(&t, &range, &shims, &vars);
    assert!(!cold.is_empty(), "the run starts its runner");
    processes_started(
        &t,
        &["--affected", "HEAD~1...HEAD", "--list"],
        &shims,
        &vars,
    );
    let warm = processes_started(
        &t,
        &["--affected", "HEAD~1...HEAD", "--list"],
        &shims,
        &vars,
    );
    assert!(
        warm.is_empty(),
        "a warm select started processes: {warm:#?}"
    );
    // Another version picked: the identity is asked again (through the shim), once.
    let other = t.root.parent().unwrap().join("pyenv/versions/3.98");
    std::fs::create_dir_all(other.join("bin")).unwrap();
    std::os::unix::fs::symlink(
        std::fs::read_link(
            t.root
                .parent()
                .unwrap()
                .join("pyenv/versions/3.99/bin/python3"),
        )
        .unwrap(),
        other.join("bin/python3"),
    )
    .unwrap();
    let vars = [("PYENV_VERSION", "3.98")];
    let switched = processes_started(
        &t,
        &["--affected", "HEAD~1...HEAD", "--list"],
        &shims,
        &vars,
    );
    assert!(
        switched.iter().any(|c| c.contains("shims/python3")),
        "a switched version is asked: {switched:#?}"
    );
    let warm = processes_started(
        &t,
        &["--affected", "HEAD~1...HEAD", "--list"],
        &shims,
        &vars,
    );
    assert!(warm.is_empty(), "{warm:#?}");
}

#[test]
fn a_warm_go_select_starts_no_process() {
    let t = TestRepo::from_fixture("goshop");
    t.append("ws/shop/money/money.go", "\n// reviewed\n");
    t.commit("money");
    let none = t.root.parent().unwrap().join("no-shims");
    let cold = processes_started(&t, &["--affected", "HEAD~1...HEAD"], &none, &[]);
    assert!(cold.iter().any(|c| c.contains("\"go\"")), "{cold:#?}");
    processes_started(&t, &["--affected", "HEAD~1...HEAD", "--list"], &none, &[]);
    let warm = processes_started(&t, &["--affected", "HEAD~1...HEAD", "--list"], &none, &[]);
    assert!(
        warm.is_empty(),
        "a warm select started processes: {warm:#?}"
    );
    // A variable that changes a Go build asks the toolchain again.
    let flagged = processes_started(
        &t,
        &["--affected", "HEAD~1...HEAD", "--list"],
        &none,
        &[("GOFLAGS", "-mod=mod")],
    );
    assert!(
        flagged.iter().any(|c| c.contains("\"env\"")),
        "{flagged:#?}"
    );
}

/// Every cache a run writes, the next call reads back: after a gated run (which asks the
/// interpreter's identity and writes the facts, graph and closure caches), a select warns of
/// no cache and loads the stored graph, and a full plan parses nothing.
#[test]
fn a_run_followed_by_a_select_reuses_every_cached_fact() {
    let t = TestRepo::from_fixture("shop");
    t.append("src/shop/money.py", "\n# reviewed\n");
    t.commit("money");
    let run = t.gate(&["--affected", "HEAD~1...HEAD"]).output().unwrap();
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let select = t
        .gate(&["--affected", "HEAD~1...HEAD", "--list"])
        .env("GATE_TIMINGS", "1")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&select.stderr);
    assert!(!said.contains("cache"), "{said}");
    assert!(said.contains("stored graph loaded"), "{said}");
    let plan = t.gate(&["plan"]).output().unwrap();
    assert!(text(&plan).contains("(0 parsed, "), "{}", text(&plan));
}
