//! The green ledger: no test that passes runs twice. Before a subset runs, each selected test
//! file or Go package is fingerprinted; one whose fingerprint matches a trusted pass in the
//! history store (and whose last entry under it is that pass) is reused — reported with where
//! it passed — and not run. After the run, each unit that ran is entered under its
//! fingerprint: `passed` when every case passed, `failed` when one did not; a unit with a
//! skipped case is not entered (its skip condition may read what no fingerprint sees). Never
//! reused: an unknown fingerprint, an `always_run` or `known_flaky` test, one with flaky
//! evidence in the window. A Python unit's digest also binds what its run read outside the
//! tree (`outside`): a pass whose run's reads were not observed, or changed under it, is not
//! entered. Every unit not reused or not entered has its cause (`why`), said once per cause.
//! The store being down reuses nothing and runs everything.

mod digests;
mod enter;
mod outside;
mod why;

use crate::config::Trust;
use crate::fingerprint::disk::Disk;
use crate::fingerprint::{Memo, Scope};
use crate::history::{self, Location, Store};
use crate::project::Project;
use crate::repo::snapshot::Snapshot;
use crate::run::events::Collected;
use crate::verdict::{Decision, RunVerdict};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use why::{Cause, Why};

pub(crate) use enter::Entered;
pub(crate) use outside::{ABSENT, TRACKED};

/// Each unit's digest, or why it has none.
type Digests = BTreeMap<String, Result<String, Why>>;

/// Where a reused test passed.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Provenance {
    pub commit: String,
    pub branch: Option<String>,
    pub leg: String,
    /// RFC 3339, the store's time.
    pub passed_at: String,
}

/// Where `unit` passed under `digest` in a way this run trusts, or why it is not reused: it is
/// never reused (`always_run`, `known_flaky`, flaky evidence in the window), the newest entry
/// under its digest — anywhere — is a failure (a failure since is never papered over by an
/// older pass) or there is none, or its passes are on branches this run does not trust.
fn reusable(
    store: &mut Store,
    (unit, digest): (&str, &str),
    run: &Run<'_>,
    config: &crate::config::Config,
    never: &dyn Fn(&str) -> bool,
) -> Result<Result<Provenance, Why>, history::StoreError> {
    let not = |cause, detail: &str| {
        let detail = detail.to_string();
        Ok(Err(Why { cause, detail }))
    };
    let window = config.history.window_days;
    if never(unit) {
        return not(Cause::NeverReused, "always_run or known_flaky");
    }
    if store.flaky_unit(unit, window)? {
        return not(Cause::NeverReused, "flaky evidence in the window");
    }
    let entries = store.entries(unit, digest, window)?;
    match entries.first() {
        None => return not(Cause::NoPass, "no pass under these inputs yet"),
        Some(e) if !e.passed => {
            return not(Cause::NoPass, "its newest run under these inputs failed");
        }
        Some(_) => {}
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
    let Some(e) = trusted else {
        return not(
            Cause::Untrusted,
            "passed under these inputs only on other branches",
        );
    };
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(e.recorded_unix.max(0) as u64);
    Ok(Ok(Provenance {
        commit: e.commit.clone(),
        branch: e.branch.clone(),
        leg: e.leg.clone(),
        passed_at: humantime::format_rfc3339_seconds(at).to_string(),
    }))
}

/// A selected unit as the ledger saw it (the report's `ledger` items).
#[derive(Debug, Serialize)]
pub(crate) struct UnitState {
    pub path: String,
    /// Its digest; null when an input cannot be hashed or its reads are not known.
    pub fingerprint: Option<String>,
    pub reused: bool,
    /// `passed` or `failed` when its run was entered; null when it was not (or did not run).
    pub entered: Option<&'static str>,
    /// Why it was not reused, or not entered.
    pub why: Vec<Why>,
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
    /// Each fingerprinted unit's digest; why not, when an input cannot be hashed.
    prints: Digests,
    /// The digests of the static inputs alone, before the traced edges join them.
    statics: Digests,
    /// For units whose only unknown inputs are imports named at run time: the static digest
    /// with those imports' doubt set aside, known once what its runs loaded joins it.
    lifted: BTreeMap<String, String>,
    /// The units whose digests bind what their runs read outside the tree, each with whether
    /// its runner shows those reads.
    outside: BTreeMap<String, bool>,
    pub reused: BTreeMap<String, Provenance>,
    /// Per selected unit not reused, why.
    why: BTreeMap<String, Why>,
    pub notes: Vec<String>,
    /// When the look-up began, before the run: what an entry names that changed since, the
    /// run may have written.
    started_ns: i64,
    /// The states of files no commit holds that the look-up read, before the run, each with
    /// its stat: an entry names them as they were when the run began.
    before: outside::Before,
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
        ledger.started_ns = crate::fingerprint::disk::now_ns();
        let observes: BTreeMap<&str, Option<bool>> = crate::lang::suite::SUITES
            .iter()
            .map(|s| (s.name(), s.reads_outside(project, &root)))
            .collect();
        for unit in decided.selected.keys() {
            // Node ids (`file::name`) are always_run entries: run, never entered.
            if !project.tests.contains(unit) {
                continue;
            }
            let digest = match scope.digest(unit, memo) {
                Some(digest) => Ok(digest),
                None => {
                    if let Some(lifted) = scope.lifted(unit, memo) {
                        ledger.lifted.insert(unit.clone(), lifted);
                    }
                    let detail = scope.why_unknown(unit, memo);
                    let cause = match ledger.lifted.contains_key(unit) {
                        // Known once a whole, passing run shows what its imports loaded.
                        true => Cause::NoPass,
                        false => Cause::UnknownInput,
                    };
                    Err(Why { cause, detail })
                }
            };
            if let Some(suite) = crate::lang::suite::of_test_unit(unit)
                && let Some(observes) = observes[suite.name()]
            {
                ledger.outside.insert(unit.clone(), observes);
            }
            ledger.prints.insert(unit.clone(), digest);
        }
        ledger.statics = ledger.prints.clone();
        // One kept state of the files no commit holds for the whole look-up.
        let disk = memo.disk.take();
        ledger.notes.extend(scope.keep(memo));
        let units: Vec<String> = ledger.completable().map(str::to_string).collect();
        for unit in &units {
            scope.closure_files_of(unit, memo);
        }
        let closures: digests::Closures<'_> = units
            .iter()
            .filter_map(|u| Some((u.as_str(), memo.closure_files(u)?)))
            .collect();
        let disk = disk.unwrap_or_else(|| Disk::open(&crate::repo::state_dir(repo)));
        let mut states = outside::States::look_up(disk);
        // The files beside the tree the fingerprints hashed, read again with their stats: the
        // entry checks that none changed while the run ran.
        for path in memo.beside_files() {
            let _ = states.state(&root.join(path));
        }
        let (prints, note) = ledger.with_traced(&at, &scope, (&closures, None), &mut states);
        ledger.prints = prints;
        ledger.before = states.read;
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
        let says = ledger.says();
        ledger.notes.extend(says);
        ledger.at = Some(at);
        ledger
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
        for (unit, digest) in &self.prints {
            let Ok(digest) = digest else {
                continue;
            };
            match reusable(&mut store, (unit, digest), run, config, never)? {
                Ok(from) => {
                    self.reused.insert(unit.clone(), from);
                }
                Err(why) => {
                    self.why.insert(unit.clone(), why);
                }
            }
        }
        Ok(())
    }

    /// The units not to run.
    pub(crate) fn reused_units(&self) -> BTreeSet<String> {
        self.reused.keys().cloned().collect()
    }

    /// Each unit of `units` (that ran) with its digest as this run knew it, for its recorded
    /// results — triage's same-commit rule compares them: the look-up's (bound to what its
    /// newest pass read, as it was when the run began: a retry under the same inputs has the
    /// same one, whatever its failure loaded besides), else its entry's (bound to its own
    /// run's reads), else `UNKNOWN` when an input could not be named. A unit the ledger did
    /// not look up (a shadow or whole-suite run) has its static digest bound to its own run's
    /// reads.
    pub(crate) fn recorded<'u>(
        &self,
        units: impl Iterator<Item = &'u str>,
        entered: Option<&Entered>,
        (collected, scope): (&Collected, &Scope<'_>),
    ) -> BTreeMap<String, String> {
        let mut memo = Memo::default();
        let mut states = None;
        let mut chains = BTreeMap::new();
        let unknown = crate::history::evidence::UNKNOWN;
        units
            .map(|unit| {
                let known = match self.prints.get(unit) {
                    Some(Ok(digest)) => Some(digest.clone()),
                    Some(Err(_)) => entered.and_then(|e| e.digests.get(unit).cloned()),
                    None => scope.digest(unit, &mut memo).and_then(|d| {
                        let states = states.get_or_insert_with(|| {
                            let state = crate::repo::state_dir(scope.repo);
                            outside::States::look_up(Disk::open(&state))
                        });
                        self.bound_to_run(&d, unit, (collected, scope), (states, &mut chains))
                    }),
                };
                (
                    unit.to_string(),
                    known.unwrap_or_else(|| unknown.to_string()),
                )
            })
            .collect()
    }

    /// Each selected unit's digest (none when unknown), whether it was reused, and why not,
    /// as the look-up left them: what the report and the run's record start from.
    pub(crate) fn units(&self) -> impl Iterator<Item = (&str, Option<&str>, Option<&Why>)> {
        self.prints.iter().map(|(unit, digest)| {
            let why = match digest {
                Err(why) => Some(why),
                Ok(_) => self.why.get(unit),
            };
            (unit.as_str(), digest.as_deref().ok(), why)
        })
    }

    /// Each selected unit as the ledger saw it — its digest, whether it was reused or
    /// `entered` after the run, and why not — for the report.
    pub(crate) fn states(&self, entered: Option<&Entered>) -> Vec<UnitState> {
        self.units()
            .map(|(unit, digest, why)| {
                let mut whys: Vec<Why> = why.into_iter().cloned().collect();
                let after = entered.and_then(|e| e.why.get(unit));
                whys.extend(after.filter(|w| !whys.contains(w)).cloned());
                UnitState {
                    path: unit.to_string(),
                    fingerprint: digest.map(str::to_string),
                    reused: self.reused.contains_key(unit),
                    entered: entered.and_then(|e| e.entered.get(unit).copied()),
                    why: whys,
                }
            })
            .collect()
    }

    /// One line per cause of what the look-up could not reuse.
    pub(crate) fn says(&self) -> Vec<String> {
        why::lines(self.units().filter_map(|(unit, _, why)| Some((unit, why?))))
    }
}
