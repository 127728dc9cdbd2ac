//! Repository paths: repo-relative, `/`-separated UTF-8, never leaving the root — what every
//! stage names files by. `RepoPath` carries one through the boundary between the git stage and
//! the verdicts (a change, a row); the helpers below do the path arithmetic every stage needs,
//! lexically (a path may name a deleted file).

use serde::Serialize;
use std::fmt;

/// A repository-relative path (`src/shop/cart.py`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize)]
#[serde(transparent)]
pub(crate) struct RepoPath(String);

impl RepoPath {
    /// `path` as git names it (repo-relative, `/`-separated): `.` and `..` resolved.
    pub(crate) fn new(path: &str) -> RepoPath {
        RepoPath(normalize(path))
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

/// A path as git lists it (already repo-relative and `/`-separated).
impl From<String> for RepoPath {
    fn from(path: String) -> RepoPath {
        RepoPath(path)
    }
}

impl std::ops::Deref for RepoPath {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for RepoPath {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RepoPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl PartialEq<str> for RepoPath {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for RepoPath {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

/// Whether a file named `name` is one a test run may load from a folder of the code it runs
/// without any commit naming it: a Python module, stub, bytecode, compiled module or path
/// file, pytest's or the project's configuration or conftest, a file `go build` compiles into
/// the folder's package (Go, cgo, assembly, `.syso`), a Go module or workspace file.
pub(crate) fn loaded_by_runners(name: &str) -> bool {
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    matches!(
        ext,
        "py" | "pyi"
            | "pyc"
            | "so"
            | "pyd"
            | "pth"
            | "go"
            | "s"
            | "S"
            | "sx"
            | "c"
            | "cc"
            | "cpp"
            | "cxx"
            | "h"
            | "hh"
            | "hpp"
            | "hxx"
            | "m"
            | "f"
            | "F"
            | "for"
            | "f90"
            | "syso"
            | "swig"
            | "swigcxx"
    ) || matches!(
        name,
        "pytest.ini"
            | ".pytest.ini"
            | "tox.ini"
            | "setup.cfg"
            | "pyproject.toml"
            | "go.mod"
            | "go.sum"
            | "go.work"
            | "go.work.sum"
            | ".gate.toml"
    )
}

pub(crate) fn is_python(path: &str) -> bool {
    path.ends_with(".py") || path.ends_with(".pyi")
}

pub(crate) fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

pub(crate) fn file_name(path: &str) -> &str {
    path.rsplit_once('/').map_or(path, |(_, name)| name)
}

/// Every directory above `path`, nearest first, ending with the root (`""`).
pub(crate) fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    let mut next = Some(parent(path));
    std::iter::from_fn(move || {
        let dir = next?;
        next = (!dir.is_empty()).then(|| parent(dir));
        Some(dir)
    })
}

pub(crate) fn join(dir: &str, rest: &str) -> String {
    if dir.is_empty() {
        rest.to_string()
    } else {
        format!("{dir}/{rest}")
    }
}

/// Resolves `.` and `..` lexically; a path escaping the root comes back starting with `../`.
pub(crate) fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert_eq!(normalize("./a/../b/./c.py"), "b/c.py");
        assert_eq!(normalize("../x"), "../x");
        assert_eq!(RepoPath::new("./src//a.py"), "src/a.py");
        assert_eq!(
            ancestors("a/b/c.py").collect::<Vec<_>>(),
            vec!["a/b", "a", ""]
        );
        assert_eq!(ancestors("c.py").collect::<Vec<_>>(), vec![""]);
        assert_eq!((parent("a/b.py"), file_name("a/b.py")), ("a", "b.py"));
        assert_eq!(join("", "x"), "x");
    }
}
