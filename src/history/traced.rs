//! Traced edges: what a test file's run really opened in the repository (seen by the probe's
//! audit hook in a gated pytest run), kept per test file with the commit it was traced at. A
//! whole run of the file (every one of its tests ran and passed; for `gate audit`, the traced
//! run exited 0) replaces its earlier trace; a run cut short saw only a part, which is added
//! to it — a part never drops an edge. What a module read while it was being imported (its
//! module-level code loading a table) is kept as the module's (`read_by`), since only the test
//! file that imported it first sees that read: a change to the file read counts as a change to
//! the module, selecting every test that reaches it. Selection is the union of the static
//! graph and these edges: a traced edge only ever adds a test to a changed file's row, shown
//! as such; it never removes one, never turns a refusal into a bound, and a store that cannot
//! be read adds nothing and says why. The store is opened once per use and read with `IN (…)`
//! lists, a statement per chunk of paths or units, never one per path.

use super::{Location, Param, Store, StoreError, schema};
use crate::graph::{Direction, Edge, EdgeKind, Walk};
use crate::project::Project;
use crate::run::events::{Collected, Trace};
use crate::verdict::{Decision, Row, RunVerdict, TestEdge};
use std::collections::{BTreeMap, BTreeSet};

/// Changed path → who was traced reading it → the commit it was traced at.
type Readers = BTreeMap<String, BTreeMap<String, String>>;

/// Adds to each changed file's row the tests whose traced runs opened it, and the tests that
/// reach a module which read it while it was imported; returns notes for the report (a store
/// that could not be read).
pub(crate) fn add(
    state: &std::path::Path,
    db: Option<&str>,
    project: &Project,
    decided: &mut Decision,
) -> Vec<String> {
    if !matches!(decided.verdict, RunVerdict::Bounded | RunVerdict::NamedFull) {
        return Vec::new();
    }
    let at = match super::location(db, project.config.history.url.as_deref(), state) {
        Ok(at) => at,
        Err(e) => return vec![format!("traced edges skipped: {e}")],
    };
    // No store yet: nothing was traced, and reading must not create one.
    if let Location::Sqlite(path) = &at
        && !path.is_file()
    {
        return Vec::new();
    }
    let paths: Vec<&str> = decided.rows.iter().map(|r| r.path.as_str()).collect();
    let found = Store::open(&at)
        .and_then(|mut store| Ok((store.traced_to(&paths)?, store.read_by_to(&paths)?)));
    let (opened, read) = match found {
        Ok(found) => found,
        Err(e) => {
            return vec![format!(
                "traced edges skipped (selection is unchanged): {}",
                e.one_line()
            )];
        }
    };
    let mut walks = BTreeMap::new();
    for row in &mut decided.rows {
        let path = row.path.to_string();
        let before = row.tests.len();
        for (unit, commit) in opened.get(&path).into_iter().flatten() {
            let edge = traced(unit, &path, commit);
            let why = edge.explain();
            if select(row, &mut decided.selected, project, unit, vec![edge]) {
                row.reasons.push(why);
            }
        }
        for (module, commit) in read.get(&path).into_iter().flatten() {
            let edge = traced(module, &path, commit);
            let mut any = false;
            for (test, mut chain) in reaching(project, module, &mut walks) {
                chain.push(edge.clone());
                any |= select(row, &mut decided.selected, project, &test, chain);
            }
            if any {
                row.reasons.push(format!(
                    "{} while it was imported: every test that reaches {module} reads it",
                    edge.explain()
                ));
            }
        }
        crate::verdict::recount(row, row.tests.len() - before);
        row.edges.sort_by(|a, b| a.test.cmp(&b.test));
        row.tests.sort();
    }
    Vec::new()
}

/// `from` opened `to` when traced at `commit`.
fn traced(from: &str, to: &str, commit: &str) -> Edge {
    Edge {
        from: from.to_string(),
        to: to.to_string(),
        kind: EdgeKind::Traced,
        line: 0,
        detail: commit[..12.min(commit.len())].to_string(),
    }
}

/// The tests that reach `module` in the graph (itself, when it is one), each with its chain of
/// edges down to it: the tests a change to it selects.
fn reaching(
    project: &Project,
    module: &str,
    walks: &mut BTreeMap<String, Walk>,
) -> Vec<(String, Vec<Edge>)> {
    let graph = &project.graph;
    let walk = walks
        .entry(module.to_string())
        .or_insert_with(|| graph.walk(module, Direction::Dependents, project.config.max_depth));
    let mut tests: Vec<(String, Vec<Edge>)> = walk
        .nodes(graph)
        .filter(|n| project.tests.contains(*n))
        .map(|t| (t.to_string(), walk.chain(graph, t)))
        .collect();
    if project.tests.contains(module) {
        tests.push((module.to_string(), Vec::new()));
    }
    tests
}

/// Selects `test` on `row` through `chain`, unless the row selects it already or it is no
/// test of this tree (a trace names files that may be gone); whether it did.
fn select(
    row: &mut Row,
    selected: &mut BTreeMap<String, Vec<String>>,
    project: &Project,
    test: &str,
    chain: Vec<Edge>,
) -> bool {
    if !project.tests.contains(test) || row.tests.iter().any(|t| t == test) {
        return false;
    }
    let why = crate::graph::explain_chain(&chain);
    let reasons = selected.entry(test.to_string()).or_default();
    if !reasons.contains(&why) {
        reasons.push(why);
    }
    row.tests.push(test.to_string());
    row.edges.push(TestEdge {
        test: test.to_string(),
        chain,
        rule: None,
    });
    true
}

/// Keeps what each test file of a run opened, and what each module read while it was
/// imported, at `commit`: only test files and modules of this tree. A path the tree does not
/// hold stays (a git-ignored file a test reads by a computed path, one it made): the ledger
/// hashes it as it is on disk, and selection never meets it (a change names only the tree's
/// files). Returns why nothing was kept, when it could not be.
pub(crate) fn keep(
    state: &std::path::Path,
    db: Option<&str>,
    project: &Project,
    files: &BTreeSet<String>,
    commit: &str,
    collected: &Collected,
) -> Option<String> {
    let of_tree = |own: &str, paths: &BTreeSet<String>| -> BTreeSet<String> {
        paths.iter().filter(|p| *p != own).cloned().collect()
    };
    let opened: BTreeMap<String, Trace> = collected
        .opened
        .iter()
        .filter(|(unit, _)| project.tests.contains(*unit))
        .map(|(unit, trace)| {
            let files = of_tree(unit, &trace.files);
            let whole = trace.whole;
            (unit.clone(), Trace { files, whole })
        })
        .collect();
    let read_by: BTreeMap<String, BTreeSet<String>> = collected
        .read_by
        .iter()
        .filter(|(module, _)| files.contains(*module))
        .map(|(module, paths)| (module.clone(), of_tree(module, paths)))
        .filter(|(_, paths)| !paths.is_empty())
        .collect();
    // Only a whole run's: one cut short may have stopped before its imports ran. Modules
    // the tree lacks stay (a generated one, hashed from disk where a fingerprint takes it).
    let loaded: BTreeMap<String, BTreeSet<String>> = collected
        .loaded
        .iter()
        .filter(|(unit, _)| opened.get(*unit).is_some_and(|t| t.whole))
        .map(|(unit, modules)| (unit.clone(), modules.clone()))
        .collect();
    if opened.is_empty() && read_by.is_empty() {
        return None;
    }
    let at = super::location(db, project.config.history.url.as_deref(), state);
    at.and_then(|at| Store::open(&at))
        .and_then(|mut s| s.keep_traced(commit, &opened, &read_by, &loaded))
        .err()
        .map(|e| format!("the traced edges were not kept: {}", e.one_line()))
}

/// Each (reader, file) pair of `of`.
fn pairs<'a>(
    of: impl Iterator<Item = (&'a String, &'a BTreeSet<String>)>,
) -> Vec<(&'a str, &'a str)> {
    of.flat_map(|(from, files)| files.iter().map(move |f| (from.as_str(), f.as_str())))
        .collect()
}

impl Store {
    /// Keeps what each unit's traced run opened at `commit` as its traced edges: a whole
    /// run's trace replaces what the unit's earlier ones said, a part of one is added to them
    /// (a file seen again takes this commit). What a module read while it was imported is
    /// only ever added: a run may have seen its import fail part-way. In one transaction, a
    /// statement per chunk of units or rows.
    pub(crate) fn keep_traced(
        &mut self,
        commit: &str,
        opened: &BTreeMap<String, Trace>,
        read_by: &BTreeMap<String, BTreeSet<String>>,
        loaded: &BTreeMap<String, BTreeSet<String>>,
    ) -> Result<(), StoreError> {
        let whole: Vec<&str> = opened
            .iter()
            .filter(|(_, t)| t.whole)
            .map(|(unit, _)| unit.as_str())
            .collect();
        // A whole run whose loads were not seen leaves none: an older run's set may miss
        // what this one's names resolved to.
        let unseen: Vec<&str> = whole
            .iter()
            .copied()
            .filter(|u| !loaded.contains_key(*u))
            .collect();
        let traced = pairs(opened.iter().map(|(u, t)| (u, &t.files)));
        let read = pairs(read_by.iter());
        let write = |tx: &mut dyn super::rollup::Tx| {
            super::execute_in(tx, schema::UNTRACE, &whole)?;
            super::execute_in(tx, schema::UNLOAD, &unseen)?;
            super::insert_pairs(tx, schema::TRACED, commit, &traced)?;
            super::insert_pairs(tx, schema::READ_BY, commit, &read)?;
            for (unit, modules) in loaded {
                let files = modules.iter().map(String::as_str).collect::<Vec<_>>();
                let files = files.join("\n");
                let params = [Param::Text(unit), Param::Text(commit), Param::Text(&files)];
                tx.execute(schema::LOADED, &params)?;
            }
            Ok(())
        };
        match self {
            Store::Sqlite(s) => s.write(write),
            Store::Postgres(s) => s.write(write),
        }
    }

    /// The repository modules loaded when each of `units`' last whole traced run ended
    /// (units never so traced are absent).
    pub(crate) fn loaded_from(
        &mut self,
        units: &[&str],
    ) -> Result<BTreeMap<String, BTreeSet<String>>, StoreError> {
        let mut out = BTreeMap::new();
        for r in self.query_in(schema::LOADED_FROM, units)? {
            let files = r[1].string();
            let modules = files.lines().filter(|l| !l.is_empty()).map(str::to_string);
            out.insert(r[0].string(), modules.collect());
        }
        Ok(out)
    }

    /// What each of `units`' traced runs opened (units never traced are absent).
    pub(crate) fn traced_from(
        &mut self,
        units: &[&str],
    ) -> Result<BTreeMap<String, BTreeSet<String>>, StoreError> {
        let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for r in self.query_in(schema::TRACED_FROM, units)? {
            out.entry(r[0].string()).or_default().insert(r[1].string());
        }
        Ok(out)
    }

    /// For each of `paths`, the units whose traced runs opened it, each with the commit it
    /// was traced at (paths no run opened are absent).
    pub(crate) fn traced_to(&mut self, paths: &[&str]) -> Result<Readers, StoreError> {
        self.readers(schema::TRACED_TO, paths)
    }

    /// For each of `paths`, the modules that read it while they were imported, each with the
    /// commit it was traced at (paths no import read are absent).
    pub(crate) fn read_by_to(&mut self, paths: &[&str]) -> Result<Readers, StoreError> {
        self.readers(schema::READ_BY_TO, paths)
    }

    /// What each of `modules` read while it was imported (modules that read none are absent).
    pub(crate) fn read_by_from(
        &mut self,
        modules: &[&str],
    ) -> Result<BTreeMap<String, BTreeSet<String>>, StoreError> {
        let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for r in self.query_in(schema::READ_BY_FROM, modules)? {
            out.entry(r[0].string()).or_default().insert(r[1].string());
        }
        Ok(out)
    }

    /// `sql`'s (path, reader, commit) rows for `paths`, by path.
    fn readers(&mut self, sql: &str, paths: &[&str]) -> Result<Readers, StoreError> {
        let mut out = Readers::new();
        for r in self.query_in(sql, paths)? {
            out.entry(r[0].string())
                .or_default()
                .insert(r[1].string(), r[2].string());
        }
        Ok(out)
    }
}
