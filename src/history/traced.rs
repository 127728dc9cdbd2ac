//! Traced edges: what a test file's run really opened in the repository (seen by the probe's
//! audit hook in a gated pytest run), kept per test file with the commit it was traced at and
//! replaced when that file is traced again. Selection is the union of the static graph and
//! these edges: a traced edge only ever adds a test to a changed file's row, shown as such; it
//! never removes one, never turns a refusal into a bound, and a store that cannot be read adds
//! nothing and says why.

use super::{Location, Store};
use crate::graph::{Edge, EdgeKind};
use crate::project::Project;
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
    let paths: Vec<String> = decided.rows.iter().map(|r| r.path.to_string()).collect();
    let found = Store::open(&at).and_then(|mut store| {
        paths
            .iter()
            .map(|p| store.traced_to(p))
            .collect::<Result<Vec<_>, _>>()
    });
    let found = match found {
        Ok(found) => found,
        Err(e) => {
            return vec![format!(
                "traced edges skipped (selection is unchanged): {}",
                e.one_line()
            )];
        }
    };
    for (row, traced) in decided.rows.iter_mut().zip(found) {
        for (unit, commit) in traced {
            // Only tests of this tree: a trace names files that may be gone.
            if !project.tests.contains(&unit) || row.tests.contains(&unit) {
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
            let reasons = decided.selected.entry(unit).or_default();
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
    opened: &BTreeMap<String, BTreeSet<String>>,
) -> Option<String> {
    let kept: BTreeMap<String, BTreeSet<String>> = opened
        .iter()
        .filter(|(unit, _)| project.tests.contains(*unit))
        .map(|(unit, paths)| {
            let paths = paths
                .iter()
                .filter(|p| *p != unit && files.contains(*p))
                .cloned()
                .collect();
            (unit.clone(), paths)
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
