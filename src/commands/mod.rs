//! Thin orchestration: each subcommand strings the pipeline stages together.

mod audit;
mod costs;
mod evaluate;
mod explain;
mod gate;
mod generate;
mod history;
mod hook;
mod install;
mod observations;
mod plan;
mod record;
mod report;
mod rollup;
mod scan_check;
mod shadow;
mod shards;
mod triage;
mod verify;

use crate::cli::{Cli, HookKind, LedgerAction, Sub};
use crate::error::Result;
use crate::report::styles::Styles;

pub use crate::pipeline::leftovers;

pub fn dispatch(cli: Cli) -> Result<u8> {
    let dir = cli
        .dir
        .clone()
        .unwrap_or_else(|| std::path::PathBuf::from("."));
    let styles = Styles::new(cli.color);
    match cli.command {
        Some(Sub::Plan { rev, out }) => plan::run(&dir, rev.as_deref(), out.as_deref()),
        Some(Sub::Explain {
            path,
            rev,
            fingerprint,
            json,
        }) => explain::run(
            &dir,
            &path,
            rev.as_deref(),
            explain::Show { fingerprint, json },
            &styles,
        ),
        Some(sub @ Sub::Verify { .. }) => verify(&dir, sub),
        Some(
            sub @ (Sub::Shadow(_)
            | Sub::Evaluate { .. }
            | Sub::Costs { .. }
            | Sub::Export { .. }
            | Sub::Import { .. }),
        ) => proof(&dir, sub, &styles),
        Some(Sub::Audit {
            tests,
            jobs,
            json,
            out,
            fresh,
            db,
        }) => audit::run(
            &dir,
            &audit::Args {
                tests: tests.as_deref(),
                jobs,
                json,
                out: out.as_deref(),
                fresh,
                db: db.as_deref(),
            },
        ),
        Some(Sub::Record {
            junit,
            go_json,
            leg,
            shard,
            run,
            attempt,
            commit,
            branch,
            base,
            db,
        }) => record::run(
            &dir,
            &record::Args {
                junit: &junit,
                go_json: &go_json,
                leg,
                shard: shard.as_deref(),
                run,
                attempt,
                commit: &commit,
                branch,
                base: base.as_deref(),
                db: db.as_deref(),
            },
        ),
        Some(Sub::Rollup { window, db }) => {
            rollup::run(&dir, window.map(|w| w.as_secs() / 86_400), db.as_deref())
        }
        Some(Sub::Triage { run, json, db }) => {
            triage::run(&dir, run.as_deref(), json, db.as_deref())
        }
        Some(sub @ Sub::Report { .. }) => report::dispatch(&dir, sub),
        Some(Sub::Ledger {
            action: LedgerAction::Prune { db },
        }) => rollup::prune(&dir, db.as_deref()),
        Some(sub @ Sub::Shards { .. }) => shards(&dir, sub),
        Some(Sub::ScanCheck { paths }) => scan_check::run(&paths),
        Some(Sub::Decision { id, db }) => history::decision(&dir, &id, db.as_deref()),
        Some(Sub::History {
            test,
            limit,
            json,
            db,
        }) => history::run(&dir, &test, limit, json, db.as_deref()),
        Some(Sub::Hook {
            hook: HookKind::PrePush { remote, .. },
        }) => hook::pre_push(&dir, &remote, &styles),
        Some(Sub::InstallHook { repo, chain }) => install::install(&repo.unwrap_or(dir), chain),
        Some(Sub::UninstallHook { repo }) => install::uninstall(&repo.unwrap_or(dir)),
        Some(Sub::Generate { what }) => generate::run(&what),
        None => gate::run(&dir, &cli.gate, &styles),
    }
}

/// `gate verify`'s arguments, to its command.
fn verify(dir: &std::path::Path, sub: Sub) -> Result<u8> {
    let Sub::Verify {
        range,
        receipt,
        json,
        affected_decision,
        recommendations,
        legs,
        runner_args,
    } = sub
    else {
        return Err(crate::error::Error::Internal(format!(
            "{sub:?} is not `gate verify`"
        )));
    };
    let args = verify::Args {
        receipt: receipt.as_deref(),
        json,
        citation: affected_decision,
        recommendations: recommendations.as_deref(),
        runner_args: &runner_args,
        legs: &legs,
    };
    verify::run(dir, &range, args)
}

/// `gate shards --suggest`'s arguments, to its command.
fn shards(dir: &std::path::Path, sub: Sub) -> Result<u8> {
    let Sub::Shards {
        suggest: _,
        fixed_cost,
        leg,
        max,
        json,
        db,
    } = sub
    else {
        return Err(crate::error::Error::Internal(format!(
            "{sub:?} is not `gate shards`"
        )));
    };
    let args = shards::Args {
        leg: &leg,
        fixed_cost: fixed_cost.into(),
        max,
        json,
        db: db.as_deref(),
    };
    shards::suggest(dir, &args)
}

/// The proof loop's commands: shadow runs, their evaluation and costs, observation exports.
fn proof(dir: &std::path::Path, sub: Sub, styles: &Styles) -> Result<u8> {
    match sub {
        Sub::Shadow(args) => shadow::run(dir, &args, styles),
        Sub::Evaluate { since, json, db } => evaluate::run(dir, &since, json, db.as_deref()),
        Sub::Costs {
            scenario,
            from_history,
            since,
            scenario_out,
            db,
            json,
            markdown,
        } => {
            let from = match &scenario {
                Some(file) if !from_history => costs::From::File(file),
                _ => costs::From::History {
                    dir,
                    since: &since,
                    db: db.as_deref(),
                    out: scenario_out.as_deref(),
                },
            };
            costs::run(&from, json, markdown.as_deref())
        }
        Sub::Export {
            observations: out,
            run,
            max_bytes,
            db,
        } => observations::export(
            dir,
            &observations::ExportArgs {
                out: &out,
                run: run.as_deref(),
                max_bytes,
                db: db.as_deref(),
            },
        ),
        Sub::Import { observations, db } => observations::import(dir, &observations, db.as_deref()),
        other => Err(crate::error::Error::Internal(format!(
            "{other:?} is not a command of the proof loop"
        ))),
    }
}

/// A decision cited through the environment, for callers that take no flags (a push).
fn env_decision() -> Option<String> {
    std::env::var("GATE_DECISION")
        .ok()
        .filter(|c| !c.trim().is_empty())
}

/// Warnings go to stderr, one line each, and never stop the run.
fn warn(line: String) {
    crate::terminal::warn(line);
}
