//! The history store's error: which store, what it was doing, and the cause — shared by both
//! stores so a command reports either the same way.

pub(super) type Source = Box<dyn std::error::Error + Send + Sync>;

/// The history store could not be used: unreachable, locked past the wait, or of a schema
/// this gate does not know.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{store}: cannot open the history store")]
    Open {
        store: String,
        #[source]
        source: Source,
    },
    #[error("{store}: {what}")]
    Query {
        store: String,
        what: String,
        #[source]
        source: Source,
    },
    #[error(
        "{store}: the history store has schema version {found}, newer than this gate's {known}; upgrade gate (the store is left untouched)"
    )]
    Newer {
        store: String,
        found: i64,
        known: i64,
    },
    #[error("`{0}`: not a store URL gate can use (`postgres://…`, `sqlite:PATH` or a file path)")]
    Url(String),
}

impl StoreError {
    /// The error and its causes on one line.
    pub(crate) fn one_line(&self) -> String {
        let mut line = self.to_string();
        let mut source = std::error::Error::source(self);
        while let Some(cause) = source {
            line.push_str(&format!(": {cause}"));
            source = cause.source();
        }
        line
    }
}

/// An error of `store` while doing `what`.
pub(super) fn fail<E: std::error::Error + Send + Sync + 'static>(
    store: &str,
    what: &str,
) -> impl FnOnce(E) -> StoreError + use<E> {
    let (store, what) = (store.to_string(), what.to_string());
    move |source| StoreError::Query {
        store,
        what,
        source: Box::new(source),
    }
}
