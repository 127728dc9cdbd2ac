//! The layouts' test units of the last gated tree (`.git/gate/cache/tests.bin`), kept by what
//! decides them: this gate, each layout's digest (the configurations it read) and the tree's
//! file set. Matching every file of a large tree against a project's test globs costs more
//! than the rest of a layout's load; a one-file edit changes neither key part, so the next
//! selection reads the list back. A kept list that fails its checksum is recomputed with a
//! warning, never used; one kept for another key is recomputed silently.

use crate::cache::blocks;
use std::collections::BTreeSet;
use std::path::Path;

const MAGIC: &[u8; 8] = b"gatetst1";

/// The key a list is kept under: the layouts' digests and every file of the tree, in order.
pub(crate) fn key(layouts: &crate::lang::Layouts, files: &BTreeSet<String>) -> u64 {
    let mut key = crate::cache::graph::Key::new(&crate::cache::facts::grammars());
    key.add(layouts.digests());
    for file in files {
        key.add(file);
    }
    key.value()
}

/// The layouts' tests of the tree `key` names: the kept list when it was kept for that key,
/// else `compute`'s, kept for the next run.
pub(crate) fn of(
    state: &Path,
    key: u64,
    compute: impl FnOnce() -> BTreeSet<String>,
) -> BTreeSet<String> {
    let file = state.join("cache").join("tests.bin");
    if let Ok(bytes) = std::fs::read(&file) {
        match decode(&bytes) {
            Some((kept, tests)) if kept == key => return tests,
            Some(_) => {}
            // Another version of this layout (another gate) is replaced without a word.
            None if bytes.len() >= 8 && bytes[..7] == MAGIC[..7] && bytes[..8] != MAGIC[..] => {}
            None => crate::terminal::warn(format!(
                "{}: corrupt test list cache; matching the tree's files afresh",
                file.display()
            )),
        }
    }
    let tests = compute();
    write(&file, key, &tests);
    tests
}

pub(crate) fn decode(bytes: &[u8]) -> Option<(u64, BTreeSet<String>)> {
    let (header, mut r) = blocks::Stream::open(bytes, MAGIC, 8)?;
    let key = u64::from_le_bytes(header.try_into().ok()?);
    let paths = blocks::read_table(&r.block()?, &r.block()?)?;
    if !r.is_done() || !paths.is_sorted() {
        return None;
    }
    Some((key, paths.iter().map(str::to_string).collect()))
}

/// A list that cannot be kept costs the next gate the matching, nothing else.
fn write(file: &Path, key: u64, tests: &BTreeSet<String>) {
    let mut paths = crate::graph::Strings::default();
    for test in tests {
        paths.push(test);
    }
    let _ = blocks::write(
        file,
        MAGIC,
        &key.to_le_bytes(),
        &[paths.text().as_bytes(), &blocks::words(paths.ends())],
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list() -> BTreeSet<String> {
        ["a/x.test.ts", "b/y.spec.js"]
            .map(String::from)
            .into_iter()
            .collect()
    }

    #[test]
    fn a_kept_list_is_read_back_only_under_its_key() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(of(dir.path(), 1, list), list());
        assert_eq!(of(dir.path(), 1, || unreachable!("kept")), list());
        assert_eq!(of(dir.path(), 2, BTreeSet::new), BTreeSet::new());
    }

    #[test]
    fn a_damaged_list_is_never_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("kept.bin");
        write(&file, 7, &list());
        let bytes = std::fs::read(&file).unwrap();
        assert_eq!(decode(&bytes), Some((7, list())));
        for at in 0..bytes.len() {
            for how in 0..3 {
                let bad = blocks::damaged(&bytes, at, 0, how);
                assert_eq!(decode(&bad), None, "byte {at}, damage {how}");
            }
        }
    }
}
