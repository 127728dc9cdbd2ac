//! Edges as reports and plans show them: `from` (the file that needs) → `to` (the file it
//! needs), their kind, the line that makes them and what they name, explained in words.

use super::{Node, go_dir_of};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum EdgeKind {
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
    /// A pytest plugin the project registers (`-p` in addopts, a `pytest11` entry point) is
    /// loaded for every test.
    Plugin,
    /// `import_module(name)` with nothing literal may load any module, but only where its file
    /// runs: the tests that reach the importing file (verdict time, never stored).
    MayLoad,
    /// A test file's traced run opened the file (`detail`: the commit it was traced at); from
    /// the history store, added at verdict time, never part of the graph.
    Traced,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) struct Edge {
    pub from: String,
    pub to: String,
    pub kind: EdgeKind,
    /// The line in `from` that creates the edge (0 where no line does).
    pub line: u32,
    /// The module or string named.
    pub detail: String,
}

impl EdgeKind {
    /// A reference edge (a string, a read, a load): in `reference-edges.json`, not the import
    /// graph.
    pub(crate) fn is_reference(self) -> bool {
        !matches!(
            self,
            EdgeKind::Import
                | EdgeKind::PackageInit
                | EdgeKind::Conftest
                | EdgeKind::GoPackage
                | EdgeKind::GoTest
        )
    }

    /// Every kind, in declaration order: `ALL[k as usize] == k` (the graph cache stores kinds
    /// as that index).
    pub(crate) const ALL: [EdgeKind; 20] = [
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
        EdgeKind::Plugin,
        EdgeKind::MayLoad,
        EdgeKind::Traced,
    ];

    /// The import hops an edge counts for `max_depth`: none inside one Go package (a package
    /// and its files, its tests and the package they test), one otherwise — so a Go change
    /// selects its own package's tests at depth 0 and an importer's at 1, as a Python test that
    /// imports the changed module directly is at 1.
    pub(crate) fn hops(self) -> u32 {
        match self {
            EdgeKind::GoPackage | EdgeKind::GoTest => 0,
            _ => 1,
        }
    }

    /// Edges of these kinds come from one file's facts; the others from which files exist.
    pub(crate) fn is_from_facts(self) -> bool {
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
                | EdgeKind::Plugin
                | EdgeKind::MayLoad
                | EdgeKind::Traced
        )
    }
}

impl Edge {
    /// `tests/test_cart.py imports shop.cart at line 3`.
    pub(crate) fn explain(&self) -> String {
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
            EdgeKind::GoTest if matches!(Node::of(to), Node::GoPackage(_)) => {
                format!("the tests of {from} build package {}", go_dir_of(to))
            }
            EdgeKind::GoTest => format!("the tests of {from} use {to}"),
            EdgeKind::Embed => format!("{from} embeds {to} at line {line} (`{detail}`)"),
            EdgeKind::ComputedPath => {
                format!("{from} builds the path {to} at line {line} (`{detail}`)")
            }
            EdgeKind::Subprocess if detail == to => format!("{from} runs {to} at line {line}"),
            EdgeKind::Subprocess if *line == 0 => format!("{from} runs {detail}, which reads {to}"),
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
            EdgeKind::Plugin => format!("{from} loads the pytest plugin {to} ({detail})"),
            EdgeKind::MayLoad => format!(
                "{from} imports a module named at run time at line {line} (`{detail}`), which may be {to}"
            ),
            EdgeKind::Traced => format!("{from} opened {to} when traced at {detail}"),
        }
    }
}

/// A reference a `[[reference]]` extractor found in a file.
pub(crate) struct UserRef {
    pub from: String,
    pub line: u32,
    pub path: String,
    /// `relative_to = "file"`: the path is relative to the file's folder, else to the root.
    pub relative_to_file: bool,
    /// `[[reference]] rule 1 (files = …)`.
    pub rule: String,
}

/// A chain of edges as one line: `a imports b at line 1; b imports c at line 2`.
pub(crate) fn explain_chain<'e>(chain: impl IntoIterator<Item = &'e Edge>) -> String {
    chain
        .into_iter()
        .map(Edge::explain)
        .collect::<Vec<_>>()
        .join("; ")
}
