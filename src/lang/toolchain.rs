//! Asking a toolchain who it is, for the languages' toolchain identities: the file a program
//! name runs, whether it is a script, a path's state (what a kept identity is checked against),
//! a program's output, and the digest fingerprints use.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The digest of `bytes` every fingerprint input carries.
pub(crate) fn hash(bytes: &[u8]) -> String {
    format!("{:032x}", xxhash_rust::xxh3::xxh3_128(bytes))
}

/// A path's state: what changes when a file is replaced or a folder gains or loses an entry.
#[derive(Serialize, Deserialize, PartialEq, Eq, Debug, Clone)]
pub(crate) struct Stat {
    dev: u64,
    ino: u64,
    pub mtime_ns: i128,
    size: u64,
}

pub(crate) fn stat(path: &Path) -> Option<Stat> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    Some(Stat {
        dev: m.dev(),
        ino: m.ino(),
        mtime_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
        size: m.size(),
    })
}

/// The file `argv0` runs: a path (relative to `root`) or the first executable of that name on
/// `PATH`.
pub(crate) fn resolve(argv0: &str, root: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let runs = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if argv0.contains('/') {
        let p = root.join(argv0);
        return runs(&p).then_some(p);
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| root.join(dir).join(argv0))
        .find(|p| runs(p))
}

pub(crate) fn is_script(path: &Path) -> bool {
    let mut head = [0u8; 2];
    std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
        .map_or(true, |()| &head == b"#!")
}

/// What `argv` prints, or why it could not be asked.
pub(crate) fn ask(
    argv: &[&str],
    root: &Path,
    env: &std::collections::BTreeMap<String, String>,
) -> Result<Vec<u8>, String> {
    let out = std::process::Command::new(argv[0])
        .args(&argv[1..])
        .envs(env)
        .current_dir(root)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("`{}` cannot be asked its identity: {e}", argv[0]))?;
    if !out.status.success() {
        return Err(format!(
            "`{}` did not say its identity (exit {:?})",
            argv[0],
            out.status.code()
        ));
    }
    Ok(out.stdout)
}
