//! Stage 4 — verdicts: every changed path gets exactly one row (resolved, inert, named_full or
//! refused) with its reasons, and the rows decide the run-level verdict and the selection.
//! Invariant: a selected path always exists in the gated tree; a deleted test leaves the
//! selection with a row that says so.

use crate::config::{Config, Fallback};
use crate::graph::{self, Direction, Edge, EdgeKind, Graph};
use crate::path::RepoPath;
use crate::repo::diff::{Change, Status};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Verdict {
    Resolved,
    Inert,
    NamedFull,
    Refused,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RunVerdict {
    /// Every change bounded: the resolved subset runs.
    Bounded,
    /// At least one change's blast radius is the whole suite, recorded by name.
    NamedFull,
    /// At least one change cannot be bounded: the run aborts unless a decision is recorded.
    Refused,
    /// Every change is inert: nothing runs.
    Inert,
    /// Nothing changed.
    Empty,
}

/// A test and the chain of edges from it down to the changed file.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct TestEdge {
    pub test: String,
    pub chain: Vec<Edge>,
    /// Set when a `[[depends]]` rule, not the graph, selected the test.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Row {
    pub path: RepoPath,
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other: Option<RepoPath>,
    pub verdict: Verdict,
    pub reasons: Vec<String>,
    pub tests: Vec<String>,
    pub edges: Vec<TestEdge>,
    /// The first reason counts the row's tests (`selects N test file(s)`, `no test reaches
    /// it…`): what `recount` rewrites when history adds tests to the row.
    #[serde(skip)]
    pub counted: bool,
}

/// What `decide` needs to know about the gated tree.
pub(crate) struct Context<'a> {
    pub graph: &'a Graph,
    pub config: &'a Config,
    /// Test files of the gated tree (never deleted ones).
    pub tests: &'a BTreeSet<String>,
    /// Files whose facts may be incomplete → why.
    pub flagged: &'a BTreeMap<String, crate::analyze::facts::Flags>,
    /// Per graph node id: whether it is a test (`tests` by id, for walks).
    pub is_test: Vec<bool>,
    /// The tree's symlinks → what each points at, said for its row.
    pub links: &'a BTreeMap<String, String>,
    /// `[[depends]]` rules (by index) whose tests the change deleted.
    pub stale_depends: &'a BTreeSet<usize>,
}

pub(crate) struct Decision {
    pub rows: Vec<Row>,
    pub verdict: RunVerdict,
    /// Selected test files (or pytest node ids) → why.
    pub selected: BTreeMap<String, Vec<String>>,
    /// Tests that `max_depth` kept out, with the change that would have selected them.
    pub cut: BTreeMap<String, Vec<String>>,
    /// Problems with the configuration that did not stop the run (e.g. an unmatched always_run).
    pub notes: Vec<String>,
}

/// Every change's row, the run-level verdict and the selection. `range_refused`: the range
/// itself cannot be bounded (its base is missing), which refuses whatever the rows say.
pub(crate) fn decide(changes: &[Change], ctx: &Context<'_>, range_refused: bool) -> Decision {
    let mut cut: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut memo = Memo::new();
    let rows: Vec<Row> = changes
        .iter()
        .map(|c| row(c, ctx, &mut cut, &mut memo))
        .collect();
    let verdict = if range_refused {
        RunVerdict::Refused
    } else if rows.is_empty() {
        RunVerdict::Empty
    } else if rows.iter().any(|r| r.verdict == Verdict::Refused) {
        RunVerdict::Refused
    } else if rows.iter().any(|r| r.verdict == Verdict::NamedFull) {
        RunVerdict::NamedFull
    } else if rows.iter().all(|r| r.verdict == Verdict::Inert) {
        RunVerdict::Inert
    } else {
        RunVerdict::Bounded
    };
    let mut selected: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for row in &rows {
        for e in &row.edges {
            let why = match (&e.rule, e.chain.is_empty()) {
                (Some(rule), _) => format!("{rule} matches {}", row.path),
                (None, true) => format!("{} changed ({})", row.path, status_word(row.status)),
                (None, false) => graph::explain_chain(&e.chain),
            };
            selected.entry(e.test.clone()).or_default().push(why);
        }
    }
    let mut notes = Vec::new();
    if !matches!(verdict, RunVerdict::Inert | RunVerdict::Empty) {
        for rule in &ctx.config.always_run {
            let matched = rule.matches(ctx.tests);
            if matched.is_empty() {
                notes.push(format!(
                    "always_run `{}` matches no test file of the gated tree",
                    rule.entry
                ));
            }
            for m in matched {
                selected
                    .entry(m)
                    .or_default()
                    .push(format!("always_run `{}` (smoke floor)", rule.entry));
            }
        }
    }
    // A node id is redundant when its whole file runs.
    let files: BTreeSet<String> = selected
        .keys()
        .filter(|k| !k.contains("::"))
        .cloned()
        .collect();
    selected.retain(|k, _| {
        k.split_once("::")
            .is_none_or(|(file, _)| !files.contains(file))
    });
    for (test, reasons) in selected.iter_mut() {
        reasons.dedup();
        if ctx
            .config
            .known_flaky
            .is_match(test.split("::").next().unwrap_or(test))
        {
            reasons.push(
                "known flaky (`known_flaky` in .gate.toml): a failure here is triaged as flaky"
                    .to_string(),
            );
        }
    }
    Decision {
        rows,
        verdict,
        selected,
        cut,
        notes,
    }
}

/// The walk towards tests from each file holding an unbounded dynamic import: walked once per
/// decision, kept in the call (deciding shares no state).
type Memo = BTreeMap<String, graph::Walk>;

fn row(
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

/// Python project manifests: what configures, builds or pins a project.
fn is_manifest(path: &str) -> bool {
    let name = crate::path::file_name(path);
    matches!(
        name,
        "pyproject.toml"
            | "setup.py"
            | "setup.cfg"
            | "tox.ini"
            | "noxfile.py"
            | "pytest.ini"
            | "Pipfile"
            | "Pipfile.lock"
            | "poetry.lock"
            | "uv.lock"
            | "pdm.lock"
            | ".python-version"
            | "MANIFEST.in"
    ) || ((name.starts_with("requirements") || name.starts_with("constraints"))
        && name.ends_with(".txt"))
}

/// The folder of the project a manifest below the root belongs to (the nearest folder at or
/// above it with its own `pyproject.toml`, `setup.py` or `setup.cfg`) when that folder holds
/// none of the gated tests and nothing outside it depends on a file in it (its manifests
/// aside: a test that reads one is an edge like any other):
/// `examples/celery/requirements.txt` pins the example's dependencies, not the suite's. A
/// package the suite imports from such a folder keeps its manifests the suite's.
fn sub_project<'p>(path: &'p str, ctx: &Context<'_>) -> Option<&'p str> {
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

/// What the walk from a changed file found besides tests.
struct Reach {
    /// `max_depth` cut tests this change reaches.
    cut_any: bool,
    /// The module a run-time-named import would have to load for this change to matter — the
    /// file itself, or the first module that depends on it (a data file a module reads) — with
    /// the edges from that module down to the file.
    loadable: Option<(String, Vec<Edge>)>,
}

/// A module an import by name can load: Python source, not a stub, a test or a conftest
/// (those are collected, never imported by name).
fn loadable(ctx: &Context<'_>, path: &str) -> bool {
    crate::path::is_python(path)
        && !is_stub(path)
        && !ctx.tests.contains(path)
        && !is_test_name(path)
        && crate::path::file_name(path) != "conftest.py"
}

/// The tests the graph reaches from `path` (itself, when it is one), each with its chain; the
/// ones `max_depth` cut are named on the row and in `cut`.
fn graph_edges(
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
fn depends_edges(path: &str, ctx: &Context<'_>, row: &mut Row) -> bool {
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

/// The row's verdict from what reaches it: the weak edges for a file nothing else reaches, a
/// refusal for a module a run-time-named import may load, then resolved, inert or refused.
fn conclude(
    change: &Change,
    ctx: &Context<'_>,
    mut row: Row,
    ruled: bool,
    reach: Reach,
    memo: &mut Memo,
) -> Row {
    let cut_any = reach.cut_any;
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
        let inert_doc = !crate::path::is_python(path) && ctx.config.inert.is_match(path);
        if !inert_doc && let Some(weak) = weak_edges(path, ctx) {
            row.reasons.push(format!(
                "no import, reference edge or [[depends]] rule reaches it; {}",
                weak.1
            ));
            row.edges = weak.0;
            row.tests = row.edges.iter().map(|e| e.test.clone()).collect();
        }
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
    let reached = crate::path::is_python(path)
        || crate::analyze::is_shell(path)
        || has_edges
        || !row.tests.is_empty();
    if reached {
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
                (0, _) => "no test reaches it — an untested file, not a reason to run the suite"
                    .to_string(),
                (n, _) => count_line(n),
            },
        );
        return row;
    }
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

fn count_line(n: usize) -> String {
    format!("selects {n} test file(s)")
}

/// After traced edges added `traced` tests to `row`: its count line says the true count, and
/// how many of them the traced edges added (`selects 3 test file(s) (1 by traced edges)`). A
/// row opening with another reason (inert, refused, a deleted test) keeps it.
pub(crate) fn recount(row: &mut Row, traced: usize) {
    if traced == 0 || !row.counted {
        return;
    }
    if let Some(first) = row.reasons.first_mut() {
        *first = format!("{} ({traced} by traced edges)", count_line(row.tests.len()));
    }
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
    if crate::path::is_python(path) {
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

/// A dynamic import with no literal part (`import_module(name)`) may load any module, but only
/// where its file runs: the tests that reach the importing file bound a changed module, or a
/// file such a module reads (`module` with the edges `tail` from it down to the change): a
/// `may_load` edge naming the file and line, after the chain to that file. When those are
/// every test, the row is `named_full` by name; `[[loads]]` narrows it to what it loads.
fn may_load(module: &str, tail: &[Edge], ctx: &Context<'_>, row: &mut Row, memo: &mut Memo) {
    let path = module;
    let mut every_test = None;
    for (file, line, text) in &ctx.graph.unbounded {
        if file == path {
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
        let python_tests = *every_test
            .get_or_insert_with(|| ctx.tests.iter().filter(|t| !graph::is_go_unit(t)).count());
        let whole = !reaching.is_empty() && reaching.len() >= python_tests;
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

/// Go code (or a module file) in a folder the go tool never builds from (`_tools/`,
/// `testdata/`, `.x/`): no package of the tree's modules compiles it.
fn unbuilt_go(path: &str) -> bool {
    use crate::analyze::gomod;
    let name = crate::path::file_name(path);
    // Not cgo's C files: a Python extension's sources may live in `_ext/` too.
    (gomod::is_go(path) || matches!(name, "go.mod" | "go.sum" | "go.work" | "go.work.sum"))
        && gomod::ignored_dir(path)
}

/// A type stub: what a type checker reads in place of the module, never what a run imports.
fn is_stub(path: &str) -> bool {
    path.ends_with(".pyi")
}

/// Stubs and PEP 561's `py.typed` marker matter only to type checkers.
fn is_type_information(path: &str) -> bool {
    is_stub(path) || crate::path::file_name(path) == "py.typed"
}

/// A deleted path is no longer a test of the tree, so its name alone tells.
fn is_test_name(path: &str) -> bool {
    let name = crate::path::file_name(path);
    name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py"))
}

pub(crate) fn status_word(status: Status) -> &'static str {
    match status {
        Status::Added => "added",
        Status::Modified => "modified",
        Status::Deleted => "deleted",
        Status::Renamed => "renamed",
        Status::TypeChanged => "type changed",
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    #[test]
    fn always_run_forms() {
        let tests: BTreeSet<String> = [
            "tests/test_health.py",
            "tests/smoke/test_a.py",
            "tests/test_cart.py",
            "other/tests/test_health.py",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let matches = |entry: &str| {
            let c =
                crate::config::Config::parse(None, &format!("always_run = [{entry:?}]\n")).unwrap();
            c.always_run[0].matches(&tests)
        };
        assert_eq!(matches("tests/smoke/**"), ["tests/smoke/test_a.py"]);
        assert_eq!(
            matches("tests.test_health::*"),
            ["other/tests/test_health.py", "tests/test_health.py"]
        );
        assert_eq!(
            matches("tests/test_cart.py::test_total"),
            ["tests/test_cart.py::test_total"]
        );
        assert!(matches("tests/test_gone.py").is_empty());
        // A dotted id whose glob cannot compile is an error when the file is read.
        assert!(crate::config::Config::parse(None, "always_run = [\"a.b[\"]\n").is_err());
    }
}
