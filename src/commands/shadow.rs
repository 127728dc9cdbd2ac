//! `gate shadow [RANGE]`: the whole suite runs through the gate pipeline (the decision frozen
//! for this commit and base, else one frozen now, before the suite runs), and every failing
//! test file or Go package is judged against that decision (`crate::proof::shadow`). The run and the
//! judgements are recorded in the history store; a run or report with no result judged nothing,
//! which is recorded too and exits `NOTHING_JUDGED`, never as a pass.

use crate::cli::ShadowArgs;
use crate::error::{Error, Result};
use crate::exit_codes;
use crate::history::recorder::RecordTo;
use crate::history::{self};
use crate::pipeline::{self, Caller, Options, Shadow, Target};
use crate::proof::frozen::Parts;
use crate::repo::{self, range};
use crate::report::styles::Styles;
use crate::run::events::Collected;
use std::path::Path;

pub(super) fn run(dir: &Path, args: &ShadowArgs, styles: &Styles) -> Result<u8> {
    let repo = repo::open(dir)?;
    let spec = match args.range.as_deref() {
        Some(s) => s.to_string(),
        None => match range::default_branch(&repo) {
            Some(main) => format!("{}...HEAD", main.name),
            None => {
                return Err(Error::Usage(
                    "gate shadow: no default branch to compare with: give RANGE (`origin/main...HEAD`)"
                        .into(),
                ));
            }
        },
    };
    let target = Target::Ranges(vec![range::resolve(&repo, &spec)?]);
    if !args.junit.is_empty() || !args.go_json.is_empty() {
        return ingest(&repo, target, args);
    }
    let opts = Options {
        json: args.json,
        record: Some(RecordTo {
            leg: args.leg.to_string(),
            shard: None,
            db: args.db.clone(),
        }),
        shadow: Shadow::Asked,
        ..Options::new(Caller::Command, styles, format!("gate shadow {spec}"))
    };
    pipeline::gate(&repo, target, &opts).map(|g| g.code)
}

/// A whole-suite run made elsewhere (its JUnit or `go test -json` files), judged against the
/// decision frozen for the range's commit and base — else one frozen now from the same
/// inputs, with no ledger reuse (no gate ran, so none reused anything). The compare is
/// recorded; the run's results are `gate record`'s to store (the same files).
fn ingest(repo: &git2::Repository, target: Target, args: &ShadowArgs) -> Result<u8> {
    let started = std::time::Instant::now();
    let pipeline::Analyzed {
        input,
        project,
        mut decided,
    } = pipeline::analyze(repo, target)?;
    let state = repo::state_dir(repo);
    for note in history::signals::add(
        &state,
        args.db.as_deref(),
        &project,
        &input.changed(),
        &mut decided,
    ) {
        crate::terminal::warn(note);
    }
    let root = repo::workdir(repo)?;
    let parts = Parts {
        repo,
        root: &root,
        input: &input,
        project: &project,
        decided: &decided,
        ledger: &crate::ledger::Ledger::default(),
        split: None,
    };
    let db = args.db.as_deref();
    let memo = &mut crate::fingerprint::Memo::default();
    let frozen = crate::proof::frozen::decide(&parts, memo, db, true, None)?;
    let select_ms = started.elapsed().as_millis() as u64;
    let results = crate::run::reports::read_results(&args.junit, &args.go_json, &project)?;
    let collected = Collected {
        tests: results,
        ..Collected::default()
    };
    let failed = crate::proof::shadow::by_unit(&collected.tests)
        .values()
        .any(|u| !u.failing.is_empty());
    let code = if failed {
        exit_codes::TESTS_FAILED
    } else {
        exit_codes::OK
    };
    let (code, judged) = crate::proof::shadow::compare(
        repo,
        &project,
        &input,
        (&frozen, &collected, true, select_ms),
        db,
        (code, Shadow::Asked),
    )?;
    if args.json {
        let doc = serde_json::json!({
            "version": crate::report::json::REPORT_VERSION,
            "frozen_decision": frozen.0,
            "shadow": judged,
            "exit_code": code,
        });
        let doc = crate::terminal::sorted(doc);
        println!("{doc:#}");
    }
    Ok(code)
}
