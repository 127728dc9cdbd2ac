//! Building the graph: facts resolved against the tree into edges, for a whole tree or, when
//! only some files' contents changed, for those files over a stored graph (`Graph::patch`).

use super::resolve::{
    is_dotted_name, modules_under_prefix, path_targets, resolve_absolute, resolve_import,
    resolve_in, under, value_targets,
};
use super::{
    EdgeKind, FastMap, Graph, Link, Parts, Strings, UserRef, ancestors, file_name, go_library,
    go_tests, is_python, join, parent,
};
use crate::analyze::facts::{Facts, StringContext};
use crate::repo::snapshot::{LinkTarget, link_target};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

/// What the project's files are, for resolution.
pub struct Tree<'a> {
    /// Files of the gated tree plus deleted paths, so an import of a deleted module still
    /// resolves to it and its importers are selected.
    pub files: &'a BTreeSet<String>,
    pub roots: &'a [String],
    pub is_test: &'a (dyn Fn(&str) -> bool + Sync),
    /// pytest-bdd's `bdd_features_base_dir`, when the ini sets one.
    pub feature_base: Option<&'a str>,
    /// Go modules and packages, when the tree has Go code.
    pub go: &'a crate::analyze::gomod::GoLayout,
    /// Python module stems (`src/shop/cart` for `src/shop/cart.py` and
    /// `src/shop/cart/__init__.py`) → their files: resolution is a hash lookup per candidate.
    /// Borrowed from `files`, so a large tree's index costs no copies.
    pub modules: FastMap<&'a str, ModuleFiles<'a>>,
    /// Folders holding an `__init__.py`: regular packages.
    pub packages: FastMap<&'a str, ()>,
    /// Symlinks of the tree → where they point inside it (links leaving it are left out).
    pub links: BTreeMap<&'a str, String>,
    /// The links among `links` that name a folder: a path through one is resolved in its target.
    pub dir_links: BTreeMap<&'a str, String>,
    /// Every symlink, wherever it points.
    pub link_paths: BTreeSet<&'a str>,
}

/// The files of one module, in name order: at most `x.py`, `x.pyi`, `x/__init__.py` and
/// `x/__init__.pyi`.
#[derive(Default, Clone, Copy)]
pub struct ModuleFiles<'a>([&'a str; 4], usize);

impl<'a> ModuleFiles<'a> {
    fn push(&mut self, file: &'a str) {
        if let Some(slot) = self.0.get_mut(self.1) {
            *slot = file;
            self.1 += 1;
        }
    }

    pub fn files(&self) -> &[&'a str] {
        &self.0[..self.1]
    }
}

impl<'a> Tree<'a> {
    pub fn new(
        files: &'a BTreeSet<String>,
        links: &'a BTreeMap<String, String>,
        roots: &'a [String],
        is_test: &'a (dyn Fn(&str) -> bool + Sync),
        feature_base: Option<&'a str>,
        go: &'a crate::analyze::gomod::GoLayout,
    ) -> Tree<'a> {
        let python = files.iter().filter(|f| is_python(f));
        let mut modules: FastMap<&str, ModuleFiles<'_>> =
            FastMap::with_capacity_and_hasher(python.clone().count(), Default::default());
        let mut packages = FastMap::default();
        for f in python {
            if let Some(dir) = f.strip_suffix("/__init__.py") {
                packages.insert(dir, ());
            }
            let stem = f
                .strip_suffix(".pyi")
                .or_else(|| f.strip_suffix(".py"))
                .unwrap_or(f);
            let stem = stem
                .strip_suffix("/__init__")
                .unwrap_or(if stem == "__init__" { "" } else { stem });
            modules.entry(stem).or_default().push(f);
        }
        let link_paths = links.keys().map(String::as_str).collect();
        let links: BTreeMap<&str, String> = links
            .iter()
            .filter_map(|(link, text)| match link_target(link, text) {
                LinkTarget::Inside(target) => Some((link.as_str(), target)),
                LinkTarget::Outside => None,
            })
            .collect();
        let dir_links = links
            .iter()
            .filter(|(_, target)| {
                !files.contains(*target) && !files_under(files, target).is_empty()
            })
            .map(|(link, target)| (*link, target.clone()))
            .collect();
        Tree {
            files,
            roots,
            is_test,
            feature_base,
            go,
            modules,
            packages,
            links,
            dir_links,
            link_paths,
        }
    }

    /// The symlink among the leading folders of `path`, if one is: whatever `path` names, it
    /// names it through that link (which may point nowhere, or out of the tree).
    pub fn leading_link(&self, path: &str) -> Option<&'a str> {
        if self.link_paths.is_empty() {
            return None;
        }
        prefixes(path).find_map(|prefix| self.link_paths.get(prefix).copied())
    }

    /// `path` with a folder symlink among its leading parts (or the path itself) replaced by
    /// the link's target (`src/shopalias/cart` → `src/shop/cart`), and that link; links within
    /// links are followed a few levels deep. `None` when no folder link leads the path.
    pub fn through_links(&self, path: &str) -> Option<(String, &str)> {
        if self.dir_links.is_empty() {
            return None;
        }
        let mut at = path.to_string();
        let mut first = None;
        for _ in 0..8 {
            let link = prefixes(&at).find_map(|prefix| self.dir_links.get_key_value(prefix));
            let Some((&link, target)) = link else { break };
            at = match at.get(link.len() + 1..) {
                Some(rest) => join(target, rest),
                None => target.clone(),
            };
            first.get_or_insert(link);
        }
        first.map(|link| (at, link))
    }
}

/// `a`, `a/b`, `a/b/c` of `a/b/c`: the path's leading folders, then the path itself.
fn prefixes(path: &str) -> impl Iterator<Item = &str> {
    path.match_indices('/')
        .map(|(i, _)| &path[..i])
        .chain(std::iter::once(path))
}

fn files_under<'f>(files: &'f BTreeSet<String>, dir: &str) -> Vec<&'f String> {
    let prefix = if dir.is_empty() {
        String::new()
    } else {
        format!("{dir}/")
    };
    files
        .range(prefix.clone()..)
        .take_while(|f| f.starts_with(&prefix))
        .collect()
}

/// Every node a graph of `tree` can have, sorted: its files (deleted ones included) and its Go
/// packages and test units.
fn node_table(tree: &Tree<'_>) -> Strings {
    let go: Vec<String> = tree
        .go
        .packages
        .iter()
        .flat_map(|dir| [go_library(dir), go_tests(dir)])
        .collect();
    let mut names: Vec<&str> = tree.files.iter().map(String::as_str).collect();
    names.extend(go.iter().map(String::as_str));
    names.sort_unstable();
    names.dedup();
    let mut table = Strings::default();
    for name in names {
        table.push(name);
    }
    table
}

impl Graph {
    pub fn build(
        tree: &Tree<'_>,
        facts: &BTreeMap<String, Facts>,
        user: &[UserRef],
        loads: &[crate::config::Loads],
    ) -> Graph {
        let nodes = node_table(tree);
        let mut edges = EdgeSet::new(&nodes, true, Strings::default());
        let mut unbounded = Vec::new();
        // Resolution is the costly part and each file's is its own: in parallel, collected in
        // file order so the graph does not depend on the thread count, a batch at a time so
        // the found names are not all held at once.
        let files: Vec<(&String, &Facts)> = facts.iter().collect();
        for batch in files.chunks(2048) {
            let per_file: Vec<(&String, Vec<Pending>, Unbounded)> = batch
                .par_iter()
                .map(|&(path, f)| {
                    let mut found = Vec::new();
                    let mut unbounded = Vec::new();
                    file_edges(tree, path, f, loads, &mut found, &mut unbounded);
                    (path, found, unbounded)
                })
                .collect();
            for (path, found, file_unbounded) in per_file {
                for p in found {
                    edges.add(path, p.to, p.kind, p.line, p.detail);
                }
                unbounded.extend(file_unbounded);
            }
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
        symlinks(tree, &mut edges);
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
        let (table, details, links) = edges.finish();
        Graph::from_parts(table.unwrap_or(nodes), details, links, unbounded)
    }
}

impl Parts {
    /// The graph of a tree with the same files as these tables', where only the files in
    /// `changed` have new contents: their facts-derived edges are recomputed, every other edge
    /// is kept (it depends on which files exist, not on these contents). `None` when a new
    /// edge names a node the stored tables lack: only a full build can place it.
    pub fn patch(
        self,
        tree: &Tree<'_>,
        changed: &BTreeMap<String, Facts>,
        loads: &[crate::config::Loads],
    ) -> Option<Graph> {
        let Parts {
            nodes,
            details,
            links,
            unbounded,
        } = self;
        let mut unbounded: Vec<(String, u32, String)> = unbounded
            .into_iter()
            .filter(|(f, _, _)| !changed.contains_key(f))
            .collect();
        let mut edges = EdgeSet::new(&nodes, false, details);
        let mut is_changed = vec![false; nodes.len()];
        for (path, f) in changed {
            file_edges(tree, path, f, loads, &mut edges, &mut unbounded);
            if let Some(id) = nodes.find(path) {
                is_changed[id as usize] = true;
            }
        }
        let (table, details, fresh) = edges.finish();
        if table.is_some() {
            return None;
        }
        // Both sides are in key order and share no key (the fresh edges replace every
        // facts-derived edge of their files): merged from the back, in place, so a large edge
        // list is neither sorted nor copied (the dropped edges usually leave room).
        let mut links = links;
        links.retain(|l| !(l.kind.from_facts() && is_changed[l.from as usize]));
        let (mut kept, mut added) = (links.len(), fresh.len());
        if let Some(&filler) = fresh.first() {
            links.resize(kept + added, filler);
        }
        for at in (0..links.len()).rev() {
            if added == 0 {
                break;
            }
            if kept > 0 && links[kept - 1].key() > fresh[added - 1].key() {
                links[at] = links[kept - 1];
                kept -= 1;
            } else {
                links[at] = fresh[added - 1];
                added -= 1;
            }
        }
        Some(Graph::from_parts(nodes, details, links, unbounded))
    }
}

/// Dynamic imports with no literal part: `(file, line, call)`.
type Unbounded = Vec<(String, u32, String)>;

/// Where edges go as they are found.
pub trait AddEdge {
    fn add(&mut self, from: &str, to: String, kind: EdgeKind, line: u32, detail: String);
}

/// An edge found for one file, before it is numbered.
struct Pending {
    to: String,
    kind: EdgeKind,
    line: u32,
    detail: String,
}

impl AddEdge for Vec<Pending> {
    fn add(&mut self, _from: &str, to: String, kind: EdgeKind, line: u32, detail: String) {
        self.push(Pending {
            to,
            kind,
            line,
            detail,
        });
    }
}

/// Edges being collected as ids: one per (from, to, kind) in the end, with the first line
/// that makes it.
struct EdgeSet<'n> {
    nodes: &'n Strings,
    /// Name → id, for a full build's many lookups; a patch's few search the sorted table.
    index: Option<FastMap<&'n str, u32>>,
    /// Names the table lacks, numbered after it.
    extra: BTreeMap<String, u32>,
    details: Strings,
    detail_ids: FastMap<String, u32>,
    links: Vec<Link>,
}

impl<'n> EdgeSet<'n> {
    fn new(nodes: &'n Strings, index: bool, details: Strings) -> EdgeSet<'n> {
        let index = index.then(|| {
            nodes
                .iter()
                .enumerate()
                .map(|(i, name)| (name, i as u32))
                .collect()
        });
        EdgeSet {
            nodes,
            index,
            extra: BTreeMap::new(),
            details,
            detail_ids: FastMap::default(),
            links: Vec::new(),
        }
    }

    fn id(&mut self, name: &str) -> u32 {
        let known = match &self.index {
            Some(index) => index.get(name).copied(),
            None => self.nodes.find(name),
        };
        if let Some(id) = known {
            return id;
        }
        let next = (self.nodes.len() + self.extra.len()) as u32;
        *self.extra.entry(name.to_string()).or_insert(next)
    }

    /// The node table when names outside it were added (ids renumbered to keep name order),
    /// the details, and the links in key order, one per (from, to, kind) with its first line.
    fn finish(mut self) -> (Option<Strings>, Strings, Vec<Link>) {
        let mut table = None;
        if !self.extra.is_empty() {
            let n = self.nodes.len();
            let mut names: Vec<(&str, u32)> = self.nodes.iter().zip(0..).collect();
            names.extend(self.extra.iter().map(|(name, &id)| (name.as_str(), id)));
            names.sort_unstable();
            let mut new_id = vec![0u32; n + self.extra.len()];
            let mut sorted = Strings::default();
            for (name, old) in names {
                new_id[old as usize] = sorted.push(name);
            }
            for l in &mut self.links {
                l.from = new_id[l.from as usize];
                l.to = new_id[l.to as usize];
            }
            table = Some(sorted);
        }
        // Stable: among equal lines the first found wins.
        self.links.sort_by_key(|l| (l.from, l.to, l.kind, l.line));
        self.links.dedup_by_key(|l| (l.from, l.to, l.kind));
        self.links.sort_unstable_by_key(Link::key);
        (table, self.details, self.links)
    }
}

impl AddEdge for EdgeSet<'_> {
    fn add(&mut self, from: &str, to: String, kind: EdgeKind, line: u32, detail: String) {
        if from == to {
            return;
        }
        let from = self.id(from);
        let to = self.id(&to);
        let detail = match self.detail_ids.get(&detail) {
            Some(&id) => id,
            None => {
                let id = self.details.push(&detail);
                self.detail_ids.insert(detail, id);
                id
            }
        };
        self.links.push(Link {
            from,
            to,
            kind,
            line,
            detail,
        });
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
    edges: &mut impl AddEdge,
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

/// A symlink to a file of the tree needs that file. A link to a folder has no edges of its own:
/// what resolves through it gets an edge to the file it reaches and one to the link.
fn symlinks(tree: &Tree<'_>, edges: &mut impl AddEdge) {
    for (link, target) in &tree.links {
        if tree.files.contains(target) {
            edges.add(link, target.clone(), EdgeKind::Symlink, 0, target.clone());
        }
    }
}

/// Go packages: each is built from its files; its tests from its `_test.go` files, the package
/// and `testdata/`.
fn go_packages(tree: &Tree<'_>, edges: &mut impl AddEdge) {
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
