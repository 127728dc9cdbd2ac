//! The shadow compares a store recorded in a window, each read with the decision it judged:
//! what `evaluate` and `costs --from-history` add up.

use crate::error::{Error, Result};
use crate::proof::evaluate::{Compare, Judgement};
use std::collections::{BTreeMap, BTreeSet};

#[derive(serde::Deserialize)]
struct Decision {
    verdict: String,
    inventory: BTreeSet<String>,
    selected: BTreeMap<String, serde_json::Value>,
    reused: BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    rows: Vec<FrozenRow>,
}

/// What a frozen row says of the edges that selected each test.
#[derive(serde::Deserialize)]
struct FrozenRow {
    path: String,
    #[serde(default)]
    edges: Vec<FrozenEdge>,
}

#[derive(serde::Deserialize)]
struct FrozenEdge {
    test: String,
    #[serde(default)]
    chain: Vec<FrozenLink>,
}

#[derive(serde::Deserialize)]
struct FrozenLink {
    kind: String,
}

impl Decision {
    /// `(file, test)` where a test's only edges, in every row, were traced ones.
    fn traced_only(&self) -> Vec<(String, String)> {
        let traced = |e: &FrozenEdge| e.chain.first().is_some_and(|l| l.kind == "traced");
        let mut statics: BTreeSet<&str> = BTreeSet::new();
        for e in self.rows.iter().flat_map(|r| &r.edges) {
            if !traced(e) {
                statics.insert(&e.test);
            }
        }
        let mut out = Vec::new();
        for row in &self.rows {
            for e in row
                .edges
                .iter()
                .filter(|e| traced(e) && !statics.contains(e.test.as_str()))
            {
                out.push((row.path.clone(), e.test.clone()));
            }
        }
        out
    }
}

/// What the store recorded in a window, for `evaluate` and `costs --from-history`.
pub(crate) struct Recorded {
    pub compares: Vec<Compare>,
    /// Compares left out: their decision no longer hashes to its id.
    pub untrusted: usize,
    /// From the audits kept in the window; none without one.
    pub completeness: Option<f64>,
    pub config: crate::config::Config,
}

/// The shadow compares recorded in the window `since`, each with the decision it judged; those
/// whose decision no longer hashes to its id are left out (said) and counted. Nothing in the
/// window is an error, never an empty record.
pub(crate) fn recorded(repo: &git2::Repository, since: &str, db: Option<&str>) -> Result<Recorded> {
    let days = humantime::parse_duration(since)
        .map(|d| d.as_secs().div_ceil(86_400).max(1))
        .map_err(|e| Error::Usage(format!("--since {since}: not a duration (30d, 12h): {e}")))?;
    let (mut store, config) = crate::history::open_store(repo, db)?;
    let stored = store.shadows(days)?;
    let unreadable = |what: &str, id: &str, e: serde_json::Error| {
        Error::Internal(format!(
            "the stored {what} of decision {id} cannot be read: {e}"
        ))
    };
    let mut compares = Vec::new();
    let mut untrusted = 0;
    for s in &stored {
        // A compare is only as good as the decision it judged: one edited after it was frozen
        // is left out, said, and counted.
        if let Err(why) = crate::proof::frozen::verify(&s.decision, &s.body) {
            crate::terminal::warn(format!(
                "the shadow of {} is left out: its decision {} {why}",
                s.commit, s.decision
            ));
            untrusted += 1;
            continue;
        }
        let d: Decision =
            serde_json::from_str(&s.body).map_err(|e| unreadable("decision", &s.decision, e))?;
        let judged: Vec<Judgement> = serde_json::from_str(&s.judged)
            .map_err(|e| unreadable("judgements", &s.decision, e))?;
        let durations: BTreeMap<String, u64> = serde_json::from_str(&s.durations)
            .map_err(|e| unreadable("durations", &s.decision, e))?;
        let traced_only = d.traced_only();
        compares.push(Compare {
            traced_only,
            commit: s.commit.clone(),
            ran_everything: matches!(d.verdict.as_str(), "named_full" | "refused"),
            inventory: d.inventory,
            selected: d.selected.into_keys().collect(),
            reused: d.reused.into_keys().collect(),
            judged,
            durations,
            select_ms: s.select_ms.and_then(|ms| u64::try_from(ms).ok()),
            record_ms: s.record_ms.and_then(|ms| u64::try_from(ms).ok()),
        });
    }
    if compares.is_empty() && untrusted == 0 {
        // Nothing to evaluate is said, never reported as a perfect record.
        return Err(Error::Usage(format!(
            "no shadow run recorded in {} in the last {since} (run `gate shadow RANGE`, or set audit_rate)",
            store.name()
        )));
    }
    Ok(Recorded {
        compares,
        untrusted,
        completeness: store.completeness(days)?,
        config,
    })
}
