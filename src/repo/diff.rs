//! What changed: every path a range, a working tree or `--files` touches, renames as both sides.

use crate::error::{Error, Result};
use crate::path::RepoPath;
use git2::{Delta, Diff, DiffFindOptions, DiffOptions, Oid, Repository};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Status {
    Added,
    Modified,
    Deleted,
    Renamed,
    TypeChanged,
}

/// One changed path. A rename yields two: the new path (`Renamed`, with `other`) and the old
/// path (`Deleted`, with `other` naming where it went), because both sides can break tests.
#[derive(Debug, Clone)]
pub(crate) struct Change {
    pub path: RepoPath,
    pub status: Status,
    pub other: Option<RepoPath>,
    /// Set when git's path is not UTF-8: such a change is refused, never dropped.
    pub non_utf8: bool,
}

/// Changes between two commits' trees.
pub(crate) fn between(repo: &Repository, base: Oid, head: Oid) -> Result<Vec<Change>> {
    let tree = |oid: Oid| {
        repo.find_commit(oid)
            .and_then(|c| c.tree())
            .map_err(|e| Error::git(format!("cannot read the tree of {oid}"), e))
    };
    let (a, b) = (tree(base)?, tree(head)?);
    // Two trees compared entry by entry, skipping every subtree they share: the cost follows
    // the change, not the size of the repository. A rename can only hide among files that
    // were both added and deleted; then git's rename detection decides.
    let mut found = BTreeMap::new();
    changed_entries(repo, Some(&a), Some(&b), b"", &mut |path, status, _| {
        let (path, non_utf8) = utf8_path(path);
        insert(&mut found, path, status, None, non_utf8)
    })?;
    let statuses = || found.values().map(|c| c.status);
    if !(statuses().any(|s| s == Status::Added) && statuses().any(|s| s == Status::Deleted)) {
        return Ok(found.into_values().collect());
    }
    let diff = repo
        .diff_tree_to_tree(Some(&a), Some(&b), Some(&mut options()))
        .map_err(|e| Error::git("cannot diff the range", e))?;
    collect(diff)
}

/// A tree entry's id and file mode.
pub(crate) type Entry = (Oid, i32);

/// What differs between trees `a` and `b` under `prefix` (either side may be absent: a folder
/// added or deleted whole), one call per path: its status and, unless deleted, its new entry
/// (id, file mode). Subtrees with the same id on both sides are skipped unread.
pub(crate) fn changed_entries(
    repo: &Repository,
    a: Option<&git2::Tree<'_>>,
    b: Option<&git2::Tree<'_>>,
    prefix: &[u8],
    found: &mut impl FnMut(&[u8], Status, Option<Entry>),
) -> Result<()> {
    const TREE: i32 = 0o040000;
    let entries = |t: Option<&git2::Tree<'_>>| -> BTreeMap<Vec<u8>, (Oid, i32)> {
        t.map(|t| {
            t.iter()
                .map(|e| (e.name_bytes().to_vec(), (e.id(), e.filemode())))
                .collect()
        })
        .unwrap_or_default()
    };
    let (ea, eb) = (entries(a), entries(b));
    let subtree = |id: Oid| {
        repo.find_tree(id)
            .map_err(|e| Error::git(format!("cannot read tree {id}"), e))
    };
    // Blob, symlink or submodule: a change between them is a type change.
    let class = |mode: i32| mode & 0o170000;
    let mut names: Vec<&Vec<u8>> = ea.keys().chain(eb.keys()).collect();
    names.sort();
    names.dedup();
    for name in names {
        let path = [prefix, name.as_slice()].concat();
        let dir = [path.as_slice(), b"/"].concat();
        let (old, new) = (ea.get(name).copied(), eb.get(name).copied());
        if old == new {
            continue;
        }
        match (old, new) {
            (Some((x, TREE)), Some((y, TREE))) => {
                changed_entries(repo, Some(&subtree(x)?), Some(&subtree(y)?), &dir, found)?;
            }
            (Some((_, m)), Some((_, n))) if m != TREE && n != TREE => {
                let status = if class(m) == class(n) {
                    Status::Modified
                } else {
                    Status::TypeChanged
                };
                found(&path, status, new);
            }
            _ => {
                match old {
                    Some((id, TREE)) => {
                        changed_entries(repo, Some(&subtree(id)?), None, &dir, found)?
                    }
                    Some(_) => found(&path, Status::Deleted, None),
                    None => {}
                }
                match new {
                    Some((id, TREE)) => {
                        changed_entries(repo, None, Some(&subtree(id)?), &dir, found)?
                    }
                    Some(entry) => found(&path, Status::Added, Some(entry)),
                    None => {}
                }
            }
        }
    }
    Ok(())
}

/// git's path bytes as text, and whether they had to be made so.
fn utf8_path(bytes: &[u8]) -> (String, bool) {
    match std::str::from_utf8(bytes) {
        Ok(s) => (s.to_string(), false),
        Err(_) => (String::from_utf8_lossy(bytes).into_owned(), true),
    }
}

fn insert(
    out: &mut BTreeMap<String, Change>,
    path: String,
    status: Status,
    other: Option<String>,
    non_utf8: bool,
) {
    out.insert(
        path.clone(),
        Change {
            path: path.into(),
            status,
            other: other.map(RepoPath::from),
            non_utf8,
        },
    );
}

/// Changes from a commit to the working tree, staged or not, untracked files included.
pub(crate) fn to_workdir(repo: &Repository, base: Oid) -> Result<Vec<Change>> {
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
        let path_of = |f: git2::DiffFile<'_>| utf8_path(f.path_bytes().unwrap_or_default());
        let (old, old_bad) = path_of(delta.old_file());
        let (new, new_bad) = path_of(delta.new_file());
        let mut add =
            |path, status, other, non_utf8| insert(&mut changes, path, status, other, non_utf8);
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

/// `--files`: the paths as changed (repository-relative files of the working tree or of HEAD,
/// see `repo::pathspec`); one gone from the working tree is a deletion.
pub(crate) fn named(paths: &[String], in_worktree: impl Fn(&str) -> bool) -> Vec<Change> {
    paths
        .iter()
        .map(|path| Change {
            path: path.clone().into(),
            status: if in_worktree(path) {
                Status::Modified
            } else {
                Status::Deleted
            },
            other: None,
            non_utf8: false,
        })
        .collect()
}
