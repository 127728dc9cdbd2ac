//! JavaScript and TypeScript: their sources (`.js`, `.jsx`, `.mjs`, `.cjs`, `.ts`, `.tsx`,
//! `.mts`, `.cts`) and their facts (`analyze`, tree-sitter's JavaScript, TypeScript and TSX
//! grammars), configurations read as literals (`literal`, each key through `keys`), the
//! tree's test projects (`config`: Vitest and Jest), its layout (`layout`: workspaces,
//! manifests, compiler configurations, imports resolved over the tree by oxc_resolver through
//! `fs`), the values `.gate.toml` states for what it cannot read (`stated`), and the runners
//! (`suite`, `vitest`, `jest`) with the arguments they may be given (`args`) and what a run
//! read outside the tree (`observe`).

pub(crate) mod analyze;
pub(crate) mod args;
pub(crate) mod config;
mod fs;
mod jest;
mod keys;
pub(crate) mod layout;
mod literal;
mod observe;
pub(crate) mod stated;
mod suite;
mod vitest;
mod vitest_config;

use crate::analyze::facts::Facts;
use analyze::Dialect;
use std::collections::BTreeSet;

pub(crate) struct Js;

/// The extensions of its sources, in the order a specifier without one tries them.
pub(crate) const EXTENSIONS: &[&str] = &[
    ".ts", ".tsx", ".mts", ".cts", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".json",
];

/// Whether `path` is a JavaScript or TypeScript source (a committed package's under
/// `node_modules/` too: a test can load it).
pub(crate) fn is_js(path: &str) -> bool {
    let ext = path.rsplit_once('.').map_or("", |(_, e)| e);
    matches!(
        ext,
        "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "mts" | "cts"
    )
}

impl super::Language for Js {
    fn name(&self) -> &'static str {
        "js"
    }

    fn is_source(&self, path: &str) -> bool {
        is_js(path)
    }

    fn facts(&self, path: &str, bytes: &[u8]) -> Facts {
        analyze::analyze(Dialect::of(path), bytes)
    }

    fn cache_tag(&self, path: &str) -> &'static str {
        match Dialect::of(path) {
            Dialect::JavaScript => "js:",
            Dialect::TypeScript => "ts:",
            Dialect::Tsx => "tsx:",
        }
    }

    fn grammar(&self) -> &'static str {
        analyze::GRAMMAR
    }

    fn layout(
        &self,
        files: &BTreeSet<String>,
        read: &dyn Fn(&str) -> Option<Vec<u8>>,
        stated: &[super::StatedValue],
    ) -> Option<Box<dyn super::Layout>> {
        layout::JsLayout::load(files, read, stated).map(|l| Box::new(l) as Box<dyn super::Layout>)
    }

    fn whole_suite(&self) -> &'static [(&'static str, &'static str)] {
        WHOLE_SUITE
    }

    /// Its modules, its manifests and the runners', compilers' and transformers' configuration.
    fn runner_loads(&self, name: &str) -> bool {
        is_js(name)
            || name == "package.json"
            || [
                "vitest.config.",
                "vitest.workspace.",
                "vite.config.",
                "jest.config.",
                "babel.config.",
                ".babelrc",
                ".swcrc",
                "tsconfig",
                "jsconfig",
            ]
            .iter()
            .any(|p| name.starts_with(p))
    }

    fn plan_role(&self, _path: &str) -> Option<&'static str> {
        Some("js")
    }

    /// A module, not a type declaration (erased: nothing loads it at run time).
    fn loadable(&self, path: &str) -> bool {
        is_js(path) && !path.ends_with(".d.ts")
    }
}

/// Changes whose blast radius is every JavaScript test: what installs, compiles or runs them.
const WHOLE_SUITE: &[(&str, &str)] = &[
    (
        "**/package.json",
        "JavaScript package manifest (dependencies, scripts, module type)",
    ),
    (
        "**/package-lock.json",
        "locked JavaScript dependency versions",
    ),
    (
        "**/npm-shrinkwrap.json",
        "locked JavaScript dependency versions",
    ),
    ("**/pnpm-lock.yaml", "locked JavaScript dependency versions"),
    ("**/pnpm-workspace.yaml", "JavaScript workspace packages"),
    ("**/.npmrc", "JavaScript package manager configuration"),
    ("**/.yarnrc*", "JavaScript package manager configuration"),
    ("**/.nvmrc", "Node.js version"),
    ("**/.node-version", "Node.js version"),
    ("**/vitest.config.*", "Vitest configuration"),
    ("**/vitest.workspace.*", "Vitest workspace configuration"),
    ("**/vite.config.*", "Vite configuration (Vitest reads it)"),
    ("**/jest.config.*", "Jest configuration"),
    ("**/tsconfig*.json", "TypeScript compiler configuration"),
    ("**/jsconfig*.json", "JavaScript compiler configuration"),
    (
        "**/babel.config.*",
        "Babel configuration (Jest transforms with it)",
    ),
    (
        "**/.babelrc*",
        "Babel configuration (Jest transforms with it)",
    ),
    ("**/.swcrc", "SWC configuration"),
];
