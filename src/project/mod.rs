//! Loads everything the later stages read about one tree: `.gate.toml`, pytest's discovery
//! settings, import roots, the analysed Python files and the resolved graph.

use crate::analyze;
use crate::analyze::analysis::{self, Analysis};
use crate::analyze::facts::{Flags, Reads};
use crate::cache::graph::{self as graph_cache, Blobs};
use crate::cache::test_list;
use crate::config::{self, Config};
use crate::error::Result;
use crate::graph::{self, Graph, Tree};
use crate::lang::Layouts;
use crate::lang::go::gomod::{self, GoLayout};
use crate::lang::python::framework::{self, Framework, Kind};
use crate::lang::python::pytest_ini::{Doctests, TestDiscovery};
use crate::lang::python::roots;
use crate::repo::snapshot::Snapshot;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

mod kept_graph;

pub(crate) use kept_graph::Keep;
use kept_graph::{KEEP_AFTER, graph_key, reuse_graph, user_references};

pub(crate) struct Project {
    pub config: Config,
    pub discovery: TestDiscovery,
    /// What runs the Python tests (pytest, unittest, Django) and why.
    pub framework: Framework,
    pub roots: Vec<String>,
    pub analysis: Analysis,
    pub graph: Graph,
    /// Test files of the tree (as pytest would collect them with no arguments).
    pub tests: BTreeSet<String>,
    /// Files whose facts may be incomplete (parse errors, too deep, too large) → why.
    pub flagged: BTreeMap<String, Flags>,
    /// Files that read variables by a literal name or paths outside the tree → what they read.
    pub reads: BTreeMap<String, Reads>,
    /// What a kept graph of this tree is keyed on (none when it is not kept).
    pub graph_key: Option<u64>,
    pub go: GoLayout,
    /// The tree's symlinks → what each points at, as said on its row.
    pub links: BTreeMap<String, String>,
    /// `[[depends]]` rules (by index) whose tests this change deleted: they bound nothing now.
    pub stale_depends: BTreeSet<usize>,
    /// Each language's reading of the tree's configuration (`lang::Layout`).
    pub layouts: Layouts,
    /// Why no change in this tree can be bounded (a configuration gate cannot read), if so.
    pub broken: Option<String>,
}

impl Project {
    /// What `verdict::decide` needs of this project.
    pub(crate) fn context(&self) -> crate::verdict::Context<'_> {
        crate::verdict::Context {
            graph: &self.graph,
            config: &self.config,
            tests: &self.tests,
            flagged: &self.flagged,
            is_test: self.graph.mask(&self.tests),
            links: &self.links,
            stale_depends: &self.stale_depends,
            layouts: &self.layouts,
        }
    }

    /// `deleted` are paths gone from the tree that imports may still name: they stay graph
    /// nodes so whatever imports them is selected. The tree's own `.gate.toml` configures it.
    pub(crate) fn load(
        repo: &git2::Repository,
        snapshot: &Snapshot,
        deleted: &[String],
        warn: &mut dyn FnMut(String),
    ) -> Result<Project> {
        Self::load_own(repo, snapshot, deleted, false, warn)
    }

    /// As `load`, keeping every file's facts in `analysis.facts` (`gate plan --out` writes
    /// them); `load` drops each once its edges are found.
    pub(crate) fn load_with_facts(
        repo: &git2::Repository,
        snapshot: &Snapshot,
        warn: &mut dyn FnMut(String),
    ) -> Result<Project> {
        Self::load_own(repo, snapshot, &[], true, warn)
    }

    fn load_own(
        repo: &git2::Repository,
        snapshot: &Snapshot,
        deleted: &[String],
        keep_facts: bool,
        warn: &mut dyn FnMut(String),
    ) -> Result<Project> {
        let config = Self::own_config(repo, snapshot)?;
        let project = Self::load_under(
            repo,
            snapshot,
            deleted,
            config,
            Keep::Rebuild,
            keep_facts,
            warn,
        )?;
        // The gate refuses on it; the other commands answer under pytest's defaults, saying so.
        if let Some(broken) = &project.discovery.broken {
            warn(format!("{broken} (pytest's defaults assumed here)"));
        }
        Ok(project)
    }

    /// The tree's own `.gate.toml` (read through symlinks inside the tree), or the defaults.
    pub(crate) fn own_config(repo: &git2::Repository, snapshot: &Snapshot) -> Result<Config> {
        match snapshot.followed(config::FILE) {
            Some(file) => {
                let bytes = snapshot.read(repo, &file)?.1;
                Config::parse(Some(config::FILE), &String::from_utf8_lossy(&bytes))
            }
            None => Ok(Config::defaults()),
        }
    }

    /// As `load`, under `config` (the tree's own, or the base's when the change touches
    /// `.gate.toml`), with `keep` saying what becomes of the last gated tree's graph and
    /// `keep_facts` whether every file's facts are kept (a patched graph keeps the changed
    /// files' only).
    pub(crate) fn load_under(
        repo: &git2::Repository,
        snapshot: &Snapshot,
        deleted: &[String],
        config: Config,
        keep: Keep,
        keep_facts: bool,
        warn: &mut dyn FnMut(String),
    ) -> Result<Project> {
        let reader = Reader {
            repo,
            snapshot,
            unreadable: Default::default(),
            root_files: Default::default(),
        };
        let read = |path: &str| reader.read(path);
        let discovery = TestDiscovery::load(read);
        let roots = import_roots(&config, &discovery, snapshot, read);
        let state = crate::repo::state_dir(repo);
        let framework =
            framework::detect(config.python_framework, &discovery, &snapshot.files, &read);
        let doctests = doctest_options(&discovery, &config);
        let on_disk = on_disk_tests(repo, snapshot, &framework, &discovery, &doctests);
        let nodes = node_set(snapshot, deleted, &on_disk);
        let go = GoLayout::detect(&nodes, &read);
        let layouts = layouts(snapshot, &config, &read, warn);
        let mut tests = tests_of(&discovery, &doctests, &framework, snapshot, &go, read);
        tests.extend(on_disk.keys().cloned());
        tests.extend(layout_tests(&state, snapshot, &layouts));
        reader.check()?;
        check_roots(&config, &snapshot.files)?;
        let stale_depends = stale_depends(&config, &tests, deleted)?;
        let is_test = |p: &str| tests.contains(p);
        let mut tree = Tree::new(
            &nodes,
            &snapshot.links,
            &roots,
            &is_test,
            discovery.bdd_features_base_dir.as_deref(),
            &go,
        );
        tree.plugins = &discovery.plugins;
        tree.layouts = &layouts;
        // `[[reference]]` edges depend on contents the patch would not revisit: no reuse then.
        // A full load (`gate plan`) keeps its graph for the selections that follow.
        let key = (config.references.is_empty() && keep != Keep::Aside)
            .then(|| {
                graph_key(
                    repo,
                    snapshot,
                    &nodes,
                    &on_disk,
                    &config,
                    (&roots, &layouts),
                )
            })
            .transpose()?;
        crate::timings::mark("configuration and tree index");
        let reused = match key.filter(|_| keep == Keep::Reuse) {
            Some(key) => reuse_graph(repo, snapshot, &state, key, &tree, &config, warn)?,
            None => None,
        };
        // A patched graph is kept only once it has drifted far from the stored one: the next
        // patch recomputes every file whose blob differs from the stored graph's, so skipping
        // the write is safe, and rewriting a large graph on every push is not free.
        let mut keep = true;
        let (analysis, graph, flagged, reads, blobs) = match reused {
            Some(r) => {
                keep = r.analysis.parsed > KEEP_AFTER;
                (r.analysis, r.graph, r.flagged, r.reads, Some(r.blobs))
            }
            None => {
                let user = user_references(&config, snapshot, &read);
                reader.check()?;
                let input = analysis::Input {
                    repo,
                    snapshot,
                    given: &on_disk,
                    state: &state,
                };
                let built = build(input, &tree, &config.loads, &user, keep_facts, warn)?;
                (
                    built.analysis,
                    built.graph,
                    built.flagged,
                    built.reads,
                    None,
                )
            }
        };
        crate::timings::mark("graph ready");
        if let Some(key) = key.filter(|_| keep) {
            let blobs = blobs.unwrap_or_else(|| Blobs::of(&graph, &analysis.blobs));
            graph_cache::save(&state, key, &graph, &blobs, &flagged, &reads, warn);
        }
        drop(tree);
        let broken = discovery.broken.clone().or_else(|| layouts.broken());
        Ok(Project {
            config,
            discovery,
            framework,
            roots,
            analysis,
            graph,
            tests,
            flagged,
            reads,
            graph_key: key,
            go,
            links: link_facts(snapshot),
            stale_depends,
            layouts,
            broken,
        })
    }
}

/// Each language's layout of the tree, with the stated values of the configuration that governs
/// (the base's when the change touches `.gate.toml`, so a commit cannot state its own way past
/// a refusal); each value they did not use is a warning.
fn layouts(
    snapshot: &Snapshot,
    config: &Config,
    read: &dyn Fn(&str) -> Option<Vec<u8>>,
    warn: &mut dyn FnMut(String),
) -> Layouts {
    let layouts = Layouts::load(&snapshot.files, read, &config.stated);
    for warning in layouts.warnings() {
        warn(warning);
    }
    layouts
}

/// The layouts' tests, kept by `test_list` when the tree has a layout: matching every file of
/// a large tree against a project's test globs costs a warm selection more than hashing the
/// files' names for the key does.
fn layout_tests(state: &Path, snapshot: &Snapshot, layouts: &Layouts) -> BTreeSet<String> {
    if layouts.digests().is_empty() {
        return BTreeSet::new();
    }
    let key = test_list::key(layouts, &snapshot.files);
    test_list::of(state, key, || layouts.tests(&snapshot.files))
}

/// Python's import roots: `[python] roots`, else the ones detected, pytest's `pythonpath`
/// and the folders conftests put on `sys.path`.
fn import_roots(
    config: &Config,
    discovery: &TestDiscovery,
    snapshot: &Snapshot,
    read: impl Fn(&str) -> Option<Vec<u8>> + Copy,
) -> Vec<String> {
    config.python_roots.clone().unwrap_or_else(|| {
        let mut roots = roots::detect(&snapshot.files, read);
        roots.extend(discovery.pythonpath.iter().cloned());
        roots.extend(sys_path_roots(snapshot, read));
        roots.sort();
        roots.dedup();
        roots
    })
}

/// A tree's files analysed and its graph built from them, with the files whose facts may be
/// incomplete and those that read variables or outside paths.
struct Built {
    analysis: Analysis,
    graph: Graph,
    flagged: BTreeMap<String, Flags>,
    reads: BTreeMap<String, Reads>,
}

/// Analyses `input`'s files and builds the graph as their facts come: each file's edges,
/// flags and reads are taken from its facts on the thread that made them, and the facts are
/// then dropped unless `keep_facts`.
fn build(
    input: analysis::Input<'_>,
    tree: &Tree<'_>,
    loads: &[config::Loads],
    user: &[graph::UserRef],
    keep_facts: bool,
    warn: &mut dyn FnMut(String),
) -> Result<Built> {
    let (mut flagged, mut reads) = (BTreeMap::new(), BTreeMap::new());
    let (graph, analysis) = Graph::build(tree, user, |ids, add| {
        let each = |path: &str, f: &analyze::facts::Facts| {
            let edges = graph::FileEdges::of(tree, ids, path, f, loads);
            (edges, f.flags(), f.reads(path))
        };
        let mut take = |path: &str, (edges, flags, read)| {
            add(path, edges);
            if let Some(flags) = flags {
                flagged.insert(path.to_string(), flags);
            }
            if let Some(read) = read {
                reads.insert(path.to_string(), read);
            }
        };
        let using = analysis::Use {
            each: &each,
            take: &mut take,
            keep: keep_facts,
        };
        let analysis = analysis::analyze(input, using, warn);
        crate::timings::mark("facts ready");
        analysis
    })?;
    Ok(Built {
        analysis,
        graph,
        flagged,
        reads,
    })
}

/// Reads configuration files through symlinks inside the tree, never out of it. A file that
/// is there but cannot be read is an error, never "no such file": the first one is kept and
/// returned once the readers are done. Root files (pyproject.toml, setup.cfg, tox.ini,
/// requirements…) are asked for by several readers (pytest's configuration, roots, the
/// framework, the test set): each is read from the tree once.
struct Reader<'r> {
    repo: &'r git2::Repository,
    snapshot: &'r Snapshot,
    unreadable: std::cell::RefCell<Option<crate::error::Error>>,
    root_files: std::cell::RefCell<BTreeMap<String, Option<Vec<u8>>>>,
}

impl Reader<'_> {
    /// The first file that was there but could not be read, as the error.
    fn check(&self) -> Result<()> {
        match self.unreadable.borrow_mut().take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn read(&self, path: &str) -> Option<Vec<u8>> {
        if path.contains('/') {
            return self.read_file(path);
        }
        if let Some(known) = self.root_files.borrow().get(path) {
            return known.clone();
        }
        let bytes = self.read_file(path);
        self.root_files
            .borrow_mut()
            .insert(path.to_string(), bytes.clone());
        bytes
    }

    fn read_file(&self, path: &str) -> Option<Vec<u8>> {
        let file = self.snapshot.followed(path)?;
        match self.snapshot.read(self.repo, &file) {
            Ok((_, bytes)) => Some(bytes),
            Err(e) => {
                self.unreadable.borrow_mut().get_or_insert(e);
                None
            }
        }
    }
}

/// Folders a conftest puts on `sys.path` (`sys.path.insert(0, str(HERE / "apps"))`): import
/// roots for the tests below it, so `import alpha.app` and `"beta.app:create_app"` resolve
/// there — never a data dependency on every file under the folder. Conftests are few, so they
/// are read here, before the tree's resolution is built.
fn sys_path_roots(snapshot: &Snapshot, read: impl Fn(&str) -> Option<Vec<u8>>) -> Vec<String> {
    use crate::analyze::paths::PathValue;
    let mut roots = Vec::new();
    let conftests = snapshot
        .files
        .iter()
        .filter(|f| crate::path::file_name(f) == "conftest.py");
    for conftest in conftests {
        // Most conftests touch no search path: those are not parsed here.
        let Some(bytes) = read(conftest).filter(|b| {
            ["sys.path", "syspath_prepend", "addsitedir"]
                .iter()
                .any(|k| b.windows(k.len()).any(|w| w == k.as_bytes()))
        }) else {
            continue;
        };
        for p in crate::lang::python::analyze::analyze(&bytes).sys_paths {
            let folder = match &p.value {
                PathValue::FileDir(dir) => {
                    crate::path::normalize(&crate::path::join(crate::path::parent(conftest), dir))
                }
                PathValue::Relative(dir) => crate::path::normalize(dir),
                PathValue::File
                | PathValue::Package { .. }
                | PathValue::ModuleFile(_)
                | PathValue::ModuleDir { .. } => continue,
            };
            let prefix = format!("{folder}/");
            let is_folder = snapshot
                .files
                .range(prefix.clone()..)
                .next()
                .is_some_and(|f| f.starts_with(&prefix));
            if is_folder {
                roots.push(folder);
            }
        }
    }
    roots
}

/// The graph's files: the tree's own, the deleted sources imports may still name, and the
/// test files pytest collects from disk that the tree lacks (the tree's set itself when there
/// are none: no copy of a large set).
fn node_set<'s>(
    snapshot: &'s Snapshot,
    deleted: &[String],
    on_disk: &BTreeMap<String, Vec<u8>>,
) -> std::borrow::Cow<'s, BTreeSet<String>> {
    let gone: Vec<&String> = deleted
        .iter()
        .filter(|d| crate::lang::of_source(d).is_some() || gomod::is_package_source(d))
        .filter(|d| !snapshot.files.contains(*d))
        .chain(on_disk.keys())
        .collect();
    if gone.is_empty() {
        return std::borrow::Cow::Borrowed(&snapshot.files);
    }
    let mut nodes = snapshot.files.clone();
    nodes.extend(gone.into_iter().cloned());
    std::borrow::Cow::Owned(nodes)
}

/// The test files pytest collects, and each Go package with tests as one unit (`./dir`).
/// pytest-mypy-plugins' case files (`test*.yml` holding `- case:` entries) where pytest
/// collects, too, when the project names the plugin among its dependencies: they type-check
/// the tree's code and stubs. (Without the plugin pytest rejects such a path, and the run.)
fn tests_of(
    discovery: &TestDiscovery,
    doctests: &Doctests,
    framework: &Framework,
    snapshot: &Snapshot,
    go: &GoLayout,
    read: impl Fn(&str) -> Option<Vec<u8>>,
) -> BTreeSet<String> {
    // A tree with no Python and no pytest configuration has no Python tests: its `test*.txt`
    // files are another language's data, which no pytest collects.
    let python = match framework.kind {
        _ if !has_python(&snapshot.files) => Vec::new(),
        Kind::Pytest => discovery.tests(&snapshot.files, doctests),
        Kind::Unittest | Kind::Django => framework.tests(&snapshot.files),
    };
    let mut tests: BTreeSet<String> = python.into_iter().cloned().collect();
    let declares_plugin = framework.kind == Kind::Pytest
        && framework::declared_in(
            &snapshot.files,
            &read,
            &["pytest-mypy-plugins", "pytest_mypy_plugins"],
        )
        .is_some();
    tests.extend(
        snapshot
            .files
            .iter()
            .filter(|_| declares_plugin)
            .filter(|f| crate::analyze::is_case_file_name(f) && discovery.collects(f))
            .filter(|f| read(f).is_some_and(|b| crate::analyze::is_case_file(&b)))
            .cloned(),
    );
    tests.extend(
        snapshot
            .files
            .iter()
            .filter(|f| gomod::is_go_test(f))
            .map(|f| crate::path::parent(f))
            .filter(|d| go.packages.contains(*d) && go.tested(d))
            .map(graph::go_tests),
    );
    tests
}

/// Whether a tree has Python: a Python source, or a file that configures pytest.
fn has_python(files: &BTreeSet<String>) -> bool {
    const CONFIGS: &[&str] = &[
        "pytest.ini",
        ".pytest.ini",
        "pyproject.toml",
        "tox.ini",
        "setup.cfg",
    ];
    CONFIGS.iter().any(|c| files.contains(*c)) || files.iter().any(|f| crate::path::is_python(f))
}

/// The doctest options the runner runs under. Doctests are tests: `PYTEST_ADDOPTS` (the
/// `[env]` table's, else gate's own environment, which the runner inherits) and the runner's
/// own options count as `addopts` do, in the order pytest reads them.
fn doctest_options(discovery: &TestDiscovery, config: &Config) -> Doctests {
    let mut doctests = discovery.doctests.clone();
    let env_addopts = config
        .env
        .get("PYTEST_ADDOPTS")
        .cloned()
        .or_else(|| std::env::var("PYTEST_ADDOPTS").ok());
    if let Some(words) = env_addopts.map(|a| crate::analyze::shell::words(&a)) {
        doctests.read(words.iter().map(String::as_str));
    }
    doctests.read(config.runner.iter().flatten().map(String::as_str));
    doctests
}

/// The test files pytest collects from the checkout's disk that neither the gated tree nor
/// the checkout's index holds (`analyze::untracked`); none without a checkout or pytest.
fn on_disk_tests(
    repo: &git2::Repository,
    snapshot: &Snapshot,
    framework: &Framework,
    discovery: &TestDiscovery,
    doctests: &Doctests,
) -> BTreeMap<String, Vec<u8>> {
    let walks = framework.kind == Kind::Pytest && doctests.modules;
    let Some(root) = repo.workdir().filter(|_| walks) else {
        return BTreeMap::new();
    };
    // The index (megabytes at 50k files) is read only when a candidate needs it.
    let index = std::cell::OnceCell::new();
    let tracked = |path: &str| {
        index
            .get_or_init(|| repo.index().ok())
            .as_ref()
            .is_some_and(|i| i.get_path(Path::new(path), 0).is_some())
    };
    crate::lang::python::untracked::collected(root, &snapshot.files, tracked, discovery, doctests)
}

/// Every `[python] roots` entry must be a folder of the tree: one naming nothing makes every
/// import resolve to nothing, and a breaking change would select no test.
fn check_roots(config: &Config, files: &BTreeSet<String>) -> Result<()> {
    for root in config.python_roots.iter().flatten() {
        let prefix = format!("{root}/");
        let holds_files = root.is_empty()
            || files
                .range(prefix.clone()..)
                .next()
                .is_some_and(|f| f.starts_with(&prefix));
        if !holds_files {
            return Err(crate::error::Error::config(
                config::FILE,
                format!(
                    "line {}: `python.roots`: `{root}` is no folder of the gated tree, so no import would resolve through it",
                    config.python_roots_line
                ),
            ));
        }
    }
    Ok(())
}

/// A `[[depends]]` rule whose `tests` match no test file would turn a refusal into "no test
/// reaches it": an error, unless the change itself deleted the tests it named — then the rule
/// is kept out (its rows stay refused and say why).
fn stale_depends(
    config: &Config,
    tests: &BTreeSet<String>,
    deleted: &[String],
) -> Result<BTreeSet<usize>> {
    let mut stale = BTreeSet::new();
    for rule in &config.depends {
        if tests.iter().any(|t| rule.tests.is_match(t)) {
            continue;
        }
        if deleted.iter().any(|d| rule.tests.is_match(d)) {
            stale.insert(rule.index);
            continue;
        }
        return Err(crate::error::Error::config(
            config::FILE,
            format!(
                "`[[depends]]` rule {}: `tests` ({}) matches no test file of the gated tree, so it would bound nothing",
                rule.index, rule.tests.text
            ),
        ));
    }
    Ok(stale)
}

/// What each symlink points at: a file or folder of the tree, nothing, or something outside
/// the repository that gate never reads.
fn link_facts(snapshot: &Snapshot) -> BTreeMap<String, String> {
    use crate::repo::snapshot::{LinkTarget, link_target};
    let holds_files = |dir: &str| {
        let prefix = format!("{dir}/");
        snapshot
            .files
            .range(prefix.clone()..)
            .next()
            .is_some_and(|f| f.starts_with(&prefix))
    };
    snapshot
        .links
        .iter()
        .map(|(link, text)| {
            let fact = match link_target(link, text) {
                LinkTarget::Outside => format!(
                    "{link} is a symlink to `{text}`, outside the repository: what it holds is no file of the gated tree, and gate does not read it"
                ),
                LinkTarget::Inside(t) if snapshot.contains(&t) => {
                    format!("{link} is a symlink to {t}")
                }
                LinkTarget::Inside(t) if t.is_empty() || holds_files(&t) => {
                    format!("{link} is a symlink to the folder {t}/")
                }
                LinkTarget::Inside(_) => {
                    format!("{link} is a dangling symlink (to `{text}`): nothing is there")
                }
            };
            (link.clone(), fact)
        })
        .collect()
}
