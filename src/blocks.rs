//! gate's binary cache files: a magic tag, a fixed header, then length-prefixed blocks laid
//! out as the program holds the data, so a load is a read and a check per block. Written to
//! a temporary file and renamed, so a reader never sees half a file.

use std::io::Read;
use std::path::Path;

/// Reads blocks in turn from a file, without holding the file whole: a block of fixed-size
/// records is decoded as it is read.
pub struct Stream<R>(R);

impl<R: std::io::Read> Stream<R> {
    /// The blocks after `magic` and a header of `header` bytes, with the header.
    pub fn open(mut r: R, magic: &[u8; 8], header: usize) -> Option<(Vec<u8>, Self)> {
        let mut head = vec![0; 8 + header];
        r.read_exact(&mut head).ok()?;
        (head[..8] == magic[..]).then(|| (head.split_off(8), Stream(r)))
    }

    fn len(&mut self) -> Option<usize> {
        let mut len = [0; 8];
        self.0.read_exact(&mut len).ok()?;
        usize::try_from(u64::from_le_bytes(len)).ok()
    }

    pub fn block(&mut self) -> Option<Vec<u8>> {
        let len = self.len()?;
        let mut block = Vec::new();
        (&mut self.0)
            .take(len as u64)
            .read_to_end(&mut block)
            .ok()?;
        (block.len() == len).then_some(block)
    }

    /// The next block's `size`-byte records, each decoded as it is read; `None` if one is not.
    pub fn records<T>(
        &mut self,
        size: usize,
        mut decode: impl FnMut(&[u8]) -> Option<T>,
    ) -> Option<Vec<T>> {
        let len = self.len()?;
        if !len.is_multiple_of(size) {
            return None;
        }
        let mut out = Vec::with_capacity(len / size);
        let mut chunk = vec![0; size * 4096];
        let mut left = len;
        while left > 0 {
            let n = left.min(chunk.len());
            self.0.read_exact(&mut chunk[..n]).ok()?;
            for record in chunk[..n].chunks_exact(size) {
                out.push(decode(record)?);
            }
            left -= n;
        }
        Some(out)
    }

    /// Whether the blocks read were all there is.
    pub fn is_done(&mut self) -> bool {
        matches!(self.0.read(&mut [0]), Ok(0))
    }
}

pub fn write(file: &Path, magic: &[u8; 8], header: &[u8], blocks: &[&[u8]]) -> std::io::Result<()> {
    let size = blocks.iter().map(|b| b.len() + 8).sum::<usize>();
    let mut out = Vec::with_capacity(8 + header.len() + size);
    out.extend_from_slice(magic);
    out.extend_from_slice(header);
    for block in blocks {
        out.extend_from_slice(&(block.len() as u64).to_le_bytes());
        out.extend_from_slice(block);
    }
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = file.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, out)?;
    std::fs::rename(&tmp, file)
}

pub fn words(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

pub fn read_words(bytes: &[u8]) -> Option<Vec<u32>> {
    bytes.len().is_multiple_of(4).then(|| {
        bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    })
}

/// A table of strings from its text and ends blocks.
pub fn read_table(text: &[u8], ends: &[u8]) -> Option<crate::graph::Strings> {
    let text = String::from_utf8(text.to_vec()).ok()?;
    crate::graph::Strings::from_parts(text, read_words(ends)?)
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
        let (_, mut cut) = Stream::open(&bytes[..bytes.len() - 1], b"testblk1", 4).unwrap();
        assert!(cut.block().is_some() && cut.records(4, word).is_none());
    }
}
