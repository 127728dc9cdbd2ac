//! A test's input fingerprint: a hash of everything that can change its outcome — the blob of
//! every file it depends on (the relation the selection walks, forwards: imports, parent
//! packages, conftests, every reference edge, `[[depends]]` rules), the files whose change is
//! the whole suite, the runner's argv and `[env]`, the environment variables that change a
//! run or that a file of the closure reads by a literal name (`os.environ["X"]`,
//! `os.getenv("X")`, `os.Getenv("X")`), and the interpreter's or toolchain's identity. An input gate cannot hash makes the
//! fingerprint unknown, with why: an unknown fingerprint is never reused (part 11's ledger).

mod beside;
mod changed;
mod closures;
pub(crate) mod disk;
mod files;
mod identity;
mod toolchain;
mod whole_suite;

use crate::graph::{Direction, Node};
use crate::project::Project;
use crate::repo::snapshot::Snapshot;
use closures::Closures;
use files::blob;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

pub(crate) use files::not_in_tree;
pub(crate) use identity::{Identity, run_inputs};

/// The environment variables that change any run, whatever the tests read: how the
/// interpreter runs (`PYTHONOPTIMIZE` strips asserts, `PYTHONHASHSEED` orders sets), the locale
/// and the clock's zone, and how the Go toolchain builds and runs (`GOFLAGS`, the target, cgo's
/// compiler and flags, `GODEBUG`). The threat model in the guide (`docs/src/fingerprints.md`) lists each class.
pub(crate) const RUN_ENV: &[&str] = &[
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONHASHSEED",
    "PYTHONWARNINGS",
    "PYTHONOPTIMIZE",
    "PYTHONDEVMODE",
    "PYTHONUTF8",
    "PYTHONIOENCODING",
    "PYTHONSAFEPATH",
    "PYTHONNOUSERSITE",
    "PYTHONUSERBASE",
    "PYTHONINTMAXSTRDIGITS",
    "PYTHONWARNDEFAULTENCODING",
    "PYTEST_ADDOPTS",
    "PYTEST_PLUGINS",
    "PYTEST_DISABLE_PLUGIN_AUTOLOAD",
    "TZ",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_COLLATE",
    "LC_MESSAGES",
    "LC_MONETARY",
    "LC_NUMERIC",
    "LC_TIME",
    "GOFLAGS",
    "GOOS",
    "GOARCH",
    "GOAMD64",
    "GOARM",
    "GOARM64",
    "GO386",
    "GOEXPERIMENT",
    "GODEBUG",
    "GOTOOLCHAIN",
    "GOWORK",
    "GOFIPS140",
    "GOMAXPROCS",
    "GORACE",
    "CGO_ENABLED",
    "CGO_CFLAGS",
    "CGO_CPPFLAGS",
    "CGO_CXXFLAGS",
    "CGO_LDFLAGS",
    "CC",
    "CXX",
];

/// What kind of input a line of the fingerprint is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Kind {
    /// A file the test depends on, through the graph or a `[[depends]]` rule.
    File,
    /// A file whose change is the whole suite (pyproject.toml, a lock file, go.mod …).
    WholeSuite,
    /// The runner's argv and `[env]`.
    Runner,
    /// An environment variable that changes a run (its value hashed, never shown).
    Env,
    /// The interpreter or toolchain: its version and installed packages.
    Toolchain,
}

/// One input and its hash.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub(crate) struct Input {
    pub kind: Kind,
    pub name: String,
    pub hash: String,
}

/// A test's fingerprint: its inputs, and the hash binding them — none when an input could not
/// be hashed, with each reason.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Fingerprint {
    pub test: String,
    pub digest: Option<String>,
    pub inputs: Vec<Input>,
    pub unknown: Vec<String>,
}

/// What one run's fingerprints share, computed once: the interpreter's and toolchain's
/// identities (a process each), the whole-suite inputs, and the closure hash of every
/// component of the graph the fingerprinted tests reach.
#[derive(Default)]
pub(crate) struct Memo {
    /// Each toolchain's identity, by language and name (`python3`, `.venv/bin/python`, `go`).
    toolchains: BTreeMap<(&'static str, String), Result<String, String>>,
    /// The whole-suite files' inputs: the same for every test of the tree.
    whole_suite: Option<(Vec<Input>, Vec<String>)>,
    closures: Option<Closures>,
    /// The states of files no commit holds, read once per run.
    pub(crate) disk: Option<disk::Disk>,
    /// Each fingerprinted test's closure files, walked once per run.
    files: BTreeMap<String, Vec<String>>,
    /// Per folder of the tree, the files beside its code that no commit holds.
    beside: beside::Found,
}

use crate::lang::toolchain::hash;

impl Memo {
    /// `test`'s closure files, when this run walked them.
    pub(crate) fn closure_files(&self, test: &str) -> Option<&[String]> {
        self.files.get(test).map(Vec::as_slice)
    }

    /// The files beside the tree this run found and hashed (repository-relative).
    pub(crate) fn beside_files(&self) -> impl Iterator<Item = &str> {
        self.beside
            .values()
            .flatten()
            .filter(|(_, state)| state.is_ok())
            .map(|(path, _)| path.as_str())
    }
}

/// Where fingerprints are taken: the tree being gated, its project and the directory the
/// runner runs in.
pub(crate) struct Scope<'a> {
    pub repo: &'a git2::Repository,
    pub snapshot: &'a Snapshot,
    pub project: &'a Project,
    pub root: &'a Path,
}

impl Scope<'_> {
    /// The fingerprint of `test` (a test file or Go test unit), every input listed: what
    /// `gate explain --fingerprint` shows. Its digest is `digest`'s.
    pub(crate) fn of_test(&self, test: &str, memo: &mut Memo) -> Fingerprint {
        let mut inputs: Vec<Input> = Vec::new();
        let mut unknown: Vec<String> = Vec::new();
        let files = self.closure_files(test);
        let unbounded = unbounded_files(&self.project.graph);
        let mut read: BTreeSet<&str> = self.run_variables().collect();
        for file in &files {
            self.files().doubts(file, &unbounded, &mut unknown);
            if let Some(reads) = self.project.reads.get(file) {
                read.extend(reads.env.iter().map(String::as_str));
            }
            inputs.push(Input {
                kind: Kind::File,
                name: file.clone(),
                hash: blob(
                    Some(self.repo),
                    self.snapshot,
                    self.root,
                    file,
                    &mut unknown,
                )
                .expect("read with the repository"),
            });
            for named in self.files().untracked(file) {
                inputs.push(Input {
                    kind: Kind::File,
                    name: named.to_string(),
                    hash: not_in_tree(self.root, named, &mut unknown),
                });
            }
        }
        let (whole, whole_unknown) = self.whole_suite(memo);
        inputs.extend(whole.iter().cloned());
        unknown.extend(whole_unknown.iter().cloned());
        let (beside, beside_unknown) = self.beside(test, memo);
        inputs.extend(beside);
        unknown.extend(beside_unknown);
        inputs.extend(self.runner());
        inputs.extend(read.into_iter().map(|name| Input {
            kind: Kind::Env,
            name: name.to_string(),
            hash: value_of(name),
        }));
        match self.toolchain(test, memo) {
            Ok(input) => inputs.push(input),
            Err(why) => unknown.push(why),
        }
        inputs.sort();
        let digest = self.digest(test, memo);
        if digest.is_none() && unknown.is_empty() {
            unknown.push("an input of its closure cannot be hashed".into());
        }
        Fingerprint {
            test: test.to_string(),
            digest: digest.filter(|_| unknown.is_empty()),
            inputs,
            unknown,
        }
    }

    /// The digest of `test`'s inputs, or none when one cannot be hashed: the hash of its
    /// closure (each component of the graph hashed once per run with everything it reaches,
    /// so tests sharing a closure share the work), the files of `[[depends]]` rules and a Go
    /// package's own files with their closures, the whole-suite files, the runner and the
    /// configuration, the run's variables and the toolchain.
    pub(crate) fn digest(&self, test: &str, memo: &mut Memo) -> Option<String> {
        let (digest, closure_known, rest_known) = self.digest_parts(test, memo);
        (closure_known && rest_known).then_some(digest)
    }

    /// The digest `test` has when its closure's imports named at run time are bounded by
    /// what its observed runs loaded (the ledger hashes those in): none when it has no such
    /// import, or when any other input cannot be hashed — a flagged file, an unreadable one,
    /// a read outside the repository or by a computed variable name, the toolchain.
    pub(crate) fn lifted(&self, test: &str, memo: &mut Memo) -> Option<String> {
        let unbounded = unbounded_files(&self.project.graph);
        let files = self.closure_files(test);
        if !files.iter().any(|f| unbounded.contains(f)) {
            return None;
        }
        let none = BTreeSet::new();
        for file in &files {
            let mut why = Vec::new();
            self.files().leaf(file, &none, Some(self.repo), &mut why)?;
            if !why.is_empty() {
                return None;
            }
        }
        let (digest, _, rest_known) = self.digest_parts(test, memo);
        rest_known.then_some(digest)
    }

    /// Why `test`'s fingerprint is unknown: the first of its inputs that cannot be hashed, as
    /// `of_test` lists it — the inputs every test shares asked first, from what this run
    /// already computed, so a toolchain gate cannot hash is named without hashing again.
    pub(crate) fn why_unknown(&self, test: &str, memo: &mut Memo) -> String {
        if let Err(why) = self.toolchain(test, memo) {
            return why;
        }
        if let Some(why) = self.whole_suite(memo).1.first() {
            return why.clone();
        }
        if let Some(why) = self.beside(test, memo).1.into_iter().next() {
            return why;
        }
        let unbounded = unbounded_files(&self.project.graph);
        for file in self.closure_files(test) {
            let mut why = Vec::new();
            self.files().doubts(&file, &unbounded, &mut why);
            if let Some(why) = why.into_iter().next() {
                return why;
            }
        }
        self.of_test(test, memo)
            .unknown
            .into_iter()
            .next()
            .unwrap_or_else(|| "an input of its closure cannot be hashed".into())
    }

    /// The digest of `test`'s inputs, whether its closures hold no doubt, and whether every
    /// other input is known.
    fn digest_parts(&self, test: &str, memo: &mut Memo) -> (String, bool, bool) {
        let mut h = Sha256::new();
        h.update(b"gate fingerprint 1\0");
        let mut closure_known = true;
        let mut closures: Vec<[u8; 32]> = std::iter::once(test.to_string())
            .chain(self.extras(test))
            .map(|file| {
                let (hash, doubt) = self.closure_hash(&file, memo);
                closure_known &= !doubt;
                hash
            })
            .collect();
        let mut known = true;
        closures.sort_unstable();
        for c in &closures {
            h.update(c);
        }
        let toolchain = self.toolchain(test, memo).ok();
        known &= toolchain.is_some();
        let (whole, whole_unknown) = self.whole_suite(memo);
        known &= whole_unknown.is_empty();
        let whole = whole.clone();
        let (beside, beside_unknown) = self.beside(test, memo);
        known &= beside_unknown.is_empty();
        let rest: Vec<Input> = whole
            .into_iter()
            .chain(beside)
            .chain(self.runner())
            .chain(self.run_variables().map(|name| Input {
                kind: Kind::Env,
                name: name.to_string(),
                hash: value_of(name),
            }))
            .chain(toolchain)
            .collect();
        for input in &rest {
            h.update(format!("{:?}\0{}\0{}\0", input.kind, input.name, input.hash).as_bytes());
        }
        (hex(&h.finalize()), closure_known, known)
    }

    /// The files `test` depends on as the graph knows them (its closure), or none when the
    /// graph cannot bound it — a file of it with incomplete facts or an import named at run
    /// time: an observation export's dependencies, where none is unknown, never "nothing".
    pub(crate) fn dependencies(&self, test: &str) -> Option<Vec<String>> {
        let files = self.closure_files(test);
        let unbounded = unbounded_files(&self.project.graph);
        let bounded = files.iter().all(|f| {
            !unbounded.contains(f)
                && self
                    .project
                    .flagged
                    .get(f)
                    .is_none_or(|flags| flags.reasons().is_empty())
        });
        bounded.then_some(files)
    }

    /// `closure_files`, walked once per run for each test.
    pub(crate) fn closure_files_of<'m>(&self, test: &str, memo: &'m mut Memo) -> &'m [String] {
        if !memo.files.contains_key(test) {
            let files = self.closure_files(test);
            memo.files.insert(test.to_string(), files);
        }
        &memo.files[test]
    }

    /// Every file the test depends on: the selection's relation walked forwards from it and
    /// from its extras.
    pub(crate) fn closure_files(&self, test: &str) -> Vec<String> {
        let graph = &self.project.graph;
        let mut files: Vec<String> = Vec::new();
        for start in std::iter::once(test.to_string()).chain(self.extras(test)) {
            let walk = graph.walk(&start, Direction::Dependencies, None);
            files.extend(walk.nodes(graph).map(str::to_string));
            files.push(start);
        }
        files.retain(|n| matches!(Node::of(n), Node::File(_)));
        files.sort();
        files.dedup();
        files
    }

    /// What a test depends on beside its graph edges: the files of `[[depends]]` rules naming
    /// it, and a Go package's own files (what `go test ./dir` builds).
    fn extras(&self, test: &str) -> Vec<String> {
        let (snapshot, config) = (self.snapshot, &self.project.config);
        let mut files: Vec<String> = Vec::new();
        for rule in config.depends.iter().filter(|r| r.tests.is_match(test)) {
            files.extend(
                snapshot
                    .files
                    .iter()
                    .filter(|f| rule.on.is_match(f))
                    .cloned(),
            );
        }
        if crate::graph::is_go_unit(test) {
            let dir = crate::graph::go_dir_of(test);
            files.extend(
                snapshot
                    .files
                    .iter()
                    .filter(|f| crate::path::parent(f) == dir && f.ends_with(".go"))
                    .cloned(),
            );
        }
        files.sort();
        files.dedup();
        files
    }

    /// Keeps what this run computed that the next can trust (the closure hashes, the states of
    /// files no commit holds); what to say of what could not be kept.
    pub(crate) fn keep(&self, memo: &Memo) -> Vec<String> {
        let disk = memo.disk.as_ref().and_then(disk::Disk::keep);
        self.keep_closures(memo).into_iter().chain(disk).collect()
    }

    /// The paths `file` reads by a literal that the tree does not hold.
    pub(crate) fn files_untracked<'f>(&'f self, file: &str) -> impl Iterator<Item = &'f str> {
        self.files().untracked(file)
    }

    /// The runner's argv and `[env]`, and the configuration the run is gated under.
    fn runner(&self) -> [Input; 2] {
        let config = &self.project.config;
        let argvs: Vec<Vec<String>> = crate::lang::suite::SUITES
            .iter()
            .map(|l| l.runner_argv(self.project, self.root))
            .collect();
        let env: Vec<String> = config.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let mut held: String = argvs.iter().map(|a| format!("{a:?}\n")).collect();
        held.push_str(&format!("{env:?}"));
        [
            Input {
                kind: Kind::Runner,
                // Named by the first language's runner (Python's), as fingerprints always were.
                name: argvs[0].join(" "),
                hash: hash(held.as_bytes()),
            },
            Input {
                kind: Kind::Runner,
                name: crate::config::FILE.to_string(),
                hash: format!("{:016x}", config.digest),
            },
        ]
    }

    /// Every variable `test`'s fingerprint holds: the run's, the runner's `[env]`, and those the
    /// files of its closure read by name.
    pub(crate) fn held_variables(&self, test: &str) -> BTreeSet<String> {
        let mut held: BTreeSet<String> = self.run_variables().map(str::to_string).collect();
        held.extend(self.project.config.env.keys().cloned());
        for file in self.closure_files(test) {
            if let Some(reads) = self.project.reads.get(&file) {
                held.extend(reads.env.iter().cloned());
            }
        }
        held
    }

    /// The variables that change every run: the built-in list and `[ledger] env`.
    fn run_variables(&self) -> impl Iterator<Item = &str> {
        RUN_ENV
            .iter()
            .copied()
            .chain(self.project.config.ledger.env.iter().map(String::as_str))
    }
}

/// The files holding a run-time-named import.
fn unbounded_files(graph: &crate::graph::Graph) -> BTreeSet<String> {
    graph.unbounded.iter().map(|(f, _, _)| f.clone()).collect()
}

/// The hash a variable that is not set has.
pub(crate) const UNSET: &str = "unset";

/// A variable's value, hashed; `unset` when it is.
fn value_of(name: &str) -> String {
    std::env::var_os(name).map_or_else(|| UNSET.to_string(), |v| hash(v.as_encoded_bytes()))
}

/// `bytes` in lower-case hexadecimal. Digests are made by the thousand on a warm run: no
/// formatting machinery per byte.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn hex_is_two_lower_case_digits_a_byte() {
        assert_eq!(super::hex(&[0, 15, 16, 171, 255]), "000f10abff");
    }
}
