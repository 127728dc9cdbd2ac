//! Traced edges: what a test file's run really opened in the repository (seen by the probe's
//! audit hook in a gated pytest run), kept per test file with the commit it was traced at. A
//! whole run of the file (every one of its tests ran and passed; for `gate audit`, the traced
//! run exited 0) replaces its earlier trace; a run cut short saw only a part, which is added
//! to it — a part never drops an edge. Selection is the union of the static graph and
//! these edges: a traced edge only ever adds a test to a changed file's row, shown as such; it
//! never removes one, never turns a refusal into a bound, and a store that cannot be read adds
//! nothing and says why. The store is opened once per use and read with `IN (…)` lists, a
//! statement per chunk of paths or units, never one per path.

use super::{Location, Store, StoreError, schema};
use crate::graph::{Edge, EdgeKind};
use crate::project::Project;
use crate::run::events::Trace;
use crate::verdict::{Decision, RunVerdict, TestEdge};
use std::collections::{BTreeMap, BTreeSet};

/// Adds to each changed file's row the tests whose traced runs opened it; returns notes for
/// the report (a store that could not be read).
pub(crate) fn add(
    state: &std::path::Path,
    project: &Project,
    decided: &mut Decision,
) -> Vec<String> {
    if !matches!(decided.verdict, RunVerdict::Bounded | RunVerdict::NamedFull) {
        return Vec::new();
    }
    let at = match super::location(None, project.config.history.url.as_deref(), state) {
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
    let found = Store::open(&at).and_then(|mut store| store.traced_to(&paths));
    let found = match found {
        Ok(found) => found,
        Err(e) => {
            return vec![format!(
                "traced edges skipped (selection is unchanged): {}",
                e.one_line()
            )];
        }
    };
    for row in &mut decided.rows {
        let Some(traced) = found.get(row.path.as_str()) else {
            continue;
        };
        for (unit, commit) in traced {
            // Only tests of this tree: a trace names files that may be gone.
            if !project.tests.contains(unit) || row.tests.contains(unit) {
                continue;
            }
            let edge = Edge {
                from: unit.clone(),
                to: row.path.to_string(),
                kind: EdgeKind::Traced,
                line: 0,
                detail: commit[..12.min(commit.len())].to_string(),
            };
            let why = edge.explain();
            row.edges.push(TestEdge {
                test: unit.clone(),
                chain: vec![edge],
                rule: None,
            });
            row.tests.push(unit.clone());
            row.reasons.push(why.clone());
            let reasons = decided.selected.entry(unit.clone()).or_default();
            if !reasons.contains(&why) {
                reasons.push(why);
            }
        }
        row.edges.sort_by(|a, b| a.test.cmp(&b.test));
        row.tests.sort();
    }
    Vec::new()
}

/// Keeps what each test file of a run opened, at `commit`: only test files of this tree, and
/// only paths that are files of it (a trace names what the checkout held, which the tree must
/// hold too). Returns why nothing was kept, when it could not be.
pub(crate) fn keep(
    state: &std::path::Path,
    project: &Project,
    files: &BTreeSet<String>,
    commit: &str,
    opened: &BTreeMap<String, Trace>,
) -> Option<String> {
    let kept: BTreeMap<String, Trace> = opened
        .iter()
        .filter(|(unit, _)| project.tests.contains(*unit))
        .map(|(unit, trace)| {
            let files = trace
                .files
                .iter()
                .filter(|p| *p != unit && files.contains(*p))
                .cloned()
                .collect();
            let whole = trace.whole;
            (unit.clone(), Trace { files, whole })
        })
        .collect();
    if kept.is_empty() {
        return None;
    }
    let at = super::location(None, project.config.history.url.as_deref(), state);
    at.and_then(|at| Store::open(&at))
        .and_then(|mut s| s.keep_traced(commit, &kept))
        .err()
        .map(|e| format!("the traced edges were not kept: {}", e.one_line()))
}

impl Store {
    /// Keeps what each unit's traced run opened at `commit` as its traced edges: a whole
    /// run's trace replaces what the unit's earlier ones said, a part of one is added to them
    /// (a file seen again takes this commit). In one transaction, a statement per chunk of
    /// units or rows.
    pub(crate) fn keep_traced(
        &mut self,
        commit: &str,
        opened: &BTreeMap<String, Trace>,
    ) -> Result<(), StoreError> {
        let whole: Vec<&str> = opened
            .iter()
            .filter(|(_, t)| t.whole)
            .map(|(unit, _)| unit.as_str())
            .collect();
        let pairs: Vec<(&str, &str)> = opened
            .iter()
            .flat_map(|(unit, t)| t.files.iter().map(move |f| (unit.as_str(), f.as_str())))
            .collect();
        let write = |tx: &mut dyn super::rollup::Tx| {
            super::execute_in(tx, schema::UNTRACE, &whole)?;
            super::insert_pairs(tx, schema::TRACED, commit, &pairs)
        };
        match self {
            Store::Sqlite(s) => s.write(write),
            Store::Postgres(s) => s.write(write),
        }
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
    /// was traced at, in unit order (paths no run opened are absent).
    pub(crate) fn traced_to(
        &mut self,
        paths: &[&str],
    ) -> Result<BTreeMap<String, BTreeMap<String, String>>, StoreError> {
        let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        for r in self.query_in(schema::TRACED_TO, paths)? {
            out.entry(r[0].string())
                .or_default()
                .insert(r[1].string(), r[2].string());
        }
        Ok(out)
    }
}
