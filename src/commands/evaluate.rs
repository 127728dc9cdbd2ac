//! `gate evaluate [--since 30d]`: the figures of `crate::proof::evaluate` over the shadow compares
//! the store recorded in the window, each read with the decision it judged.

use crate::error::Result;
use crate::exit_codes;
use crate::repo;
use std::path::Path;

pub(super) fn run(dir: &Path, since: &str, json: bool, db: Option<&str>) -> Result<u8> {
    let repo = repo::open(dir)?;
    let recorded = crate::proof::recorded::recorded(&repo, since, db)?;
    let mut e = crate::proof::evaluate::evaluate(&recorded.compares);
    e.untrusted = recorded.untrusted;
    e.graph_completeness = recorded.completeness;
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&e).expect("an evaluation serializes")
        );
    } else {
        say!("{}", crate::proof::evaluate::human(&e).trim_end());
    }
    Ok(exit_codes::OK)
}
