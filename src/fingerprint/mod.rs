//! A test's input fingerprint: a hash of everything that can change its outcome — the blob of
//! every file it depends on (the relation the selection walks, forwards: imports, parent
//! packages, conftests, every reference edge, `[[depends]]` rules), the files whose change is
//! the whole suite, the runner's argv and `[env]`, the environment variables that change a
//! run or that a file of the closure reads by a literal name (`os.environ["X"]`,
//! `os.getenv("X")`, `os.Getenv("X")`), and the interpreter's or toolchain's identity. An input gate cannot hash makes the
//! fingerprint unknown, with why: an unknown fingerprint is never reused (part 11's ledger).

mod shims;
mod toolchain;

use crate::graph::{Components, Direction, Needs, Node};
use crate::project::Project;
use crate::repo::snapshot::{LinkTarget, Snapshot};
use rayon::prelude::*;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The environment variables that change any run, whatever the tests read: how the
/// interpreter runs (`PYTHONOPTIMIZE` strips asserts, `PYTHONHASHSEED` orders sets), the locale
/// and the clock's zone, and how the Go toolchain builds and runs (`GOFLAGS`, the target, cgo's
/// compiler and flags, `GODEBUG`). The threat model in README.md lists each class.
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
    python: BTreeMap<String, Result<String, String>>,
    go: Option<Result<String, String>>,
    /// The whole-suite files' inputs: the same for every test of the tree.
    whole_suite: Option<(Vec<Input>, Vec<String>)>,
    closures: Option<Closures>,
}

/// Per component of the graph: the hash of its members and of every component it reaches,
/// and whether an input among them cannot be hashed. Tests sharing a closure hash it once.
struct Closures {
    components: Components,
    hash: Vec<[u8; 32]>,
    unknown: Vec<bool>,
    /// Whether the component reaches a file not in the tree that exists on disk (a git-ignored
    /// `.env`): hashed by content this run, never kept — it changes with no commit.
    volatile: Vec<bool>,
    unbounded: BTreeSet<String>,
    /// Components hashed by this run (not kept from an earlier one).
    fresh: usize,
    /// The kept cache's keys, when this tree can keep one.
    keys: Option<(u64, u64)>,
    /// The whole-suite files, as kept for this graph key.
    whole_suite: Option<Vec<String>>,
    /// What each node not hashed before this run needs.
    needs: Needs,
}

/// One node's own part of a closure hash: its hash, whether an input of it cannot be hashed,
/// whether it reads a file not in the tree from disk.
type Leaf = ([u8; 32], bool, bool);

fn hash(bytes: &[u8]) -> String {
    format!("{:032x}", xxhash_rust::xxh3::xxh3_128(bytes))
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
        let rest: Vec<Input> = whole
            .iter()
            .cloned()
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

    /// The run's identities, for a frozen decision: the runner and configuration, the
    /// whole-suite files, and the environment (the variables that change every run and the
    /// interpreter's or toolchain's identity for each language the tree tests), each a SHA-256;
    /// none where an input cannot be hashed, with why.
    pub(crate) fn identity(&self, memo: &mut Memo) -> Identity {
        let digest = |inputs: &[Input]| {
            let mut h = Sha256::new();
            for input in inputs {
                h.update(format!("{:?}\0{}\0{}\0", input.kind, input.name, input.hash).as_bytes());
            }
            hex(&h.finalize())
        };
        let config = digest(&self.runner());
        let (whole, whole_unknown) = self.whole_suite(memo).clone();
        let mut unknown = whole_unknown.clone();
        let lock = whole_unknown.is_empty().then(|| digest(&whole));
        let mut environment: Vec<Input> = self
            .run_variables()
            .map(|name| Input {
                kind: Kind::Env,
                name: name.to_string(),
                hash: value_of(name),
            })
            .collect();
        let tests = &self.project.tests;
        let languages = [
            tests.iter().find(|t| !crate::graph::is_go_unit(t)),
            tests.iter().find(|t| crate::graph::is_go_unit(t)),
        ];
        let mut known = true;
        for test in languages.into_iter().flatten() {
            match self.toolchain(test, memo) {
                Ok(input) => environment.push(input),
                Err(why) => {
                    known = false;
                    unknown.push(why);
                }
            }
        }
        Identity {
            config,
            lock,
            environment: known.then(|| digest(&environment)),
            unknown,
        }
    }

    /// The hash of `file` and everything it reaches, and whether an input among them cannot
    /// be hashed.
    fn closure_hash(&self, file: &str, memo: &mut Memo) -> ([u8; 32], bool) {
        let graph = &self.project.graph;
        let Some(id) = graph.id(file) else {
            let mut why = Vec::new();
            let (bytes, _) = self
                .files()
                .leaf(file, &BTreeSet::new(), Some(self.repo), &mut why)
                .expect("read with the repository");
            return (Sha256::digest(&bytes).into(), !why.is_empty());
        };
        let c = self.closures(memo);
        let mut found: Vec<(u32, Vec<u32>)> = Vec::new();
        c.components.reach(&c.needs, id, &mut |component, members| {
            found.push((component, members.to_vec()));
        });
        // Each node's own part on all cores (what must be read from the repository, after);
        // then each component, after what it reaches.
        let (files, unbounded) = (self.files(), &c.unbounded);
        let leaf = |m: u32, repo: Option<&git2::Repository>| {
            let mut why = Vec::new();
            let (bytes, volatile) = files.leaf(graph.name(m), unbounded, repo, &mut why)?;
            Some((
                m,
                (Sha256::digest(&bytes).into(), !why.is_empty(), volatile),
            ))
        };
        let computed: Vec<(u32, Leaf)> = found
            .par_iter()
            .flat_map_iter(|(_, members)| members.iter().copied())
            .filter_map(|m| leaf(m, None))
            .collect();
        let mut leaves: Vec<Option<Leaf>> = vec![None; graph.node_count()];
        for (m, l) in computed {
            leaves[m as usize] = Some(l);
        }
        for &m in found.iter().flat_map(|(_, members)| members) {
            if leaves[m as usize].is_none() {
                let (_, l) = leaf(m, Some(self.repo)).expect("read with the repository");
                leaves[m as usize] = Some(l);
            }
        }
        let (mut own, mut reached, mut under) = (Vec::new(), Vec::new(), Vec::new());
        for (component, members) in &found {
            let (mut doubt, mut volatile) = (false, false);
            own.clear();
            for &m in members {
                let (hash, why, on_disk) = leaves[m as usize].expect("every member's leaf");
                doubt |= why;
                volatile |= on_disk;
                own.push(hash);
            }
            own.sort_unstable();
            reached.clear();
            reached.extend(
                members
                    .iter()
                    .flat_map(|&m| c.needs.of(m).iter())
                    .filter_map(|&d| c.components.of(d))
                    .filter(|d| d != component),
            );
            reached.sort_unstable();
            reached.dedup();
            doubt |= reached.iter().any(|&d| c.unknown[d as usize]);
            volatile |= reached.iter().any(|&d| c.volatile[d as usize]);
            // Component ids are this run's discovery order: what they reach is ordered by hash.
            under.clear();
            under.extend(reached.iter().map(|&d| c.hash[d as usize]));
            under.sort_unstable();
            let mut h = Sha256::new();
            for leaf in &own {
                h.update(leaf);
            }
            h.update(b"\0reaches\0");
            for u in &under {
                h.update(u);
            }
            debug_assert_eq!(*component as usize, c.hash.len());
            c.hash.push(h.finalize().into());
            c.unknown.push(doubt);
            c.volatile.push(volatile);
        }
        c.fresh += found.len();
        let component = c.components.of(id).expect("reached") as usize;
        (c.hash[component], c.unknown[component])
    }

    /// This run's closure hashes, primed with the kept ones still true of this tree.
    fn closures<'m>(&self, memo: &'m mut Memo) -> &'m mut Closures {
        memo.closures.get_or_insert_with(|| {
            let graph = &self.project.graph;
            let mut c = Closures {
                components: Components::new(graph),
                hash: Vec::new(),
                unknown: Vec::new(),
                volatile: Vec::new(),
                unbounded: unbounded_files(graph),
                fresh: 0,
                keys: None,
                whole_suite: None,
                needs: Needs::default(),
            };
            self.prime(&mut c);
            let enter: Vec<bool> = (0..graph.node_count() as u32)
                .map(|n| !c.components.is_found(n))
                .collect();
            c.needs = graph.needs(&enter);
            c
        })
    }

    /// Takes each kept hash whose closure holds no file changed between the kept commit's
    /// tree and this one. The graph key covers the file set, the configuration and the
    /// roots, and a file's edges follow from its own blob under them: a node none of whose
    /// reached files changed has the hash it had.
    fn prime(&self, c: &mut Closures) {
        let (graph, project) = (&self.project.graph, self.project);
        let (Some(graph_key), Some(commit)) = (project.graph_key, self.snapshot.commit()) else {
            return;
        };
        let names: BTreeSet<&str> = project
            .reads
            .values()
            .flat_map(|r| &r.env)
            .map(String::as_str)
            .collect();
        let env_key = {
            let mut h = Sha256::new();
            for name in names {
                h.update(format!("{name}\0{}\0", value_of(name)).as_bytes());
            }
            u64::from_le_bytes(h.finalize()[..8].try_into().expect("8 bytes"))
        };
        c.keys = Some((graph_key, env_key));
        let state = crate::repo::state_dir(self.repo);
        let Some(kept) =
            crate::cache::closures::load(&state, graph_key, env_key, graph.node_count())
        else {
            return;
        };
        c.whole_suite = Some(kept.whole_suite);
        let Some(changed) = changed_between(self.repo, kept.commit, commit) else {
            return;
        };
        // Whatever reaches a changed file is stale.
        let mut stale = vec![false; graph.node_count()];
        let mut queue: Vec<u32> = changed.iter().filter_map(|f| graph.id(f)).collect();
        while let Some(n) = queue.pop() {
            if !std::mem::replace(&mut stale[n as usize], true) {
                queue.extend(graph.dependents_of(n).filter(|&d| !stale[d as usize]));
            }
        }
        for (id, state) in kept.nodes.into_iter().enumerate() {
            if let crate::cache::closures::State::Known(hash, doubt) = state
                && !stale[id]
            {
                c.components.found_before(id as u32);
                c.hash.push(hash);
                c.unknown.push(doubt);
                c.volatile.push(false);
            }
        }
    }

    /// Keeps this run's closure hashes for the next, when it computed any.
    pub(crate) fn keep(&self, memo: &Memo) -> Option<String> {
        let c = memo.closures.as_ref()?;
        let (keys, commit) = (c.keys?, self.snapshot.commit()?);
        if c.fresh == 0 {
            return None;
        }
        use crate::cache::closures::State;
        let nodes: Vec<State> = (0..self.project.graph.node_count() as u32)
            .map(|id| match c.components.of(id) {
                Some(k) if !c.volatile[k as usize] => {
                    State::Known(c.hash[k as usize], c.unknown[k as usize])
                }
                _ => State::Missing,
            })
            .collect();
        let whole: Vec<String> = memo
            .whole_suite
            .as_ref()
            .map(|(inputs, _)| inputs.iter().map(|i| i.name.clone()).collect())
            .or_else(|| c.whole_suite.clone())
            .unwrap_or_default();
        let state = crate::repo::state_dir(self.repo);
        crate::cache::closures::save(&state, keys, commit, &nodes, &whole).err()
    }

    fn files(&self) -> Files<'_> {
        Files {
            snapshot: self.snapshot,
            project: self.project,
            root: self.root,
        }
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

    /// The whole-suite files' blobs, and why any cannot be hashed: once per run.
    fn whole_suite<'m>(&self, memo: &'m mut Memo) -> &'m (Vec<Input>, Vec<String>) {
        // The kept list comes with the kept closures: only when this run builds them.
        let kept = memo.closures.as_ref().and_then(|c| c.whole_suite.clone());
        memo.whole_suite.get_or_insert_with(|| {
            let mut why = Vec::new();
            // Kept for this graph key, which covers the file set and the configuration.
            let files: Vec<String> = kept.unwrap_or_else(|| {
                let config = &self.project.config;
                let whole = |f: &&String| config.is_whole_suite(f);
                self.snapshot.files.iter().filter(whole).cloned().collect()
            });
            let mut inputs: Vec<Input> = files
                .iter()
                .map(|file| Input {
                    kind: Kind::WholeSuite,
                    name: file.clone(),
                    hash: blob(Some(self.repo), self.snapshot, self.root, file, &mut why)
                        .expect("read with the repository"),
                })
                .collect();
            // A pytest.ini or pyproject.toml at the root ends pytest's search there.
            let ends = ["pytest.ini", ".pytest.ini", "pyproject.toml"];
            if !ends.iter().any(|f| self.snapshot.contains(f)) {
                inputs.extend(above_root(self.root, &mut why));
            }
            (inputs, why)
        })
    }

    /// The runner's argv and `[env]`, and the configuration the run is gated under.
    fn runner(&self) -> [Input; 2] {
        let config = &self.project.config;
        let argv = runner(self.project, self.root, false);
        let go = runner(self.project, self.root, true);
        let env: Vec<String> = config.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        [
            Input {
                kind: Kind::Runner,
                name: argv.join(" "),
                hash: hash(format!("{argv:?}\n{go:?}\n{env:?}").as_bytes()),
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

    /// The interpreter's or toolchain's identity, or why it cannot be known.
    fn toolchain(&self, test: &str, memo: &mut Memo) -> Result<Input, String> {
        let go = crate::graph::is_go_unit(test);
        let argv = runner(self.project, self.root, go);
        let state = crate::repo::state_dir(self.repo);
        let (name, hash) = if go {
            let dir = test.trim_start_matches("./");
            let applies = |file: &String| {
                let module = crate::path::parent(file);
                crate::path::file_name(file) == "go.work"
                    || module.is_empty()
                    || dir == module
                    || dir.starts_with(&format!("{module}/"))
            };
            if let Some((file, to)) = self.project.go.outside.iter().find(|(f, _)| applies(f)) {
                return Err(format!(
                    "{file}: replace => {to}: a module outside the repository, whose code gate does not hash"
                ));
            }
            (
                "go".to_string(),
                memo.go(self.root, &state, &self.project.config.env)?,
            )
        } else {
            let python = toolchain::python_of(&argv).ok_or_else(|| {
                format!(
                    "the runner `{}` is not a Python interpreter gate can ask for its packages",
                    argv.join(" ")
                )
            })?;
            let h = memo.python(&python, self.root, &state, &self.project.config.env)?;
            (python, h)
        };
        Ok(Input {
            kind: Kind::Toolchain,
            name,
            hash,
        })
    }
}

/// A run's identities (`Scope::identity`).
pub(crate) struct Identity {
    pub config: String,
    pub lock: Option<String>,
    pub environment: Option<String>,
    /// Why an identity is missing.
    pub unknown: Vec<String>,
}

/// What a node's own part of a closure hash reads: shareable across threads (the repository
/// is not), so a file whose blob the tree index does not know is left for the caller to read.
#[derive(Clone, Copy)]
struct Files<'a> {
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
    fn leaf(
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
    fn untracked(self, file: &str) -> impl Iterator<Item = &'a str> {
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
    fn doubts(self, file: &str, unbounded: &BTreeSet<String>, why: &mut Vec<String>) {
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

/// The paths that differ between two commits' trees (a path present on one side only too),
/// or none when either cannot be read. Subtrees with the same id are skipped whole, so the
/// cost is what changed (libgit2's tree diff lists every entry of both).
fn changed_between(repo: &git2::Repository, from: git2::Oid, to: git2::Oid) -> Option<Vec<String>> {
    let tree = |c| repo.find_commit(c).and_then(|c| c.tree()).ok();
    let mut paths = Vec::new();
    if from != to {
        differ(repo, Some(tree(from)?), Some(tree(to)?), "", &mut paths)?;
    }
    Some(paths)
}

fn differ(
    repo: &git2::Repository,
    a: Option<git2::Tree<'_>>,
    b: Option<git2::Tree<'_>>,
    dir: &str,
    out: &mut Vec<String>,
) -> Option<()> {
    let entries = |t: &Option<git2::Tree<'_>>| -> Option<BTreeMap<String, (git2::Oid, bool)>> {
        let Some(t) = t else {
            return Some(BTreeMap::new());
        };
        t.iter()
            .map(|e| {
                let tree = e.kind() == Some(git2::ObjectType::Tree);
                Some((e.name().ok()?.to_string(), (e.id(), tree)))
            })
            .collect()
    };
    let (old, new) = (entries(&a)?, entries(&b)?);
    let names: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    for name in names {
        let (x, y) = (old.get(name), new.get(name));
        if x == y {
            continue;
        }
        let path = crate::path::join(dir, name);
        let subtree = |e: Option<&(git2::Oid, bool)>| -> Option<Option<git2::Tree<'_>>> {
            match e {
                Some(&(id, true)) => Some(Some(repo.find_tree(id).ok()?)),
                _ => Some(None),
            }
        };
        let (ta, tb) = (subtree(x)?, subtree(y)?);
        if ta.is_some() || tb.is_some() {
            differ(repo, ta, tb, &path, out)?;
        }
        // A file on either side (a file that became a folder is both).
        if x.is_some_and(|e| !e.1) || y.is_some_and(|e| !e.1) {
            out.push(path);
        }
    }
    Some(())
}

/// The files holding a run-time-named import.
fn unbounded_files(graph: &crate::graph::Graph) -> BTreeSet<String> {
    graph.unbounded.iter().map(|(f, _, _)| f.clone()).collect()
}

/// A variable's value, hashed; `unset` when it is.
/// What can change a leg's outcomes besides its code, as one digest: its environment (OS,
/// interpreter and toolchain versions), the runner's `[env]`, and the values of the variables
/// every fingerprint holds. Two legs of one commit with the same digest are the same
/// experiment; with different ones a pass says nothing of the other's failure.
pub(crate) fn run_inputs(config: &crate::config::Config, env: &serde_json::Value) -> String {
    let mut h = Sha256::new();
    h.update(format!("gate inputs 1\0{env}\0").as_bytes());
    for (k, v) in &config.env {
        h.update(format!("env\0{k}\0{v}\0").as_bytes());
    }
    for name in RUN_ENV
        .iter()
        .copied()
        .chain(config.ledger.env.iter().map(String::as_str))
    {
        h.update(format!("var\0{name}\0{}\0", value_of(name)).as_bytes());
    }
    hex(&h.finalize()[..16])
}

/// The hash a variable that is not set has.
pub(crate) const UNSET: &str = "unset";

fn value_of(name: &str) -> String {
    std::env::var_os(name).map_or_else(|| UNSET.to_string(), |v| hash(v.as_encoded_bytes()))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The runner's argv before the test arguments.
fn runner(project: &Project, root: &Path, go: bool) -> Vec<String> {
    if go {
        let mut argv = vec!["go".to_string(), "test".to_string()];
        argv.extend(project.config.go_flags.iter().cloned());
        argv
    } else {
        crate::run::pytest::base_argv(&project.config, &project.framework, root)
    }
}

/// A file's blob id; a file absent from the tree is an input too (it appearing changes the
/// fingerprint); a symlink that leaves the tree cannot be hashed.
/// None when it must be read and `repo` is not given.
/// What pytest reads above the repository: its rootdir search walks up from the tests'
/// common folder, so a `pytest.ini` (or `pyproject.toml`, `tox.ini`, `setup.cfg`) in a parent
/// folder configures the run when the repository has none, and a `conftest.py` there is loaded
/// by every test. Configuration files are hashed by content; a conftest cannot be bounded (it
/// imports what it likes), so it makes every fingerprint unknown. A few stats per run, when
/// the repository's own root does not end the search.
fn above_root(root: &Path, why: &mut Vec<String>) -> Vec<Input> {
    let mut inputs = Vec::new();
    for folder in root.ancestors().skip(1) {
        for name in [
            "pytest.ini",
            ".pytest.ini",
            "pyproject.toml",
            "tox.ini",
            "setup.cfg",
            "conftest.py",
        ] {
            let path = folder.join(name);
            let Ok(bytes) = std::fs::read(&path) else {
                continue;
            };
            if name == "conftest.py" {
                why.push(format!(
                    "{}: a conftest.py above the repository, loaded by every test: gate cannot bound it",
                    path.display()
                ));
            }
            inputs.push(Input {
                kind: Kind::WholeSuite,
                name: path.display().to_string(),
                hash: hash(&bytes),
            });
        }
    }
    inputs
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

fn blob(
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
