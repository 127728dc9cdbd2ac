//! A changed path's row, up to what reaches it: refused when no edge can name the path,
//! `named_full` for a manifest of the suite, with a manifest of a project of its own told
//! apart.

use super::conclude::conclude;
use super::names::{is_manifest, unbuilt_go};
use super::reach::{depends_edges, graph_edges};
use super::{Context, Memo, Row, Verdict};
use crate::repo::diff::Change;
use std::collections::BTreeMap;

pub(super) fn row(
    change: &Change,
    ctx: &Context<'_>,
    cut: &mut BTreeMap<String, Vec<String>>,
    memo: &mut Memo,
) -> Row {
    let path = &change.path;
    let mut row = Row {
        path: path.clone(),
        status: change.status,
        other: change.other.clone(),
        verdict: Verdict::Resolved,
        reasons: Vec::new(),
        tests: Vec::new(),
        edges: Vec::new(),
        counted: false,
    };
    if change.non_utf8 {
        row.verdict = Verdict::Refused;
        row.reasons.push(format!(
            "{path}: the path is not valid UTF-8, so no edge can name it"
        ));
        return row;
    }
    if let Some(fact) = ctx.links.get(path.as_str()) {
        row.reasons.push(fact.clone());
    }
    if let Some((reason, builtin)) = ctx
        .config
        .whole_suite_match(path)
        .filter(|_| !unbuilt_go(path))
    {
        // An example's own requirements, or the docs build's (`docs/requirements.txt`: an
        // inert glob covers it), are not the suite's: what reaches the file decides.
        let elsewhere = builtin
            .then(|| match sub_project(path, ctx) {
                Some(project) => Some(format!(
                    "{reason} of the project in {project}/, which holds none of the gated tests — not the suite's"
                )),
                None => ctx.config.inert.is_match(path).then(|| {
                    format!("{reason} where the inert globs say no test looks — not the suite's")
                }),
            })
            .flatten();
        match elsewhere {
            Some(why) => row.reasons.push(why),
            None => {
                row.verdict = Verdict::NamedFull;
                row.reasons.push(reason.to_string());
                return row;
            }
        }
    }
    let reach = graph_edges(path, ctx, &mut row, cut);
    let ruled = depends_edges(path, ctx, &mut row);
    row.edges.sort_by(|a, b| a.test.cmp(&b.test));
    row.tests = row.edges.iter().map(|e| e.test.clone()).collect();
    if let Some(flags) = ctx.flagged.get(path.as_str()) {
        row.reasons.extend(flags.reasons());
    }
    conclude(change, ctx, row, ruled, reach, memo)
}

/// The folder of the project a manifest below the root belongs to (the nearest folder at or
/// above it with its own `pyproject.toml`, `setup.py` or `setup.cfg`) when that folder holds
/// none of the gated tests and nothing outside it depends on a file in it (its manifests
/// aside: a test that reads one is an edge like any other):
/// `examples/celery/requirements.txt` pins the example's dependencies, not the suite's. A
/// package the suite imports from such a folder keeps its manifests the suite's.
pub(super) fn sub_project<'p>(path: &'p str, ctx: &Context<'_>) -> Option<&'p str> {
    if !is_manifest(path) {
        return None;
    }
    let mut dir = crate::path::parent(path);
    while !dir.is_empty() {
        let own = ["pyproject.toml", "setup.py", "setup.cfg"]
            .iter()
            .any(|m| ctx.graph.id(&crate::path::join(dir, m)).is_some());
        if own {
            let prefix = format!("{dir}/");
            let holds_tests = ctx
                .tests
                .range(prefix.clone()..)
                .next()
                .is_some_and(|t| t.starts_with(&prefix));
            return (!holds_tests && !ctx.graph.reached_from_outside(dir, |f| !is_manifest(f)))
                .then_some(dir);
        }
        dir = crate::path::parent(dir);
    }
    None
}
