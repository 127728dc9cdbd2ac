//! A leg's provenance: which CI run and attempt it belongs to, its branch and whether that is
//! the default branch, and the environment it ran in — read from the CI system's variables
//! (GitHub Actions, GitLab, Buildkite, CircleCI, Azure, Jenkins) and the repository, so
//! `gate record` and a gate run with `--record` name a leg alike.

use crate::error::{Error, Result};
use crate::repo;
use crate::run::shard::Shard;

/// CI variables that name a run, and the ones that count its attempts (first match wins).
const RUN_IDS: &[&str] = &[
    "GITHUB_RUN_ID",
    "CI_PIPELINE_ID",
    "BUILDKITE_BUILD_ID",
    "CIRCLE_WORKFLOW_ID",
    "BUILD_BUILDID",
    "BUILD_NUMBER",
];
const ATTEMPTS: &[&str] = &["GITHUB_RUN_ATTEMPT", "CIRCLE_BUILD_NUM_ATTEMPT"];

/// The run id: given, else from CI variables, else generated (and said so).
pub(crate) fn run_id(given: Option<String>) -> (String, bool) {
    match given.or_else(|| first_env(RUN_IDS)) {
        Some(run) => (run, false),
        None => (generated_run_id(), true),
    }
}

/// The attempt: given, else from CI variables, else 1.
pub(crate) fn attempt(given: Option<u32>) -> Result<u32> {
    match given {
        Some(n) => Ok(n),
        None => first_env(ATTEMPTS)
            .map(|v| {
                v.parse().map_err(|_| {
                    Error::Usage(format!(
                        "the CI attempt `{}` is not a number; pass --attempt N",
                        crate::terminal::shown(&v)
                    ))
                })
            })
            .transpose()
            .map(|n| n.unwrap_or(1)),
    }
}

/// Whether `branch` is the default branch.
pub(crate) fn is_mainline(branch: Option<&str>, main: Option<&repo::range::DefaultBranch>) -> bool {
    match (branch, main) {
        (Some(b), Some(m)) => b == m.name,
        (Some(b), None) => b == "main" || b == "master",
        _ => false,
    }
}

fn first_env(names: &[&str]) -> Option<String> {
    names
        .iter()
        .find_map(|n| std::env::var(n).ok().filter(|v| !v.is_empty()))
}

/// A run id for a run no CI names: unique per process and time.
fn generated_run_id() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!(
        "local-{:x}{:08x}-{}",
        now.as_secs(),
        now.subsec_nanos(),
        std::process::id()
    )
}

/// CI variables that name the branch of a detached checkout (a pull request's head first).
const BRANCHES: &[&str] = &[
    "GITHUB_HEAD_REF",
    "GITHUB_REF_NAME",
    "CI_COMMIT_REF_NAME",
    "BUILDKITE_BRANCH",
    "CIRCLE_BRANCH",
];

/// The current branch, else the one CI names.
pub(crate) fn branch_of(repo: &git2::Repository) -> Option<String> {
    let head = repo.head().ok();
    head.filter(git2::Reference::is_branch)
        .and_then(|h| h.shorthand().ok().map(str::to_string))
        .or_else(|| first_env(BRANCHES))
}

/// The name a leg is stored and shown under: its environment, with its shard when the suite
/// was split (`py3.12-linux#2/3`), so a run's shard legs never overwrite each other.
pub(crate) fn leg_name(environment: &str, shard: Option<Shard>) -> String {
    match shard {
        Some(s) => format!("{environment}#{s}"),
        None => environment.to_string(),
    }
}

/// The leg's environment: what can change a result besides the code. `leg` is the
/// environment's name, never its shard: the shards of one environment share their inputs.
pub(crate) fn environment(junit: bool, go_json: bool, leg: &str) -> serde_json::Value {
    let version = |argv: &[&str]| {
        std::process::Command::new(argv[0])
            .args(&argv[1..])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .trim()
                    .trim_start_matches("Python ")
                    .to_string()
            })
            .unwrap_or_else(|| "unknown".into())
    };
    let mut env = serde_json::json!({
        "os": std::env::consts::OS,
        "arch": std::env::consts::ARCH,
        "leg": leg,
    });
    if junit {
        env["python"] = version(&["python3", "--version"]).into();
    }
    if go_json {
        env["go"] = version(&["go", "env", "GOVERSION"]).into();
    }
    crate::terminal::sorted(env)
}
