//! The languages gate gates, each one module that owns what is its own: which files are its,
//! the facts of a file, its test discovery, its runners and their report formats, its
//! toolchain's identity. The stages ask the tables rather than naming a language, the way
//! difftastic and ast-grep keep languages as data. A language has two faces, each a small
//! interface with its table: `Language` (here: its files and their facts, which the analysis
//! low in the stages asks) and `suite::Suite` (its tests: their runners and toolchain, which
//! the run plan, fingerprints and audit ask, and which needs the project the analysis builds);
//! split so the analysis never imports what sits above it. What a stage still asks of Python
//! or Go by name is listed in ARCHITECTURE.md.

pub(crate) mod args;
pub(crate) mod go;
pub(crate) mod js;
pub(crate) mod python;
pub(crate) mod suite;
pub(crate) mod toolchain;

use crate::analyze::facts::Facts;
use crate::graph::{EdgeKind, Tree};
use std::collections::{BTreeMap, BTreeSet};

/// One language, as the stages see it.
pub(crate) trait Language: Sync {
    /// Its name, as reports and the run plan group by it (`python`, `go`).
    fn name(&self) -> &'static str;
    /// Whether `path` is one of its source files.
    fn is_source(&self, path: &str) -> bool;
    /// What its source file `path` says: imports, references, paths, flags. From the bytes
    /// and the file's dialect (its extension) alone, so the facts are cached by blob id under
    /// `cache_tag`.
    fn facts(&self, path: &str, bytes: &[u8]) -> Facts;
    /// What its facts of `path`'s blob are cached under beside the blob id: the same bytes
    /// mean different things to each analyser (and to each dialect of one).
    fn cache_tag(&self, path: &str) -> &'static str;
    /// The grammar its facts are read with: a cached fact is valid only under the same one.
    fn grammar(&self) -> &'static str;
    /// Its reading of one tree's own configuration — test discovery and import resolution —
    /// when the tree has anything of it to read; `read` gives a file of the tree, `stated` the
    /// values `.gate.toml` states for what it cannot read there.
    fn layout(
        &self,
        _files: &BTreeSet<String>,
        _read: &dyn Fn(&str) -> Option<Vec<u8>>,
        _stated: &[StatedValue],
    ) -> Option<Box<dyn Layout>> {
        None
    }
    /// Changes whose blast radius is the whole suite where it has tests (its manifests, lock
    /// files, runner and compiler configuration): glob and reason, after the built-in ones.
    fn whole_suite(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }
    /// Its source file's role in `gate plan`'s AST plan, beside the ones every language shares
    /// (`test`, `conftest`, `stub`, `source`, `shell`), when it has its own.
    fn plan_role(&self, _path: &str) -> Option<&'static str> {
        None
    }
    /// Whether its analysis reads every dependency its source files have, so one that nothing
    /// reaches is an untested file rather than a file to guess tests for.
    fn reads_whole(&self) -> bool {
        false
    }
    /// Whether a run-time-named load of its language may load `path` (a module, not a test
    /// or a file only its runner loads): what a `may_load` bound covers.
    fn loadable(&self, _path: &str) -> bool {
        false
    }
    /// Whether a file named `name`, which no commit holds, may change its runner's run from a
    /// folder of the code it runs (a module it loads, its configuration): a working tree
    /// holding one cannot stand for the gated tree.
    fn runner_loads(&self, _name: &str) -> bool {
        false
    }
    /// Whether its facts stop at a file's imports (Go's do), so a changed file is parsed whole
    /// for `changed_parse_errors`.
    fn stops_at_imports(&self) -> bool {
        false
    }
    /// The lines of a changed source file's syntax errors, when `stops_at_imports`.
    fn changed_parse_errors(&self, _bytes: &[u8]) -> Vec<u32> {
        Vec::new()
    }
}

/// A language's reading of one tree: its tests and how its imports resolve, from the tree's
/// own configuration (manifests, compiler and runner configuration), read once per load.
pub(crate) trait Layout: Send + Sync {
    /// Its test units among the tree's `files` (the files it was loaded with).
    fn tests(&self, files: &BTreeSet<String>) -> BTreeSet<String>;
    /// Adds the edges of `path`'s imports (`facts.imports`, as its analyser wrote them) and
    /// of what its configuration says `path` needs (a setup file, a snapshot) to `found`.
    fn edges(&self, tree: &Tree<'_>, path: &str, facts: &Facts, found: &mut Found<'_>);
    /// A digest of everything it was read from: a graph built under another is not reused.
    fn digest(&self) -> u64;
    /// Whether its analysis reads every dependency its sources have in this tree (as
    /// `Language::reads_whole`).
    fn reads_whole(&self) -> bool;
    /// Why gate cannot bound a change in this tree (a configuration it cannot read as
    /// literals), naming the file and the key: the run is refused.
    fn broken(&self) -> Option<String>;
    /// What the load says without refusing: a stated value it did not use, and why.
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }
    /// Itself, for its own language's suite to read back what it holds.
    fn as_any(&self) -> &dyn std::any::Any;
}

/// Where a layout's edges go: each edge (to, kind, line, detail), and each load whose target
/// it cannot tell (line, text: the `may_load` bound, as a run-time name with nothing literal).
pub(crate) struct Found<'a> {
    pub edge: &'a mut dyn FnMut(String, EdgeKind, u32, String),
    pub unbounded: &'a mut dyn FnMut(u32, String),
}

/// Values `.gate.toml` states for configuration gate cannot read as literals (`[[js.stated]]`),
/// by the language whose layout reads that configuration. Plain data, so the layouts never
/// see the rest of the configuration.
#[derive(Debug, Clone, Default)]
pub(crate) struct Stated(BTreeMap<&'static str, Vec<StatedValue>>);

/// One stated value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StatedValue {
    /// The configuration file, repository-relative.
    pub file: String,
    /// The dotted key, as gate's refusal names it; `""` is the file's whole value.
    pub key: String,
    /// What the key holds, as JSON: the form every configuration value is read in.
    pub value: serde_json::Value,
    /// Its line in `.gate.toml`, for the warnings that name it.
    pub line: usize,
}

impl Stated {
    /// Adds a value stated for `language`'s configuration.
    pub(crate) fn add(&mut self, language: &'static str, value: StatedValue) {
        self.0.entry(language).or_default().push(value);
    }

    /// The values stated for `language`'s configuration, in `.gate.toml`'s order.
    pub(crate) fn of(&self, language: &str) -> &[StatedValue] {
        self.0.get(language).map_or(&[], Vec::as_slice)
    }
}

/// Every language gate gates, in the order a path is offered to them.
pub(crate) static LANGUAGES: [&dyn Language; 3] = [&python::Python, &go::Go, &js::Js];

/// The language whose source `path` is, if any.
pub(crate) fn of_source(path: &str) -> Option<&'static dyn Language> {
    LANGUAGES.iter().copied().find(|l| l.is_source(path))
}

/// Whether a file named `name` that no commit holds may change a test run (`path`'s table for
/// Python and Go, and each language's own).
pub(crate) fn loaded_by_runners(name: &str) -> bool {
    crate::path::loaded_by_runners(name) || LANGUAGES.iter().any(|l| l.runner_loads(name))
}

/// The layouts of one tree: each language's that has one, in `LANGUAGES` order.
#[derive(Default)]
pub(crate) struct Layouts(Vec<(&'static str, Box<dyn Layout>)>);

/// A tree no language has a layout for.
pub(crate) static NO_LAYOUTS: Layouts = Layouts(Vec::new());

impl Layouts {
    /// Each language's reading of the tree whose files are `files`, with the values `stated`
    /// for what it cannot read.
    pub(crate) fn load(
        files: &BTreeSet<String>,
        read: &dyn Fn(&str) -> Option<Vec<u8>>,
        stated: &Stated,
    ) -> Self {
        Layouts(
            LANGUAGES
                .iter()
                .filter_map(|l| {
                    let layout = l.layout(files, read, stated.of(l.name()))?;
                    Some((l.name(), layout))
                })
                .collect(),
        )
    }

    /// The layouts of a tree one language has read (for tests of that language's edges).
    #[cfg(test)]
    pub(crate) fn single(name: &'static str, layout: Box<dyn Layout>) -> Self {
        Layouts(vec![(name, layout)])
    }

    /// The layout of the language whose source `path` is, if it has one.
    pub(crate) fn of(&self, path: &str) -> Option<&dyn Layout> {
        self.named(of_source(path)?.name())
    }

    /// The layout of the language named `name`, if the tree has one.
    pub(crate) fn named(&self, name: &str) -> Option<&dyn Layout> {
        self.0
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, l)| l.as_ref())
    }

    /// Every layout's test units among the tree's `files` (the files they were loaded with).
    pub(crate) fn tests(&self, files: &BTreeSet<String>) -> BTreeSet<String> {
        self.0.iter().flat_map(|(_, l)| l.tests(files)).collect()
    }

    /// The digests of every layout, in order, for a kept graph's key.
    pub(crate) fn digests(&self) -> Vec<(&'static str, u64)> {
        self.0.iter().map(|(n, l)| (*n, l.digest())).collect()
    }

    /// Whether the analysis of `path`'s language reads every dependency it has in this tree:
    /// its layout says, else the language.
    pub(crate) fn reads_whole(&self, path: &str) -> bool {
        match self.of(path) {
            Some(layout) => layout.reads_whole(),
            None => of_source(path).is_some_and(|l| l.reads_whole()),
        }
    }

    /// Every layout's warnings.
    pub(crate) fn warnings(&self) -> Vec<String> {
        self.0.iter().flat_map(|(_, l)| l.warnings()).collect()
    }

    /// The first reason a layout cannot bound changes, if one cannot.
    pub(crate) fn broken(&self) -> Option<String> {
        self.0.iter().find_map(|(_, l)| l.broken())
    }
}
