//! A selection split over CI legs (`--shard K/N`): the split a leg runs its shard of is the
//! one frozen into the decision — the one `--decision ID` names, else the one frozen for the
//! same commit, base and configuration, else made now from the durations recorded before the
//! commit — so every leg runs the same split however many runs are being recorded meanwhile.

use super::Inputs;
use super::Options;
use crate::error::{Error, Result};
use crate::history::Store;
use crate::ledger::Ledger;
use crate::run::shard::{self, Shard, Sharded, Split};
use std::path::Path;

/// The split of `at`'s selection into `opts.shard`'s N shards, and this leg's part; none
/// without `--shard`.
pub(super) fn split(
    at: &Inputs<'_>,
    opts: &Options<'_>,
    ledger: &Ledger,
    memo: &mut crate::fingerprint::Memo,
    root: &Path,
) -> Result<Option<Sharded>> {
    let Some(shard) = opts.shard else {
        return Ok(None);
    };
    let units = crate::run::select::units(at.decided, at.project, opts.citation.is_some());
    let by = if opts.by_test { "test" } else { "file" };
    let tests = if opts.by_test {
        tests_of(at, root, &units)?
    } else {
        Vec::new()
    };
    let units: Vec<&str> = if opts.by_test {
        tests.iter().map(String::as_str).collect()
    } else {
        units
    };
    let mut store = crate::history::open_for(at.repo, at.project, opts.db)?;
    let (split, decision) = match opts.decision {
        Some(id) => {
            let (split, json) = named(&mut store, id, at, (shard, by))?;
            (split, Some((id.to_string(), json)))
        }
        None => match frozen_for(&mut store, at, opts, (shard, by), memo, root)? {
            Some((split, id, json)) => (split, Some((id, json))),
            None => {
                warn_if_unshared(at, opts);
                (
                    made(&mut store, at, opts, &units, ledger, shard, root)?,
                    None,
                )
            }
        },
    };
    let outside = split.outside(&units);
    if !outside.is_empty() {
        crate::terminal::warn(format!(
            "{} selected test unit(s) are not in the frozen split (selected after it was frozen, e.g. newly failing on main): this leg runs them, as does every leg that selects them",
            outside.len()
        ));
    }
    let own = split.shard(shard.index, &units);
    Ok(Some(Sharded {
        shard,
        split,
        own,
        decision,
    }))
}

/// In CI, a leg that makes its own split from a store on its own machine: legs on other
/// machines read other figures and may split otherwise — a unit in no leg's shard. Said, with
/// the two ways to share one split.
fn warn_if_unshared(at: &Inputs<'_>, opts: &Options<'_>) {
    let (_, outside_ci) = crate::history::provenance::run_id(None);
    let state = crate::repo::state_dir(at.repo);
    let configured = at.project.config.history.url.as_deref();
    let local = matches!(
        crate::history::location(opts.db, configured, &state),
        Ok(crate::history::Location::Sqlite(_))
    );
    if !outside_ci && local {
        crate::terminal::warn(
            "this leg splits the selection from a store on its own machine: legs on other machines may split it otherwise; give every leg one decision (--decision ID from a select job) or one shared store (--db postgres://…)".to_string(),
        );
    }
}

/// The split of the decision `id`, checked: kept whole in the store, frozen for this commit
/// and base, split into N shards.
fn named(
    store: &mut Store,
    id: &str,
    at: &Inputs<'_>,
    (shard, by): (Shard, &str),
) -> Result<(Split, String)> {
    let json = store.decision(id)?;
    // The id is the user's text: every message shows it escaped.
    let (raw, id) = (id, crate::terminal::shown(id));
    let json = json.ok_or_else(|| {
        Error::Usage(format!(
            "--decision {id}: the store holds no decision with this id (freeze it first: gate --affected RANGE --shard 1/{} --list --json, with the same --db)",
            shard.of
        ))
    })?;
    crate::proof::frozen::verify(raw, &json)
        .map_err(|why| Error::Usage(format!("--decision {id} cannot be used: {why}")))?;
    let body: Body = serde_json::from_str(&json)
        .map_err(|e| Error::Usage(format!("--decision {id} cannot be read: {e}")))?;
    let head = at.input.head.map(|h| h.to_string());
    let base = at.input.bases.first().map(ToString::to_string);
    if body.commit != head || body.base != base {
        return Err(Error::Usage(format!(
            "--decision {id} was frozen for commit {} against {}, not for this gate's commit {} against {}",
            shown(&body.commit),
            shown(&body.base),
            shown(&head),
            shown(&base)
        )));
    }
    match body.split {
        Some(split) if split.by != by => Err(Error::Usage(format!(
            "--decision {id} splits by {}, not by {by}: give --shard-by {}",
            split.by, split.by
        ))),
        Some(split) if split.shards == shard.of => match split.check() {
            Ok(()) => Ok((split, json)),
            Err(why) => Err(Error::Usage(format!(
                "--decision {id} cannot be used: {why}"
            ))),
        },
        Some(split) => Err(Error::Usage(format!(
            "--decision {id} splits the selection into {} shards, not {}: give --shard K/{}",
            split.shards, shard.of, split.shards
        ))),
        None => Err(Error::Usage(format!(
            "--decision {id} was frozen without a split: freeze one with --shard 1/{}",
            shard.of
        ))),
    }
}

fn shown(v: &Option<String>) -> crate::terminal::Shown<'_> {
    crate::terminal::shown(v.as_deref().unwrap_or("none"))
}

/// What a kept decision says that a leg checks before using its split.
#[derive(serde::Deserialize)]
struct Body {
    commit: Option<String>,
    base: Option<String>,
    config_digest: String,
    split: Option<Split>,
}

/// The split of the first decision frozen for this commit and base that splits into N
/// shards under this configuration and is kept whole — the one the first legs of the run
/// used, whatever was frozen for the commit since: its split, id and JSON.
fn frozen_for(
    store: &mut Store,
    at: &Inputs<'_>,
    opts: &Options<'_>,
    (shard, by): (Shard, &str),
    memo: &mut crate::fingerprint::Memo,
    root: &Path,
) -> Result<Option<(Split, String, String)>> {
    let Some(head) = at.input.head else {
        return Ok(None);
    };
    let base = at.input.bases.first().map(ToString::to_string);
    let environment = opts.leg.unwrap_or("default");
    let scope = crate::fingerprint::Scope {
        repo: at.repo,
        snapshot: &at.input.snapshot,
        project: at.project,
        root,
    };
    let mut config = None;
    for (id, json) in store.decisions_for(&head.to_string(), base.as_deref())? {
        let Ok(body) = serde_json::from_str::<Body>(&json) else {
            continue;
        };
        // Another environment's split packs by other durations: its legs share it, this
        // environment's share their own.
        let Some(split) = body
            .split
            .filter(|s| s.shards == shard.of && s.by == by && s.environment == environment)
        else {
            continue;
        };
        if let Err(why) = split.check() {
            crate::terminal::warn(format!(
                "the decision {} in the store is not used: {}",
                crate::terminal::shown(&id),
                crate::terminal::shown(&why)
            ));
            continue;
        }
        let ours = config.get_or_insert_with(|| scope.identity(memo).config);
        if *ours != body.config_digest {
            continue;
        }
        if let Err(why) = crate::proof::frozen::verify(&id, &json) {
            crate::terminal::warn(format!("the decision {id} in the store is not used: {why}"));
            continue;
        }
        return Ok(Some((split, id, json)));
    }
    Ok(None)
}

/// A split made now: by the durations recorded in this leg's environment before the gated
/// commit was made — a record is stamped when it is made, so every leg of the commit, whenever
/// it starts and whatever is recorded meanwhile, reads the same ones (the working tree: before
/// the current ten minutes began); an unknown unit weighing the mean of the known, or its size
/// when none is known. The ledger's expected reuses weigh nothing only for a select job
/// (`--list`), the one that splits for every leg: legs that split for themselves see other
/// reuses as they record, and must agree.
fn made(
    store: &mut Store,
    at: &Inputs<'_>,
    opts: &Options<'_>,
    units: &[&str],
    ledger: &Ledger,
    shard: Shard,
    root: &Path,
) -> Result<Split> {
    let environment = opts.leg.unwrap_or("default");
    let before = match at.input.head.and_then(|h| at.repo.find_commit(h).ok()) {
        Some(commit) => commit.committer().when().seconds(),
        None => now() / BUCKET * BUCKET,
    };
    let none = std::collections::BTreeSet::new();
    let reused = if opts.list {
        ledger.reused_units()
    } else {
        none
    };
    let durations = store.unit_durations(environment, before, opts.by_test)?;
    let size = |unit: &str| size_of(at, root, unit);
    let inputs = shard::Inputs {
        units,
        reused: &reused,
        durations: &durations,
        size: &size,
        environment,
        recorded_before: before,
        by: if opts.by_test { "test" } else { "file" },
    };
    Ok(shard::split(&inputs, shard.of))
}

/// Seconds: a working tree's split reads durations recorded before the start of the current
/// span of this many, so gates started together read the same ones.
const BUCKET: i64 = 600;

/// The tests of `units`, for a split by test: each unit's tests by id as its language lists
/// them (pytest's node ids, listed by pytest), a unit it does not list whole.
fn tests_of(at: &Inputs<'_>, root: &Path, units: &[&str]) -> Result<Vec<String>> {
    // The runner lists the tests of the files in front of it: they must be the gated tree's,
    // which the legs run (a temporary checkout when the working tree is not it).
    let elsewhere = match at.input.head {
        Some(head) => crate::repo::checkout::not_in_place(at.repo, head)?,
        None => None,
    };
    if let Some(why) = elsewhere {
        return Err(Error::Usage(format!(
            "--shard-by test lists the tests pytest collects in the working tree, and it is not the gated commit's tree ({why}): check out the gated commit, or split by file"
        )));
    }
    let mut tests = Vec::new();
    for suite in crate::lang::suite::SUITES {
        let own: Vec<&str> = units
            .iter()
            .copied()
            .filter(|u| suite.is_test_unit(u))
            .collect();
        if own.is_empty() {
            continue;
        }
        let listed = suite
            .tests_in(at.project, root, &own)
            .map_err(Error::Usage)?;
        for unit in own {
            match listed.get(unit) {
                Some(ids) if !ids.is_empty() => tests.extend(ids.iter().cloned()),
                _ => tests.push(unit.to_string()),
            }
        }
    }
    Ok(tests)
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// A unit's bytes in the gated tree: a test file's, or a Go package's test files'.
fn size_of(at: &Inputs<'_>, root: &Path, unit: &str) -> u64 {
    let len = |p: &str| std::fs::metadata(root.join(p)).map_or(0, |m| m.len());
    match unit.strip_prefix("./") {
        Some(dir) => {
            let prefix = if dir.is_empty() {
                String::new()
            } else {
                format!("{dir}/")
            };
            at.input
                .snapshot
                .files
                .iter()
                .filter(|f| {
                    f.strip_prefix(prefix.as_str())
                        .is_some_and(|rest| !rest.contains('/') && rest.ends_with("_test.go"))
                })
                .map(|f| len(f))
                .sum()
        }
        None => len(unit),
    }
}
