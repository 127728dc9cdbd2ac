//! `--recommendations FILE`: test files another party (a model, a hosted selector) recommends,
//! in seed 001's form `{version: 1, context, selectedFiles: [{file, project, pool}]}`. They only
//! ever add: each named test file of this tree joins the selection with a reason of its own; a
//! file the graph selected stays selected whatever the file says, a verdict stays as it was (a
//! refusal is not lifted), and a run that runs nothing (every change inert) is not made to run.
//! The context must be this tree's source and configuration — the same identities the frozen
//! decision holds — or the file is refused (exit 10) naming the first field that differs: a
//! recommendation made for other code says nothing about this one.

use crate::error::{Error, Result};
use crate::fingerprint::{Memo, Scope};
use crate::graph::Node;
use crate::verdict::{Decision, RunVerdict};
use serde::Deserialize;
use std::path::Path;

/// The one version of the format this gate reads.
const VERSION: u64 = 1;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Recommendations {
    context: Context,
    selected_files: Vec<Selected>,
}

/// The source and configuration the recommendations were made for. A field gate does not know
/// is refused: it would be a part of the context gate cannot check.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Context {
    repository: String,
    revision: Option<String>,
    tree: Option<String>,
    config_digest: String,
    lock_digest: Option<String>,
    environment_digest: Option<String>,
}

/// One recommended file; its `project` and `pool` (a Vitest project and worker pool) name
/// nothing in gate's runners and are not read.
#[derive(Deserialize)]
struct Selected {
    file: String,
}

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
    let bytes =
        std::fs::read(path).map_err(|e| Error::io(path, "cannot read the recommendations", e))?;
    let recommended = read(&bytes).map_err(bad)?;
    check(&recommended.context, scope, head).map_err(bad)?;
    let reason = format!("recommended by {}", path.display());
    let runs = matches!(
        decided.verdict,
        RunVerdict::Bounded | RunVerdict::NamedFull | RunVerdict::Refused
    );
    for selected in &recommended.selected_files {
        let file = &selected.file;
        if !crate::proof::observations::repo_relative(file) {
            return Err(bad(format!(
                "selectedFiles: {file:?} is not a repository-relative path (`/`-separated, no `..`)"
            )));
        }
        let file = file.strip_prefix("./").unwrap_or(file);
        let unit = unit_of(file);
        if !scope.project.tests.contains(&unit) {
            decided.notes.push(format!(
                "recommended {file} is not a test file of this tree: nothing added for it"
            ));
            continue;
        }
        if !runs {
            decided.notes.push(format!(
                "recommended {file} is not run: every change is inert, and recommendations only add to a run"
            ));
            continue;
        }
        let reasons = decided.selected.entry(unit).or_default();
        if !reasons.contains(&reason) {
            reasons.push(reason.clone());
        }
    }
    Ok(())
}

/// The document, its version checked before its shape (a later version may differ in both).
fn read(bytes: &[u8]) -> std::result::Result<Recommendations, String> {
    let value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| format!("not JSON ({e})"))?;
    match value.get("version").and_then(serde_json::Value::as_u64) {
        Some(VERSION) => {}
        Some(other) => {
            return Err(format!(
                "version {other}: this gate reads version {VERSION}"
            ));
        }
        None => return Err(format!("no version: this gate reads version {VERSION}")),
    }
    serde_json::from_value(value).map_err(|e| format!("not recommendations version 1: {e}"))
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
