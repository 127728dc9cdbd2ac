//! `--recommendations FILE`: test files another party (a model, a hosted selector) recommends,
//! in seed 001's form `{version: 1, context, selectedFiles: [{file, project, pool}]}`. They only
//! ever add: each named test file of this tree joins the selection with a reason of its own; a
//! file the graph selected stays selected whatever the file says, a verdict stays as it was (a
//! refusal is not lifted), and a run that runs nothing (every change inert) is not made to run.
//! The context must be this tree's source and configuration — the same identities the frozen
//! decision holds — or the file is refused (exit 10) naming the first field that differs: a
//! recommendation made for other code says nothing about this one. The file is bounded (a
//! regular file of at most `LIMIT` bytes, `crate::bounded`) and read strictly (`document`: a
//! field gate does not know is refused by its path); the files it names that add nothing are
//! noted five at a time, the rest counted.

use crate::error::{Error, Result};
use crate::fingerprint::{Memo, Scope};
use crate::graph::Node;
use crate::verdict::{Decision, RunVerdict};
use document::{Context, cut};
use std::collections::BTreeSet;
use std::path::Path;

mod document;

/// The largest recommendations file read. An entry names one test file (`{"file":
/// "tests/…/test_….py", "project": "…", "pool": "…"}`, 100 to 200 bytes pretty-printed with a
/// long path), so a 100,000-test-file suite's every file recommended is about 20 MB: 64 MiB
/// leaves it three times that (670 bytes an entry), and a file past it is not a recommendation
/// but a wrong path. Its bytes are held while it is read (each object's fields borrowed from
/// them, only the paths copied), so it costs gate at most about twice the limit in memory.
const LIMIT: u64 = 64 << 20;

/// How many recommended files a note names one by one before the rest are counted: 100,000
/// entries that are no test files say so in a few lines, not 100,000.
const NAMED: usize = 5;

/// Reads the recommendations in `path`, checks their context against `scope`'s tree (its
/// commit `head`), and adds each named test file to `decided`'s selection. What was not added,
/// and why, goes to `decided`'s notes.
pub(crate) fn add(
    path: &Path,
    scope: &Scope<'_>,
    head: Option<git2::Oid>,
    decided: &mut Decision,
) -> Result<()> {
    let bad = |message: String| Error::Input {
        path: path.to_path_buf(),
        message,
    };
    let bytes = crate::bounded::read(path, LIMIT, "a recommendations file")?;
    let recommended = document::read(&bytes).map_err(bad)?;
    check(&recommended.context, scope, head).map_err(bad)?;
    let reason = format!("recommended by {}", path.display());
    let runs = matches!(
        decided.verdict,
        RunVerdict::Bounded | RunVerdict::NamedFull | RunVerdict::Refused
    );
    let (mut not_tests, mut idle) = (BTreeSet::new(), BTreeSet::new());
    for (i, file) in recommended.files.iter().enumerate() {
        if !crate::proof::observations::repo_relative(file) {
            return Err(bad(format!(
                "selectedFiles[{i}].file: {:?} is not a repository-relative path (`/`-separated, no `..`)",
                cut(file)
            )));
        }
        let file = file.strip_prefix("./").unwrap_or(file);
        let unit = unit_of(file);
        if !scope.project.tests.contains(&unit) {
            not_tests.insert(file);
        } else if !runs {
            idle.insert(file);
        } else {
            let reasons = decided.selected.entry(unit).or_default();
            if !reasons.contains(&reason) {
                reasons.push(reason.clone());
            }
        }
    }
    decided.notes.extend(named(
        &not_tests,
        "is not a test file of this tree: nothing added for it",
        "are not test files of this tree: nothing added for them",
    ));
    decided.notes.extend(named(
        &idle,
        "is not run: every change is inert, and recommendations only add to a run",
        "are not run: every change is inert",
    ));
    Ok(())
}

/// A note for each of the first `NAMED` of `files` (`recommended README.md {one}`), then one
/// counting the rest (`… and 99995 more recommended files {more}`).
fn named(files: &BTreeSet<&str>, one: &str, more: &str) -> Vec<String> {
    let mut notes: Vec<String> = files
        .iter()
        .take(NAMED)
        .map(|file| format!("recommended {} {one}", cut(file)))
        .collect();
    if files.len() > NAMED {
        notes.push(format!(
            "… and {} more recommended files {more}",
            files.len() - NAMED
        ));
    }
    notes
}

/// Whether `context` is this tree's: the first field that differs, named, when it is not.
fn check(
    context: &Context,
    scope: &Scope<'_>,
    head: Option<git2::Oid>,
) -> std::result::Result<(), String> {
    let repository = crate::proof::frozen::repository(scope.repo, scope.root);
    let revision = head.map(|h| h.to_string());
    let tree = head
        .and_then(|h| scope.repo.find_commit(h).ok())
        .map(|c| c.tree_id().to_string());
    let identity = scope.identity(&mut Memo::default());
    let fields = [
        ("repository", Some(&context.repository), Some(&repository)),
        ("revision", context.revision.as_ref(), revision.as_ref()),
        ("tree", context.tree.as_ref(), tree.as_ref()),
        (
            "configDigest",
            Some(&context.config_digest),
            Some(&identity.config),
        ),
        (
            "lockDigest",
            context.lock_digest.as_ref(),
            identity.lock.as_ref(),
        ),
        (
            "environmentDigest",
            context.environment_digest.as_ref(),
            identity.environment.as_ref(),
        ),
    ];
    let shown = |v: Option<&String>| v.map_or_else(|| "null".to_string(), |v| format!("{v:?}"));
    match fields.iter().find(|(_, theirs, ours)| theirs != ours) {
        Some((field, theirs, ours)) => Err(format!(
            "context.{field} is {}, but this tree's is {}: the recommendations were made for other source or configuration",
            shown(*theirs),
            shown(*ours)
        )),
        None => Ok(()),
    }
}

/// The selection unit a recommended file stands for: a Go test file its package's tests, any
/// other file itself (a Python test file is its own unit).
fn unit_of(file: &str) -> String {
    if file.ends_with("_test.go") {
        Node::GoTests(crate::path::parent(file)).name()
    } else {
        file.to_string()
    }
}
