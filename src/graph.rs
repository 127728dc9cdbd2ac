//! Stage 3 — the dependency graph: facts resolved against the tree into edges
//! `from` (the file that needs) → `to` (the file it needs), each with its origin line.
//! Edges are kept sorted; the reverse index answers "who depends on this file?".

use crate::analyze::python::{Facts, Import, StringContext};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
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
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Edge {
    pub from: String,
    pub to: String,
    pub kind: EdgeKind,
    /// The line in `from` that creates the edge (0 where no line does).
    pub line: u32,
    /// The module or string named.
    pub detail: String,
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
        }
    }
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
    dependents: BTreeMap<String, Vec<usize>>,
    dependencies: BTreeMap<String, Vec<usize>>,
}

/// What the project's files are, for resolution.
pub struct Tree<'a> {
    /// Files of the gated tree plus deleted paths, so an import of a deleted module still
    /// resolves to it and its importers are selected.
    pub files: &'a BTreeSet<String>,
    pub roots: &'a [String],
    pub is_test: &'a dyn Fn(&str) -> bool,
}

impl Graph {
    pub fn build(tree: &Tree<'_>, facts: &BTreeMap<String, Facts>) -> Graph {
        let mut edges: BTreeMap<(String, String, EdgeKind), (u32, String)> = BTreeMap::new();
        let mut add = |from: &str, to: String, kind, line, detail: String| {
            if from == to {
                return;
            }
            edges
                .entry((from.to_string(), to, kind))
                .and_modify(|e| {
                    if line < e.0 {
                        *e = (line, detail.clone());
                    }
                })
                .or_insert((line, detail));
        };
        for (path, f) in facts {
            for import in &f.imports {
                for (to, module) in resolve_import(tree, path, import) {
                    add(path, to, EdgeKind::Import, import.line, module);
                }
            }
            for s in &f.strings {
                let dotted = s.value.split(':').next().unwrap_or_default();
                if s.context == StringContext::Plain
                    && let Some(to) = path_literal(tree, path, &s.value)
                {
                    add(path, to, EdgeKind::PathLiteral, s.line, s.value.clone());
                } else if is_dotted_name(dotted) {
                    let parts: Vec<&str> = dotted.split('.').collect();
                    for (to, module) in resolve_absolute(tree, path, &parts) {
                        add(path, to, EdgeKind::StringModule, s.line, module);
                    }
                }
            }
        }
        let python: Vec<&String> = tree.files.iter().filter(|f| is_python(f)).collect();
        for file in &python {
            for dir in ancestors(file) {
                let init = join(dir, "__init__.py");
                if tree.files.contains(&init) {
                    add(file, init, EdgeKind::PackageInit, 0, dir.replace('/', "."));
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
                    add(
                        test,
                        conftest.to_string(),
                        EdgeKind::Conftest,
                        0,
                        String::new(),
                    );
                }
            }
        }
        let edges: Vec<Edge> = edges
            .into_iter()
            .map(|((from, to, kind), (line, detail))| Edge {
                from,
                to,
                kind,
                line,
                detail,
            })
            .collect();
        let mut dependents: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        let mut dependencies: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (i, e) in edges.iter().enumerate() {
            dependents.entry(e.to.clone()).or_default().push(i);
            dependencies.entry(e.from.clone()).or_default().push(i);
        }
        Graph {
            edges,
            dependents,
            dependencies,
        }
    }

    pub fn has_dependents(&self, path: &str) -> bool {
        self.dependents.contains_key(path)
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
        let mut depth: BTreeMap<String, u32> = BTreeMap::from([(start.to_string(), 0)]);
        let mut queue = VecDeque::from([start.to_string()]);
        while let Some(node) = queue.pop_front() {
            let d = depth[&node];
            for &i in index.get(&node).map(Vec::as_slice).unwrap_or_default() {
                let e = &self.edges[i];
                let next = match direction {
                    Direction::Dependents => &e.from,
                    Direction::Dependencies => &e.to,
                };
                if depth.contains_key(next) {
                    continue;
                }
                depth.insert(next.clone(), d + 1);
                if max_depth.is_some_and(|m| d + 1 > m) {
                    walk.cut.insert(next.clone());
                } else {
                    walk.via.insert(next.clone(), i);
                }
                queue.push_back(next.clone());
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
    [".py", ".pyi", "/__init__.py", "/__init__.pyi"]
        .iter()
        .map(|suffix| format!("{stem}{suffix}"))
        .filter(|f| tree.files.contains(f))
        .collect()
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

/// A string naming a file of the tree, relative to the root or to the naming file's folder.
fn path_literal(tree: &Tree<'_>, from: &str, value: &str) -> Option<String> {
    if !value.contains('/') && !value.contains('.') {
        return None;
    }
    let candidates = [normalize(value), normalize(&join(parent(from), value))];
    candidates
        .into_iter()
        .find(|c| c != from && tree.files.contains(c))
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
