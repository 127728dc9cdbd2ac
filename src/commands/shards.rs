//! `gate shards --suggest`: how many CI legs to split the selection over, from the durations
//! recorded under one environment (`run::suggest`, which packs as `--shard K/N` does).

use crate::error::{Error, Result};
use crate::exit_codes;
use crate::repo;
use crate::run::suggest::{self, Row};
use std::path::Path;

/// Version of the `gate shards --suggest --json` document (`plans/shards.schema.json`).
const SHARDS_VERSION: u32 = 1;

pub(super) struct Args<'a> {
    pub leg: &'a str,
    pub fixed_cost: std::time::Duration,
    pub max: u32,
    pub json: bool,
    pub db: Option<&'a str>,
}

pub(super) fn suggest(dir: &Path, args: &Args<'_>) -> Result<u8> {
    let repo = repo::open(dir)?;
    let (mut store, _) = crate::history::open_store(&repo, args.db)?;
    // Every leg recorded up to now, this second's included.
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
        + 1;
    let durations = store.unit_durations(args.leg, before, false)?;
    if durations.is_empty() {
        return Err(nothing_recorded(&mut store, args.leg)?);
    }
    let fixed_ms = u64::try_from(args.fixed_cost.as_millis()).unwrap_or(u64::MAX / 4);
    let s = suggest::suggest(&durations, fixed_ms, args.max);
    if args.json {
        return json(&store.name(), args, (before, durations.len(), fixed_ms), &s);
    }
    say!(
        "{} test units recorded under `{}` in {}: {} in all, the longest {}",
        durations.len(),
        crate::terminal::shown(args.leg),
        store.name(),
        secs(s.total_ms),
        secs(s.longest_ms)
    );
    say!(
        "each leg costs {} before its tests start (--fixed-cost)",
        secs(fixed_ms)
    );
    say!("");
    say!(
        "{:>4}  {:>13}  {:>11}  {:>8}  {:>11}  {:>12}",
        "legs",
        "longest shard",
        "bound",
        "ratio",
        "slowest leg",
        "machine time"
    );
    for r in &s.rows {
        say!("{}", row(r));
    }
    if s.rows.iter().any(|r| r.bound_is_longest) {
        say!(
            "  * the bound is the longest test unit: more legs cannot make the slowest one shorter"
        );
    }
    let best = s
        .rows
        .iter()
        .min_by_key(|r| (r.wall_ms, r.shards))
        .expect("one row at least");
    say!("");
    say!(
        "suggested: {} leg(s) (`--shard K/{}`), the fewest whose slowest leg takes at most 10% longer than the fastest over 1 to {} legs ({} leg(s): {})",
        s.recommended,
        s.recommended,
        args.max,
        best.shards,
        secs(best.wall_ms)
    );
    Ok(exit_codes::OK)
}

/// Nothing to suggest from is an error, never an empty answer: a CI step that reads the number
/// from here must stop rather than go on without one. It names the environments recorded.
fn nothing_recorded(store: &mut crate::history::Store, leg: &str) -> Result<Error> {
    let recorded = match store.environments()?.as_slice() {
        [] => "nothing is recorded there yet".to_string(),
        some => format!(
            "legs are recorded under {}",
            some.iter()
                .map(|e| format!("`{}`", crate::terminal::shown(e)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let leg = crate::terminal::shown(leg);
    Ok(Error::Usage(format!(
        "no passing test unit recorded under environment `{leg}` in {} ({recorded}): record runs with `gate --affected RANGE --record --leg {leg}` or `gate record --junit FILE --leg {leg}`",
        store.name()
    )))
}

/// The versioned document (`plans/shards.schema.json`).
fn json(
    store: &str,
    args: &Args<'_>,
    (before, units, fixed_ms): (i64, usize, u64),
    s: &suggest::Suggestion,
) -> Result<u8> {
    let rows: Vec<serde_json::Value> = s
        .rows
        .iter()
        .map(|r| {
            let mut v = serde_json::to_value(r).expect("a row serializes");
            v["ratio"] = serde_json::json!(r.ratio());
            v
        })
        .collect();
    let doc = serde_json::json!({
        "version": SHARDS_VERSION,
        "kind": "shards",
        "gate": crate::version::ANALYZER,
        "store": store,
        "environment": args.leg,
        "recorded_before": before,
        "units": units,
        "total_ms": s.total_ms,
        "longest_ms": s.longest_ms,
        "fixed_cost_ms": fixed_ms,
        "max": args.max,
        "rows": rows,
        "recommended": s.recommended,
        "rule": suggest::RULE,
    });
    let doc = crate::terminal::sorted(doc);
    say!("{}", crate::terminal::json(&doc));
    Ok(exit_codes::OK)
}

/// One line of the table.
fn row(r: &Row) -> String {
    let star = if r.bound_is_longest { "*" } else { " " };
    format!(
        "{:>4}  {:>13}  {:>10}{star}  {:>8.4}  {:>11}  {:>12}",
        r.shards,
        secs(r.makespan_ms),
        secs(r.bound_ms),
        r.ratio(),
        secs(r.wall_ms),
        secs(r.machine_ms)
    )
}

/// Milliseconds as seconds, one decimal.
fn secs(ms: u64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}
