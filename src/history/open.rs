//! The store a command reads, found as the repository's HEAD configures it.

use crate::config::Config;
use crate::error::{Error, Result};
use crate::history::{self, Store, triage::LegInfo};
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

/// A recorded run as the commands that read one back see it (`gate triage`, `gate report`).
pub(crate) struct RecordedRun {
    pub store: Store,
    /// HEAD's configuration: the window and `known_flaky` the run is triaged under.
    pub config: Config,
    pub run: String,
    /// Never empty.
    pub legs: Vec<LegInfo>,
}

/// `run` (else the latest) in the store HEAD's configuration names (`db` overrides it); a run
/// id nothing is recorded under is an error naming the store, never an empty answer.
pub(crate) fn recorded_run(
    repo: &git2::Repository,
    db: Option<&str>,
    run: Option<&str>,
) -> Result<RecordedRun> {
    let (mut store, config) = open_store(repo, db)?;
    let run = run_or_latest(&mut store, run)?;
    let legs = store.legs_of_run(&run)?;
    if legs.is_empty() {
        return Err(Error::Usage(format!(
            "run {}: nothing recorded under that id in {}",
            crate::terminal::shown(&run),
            store.name()
        )));
    }
    Ok(RecordedRun {
        store,
        config,
        run,
        legs,
    })
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
