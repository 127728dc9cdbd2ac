//! The `--json` report. Its shape is `plans/report.schema.json`, version `REPORT_VERSION`.

use crate::decision::Record;
use crate::verdict::{Row, RunVerdict};
use serde::Serialize;

pub const REPORT_VERSION: u32 = 1;

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
    pub notes: &'a [String],
    pub test_files: usize,
    /// The ready-to-run command, or null when nothing runs.
    pub command: Option<Vec<String>>,
    pub decision: Option<Record>,
    pub summary: String,
    /// What the run did; null with `--list` or when nothing ran.
    pub run: Option<RunResult>,
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
}
