//! gate's errors at its boundary with the user. Each boundary that a caller may branch on has a
//! type of its own — the configuration (`config::ConfigError`), the range (`range::RangeError`),
//! the runners (`run::RunnerError`) — and `Error` gathers them; its variant decides the exit
//! code (`exit_codes`). Messages are lowercase fragments; a cause is a `#[source]`, printed by
//! `main` as `caused by:`, never repeated in the message.

use crate::exit_codes;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The command line asked for something impossible.
    #[error("{0}")]
    Usage(String),
    /// `gate` alone, or with options but nothing to gate: a usage error that says what would do.
    #[error(
        "nothing to gate: give a range (`--affected origin/main...HEAD`), a base (`--since REV`), paths (`--files PATH…`) or a subcommand"
    )]
    NothingToGate,
    /// A configuration file is malformed or names nothing.
    #[error(transparent)]
    Config(#[from] crate::config::error::ConfigError),
    /// A revision or range the user gave cannot be read.
    #[error(transparent)]
    Range(#[from] crate::repo::error::RangeError),
    /// The repository or an object in it could not be read.
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
    /// A runner or a tool gate drives could not be started.
    #[error(transparent)]
    Runner(#[from] crate::run::error::RunnerError),
    /// The history store is unreachable, locked, or of a newer schema.
    #[error(transparent)]
    Store(#[from] crate::history::error::StoreError),
    /// An input file gate was given to read (a JUnit report, a `go test -json` stream) is
    /// malformed: nothing was recorded.
    #[error("{}: {message}", path.display())]
    Input { path: PathBuf, message: String },
    /// An input that would take the place of better data already kept (an upload with no
    /// result over a leg with results): refused, nothing changed.
    #[error("{0}")]
    Refused(String),
    /// Something gate holds true was not: a bug in gate, reported rather than hidden.
    #[error("{0} (an internal error of gate)")]
    Internal(String),
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

    /// A malformed or empty-matching configuration file.
    pub fn config(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Error::Config(crate::config::error::ConfigError {
            path: path.into(),
            message: message.into(),
        })
    }

    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Usage(_) | Error::NothingToGate | Error::Config(_) | Error::Range(_) => {
                exit_codes::USAGE
            }
            Error::Git { .. } => exit_codes::GIT,
            Error::Io { .. } => exit_codes::IO,
            Error::Runner(_) => exit_codes::RUNNER,
            Error::Internal(_) => exit_codes::INTERNAL,
            Error::Store(_) => exit_codes::STORE,
            Error::Input { .. } | Error::Refused(_) => exit_codes::INPUT,
            // The shell's convention for a death by signal.
            Error::Interrupted(sig) => u8::try_from(128 + sig).unwrap_or(exit_codes::RUNNER),
        }
    }

    /// What the user can do about it, printed after the error.
    pub fn hint(&self) -> Option<String> {
        match self {
            Error::Config(_) => Some(
                "the configuration reference is the user guide's page docs/src/configuration.md"
                    .into(),
            ),
            Error::NothingToGate => Some("see 'gate --help'".into()),
            _ => None,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
