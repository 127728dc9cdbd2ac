//! Decisions: a human's citation that lets a refused run go on with its bounded remainder,
//! appended to `.git/gate/decisions.jsonl` with who, when, which range, the refused rows and a
//! hash of the selection, so the record names exactly what was run instead of what was owed.

use crate::error::{Error, Result};
use crate::verdict::{Row, Verdict};
use serde::Serialize;
use std::io::Write;
use std::path::Path;

#[derive(Serialize, Clone)]
pub(crate) struct Record {
    pub citation: String,
    pub user: String,
    pub time: String,
    pub range: String,
    pub refused: Vec<RefusedRow>,
    /// git blob id of the selected paths, one per line, sorted.
    pub selection_hash: String,
}

#[derive(Serialize, Clone)]
pub(crate) struct RefusedRow {
    pub path: String,
    pub reasons: Vec<String>,
}

pub(crate) fn record(
    repo: &git2::Repository,
    citation: &str,
    range: &str,
    rows: &[Row],
    refused_range: Option<&str>,
    selected: &[String],
) -> Result<Record> {
    let user = repo
        .signature()
        .map(|s| format!("{} <{}>", s.name().unwrap_or("?"), s.email().unwrap_or("?")))
        .unwrap_or_else(|_| "unknown (no git user.name/user.email)".into());
    let mut refused: Vec<RefusedRow> = rows
        .iter()
        .filter(|r| r.verdict == Verdict::Refused)
        .map(|r| RefusedRow {
            path: r.path.to_string(),
            reasons: r.reasons.clone(),
        })
        .collect();
    if let Some(fact) = refused_range {
        refused.push(RefusedRow {
            path: range.to_string(),
            reasons: vec![fact.to_string()],
        });
    }
    let listing = selected.join("\n");
    let selection_hash = git2::Oid::hash_object(git2::ObjectType::Blob, listing.as_bytes())
        .map(|o| o.to_string())
        .map_err(|e| Error::git("cannot hash the selection", e))?;
    Ok(Record {
        citation: citation.to_string(),
        user,
        time: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        range: range.to_string(),
        refused,
        selection_hash,
    })
}

/// Appends `record` as one line. A line torn by a run killed while writing is read past with a
/// warning (never glued to the new record: a file not ending with a newline gets one first).
pub(crate) fn append(state: &Path, record: &Record) -> Result<()> {
    let path = state.join("decisions.jsonl");
    std::fs::create_dir_all(state)
        .map_err(|e| Error::io(state, "cannot create gate's directory", e))?;
    let existing = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(Error::io(&path, "cannot read the decisions", e)),
    };
    let torn = torn_lines(&existing);
    if !torn.is_empty() {
        crate::terminal::warn(format!(
            "{}: line {} is not a whole record (a run killed while writing?); it is kept as it is and read past",
            path.display(),
            torn.iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let mut line = String::new();
    if existing.last().is_some_and(|&b| b != b'\n') {
        line.push('\n');
    }
    line.push_str(&serde_json::to_string(record).expect("decisions serialize"));
    line.push('\n');
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(line.as_bytes()))
        .map_err(|e| Error::io(&path, "cannot record the decision", e))
}

/// The 1-based numbers of the lines of a decisions file that are not a JSON record.
fn torn_lines(bytes: &[u8]) -> Vec<usize> {
    bytes
        .split(|&b| b == b'\n')
        .enumerate()
        .filter(|(_, line)| !line.is_empty())
        .filter(|(_, line)| serde_json::from_slice::<serde_json::Value>(line).is_err())
        .map(|(i, _)| i + 1)
        .collect()
}
