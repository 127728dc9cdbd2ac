//! `gate shards --suggest`: the recorded durations of one environment packed for 1..=max legs
//! as `--shard K/N` packs them; the table against packings worked out by hand, the suggested
//! number under several fixed costs, the JSON against its schema, and nothing recorded under
//! the environment an error naming the store and how to record.

use crate::history::{Kind, Store, p, record};
use crate::support::{TestRepo, text};
use serde_json::Value;

/// Test files and the seconds each takes: 3, 3, 2, 2, 2 (12 in all). test_s0 takes its 3 s
/// as two cases of 1.5 s: a unit's time is its tests' added up.
const UNITS: [(&str, &[f64]); 5] = [
    ("tests/test_s0.py", &[1.5, 1.5]),
    ("tests/test_s1.py", &[3.0]),
    ("tests/test_s2.py", &[2.0]),
    ("tests/test_s3.py", &[2.0]),
    ("tests/test_s4.py", &[2.0]),
];

/// A JUnit report (pytest's xunit1, with `file`) of `units`, each case passing unless listed
/// in `failing`.
fn junit(
    t: &TestRepo,
    name: &str,
    units: &[(&str, &[f64])],
    failing: &[&str],
) -> std::path::PathBuf {
    let mut xml = String::from("<?xml version=\"1.0\"?><testsuites><testsuite name=\"pytest\">");
    for (file, times) in units {
        let classname = file.trim_end_matches(".py").replace('/', ".");
        for (i, secs) in times.iter().enumerate() {
            let body = if failing.contains(file) {
                "<failure message=\"boom\">assert False</failure>"
            } else {
                ""
            };
            xml.push_str(&format!(
                "<testcase classname=\"{classname}\" name=\"test_{i}\" file=\"{file}\" time=\"{secs:.3}\">{body}</testcase>"
            ));
        }
    }
    xml.push_str("</testsuite></testsuites>");
    let path = t.root.parent().unwrap().join(format!("{name}.xml"));
    std::fs::write(&path, xml).unwrap();
    path
}

/// The shop fixture with the five test files committed, and `store` holding: run 1 of `ci`
/// (the durations above); run 2 of `ci` where test_s1 failed after 90 s (a failing leg is no
/// guide: left out); run 3 of `mac`, every unit 100 s (another environment: never read).
fn recorded(store_kind: Kind) -> (TestRepo, Store) {
    let t = TestRepo::from_fixture("shop");
    for (file, _) in UNITS {
        t.write(file, "def test_0():\n    pass\n");
    }
    t.commit("five timed test files");
    let store = Store::new(store_kind, &t);
    let rec = |name: &str, run: &str, leg: &str, units: &[(&str, &[f64])], failing: &[&str]| {
        let xml = junit(&t, name, units, failing);
        let out = record(
            &t,
            &store,
            &["--junit", p(&xml), "--run", run, "--leg", leg],
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    };
    rec("ci-1", "1", "ci", &UNITS, &[]);
    rec(
        "ci-2",
        "2",
        "ci",
        &[("tests/test_s1.py", &[90.0])],
        &["tests/test_s1.py"],
    );
    let slow: Vec<(&str, &[f64])> = UNITS.iter().map(|(f, _)| (*f, &[100.0][..])).collect();
    rec("mac-3", "3", "mac", &slow, &[]);
    (t, store)
}

/// `gate shards --suggest --json --leg ci --max 5 …`, checked against its schema.
fn suggest(t: &TestRepo, store: &Store, extra: &[&str]) -> Value {
    let mut args = vec![
        "shards",
        "--suggest",
        "--json",
        "--leg",
        "ci",
        "--max",
        "5",
        "--db",
        &store.url,
    ];
    args.extend(extra);
    let out = t.gate(&args).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(&out)));
    crate::plans::validate("shards.schema.json", &doc);
    doc
}

fn column(doc: &Value, key: &str) -> Vec<u64> {
    doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r[key].as_u64().unwrap())
        .collect()
}

/// By hand, for 3, 3, 2, 2, 2 s: 1 leg 12; 2 legs 3+3 / 2+2+2 = 6 (longest-first alone gives
/// 3+2+2 = 7: the search's swap); 3 legs 3+2 / 3+2 / 2 = 5 (no shard can hold 4: a 3 has
/// nothing of 1 to go with), bound 4; 4 legs 3 / 3 / 2+2 / 2 = 4, bound 3, the longest unit;
/// 5 legs 3, the longest unit. With a fixed cost of 1 s the slowest legs take 13, 7, 6, 5, 4:
/// 5 legs; 60 s: 72, 66, 65, 64, 63, within 10% of 63 (69.3) first at 2 legs; 3m: 1 leg.
#[test]
fn the_table_is_the_hand_worked_packing_and_the_fixed_cost_moves_the_suggestion() {
    let (t, store) = recorded(Kind::Sqlite);
    let doc = suggest(&t, &store, &["--fixed-cost", "1s"]);
    assert_eq!(doc["environment"], "ci");
    assert_eq!(doc["units"], 5);
    assert_eq!(
        (doc["total_ms"].as_u64(), doc["longest_ms"].as_u64()),
        (Some(12_000), Some(3_000))
    );
    assert_eq!(column(&doc, "shards"), [1, 2, 3, 4, 5]);
    assert_eq!(
        column(&doc, "makespan_ms"),
        [12_000, 6_000, 5_000, 4_000, 3_000]
    );
    assert_eq!(
        column(&doc, "bound_ms"),
        [12_000, 6_000, 4_000, 3_000, 3_000]
    );
    let longest: Vec<bool> = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["bound_is_longest"].as_bool().unwrap())
        .collect();
    assert_eq!(longest, [false, false, false, true, true]);
    assert_eq!(doc["rows"][2]["ratio"].as_f64(), Some(1.25));
    assert_eq!(
        column(&doc, "wall_ms"),
        [13_000, 7_000, 6_000, 5_000, 4_000]
    );
    assert_eq!(
        column(&doc, "machine_ms"),
        [13_000, 14_000, 15_000, 16_000, 17_000]
    );
    assert_eq!(doc["fixed_cost_ms"], 1_000);
    assert_eq!(doc["recommended"], 5);

    for (cost, ms, legs) in [("60s", 60_000, 2), ("3m", 180_000, 1), ("500ms", 500, 5)] {
        let doc = suggest(&t, &store, &["--fixed-cost", cost]);
        assert_eq!(doc["fixed_cost_ms"], ms, "--fixed-cost {cost}");
        assert_eq!(doc["recommended"], legs, "--fixed-cost {cost}");
    }

    // The human table says the same, and the rule it chose by.
    let out = t
        .gate(&[
            "shards",
            "--suggest",
            "--leg",
            "ci",
            "--max",
            "5",
            "--fixed-cost",
            "60s",
            "--db",
            &store.url,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let human = String::from_utf8(out.stdout).unwrap();
    assert!(
        human.contains("5 test units recorded under `ci`"),
        "{human}"
    );
    assert!(
        human
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>()
                == [
                    "3", "5.0", "s", "4.0", "s", "1.2500", "65.0", "s", "192.0", "s"
                ]),
        "{human}"
    );
    assert!(
        human.contains("suggested: 2 leg(s) (`--shard K/2`)"),
        "{human}"
    );
    assert!(
        human.contains("at most 10% longer than the fastest"),
        "{human}"
    );
}

/// An environment with nothing recorded (a misspelt `--leg`, or no run recorded yet) is an
/// error (exit 3) naming the store, the environments that are recorded and how to record;
/// with --json, the error document.
#[test]
fn nothing_recorded_under_the_environment_says_where_and_how_to_record() {
    let (t, store) = recorded(Kind::Sqlite);
    let out = t
        .gate(&["shards", "--suggest", "--leg", "py3.12", "--db", &store.url])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    for part in [
        "`py3.12`",
        &store.url["sqlite:".len()..],
        "legs are recorded under `ci`, `mac`",
        "gate --affected RANGE --record --leg py3.12",
    ] {
        assert!(err.contains(part), "{part}: {err}");
    }
    let out = t
        .gate(&[
            "shards",
            "--suggest",
            "--json",
            "--leg",
            "py3.12",
            "--db",
            &store.url,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    crate::plans::validate("error.schema.json", &doc);

    // An empty store: nothing recorded there yet.
    let empty = TestRepo::from_fixture("shop");
    let out = empty.gate(&["shards", "--suggest"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(
        text(&out).contains("nothing is recorded there yet"),
        "{}",
        text(&out)
    );
}
