//! `gate costs --scenario FILE`: seed 001's cost model (`crate::proof::costs`) over a scenario.

use crate::error::{Error, Result};
use crate::exit_codes;
use std::path::Path;

/// Where the scenario comes from.
pub(super) enum From<'a> {
    /// A scenario file in seed 001's format.
    File(&'a Path),
    /// The shadow compares recorded in a window (`--from-history [--since]`), the scenario
    /// built from them written to `out` when asked.
    History {
        dir: &'a Path,
        since: &'a str,
        db: Option<&'a str>,
        out: Option<&'a Path>,
    },
}

pub(super) fn run(from: &From<'_>, json: bool, markdown: Option<&Path>) -> Result<u8> {
    let parsed = match *from {
        From::File(scenario) => read(scenario)?,
        From::History {
            dir,
            since,
            db,
            out,
        } => {
            let repo = crate::repo::open(dir)?;
            let crate::proof::recorded::Recorded {
                compares, config, ..
            } = crate::proof::recorded::recorded(&repo, since, db)?;
            let missing = |known: fn(&crate::proof::evaluate::Compare) -> bool, what: &str| {
                let n = compares.iter().filter(|c| !known(c)).count();
                if n > 0 {
                    super::warn(format!(
                        "{n} shadow compare(s) with no {what} recorded: theirs is the median of the others"
                    ));
                }
            };
            missing(|c| c.select_ms.is_some(), "selection time");
            missing(
                |c| c.record_ms.is_some(),
                "recording time (no leg recorded at the commit)",
            );
            let scenario = crate::proof::costs::from_compares(&compares, config.audit_rate);
            if let Some(out) = out {
                let text = serde_json::to_string_pretty(&scenario).expect("a scenario serializes");
                crate::proof::frozen::write_whole(
                    out,
                    format!("{text}\n").as_bytes(),
                    "the scenario",
                )?;
            }
            scenario
        }
    };
    let report = crate::proof::costs::costs(&parsed);
    let table = crate::proof::costs::markdown(&report);
    if let Some(path) = markdown {
        std::fs::write(path, &table)
            .map_err(|e| Error::io(path, "cannot write the Markdown report", e))?;
    }
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).expect("a report serializes")
        );
    } else {
        say!("{}", table.trim_end());
    }
    Ok(exit_codes::OK)
}

fn read(scenario: &Path) -> Result<crate::proof::costs::Scenario> {
    let text = std::fs::read_to_string(scenario)
        .map_err(|e| Error::io(scenario, "cannot read the scenario", e))?;
    let bad = |message: String| Error::Input {
        path: scenario.to_path_buf(),
        message,
    };
    let parsed: crate::proof::costs::Scenario =
        serde_json::from_str(&text).map_err(|e| bad(format!("not a scenario: {e}")))?;
    crate::proof::costs::check(&parsed).map_err(bad)?;
    Ok(parsed)
}
