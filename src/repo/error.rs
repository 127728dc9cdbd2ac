//! The range's boundary error, a leaf: `crate::error` gathers it without the repository's
//! modules being imported back.

/// A range the user gave that cannot be read: a usage error (exit 3), never a refusal.
#[derive(Debug, thiserror::Error)]
pub enum RangeError {
    #[error("the range is empty: give `A...B`, `A..B` or a revision")]
    Empty,
    #[error("unknown revision `{rev}`")]
    Unknown {
        rev: String,
        #[source]
        source: git2::Error,
    },
    #[error("`{rev}` does not name a commit")]
    NotACommit {
        rev: String,
        #[source]
        source: git2::Error,
    },
}
