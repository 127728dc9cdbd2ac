//! `gate rollup`: the per-test rollup recomputed over the window, on every leg recorded in it;
//! `gate ledger prune`: the ledger bounded to the window.

use crate::error::Result;
use crate::exit_codes;
use crate::repo;
use std::path::Path;

pub(super) fn run(dir: &Path, window_days: Option<u64>, db: Option<&str>) -> Result<u8> {
    let repo = repo::open(dir)?;
    let (mut store, config) = crate::history::open_store(&repo, db)?;
    let days = window_days
        .filter(|d| *d > 0)
        .unwrap_or(config.history.window_days);
    let n = store.rollup_all(days)?;
    say!(
        "gate rollup: {n} (test, leg) pair(s) over {days} days ({})",
        store.name()
    );
    Ok(exit_codes::OK)
}

pub(super) fn prune(dir: &Path, db: Option<&str>) -> Result<u8> {
    let repo = repo::open(dir)?;
    let (mut store, config) = crate::history::open_store(&repo, db)?;
    let days = config.history.window_days;
    let (before, after) = store.prune(days)?;
    say!(
        "gate ledger prune: {before} entr{} → {after}, within {days} days ({})",
        if before == 1 { "y" } else { "ies" },
        store.name()
    );
    Ok(exit_codes::OK)
}
