//! Where the store is: the command line, the environment or the configuration name it, else
//! the default SQLite file; resolved before anything is opened.

use super::StoreError;
use std::path::{Path, PathBuf};

/// Where the store is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Location {
    Sqlite(PathBuf),
    Postgres(String),
}

/// Where the store is: `--db`, else `GATE_DB`, else `[history] url`, else
/// `.git/gate/history.sqlite`.
pub(crate) fn location(
    db: Option<&str>,
    configured: Option<&str>,
    state: &Path,
) -> Result<Location, StoreError> {
    let url = db
        .map(str::to_string)
        .or_else(|| std::env::var("GATE_DB").ok().filter(|v| !v.is_empty()))
        .or_else(|| configured.map(str::to_string));
    match url {
        None => Ok(Location::Sqlite(state.join("history.sqlite"))),
        Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
            Ok(Location::Postgres(url))
        }
        Some(url) => match url.split_once("://") {
            Some(_) => Err(StoreError::Url(url)),
            None => Ok(Location::Sqlite(PathBuf::from(
                url.strip_prefix("sqlite:").unwrap_or(&url),
            ))),
        },
    }
}
