//! Where the selected tests run. They must run against the tree that was gated: the working
//! tree when it holds exactly the gated commit, otherwise a temporary checkout of that commit
//! (a push of a branch that is not checked out, a dirty working tree, a second ref in one push).

use crate::error::{Error, Result};
use git2::{Oid, Repository, StatusOptions};
use std::path::{Path, PathBuf};

pub(crate) struct Workspace {
    pub dir: PathBuf,
    /// Why the tests do not run in the working tree, for a temporary checkout.
    pub why: Option<String>,
    /// Held so the temporary checkout is removed when the run ends.
    temp: Option<tempfile::TempDir>,
    view_of_temporary: bool,
}

impl Workspace {
    /// True when `dir` is a temporary checkout rather than the repository's working tree.
    pub(crate) fn is_temporary(&self) -> bool {
        self.temp.is_some() || self.view_of_temporary
    }

    /// A folder inside a temporary checkout, marked as such (so git's location variables are
    /// cleared for what runs there); the checkout itself stays owned by its workspace.
    pub(crate) fn temporary_view(self) -> Workspace {
        Workspace {
            dir: self.dir,
            why: self.why,
            temp: None,
            view_of_temporary: true,
        }
    }

    /// The working tree itself (for working-tree inputs).
    pub(crate) fn in_place(root: &Path) -> Workspace {
        Workspace {
            dir: root.to_path_buf(),
            why: None,
            temp: None,
            view_of_temporary: false,
        }
    }

    /// A directory holding `commit`'s tree: the working tree when HEAD is `commit`, no tracked
    /// file differs from it and no untracked file would change what runs, else a fresh
    /// checkout in a temporary directory (`why` says which).
    pub(crate) fn for_commit(repo: &Repository, root: &Path, commit: Oid) -> Result<Workspace> {
        let Some(why) = not_in_place(repo, commit)? else {
            return Ok(Workspace::in_place(root));
        };
        let temp = crate::process::temp_dir("gate-run").map_err(|e| {
            Error::io(
                std::env::temp_dir(),
                "cannot create a checkout directory",
                e,
            )
        })?;
        let tree = repo
            .find_commit(commit)
            .and_then(|c| c.tree())
            .map_err(|e| Error::git(format!("cannot read the tree of {commit}"), e))?;
        let mut builder = git2::build::CheckoutBuilder::new();
        builder
            .target_dir(temp.path())
            .update_index(false)
            .force()
            .recreate_missing(true);
        repo.checkout_tree(tree.as_object(), Some(&mut builder))
            .map_err(|e| Error::git(format!("cannot check out {commit} to run its tests"), e))?;
        Ok(Workspace {
            dir: temp.path().to_path_buf(),
            why: Some(why),
            temp: Some(temp),
            view_of_temporary: false,
        })
    }
}

/// Why the working tree cannot stand for `commit`: HEAD is another commit, a tracked file
/// differs, or untracked files that pytest, Python or go would load are there (an untracked
/// root `conftest.py` that skips every test would decide the run).
pub(crate) fn not_in_place(repo: &Repository, commit: Oid) -> Result<Option<String>> {
    let head = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    if head.map(|c| c.id()) != Some(commit) {
        return Ok(Some("the working tree holds another commit".into()));
    }
    let mut opts = StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .exclude_submodules(true);
    let statuses = repo
        .statuses(Some(&mut opts))
        .map_err(|e| Error::git("cannot read the working tree's status", e))?;
    let mut untracked = Vec::new();
    for entry in statuses.iter() {
        if !entry.status().is_wt_new() {
            return Ok(Some("tracked files differ from it".into()));
        }
        let path = String::from_utf8_lossy(entry.path_bytes()).into_owned();
        if crate::lang::loaded_by_runners(crate::path::file_name(&path)) {
            untracked.push(path);
        }
    }
    if untracked.is_empty() {
        return Ok(None);
    }
    let shown: Vec<&str> = untracked.iter().take(5).map(String::as_str).collect();
    Ok(Some(format!(
        "untracked {}{} would change what runs in the working tree",
        shown.join(", "),
        if untracked.len() > shown.len() {
            format!(" and {} more", untracked.len() - shown.len())
        } else {
            String::new()
        }
    )))
}
