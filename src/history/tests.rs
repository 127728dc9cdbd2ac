//! Recorded results numbered into attempts, and store locations read from their names.

use super::record::numbered;
use super::*;
use crate::run::events::{TestOutcome, TestResult};
use std::path::{Path, PathBuf};

fn r(id: &str, attempt: u32, outcome: TestOutcome) -> TestResult {
    TestResult {
        id: id.into(),
        file: None,
        outcome,
        duration_ms: 1,
        attempt,
    }
}

/// A test reported twice in one leg keeps both attempts, in order.
#[test]
fn repeated_tests_are_further_attempts() {
    let got = numbered(&[
        r("b", 1, TestOutcome::Passed),
        r("a", 1, TestOutcome::Failed),
        r("a", 2, TestOutcome::Passed),
        r("a", 1, TestOutcome::Failed),
    ]);
    let keys: Vec<(&str, u32)> = got.iter().map(|r| (r.id.as_str(), r.attempt)).collect();
    assert_eq!(keys, [("a", 1), ("a", 2), ("a", 3), ("b", 1)]);
}

#[test]
fn store_locations() {
    let state = Path::new("/repo/.git/gate");
    assert_eq!(
        location(Some("sqlite:/tmp/h.db"), None, state).unwrap(),
        Location::Sqlite(PathBuf::from("/tmp/h.db"))
    );
    assert_eq!(
        location(Some("rel.db"), None, state).unwrap(),
        Location::Sqlite(PathBuf::from("rel.db"))
    );
    assert_eq!(
        location(None, Some("postgres://u@h/db"), state).unwrap(),
        Location::Postgres("postgres://u@h/db".into())
    );
    assert!(matches!(
        location(Some("mysql://h/db"), Some("sqlite:x"), state),
        Err(StoreError::Url(_))
    ));
}

/// A shard is K of N, 1 <= K <= N; a sharded leg is stored under its environment and shard.
#[test]
fn shards_and_leg_names() {
    use super::provenance::leg_name;
    use crate::run::shard::Shard;
    assert_eq!(Shard::parse("2/3").unwrap(), Shard { index: 2, of: 3 });
    for bad in ["0/3", "4/3", "3", "a/3", "1/", "-1/2"] {
        assert!(Shard::parse(bad).is_err(), "{bad}");
    }
    assert_eq!(
        leg_name("py3.12-linux", Shard::parse("1/2").ok()),
        "py3.12-linux#1/2"
    );
    assert_eq!(leg_name("py", None), "py");
}
