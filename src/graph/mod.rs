//! Stage 3 — the dependency graph: facts resolved against the tree into edges
//! `from` (the file that needs) → `to` (the file it needs), each with its origin line.
//! Nodes and edges are held as ids into sorted tables, so a stored graph loads as a few
//! blocks and a walk touches no strings; names are looked up only for what a walk reaches.

mod build;
mod resolve;
mod table;

pub use build::Tree;
pub use table::{FastMap, Strings};

use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

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
    /// A symlink needs the file it points at.
    Symlink,
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
    /// Every kind, in declaration order: `ALL[k as usize] == k` (the graph cache stores kinds
    /// as that index).
    pub const ALL: [EdgeKind; 17] = [
        EdgeKind::Import,
        EdgeKind::StringModule,
        EdgeKind::PathLiteral,
        EdgeKind::PackageInit,
        EdgeKind::Conftest,
        EdgeKind::ComputedPath,
        EdgeKind::Subprocess,
        EdgeKind::DynamicImport,
        EdgeKind::Convention,
        EdgeKind::Feature,
        EdgeKind::UserReference,
        EdgeKind::GoPackage,
        EdgeKind::GoTest,
        EdgeKind::Embed,
        EdgeKind::NameMatch,
        EdgeKind::Proximity,
        EdgeKind::Symlink,
    ];

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
                | EdgeKind::Symlink
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
            EdgeKind::Symlink => format!("{from} is a symlink to {to}"),
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

/// One edge as held: ids into the graph's node and detail tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link {
    pub from: u32,
    pub to: u32,
    pub kind: EdgeKind,
    pub line: u32,
    pub detail: u32,
}

impl Link {
    /// Links are held in this order — by the node they point to — so the dependents of a node
    /// are one run and a reverse walk reads memory in order.
    pub fn key(&self) -> (u32, u32, EdgeKind) {
        (self.to, self.from, self.kind)
    }
}

/// A graph's tables without its indexes: what the cache stores and a patch starts from.
pub struct Parts {
    pub nodes: Strings,
    pub details: Strings,
    pub links: Vec<Link>,
    pub unbounded: Vec<(String, u32, String)>,
}

impl Parts {
    /// The ids of `names`, given in sorted order: one pass over both, no searching.
    pub fn ids_of_sorted<'n>(
        &self,
        names: impl Iterator<Item = &'n str>,
    ) -> impl Iterator<Item = Option<u32>> {
        let mut at = 0;
        names.map(move |name| {
            while at < self.nodes.len() && self.nodes.get(at as u32) < name {
                at += 1;
            }
            (at < self.nodes.len() && self.nodes.get(at as u32) == name).then_some(at as u32)
        })
    }
}

pub struct Graph {
    /// Every node's name, sorted: a node's id is its place here, so id order is name order.
    nodes: Strings,
    /// The module or string each edge names.
    details: Strings,
    /// In `Link::key` order: the edges into a node are one run.
    links: Vec<Link>,
    /// Dynamic imports with no literal part: `(file, line, call)`. Whatever depends on the file
    /// may load any module, so changes cannot be bounded against it.
    pub unbounded: Vec<(String, u32, String)>,
    /// Per node: where its run of incoming links starts (one entry more than nodes).
    in_start: Vec<u32>,
    /// Per node: the links out of it, `out_links[out_start[n]..out_start[n + 1]]`; built on
    /// the first walk towards dependencies (selection never needs it).
    out: std::sync::OnceLock<(Vec<u32>, Vec<u32>)>,
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
    /// A graph over sorted `nodes` whose `links` are in `Link::key` order and name only ids
    /// of the tables; the run index is one pass.
    pub fn from_parts(
        nodes: Strings,
        details: Strings,
        links: Vec<Link>,
        mut unbounded: Vec<(String, u32, String)>,
    ) -> Graph {
        let n = nodes.len();
        let mut in_start = Vec::with_capacity(n + 1);
        let mut at = 0;
        for node in 0..=n as u32 {
            while at < links.len() && links[at].to < node {
                at += 1;
            }
            in_start.push(at as u32);
        }
        unbounded.sort();
        Graph {
            nodes,
            details,
            links,
            unbounded,
            in_start,
            out: std::sync::OnceLock::new(),
        }
    }

    /// Per node, the links out of it (a counting sort, built once).
    fn out(&self) -> &(Vec<u32>, Vec<u32>) {
        self.out.get_or_init(|| {
            let n = self.nodes.len();
            let mut start = vec![0u32; n + 1];
            for l in &self.links {
                start[l.from as usize + 1] += 1;
            }
            for i in 0..n {
                start[i + 1] += start[i];
            }
            let mut next = start.clone();
            let mut out = vec![0u32; self.links.len()];
            // In (from, to, kind) order within each node, as links are ordered by `to` first.
            for (i, l) in self.links.iter().enumerate() {
                let at = &mut next[l.from as usize];
                out[*at as usize] = i as u32;
                *at += 1;
            }
            (start, out)
        })
    }

    /// What the graph cache stores.
    pub fn parts(&self) -> (&Strings, &Strings, &[Link]) {
        (&self.nodes, &self.details, &self.links)
    }

    pub fn id(&self, name: &str) -> Option<u32> {
        self.nodes.find(name)
    }

    pub fn name(&self, id: u32) -> &str {
        self.nodes.get(id)
    }

    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    pub fn edge(&self, i: u32) -> Edge {
        let l = self.links[i as usize];
        Edge {
            from: self.nodes.get(l.from).to_string(),
            to: self.nodes.get(l.to).to_string(),
            kind: l.kind,
            line: l.line,
            detail: self.details.get(l.detail).to_string(),
        }
    }

    /// Every edge, in (from, to, kind) order.
    pub fn edges(&self) -> impl Iterator<Item = Edge> + '_ {
        self.out().1.iter().map(|&i| self.edge(i))
    }

    /// Per node id: whether it is one of `names`.
    pub fn mask<'n>(&self, names: impl IntoIterator<Item = &'n String>) -> Vec<bool> {
        let mut mask = vec![false; self.nodes.len()];
        for id in names.into_iter().filter_map(|n| self.id(n)) {
            mask[id as usize] = true;
        }
        mask
    }

    pub fn kinds(&self) -> impl Iterator<Item = EdgeKind> + '_ {
        self.links.iter().map(|l| l.kind)
    }

    pub fn has_dependents(&self, path: &str) -> bool {
        self.id(path)
            .is_some_and(|i| self.in_start[i as usize] < self.in_start[i as usize + 1])
    }

    fn dependents(&self, node: u32) -> std::ops::Range<u32> {
        self.in_start[node as usize]..self.in_start[node as usize + 1]
    }

    /// Walks from `start` along dependents (towards tests) or dependencies (from a test).
    /// Each reached node keeps the edge it was first reached by, so chains are shortest paths;
    /// with `max_depth`, nodes beyond the cap are reported in `cut`, never silently dropped.
    pub fn walk(&self, start: &str, direction: Direction, max_depth: Option<u32>) -> Walk {
        let n = self.nodes.len();
        let mut walk = Walk {
            start: self.id(start),
            via: Vec::new(),
            reached: Vec::new(),
            cut: Vec::new(),
        };
        let Some(start_id) = walk.start else {
            return walk;
        };
        walk.via = vec![NONE; n];
        let mut depth: Vec<u32> = vec![u32::MAX; n];
        depth[start_id as usize] = 0;
        let mut queue: VecDeque<u32> = VecDeque::from([start_id]);
        while let Some(node) = queue.pop_front() {
            let d = depth[node as usize];
            let mut visit = |i: u32, next: u32| {
                if depth[next as usize] != u32::MAX {
                    return;
                }
                depth[next as usize] = d + 1;
                if max_depth.is_some_and(|m| d + 1 > m) {
                    walk.cut.push(next);
                } else {
                    walk.via[next as usize] = i;
                    walk.reached.push(next);
                }
                queue.push_back(next);
            };
            match direction {
                Direction::Dependents => {
                    for i in self.dependents(node) {
                        visit(i, self.links[i as usize].from);
                    }
                }
                Direction::Dependencies => {
                    let (start, out) = self.out();
                    let run = start[node as usize]..start[node as usize + 1];
                    for &i in &out[run.start as usize..run.end as usize] {
                        visit(i, self.links[i as usize].to);
                    }
                }
            }
        }
        walk.reached.sort_unstable();
        walk.cut.sort_unstable();
        walk
    }
}

const NONE: u32 = u32::MAX;

#[derive(Clone, Copy)]
pub enum Direction {
    Dependents,
    Dependencies,
}

/// The nodes a walk reached, each with the edge that first reached it.
pub struct Walk {
    start: Option<u32>,
    /// Per node id: the link that reached it, `NONE` where none did.
    via: Vec<u32>,
    /// Reached nodes (within the depth cap), in id order, which is name order.
    reached: Vec<u32>,
    /// Nodes only reachable past `max_depth`, in name order.
    cut: Vec<u32>,
}

impl Walk {
    /// Every reached node's name, sorted.
    pub fn nodes<'g>(&'g self, graph: &'g Graph) -> impl Iterator<Item = &'g str> + 'g {
        self.reached.iter().map(|&i| graph.name(i))
    }

    /// Every reached node's id, in name order.
    pub fn ids(&self) -> &[u32] {
        &self.reached
    }

    pub fn cut<'g>(&'g self, graph: &'g Graph) -> impl Iterator<Item = &'g str> + 'g {
        self.cut.iter().map(|&i| graph.name(i))
    }

    /// The edges from `node` back to the start, in order.
    pub fn chain(&self, graph: &Graph, node: &str) -> Vec<Edge> {
        let mut chain = Vec::new();
        let (Some(start), Some(mut at)) = (self.start, graph.id(node)) else {
            return chain;
        };
        while let Some(&i) = self.via.get(at as usize).filter(|&&i| i != NONE) {
            let l = graph.links[i as usize];
            chain.push(graph.edge(i));
            at = if l.from == at { l.to } else { l.from };
            if at == start || chain.len() > self.reached.len() {
                break;
            }
        }
        chain
    }
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
    use super::resolve::is_dotted_name;
    use super::*;

    #[test]
    fn kinds_index_themselves() {
        for (i, k) in EdgeKind::ALL.iter().enumerate() {
            assert_eq!(*k as usize, i, "{k:?}");
        }
    }

    /// A patch over the stored tables equals a build from scratch, edge for edge, whether a
    /// change adds edges before, among or after the kept ones, or drops them.
    #[test]
    fn a_patch_equals_a_fresh_build() {
        use std::collections::{BTreeMap, BTreeSet};
        let sources = |edits: &[(&str, &str)]| -> BTreeMap<String, String> {
            let mut s: BTreeMap<String, String> = [
                ("a.py", "import m\n"),
                ("m.py", "import z\nimport n\n"),
                ("n.py", ""),
                ("z.py", "import n\n"),
                ("test_a.py", "import a\nimport z\n"),
                ("data.json", "{}"),
            ]
            .iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect();
            for (p, t) in edits {
                s.insert(p.to_string(), t.to_string());
            }
            s
        };
        let files: BTreeSet<String> = sources(&[]).into_keys().collect();
        let roots = vec![String::new()];
        let is_test = |p: &str| p.starts_with("test_");
        let go = Default::default();
        let links = BTreeMap::new();
        let tree = Tree::new(&files, &links, &roots, &is_test, None, &go);
        let facts = |s: &BTreeMap<String, String>, only: Option<&str>| {
            s.iter()
                .filter(|(p, _)| is_python(p) && only.is_none_or(|o| o == *p))
                .map(|(p, t)| (p.clone(), crate::analyze::facts_of(p, t.as_bytes())))
                .collect::<BTreeMap<_, _>>()
        };
        let build = |s: &BTreeMap<String, String>| Graph::build(&tree, &facts(s, None), &[], &[]);
        let edits: &[(&str, &str)] = &[
            ("z.py", "import a\nimport m\nOPEN = open('data.json')\n"),
            ("m.py", ""),
            ("a.py", "import z\nimport n\nimport m\n"),
            ("test_a.py", "import n\n"),
        ];
        for &(file, text) in edits {
            let before = build(&sources(&[]));
            let after = sources(&[(file, text)]);
            let parts = Parts {
                nodes: before.nodes,
                details: before.details,
                links: before.links,
                unbounded: before.unbounded,
            };
            let patched = parts.patch(&tree, &facts(&after, Some(file)), &[]).unwrap();
            let fresh = build(&after);
            assert_eq!(
                patched.edges().collect::<Vec<_>>(),
                fresh.edges().collect::<Vec<_>>(),
                "{file}"
            );
            let walk = |g: &Graph| {
                let w = g.walk("n.py", Direction::Dependents, None);
                w.nodes(g).map(str::to_string).collect::<Vec<_>>()
            };
            assert_eq!(walk(&patched), walk(&fresh), "{file}");
        }
    }

    /// Only a package with `_test.go` files, outside `vendor/`, has a test unit with edges.
    #[test]
    fn only_tested_packages_get_test_edges() {
        use std::collections::{BTreeMap, BTreeSet};
        let files: BTreeSet<String> = [
            "go.mod",
            "a/a.go",
            "a/a_test.go",
            "b/b.go",
            "vendor/v/v.go",
            "vendor/v/v_test.go",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let read = |f: &str| (f == "go.mod").then(|| b"module example.com/m\n".to_vec());
        let go = crate::analyze::gomod::GoLayout::detect(&files, &read);
        let roots = vec![String::new()];
        let links = BTreeMap::new();
        let is_test = |_: &str| false;
        let tree = Tree::new(&files, &links, &roots, &is_test, None, &go);
        let graph = Graph::build(&tree, &BTreeMap::new(), &[], &[]);
        let from_units: BTreeSet<String> = graph
            .edges()
            .filter(|e| e.kind == EdgeKind::GoTest)
            .map(|e| e.from)
            .collect();
        assert_eq!(from_units.into_iter().collect::<Vec<_>>(), ["./a"]);
    }

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
