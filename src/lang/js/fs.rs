//! The gated tree as the resolver's file system: its files (deleted ones too, so an import of
//! a deleted module still names it), the manifests and compiler configurations it reads, and
//! a workspace package's name linked to its folder (`node_modules/@org/pkg` → `packages/pkg`)
//! as a package manager installs it. Nothing is read from the disk: the resolver sees the tree
//! being gated, never the checkout.

use oxc_resolver::{FileMetadata, FileSystem, ResolveError};
use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// Where the tree's root sits in the resolver's paths (it never exists on disk).
pub(super) const ROOT: &str = "/gate-tree";

#[derive(Default, Clone)]
pub(super) struct TreeFs {
    /// The tree's files, repository-relative.
    files: Arc<BTreeSet<String>>,
    /// The manifests and compiler configurations the resolver reads, by path.
    texts: Arc<BTreeMap<String, Vec<u8>>>,
    /// Link → folder, repository-relative.
    links: Arc<BTreeMap<String, String>>,
}

impl TreeFs {
    pub(super) fn new(
        files: BTreeSet<String>,
        texts: BTreeMap<String, Vec<u8>>,
        links: BTreeMap<String, String>,
    ) -> TreeFs {
        TreeFs {
            files: Arc::new(files),
            texts: Arc::new(texts),
            links: Arc::new(links),
        }
    }

    /// The repository path of a resolver path, with links followed; `None` outside the tree.
    fn real(&self, path: &Path) -> Option<String> {
        let mut parts: Vec<String> = Vec::new();
        let mut rest = path.strip_prefix(ROOT).ok()?.components();
        for c in rest.by_ref() {
            match c {
                Component::ParentDir => {
                    parts.pop()?;
                }
                Component::Normal(n) => parts.push(n.to_str()?.to_string()),
                _ => {}
            }
        }
        let mut joined = parts.join("/");
        // A bounded number of links followed: a link inside a link's target is followed too.
        for _ in 0..8 {
            let hit = self
                .links
                .iter()
                .find(|(link, _)| joined == **link || joined.starts_with(&format!("{link}/")));
            let Some((link, target)) = hit else { break };
            joined = format!("{target}{}", &joined[link.len()..]);
        }
        Some(joined)
    }

    fn is_dir(&self, path: &str) -> bool {
        if path.is_empty() {
            return true;
        }
        let prefix = format!("{path}/");
        self.files
            .range(prefix.clone()..)
            .next()
            .is_some_and(|f| f.starts_with(&prefix))
            || self.links.keys().any(|l| l.starts_with(&prefix))
    }

    fn stat(&self, path: &str) -> io::Result<FileMetadata> {
        if self.files.contains(path) {
            Ok(FileMetadata::new(true, false, false))
        } else if self.is_dir(path) {
            Ok(FileMetadata::new(false, true, false))
        } else {
            Err(io::ErrorKind::NotFound.into())
        }
    }
}

/// The resolver path of a repository path.
pub(super) fn absolute(path: &str) -> PathBuf {
    if path.is_empty() {
        PathBuf::from(ROOT)
    } else {
        Path::new(ROOT).join(path)
    }
}

/// The repository path of a resolver path inside the tree.
pub(super) fn relative(path: &Path) -> Option<String> {
    let rest = path.strip_prefix(ROOT).ok()?;
    rest.to_str().map(|s| s.trim_start_matches('/').to_string())
}

impl FileSystem for TreeFs {
    fn new() -> Self {
        Self::default()
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        let real = self.real(path).ok_or(io::ErrorKind::NotFound)?;
        match self.texts.get(&real) {
            Some(bytes) => Ok(bytes.clone()),
            // A file of the tree whose text the resolver was not given: it asks for manifests
            // and compiler configurations only, so this is nothing it can read.
            None => Err(io::ErrorKind::NotFound.into()),
        }
    }

    fn read_to_string(&self, path: &Path) -> io::Result<String> {
        String::from_utf8(self.read(path)?)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }

    fn metadata(&self, path: &Path) -> io::Result<FileMetadata> {
        let real = self.real(path).ok_or(io::ErrorKind::NotFound)?;
        self.stat(&real)
    }

    fn symlink_metadata(&self, path: &Path) -> io::Result<FileMetadata> {
        let own = relative(path).ok_or(io::ErrorKind::NotFound)?;
        if self.links.contains_key(&own) {
            return Ok(FileMetadata::new(false, false, true));
        }
        let parent = path.parent().and_then(|p| self.real(p));
        let name = path.file_name().and_then(|n| n.to_str());
        let real = match (parent, name) {
            (Some(p), Some(n)) if p.is_empty() => n.to_string(),
            (Some(p), Some(n)) => format!("{p}/{n}"),
            _ => own,
        };
        if self.links.contains_key(&real) {
            return Ok(FileMetadata::new(false, false, true));
        }
        self.stat(&real)
    }

    fn read_link(&self, path: &Path) -> Result<PathBuf, ResolveError> {
        let own = relative(path);
        let parent = path.parent().and_then(|p| self.real(p));
        let name = path.file_name().and_then(|n| n.to_str());
        let real = match (parent, name) {
            (Some(p), Some(n)) if p.is_empty() => Some(n.to_string()),
            (Some(p), Some(n)) => Some(format!("{p}/{n}")),
            _ => own,
        };
        real.and_then(|r| self.links.get(&r).map(|t| absolute(t)))
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a symlink").into())
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        let real = self.real(path).ok_or(io::ErrorKind::NotFound)?;
        self.stat(&real).map(|_| absolute(&real))
    }
}
