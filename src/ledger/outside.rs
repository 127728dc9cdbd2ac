//! What a unit's run read outside the tree, as part of its digest: the files no commit holds
//! that its runner's process had loaded or read by the end of its last test — every module of
//! the interpreter and its distributions, a git-ignored module, a file read outside the
//! repository — each hashed by content (`fingerprint::disk`). A look-up binds what the unit's
//! newest entry read (kept in the store), an entry what its own run read: the same files in
//! the same states give the same digest; a file of an installed distribution edited in place,
//! its version unchanged, gives another.

use super::why::{Cause, Why};
use crate::cache::disk::Seen;
use crate::fingerprint::disk::{Disk, FOLDER, changed_since};
use crate::repo::snapshot::Snapshot;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A state a look-up read before the run, with the stat it read it under.
pub(super) type Before = BTreeMap<PathBuf, (Result<String, String>, Option<Seen>)>;

/// The states of files no commit holds, as a look-up or an entry reads them. A look-up reads
/// them before the run and keeps what it read (`read`, each with its stat); an entry takes
/// those states as the run's — once `changed` has shown that none of them changed while the
/// run ran — and reads afresh only what the run read first: then one that changed since the
/// run began (`since`) was written by it, its state before the run is not known, and the unit
/// is not entered.
pub(super) struct States<'a> {
    disk: Disk,
    before: &'a Before,
    since: Option<i64>,
    pub read: Before,
}

impl<'a> States<'a> {
    /// For a look-up: every state read now, through `disk`.
    pub(super) fn look_up(disk: Disk) -> States<'static> {
        static NONE: Before = BTreeMap::new();
        States {
            disk,
            before: &NONE,
            since: None,
            read: BTreeMap::new(),
        }
    }

    /// For an entry of a run that began at `since`, after a look-up that read `before`.
    pub(super) fn entry(state: &Path, before: &'a Before, since: i64) -> States<'a> {
        States {
            disk: Disk::open(state),
            before,
            since: Some(since),
            read: BTreeMap::new(),
        }
    }

    /// What `path` held when the run began; why it cannot be named.
    pub(super) fn state(&mut self, path: &Path) -> Result<String, Why> {
        let unknown = |detail: String| Why {
            cause: Cause::UnknownInput,
            detail,
        };
        // A look-up reads each path once however many lists name it.
        if let Some((known, _)) = self.before.get(path).or_else(|| self.read.get(path)) {
            return known.clone().map_err(unknown);
        }
        let seen = self.since.is_none().then(|| stat(path)).flatten();
        let state = self.disk.state(path);
        if self.since.is_none() {
            self.read.insert(path.to_path_buf(), (state.clone(), seen));
        }
        let state = state.map_err(unknown)?;
        // A folder is named by being one: what was added to it is not its state.
        if state != FOLDER && self.since.is_some_and(|t| changed_since(path, t)) {
            return Err(Why {
                cause: Cause::ReadChanged,
                detail: format!("{} changed during the run", path.display()),
            });
        }
        Ok(state)
    }

    /// The first file the look-up read that is not as it was then (its stat moved, it came
    /// or went): a run that read it may have seen either state. A folder is named by being
    /// one, whatever was added to it.
    pub(super) fn changed(&self) -> Option<&Path> {
        self.before
            .iter()
            .filter(|(_, (state, _))| state.as_deref() != Ok(FOLDER))
            .find(|(path, (_, seen))| stat(path) != *seen)
            .map(|(path, _)| path.as_path())
    }

    /// Keeps the hashes read afresh for the next run; what to say when they could not be.
    pub(super) fn keep(&self) -> Option<String> {
        self.disk.keep()
    }
}

/// A list's running hashes: `at[k]` binds its first `k` files' paths and states. A file that
/// cannot be named ends the chain: units that read it have no digest, and `broken` says why.
pub(super) struct Chain {
    at: Vec<[u8; 32]>,
    broken: Option<Why>,
    /// For each prefix length of the list as read, how many of its files are chained.
    counts: Vec<usize>,
}

impl Chain {
    /// The chain of a read list's `files` (repository-relative, absolute elsewhere) that the
    /// tree of `scope` does not hold (the tree's own are the closure's blobs).
    pub(super) fn of(
        files: &[String],
        scope: &crate::fingerprint::Scope<'_>,
        states: &mut States<'_>,
    ) -> Chain {
        let (files, counts) = beyond_tree(files, scope.snapshot);
        let (at, broken) = chained(&files, scope, states);
        Chain { at, broken, counts }
    }

    /// `digest` bound to the states of the files among the list's first `count` (as read) that
    /// the chain holds; why not, when one of them cannot be named.
    pub(super) fn bind(&self, digest: &str, count: usize) -> Result<String, Why> {
        let count = prefix(&self.counts, count);
        let Some(read) = self.at.get(count) else {
            return Err(self.broken.clone().unwrap_or_else(|| Why {
                cause: Cause::UnknownInput,
                detail: format!("read {count} files outside the tree, of a list of fewer"),
            }));
        };
        let mut h = Sha256::new();
        h.update(b"gate outside 1\0");
        h.update(digest.as_bytes());
        h.update(read);
        Ok(crate::fingerprint::hex(&h.finalize()))
    }
}

/// The running hashes of `files`' paths and states, and why the chain ends early when a file
/// cannot be named.
fn chained(
    files: &[String],
    scope: &crate::fingerprint::Scope<'_>,
    states: &mut States<'_>,
) -> (Vec<[u8; 32]>, Option<Why>) {
    let mut at: Vec<[u8; 32]> = vec![Sha256::digest(b"gate outside 1").into()];
    for file in files {
        // The probe's name for a path no encoding spells: nothing can be named by it.
        if file == "\0" {
            let why = Why {
                cause: Cause::UnknownInput,
                detail: "a file whose name is not UTF-8 text: gate cannot name it".into(),
            };
            return (at, Some(why));
        }
        let state = match (file.strip_prefix(ABSENT), file.strip_prefix(TRACKED)) {
            (Some(missing), _) => absence(
                &on_disk(scope.root, missing.strip_prefix(TRACKED).unwrap_or(missing)),
                states,
            ),
            (None, tracked) if file.ends_with('/') => {
                listing(&on_disk(scope.root, tracked.unwrap_or(file)), states)
            }
            (None, Some(tracked)) => tracked_state(tracked, scope, states),
            (None, None) => states.state(&on_disk(scope.root, file)),
        };
        let state = match state {
            Ok(state) => state,
            Err(why) => return (at, Some(why)),
        };
        let mut h = Sha256::new();
        h.update(at[at.len() - 1]);
        h.update(file.as_bytes());
        h.update(b"\0");
        h.update(state.as_bytes());
        at.push(h.finalize().into());
    }
    (at, None)
}

/// A runner's spelling of a path its run looked for and never found (`?PATH`): the run saw
/// it absent, so its state is whether it is there — at an entry, there now is a change during
/// the run (the folder it would be in may change as it likes: a run that found it absent in
/// a busy temporary folder saw what it saw).
pub(crate) const ABSENT: &str = "?";

/// The state of a path a run found absent.
fn absence(path: &Path, states: &States<'_>) -> Result<String, Why> {
    match std::fs::symlink_metadata(path) {
        Err(_) => Ok("absent".into()),
        Ok(_) if states.since.is_some() => Err(Why {
            cause: Cause::ReadChanged,
            detail: format!("{} appeared during the run", path.display()),
        }),
        Ok(_) => Ok("there".into()),
    }
}

/// A runner's spelling of a file of the tree that its run read (`./PATH`): a JavaScript run's
/// trace names every file it read, and the closure holds only what the imports reach — a
/// committed `.env` Vite loads, a base `tsconfig` an `extends` names, data read by a path no
/// analysis evaluates are the run's inputs too. (pytest's reads of the tree are its traced
/// edges instead, per test file.)
pub(crate) const TRACKED: &str = "./";

/// The state of the tree's file `path` a run read: its blob in the gated tree (a look-up of a
/// commit the working tree is not at reads what that commit holds). An entry checks that the
/// run read that blob: one read from a working tree whose file differs from it is no state
/// gate can name. A path the tree does not hold is read from disk, as any other.
fn tracked_state(
    path: &str,
    scope: &crate::fingerprint::Scope<'_>,
    states: &mut States<'_>,
) -> Result<String, Why> {
    if !scope.snapshot.contains(path) {
        return states.state(&on_disk(scope.root, path));
    }
    let unknown = |detail: String| Why {
        cause: Cause::UnknownInput,
        detail,
    };
    let blob = match scope.snapshot.known_blob(path) {
        Some(oid) => oid,
        None => {
            scope
                .snapshot
                .read(scope.repo, path)
                .map_err(|e| unknown(format!("{path}: cannot be read ({e})")))?
                .0
        }
    };
    if states.since.is_some() {
        let on_disk = std::fs::read(scope.root.join(path))
            .ok()
            .and_then(|bytes| git2::Oid::hash_object(git2::ObjectType::Blob, &bytes).ok());
        if on_disk != Some(blob) {
            return Err(Why {
                cause: Cause::ReadChanged,
                detail: format!(
                    "{path}: the run read it as the working tree holds it, not as the commit does"
                ),
            });
        }
    }
    Ok(format!("blob {blob}"))
}

/// The state of a folder a run listed (`DIR/` on a list): the names it holds, sorted — one
/// added or removed is another state. Read afresh each time (a listing has no content hash to
/// keep); an entry checks that the folder did not change while the run ran.
fn listing(path: &Path, states: &States<'_>) -> Result<String, Why> {
    if states.since.is_some_and(|t| changed_since(path, t)) {
        return Err(Why {
            cause: Cause::ReadChanged,
            detail: format!("{} changed during the run", path.display()),
        });
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        return Ok("not a folder".into());
    };
    let mut names: Vec<std::ffi::OsString> = entries.flatten().map(|e| e.file_name()).collect();
    names.sort();
    let mut h = Sha256::new();
    for name in &names {
        h.update(name.as_encoded_bytes());
        h.update(b"\0");
    }
    Ok(format!(
        "listing {}",
        crate::fingerprint::hex(&h.finalize())
    ))
}

/// How many of a list's files beyond the tree its first `count` (as read) hold, by `counts`
/// (`beyond_tree`'s); a count past the list is the whole list.
pub(super) fn prefix(counts: &[usize], count: usize) -> usize {
    counts[count.min(counts.len() - 1)]
}

/// `files` without those the tree holds (their blobs are the closure's), and for each prefix
/// length of `files` how many of the kept ones it holds.
pub(super) fn beyond_tree(files: &[String], snapshot: &Snapshot) -> (Vec<String>, Vec<usize>) {
    let mut kept = Vec::new();
    let mut counts = Vec::with_capacity(files.len() + 1);
    counts.push(0);
    for file in files {
        if file.starts_with('/') || !snapshot.contains(file) {
            kept.push(file.clone());
        }
        counts.push(kept.len());
    }
    (kept, counts)
}

/// `path`'s stat, followed through links as a reader follows them; none when it is not there.
fn stat(path: &Path) -> Option<Seen> {
    std::fs::metadata(path).ok().map(|m| Seen::of(&m))
}

/// Where `file` of a list is: absolute, or under the repository's root.
pub(super) fn on_disk(root: &Path, file: &str) -> PathBuf {
    if file.starts_with('/') {
        PathBuf::from(file)
    } else {
        root.join(file)
    }
}
