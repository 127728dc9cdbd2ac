//! A unit's ledger digest beyond its static fingerprint: what its runs were seen to open
//! outside its closure, what its closure's modules read while imported, the modules its
//! run-time imports loaded, and what its run read outside the tree (`outside`). A look-up
//! takes these as the store kept them from the unit's last runs; an entry as its own run saw
//! them.

use super::outside::{Chain, States, beyond_tree, prefix};
use super::why::{Cause, Why};
use super::{Digests, Ledger};
use crate::fingerprint::{Scope, hex};
use crate::history::{self, Location, OutsideKept, Store};
use crate::run::events::Collected;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};

/// A list of files read outside the tree, and per unit how many of its first files it read and
/// whether that replaces what was kept for it.
pub(super) type ReadList = (Vec<String>, BTreeMap<String, (usize, bool)>);

/// Each known unit's closure files, sorted.
pub(super) type Closures<'u> = BTreeMap<&'u str, &'u [String]>;

impl Ledger {
    /// The digests with what the runs read beyond the static closure, the files no commit
    /// holds named by their `states`. What the store cannot give makes every digest unknown
    /// (nothing is reused, nothing entered), said in the note.
    pub(super) fn with_traced(
        &self,
        at: &Location,
        scope: &Scope<'_>,
        (closures, observed): (&Closures<'_>, Option<&Collected>),
        states: &mut States<'_>,
    ) -> (Digests, Option<String>) {
        let digests = self.digests(at, scope, (closures, observed), states);
        if let Some(note) = states.keep() {
            crate::terminal::warn(note);
        }
        match digests {
            Ok(prints) => (prints, None),
            Err(e) => (
                self.statics
                    .keys()
                    .map(|u| (u.clone(), Err(unreadable(&e))))
                    .collect(),
                Some(format!(
                    "the traced edges cannot be read ({}): no test is reused",
                    e.one_line()
                )),
            ),
        }
    }

    /// `observed`: the run being entered, whose own loads (of a whole run only) bound the
    /// run-time imports of its units, and whose own reads outside the tree are its digest's —
    /// never a set kept by an earlier run, which may miss what this run read. Without it, the
    /// kept sets (for a look-up).
    fn digests(
        &self,
        at: &Location,
        scope: &Scope<'_>,
        (closures, observed): (&Closures<'_>, Option<&Collected>),
        states: &mut States<'_>,
    ) -> Result<Digests, history::StoreError> {
        let mut prints = self.statics.clone();
        if observed.is_none() {
            // What the closures read by a literal path that no commit holds, as it is before
            // the run: a run that opens it takes this state, not one that the timing of a
            // write just before the run could make look like the run's own.
            let files: BTreeSet<&String> = closures.values().flat_map(|c| c.iter()).collect();
            let named: BTreeSet<&str> = files
                .into_iter()
                .flat_map(|f| scope.files_untracked(f))
                .collect();
            for path in named {
                let _ = states.state(&scope.root.join(path));
            }
        }
        let stored = match at {
            Location::Sqlite(path) => path.is_file(),
            Location::Postgres(_) => true,
        };
        let mut store = if stored { Some(Store::open(at)?) } else { None };
        if let Some(store) = store.as_mut() {
            self.traced(store, scope, (closures, observed), &mut prints, states)?;
        }
        let kept = match (observed, store.as_mut()) {
            (Some(_), _) | (None, None) => OutsideKept::default(),
            (None, Some(store)) => {
                let units: Vec<&str> = self.outside.keys().map(String::as_str).collect();
                store.outside_of(&units)?
            }
        };
        self.bind_outside(scope, observed, &kept, &mut prints, states);
        Ok(prints)
    }

    /// The units whose digests the traced edges and outside reads can complete: a known static
    /// digest, or one lifted by its observed loads.
    pub(super) fn completable(&self) -> impl Iterator<Item = &str> {
        self.statics
            .iter()
            .filter(|(u, d)| d.is_ok() || self.lifted.contains_key(*u))
            .map(|(u, _)| u.as_str())
    }

    /// What each unit's runs opened, what its closure's modules read when imported, and what
    /// its run-time imports loaded, hashed into its digest.
    fn traced(
        &self,
        store: &mut Store,
        scope: &Scope<'_>,
        (closures, observed): (&Closures<'_>, Option<&Collected>),
        prints: &mut Digests,
        states: &mut States<'_>,
    ) -> Result<(), history::StoreError> {
        let known: Vec<&str> = closures.keys().copied().collect();
        let modules: BTreeSet<&str> = closures
            .values()
            .flat_map(|c| c.iter())
            .map(String::as_str)
            .collect();
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
        for (unit, closure) in closures.iter() {
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
            outside.retain(|p| closure.binary_search(p).is_err());
            if outside.is_empty() && lift.is_none() {
                continue;
            }
            if let Some(digest) = prints.get_mut(*unit) {
                let base = match lift {
                    Some(lifted) => Ok(lifted),
                    None => digest.clone(),
                };
                *digest = base.and_then(|d| with_files(&d, &outside, scope, states));
            }
        }
        Ok(())
    }

    /// Each unit that needs it bound to what its run read outside the tree: its own run's
    /// reads for an entry, its newest entry's (`kept`) for a look-up. A unit whose reads are
    /// not known has no digest, with why.
    fn bind_outside(
        &self,
        scope: &Scope<'_>,
        observed: Option<&Collected>,
        kept: &OutsideKept,
        prints: &mut Digests,
        states: &mut States<'_>,
    ) {
        // Per list (a run's, or a kept one): each prefix's count of the files the tree does not
        // hold, and the chain of their states.
        let mut chains: BTreeMap<(usize, &str), Chain> = BTreeMap::new();
        for (unit, observes) in &self.outside {
            let Some(Ok(digest)) = prints.get(unit) else {
                continue;
            };
            let read = match observed {
                Some(run) => run.outside_at.get(unit).map(|(list, count)| {
                    let key = (*list, "");
                    (key, &run.outside[*list], *count)
                }),
                None => kept.units.get(unit).map(|(id, count)| {
                    let key = (usize::MAX, id.as_str());
                    (key, &kept.lists[id], *count)
                }),
            };
            let bound = match read {
                Some((key, files, count)) => chains
                    .entry(key)
                    .or_insert_with(|| Chain::of(files, scope, states))
                    .bind(digest, count),
                None if *observes => Err(Why {
                    cause: Cause::NoPass,
                    detail: "no observed run has named what it reads outside the repository yet"
                        .into(),
                }),
                None => Err(Why {
                    cause: Cause::Unobserved,
                    detail: "what its runner loads from outside the repository (an installed distribution's files) is not observed".into(),
                }),
            };
            prints.insert(unit.clone(), bound);
        }
    }

    /// `digest` bound to what `unit`'s own run read outside the tree, for a unit the look-up
    /// did not name: none when its runner shows those reads and this run's are not there.
    pub(super) fn bound_to_run(
        &self,
        digest: &str,
        unit: &str,
        (run, scope): (&Collected, &Scope<'_>),
        (states, chains): (&mut States<'_>, &mut BTreeMap<usize, Chain>),
    ) -> Option<String> {
        let language = crate::lang::suite::of_test_unit(unit)?;
        if language.reads_outside(scope.project, scope.root).is_none() {
            return Some(digest.to_string());
        }
        let (list, count) = run.outside_at.get(unit)?;
        if run.unobserved.contains_key(unit) {
            return None;
        }
        chains
            .entry(*list)
            .or_insert_with(|| Chain::of(&run.outside[*list], scope, states))
            .bind(digest, *count)
            .ok()
    }

    /// What the units of an entered run read outside the tree, for the store: each of the
    /// run's lists without the tree's files, and per unit in `units` how many of its first
    /// files it read, and whether that replaces what was kept for it (`units`' value).
    pub(super) fn outside_read(
        run: &Collected,
        scope: &Scope<'_>,
        units: &BTreeMap<&str, bool>,
    ) -> Vec<ReadList> {
        let (mut lists, counts): (Vec<_>, Vec<_>) = run
            .outside
            .iter()
            .map(|files| {
                let (beyond, counts) = beyond_tree(files, scope.snapshot);
                ((beyond, BTreeMap::new()), counts)
            })
            .unzip();
        for (unit, (list, count)) in &run.outside_at {
            if let Some(replaces) = units.get(unit.as_str()) {
                let read = prefix(&counts[*list], *count);
                lists[*list].1.insert(unit.clone(), (read, *replaces));
            }
        }
        lists
    }
}

fn unreadable(e: &history::StoreError) -> Why {
    Why {
        cause: Cause::UnknownInput,
        detail: format!("the traced edges cannot be read ({})", e.one_line()),
    }
}

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

/// `digest` with the blobs of `files` (outside its closure) hashed in — a file the tree does
/// not hold by its state on disk where the runner runs (`states`); why not, when one cannot be
/// named.
fn with_files(
    digest: &str,
    files: &BTreeSet<&String>,
    scope: &Scope<'_>,
    states: &mut States<'_>,
) -> Result<String, Why> {
    let mut h = Sha256::new();
    h.update(b"gate traced 1\0");
    h.update(digest.as_bytes());
    for path in files {
        h.update(path.as_bytes());
        h.update(b"\0");
        // A file the tree lacks (gone since it was traced, a generated module, a git-ignored
        // file) as the runner finds it on disk.
        if !scope.snapshot.files.contains(*path) {
            let state = states.state(&scope.root.join(path))?;
            h.update(state.as_bytes());
            continue;
        }
        match scope.snapshot.read(scope.repo, path) {
            Ok((oid, _)) => h.update(oid.as_bytes()),
            Err(e) => {
                return Err(Why {
                    cause: Cause::UnknownInput,
                    detail: format!("{path}: cannot be read ({e})"),
                });
            }
        }
    }
    Ok(hex(&h.finalize()))
}
