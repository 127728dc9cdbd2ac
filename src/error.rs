//! The one error type of gate's boundary with the user: each variant maps to an exit code.

use crate::exit_codes;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The command line asked for something impossible.
    #[error("{0}")]
    Usage(String),
    /// A configuration file is malformed; `message` names the key and line.
    #[error("{}: {message}", path.display())]
    Config { path: PathBuf, message: String },
    /// A revision, range or repository could not be read.
    #[error("{message}")]
    Git {
        message: String,
        #[source]
        source: Option<git2::Error>,
    },
    /// A file gate must read or write failed.
    #[error("{}: {message}", path.display())]
    Io {
        path: PathBuf,
        message: String,
        #[source]
        source: std::io::Error,
    },
    /// The test runner could not be started.
    #[error("{0}")]
    Runner(String),
    /// A stop signal (SIGINT, SIGTERM, SIGHUP) ended the run: it reached the runner, which
    /// ended, and the temporary checkout was removed.
    #[error("interrupted by {}: the runner was stopped and nothing was left behind", signal_name(*.0))]
    Interrupted(i32),
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}

impl Error {
    pub fn git(message: impl Into<String>, source: git2::Error) -> Self {
        Error::Git {
            message: message.into(),
            source: Some(source),
        }
    }

    pub fn io(
        path: impl Into<PathBuf>,
        message: impl Into<String>,
        source: std::io::Error,
    ) -> Self {
        Error::Io {
            path: path.into(),
            message: message.into(),
            source,
        }
    }

    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Runner(_) => exit_codes::RUNNER,
            // The shell's convention for a death by signal.
            Error::Interrupted(sig) => u8::try_from(128 + sig).unwrap_or(exit_codes::RUNNER),
            _ => exit_codes::USAGE,
        }
    }

    /// What the user can do about it, printed after the error.
    pub fn hint(&self) -> Option<String> {
        match self {
            Error::Config { .. } => {
                Some("the configuration reference is in README.md, section `Configuration`".into())
            }
            _ => None,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
