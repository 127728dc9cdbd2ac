//! Stage 5 — verdicts: every changed path gets exactly one row (resolved, inert, named_full or
//! refused) with its reasons, and the rows decide the run-level verdict and the selection.
//! Invariant: a selected path always exists in the gated tree; a deleted test leaves the
//! selection with a row that says so.

mod conclude;
mod names;
mod reach;
mod row;
#[cfg(test)]
mod tests;

use crate::config::Config;
use crate::graph::{self, Edge, Graph};
use crate::path::RepoPath;
use crate::repo::diff::{Change, Status};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

use row::row;

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
    /// Each language's reading of the tree (whether its analysis reads a file whole).
    pub layouts: &'a crate::lang::Layouts,
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
    let verdict = run_verdict(&rows, range_refused);
    let mut selected = selection(&rows);
    let notes = match verdict {
        RunVerdict::Inert | RunVerdict::Empty => Vec::new(),
        _ => always_run(ctx, &mut selected),
    };
    settle(ctx, &mut selected);
    Decision {
        rows,
        verdict,
        selected,
        cut,
        notes,
    }
}

/// The run-level verdict: the worst of the rows', unless the range itself is refused.
fn run_verdict(rows: &[Row], range_refused: bool) -> RunVerdict {
    if range_refused {
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
    }
}

/// Each test the rows' edges select, with why: the rule, the change itself, or the chain.
fn selection(rows: &[Row]) -> BTreeMap<String, Vec<String>> {
    let mut selected: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for row in rows {
        for e in &row.edges {
            let why = match (&e.rule, e.chain.is_empty()) {
                (Some(rule), _) => format!("{rule} matches {}", row.path),
                (None, true) => format!("{} changed ({})", row.path, status_word(row.status)),
                (None, false) => graph::explain_chain(&e.chain),
            };
            selected.entry(e.test.clone()).or_default().push(why);
        }
    }
    selected
}

/// Adds the `always_run` tests to `selected`; a note for each entry that matches none.
fn always_run(ctx: &Context<'_>, selected: &mut BTreeMap<String, Vec<String>>) -> Vec<String> {
    let mut notes = Vec::new();
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
    notes
}

/// The selection as it runs: node ids whose file runs whole dropped, each test's reasons
/// once, and a known flaky test said so.
fn settle(ctx: &Context<'_>, selected: &mut BTreeMap<String, Vec<String>>) {
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
}

/// The walk towards tests from each file holding an unbounded dynamic import: walked once per
/// decision, kept in the call (deciding shares no state).
type Memo = BTreeMap<String, graph::Walk>;

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

pub(crate) fn status_word(status: Status) -> &'static str {
    match status {
        Status::Added => "added",
        Status::Modified => "modified",
        Status::Deleted => "deleted",
        Status::Renamed => "renamed",
        Status::TypeChanged => "type changed",
    }
}
