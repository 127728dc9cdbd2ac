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
use std::io::Write;
use std::path::{Path, PathBuf};

/// Version of every plan and cache file gate writes; the schemas in `plans/` carry it.
/// 2: reference facts (paths, dynamic imports, apps, argv and shell contexts), shell scripts.
/// 3: symlinks (the AST plan lists them; `symlink` edges), checksummed caches.
pub const FORMAT: u32 = 3;
pub const ANALYZER: &str = concat!("gate ", env!("CARGO_PKG_VERSION"));

/// The facts of every analysed file (Python sources and stubs, shell scripts) of a snapshot,
/// and how they were obtained.
pub struct Analysis {
    pub facts: BTreeMap<String, Facts>,
    pub blobs: BTreeMap<String, String>,
    pub parsed: usize,
    pub cached: usize,
}

/// The facts cache: blob id → facts, of this gate's format, analyser and grammars.
struct Cache {
    entries: BTreeMap<String, Facts>,
}

/// The cache file as read: `entries` is kept as its text until its checksum (xxh3 of that
/// text, written after it) is checked.
#[derive(Deserialize)]
struct CacheFile<'a> {
    format: u32,
    analyzer: String,
    grammar: String,
    #[serde(borrow)]
    entries: &'a serde_json::value::RawValue,
    checksum: String,
}

fn checksum(bytes: &[u8]) -> String {
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(bytes))
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
    // A symlink's content is its link text: never analysed as code (its edge is its target).
    let files = snapshot
        .files
        .iter()
        .filter(|f| analysed(f) && !snapshot.links.contains_key(*f));
    for file in files {
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
        save_cache(&path, &entries, warn);
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

const FACTS_REVISION: u32 = 6;

fn empty_cache() -> Cache {
    Cache {
        entries: BTreeMap::new(),
    }
}

fn load_cache(path: &Path, warn: &mut dyn FnMut(String)) -> Cache {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(_) => return empty_cache(),
    };
    let corrupt = |why: String, warn: &mut dyn FnMut(String)| {
        warn(format!(
            "{}: corrupt plan cache ({why}); rebuilding it",
            path.display()
        ));
        empty_cache()
    };
    let file = match serde_json::from_slice::<CacheFile<'_>>(&bytes) {
        Ok(file) => file,
        Err(e) => return corrupt(e.to_string(), warn),
    };
    if file.format != FORMAT || file.analyzer != ANALYZER || file.grammar != grammars() {
        warn(format!(
            "{}: written by {} (format {}, {}), this is {ANALYZER} (format {FORMAT}, {}); rebuilding it",
            path.display(),
            file.analyzer,
            file.format,
            file.grammar,
            grammars()
        ));
        return empty_cache();
    }
    let text = file.entries.get();
    if checksum(text.as_bytes()) != file.checksum {
        return corrupt("its checksum does not match its entries".into(), warn);
    }
    match serde_json::from_str(text) {
        Ok(entries) => Cache { entries },
        Err(e) => corrupt(e.to_string(), warn),
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

/// Writes through a temporary file and a rename, so a killed run never leaves half a cache;
/// the entries are streamed (a large tree's cache text is never held whole) and hashed as
/// they are written. A cache that cannot be written costs speed, not correctness: a warning.
fn save_cache(path: &Path, entries: &BTreeMap<&str, &Facts>, warn: &mut dyn FnMut(String)) {
    let written = crate::blocks::replace(path, |file| {
        let mut out = std::io::BufWriter::new(file);
        write!(
            out,
            "{{\"format\":{FORMAT},\"analyzer\":{},\"grammar\":{},\"entries\":",
            serde_json::to_string(ANALYZER)?,
            serde_json::to_string(&grammars())?
        )?;
        let mut hashed = Hashed {
            out: &mut out,
            hash: xxhash_rust::xxh3::Xxh3::new(),
        };
        serde_json::to_writer(&mut hashed, entries)?;
        let sum = format!("{:016x}", hashed.hash.digest());
        write!(out, ",\"checksum\":\"{sum}\"}}")?;
        out.flush()
    });
    if let Err(e) = written {
        warn(format!(
            "{}: cannot write the plan cache ({e})",
            path.display()
        ));
    }
}

/// A writer that hashes what passes through it.
struct Hashed<'w, W> {
    out: &'w mut W,
    hash: xxhash_rust::xxh3::Xxh3,
}

impl<W: Write> Write for Hashed<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
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
    /// Symlinks, never analysed as code: their edge is what they point at.
    pub symlinks: Vec<Symlink<'a>>,
}

#[derive(Serialize)]
pub struct Symlink<'a> {
    pub path: &'a str,
    /// The link text, as git stores it.
    pub text: &'a str,
    /// Where it points in the tree; null when it leaves the repository.
    pub target: Option<String>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The facts cache as written loads; with any byte changed (or random bytes) it is either
    /// rejected with a warning or, where the change is outside the checked entries (the
    /// checksum's own digits, whitespace), holds exactly the entries written.
    #[test]
    fn a_damaged_facts_cache_is_never_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("python.json");
        let facts = analyse_bytes("a.py", b"import os\nopen('data/x.json')\n");
        let entries: BTreeMap<&str, &Facts> = [("0123abcd", &facts)].into_iter().collect();
        save_cache(&file, &entries, &mut |w| panic!("{w}"));
        let loaded = load_cache(&file, &mut |w| panic!("{w}"));
        assert_eq!(loaded.entries.get("0123abcd"), Some(&facts));
        let bytes = std::fs::read(&file).unwrap();
        let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(512));
        runner
            .run(&(0..bytes.len(), any::<u8>()), |(at, value)| {
                let mut bad = bytes.clone();
                bad[at] = if bad[at] == value { value ^ 1 } else { value };
                std::fs::write(&file, &bad).unwrap();
                let mut warned = false;
                let cache = load_cache(&file, &mut |_| warned = true);
                prop_assert!(
                    warned || cache.entries.get("0123abcd") == Some(&facts),
                    "a flip at {} was trusted",
                    at
                );
                Ok(())
            })
            .unwrap();
        runner
            .run(&prop::collection::vec(any::<u8>(), 0..512), |noise| {
                std::fs::write(&file, &noise).unwrap();
                let _ = load_cache(&file, &mut |_| {});
                Ok(())
            })
            .unwrap();
    }
}
