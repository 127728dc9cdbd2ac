//! A row's verdict once its edges are known, and the weak edges tried for a file nothing
//! else reaches.

use super::names::{is_manifest, is_test_name, is_type_information, unbuilt_go};
use super::reach::{Reach, may_load};
use super::{Context, Memo, Row, TestEdge, Verdict, count_line};
use crate::config::Fallback;
use crate::graph::{Edge, EdgeKind};
use crate::path::RepoPath;
use crate::repo::diff::{Change, Status};

/// The row's verdict from what reaches it: the weak edges for a file nothing else reaches, a
/// refusal for a module a run-time-named import may load, then resolved, inert or refused.
pub(super) fn conclude(
    change: &Change,
    ctx: &Context<'_>,
    mut row: Row,
    ruled: bool,
    reach: Reach,
    memo: &mut Memo,
) -> Row {
    let path = &change.path;
    let is_test = ctx.tests.contains(path.as_str()) || is_test_name(path);
    let has_edges = ctx.graph.has_dependents(path) || ruled;
    if row.tests.is_empty() && !has_edges && is_type_information(path) {
        row.verdict = Verdict::Inert;
        row.reasons.push(
            "type information only (a stub or py.typed): a type checker reads it, never a test run, and no test that runs a type checker reaches it — inert"
                .to_string(),
        );
        return row;
    }
    if row.tests.is_empty() && !is_test && !has_edges {
        add_weak_edges(path, ctx, &mut row);
    }
    if let Some((module, tail)) = &reach.loadable {
        may_load(module, tail, ctx, &mut row, memo);
    }
    if row.tests.is_empty() && !has_edges && unbuilt_go(path) {
        row.reasons.push(
            "no test reaches it: the go tool builds no package from folders named testdata or starting with `_` or `.`, so no `go test` compiles it"
                .to_string(),
        );
        return row;
    }
    // Code gate reads (Python, shell scripts) that nothing reaches is an untested file: its
    // analysis would have found the test that imports or runs it.
    let reached = reads_whole(path, ctx)
        || crate::analyze::is_shell(path)
        || has_edges
        || !row.tests.is_empty();
    if reached {
        count(change, ctx, &mut row, reach.cut_any);
        return row;
    }
    unreached(path, ctx, row)
}

/// Whether `path` is source of a language whose analysis reads every dependency it has: one
/// nothing reaches is untested, never guessed for.
fn reads_whole(path: &str, ctx: &Context<'_>) -> bool {
    ctx.layouts.reads_whole(path)
}

/// The weak edges of a file nothing else reaches, unless it is a document the inert globs
/// cover.
fn add_weak_edges(path: &str, ctx: &Context<'_>, row: &mut Row) {
    let inert_doc = !reads_whole(path, ctx) && ctx.config.inert.is_match(path);
    if !inert_doc && let Some(weak) = weak_edges(path, ctx) {
        row.reasons.push(format!(
            "no import, reference edge or [[depends]] rule reaches it; {}",
            weak.1
        ));
        row.edges = weak.0;
        row.tests = row.edges.iter().map(|e| e.test.clone()).collect();
    }
}

/// A reached row's first reason: how many tests it selects, or why none.
fn count(change: &Change, ctx: &Context<'_>, row: &mut Row, cut_any: bool) {
    let path = &change.path;
    let n = row.tests.len();
    row.counted = !(n == 0 && change.status == Status::Deleted);
    row.reasons.insert(
        0,
        match (n, change.status) {
            (0, Status::Deleted) if change.other.is_none() && is_test_name(path) => {
                "deleted test file — it leaves the selection".to_string()
            }
            (0, _) if cut_any => format!(
                "no test within max_depth = {} import hop(s) reaches it",
                ctx.config.max_depth.unwrap_or_default()
            ),
            (0, _) => {
                "no test reaches it — an untested file, not a reason to run the suite".to_string()
            }
            (n, _) => count_line(n),
        },
    );
}

/// A file gate does not read as code and nothing reaches: inert when the inert globs or its
/// own sub-project say so, else the fallback's verdict.
fn unreached(path: &RepoPath, ctx: &Context<'_>, mut row: Row) -> Row {
    if ctx.config.inert.is_match(path) {
        row.verdict = Verdict::Inert;
        row.reasons
            .push("non-code with zero reference edges — inert".to_string());
        return row;
    }
    if let Some(project) = sub_project(path, ctx) {
        row.verdict = Verdict::Inert;
        row.reasons.push(format!(
            "configures the project in {project}/ (its own pyproject.toml or setup.py), which holds none of the gated tests, and no edge reaches it — inert"
        ));
        return row;
    }
    let fact = format!(
        "{path}: no import, reference edge or [[depends]] rule reaches it, and it is not inert"
    );
    match ctx.config.fallback {
        Fallback::Refuse => row.verdict = Verdict::Refused,
        Fallback::Full => row.verdict = Verdict::NamedFull,
    }
    row.reasons.push(match ctx.config.fallback {
        Fallback::Refuse => fact,
        Fallback::Full => format!("{fact} (fallback = \"full\")"),
    });
    row
}

/// The last-resort edges for a file nothing else reaches, weakest last: a test named after it
/// (`foo.py` ↔ `test_foo.py`), the pytest-datadir folder of a test (`tests/test_x/` ↔
/// `tests/test_x.py`), then the tests of the nearest folder above it that holds tests.
fn weak_edges(path: &str, ctx: &Context<'_>) -> Option<(Vec<TestEdge>, String)> {
    let edge = |test: &str, kind: EdgeKind, detail: String| TestEdge {
        test: test.to_string(),
        chain: vec![Edge {
            from: test.to_string(),
            to: path.to_string(),
            kind,
            line: 0,
            detail,
        }],
        rule: None,
    };
    if crate::path::is_python(path) {
        let name = crate::path::file_name(path);
        let stem = name.trim_end_matches(".pyi").trim_end_matches(".py");
        let wanted = [format!("test_{stem}.py"), format!("{stem}_test.py")];
        let named: Vec<TestEdge> = ctx
            .tests
            .iter()
            .filter(|t| wanted.iter().any(|w| crate::path::file_name(t) == w))
            .map(|t| edge(t, EdgeKind::NameMatch, stem.to_string()))
            .collect();
        if !named.is_empty() {
            return Some((named, "name mapping: the tests named after it".into()));
        }
    }
    for dir in crate::path::ancestors(path).filter(|d| !d.is_empty()) {
        let test = format!("{dir}.py");
        if ctx.tests.contains(&test) {
            return Some((
                vec![edge(
                    &test,
                    EdgeKind::Convention,
                    format!("has its data folder {dir}/ (pytest-datadir)"),
                )],
                format!("it is in {test}'s data folder"),
            ));
        }
    }
    if reads_whole(path, ctx) {
        return None; // an untested module: no test reaches it
    }
    for dir in crate::path::ancestors(path).filter(|d| !d.is_empty()) {
        let prefix = format!("{dir}/");
        let near: Vec<TestEdge> = ctx
            .tests
            .range(prefix.clone()..)
            .take_while(|t| t.starts_with(&prefix))
            .map(|t| edge(t, EdgeKind::Proximity, dir.to_string()))
            .collect();
        if !near.is_empty() {
            return Some((
                near,
                format!("proximity: the tests under {dir}/ (the weakest edge)"),
            ));
        }
    }
    None
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
