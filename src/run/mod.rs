//! Stages 6–8 — running: the project's own runner over the selection and the team's gate steps,
//! their output streamed, in the directory that holds the gated tree.

pub(crate) mod events;
pub(crate) mod junit;
pub(crate) mod reports;
pub(crate) mod select;
pub(crate) mod shard;
pub(crate) mod steps;
pub(crate) mod suggest;

pub(crate) mod error;
pub(crate) use error::RunnerError;

use crate::project::Project;
use crate::repo::checkout::Workspace;
use events::Sink;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

/// One command of a run plan, built by its language (`lang::suite::Suite::commands`): the plan is
/// a list of these, so running, reporting and recording never name a language.
pub(crate) trait Runner {
    /// The language whose tests it runs (`python`, `go`), as the JSON report groups them.
    fn language(&self) -> &'static str;
    /// Its argv as shown and reported (what gate adds only to read results is left out).
    fn argv(&self) -> Vec<String>;
    /// The folder it runs in, relative to the gated tree's root (`""`: the root).
    fn dir(&self) -> &str {
        ""
    }
    /// How many of `argv`'s last words name tests: a long list the human report cuts.
    fn test_args(&self) -> usize {
        0
    }
    /// A selected test file the gated tree at `dir` does not hold: the checkout is not the
    /// gated tree, and nothing may run.
    fn missing(&self, _dir: &Path) -> Option<&str> {
        None
    }
    /// Runs it in `at`'s gated tree; each test's result and every note go to `sink`.
    fn run(&self, at: &At<'_>, sink: &mut dyn Sink) -> crate::error::Result<Outcome>;
}

/// Where and how a plan's runners run.
pub(crate) struct At<'a> {
    pub project: &'a Project,
    pub env: &'a BTreeMap<String, String>,
    /// The gated tree.
    pub workspace: &'a Workspace,
    /// The repository's working tree (where untracked tools such as a virtualenv live).
    pub root: &'a Path,
    /// Gate's stdout is JSON: the runners' output goes to stderr.
    pub quiet_stdout: bool,
}

/// How a runner's run ended.
pub(crate) enum Outcome {
    Passed,
    Failed(i32),
    /// pytest's own usage/internal errors, a run cut short, or a runner killed by a signal.
    Broken(Option<i32>),
    /// The user's runner arguments left none of the selected tests to run (`-k nomatch`): no
    /// failure, and no pass either (`exit_codes::NOTHING_RAN`).
    NothingRan,
}

/// git's variables that point a child at the repository the hook runs in; a temporary checkout
/// must not inherit them, or a test that calls git would see the wrong tree.
const GIT_LOCATION_VARS: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_PREFIX",
    "GIT_COMMON_DIR",
];

/// A command for `argv` in `workspace`. A relative program path (`./scripts/lint.sh`,
/// `.venv/bin/python`) is looked up in the gated tree first, then in the repository's working
/// tree, where untracked tools such as a virtualenv live.
pub(crate) fn command(
    argv: &[String],
    env: &BTreeMap<String, String>,
    workspace: &Workspace,
    root: &Path,
) -> Option<Command> {
    let (program, args) = argv.split_first()?;
    let program = if program.contains('/') && Path::new(program).is_relative() {
        let in_tree = workspace.dir.join(program);
        if in_tree.exists() {
            in_tree
        } else {
            root.join(program)
        }
    } else {
        program.into()
    };
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(&workspace.dir)
        .envs(env)
        .stdin(Stdio::null());
    if workspace.is_temporary() {
        for var in GIT_LOCATION_VARS {
            cmd.env_remove(var);
        }
    }
    Some(cmd)
}

/// Runs a runner's `argv` in `workspace` and gives its exit code (`None`: killed by a signal).
/// With `quiet_stdout` its stdout goes to stderr, so gate's own stdout stays machine-readable
/// (`--json`).
pub(crate) fn exit_code(
    argv: &[String],
    env: &BTreeMap<String, String>,
    workspace: &Workspace,
    root: &Path,
    quiet_stdout: bool,
) -> crate::error::Result<Option<i32>> {
    let mut cmd = command(argv, env, workspace, root).ok_or(RunnerError::Empty("the runner"))?;
    if quiet_stdout {
        cmd.stdout(std::io::stderr());
    }
    let status = crate::process::run(&mut cmd).map_err(|source| RunnerError::Start {
        program: argv[0].clone(),
        source,
    })?;
    interrupted()?;
    Ok(status.code())
}

/// After a stop signal (forwarded to the runner, which has ended), the run ends too: the error
/// unwinds through the temporary checkout, which removes it.
pub(crate) fn interrupted() -> crate::error::Result<()> {
    match crate::process::received() {
        Some(sig) => Err(crate::error::Error::Interrupted(sig)),
        None => Ok(()),
    }
}
