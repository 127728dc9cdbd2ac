//! Analysing a tree: every Python, Go and shell file of a snapshot, each blob parsed at most
//! once (its facts are cached by blob id), on all cores a batch at a time. Each file's facts
//! are handed on as they are made (the graph resolves them on the same thread) and, unless
//! asked for, dropped there: a large tree's facts are never all held as values (the cache's
//! text of them is, until the cache is written). What is handed on reaches the caller in path
//! order, so the result does not depend on the thread count.

use crate::analyze::facts::Facts;
use crate::analyze::{analysed, facts_of};
use crate::cache;
use crate::error::Result;
use crate::repo::snapshot::{Snapshot, blob_id};
use rayon::prelude::*;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

/// How the files of a tree were analysed: each one's blob id, and how many were parsed now or
/// taken from the cache.
pub(crate) struct Analysis {
    /// Each file's facts, where they were asked to be kept (`gate plan --out` writes them
    /// all); otherwise empty (a patched graph's holds the changed files' only).
    pub facts: BTreeMap<String, Facts>,
    /// Every analysed file → its blob id.
    pub blobs: BTreeMap<String, String>,
    pub parsed: usize,
    pub cached: usize,
}

/// What becomes of each file's facts: `each` runs on the thread that made them, `take` gets
/// its answer in path order, and `keep` keeps the facts themselves in the `Analysis` too.
pub(crate) struct Use<'a, T> {
    pub each: &'a (dyn Fn(&str, &Facts) -> T + Sync),
    pub take: &'a mut dyn FnMut(&str, T),
    pub keep: bool,
}

/// One file as analysis found it: its blob id, its facts as a new cache entry where they
/// were made now (not taken from the cache), the facts where they are kept, and `each`'s
/// answer.
struct Read<T> {
    file: String,
    blob: String,
    fresh: Option<(String, Box<RawValue>)>,
    facts: Option<Facts>,
    out: T,
}

/// Files analysed between two hand-overs: the answers of one batch are held at once (a file's
/// edges can be many: Django's templates resolve to thousands of files). Measured: 4,096 held
/// 85 MiB at Django's peak, 256 held 56–60, at the same speed (50k files: 154 → 144 MiB).
const BATCH: usize = 256;

/// The facts cache's key: the same bytes mean different things to the Python, Go and shell
/// analysers.
fn cache_id(file: &str, blob: &str) -> String {
    if let Some(language) = crate::lang::of_source(file) {
        format!("{}{blob}", language.cache_tag(file))
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

/// The files to analyse: every analysed file of `snapshot`, and those of `given` (path →
/// bytes: files outside the snapshot, such as git-ignored modules pytest collects); `state`
/// holds the blob-id cache.
pub(crate) struct Input<'a> {
    pub repo: &'a git2::Repository,
    pub snapshot: &'a Snapshot,
    pub given: &'a BTreeMap<String, Vec<u8>>,
    pub state: &'a Path,
}

/// The files to analyse, in path order: the snapshot's (a symlink's content is its link text,
/// never analysed as code: its edge is its target) and the given ones with their bytes.
fn files_of<'a>(
    snapshot: &'a Snapshot,
    given: &'a BTreeMap<String, Vec<u8>>,
) -> Vec<(&'a String, Option<&'a [u8]>)> {
    let mut files: Vec<(&String, Option<&[u8]>)> = snapshot
        .files
        .iter()
        .filter(|f| analysed(f) && !snapshot.links.contains_key(*f))
        .map(|f| (f, None))
        .chain(given.iter().map(|(f, bytes)| {
            debug_assert!(!snapshot.files.contains(f), "{f} is given and in the tree");
            (f, Some(bytes.as_slice()))
        }))
        .collect();
    files.sort_unstable_by_key(|(f, _)| *f);
    files
}

/// The cached facts of `id`. An entry passed the cache file's checksum; one that still does
/// not read as facts is parsed again, never trusted, and counted in `unreadable` to be said.
fn cached(cache: &cache::facts::Cache, id: &str, unreadable: &AtomicUsize) -> Option<Facts> {
    let raw = cache.entries.get(id)?;
    let facts = serde_json::from_str::<Facts>(raw.get()).ok();
    if facts.is_none() {
        unreadable.fetch_add(1, Ordering::Relaxed);
    }
    facts
}

/// Analyses the files of `input`, reusing and refreshing the blob-id cache; each file's facts
/// go to `using`. `warn` receives one line per problem that does not stop the run.
pub(crate) fn analyze<T: Send>(
    input: Input<'_>,
    using: Use<'_, T>,
    warn: &mut dyn FnMut(String),
) -> Result<Analysis> {
    let Input {
        repo,
        snapshot,
        given,
        state,
    } = input;
    let path = cache::facts::path(state);
    let cache = cache::facts::load(&path, warn);
    let files = files_of(snapshot, given);
    let git_dir = repo.path().to_path_buf();
    let each = using.each;
    let unreadable = AtomicUsize::new(0);
    // Each file is read, hashed, analysed and handed to `each` on one thread, start to end:
    // no file's bytes outlive its facts, and reading is as parallel as parsing. A commit's
    // blobs are read through a repository each rayon job opens for itself when it first
    // needs one (a repository is not shared across threads); the working tree's files need
    // none.
    let one = |own: &mut Option<git2::Repository>,
               &(file, given): &(&String, Option<&[u8]>)|
     -> Result<Read<T>> {
        // A commit's tree knows the blob id, so a hit costs no read; the working tree must
        // be read and hashed to know it.
        let (oid, content) = match (given, snapshot.known_blob(file)) {
            (Some(bytes), _) => (blob_id(file, bytes)?, Some(Cow::Borrowed(bytes))),
            (None, Some(oid)) => (oid, None),
            (None, None) => match snapshot.read_from_disk(file) {
                Some(read) => read.map(|(oid, bytes)| (oid, Some(Cow::Owned(bytes))))?,
                None => snapshot
                    .read(thread_repo(own, &git_dir)?, file)
                    .map(|(oid, bytes)| (oid, Some(Cow::Owned(bytes))))?,
            },
        };
        let blob = oid.to_string();
        let id = cache_id(file, &blob);
        let (facts, fresh) = match cached(&cache, &id, &unreadable) {
            Some(facts) => (facts, None),
            None => {
                let bytes = match content {
                    Some(bytes) => bytes,
                    None => Cow::Owned(snapshot.read(thread_repo(own, &git_dir)?, file)?.1),
                };
                let facts = facts_of(file, &bytes);
                let entry = serde_json::value::to_raw_value(&facts).map_err(|e| {
                    crate::error::Error::Internal(format!("{file}: cannot keep its facts ({e})"))
                })?;
                (facts, Some((id, entry)))
            }
        };
        Ok(Read {
            file: file.clone(),
            blob,
            out: each(file, &facts),
            facts: using.keep.then_some(facts),
            fresh,
        })
    };
    let mut analysis = Analysis {
        facts: BTreeMap::new(),
        blobs: BTreeMap::new(),
        parsed: 0,
        cached: 0,
    };
    let mut fresh = Vec::new();
    for batch in files.chunks(BATCH) {
        let read: Vec<Result<Read<T>>> = batch.par_iter().map_init(|| None, one).collect();
        for r in read {
            let r = r?;
            (using.take)(&r.file, r.out);
            match r.fresh {
                Some(entry) => {
                    analysis.parsed += 1;
                    fresh.push(entry);
                }
                None => analysis.cached += 1,
            }
            if let Some(facts) = r.facts {
                analysis.facts.insert(r.file.clone(), facts);
            }
            analysis.blobs.insert(r.file, r.blob);
        }
    }
    let unreadable = unreadable.into_inner();
    if unreadable > 0 {
        warn(format!(
            "{}: {unreadable} entries of the plan cache do not read as facts; their files were parsed again",
            path.display()
        ));
    }
    if !fresh.is_empty() {
        let mut entries: BTreeMap<&str, &RawValue> = cache
            .entries
            .iter()
            .map(|(id, raw)| (id.as_str(), raw.as_ref()))
            .collect();
        entries.extend(fresh.iter().map(|(id, raw)| (id.as_str(), raw.as_ref())));
        cache::facts::save(&path, &entries, warn);
    }
    Ok(analysis)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Over more files than one batch holds, a commit's and a file given from disk: each
    /// file's facts reach `each` once and its answer reaches `take` once, in path order; kept
    /// facts are the file's own; dropped ones are not held; and the next run takes every
    /// file from the cache with the same answers.
    #[test]
    fn each_file_is_handed_on_once_in_path_order_across_batches() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let repo = git2::Repository::init(root).unwrap();
        let mut index = repo.index().unwrap();
        let n = BATCH + 37;
        let source = |i: usize| format!("import m{}\nopen('data/{i}.json')\n", i % 97);
        for i in 0..n {
            let text = source(i);
            let blob = repo.blob(text.as_bytes()).unwrap();
            let mut entry = git2::IndexEntry {
                ctime: git2::IndexTime::new(0, 0),
                mtime: git2::IndexTime::new(0, 0),
                dev: 0,
                ino: 0,
                mode: 0o100644,
                uid: 0,
                gid: 0,
                file_size: text.len() as u32,
                id: blob,
                flags: 0,
                flags_extended: 0,
                path: format!("p{}/m{i:05}.py", i % 7).into_bytes(),
            };
            entry.flags = entry.path.len().min(0xfff) as u16;
            index.add(&entry).unwrap();
        }
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = git2::Signature::now("t", "t@x").unwrap();
        let commit = repo.commit(None, &sig, &sig, "files", &tree, &[]).unwrap();
        let snapshot = Snapshot::of_commit(&repo, commit).unwrap();
        let given: BTreeMap<String, Vec<u8>> =
            [("p3/zz_generated.py".to_string(), b"import given\n".to_vec())].into();
        let state = root.join(".git/gate");
        let run = |keep: bool, warn: &mut dyn FnMut(String)| {
            let mut taken: Vec<(String, usize)> = Vec::new();
            let each =
                |path: &str, f: &Facts| (path.to_string(), f.imports.len() + f.strings.len());
            let mut take = |path: &str, (seen, count): (String, usize)| {
                assert_eq!(path, seen, "an answer reached another file");
                taken.push((path.to_string(), count));
            };
            let input = Input {
                repo: &repo,
                snapshot: &snapshot,
                given: &given,
                state: &state,
            };
            let using = Use {
                each: &each,
                take: &mut take,
                keep,
            };
            let analysis = analyze(input, using, warn).unwrap();
            (analysis, taken)
        };
        let (kept, taken) = run(true, &mut |w| panic!("{w}"));
        let mut expected: Vec<String> = snapshot.files.iter().cloned().collect();
        expected.extend(given.keys().cloned());
        expected.sort();
        let order: Vec<&String> = taken.iter().map(|(p, _)| p).collect();
        assert_eq!(order, expected.iter().collect::<Vec<_>>());
        assert_eq!((kept.parsed, kept.cached), (n + 1, 0));
        assert_eq!(kept.facts.len(), n + 1);
        for (path, facts) in &kept.facts {
            let bytes = match given.get(path) {
                Some(bytes) => bytes.clone(),
                None => snapshot.read(&repo, path).unwrap().1,
            };
            assert_eq!(facts, &facts_of(path, &bytes), "{path}");
        }
        let disk = &given["p3/zz_generated.py"];
        let blob = git2::Oid::hash_object(git2::ObjectType::Blob, disk).unwrap();
        assert_eq!(kept.blobs["p3/zz_generated.py"], blob.to_string());
        let (dropped, again) = run(false, &mut |w| panic!("{w}"));
        assert!(dropped.facts.is_empty(), "dropped facts were held");
        assert_eq!((dropped.parsed, dropped.cached), (0, n + 1));
        assert_eq!(again, taken, "the cache's answers differ from the parse's");
        assert_eq!(dropped.blobs, kept.blobs);
        // An entry that passes the file's checksum yet is no facts is parsed again, and said.
        let first = &expected[0];
        let id = cache_id(first, &kept.blobs[first]);
        let bogus = serde_json::value::to_raw_value(&[1]).unwrap();
        let file = cache::facts::path(&state);
        let cache = cache::facts::load(&file, &mut |w| panic!("{w}"));
        let mut entries: BTreeMap<&str, &RawValue> = cache
            .entries
            .iter()
            .map(|(id, raw)| (id.as_str(), raw.as_ref()))
            .collect();
        assert!(entries.insert(id.as_str(), bogus.as_ref()).is_some());
        cache::facts::save(&file, &entries, &mut |w| panic!("{w}"));
        let mut said = Vec::new();
        let (repaired, answers) = run(false, &mut |w| said.push(w));
        assert_eq!((repaired.parsed, repaired.cached), (1, n));
        assert_eq!(answers, taken);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].contains("1 entries of the plan cache do not read"),
            "{said:?}"
        );
    }
}
