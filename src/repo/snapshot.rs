//! The files of the tree being gated: a commit's tree read from the object database (for
//! `--affected`), or the working tree (for `--since`, `--files`, `plan` and `explain`).

use crate::error::{Error, Result};
use git2::{ObjectType, Oid, Repository, StatusOptions, TreeWalkMode, TreeWalkResult};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

pub struct Snapshot {
    /// Every file path, repository-relative with `/` separators.
    pub files: BTreeSet<String>,
    origin: Origin,
}

enum Origin {
    /// Blob ids of a commit's tree.
    Tree {
        commit: Oid,
        blobs: BTreeMap<String, Oid>,
    },
    Workdir(PathBuf),
}

impl Snapshot {
    pub fn of_commit(repo: &Repository, commit: Oid) -> Result<Self> {
        let tree = repo
            .find_commit(commit)
            .and_then(|c| c.tree())
            .map_err(|e| Error::git(format!("cannot read the tree of {commit}"), e))?;
        let mut blobs = BTreeMap::new();
        tree.walk(TreeWalkMode::PreOrder, |dir, entry| {
            if entry.kind() == Some(ObjectType::Blob)
                && let Ok(name) = entry.name()
            {
                blobs.insert(format!("{dir}{name}"), entry.id());
            }
            TreeWalkResult::Ok
        })
        .map_err(|e| Error::git(format!("cannot walk the tree of {commit}"), e))?;
        Ok(Snapshot {
            files: blobs.keys().cloned().collect(),
            origin: Origin::Tree { commit, blobs },
        })
    }

    /// Tracked files still on disk plus untracked files git does not ignore.
    pub fn of_workdir(repo: &Repository) -> Result<Self> {
        let root = crate::repo::workdir(repo)?;
        let mut opts = StatusOptions::new();
        opts.include_untracked(true)
            .recurse_untracked_dirs(true)
            .include_unmodified(true)
            .exclude_submodules(true);
        let statuses = repo
            .statuses(Some(&mut opts))
            .map_err(|e| Error::git("cannot list the working tree", e))?;
        let mut files = BTreeSet::new();
        for entry in statuses.iter() {
            let status = entry.status();
            if status.is_wt_deleted() || status.is_ignored() {
                continue;
            }
            if let Ok(path) = std::str::from_utf8(entry.path_bytes())
                && root.join(path).is_file()
            {
                files.insert(path.to_string());
            }
        }
        Ok(Snapshot {
            files,
            origin: Origin::Workdir(root),
        })
    }

    pub fn contains(&self, path: &str) -> bool {
        self.files.contains(path)
    }

    /// Names the tree for reports: a commit id or `working tree`.
    pub fn describe(&self) -> String {
        match &self.origin {
            Origin::Tree { commit, .. } => format!("commit {commit}"),
            Origin::Workdir(_) => "working tree".to_string(),
        }
    }

    /// The file's git blob id and content.
    pub fn read(&self, repo: &Repository, path: &str) -> Result<(Oid, Vec<u8>)> {
        match &self.origin {
            Origin::Tree { blobs, .. } => {
                let oid = blobs.get(path).copied().ok_or_else(|| Error::Git {
                    message: format!("{path}: not in the gated tree"),
                    source: None,
                })?;
                let blob = repo
                    .find_blob(oid)
                    .map_err(|e| Error::git(format!("{path}: cannot read blob {oid}"), e))?;
                Ok((oid, blob.content().to_vec()))
            }
            Origin::Workdir(root) => {
                let full = root.join(path);
                let bytes = std::fs::read(&full).map_err(|e| Error::io(&full, "cannot read", e))?;
                let oid = Oid::hash_object(ObjectType::Blob, &bytes)
                    .map_err(|e| Error::git(format!("{path}: cannot hash"), e))?;
                Ok((oid, bytes))
            }
        }
    }

    /// The blob id without reading content, where the tree already knows it.
    pub fn known_blob(&self, path: &str) -> Option<Oid> {
        match &self.origin {
            Origin::Tree { blobs, .. } => blobs.get(path).copied(),
            Origin::Workdir(_) => None,
        }
    }
}
