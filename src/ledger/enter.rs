//! After the run: each unit that ran is entered under its digest — as its own run saw what it
//! read beyond its closure — `passed` when every case passed, `failed` when one did not. Not
//! entered, each with its cause: a unit with a skipped case, a pass seen reading a variable
//! its fingerprint does not hold, one whose reads outside the tree changed during the run or
//! were not observed, one run in a temporary checkout that lacks a file the working tree has.

use super::digests::Closures;
use super::outside::States;
use super::why::{self, Cause, Why};
use super::{Ledger, Run};
use crate::fingerprint::disk::changed_since;
use crate::fingerprint::{Memo, Scope};
use crate::history::{Entry, Store};
use crate::run::events::{Collected, TestOutcome};
use std::collections::BTreeMap;

/// What entering a run did: per unit entered, its outcome; per unit that ran and was not,
/// why; and what to say.
#[derive(Default)]
pub(crate) struct Entered {
    pub entered: BTreeMap<String, &'static str>,
    pub why: BTreeMap<String, Why>,
    pub notes: Vec<String>,
    /// Each unit that ran with its digest as its own run's reads bind it, where known.
    pub digests: BTreeMap<String, String>,
}

impl Ledger {
    /// Enters each unit that ran under its digest. `complete`: the runner ran to its end (a
    /// broken or interrupted run's results say nothing of the rest: nothing is entered).
    /// `scope`: the tree that ran, whose traces (this run's among them) the digests take in.
    /// `temporary`: the tests ran in a temporary checkout, not the working tree.
    pub(crate) fn enter(
        &self,
        collected: &Collected,
        complete: bool,
        run: &Run<'_>,
        (scope, temporary): (&Scope<'_>, bool),
    ) -> Entered {
        let mut done = Entered::default();
        let Some(at) = self.at.as_ref() else {
            return done;
        };
        if !complete {
            return done;
        }
        let state = crate::repo::state_dir(scope.repo);
        let mut states = States::entry(&state, &self.before, self.started_ns);
        let files: BTreeMap<&str, Vec<String>> = self
            .completable()
            .map(|u| (u, scope.closure_files(u)))
            .collect();
        let closures: Closures<'_> = files.iter().map(|(u, f)| (*u, f.as_slice())).collect();
        let (prints, unread) =
            self.with_traced(at, scope, (&closures, Some(collected)), &mut states);
        let mut witness = Witness {
            moved: states.changed().map(|path| Why {
                cause: Cause::ReadChanged,
                detail: format!("{} changed during the run", path.display()),
            }),
            edited: BTreeMap::new(),
            memo: Memo::default(),
            closures: &closures,
            run: (collected, scope, temporary),
            started_ns: self.started_ns,
        };
        let mut by_unit: BTreeMap<&str, Vec<(TestOutcome, &str)>> = BTreeMap::new();
        for t in &collected.tests {
            if let Some(file) = &t.file {
                let outcomes = by_unit.entry(file.as_str()).or_default();
                outcomes.push((t.outcome, t.id.as_str()));
            }
        }
        let mut entries = Vec::new();
        for (unit, digest) in prints.iter().filter(|(u, _)| !self.reused.contains_key(*u)) {
            // A unit with no result ran nothing gate can judge.
            let Some(outcomes) = by_unit.get(unit.as_str()) else {
                continue;
            };
            let digest = match digest {
                Ok(digest) => {
                    done.digests.insert(unit.clone(), digest.clone());
                    digest
                }
                Err(why) => {
                    done.why.insert(unit.clone(), why.clone());
                    continue;
                }
            };
            let passed = outcomes.iter().all(|(o, _)| *o == TestOutcome::Passed);
            let not = witness.why_not(unit, outcomes, passed);
            if let Some(why) = not {
                done.why.insert(unit.clone(), why);
                continue;
            }
            let outcome = if passed { "passed" } else { "failed" };
            done.entered.insert(unit.clone(), outcome);
            let entry = |fingerprint: &String| Entry {
                unit: unit.clone(),
                fingerprint: fingerprint.clone(),
                outcome,
                commit: run.commit.clone(),
                branch: run.branch.clone(),
                mainline: run.mainline,
                leg: run.leg.to_string(),
            };
            entries.push(entry(digest));
            // A failing run keeps no list of its reads in place of a pass's (a failure loads
            // what a pass does not: its report's modules), so the next look-up names the unit
            // by the pass's list: the failure is entered under that digest too, as the look-up
            // before this run named it, and no older pass under it is reused over it.
            if let Some(Ok(looked_up)) = self.prints.get(unit)
                && !passed
                && looked_up != digest
            {
                entries.push(entry(looked_up));
            }
        }
        done.notes.extend(unread);
        self.write(at, &mut done, &entries, (collected, scope));
        done
    }

    /// What entering said — one line per cause the look-up had not said already (an input
    /// that cannot be hashed, a runner not observed) — and the entries written, with what each
    /// entered unit's run read outside the tree.
    fn write(
        &self,
        at: &crate::history::Location,
        done: &mut Entered,
        entries: &[Entry],
        (collected, scope): (&Collected, &Scope<'_>),
    ) {
        let said: BTreeMap<&str, &Why> = self
            .units()
            .filter_map(|(unit, _, why)| Some((unit, why?)))
            .collect();
        let mut notes = why::lines(
            done.why
                .iter()
                .filter(|(u, w)| said.get(u.as_str()) != Some(w))
                .map(|(u, w)| (u.as_str(), w)),
        );
        notes.append(&mut done.notes);
        done.notes = notes;
        if entries.is_empty() {
            return;
        }
        let units: BTreeMap<&str, bool> = done
            .entered
            .iter()
            .map(|(unit, outcome)| (unit.as_str(), *outcome == "passed"))
            .collect();
        let outside = Self::outside_read(collected, scope, &units);
        let written = Store::open(at).and_then(|mut s| {
            s.enter(entries)?;
            for (files, read) in &outside {
                s.keep_outside(files, read)?;
            }
            Ok(())
        });
        if let Err(e) = written {
            done.notes
                .push(format!("the ledger was not written: {}", e.one_line()));
        }
    }
}

/// What the run shows of itself beyond its digests, asked unit by unit.
struct Witness<'w> {
    /// A file the look-up named as it was before the run that is not so now: the run may have
    /// read either state, and no digest names the one it read.
    moved: Option<Why>,
    /// Per file of the tree, whether it changed in the working tree while the run ran.
    edited: BTreeMap<&'w str, bool>,
    memo: Memo,
    closures: &'w Closures<'w>,
    /// What ran, in which tree, and whether in a temporary checkout.
    run: (&'w Collected, &'w Scope<'w>, bool),
    started_ns: i64,
}

impl<'w> Witness<'w> {
    /// Why `unit`'s run, which ended with `outcomes`, is not entered; none when it is.
    fn why_not(
        &mut self,
        unit: &str,
        outcomes: &[(TestOutcome, &str)],
        passed: bool,
    ) -> Option<Why> {
        let (collected, scope, temporary) = self.run;
        checked(unit, outcomes, passed, collected, scope)
            .or_else(|| self.moved.clone())
            .or_else(|| self.edited_in(unit))
            .or_else(|| {
                let local = temporary.then(|| scope.only_in_working_tree(unit, &mut self.memo))?;
                let first = local.first()?;
                let more = match local.len() {
                    1 => String::new(),
                    n => format!(" (and {} more)", n - 1),
                };
                Some(Why {
                    cause: Cause::Checkout,
                    detail: format!("{first}{more}"),
                })
            })
    }

    /// In the working tree, a file of `unit`'s closure edited while the run ran (the pre-push
    /// hook runs while the developer works on): the run read the edit, not the blob its digest
    /// names.
    fn edited_in(&mut self, unit: &str) -> Option<Why> {
        let (_, scope, temporary) = self.run;
        if temporary {
            return None;
        }
        let files = self.closures.get(unit)?;
        let started = self.started_ns;
        let file = files.iter().find(|f| {
            *self
                .edited
                .entry(f.as_str())
                .or_insert_with(|| changed_since(&scope.root.join(f.as_str()), started))
        })?;
        Some(Why {
            cause: Cause::ReadChanged,
            detail: format!("{file} changed during the run"),
        })
    }
}

/// Why `unit`'s run, which ended with `outcomes`, is not entered by what the run itself saw:
/// a skipped test (its skip condition may read what the fingerprint does not see, and when it
/// flips the test runs — a pass entered now would be reused instead), or a pass seen reading a
/// variable its fingerprint does not hold (read by a form the analyser does not know).
fn checked(
    unit: &str,
    outcomes: &[(TestOutcome, &str)],
    passed: bool,
    collected: &Collected,
    scope: &Scope<'_>,
) -> Option<Why> {
    if let Some(what) = collected.unobserved.get(unit) {
        return Some(Why {
            cause: Cause::Unobserved,
            detail: format!("{what} in its run: what that process loaded is not observed"),
        });
    }
    if let Some((_, id)) = outcomes.iter().find(|(o, _)| *o == TestOutcome::Skipped) {
        return Some(Why {
            cause: Cause::Skipped,
            detail: format!("{id} skipped"),
        });
    }
    if !passed {
        return None;
    }
    let read = collected.env_read.get(unit)?;
    let held = scope.held_variables(unit);
    let unseen: Vec<&str> = read
        .iter()
        .map(String::as_str)
        .filter(|name| !held.contains(*name))
        .collect();
    if unseen.is_empty() {
        return None;
    }
    let detail = if unseen.contains(&"*") {
        "the whole environment".to_string()
    } else {
        unseen.join(", ")
    };
    Some(Why {
        cause: Cause::VariableRead,
        detail,
    })
}
