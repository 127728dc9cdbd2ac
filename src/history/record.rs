//! Recording a leg: its results numbered and digested, then written with the rollup moved on
//! in the same transaction — and the whole rollup rebuilt when its window is asked anew.

use super::provenance::leg_name;
use super::{Change, Store, StoreError, rollup};
use crate::run::events::{TestOutcome, TestResult};
use crate::run::shard::Shard;
use std::collections::BTreeMap;

impl Store {
    /// Records one leg's results and what it knows of its change, all or nothing. The same
    /// (run, attempt, leg) with the same content is left as it is; with other content it is
    /// replaced in the same transaction.
    /// The rollup of the leg's tests moves on to it in the same transaction.
    pub(crate) fn record(
        &mut self,
        leg: &Leg,
        results: &[TestResult],
        change: &Change,
        window_days: u64,
    ) -> Result<Recorded, StoreError> {
        let started = std::time::Instant::now();
        let results = numbered(results);
        let digest = digest(leg, &results, change);
        let write = |tx: &mut dyn rollup::Tx| {
            rollup::record(tx, leg, &results, change, &digest, window_days, started)
        };
        match self {
            Store::Sqlite(s) => s.write(write),
            Store::Postgres(s) => s.write(write),
        }
    }

    /// Rebuilds the whole rollup over the window: every leg recorded in it, and nothing of
    /// what fell out of it. Returns the (test, leg) pairs rolled up.
    pub(crate) fn rollup_all(&mut self, window_days: u64) -> Result<usize, StoreError> {
        let rebuild = |tx: &mut dyn rollup::Tx| rollup::rebuild(tx, window_days);
        match self {
            Store::Sqlite(s) => s.write(rebuild),
            Store::Postgres(s) => s.write(rebuild),
        }
    }
}

/// One leg of one CI run (or one local run), as `gate record` names it: the key
/// (run, attempt, leg name — its environment and shard) and what is stored with it.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Leg {
    pub run: String,
    pub attempt: u32,
    /// The environment it ran in, by name (`--leg`: matrix values such as `py3.12-linux`):
    /// what its history is matched by.
    pub leg: String,
    /// The part of the suite it ran, when the suite was split. Left out of the digest when
    /// none, so an unsharded leg's digest is the one gate kept before shards.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    pub commit: String,
    pub branch: Option<String>,
    /// Whether the leg ran on the default branch (its failures are "failing on main").
    pub mainline: bool,
    /// The commit its change was taken against (the merge-base with the default branch).
    pub base: Option<String>,
    /// The leg's environment: OS, architecture, interpreter and toolchain versions.
    pub env: serde_json::Value,
    /// What the results were read from: `junit`, `go-json`.
    pub source: String,
    /// The digest of what can change an outcome besides the code (`fingerprint::run_inputs`):
    /// a pass counts as flaky evidence against a failure only under the same inputs.
    pub inputs: String,
    /// Each unit's fingerprint digest (test file or Go unit → digest), stored with its results:
    /// a pass is flaky evidence against a failure only under the test's own inputs too. Empty
    /// for `gate record` (its results ran elsewhere) and left out of the digest when empty, so
    /// such a leg's digest is the one gate kept before.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub fingerprints: BTreeMap<String, String>,
}

impl Leg {
    /// The name it is stored and shown under: its environment, with its shard if any.
    pub(crate) fn name(&self) -> String {
        leg_name(&self.leg, self.shard)
    }

    /// The fingerprint digest of `result`'s unit, when the run knew it.
    pub(crate) fn fingerprint_of(&self, result: &TestResult) -> Option<&str> {
        let unit = result.file.as_deref()?;
        self.fingerprints.get(unit).map(String::as_str)
    }
}

/// What recording a leg did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Recorded {
    /// A new leg, under this store sequence number.
    New(i64),
    /// The same leg with the same content was already there: nothing written.
    Unchanged(i64),
    /// The same leg with other content: replaced, atomically, under a new sequence number.
    Replaced(i64),
    /// The upload had no result and the leg recorded under the same name had `results`:
    /// nothing written.
    Kept { seq: i64, results: i64 },
}

impl Recorded {
    pub(crate) fn seq(self) -> i64 {
        match self {
            Recorded::New(s)
            | Recorded::Unchanged(s)
            | Recorded::Replaced(s)
            | Recorded::Kept { seq: s, .. } => s,
        }
    }
}

/// What a leg's content is: its stored fields and every result, hashed.
fn digest(leg: &Leg, results: &[TestResult], change: &Change) -> String {
    /// The serialized bytes go straight into the hash: no text, no value tree.
    struct Hasher(xxhash_rust::xxh3::Xxh3);
    impl std::io::Write for Hasher {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.update(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut h = Hasher(xxhash_rust::xxh3::Xxh3::new());
    // Serializing plain structs into a writer that never fails cannot fail.
    let _ = serde_json::to_writer(&mut h, &(leg, results, change));
    format!("{:032x}", h.0.digest128())
}

/// The results in the order they are stored, each test's attempts numbered 1, 2, … in the
/// order they ran: the same test reported by two files of one leg (a rerun written apart)
/// is a further attempt, never a lost row.
pub(crate) fn numbered(results: &[TestResult]) -> Vec<TestResult> {
    let mut sorted: Vec<TestResult> = results.to_vec();
    sorted.sort_by(|a, b| a.id.cmp(&b.id).then(a.attempt.cmp(&b.attempt)));
    let mut out: Vec<TestResult> = Vec::with_capacity(sorted.len());
    for mut r in sorted {
        r.attempt = match out.last() {
            Some(prev) if prev.id == r.id => prev.attempt + 1,
            _ => 1,
        };
        out.push(r);
    }
    out
}

pub(crate) fn outcome_name(outcome: TestOutcome) -> &'static str {
    match outcome {
        TestOutcome::Passed => "passed",
        TestOutcome::Failed => "failed",
        TestOutcome::Error => "error",
        TestOutcome::Skipped => "skipped",
    }
}
