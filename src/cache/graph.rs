//! The graph of the last gated tree, kept under `.git/gate/cache/graph.bin`. The next gate
//! whose tree has the same files, the same configuration files and the same analyser reuses
//! it, recomputing only the edges of files whose contents changed (`Graph::patch`). Anything
//! else — another file set, a changed `.gate.toml`, `pyproject.toml` or `go.mod`, another
//! gate — rebuilds from the facts.
//!
//! The file's blocks (`crate::cache::blocks`) are laid out as the graph holds them — name tables as
//! one text and its ends, edges as fixed-size records — so loading is a read and a check per
//! block rather than a parse per edge. A `gate plan --out` export is the reviewable form.

use crate::analyze::facts::{Flags, Reads};
use crate::cache::blocks;
use crate::graph::{EdgeKind, Graph, Link, Parts, Strings};
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

/// The first bytes of the file; the digit is the layout's version.
const MAGIC: &[u8; 8] = b"gategrf6";
/// An edge on disk: from, to, line, detail (u32, little-endian) and the kind's index.
const LINK_SIZE: usize = 17;
const OID_SIZE: usize = 20;

/// Per graph node, the blob id its facts were read from (zeros where it has none).
pub(crate) struct Blobs(Vec<u8>);

impl Blobs {
    pub(crate) fn new(nodes: usize) -> Blobs {
        Blobs(vec![0; nodes * OID_SIZE])
    }

    /// From the analysis' `path → blob id` map, placed by `graph`'s node ids.
    pub(crate) fn of(graph: &Graph, blobs: &BTreeMap<String, String>) -> Blobs {
        let mut out = Blobs::new(graph.node_count());
        for (path, blob) in blobs {
            if let (Some(id), Ok(oid)) = (graph.id(path), git2::Oid::from_str(blob)) {
                out.set(id, oid);
            }
        }
        out
    }

    pub(crate) fn get(&self, id: u32) -> &[u8] {
        let at = id as usize * OID_SIZE;
        &self.0[at..at + OID_SIZE]
    }

    pub(crate) fn set(&mut self, id: u32, oid: git2::Oid) {
        let at = id as usize * OID_SIZE;
        self.0[at..at + OID_SIZE].copy_from_slice(oid.as_bytes());
    }
}

pub(crate) struct Cached {
    pub parts: Parts,
    pub blobs: Blobs,
    pub flagged: BTreeMap<String, Flags>,
    pub reads: BTreeMap<String, Reads>,
}

/// The small, irregular parts, in postcard.
#[derive(serde::Serialize, serde::Deserialize)]
struct Rest {
    unbounded: Vec<(String, u32, String)>,
    flagged: Vec<(String, Flags)>,
    reads: Vec<(String, Reads)>,
}

/// What a reused graph must share with the tree being gated, hashed.
pub(crate) struct Key(std::collections::hash_map::DefaultHasher);

impl Key {
    /// Starts from what built the graph: the plan format, this gate, the grammars and the
    /// extraction rules.
    pub(crate) fn new(analyser: &str) -> Key {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (crate::version::FORMAT, crate::version::ANALYZER, analyser).hash(&mut h);
        Key(h)
    }

    pub(crate) fn add(&mut self, part: impl Hash) {
        part.hash(&mut self.0);
    }

    pub(crate) fn value(&self) -> u64 {
        self.0.finish()
    }
}

fn path(state: &Path) -> PathBuf {
    state.join("cache").join("graph.bin")
}

/// The stored graph when it was built for `key`. One built for another tree is not reused;
/// a corrupt one is not trusted either, and says so.
pub(crate) fn load(state: &Path, key: u64, warn: &mut dyn FnMut(String)) -> Option<Cached> {
    let file = path(state);
    let mut reader = std::io::BufReader::with_capacity(1 << 16, std::fs::File::open(&file).ok()?);
    let mut magic = [0; 8];
    std::io::Read::read_exact(&mut reader, &mut magic).ok();
    // Another version of this layout (another gate) is rebuilt and replaced without a word.
    if magic[..7] == MAGIC[..7] && magic != *MAGIC {
        return None;
    }
    let reader = std::io::Seek::rewind(&mut reader).ok().map(|_| reader)?;
    let cached = match blocks::Stream::open(reader, MAGIC, 8) {
        Some((header, _)) if header != key.to_le_bytes() => return None,
        Some((_, blocks)) => decode(blocks),
        None => None,
    };
    if cached.is_none() {
        warn(format!(
            "{}: corrupt graph cache; rebuilding it",
            file.display()
        ));
    }
    cached
}

fn decode(mut blocks: blocks::Stream<impl std::io::Read>) -> Option<Cached> {
    let nodes = blocks::read_table(&blocks.block()?, &blocks.block()?)?;
    let blobs = blocks.block()?;
    let details = blocks::read_table(&blocks.block()?, &blocks.block()?)?;
    if blobs.len() != nodes.len() * OID_SIZE || !nodes.is_sorted() {
        return None;
    }
    let (n, d) = (nodes.len() as u32, details.len() as u32);
    let mut last = None;
    let links = blocks.records(LINK_SIZE, |r| {
        let word = |i: usize| u32::from_le_bytes([r[i], r[i + 1], r[i + 2], r[i + 3]]);
        let link = Link {
            from: word(0),
            to: word(4),
            line: word(8),
            detail: word(12),
            kind: *EdgeKind::ALL.get(r[16] as usize)?,
        };
        // In range, and in the order walks and patches rely on.
        let ordered = last.is_none_or(|key| key < link.key());
        last = Some(link.key());
        (link.from < n && link.to < n && link.detail < d && ordered).then_some(link)
    })?;
    let rest: Rest = postcard::from_bytes(&blocks.block()?).ok()?;
    if !blocks.is_done() {
        return None;
    }
    Some(Cached {
        parts: Parts {
            nodes,
            details,
            links,
            unbounded: rest.unbounded,
        },
        blobs: Blobs(blobs),
        flagged: rest.flagged.into_iter().collect(),
        reads: rest.reads.into_iter().collect(),
    })
}

/// Keeps the graph for the next run. A cache that cannot be written costs speed, not
/// correctness: a warning.
pub(crate) fn save(
    state: &Path,
    key: u64,
    graph: &Graph,
    blobs: &Blobs,
    flagged: &BTreeMap<String, Flags>,
    reads: &BTreeMap<String, Reads>,
    warn: &mut dyn FnMut(String),
) {
    let (nodes, details, links) = graph.parts();
    // A patched graph's detail table still holds the details of the edges it replaced: only
    // those in use are kept, renumbered in order of first use.
    let mut renumber = vec![u32::MAX; details.len()];
    let mut kept = Strings::default();
    for l in links {
        let detail = &mut renumber[l.detail as usize];
        if *detail == u32::MAX {
            *detail = kept.push(details.get(l.detail));
        }
    }
    let rest = Rest {
        unbounded: graph.unbounded.clone(),
        flagged: flagged
            .iter()
            .map(|(p, l)| (p.clone(), l.clone()))
            .collect(),
        reads: reads.iter().map(|(p, r)| (p.clone(), r.clone())).collect(),
    };
    let file = path(state);
    let written = postcard::to_allocvec(&rest)
        .map_err(std::io::Error::other)
        .and_then(|rest| {
            blocks::write_with(&file, MAGIC, &key.to_le_bytes(), |out| {
                out.block(nodes.text().as_bytes())?;
                out.block(&blocks::words(nodes.ends()))?;
                out.block(&blobs.0)?;
                out.block(kept.text().as_bytes())?;
                out.block(&blocks::words(kept.ends()))?;
                // A large graph's links are written as they are encoded, not held twice.
                out.records(links.len() * LINK_SIZE, |put| {
                    let mut record = [0u8; LINK_SIZE];
                    for l in links {
                        let detail = renumber[l.detail as usize];
                        for (at, word) in [l.from, l.to, l.line, detail].into_iter().enumerate() {
                            record[at * 4..at * 4 + 4].copy_from_slice(&word.to_le_bytes());
                        }
                        record[16] = l.kind as u8;
                        put(&record)?;
                    }
                    Ok(())
                })?;
                out.block(&rest)
            })
        });
    if let Err(e) = written {
        warn(format!("{}: cannot keep the graph ({e})", file.display()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A kept graph with any byte changed, cut short or grown is not loaded (a flip in the tag
    /// reads as another layout); random bytes never panic the decoder.
    #[test]
    fn a_damaged_graph_is_never_loaded() {
        let files: std::collections::BTreeSet<String> = ["a.py", "b.py", "test_a.py"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let facts: BTreeMap<String, crate::analyze::facts::Facts> = [
            ("a.py", "import b\n"),
            ("test_a.py", "import a\n"),
            ("b.py", ""),
        ]
        .iter()
        .map(|(p, t)| (p.to_string(), crate::analyze::facts_of(p, t.as_bytes())))
        .collect();
        let roots = vec![String::new()];
        let is_test = |p: &str| p.starts_with("test_");
        let links = BTreeMap::new();
        let go = Default::default();
        let tree = crate::graph::Tree::new(&files, &links, &roots, &is_test, None, &go);
        let graph = Graph::of_facts(&tree, &facts);
        let dir = tempfile::tempdir().unwrap();
        let blobs = Blobs::new(graph.node_count());
        save(
            dir.path(),
            7,
            &graph,
            &blobs,
            &BTreeMap::new(),
            &BTreeMap::new(),
            &mut |w| panic!("{w}"),
        );
        let file = path(dir.path());
        let bytes = std::fs::read(&file).unwrap();
        assert!(load(dir.path(), 7, &mut |_| {}).is_some());
        let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(512));
        runner
            .run(
                &(8..bytes.len(), any::<u8>(), 0..3u8),
                |(at, value, how)| {
                    let bad = crate::cache::blocks::damaged(&bytes, at, value, how);
                    std::fs::write(&file, &bad).unwrap();
                    // The key is part of the header: another key is another tree, not damage.
                    let rejected = load(dir.path(), 7, &mut |_| ()).is_none();
                    prop_assert!(rejected);
                    Ok(())
                },
            )
            .unwrap();
        runner
            .run(&prop::collection::vec(any::<u8>(), 0..1024), |noise| {
                let mut bad = MAGIC.to_vec();
                bad.extend(7u64.to_le_bytes());
                bad.extend(noise);
                std::fs::write(&file, &bad).unwrap();
                let rejected = load(dir.path(), 7, &mut |_| ()).is_none();
                prop_assert!(rejected);
                Ok(())
            })
            .unwrap();
    }
}
