//! Plans: the analysis of one tree, serialized for review (`gate plan --out`) in a stable,
//! sorted, versioned form — the facts of every file, the import graph and the reference edges.

use crate::analyze::analysis::Analysis;
use crate::analyze::facts;
use crate::error::{Error, Result};
use crate::graph::{Edge, Graph};
use crate::lang::python::analyze;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The AST plan: per file, what the source says.
#[derive(Serialize)]
pub(crate) struct AstPlan<'a> {
    pub version: u32,
    pub kind: &'static str,
    pub analyzer: &'static str,
    pub grammar: &'static str,
    /// `commit <sha>` or `working tree`.
    pub tree: String,
    pub roots: &'a [String],
    pub test_config: Option<&'a str>,
    pub files: Vec<AstFile<'a>>,
    /// Symlinks, never analysed as code: their edge is what they point at.
    pub symlinks: Vec<Symlink<'a>>,
}

#[derive(Serialize)]
pub(crate) struct Symlink<'a> {
    pub path: &'a str,
    /// The link text, as git stores it.
    pub text: &'a str,
    /// Where it points in the tree; null when it leaves the repository.
    pub target: Option<String>,
}

#[derive(Serialize)]
pub(crate) struct AstFile<'a> {
    pub path: &'a str,
    pub blob: &'a str,
    pub module: Option<String>,
    pub role: &'static str,
    pub imports: &'a [facts::Import],
    pub strings: &'a [facts::StringRef],
    pub paths: &'a [facts::PathRef],
    pub dynamic_imports: &'a [facts::DynamicImport],
    pub apps: &'a [u32],
    /// Environment variables read by a literal name.
    pub env: &'a [String],
    pub parse_errors: &'a [u32],
    /// Go: the package clause.
    pub package: Option<&'a str>,
}

/// An edge plan: the resolved edges of some kinds.
#[derive(Serialize)]
pub(crate) struct EdgePlan {
    pub version: u32,
    pub kind: &'static str,
    pub analyzer: &'static str,
    pub tree: String,
    pub edges: Vec<Edge>,
}

pub(crate) struct Plans<'a> {
    pub ast: AstPlan<'a>,
    pub imports: EdgePlan,
    pub references: EdgePlan,
}

impl<'a> Plans<'a> {
    pub(crate) fn new(
        tree: String,
        links: &'a BTreeMap<String, String>,
        analysis: &'a Analysis,
        graph: &'a Graph,
        roots: &'a [String],
        test_config: Option<&'a str>,
        is_test: &dyn Fn(&str) -> bool,
    ) -> Self {
        let files = analysis
            .facts
            .iter()
            .map(|(path, f)| AstFile {
                path,
                blob: &analysis.blobs[path],
                module: module_name(path, roots),
                role: if crate::path::file_name(path) == "conftest.py" {
                    "conftest"
                } else if is_test(path) {
                    "test"
                } else if path.ends_with(".pyi") {
                    "stub"
                } else if let Some(role) =
                    crate::lang::of_source(path).and_then(|l| l.plan_role(path))
                {
                    role
                } else if !crate::path::is_python(path) {
                    "shell"
                } else {
                    "source"
                },
                imports: &f.imports,
                strings: &f.strings,
                paths: &f.paths,
                dynamic_imports: &f.dynamic_imports,
                apps: &f.apps,
                env: &f.env,
                parse_errors: &f.parse_errors,
                package: f.package.as_deref(),
            })
            .collect();
        let is_reference = |e: &Edge| e.kind.is_reference();
        Plans {
            ast: AstPlan {
                version: crate::version::FORMAT,
                kind: "ast-plan",
                analyzer: crate::version::ANALYZER,
                grammar: analyze::GRAMMAR,
                tree: tree.clone(),
                roots,
                test_config,
                files,
                symlinks: links
                    .iter()
                    .map(|(path, text)| Symlink {
                        path,
                        text,
                        target: match crate::repo::snapshot::link_target(path, text) {
                            crate::repo::snapshot::LinkTarget::Inside(t) => Some(t),
                            crate::repo::snapshot::LinkTarget::Outside => None,
                        },
                    })
                    .collect(),
            },
            imports: EdgePlan {
                version: crate::version::FORMAT,
                kind: "import-graph",
                analyzer: crate::version::ANALYZER,
                tree: tree.clone(),
                edges: graph.edges().filter(|e| !is_reference(e)).collect(),
            },
            references: EdgePlan {
                version: crate::version::FORMAT,
                kind: "reference-edges",
                analyzer: crate::version::ANALYZER,
                tree,
                edges: graph.edges().filter(|e| is_reference(e)).collect(),
            },
        }
    }

    /// Writes `ast-plan.json`, `import-graph.json` and `reference-edges.json` into `dir`.
    pub(crate) fn write(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::io(dir, "cannot create the plan directory", e))?;
        let mut written = Vec::new();
        for (name, value) in [
            ("ast-plan.json", serde_json::to_value(&self.ast)),
            ("import-graph.json", serde_json::to_value(&self.imports)),
            (
                "reference-edges.json",
                serde_json::to_value(&self.references),
            ),
        ] {
            let path = dir.join(name);
            let value = crate::terminal::sorted(value.expect("plans serialize"));
            let mut text = serde_json::to_string_pretty(&value).expect("plans serialize");
            text.push('\n');
            std::fs::write(&path, text)
                .map_err(|e| Error::io(&path, "cannot write the plan", e))?;
            written.push(path);
        }
        Ok(written)
    }
}

/// The dotted module name of a file under the deepest root that holds it.
pub(crate) fn module_name(path: &str, roots: &[String]) -> Option<String> {
    let stem = path
        .strip_suffix(".pyi")
        .or_else(|| path.strip_suffix(".py"))?;
    let rel = roots
        .iter()
        .filter_map(|r| {
            if r.is_empty() {
                Some(stem)
            } else {
                stem.strip_prefix(&format!("{r}/"))
            }
        })
        .min_by_key(|rel| rel.len())?;
    let module = rel
        .strip_suffix("/__init__")
        .unwrap_or(rel)
        .replace('/', ".");
    (!module.is_empty() && module != "__init__").then_some(module)
}
