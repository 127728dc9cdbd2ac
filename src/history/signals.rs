//! History as selection signals: tests failing on the default branch now, and tests that
//! failed in recorded runs whose change touched a file this change touches. They only ever
//! add tests, each with a reason of its own kind, and only to a run that selects a subset.
//! Selection never depends on the store: no store yet, or one that cannot be read, adds
//! nothing and says why.

use super::{Location, Store};

/// What every reason history adds starts with.
pub(crate) const REASON: &str = "history: ";
use crate::project::Project;
use crate::verdict::{Decision, RunVerdict};

/// Adds the history's tests to `decided` for `changed` paths, from the store `db` (`--db`)
/// names, else `GATE_DB`'s or `[history] url`'s; returns notes for the report (a store that
/// could not be read).
pub(crate) fn add(
    state: &std::path::Path,
    db: Option<&str>,
    project: &Project,
    changed: &[&str],
    decided: &mut Decision,
) -> Vec<String> {
    let history = &project.config.history;
    if !history.signals || !matches!(decided.verdict, RunVerdict::Bounded | RunVerdict::NamedFull) {
        return Vec::new();
    }
    let at = match super::location(db, history.url.as_deref(), state) {
        Ok(at) => at,
        Err(e) => return vec![format!("history signals skipped: {e}")],
    };
    // No store yet: nothing was recorded, and reading must not create one.
    if let Location::Sqlite(path) = &at
        && !path.is_file()
    {
        return Vec::new();
    }
    let found = Store::open(&at).and_then(|mut store| {
        let failing = store.failing_on_main(history.window_days)?;
        let mut co = Vec::new();
        for path in changed {
            for (unit, run) in store.co_failed(path, history.window_days)? {
                co.push((
                    unit,
                    format!("{REASON}failed with a change to {path} in run {run}"),
                ));
            }
        }
        Ok((failing, co))
    });
    let (failing, co) = match found {
        Ok(found) => found,
        Err(e) => {
            return vec![format!(
                "history signals skipped (selection is unchanged): {}",
                e.one_line()
            )];
        }
    };
    let mut add = |unit: &str, why: String| {
        // Only tests of this tree: history names tests that may be gone.
        if project.tests.contains(unit) {
            let reasons = decided.selected.entry(unit.to_string()).or_default();
            if !reasons.contains(&why) {
                reasons.push(why);
            }
        }
    };
    for f in failing {
        if let Some(file) = &f.file {
            add(
                file,
                format!(
                    "{REASON}failing on main since {} ({} main run{} on {})",
                    &f.since[..12.min(f.since.len())],
                    f.runs,
                    if f.runs == 1 { "" } else { "s" },
                    f.leg
                ),
            );
        }
    }
    for (unit, why) in co {
        add(&unit, why);
    }
    Vec::new()
}
