//! Paths typed on the command line, read as git reads them: relative to the directory gate
//! runs in (after `-C`), an absolute path inside the working tree allowed, `..` resolved. A
//! path outside the repository, or one naming nothing in the working tree or in HEAD, is an
//! error that names it — never a change that selects nothing.

use crate::error::{Error, Result};
use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

/// `raw` (as typed, in `cwd`) as a repository-relative, `/`-separated path (`""`: the root).
pub(crate) fn resolve(repo: &git2::Repository, cwd: &Path, raw: &str) -> Result<String> {
    let root = crate::repo::workdir(repo)?;
    let absolute =
        |p: &Path| std::path::absolute(p).map_err(|e| Error::io(p, "cannot resolve the path", e));
    let root = lexical(&absolute(&root)?);
    let cwd = lexical(&absolute(cwd)?);
    // A symlinked temporary directory (`/tmp` → `/private/tmp`) must not make a path inside
    // the repository look outside it: compare canonical forms where they exist.
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let (root, cwd) = (canonical(&root), canonical(&cwd));
    let joined = lexical(&cwd.join(raw));
    let rel = joined.strip_prefix(&root).map_err(|_| {
        Error::Usage(format!(
            "{raw}: outside the repository ({})",
            root.display()
        ))
    })?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_str().map(str::to_string))
        .collect::<Option<_>>()
        .ok_or_else(|| Error::Usage(format!("{raw}: the path is not valid UTF-8")))?;
    Ok(parts.join("/"))
}

/// `.` and `..` removed without touching the disk (the path may be a deleted file).
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The files `paths` name: a file as itself, a folder as every file under it, in the working
/// tree (`worktree`) or in HEAD (`head` lists the files at or under a path). A path that names
/// nothing in either is an error.
pub(crate) fn files(
    paths: &[String],
    worktree: &BTreeSet<String>,
    head: impl Fn(&str) -> Vec<String>,
) -> Result<Vec<String>> {
    let mut out = BTreeSet::new();
    for path in paths {
        let before = out.len();
        if worktree.contains(path) {
            out.insert(path.clone());
        }
        let prefix = if path.is_empty() {
            String::new()
        } else {
            format!("{path}/")
        };
        out.extend(
            worktree
                .range(prefix.clone()..)
                .take_while(|f| f.starts_with(&prefix))
                .cloned(),
        );
        out.extend(head(path));
        if out.len() == before && !out.contains(path) {
            return Err(Error::Usage(format!(
                "{}: no such file in the working tree or in HEAD",
                if path.is_empty() { "." } else { path }
            )));
        }
    }
    Ok(out.into_iter().collect())
}

/// The files at or under `path` in `commit`'s tree.
pub(crate) fn in_commit(repo: &git2::Repository, commit: git2::Oid, path: &str) -> Vec<String> {
    let Ok(tree) = repo.find_commit(commit).and_then(|c| c.tree()) else {
        return Vec::new();
    };
    let subtree = if path.is_empty() {
        Some(tree)
    } else {
        match tree.get_path(Path::new(path)) {
            Ok(e) if e.kind() == Some(git2::ObjectType::Tree) => repo.find_tree(e.id()).ok(),
            Ok(_) => return vec![path.to_string()],
            Err(_) => None,
        }
    };
    let mut out = Vec::new();
    if let Some(t) = subtree {
        let _ = t.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            if entry.kind() == Some(git2::ObjectType::Blob)
                && let Ok(name) = entry.name()
            {
                out.push(crate::path::join(path, &format!("{dir}{name}")));
            }
            git2::TreeWalkResult::Ok
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_expand_and_unknown_paths_are_errors() {
        let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
        let worktree = set(&["src/a.py", "src/b/c.py", "README.md"]);
        let head = set(&["src/gone.py", "src/a.py"]);
        let in_head = |p: &str| -> Vec<String> {
            head.iter()
                .filter(|f| *f == p || f.starts_with(&format!("{p}/")))
                .cloned()
                .collect()
        };
        let named = |p: &[&str]| {
            files(
                &p.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
                &worktree,
                in_head,
            )
        };
        assert_eq!(
            named(&["src"]).unwrap(),
            ["src/a.py", "src/b/c.py", "src/gone.py"]
        );
        assert_eq!(named(&["src/gone.py"]).unwrap(), ["src/gone.py"]);
        let err = named(&["src/typo.py"]).unwrap_err().to_string();
        assert_eq!(
            err,
            "src/typo.py: no such file in the working tree or in HEAD"
        );
    }
}
