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

/// One file as analysis found it: its blob id, its cache key, its facts and whether they
/// were made now (not taken from the cache).
struct Read {
    file: String,
    blob: String,
    id: String,
    facts: Facts,
    fresh: bool,
}

/// The facts cache's key: the same bytes mean different things to the Python, Go and shell
/// analysers.
fn cache_id(file: &str, blob: &str) -> String {
    if crate::path::is_python(file) {
        blob.to_string()
    } else if crate::lang::go::gomod::is_go(file) {
        format!("go:{blob}")
    } else if crate::analyze::is_doctest_text(file) {
        format!("doc:{blob}")
    } else {
        format!("sh:{blob}")
    }
}

/// This job's own handle on the repository, opened when it first reads a blob.
fn thread_repo<'r>(
    own: &'r mut Option<git2::Repository>,
    git_dir: &Path,
) -> Result<&'r git2::Repository> {
    if own.is_none() {
        let repo = git2::Repository::open(git_dir).map_err(|e| {
            crate::error::Error::git(format!("{}: cannot open", git_dir.display()), e)
        })?;
        *own = Some(repo);
    }
    Ok(own.as_ref().expect("opened above"))
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
    // A symlink's content is its link text: never analysed as code (its edge is its target).
    let files: Vec<&String> = snapshot
        .files
        .iter()
        .filter(|f| analysed(f) && !snapshot.links.contains_key(*f))
        .collect();
    let git_dir = repo.path().to_path_buf();
    // Each file is read, hashed and analysed on one thread, start to end: no file's bytes
    // outlive its facts, and reading is as parallel as parsing. A commit's blobs are read
    // through a repository each rayon job opens for itself when it first needs one (a
    // repository is not shared across threads); the working tree's files need none.
    let read: Vec<Result<Read>> = files
        .into_par_iter()
        .map_init(
            || None,
            |own: &mut Option<git2::Repository>, file| {
                // A commit's tree knows the blob id, so a hit costs no read; the working tree
                // must be read and hashed to know it.
                let (oid, content) = match snapshot.known_blob(file) {
                    Some(oid) => (oid, None),
                    None => match snapshot.read_from_disk(file) {
                        Some(read) => read.map(|(oid, bytes)| (oid, Some(bytes)))?,
                        None => snapshot
                            .read(thread_repo(own, &git_dir)?, file)
                            .map(|(oid, bytes)| (oid, Some(bytes)))?,
                    },
                };
                let blob = oid.to_string();
                let id = cache_id(file, &blob);
                if let Some(hit) = cache.entries.get(&id) {
                    return Ok(Read {
                        file: file.clone(),
                        blob,
                        id,
                        facts: hit.clone(),
                        fresh: false,
                    });
                }
                let bytes = match content {
                    Some(bytes) => bytes,
                    None => snapshot.read(thread_repo(own, &git_dir)?, file)?.1,
                };
                let facts = facts_of(file, &bytes);
                Ok(Read {
                    file: file.clone(),
                    blob,
                    id,
                    facts,
                    fresh: true,
                })
            },
        )
        .collect();
    let mut blobs = BTreeMap::new();
    let mut facts = BTreeMap::new();
    let mut ids = Vec::new();
    for r in read {
        let r = r?;
        blobs.insert(r.file.clone(), r.blob);
        if r.fresh {
            ids.push((r.id, r.file.clone()));
        }
        facts.insert(r.file, r.facts);
    }
    let parsed = ids.len();
    let cached = facts.len() - parsed;
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
