//! `gate record`: one leg's results (JUnit XML, `go test -json`) into the history store, each
//! test under the id the selection uses. Every input is read and checked before the store is
//! opened: a malformed file records nothing.

use crate::error::{Error, Result};
use crate::exit_codes;
use crate::history::{self, Leg, Recorded, Store};
use crate::project::Project;
use crate::repo::{self, snapshot::Snapshot};
use crate::run::events::{TestOutcome, TestResult};
use std::path::{Path, PathBuf};

pub(super) struct Args<'a> {
    pub junit: &'a [PathBuf],
    pub go_json: &'a [PathBuf],
    pub leg: String,
    pub run: Option<String>,
    pub attempt: Option<u32>,
    pub commit: &'a str,
    pub branch: Option<String>,
    pub db: Option<&'a str>,
}

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

pub(super) fn run(dir: &Path, args: &Args<'_>) -> Result<u8> {
    if args.junit.is_empty() && args.go_json.is_empty() {
        return Err(Error::Usage(
            "gate record: give --junit FILE… or --go-json FILE… (the results to record)".into(),
        ));
    }
    // The interpreter and toolchain versions cost a process each (a pyenv shim is 0.2 s): asked
    // while the inputs are read.
    let probe = {
        let (junit, go_json, leg) = (
            !args.junit.is_empty(),
            !args.go_json.is_empty(),
            args.leg.clone(),
        );
        std::thread::spawn(move || environment(junit, go_json, &leg))
    };
    let repo = repo::open(dir)?;
    let commit = repo::range::commit(&repo, args.commit)?;
    let snapshot = Snapshot::of_commit(&repo, commit)?;
    let project = Project::load(&repo, &snapshot, &[], &mut super::warn)?;
    let results = read_inputs(args, &project)?;
    crate::timings::mark("inputs read");
    let (run, generated) = match args.run.clone().or_else(|| first_env(RUN_IDS)) {
        Some(run) => (run, false),
        None => (generated_run_id(), true),
    };
    let attempt = match args.attempt {
        Some(n) => n,
        None => first_env(ATTEMPTS)
            .map(|v| {
                v.parse().map_err(|_| {
                    Error::Usage(format!(
                        "the CI attempt `{v}` is not a number; pass --attempt N"
                    ))
                })
            })
            .transpose()?
            .unwrap_or(1),
    };
    let leg = Leg {
        run,
        attempt,
        leg: args.leg.clone(),
        commit: commit.to_string(),
        branch: args.branch.clone().or_else(|| current_branch(&repo)),
        env: probe
            .join()
            .map_err(|_| Error::Internal("the environment probe panicked".into()))?,
        source: match (args.junit.is_empty(), args.go_json.is_empty()) {
            (false, false) => "junit+go-json",
            (false, true) => "junit",
            _ => "go-json",
        }
        .into(),
    };
    let at = history::location(args.db, &repo::state_dir(&repo))?;
    let mut store = Store::open(&at)?;
    crate::timings::mark("store open");
    let recorded = store.record(&leg, &results)?;
    crate::timings::mark("leg recorded");
    if generated {
        say!(
            "gate record: run {} (no CI run id in the environment: pass --run {} to the steps that follow)",
            leg.run,
            leg.run
        );
    }
    let what = match recorded {
        Recorded::New(_) => "recorded",
        Recorded::Unchanged(_) => "already recorded, unchanged",
        Recorded::Replaced(_) => "replaced the earlier upload of",
    };
    say!(
        "gate record: {what} leg `{}` of run {} attempt {} at {}: {} ({} #{})",
        leg.leg,
        leg.run,
        leg.attempt,
        &leg.commit[..12.min(leg.commit.len())],
        counts(&results),
        store.name(),
        recorded.seq()
    );
    if results.is_empty() {
        super::warn(format!(
            "warning: leg `{}` uploaded zero results — recorded as such, not as a pass",
            leg.leg
        ));
    }
    Ok(exit_codes::OK)
}

/// Every input read and checked, before anything is written.
fn read_inputs(args: &Args<'_>, project: &Project) -> Result<Vec<TestResult>> {
    let read = |path: &Path| std::fs::read(path).map_err(|e| Error::io(path, "cannot read", e));
    let bad = |path: &Path, message: String| Error::Input {
        path: path.to_path_buf(),
        message,
    };
    let mut results = Vec::new();
    for path in args.junit {
        let cases = crate::run::junit::parse(&read(path)?).map_err(|e| bad(path, e.to_string()))?;
        results.extend(crate::run::junit::results(&cases, &project.tests));
    }
    for path in args.go_json {
        let found = crate::run::gotest::read_json(&read(path)?, &project.go)
            .map_err(|e| bad(path, e.to_string()))?;
        results.extend(found);
    }
    Ok(results)
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

fn current_branch(repo: &git2::Repository) -> Option<String> {
    let head = repo.head().ok()?;
    if !head.is_branch() {
        return None;
    }
    head.shorthand().ok().map(str::to_string)
}

/// The leg's environment: what can change a result besides the code.
fn environment(junit: bool, go_json: bool, leg: &str) -> serde_json::Value {
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
    env
}

fn counts(results: &[TestResult]) -> String {
    let n = |o: TestOutcome| results.iter().filter(|r| r.outcome == o).count();
    format!(
        "{} result(s): {} passed, {} failed, {} error, {} skipped",
        results.len(),
        n(TestOutcome::Passed),
        n(TestOutcome::Failed),
        n(TestOutcome::Error),
        n(TestOutcome::Skipped)
    )
}
