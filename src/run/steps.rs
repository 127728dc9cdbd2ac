//! Gate steps: the team's ordered checks (`[[step]]` in `.gate.toml`) around the built-in
//! affected-tests step. The first failure blocks and is named; every step gets a result line.

use crate::config::{Step, When};
use crate::repo::checkout::Workspace;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Passed,
    Failed,
    /// Not run: its `on` globs matched no changed file, or an earlier step failed.
    Skipped,
    /// Could not start, or was killed by a signal.
    Broken,
}

#[derive(Debug, Clone, Serialize)]
pub struct StepResult {
    pub name: String,
    pub outcome: Outcome,
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl StepResult {
    pub fn skipped(name: &str, reason: String) -> Self {
        StepResult {
            name: name.to_string(),
            outcome: Outcome::Skipped,
            exit_code: None,
            duration_ms: 0,
            reason: Some(reason),
        }
    }
}

/// The steps of `when` (the hook or verify), in order.
pub fn for_context(steps: &[Step], when: When) -> impl Iterator<Item = &Step> {
    steps
        .iter()
        .filter(move |s| s.when == When::Always || s.when == when)
}

/// Why `step` does not apply to this change, if its `on` globs match no changed path.
pub fn unmatched(step: &Step, changed: &[&str]) -> Option<String> {
    let on = step.on.as_ref()?;
    (!changed.iter().any(|p| on.is_match(p)))
        .then(|| format!("no changed file matches `on` ({})", on.text))
}

/// Runs a command step (`argv` from `Step::argv`); its output streams (to stderr when gate's
/// stdout is JSON).
pub fn run(
    name: &str,
    argv: &[String],
    env: &BTreeMap<String, String>,
    workspace: &Workspace,
    root: &Path,
    quiet_stdout: bool,
) -> StepResult {
    let started = Instant::now();
    let status = match super::command(argv, env, workspace, root) {
        Some(mut cmd) => {
            if quiet_stdout {
                cmd.stdout(std::io::stderr());
            }
            crate::process::run(&mut cmd).map_err(|e| format!("cannot start `{}`: {e}", argv[0]))
        }
        None => Err("its command is empty".to_string()),
    };
    let duration_ms = started.elapsed().as_millis() as u64;
    let (outcome, exit_code, reason) = match status {
        Ok(s) if s.success() => (Outcome::Passed, s.code(), None),
        Ok(s) => match s.code() {
            Some(code) => (Outcome::Failed, Some(code), None),
            None => (Outcome::Broken, None, Some("killed by a signal".into())),
        },
        Err(why) => (Outcome::Broken, None, Some(why)),
    };
    StepResult {
        name: name.to_string(),
        outcome,
        exit_code,
        duration_ms,
        reason,
    }
}
