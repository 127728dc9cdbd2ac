//! What is gated: the target a command names (ranges ending at one commit, a revision to the
//! working tree, named paths) read into the tree being gated and what changed in it, with the
//! commits the changes are measured from.

use super::diff;
use super::range;
use super::snapshot::Snapshot;
use crate::error::{Error, Result};
use serde::Serialize;

/// What is gated.
pub(crate) enum Target {
    /// Ranges ending at one commit: one for `--affected` and `verify`, the refs of a push that
    /// share a head. Their changes are gated as a union against that commit's tree.
    Ranges(Vec<range::Resolution>),
    /// From a revision to the working tree.
    Since(String),
    /// Named paths of the working tree.
    Files(Vec<String>),
}

#[derive(Serialize)]
pub(crate) struct RangeInfo {
    pub spec: String,
    pub mode: String,
    pub base: Option<String>,
    pub head: Option<String>,
}

/// The tree being gated and what changed in it.
pub(crate) struct Input {
    pub range: Option<RangeInfo>,
    pub snapshot: Snapshot,
    pub changes: Vec<diff::Change>,
    /// The missing facts that keep the range itself from being bounded (its base is absent).
    pub range_refusal: Option<String>,
    /// The gated commit; `None` for the working tree.
    pub head: Option<git2::Oid>,
    /// The commits the changes are measured from, whose configuration governs a change to it.
    pub bases: Vec<git2::Oid>,
}

impl Input {
    /// The paths gone from the gated tree (imports may still name them).
    pub(crate) fn deleted(&self) -> Vec<String> {
        self.changes
            .iter()
            .filter(|c| c.status == diff::Status::Deleted)
            .map(|c| c.path.to_string())
            .collect()
    }

    /// Every changed path, both sides of renames.
    pub(crate) fn changed(&self) -> Vec<&str> {
        self.changes
            .iter()
            .flat_map(|c| std::iter::once(c.path.as_str()).chain(c.other.as_deref()))
            .collect()
    }
}

/// Reads `target` from the repository.
pub(crate) fn read(repo: &git2::Repository, target: Target) -> Result<Input> {
    match target {
        Target::Ranges(resolutions) => ranges(repo, resolutions),
        Target::Since(rev) => {
            let snapshot = Snapshot::of_workdir(repo)?;
            let base = range::commit(repo, &rev)?;
            let changes = diff::to_workdir(repo, base)?;
            let range = RangeInfo {
                spec: rev,
                mode: "to-working-tree".into(),
                base: Some(base.to_string()),
                head: None,
            };
            Ok(Input {
                range: Some(range),
                snapshot,
                changes,
                range_refusal: None,
                head: None,
                bases: vec![base],
            })
        }
        Target::Files(files) => {
            let snapshot = Snapshot::of_workdir(repo)?;
            // Named paths are changes to the working tree against HEAD.
            let head = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
            let in_head = |p: &str| match &head {
                Some(c) => crate::repo::pathspec::in_commit(repo, c.id(), p),
                None => Vec::new(),
            };
            let files = crate::repo::pathspec::files(&files, &snapshot.files, in_head)?;
            let changes = diff::named(&files, |p| snapshot.contains(p));
            Ok(Input {
                range: None,
                snapshot,
                changes,
                range_refusal: None,
                head: None,
                bases: head.map(|c| c.id()).into_iter().collect(),
            })
        }
    }
}

/// The union of ranges that end at one commit: every path changed in any of them.
fn ranges(repo: &git2::Repository, resolutions: Vec<range::Resolution>) -> Result<Input> {
    let mut specs = Vec::new();
    let mut bases = Vec::new();
    let mut bases_ids = Vec::new();
    let mut modes = Vec::new();
    let mut facts = Vec::new();
    // Keyed by path: one head, so a path is in its tree or not, whichever range named it.
    let mut changes: std::collections::BTreeMap<String, diff::Change> = Default::default();
    let mut head = None;
    for resolution in resolutions {
        match resolution {
            range::Resolution::Range(r) => {
                for change in diff::between(repo, r.base, r.head)? {
                    changes.entry(change.path.to_string()).or_insert(change);
                }
                specs.push(r.spec);
                bases.push(r.base.to_string());
                bases_ids.push(r.base);
                modes.push(r.mode);
                head = Some(r.head);
            }
            range::Resolution::MissingBase {
                spec,
                fact,
                head: h,
            } => {
                // The fact names its own fix; recording a decision is the refusal's hint.
                facts.push(fact);
                specs.push(spec);
                modes.push("unresolved");
                head = Some(h);
            }
        }
    }
    let head = head.ok_or_else(|| Error::Internal("no range to gate".into()))?;
    let one = specs.len() == 1;
    let range = RangeInfo {
        spec: specs.join(", "),
        mode: if one {
            modes[0].to_string()
        } else {
            "union".into()
        },
        base: (one && bases.len() == 1).then(|| bases[0].clone()),
        head: Some(head.to_string()),
    };
    Ok(Input {
        range: Some(range),
        snapshot: Snapshot::of_commit(repo, head)?,
        changes: changes.into_values().collect(),
        range_refusal: (!facts.is_empty()).then(|| facts.join("; ")),
        head: Some(head),
        bases: bases_ids,
    })
}
