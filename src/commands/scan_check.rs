//! `gate scan-check PATH…` (hidden: a check for gate's developers and its bench): every Python
//! file under the paths read by the fast path and by tree-sitter alone; the facts must be
//! equal file by file. Prints the share the fast path read and each file where they differ.

use crate::error::{Error, Result};
use crate::exit_codes;
use crate::lang::python::scan;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

pub(super) fn run(paths: &[PathBuf]) -> Result<u8> {
    let mut files = Vec::new();
    for path in paths {
        collect(path, &mut files)?;
    }
    files.sort();
    let checked: Vec<(PathBuf, usize, scan::Checked)> = files
        .into_par_iter()
        .filter_map(|file| {
            let bytes = std::fs::read(&file).ok()?;
            let checked = scan::check(&bytes);
            Some((file, bytes.len(), checked))
        })
        .collect();
    let fast: Vec<&(PathBuf, usize, scan::Checked)> =
        checked.iter().filter(|(_, _, c)| c.fast).collect();
    let differ: Vec<serde_json::Value> = checked
        .iter()
        .filter_map(|(file, _, c)| {
            let why = c.differs.as_ref()?;
            eprintln!("gate: {}: {why}", file.display());
            Some(serde_json::json!({ "path": file.display().to_string(), "difference": why }))
        })
        .collect();
    let ms = |d: std::time::Duration| (d.as_secs_f64() * 1000.0 * 10.0).round() / 10.0;
    let sum = |f: fn(&scan::Checked) -> std::time::Duration,
               all: &mut dyn Iterator<Item = &scan::Checked>| {
        all.map(f).sum::<std::time::Duration>()
    };
    // Why files went to tree-sitter, the most bytes first: what the fast path should learn.
    let mut why: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    for (_, n, c) in &checked {
        if let Some(reason) = &c.deferred {
            let kind = reason
                .split_whitespace()
                .take(2)
                .collect::<Vec<_>>()
                .join(" ");
            let entry = why
                .entry(if reason.starts_with("call ") {
                    reason.clone()
                } else {
                    kind
                })
                .or_default();
            entry.0 += 1;
            entry.1 += n;
        }
    }
    let mut why: Vec<(String, (usize, usize))> = why.into_iter().collect();
    why.sort_by(|a, b| b.1.1.cmp(&a.1.1).then_with(|| a.0.cmp(&b.0)));
    let deferred: Vec<serde_json::Value> = why
        .iter()
        .take(40)
        .map(|(reason, (files, bytes))| serde_json::json!({ "why": reason, "files": files, "bytes": bytes }))
        .collect();
    let bytes: usize = checked.iter().map(|(_, n, _)| n).sum();
    let fast_bytes: usize = fast.iter().map(|(_, n, _)| n).sum();
    let report = serde_json::json!({
        "version": 1,
        "files": checked.len(),
        "fast_files": fast.len(),
        "fast_share": share(fast.len(), checked.len()),
        "bytes": bytes,
        "fast_bytes": fast_bytes,
        "fast_byte_share": share(fast_bytes, bytes),
        "differ": differ,
        "deferred": deferred,
        // CPU time summed over files, each path on its own.
        "fast_path_ms": ms(sum(|c| c.fast_time, &mut checked.iter().map(|(_, _, c)| c))),
        "tree_sitter_ms": ms(sum(|c| c.tree_time, &mut checked.iter().map(|(_, _, c)| c))),
        "tree_sitter_ms_on_fast_files": ms(sum(|c| c.tree_time, &mut fast.iter().map(|(_, _, c)| c))),
        "fast_path_ms_on_fast_files": ms(sum(|c| c.fast_time, &mut fast.iter().map(|(_, _, c)| c))),
    });
    let report = crate::terminal::sorted(report);
    println!("{report:#}");
    Ok(if differ.is_empty() {
        exit_codes::OK
    } else {
        exit_codes::INTERNAL
    })
}

fn share(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        return 0.0;
    }
    (part as f64 / whole as f64 * 10000.0).round() / 10000.0
}

/// Every `.py`/`.pyi` file at or under `path`, symlinks not followed.
fn collect(path: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let meta = std::fs::symlink_metadata(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        message: "cannot be read".to_string(),
        source,
    })?;
    if meta.is_file() {
        if crate::path::is_python(&path.to_string_lossy()) {
            out.push(path.to_path_buf());
        }
        return Ok(());
    }
    if !meta.is_dir() {
        return Ok(());
    }
    let entries = std::fs::read_dir(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        message: "cannot be listed".to_string(),
        source,
    })?;
    for entry in entries.flatten() {
        collect(&entry.path(), out)?;
    }
    Ok(())
}
