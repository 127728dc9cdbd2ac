//! Building the graph: facts resolved against the tree into edges, for a whole tree or, when
//! only some files' contents changed, for those files over a stored graph (`Graph::patch`).

use super::edges::{AddEdge, file_edges};
use super::resolve::{path_targets, under};
use super::tree::Tree;
use super::{EdgeKind, FastMap, Graph, Link, Parts, Strings, UserRef, go_library, go_tests};
use crate::analyze::facts::Facts;
use crate::config::Loads;
use crate::path::{ancestors, file_name, is_python, join, parent};
use std::collections::BTreeMap;

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

/// One file's edges as resolution found them: found on the thread that made the file's
/// facts, the nodes they reach numbered there too, and added to the graph in file order.
pub(crate) struct FileEdges {
    found: Vec<Pending>,
    unbounded: Unbounded,
}

impl FileEdges {
    pub(crate) fn of(
        tree: &Tree<'_>,
        ids: &NodeIds<'_>,
        path: &str,
        facts: &Facts,
        loads: &[Loads],
    ) -> FileEdges {
        let mut found = Vec::new();
        let mut unbounded = Vec::new();
        file_edges(tree, path, facts, loads, &mut found, &mut unbounded);
        // Looked up here, on all cores, rather than one by one where the graph is built.
        for p in &mut found {
            if let Some(&id) = ids.0.get(p.to.as_str()) {
                p.id = Some(id);
                p.to = String::new();
            }
        }
        FileEdges { found, unbounded }
    }
}

/// A full build's node names → ids, shared with the threads that resolve files.
pub(crate) struct NodeIds<'n>(FastMap<&'n str, u32>);

impl Graph {
    /// The graph of `tree`. `feed` hands each analysed file's edges, in file order, to the
    /// sink it is given — the analysis does as it reads the files, so no file's facts need
    /// outlive its edges — and its answer is returned beside the graph; then the edges of the
    /// tree's shape (packages, conftests, plugins, links) and `user`'s are added.
    pub(crate) fn build<T, E>(
        tree: &Tree<'_>,
        user: &[UserRef],
        feed: impl FnOnce(&NodeIds<'_>, &mut dyn FnMut(&str, FileEdges)) -> Result<T, E>,
    ) -> Result<(Graph, T), E> {
        let nodes = node_table(tree);
        let ids = NodeIds(
            nodes
                .iter()
                .enumerate()
                .map(|(i, name)| (name, i as u32))
                .collect(),
        );
        let mut edges = EdgeSet::new(&nodes, Some(&ids.0), Strings::default());
        let mut unbounded = Vec::new();
        let fed = feed(&ids, &mut |path, file| {
            // The file is numbered once, at its first edge to another node (as `add` would).
            let mut from = None;
            for p in file.found {
                if p.id.is_none() && p.to == path {
                    continue;
                }
                let from = *from.get_or_insert_with(|| edges.id(path));
                let to = match p.id {
                    Some(id) => id,
                    None => edges.id(&p.to),
                };
                edges.push(from, to, p.kind, p.line, p.detail);
            }
            unbounded.extend(file.unbounded);
        })?;
        user_edges(tree, user, &mut edges);
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
        conftest_edges(tree, &python, &mut edges);
        plugins(tree, &python, &mut edges);
        let (table, details, links) = edges.finish();
        let graph = Graph::from_parts(table.unwrap_or(nodes), details, links, unbounded);
        Ok((graph, fed))
    }

    /// The graph of `tree` from facts already held (tests).
    #[cfg(test)]
    pub(crate) fn of_facts(tree: &Tree<'_>, facts: &BTreeMap<String, Facts>) -> Graph {
        let fed = Graph::build(tree, &[], |ids, add| {
            for (path, f) in facts {
                add(path, FileEdges::of(tree, ids, path, f, &[]));
            }
            Ok::<(), std::convert::Infallible>(())
        });
        match fed {
            Ok((graph, ())) => graph,
        }
    }
}

impl Parts {
    /// The graph of a tree with the same files as these tables', where only the files in
    /// `changed` have new contents: their facts-derived edges are recomputed, every other edge
    /// is kept (it depends on which files exist, not on these contents). `None` when a new
    /// edge names a node the stored tables lack: only a full build can place it.
    pub(crate) fn patch(
        self,
        tree: &Tree<'_>,
        changed: &BTreeMap<String, Facts>,
        loads: &[Loads],
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
        let mut edges = EdgeSet::new(&nodes, None, details);
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
        links.retain(|l| !(l.kind.is_from_facts() && is_changed[l.from as usize]));
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

/// The edges of what `[[reference]]` extractors found: each path relative to the root or to
/// its file's folder.
fn user_edges(tree: &Tree<'_>, user: &[UserRef], edges: &mut EdgeSet<'_>) {
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
}

/// Each collected test's edges to the conftests pytest loads for it: the root's and those of
/// the folders above it.
fn conftest_edges(tree: &Tree<'_>, python: &[&String], edges: &mut EdgeSet<'_>) {
    let conftests: Vec<&String> = python
        .iter()
        .copied()
        .filter(|f| file_name(f) == "conftest.py")
        .collect();
    // Every collected test, a pytest-mypy-plugins case file or a doctest text file too: a
    // conftest that does not import breaks the whole session.
    let collected = tree.files.iter().filter(|f| {
        (is_python(f) || crate::analyze::is_case_file_name(f) || crate::analyze::is_doctest_text(f))
            && (tree.is_test)(f)
    });
    for test in collected {
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
}

/// A pytest plugin the project registers applies to every test, as a root conftest does: an
/// edge from each test to the plugin's module (and so to everything it imports).
fn plugins(tree: &Tree<'_>, python: &[&String], edges: &mut EdgeSet<'_>) {
    for (module, registered) in tree.plugins {
        let parts: Vec<&str> = module.split('.').collect();
        let files: Vec<String> = super::resolve::resolve_absolute(tree, "", &parts)
            .into_iter()
            .filter(|(_, m)| m == module)
            .map(|(f, _)| f)
            .collect();
        let collected = python.iter().copied().chain(tree.files.iter().filter(|f| {
            crate::analyze::is_case_file_name(f) || crate::analyze::is_doctest_text(f)
        }));
        for test in collected.filter(|f| (tree.is_test)(f)) {
            for file in &files {
                edges.add(test, file.clone(), EdgeKind::Plugin, 0, registered.clone());
            }
        }
    }
}

/// Dynamic imports with no literal part: `(file, line, call)`.
type Unbounded = Vec<(String, u32, String)>;

/// An edge found for one file: its target numbered where the node table has it.
struct Pending {
    to: String,
    /// `to`'s id where the node table has it (`to` is then emptied).
    id: Option<u32>,
    kind: EdgeKind,
    line: u32,
    detail: String,
}

impl AddEdge for Vec<Pending> {
    fn add(&mut self, _from: &str, to: String, kind: EdgeKind, line: u32, detail: String) {
        self.push(Pending {
            to,
            id: None,
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
    index: Option<&'n FastMap<&'n str, u32>>,
    /// Names the table lacks, numbered after it.
    extra: BTreeMap<String, u32>,
    details: Strings,
    detail_ids: FastMap<String, u32>,
    links: Vec<Link>,
}

impl<'n> EdgeSet<'n> {
    fn new(
        nodes: &'n Strings,
        index: Option<&'n FastMap<&'n str, u32>>,
        details: Strings,
    ) -> EdgeSet<'n> {
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
        let known = match self.index {
            Some(index) => index.get(name).copied(),
            None => self.nodes.find(name),
        };
        if let Some(id) = known {
            return id;
        }
        let next = (self.nodes.len() + self.extra.len()) as u32;
        *self.extra.entry(name.to_string()).or_insert(next)
    }

    /// An edge between two numbered nodes; none from a node to itself.
    fn push(&mut self, from: u32, to: u32, kind: EdgeKind, line: u32, detail: String) {
        if from == to {
            return;
        }
        let detail = match self.detail_ids.get(&detail) {
            Some(&id) => id,
            None => {
                let id = self.details.push(&detail);
                self.detail_ids.insert(detail, id);
                id
            }
        };
        // Grown by a quarter, not doubled: the edge list is most of a large graph's memory,
        // and a doubling holds three times it for a moment and leaves half the new one unused.
        if self.links.len() == self.links.capacity() {
            self.links
                .reserve_exact((self.links.capacity() / 4).max(1024));
        }
        self.links.push(Link {
            from,
            to,
            kind,
            line,
            detail,
        });
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
        // Before the lookups: a name the table lacks is numbered only for an edge it has.
        if from == to {
            return;
        }
        let from = self.id(from);
        let to = self.id(&to);
        self.push(from, to, kind, line, detail);
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
    use crate::lang::go::gomod::{is_go, is_go_test, is_package_source};
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
