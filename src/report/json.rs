//! The `--json` report. Its shape is `plans/report.schema.json`, version `REPORT_VERSION`.

use crate::decision::Record;
use crate::run::gotest::GoCommand;
use crate::run::steps::StepResult;
use crate::verdict::{Row, RunVerdict};
use serde::Serialize;

/// 2 added `steps`, `exit_code`, `duration_ms` and the run's `duration_ms` and `directory`;
/// 3 added `go_commands`.
pub const REPORT_VERSION: u32 = 3;

#[derive(Serialize)]
pub struct Report<'a> {
    pub version: u32,
    pub gate: &'static str,
    pub range: Option<RangeInfo>,
    /// The tree analysed: `commit <sha>` or `working tree`.
    pub tree: String,
    pub verdict: RunVerdict,
    pub files: &'a [Row],
    pub selected: Vec<Selected<'a>>,
    /// Tests `max_depth` kept out → the changes that reach them.
    pub cut: Vec<Selected<'a>>,
    /// Set when the range itself cannot be bounded (its base is missing): the fact and the fix.
    pub range_refusal: Option<String>,
    pub notes: Vec<String>,
    pub test_files: usize,
    /// The ready-to-run pytest command, or null when no Python test runs.
    pub command: Option<Vec<String>>,
    /// The `go test` commands, one per module (run from the module's folder).
    pub go_commands: Vec<GoCommand>,
    pub decision: Option<Record>,
    pub summary: String,
    /// What the run did; null with `--list` or when nothing ran.
    pub run: Option<RunResult>,
    /// The gate steps in order (pre-push hook and `verify`); null for `gate --affected`.
    pub steps: Option<Vec<StepResult>>,
    /// gate's exit code for this report.
    pub exit_code: u8,
    pub duration_ms: u64,
}

#[derive(Serialize)]
pub struct RangeInfo {
    pub spec: String,
    pub mode: String,
    pub base: Option<String>,
    pub head: Option<String>,
}

#[derive(Serialize)]
pub struct Selected<'a> {
    pub path: &'a str,
    pub reasons: &'a [String],
}

#[derive(Serialize)]
pub struct RunResult {
    /// `passed`, `failed` or `broken`.
    pub outcome: &'static str,
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    /// Set when the tests ran in a temporary checkout instead of the working tree.
    pub directory: Option<String>,
}

/// An error as a JSON document (`plans/error.schema.json`): what `--json` prints and a
/// `verify` receipt holds when gate could not gate at all, so every outcome has a record.
#[derive(Serialize)]
pub struct ErrorReport {
    pub version: u32,
    pub kind: &'static str,
    pub gate: &'static str,
    pub exit_code: u8,
    pub error: String,
    pub causes: Vec<String>,
    pub hint: Option<String>,
}

pub const ERROR_VERSION: u32 = 1;

impl ErrorReport {
    pub fn new(err: &crate::error::Error) -> ErrorReport {
        let mut causes = Vec::new();
        let mut source = std::error::Error::source(err);
        while let Some(cause) = source {
            causes.push(cause.to_string());
            source = cause.source();
        }
        ErrorReport {
            version: ERROR_VERSION,
            kind: "error",
            gate: crate::plan::ANALYZER,
            exit_code: err.exit_code(),
            error: err.to_string(),
            causes,
            hint: err.hint(),
        }
    }
}
