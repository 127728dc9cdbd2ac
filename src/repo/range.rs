//! Ranges as git reads them: `A...B` compares B with the merge-base of A and B, `A..B` compares
//! the two trees directly, and a bare `R` means `R...HEAD`.

pub(crate) use super::error::RangeError;

use crate::error::Result;
use git2::{Oid, Repository};

/// A range whose two ends are commits.
#[derive(Debug, Clone)]
pub(crate) struct Range {
    /// What the user typed.
    pub spec: String,
    /// `merge-base` for `A...B`, `two-dot` for `A..B`.
    pub mode: &'static str,
    /// The commit whose tree is the "before" side.
    pub base: Oid,
    /// The commit being gated; its tree is analysed.
    pub head: Oid,
}

/// Either a range, or the fact that its base is not in this checkout — a refusal, not an error,
/// because the fix is the user's to choose (fetch it, or record a decision).
#[derive(Debug)]
pub(crate) enum Resolution {
    Range(Range),
    MissingBase {
        spec: String,
        fact: String,
        head: Oid,
    },
}

/// Splits `A...B`, `A..B` or `R`; an empty side means `HEAD`, as in git.
fn split(spec: &str) -> (&str, &str, bool) {
    fn or_head(s: &str) -> &str {
        if s.is_empty() { "HEAD" } else { s }
    }
    if let Some((a, b)) = spec.split_once("...") {
        (or_head(a), or_head(b), true)
    } else if let Some((a, b)) = spec.split_once("..") {
        (or_head(a), or_head(b), false)
    } else {
        (spec, "HEAD", true)
    }
}

pub(crate) fn resolve(repo: &Repository, spec: &str) -> Result<Resolution> {
    if spec.trim().is_empty() {
        return Err(RangeError::Empty.into());
    }
    let (a, b, merge_base) = split(spec);
    let head = commit(repo, b)?;
    let Some(a_commit) = commit_if_present(repo, a)? else {
        return Ok(Resolution::MissingBase {
            spec: spec.to_string(),
            fact: format!(
                "base `{a}` is not in this checkout — the blast radius cannot be bounded without it"
            ),
            head,
        });
    };
    let base = if merge_base {
        match repo.merge_base(a_commit, head) {
            Ok(oid) => oid,
            Err(_) => {
                return Ok(Resolution::MissingBase {
                    spec: spec.to_string(),
                    fact: format!(
                        "`{a}` and `{b}` share no history (no merge-base) — the blast radius cannot be bounded"
                    ),
                    head,
                });
            }
        }
    } else {
        a_commit
    };
    Ok(Resolution::Range(Range {
        spec: spec.to_string(),
        mode: if merge_base { "merge-base" } else { "two-dot" },
        base,
        head,
    }))
}

/// The default branch of the repository: its short name and where it points.
#[derive(Debug, Clone)]
pub(crate) struct DefaultBranch {
    pub name: String,
    pub commit: Oid,
}

/// The default branch, as git and forges name it: where `origin/HEAD` points, else the first
/// of `origin/main`, `origin/master`, `main`, `master` that exists.
pub(crate) fn default_branch(repo: &Repository) -> Option<DefaultBranch> {
    let found = |refname: &str, name: &str| {
        let oid = repo.refname_to_id(refname).ok()?;
        let commit = repo.find_commit(oid).ok()?.id();
        Some(DefaultBranch {
            name: name.to_string(),
            commit,
        })
    };
    if let Ok(head) = repo.find_reference("refs/remotes/origin/HEAD")
        && let Some(target) = head.symbolic_target().ok().flatten()
        && let Some(name) = target.strip_prefix("refs/remotes/origin/")
        && let Some(b) = found(target, name)
    {
        return Some(b);
    }
    [
        ("refs/remotes/origin/main", "main"),
        ("refs/remotes/origin/master", "master"),
        ("refs/heads/main", "main"),
        ("refs/heads/master", "master"),
    ]
    .iter()
    .find_map(|(r, n)| found(r, n))
}

/// Resolves a revision to a commit; an unknown revision is an error (exit 3).
pub(crate) fn commit(repo: &Repository, rev: &str) -> Result<Oid> {
    let object = repo
        .revparse_single(rev)
        .map_err(|source| RangeError::Unknown {
            rev: rev.to_string(),
            source,
        })?;
    let commit = object
        .peel_to_commit()
        .map_err(|source| RangeError::NotACommit {
            rev: rev.to_string(),
            source,
        })?;
    Ok(commit.id())
}

/// A base that names a remote-tracking branch of a configured remote (`origin/master`) and is
/// absent is a missing fact of this checkout; any other unknown revision is a usage error.
fn commit_if_present(repo: &Repository, rev: &str) -> Result<Option<Oid>> {
    match commit(repo, rev) {
        Ok(oid) => Ok(Some(oid)),
        Err(_) if names_remote_branch(repo, rev) => Ok(None),
        Err(err) => Err(err),
    }
}

fn names_remote_branch(repo: &Repository, rev: &str) -> bool {
    let rev = rev.strip_prefix("refs/remotes/").unwrap_or(rev);
    let Some((remote, branch)) = rev.split_once('/') else {
        return false;
    };
    let plain = |s: &str| !s.is_empty() && !s.contains(['~', '^', ':', '@', '{']);
    // `origin` counts even when unconfigured: a shallow CI checkout often has no remote at all.
    plain(branch)
        && (remote == "origin"
            || repo
                .remotes()
                .map(|names| {
                    names
                        .iter()
                        .any(|name| matches!(name, Ok(Some(n)) if n == remote))
                })
                .unwrap_or(false))
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn splits_like_git() {
        let cases = [
            ("origin/master...HEAD", ("origin/master", "HEAD", true)),
            ("a..b", ("a", "b", false)),
            ("main", ("main", "HEAD", true)),
            ("...b", ("HEAD", "b", true)),
            ("a..", ("a", "HEAD", false)),
        ];
        for (spec, want) in cases {
            assert_eq!(split(spec), want, "{spec}");
        }
    }
}
