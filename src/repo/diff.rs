//! What changed: every path a range, a working tree or `--files` touches, renames as both sides.

use crate::error::{Error, Result};
use git2::{Delta, Diff, DiffFindOptions, DiffOptions, Oid, Repository};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Added,
    Modified,
    Deleted,
    Renamed,
    TypeChanged,
}

/// One changed path. A rename yields two: the new path (`Renamed`, with `other`) and the old
/// path (`Deleted`, with `other` naming where it went), because both sides can break tests.
#[derive(Debug, Clone)]
pub struct Change {
    pub path: String,
    pub status: Status,
    pub other: Option<String>,
    /// Set when git's path is not UTF-8: such a change is refused, never dropped.
    pub non_utf8: bool,
}

/// Changes between two commits' trees.
pub fn between(repo: &Repository, base: Oid, head: Oid) -> Result<Vec<Change>> {
    let tree = |oid: Oid| {
        repo.find_commit(oid)
            .and_then(|c| c.tree())
            .map_err(|e| Error::git(format!("cannot read the tree of {oid}"), e))
    };
    let (a, b) = (tree(base)?, tree(head)?);
    let diff = repo
        .diff_tree_to_tree(Some(&a), Some(&b), Some(&mut options()))
        .map_err(|e| Error::git("cannot diff the range", e))?;
    collect(diff)
}

/// Changes from a commit to the working tree, staged or not, untracked files included.
pub fn to_workdir(repo: &Repository, base: Oid) -> Result<Vec<Change>> {
    let tree = repo
        .find_commit(base)
        .and_then(|c| c.tree())
        .map_err(|e| Error::git(format!("cannot read the tree of {base}"), e))?;
    let mut opts = options();
    opts.include_untracked(true).recurse_untracked_dirs(true);
    let diff = repo
        .diff_tree_to_workdir_with_index(Some(&tree), Some(&mut opts))
        .map_err(|e| Error::git("cannot diff against the working tree", e))?;
    collect(diff)
}

fn options() -> DiffOptions {
    let mut opts = DiffOptions::new();
    opts.include_typechange(true);
    opts
}

fn collect(mut diff: Diff<'_>) -> Result<Vec<Change>> {
    diff.find_similar(Some(
        DiffFindOptions::new().renames(true).for_untracked(true),
    ))
    .map_err(|e| Error::git("cannot detect renames", e))?;
    let mut changes: BTreeMap<String, Change> = BTreeMap::new();
    for delta in diff.deltas() {
        let path_of = |f: git2::DiffFile<'_>| {
            let bytes = f.path_bytes().unwrap_or_default();
            match std::str::from_utf8(bytes) {
                Ok(s) => (s.to_string(), false),
                Err(_) => (String::from_utf8_lossy(bytes).into_owned(), true),
            }
        };
        let (old, old_bad) = path_of(delta.old_file());
        let (new, new_bad) = path_of(delta.new_file());
        let mut add = |path: String, status, other, non_utf8| {
            changes.insert(
                path.clone(),
                Change {
                    path,
                    status,
                    other,
                    non_utf8,
                },
            );
        };
        match delta.status() {
            Delta::Added | Delta::Untracked | Delta::Copied => {
                add(new, Status::Added, None, new_bad)
            }
            Delta::Deleted => add(old, Status::Deleted, None, old_bad),
            Delta::Renamed => {
                add(old.clone(), Status::Deleted, Some(new.clone()), old_bad);
                add(new, Status::Renamed, Some(old), new_bad);
            }
            Delta::Typechange => add(new, Status::TypeChanged, None, new_bad),
            Delta::Unmodified | Delta::Ignored => {}
            _ => add(new, Status::Modified, None, new_bad),
        }
    }
    Ok(changes.into_values().collect())
}

/// `--files`: the paths as given (relative to the repository root), changed by fiat.
pub fn named(paths: &[String], exists: impl Fn(&str) -> bool) -> Vec<Change> {
    let mut out: BTreeMap<String, Change> = BTreeMap::new();
    for raw in paths {
        let path = crate::graph::normalize(raw.trim_start_matches("./"));
        let status = if exists(&path) {
            Status::Modified
        } else {
            Status::Deleted
        };
        out.insert(
            path.clone(),
            Change {
                path,
                status,
                other: None,
                non_utf8: false,
            },
        );
    }
    out.into_values().collect()
}
