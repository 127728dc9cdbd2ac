//! Frozen decisions: what a selection was, written before anything runs and never rewritten,
//! so a later shadow run judges its failures against the decision that was made — not one
//! rebuilt after the fact from a graph that has moved on. Its id is the SHA-256 of its
//! canonical JSON (compact, keys sorted): the same selection of the same inputs is the same
//! decision, and a stored one that was edited no longer matches its id.
//! `plans/frozen.schema.json` is its shape.

use crate::error::{Error, Result};
use crate::fingerprint::{Identity, Memo, Scope};
use crate::history::{Location, Store, StoreError};
use crate::ledger::Ledger;
use crate::project::Project;
use crate::repo::diff::Status;
use crate::repo::input::Input;
use crate::verdict::{Decision, Row};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// The shape's version (`plans/frozen.schema.json`).
pub(crate) const FROZEN_VERSION: u32 = 1;

/// A decision as frozen: its id and what the id binds.
#[derive(Serialize)]
pub(crate) struct Frozen<'a> {
    pub id: String,
    #[serde(flatten)]
    pub body: Body<'a>,
}

#[derive(Serialize)]
pub(crate) struct Body<'a> {
    pub version: u32,
    /// `remote.origin.url`, else the working tree's folder name.
    pub repository: String,
    /// The gated commit and its tree; null for the working tree.
    pub commit: Option<String>,
    pub tree: Option<String>,
    /// The commit the changes are measured from and its tree; null when there is none.
    pub base: Option<String>,
    pub base_tree: Option<String>,
    /// SHA-256 digests: the runner and `.gate.toml`; the whole-suite files (lock files,
    /// manifests); the interpreters' and toolchains' identities and the values of the variables
    /// that change a run (hashed: a secret's value is never written).
    pub config_digest: String,
    pub lock_digest: Option<String>,
    pub environment_digest: Option<String>,
    /// Every changed path, both sides of renames, with its status.
    pub changes: Vec<ChangedPath>,
    /// Every test file and Go test package of the gated tree, selected or not.
    pub inventory: Vec<&'a str>,
    pub verdict: &'a crate::verdict::RunVerdict,
    /// Selected tests → why (the ledger's reuses among them).
    pub selected: &'a BTreeMap<String, Vec<String>>,
    /// Selected tests the ledger reused, with the pass they reused.
    pub reused: BTreeMap<&'a str, &'a crate::ledger::Provenance>,
    /// Tests `max_depth` kept out → the changes that reach them.
    pub cut: &'a BTreeMap<String, Vec<String>>,
    pub rows: &'a [Row],
    /// Why this decision cannot stand for a commit: a dirty working tree, a missing base, an
    /// input that cannot be read. Empty when it can.
    pub gaps: Vec<String>,
    /// The selection split over N CI legs (`--shard K/N`), which every leg given this
    /// decision runs its shard of; absent when the run was not split.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub split: Option<&'a crate::run::shard::Split>,
}

#[derive(Serialize)]
pub(crate) struct ChangedPath {
    pub path: String,
    pub status: &'static str,
    /// A rename's other side.
    pub other: Option<String>,
}

/// The parts of a run a decision is made of.
pub(crate) struct Parts<'a> {
    pub repo: &'a git2::Repository,
    pub root: &'a Path,
    pub input: &'a Input,
    pub project: &'a Project,
    pub decided: &'a Decision,
    pub ledger: &'a Ledger,
    pub split: Option<&'a crate::run::shard::Split>,
}

/// The decision for `parts`, before anything runs: with `earlier`, the one frozen before for
/// the same commit and base when the store holds one (a shadow run judges against the decision
/// that was made); else frozen now and kept in the store (`db`, else the configured one) and
/// in `out` when asked. Its id and JSON.
pub(crate) fn decide(
    parts: &Parts<'_>,
    memo: &mut Memo,
    db: Option<&str>,
    earlier: bool,
    out: Option<&Path>,
) -> Result<(String, String)> {
    if earlier && let Some(found) = frozen_before(parts, db)? {
        return Ok(found);
    }
    let frozen = freeze(parts, memo);
    let store = crate::history::location(
        db,
        parts.project.config.history.url.as_deref(),
        &crate::repo::state_dir(parts.repo),
    );
    let (json, note) = frozen.keep(store, out)?;
    if let Some(note) = note {
        crate::terminal::warn(note);
    }
    crate::timings::mark("decision frozen");
    Ok((frozen.id, json))
}

/// The decision frozen before this run for the same commit and base, if the store holds one
/// whose body still hashes to its id. A shared store is another party's input: a body edited
/// after it was frozen (a miss rewritten as selected) is said so and not used, and the caller
/// freezes the decision anew.
fn frozen_before(parts: &Parts<'_>, db: Option<&str>) -> Result<Option<(String, String)>> {
    let Some(head) = parts.input.head else {
        return Ok(None);
    };
    let mut store = crate::history::open_for(parts.repo, parts.project, db)?;
    let base = parts.input.bases.first().map(ToString::to_string);
    let Some((id, json)) = store.decision_for(&head.to_string(), base.as_deref())? else {
        return Ok(None);
    };
    if let Err(why) = verify(&id, &json) {
        crate::terminal::warn(format!(
            "the decision {id} in the store is not used: {why}; a new one is frozen"
        ));
        return Ok(None);
    }
    Ok(Some((id, json)))
}

/// Freezes a decision: every identity hashed now, before anything runs.
pub(crate) fn freeze<'a>(p: &Parts<'a>, memo: &mut Memo) -> Frozen<'a> {
    let mut gaps = Vec::new();
    let input = p.input;
    let tree_of = |c: git2::Oid| p.repo.find_commit(c).ok().map(|c| c.tree_id().to_string());
    if input.head.is_none() {
        gaps.push(
            "the working tree is gated, not a commit: uncommitted changes are no commit's"
                .to_string(),
        );
    }
    if let Some(fact) = &input.range_refusal {
        gaps.push(format!("the base is missing: {fact}"));
    }
    let base = input.bases.first().copied();
    let scope = Scope {
        repo: p.repo,
        snapshot: &input.snapshot,
        project: p.project,
        root: p.root,
    };
    let Identity {
        config,
        lock,
        environment,
        unknown,
    } = scope.identity(memo);
    crate::timings::mark("decision's identities hashed");
    gaps.extend(unknown);
    let body = Body {
        version: FROZEN_VERSION,
        repository: repository(p.repo, p.root),
        commit: input.head.map(|h| h.to_string()),
        tree: input.head.and_then(tree_of),
        base: base.map(|b| b.to_string()),
        base_tree: base.and_then(tree_of),
        config_digest: config,
        lock_digest: lock,
        environment_digest: environment,
        changes: input
            .changes
            .iter()
            .map(|c| ChangedPath {
                path: c.path.to_string(),
                status: status(c.status),
                other: c.other.as_ref().map(ToString::to_string),
            })
            .collect(),
        inventory: p.project.tests.iter().map(String::as_str).collect(),
        verdict: &p.decided.verdict,
        selected: &p.decided.selected,
        reused: p
            .ledger
            .reused
            .iter()
            .map(|(u, r)| (u.as_str(), r))
            .collect(),
        cut: &p.decided.cut,
        rows: &p.decided.rows,
        gaps,
        split: p.split,
    };
    let id = digest_of_value(&serde_json::to_value(&body).expect("a decision serializes"));
    crate::timings::mark("decision bound");
    Frozen { id, body }
}

impl Frozen<'_> {
    /// Keeps the decision before anything runs: in `out` when asked (written whole or not at
    /// all; a file that cannot be written is an error, it was asked for), and in the history
    /// store. A store that cannot take it is a note: a store that is down does not stop a push.
    /// The JSON as kept, and the note.
    pub(crate) fn keep(
        &self,
        at: Result<Location, StoreError>,
        out: Option<&Path>,
    ) -> Result<(String, Option<String>)> {
        let json = serde_json::to_string_pretty(self).expect("a decision serializes");
        if let Some(out) = out {
            write_whole(out, format!("{json}\n").as_bytes(), "the decision")?;
        }
        let stored = at.and_then(|at| {
            Store::open(&at)?.freeze(
                &self.id,
                self.body.commit.as_deref(),
                self.body.base.as_deref(),
                &json,
            )
        });
        let note = stored
            .err()
            .map(|e| format!("the decision was not frozen in the store: {}", e.one_line()));
        Ok((json, note))
    }
}

/// Checks a kept decision (`{"id": …, …body}`) against its id: the body's canonical JSON must
/// hash to it. Why not, when it does not.
pub(crate) fn verify(id: &str, json: &str) -> std::result::Result<(), String> {
    let mut value: serde_json::Value =
        serde_json::from_str(json).map_err(|e| format!("its JSON cannot be read ({e})"))?;
    let kept = value
        .as_object_mut()
        .and_then(|o| o.remove("id"))
        .ok_or("it holds no id")?;
    if kept.as_str() != Some(id) {
        return Err("the id it holds is not the one it is kept under".into());
    }
    if digest_of_value(&value) == id {
        Ok(())
    } else {
        Err("its body does not hash to its id (it was changed after it was frozen)".into())
    }
}

/// Writes `bytes` to `path` through a temporary file beside it, renamed over it: whole or not
/// at all. `what` names it in an error.
pub(crate) fn write_whole(path: &Path, bytes: &[u8], what: &str) -> Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let fail = |e| Error::io(path, format!("cannot write {what}"), e);
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(fail)?;
    tmp.write_all(bytes).map_err(fail)?;
    tmp.persist(path).map_err(|e| fail(e.error))?;
    Ok(())
}

/// The SHA-256 (hex) of a value's canonical JSON: what binds a decision or an export.
pub(crate) fn digest_of_value(value: &serde_json::Value) -> String {
    let mut canonical = Vec::new();
    canonical_json(value, &mut canonical);
    hex(&Sha256::digest(&canonical))
}

/// Compact JSON with every object's keys sorted by their bytes, whatever order the map kept:
/// what the id hashes, and what anyone can rebuild from the file to check it.
fn canonical_json(value: &serde_json::Value, out: &mut Vec<u8>) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push(b'{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                serde_json::to_writer(&mut *out, key).expect("a string serializes");
                out.push(b':');
                canonical_json(&map[key], out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                canonical_json(item, out);
            }
            out.push(b']');
        }
        scalar => serde_json::to_writer(&mut *out, scalar).expect("a scalar serializes"),
    }
}

fn status(s: Status) -> &'static str {
    match s {
        Status::Added => "added",
        Status::Modified => "modified",
        Status::Deleted => "deleted",
        Status::Renamed => "renamed",
        Status::TypeChanged => "type_changed",
    }
}

/// The origin's URL without credentials (`https://user:token@host/…` → `https://host/…`),
/// else the working tree's folder name.
pub(crate) fn repository(repo: &git2::Repository, root: &Path) -> String {
    repo.find_remote("origin")
        .ok()
        .and_then(|r| r.url().ok().map(without_credentials))
        .unwrap_or_else(|| {
            root.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
}

fn without_credentials(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
            let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
            format!("{scheme}://{host}/{path}")
        }
        None => url.to_string(),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_remote_url_keeps_no_credentials() {
        use super::without_credentials as w;
        assert_eq!(
            w("https://bot:ghp_secret@github.com/o/r.git"),
            "https://github.com/o/r.git"
        );
        assert_eq!(w("https://github.com/o/r"), "https://github.com/o/r");
        assert_eq!(w("git@github.com:o/r.git"), "git@github.com:o/r.git");
        assert_eq!(w("ssh://git@host:22/o/r"), "ssh://host:22/o/r");
    }
}
