//! The graph a warm run reuses: its key (what it was built from), and the stored graph
//! patched for the blobs that changed since, or built afresh.

use crate::analyze::analysis::Analysis;
use crate::analyze::facts::{Flags, Reads};
use crate::cache::graph::{self as graph_cache, Blobs};
use crate::config::{self, Config};
use crate::error::Result;
use crate::graph::{Graph, Tree, UserRef};
use crate::repo::snapshot::Snapshot;
use rayon::prelude::*;
use sha2::Digest;
use std::collections::{BTreeMap, BTreeSet};

/// What a load does with the graph kept from the last gated tree.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keep {
    /// For selecting: start from the kept graph when this tree has the same files and
    /// configuration (only the changed files' edges recomputed, only their facts loaded), and
    /// keep the result for the next run.
    Reuse,
    /// Build afresh from the facts, and keep it (`gate plan` keeps its graph for the selections
    /// that follow).
    Rebuild,
    /// Neither read nor replace it: a second load of the same tree, for a comparison.
    Aside,
}

/// Above this many changed files a full build is as quick as a patch.
const PATCH_LIMIT: usize = 500;
/// A patch of more files than this is written back as the new stored graph. Every warm call
/// re-patches all that changed since the stored graph, at a few ms a file (Django: ~90 files,
/// 300 ms, on every call of a series); writing the graph costs about what ten files' patch
/// does (Django: 2.6 MB, ~25–50 ms), once.
pub(super) const KEEP_AFTER: usize = 8;

/// What a graph depends on besides file contents: the file set (deleted nodes included) and
/// the files that configure resolution and discovery.
pub(super) fn graph_key(
    repo: &git2::Repository,
    snapshot: &Snapshot,
    nodes: &BTreeSet<String>,
    on_disk: &BTreeMap<String, Vec<u8>>,
    config: &Config,
    (roots, layouts): (&[String], &crate::lang::Layouts),
) -> Result<u64> {
    let mut key = graph_cache::Key::new(&crate::cache::facts::grammars());
    // The configuration governing this tree, which may be another commit's.
    key.add(config.digest);
    // The import roots, some of them read from conftests (`sys.path.insert`).
    key.add(roots);
    // What each language read of the tree's configuration (none: the key is as it was).
    let digests = layouts.digests();
    if !digests.is_empty() {
        key.add(digests);
    }
    for node in nodes {
        key.add(node);
    }
    let configures = |f: &str| {
        matches!(
            f,
            config::FILE | "pytest.ini" | "pyproject.toml" | "tox.ini" | "setup.cfg" | "setup.py"
        ) || f.ends_with("go.mod")
            || f.ends_with("go.work")
    };
    for file in snapshot.files.iter().filter(|f| configures(f)) {
        key.add((file, blob_of(repo, snapshot, file)?));
    }
    // Where links point decides edges no file's facts give.
    key.add(&snapshot.links);
    // A stored graph is patched for the tree's changed blobs only: a file read from disk
    // keys it by its content, so an edit to one builds the graph afresh.
    for (file, bytes) in on_disk {
        key.add((file, sha2::Sha256::digest(bytes).as_slice()));
    }
    Ok(key.value())
}

fn blob_of(repo: &git2::Repository, snapshot: &Snapshot, file: &str) -> Result<String> {
    Ok(match snapshot.known_blob(file) {
        Some(oid) => oid.to_string(),
        None => snapshot.read(repo, file)?.0.to_string(),
    })
}

pub(super) struct Reused {
    pub analysis: Analysis,
    pub graph: Graph,
    pub flagged: BTreeMap<String, Flags>,
    pub reads: BTreeMap<String, Reads>,
    pub blobs: Blobs,
}

/// The last graph patched for this tree, when it was built for the same key and few files
/// changed. Only the changed files' facts are read; `analysis.blobs` names only them.
pub(super) fn reuse_graph(
    repo: &git2::Repository,
    snapshot: &Snapshot,
    state: &std::path::Path,
    key: u64,
    tree: &Tree<'_>,
    config: &Config,
    warn: &mut dyn FnMut(String),
) -> Result<Option<Reused>> {
    let Some(cached) = graph_cache::load(state, key, warn) else {
        return Ok(None);
    };
    crate::timings::mark("stored graph loaded");
    let mut blobs = cached.blobs;
    let mut changed = Vec::new();
    let mut unchanged = 0;
    let sources = || {
        snapshot
            .entries()
            .filter(|(f, _)| crate::analyze::analysed(f) && !snapshot.links.contains_key(*f))
    };
    let ids = cached
        .parts
        .ids_of_sorted(sources().map(|(f, _)| f.as_str()));
    for ((file, known), id) in sources().zip(ids) {
        // The key covers the file set, so every file is a node; if not, build afresh.
        let Some(id) = id else {
            return Ok(None);
        };
        let oid = match known {
            Some(oid) => oid,
            None => snapshot.read(repo, file)?.0,
        };
        if blobs.get(id) == oid.as_bytes() {
            unchanged += 1;
            continue;
        }
        changed.push((file, id, oid));
        if changed.len() > PATCH_LIMIT {
            return Ok(None);
        }
    }
    crate::timings::mark("changed blobs found");
    let mut analysed = BTreeMap::new();
    let mut contents = Vec::with_capacity(changed.len());
    for &(file, id, oid) in &changed {
        contents.push((file.clone(), snapshot.read(repo, file)?.1));
        analysed.insert(file.clone(), oid.to_string());
        blobs.set(id, oid);
    }
    // The changed files are parsed on all cores, as a cold build's are.
    let facts: BTreeMap<String, crate::analyze::facts::Facts> = contents
        .into_par_iter()
        .map(|(file, bytes)| {
            let f = crate::analyze::facts_of(&file, &bytes);
            (file, f)
        })
        .collect();
    crate::timings::mark("changed files parsed");
    let (mut flagged, mut reads) = (cached.flagged, cached.reads);
    for (file, f) in &facts {
        flagged.remove(file);
        if let Some(flags) = f.flags() {
            flagged.insert(file.clone(), flags);
        }
        reads.remove(file);
        if let Some(r) = f.reads(file) {
            reads.insert(file.clone(), r);
        }
    }
    let Some(graph) = cached.parts.patch(tree, &facts, &config.loads) else {
        return Ok(None);
    };
    let analysis = Analysis {
        parsed: facts.len(),
        cached: unchanged,
        facts,
        blobs: analysed,
    };
    Ok(Some(Reused {
        analysis,
        graph,
        flagged,
        reads,
        blobs,
    }))
}

/// Runs the `[[reference]]` extractors over the files they name. They are the team's own
/// patterns, so they are applied on every run rather than cached with the built-in facts.
pub(super) fn user_references(
    config: &Config,
    snapshot: &Snapshot,
    read: &dyn Fn(&str) -> Option<Vec<u8>>,
) -> Vec<UserRef> {
    let mut out = Vec::new();
    for rule in &config.references {
        for file in snapshot.files.iter().filter(|f| rule.files.is_match(f)) {
            let Some(bytes) = read(file) else { continue };
            let text = String::from_utf8_lossy(&bytes);
            for caps in rule.pattern.captures_iter(&text) {
                let Some(path) = caps.name("path") else {
                    continue;
                };
                out.push(UserRef {
                    from: file.clone(),
                    line: text[..path.start()].matches('\n').count() as u32 + 1,
                    path: path.as_str().to_string(),
                    relative_to_file: rule.relative_to == config::RelativeTo::File,
                    rule: format!(
                        "[[reference]] rule {} (files = {})",
                        rule.index, rule.files.text
                    ),
                });
            }
        }
    }
    out
}
