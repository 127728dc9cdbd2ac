//! pytest: `python -m pytest <test files>`, run from the root of the gated tree.
//! The runner is never called without test arguments unless the whole suite is meant:
//! pytest with no arguments runs everything, which gate never does silently.

use crate::config::Config;
use crate::error::Result;
use crate::repo::checkout::Workspace;
use std::collections::BTreeMap;
use std::path::Path;

/// The runner's argv before the test arguments: `runner` from `.gate.toml`, else
/// `.venv/bin/python -m pytest` when the repository has that virtualenv, else `python3` (or
/// `python` where no `python3` is on PATH) `-m pytest`.
pub fn base_argv(config: &Config, root: &Path) -> Vec<String> {
    if let Some(argv) = &config.runner {
        return argv.clone();
    }
    let python = if root.join(".venv/bin/python").is_file() {
        ".venv/bin/python".to_string()
    } else if on_path("python3") {
        "python3".to_string()
    } else {
        "python".to_string()
    };
    vec![python, "-m".into(), "pytest".into()]
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

pub enum Outcome {
    Passed,
    Failed(i32),
    /// pytest's own usage/internal errors, or a runner killed by a signal.
    Broken(Option<i32>),
}

/// Runs `argv` in the workspace (see `run::exit_code`).
pub fn run(
    argv: &[String],
    env: &BTreeMap<String, String>,
    workspace: &Workspace,
    root: &Path,
    quiet_stdout: bool,
) -> Result<Outcome> {
    Ok(
        match super::exit_code(argv, env, workspace, root, quiet_stdout)? {
            // 5: pytest collected no test from the files given — nothing failed.
            Some(0 | 5) => Outcome::Passed,
            Some(1) => Outcome::Failed(1),
            other => Outcome::Broken(other),
        },
    )
}
