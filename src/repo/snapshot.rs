//! The files of the tree being gated: a commit's tree read from the object database (for
//! `--affected`), or the working tree (for `--since`, `--files`, `plan` and `explain`).
//! A symlink is a file of the tree whose content is its link text, as git stores it: gate
//! never reads through a link, and resolves one only to a path inside the tree.

use crate::error::{Error, Result};
use git2::{ObjectType, Oid, Repository, StatusOptions};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

pub(crate) struct Snapshot {
    /// Every file path, repository-relative with `/` separators (symlinks included).
    pub files: BTreeSet<String>,
    /// The symlinks among `files` → their link text.
    pub links: BTreeMap<String, String>,
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

/// Where a symlink points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LinkTarget {
    /// A path of the tree (a file, a folder, or nothing there): repository-relative.
    Inside(String),
    /// An absolute path, or one climbing above the repository root.
    Outside,
}

/// The blob id git gives `bytes` (`git hash-object`): a file read from disk is named as the
/// commit that held it would name it.
pub(crate) fn blob_id(path: &str, bytes: &[u8]) -> Result<Oid> {
    Oid::hash_object(ObjectType::Blob, bytes)
        .map_err(|e| Error::git(format!("{path}: cannot hash"), e))
}

/// Resolves link text as the OS does, relative to the link's folder, without touching disk.
pub(crate) fn link_target(link: &str, text: &str) -> LinkTarget {
    if text.starts_with('/') || text.is_empty() {
        return LinkTarget::Outside;
    }
    let path = crate::path::normalize(&crate::path::join(crate::path::parent(link), text));
    if path == ".." || path.starts_with("../") {
        LinkTarget::Outside
    } else {
        LinkTarget::Inside(path)
    }
}

/// How many links a path may pass through (the OS's own limit is 40).
const MAX_HOPS: usize = 40;

impl Snapshot {
    pub(crate) fn of_commit(repo: &Repository, commit: Oid) -> Result<Self> {
        let tree = repo
            .find_commit(commit)
            .and_then(|c| c.tree())
            .map_err(|e| Error::git(format!("cannot read the tree of {commit}"), e))?;
        let (blobs, link_paths) = crate::cache::tree::of_tree(repo, &tree)?;
        let mut links = BTreeMap::new();
        for path in link_paths {
            let Some(&oid) = blobs.get(&path) else {
                continue;
            };
            let blob = repo
                .find_blob(oid)
                .map_err(|e| Error::git(format!("{path}: cannot read blob {oid}"), e))?;
            links.insert(path, String::from_utf8_lossy(blob.content()).into_owned());
        }
        Ok(Snapshot {
            files: blobs.keys().cloned().collect(),
            links,
            origin: Origin::Tree { commit, blobs },
        })
    }

    /// Tracked files still on disk plus untracked files git does not ignore.
    pub(crate) fn of_workdir(repo: &Repository) -> Result<Self> {
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
        let mut links = BTreeMap::new();
        for entry in statuses.iter() {
            let status = entry.status();
            if status.is_wt_deleted() || status.is_ignored() {
                continue;
            }
            let Ok(path) = std::str::from_utf8(entry.path_bytes()) else {
                continue;
            };
            let full = root.join(path);
            // Not followed: a link is a file of the tree whatever it points at.
            let Ok(meta) = std::fs::symlink_metadata(&full) else {
                continue;
            };
            if meta.file_type().is_symlink() {
                let text = std::fs::read_link(&full)
                    .map_err(|e| Error::io(&full, "cannot read the symlink", e))?;
                links.insert(path.to_string(), text.to_string_lossy().into_owned());
            } else if !meta.is_file() {
                continue;
            }
            files.insert(path.to_string());
        }
        Ok(Snapshot {
            files,
            links,
            origin: Origin::Workdir(root),
        })
    }

    pub(crate) fn contains(&self, path: &str) -> bool {
        self.files.contains(path)
    }

    /// Names the tree for reports: a commit id or `working tree`.
    pub(crate) fn describe(&self) -> String {
        match &self.origin {
            Origin::Tree { commit, .. } => format!("commit {commit}"),
            Origin::Workdir(_) => "working tree".to_string(),
        }
    }

    /// The file's git blob id and content; a symlink's content is its link text.
    pub(crate) fn read(&self, repo: &Repository, path: &str) -> Result<(Oid, Vec<u8>)> {
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
            Origin::Workdir(root) => self.read_workdir(root, path),
        }
    }

    /// A working tree's file and its blob id, read without the repository (so on any
    /// thread); None for a commit's tree, whose blobs only the repository reads.
    pub(crate) fn read_from_disk(&self, path: &str) -> Option<Result<(Oid, Vec<u8>)>> {
        match &self.origin {
            Origin::Tree { .. } => None,
            Origin::Workdir(root) => Some(self.read_workdir(root, path)),
        }
    }

    fn read_workdir(&self, root: &std::path::Path, path: &str) -> Result<(Oid, Vec<u8>)> {
        let full = root.join(path);
        let bytes = match self.links.get(path) {
            Some(text) => text.as_bytes().to_vec(),
            None => std::fs::read(&full).map_err(|e| Error::io(&full, "cannot read", e))?,
        };
        Ok((blob_id(path, &bytes)?, bytes))
    }

    /// The file a path names once its symlinks are followed inside the tree: itself when it
    /// is no link, `None` when a link leaves the tree, dangles or names a folder.
    pub(crate) fn followed(&self, path: &str) -> Option<String> {
        let mut at = path.to_string();
        for _ in 0..MAX_HOPS {
            match self.links.get(&at) {
                None => return self.files.contains(&at).then_some(at),
                Some(text) => match link_target(&at, text) {
                    LinkTarget::Inside(next) => at = next,
                    LinkTarget::Outside => return None,
                },
            }
        }
        None
    }

    /// Every file in path order, with its blob id where the tree already knows it.
    pub(crate) fn entries(&self) -> Box<dyn Iterator<Item = (&String, Option<Oid>)> + '_> {
        match &self.origin {
            Origin::Tree { blobs, .. } => Box::new(blobs.iter().map(|(p, id)| (p, Some(*id)))),
            Origin::Workdir(_) => Box::new(self.files.iter().map(|p| (p, None))),
        }
    }

    /// The commit whose tree this is; none for the working tree.
    pub(crate) fn commit(&self) -> Option<Oid> {
        match &self.origin {
            Origin::Tree { commit, .. } => Some(*commit),
            Origin::Workdir(_) => None,
        }
    }

    /// The blob id without reading content, where the tree already knows it.
    pub(crate) fn known_blob(&self, path: &str) -> Option<Oid> {
        match &self.origin {
            Origin::Tree { blobs, .. } => blobs.get(path).copied(),
            Origin::Workdir(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn commit_all(repo: &Repository) -> Oid {
        let mut index = repo.index().unwrap();
        index
            .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
            .unwrap();
        index.update_all(["*"], None).unwrap();
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = git2::Signature::now("t", "t@x").unwrap();
        let parents: Vec<git2::Commit<'_>> = repo
            .head()
            .ok()
            .and_then(|h| h.peel_to_commit().ok())
            .into_iter()
            .collect();
        let parents: Vec<&git2::Commit<'_>> = parents.iter().collect();
        repo.commit(Some("HEAD"), &sig, &sig, "step", &tree, &parents)
            .unwrap()
    }

    fn write(root: &Path, path: &str, text: &str) {
        let full = root.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    }

    /// Each step changes the tree another way; the listing derived from the first tree's kept
    /// one by a diff equals a walk of the new tree.
    #[test]
    fn a_kept_listing_plus_a_diff_lists_what_a_walk_lists() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let repo = Repository::init(root).unwrap();
        write(root, "a/b/c.py", "1");
        write(root, "a/d.py", "2");
        write(root, "e.txt", "3");
        let first = Snapshot::of_commit(&repo, commit_all(&repo)).unwrap();
        let kept_file = state_dir_file(&repo);
        let kept = std::fs::read(&kept_file).expect("the first listing was kept");
        let steps: Vec<Box<dyn Fn()>> = vec![
            Box::new(|| write(root, "a/b/c.py", "changed")),
            Box::new(|| write(root, "a/new/deep/f.py", "new folder")),
            Box::new(|| std::fs::remove_dir_all(root.join("a/b")).unwrap()),
            // A folder replaced by a file of its name, and a file by a folder.
            Box::new(|| {
                std::fs::remove_dir_all(root.join("a/new")).unwrap();
                write(root, "a/new", "now a file");
                std::fs::remove_file(root.join("e.txt")).unwrap();
                write(root, "e.txt/inside.py", "now a folder");
            }),
            Box::new(|| std::os::unix::fs::symlink("d.py", root.join("a/link.py")).unwrap()),
        ];
        for step in steps {
            step();
            let head = commit_all(&repo);
            std::fs::write(&kept_file, &kept).unwrap();
            let derived = Snapshot::of_commit(&repo, head).unwrap();
            std::fs::remove_file(&kept_file).unwrap();
            let walked = Snapshot::of_commit(&repo, head).unwrap();
            assert_eq!(derived.files, walked.files);
            for f in &walked.files {
                assert_eq!(derived.known_blob(f), walked.known_blob(f), "{f}");
            }
            let moved = |f: &String| derived.known_blob(f) != first.known_blob(f);
            assert!(derived.files != first.files || derived.files.iter().any(moved));
        }
    }

    fn state_dir_file(repo: &Repository) -> std::path::PathBuf {
        crate::repo::state_dir(repo).join("cache").join("tree.bin")
    }

    /// A kept listing with any byte flipped, cut short or grown is never decoded: the walk
    /// lists the tree afresh. Random bytes never panic the decoder.
    #[test]
    fn a_damaged_listing_is_never_decoded() {
        use proptest::prelude::*;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let repo = Repository::init(root).unwrap();
        write(root, "a/b.py", "1");
        write(root, "c.txt", "2");
        std::os::unix::fs::symlink("c.txt", root.join("link")).unwrap();
        Snapshot::of_commit(&repo, commit_all(&repo)).unwrap();
        let bytes = std::fs::read(state_dir_file(&repo)).unwrap();
        let (_, blobs, links) =
            crate::cache::tree::decode(&bytes).expect("a listing as written decodes");
        assert_eq!(blobs.len(), 3);
        assert_eq!(links.into_iter().collect::<Vec<_>>(), ["link"]);
        let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(512));
        runner
            .run(
                &(8..bytes.len(), any::<u8>(), 0..3u8),
                |(at, value, how)| {
                    let bad = crate::cache::blocks::damaged(&bytes, at, value, how);
                    prop_assert!(crate::cache::tree::decode(&bad).is_none());
                    Ok(())
                },
            )
            .unwrap();
        runner
            .run(&prop::collection::vec(any::<u8>(), 0..512), |noise| {
                let mut bytes = b"gatetre2".to_vec();
                bytes.extend(noise);
                prop_assert!(crate::cache::tree::decode(&bytes).is_none());
                Ok(())
            })
            .unwrap();
    }
}
