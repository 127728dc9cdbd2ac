//! Why the ledger reused or entered less than it could: a cause per selected unit, said once
//! per cause on one line (how many units, the commonest detail named), and in `--json` per
//! unit — so a run that reuses nothing says why instead of looking like a ledger that does not
//! work.

use serde::Serialize;
use std::collections::BTreeMap;

/// Why a selected unit was not reused, or its run not entered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Why {
    pub cause: Cause,
    /// What, named: the input, the variable, the file.
    pub detail: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Cause {
    /// An input of its fingerprint cannot be hashed: never reused, never entered.
    UnknownInput,
    /// Its runner's reads outside the repository are not observed (a runner other than
    /// pytest), or its run started a process whose are not (Python, a shell, a fork): its pass
    /// cannot name what it loaded, so none is entered.
    Unobserved,
    /// `always_run`, `known_flaky`, or flaky evidence in the window: never reused.
    NeverReused,
    /// Its passes under these inputs were on branches this run does not trust.
    Untrusted,
    /// No pass under these inputs yet, or the newest entry under them failed.
    NoPass,
    /// A test of it was skipped: its skip condition may read what no fingerprint sees.
    Skipped,
    /// Its run read a variable its fingerprint does not hold.
    VariableRead,
    /// A file it read outside the tree changed during its run, or cannot be read now.
    ReadChanged,
    /// It ran in a temporary checkout, which lacks a file the working tree has.
    Checkout,
}

impl Cause {
    /// Whether a unit with this cause is one the ledger could have used but did not: said on
    /// a line. No pass yet is how every input starts, not a gap.
    fn said(self) -> bool {
        self != Cause::NoPass
    }

    /// What the line says of the units, after their count.
    fn says(self) -> &'static str {
        match self {
            Cause::UnknownInput => {
                "cannot be reused or entered: an input of their fingerprint cannot be hashed"
            }
            Cause::Unobserved => {
                "cannot be entered: what their runner, or a process their run started, read is not observed (gate observes pytest's own process)"
            }
            Cause::NeverReused => "are never reused: always_run, known_flaky or flaky evidence",
            Cause::Untrusted => {
                "passed with these inputs only on branches this run does not trust ([ledger] trust)"
            }
            Cause::NoPass => "have no pass under these inputs yet",
            Cause::Skipped => {
                "ran with a skipped test: their passes are not entered (a skip condition may read what no fingerprint sees)"
            }
            Cause::VariableRead => {
                "read variables their fingerprint does not hold: their passes are not entered (name the variables in [ledger] env)"
            }
            Cause::ReadChanged => {
                "read a file outside the tree that changed during the run or cannot be read: their runs are not entered"
            }
            Cause::Checkout => {
                "ran in a temporary checkout, which lacks files the working tree has: their runs are not entered"
            }
        }
    }
}

/// One line per cause of `whys` (unit → why) that is a gap: how many units, what the line
/// says of them, and the commonest details (each with its count), the rest counted.
pub(crate) fn lines<'a>(whys: impl Iterator<Item = (&'a str, &'a Why)>) -> Vec<String> {
    let mut by_cause: BTreeMap<Cause, BTreeMap<&str, Vec<&str>>> = BTreeMap::new();
    for (unit, why) in whys.filter(|(_, w)| w.cause.said()) {
        by_cause
            .entry(why.cause)
            .or_default()
            .entry(why.detail.as_str())
            .or_default()
            .push(unit);
    }
    by_cause
        .into_iter()
        .map(|(cause, details)| {
            let units: usize = details.values().map(Vec::len).sum();
            let mut details: Vec<(&str, Vec<&str>)> = details.into_iter().collect();
            details.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(b.0)));
            let shown: Vec<String> = details
                .iter()
                .take(2)
                .map(|(detail, units)| match units.as_slice() {
                    [one] => format!("{one}: {detail}"),
                    many => format!("{detail} ({} test files)", many.len()),
                })
                .collect();
            let more = match details.len() {
                0..=2 => String::new(),
                n => format!("; and {} more", n - 2),
            };
            format!(
                "ledger: {units} test file(s) {} — {}{more}",
                cause.says(),
                shown.join("; ")
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One line per cause that is a gap, the commonest detail first, the rest counted; no
    /// line for units that merely have no pass yet.
    #[test]
    fn one_line_per_cause_commonest_detail_first() {
        let why = |cause, detail: &str| Why {
            cause,
            detail: detail.to_string(),
        };
        let editable = "the interpreter imports code gate does not hash";
        let whys = [
            ("tests/a.py", why(Cause::UnknownInput, editable)),
            ("tests/b.py", why(Cause::UnknownInput, editable)),
            (
                "tests/c.py",
                why(Cause::UnknownInput, "tests/c.py:3: reads `/etc/x`"),
            ),
            ("tests/d.py", why(Cause::UnknownInput, "d")),
            ("tests/e.py", why(Cause::Skipped, "tests/e.py::test_tool")),
            ("tests/f.py", why(Cause::NoPass, "first run")),
        ];
        let lines = lines(whys.iter().map(|(u, w)| (*u, w)));
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(
            lines[0].starts_with("ledger: 4 test file(s) cannot be reused or entered")
                && lines[0].contains(&format!("{editable} (2 test files)"))
                && lines[0].ends_with("; and 1 more"),
            "{}",
            lines[0]
        );
        assert!(
            lines[1].starts_with("ledger: 1 test file(s) ran with a skipped test")
                && lines[1].ends_with("tests/e.py: tests/e.py::test_tool"),
            "{}",
            lines[1]
        );
    }
}
