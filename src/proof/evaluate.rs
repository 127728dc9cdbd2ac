//! `gate evaluate`'s figures over recorded shadow compares: failure recall with the lower
//! bound of its 95% Wilson interval (20 lucky runs are not "100%"), faulty-change recall, the
//! selected fraction by files and by recorded seconds, the misses ranked by cause, the flaky
//! apart, and the units with no result counted as unknown — never as passes. Units are joined
//! by identity (path), whatever the order either side lists them in.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// One shadow compare as evaluated: the decision's inventory and selection, the judgements,
/// the recorded durations.
pub(crate) struct Compare {
    pub commit: String,
    /// The decision's verdict ran the whole suite (named_full, or refused with a decision).
    pub ran_everything: bool,
    pub inventory: BTreeSet<String>,
    pub selected: BTreeSet<String>,
    pub reused: BTreeSet<String>,
    pub judged: Vec<Judgement>,
    pub durations: BTreeMap<String, u64>,
    /// gate's own time before the runner started, when recorded.
    pub select_ms: Option<u64>,
    /// gate's own time recording a leg at the commit, when one was recorded.
    pub record_ms: Option<u64>,
    /// `(changed file, test)` pairs the decision selected through traced edges alone: what a
    /// run opened that no static edge reaches.
    pub traced_only: Vec<(String, String)>,
}

impl Compare {
    /// The units the decision ran: its selection (the whole inventory for a whole-suite
    /// verdict) less what the ledger reused.
    pub(crate) fn ran(&self) -> BTreeSet<&String> {
        let chosen = if self.ran_everything {
            &self.inventory
        } else {
            &self.selected
        };
        chosen.difference(&self.reused).collect()
    }
}

#[derive(Deserialize)]
pub(crate) struct Judgement {
    pub unit: String,
    pub class: String,
    pub cause: Option<String>,
}

#[derive(Serialize, Debug, PartialEq)]
pub(crate) struct Evaluation {
    pub version: u32,
    /// Shadow compares evaluated (complete whole-suite runs, each against its decision).
    pub runs: usize,
    /// Failing test files (flaky ones apart), and those the decisions ran.
    pub failing: usize,
    pub caught: usize,
    /// caught / failing; null with no failure.
    pub failure_recall: Option<f64>,
    /// The lower bound of its 95% Wilson score interval.
    pub failure_recall_lower: Option<f64>,
    /// Compares with at least one (non-flaky) failure, and those with at least one caught.
    pub faulty_changes: usize,
    pub faulty_changes_caught: usize,
    pub faulty_change_recall: Option<f64>,
    /// Selected (and run, not reused) units over the inventory, summed over the compares.
    pub selected_fraction_files: Option<f64>,
    /// Their recorded seconds over the whole suite's.
    pub selected_fraction_seconds: Option<f64>,
    /// Misses by cause, most frequent first.
    pub misses: Vec<Miss>,
    pub flaky: usize,
    /// Failing units whose failing tests failed at the base already (apart, like the flaky).
    pub pre_existing: usize,
    /// Inventory units with no result in the whole-suite run: unknown, never passes.
    pub unknown: usize,
    /// From the `gate audit` tallies kept in the window: (covered + named_full) / observed
    /// (test, file) dependencies; unknown with no audit.
    pub graph_completeness: Option<f64>,
    /// Compares left out because their decision no longer hashes to its id.
    pub untrusted: usize,
    /// Static gaps: a traced edge selected a test no static edge did (`commit: test opened
    /// file`), each one for a rule or an analyser fix.
    pub static_gaps: Vec<String>,
}

#[derive(Serialize, Debug, PartialEq)]
pub(crate) struct Miss {
    pub cause: String,
    pub count: usize,
    /// The units missed for it, `commit:unit`.
    pub units: Vec<String>,
}

/// The lower bound of the 95% Wilson score interval of `k` successes in `n` trials.
pub(crate) fn wilson_lower(k: usize, n: usize) -> Option<f64> {
    if n == 0 {
        return None;
    }
    let (k, n, z) = (k as f64, n as f64, 1.96_f64);
    let p = k / n;
    let z2 = z * z;
    let centre = p + z2 / (2.0 * n);
    let spread = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Some((centre - spread) / (1.0 + z2 / n))
}

/// The kind of a miss's cause: the cause without the change or the pass it names.
fn cause_kind(cause: &str) -> String {
    if cause.starts_with("no edge linked") {
        "no edge linked the change to the test".into()
    } else if cause.starts_with("max_depth cut") {
        "max_depth cut the chain".into()
    } else if cause.starts_with("the ledger reused") {
        "the ledger reused a pass".into()
    } else {
        cause.to_string()
    }
}

pub(crate) fn evaluate(compares: &[Compare]) -> Evaluation {
    let ratio = |a: usize, b: usize| (b > 0).then(|| a as f64 / b as f64);
    let (mut failing, mut caught, mut flaky, mut unknown) = (0, 0, 0, 0);
    let mut pre_existing = 0;
    let (mut faulty, mut faulty_caught) = (0, 0);
    let (mut sel_files, mut all_files, mut sel_ms, mut all_ms) = (0usize, 0usize, 0u64, 0u64);
    let mut misses: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut static_gaps = Vec::new();
    for c in compares {
        for (file, test) in &c.traced_only {
            static_gaps.push(format!("{}: {test} opened {file}", short(&c.commit)));
        }
        let mut this_failing = 0;
        let mut this_caught = 0;
        for j in &c.judged {
            match j.class.as_str() {
                "flaky" => flaky += 1,
                "pre_existing" => pre_existing += 1,
                "caught" => {
                    this_failing += 1;
                    this_caught += 1;
                }
                _ => {
                    this_failing += 1;
                    let kind = cause_kind(j.cause.as_deref().unwrap_or("unknown"));
                    misses.entry(kind).or_default().push(format!(
                        "{}:{}",
                        short(&c.commit),
                        j.unit
                    ));
                }
            }
        }
        failing += this_failing;
        caught += this_caught;
        if this_failing > 0 {
            faulty += 1;
            faulty_caught += usize::from(this_caught > 0);
        }
        let ran = c.ran();
        sel_files += ran.iter().filter(|u| c.inventory.contains(**u)).count();
        all_files += c.inventory.len();
        unknown += c
            .inventory
            .iter()
            .filter(|u| !c.durations.contains_key(*u))
            .count();
        for (unit, ms) in &c.durations {
            all_ms += ms;
            if ran.contains(unit) {
                sel_ms += ms;
            }
        }
    }
    let mut misses: Vec<Miss> = misses
        .into_iter()
        .map(|(cause, units)| Miss {
            cause,
            count: units.len(),
            units,
        })
        .collect();
    misses.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.cause.cmp(&b.cause)));
    Evaluation {
        version: 1,
        runs: compares.len(),
        failing,
        caught,
        failure_recall: ratio(caught, failing),
        failure_recall_lower: wilson_lower(caught, failing),
        faulty_changes: faulty,
        faulty_changes_caught: faulty_caught,
        faulty_change_recall: ratio(faulty_caught, faulty),
        selected_fraction_files: ratio(sel_files, all_files),
        selected_fraction_seconds: (all_ms > 0).then(|| sel_ms as f64 / all_ms as f64),
        misses,
        flaky,
        pre_existing,
        unknown,
        graph_completeness: None,
        untrusted: 0,
        static_gaps,
    }
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

/// The human report: a few lines, the misses by cause.
pub(crate) fn human(e: &Evaluation) -> String {
    let pct =
        |v: Option<f64>| v.map_or_else(|| "unknown".to_string(), |v| format!("{:.1}%", v * 100.0));
    let mut out = format!(
        "gate evaluate: {} shadow run(s)\n  failure recall: {} ({} of {} failing test files caught; 95% lower bound {})\n  faulty-change recall: {} ({} of {} changes with a failure had one caught)\n  selected: {} of test files, {} of recorded seconds\n  flaky (apart): {}; failing at the base already (apart): {}; no result (unknown): {}; graph completeness: {}\n",
        e.runs,
        pct(e.failure_recall),
        e.caught,
        e.failing,
        pct(e.failure_recall_lower),
        pct(e.faulty_change_recall),
        e.faulty_changes_caught,
        e.faulty_changes,
        pct(e.selected_fraction_files),
        pct(e.selected_fraction_seconds),
        e.flaky,
        e.pre_existing,
        e.unknown,
        pct(e.graph_completeness),
    );
    for m in &e.misses {
        out.push_str(&format!(
            "  missed {}×: {}\n",
            m.count,
            crate::terminal::shown(&m.cause)
        ));
    }
    if !e.static_gaps.is_empty() {
        out.push_str(&format!(
            "  static gaps: {} (a traced edge selected a test no static edge did — a rule or an analyser fix each)\n",
            e.static_gaps.len()
        ));
        for gap in &e.static_gaps {
            out.push_str(&format!("    {}\n", crate::terminal::shown(gap)));
        }
    }
    if e.untrusted > 0 {
        out.push_str(&format!(
            "  left out: {} shadow run(s) whose decision was edited after it was frozen\n",
            e.untrusted
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(items: &[&str]) -> BTreeSet<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    fn judged(items: &[(&str, &str, Option<&str>)]) -> Vec<Judgement> {
        items
            .iter()
            .map(|(u, c, why)| Judgement {
                unit: u.to_string(),
                class: c.to_string(),
                cause: why.map(str::to_string),
            })
            .collect()
    }

    /// A whole-suite verdict ran every unit but the reused, whatever its selection listed.
    #[test]
    fn a_whole_suite_verdict_counts_as_running_everything() {
        let c = Compare {
            commit: "cccccccccccccccc".into(),
            ran_everything: true,
            inventory: set(&["a", "b", "c"]),
            selected: set(&["a"]),
            reused: set(&["c"]),
            judged: vec![],
            durations: [("a", 10), ("b", 30), ("c", 60)]
                .map(|(u, ms)| (u.to_string(), ms))
                .into(),
            select_ms: None,
            record_ms: None,
            traced_only: Vec::new(),
        };
        let e = evaluate(std::slice::from_ref(&c));
        assert_eq!(e.selected_fraction_files, Some(2.0 / 3.0));
        assert_eq!(e.selected_fraction_seconds, Some(40.0 / 100.0));
    }

    /// Wilson's lower bound by hand: 20 of 20 → (1 + 1.9208/20 − 1.96·√(3.8416/1600)) /
    /// (1 + 3.8416/20) = (1.09604 − 0.09604) / 1.19208 = 0.83886.
    #[test]
    fn twenty_lucky_runs_are_not_a_hundred_percent() {
        let lower = wilson_lower(20, 20).unwrap();
        assert!((lower - 0.838_86).abs() < 1e-4, "{lower}");
        assert_eq!(wilson_lower(0, 0), None);
        assert!((wilson_lower(0, 10).unwrap()).abs() < 1e-12);
    }

    /// Two compares worked by hand. First: inventory a, b, c, d; selected a, b (b reused);
    /// a caught, c missed (no edge), d flaky; durations a 100, b 50, c 200, d 150 ms.
    /// Second: inventory a, b, c; selected c; nothing failing; c has no result.
    /// Failing 2, caught 1: recall 0.5; faulty changes 1, caught 1; files run 1 + 1 of 4 + 3 =
    /// 2/7; seconds run 100 of 500 (first) + 0 of 150 (second) = 100/650; unknown 1; flaky 1.
    #[test]
    fn figures_by_hand() {
        let compares = [
            Compare {
                commit: "aaaaaaaaaaaaaaaa".into(),
                inventory: set(&["d", "c", "b", "a"]),
                selected: set(&["b", "a"]),
                reused: set(&["b"]),
                judged: judged(&[
                    ("c", "missed", Some("no edge linked src/x.py to it")),
                    ("a", "caught", None),
                    ("d", "flaky", None),
                    (
                        "e",
                        "pre_existing",
                        Some("its failing tests failed at the base already"),
                    ),
                ]),
                durations: [("a", 100), ("b", 50), ("c", 200), ("d", 150)]
                    .map(|(u, ms)| (u.to_string(), ms))
                    .into(),
                ran_everything: false,
                select_ms: None,
                record_ms: None,
                traced_only: vec![("data/x.json".into(), "b".into())],
            },
            Compare {
                commit: "bbbbbbbbbbbbbbbb".into(),
                inventory: set(&["a", "b", "c"]),
                selected: set(&["c"]),
                reused: set(&[]),
                judged: vec![],
                durations: [("a", 100), ("b", 50)]
                    .map(|(u, ms)| (u.to_string(), ms))
                    .into(),
                ran_everything: false,
                select_ms: None,
                record_ms: None,
                traced_only: Vec::new(),
            },
        ];
        let e = evaluate(&compares);
        assert_eq!((e.runs, e.failing, e.caught), (2, 2, 1));
        assert_eq!(e.failure_recall, Some(0.5));
        assert_eq!((e.faulty_changes, e.faulty_changes_caught), (1, 1));
        assert_eq!(e.selected_fraction_files, Some(2.0 / 7.0));
        assert_eq!(e.selected_fraction_seconds, Some(100.0 / 650.0));
        assert_eq!((e.flaky, e.pre_existing, e.unknown), (1, 1, 1));
        assert_eq!(e.static_gaps, ["aaaaaaaaaaaa: b opened data/x.json"]);
        assert_eq!(
            e.misses,
            [Miss {
                cause: "no edge linked the change to the test".into(),
                count: 1,
                units: vec!["aaaaaaaaaaaa:c".into()],
            }]
        );
        assert!(human(&e).contains("failure recall: 50.0% (1 of 2 failing test files caught"));
    }
}
