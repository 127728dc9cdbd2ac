//! Where the selected tests run. They must run against the tree that was gated: the working
//! tree when it holds exactly the gated commit, otherwise a temporary checkout of that commit
//! (a push of a branch that is not checked out, a dirty working tree, a second ref in one push).

use crate::error::{Error, Result};
use git2::{Oid, Repository, StatusOptions};
use std::path::{Path, PathBuf};

pub struct Workspace {
    pub dir: PathBuf,
    /// Held so the temporary checkout is removed when the run ends.
    temp: Option<tempfile::TempDir>,
    view_of_temporary: bool,
}

impl Workspace {
    /// True when `dir` is a temporary checkout rather than the repository's working tree.
    pub fn is_temporary(&self) -> bool {
        self.temp.is_some() || self.view_of_temporary
    }

    /// A folder inside a temporary checkout, marked as such (so git's location variables are
    /// cleared for what runs there); the checkout itself stays owned by its workspace.
    pub fn temporary_view(self) -> Workspace {
        Workspace {
            dir: self.dir,
            temp: None,
            view_of_temporary: true,
        }
    }

    /// The working tree itself (for working-tree inputs).
    pub fn in_place(root: &Path) -> Workspace {
        Workspace {
            dir: root.to_path_buf(),
            temp: None,
            view_of_temporary: false,
        }
    }

    /// A directory holding `commit`'s tree: the working tree when HEAD is `commit` and no
    /// tracked file differs from it, else a fresh checkout in a temporary directory.
    pub fn for_commit(repo: &Repository, root: &Path, commit: Oid) -> Result<Workspace> {
        if worktree_is(repo, commit)? {
            return Ok(Workspace::in_place(root));
        }
        let temp = tempfile::Builder::new()
            .prefix("gate-run-")
            .tempdir()
            .map_err(|e| {
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
            temp: Some(temp),
            view_of_temporary: false,
        })
    }
}

fn worktree_is(repo: &Repository, commit: Oid) -> Result<bool> {
    let head = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    if head.map(|c| c.id()) != Some(commit) {
        return Ok(false);
    }
    let mut opts = StatusOptions::new();
    opts.include_untracked(false)
        .include_ignored(false)
        .exclude_submodules(true);
    let statuses = repo
        .statuses(Some(&mut opts))
        .map_err(|e| Error::git("cannot read the working tree's status", e))?;
    Ok(statuses.is_empty())
}
