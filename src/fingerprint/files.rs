//! A file's own part of a fingerprint: its blob (or, not in the tree, what is on disk), the
//! variables and untracked paths it reads, and why any of it cannot be hashed.

use super::{Scope, hash, value_of};
use crate::graph::Node;
use crate::project::Project;
use crate::repo::snapshot::{LinkTarget, Snapshot};
use std::collections::BTreeSet;
use std::path::Path;

impl Scope<'_> {
    pub(super) fn files(&self) -> Files<'_> {
        Files {
            snapshot: self.snapshot,
            project: self.project,
            root: self.root,
        }
    }
}

/// What a node's own part of a closure hash reads: shareable across threads (the repository
/// is not), so a file whose blob the tree index does not know is left for the caller to read.
#[derive(Clone, Copy)]
pub(super) struct Files<'a> {
    snapshot: &'a Snapshot,
    project: &'a Project,
    /// Where the runner runs: a file not in the tree may still be there.
    root: &'a Path,
}

impl<'a> Files<'a> {
    /// One node's own part of a closure hash: a file's path, blob and the values of the
    /// variables it reads by name; any other node's name. What cannot be hashed goes to `why`.
    /// None when the blob must be read and `repo` is not given. With it, whether the file is
    /// not in the tree but on disk (hashed by its content, which changes with no commit).
    pub(super) fn leaf(
        self,
        name: &str,
        unbounded: &BTreeSet<String>,
        repo: Option<&git2::Repository>,
        why: &mut Vec<String>,
    ) -> Option<(Vec<u8>, bool)> {
        if !matches!(Node::of(name), Node::File(_)) {
            return Some((format!("node\0{name}\0").into_bytes(), false));
        }
        let blob = blob(repo, self.snapshot, self.root, name, why)?;
        let mut volatile = blob.starts_with(ON_DISK);
        self.doubts(name, unbounded, why);
        let mut bytes = format!("file\0{name}\0{blob}\0").into_bytes();
        let reads = self.project.reads.get(name);
        for var in reads.into_iter().flat_map(|r| &r.env) {
            bytes.extend_from_slice(format!("env\0{var}\0{}\0", value_of(var)).as_bytes());
        }
        // What it reads that the tree does not hold is read from disk each run (it changes
        // with no commit, appearing or edited), and what reaches it is never kept.
        for named in self.untracked(name) {
            let state = not_in_tree(self.root, named, why);
            bytes.extend_from_slice(format!("named\0{named}\0{state}\0").as_bytes());
            volatile = true;
        }
        Some((bytes, volatile))
    }

    /// The paths `file` reads by a literal that the tree does not hold.
    pub(super) fn untracked(self, file: &str) -> impl Iterator<Item = &'a str> {
        self.project
            .reads
            .get(file)
            .into_iter()
            .flat_map(|r| &r.named)
            .map(String::as_str)
            .filter(move |n| !self.snapshot.contains(n))
    }

    /// Why a file of a closure makes it unknown: incomplete facts, an unbounded import, a
    /// path it reads outside the repository.
    pub(super) fn doubts(self, file: &str, unbounded: &BTreeSet<String>, why: &mut Vec<String>) {
        if let Some(flags) = self.project.flagged.get(file) {
            why.extend(flags.reasons().into_iter().map(|r| format!("{file}: {r}")));
        }
        if unbounded.contains(file) {
            let graph = &self.project.graph;
            for (_, line, text) in graph.unbounded.iter().filter(|(f, _, _)| f == file) {
                why.push(format!(
                    "{file}:{line}: imports a module named at run time (`{text}`): what it loads is not bounded statically — the ledger bounds it by the modules a whole, passing observed run loaded, or add a [[loads]] rule"
                ));
            }
        }
        let reads = self.project.reads.get(file);
        for (line, path) in reads.into_iter().flat_map(|r| &r.outside) {
            why.push(format!(
                "{file}:{line}: reads `{path}`, outside the repository: gate cannot hash it"
            ));
        }
        for (line, text) in reads.into_iter().flat_map(|r| &r.env_any) {
            why.push(format!(
                "{file}:{line}: reads the environment by a name gate cannot know (`{text}`): no variable's value can stand for it"
            ));
        }
    }
}

/// A file an edge names that the tree does not hold: absent — unless it is on disk where the
/// runner runs (a git-ignored `.env`, a generated file), whatever git says: then its content is
/// the input. A folder there cannot be bounded.
pub(crate) fn not_in_tree(root: &Path, file: &str, unknown: &mut Vec<String>) -> String {
    let path = root.join(file);
    match std::fs::symlink_metadata(&path) {
        Err(_) => "absent".into(),
        Ok(m) if m.is_file() => match std::fs::read(&path) {
            Ok(bytes) => format!("{ON_DISK}{}", hash(&bytes)),
            Err(e) => {
                unknown.push(format!(
                    "{file}: not in the tree, on disk, cannot be read ({e})"
                ));
                "unreadable".into()
            }
        },
        Ok(_) => {
            unknown.push(format!(
                "{file}: not in the tree, but on disk (a folder or a link): what the tests read there is not bounded"
            ));
            "unbounded".into()
        }
    }
}

/// The hash prefix of a file not in the tree that exists where the runner runs.
const ON_DISK: &str = "not in the tree, on disk: ";

/// A file's blob id; a file absent from the tree is an input too (it appearing changes the
/// fingerprint); a symlink that leaves the tree cannot be hashed.
/// None when it must be read and `repo` is not given.
pub(super) fn blob(
    repo: Option<&git2::Repository>,
    snapshot: &Snapshot,
    root: &Path,
    file: &str,
    unknown: &mut Vec<String>,
) -> Option<String> {
    if let Some(text) = snapshot.links.get(file)
        && !matches!(
            crate::repo::snapshot::link_target(file, text),
            LinkTarget::Inside(_)
        )
    {
        unknown.push(format!(
            "{file}: a symlink that leaves the tree (-> {text}): what it reads is not in the tree"
        ));
    }
    // The tree index knows most blobs: one lookup.
    if let Some(oid) = snapshot.known_blob(file) {
        return Some(oid.to_string());
    }
    if !snapshot.contains(file) {
        return Some(not_in_tree(root, file, unknown));
    }
    Some(match snapshot.read(repo?, file) {
        Ok((oid, _)) => oid.to_string(),
        Err(e) => {
            unknown.push(format!("{file}: cannot be read ({e})"));
            "unreadable".into()
        }
    })
}
