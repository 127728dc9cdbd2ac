//! Stage 1 — git: which commits are compared (range), what changed (diff), and the files of the
//! tree being gated (snapshot). Reads go through git2; nothing shells out to git.

pub(crate) mod checkout;
pub(crate) mod diff;
pub(crate) mod error;
pub(crate) mod input;
pub(crate) mod pathspec;
pub(crate) mod range;
pub(crate) mod snapshot;

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// Opens the repository that contains `dir`. One owned by another user is named as such,
/// with git's own fix (`safe.directory`), not reported as no repository at all.
pub(crate) fn open(dir: &Path) -> Result<git2::Repository> {
    let repo = discover(dir)?;
    // A working tree whose `.git` is a file naming its git dir (`git init --separate-git-dir`)
    // is that file's folder, as git takes it; libgit2 takes the git dir's parent, which would
    // gate some other folder's files. (A linked worktree's and a submodule's git dir say
    // where their tree is, and libgit2 reads that.)
    if let Some(top) = gitfile_folder(dir)
        && !repo.is_worktree()
        && repo.workdir().is_some_and(|w| !same_folder(w, &top))
        && repo
            .config()
            .and_then(|c| c.get_path("core.worktree"))
            .is_err()
    {
        repo.set_workdir(&top, false).map_err(|e| {
            Error::git(
                format!("{}: cannot use as the working tree", top.display()),
                e,
            )
        })?;
    }
    Ok(repo)
}

/// The nearest folder at or above `dir` holding `.git`, when that `.git` is a file.
fn gitfile_folder(dir: &Path) -> Option<PathBuf> {
    let dir = std::fs::canonicalize(dir).ok()?;
    for folder in dir.ancestors() {
        match std::fs::symlink_metadata(folder.join(".git")) {
            Ok(meta) if meta.is_file() => return Some(folder.to_path_buf()),
            Ok(_) => return None,
            Err(_) => {}
        }
    }
    None
}

fn same_folder(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

fn discover(dir: &Path) -> Result<git2::Repository> {
    git2::Repository::discover(dir).map_err(|e| {
        if e.code() == git2::ErrorCode::Owner {
            let at = git2::Repository::discover_path(dir, &[] as &[&std::ffi::OsStr])
                .ok()
                .and_then(|p| p.parent().map(Path::to_path_buf))
                .unwrap_or_else(|| dir.to_path_buf());
            Error::Git {
                message: format!(
                    "{}: the repository is owned by another user, so git (and gate) will not use it — if you trust it: git config --global --add safe.directory {}",
                    at.display(),
                    at.display()
                ),
                source: Some(e),
            }
        } else {
            Error::git(format!("{}: not inside a git repository", dir.display()), e)
        }
    })
}

/// The repository's working directory; gate does not gate bare repositories.
pub(crate) fn workdir(repo: &git2::Repository) -> Result<PathBuf> {
    repo.workdir()
        .map(Path::to_path_buf)
        .ok_or_else(|| Error::Git {
            message: format!(
                "{}: a bare repository has no tests to run",
                repo.path().display()
            ),
            source: None,
        })
}

/// Where gate keeps its cache and decisions: `.git/gate/` (shared by linked worktrees).
pub(crate) fn state_dir(repo: &git2::Repository) -> PathBuf {
    repo.commondir().join("gate")
}
