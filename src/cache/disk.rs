//! The kept states of files and folders no commit holds (`.git/gate/cache/disk.bin`): each
//! file's content hash and each folder's listing, with the stat they were read under (device,
//! inode, size, modification and change times). A later run trusts one only while its stat is
//! the same, so a warm run stats these paths and reads none of them. A file that fails its
//! checksum is not trusted (everything is read again, and the next save rewrites it).

use super::blocks;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"gatedsk1";

/// What a path's stat said when it was read: any change to it (an edit, a rename over it, a
/// `touch`, a permission change) is a change of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Seen {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
}

impl Seen {
    pub(crate) fn of(m: &std::fs::Metadata) -> Seen {
        use std::os::unix::fs::MetadataExt;
        Seen {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime_ns: m.mtime() * 1_000_000_000 + m.mtime_nsec(),
            ctime_ns: m.ctime() * 1_000_000_000 + m.ctime_nsec(),
        }
    }

    /// The later of its two times: when it last changed, in nanoseconds since the epoch.
    pub(crate) fn changed_ns(&self) -> i64 {
        self.mtime_ns.max(self.ctime_ns)
    }
}

/// The kept states: file path → its stat and the SHA-256 of its content; folder path → its
/// stat, a hash of the names the tree holds there, and the names in it a runner may load that
/// those do not (almost always none: a warm run decodes no folder's listing).
/// Paths are kept as text (one compared byte by byte decodes fast); a path that is not UTF-8
/// is never kept, and read again each time.
#[derive(Default, Serialize, Deserialize)]
pub(crate) struct Kept {
    pub files: BTreeMap<String, (Seen, [u8; 32])>,
    pub folders: BTreeMap<String, (Seen, u64, Vec<String>)>,
}

fn path(state: &Path) -> PathBuf {
    state.join("cache").join("disk.bin")
}

/// The kept states; none when there are none or the file is damaged.
pub(crate) fn load(state: &Path) -> Kept {
    let Ok(file) = std::fs::File::open(path(state)) else {
        return Kept::default();
    };
    let reader = std::io::BufReader::with_capacity(1 << 16, file);
    let read = || {
        let (_, mut blocks) = blocks::Stream::open(reader, MAGIC, 0)?;
        let kept: Kept = postcard::from_bytes(&blocks.block()?).ok()?;
        blocks.is_done().then_some(kept)
    };
    read().unwrap_or_default()
}

/// Keeps `kept`; what to say when it could not be.
pub(crate) fn save(state: &Path, kept: &Kept) -> Option<String> {
    let file = path(state);
    postcard::to_allocvec(kept)
        .map_err(std::io::Error::other)
        .and_then(|bytes| blocks::write(&file, MAGIC, &[], &[&bytes]))
        .err()
        .map(|e| {
            format!(
                "{}: cannot keep the states of files outside the tree ({e})",
                file.display()
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What is kept loads back; a damaged file loads as nothing kept.
    #[test]
    fn kept_states_load_back_and_a_damaged_file_is_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let seen = Seen {
            dev: 1,
            ino: 2,
            size: 3,
            mtime_ns: 4,
            ctime_ns: 5,
        };
        let mut kept = Kept::default();
        kept.files.insert("/a/b.py".into(), (seen, [7; 32]));
        kept.folders.insert(
            "/a".into(),
            (seen, 9, vec!["b.py".to_string(), "c/".to_string()]),
        );
        assert_eq!(save(dir.path(), &kept), None);
        let back = load(dir.path());
        assert_eq!(back.files, kept.files);
        assert_eq!(back.folders, kept.folders);
        let file = path(dir.path());
        let bytes = std::fs::read(&file).unwrap();
        for (at, how) in [(12, 0), (bytes.len() - 2, 0), (bytes.len() - 1, 1), (10, 2)] {
            std::fs::write(&file, blocks::damaged(&bytes, at, 0x5a, how)).unwrap();
            let damaged = load(dir.path());
            assert!(damaged.files.is_empty() && damaged.folders.is_empty());
        }
    }
}
