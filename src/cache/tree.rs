//! The kept tree listing (`.git/gate/cache/tree.bin`): the files of the last gated tree with
//! their blob ids, and which are symlinks. The next tree is listed as that one plus a diff of
//! the two trees, which reads only the folders that differ, instead of a walk of every folder.
//! A kept listing that fails its checksum is rebuilt with a warning, never used.

use crate::cache::blocks;
use crate::error::{Error, Result};
use git2::{Oid, Repository, Tree, TreeWalkMode, TreeWalkResult};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const MAGIC: &[u8; 8] = b"gatetre2";
/// Rewritten once the kept listing is this many paths away from the tree listed: until
/// then the diff is cheap and writing is not.
const KEEP_AFTER: usize = 100;
const BLOB: i32 = 0o100000;
const LINK: i32 = 0o120000;

type Listing = (BTreeMap<String, Oid>, BTreeSet<String>);

pub(crate) fn of_tree(repo: &Repository, tree: &Tree<'_>) -> Result<Listing> {
    let file = crate::repo::state_dir(repo).join("cache").join("tree.bin");
    if let Some((kept, mut blobs, mut links)) = read(&file)
        && let Ok(kept) = repo.find_tree(kept)
    {
        let mut changed = 0;
        crate::repo::diff::changed_entries(
            repo,
            Some(&kept),
            Some(tree),
            b"",
            &mut |path, _, new| {
                changed += 1;
                let Ok(path) = std::str::from_utf8(path) else {
                    return;
                };
                links.remove(path);
                match new {
                    // Regular files and symlinks are blobs; submodules are not files.
                    Some((id, mode)) if matches!(mode & 0o170000, BLOB | LINK) => {
                        blobs.insert(path.to_string(), id);
                        if mode & 0o170000 == LINK {
                            links.insert(path.to_string());
                        }
                    }
                    _ => {
                        blobs.remove(path);
                    }
                }
            },
        )?;
        if changed > KEEP_AFTER {
            write(&file, tree.id(), &blobs, &links);
        }
        return Ok((blobs, links));
    }
    let mut blobs = BTreeMap::new();
    let mut links = BTreeSet::new();
    tree.walk(TreeWalkMode::PreOrder, |dir, entry| {
        let mode = entry.filemode() & 0o170000;
        if matches!(mode, BLOB | LINK)
            && let Ok(name) = entry.name()
        {
            let path = format!("{dir}{name}");
            if mode == LINK {
                links.insert(path.clone());
            }
            blobs.insert(path, entry.id());
        }
        TreeWalkResult::Ok
    })
    .map_err(|e| Error::git(format!("cannot walk tree {}", tree.id()), e))?;
    write(&file, tree.id(), &blobs, &links);
    Ok((blobs, links))
}

/// The kept listing, or nothing when it is missing or another layout (silently) or
/// damaged (with a warning): the walk then lists the tree afresh.
fn read(file: &Path) -> Option<(Oid, BTreeMap<String, Oid>, BTreeSet<String>)> {
    let bytes = std::fs::read(file).ok()?;
    if bytes.len() >= 8 && bytes[..7] == MAGIC[..7] && bytes[..8] != MAGIC[..] {
        return None;
    }
    let decoded = decode(&bytes);
    if decoded.is_none() {
        crate::terminal::warn(format!(
            "{}: corrupt tree listing cache; listing the tree afresh",
            file.display()
        ));
    }
    decoded
}

pub(crate) fn decode(bytes: &[u8]) -> Option<(Oid, BTreeMap<String, Oid>, BTreeSet<String>)> {
    let (header, mut r) = blocks::Stream::open(bytes, MAGIC, 20)?;
    let tree = Oid::from_bytes(&header).ok()?;
    let paths = blocks::read_table(&r.block()?, &r.block()?)?;
    let ids = r.block()?;
    let link_ids = blocks::read_words(&r.block()?)?;
    if !r.is_done() || ids.len() != paths.len() * 20 || !paths.is_sorted() {
        return None;
    }
    let blobs = paths
        .iter()
        .zip(ids.chunks_exact(20))
        .map(|(p, id)| Oid::from_bytes(id).map(|id| (p.to_string(), id)))
        .collect::<std::result::Result<_, _>>()
        .ok()?;
    let links = link_ids
        .iter()
        .map(|&i| (i < paths.len() as u32).then(|| paths.get(i).to_string()))
        .collect::<Option<_>>()?;
    Some((tree, blobs, links))
}

/// A listing that cannot be kept costs the next gate a walk, nothing else.
fn write(file: &Path, tree: Oid, blobs: &BTreeMap<String, Oid>, links: &BTreeSet<String>) {
    let mut paths = crate::graph::Strings::default();
    let mut ids = Vec::with_capacity(blobs.len() * 20);
    let mut link_ids = Vec::with_capacity(links.len());
    for (path, id) in blobs {
        let at = paths.push(path);
        if links.contains(path) {
            link_ids.push(at);
        }
        ids.extend_from_slice(id.as_bytes());
    }
    let _ = blocks::write(
        file,
        MAGIC,
        tree.as_bytes(),
        &[
            paths.text().as_bytes(),
            &blocks::words(paths.ends()),
            &ids,
            &blocks::words(&link_ids),
        ],
    );
}
