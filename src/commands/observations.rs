//! `gate export --observations FILE [--run ID]`: one recorded run as an observation export
//! (`crate::proof::observations`), its identities and inventory taken from the decision frozen for
//! its commit and base (else one frozen now), its dependencies from the graph of that commit
//! and `gate audit`'s traces of its tree;
//! `gate import --observations FILE`: an export read back, checked, and kept in a store.

use crate::error::{Error, Result};
use crate::exit_codes;
use crate::fingerprint::Scope;
use crate::history::observations::Imported;
use crate::history::triage::LegInfo;
use crate::pipeline::{self, Target};
use crate::proof::frozen::Parts;
use crate::proof::observations::{EXPORT_VERSION, Export, LegSource, Observed, Payload, Source};
use crate::repo::{self, range};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// What an export reads of the frozen decision (`plans/frozen.schema.json`).
#[derive(serde::Deserialize)]
struct Identities {
    repository: String,
    tree: Option<String>,
    base: Option<String>,
    base_tree: Option<String>,
    config_digest: String,
    lock_digest: Option<String>,
    environment_digest: Option<String>,
    inventory: Vec<String>,
}

pub(super) struct ExportArgs<'a> {
    pub out: &'a Path,
    pub run: Option<&'a str>,
    pub max_bytes: usize,
    pub db: Option<&'a str>,
}

pub(super) fn export(dir: &Path, args: &ExportArgs<'_>) -> Result<u8> {
    let repo = repo::open(dir)?;
    let (mut store, _) = crate::history::open_store(&repo, args.db)?;
    let run = crate::history::run_or_latest(&mut store, args.run)?;
    let legs = store.legs_of_run(&run)?;
    let (commit, base) = one_commit(&run, &legs)?;
    // The run's own change: its commit against the base it recorded (none: the commit alone).
    let spec = format!("{}...{commit}", base.as_deref().unwrap_or(&commit));
    let analyzed = pipeline::analyze(&repo, Target::Ranges(vec![range::resolve(&repo, &spec)?]))?;
    let root = repo::workdir(&repo)?;
    let parts = Parts {
        repo: &repo,
        root: &root,
        input: &analyzed.input,
        project: &analyzed.project,
        decided: &analyzed.decided,
        ledger: &crate::ledger::Ledger::default(),
        split: None,
    };
    let (decision, json) = crate::proof::frozen::decide(
        &parts,
        &mut crate::fingerprint::Memo::default(),
        args.db,
        true,
        None,
    )?;
    let ids: Identities = serde_json::from_str(&json)
        .map_err(|e| Error::Internal(format!("the frozen decision {decision}: {e}")))?;
    let scope = Scope {
        repo: &repo,
        snapshot: &analyzed.input.snapshot,
        project: &analyzed.project,
        root: &root,
    };
    let traces = traces(
        &mut store,
        ids.tree.as_deref(),
        &analyzed.input.snapshot.files,
    )?;
    let files = observed(&mut store, &legs, &ids.inventory, &scope, &traces)?;
    let doc = Export {
        version: EXPORT_VERSION,
        digest: String::new(),
        source: Source {
            run: run.clone(),
            legs: legs
                .iter()
                .map(|l| LegSource {
                    leg: l.leg.clone(),
                    attempt: l.attempt,
                    recorded_unix: l.recorded_unix,
                })
                .collect(),
        },
        decision,
        repository: ids.repository,
        commit: commit.clone(),
        tree: ids.tree,
        base: ids.base,
        base_tree: ids.base_tree,
        config_digest: ids.config_digest,
        lock_digest: ids.lock_digest,
        environment_digest: ids.environment_digest,
        inventory: ids.inventory,
        observations: Payload { version: 1, files },
        warnings: Vec::new(),
    };
    let count = doc.observations.files.len();
    let written = doc.bounded(args.max_bytes).map_err(|too_big| {
        Error::io(
            args.out,
            "not written",
            std::io::Error::new(
                std::io::ErrorKind::FileTooLarge,
                format!(
                    "the export of run {run} is {} bytes even with no dependencies, over the limit of {} (--max-bytes)",
                    too_big.bytes, args.max_bytes
                ),
            ),
        )
    })?;
    if let Some(warning) = &written.warning {
        super::warn(warning.clone());
    }
    crate::proof::frozen::write_whole(args.out, &written.bytes, "the export")?;
    tell!(
        "gate export: run {run} ({} leg(s)) at {}: {count} test file observation(s), {}, {} bytes → {}",
        legs.len(),
        short(&commit),
        written.form,
        written.bytes.len(),
        args.out.display()
    );
    crate::pipeline::leave(Box::new(analyzed));
    Ok(exit_codes::OK)
}

/// `gate audit`'s traces of the exported tree, each checked before it is used: a row that is
/// not a list of paths, or a path the tree does not hold, is said and left out.
fn traces(
    store: &mut crate::history::Store,
    tree: Option<&str>,
    files: &BTreeSet<String>,
) -> Result<BTreeMap<String, BTreeSet<String>>> {
    let Some(tree) = tree else {
        return Ok(BTreeMap::new());
    };
    let (mut traces, unreadable) = store.traces_of(tree)?;
    let mut outside = 0;
    for opened in traces.values_mut() {
        let before = opened.len();
        opened.retain(|f| files.contains(f));
        outside += before - opened.len();
    }
    if unreadable + outside > 0 {
        super::warn(format!(
            "{} of the store's traces of tree {} not used: {unreadable} not a list of paths, {outside} path(s) not in the tree",
            unreadable + outside,
            short(tree)
        ));
    }
    Ok(traces)
}

/// Each leg's units as observed: every inventory unit (unknown with no result) and every unit
/// with a result, its dependencies from the graph joined by its trace, when one is kept (each
/// unit's computed once). One run's trace never bounds a unit the graph cannot: it stays null.
fn observed(
    store: &mut crate::history::Store,
    legs: &[LegInfo],
    inventory: &[String],
    scope: &Scope<'_>,
    traces: &BTreeMap<String, BTreeSet<String>>,
) -> Result<Vec<Observed<String>>> {
    let mut files = Vec::new();
    let mut dependencies: BTreeMap<String, (Option<Vec<String>>, bool)> = BTreeMap::new();
    for leg in legs {
        let mut units = crate::proof::shadow::by_unit(&store.results_of_leg(leg.seq)?);
        for unit in inventory {
            units.entry(unit.clone()).or_default();
        }
        for (unit, r) in units {
            let tests = r.failed() + r.passed + r.skipped;
            let (deps, traced) = dependencies
                .entry(unit.clone())
                .or_insert_with(|| joined(scope.dependencies(&unit), traces.get(&unit)))
                .clone();
            files.push(Observed {
                dependencies: deps,
                traced,
                outcome: if tests == 0 { "unknown" } else { r.outcome() }.to_string(),
                duration_ms: (tests > 0).then_some(r.duration_ms),
                leg: leg.leg.clone(),
                file: unit,
                tests,
            });
        }
    }
    Ok(files)
}

/// The graph's dependencies joined by what the unit's trace opened: (dependencies, traced).
fn joined(
    graph: Option<Vec<String>>,
    trace: Option<&BTreeSet<String>>,
) -> (Option<Vec<String>>, bool) {
    match (graph, trace) {
        (Some(graph), Some(trace)) => {
            let all: BTreeSet<String> = graph.into_iter().chain(trace.iter().cloned()).collect();
            (Some(all.into_iter().collect()), true)
        }
        (graph, _) => (graph, false),
    }
}

/// The commit and base a run's legs were recorded at: one of each, or the run is not one
/// change to export.
fn one_commit(run: &str, legs: &[LegInfo]) -> Result<(String, Option<String>)> {
    let Some(first) = legs.first() else {
        return Err(Error::Usage(format!(
            "run {}: no leg recorded under this id",
            crate::terminal::shown(run)
        )));
    };
    if let Some(other) = legs
        .iter()
        .find(|l| l.commit != first.commit || l.base != first.base)
    {
        return Err(Error::Usage(format!(
            "run {}: leg {} was recorded at {} and leg {} at {}: an export is of one commit",
            crate::terminal::shown(run),
            crate::terminal::shown(&first.leg),
            short(&first.commit),
            crate::terminal::shown(&other.leg),
            short(&other.commit)
        )));
    }
    Ok((first.commit.clone(), first.base.clone()))
}

/// `gate import --observations FILE`: the export checked (versions, paths, references, its
/// digest) and kept in the store once.
pub(super) fn import(dir: &Path, file: &Path, db: Option<&str>) -> Result<u8> {
    let bytes = std::fs::read(file).map_err(|e| Error::io(file, "cannot read", e))?;
    let export = crate::proof::observations::read(&bytes).map_err(|message| Error::Input {
        path: file.to_path_buf(),
        message,
    })?;
    let repo = repo::open(dir)?;
    let (mut store, _) = crate::history::open_store(&repo, db)?;
    let body = serde_json::to_string_pretty(&export).expect("an export serializes");
    let new = store.keep_observations(&Imported {
        digest: &export.digest,
        repository: &export.repository,
        commit: &export.commit,
        run: &export.source.run,
        body: &body,
    })?;
    let files = &export.observations.files;
    let known = files.iter().filter(|f| f.dependencies.is_some()).count();
    tell!(
        "gate import: run {} at {} of {}: {} test file observation(s) on {} leg(s), {known} with dependencies — {} {}",
        export.source.run,
        short(&export.commit),
        export.repository,
        files.len(),
        export.source.legs.len(),
        if new { "kept in" } else { "already in" },
        store.name()
    );
    Ok(exit_codes::OK)
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}
