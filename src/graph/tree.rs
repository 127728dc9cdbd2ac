//! What the project's files are, for resolution: the file set, the import roots, the module
//! index (module stem → files), the packages, the Go layout and the symlinks.

use super::FastMap;
use crate::path::{is_python, join};
use crate::repo::snapshot::{LinkTarget, link_target};
use std::collections::{BTreeMap, BTreeSet};

/// What the project's files are, for resolution.
pub(crate) struct Tree<'a> {
    /// Files of the gated tree plus deleted paths, so an import of a deleted module still
    /// resolves to it and its importers are selected.
    pub files: &'a BTreeSet<String>,
    pub roots: &'a [String],
    pub is_test: &'a (dyn Fn(&str) -> bool + Sync),
    /// pytest-bdd's `bdd_features_base_dir`, when the ini sets one.
    pub feature_base: Option<&'a str>,
    /// Go modules and packages, when the tree has Go code.
    pub go: &'a crate::lang::go::gomod::GoLayout,
    /// Python module stems (`src/shop/cart` for `src/shop/cart.py` and
    /// `src/shop/cart/__init__.py`) → their files: resolution is a hash lookup per candidate.
    /// Borrowed from `files`, so a large tree's index costs no copies.
    pub modules: FastMap<&'a str, ModuleFiles<'a>>,
    /// Folders holding an `__init__.py`: regular packages.
    pub packages: FastMap<&'a str, ()>,
    /// Symlinks of the tree → where they point inside it (links leaving it are left out).
    pub links: BTreeMap<&'a str, String>,
    /// The links among `links` that name a folder: a path through one is resolved in its target.
    pub dir_links: BTreeMap<&'a str, String>,
    /// Every symlink, wherever it points.
    pub link_paths: BTreeSet<&'a str>,
    /// pytest plugins the project registers (module → where): every test depends on each.
    pub plugins: &'a [(String, String)],
    /// Each language's reading of the tree's configuration: how its imports resolve.
    pub layouts: &'a crate::lang::Layouts,
    /// The files by the three-byte runs of their paths, and the folders: built once a build
    /// has walked 16 globs (`resolve::glob_targets`), so a glob then reads the files holding
    /// its rarest run and each folder once.
    pub globbing: std::sync::OnceLock<PathIndex<'a>>,
    /// What each glob walked so far named.
    pub globs: std::sync::Mutex<FastMap<String, Vec<String>>>,
}

/// The files by the three-byte runs their paths hold (file lists in path order, each once),
/// and every folder that holds a file.
pub(crate) struct PathIndex<'a> {
    files: Vec<&'a str>,
    postings: FastMap<[u8; 3], Vec<u32>>,
    pub folders: BTreeSet<&'a str>,
}

impl<'a> PathIndex<'a> {
    fn new(files: &'a BTreeSet<String>) -> PathIndex<'a> {
        let folders = files
            .iter()
            .flat_map(|f| crate::path::ancestors(f))
            .filter(|d| !d.is_empty())
            .collect();
        let files: Vec<&str> = files.iter().map(String::as_str).collect();
        let mut postings: FastMap<[u8; 3], Vec<u32>> = FastMap::default();
        for (at, f) in files.iter().enumerate() {
            let at = at as u32;
            for run in f.as_bytes().windows(3) {
                let list = postings.entry([run[0], run[1], run[2]]).or_default();
                if list.last() != Some(&at) {
                    list.push(at);
                }
            }
        }
        PathIndex {
            files,
            postings,
            folders,
        }
    }

    /// The files that may hold every one of `texts` (each file that does, in path order):
    /// those holding the rarest three-byte run of any of them. None when no text is long
    /// enough to look up.
    pub(crate) fn holding(&self, texts: &[String]) -> Option<impl Iterator<Item = &'a str> + '_> {
        let rarest = texts
            .iter()
            .flat_map(|text| text.as_bytes().windows(3))
            .map(|run| {
                self.postings
                    .get(&[run[0], run[1], run[2]])
                    .map_or(&[][..], Vec::as_slice)
            })
            .min_by_key(|list| list.len())?;
        Some(rarest.iter().map(|&at| self.files[at as usize]))
    }
}

/// The files of one module, in name order: at most `x.py`, `x.pyi`, `x/__init__.py` and
/// `x/__init__.pyi`.
#[derive(Default, Clone, Copy)]
pub(crate) struct ModuleFiles<'a>([&'a str; 4], usize);

impl<'a> ModuleFiles<'a> {
    fn push(&mut self, file: &'a str) {
        if let Some(slot) = self.0.get_mut(self.1) {
            *slot = file;
            self.1 += 1;
        }
    }

    pub(crate) fn files(&self) -> &[&'a str] {
        &self.0[..self.1]
    }
}

impl<'a> Tree<'a> {
    pub(crate) fn new(
        files: &'a BTreeSet<String>,
        links: &'a BTreeMap<String, String>,
        roots: &'a [String],
        is_test: &'a (dyn Fn(&str) -> bool + Sync),
        feature_base: Option<&'a str>,
        go: &'a crate::lang::go::gomod::GoLayout,
    ) -> Tree<'a> {
        let python = files.iter().filter(|f| is_python(f));
        let mut modules: FastMap<&str, ModuleFiles<'_>> =
            FastMap::with_capacity_and_hasher(python.clone().count(), Default::default());
        let mut packages = FastMap::default();
        for f in python {
            if let Some(dir) = f.strip_suffix("/__init__.py") {
                packages.insert(dir, ());
            }
            let stem = f
                .strip_suffix(".pyi")
                .or_else(|| f.strip_suffix(".py"))
                .unwrap_or(f);
            let stem = stem
                .strip_suffix("/__init__")
                .unwrap_or(if stem == "__init__" { "" } else { stem });
            modules.entry(stem).or_default().push(f);
        }
        let link_paths = links.keys().map(String::as_str).collect();
        let links: BTreeMap<&str, String> = links
            .iter()
            .filter_map(|(link, text)| match link_target(link, text) {
                LinkTarget::Inside(target) => Some((link.as_str(), target)),
                LinkTarget::Outside => None,
            })
            .collect();
        let dir_links = links
            .iter()
            .filter(|(_, target)| {
                !files.contains(*target) && !files_under(files, target).is_empty()
            })
            .map(|(link, target)| (*link, target.clone()))
            .collect();
        Tree {
            files,
            roots,
            is_test,
            feature_base,
            go,
            modules,
            packages,
            links,
            dir_links,
            link_paths,
            plugins: &[],
            layouts: &crate::lang::NO_LAYOUTS,
            globbing: std::sync::OnceLock::new(),
            globs: Default::default(),
        }
    }

    /// The index globs read past the first few, built the first time one asks.
    pub(crate) fn globbing(&self) -> &PathIndex<'a> {
        self.globbing.get_or_init(|| PathIndex::new(self.files))
    }

    /// The symlink among the leading folders of `path`, if one is: whatever `path` names, it
    /// names it through that link (which may point nowhere, or out of the tree).
    pub(crate) fn leading_link(&self, path: &str) -> Option<&'a str> {
        if self.link_paths.is_empty() {
            return None;
        }
        prefixes(path).find_map(|prefix| self.link_paths.get(prefix).copied())
    }

    /// `path` with a folder symlink among its leading parts (or the path itself) replaced by
    /// the link's target (`src/shopalias/cart` → `src/shop/cart`), and that link; links within
    /// links are followed a few levels deep. `None` when no folder link leads the path.
    pub(crate) fn through_links(&self, path: &str) -> Option<(String, &str)> {
        if self.dir_links.is_empty() {
            return None;
        }
        let mut at = path.to_string();
        let mut first = None;
        for _ in 0..8 {
            let link = prefixes(&at).find_map(|prefix| self.dir_links.get_key_value(prefix));
            let Some((&link, target)) = link else { break };
            at = match at.get(link.len() + 1..) {
                Some(rest) => join(target, rest),
                None => target.clone(),
            };
            first.get_or_insert(link);
        }
        first.map(|link| (at, link))
    }
}

/// `a`, `a/b`, `a/b/c` of `a/b/c`: the path's leading folders, then the path itself.
fn prefixes(path: &str) -> impl Iterator<Item = &str> {
    path.match_indices('/')
        .map(|(i, _)| &path[..i])
        .chain(std::iter::once(path))
}

fn files_under<'f>(files: &'f BTreeSet<String>, dir: &str) -> Vec<&'f String> {
    let prefix = if dir.is_empty() {
        String::new()
    } else {
        format!("{dir}/")
    };
    files
        .range(prefix.clone()..)
        .take_while(|f| f.starts_with(&prefix))
        .collect()
}
