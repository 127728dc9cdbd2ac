//! The facts cache (`.git/gate/cache/python.json`): every analysed blob's facts, keyed by blob id
//! (prefixed by the analyser for Go and shell: the same bytes mean other things to each). It is
//! JSON with an xxh3 checksum of its entries written after them; a cache of another format,
//! analyser or grammars, or one that fails its checksum, is rebuilt with a warning, never
//! trusted.

use crate::version::{ANALYZER, FORMAT};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The facts cache: blob id → facts, of this gate's format, analyser and grammars. Each
/// entry is kept as its JSON text and read only when its blob is met: a tree's facts are
/// never all held as values.
pub(crate) struct Cache {
    pub entries: BTreeMap<String, Box<RawValue>>,
}

/// The cache file as read: `entries` is kept as its text until its checksum (xxh3 of that
/// text, written after it) is checked.
#[derive(Deserialize)]
struct CacheFile<'a> {
    format: u32,
    analyzer: String,
    grammar: String,
    #[serde(borrow)]
    entries: &'a serde_json::value::RawValue,
    checksum: String,
}

fn checksum(bytes: &[u8]) -> String {
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(bytes))
}

pub(crate) fn path(state: &Path) -> PathBuf {
    state.join("cache").join("python.json")
}

/// What extracted the cached facts: both grammars and the extraction rules' revision. A change
/// to any of them invalidates the cache — bump `FACTS_REVISION` with every change to what the
/// analysers extract.
pub(crate) fn grammars() -> String {
    let grammars: Vec<&str> = crate::lang::LANGUAGES.iter().map(|l| l.grammar()).collect();
    format!("{}; facts {FACTS_REVISION}", grammars.join("; "))
}

const FACTS_REVISION: u32 = 17;

fn empty() -> Cache {
    Cache {
        entries: BTreeMap::new(),
    }
}

pub(crate) fn load(path: &Path, warn: &mut dyn FnMut(String)) -> Cache {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(_) => return empty(),
    };
    let corrupt = |why: String, warn: &mut dyn FnMut(String)| {
        warn(format!(
            "{}: corrupt plan cache ({why}); rebuilding it",
            path.display()
        ));
        empty()
    };
    let file = match serde_json::from_slice::<CacheFile<'_>>(&bytes) {
        Ok(file) => file,
        Err(e) => return corrupt(e.to_string(), warn),
    };
    if file.format != FORMAT || file.analyzer != ANALYZER || file.grammar != grammars() {
        warn(format!(
            "{}: written by {} (format {}, {}), this is {ANALYZER} (format {FORMAT}, {}); rebuilding it",
            path.display(),
            file.analyzer,
            file.format,
            file.grammar,
            grammars()
        ));
        return empty();
    }
    let text = file.entries.get();
    if checksum(text.as_bytes()) != file.checksum {
        return corrupt("its checksum does not match its entries".into(), warn);
    }
    match serde_json::from_str(text) {
        Ok(entries) => Cache { entries },
        Err(e) => corrupt(e.to_string(), warn),
    }
}

/// Writes through a temporary file and a rename, so a killed run never leaves half a cache;
/// the entries are streamed (a large tree's cache text is never held whole) and hashed as
/// they are written. A cache that cannot be written costs speed, not correctness: a warning.
pub(crate) fn save(path: &Path, entries: &BTreeMap<&str, &RawValue>, warn: &mut dyn FnMut(String)) {
    let written = crate::cache::blocks::replace(path, |file| {
        let mut out = std::io::BufWriter::new(file);
        write!(
            out,
            "{{\"format\":{FORMAT},\"analyzer\":{},\"grammar\":{},\"entries\":",
            serde_json::to_string(ANALYZER)?,
            serde_json::to_string(&grammars())?
        )?;
        // Buffered above the hash too: serde writes in small pieces, hashed a block at a time.
        let mut hashed = std::io::BufWriter::with_capacity(
            1 << 16,
            Hashed {
                out: &mut out,
                hash: xxhash_rust::xxh3::Xxh3::new(),
            },
        );
        serde_json::to_writer(&mut hashed, entries)?;
        let hashed = hashed.into_inner().map_err(|e| e.into_error())?;
        let sum = format!("{:016x}", hashed.hash.digest());
        write!(out, ",\"checksum\":\"{sum}\"}}")?;
        out.flush()
    });
    if let Err(e) = written {
        warn(format!(
            "{}: cannot write the plan cache ({e})",
            path.display()
        ));
    }
}

/// A writer that hashes what passes through it.
struct Hashed<'w, W> {
    out: &'w mut W,
    hash: xxhash_rust::xxh3::Xxh3,
}

impl<W: Write> Write for Hashed<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The facts cache as written loads; with any byte changed (or random bytes) it is either
    /// rejected with a warning or, where the change is outside the checked entries (the
    /// checksum's own digits, whitespace), holds exactly the entries written.
    #[test]
    fn a_damaged_facts_cache_is_never_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("python.json");
        let facts = crate::analyze::facts_of("a.py", b"import os\nopen('data/x.json')\n");
        let raw = serde_json::value::to_raw_value(&facts).unwrap();
        let entries: BTreeMap<&str, &RawValue> = [("0123abcd", raw.as_ref())].into_iter().collect();
        save(&file, &entries, &mut |w| panic!("{w}"));
        let read = |cache: &Cache| -> Option<crate::analyze::facts::Facts> {
            serde_json::from_str(cache.entries.get("0123abcd")?.get()).ok()
        };
        let loaded = load(&file, &mut |w| panic!("{w}"));
        assert_eq!(read(&loaded), Some(facts.clone()));
        let bytes = std::fs::read(&file).unwrap();
        let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(512));
        runner
            .run(&(0..bytes.len(), any::<u8>()), |(at, value)| {
                let mut bad = bytes.clone();
                bad[at] = if bad[at] == value { value ^ 1 } else { value };
                std::fs::write(&file, &bad).unwrap();
                let mut warned = false;
                let cache = load(&file, &mut |_| warned = true);
                prop_assert!(
                    warned || read(&cache) == Some(facts.clone()),
                    "a flip at {} was trusted",
                    at
                );
                Ok(())
            })
            .unwrap();
        runner
            .run(&prop::collection::vec(any::<u8>(), 0..512), |noise| {
                std::fs::write(&file, &noise).unwrap();
                let _ = load(&file, &mut |_| {});
                Ok(())
            })
            .unwrap();
    }
}
