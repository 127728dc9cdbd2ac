//! `gate record`: one leg's results (JUnit XML, `go test -json`) into the history store, each
//! test under the id the selection uses. Every input is read and checked before the store is
//! opened: a malformed file records nothing.

use crate::error::{Error, Result};
use crate::exit_codes;
use crate::history::provenance::{attempt, branch_of, environment, is_mainline, run_id};
use crate::history::recorder::{change_of, store_leg};
use crate::history::{Change, Leg};
use crate::pipeline::{self, Target};
use crate::project::Project;
use crate::repo::{self, snapshot::Snapshot};
use crate::run::shard::Shard;
use std::path::{Path, PathBuf};

pub(super) struct Args<'a> {
    pub junit: &'a [PathBuf],
    pub go_json: &'a [PathBuf],
    pub leg: String,
    pub shard: Option<&'a str>,
    pub run: Option<String>,
    pub attempt: Option<u32>,
    pub commit: &'a str,
    pub branch: Option<String>,
    pub base: Option<&'a str>,
    pub db: Option<&'a str>,
}

pub(super) fn run(dir: &Path, args: &Args<'_>) -> Result<u8> {
    if args.junit.is_empty() && args.go_json.is_empty() {
        return Err(Error::Usage(
            "gate record: give --junit FILE… or --go-json FILE… (the results to record)".into(),
        ));
    }
    let shard = args.shard.map(Shard::parse).transpose()?;
    // The interpreter and toolchain versions cost a process each (a pyenv shim is 0.2 s): asked
    // while the inputs are read.
    let probe = {
        let (junit, go_json, leg) = (
            !args.junit.is_empty(),
            !args.go_json.is_empty(),
            args.leg.clone(),
        );
        std::thread::spawn(move || environment(junit, go_json, &leg))
    };
    let repo = repo::open(dir)?;
    let commit = repo::range::commit(&repo, args.commit)?;
    let branch = args.branch.clone().or_else(|| branch_of(&repo));
    let main = repo::range::default_branch(&repo);
    let mainline = is_mainline(branch.as_deref(), main.as_ref());
    let base = match args.base {
        Some(rev) => Some(repo::range::commit(&repo, rev)?),
        None if mainline => None,
        None => main
            .as_ref()
            .and_then(|m| repo.merge_base(commit, m.commit).ok())
            .filter(|b| *b != commit),
    };
    // The change is gated as `gate --affected base...commit` would: the same verdicts and
    // selection, so triage knows which failures the change can explain.
    let (project, change) = match base {
        Some(base) => {
            let range = repo::range::resolve(&repo, &format!("{base}...{commit}"))?;
            let analyzed = pipeline::analyze(&repo, Target::Ranges(vec![range]))?;
            let change = change_of(&analyzed.decided);
            (analyzed.project, change)
        }
        None => {
            let snapshot = Snapshot::of_commit(&repo, commit)?;
            let project = Project::load(&repo, &snapshot, &[], &mut crate::terminal::warn)?;
            (project, Change::default())
        }
    };
    let results = crate::run::reports::read_results(args.junit, args.go_json, &project)?;
    crate::timings::mark("inputs read");
    let (run, generated) = run_id(args.run.clone());
    let env = probe
        .join()
        .map_err(|_| Error::Internal("the environment probe panicked".into()))?;
    let leg = Leg {
        run,
        attempt: attempt(args.attempt)?,
        leg: args.leg.clone(),
        shard,
        commit: commit.to_string(),
        branch,
        mainline,
        base: base.map(|b| b.to_string()),
        source: match (args.junit.is_empty(), args.go_json.is_empty()) {
            (false, false) => "junit+go-json",
            (false, true) => "junit",
            _ => "go-json",
        }
        .into(),
        inputs: crate::fingerprint::run_inputs(&project.config, &env),
        env,
        // The results ran on another machine: this one's fingerprints are not theirs.
        fingerprints: std::collections::BTreeMap::new(),
    };
    if generated {
        say!(
            "gate record: run {} (no CI run id in the environment: pass --run {} to the steps that follow)",
            leg.run,
            leg.run
        );
    }
    if base.is_none() && !mainline && main.is_none() {
        crate::terminal::warn(format!(
            "no default branch found to take {}'s change against (origin/HEAD, main, master): its change is not stored; pass --base REV",
            &leg.commit[..12]
        ));
    }
    store_leg(
        &repo,
        &project.config.history,
        args.db,
        &leg,
        &results,
        &change,
        &mut |line| crate::terminal::say_line(format_args!("{line}")),
    )?;
    Ok(exit_codes::OK)
}
