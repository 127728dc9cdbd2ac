//! How many CI legs to split a suite over (`gate shards --suggest`), from its units' recorded
//! durations: for each N, the units packed exactly as `--shard K/N` packs them (`shard::pack`),
//! the slowest leg's time and the machine time, each leg paying a fixed cost before its tests.
//! Pure: the durations in, the table and the recommendation out.

use super::shard::{Weighted, makespan, pack};
use serde::Serialize;
use std::collections::BTreeMap;

/// The rule the recommendation follows, as the output and the docs state it.
pub(crate) const RULE: &str = "the fewest legs whose slowest leg (the fixed cost and the \
     longest shard) takes at most 10% longer than the fastest slowest leg over 1 to --max legs";

/// One number of legs: what its split costs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Row {
    pub shards: u32,
    /// The longest shard's packed milliseconds.
    pub makespan_ms: u64,
    /// What no split can beat: the larger of the total over N (rounded up) and the longest unit.
    pub bound_ms: u64,
    /// Whether the bound is the longest unit (then more legs cannot lower the makespan).
    pub bound_is_longest: bool,
    /// The slowest leg's time: the fixed cost and the makespan.
    pub wall_ms: u64,
    /// Every leg's time added up: N fixed costs and the whole suite.
    pub machine_ms: u64,
}

impl Row {
    /// The makespan over the bound (1 when both are 0).
    pub(crate) fn ratio(&self) -> f64 {
        if self.bound_ms == 0 {
            1.0
        } else {
            self.makespan_ms as f64 / self.bound_ms as f64
        }
    }
}

/// The table for 1..=`max` legs and the recommended number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Suggestion {
    pub rows: Vec<Row>,
    pub recommended: u32,
    pub total_ms: u64,
    pub longest_ms: u64,
}

/// Packs `durations` (unit → milliseconds) for N = 1..=`max` and recommends the fewest legs
/// whose slowest leg (`fixed_ms` + makespan) is within 10% of the best over that range.
pub(crate) fn suggest(durations: &BTreeMap<String, u64>, fixed_ms: u64, max: u32) -> Suggestion {
    let units: Vec<Weighted<'_>> = durations
        .iter()
        .map(|(unit, &ms)| Weighted { unit, ms })
        .collect();
    let total_ms: u64 = units.iter().map(|w| w.ms).sum();
    let longest_ms = units.iter().map(|w| w.ms).max().unwrap_or(0);
    let rows: Vec<Row> = (1..=max.max(1))
        .map(|n| {
            let placed = pack(&units, n);
            let (makespan_ms, bound_ms) = makespan(&units, &placed, n);
            Row {
                shards: n,
                makespan_ms,
                bound_ms,
                bound_is_longest: total_ms.div_ceil(u64::from(n)) <= longest_ms,
                wall_ms: fixed_ms + makespan_ms,
                machine_ms: u64::from(n) * fixed_ms + total_ms,
            }
        })
        .collect();
    let best = rows.iter().map(|r| r.wall_ms).min().unwrap_or(0);
    let recommended = rows
        .iter()
        .find(|r| u128::from(r.wall_ms) * 10 <= u128::from(best) * 11)
        .map_or(1, |r| r.shards);
    Suggestion {
        rows,
        recommended,
        total_ms,
        longest_ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(ms: &[u64]) -> BTreeMap<String, u64> {
        ms.iter()
            .enumerate()
            .map(|(i, &ms)| (format!("tests/test_{i:02}.py"), ms))
            .collect()
    }

    #[test]
    fn each_row_is_the_packing_shard_makes_and_its_costs() {
        // 3+3 / 2+2+2: the search's 6 / 6, never longest-first's 7 / 5.
        let s = suggest(&of(&[3_000, 3_000, 2_000, 2_000, 2_000]), 1_000, 3);
        let row = |n: usize| &s.rows[n - 1];
        assert_eq!(s.total_ms, 12_000);
        assert_eq!(s.longest_ms, 3_000);
        assert_eq!(
            (
                row(1).makespan_ms,
                row(1).bound_ms,
                row(1).wall_ms,
                row(1).machine_ms
            ),
            (12_000, 12_000, 13_000, 13_000)
        );
        assert_eq!((row(2).makespan_ms, row(2).bound_ms), (6_000, 6_000));
        assert_eq!((row(2).wall_ms, row(2).machine_ms), (7_000, 14_000));
        // 3 legs: 3+2 / 3+2 / 2 → 5 s over a bound of 4 s.
        assert_eq!((row(3).makespan_ms, row(3).bound_ms), (5_000, 4_000));
        assert!((row(3).ratio() - 1.25).abs() < 1e-9);
        assert!(!row(3).bound_is_longest);
    }

    #[test]
    fn the_fewest_legs_within_ten_percent_of_the_fastest_are_recommended() {
        // 8 units of 10 s: N legs take 60 + 80/N s (N divides 8) → 1: 140, 2: 100, 4: 80,
        // 8: 70; best 70 (8 and more), 10% over is 77: 4 legs (80) are not, so 8.
        let s = suggest(&of(&[10_000; 8]), 60_000, 16);
        assert_eq!(s.rows[7].wall_ms, 70_000);
        assert_eq!(s.recommended, 8);
        // A fixed cost of 0: more legs never slow; a long unit caps it at 40 s: 3 legs
        // (40 / 40 / 40 with the 10 s ones), where 2 legs take 60.
        let mut ms = vec![40_000];
        ms.extend([10_000; 8]);
        let s = suggest(&of(&ms), 0, 8);
        assert_eq!(s.rows[2].makespan_ms, 40_000);
        assert!(s.rows[2].bound_is_longest);
        assert_eq!(s.recommended, 3);
        // A high fixed cost: one leg.
        assert_eq!(suggest(&of(&[10_000; 8]), 3_600_000, 16).recommended, 1);
    }

    #[test]
    fn a_suite_of_nothing_but_zeros_recommends_one_leg() {
        let s = suggest(&of(&[0, 0, 0]), 0, 4);
        assert_eq!(s.recommended, 1);
        assert!(s.rows.iter().all(|r| r.ratio() == 1.0));
    }
}
