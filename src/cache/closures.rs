//! The closure hashes of the last fingerprinted tree (part 11's ledger): per graph node, the
//! hash of it and everything it reaches, kept for the commit they were computed at. A later
//! run of the same graph key (file set, configuration, roots) and the same values of the
//! variables files read by name trusts a node's hash only when no file it reaches changed
//! between that commit's tree and its own — found by diffing the two trees, which git does by
//! subtree ids — so a warm fingerprint costs about what changed, not the graph's size.

use super::blocks;
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"gatecls2";
/// Graph key, variables key, 20-byte commit id.
const HEADER: usize = 8 + 8 + 20;
/// Per node: 32-byte hash and a state byte.
const RECORD: usize = 33;

/// A node's kept hash.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum State {
    /// Not computed when the cache was written.
    Missing,
    /// Computed: the hash, and whether an input under it cannot be hashed.
    Known([u8; 32], bool),
}

/// What a kept cache says, for the key it was loaded under.
pub(crate) struct Kept {
    /// The commit the hashes were computed at.
    pub commit: git2::Oid,
    /// Per node id.
    pub nodes: Vec<State>,
    /// The tree's whole-suite files.
    pub whole_suite: Vec<String>,
}

fn path(state: &Path) -> PathBuf {
    state.join("cache").join("closures.bin")
}

/// The kept hashes when they were computed under `graph` and `env` keys for `nodes` nodes; a
/// damaged file is not trusted (and rewritten by the next save).
pub(crate) fn load(state: &Path, graph: u64, env: u64, nodes: usize) -> Option<Kept> {
    let reader = std::io::BufReader::with_capacity(1 << 16, std::fs::File::open(path(state)).ok()?);
    let (header, mut blocks) = blocks::Stream::open(reader, MAGIC, HEADER)?;
    if header[..8] != graph.to_le_bytes() || header[8..16] != env.to_le_bytes() {
        return None;
    }
    let commit = git2::Oid::from_bytes(&header[16..]).ok()?;
    let records = blocks.records(RECORD, |r| match r[32] {
        0 => Some(State::Missing),
        1 | 2 => Some(State::Known(r[..32].try_into().ok()?, r[32] == 2)),
        _ => None,
    })?;
    let whole_suite: Vec<String> = postcard::from_bytes(&blocks.block()?).ok()?;
    (blocks.is_done() && records.len() == nodes).then_some(Kept {
        commit,
        nodes: records,
        whole_suite,
    })
}

/// Keeps `nodes`' hashes as computed at `commit`. Not kept, the next run computes them again:
/// a warning.
pub(crate) fn save(
    state: &Path,
    (graph, env): (u64, u64),
    commit: git2::Oid,
    nodes: &[State],
    whole_suite: &[String],
) -> Result<(), String> {
    let mut header = Vec::with_capacity(HEADER);
    header.extend_from_slice(&graph.to_le_bytes());
    header.extend_from_slice(&env.to_le_bytes());
    header.extend_from_slice(commit.as_bytes());
    let mut records = Vec::with_capacity(nodes.len() * RECORD);
    for n in nodes {
        match n {
            State::Missing => records.extend_from_slice(&[0; RECORD]),
            State::Known(hash, doubt) => {
                records.extend_from_slice(hash);
                records.push(if *doubt { 2 } else { 1 });
            }
        }
    }
    let file = path(state);
    postcard::to_allocvec(whole_suite)
        .map_err(std::io::Error::other)
        .and_then(|w| blocks::write(&file, MAGIC, &header, &[&records, &w]))
        .map_err(|e| format!("{}: cannot keep the closure hashes ({e})", file.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What is kept loads back under its keys only; a damaged file never loads.
    #[test]
    fn kept_hashes_load_under_their_keys_only() {
        let dir = tempfile::tempdir().unwrap();
        let commit = git2::Oid::from_bytes(&[7; 20]).unwrap();
        let nodes = vec![
            State::Known([1; 32], false),
            State::Missing,
            State::Known([2; 32], true),
        ];
        let whole = vec!["pyproject.toml".to_string()];
        save(dir.path(), (5, 6), commit, &nodes, &whole).unwrap();
        let kept = load(dir.path(), 5, 6, 3).expect("loads");
        assert_eq!(
            (kept.commit, kept.nodes, kept.whole_suite),
            (commit, nodes, whole)
        );
        assert!(load(dir.path(), 4, 6, 3).is_none(), "another graph");
        assert!(load(dir.path(), 5, 7, 3).is_none(), "other variables");
        assert!(load(dir.path(), 5, 6, 4).is_none(), "another node count");
        let file = path(dir.path());
        let mut bytes = std::fs::read(&file).unwrap();
        for at in [HEADER + 20, bytes.len() - 3] {
            bytes[at] ^= 1;
            std::fs::write(&file, &bytes).unwrap();
            assert!(load(dir.path(), 5, 6, 3).is_none(), "byte {at} flipped");
            bytes[at] ^= 1;
        }
    }
}
