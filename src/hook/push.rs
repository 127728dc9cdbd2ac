//! git's pre-push protocol: the hook gets `<remote-name> <remote-url>` as arguments and one
//! stdin line per ref, `<local-ref> <local-sha> <remote-ref> <remote-sha>`. Each ref becomes a
//! range to gate, or a line saying why it is skipped.

use crate::error::{Error, Result};
use crate::repo::range::{self, Resolution};
use git2::{Oid, Repository};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RefUpdate {
    pub local_ref: String,
    pub local_sha: String,
    pub remote_ref: String,
    pub remote_sha: String,
}

/// Parses the hook's stdin; a malformed line is an error naming it (git never sends one).
pub(crate) fn parse(stdin: &str) -> Result<Vec<RefUpdate>> {
    stdin
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            match fields[..] {
                [local_ref, local_sha, remote_ref, remote_sha]
                    if is_sha(local_sha) && is_sha(remote_sha) =>
                {
                    Ok(RefUpdate {
                        local_ref: local_ref.into(),
                        local_sha: local_sha.into(),
                        remote_ref: remote_ref.into(),
                        remote_sha: remote_sha.into(),
                    })
                }
                _ => Err(Error::Usage(format!(
                    "pre-push: stdin line {}: expected `<local-ref> <local-sha> <remote-ref> <remote-sha>`, got `{line}`",
                    i + 1
                ))),
            }
        })
        .collect()
}

fn is_sha(s: &str) -> bool {
    matches!(s.len(), 40 | 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn is_zero(sha: &str) -> bool {
    sha.bytes().all(|b| b == b'0')
}

/// What the hook does with one pushed ref.
pub(crate) enum Action {
    Skip(String),
    Gate(Resolution),
}

/// The range for one ref: `<remote-sha>...<local-sha>` (merge-base, so a force push whose remote
/// sha is not an ancestor still gates from where the two histories meet); a new branch against
/// the merge-base with the remote's default branch; deletions, tags and refs already up to date
/// are skipped.
pub(crate) fn action(repo: &Repository, remote: &str, update: &RefUpdate) -> Result<Action> {
    let name = &update.remote_ref;
    if is_zero(&update.local_sha) {
        return Ok(Action::Skip(format!(
            "{name}: deleted on {remote}, nothing to gate"
        )));
    }
    if name.starts_with("refs/tags/") {
        return Ok(Action::Skip(format!("{name}: a tag, not gated")));
    }
    if update.local_sha == update.remote_sha {
        return Ok(Action::Skip(format!("{name}: already up to date")));
    }
    let head = oid(&update.local_sha)?;
    repo.find_commit(head).map_err(|e| {
        Error::git(
            format!("pre-push: {name}: {} is not a commit", update.local_sha),
            e,
        )
    })?;
    if !is_zero(&update.remote_sha) {
        let remote_tip = oid(&update.remote_sha)?;
        if repo.find_commit(remote_tip).is_err() {
            return Ok(Action::Gate(Resolution::MissingBase {
                spec: format!("{}...{}", update.remote_sha, update.local_sha),
                fact: format!(
                    "{name} on {remote} is at {}, which is not in this checkout — the blast radius cannot be bounded without it (`git fetch {remote}`)",
                    short(&update.remote_sha)
                ),
                head,
            }));
        }
        return range::resolve(
            repo,
            &format!("{}...{}", update.remote_sha, update.local_sha),
        )
        .map(Action::Gate);
    }
    let config = crate::config::at_commit(repo, head)?;
    let candidates = base_candidates(remote, config.base_branch.as_deref());
    // `base_branch` is read from the pushed commit, so a push could aim its own comparison at
    // a ref that already holds it (an empty diff): the setting counts only where it has
    // landed — in the base it names — and never for a base holding the pushed commit.
    // (`base_candidates` puts it second.)
    let landed = |i: usize, base: Oid| {
        let holds_head = base == head || repo.graph_descendant_of(base, head).unwrap_or(true);
        i != 1
            || config.base_branch.is_none()
            || (!holds_head
                && crate::config::at_commit(repo, base)
                    .is_ok_and(|b| b.base_branch == config.base_branch))
    };
    let chosen = candidates.iter().enumerate().find_map(|(i, c)| {
        range::commit(repo, c)
            .is_ok_and(|base| landed(i, base))
            .then_some(c)
    });
    match chosen {
        Some(base) => {
            range::resolve(repo, &format!("{base}...{}", update.local_sha)).map(Action::Gate)
        }
        None => Ok(Action::Gate(Resolution::MissingBase {
            spec: format!("{name} (new branch)"),
            fact: format!(
                "{name} is a new branch on {remote} and none of {} is in this checkout to compare it with — `git fetch {remote}`, or set `base_branch` in .gate.toml",
                candidates.join(", ")
            ),
            head,
        })),
    }
}

/// Where a new branch starts from, in order: the remote's HEAD, `base_branch`, then
/// `master` and `main` of the remote (of `origin` when the push names a URL, not a remote).
fn base_candidates(remote: &str, base_branch: Option<&str>) -> Vec<String> {
    let remote = if remote.contains('/') || remote.contains(':') {
        "origin"
    } else {
        remote
    };
    let mut out = vec![format!("refs/remotes/{remote}/HEAD")];
    if let Some(b) = base_branch {
        out.push(if b.starts_with("refs/") {
            b.to_string()
        } else {
            format!("refs/remotes/{remote}/{b}")
        });
    }
    out.push(format!("refs/remotes/{remote}/master"));
    out.push(format!("refs/remotes/{remote}/main"));
    out
}

fn oid(sha: &str) -> Result<Oid> {
    Oid::from_str(sha).map_err(|e| Error::git(format!("pre-push: bad object id `{sha}`"), e))
}

fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_git_lines_and_names_a_bad_one() {
        let z = "0".repeat(40);
        let a = "a".repeat(40);
        let text =
            format!("refs/heads/x {a} refs/heads/x {z}\n\nrefs/tags/v1 {a} refs/tags/v1 {z}\n");
        let refs = parse(&text).unwrap();
        assert_eq!(refs.len(), 2);
        assert_eq!(refs[1].remote_ref, "refs/tags/v1");
        let err = parse(&format!("refs/heads/x {a}\n"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("stdin line 1"), "{err}");
    }

    #[test]
    fn new_branch_bases_in_order() {
        assert_eq!(
            base_candidates("upstream", Some("develop")),
            [
                "refs/remotes/upstream/HEAD",
                "refs/remotes/upstream/develop",
                "refs/remotes/upstream/master",
                "refs/remotes/upstream/main"
            ]
        );
        assert_eq!(
            base_candidates("/srv/git/x.git", None)[0],
            "refs/remotes/origin/HEAD"
        );
    }
}
