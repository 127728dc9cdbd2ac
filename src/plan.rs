//! Plans: the analysis of one tree, serialized in a stable, sorted, versioned form.
//! Facts are cached under `.git/gate/` by git blob id, so a file whose content was seen before
//! is never parsed again; a cache of another format or a corrupt one is rebuilt, never trusted.

use crate::analyze::python::{self, Facts};
use crate::analyze::shell;
use crate::error::{Error, Result};
use crate::graph::{self, Edge, EdgeKind, Graph};
use crate::repo::snapshot::Snapshot;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Version of every plan and cache file gate writes; the schemas in `plans/` carry it.
/// 2: reference facts (paths, dynamic imports, apps, argv and shell contexts), shell scripts.
pub const FORMAT: u32 = 2;
pub const ANALYZER: &str = concat!("gate ", env!("CARGO_PKG_VERSION"));

/// The facts of every analysed file (Python sources and stubs, shell scripts) of a snapshot,
/// and how they were obtained.
pub struct Analysis {
    pub facts: BTreeMap<String, Facts>,
    pub blobs: BTreeMap<String, String>,
    pub parsed: usize,
    pub cached: usize,
}

#[derive(Serialize, Deserialize)]
struct Cache {
    format: u32,
    analyzer: String,
    grammar: String,
    /// blob id → facts
    entries: BTreeMap<String, Facts>,
}

/// The cache as written: its earlier entries and this tree's new facts, borrowed where they
/// are rather than copied into one map (the same JSON as `Cache`).
#[derive(Serialize)]
struct CacheOut<'a> {
    format: u32,
    analyzer: &'a str,
    grammar: &'a str,
    entries: BTreeMap<&'a str, &'a Facts>,
}

fn cache_path(state: &Path) -> PathBuf {
    state.join("cache").join("python.json")
}

/// Analyses every Python file of `snapshot`, reusing and refreshing the blob-id cache.
/// `warn` receives one line per problem that does not stop the run.
pub fn analyze(
    repo: &git2::Repository,
    snapshot: &Snapshot,
    state: &Path,
    warn: &mut dyn FnMut(String),
) -> Result<Analysis> {
    let path = cache_path(state);
    let cache = load_cache(&path, warn);
    let mut blobs = BTreeMap::new();
    let mut todo: Vec<(String, String, Vec<u8>)> = Vec::new();
    let mut facts = BTreeMap::new();
    for file in snapshot.files.iter().filter(|f| analysed(f)) {
        // A commit's tree knows the blob id, so a hit costs no read; the working tree must be
        // read and hashed to know it.
        let (id, content) = match snapshot.known_blob(file) {
            Some(oid) => (oid.to_string(), None),
            None => {
                let (oid, bytes) = snapshot.read(repo, file)?;
                (oid.to_string(), Some(bytes))
            }
        };
        blobs.insert(file.clone(), id.clone());
        // The same bytes mean different things to the Python, Go and shell analysers.
        let id = if graph::is_python(file) {
            id
        } else if crate::analyze::gomod::is_go(file) {
            format!("go:{id}")
        } else {
            format!("sh:{id}")
        };
        if let Some(hit) = cache.entries.get(&id) {
            facts.insert(file.clone(), hit.clone());
            continue;
        }
        let bytes = match content {
            Some(bytes) => bytes,
            None => snapshot.read(repo, file)?.1,
        };
        todo.push((file.clone(), id, bytes));
    }
    let cached = facts.len();
    let fresh: Vec<(String, String, Facts)> = todo
        .into_par_iter()
        .map(|(file, id, bytes)| {
            let facts = analyse_bytes(&file, &bytes);
            (file, id, facts)
        })
        .collect();
    let parsed = fresh.len();
    let mut ids = Vec::with_capacity(parsed);
    for (file, id, f) in fresh {
        ids.push((id, file.clone()));
        facts.insert(file, f);
    }
    if parsed > 0 {
        let mut entries: BTreeMap<&str, &Facts> = cache
            .entries
            .iter()
            .map(|(id, f)| (id.as_str(), f))
            .collect();
        entries.extend(ids.iter().map(|(id, file)| (id.as_str(), &facts[file])));
        let out = CacheOut {
            format: cache.format,
            analyzer: &cache.analyzer,
            grammar: &cache.grammar,
            entries,
        };
        save_cache(&path, &out, warn);
    }
    Ok(Analysis {
        facts,
        blobs,
        parsed,
        cached,
    })
}

/// What extracted the cached facts: both grammars and the extraction rules' revision. A change
/// to any of them invalidates the cache — bump `FACTS_REVISION` with every change to what the
/// analysers extract.
pub fn grammars() -> String {
    format!(
        "{}; {}; facts {FACTS_REVISION}",
        python::GRAMMAR,
        crate::analyze::golang::GRAMMAR
    )
}

const FACTS_REVISION: u32 = 5;

fn empty_cache() -> Cache {
    Cache {
        format: FORMAT,
        analyzer: ANALYZER.to_string(),
        grammar: grammars(),
        entries: BTreeMap::new(),
    }
}

fn load_cache(path: &Path, warn: &mut dyn FnMut(String)) -> Cache {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(_) => return empty_cache(),
    };
    match serde_json::from_slice::<Cache>(&bytes) {
        Ok(c) if c.format == FORMAT && c.analyzer == ANALYZER && c.grammar == grammars() => c,
        Ok(c) => {
            warn(format!(
                "{}: written by {} (format {}, {}), this is {ANALYZER} (format {FORMAT}, {}); rebuilding it",
                path.display(),
                c.analyzer,
                c.format,
                c.grammar,
                grammars()
            ));
            empty_cache()
        }
        Err(e) => {
            warn(format!(
                "{}: corrupt plan cache ({e}); rebuilding it",
                path.display()
            ));
            empty_cache()
        }
    }
}

/// The facts of one file's contents, by its kind.
pub fn analyse_bytes(path: &str, bytes: &[u8]) -> Facts {
    if graph::is_python(path) {
        python::analyze(bytes)
    } else if crate::analyze::gomod::is_go(path) {
        crate::analyze::golang::analyze(bytes)
    } else {
        shell::facts(bytes)
    }
}

/// Python and Go sources, and shell scripts (followed for what they run).
pub fn analysed(path: &str) -> bool {
    graph::is_python(path) || crate::analyze::gomod::is_go(path) || is_shell(path)
}

pub fn is_shell(path: &str) -> bool {
    [".sh", ".bash", ".zsh"].iter().any(|e| path.ends_with(e))
}

/// Writes through a temporary file and a rename, so a killed run never leaves half a cache.
/// A cache that cannot be written costs speed, not correctness: a warning, not an error.
fn save_cache(path: &Path, cache: &CacheOut<'_>, warn: &mut dyn FnMut(String)) {
    let write = || -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let tmp = path.with_extension(format!("json.tmp{}", std::process::id()));
        // Streamed: a large tree's cache text is never held whole.
        let mut out = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        serde_json::to_writer(&mut out, cache)?;
        std::io::Write::flush(&mut out)?;
        drop(out);
        std::fs::rename(&tmp, path)
    };
    if let Err(e) = write() {
        warn(format!(
            "{}: cannot write the plan cache ({e})",
            path.display()
        ));
    }
}

/// The AST plan: per file, what the source says.
#[derive(Serialize)]
pub struct AstPlan<'a> {
    pub version: u32,
    pub kind: &'static str,
    pub analyzer: &'static str,
    pub grammar: &'static str,
    /// `commit <sha>` or `working tree`.
    pub tree: String,
    pub roots: &'a [String],
    pub test_config: Option<&'a str>,
    pub files: Vec<AstFile<'a>>,
}

#[derive(Serialize)]
pub struct AstFile<'a> {
    pub path: &'a str,
    pub blob: &'a str,
    pub module: Option<String>,
    pub role: &'static str,
    pub imports: &'a [python::Import],
    pub strings: &'a [python::StringRef],
    pub paths: &'a [python::PathRef],
    pub dynamic_imports: &'a [python::DynamicImport],
    pub apps: &'a [u32],
    pub parse_errors: &'a [u32],
    /// Go: the package clause.
    pub package: Option<&'a str>,
}

/// An edge plan: the resolved edges of some kinds.
#[derive(Serialize)]
pub struct EdgePlan {
    pub version: u32,
    pub kind: &'static str,
    pub analyzer: &'static str,
    pub tree: String,
    pub edges: Vec<Edge>,
}

pub struct Plans<'a> {
    pub ast: AstPlan<'a>,
    pub imports: EdgePlan,
    pub references: EdgePlan,
}

impl<'a> Plans<'a> {
    pub fn new(
        tree: String,
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
                role: if graph::file_name(path) == "conftest.py" {
                    "conftest"
                } else if is_test(path) {
                    "test"
                } else if path.ends_with(".pyi") {
                    "stub"
                } else if crate::analyze::gomod::is_go(path) {
                    if path.ends_with("_test.go") {
                        "go_test"
                    } else {
                        "go"
                    }
                } else if !graph::is_python(path) {
                    "shell"
                } else {
                    "source"
                },
                imports: &f.imports,
                strings: &f.strings,
                paths: &f.paths,
                dynamic_imports: &f.dynamic_imports,
                apps: &f.apps,
                parse_errors: &f.parse_errors,
                package: f.package.as_deref(),
            })
            .collect();
        let is_reference = |e: &Edge| {
            !matches!(
                e.kind,
                EdgeKind::Import
                    | EdgeKind::PackageInit
                    | EdgeKind::Conftest
                    | EdgeKind::GoPackage
                    | EdgeKind::GoTest
            )
        };
        Plans {
            ast: AstPlan {
                version: FORMAT,
                kind: "ast-plan",
                analyzer: ANALYZER,
                grammar: python::GRAMMAR,
                tree: tree.clone(),
                roots,
                test_config,
                files,
            },
            imports: EdgePlan {
                version: FORMAT,
                kind: "import-graph",
                analyzer: ANALYZER,
                tree: tree.clone(),
                edges: graph.edges().filter(|e| !is_reference(e)).collect(),
            },
            references: EdgePlan {
                version: FORMAT,
                kind: "reference-edges",
                analyzer: ANALYZER,
                tree,
                edges: graph.edges().filter(|e| is_reference(e)).collect(),
            },
        }
    }

    /// Writes `ast-plan.json`, `import-graph.json` and `reference-edges.json` into `dir`.
    pub fn write(&self, dir: &Path) -> Result<Vec<PathBuf>> {
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
            let value = value.expect("plans serialize");
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
pub fn module_name(path: &str, roots: &[String]) -> Option<String> {
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
