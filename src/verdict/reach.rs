//! What reaches a changed path: the tests the graph walks to from it (with what `max_depth`
//! cut), the tests `[[depends]]` rules name for it, and the tests that run a run-time-named
//! import which may load it.

use super::names::is_test_name;
use super::{Context, Memo, Row, TestEdge, Verdict};
use crate::graph::{Direction, Edge, EdgeKind};
use std::collections::BTreeMap;

/// What the walk from a changed file found besides tests.
pub(super) struct Reach {
    /// `max_depth` cut tests this change reaches.
    pub(super) cut_any: bool,
    /// The module a run-time-named import would have to load for this change to matter — the
    /// file itself, or the first module that depends on it (a data file a module reads) — with
    /// the edges from that module down to the file.
    pub(super) loadable: Option<(String, Vec<Edge>)>,
}

/// A module an import by name can load: one its language says a run-time name loads (not a
/// Python stub or conftest), and no test (tests are collected, never imported by name).
fn loadable(ctx: &Context<'_>, path: &str) -> bool {
    crate::lang::of_source(path).is_some_and(|l| l.loadable(path))
        && !ctx.tests.contains(path)
        && !is_test_name(path)
}

/// The tests the graph reaches from `path` (itself, when it is one), each with its chain; the
/// ones `max_depth` cut are named on the row and in `cut`.
pub(super) fn graph_edges(
    path: &str,
    ctx: &Context<'_>,
    row: &mut Row,
    cut: &mut BTreeMap<String, Vec<String>>,
) -> Reach {
    if ctx.tests.contains(path) {
        row.edges.push(TestEdge {
            test: path.to_string(),
            chain: Vec::new(),
            rule: None,
        });
    }
    let walk = ctx
        .graph
        .walk(path, Direction::Dependents, ctx.config.max_depth);
    for &id in walk.ids().iter().filter(|&&i| ctx.is_test[i as usize]) {
        let test = ctx.graph.name(id);
        let chain = walk.chain(ctx.graph, test);
        row.edges.push(TestEdge {
            test: test.to_string(),
            chain,
            rule: None,
        });
    }
    let loadable = if loadable(ctx, path) {
        Some((path.to_string(), Vec::new()))
    } else {
        walk.nodes(ctx.graph)
            .find(|m| loadable(ctx, m))
            .map(|m| (m.to_string(), walk.chain(ctx.graph, m)))
    };
    let cut_tests: Vec<&str> = walk
        .cut(ctx.graph)
        .filter(|n| ctx.tests.contains(*n))
        .collect();
    let Some(depth) = ctx.config.max_depth.filter(|_| !cut_tests.is_empty()) else {
        return Reach {
            cut_any: false,
            loadable,
        };
    };
    row.reasons.push(format!(
        "max_depth = {depth} cut {} test file(s) this change reaches: {}",
        cut_tests.len(),
        cut_tests.join(", ")
    ));
    for t in cut_tests {
        cut.entry(t.to_string()).or_default().push(path.to_string());
    }
    Reach {
        cut_any: true,
        loadable,
    }
}

/// The tests `[[depends]]` rules select for `path`; whether a rule (one still naming tests)
/// matched it.
pub(super) fn depends_edges(path: &str, ctx: &Context<'_>, row: &mut Row) -> bool {
    let mut ruled = false;
    for rule in ctx.config.depends.iter().filter(|r| r.on.is_match(path)) {
        if ctx.stale_depends.contains(&rule.index) {
            row.reasons.push(format!(
                "warning: [[depends]] rule {} (tests = {}) matches no test file any more — this change deleted the tests it named — so it bounds nothing",
                rule.index, rule.tests.text
            ));
            continue;
        }
        ruled = true;
        let name = format!(
            "[[depends]] rule {} (tests = {}; on = {})",
            rule.index, rule.tests.text, rule.on.text
        );
        for test in ctx.tests.iter().filter(|t| rule.tests.is_match(t)) {
            if !row.edges.iter().any(|e| &e.test == test) {
                row.edges.push(TestEdge {
                    test: test.clone(),
                    chain: Vec::new(),
                    rule: Some(name.clone()),
                });
            }
        }
    }
    ruled
}

/// A dynamic import with no literal part (`import_module(name)`) may load any module, but only
/// where its file runs: the tests that reach the importing file bound a changed module, or a
/// file such a module reads (`module` with the edges `tail` from it down to the change): a
/// `may_load` edge naming the file and line, after the chain to that file. When those are
/// every test, the row is `named_full` by name; `[[loads]]` narrows it to what it loads.
pub(super) fn may_load(
    module: &str,
    tail: &[Edge],
    ctx: &Context<'_>,
    row: &mut Row,
    memo: &mut Memo,
) {
    let path = module;
    let mut every_test: BTreeMap<&str, usize> = BTreeMap::new();
    // A source file's run-time name loads a module of its own language only (a script's
    // `python -m "$X"` may load any).
    let language = crate::lang::of_source(path).map(|l| l.name());
    for (file, line, text) in &ctx.graph.unbounded {
        let other = crate::lang::of_source(file).is_some_and(|l| Some(l.name()) != language);
        if file == path || other {
            continue;
        }
        let walk = memo
            .entry(file.clone())
            .or_insert_with(|| ctx.graph.walk(file, Direction::Dependents, None));
        let load = Edge {
            from: file.clone(),
            to: path.to_string(),
            kind: EdgeKind::MayLoad,
            line: *line,
            detail: text.clone(),
        };
        let reaching: Vec<&str> = ctx
            .graph
            .id(file)
            .into_iter()
            .chain(walk.ids().iter().copied())
            .filter(|&i| ctx.is_test[i as usize])
            .map(|i| ctx.graph.name(i))
            .collect();
        let mut added = 0;
        for test in &reaching {
            if row.edges.iter().any(|e| e.test == *test) {
                continue;
            }
            let mut chain = walk.chain(ctx.graph, test);
            chain.push(load.clone());
            chain.extend(tail.iter().cloned());
            row.edges.push(TestEdge {
                test: test.to_string(),
                chain,
                rule: None,
            });
            added += 1;
        }
        // Every test of the loading file's language (a script's `python -m` loads Python).
        let of = crate::lang::of_source(file).map_or("python", |l| l.name());
        let own_tests = *every_test.entry(of).or_insert_with(|| {
            ctx.tests
                .iter()
                .filter(|t| crate::lang::suite::of_test_unit(t).is_some_and(|s| s.name() == of))
                .count()
        });
        let whole = !reaching.is_empty() && reaching.len() >= own_tests;
        row.reasons.push(format!(
            "{file} line {line} imports a module named at run time (`{text}`), which may be {path}{}: {} — [[loads]] file = \"{file}\", modules = [\"<globs>\"] narrows it to what it loads",
            if tail.is_empty() { String::new() } else { format!(" (which needs {})", row.path) },
            match (reaching.len(), whole) {
                (0, _) => format!("no test reaches {file}, so no test runs that import"),
                (n, true) => format!("every test ({n}) reaches {file}: the whole suite, by name"),
                (n, false) => format!("the {n} test file(s) that reach {file} run it ({added} selected by this edge alone)"),
            }
        ));
        if whole && added > 0 {
            row.verdict = Verdict::NamedFull;
        }
    }
    row.edges.sort_by(|a, b| a.test.cmp(&b.test));
    row.tests = row.edges.iter().map(|e| e.test.clone()).collect();
}
