//! Whether a recorded run is whole. Legs that ran shards `K/N` say N, and the split frozen
//! into their decision says each shard's units: a shard no leg recorded (cancelled, crashed
//! before its upload) and a leg that recorded fewer units than its shard was given are named,
//! so a run that did not run never looks like a pass. `gate triage` exits 14 on them and
//! `gate report` lists them; `judge` is pure, `read` fetches what it judges.

use crate::history::{Store, StoreError, triage::LegInfo};
use crate::run::shard::{Shard, Split, unit_of};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The run's sharded legs, grouped by environment and N: each group's gaps.
#[derive(Debug, Default, Serialize)]
pub(crate) struct Whole {
    pub groups: Vec<Group>,
}

/// The legs of one environment that ran shards of N.
#[derive(Debug, Serialize, PartialEq, Eq)]
pub(crate) struct Group {
    pub environment: String,
    pub of: u32,
    /// The decision whose split said each shard's units; none when the store holds none (a
    /// runner's split recorded with `gate record --shard`): then every shard needs a leg.
    pub decision: Option<String>,
    /// The shards no leg recorded.
    pub missing: Vec<Missing>,
    /// The legs that recorded no result for some of their shard's units.
    pub not_run: Vec<Short>,
}

#[derive(Debug, Serialize, PartialEq, Eq)]
pub(crate) struct Missing {
    /// The name its leg would have had (`py#3/3`).
    pub leg: String,
    pub shard: String,
    /// The units it was given (none known without a decision), less the expected reuses.
    pub units: Vec<String>,
}

#[derive(Debug, Serialize, PartialEq, Eq)]
pub(crate) struct Short {
    pub leg: String,
    pub attempt: u32,
    /// How many units its shard gave it, and those it recorded no result for.
    pub given: usize,
    pub units: Vec<String>,
}

impl Whole {
    /// Whether every shard has a leg and every leg a result for each of its units.
    pub(crate) fn is_whole(&self) -> bool {
        self.groups
            .iter()
            .all(|g| g.missing.is_empty() && g.not_run.is_empty())
    }

    /// Every missing shard's leg name, in order.
    pub(crate) fn missing_legs(&self) -> Vec<&str> {
        let missing = self.groups.iter().flat_map(|g| &g.missing);
        missing.map(|m| m.leg.as_str()).collect()
    }

    /// Each unit that did not run → why, in one phrase.
    pub(crate) fn not_run(&self) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        for g in &self.groups {
            for m in &g.missing {
                for u in &m.units {
                    out.insert(u.clone(), format!("shard {}: no leg recorded", m.leg));
                }
            }
            for s in &g.not_run {
                for u in &s.units {
                    out.insert(u.clone(), format!("leg {} recorded no result", s.leg));
                }
            }
        }
        out
    }
}

/// A frozen split, with the units its decision expected the legs to reuse: a unit reused
/// has no result, and a shard of reused units only runs nothing and records no leg.
pub(crate) struct Frozen {
    pub id: String,
    pub split: Split,
    pub reused: BTreeSet<String>,
}

/// One leg as `judge` reads it: its name, attempt, shard, and what it has results for (test
/// ids and their units).
pub(crate) struct Recorded<'a> {
    pub leg: &'a LegInfo,
    pub shard: Shard,
    pub ran: BTreeSet<String>,
}

/// The gaps of the legs of one environment that ran shards of `of`, by `frozen`'s split when
/// known.
pub(crate) fn judge(
    environment: &str,
    of: u32,
    legs: &[Recorded<'_>],
    frozen: Option<&Frozen>,
) -> Group {
    let given = |k: u32| -> Option<Vec<String>> {
        let f = frozen?;
        let units = f.split.units.iter().filter(|(_, p)| p.shard == k);
        // The ledger reuses a whole unit: a test of a split by test is reused with its file.
        let run = units.filter(|(u, _)| !f.reused.contains(unit_of(u)));
        Some(run.map(|(u, _)| u.clone()).collect())
    };
    let mut missing = Vec::new();
    for k in 1..=of {
        if legs.iter().any(|l| l.shard.index == k) {
            continue;
        }
        match given(k) {
            // An empty shard (fewer units than legs, or all reused) runs nothing and records
            // no leg: nothing is missing.
            Some(units) if units.is_empty() => {}
            units => missing.push(Missing {
                leg: format!("{environment}#{k}/{of}"),
                shard: format!("{k}/{of}"),
                units: units.unwrap_or_default(),
            }),
        }
    }
    let mut not_run = Vec::new();
    for l in legs {
        let Some(units) = given(l.shard.index) else {
            continue;
        };
        let left: Vec<String> = units
            .iter()
            .filter(|u| !l.ran.contains(*u))
            .cloned()
            .collect();
        if !left.is_empty() {
            not_run.push(Short {
                leg: l.leg.leg.clone(),
                attempt: l.leg.attempt,
                given: units.len(),
                units: left,
            });
        }
    }
    Group {
        environment: environment.to_string(),
        of,
        decision: frozen.map(|f| f.id.clone()),
        missing,
        not_run,
    }
}

/// The gaps of `legs` (a run's latest attempt of each leg): each environment's sharded legs
/// judged against the split of the first decision frozen for their commit and base that
/// splits N ways under that environment — the one a leg without `--decision` runs, and the
/// one a select job hands its legs — checked whole (its body hashes to its id, every unit in
/// shards 1 to N). A leg records no decision id: the first frozen is the shared one.
pub(crate) fn read(store: &mut Store, legs: &[LegInfo]) -> Result<Whole, StoreError> {
    let mut groups: BTreeMap<(&str, u32), Vec<(&LegInfo, Shard)>> = BTreeMap::new();
    for leg in legs {
        // A shard the store holds that does not read as K/N (written by hand) splits nothing
        // gate can check: the leg counts as unsharded.
        if let Some(shard) = leg.shard.as_deref().and_then(|s| Shard::parse(s).ok()) {
            let group = groups
                .entry((leg.environment.as_str(), shard.of))
                .or_default();
            group.push((leg, shard));
        }
    }
    let mut whole = Whole::default();
    for ((environment, of), members) in groups {
        let first = members[0].0;
        let frozen = frozen_split(store, first, environment, of)?;
        let mut recorded = Vec::new();
        for (leg, shard) in members {
            let mut ran = BTreeSet::new();
            for r in store.results_of_leg(leg.seq)? {
                ran.extend(r.file);
                ran.insert(r.id);
            }
            recorded.push(Recorded { leg, shard, ran });
        }
        whole
            .groups
            .push(judge(environment, of, &recorded, frozen.as_ref()));
    }
    Ok(whole)
}

/// What `read` takes from a kept decision.
#[derive(serde::Deserialize)]
struct Body {
    split: Option<Split>,
    #[serde(default)]
    reused: BTreeMap<String, serde_json::Value>,
}

fn frozen_split(
    store: &mut Store,
    leg: &LegInfo,
    environment: &str,
    of: u32,
) -> Result<Option<Frozen>, StoreError> {
    for (id, json) in store.decisions_for(&leg.commit, leg.base.as_deref())? {
        let Ok(body) = serde_json::from_str::<Body>(&json) else {
            continue;
        };
        let Some(split) = body
            .split
            .filter(|s| s.shards == of && s.environment == environment)
        else {
            continue;
        };
        // An edited decision cannot say what a shard was given: as if none were kept.
        if split.check().is_err() || super::frozen::verify(&id, &json).is_err() {
            continue;
        }
        return Ok(Some(Frozen {
            id,
            split,
            reused: body.reused.into_keys().collect(),
        }));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::shard::Placed;

    fn leg(name: &str, shard: Option<&str>) -> LegInfo {
        LegInfo {
            seq: 1,
            run: "r".into(),
            attempt: 1,
            leg: name.into(),
            commit: "c".into(),
            branch: None,
            mainline: false,
            base: None,
            recorded_unix: 0,
            results: 1,
            inputs: None,
            environment: "py".into(),
            shard: shard.map(str::to_string),
        }
    }

    fn frozen(units: &[(&str, u32)], reused: &[&str]) -> Frozen {
        let placed = |shard| Placed {
            shard,
            ms: 1,
            recorded: true,
        };
        Frozen {
            id: "d".into(),
            split: Split {
                shards: 3,
                by: "file".into(),
                environment: "py".into(),
                recorded_before: 0,
                durations_digest: String::new(),
                stand_in: "none".into(),
                stand_in_ms: None,
                units: units
                    .iter()
                    .map(|(u, k)| (u.to_string(), placed(*k)))
                    .collect(),
            },
            reused: reused.iter().map(|u| u.to_string()).collect(),
        }
    }

    /// Every subset of three legs recorded, with and without a split: the missing shards are
    /// the others, a shard of reused units or of none needs no leg, and a leg that ran part
    /// of its shard is named with what it did not run.
    #[test]
    fn every_subset_of_legs_names_the_others() {
        let f = frozen(&[("a", 1), ("b", 2), ("c", 2), ("d", 3)], &[]);
        let infos: Vec<LegInfo> = (1..=3)
            .map(|k| leg(&format!("py#{k}/3"), Some(&format!("{k}/3"))))
            .collect();
        for mask in 0u32..8 {
            let legs: Vec<Recorded<'_>> = (1..=3u32)
                .filter(|k| mask & (1 << (k - 1)) != 0)
                .map(|k| Recorded {
                    leg: &infos[k as usize - 1],
                    shard: Shard { index: k, of: 3 },
                    ran: f
                        .split
                        .units
                        .iter()
                        .filter(|(_, p)| p.shard == k)
                        .map(|(u, _)| u.clone())
                        .collect(),
                })
                .collect();
            let absent: Vec<String> = (1..=3u32)
                .filter(|k| mask & (1 << (k - 1)) == 0)
                .map(|k| format!("py#{k}/3"))
                .collect();
            for split in [Some(&f), None] {
                let g = judge("py", 3, &legs, split);
                let named: Vec<&str> = g.missing.iter().map(|m| m.leg.as_str()).collect();
                assert_eq!(named, absent, "mask {mask}");
                assert!(g.not_run.is_empty());
            }
        }
        let reused = frozen(&[("a", 1), ("b", 2), ("c", 3)], &["c"]);
        let one = [Recorded {
            leg: &infos[0],
            shard: Shard { index: 1, of: 3 },
            ran: BTreeSet::new(),
        }];
        let g = judge("py", 3, &one, Some(&reused));
        assert_eq!(g.missing.len(), 1, "shard 3 is all reused: {g:?}");
        assert_eq!(g.missing[0].units, ["b"]);
        assert_eq!(g.not_run[0].units, ["a"]);
        assert_eq!(g.not_run[0].given, 1);
    }
}
