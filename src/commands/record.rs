//! `gate record`: one leg's results (JUnit XML, `go test -json`) into the history store, each
//! test under the id the selection uses. Every input is read and checked before the store is
//! opened: a malformed file records nothing.

use crate::error::{Error, Result};
use crate::exit_codes;
use crate::history::{self, Change, Leg, Recorded, Store};
use crate::project::Project;
use crate::repo::input::Target;
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
    pub base: Option<&'a str>,
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
    let branch = args.branch.clone().or_else(|| branch_of(&repo));
    let main = repo::range::default_branch(&repo);
    let mainline = is_mainline(branch.as_deref(), main.as_ref());
    let base = match args.base {
        Some(rev) => Some(repo::range::commit(&repo, rev)?),
        None if mainline => None,
        None => main
            .as_ref()
            .and_then(|m| repo.merge_base(commit, m.commit).ok())
            .filter(|b| *b != commit),
    };
    // The change is gated as `gate --affected base...commit` would: the same verdicts and
    // selection, so triage knows which failures the change can explain.
    let (project, change) = match base {
        Some(base) => {
            let range = repo::range::resolve(&repo, &format!("{base}...{commit}"))?;
            let analyzed = super::gate::analyze(&repo, Target::Ranges(vec![range]))?;
            let change = change_of(&analyzed.decided);
            (analyzed.project, change)
        }
        None => {
            let snapshot = Snapshot::of_commit(&repo, commit)?;
            let project = Project::load(&repo, &snapshot, &[], &mut super::warn)?;
            (project, Change::default())
        }
    };
    let results = read_inputs(args, &project)?;
    crate::timings::mark("inputs read");
    let (run, generated) = run_id(args.run.clone());
    let env = probe
        .join()
        .map_err(|_| Error::Internal("the environment probe panicked".into()))?;
    let leg = Leg {
        run,
        attempt: attempt(args.attempt)?,
        leg: args.leg.clone(),
        commit: commit.to_string(),
        branch,
        mainline,
        base: base.map(|b| b.to_string()),
        source: match (args.junit.is_empty(), args.go_json.is_empty()) {
            (false, false) => "junit+go-json",
            (false, true) => "junit",
            _ => "go-json",
        }
        .into(),
        inputs: crate::fingerprint::run_inputs(&project.config, &env),
        env,
    };
    if generated {
        say!(
            "gate record: run {} (no CI run id in the environment: pass --run {} to the steps that follow)",
            leg.run,
            leg.run
        );
    }
    if base.is_none() && !mainline && main.is_none() {
        super::warn(format!(
            "no default branch found to take {}'s change against (origin/HEAD, main, master): its change is not stored; pass --base REV",
            &leg.commit[..12]
        ));
    }
    store_leg(
        &repo,
        &project.config.history,
        args.db,
        &leg,
        &results,
        &change,
        &mut |line| crate::commands::say_line(format_args!("{line}")),
    )?;
    Ok(exit_codes::OK)
}

/// Records `leg` and rolls up its tests; says what it did. Shared by `gate record` and a gate
/// run with `--record`.
pub(super) fn store_leg(
    repo: &git2::Repository,
    history: &crate::config::History,
    db: Option<&str>,
    leg: &Leg,
    results: &[TestResult],
    change: &Change,
    say: &mut dyn FnMut(String) -> Result<()>,
) -> Result<()> {
    let at = history::location(db, history.url.as_deref(), &repo::state_dir(repo))?;
    let mut store = Store::open(&at)?;
    crate::timings::mark("store open");
    let recorded = store.record(leg, results, change, history.window_days)?;
    crate::timings::mark("leg recorded");
    let what = match recorded {
        Recorded::Kept { results: had, .. } => {
            return Err(Error::Refused(format!(
                "leg `{}` of run {} attempt {} already holds {had} result(s) and this upload has none: the recorded leg is kept, nothing changed (record a new attempt with --attempt {})",
                leg.leg,
                leg.run,
                leg.attempt,
                leg.attempt + 1
            )));
        }
        Recorded::New(_) => "recorded",
        Recorded::Unchanged(_) => "already recorded, unchanged",
        Recorded::Replaced(_) => "replaced the earlier upload of",
    };
    say(format!(
        "gate record: {what} leg `{}` of run {} attempt {} at {}: {} ({} #{})",
        leg.leg,
        leg.run,
        leg.attempt,
        &leg.commit[..12.min(leg.commit.len())],
        counts(results),
        store.name(),
        recorded.seq()
    ))?;
    if results.is_empty() {
        super::warn(format!(
            "leg `{}` uploaded zero results — recorded as such, not as a pass",
            leg.leg
        ));
    }
    Ok(())
}

/// What a gate knows of its change, for the store: every changed path with its verdict, and
/// every test a changed path selected (by an edge or a `[[depends]]` rule).
pub(super) fn change_of(decided: &crate::verdict::Decision) -> Change {
    let mut change = Change::default();
    for row in &decided.rows {
        let verdict = serde_json::to_value(row.verdict)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        change.paths.push((row.path.to_string(), verdict));
        for test in &row.tests {
            change.selected.push((test.clone(), row.path.to_string()));
        }
    }
    change.paths.sort();
    change.paths.dedup_by(|a, b| a.0 == b.0);
    change.selected.sort();
    change.selected.dedup();
    change
}

/// The run id: given, else from CI variables, else generated (and said so).
pub(super) fn run_id(given: Option<String>) -> (String, bool) {
    match given.or_else(|| first_env(RUN_IDS)) {
        Some(run) => (run, false),
        None => (generated_run_id(), true),
    }
}

/// The attempt: given, else from CI variables, else 1.
pub(super) fn attempt(given: Option<u32>) -> Result<u32> {
    match given {
        Some(n) => Ok(n),
        None => first_env(ATTEMPTS)
            .map(|v| {
                v.parse().map_err(|_| {
                    Error::Usage(format!(
                        "the CI attempt `{v}` is not a number; pass --attempt N"
                    ))
                })
            })
            .transpose()
            .map(|n| n.unwrap_or(1)),
    }
}

/// Whether `branch` is the default branch.
pub(super) fn is_mainline(branch: Option<&str>, main: Option<&repo::range::DefaultBranch>) -> bool {
    match (branch, main) {
        (Some(b), Some(m)) => b == m.name,
        (Some(b), None) => b == "main" || b == "master",
        _ => false,
    }
}

/// Every input read and checked, before anything is written.
fn read_inputs(args: &Args<'_>, project: &Project) -> Result<Vec<TestResult>> {
    read_results(args.junit, args.go_json, project)
}

/// The results in JUnit XML and `go test -json` files, placed in `project`'s tree; a file that
/// cannot be read or parsed is an error naming it.
pub(super) fn read_results(
    junit: &[PathBuf],
    go_json: &[PathBuf],
    project: &Project,
) -> Result<Vec<TestResult>> {
    let read = |path: &Path| std::fs::read(path).map_err(|e| Error::io(path, "cannot read", e));
    let bad = |path: &Path, message: String| Error::Input {
        path: path.to_path_buf(),
        message,
    };
    let mut results = Vec::new();
    for path in junit {
        let cases = crate::run::junit::parse(&read(path)?).map_err(|e| bad(path, e.to_string()))?;
        results.extend(crate::run::junit::results(&cases, &project.tests));
    }
    for path in go_json {
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

/// CI variables that name the branch of a detached checkout (a pull request's head first).
const BRANCHES: &[&str] = &[
    "GITHUB_HEAD_REF",
    "GITHUB_REF_NAME",
    "CI_COMMIT_REF_NAME",
    "BUILDKITE_BRANCH",
    "CIRCLE_BRANCH",
];

/// The current branch, else the one CI names.
pub(super) fn branch_of(repo: &git2::Repository) -> Option<String> {
    let head = repo.head().ok();
    head.filter(git2::Reference::is_branch)
        .and_then(|h| h.shorthand().ok().map(str::to_string))
        .or_else(|| first_env(BRANCHES))
}

/// The leg's environment: what can change a result besides the code.
pub(super) fn environment(junit: bool, go_json: bool, leg: &str) -> serde_json::Value {
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

pub(super) fn counts(results: &[TestResult]) -> String {
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
