//! Triage: every failing test of a recorded leg gets exactly one verdict, by ordered rules —
//! passed on the same commit under the same inputs (the leg's, and the test's fingerprint
//! where both results carry one) → `flaky`; failing on main in the same environment →
//! `pre_existing`; selected because of a changed file, with no flaky evidence →
//! `new_regression`; unlinked but known flaky or with flaky evidence → `flaky`; otherwise
//! `unknown`. History is the leg's
//! environment's, whichever shard ran a test, and a verdict names the earlier leg its evidence
//! came from. It never peeks: only what was recorded before the leg (by the store's sequence)
//! counts, so a verdict never changes when later runs arrive. Pure: the store fetches, this
//! decides.

use super::evidence::{self, Past};
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Verdict {
    NewRegression,
    PreExisting,
    Flaky,
    Unknown,
}

impl Verdict {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Verdict::NewRegression => "new_regression",
            Verdict::PreExisting => "pre_existing",
            Verdict::Flaky => "flaky",
            Verdict::Unknown => "unknown",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Confidence {
    High,
    Medium,
    Low,
}

/// A recorded leg, as triage reads it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct LegInfo {
    pub seq: i64,
    pub run: String,
    pub attempt: u32,
    /// Its name: its environment, with `#K/N` when it ran a shard.
    pub leg: String,
    pub commit: String,
    pub branch: Option<String>,
    pub mainline: bool,
    /// The base its change was taken against; none on the default branch.
    pub base: Option<String>,
    pub recorded_unix: i64,
    /// How many results it holds: a leg with none judged nothing.
    pub results: i64,
    /// Its inputs digest (none: recorded before gate kept it).
    pub inputs: Option<String>,
    /// The environment it ran in: what its history is matched by.
    pub environment: String,
    /// The part of the suite it ran (`K/N`); none when unsharded.
    pub shard: Option<String>,
}

/// What a leg knows of its change: each changed path with its verdict, and each selected test
/// unit with the changed path that selected it.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub(crate) struct Change {
    pub paths: Vec<(String, String)>,
    pub selected: Vec<(String, String)>,
}

/// One failing test's verdict.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub(crate) struct Triaged {
    pub test: String,
    pub leg: String,
    pub verdict: Verdict,
    pub confidence: Confidence,
    /// One line: why.
    pub evidence: String,
    /// The earlier leg the evidence came from; none when it is the change, the configuration,
    /// this leg's own tries or nothing.
    pub from: Option<Source>,
}

/// Where a verdict's evidence was recorded: a leg of a run, by its name (environment and
/// shard) and store sequence.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub(crate) struct Source {
    pub seq: i64,
    pub run: String,
    pub leg: String,
}

impl Source {
    fn of(row: &Past) -> Source {
        Source {
            seq: row.seq,
            run: row.run.clone(),
            leg: row.leg.clone(),
        }
    }
}

/// What triage is told besides the history.
pub(crate) struct Rules<'a> {
    /// The window, in days, for messages.
    pub window_days: u64,
    /// The `known_flaky` glob a test file matches, if any.
    pub known_flaky: &'a dyn Fn(&str) -> Option<String>,
}

/// The verdicts of `leg`'s failing tests, from `rows`: the history of those tests in the
/// leg's environment (legs of any shard), ordered by test, sequence and attempt (rows of later legs may be among them; they
/// are never read).
pub(crate) fn triage_leg(
    leg: &LegInfo,
    rows: &[Past],
    change: &Change,
    rules: &Rules<'_>,
) -> Vec<Triaged> {
    rows.chunk_by(|a, b| a.test == b.test)
        .filter_map(|test_rows| {
            let own: Vec<&Past> = test_rows.iter().filter(|r| r.seq == leg.seq).collect();
            let last = own.last()?;
            if !evidence::failing(&last.outcome) {
                return None;
            }
            // Never peeks: the rows before this leg, and nothing after it.
            let prior: Vec<&Past> = test_rows.iter().filter(|r| r.seq < leg.seq).collect();
            Some(judge(leg, last, &own, &prior, change, rules))
        })
        .collect()
}

/// A verdict, how sure it is, its one line of evidence, and the leg that evidence came from.
type Judgement = (Verdict, Confidence, String, Option<Source>);

fn judge(
    leg: &LegInfo,
    last: &Past,
    own: &[&Past],
    prior: &[&Past],
    change: &Change,
    rules: &Rules<'_>,
) -> Triaged {
    let (verdict, confidence, evidence, from) = passed_on_commit(leg, last, own, prior)
        .unwrap_or_else(|| from_history(leg, last, prior, change, rules));
    Triaged {
        test: last.test.clone(),
        leg: leg.leg.clone(),
        verdict,
        confidence,
        evidence,
        from,
    }
}

/// The first rule: a pass on the leg's commit, on an earlier leg or an earlier try of this one
/// (whose failing attempt is `last`).
fn passed_on_commit(
    leg: &LegInfo,
    last: &Past,
    own: &[&Past],
    prior: &[&Past],
) -> Option<Judgement> {
    // A pass on the same commit is flaky evidence only under the same inputs: with another
    // `[env]` value or interpreter variable it is another experiment, not a retry — and so it
    // is with another value of a variable the test itself reads by name, which only its
    // fingerprint holds (compared where both results carry one).
    if let Some(p) = prior.iter().find(|r| {
        r.commit == leg.commit
            && r.outcome == "passed"
            && leg.inputs.is_some()
            && r.inputs == leg.inputs
            && evidence::same_fingerprint(r.fingerprint.as_deref(), last.fingerprint.as_deref())
    }) {
        return Some((
            Verdict::Flaky,
            Confidence::High,
            format!(
                "passed on the same commit {} in run {} (#{})",
                short(&leg.commit),
                p.run,
                p.seq
            ),
            Some(Source::of(p)),
        ));
    }
    own.iter().any(|r| r.outcome == "passed").then(|| {
        (
            Verdict::Flaky,
            Confidence::High,
            format!(
                "passed on an earlier try of this run, on the same commit {}",
                short(&leg.commit)
            ),
            None,
        )
    })
}

/// The rules after a same-commit pass, from the test's history in the leg's environment and
/// the change:
/// failing on main, a regression the change selected, known or recorded flakiness, else
/// unknown.
fn from_history(
    leg: &LegInfo,
    last: &Past,
    prior: &[&Past],
    change: &Change,
    rules: &Rules<'_>,
) -> Judgement {
    let summary = (!prior.is_empty()).then(|| evidence::rollup_of(prior, 0));
    if let Some(f) = summary.as_ref().and_then(|s| s.failing_on_main.as_ref()) {
        // The streak's latest main failure: the main run that shows it is failing now.
        let latest = prior
            .iter()
            .rev()
            .find(|r| r.mainline && evidence::failing(&r.outcome));
        return (
            Verdict::PreExisting,
            Confidence::High,
            format!(
                "failing on main on {} since {} ({} main run{})",
                leg.environment,
                short(&f.since),
                f.runs,
                if f.runs == 1 { "" } else { "s" }
            ),
            latest.copied().map(Source::of),
        );
    }
    let flakes = summary.as_ref().map_or(Flakes::default(), |s| Flakes {
        all: s.flaky,
        reruns: s.fail_then_pass,
    });
    let file = last.file.as_deref();
    let causes = links(change, &last.test, file);
    if !causes.is_empty() && flakes.all == 0 {
        return (
            Verdict::NewRegression,
            Confidence::High,
            format!(
                "{} tests changed {}",
                file.unwrap_or(&last.test),
                causes.join(", ")
            ),
            None,
        );
    }
    let in_window = format!("in {} days", rules.window_days);
    // The latest leg that showed flaky evidence of it: where a flaky verdict's count ends.
    let flaked = prior
        .iter()
        .rev()
        .find(|r| r.flake != evidence::Flake::None);
    let unlinked = causes
        .is_empty()
        .then(|| unlinked_flaky(file, &flakes, &in_window, rules, flaked.copied()));
    unlinked.flatten().unwrap_or_else(|| {
        (
            Verdict::Unknown,
            Confidence::Low,
            unknown_why(change, &causes, &flakes, &in_window),
            None,
        )
    })
}

/// A failure nothing in the change links to: flaky when its file is known flaky, or when the
/// window holds flaky evidence of it (the latest in leg `flaked`).
fn unlinked_flaky(
    file: Option<&str>,
    flakes: &Flakes,
    in_window: &str,
    rules: &Rules<'_>,
    flaked: Option<&Past>,
) -> Option<Judgement> {
    if let Some(glob) = file.and_then(|f| (rules.known_flaky)(f)) {
        return Some((
            Verdict::Flaky,
            Confidence::Medium,
            format!("unlinked to the change, and known flaky (`known_flaky`: {glob})"),
            None,
        ));
    }
    (flakes.all > 0).then(|| {
        (
            Verdict::Flaky,
            Confidence::Medium,
            format!(
                "flaky {} {in_window} ({})",
                times(flakes.all),
                flakes.kinds()
            ),
            flaked.map(Source::of),
        )
    })
}

/// A commit as messages show it.
fn short(commit: &str) -> String {
    commit[..12.min(commit.len())].to_string()
}

/// Why nothing explains a failure.
fn unknown_why(change: &Change, causes: &[String], flakes: &Flakes, in_window: &str) -> String {
    if !causes.is_empty() {
        format!(
            "tests changed {}, but flaky {} {in_window} ({})",
            causes.join(", "),
            times(flakes.all),
            flakes.kinds()
        )
    } else if let Some((path, v)) = change
        .paths
        .iter()
        .find(|(_, v)| v == "named_full" || v == "refused")
    {
        format!("no edge links it to the change; {path} ({v}) may affect the whole suite")
    } else if change.paths.is_empty() {
        "no change recorded for this run (on the default branch, or no base): nothing links it"
            .to_string()
    } else {
        format!(
            "no edge links it to the {} changed file(s), and no history explains it",
            change.paths.len()
        )
    }
}

/// The changed paths that selected the test (its file or Go unit, or a node id of it).
fn links(change: &Change, test: &str, file: Option<&str>) -> Vec<String> {
    let mut causes: Vec<String> = change
        .selected
        .iter()
        .filter(|(unit, _)| {
            Some(unit.as_str()) == file
                || unit == test
                || test
                    .strip_prefix(unit.as_str())
                    .is_some_and(|rest| rest.starts_with("::") || rest.starts_with('['))
        })
        .map(|(_, cause)| cause.clone())
        .collect();
    causes.sort();
    causes.dedup();
    causes
}

fn times(n: u32) -> String {
    if n == 1 {
        "1 time".into()
    } else {
        format!("{n} times")
    }
}

/// How much flaky evidence a test has in the window, and how much of it is fail-then-pass.
#[derive(Default)]
struct Flakes {
    all: u32,
    reruns: u32,
}

impl Flakes {
    fn kinds(&self) -> String {
        let same = self.all - self.reruns;
        let mut parts = Vec::new();
        if self.reruns > 0 {
            parts.push(format!("{} fail-then-pass", self.reruns));
        }
        if same > 0 {
            parts.push(format!("{same} failed and passed on one commit"));
        }
        parts.join(", ")
    }
}

/// The closing line's counts, in the verdicts' order.
pub(crate) fn counts(verdicts: &[Triaged]) -> [(Verdict, usize); 4] {
    [
        Verdict::NewRegression,
        Verdict::PreExisting,
        Verdict::Flaky,
        Verdict::Unknown,
    ]
    .map(|v| (v, verdicts.iter().filter(|t| t.verdict == v).count()))
}

#[cfg(test)]
mod tests;
