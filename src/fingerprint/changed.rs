//! What changed between two commits, from their trees alone: the kept closure hashes are
//! trusted for everything that reaches none of it.

use std::collections::{BTreeMap, BTreeSet};

/// The paths that differ between two commits' trees (a path present on one side only too),
/// or none when either cannot be read. Subtrees with the same id are skipped whole, so the
/// cost is what changed (libgit2's tree diff lists every entry of both).
pub(super) fn changed_between(
    repo: &git2::Repository,
    from: git2::Oid,
    to: git2::Oid,
) -> Option<Vec<String>> {
    let tree = |c| repo.find_commit(c).and_then(|c| c.tree()).ok();
    let mut paths = Vec::new();
    if from != to {
        differ(repo, Some(tree(from)?), Some(tree(to)?), "", &mut paths)?;
    }
    Some(paths)
}

fn differ(
    repo: &git2::Repository,
    a: Option<git2::Tree<'_>>,
    b: Option<git2::Tree<'_>>,
    dir: &str,
    out: &mut Vec<String>,
) -> Option<()> {
    let entries = |t: &Option<git2::Tree<'_>>| -> Option<BTreeMap<String, (git2::Oid, bool)>> {
        let Some(t) = t else {
            return Some(BTreeMap::new());
        };
        t.iter()
            .map(|e| {
                let tree = e.kind() == Some(git2::ObjectType::Tree);
                Some((e.name().ok()?.to_string(), (e.id(), tree)))
            })
            .collect()
    };
    let (old, new) = (entries(&a)?, entries(&b)?);
    let names: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    for name in names {
        let (x, y) = (old.get(name), new.get(name));
        if x == y {
            continue;
        }
        let path = crate::path::join(dir, name);
        let subtree = |e: Option<&(git2::Oid, bool)>| -> Option<Option<git2::Tree<'_>>> {
            match e {
                Some(&(id, true)) => Some(Some(repo.find_tree(id).ok()?)),
                _ => Some(None),
            }
        };
        let (ta, tb) = (subtree(x)?, subtree(y)?);
        if ta.is_some() || tb.is_some() {
            differ(repo, ta, tb, &path, out)?;
        }
        // A file on either side (a file that became a folder is both).
        if x.is_some_and(|e| !e.1) || y.is_some_and(|e| !e.1) {
            out.push(path);
        }
    }
    Some(())
}
