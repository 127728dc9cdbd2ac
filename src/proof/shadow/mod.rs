//! Shadow compares: a whole-suite run's failures judged against the decision frozen for the
//! same commit and base. Each failing test file or Go package is `caught` (the decision ran
//! it), `missed` with its cause (no edge linked a change to it, `max_depth` cut it, the ledger
//! reused it), or `flaky` — by evidence recorded before this run only, so a miss is never
//! excused as flaky after the fact.

mod compare;

pub(crate) use compare::compare;

/// Whether a run is a shadow run, and why.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shadow {
    Off,
    /// `gate shadow`: a miss is its exit code.
    Asked,
    /// Chosen by `audit_rate` for this CI run: the whole suite runs, the compare is recorded,
    /// and the run's outcome is its tests' (a shadow run never changes it).
    Audit,
}

use crate::run::events::{TestOutcome, TestResult};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// What a shadow compare reads of a frozen decision (`plans/frozen.schema.json`).
#[derive(Deserialize)]
pub(crate) struct Frozen {
    pub verdict: String,
    pub selected: BTreeMap<String, Vec<String>>,
    pub reused: BTreeMap<String, Reused>,
    pub cut: BTreeMap<String, Vec<String>>,
    pub changes: Vec<Changed>,
    pub inventory: Vec<String>,
}

#[derive(Deserialize)]
pub(crate) struct Reused {
    pub commit: String,
    pub passed_at: String,
}

#[derive(Deserialize)]
pub(crate) struct Changed {
    pub path: String,
    pub status: String,
}

/// One failing unit's judgement.
#[derive(Serialize, Debug, PartialEq, Eq)]
pub(crate) struct Judged {
    pub unit: String,
    /// `caught`, `missed` or `flaky`.
    pub class: &'static str,
    /// Why a miss was missed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    /// The `[[depends]]` rule that would have caught it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

/// What one test file or Go package did in a run: the last attempt of each of its tests.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct UnitResult {
    /// Tests whose last attempt failed or errored, by id.
    pub failing: BTreeSet<String>,
    pub passed: u32,
    pub skipped: u32,
    /// The last attempts' milliseconds, summed.
    pub duration_ms: u64,
}

impl UnitResult {
    pub(crate) fn failed(&self) -> u32 {
        u32::try_from(self.failing.len()).unwrap_or(u32::MAX)
    }

    /// `failed` when a test failed, `passed` when one passed and none failed, else `skipped`.
    pub(crate) fn outcome(&self) -> &'static str {
        if !self.failing.is_empty() {
            "failed"
        } else if self.passed > 0 {
            "passed"
        } else {
            "skipped"
        }
    }
}

/// A run's results folded by unit (a test's file, else its id), each test by its last attempt:
/// what a shadow compare judges and what an observation export reports.
pub(crate) fn by_unit(results: &[TestResult]) -> BTreeMap<String, UnitResult> {
    let mut last: BTreeMap<&str, &TestResult> = BTreeMap::new();
    for r in results {
        let entry = last.entry(r.id.as_str()).or_insert(r);
        if r.attempt >= entry.attempt {
            *entry = r;
        }
    }
    let mut out: BTreeMap<String, UnitResult> = BTreeMap::new();
    for (id, r) in last {
        let unit = out
            .entry(r.file.as_deref().unwrap_or(id).to_string())
            .or_default();
        unit.duration_ms += r.duration_ms;
        match r.outcome {
            TestOutcome::Failed | TestOutcome::Error => {
                unit.failing.insert(id.to_string());
            }
            TestOutcome::Passed => unit.passed += 1,
            TestOutcome::Skipped => unit.skipped += 1,
        }
    }
    out
}

/// What was known of a failing unit before this run.
pub(crate) struct Before<'a> {
    /// It had flaky evidence (or is `known_flaky`).
    pub flaky: &'a dyn Fn(&str) -> bool,
    /// Every test of it failing now failed already at the decision's base, in a run recorded
    /// before this one: the change did not break it.
    pub pre_existing: &'a dyn Fn(&str) -> bool,
}

/// Whether a unit's failures are the base's: every test failing now (`now`, not empty) failed
/// at the base in a run recorded before (`at_base`). One new failing test is the change's.
pub(crate) fn failed_at_base(now: &BTreeSet<String>, at_base: &BTreeSet<String>) -> bool {
    !now.is_empty() && now.is_subset(at_base)
}

/// Judges each failing unit against `decision`, by what was known before this run.
pub(crate) fn judge(
    decision: &Frozen,
    failing: &BTreeSet<String>,
    before: &Before<'_>,
) -> Vec<Judged> {
    // A whole-suite or refused verdict runs everything (a refusal only with a cited decision,
    // which runs the rest): nothing it could have missed was left out by the graph.
    let ran_everything = matches!(decision.verdict.as_str(), "named_full" | "refused");
    failing
        .iter()
        .map(|unit| {
            let judged = |class, cause: Option<String>, rule: Option<String>| Judged {
                unit: unit.clone(),
                class,
                cause,
                rule,
            };
            if (before.flaky)(unit) {
                return judged("flaky", None, None);
            }
            if (before.pre_existing)(unit) {
                return judged(
                    "pre_existing",
                    Some("its failing tests failed at the base already".into()),
                    None,
                );
            }
            if let Some(r) = decision.reused.get(unit) {
                return judged(
                    "missed",
                    Some(format!(
                        "the ledger reused its pass at {} ({}): an input of its outcome is missing from its fingerprint",
                        short(&r.commit),
                        r.passed_at
                    )),
                    None,
                );
            }
            if ran_everything || decision.selected.contains_key(unit) {
                return judged("caught", None, None);
            }
            if let Some(changes) = decision.cut.get(unit) {
                return judged(
                    "missed",
                    Some(format!(
                        "max_depth cut the chain from {} to it",
                        changes.join(", ")
                    )),
                    Some(rule(unit, changes.iter().map(String::as_str))),
                );
            }
            let changed: Vec<&str> = decision
                .changes
                .iter()
                .filter(|c| c.status != "deleted")
                .map(|c| c.path.as_str())
                .collect();
            let cause = if decision.inventory.iter().any(|t| t == unit) {
                format!("no edge linked {} to it", list(&changed))
            } else {
                "it is not in the decision's inventory (a test gate did not discover)".to_string()
            };
            judged("missed", Some(cause), Some(rule(unit, changed.into_iter())))
        })
        .collect()
}

/// The `[[depends]]` rule that makes `unit` run when any of `on` changes.
fn rule<'a>(unit: &str, on: impl Iterator<Item = &'a str>) -> String {
    let literal = |p: &str| format!("{:?}", crate::config::glob_literal(p));
    let on: Vec<String> = on.map(literal).collect();
    format!(
        "[[depends]]\ntests = {}\non = [{}]",
        literal(unit),
        on.join(", ")
    )
}

fn list(paths: &[&str]) -> String {
    match paths {
        [] => "no change".to_string(),
        [one] => one.to_string(),
        _ => format!("{} and {} more", paths[0], paths.len() - 1),
    }
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

/// The closing line, in the shape of seed 000's.
pub(crate) fn summary(judged: &[Judged]) -> String {
    let count = |class| judged.iter().filter(|j| j.class == class).count();
    let pre = count("pre_existing");
    format!(
        "gate shadow: {} failing test file(s): {} caught, {} missed, {} flaky{}",
        judged.len(),
        count("caught"),
        count("missed"),
        count("flaky"),
        if pre > 0 {
            format!(", {pre} pre-existing")
        } else {
            String::new()
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frozen() -> Frozen {
        serde_json::from_value(serde_json::json!({
            "verdict": "bounded",
            "selected": {"tests/test_a.py": ["src/a.py"]},
            "reused": {"tests/test_r.py": {"commit": "0123456789abcdef", "branch": null, "leg": "default", "passed_at": "2026-12-04T00:00:00Z"}},
            "cut": {"tests/test_deep.py": ["src/a.py"]},
            "changes": [{"path": "src/a.py", "status": "modified", "other": null},
                        {"path": "src/old.py", "status": "deleted", "other": null}],
            "inventory": ["tests/test_a.py", "tests/test_b.py", "tests/test_r.py", "tests/test_deep.py", "tests/test_f.py"]
        }))
        .unwrap()
    }

    #[test]
    fn each_failure_is_caught_missed_with_its_cause_or_flaky() {
        let failing: BTreeSet<String> = [
            "tests/test_a.py",
            "tests/test_b.py",
            "tests/test_r.py",
            "tests/test_deep.py",
            "tests/test_f.py",
            "tests/test_new.py",
        ]
        .map(String::from)
        .into();
        let judged = judge(
            &frozen(),
            &failing,
            &Before {
                flaky: &|u| u == "tests/test_f.py",
                pre_existing: &|_| false,
            },
        );
        let class: BTreeMap<&str, &str> =
            judged.iter().map(|j| (j.unit.as_str(), j.class)).collect();
        assert_eq!(class["tests/test_a.py"], "caught");
        assert_eq!(class["tests/test_f.py"], "flaky");
        for missed in ["tests/test_b.py", "tests/test_r.py", "tests/test_deep.py"] {
            assert_eq!(class[missed], "missed", "{missed}");
        }
        let b = judged.iter().find(|j| j.unit == "tests/test_b.py").unwrap();
        assert_eq!(b.cause.as_deref(), Some("no edge linked src/a.py to it"));
        assert_eq!(
            b.rule.as_deref(),
            Some("[[depends]]\ntests = \"tests/test_b.py\"\non = [\"src/a.py\"]")
        );
        let r = judged.iter().find(|j| j.unit == "tests/test_r.py").unwrap();
        assert!(
            r.cause
                .as_ref()
                .unwrap()
                .contains("ledger reused its pass at 0123456789ab")
        );
        let deep = judged
            .iter()
            .find(|j| j.unit == "tests/test_deep.py")
            .unwrap();
        assert!(deep.cause.as_ref().unwrap().starts_with("max_depth cut"));
        let new = judged
            .iter()
            .find(|j| j.unit == "tests/test_new.py")
            .unwrap();
        assert!(
            new.cause
                .as_ref()
                .unwrap()
                .contains("not in the decision's inventory")
        );
        assert_eq!(
            summary(&judged),
            "gate shadow: 6 failing test file(s): 1 caught, 4 missed, 1 flaky"
        );
    }

    #[test]
    fn a_whole_suite_verdict_catches_everything_but_a_reuse() {
        let mut d = frozen();
        d.verdict = "named_full".into();
        let failing: BTreeSet<String> = ["tests/test_b.py", "tests/test_r.py"]
            .map(String::from)
            .into();
        let none = Before {
            flaky: &|_| false,
            pre_existing: &|_| false,
        };
        let judged = judge(&d, &failing, &none);
        assert_eq!(judged[0].class, "caught");
        assert_eq!(judged[1].class, "missed");
    }

    /// A unit whose failures were there at the base is counted apart, never as a miss or a
    /// catch; flaky evidence comes first.
    #[test]
    fn a_failure_at_the_base_already_is_pre_existing() {
        let failing: BTreeSet<String> = ["tests/test_b.py", "tests/test_f.py", "tests/test_x.py"]
            .map(String::from)
            .into();
        let before = Before {
            flaky: &|u| u == "tests/test_f.py",
            pre_existing: &|u| u != "tests/test_x.py",
        };
        let judged = judge(&frozen(), &failing, &before);
        let class: Vec<&str> = judged.iter().map(|j| j.class).collect();
        assert_eq!(class, ["pre_existing", "flaky", "missed"]);
        assert_eq!(
            judged[0].rule, None,
            "no rule for what the change did not break"
        );
        assert_eq!(
            summary(&judged),
            "gate shadow: 3 failing test file(s): 0 caught, 1 missed, 1 flaky, 1 pre-existing"
        );
    }

    #[test]
    fn only_failures_all_seen_at_the_base_are_the_bases() {
        let set = |ids: &[&str]| ids.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
        let base = set(&["t.py::a", "t.py::b"]);
        assert!(failed_at_base(&set(&["t.py::a"]), &base));
        assert!(failed_at_base(&set(&["t.py::a", "t.py::b"]), &base));
        assert!(
            !failed_at_base(&set(&["t.py::a", "t.py::c"]), &base),
            "c is new"
        );
        assert!(!failed_at_base(&set(&[]), &base));
        assert!(
            !failed_at_base(&set(&["t.py::a"]), &set(&[])),
            "no evidence"
        );
    }

    #[test]
    fn a_unit_fails_by_its_last_attempt() {
        let r = |id: &str, attempt, outcome| TestResult {
            id: id.into(),
            file: Some(id.split("::").next().unwrap().into()),
            outcome,
            duration_ms: 1,
            attempt,
        };
        let units = by_unit(&[
            r("t/a.py::x", 1, TestOutcome::Failed),
            r("t/a.py::x", 2, TestOutcome::Passed),
            r("t/b.py::y", 1, TestOutcome::Error),
            r("t/b.py::w", 1, TestOutcome::Skipped),
            r("t/c.py::z", 1, TestOutcome::Passed),
        ]);
        let outcomes: Vec<(&str, &str)> = units
            .iter()
            .map(|(u, r)| (u.as_str(), r.outcome()))
            .collect();
        assert_eq!(
            outcomes,
            [
                ("t/a.py", "passed"),
                ("t/b.py", "failed"),
                ("t/c.py", "passed")
            ]
        );
        assert_eq!(
            units["t/a.py"].duration_ms, 1,
            "the last attempt's time only"
        );
        assert_eq!(units["t/b.py"].duration_ms, 2);
    }
}
