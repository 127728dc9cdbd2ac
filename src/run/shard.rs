//! Splitting a selection over N CI legs: every unit (a Python test file, a Go test package)
//! in exactly one shard, packed by its expected duration so the legs end together.
//!
//! The packing is longest-first onto the least-loaded shard (LPT), then a local search that
//! moves or swaps units off the most loaded shard while that lowers it. LPT alone is within
//! 4/3 of the best; the search closes most of what is left when units are few per shard.
//! Everything is deterministic: ties break by name and by shard number, so every leg given
//! the same durations computes the same split.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The part of the suite a leg ran: shard `index` of `of` (`--shard K/N`). A leg is its
/// environment (`--leg`: the matrix values it ran under) and, when the suite was split, its
/// shard: history evidence is matched by environment, whichever shard ran a test, so the
/// shard only keeps a run's shard legs apart and says where a result came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shard {
    pub index: u32,
    pub of: u32,
}

impl Shard {
    /// `K/N`, with 1 <= K <= N.
    pub(crate) fn parse(text: &str) -> Result<Shard> {
        let bad = || {
            Error::Usage(format!(
                "--shard `{text}`: give K/N, the shard's number K (from 1) of N shards, e.g. --shard 2/3"
            ))
        };
        let (k, n) = text.split_once('/').ok_or_else(bad)?;
        let (index, of) = (
            k.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if index == 0 || index > of {
            return Err(bad());
        }
        if of > MAX_SHARDS {
            return Err(Error::Usage(format!(
                "--shard `{text}`: at most {MAX_SHARDS} shards"
            )));
        }
        Ok(Shard { index, of })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.of)
    }
}

/// As `K/N`, in JSON and in a leg's digest.
impl serde::Serialize for Shard {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// The most shards a selection is split into: far beyond any CI matrix (GitHub's holds 256
/// jobs), and a bound on what a split allocates.
const MAX_SHARDS: u32 = 1024;

/// A selection split over N shards, as frozen into the decision (`plans/frozen.schema.json`,
/// `split`): every leg given that decision runs its shard of this, not a split of its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Split {
    pub shards: u32,
    /// What a unit is: `file` (a Python test file, a Go test package) or `test` (a pytest node
    /// id; Go packages and files pytest listed no test of stay whole).
    pub by: String,
    /// The environment whose recorded durations were read, and the legs read: those recorded
    /// before this time (seconds since the epoch).
    pub environment: String,
    pub recorded_before: i64,
    /// The SHA-256 of the durations read (unit → milliseconds, canonical JSON).
    pub durations_digest: String,
    /// What an unrecorded unit weighs: `mean` (of the recorded ones, `stand_in_ms`), or
    /// `file_size` (its bytes, when nothing is recorded); `none` when every unit is recorded.
    pub stand_in: String,
    pub stand_in_ms: Option<u64>,
    /// Every unit → its shard (from 1) and the milliseconds it was packed by.
    pub units: BTreeMap<String, Placed>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Placed {
    pub shard: u32,
    pub ms: u64,
    /// Whether `ms` was recorded (else it is the stand-in); a reused unit weighs 0.
    pub recorded: bool,
}

/// A leg's part of a split selection.
pub(crate) struct Sharded {
    pub shard: Shard,
    pub split: Split,
    /// The units this leg runs (before the ledger's reuses leave).
    pub own: BTreeSet<String>,
    /// The earlier decision whose split this is, when one was used: its id and JSON. It is
    /// this run's frozen decision.
    pub decision: Option<(String, String)>,
}

impl Sharded {
    /// What the reports say of it.
    pub(crate) fn described(&self) -> Described<'_> {
        let (ms, longest_ms) = self.split.loads(self.shard.index);
        Described {
            shard: self.shard,
            units: self.own.iter().map(String::as_str).collect(),
            of: self.split.units.len(),
            ms,
            longest_ms,
            environment: &self.split.environment,
            stand_in: &self.split.stand_in,
            stand_in_ms: self.split.stand_in_ms,
            unrecorded: self.split.units.values().filter(|p| !p.recorded).count(),
            earlier: self.decision.is_some(),
        }
    }
}

/// A leg's shard as the JSON report has it (`plans/report.schema.json`, `shard`) and the human
/// report says it.
#[derive(Serialize)]
pub(crate) struct Described<'a> {
    /// `K/N`.
    pub shard: Shard,
    /// The units this shard runs (the ledger's reuses among them are not run).
    pub units: Vec<&'a str>,
    /// Units in the whole split.
    pub of: usize,
    /// This shard's packed milliseconds, and the longest shard's.
    pub ms: u64,
    pub longest_ms: u64,
    /// Whose recorded durations it was packed by.
    pub environment: &'a str,
    /// What an unrecorded unit weighed (`none`, `mean`, `file_size`), and how many there were.
    pub stand_in: &'a str,
    pub stand_in_ms: Option<u64>,
    pub unrecorded: usize,
    /// Whether the split was an earlier decision's (`--decision`, or the one frozen for this
    /// commit, base and configuration) rather than made by this leg.
    pub earlier: bool,
}

impl std::fmt::Display for Described<'_> {
    /// `shard 2/3: 4 of 11 test units, ~12.3 s (longest shard ~12.9 s), by durations recorded
    /// under `py3.12``.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let secs = |ms: u64| format!("{:.1} s", ms as f64 / 1000.0);
        write!(
            f,
            "shard {}: {} of {} test units",
            self.shard,
            self.units.len(),
            self.of
        )?;
        match (self.stand_in, self.stand_in_ms) {
            ("file_size", _) => write!(
                f,
                ", by size (nothing recorded under `{}`)",
                crate::terminal::shown(self.environment)
            )?,
            (stand_in, mean) => {
                write!(
                    f,
                    ", ~{} (longest shard ~{}), by durations recorded under `{}`",
                    secs(self.ms),
                    secs(self.longest_ms),
                    crate::terminal::shown(self.environment)
                )?;
                if let ("mean", Some(ms)) = (stand_in, mean) {
                    write!(
                        f,
                        "; {} unrecorded weigh the mean, {}",
                        self.unrecorded,
                        secs(ms)
                    )?;
                }
            }
        }
        if self.earlier {
            write!(f, "; the split frozen earlier")?;
        }
        Ok(())
    }
}

/// What a split is made from: the units the selection runs, the ledger's expected reuses
/// among them, and the durations read.
pub(crate) struct Inputs<'a> {
    pub units: &'a [&'a str],
    pub reused: &'a BTreeSet<String>,
    pub durations: &'a BTreeMap<String, u64>,
    /// A unit's bytes, the stand-in when nothing is recorded.
    pub size: &'a dyn Fn(&str) -> u64,
    pub environment: &'a str,
    pub recorded_before: i64,
    /// `file`, or `test` when `units` are tests (pytest node ids).
    pub by: &'a str,
}

/// Splits `inputs.units` into `shards`. A unit the ledger will reuse weighs nothing but is
/// placed all the same: a leg that cannot reuse it (another machine, another toolchain) runs
/// it, so no unit is left to no one.
pub(crate) fn split(inputs: &Inputs<'_>, shards: u32) -> Split {
    let recorded: Vec<u64> = inputs.durations.values().copied().collect();
    let reused = |u: &str| inputs.reused.contains(unit_of(u));
    let unknown = inputs
        .units
        .iter()
        .any(|u| !inputs.durations.contains_key(*u) && !reused(u));
    let (stand_in, stand_in_ms) = match (unknown, recorded.is_empty()) {
        (false, _) => ("none", None),
        (true, false) => {
            let mean = recorded.iter().sum::<u64>() / recorded.len() as u64;
            ("mean", Some(mean.max(1)))
        }
        (true, true) => ("file_size", None),
    };
    let weighed: Vec<(u64, bool)> = inputs
        .units
        .iter()
        .map(|u| match inputs.durations.get(*u) {
            _ if reused(u) => (0, true),
            Some(&ms) => (ms, true),
            None => (
                stand_in_ms.unwrap_or_else(|| (inputs.size)(u).max(1)),
                false,
            ),
        })
        .collect();
    let weights: Vec<Weighted<'_>> = inputs
        .units
        .iter()
        .zip(&weighed)
        .map(|(unit, &(ms, _))| Weighted { unit, ms })
        .collect();
    let placed = pack(&weights, shards);
    // A map sorted by key, of strings to integers, serializes compact to its canonical JSON.
    let digest = {
        use sha2::Digest;
        let json = serde_json::to_vec(inputs.durations).expect("durations serialize");
        sha2::Sha256::digest(&json)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    Split {
        shards,
        by: inputs.by.into(),
        environment: inputs.environment.to_string(),
        recorded_before: inputs.recorded_before,
        durations_digest: digest,
        stand_in: stand_in.into(),
        stand_in_ms,
        units: inputs
            .units
            .iter()
            .zip(weighed.iter().zip(&placed))
            .map(|(u, (&(ms, recorded), &shard))| {
                let placed = Placed {
                    shard: shard + 1,
                    ms,
                    recorded,
                };
                (u.to_string(), placed)
            })
            .collect(),
    }
}

impl Split {
    /// The units of shard `k` (from 1), and every selected unit the split does not hold: one
    /// selected after it was frozen (a test newly failing on main) may be seen by this leg
    /// alone — a leg that started earlier never selected it — so each leg that sees one runs
    /// it. Twice at worst, never by no one.
    pub(crate) fn shard(&self, k: u32, selected: &[&str]) -> BTreeSet<String> {
        let mut own: BTreeSet<String> = self
            .units
            .iter()
            .filter(|(_, p)| p.shard == k)
            .map(|(u, _)| u.clone())
            .collect();
        own.extend(self.outside(selected).into_iter().map(str::to_string));
        own
    }

    /// Why the split cannot be used: a unit placed outside shards 1..=N (a stored decision
    /// whose body was rewritten and hashed again) would be run by no leg.
    pub(crate) fn check(&self) -> std::result::Result<(), String> {
        match self
            .units
            .iter()
            .find(|(_, p)| p.shard == 0 || p.shard > self.shards)
        {
            Some((unit, p)) => Err(format!(
                "it places {unit} in shard {} of {}",
                p.shard, self.shards
            )),
            None => Ok(()),
        }
    }

    /// The selected units the split does not hold.
    pub(crate) fn outside<'s>(&self, selected: &[&'s str]) -> Vec<&'s str> {
        selected
            .iter()
            .copied()
            .filter(|u| !self.units.contains_key(*u))
            .collect()
    }

    /// Shard `k`'s packed milliseconds and the longest shard's.
    pub(crate) fn loads(&self, k: u32) -> (u64, u64) {
        let mut load = vec![0u64; self.shards as usize];
        for p in self.units.values() {
            if let Some(l) = load.get_mut(p.shard.saturating_sub(1) as usize) {
                *l += p.ms;
            }
        }
        let own = load.get(k.saturating_sub(1) as usize).copied().unwrap_or(0);
        (own, load.into_iter().max().unwrap_or(0))
    }
}

/// The unit a split's unit belongs to: a pytest node id's test file, else itself. The ledger
/// reuses units, whole.
pub(crate) fn unit_of(id: &str) -> &str {
    match id.split_once("::") {
        Some((file, _)) if !id.starts_with("./") => file,
        _ => id,
    }
}

/// A unit to place and its expected milliseconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Weighted<'a> {
    pub unit: &'a str,
    pub ms: u64,
}

/// Each unit's shard (0-based), in the order `units` were given.
pub(crate) fn pack(units: &[Weighted<'_>], shards: u32) -> Vec<u32> {
    let n = shards.max(1) as usize;
    let mut order: Vec<usize> = (0..units.len()).collect();
    // Longest first; equal durations by name, so the order never depends on the input's.
    order.sort_by(|&a, &b| {
        units[b]
            .ms
            .cmp(&units[a].ms)
            .then_with(|| units[a].unit.cmp(units[b].unit))
    });
    let mut load = vec![0u64; n];
    let mut placed = vec![0u32; units.len()];
    for &i in &order {
        let least = (0..n)
            .min_by_key(|&s| (load[s], s))
            .expect("one shard at least");
        load[least] += units[i].ms;
        placed[i] = least as u32;
    }
    improve(units, &mut placed, &mut load);
    placed
}

/// Moves a unit off the most loaded shard, or swaps one of it for a shorter one elsewhere,
/// whenever that lowers the most loaded shard without raising the other above it; until no
/// such step is left (bounded, each step strictly lowers the pair's larger load).
fn improve(units: &[Weighted<'_>], placed: &mut [u32], load: &mut [u64]) {
    let n = load.len();
    if n < 2 {
        return;
    }
    for _ in 0..(4 * units.len() + 16) {
        let top = (0..n)
            .max_by_key(|&s| (load[s], std::cmp::Reverse(s)))
            .expect("shards");
        let on_top: Vec<usize> = (0..units.len())
            .filter(|&i| placed[i] as usize == top)
            .collect();
        if !step(units, placed, load, top, &on_top) {
            return;
        }
    }
}

/// One improving move or swap off shard `top`; whether one was made. The best one is taken:
/// the one leaving the pair's larger load lowest, ties by shard then unit order.
fn step(
    units: &[Weighted<'_>],
    placed: &mut [u32],
    load: &mut [u64],
    top: usize,
    on_top: &[usize],
) -> bool {
    let peak = load[top];
    // (new larger load of the pair, other shard, unit moved off top, unit moved onto top)
    let mut best: Option<(u64, usize, usize, Option<usize>)> = None;
    let key = |c: &(u64, usize, usize, Option<usize>)| {
        (c.0, c.1, units[c.2].unit, c.3.map(|j| units[j].unit))
    };
    let mut consider = |cand: (u64, usize, usize, Option<usize>)| {
        if cand.0 < peak && best.as_ref().is_none_or(|b| key(&cand) < key(b)) {
            best = Some(cand);
        }
    };
    for other in (0..load.len()).filter(|&s| s != top) {
        for &i in on_top {
            let a = units[i].ms;
            // Move i to `other`.
            consider(((load[top] - a).max(load[other] + a), other, i, None));
        }
    }
    // Swaps matter when a shard holds few units (with many, longest-first is already close to
    // the bound), and cost the product of two shards' units: only tried then.
    if on_top.len() <= 64 {
        for (j, w) in units.iter().enumerate() {
            let other = placed[j] as usize;
            if other == top {
                continue;
            }
            for &i in on_top {
                let a = units[i].ms;
                if w.ms >= a {
                    continue;
                }
                let d = a - w.ms;
                consider(((load[top] - d).max(load[other] + d), other, i, Some(j)));
            }
        }
    }
    let Some((_, other, i, j)) = best else {
        return false;
    };
    placed[i] = other as u32;
    load[top] -= units[i].ms;
    load[other] += units[i].ms;
    if let Some(j) = j {
        placed[j] = top as u32;
        load[other] -= units[j].ms;
        load[top] += units[j].ms;
    }
    true
}

/// The longest shard's milliseconds for `placed`, and the lower bound no split can beat:
/// the larger of the total over N (rounded up) and the longest unit. Only the tests measure
/// a split by it.
pub(crate) fn makespan(units: &[Weighted<'_>], placed: &[u32], shards: u32) -> (u64, u64) {
    let mut load: BTreeMap<u32, u64> = BTreeMap::new();
    for (w, &s) in units.iter().zip(placed) {
        *load.entry(s).or_default() += w.ms;
    }
    let total: u64 = units.iter().map(|w| w.ms).sum();
    let longest = units.iter().map(|w| w.ms).max().unwrap_or(0);
    let made = load.values().copied().max().unwrap_or(0);
    (made, total.div_ceil(u64::from(shards.max(1))).max(longest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weights(ms: &[u64]) -> (Vec<String>, Vec<u64>) {
        let names = (0..ms.len()).map(|i| format!("t{i:04}")).collect();
        (names, ms.to_vec())
    }

    fn of<'a>(names: &'a [String], ms: &[u64]) -> Vec<Weighted<'a>> {
        names
            .iter()
            .zip(ms)
            .map(|(unit, &ms)| Weighted { unit, ms })
            .collect()
    }

    /// A small seeded generator (xorshift), so the cases are the same on every run.
    fn draws(seed: u64, count: usize) -> Vec<u64> {
        let mut x = seed | 1;
        (0..count)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x
            })
            .collect()
    }

    #[test]
    fn every_unit_is_in_exactly_one_shard_and_the_split_is_the_same_whatever_the_order() {
        for seed in 1..200u64 {
            let r = draws(seed, 60);
            let count = 1 + (r[0] % 50) as usize;
            let shards = 1 + (r[1] % 12) as u32;
            let ms: Vec<u64> = r[2..2 + count].iter().map(|x| x % 5_000).collect();
            let (names, ms) = weights(&ms);
            let units = of(&names, &ms);
            let placed = pack(&units, shards);
            assert_eq!(placed.len(), units.len());
            assert!(placed.iter().all(|&s| s < shards));
            let mut reversed = units.clone();
            reversed.reverse();
            let mut again = pack(&reversed, shards);
            again.reverse();
            assert_eq!(
                placed, again,
                "seed {seed}: the split depends on the order given"
            );
            let (made, bound) = makespan(&units, &placed, shards);
            assert!(made >= bound);
            // LPT's guarantee, which the search only improves on.
            assert!(
                made * 3 <= bound * 4 + 3,
                "seed {seed}: {made} vs bound {bound}"
            );
        }
    }

    #[test]
    fn heavy_tailed_durations_pack_within_five_percent_of_the_bound() {
        for seed in 1..40u64 {
            let r = draws(seed, 2_000);
            // Pareto-like: most tests short, a few long.
            let ms: Vec<u64> = r
                .iter()
                .map(|x| {
                    let u = (x % 1_000_000) as f64 / 1_000_000.0;
                    (50.0 / (1.0 - u).powf(0.8)) as u64
                })
                .collect();
            let (names, ms) = weights(&ms);
            let units = of(&names, &ms);
            for shards in [2, 4, 8, 16, 32] {
                let placed = pack(&units, shards);
                let (made, bound) = makespan(&units, &placed, shards);
                let longest = ms.iter().copied().max().unwrap_or(0);
                if bound > longest {
                    assert!(
                        made * 100 <= bound * 105,
                        "seed {seed}, {shards} shards: {made} vs {bound}"
                    );
                }
            }
        }
    }

    fn placed(shards: u32, units: &[(&str, u32)]) -> Split {
        Split {
            shards,
            by: "file".into(),
            environment: "default".into(),
            recorded_before: 0,
            durations_digest: String::new(),
            stand_in: "none".into(),
            stand_in_ms: None,
            units: units
                .iter()
                .map(|(u, shard)| {
                    let p = Placed {
                        shard: *shard,
                        ms: 1,
                        recorded: true,
                    };
                    (u.to_string(), p)
                })
                .collect(),
        }
    }

    #[test]
    fn a_unit_selected_after_the_split_is_run_by_every_leg_that_selects_it() {
        let split = placed(3, &[("a.py", 1), ("b.py", 2), ("c.py", 3)]);
        let selected = ["a.py", "b.py", "c.py", "new.py"];
        for k in 1..=3 {
            let own = split.shard(k, &selected);
            assert!(own.contains("new.py"), "leg {k}: {own:?}");
            assert_eq!(own.len(), 2, "leg {k}: {own:?}");
        }
        assert_eq!(split.outside(&selected), vec!["new.py"]);
    }

    #[test]
    fn a_split_placing_a_unit_outside_its_shards_is_refused() {
        assert!(placed(3, &[("a.py", 1), ("b.py", 3)]).check().is_ok());
        for bad in [0, 4] {
            let why = placed(3, &[("a.py", 1), ("b.py", bad)])
                .check()
                .unwrap_err();
            assert!(why.contains("b.py"), "{why}");
        }
    }

    #[test]
    fn the_search_beats_plain_longest_first_where_it_can() {
        // LPT puts 3+3 / 2+2+2 as 3,2,2 / 3,2 → 7 vs 5; the best is 6 / 6.
        let (names, ms) = weights(&[3, 3, 2, 2, 2]);
        let units = of(&names, &ms);
        let placed = pack(&units, 2);
        assert_eq!(makespan(&units, &placed, 2), (6, 6));
    }
}
