//! Analysing a tree: every Python, Go and shell file of a snapshot, each blob parsed at most
//! once (its facts are cached by blob id), the new ones on all cores and collected in path
//! order, so the result does not depend on the thread count.

use crate::analyze::facts::Facts;
use crate::analyze::{analysed, facts_of};
use crate::cache;
use crate::error::Result;
use crate::repo::snapshot::Snapshot;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

/// The facts of every analysed file (Python sources and stubs, shell scripts) of a snapshot,
/// and how they were obtained.
pub(crate) struct Analysis {
    pub facts: BTreeMap<String, Facts>,
    pub blobs: BTreeMap<String, String>,
    pub parsed: usize,
    pub cached: usize,
}

/// Analyses every Python file of `snapshot`, reusing and refreshing the blob-id cache.
/// `warn` receives one line per problem that does not stop the run.
pub(crate) fn analyze(
    repo: &git2::Repository,
    snapshot: &Snapshot,
    state: &Path,
    warn: &mut dyn FnMut(String),
) -> Result<Analysis> {
    let path = cache::facts::path(state);
    let cache = cache::facts::load(&path, warn);
    let mut blobs = BTreeMap::new();
    let mut todo: Vec<(String, String, Vec<u8>)> = Vec::new();
    let mut facts = BTreeMap::new();
    // A symlink's content is its link text: never analysed as code (its edge is its target).
    let files = snapshot
        .files
        .iter()
        .filter(|f| analysed(f) && !snapshot.links.contains_key(*f));
    for file in files {
        // A commit's tree knows the blob id, so a hit costs no read; the working tree must be
        // read and hashed to know it.
        let (id, content) = match snapshot.known_blob(file) {
            Some(oid) => (oid.to_string(), None),
            None => {
                let (oid, bytes) = snapshot.read(repo, file)?;
                (oid.to_string(), Some(bytes))
            }
        };
        blobs.insert(file.clone(), id.clone());
        // The same bytes mean different things to the Python, Go and shell analysers.
        let id = if crate::path::is_python(file) {
            id
        } else if crate::lang::go::gomod::is_go(file) {
            format!("go:{id}")
        } else if crate::analyze::is_doctest_text(file) {
            format!("doc:{id}")
        } else {
            format!("sh:{id}")
        };
        if let Some(hit) = cache.entries.get(&id) {
            facts.insert(file.clone(), hit.clone());
            continue;
        }
        let bytes = match content {
            Some(bytes) => bytes,
            None => snapshot.read(repo, file)?.1,
        };
        todo.push((file.clone(), id, bytes));
    }
    let cached = facts.len();
    let fresh: Vec<(String, String, Facts)> = todo
        .into_par_iter()
        .map(|(file, id, bytes)| {
            let facts = facts_of(&file, &bytes);
            (file, id, facts)
        })
        .collect();
    let parsed = fresh.len();
    let mut ids = Vec::with_capacity(parsed);
    for (file, id, f) in fresh {
        ids.push((id, file.clone()));
        facts.insert(file, f);
    }
    if parsed > 0 {
        let mut entries: BTreeMap<&str, &Facts> = cache
            .entries
            .iter()
            .map(|(id, f)| (id.as_str(), f))
            .collect();
        entries.extend(ids.iter().map(|(id, file)| (id.as_str(), &facts[file])));
        cache::facts::save(&path, &entries, warn);
    }
    Ok(Analysis {
        facts,
        blobs,
        parsed,
        cached,
    })
}
