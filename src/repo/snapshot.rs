//! The files of the tree being gated: a commit's tree read from the object database (for
//! `--affected`), or the working tree (for `--since`, `--files`, `plan` and `explain`).
//! A symlink is a file of the tree whose content is its link text, as git stores it: gate
//! never reads through a link, and resolves one only to a path inside the tree.

use crate::error::{Error, Result};
use git2::{ObjectType, Oid, Repository, StatusOptions, StatusShow};
use rayon::prelude::*;
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

/// What a listed path is on disk, never followed: a link is a file of the tree whatever it
/// points at; a folder or a special file, or a path gone since the listing, is none.
enum DiskKind {
    File,
    Link(String),
    Other,
}

fn disk_kind(full: &std::path::Path) -> Result<DiskKind> {
    let Ok(meta) = std::fs::symlink_metadata(full) else {
        return Ok(DiskKind::Other);
    };
    if meta.file_type().is_symlink() {
        let text =
            std::fs::read_link(full).map_err(|e| Error::io(full, "cannot read the symlink", e))?;
        Ok(DiskKind::Link(text.to_string_lossy().into_owned()))
    } else if meta.is_file() {
        Ok(DiskKind::File)
    } else {
        Ok(DiskKind::Other)
    }
}

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
        // The index against the working tree alone: a file staged or not is a file of the
        // tree either way, so HEAD's tree is not diffed against the index.
        opts.show(StatusShow::Workdir)
            .include_untracked(true)
            .recurse_untracked_dirs(true)
            .include_unmodified(true)
            .exclude_submodules(true);
        let statuses = repo
            .statuses(Some(&mut opts))
            .map_err(|e| Error::git("cannot list the working tree", e))?;
        let paths: Vec<String> = statuses
            .iter()
            .filter(|entry| {
                let status = entry.status();
                !status.is_wt_deleted() && !status.is_ignored()
            })
            .filter_map(|entry| String::from_utf8(entry.path_bytes().to_vec()).ok())
            .collect();
        // What each path is on disk, asked on all cores: an `lstat` of every file was a tenth
        // of a second of serial time on 56k files, before the analysis could start.
        let kinds = paths
            .par_iter()
            .map(|path| disk_kind(&root.join(path)))
            .collect::<Result<Vec<_>>>()?;
        let mut files = BTreeSet::new();
        let mut links = BTreeMap::new();
        for (path, kind) in paths.into_iter().zip(kinds) {
            match kind {
                DiskKind::Link(text) => {
                    links.insert(path.clone(), text);
                }
                DiskKind::File => {}
                DiskKind::Other => continue,
            }
            files.insert(path);
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

    /// What folder `dir` (`""`: the root) directly holds in the tree: its files' names and its
    /// sub-folders' names, each sorted. One seek past each sub-folder, so a folder above a large
    /// tree costs its own entries, not every path under it.
    pub(crate) fn children(&self, dir: &str) -> (Vec<&str>, Vec<&str>) {
        use std::ops::Bound;
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let (mut files, mut folders) = (Vec::new(), Vec::new());
        let mut from = prefix.clone();
        loop {
            let mut past = None;
            let paths = self
                .files
                .range::<str, _>((Bound::Included(from.as_str()), Bound::Unbounded));
            for path in paths {
                let Some(rest) = path.strip_prefix(prefix.as_str()) else {
                    break;
                };
                match rest.split_once('/') {
                    None => files.push(rest),
                    Some((folder, _)) => {
                        folders.push(folder);
                        // Past every path under it: '0' follows '/'.
                        past = Some(format!("{prefix}{folder}0"));
                        break;
                    }
                }
            }
            match past {
                Some(next) => from = next,
                None => break,
            }
        }
        (files, folders)
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

    /// A folder's own files and sub-folders, sorted, whatever lies under them or beside them
    /// with names that sort around the folder's (`b.py`, `b-x`, `b0`).
    #[test]
    fn a_folder_s_children_are_its_own_entries() {
        let files = [
            "a.py",
            "d/b-x",
            "d/b.py",
            "d/b/deep/x.py",
            "d/b/y.py",
            "d/b0.py",
            "d/c/z.go",
            "d/e.txt",
            "dd/f.py",
        ];
        let snapshot = Snapshot {
            files: files.iter().map(|f| f.to_string()).collect(),
            links: BTreeMap::new(),
            origin: Origin::Workdir(PathBuf::from("/r")),
        };
        assert_eq!(
            snapshot.children("d"),
            (vec!["b-x", "b.py", "b0.py", "e.txt"], vec!["b", "c"])
        );
        assert_eq!(snapshot.children(""), (vec!["a.py"], vec!["d", "dd"]));
        assert_eq!(snapshot.children("d/b/deep"), (vec!["x.py"], vec![]));
        assert_eq!(snapshot.children("none"), (vec![], vec![]));
    }

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

    fn git(root: &Path, args: &[&str]) -> Vec<u8> {
        let out = std::process::Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@x",
                "-c",
                "core.symlinks=true",
            ])
            .args(args)
            .current_dir(root)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {:?}", out);
        out.stdout
    }

    /// How many ways a path can stand in the index and on disk (`put_in_state`).
    const STATES: u64 = 15;

    /// What must be committed for `state`: a file, a link, or nothing.
    fn commit_for_state(root: &Path, path: &str, state: u64) {
        match state {
            5..=8 | 11 => {}
            // A committed folder of its own, holding a file.
            14 => write(root, &format!("{path}.d/x.py"), "in a folder"),
            10 => {
                std::fs::create_dir_all(root.join(path).parent().unwrap()).unwrap();
                std::os::unix::fs::symlink("../target", root.join(path)).unwrap();
            }
            _ => write(root, path, "committed"),
        }
    }

    /// Puts a committed (or absent) path into one of `STATES` ways of standing in the index
    /// and on disk.
    fn put_in_state(root: &Path, path: &str, state: u64) {
        let full = root.join(path);
        match state {
            // 0: committed, unchanged; 9: committed though its name is ignored (`add -f`);
            // 10: a committed link.
            0 | 9 | 10 => {}
            1 => write(root, path, "changed on disk"),
            2 => std::fs::remove_file(&full).unwrap(),
            3 => drop(git(root, &["rm", "-q", "--cached", path])),
            4 => drop(git(root, &["rm", "-q", path])),
            5 | 6 => {
                write(root, path, "new");
                git(root, &["add", "-f", path]);
                if state == 6 {
                    std::fs::remove_file(&full).unwrap();
                }
            }
            7 => write(root, path, "untracked"),
            8 => {
                std::fs::create_dir_all(full.parent().unwrap()).unwrap();
                std::os::unix::fs::symlink("elsewhere", &full).unwrap();
            }
            11 => {
                write(root, path, "staged");
                git(root, &["add", "-f", path]);
                write(root, path, "staged, then changed");
            }
            // A committed file now a folder holding a file.
            12 => {
                std::fs::remove_file(&full).unwrap();
                write(root, &format!("{path}/inside.py"), "in a folder");
            }
            // A committed file now a link.
            13 => {
                std::fs::remove_file(&full).unwrap();
                std::os::unix::fs::symlink("committed", &full).unwrap();
            }
            // A committed folder now a link to a folder: its file is gone from the tree,
            // though a path through the link reaches one.
            _ => {
                let folder = root.join(format!("{path}.d"));
                std::fs::remove_dir_all(&folder).unwrap();
                std::fs::create_dir_all(root.join("elsewhere.d")).unwrap();
                write(root, "elsewhere.d/x.py", "through a link");
                std::os::unix::fs::symlink(root.join("elsewhere.d"), &folder).unwrap();
            }
        }
    }

    /// git's own view of the working tree: what it lists (its index and the untracked files
    /// it does not ignore), less what the disk holds as neither a file nor a link, or holds
    /// only through a link in a folder above it (git never reads through one).
    fn git_view(root: &Path) -> (BTreeSet<String>, BTreeMap<String, String>) {
        let listed = git(
            root,
            &[
                "ls-files",
                "-z",
                "--cached",
                "--others",
                "--exclude-standard",
            ],
        );
        let mut files = BTreeSet::new();
        let mut links = BTreeMap::new();
        for path in listed.split(|&b| b == 0).filter(|p| !p.is_empty()) {
            let path = String::from_utf8(path.to_vec()).unwrap();
            let full = root.join(&path);
            let through_link = Path::new(&path).ancestors().skip(1).any(|folder| {
                std::fs::symlink_metadata(root.join(folder)).is_ok_and(|m| m.is_symlink())
            });
            let Ok(meta) = std::fs::symlink_metadata(&full) else {
                continue;
            };
            if through_link {
                continue;
            }
            if meta.file_type().is_symlink() {
                let text = std::fs::read_link(&full).unwrap();
                links.insert(path.clone(), text.to_string_lossy().into_owned());
            } else if !meta.is_file() {
                continue;
            }
            files.insert(path);
        }
        (files, links)
    }

    /// The working tree's listing is git's own, each link with its text. Every way a path can
    /// stand in the index and on disk is generated, in random mixes (seeded), and asked of
    /// git itself.
    #[test]
    fn the_working_tree_is_what_git_lists_and_the_disk_holds() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut seen = [false; STATES as usize];
        for round in 0..24 {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path();
            git(root, &["init", "-q"]);
            write(root, ".gitignore", "*.ign\nignored/\n");
            let paths: Vec<(String, u64)> = (0..12)
                .map(|i| {
                    let folder = ["", "a/", "a/b/", "ignored/"][next(4) as usize];
                    let ext = if next(5) == 0 { "ign" } else { "py" };
                    (format!("{folder}f{round}_{i}.{ext}"), next(STATES))
                })
                .collect();
            for (path, state) in &paths {
                commit_for_state(root, path, *state);
            }
            git(root, &["add", "-A", "-f"]);
            git(root, &["commit", "-q", "--allow-empty", "-m", "base"]);
            for (path, state) in &paths {
                seen[*state as usize] = true;
                put_in_state(root, path, *state);
            }
            let (files, links) = git_view(root);
            let got = Snapshot::of_workdir(&Repository::open(root).unwrap()).unwrap();
            assert_eq!(got.files, files, "round {round}: {paths:?}");
            assert_eq!(got.links, links, "round {round}: {paths:?}");
        }
        assert!(seen.iter().all(|&s| s), "every state generated: {seen:?}");
    }

    /// A working tree whose `.git` is a file naming its git dir elsewhere (`git init
    /// --separate-git-dir`) is that file's folder, as git takes it, from the folder or below
    /// it; never the git dir's parent. A linked worktree (also a `.git` file) keeps its own.
    #[test]
    fn a_separate_git_dir_gates_the_folder_its_git_file_is_in() {
        let dir = tempfile::tempdir().unwrap();
        let (gd, wt) = (dir.path().join("gd"), dir.path().join("wt"));
        git(
            dir.path(),
            &[
                "init",
                "-q",
                "--separate-git-dir",
                gd.to_str().unwrap(),
                "wt",
            ],
        );
        write(&wt, "a.py", "x = 1\n");
        write(&wt, "pkg/test_a.py", "import a\n");
        write(dir.path(), "stray.py", "not in the tree\n");
        git(&wt, &["add", "-A"]);
        git(&wt, &["commit", "-q", "-m", "base"]);
        let want: BTreeSet<String> = ["a.py", "pkg/test_a.py"].map(String::from).into();
        for from in [wt.clone(), wt.join("pkg")] {
            let repo = crate::repo::open(&from).unwrap();
            assert_eq!(Snapshot::of_workdir(&repo).unwrap().files, want, "{from:?}");
        }
        let linked = dir.path().join("linked");
        git(&wt, &["worktree", "add", "-q", linked.to_str().unwrap()]);
        write(&linked, "b.py", "y = 2\n");
        let repo = crate::repo::open(&linked).unwrap();
        let mut linked_want = want.clone();
        linked_want.insert("b.py".into());
        assert_eq!(Snapshot::of_workdir(&repo).unwrap().files, linked_want);
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
