//! Vitest, run through gate's own runner script (`gate_vitest.mjs`): the listed files exactly,
//! each test's result read back from Vitest's JUnit reporter. A run whose report is missing,
//! or that leaves a listed file without a result, is no pass.

use super::suite::JsCommand;
use crate::error::{Error, Result};
use crate::run::events::{Event, Sink, TestOutcome, TestResult};
use crate::run::{At, Outcome};

const SCRIPT: &str = include_str!("gate_vitest.mjs");

/// The argv that runs `command`'s files exactly with no report, as `gate audit` traces one:
/// the script given to `node` inline, its runner arguments and files as JSON arrays.
pub(super) fn alone_argv(command: &JsCommand) -> Vec<String> {
    let files = serde_json::to_string(&command.relative_files()).expect("strings serialize");
    let args = serde_json::to_string(&command.args).expect("strings serialize");
    [
        "node",
        "--input-type=module",
        "--eval",
        SCRIPT,
        "--",
        &args,
        "-",
        &files,
    ]
    .map(str::to_string)
    .to_vec()
}

pub(super) fn run(command: &JsCommand, at: &At<'_>, sink: &mut dyn Sink) -> Result<Outcome> {
    if at.workspace.is_temporary() {
        super::suite::link_installed(&at.workspace.dir, at.root);
    }
    let scratch = crate::process::temp_dir("gate-vitest")
        .map_err(|e| Error::io(std::env::temp_dir(), "cannot create a scratch folder", e))?;
    let script = scratch.path().join("gate_vitest.mjs");
    let junit = scratch.path().join("junit.xml");
    let list = scratch.path().join("files.json");
    std::fs::write(&script, SCRIPT).map_err(|e| Error::io(&script, "cannot write", e))?;
    let files = serde_json::to_vec(&command.relative_files()).expect("strings serialize");
    std::fs::write(&list, files).map_err(|e| Error::io(&list, "cannot write", e))?;
    let mut argv = vec![
        "node".to_string(),
        script.display().to_string(),
        serde_json::to_string(&command.args).expect("strings serialize"),
        junit.display().to_string(),
        list.display().to_string(),
    ];
    let folder = at.workspace.dir.join(&command.dir);
    let workspace = crate::repo::checkout::Workspace::in_place(&folder);
    let workspace = if at.workspace.is_temporary() {
        workspace.temporary_view()
    } else {
        workspace
    };
    let traced = super::observe::Traced::begin(at, scratch.path(), &mut argv);
    let code = crate::run::exit_code(&argv, &traced.env, &workspace, at.root, at.quiet_stdout)?;
    traced.end(command, &folder, &[], sink);
    let report = std::fs::read(&junit).ok();
    let results = match report.as_deref().map(|bytes| results(command, bytes)) {
        Some(Ok(results)) => Some(results),
        Some(Err(e)) => {
            sink.event(Event::Note(&format!(
                "Vitest's JUnit report cannot be read ({e}): no test has a result, and the run is no pass"
            )));
            return Ok(Outcome::Broken(code));
        }
        None => None,
    };
    Ok(judge(command, code, results.as_deref(), sink))
}

/// The results of a JUnit report Vitest wrote from the project's folder: each case placed on
/// its test file (repository-relative), its id the file and the case's name (`describe >
/// test`); a file that failed to load is one case named by its path, the file's own error.
fn results(
    command: &JsCommand,
    bytes: &[u8],
) -> std::result::Result<Vec<TestResult>, crate::run::junit::Error> {
    let cases = crate::run::junit::parse(bytes)?;
    Ok(cases
        .into_iter()
        .map(|case| {
            let relative = case.file.clone().unwrap_or_else(|| case.classname.clone());
            let file = crate::path::normalize(&crate::path::join(&command.dir, &relative));
            let id = if case.name == relative {
                file.clone()
            } else {
                format!("{file}::{}", case.name)
            };
            TestResult {
                id,
                file: Some(file),
                outcome: case.outcome,
                duration_ms: case.duration_ms,
                attempt: 1,
            }
        })
        .collect())
}

/// The run's outcome from the script's exit code and what the report holds; each result goes
/// to `sink`, unless the user's runner arguments left no test to run (then nothing was tested,
/// and nothing is recorded).
pub(super) fn judge(
    command: &JsCommand,
    code: Option<i32>,
    results: Option<&[TestResult]>,
    sink: &mut dyn Sink,
) -> Outcome {
    let reported = results.is_some();
    let results = results.unwrap_or_default();
    let unreported: Vec<&String> = command
        .files
        .iter()
        .filter(|f| !results.iter().any(|r| r.file.as_ref() == Some(*f)))
        .collect();
    let failed = results
        .iter()
        .any(|r| matches!(r.outcome, TestOutcome::Failed | TestOutcome::Error));
    // `-t nomatch`: every selected file reported, each test skipped.
    let narrowed_to_nothing = !command.args.is_empty()
        && code == Some(0)
        && reported
        && unreported.is_empty()
        && results.iter().all(|r| r.outcome == TestOutcome::Skipped);
    if narrowed_to_nothing {
        sink.event(Event::Note(&format!(
            "the runner arguments `{}` left none of the selected tests to run: nothing was tested",
            command.args.join(" ")
        )));
        return Outcome::NothingRan;
    }
    for r in results {
        sink.event(Event::Test(r));
    }
    match code {
        // gate_vitest.mjs's own: Vitest not installed, a listed file no project collects, runner
        // arguments Vitest cannot read.
        Some(3..=5) => Outcome::Broken(code),
        _ if !reported => {
            sink.event(Event::Note(
                "the test runner ended without writing its report: no test has a result, and the run is no pass",
            ));
            Outcome::Broken(code)
        }
        _ if !unreported.is_empty() => {
            sink.event(Event::Note(&format!(
                "the runner reported no result for {} selected file(s) ({}…): the run is no pass",
                unreported.len(),
                unreported[0]
            )));
            // Under the user's arguments a failed test accounts for them: `--bail` stopped the
            // run there, and it failed.
            match code {
                Some(c) if c != 0 && failed && !command.args.is_empty() => Outcome::Failed(c),
                _ => Outcome::Broken(code),
            }
        }
        Some(0) if results.is_empty() => Outcome::NothingRan,
        Some(0) => Outcome::Passed,
        Some(c) if failed => Outcome::Failed(c),
        // A non-zero exit with every test passing: an error outside any test (an unhandled
        // rejection), which the runner counts as a failed run.
        Some(c) => {
            sink.event(Event::Note(
                "the test runner failed outside any test (an unhandled error): the run failed",
            ));
            Outcome::Failed(c)
        }
        None => Outcome::Broken(None),
    }
}
