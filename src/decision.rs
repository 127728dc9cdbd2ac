//! Decisions: a human's citation that lets a refused run go on with its bounded remainder,
//! appended to `.git/gate/decisions.jsonl` with who, when, which range, the refused rows and a
//! hash of the selection, so the record names exactly what was run instead of what was owed.

use crate::error::{Error, Result};
use crate::verdict::{Row, Verdict};
use serde::Serialize;
use std::io::Write;
use std::path::Path;

#[derive(Serialize, Clone)]
pub struct Record {
    pub citation: String,
    pub user: String,
    pub time: String,
    pub range: String,
    pub refused: Vec<RefusedRow>,
    /// git blob id of the selected paths, one per line, sorted.
    pub selection_hash: String,
}

#[derive(Serialize, Clone)]
pub struct RefusedRow {
    pub path: String,
    pub reasons: Vec<String>,
}

pub fn record(
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
            path: r.path.clone(),
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

pub fn append(state: &Path, record: &Record) -> Result<()> {
    let path = state.join("decisions.jsonl");
    std::fs::create_dir_all(state)
        .map_err(|e| Error::io(state, "cannot create gate's directory", e))?;
    let mut line = serde_json::to_string(record).expect("decisions serialize");
    line.push('\n');
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(line.as_bytes()))
        .map_err(|e| Error::io(&path, "cannot record the decision", e))
}
