//! Files no commit holds, as a fingerprint's inputs: a git-ignored module or configuration
//! beside the tree's files, a module of an installed distribution, a file a run read outside
//! the repository. Each is named by its content — the same bytes on two machines are the same
//! input, and a file edited in place (its distribution's version unchanged) is another — found
//! through the stat-checked kept states (`cache::disk`), so a warm run stats what it read
//! before and reads none of it. A folder is named by being one: what is in it is not read.

use crate::cache::disk::{Kept, Seen};
use crate::path::loaded_by_runners;
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};

/// How long a file must have been left alone before its hash is kept: file times lag the clock
/// by a tick, so a file written in the second before it was read may change again unseen.
const SETTLE_NS: i64 = 1_000_000_000;

/// The kept states, read once per run and written back when this run read anything afresh.
pub(crate) struct Disk {
    state: PathBuf,
    kept: Kept,
    changed: bool,
    now_ns: i64,
}

/// What a path holds.
pub(crate) const ABSENT: &str = "absent";
pub(crate) const FOLDER: &str = "folder";

impl Disk {
    /// The states kept under the state folder `state` (`.git/gate`).
    pub(crate) fn open(state: &Path) -> Disk {
        Disk {
            state: state.to_path_buf(),
            kept: crate::cache::disk::load(state),
            changed: false,
            now_ns: now_ns(),
        }
    }

    /// What `path` holds, followed through symlinks as a reader follows them: `absent`,
    /// `folder`, or `file ` and the SHA-256 of its content; why, when it cannot be read.
    pub(crate) fn state(&mut self, path: &Path) -> Result<String, String> {
        let meta = match std::fs::metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(ABSENT.into()),
            // A path through a file (`a.zip/m.py`) names nothing there either.
            Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => return Ok(ABSENT.into()),
            Err(e) => return Err(format!("{}: cannot be read ({e})", path.display())),
        };
        if meta.is_dir() {
            return Ok(FOLDER.into());
        }
        if !meta.is_file() {
            return Err(format!(
                "{}: neither a file nor a folder (a device or a pipe): what a reader gets there is not bounded",
                path.display()
            ));
        }
        let seen = Seen::of(&meta);
        let key = path.to_str();
        if let Some((kept, hash)) = key.and_then(|k| self.kept.files.get(k))
            && *kept == seen
        {
            return Ok(format!("file {}", super::hex(hash)));
        }
        let hash =
            content_hash(path).map_err(|e| format!("{}: cannot be read ({e})", path.display()))?;
        if let Some(key) = key
            && seen.changed_ns() < self.now_ns - SETTLE_NS
        {
            self.kept.files.insert(key.to_string(), (seen, hash));
            self.changed = true;
        }
        Ok(format!("file {}", super::hex(&hash)))
    }

    /// The names in folder `dir` that a test runner may load (`loaded_by_runners`) and that the tree
    /// does not hold there (`tracked`: its files' and its folders' names, each sorted), and
    /// each such folder that can be a package (`name/`). Kept by the folder's stat and the
    /// tree's names: a folder no entry was added to or removed from, under the same tree,
    /// is not listed again.
    pub(crate) fn untracked_in(&mut self, dir: &Path, tracked: (&[&str], &[&str])) -> Vec<String> {
        let Ok(meta) = std::fs::metadata(dir) else {
            return Vec::new();
        };
        if !meta.is_dir() {
            return Vec::new();
        }
        let (files, folders) = tracked;
        let seen = Seen::of(&meta);
        let mut key = xxhash_rust::xxh3::Xxh3::new();
        for name in files.iter().chain([&"/"]).chain(folders) {
            key.update(name.as_bytes());
            key.update(b"\0");
        }
        let key = key.digest();
        let path = dir.to_str();
        if let Some((kept, kept_key, names)) = path.and_then(|p| self.kept.folders.get(p))
            && *kept == seen
            && *kept_key == key
        {
            return names.clone();
        }
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let folder = e.file_type().ok()?.is_dir();
                if folder {
                    let package = is_identifier(&name) && name != "__pycache__";
                    let own = folders.binary_search(&name.as_str()).is_ok();
                    (package && !own).then(|| format!("{name}/"))
                } else {
                    let own = files.binary_search(&name.as_str()).is_ok();
                    (loaded_by_runners(&name) && !own).then_some(name)
                }
            })
            .collect();
        names.sort();
        if let Some(path) = path
            && seen.changed_ns() < self.now_ns - SETTLE_NS
        {
            let kept = (seen, key, names.clone());
            self.kept.folders.insert(path.to_string(), kept);
            self.changed = true;
        }
        names
    }

    /// Writes the states back when this run read any afresh; what to say when it could not.
    pub(crate) fn keep(&self) -> Option<String> {
        if !self.changed {
            return None;
        }
        crate::cache::disk::save(&self.state, &self.kept)
    }
}

/// The clock, in nanoseconds since the epoch.
pub(crate) fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

/// Whether `path` (or, when it is absent, its folder: a file deleted) changed at or after
/// `since_ns`, as far as its file system's clock can tell: a run that wrote what it read saw
/// another state than the one found after it. File times lag the clock by a tick (a few
/// milliseconds); on a file system that keeps whole seconds (no nanoseconds in either time),
/// by up to a second.
pub(crate) fn changed_since(path: &Path, since_ns: i64) -> bool {
    use std::os::unix::fs::MetadataExt;
    let after = |m: &std::fs::Metadata| {
        let coarse = m.mtime_nsec() == 0 && m.ctime_nsec() == 0;
        let tick = if coarse { SETTLE_NS } else { TICK_NS };
        Seen::of(m).changed_ns() >= since_ns - tick
    };
    match std::fs::metadata(path) {
        Ok(m) => after(&m),
        Err(_) => path
            .parent()
            .and_then(|p| std::fs::metadata(p).ok())
            .is_none_or(|m| after(&m)),
    }
}

/// How far a file time may lag the clock on a file system that keeps nanoseconds: the kernel
/// stamps files from a clock read once per tick (1–10 ms), twice that to be sure.
const TICK_NS: i64 = 20_000_000;

fn content_hash(path: &Path) -> std::io::Result<[u8; 32]> {
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0; 1 << 16];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().into())
}

/// Whether `name` can be a Python package's name (a folder an import can name).
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file's state follows its content, not its stat: the hash of a settled file is kept
    /// and found again by its stat alone, and an edit that keeps its size and restores its
    /// modification time is still seen (its change time moved).
    #[test]
    fn a_file_edited_in_place_is_another_state_whatever_its_times() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let file = dir.path().join("mod.py");
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        let write = |text: &str| {
            std::fs::write(&file, text).unwrap();
            let f = std::fs::File::options().write(true).open(&file).unwrap();
            f.set_modified(old).unwrap();
        };
        // As if the run came a minute later: what it read has settled.
        let later = |disk: &mut Disk| disk.now_ns += 60 * SETTLE_NS;
        write("RATE = 1\n");
        let mut disk = Disk::open(&state);
        later(&mut disk);
        let first = disk.state(&file).unwrap();
        assert!(first.starts_with("file "), "{first}");
        assert_eq!(disk.keep(), None);
        assert_eq!(crate::cache::disk::load(&state).files.len(), 1, "kept");
        assert_eq!(Disk::open(&state).state(&file).unwrap(), first);
        write("RATE = 2\n");
        let mut again = Disk::open(&state);
        later(&mut again);
        assert_ne!(again.state(&file).unwrap(), first);
        assert_eq!(
            Disk::open(&state)
                .state(&dir.path().join("gone.py"))
                .unwrap(),
            ABSENT
        );
        assert_eq!(Disk::open(&state).state(dir.path()).unwrap(), FOLDER);
        // Written just now: read, and its hash not kept.
        let fresh = dir.path().join("fresh.py");
        std::fs::write(&fresh, "X = 1\n").unwrap();
        let mut now = Disk::open(&state);
        now.state(&fresh).unwrap();
        assert!(!now.kept.files.contains_key(fresh.to_str().unwrap()));
    }

    #[test]
    fn loadable_names() {
        for yes in [
            "conftest.py",
            "x.so",
            "pytest.ini",
            "a_test.go",
            "go.work",
            "m.s",
        ] {
            assert!(loaded_by_runners(yes), "{yes}");
        }
        for no in ["README.md", "data.json", "go.txt", "Makefile"] {
            assert!(!loaded_by_runners(no), "{no}");
        }
        assert!(is_identifier("local_pkg") && !is_identifier("my-pkg") && !is_identifier("1x"));
    }
}
