//! The graph of the last gated tree, kept under `.git/gate/cache/graph.bin` (postcard: compact
//! and quick to load, unlike JSON at this size). The next gate whose tree has the same files,
//! the same configuration files and the same analyser reuses it, recomputing only the edges of
//! files whose contents changed (`Graph::patch`). Anything else — another file set, a changed
//! `.gate.toml`, `pyproject.toml` or `go.mod`, another gate — rebuilds from the facts.

use crate::graph::{Edge, EdgeKind};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

#[derive(Serialize, Deserialize)]
struct Stored {
    /// `Key::value` of the tree the graph was built for.
    key: u64,
    /// Analysed files → blob ids, to tell which contents changed.
    blobs: Vec<(String, String)>,
    nodes: Vec<String>,
    details: Vec<String>,
    /// (from, to) as node indexes, the kind, the line, the detail index.
    edges: Vec<(u32, u32, EdgeKind, u32, u32)>,
    unbounded: Vec<(String, u32, String)>,
    flagged: Vec<(String, Vec<u32>)>,
}

pub struct Cached {
    pub blobs: BTreeMap<String, String>,
    pub edges: Vec<Edge>,
    pub unbounded: Vec<(String, u32, String)>,
    pub flagged: BTreeMap<String, Vec<u32>>,
}

/// What a reused graph must share with the tree being gated, hashed.
pub struct Key(std::collections::hash_map::DefaultHasher);

impl Key {
    /// Starts from what built the graph: the plan format, this gate, the grammars and the
    /// extraction rules.
    pub fn new(analyser: &str) -> Key {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (crate::plan::FORMAT, crate::plan::ANALYZER, analyser).hash(&mut h);
        Key(h)
    }

    pub fn add(&mut self, part: impl Hash) {
        part.hash(&mut self.0);
    }

    pub fn value(&self) -> u64 {
        self.0.finish()
    }
}

fn path(state: &Path) -> PathBuf {
    state.join("cache").join("graph.bin")
}

/// The stored graph when it was built for `key`. One built for another tree is not reused;
/// a corrupt one is not trusted either, and says so.
pub fn load(state: &Path, key: u64, warn: &mut dyn FnMut(String)) -> Option<Cached> {
    let file = path(state);
    let bytes = std::fs::read(&file).ok()?;
    let stored: Stored = match postcard::from_bytes(&bytes) {
        Ok(stored) => stored,
        Err(e) => {
            warn(format!(
                "{}: corrupt graph cache ({e}); rebuilding it",
                file.display()
            ));
            return None;
        }
    };
    if stored.key != key {
        return None;
    }
    let node = |i: u32| stored.nodes.get(i as usize).cloned();
    let mut edges = Vec::with_capacity(stored.edges.len());
    for &(from, to, kind, line, detail) in &stored.edges {
        let (Some(from), Some(to), Some(detail)) =
            (node(from), node(to), stored.details.get(detail as usize))
        else {
            warn(format!(
                "{}: corrupt graph cache (a dangling index); rebuilding it",
                file.display()
            ));
            return None;
        };
        edges.push(Edge {
            from,
            to,
            kind,
            line,
            detail: detail.clone(),
        });
    }
    Some(Cached {
        blobs: stored.blobs.into_iter().collect(),
        edges,
        unbounded: stored.unbounded,
        flagged: stored.flagged.into_iter().collect(),
    })
}

/// Keeps the graph for the next run. A cache that cannot be written costs speed, not
/// correctness: a warning.
pub fn save(
    state: &Path,
    key: u64,
    blobs: &BTreeMap<String, String>,
    edges: &[Edge],
    unbounded: &[(String, u32, String)],
    flagged: &BTreeMap<String, Vec<u32>>,
    warn: &mut dyn FnMut(String),
) {
    let mut nodes: Vec<String> = Vec::new();
    let mut node_ids: std::collections::HashMap<&str, u32> = Default::default();
    let mut details: Vec<String> = Vec::new();
    let mut detail_ids: std::collections::HashMap<&str, u32> = Default::default();
    let mut stored_edges = Vec::with_capacity(edges.len());
    for e in edges {
        let from = intern(&e.from, &mut nodes, &mut node_ids);
        let to = intern(&e.to, &mut nodes, &mut node_ids);
        let detail = intern(&e.detail, &mut details, &mut detail_ids);
        stored_edges.push((from, to, e.kind, e.line, detail));
    }
    let stored = Stored {
        key,
        blobs: blobs.iter().map(|(p, b)| (p.clone(), b.clone())).collect(),
        nodes,
        details,
        edges: stored_edges,
        unbounded: unbounded.to_vec(),
        flagged: flagged
            .iter()
            .map(|(p, l)| (p.clone(), l.clone()))
            .collect(),
    };
    let file = path(state);
    let write = || -> std::io::Result<()> {
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let bytes = postcard::to_allocvec(&stored).map_err(std::io::Error::other)?;
        let tmp = file.with_extension(format!("bin.tmp{}", std::process::id()));
        std::fs::write(&tmp, bytes)?;
        std::fs::rename(&tmp, &file)
    };
    if let Err(e) = write() {
        warn(format!("{}: cannot keep the graph ({e})", file.display()));
    }
}

/// The index of `s` in `table`, adding it on first sight.
fn intern<'a>(
    s: &'a str,
    table: &mut Vec<String>,
    ids: &mut std::collections::HashMap<&'a str, u32>,
) -> u32 {
    *ids.entry(s).or_insert_with(|| {
        table.push(s.to_string());
        (table.len() - 1) as u32
    })
}
