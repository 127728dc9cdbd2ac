//! `gate --affected RANGE | --since REV | --files PATH…`: the arguments as a target and
//! options, then the pipeline.

use crate::cli::GateArgs;
use crate::error::{Error, Result};
use crate::history::recorder::RecordTo;
use crate::pipeline::{self, Caller, Options, Target};
use crate::repo::{self, range};
use crate::report::styles::Styles;
use std::path::Path;

pub(super) fn run(dir: &Path, args: &GateArgs, styles: &Styles) -> Result<u8> {
    // Said before the repository is opened: `gate` alone must explain itself anywhere.
    if args.affected.is_none() && args.since.is_none() && args.files.is_empty() {
        return Err(Error::NothingToGate);
    }
    let legs = &args.legs;
    let shard = legs
        .shard
        .as_deref()
        .map(crate::run::shard::Shard::parse)
        .transpose()?;
    let repo = repo::open(dir)?;
    let (target, retry) = if let Some(spec) = &args.affected {
        (
            Target::Ranges(vec![range::resolve(&repo, spec)?]),
            format!("gate --affected {spec} --affected-decision \"<citation>\""),
        )
    } else if let Some(rev) = &args.since {
        (
            Target::Since(rev.clone()),
            format!("gate --since {rev} --affected-decision \"<citation>\""),
        )
    } else {
        let files = args
            .files
            .iter()
            .map(|f| crate::repo::pathspec::resolve(&repo, dir, f))
            .collect::<Result<Vec<_>>>()?;
        (
            Target::Files(files),
            format!(
                "gate --files {} --affected-decision \"<citation>\"",
                args.files.join(" ")
            ),
        )
    };
    let opts = Options {
        citation: args.affected_decision.as_deref(),
        list: args.list,
        json: args.json,
        verbose: args.verbose,
        record: args.record.then(|| RecordTo {
            leg: legs.leg.clone().unwrap_or_else(|| "default".into()),
            shard,
            db: legs.db.clone(),
        }),
        reuse: !args.no_reuse,
        decision_out: args.decision_out.as_deref(),
        runner_args: &args.runner_args,
        recommendations: args.recommendations.as_deref(),
        shard,
        decision: legs.decision.as_deref(),
        by_test: legs.shard_by == crate::cli::ShardBy::Test,
        db: legs.db.as_deref(),
        leg: legs.leg.as_deref(),
        ..Options::new(Caller::Command, styles, retry)
    };
    pipeline::gate(&repo, target, &opts).map(|g| g.code)
}
