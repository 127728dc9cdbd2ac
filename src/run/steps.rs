//! Gate steps: the team's ordered checks (`[[step]]` in `.gate.toml`) around the built-in
//! affected-tests step, which runs the run plan. The first failure blocks and is named; every
//! step's start and result, and every test's, go to the event sink.

use super::events::{Event, Sink, StepOutcome, StepResult};
use super::select::RunPlan;
use crate::config::{Step, When};
use crate::error::{Error, Result};
use crate::exit_codes;
use crate::project::Project;
use crate::repo::checkout::Workspace;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

/// The steps of `when` (the hook or verify), in order.
pub(crate) fn for_context(steps: &[Step], when: When) -> impl Iterator<Item = &Step> {
    steps
        .iter()
        .filter(move |s| s.when == When::Always || s.when == when)
}

/// Why `step` does not apply to this change, if its `on` globs match no changed path.
pub(crate) fn unmatched(step: &Step, changed: &[&str]) -> Option<String> {
    let on = step.on.as_ref()?;
    (!changed.iter().any(|p| on.is_match(p)))
        .then(|| format!("no changed file matches `on` ({})", on.text))
}

/// Runs a command step (`argv` from `Step::argv`); its output streams (to stderr when gate's
/// stdout is JSON).
pub(crate) fn run(
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
        Ok(s) if s.success() => (StepOutcome::Passed, s.code(), None),
        Ok(s) => match s.code() {
            Some(code) => (StepOutcome::Failed, Some(code), None),
            None => (StepOutcome::Broken, None, Some("killed by a signal".into())),
        },
        Err(why) => (StepOutcome::Broken, None, Some(why)),
    };
    StepResult {
        name: name.to_string(),
        outcome,
        exit_code,
        duration_ms,
        reason,
    }
}

/// What the affected tests' run did, for the report.
#[derive(Serialize, Clone, Debug)]
pub(crate) struct RunResult {
    /// `passed`, `failed` or `broken`.
    pub outcome: &'static str,
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    /// Set when the tests ran in a temporary checkout instead of the working tree, with why.
    pub directory: Option<String>,
}

/// The steps of one gate, in order, and what they run in.
pub(crate) struct Steps<'a> {
    pub steps: Vec<&'a Step>,
    pub plan: &'a RunPlan,
    pub project: &'a Project,
    pub root: &'a Path,
    /// The gated commit; `None` for the working tree.
    pub head: Option<git2::Oid>,
    /// Every changed path (both sides of renames).
    pub changed: &'a [&'a str],
    /// The gated tree, as reports name it.
    pub tree: &'a str,
    /// Gate's stdout is JSON: the runners' output goes to stderr.
    pub quiet_stdout: bool,
}

/// How the steps ended: gate's exit code, the step that blocked, the affected tests' run.
pub(crate) struct Ran {
    pub code: u8,
    pub blocked_by: Option<String>,
    pub run: Option<RunResult>,
}

/// Runs `steps` in order (the first failure blocks the rest), each in the gated tree — the
/// working tree when it holds exactly the gated commit, else a temporary checkout, made once.
/// Stop signals are held for the whole run (`process::Guard`): they reach the runner, and the
/// checkout is removed before gate stops.
pub(crate) fn run_all(repo: &git2::Repository, s: &Steps<'_>, sink: &mut dyn Sink) -> Result<Ran> {
    // Declared before the workspace, so a signal is still held while the checkout is removed.
    let _guard = crate::process::Guard::hold();
    let mut workspace: Option<Workspace> = None;
    let mut ran = Ran {
        code: exit_codes::OK,
        blocked_by: None,
        run: None,
    };
    let mut env = s.project.config.env.clone();
    env.insert("GATE_CHANGED_FILES".into(), s.changed.join("\n"));
    // No environment variable can hold a NUL: the NUL-separated list (`git diff -z`'s form,
    // safe for any file name) is a file, named by `GATE_CHANGED_FILES0`.
    let scratch = crate::process::temp_dir("gate-steps")
        .map_err(|e| Error::io(std::env::temp_dir(), "cannot create a scratch folder", e))?;
    let list0 = scratch.path().join("changed-files0");
    let nul_separated: String = s.changed.iter().map(|p| format!("{p}\0")).collect();
    std::fs::write(&list0, nul_separated)
        .map_err(|e| Error::io(&list0, "cannot write the changed files", e))?;
    env.insert("GATE_CHANGED_FILES0".into(), list0.display().to_string());
    for step in &s.steps {
        super::interrupted()?;
        let argv = step.argv();
        let skip = if let Some(name) = &ran.blocked_by {
            Some(format!("blocked by the failure of `{name}`"))
        } else if let Some(why) = unmatched(step, s.changed) {
            Some(why)
        } else if argv.is_none() && !s.plan.runs() {
            Some(s.plan.idle.clone().unwrap_or_default())
        } else {
            None
        };
        let result = match skip {
            Some(why) => StepResult::skipped(&step.name, why),
            None => {
                sink.event(Event::StepStarted {
                    name: &step.name,
                    argv: argv.as_deref(),
                });
                if workspace.is_none() {
                    let ws = match s.head {
                        Some(head) => Workspace::for_commit(repo, s.root, head)?,
                        None => Workspace::in_place(s.root),
                    };
                    if let Some(why) = &ws.why {
                        sink.event(Event::Note(&format!(
                            "running in a temporary checkout of {} ({why})",
                            s.tree
                        )));
                    }
                    workspace = Some(ws);
                    super::interrupted()?;
                }
                let ws = workspace.as_ref().expect("set just above");
                match &argv {
                    Some(argv) => {
                        let r = run(&step.name, argv, &env, ws, s.root, s.quiet_stdout);
                        super::interrupted()?;
                        r
                    }
                    None => {
                        let (r, run) = affected_tests(s, ws, &step.name, sink)?;
                        ran.run = Some(run);
                        r
                    }
                }
            }
        };
        if ran.blocked_by.is_none() {
            let failed = match (result.outcome, argv.is_none()) {
                (StepOutcome::Failed, true) => Some(exit_codes::TESTS_FAILED),
                (StepOutcome::Broken, true)
                    if ran.run.as_ref().is_some_and(|r| r.outcome == "nothing_ran") =>
                {
                    Some(exit_codes::NOTHING_RAN)
                }
                (StepOutcome::Broken, true) => Some(exit_codes::RUNNER),
                (StepOutcome::Failed | StepOutcome::Broken, false) => Some(exit_codes::STEP_FAILED),
                _ => None,
            };
            if let Some(code) = failed {
                ran.code = code;
                ran.blocked_by = Some(step.name.clone());
            }
        }
        sink.event(Event::StepFinished(&result));
    }
    Ok(ran)
}

/// The built-in step: the run plan's commands, in order, in the gated tree; the worst outcome
/// is the step's.
fn affected_tests(
    s: &Steps<'_>,
    ws: &Workspace,
    name: &str,
    sink: &mut dyn Sink,
) -> Result<(StepResult, RunResult)> {
    if let Some(missing) = s
        .plan
        .commands
        .iter()
        .find_map(|c| c.missing(&ws.dir.join(c.dir())))
    {
        return Err(Error::Internal(format!(
            "selected test {missing} is not in {}: the checkout does not hold the gated tree ({})",
            ws.dir.display(),
            s.tree
        )));
    }
    let started = Instant::now();
    let at = super::At {
        project: s.project,
        env: &s.project.config.env,
        workspace: ws,
        root: s.root,
        quiet_stdout: s.quiet_stdout,
    };
    let mut outcomes = Vec::new();
    for runner in &s.plan.commands {
        outcomes.push(runner.run(&at, sink)?);
    }
    let duration_ms = started.elapsed().as_millis() as u64;
    let worst = outcomes
        .into_iter()
        .max_by_key(|o| match o {
            super::Outcome::Passed => 0,
            super::Outcome::NothingRan => 1,
            super::Outcome::Failed(_) => 2,
            super::Outcome::Broken(_) => 3,
        })
        .unwrap_or(super::Outcome::Passed);
    let (word, exit, outcome) = match worst {
        super::Outcome::Passed => ("passed", Some(0), StepOutcome::Passed),
        super::Outcome::Failed(n) => ("failed", Some(n), StepOutcome::Failed),
        super::Outcome::Broken(n) => ("broken", n, StepOutcome::Broken),
        super::Outcome::NothingRan => ("nothing_ran", None, StepOutcome::Broken),
    };
    let run = RunResult {
        outcome: word,
        exit_code: exit,
        duration_ms,
        directory: ws
            .why
            .as_ref()
            .map(|why| format!("temporary checkout of the gated commit: {why}")),
    };
    let step = StepResult {
        name: name.to_string(),
        outcome,
        exit_code: exit,
        duration_ms,
        reason: None,
    };
    Ok((step, run))
}
