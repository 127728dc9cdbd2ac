//! Stage 3 — the dependency graph: facts resolved against the tree into edges
//! `from` (the file that needs) → `to` (the file it needs), each with its origin line.
//! Edges are kept sorted; the reverse index answers "who depends on this file?".

use crate::analyze::paths::PathValue;
use crate::analyze::python::{Facts, Import, StringContext};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    /// An import statement names the module.
    Import,
    /// A string names the module (`import_module`, `mock.patch`, `pytest_plugins`, entry points).
    StringModule,
    /// A string literal names the file.
    PathLiteral,
    /// Importing a module runs the `__init__.py` of every package above it.
    PackageInit,
    /// A `conftest.py` applies to every test at or below its directory.
    Conftest,
    /// A path built from `__file__`, joins, module constants or package resources.
    ComputedPath,
    /// A subprocess argv or shell command runs the file, or a tool over the folder.
    Subprocess,
    /// `import_module(f"pkg.{name}")`: every module under the constant prefix.
    DynamicImport,
    /// A framework convention: a Flask app serves `templates/` and `static/` beside it.
    Convention,
    /// A pytest-bdd binding names the feature file or folder.
    Feature,
    /// A `[[reference]]` extractor from `.gate.toml` matched.
    UserReference,
    /// A Go package is built from its `.go` files (and cgo/assembly sources).
    GoPackage,
    /// A Go package's tests: its `_test.go` files, the package itself, `testdata/`.
    GoTest,
    /// `//go:embed` names the files.
    Embed,
    /// Last resort for a file nothing else reaches: `foo.py` ↔ `test_foo.py`.
    NameMatch,
    /// Last resort for a non-code file nothing else reaches: the tests of the nearest folder
    /// above it that holds tests.
    Proximity,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Edge {
    pub from: String,
    pub to: String,
    pub kind: EdgeKind,
    /// The line in `from` that creates the edge (0 where no line does).
    pub line: u32,
    /// The module or string named.
    pub detail: String,
}

impl EdgeKind {
    /// Edges of these kinds come from one file's facts; the others from which files exist.
    pub fn from_facts(self) -> bool {
        !matches!(
            self,
            EdgeKind::PackageInit
                | EdgeKind::Conftest
                | EdgeKind::GoPackage
                | EdgeKind::GoTest
                | EdgeKind::UserReference
                | EdgeKind::NameMatch
                | EdgeKind::Proximity
        )
    }
}

impl Edge {
    /// `tests/test_cart.py imports shop.cart at line 3`.
    pub fn explain(&self) -> String {
        let Edge {
            from,
            to,
            detail,
            line,
            ..
        } = self;
        match self.kind {
            EdgeKind::Import => format!("{from} imports {detail} at line {line}"),
            EdgeKind::StringModule => format!("{from} names module {detail} at line {line}"),
            EdgeKind::PathLiteral => format!("{from} names {to} at line {line}"),
            EdgeKind::PackageInit => format!("{from} runs {to} (package {detail})"),
            EdgeKind::Conftest => format!("{from} is under {to}"),
            EdgeKind::GoPackage => format!("package {} is built from {to}", go_dir_of(from)),
            EdgeKind::GoTest if to.starts_with("go:") => {
                format!("the tests of {from} build package {}", go_dir_of(to))
            }
            EdgeKind::GoTest => format!("the tests of {from} use {to}"),
            EdgeKind::Embed => format!("{from} embeds {to} at line {line} (`{detail}`)"),
            EdgeKind::ComputedPath => {
                format!("{from} builds the path {to} at line {line} (`{detail}`)")
            }
            EdgeKind::Subprocess if detail == to => format!("{from} runs {to} at line {line}"),
            EdgeKind::Subprocess => {
                format!("{from} runs `{detail}` at line {line}, which covers {to}")
            }
            EdgeKind::DynamicImport => format!(
                "{from} imports a module named at run time at line {line} (`{detail}`), which can load {to}"
            ),
            EdgeKind::Convention if *line == 0 => format!("{from} {detail}, which holds {to}"),
            EdgeKind::Convention => format!("{from} {detail} at line {line}, which reads {to}"),
            EdgeKind::NameMatch => {
                format!(
                    "{from} is named after {to} (name mapping, used only when no stronger edge exists)"
                )
            }
            EdgeKind::Proximity => format!(
                "{to} lives under {detail}/ with {from} (proximity: the weakest edge, used only when no other exists)"
            ),
            EdgeKind::Feature => format!("{from} binds the feature {to} at line {line}"),
            EdgeKind::UserReference => format!("{from} references {to} at line {line} ({detail})"),
        }
    }
}

/// A reference a `[[reference]]` extractor found in a file.
pub struct UserRef {
    pub from: String,
    pub line: u32,
    pub path: String,
    /// `relative_to = "file"`: the path is relative to the file's folder, else to the root.
    pub relative_to_file: bool,
    /// `[[reference]] rule 1 (files = …)`.
    pub rule: String,
}

/// A chain of edges as one line: `a imports b at line 1; b imports c at line 2`.
pub fn explain_chain<'e>(chain: impl IntoIterator<Item = &'e Edge>) -> String {
    chain
        .into_iter()
        .map(Edge::explain)
        .collect::<Vec<_>>()
        .join("; ")
}

pub struct Graph {
    pub edges: Vec<Edge>,
    /// Dynamic imports with no literal part: `(file, line, call)`. Whatever depends on the file
    /// may load any module, so changes cannot be bounded against it.
    pub unbounded: Vec<(String, u32, String)>,
    /// Every node's id; walks run over ids, not names.
    ids: std::collections::HashMap<String, u32>,
    /// Per edge: (from id, to id).
    ends: Vec<(u32, u32)>,
    /// Per node id: the edges into it (who depends on it) and out of it.
    dependents: Vec<Vec<u32>>,
    dependencies: Vec<Vec<u32>>,
}

/// What the project's files are, for resolution.
pub struct Tree<'a> {
    /// Files of the gated tree plus deleted paths, so an import of a deleted module still
    /// resolves to it and its importers are selected.
    pub files: &'a BTreeSet<String>,
    pub roots: &'a [String],
    pub is_test: &'a dyn Fn(&str) -> bool,
    /// pytest-bdd's `bdd_features_base_dir`, when the ini sets one.
    pub feature_base: Option<&'a str>,
    /// Go modules and packages, when the tree has Go code.
    pub go: &'a crate::analyze::gomod::GoLayout,
    /// Python module stems (`src/shop/cart` for `src/shop/cart.py` and
    /// `src/shop/cart/__init__.py`) → their files: resolution is a hash lookup per candidate.
    pub modules: std::collections::HashMap<String, Vec<String>>,
}

impl<'a> Tree<'a> {
    pub fn new(
        files: &'a BTreeSet<String>,
        roots: &'a [String],
        is_test: &'a dyn Fn(&str) -> bool,
        feature_base: Option<&'a str>,
        go: &'a crate::analyze::gomod::GoLayout,
    ) -> Tree<'a> {
        let mut modules: std::collections::HashMap<String, Vec<String>> = Default::default();
        for f in files.iter().filter(|f| is_python(f)) {
            let stem = f
                .strip_suffix(".pyi")
                .or_else(|| f.strip_suffix(".py"))
                .unwrap_or(f);
            let stem = stem
                .strip_suffix("/__init__")
                .unwrap_or(if stem == "__init__" { "" } else { stem });
            modules.entry(stem.to_string()).or_default().push(f.clone());
        }
        Tree {
            files,
            roots,
            is_test,
            feature_base,
            go,
            modules,
        }
    }
}

/// The graph node of Go package `dir` as its importers see it.
pub fn go_library(dir: &str) -> String {
    format!("go:{dir}")
}

/// The graph node of the tests of Go package `dir`: what `go test ./dir` runs. It is a test of
/// the tree, as a pytest file is.
pub fn go_tests(dir: &str) -> String {
    if dir.is_empty() {
        ".".into()
    } else {
        format!("./{dir}")
    }
}

/// The package folder of a Go node (`go:a/b` or `./a/b`).
pub fn go_dir_of(node: &str) -> &str {
    node.strip_prefix("go:")
        .or_else(|| node.strip_prefix("./"))
        .unwrap_or(if node == "." { "" } else { node })
}

pub fn is_go_unit(node: &str) -> bool {
    node == "." || node.starts_with("./")
}

impl Graph {
    pub fn build(
        tree: &Tree<'_>,
        facts: &BTreeMap<String, Facts>,
        user: &[UserRef],
        loads: &[crate::config::Loads],
    ) -> Graph {
        let mut edges = EdgeSet::default();
        let mut unbounded = Vec::new();
        for (path, f) in facts {
            file_edges(tree, path, f, loads, &mut edges, &mut unbounded);
        }
        for u in user {
            let bases = if u.relative_to_file {
                vec![parent(&u.from).to_string()]
            } else {
                vec![String::new()]
            };
            for to in path_targets(tree, &u.from, &bases, &u.path, false) {
                edges.add(&u.from, to, EdgeKind::UserReference, u.line, u.rule.clone());
            }
        }
        go_packages(tree, &mut edges);
        let python: Vec<&String> = tree.files.iter().filter(|f| is_python(f)).collect();
        for file in &python {
            for dir in ancestors(file) {
                let init = join(dir, "__init__.py");
                if tree.files.contains(&init) {
                    edges.add(file, init, EdgeKind::PackageInit, 0, dir.replace('/', "."));
                }
            }
        }
        let conftests: Vec<&String> = python
            .iter()
            .copied()
            .filter(|f| file_name(f) == "conftest.py")
            .collect();
        for test in python.iter().filter(|f| (tree.is_test)(f)) {
            for conftest in &conftests {
                let dir = parent(conftest);
                if dir.is_empty() || test.starts_with(&format!("{dir}/")) {
                    edges.add(
                        test,
                        conftest.to_string(),
                        EdgeKind::Conftest,
                        0,
                        String::new(),
                    );
                }
            }
        }
        Graph::from_edges(edges.into_edges().collect(), unbounded)
    }

    /// The graph of a tree whose files are those of `previous`'s tree, where only the files in
    /// `changed` have new contents: their facts-derived edges are recomputed, every other edge
    /// is kept (it depends on which files exist, not on these contents).
    pub fn patch(
        previous: Vec<Edge>,
        previous_unbounded: Vec<(String, u32, String)>,
        tree: &Tree<'_>,
        changed: &BTreeMap<String, Facts>,
        loads: &[crate::config::Loads],
    ) -> Graph {
        let mut edges = EdgeSet::default();
        let mut unbounded: Vec<(String, u32, String)> = previous_unbounded
            .into_iter()
            .filter(|(f, _, _)| !changed.contains_key(f))
            .collect();
        for (path, f) in changed {
            file_edges(tree, path, f, loads, &mut edges, &mut unbounded);
        }
        // Both sides are sorted by (from, to, kind) and share no key (the fresh edges replace
        // every facts-derived edge of their files): a merge keeps the order without a sort.
        let kept = previous
            .into_iter()
            .filter(|e| !(e.kind.from_facts() && changed.contains_key(&e.from)));
        let mut fresh = edges.into_edges().peekable();
        let mut merged = Vec::new();
        for e in kept {
            while fresh
                .peek()
                .is_some_and(|f| (&f.from, &f.to, f.kind) < (&e.from, &e.to, e.kind))
            {
                merged.extend(fresh.next());
            }
            merged.push(e);
        }
        merged.extend(fresh);
        Graph::from_edges(merged, unbounded)
    }

    fn from_edges(edges: Vec<Edge>, mut unbounded: Vec<(String, u32, String)>) -> Graph {
        let mut ids: std::collections::HashMap<String, u32> = Default::default();
        let mut id = |name: &String| -> u32 {
            let next = ids.len() as u32;
            *ids.entry(name.clone()).or_insert(next)
        };
        let ends: Vec<(u32, u32)> = edges.iter().map(|e| (id(&e.from), id(&e.to))).collect();
        let mut dependents: Vec<Vec<u32>> = vec![Vec::new(); ids.len()];
        let mut dependencies: Vec<Vec<u32>> = vec![Vec::new(); ids.len()];
        for (i, &(from, to)) in ends.iter().enumerate() {
            dependents[to as usize].push(i as u32);
            dependencies[from as usize].push(i as u32);
        }
        unbounded.sort();
        Graph {
            edges,
            unbounded,
            ids,
            ends,
            dependents,
            dependencies,
        }
    }

    pub fn has_dependents(&self, path: &str) -> bool {
        self.ids
            .get(path)
            .is_some_and(|&i| !self.dependents[i as usize].is_empty())
    }

    /// Walks from `start` along `dependents` (towards tests) or `dependencies` (from a test).
    /// Each reached node keeps the edge it was first reached by, so chains are shortest paths;
    /// with `max_depth`, nodes beyond the cap are reported in `cut`, never silently dropped.
    pub fn walk(&self, start: &str, direction: Direction, max_depth: Option<u32>) -> Walk {
        let index = match direction {
            Direction::Dependents => &self.dependents,
            Direction::Dependencies => &self.dependencies,
        };
        let mut walk = Walk {
            start: start.to_string(),
            via: BTreeMap::new(),
            cut: BTreeSet::new(),
        };
        let Some(&start_id) = self.ids.get(start) else {
            return walk;
        };
        // Ids while walking; only reached nodes' names are copied into the result.
        let mut depth: Vec<u32> = vec![u32::MAX; self.dependents.len()];
        depth[start_id as usize] = 0;
        let mut queue: VecDeque<u32> = VecDeque::from([start_id]);
        while let Some(node) = queue.pop_front() {
            let d = depth[node as usize];
            for &i in &index[node as usize] {
                let (from, to) = self.ends[i as usize];
                let next = match direction {
                    Direction::Dependents => from,
                    Direction::Dependencies => to,
                };
                if depth[next as usize] != u32::MAX {
                    continue;
                }
                depth[next as usize] = d + 1;
                let e = &self.edges[i as usize];
                let name = match direction {
                    Direction::Dependents => &e.from,
                    Direction::Dependencies => &e.to,
                };
                if max_depth.is_some_and(|m| d + 1 > m) {
                    walk.cut.insert(name.clone());
                } else {
                    walk.via.insert(name.clone(), i as usize);
                }
                queue.push_back(next);
            }
        }
        walk
    }
}

#[derive(Clone, Copy)]
pub enum Direction {
    Dependents,
    Dependencies,
}

pub struct Walk {
    pub start: String,
    /// Every reached node (within the depth cap) → the edge that reached it.
    pub via: BTreeMap<String, usize>,
    /// Nodes only reachable past `max_depth`.
    pub cut: BTreeSet<String>,
}

impl Walk {
    /// The edges from `node` back to the start, in order.
    pub fn chain<'g>(&self, graph: &'g Graph, node: &str) -> Vec<&'g Edge> {
        let mut chain = Vec::new();
        let mut at = node.to_string();
        while let Some(&i) = self.via.get(&at) {
            let e = &graph.edges[i];
            chain.push(e);
            at = if e.from == at {
                e.to.clone()
            } else {
                e.from.clone()
            };
            if at == self.start || chain.len() > self.via.len() {
                break;
            }
        }
        chain
    }
}

fn resolve_import(tree: &Tree<'_>, importer: &str, import: &Import) -> Vec<(String, String)> {
    let module: Vec<&str> = import.module.split('.').filter(|p| !p.is_empty()).collect();
    let names = import.names.iter().filter(|n| n.as_str() != "*");
    if import.level == 0 {
        let mut out = resolve_absolute(tree, importer, &module);
        for name in names {
            let mut parts = module.clone();
            parts.push(name);
            out.extend(resolve_in(
                tree,
                &[base_dir(tree, importer)],
                &parts,
                parts.len(),
            ));
            out.extend(resolve_in(tree, tree.roots, &parts, parts.len()));
        }
        out.sort();
        out.dedup();
        return out;
    }
    let mut dir = parent(importer).to_string();
    for _ in 1..import.level {
        dir = parent(&dir).to_string();
    }
    let label =
        |parts: &[&str]| format!("{}{}", ".".repeat(import.level as usize), parts.join("."));
    let mut out = Vec::new();
    for k in 1..=module.len() {
        out.extend(
            module_files(tree, &dir, &module[..k])
                .into_iter()
                .map(|f| (f, label(&module[..k]))),
        );
    }
    for name in names {
        let mut parts = module.clone();
        parts.push(name);
        out.extend(
            module_files(tree, &dir, &parts)
                .into_iter()
                .map(|f| (f, label(&parts))),
        );
    }
    out
}

/// `a.b.c` runs `a`, `a.b` and `a.b.c`: an edge to every prefix found under any root.
fn resolve_absolute(tree: &Tree<'_>, importer: &str, parts: &[&str]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let own = [base_dir(tree, importer)];
    for k in 1..=parts.len() {
        out.extend(resolve_in(tree, tree.roots, parts, k));
        out.extend(resolve_in(tree, &own, parts, k));
    }
    out.sort();
    out.dedup();
    out
}

fn resolve_in(
    tree: &Tree<'_>,
    roots: &[String],
    parts: &[&str],
    k: usize,
) -> Vec<(String, String)> {
    roots
        .iter()
        .flat_map(|root| module_files(tree, root, &parts[..k]))
        .map(|f| (f, parts[..k].join(".")))
        .collect()
}

/// The files that define module `parts` under `dir`: `x.py`, `x.pyi`, `x/__init__.py(i)`.
fn module_files(tree: &Tree<'_>, dir: &str, parts: &[&str]) -> Vec<String> {
    if parts.is_empty() {
        return Vec::new();
    }
    let stem = join(dir, &parts.join("/"));
    tree.modules.get(&stem).cloned().unwrap_or_default()
}

/// The directory Python puts on `sys.path` for a file run or collected from its own folder:
/// above the topmost package that contains it (pytest's `rootdir`-less "prepend" import mode).
fn base_dir(tree: &Tree<'_>, file: &str) -> String {
    let mut dir = parent(file);
    while !dir.is_empty() && tree.files.contains(&join(dir, "__init__.py")) {
        dir = parent(dir);
    }
    dir.to_string()
}

/// Edges being collected: one per (from, to, kind), with the first line that makes it.
#[derive(Default)]
struct EdgeSet(BTreeMap<(String, String, EdgeKind), (u32, String)>);

impl EdgeSet {
    fn add(&mut self, from: &str, to: String, kind: EdgeKind, line: u32, detail: String) {
        if from == to {
            return;
        }
        self.0
            .entry((from.to_string(), to, kind))
            .and_modify(|e| {
                if line < e.0 {
                    *e = (line, detail.clone());
                }
            })
            .or_insert((line, detail));
    }

    /// In (from, to, kind) order.
    fn into_edges(self) -> impl Iterator<Item = Edge> {
        self.0
            .into_iter()
            .map(|((from, to, kind), (line, detail))| Edge {
                from,
                to,
                kind,
                line,
                detail,
            })
    }
}

/// The edges one file's facts give: imports, string and path references, subprocesses,
/// dynamic imports, conventions. Everything else in the graph depends only on which files
/// exist, so a changed file's edges can be recomputed alone (`Graph::patch`).
fn file_edges(
    tree: &Tree<'_>,
    path: &str,
    f: &Facts,
    loads: &[crate::config::Loads],
    edges: &mut EdgeSet,
    unbounded: &mut Vec<(String, u32, String)>,
) {
    let go = crate::analyze::gomod::is_go(path);
    // Go files under testdata/ (or `_x/`, `.x/`) are inputs of tests, not packages: their
    // imports are no one's dependencies.
    let go_input = go && crate::analyze::gomod::ignored_dir(path);
    for import in &f.imports {
        if go_input {
            continue;
        }
        if go {
            // `import "C"` makes cmd/go add runtime/cgo, syscall and unsafe.
            let implied: &[&str] = if import.module == "C" {
                &["runtime/cgo", "syscall", "unsafe"]
            } else {
                &[]
            };
            for module in std::iter::once(import.module.as_str()).chain(implied.iter().copied()) {
                for dir in tree.go.resolve(path, module) {
                    edges.add(
                        path,
                        go_library(&dir),
                        EdgeKind::Import,
                        import.line,
                        module.to_string(),
                    );
                }
            }
            continue;
        }
        for (to, module) in resolve_import(tree, path, import) {
            edges.add(path, to, EdgeKind::Import, import.line, module);
        }
    }
    for s in &f.strings {
        let dotted = s.value.split(':').next().unwrap_or_default();
        let (path_kind, module_kind) = match s.context {
            StringContext::Plain | StringContext::PathArg => {
                (Some(EdgeKind::PathLiteral), Some(EdgeKind::StringModule))
            }
            StringContext::Argv => (Some(EdgeKind::Subprocess), None),
            StringContext::Feature => (Some(EdgeKind::Feature), None),
            StringContext::Embed => (Some(EdgeKind::Embed), None),
            StringContext::ImportCall | StringContext::PytestPlugins => {
                (None, Some(EdgeKind::StringModule))
            }
            StringContext::RunModule => (None, Some(EdgeKind::Subprocess)),
        };
        let mut bases = match s.context {
            StringContext::Embed => vec![parent(path).to_string()],
            // `go test` runs in the package folder: its relative paths start there.
            _ if go => vec![parent(path).to_string(), String::new()],
            _ => vec![String::new(), parent(path).to_string()],
        };
        if s.context == StringContext::Feature
            && let Some(base) = tree.feature_base
        {
            bases.push(base.to_string());
        }
        let found = path_kind
            .map(|kind| {
                let tool = kind == EdgeKind::Subprocess;
                (kind, path_targets(tree, path, &bases, &s.value, tool))
            })
            .filter(|(_, targets)| !targets.is_empty());
        if let Some((kind, targets)) = found {
            for to in targets {
                edges.add(path, to, kind, s.line, s.value.clone());
            }
        } else if let Some(kind) = module_kind
            && is_dotted_name(dotted)
        {
            let parts: Vec<&str> = dotted.split('.').collect();
            let mut targets = resolve_absolute(tree, path, &parts);
            if s.context == StringContext::RunModule {
                // `python -m pkg` runs `pkg/__main__.py`.
                targets.extend(resolve_in(tree, tree.roots, &[dotted, "__main__"], 2));
                let main: Vec<String> = targets
                    .iter()
                    .filter_map(|(f, _)| f.strip_suffix("/__init__.py"))
                    .map(|d| format!("{d}/__main__.py"))
                    .filter(|m| tree.files.contains(m))
                    .collect();
                targets.extend(main.into_iter().map(|m| (m, dotted.to_string())));
            }
            for (to, module) in targets {
                edges.add(path, to, kind, s.line, module);
            }
        }
    }
    for p in &f.paths {
        for to in value_targets(tree, path, &p.value) {
            edges.add(path, to, EdgeKind::ComputedPath, p.line, p.text.clone());
        }
    }
    for d in &f.dynamic_imports {
        if d.prefix.is_empty() {
            let declared: Vec<&crate::config::Loads> =
                loads.iter().filter(|l| l.file.is_match(path)).collect();
            if declared.is_empty() {
                unbounded.push((path.to_string(), d.line, d.text.clone()));
            }
            for rule in declared {
                let detail = format!(
                    "{} — [[loads]] rule {}: {}",
                    d.text, rule.index, rule.modules.text
                );
                for to in tree.files.iter().filter(|f| rule.modules.is_match(f)) {
                    edges.add(
                        path,
                        to.clone(),
                        EdgeKind::DynamicImport,
                        d.line,
                        detail.clone(),
                    );
                }
            }
            continue;
        }
        for to in modules_under_prefix(tree, &d.prefix) {
            edges.add(path, to, EdgeKind::DynamicImport, d.line, d.text.clone());
        }
    }
    for &line in &f.apps {
        for folder in ["templates", "static"] {
            for to in under(tree, &join(parent(path), folder)) {
                edges.add(
                    path,
                    to,
                    EdgeKind::Convention,
                    line,
                    format!("creates a Flask app (its {folder}/ folder)"),
                );
            }
        }
    }
}

/// Go packages: each is built from its files; its tests from its `_test.go` files, the package
/// and `testdata/`.
fn go_packages(tree: &Tree<'_>, edges: &mut EdgeSet) {
    use crate::analyze::gomod::{is_go, is_go_test, is_package_source};
    for dir in &tree.go.packages {
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let own: Vec<&String> = tree
            .files
            .range(prefix.clone()..)
            .take_while(|f| f.starts_with(&prefix))
            .filter(|f| !f[prefix.len()..].contains('/'))
            .collect();
        let library = go_library(dir);
        let tests = go_tests(dir);
        let tested = tree.go.tested(dir) && own.iter().any(|f| is_go_test(f));
        for f in &own {
            if is_go_test(f) {
                if tested {
                    edges.add(&tests, f.to_string(), EdgeKind::GoTest, 0, String::new());
                }
            } else if is_go(f) || is_package_source(f) {
                edges.add(
                    &library,
                    f.to_string(),
                    EdgeKind::GoPackage,
                    0,
                    String::new(),
                );
            }
        }
        if tested {
            edges.add(&tests, library.clone(), EdgeKind::GoTest, 0, String::new());
            // The generated test main imports these (they resolve only where the tree holds
            // the standard library itself).
            let main = join(dir, "_testmain.go");
            for implied in ["os", "reflect", "testing", "testing/internal/testdeps"] {
                for to in tree.go.resolve(&main, implied) {
                    edges.add(
                        &tests,
                        go_library(&to),
                        EdgeKind::GoTest,
                        0,
                        format!("the test main imports {implied}"),
                    );
                }
            }
            for data in under(tree, &join(dir, "testdata")) {
                edges.add(&tests, data, EdgeKind::GoTest, 0, String::new());
            }
        }
    }
}

/// What a path names, tried against each base folder in order (the first that names
/// something wins): a file, every file under a folder, or every file a glob matches. The root
/// itself, a path leaving the repository and the naming file itself name nothing. An import
/// root (`src`) named as a path is where modules come from (`PYTHONPATH=src`), not a read of
/// every file in it — except for a tool run over it (`["mypy", "src"]`, `tool`).
fn path_targets(
    tree: &Tree<'_>,
    from: &str,
    bases: &[String],
    value: &str,
    tool: bool,
) -> Vec<String> {
    let value = value.trim_start_matches("./");
    if value.is_empty() || value.starts_with('/') {
        return Vec::new();
    }
    let mut seen = BTreeSet::new();
    for base in bases {
        if !seen.insert(base) {
            continue;
        }
        let path = normalize(&join(base, value));
        if !tool && tree.roots.contains(&path) {
            return Vec::new();
        }
        let found: Vec<String> = targets(tree, &path)
            .into_iter()
            .filter(|t| t != from)
            .collect();
        if !found.is_empty() {
            return found;
        }
    }
    Vec::new()
}

/// The files a repository-relative path names.
fn targets(tree: &Tree<'_>, path: &str) -> Vec<String> {
    if path.is_empty() || path == "." || path.starts_with("..") {
        return Vec::new();
    }
    if path.contains(['*', '?', '[', '{']) {
        let Ok(g) = crate::config::glob(path) else {
            return Vec::new();
        };
        let m = g.compile_matcher();
        // Only files under the glob's literal folder can match: scan that range, not the tree.
        let literal: Vec<&str> = path
            .split('/')
            .take_while(|part| !part.contains(['*', '?', '[', '{']))
            .collect();
        let prefix = if literal.is_empty() {
            String::new()
        } else {
            format!("{}/", literal.join("/"))
        };
        // Without `**` a glob matches at one depth only: a file there, or the folder there
        // that holds the file (`data/*` names folders too; `data/*.json` not `data/sub/x.json`).
        let depth = (!path.contains("**")).then(|| path.split('/').count());
        let mut out: Vec<String> = tree
            .files
            .range(prefix.clone()..)
            .take_while(|f| f.starts_with(&prefix))
            .filter(|f| {
                m.is_match(f.as_str())
                    || match depth {
                        Some(k) => f
                            .match_indices('/')
                            .nth(k - 1)
                            .is_some_and(|(at, _)| m.is_match(&f[..at])),
                        None => ancestors(f)
                            .take_while(|d| d.len() >= prefix.len())
                            .any(|d| !d.is_empty() && m.is_match(d)),
                    }
            })
            .cloned()
            .collect();
        out.sort();
        out.dedup();
        return out;
    }
    if tree.files.contains(path) {
        return vec![path.to_string()];
    }
    under(tree, path)
}

/// Every file under folder `dir`.
fn under(tree: &Tree<'_>, dir: &str) -> Vec<String> {
    let prefix = format!("{dir}/");
    tree.files
        .range(prefix.clone()..)
        .take_while(|f| f.starts_with(&prefix))
        .cloned()
        .collect()
}

/// The files a computed path names.
fn value_targets(tree: &Tree<'_>, from: &str, value: &PathValue) -> Vec<String> {
    match value {
        PathValue::File => Vec::new(),
        PathValue::Relative(p) => path_targets(
            tree,
            from,
            &[String::new(), parent(from).to_string()],
            p,
            false,
        ),
        PathValue::FileDir(p) => path_targets(tree, from, &[parent(from).to_string()], p, false),
        PathValue::Package { package, path } => {
            let parts: Vec<&str> = package.split('.').collect();
            let mut dirs: Vec<String> = resolve_absolute(tree, from, &parts)
                .into_iter()
                .filter(|(_, m)| m == package)
                .filter_map(|(f, _)| {
                    f.strip_suffix("/__init__.py")
                        .or_else(|| f.strip_suffix("/__init__.pyi"))
                        .map(str::to_string)
                })
                .collect();
            // A namespace package: a folder without `__init__.py` under a root.
            for root in tree.roots {
                let dir = join(root, &parts.join("/"));
                if !under(tree, &dir).is_empty() {
                    dirs.push(dir);
                }
            }
            dirs.sort();
            dirs.dedup();
            path_targets(tree, from, &dirs, path, false)
        }
    }
}

/// Python modules whose dotted name starts with `prefix` (`shop.plugins.` → every module of
/// the package; `shop.plug` → `shop/plug*`).
fn modules_under_prefix(tree: &Tree<'_>, prefix: &str) -> Vec<String> {
    let path_prefix = prefix.replace('.', "/");
    let mut out: Vec<String> = tree
        .roots
        .iter()
        .flat_map(|root| {
            let start = join(root, &path_prefix);
            tree.files
                .range(start.clone()..)
                .take_while(move |f| f.starts_with(&start))
                .filter(|f| is_python(f))
                .cloned()
                .collect::<Vec<_>>()
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

fn is_dotted_name(s: &str) -> bool {
    !s.is_empty()
        && s.split('.').all(|p| {
            p.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
                && p.chars().all(|c| c.is_alphanumeric() || c == '_')
        })
}

pub fn is_python(path: &str) -> bool {
    path.ends_with(".py") || path.ends_with(".pyi")
}

pub fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

pub fn file_name(path: &str) -> &str {
    path.rsplit_once('/').map_or(path, |(_, name)| name)
}

/// Every directory above `path`, nearest first, ending with the root (`""`).
pub fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    let mut next = Some(parent(path));
    std::iter::from_fn(move || {
        let dir = next?;
        next = (!dir.is_empty()).then(|| parent(dir));
        Some(dir)
    })
}

pub fn join(dir: &str, rest: &str) -> String {
    if dir.is_empty() {
        rest.to_string()
    } else {
        format!("{dir}/{rest}")
    }
}

/// Resolves `.` and `..` lexically; a path escaping the root comes back starting with `../`.
pub fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert_eq!(normalize("./a/../b/./c.py"), "b/c.py");
        assert_eq!(normalize("../x"), "../x");
        assert_eq!(
            ancestors("a/b/c.py").collect::<Vec<_>>(),
            vec!["a/b", "a", ""]
        );
        assert_eq!(ancestors("c.py").collect::<Vec<_>>(), vec![""]);
        assert!(
            is_dotted_name("shop.cart") && !is_dotted_name("shop..cart") && !is_dotted_name("1a.b")
        );
    }
}
