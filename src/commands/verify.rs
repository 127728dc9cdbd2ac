//! `gate verify RANGE`: the gate for ship/deploy scripts and CI — the `verify` steps, no colour,
//! and a JSON receipt of what was gated and run.

use crate::error::{Error, Result};
use crate::pipeline::{self, Caller, Options, Target};
use crate::repo::{self, range};
use crate::report::styles::{ColorChoice, Styles};
use crate::run::shard::Shard;
use std::path::Path;

/// What `gate verify` was given beyond its range.
pub(super) struct Args<'a> {
    pub receipt: Option<&'a Path>,
    pub json: bool,
    pub citation: Option<String>,
    pub recommendations: Option<&'a Path>,
    pub runner_args: &'a [String],
    pub legs: &'a crate::cli::LegArgs,
}

pub(super) fn run(dir: &Path, spec: &str, args: Args<'_>) -> Result<u8> {
    let Args {
        receipt,
        json,
        citation,
        recommendations,
        runner_args,
        legs,
    } = args;
    let shard = legs.shard.as_deref().map(Shard::parse).transpose()?;
    let repo = repo::open(dir)?;
    let citation = citation.or_else(super::env_decision);
    let styles = Styles::new(ColorChoice::Never);
    let retry = format!(
        "gate verify {spec} --affected-decision \"<citation>\"   (or GATE_DECISION=\"<citation>\")"
    );
    let opts = Options {
        citation: citation.as_deref(),
        json,
        keep_json: receipt.is_some(),
        runner_args,
        recommendations,
        shard,
        decision: legs.decision.as_deref(),
        by_test: legs.shard_by == crate::cli::ShardBy::Test,
        db: legs.db.as_deref(),
        leg: legs.leg.as_deref(),
        ..Options::new(Caller::Verify, &styles, retry)
    };
    let gated = pipeline::gate(
        &repo,
        Target::Ranges(vec![range::resolve(&repo, spec)?]),
        &opts,
    )?;
    if let Some(path) = receipt {
        std::fs::write(path, format!("{}\n", gated.json))
            .map_err(|e| Error::io(path, "cannot write the receipt", e))?;
    }
    Ok(gated.code)
}
