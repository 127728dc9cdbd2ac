//! Stage 1 — git: which commits are compared (range), what changed (diff), and the files of the
//! tree being gated (snapshot). Reads go through git2; nothing shells out to git.

pub mod checkout;
pub mod diff;
pub mod range;
pub mod snapshot;

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// Opens the repository that contains `dir`.
pub fn open(dir: &Path) -> Result<git2::Repository> {
    git2::Repository::discover(dir)
        .map_err(|e| Error::git(format!("{}: not inside a git repository", dir.display()), e))
}

/// The repository's working directory; gate does not gate bare repositories.
pub fn workdir(repo: &git2::Repository) -> Result<PathBuf> {
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
pub fn state_dir(repo: &git2::Repository) -> PathBuf {
    repo.commondir().join("gate")
}
