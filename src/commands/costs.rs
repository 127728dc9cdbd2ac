//! `gate costs --scenario FILE`: seed 001's cost model (`crate::costs`) over a scenario.

use crate::error::{Error, Result};
use crate::exit_codes;
use std::path::Path;

pub(super) fn run(scenario: &Path, json: bool, markdown: Option<&Path>) -> Result<u8> {
    let text = std::fs::read_to_string(scenario)
        .map_err(|e| Error::io(scenario, "cannot read the scenario", e))?;
    let bad = |message: String| Error::Input {
        path: scenario.to_path_buf(),
        message,
    };
    let parsed: crate::costs::Scenario =
        serde_json::from_str(&text).map_err(|e| bad(format!("not a scenario: {e}")))?;
    crate::costs::check(&parsed).map_err(bad)?;
    let report = crate::costs::costs(&parsed);
    let table = crate::costs::markdown(&report);
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
        print!("{table}");
    }
    Ok(exit_codes::OK)
}
