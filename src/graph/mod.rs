//! Stage 4 — the dependency graph: facts resolved against the tree into edges
//! `from` (the file that needs) → `to` (the file it needs), each with its origin line.
//! Nodes and edges are held as ids into sorted tables, so a stored graph loads as a few
//! blocks and a walk touches no strings; names are looked up only for what a walk reaches.

mod build;
mod components;
mod edge;
mod edges;
mod node;
mod resolve;
mod table;
mod tree;
mod walk;

pub(crate) use build::FileEdges;
pub(crate) use components::{Components, Needs};
pub(crate) use edge::{Edge, EdgeKind, UserRef, explain_chain};
pub(crate) use node::Node;
pub(crate) use table::{FastMap, Strings};
pub(crate) use tree::Tree;
pub(crate) use walk::{Direction, Walk};

/// One edge as held: ids into the graph's node and detail tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Link {
    pub from: u32,
    pub to: u32,
    pub kind: EdgeKind,
    pub line: u32,
    pub detail: u32,
}

impl Link {
    /// Links are held in this order — by the node they point to — so the dependents of a node
    /// are one run and a reverse walk reads memory in order.
    pub(crate) fn key(&self) -> (u32, u32, EdgeKind) {
        (self.to, self.from, self.kind)
    }
}

/// A graph's tables without its indexes: what the cache stores and a patch starts from.
pub(crate) struct Parts {
    pub nodes: Strings,
    pub details: Strings,
    pub links: Vec<Link>,
    pub unbounded: Vec<(String, u32, String)>,
}

impl Parts {
    /// The ids of `names`, given in sorted order: one pass over both, no searching.
    pub(crate) fn ids_of_sorted<'n>(
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

pub(crate) struct Graph {
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
pub(crate) fn go_library(dir: &str) -> String {
    Node::GoPackage(dir).name()
}

/// The graph node of the tests of Go package `dir`: what `go test ./dir` runs.
pub(crate) fn go_tests(dir: &str) -> String {
    Node::GoTests(dir).name()
}

/// The package folder of a Go node.
pub(crate) fn go_dir_of(node: &str) -> &str {
    Node::of(node).dir()
}

/// Whether a node is the tests of a Go package (a test unit `go test` runs).
pub(crate) fn is_go_unit(node: &str) -> bool {
    matches!(Node::of(node), Node::GoTests(_))
}

impl Graph {
    /// A graph over sorted `nodes` whose `links` are in `Link::key` order and name only ids
    /// of the tables; the run index is one pass.
    pub(crate) fn from_parts(
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
    pub(crate) fn parts(&self) -> (&Strings, &Strings, &[Link]) {
        (&self.nodes, &self.details, &self.links)
    }

    pub(crate) fn id(&self, name: &str) -> Option<u32> {
        self.nodes.find(name)
    }

    pub(crate) fn name(&self, id: u32) -> &str {
        self.nodes.get(id)
    }

    pub(crate) fn node_count(&self) -> usize {
        self.nodes.len()
    }

    pub(crate) fn edge(&self, i: u32) -> Edge {
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
    pub(crate) fn edges(&self) -> impl Iterator<Item = Edge> + '_ {
        self.out().1.iter().map(|&i| self.edge(i))
    }

    /// Per node id: whether it is one of `names`.
    pub(crate) fn mask<'n>(&self, names: impl IntoIterator<Item = &'n String>) -> Vec<bool> {
        let mut mask = vec![false; self.nodes.len()];
        for id in names.into_iter().filter_map(|n| self.id(n)) {
            mask[id as usize] = true;
        }
        mask
    }

    pub(crate) fn kinds(&self) -> impl Iterator<Item = EdgeKind> + '_ {
        self.links.iter().map(|l| l.kind)
    }

    pub(crate) fn has_dependents(&self, path: &str) -> bool {
        self.id(path)
            .is_some_and(|i| self.in_start[i as usize] < self.in_start[i as usize + 1])
    }

    /// Whether anything outside folder `dir` depends on a file inside it that `counts`: the
    /// only way a walk from outside (a test there) reaches in. Id order is name order, so the folder's
    /// files are one run of ids.
    pub(crate) fn reached_from_outside(&self, dir: &str, counts: impl Fn(&str) -> bool) -> bool {
        let prefix = format!("{dir}/");
        let first = |before: &dyn Fn(&str) -> bool| {
            let (mut lo, mut hi) = (0u32, self.nodes.len() as u32);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if before(self.nodes.get(mid)) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            lo
        };
        let start = first(&|n| n < prefix.as_str());
        let end = first(&|n| n < prefix.as_str() || n.starts_with(&prefix));
        (start..end)
            .filter(|&n| counts(self.nodes.get(n)))
            .any(|node| {
                self.dependents(node).any(|i| {
                    !self
                        .nodes
                        .get(self.links[i as usize].from)
                        .starts_with(&prefix)
                })
            })
    }

    /// Whether a file imports `path`, or a convention ties it to the files that use it (a
    /// snapshot to its test, a mock to its module): whoever needs it reaches it through the
    /// graph. A file read only by a path, or by no file at all (what a runner loads itself),
    /// is none.
    pub(crate) fn imported(&self, path: &str) -> bool {
        self.id(path).is_some_and(|i| {
            self.dependents(i).any(|l| {
                matches!(
                    self.links[l as usize].kind,
                    EdgeKind::Import | EdgeKind::Convention
                )
            })
        })
    }

    /// The nodes that need `node` directly.
    pub(crate) fn dependents_of(&self, node: u32) -> impl Iterator<Item = u32> + '_ {
        self.dependents(node).map(|i| self.links[i as usize].from)
    }

    fn dependents(&self, node: u32) -> std::ops::Range<u32> {
        self.in_start[node as usize]..self.in_start[node as usize + 1]
    }
}

#[cfg(test)]
mod tests {
    use super::resolve::is_dotted_name;
    use super::*;
    use crate::path::is_python;

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
        let build = |s: &BTreeMap<String, String>| Graph::of_facts(&tree, &facts(s, None));
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

    /// A Python file's relative path is read from where pytest runs (the root) first, then
    /// from the file's folder; a Go file's from its package folder (where `go test` runs).
    #[test]
    fn relative_paths_start_where_the_runner_runs() {
        use std::collections::{BTreeMap, BTreeSet};
        let files: BTreeSet<String> = [
            "config.json",
            "app/config.json",
            "app/x.py",
            "pkg/p.go",
            "pkg/config.json",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let sources = [
            ("app/x.py", "open('config.json')\n"),
            (
                "pkg/p.go",
                "package p\n\nimport \"os\"\n\nvar _, _ = os.ReadFile(\"config.json\")\n",
            ),
        ];
        let facts: BTreeMap<String, crate::analyze::facts::Facts> = sources
            .iter()
            .map(|(p, s)| (p.to_string(), crate::analyze::facts_of(p, s.as_bytes())))
            .collect();
        let roots = vec![String::new()];
        let links = BTreeMap::new();
        let is_test = |_: &str| false;
        let go = Default::default();
        let tree = Tree::new(&files, &links, &roots, &is_test, None, &go);
        let graph = Graph::of_facts(&tree, &facts);
        let to = |from: &str| -> Vec<String> {
            graph
                .edges()
                .filter(|e| e.from == from && e.kind == EdgeKind::PathLiteral)
                .map(|e| e.to)
                .collect()
        };
        assert_eq!(to("app/x.py"), ["config.json"]);
        assert_eq!(to("pkg/p.go"), ["pkg/config.json"]);
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
        let go = crate::lang::go::gomod::GoLayout::detect(&files, &read);
        let roots = vec![String::new()];
        let links = BTreeMap::new();
        let is_test = |_: &str| false;
        let tree = Tree::new(&files, &links, &roots, &is_test, None, &go);
        let graph = Graph::of_facts(&tree, &BTreeMap::new());
        let from_units: BTreeSet<String> = graph
            .edges()
            .filter(|e| e.kind == EdgeKind::GoTest)
            .map(|e| e.from)
            .collect();
        assert_eq!(from_units.into_iter().collect::<Vec<_>>(), ["./a"]);
    }

    #[test]
    fn paths() {
        assert!(
            is_dotted_name("shop.cart") && !is_dotted_name("shop..cart") && !is_dotted_name("1a.b")
        );
    }
}
