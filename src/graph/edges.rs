//! The edges one file's facts give: imports, string and path references, subprocesses,
//! dynamic imports, conventions. Everything else in the graph depends only on which files
//! exist, so a changed file's edges can be recomputed alone (`Graph::patch`).

use super::resolve::{
    is_dotted_name, modules_under_prefix, path_targets, portions, relative_modules,
    resolve_absolute, resolve_import, resolve_in, under, value_targets,
};
use super::tree::Tree;
use super::{EdgeKind, go_library};
use crate::analyze::facts::{Anchor, DynamicImport, Facts, Import, StringContext, StringRef};
use crate::config::Loads;

/// Where edges go as they are found.
pub(super) trait AddEdge {
    fn add(&mut self, from: &str, to: String, kind: EdgeKind, line: u32, detail: String);
}

use crate::path::{join, parent};

pub(super) fn file_edges(
    tree: &Tree<'_>,
    path: &str,
    f: &Facts,
    loads: &[Loads],
    edges: &mut impl AddEdge,
    unbounded: &mut Vec<(String, u32, String)>,
) {
    let go = crate::lang::go::gomod::is_go(path);
    // A language that reads the tree's configuration resolves its own imports.
    if let Some(layout) = tree.layouts.of(path) {
        let mut found = crate::lang::Found {
            edge: &mut |to, kind, line, detail| edges.add(path, to, kind, line, detail),
            unbounded: &mut |line, text| unbounded.push((path.to_string(), line, text)),
        };
        layout.edges(tree, path, f, &mut found);
    // Go files under testdata/ (or `_x/`, `.x/`) are inputs of tests, not packages: their
    // imports are no one's dependencies.
    } else if !(go && crate::lang::go::gomod::ignored_dir(path)) {
        for import in &f.imports {
            import_edges(tree, path, import, go, edges);
        }
    }
    // Folders this file puts on `sys.path` itself: its own imports resolve there too (a
    // conftest's are every test's roots already).
    local_import_edges(tree, path, f, edges);
    // A doctest's run executes its examples: their imports are its dependencies (and nobody
    // else's: a module imported for its code does not run its docstrings).
    if (tree.is_test)(path) {
        for import in &f.doctest_imports {
            import_edges(tree, path, import, false, edges);
        }
    }
    for s in &f.strings {
        string_edges(tree, path, s, go, edges);
    }
    for p in &f.paths {
        for to in value_targets(tree, path, &p.value) {
            edges.add(path, to, EdgeKind::ComputedPath, p.line, p.text.clone());
        }
    }
    for d in &f.dynamic_imports {
        dynamic_edges(tree, path, d, loads, edges, unbounded);
    }
    if f.type_check {
        let stubs = tree
            .files
            .iter()
            .filter(|t| t.ends_with(".pyi") || crate::path::file_name(t) == "py.typed");
        for stub in stubs {
            edges.add(
                path,
                stub.clone(),
                EdgeKind::Subprocess,
                0,
                "mypy (a pytest-mypy-plugins case file)".to_string(),
            );
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

/// The edges of `path`'s absolute imports resolved under the folders it puts on `sys.path`
/// itself.
fn local_import_edges(tree: &Tree<'_>, path: &str, f: &Facts, edges: &mut impl AddEdge) {
    let local = local_roots(tree, path, f);
    for import in f
        .imports
        .iter()
        .filter(|i| i.level == 0 && !local.is_empty())
    {
        let mut parts: Vec<&str> = import.module.split('.').filter(|p| !p.is_empty()).collect();
        let whole = parts.len();
        for name in import.names.iter().filter(|n| n.as_str() != "*") {
            parts.truncate(whole);
            parts.push(name);
            for (to, module) in resolve_in(tree, &local, &parts, parts.len()) {
                edges.add(path, to, EdgeKind::Import, import.line, module);
            }
        }
        for k in 1..=whole {
            for (to, module) in resolve_in(tree, &local, &parts, k) {
                edges.add(path, to, EdgeKind::Import, import.line, module);
            }
        }
    }
}

fn import_edges(tree: &Tree<'_>, path: &str, import: &Import, go: bool, edges: &mut impl AddEdge) {
    if !go {
        for (to, module) in resolve_import(tree, path, import) {
            edges.add(path, to, EdgeKind::Import, import.line, module);
        }
        return;
    }
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
}

/// A string names what it can where it stood: a path first (relative to the root or the
/// file's folder; the package folder first for Go), else a dotted module.
fn string_edges(tree: &Tree<'_>, path: &str, s: &StringRef, go: bool, edges: &mut impl AddEdge) {
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
        StringContext::SysPath => return,
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
    // `make` reads the Makefile of the folder it runs in: the root, or the file's own.
    if s.context == StringContext::Argv && matches!(s.value.as_str(), "make" | "gmake") {
        for base in &bases {
            for name in ["GNUmakefile", "makefile", "Makefile"] {
                let makefile = crate::path::join(base, name);
                if tree.files.contains(&makefile) {
                    edges.add(
                        path,
                        makefile,
                        EdgeKind::Subprocess,
                        s.line,
                        s.value.clone(),
                    );
                }
            }
        }
        return;
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
        return;
    }
    let dotted = s.value.split(':').next().unwrap_or_default();
    let Some(kind) = module_kind.filter(|_| is_dotted_name(dotted)) else {
        return;
    };
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

/// A run-time-named import: every module under its constant prefix, or what `[[loads]]`
/// declares for its file; with neither, it is unbounded.
fn dynamic_edges(
    tree: &Tree<'_>,
    path: &str,
    d: &DynamicImport,
    loads: &[Loads],
    edges: &mut impl AddEdge,
    unbounded: &mut Vec<(String, u32, String)>,
) {
    if let Some(anchor) = d.anchor {
        for dir in portions(tree, &anchor_dir(path, anchor)) {
            for to in relative_modules(tree, &dir, &d.prefix, d.exact) {
                edges.add(path, to, EdgeKind::DynamicImport, d.line, d.text.clone());
            }
        }
        return;
    }
    if !d.prefix.is_empty() {
        for to in modules_under_prefix(tree, path, &d.prefix) {
            edges.add(path, to, EdgeKind::DynamicImport, d.line, d.text.clone());
        }
        return;
    }
    let declared: Vec<&Loads> = loads.iter().filter(|l| l.file.is_match(path)).collect();
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
}

/// The folder a relative run-time name is resolved in: the file's package folder, or (for
/// `__name__` in `pkg/mod.py`) the folder a package `pkg.mod` would have, `up` levels higher.
fn anchor_dir(path: &str, anchor: Anchor) -> String {
    let mut dir = if anchor.own_module && crate::path::file_name(path) != "__init__.py" {
        path.strip_suffix(".py").unwrap_or(path).to_string()
    } else {
        parent(path).to_string()
    };
    for _ in 0..anchor.up {
        dir = parent(&dir).to_string();
    }
    dir
}

/// The folders a file puts on `sys.path` (`sys.path.insert(0, "extra")`, relative to the
/// working directory, the root; or built from `__file__`) that are folders of the tree.
fn local_roots(tree: &Tree<'_>, path: &str, f: &Facts) -> Vec<String> {
    use crate::analyze::paths::PathValue;
    let mut roots: Vec<String> = f
        .sys_paths
        .iter()
        .filter_map(|p| match &p.value {
            PathValue::FileDir(dir) => Some(crate::path::normalize(&join(parent(path), dir))),
            PathValue::Relative(dir) => Some(crate::path::normalize(dir)),
            _ => None,
        })
        .filter(|dir| !dir.starts_with("..") && !dir.contains('*'))
        .filter(|dir| {
            let prefix = format!("{dir}/");
            tree.files
                .range(prefix.clone()..)
                .next()
                .is_some_and(|f| f.starts_with(&prefix))
        })
        .collect();
    roots.sort();
    roots.dedup();
    roots
}
