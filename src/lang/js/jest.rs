//! Jest, run as `jest --json --outputFile=… --no-watchman [ARGS] --runTestsByPath -- FILES` from the
//! project's folder with the project's own Jest: the listed paths exactly (`--` ends its
//! options, so a file name is never one), each test's result read back from Jest's JSON report
//! (its titles exact, where jest-junit's templates rewrite some). ARGS: the user's runner
//! arguments, read against Jest's allow-list (`args`).

use super::suite::JsCommand;
use crate::error::{Error, Result};
use crate::run::events::{Event, Sink, TestOutcome, TestResult};
use crate::run::{At, Outcome};
use serde::Deserialize;

#[derive(Deserialize)]
struct Report {
    #[serde(rename = "testResults", default)]
    test_results: Vec<FileResult>,
}

#[derive(Deserialize)]
struct FileResult {
    name: String,
    #[serde(default)]
    status: String,
    #[serde(rename = "assertionResults", default)]
    assertions: Vec<Assertion>,
}

#[derive(Deserialize)]
struct Assertion {
    #[serde(rename = "ancestorTitles", default)]
    ancestors: Vec<String>,
    title: String,
    status: String,
    #[serde(default)]
    duration: Option<f64>,
}

pub(super) fn run(command: &JsCommand, at: &At<'_>, sink: &mut dyn Sink) -> Result<Outcome> {
    let scratch = crate::process::temp_dir("gate-jest")
        .map_err(|e| Error::io(std::env::temp_dir(), "cannot create a scratch folder", e))?;
    let out = scratch.path().join("jest.json");
    if at.workspace.is_temporary() {
        super::suite::link_installed(&at.workspace.dir, at.root);
    }
    let dir = at.workspace.dir.join(&command.dir);
    let Some(jest) = super::suite::installed_bin(&dir, &at.workspace.dir, "jest") else {
        sink.event(Event::Note(&format!(
            "Jest is not installed in {} (no node_modules/.bin/jest there or above): install the project's packages first (npm ci)",
            dir.display()
        )));
        return Ok(Outcome::Broken(None));
    };
    // Without watchman: its daemon would list the tree's files where the run's trace cannot
    // see; Jest's own crawl is traced.
    let mut argv = vec![
        jest.display().to_string(),
        "--json".to_string(),
        format!("--outputFile={}", out.display()),
        "--no-watchman".to_string(),
    ];
    argv.extend(command.args.iter().cloned());
    argv.push("--runTestsByPath".to_string());
    argv.push("--".to_string());
    argv.extend(command.relative_files());
    let workspace = crate::repo::checkout::Workspace::in_place(&dir);
    let workspace = if at.workspace.is_temporary() {
        workspace.temporary_view()
    } else {
        workspace
    };
    let traced = super::observe::Traced::begin(at, scratch.path(), &mut argv);
    let code = crate::run::exit_code(&argv, &traced.env, &workspace, at.root, at.quiet_stdout)?;
    traced.end(command, &dir, &[cache_directory()], sink);
    let report = std::fs::read(&out).ok();
    let parsed = report.as_deref().map(serde_json::from_slice::<Report>);
    let results = match parsed {
        Some(Ok(report)) => Some(results(command, &workspace.dir, &report)),
        Some(Err(e)) => {
            sink.event(Event::Note(&format!(
                "Jest's JSON report cannot be read ({e}): no test has a result, and the run is no pass"
            )));
            return Ok(Outcome::Broken(code));
        }
        None => None,
    };
    Ok(super::vitest::judge(
        command,
        code,
        results.as_deref(),
        sink,
    ))
}

/// Jest's own cache (`cacheDirectory`'s default, as Jest makes it: the temporary folder's
/// `jest_` and the user id in base 36): its transforms, keyed by the sources' content and the
/// configuration, and its map of the tree's files, read and rewritten by every run — the
/// runner's state, derived from what the run lists, as pytest's `.pytest_cache` is. A project
/// that moves it elsewhere has it listed: its runs then change it and enter nothing.
fn cache_directory() -> std::path::PathBuf {
    let dir = std::env::temp_dir();
    let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    dir.join(format!("jest_{}", base36(u64::from(uid))))
}

/// `n` in base 36, lower case, as JavaScript's `toString(36)` writes it.
fn base36(mut n: u64) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).expect("ASCII digits")
}

/// Each assertion as a result on its test file (repository-relative); a file that failed to
/// run with no assertion is one error, the file's own.
fn results(command: &JsCommand, dir: &std::path::Path, report: &Report) -> Vec<TestResult> {
    let mut out = Vec::new();
    for file in &report.test_results {
        let relative = std::path::Path::new(&file.name)
            .strip_prefix(dir)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| file.name.clone());
        let path = crate::path::normalize(&crate::path::join(&command.dir, &relative));
        if file.assertions.is_empty() && file.status == "failed" {
            out.push(TestResult {
                id: path.clone(),
                file: Some(path.clone()),
                outcome: TestOutcome::Error,
                duration_ms: 0,
                attempt: 1,
            });
        }
        for a in &file.assertions {
            let mut name: Vec<&str> = a.ancestors.iter().map(String::as_str).collect();
            name.push(&a.title);
            out.push(TestResult {
                id: format!("{path}::{}", name.join(" > ")),
                file: Some(path.clone()),
                outcome: match a.status.as_str() {
                    "passed" => TestOutcome::Passed,
                    "failed" => TestOutcome::Failed,
                    _ => TestOutcome::Skipped,
                },
                duration_ms: a.duration.unwrap_or(0.0).max(0.0) as u64,
                attempt: 1,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn base36_is_javascript_s() {
        assert_eq!(super::base36(0), "0");
        assert_eq!(super::base36(1000), "rs");
        assert_eq!(super::base36(35), "z");
        assert_eq!(super::base36(36), "10");
    }
}
