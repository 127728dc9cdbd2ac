//! The files of the tree being gated: a commit's tree read from the object database (for
//! `--affected`), or the working tree (for `--since`, `--files`, `plan` and `explain`).

use crate::error::{Error, Result};
use git2::{ObjectType, Oid, Repository, StatusOptions};
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
        let blobs = listing::of_tree(repo, &tree)?;
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

    /// Every file in path order, with its blob id where the tree already knows it.
    pub fn entries(&self) -> Box<dyn Iterator<Item = (&String, Option<Oid>)> + '_> {
        match &self.origin {
            Origin::Tree { blobs, .. } => Box::new(blobs.iter().map(|(p, id)| (p, Some(*id)))),
            Origin::Workdir(_) => Box::new(self.files.iter().map(|p| (p, None))),
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

/// A tree's files with their blob ids. The last one listed is kept
/// (`.git/gate/cache/tree.bin`): the next tree is listed as that one plus a diff of the two
/// trees, which reads only the folders that differ, instead of a walk of every folder.
mod listing {
    use crate::blocks;
    use crate::error::{Error, Result};
    use git2::{ObjectType, Oid, Repository, Tree, TreeWalkMode, TreeWalkResult};
    use std::collections::BTreeMap;
    use std::path::Path;

    const MAGIC: &[u8; 8] = b"gatetre1";
    /// Rewritten once the kept listing is this many paths away from the tree listed: until
    /// then the diff is cheap and writing is not.
    const KEEP_AFTER: usize = 100;

    pub fn of_tree(repo: &Repository, tree: &Tree<'_>) -> Result<BTreeMap<String, Oid>> {
        let file = crate::repo::state_dir(repo).join("cache").join("tree.bin");
        if let Some((kept, mut blobs)) = read(&file)
            && let Ok(kept) = repo.find_tree(kept)
        {
            let mut changed = 0;
            crate::repo::diff::changed_entries(
                repo,
                Some(&kept),
                Some(tree),
                b"",
                &mut |path, _, new| {
                    changed += 1;
                    let Ok(path) = std::str::from_utf8(path) else {
                        return;
                    };
                    match new {
                        // Regular files and symlinks are blobs; submodules are not files.
                        Some((id, mode)) if matches!(mode & 0o170000, 0o100000 | 0o120000) => {
                            blobs.insert(path.to_string(), id);
                        }
                        _ => {
                            blobs.remove(path);
                        }
                    }
                },
            )?;
            if changed > KEEP_AFTER {
                write(&file, tree.id(), &blobs);
            }
            return Ok(blobs);
        }
        let mut blobs = BTreeMap::new();
        tree.walk(TreeWalkMode::PreOrder, |dir, entry| {
            if entry.kind() == Some(ObjectType::Blob)
                && let Ok(name) = entry.name()
            {
                blobs.insert(format!("{dir}{name}"), entry.id());
            }
            TreeWalkResult::Ok
        })
        .map_err(|e| Error::git(format!("cannot walk tree {}", tree.id()), e))?;
        write(&file, tree.id(), &blobs);
        Ok(blobs)
    }

    /// The kept listing, or nothing when it is missing, another layout or damaged: the walk
    /// then lists the tree afresh.
    fn read(file: &Path) -> Option<(Oid, BTreeMap<String, Oid>)> {
        let reader = std::io::BufReader::new(std::fs::File::open(file).ok()?);
        let (header, mut r) = blocks::Stream::open(reader, MAGIC, 20)?;
        let tree = Oid::from_bytes(&header).ok()?;
        let paths = blocks::read_table(&r.block()?, &r.block()?)?;
        let ids = r.block()?;
        if !r.is_done() || ids.len() != paths.len() * 20 || !paths.is_sorted() {
            return None;
        }
        let blobs = paths
            .iter()
            .zip(ids.chunks_exact(20))
            .map(|(p, id)| Oid::from_bytes(id).map(|id| (p.to_string(), id)))
            .collect::<std::result::Result<_, _>>()
            .ok()?;
        Some((tree, blobs))
    }

    /// A listing that cannot be kept costs the next gate a walk, nothing else.
    fn write(file: &Path, tree: Oid, blobs: &BTreeMap<String, Oid>) {
        let mut paths = crate::graph::Strings::default();
        let mut ids = Vec::with_capacity(blobs.len() * 20);
        for (path, id) in blobs {
            paths.push(path);
            ids.extend_from_slice(id.as_bytes());
        }
        let _ = blocks::write(
            file,
            MAGIC,
            tree.as_bytes(),
            &[paths.text().as_bytes(), &blocks::words(paths.ends()), &ids],
        );
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
}
