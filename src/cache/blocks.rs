//! gate's binary cache files: a magic tag, a fixed header, then length-prefixed blocks laid
//! out as the program holds the data, so a load is a read and a check per block, and last an
//! xxh3 checksum of everything before it: a flipped byte that the blocks' own checks would
//! take for data is caught. Written to a temporary file and renamed, so a reader never sees
//! half a file; temporary files a killed run left behind are removed by the next write.

use std::io::{Read, Write};
use std::path::Path;
use xxhash_rust::xxh3::Xxh3;

/// Reads blocks in turn from a file, without holding the file whole: a block of fixed-size
/// records is decoded as it is read. Every byte read is hashed for `is_done`'s check.
pub(crate) struct Stream<R> {
    r: R,
    hash: Xxh3,
}

impl<R: std::io::Read> Stream<R> {
    /// The blocks after `magic` and a header of `header` bytes, with the header.
    pub(crate) fn open(mut r: R, magic: &[u8; 8], header: usize) -> Option<(Vec<u8>, Self)> {
        let mut head = vec![0; 8 + header];
        r.read_exact(&mut head).ok()?;
        if head[..8] != magic[..] {
            return None;
        }
        let mut hash = Xxh3::new();
        hash.update(&head);
        Some((head.split_off(8), Stream { r, hash }))
    }

    fn read_exact(&mut self, buf: &mut [u8]) -> Option<()> {
        self.r.read_exact(buf).ok()?;
        self.hash.update(buf);
        Some(())
    }

    fn len(&mut self) -> Option<usize> {
        let mut len = [0; 8];
        self.read_exact(&mut len)?;
        usize::try_from(u64::from_le_bytes(len)).ok()
    }

    pub(crate) fn block(&mut self) -> Option<Vec<u8>> {
        let len = self.len()?;
        let mut block = Vec::new();
        (&mut self.r)
            .take(len as u64)
            .read_to_end(&mut block)
            .ok()?;
        self.hash.update(&block);
        (block.len() == len).then_some(block)
    }

    /// The next block's `size`-byte records, each decoded as it is read; `None` if one is not.
    pub(crate) fn records<T>(
        &mut self,
        size: usize,
        mut decode: impl FnMut(&[u8]) -> Option<T>,
    ) -> Option<Vec<T>> {
        let len = self.len()?;
        if !len.is_multiple_of(size) {
            return None;
        }
        // A length is data too: a damaged one must not reserve the machine's memory.
        let mut out = Vec::with_capacity((len / size).min(1 << 20));
        let mut chunk = vec![0; size * 4096];
        let mut left = len;
        while left > 0 {
            let n = left.min(chunk.len());
            self.read_exact(&mut chunk[..n])?;
            for record in chunk[..n].chunks_exact(size) {
                out.push(decode(record)?);
            }
            left -= n;
        }
        Some(out)
    }

    /// Whether the blocks read were all there is, and the checksum that ends the file is the
    /// one of what was read.
    pub(crate) fn is_done(&mut self) -> bool {
        let mut sum = [0; 8];
        if self.r.read_exact(&mut sum).is_err() {
            return false;
        }
        u64::from_le_bytes(sum) == self.hash.digest() && matches!(self.r.read(&mut [0]), Ok(0))
    }
}

/// Writes the blocks after `magic` and `header`, each behind its length, then the checksum.
pub(crate) fn write(
    file: &Path,
    magic: &[u8; 8],
    header: &[u8],
    blocks: &[&[u8]],
) -> std::io::Result<()> {
    write_with(file, magic, header, |out| {
        blocks.iter().try_for_each(|block| out.block(block))
    })
}

/// As `write`, the blocks put by `body`, streamed: a large table's file is never held whole
/// beside the table.
pub(crate) fn write_with(
    file: &Path,
    magic: &[u8; 8],
    header: &[u8],
    body: impl FnOnce(&mut Blocks<'_>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    replace(file, |f| {
        let mut out = Blocks {
            out: std::io::BufWriter::with_capacity(1 << 16, f),
            hash: Xxh3::new(),
            written: 0,
        };
        out.put(magic)?;
        out.put(header)?;
        body(&mut out)?;
        let sum = out.hash.digest();
        out.out.write_all(&sum.to_le_bytes())?;
        out.out.flush()
    })
}

/// A cache file being written: every byte put is hashed for the checksum that ends it.
pub(crate) struct Blocks<'f> {
    out: std::io::BufWriter<&'f mut std::fs::File>,
    hash: Xxh3,
    written: usize,
}

impl Blocks<'_> {
    fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.hash.update(bytes);
        self.written += bytes.len();
        self.out.write_all(bytes)
    }

    /// A block of bytes at hand.
    pub(crate) fn block(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.put(&(bytes.len() as u64).to_le_bytes())?;
        self.put(bytes)
    }

    /// A block of `len` bytes that `fill` makes a record at a time: a block whose records
    /// do not come to `len` is an error, never a file that reads as something else.
    pub(crate) fn records(
        &mut self,
        len: usize,
        fill: impl FnOnce(&mut dyn FnMut(&[u8]) -> std::io::Result<()>) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        self.put(&(len as u64).to_le_bytes())?;
        let start = self.written;
        fill(&mut |record| self.put(record))?;
        if self.written - start != len {
            return Err(std::io::Error::other(format!(
                "a block said {len} bytes and held {}",
                self.written - start
            )));
        }
        Ok(())
    }
}

/// Writes `file` through a temporary file beside it and a rename, first removing the
/// temporary files of `file` that runs killed mid-write left behind.
pub(crate) fn replace(
    file: &Path,
    write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = file.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = file.file_name().unwrap_or_default().to_string_lossy();
    let prefix = format!("{name}.tmp");
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let other = entry.file_name().to_string_lossy().into_owned();
            let pid = other
                .strip_prefix(&prefix)
                .and_then(|p| p.parse::<u32>().ok());
            if pid.is_some_and(|pid| pid != std::process::id() && !crate::process::alive(pid)) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    let tmp = dir.join(format!("{prefix}{}", std::process::id()));
    let mut f = std::fs::File::create(&tmp)?;
    // No fsync: a file a crash leaves short fails its checksum and is rebuilt, and syncing a
    // large cache on every write would cost a warm run more than the rebuild ever does.
    let written = write(&mut f);
    drop(f);
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    std::fs::rename(&tmp, file)
}

pub(crate) fn words(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

pub(crate) fn read_words(bytes: &[u8]) -> Option<Vec<u32>> {
    bytes.len().is_multiple_of(4).then(|| {
        bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    })
}

/// A table of strings from its text and ends blocks.
pub(crate) fn read_table(text: &[u8], ends: &[u8]) -> Option<crate::graph::Strings> {
    let text = String::from_utf8(text.to_vec()).ok()?;
    crate::graph::Strings::from_parts(text, read_words(ends)?)
}

/// `bytes` with one byte changed (`how` 0), cut at `at` (1) or grown by a byte there (2): the
/// damage the caches' tests feed their decoders.
#[cfg(test)]
pub(crate) fn damaged(bytes: &[u8], at: usize, value: u8, how: u8) -> Vec<u8> {
    let mut bad = bytes.to_vec();
    match how {
        0 if bad[at] != value => bad[at] = value,
        0 => bad[at] ^= 1,
        1 => bad.truncate(at),
        _ => bad.insert(at, value),
    }
    bad
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_truncation() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("x.bin");
        write(&file, b"testblk1", &[7; 4], &[b"ab", &words(&[1, 2])]).unwrap();
        let bytes = std::fs::read(&file).unwrap();
        let (header, mut r) = Stream::open(&bytes[..], b"testblk1", 4).unwrap();
        assert_eq!(header, [7; 4]);
        assert_eq!(r.block(), Some(b"ab".to_vec()));
        let word = |b: &[u8]| Some(u32::from_le_bytes(b.try_into().unwrap()));
        assert_eq!(r.records(4, word), Some(vec![1, 2]));
        assert!(r.is_done() && r.block().is_none());
        // Another tag, or a file cut short, reads as nothing.
        assert!(Stream::open(&bytes[..], b"testblk2", 4).is_none());
        let (_, mut cut) = Stream::open(&bytes[..bytes.len() - 9], b"testblk1", 4).unwrap();
        assert!(cut.block().is_some() && cut.records(4, word).is_none());
        // Any flipped byte after the tag fails the checksum, whatever the blocks decode to.
        for at in 8..bytes.len() {
            let mut bad = bytes.clone();
            bad[at] ^= 0x10;
            let done = Stream::open(&bad[..], b"testblk1", 4).is_some_and(|(_, mut r)| {
                r.block().is_some() && r.records(4, word).is_some() && r.is_done()
            });
            assert!(!done, "a flip at byte {at} went unnoticed");
        }
    }

    #[test]
    fn a_write_removes_what_killed_writers_left() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("x.bin");
        // No process has pid u32::MAX - 1; our own pid's file is ours to overwrite.
        let stale = dir.path().join(format!("x.bin.tmp{}", u32::MAX - 1));
        std::fs::write(&stale, b"half").unwrap();
        write(&file, b"testblk1", &[], &[b"a"]).unwrap();
        assert!(!stale.exists());
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names, ["x.bin"]);
    }
}
