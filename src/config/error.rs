//! The configuration's boundary error, a leaf: `crate::error` gathers it without the
//! configuration's modules being imported back.

/// A configuration file that is malformed or names nothing: the file, and the key and line.
#[derive(Debug, thiserror::Error)]
#[error("{}: {message}", path.display())]
pub struct ConfigError {
    pub path: std::path::PathBuf,
    pub message: String,
}
