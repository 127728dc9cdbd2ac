//! Files gate was given to read, read only when they are regular files and only up to a limit:
//! a FIFO, a device (`/dev/zero`, `/dev/urandom`) or a file past the size anything of its kind
//! would be is refused (exit 10, the file and the fact named) before its bytes are held, so a
//! wrong path can neither hang gate nor exhaust its memory.

use crate::error::{Error, Result};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The bytes of `path`, a regular file of at most `limit` bytes; `what` names its kind in the
/// errors (`a recommendations file`).
pub(crate) fn read(path: &Path, limit: u64, what: &str) -> Result<Vec<u8>> {
    let refused = |message: String| Error::Input {
        path: path.to_path_buf(),
        message,
    };
    let cannot = |e| Error::io(path, format!("cannot read {what}"), e);
    // Opening a FIFO to read waits for a writer, perhaps forever; opened without blocking it
    // returns at once and is refused below for what it is. A regular file reads as ever.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(cannot)?;
    let meta = file.metadata().map_err(cannot)?;
    if !meta.is_file() {
        return Err(refused(format!(
            "not a regular file (a pipe, a device or a folder): {what} is read only from a file, whose end is known"
        )));
    }
    let over = || {
        refused(format!(
            "larger than {} MiB ({limit} bytes), the limit for {what}",
            limit >> 20
        ))
    };
    if meta.len() > limit {
        return Err(over());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    // Read to one byte past the limit, whatever the size said: a file that grows while it is
    // read (or a `/proc` file, whose size says 0) still stops there.
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > limit {
        return Err(over());
    }
    Ok(bytes)
}
