//! Loads everything the later stages read about one tree: `.gate.toml`, pytest's discovery
//! settings, import roots, the analysed Python files and the resolved graph.

use crate::analyze::gomod::{self, GoLayout};
use crate::analyze::pytest_ini::TestDiscovery;
use crate::analyze::roots;
use crate::config::{self, Config};
use crate::error::Result;
use crate::graph::{self, Graph, Tree, UserRef};
use crate::plan::{self, Analysis};
use crate::repo::snapshot::Snapshot;
use std::collections::{BTreeMap, BTreeSet};

pub struct Project {
    pub config: Config,
    pub discovery: TestDiscovery,
    pub roots: Vec<String>,
    pub analysis: Analysis,
    pub graph: Graph,
    /// Test files of the tree (as pytest would collect them with no arguments).
    pub tests: BTreeSet<String>,
    /// Python files that parsed with errors → lines.
    pub flagged: BTreeMap<String, Vec<u32>>,
    /// Every file of the tree.
    pub tree_files: BTreeSet<String>,
    pub go: GoLayout,
}

impl Project {
    /// `deleted` are paths gone from the tree that imports may still name: they stay graph
    /// nodes so whatever imports them is selected.
    pub fn load(
        repo: &git2::Repository,
        snapshot: &Snapshot,
        deleted: &[String],
        warn: &mut dyn FnMut(String),
    ) -> Result<Project> {
        let read = |path: &str| {
            snapshot
                .contains(path)
                .then(|| snapshot.read(repo, path).ok().map(|(_, b)| b))
                .flatten()
        };
        let config = match read(config::FILE) {
            Some(bytes) => Config::parse(Some(config::FILE), &String::from_utf8_lossy(&bytes))?,
            None => Config::defaults(),
        };
        let discovery = TestDiscovery::load(read)?;
        let roots = config.python_roots.clone().unwrap_or_else(|| {
            let mut roots = roots::detect(&snapshot.files, read);
            roots.extend(discovery.pythonpath.iter().cloned());
            roots.sort();
            roots.dedup();
            roots
        });
        let analysis = plan::analyze(repo, snapshot, &crate::repo::state_dir(repo), warn)?;
        let mut nodes = snapshot.files.clone();
        nodes.extend(
            deleted
                .iter()
                .filter(|d| graph::is_python(d) || gomod::is_go(d) || gomod::is_package_source(d))
                .cloned(),
        );
        let go = GoLayout::detect(&nodes, &read);
        let mut tests: BTreeSet<String> = snapshot
            .files
            .iter()
            .filter(|f| graph::is_python(f) && discovery.is_test(f))
            .cloned()
            .collect();
        // A Go package with tests is one test unit: `go test ./dir`.
        tests.extend(
            snapshot
                .files
                .iter()
                .filter(|f| gomod::is_go_test(f))
                .map(|f| graph::parent(f))
                .filter(|d| go.packages.contains(*d) && go.tested(d))
                .map(graph::go_tests),
        );
        let is_test = |p: &str| tests.contains(p);
        let user = user_references(&config, snapshot, &read);
        let graph = Graph::build(
            &Tree::new(
                &nodes,
                &roots,
                &is_test,
                discovery.bdd_features_base_dir.as_deref(),
                &go,
            ),
            &analysis.facts,
            &user,
            &config.loads,
        );
        let flagged = analysis
            .facts
            .iter()
            .filter(|(_, f)| !f.parse_errors.is_empty())
            .map(|(p, f)| (p.clone(), f.parse_errors.clone()))
            .collect();
        Ok(Project {
            config,
            discovery,
            roots,
            analysis,
            graph,
            tests,
            flagged,
            tree_files: snapshot.files.clone(),
            go,
        })
    }
}

/// Runs the `[[reference]]` extractors over the files they name. They are the team's own
/// patterns, so they are applied on every run rather than cached with the built-in facts.
fn user_references(
    config: &Config,
    snapshot: &Snapshot,
    read: &dyn Fn(&str) -> Option<Vec<u8>>,
) -> Vec<UserRef> {
    let mut out = Vec::new();
    for rule in &config.references {
        for file in snapshot.files.iter().filter(|f| rule.files.is_match(f)) {
            let Some(bytes) = read(file) else { continue };
            let text = String::from_utf8_lossy(&bytes);
            for caps in rule.pattern.captures_iter(&text) {
                let Some(path) = caps.name("path") else {
                    continue;
                };
                out.push(UserRef {
                    from: file.clone(),
                    line: text[..path.start()].matches('\n').count() as u32 + 1,
                    path: path.as_str().to_string(),
                    relative_to_file: rule.relative_to == config::RelativeTo::File,
                    rule: format!(
                        "[[reference]] rule {} (files = {})",
                        rule.index, rule.files.text
                    ),
                });
            }
        }
    }
    out
}
