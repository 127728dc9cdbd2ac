//! The green ledger: no test that passes runs twice. Before a subset runs, each selected test
//! file or Go package is fingerprinted; one whose fingerprint matches a trusted pass in the
//! history store (and whose last entry under it is that pass) is reused — reported with where
//! it passed — and not run. After the run, each unit that ran is entered under its
//! fingerprint: `passed` when every case passed, `failed` when one did not; a unit with a
//! skipped case is not entered (its skip condition may read what no fingerprint sees). Never
//! reused: an unknown fingerprint, an `always_run` or `known_flaky` test, one with flaky
//! evidence in the window. The store being down reuses nothing and runs everything.

use crate::config::Trust;
use crate::fingerprint::{Memo, Scope, hex};
use crate::history::{self, Entry, Location, Store};
use crate::project::Project;
use crate::repo::snapshot::Snapshot;
use crate::run::events::{Collected, TestOutcome};
use crate::verdict::{Decision, RunVerdict};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};

/// Where a reused test passed.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Provenance {
    pub commit: String,
    pub branch: Option<String>,
    pub leg: String,
    /// RFC 3339, the store's time.
    pub passed_at: String,
}

/// What the run is, for the entries it writes and the trust it gives.
pub(crate) struct Run<'a> {
    pub commit: String,
    pub branch: Option<String>,
    pub mainline: bool,
    pub leg: &'a str,
}

/// The ledger for one gate run: each fingerprinted unit, the ones reused, and what to say.
#[derive(Default)]
pub(crate) struct Ledger {
    /// Each fingerprinted unit's digest; none when an input cannot be hashed.
    prints: BTreeMap<String, Option<String>>,
    /// The digests of the static inputs alone, before the traced edges join them.
    statics: BTreeMap<String, Option<String>>,
    /// For units whose only unknown inputs are imports named at run time: the static digest
    /// with those imports' doubt set aside, known once what its runs loaded joins it.
    lifted: BTreeMap<String, String>,
    pub reused: BTreeMap<String, Provenance>,
    pub notes: Vec<String>,
    at: Option<Location>,
}

impl Ledger {
    /// Fingerprints the selected units of a subset run and looks each up in the store `db`
    /// names (`--db`; else `GATE_DB`'s or `[history] url`'s), where they are entered after the
    /// run. `reuse`: false with `--no-reuse` (the units are still fingerprinted, to be entered
    /// after the run).
    pub(crate) fn look_up(
        repo: &git2::Repository,
        snapshot: &Snapshot,
        project: &Project,
        decided: &Decision,
        run: &Run<'_>,
        (reuse, db): (bool, Option<&str>),
        memo: &mut Memo,
    ) -> Ledger {
        let mut ledger = Ledger::default();
        let config = &project.config;
        if !config.ledger.enabled || decided.verdict != RunVerdict::Bounded {
            return ledger;
        }
        let Ok(root) = crate::repo::workdir(repo) else {
            return ledger;
        };
        let at = match history::location(
            db,
            config.history.url.as_deref(),
            &crate::repo::state_dir(repo),
        ) {
            Ok(at) => at,
            Err(e) => {
                ledger.notes.push(format!("the ledger is off: {e}"));
                return ledger;
            }
        };
        let always: BTreeSet<String> = config
            .always_run
            .iter()
            .flat_map(|a| a.matches(&project.tests))
            .collect();
        let scope = Scope {
            repo,
            snapshot,
            project,
            root: &root,
        };
        for unit in decided.selected.keys() {
            // Node ids (`file::name`) are always_run entries: run, never entered.
            if !project.tests.contains(unit) {
                continue;
            }
            let digest = scope.digest(unit, memo);
            if digest.is_none()
                && let Some(lifted) = scope.lifted(unit, memo)
            {
                ledger.lifted.insert(unit.clone(), lifted);
            }
            ledger.prints.insert(unit.clone(), digest);
        }
        ledger.notes.extend(scope.keep(memo));
        ledger.statics = ledger.prints.clone();
        let (prints, note) = ledger.with_traced(&at, &scope, None);
        ledger.prints = prints;
        ledger.notes.extend(note);
        crate::timings::mark("fingerprints");
        if reuse {
            let never = |unit: &str| always.contains(unit) || config.known_flaky.is_match(unit);
            if let Err(e) = ledger.find(&at, run, config, &never) {
                ledger.reused.clear();
                ledger.notes.push(format!(
                    "the ledger cannot be read ({}): every selected test runs",
                    e.one_line()
                ));
            }
            crate::timings::mark("ledger looked up");
        }
        ledger.at = Some(at);
        ledger
    }

    /// The digests with the traced edges: what a unit's runs were seen to open outside its
    /// static closure (a path no analysis evaluates), and what a module of its closure read
    /// while it was imported, are inputs too, so a pass is never reused over a changed file a
    /// run is known to read. What cannot be read makes every digest unknown (nothing is
    /// reused, nothing entered), said in the note.
    fn with_traced(
        &self,
        at: &Location,
        scope: &Scope<'_>,
        observed: Option<&Collected>,
    ) -> (BTreeMap<String, Option<String>>, Option<String>) {
        match self.traced_digests(at, scope, observed) {
            Ok(prints) => (prints, None),
            Err(e) => (
                self.statics.keys().map(|u| (u.clone(), None)).collect(),
                Some(format!(
                    "the traced edges cannot be read ({}): no test is reused",
                    e.one_line()
                )),
            ),
        }
    }

    /// `observed`: the run being entered, whose own loads (of a whole run only) bound the
    /// run-time imports of its units — never a set kept by an earlier run, which may miss
    /// what this run's names resolved to. Without it, the kept sets (for a look-up).
    fn traced_digests(
        &self,
        at: &Location,
        scope: &Scope<'_>,
        observed: Option<&Collected>,
    ) -> Result<BTreeMap<String, Option<String>>, history::StoreError> {
        let mut prints = self.statics.clone();
        if let Location::Sqlite(path) = at
            && !path.is_file()
        {
            return Ok(prints);
        }
        let known: Vec<&str> = self
            .statics
            .iter()
            .filter(|(u, d)| d.is_some() || self.lifted.contains_key(*u))
            .map(|(u, _)| u.as_str())
            .collect();
        let closures: BTreeMap<&str, BTreeSet<String>> = known
            .iter()
            .map(|u| (*u, scope.closure_files(u).into_iter().collect()))
            .collect();
        let modules: BTreeSet<&str> = closures.values().flatten().map(String::as_str).collect();
        let mut store = Store::open(at)?;
        let traced = store.traced_from(&known)?;
        let lifted: Vec<&str> = self.lifted.keys().map(String::as_str).collect();
        let loaded = match observed {
            Some(run) => run
                .loaded
                .iter()
                .filter(|(unit, _)| run.opened.get(*unit).is_some_and(|t| t.whole))
                .map(|(unit, modules)| (unit.clone(), modules.clone()))
                .collect(),
            None => store.loaded_from(&lifted)?,
        };
        let mut modules = modules;
        modules.extend(loaded.values().flatten().map(String::as_str));
        let read = store.read_by_from(&modules.into_iter().collect::<Vec<_>>())?;
        let mut python_files = None;
        for (unit, closure) in &closures {
            // What its runs opened, and what each module of its closure read when imported.
            let mut outside: BTreeSet<&String> = traced.get(*unit).into_iter().flatten().collect();
            outside.extend(closure.iter().filter_map(|m| read.get(m)).flatten());
            // A run-time import resolved to one of the modules loaded by the end of the run
            // (a superset): each of them, and what each read when imported, is an input. So is
            // the tree's set of Python files: one added may be what a name resolves to next.
            let lift = match (self.lifted.get(*unit), loaded.get(*unit)) {
                (Some(base), Some(modules)) => {
                    outside.extend(modules);
                    outside.extend(modules.iter().filter_map(|m| read.get(m)).flatten());
                    let files = python_files.get_or_insert_with(|| python_set(scope));
                    Some(format!("{base}\0loaded\0{files}"))
                }
                (Some(_), None) => continue,
                (None, _) => None,
            };
            outside.retain(|p| !closure.contains(*p));
            if outside.is_empty() && lift.is_none() {
                continue;
            }
            if let Some(digest) = prints.get_mut(*unit) {
                *digest = lift
                    .or_else(|| digest.clone())
                    .and_then(|d| with_files(&d, &outside, scope));
            }
        }
        Ok(prints)
    }

    /// The reusable units: a known fingerprint whose newest entry in the window is a pass
    /// this run trusts, and no flaky evidence.
    fn find(
        &mut self,
        at: &Location,
        run: &Run<'_>,
        config: &crate::config::Config,
        never: &dyn Fn(&str) -> bool,
    ) -> Result<(), history::StoreError> {
        // No store yet: nothing passed yet (and looking must not create one).
        if let Location::Sqlite(path) = at
            && !path.is_file()
        {
            return Ok(());
        }
        let mut store = Store::open(at)?;
        let window = config.history.window_days;
        for (unit, digest) in &self.prints {
            let Some(digest) = digest else {
                continue;
            };
            if never(unit) || store.flaky_unit(unit, window)? {
                continue;
            }
            let entries = store.entries(unit, digest, window)?;
            // The newest entry under this fingerprint, anywhere, must be a pass: a failure
            // since is never papered over by an older pass.
            if !entries.first().is_some_and(|e| e.passed) {
                continue;
            }
            let trusted = entries.iter().find(|e| {
                e.passed
                    && match config.ledger.trust {
                        Trust::Any => true,
                        Trust::Main => e.mainline,
                        Trust::MainAndBranch => {
                            e.mainline || (e.branch.is_some() && e.branch == run.branch)
                        }
                    }
            });
            if let Some(e) = trusted {
                let at = std::time::UNIX_EPOCH
                    + std::time::Duration::from_secs(e.recorded_unix.max(0) as u64);
                self.reused.insert(
                    unit.clone(),
                    Provenance {
                        commit: e.commit.clone(),
                        branch: e.branch.clone(),
                        leg: e.leg.clone(),
                        passed_at: humantime::format_rfc3339_seconds(at).to_string(),
                    },
                );
            }
        }
        Ok(())
    }

    /// The digest `unit` was looked up under, when it was fingerprinted and known: what its
    /// recorded results are stored with.
    pub(crate) fn digest_of(&self, unit: &str) -> Option<&str> {
        self.prints.get(unit)?.as_deref()
    }

    /// The units not to run.
    pub(crate) fn reused_units(&self) -> BTreeSet<String> {
        self.reused.keys().cloned().collect()
    }

    /// Enters each unit that ran under its fingerprint. `complete`: the runner ran to its end
    /// (no broken or interrupted run, whose results say nothing of the rest). Returns what to
    /// say when the store could not take them.
    /// `scope`: the tree that ran, whose traces (this run's among them) the digests take in.
    /// A pass whose run was seen reading a variable its fingerprint does not hold is not
    /// entered, and said (one note each).
    pub(crate) fn enter(
        &self,
        collected: &Collected,
        complete: bool,
        run: &Run<'_>,
        scope: &Scope<'_>,
    ) -> Vec<String> {
        let Some(at) = self.at.as_ref() else {
            return Vec::new();
        };
        if !complete {
            return Vec::new();
        }
        let mut notes = Vec::new();
        let (prints, unread) = self.with_traced(at, scope, Some(collected));
        let mut by_unit: BTreeMap<&str, Vec<TestOutcome>> = BTreeMap::new();
        for t in &collected.tests {
            if let Some(file) = &t.file {
                by_unit.entry(file.as_str()).or_default().push(t.outcome);
            }
        }
        let entries: Vec<Entry> = prints
            .iter()
            .filter(|(unit, _)| !self.reused.contains_key(*unit))
            .filter_map(|(unit, digest)| {
                let digest = digest.clone()?;
                // A unit with no result ran nothing gate can judge: not entered. Nor is one
                // with a skipped test: its skip condition (`shutil.which`, a missing module, a
                // variable) may read what the fingerprint does not see, and when it flips the
                // test runs — a pass entered now would be reused instead.
                let outcomes = by_unit.get(unit.as_str())?;
                if outcomes.contains(&TestOutcome::Skipped) {
                    return None;
                }
                let passed = outcomes.iter().all(|o| *o == TestOutcome::Passed);
                if passed && let Some(gap) = unseen_variables(collected, scope, unit) {
                    notes.push(gap);
                    return None;
                }
                Some(Entry {
                    unit: unit.clone(),
                    fingerprint: digest,
                    outcome: if passed { "passed" } else { "failed" },
                    commit: run.commit.clone(),
                    branch: run.branch.clone(),
                    mainline: run.mainline,
                    leg: run.leg.to_string(),
                })
            })
            .collect();
        notes.extend(unread);
        if !entries.is_empty()
            && let Err(e) = Store::open(at).and_then(|mut s| s.enter(&entries))
        {
            notes.push(format!("the ledger was not written: {}", e.one_line()));
        }
        notes
    }
}

/// What `unit`'s run was seen to read of the environment that its fingerprint does not hold
/// (a read by a form the analyser does not know, in code its closure reaches or not), as the
/// note that says its pass is not entered; none when every read is held.
fn unseen_variables(collected: &Collected, scope: &Scope<'_>, unit: &str) -> Option<String> {
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
    let what = if unseen.contains(&"*") {
        "the whole environment".to_string()
    } else {
        unseen.join(", ")
    };
    Some(format!(
        "{unit} read {what} in its run, which its fingerprint does not hold: its pass is not entered in the ledger (name the variables in [ledger] env)"
    ))
}

/// `digest` with the blobs of `files` (outside its closure) hashed in; unknown when one cannot
/// be read.
/// The tree's Python files' paths, as one digest.
fn python_set(scope: &Scope<'_>) -> String {
    let mut h = Sha256::new();
    for file in scope
        .snapshot
        .files
        .iter()
        .filter(|f| crate::path::is_python(f))
    {
        h.update(file.as_bytes());
        h.update(b"\0");
    }
    hex(&h.finalize())
}

fn with_files(digest: &str, files: &BTreeSet<&String>, scope: &Scope<'_>) -> Option<String> {
    let mut h = Sha256::new();
    h.update(b"gate traced 1\0");
    h.update(digest.as_bytes());
    for path in files {
        h.update(path.as_bytes());
        h.update(b"\0");
        // A file the tree lacks (gone since it was traced, or a generated module) as the
        // runner finds it on disk.
        if !scope.snapshot.files.contains(*path) {
            let mut why = Vec::new();
            let state = crate::fingerprint::not_in_tree(scope.root, path, &mut why);
            if !why.is_empty() {
                return None;
            }
            h.update(state.as_bytes());
            continue;
        }
        match scope.snapshot.read(scope.repo, path) {
            Ok((oid, _)) => h.update(oid.as_bytes()),
            Err(_) => return None,
        }
    }
    Some(hex(&h.finalize()))
}
