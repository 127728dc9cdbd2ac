//! The store a command reads, found as the repository's HEAD configures it.

use crate::config::Config;
use crate::error::{Error, Result};
use crate::history::{self, Store};
use crate::repo;

/// The store a history command reads, and the configuration it is read under: HEAD's
/// `.gate.toml` (`[history] url`, `window`, `known_flaky`), else the defaults.
pub(crate) fn open_store(repo: &git2::Repository, db: Option<&str>) -> Result<(Store, Config)> {
    let config = match repo.head().ok().and_then(|h| h.target()) {
        Some(head) => crate::config::at_commit(repo, head)?,
        None => Config::defaults(),
    };
    let at = history::location(db, config.history.url.as_deref(), &repo::state_dir(repo))?;
    Ok((Store::open(&at)?, config))
}

/// `run`, else the latest recorded run; none recorded is an error naming the store, never an
/// empty answer.
pub(crate) fn run_or_latest(store: &mut Store, run: Option<&str>) -> Result<String> {
    match run {
        Some(r) => Ok(r.to_string()),
        None => store.latest_run()?.ok_or_else(|| {
            Error::Usage(format!(
                "nothing is recorded in {} yet: `gate record` a run first",
                store.name()
            ))
        }),
    }
}

/// The store `project`'s configuration names (`db` overrides it).
pub(crate) fn open_for(
    repo: &git2::Repository,
    project: &crate::project::Project,
    db: Option<&str>,
) -> Result<Store> {
    let at = history::location(
        db,
        project.config.history.url.as_deref(),
        &repo::state_dir(repo),
    )?;
    Ok(Store::open(&at)?)
}
