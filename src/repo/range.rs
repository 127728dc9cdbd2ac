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
    let missing = |fact: String| {
        Ok(Resolution::MissingBase {
            spec: spec.to_string(),
            fact,
            head,
        })
    };
    let a_commit = match commit(repo, a) {
        Ok(oid) => oid,
        Err(err) => return absent_base(repo, a).map_or(Err(err), missing),
    };
    let base = if merge_base {
        match repo.merge_base(a_commit, head) {
            Ok(oid) => oid,
            // A shallow clone cuts the histories off before they meet: deepening it is the fix.
            Err(_) if repo.is_shallow() => {
                return missing(format!(
                    "`{a}` and `{b}` share no history in this clone, which is shallow — the blast radius cannot be bounded; {DEEPEN}"
                ));
            }
            Err(_) => {
                return missing(format!(
                    "`{a}` and `{b}` share no history (no merge-base) — the blast radius cannot be bounded; compare their trees instead (`{a}..{b}`)"
                ));
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

/// The fix for history a shallow clone left out.
const DEEPEN: &str = "deepen it (`git fetch --unshallow`, or `git fetch --deepen=N`)";

/// Why a base that does not resolve is a missing fact of this checkout rather than a usage
/// error, with its fix: a remote-tracking branch that is absent (a name the remote did not have
/// at its last fetch — a typo, told with the nearest name it has — or one never fetched), or,
/// in a shallow clone, an ancestor or commit id beyond where its history was cut. `None`: any
/// other unknown revision, a usage error.
fn absent_base(repo: &Repository, rev: &str) -> Option<String> {
    if let Some((remote, branch)) = remote_branch(repo, rev) {
        return Some(absent_remote_branch(repo, rev, remote, branch));
    }
    (repo.is_shallow() && cut_by_shallow(repo, rev)).then(|| {
        format!(
            "base `{rev}` is not in this clone, which is shallow — the blast radius cannot be bounded without it; {DEEPEN}"
        )
    })
}

/// `origin/master` as its remote and branch, when the remote is configured (or is `origin`).
fn remote_branch<'r>(repo: &Repository, rev: &'r str) -> Option<(&'r str, &'r str)> {
    let rev = rev.strip_prefix("refs/remotes/").unwrap_or(rev);
    let (remote, branch) = rev.split_once('/')?;
    let plain = |s: &str| !s.is_empty() && !s.contains(['~', '^', ':', '@', '{']);
    // `origin` counts even when unconfigured: a shallow CI checkout often has no remote at all.
    let known = remote == "origin"
        || repo
            .remotes()
            .map(|names| {
                names
                    .iter()
                    .any(|name| matches!(name, Ok(Some(n)) if n == remote))
            })
            .unwrap_or(false);
    (plain(branch) && known).then_some((remote, branch))
}

/// A remote fetched with git's usual refspec (every branch) holds every branch it had then, so
/// a name not among them did not exist: most often a typo, answered with the nearest name.
/// Otherwise (never fetched, or a single-branch clone) the branch may simply not be fetched.
fn absent_remote_branch(repo: &Repository, rev: &str, remote: &str, branch: &str) -> String {
    let fetched = remote_branches(repo, remote);
    let nearest = nearest(branch, &fetched);
    let every = format!("refs/heads/*:refs/remotes/{remote}/*");
    let takes_every_branch = repo.find_remote(remote).is_ok_and(|r| {
        r.fetch_refspecs().is_ok_and(|specs| {
            specs
                .iter()
                .flatten()
                .flatten()
                .any(|s| s.trim_start_matches('+') == every)
        })
    });
    if takes_every_branch && !fetched.is_empty() {
        let nearest = nearest.map_or(String::new(), |n| {
            format!("; the nearest is `{remote}/{n}`")
        });
        format!(
            "`{rev}` does not exist on the remote `{remote}` (as of its last fetch{nearest}) — correct the range, or `git fetch {remote}` if the branch is new"
        )
    } else {
        let nearest = nearest.map_or(String::new(), |n| {
            format!(" (the nearest fetched is `{remote}/{n}`)")
        });
        format!(
            "base `{rev}` is not in this checkout{nearest} — the blast radius cannot be bounded without it; fetch it (`git fetch {remote} {branch}`)"
        )
    }
}

/// The branches this checkout holds of `remote` (`refs/remotes/<remote>/…`, not its `HEAD`),
/// sorted so the nearest of equals is always the same one.
fn remote_branches(repo: &Repository, remote: &str) -> Vec<String> {
    let prefix = format!("refs/remotes/{remote}/");
    let mut names: Vec<String> = repo
        .references_glob(&format!("{prefix}*"))
        .map(|refs| {
            refs.flatten()
                .filter_map(|r| {
                    r.name()
                        .ok()
                        .and_then(|n| n.strip_prefix(&prefix))
                        .map(String::from)
                })
                .filter(|n| n != "HEAD")
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The name within a third of `wanted`'s length in edits (a swap counts one), closest first.
fn nearest<'n>(wanted: &str, names: &'n [String]) -> Option<&'n str> {
    let most = wanted.chars().count().div_ceil(3).max(1);
    names
        .iter()
        .map(|n| (strsim::damerau_levenshtein(wanted, n), n.as_str()))
        .filter(|(d, _)| *d <= most)
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n)
}

/// In a shallow clone, a revision that fails for want of history: an ancestor (`X~2`, `X^`) of
/// a commit that is here, or a commit id (the clone holds only the newest commits).
fn cut_by_shallow(repo: &Repository, rev: &str) -> bool {
    let stem_here = rev
        .find(['~', '^'])
        .is_some_and(|at| commit(repo, &rev[..at]).is_ok());
    let an_id = (7..=40).contains(&rev.len()) && rev.chars().all(|c| c.is_ascii_hexdigit());
    stem_here || an_id
}

#[cfg(test)]
mod tests {
    use super::{nearest, split};

    #[test]
    fn the_nearest_name_is_a_close_one() {
        let names: Vec<String> = ["develop", "main", "master", "release/1.2"]
            .map(String::from)
            .to_vec();
        assert_eq!(nearest("mian", &names), Some("main"));
        assert_eq!(nearest("mastr", &names), Some("master"));
        assert_eq!(nearest("release/1.3", &names), Some("release/1.2"));
        assert_eq!(nearest("feature", &names), None);
        assert_eq!(nearest("x", &names), None);
    }

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
