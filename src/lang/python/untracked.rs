//! Test files on disk that the gated tree does not hold. With `--doctest-modules` pytest
//! imports every module it walks to, and it walks the disk, not git's index: a git-ignored
//! module a build generates (setuptools-scm's `_version.py`, a compiled grammar) is a doctest
//! unit of every full run. When its package breaks, it fails; a selection that never names it
//! misses that failure. Such files join the graph as nodes and the tests as units, read from
//! disk (their content is hashed from disk wherever a fingerprint takes them in).

use super::pytest_ini::{Doctests, TestDiscovery};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The files under `root` that pytest collects (as `discovery` and `doctests` say) and
/// neither `files` (the gated tree) nor `tracked` (the checkout's index) holds → their bytes.
/// Walked only under `--doctest-modules`, whose walk is the one that reaches untracked code;
/// the folders pytest never enters (`norecursedirs`, virtualenvs, `__pycache__`) are not
/// entered here either, so the walk costs what pytest's own collection walk costs.
pub(crate) fn collected(
    root: &Path,
    files: &BTreeSet<String>,
    tracked: impl Fn(&str) -> bool,
    discovery: &TestDiscovery,
    doctests: &Doctests,
) -> BTreeMap<String, Vec<u8>> {
    if !doctests.modules {
        return BTreeMap::new();
    }
    let mut candidates = BTreeSet::new();
    walk(root, "", discovery, &mut |p| {
        if p.ends_with(".py") && !files.contains(p) {
            candidates.insert(p.to_string());
        }
    });
    discovery
        .tests(&candidates, doctests)
        .into_iter()
        .filter(|p| !tracked(p))
        .filter_map(|p| Some((p.clone(), std::fs::read(root.join(p)).ok()?)))
        .collect()
}

/// Every file below `dir` (`at`, relative to the root), entering only the folders
/// pytest enters. A folder that cannot be read holds nothing pytest could collect either.
fn walk(dir: &Path, at: &str, discovery: &TestDiscovery, found: &mut dyn FnMut(&str)) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let entries: Vec<(String, std::fs::FileType)> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| Some((e.file_name().into_string().ok()?, e.file_type().ok()?)))
        .collect();
    for (name, kind) in entries {
        let path = crate::path::join(at, &name);
        if kind.is_file() {
            found(&path);
        } else if kind.is_dir()
            && name != "__pycache__"
            && discovery.collects_folder(&name)
            && !dir.join(&name).join("pyvenv.cfg").exists()
        {
            walk(&dir.join(&name), &path, discovery, found);
        }
    }
}
