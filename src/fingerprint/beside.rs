//! What a runner loads from the folders of a test's code that no commit holds: a git-ignored
//! `conftest.py` or `local_settings.py` beside tracked modules, a `pytest.ini`, `tox.ini`,
//! `setup.cfg` or `pyproject.toml` in a folder above the test (pytest's rootdir search reads
//! it), an ignored package's `__init__.py`, an ignored `.go` (cgo, assembly) file that `go`
//! compiles into a package, an ignored `go.work` or nested `go.mod`. Such a file is an input
//! of every test whose closure has a file in its folder, that lies under its folder, or — in an
//! import root — every Python test; hashed by its content on disk where the runner runs
//! (`disk`), its appearing changes the fingerprint, and one that cannot be read makes it
//! unknown. Folders are listed by their stat (`cache::disk`): a warm run reads none it read
//! before.

use super::disk::Disk;
use super::{Input, Kind, Memo, Scope};
use crate::path::{ancestors, join, parent};
use std::collections::{BTreeMap, BTreeSet};

/// A folder's files no commit holds, each with its state or why it cannot be read.
pub(super) type Beside = Vec<(String, Result<String, String>)>;

/// The prefix of an input read from disk rather than from the tree.
const ON_DISK: &str = "not in the tree, on disk: ";

impl Scope<'_> {
    /// The files beside `test`'s code that its runner loads and no commit holds, as inputs, and
    /// why any cannot be hashed.
    pub(super) fn beside(&self, test: &str, memo: &mut Memo) -> (Vec<Input>, Vec<String>) {
        let mut dirs: BTreeSet<String> = BTreeSet::new();
        let mut last = None;
        for file in self.closure_files_of(test, memo) {
            // Closure files come sorted: a folder's files follow each other.
            let dir = parent(file);
            if last != Some(dir) {
                dirs.insert(dir.to_string());
                last = Some(dir);
            }
        }
        if crate::graph::is_go_unit(test) {
            let dir = crate::graph::go_dir_of(test);
            dirs.insert(dir.to_string());
            if !dir.is_empty() {
                dirs.extend(ancestors(dir).map(str::to_string));
            }
        } else {
            dirs.extend(ancestors(test).map(str::to_string));
            dirs.extend(self.project.roots.iter().cloned());
        }
        let (mut inputs, mut unknown) = (Vec::new(), Vec::new());
        for dir in &dirs {
            if !memo.beside.contains_key(dir) {
                let disk = memo
                    .disk
                    .get_or_insert_with(|| Disk::open(&crate::repo::state_dir(self.repo)));
                let found = self.beside_in(dir, disk);
                memo.beside.insert(dir.clone(), found);
            }
            for (path, state) in &memo.beside[dir] {
                match state {
                    Ok(state) => inputs.push(Input {
                        kind: Kind::File,
                        name: path.clone(),
                        hash: format!("{ON_DISK}{state}"),
                    }),
                    Err(why) => unknown.push(why.clone()),
                }
            }
        }
        (inputs, unknown)
    }

    /// The loadable files in folder `dir` of the tree that the tree does not hold, and the
    /// `__init__.py` of each folder in it the tree holds nothing of (an ignored package).
    fn beside_in(&self, dir: &str, disk: &mut Disk) -> Beside {
        let (files, folders) = self.snapshot.children(dir);
        let mut found = Beside::new();
        for name in disk.untracked_in(&self.root.join(dir), (&files, &folders)) {
            let path = match name.strip_suffix('/') {
                Some(folder) => format!("{}/__init__.py", join(dir, folder)),
                None => join(dir, &name),
            };
            match disk.state(&self.root.join(&path)) {
                Ok(state) if state == super::disk::ABSENT => {}
                Ok(state) => found.push((path, Ok(state))),
                Err(why) => found.push((path, Err(why))),
            }
        }
        found
    }
}

/// Per folder, what `Scope::beside` found there this run (each folder listed once).
pub(super) type Found = BTreeMap<String, Beside>;

impl Scope<'_> {
    /// `test`'s inputs that only the working tree has: files beside its code and files its
    /// closure reads by a literal path that no commit holds and that are there, and paths that
    /// climb out of the repository (from a temporary checkout they name another place).
    pub(crate) fn only_in_working_tree(&self, test: &str, memo: &mut Memo) -> Vec<String> {
        let mut found: Vec<String> = self
            .beside(test, memo)
            .0
            .into_iter()
            .map(|i| i.name)
            .collect();
        let files = self.closure_files_of(test, memo).to_vec();
        for file in &files {
            for named in self.files().untracked(file) {
                if named.starts_with("..")
                    || std::fs::symlink_metadata(self.root.join(named)).is_ok()
                {
                    found.push(named.to_string());
                }
            }
        }
        found.sort();
        found.dedup();
        found
    }
}
