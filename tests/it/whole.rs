//! A run split into shards is whole only when every shard has a leg and every leg a result for
//! each unit its shard was given (issue 49): a run that did not run never looks like a pass.
//! Generated, not picked: the shop's selection frozen into a split of 3, real legs (the real
//! binary running real pytest, `--record`) recorded one at a time in four orders whose
//! prefixes are every subset of the shards — and a run whose cancelled leg is re-run as
//! attempt 2 — each state triaged (exit 14 naming every missing shard and its units until
//! every shard has a leg; the JSON against its schema) and reported (the comment, the step
//! summary and the annotations name the missing shards, list as ran only the units with
//! results and the others as not run). And a leg that recorded fewer units than its shard was
//! given: `gate record --shard` of real pytest's JUnit of part of its shard, on both stores.

use crate::history::{Kind, Store, p, record};
use crate::support::{BREAK_MONEY, TestRepo, text};
use serde_json::Value;
use std::collections::BTreeSet;

/// The shards of the generated split.
const N: u32 = 3;

/// A change on a branch, its selection frozen into a split of `N` by a select job, and each
/// shard's units as the legs given the decision see them.
struct Split {
    t: TestRepo,
    store: Store,
    decision: String,
    /// Shard K's units at `K - 1`.
    shards: Vec<Vec<String>>,
}

impl Split {
    /// `change` is appended to `file` on branch `change`; the select job lists shard 1/N.
    fn new(kind: Kind, file: &str, change: &str) -> Split {
        let t = TestRepo::from_fixture("shop");
        let store = Store::new(kind, &t);
        t.branch("change");
        t.checkout("change");
        t.append(file, change);
        t.commit("change");
        let select = t.report(&[
            "--affected",
            "master...HEAD",
            "--shard",
            &format!("1/{N}"),
            "--leg",
            "py",
            "--db",
            &store.url,
        ]);
        let decision = select["frozen_decision"].as_str().unwrap().to_string();
        let shards: Vec<Vec<String>> = (1..=N)
            .map(|k| {
                let r = t.report(&[
                    "--affected",
                    "master...HEAD",
                    "--shard",
                    &format!("{k}/{N}"),
                    "--decision",
                    &decision,
                    "--leg",
                    "py",
                    "--db",
                    &store.url,
                ]);
                strings(&r["shard"]["units"])
            })
            .collect();
        assert!(
            shards.iter().all(|s| !s.is_empty()),
            "every shard runs something: {shards:?}"
        );
        Split {
            t,
            store,
            decision,
            shards,
        }
    }

    /// Leg `k` of run `run`, attempt `attempt`, as CI runs it: its shard of the decision, run
    /// by real pytest and recorded. `--no-reuse`: the runs share a commit, and a unit the
    /// ledger reused would run nowhere in the later runs.
    fn leg(&self, run: &str, attempt: &str, k: u32) {
        let out = self
            .t
            .gate(&[
                "--affected",
                "master...HEAD",
                "--shard",
                &format!("{k}/{N}"),
                "--decision",
                &self.decision,
                "--leg",
                "py",
                "--record",
                "--no-reuse",
                "--db",
                &self.store.url,
            ])
            .env("GITHUB_RUN_ID", run)
            .env("GITHUB_RUN_ATTEMPT", attempt)
            .output()
            .unwrap();
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "leg {k}: {}",
            text(&out)
        );
    }

    /// Real pytest's JUnit report of `files`, run as a CI step would, outside gate.
    fn junit(&self, name: &str, files: &[String]) -> std::path::PathBuf {
        let out = self.t.root.parent().unwrap().join(format!("{name}.xml"));
        let run = std::process::Command::new("python3")
            .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
            .arg(format!("--junitxml={}", out.display()))
            .args(files)
            .current_dir(&self.t.root)
            .output()
            .unwrap();
        assert!(matches!(run.status.code(), Some(0 | 1)), "{}", text(&run));
        out
    }

    /// `gate triage --run RUN`: the exit code, the JSON (checked against its schema) and the
    /// human form.
    fn triage(&self, run: &str) -> (i32, Value, String) {
        let args = ["triage", "--run", run, "--db", &self.store.url];
        let human = self.t.gate(&args).output().unwrap();
        let mut json = args.to_vec();
        json.push("--json");
        let out = self.t.gate(&json).output().unwrap();
        let doc: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(&out)));
        // A run nothing is recorded under is an error, in JSON too.
        let schema = match doc["kind"].as_str() {
            Some("triage") => "triage.schema.json",
            _ => "error.schema.json",
        };
        crate::plans::validate(schema, &doc);
        assert_eq!(out.status.code(), human.status.code(), "{}", text(&human));
        (out.status.code().unwrap(), doc, text(&human))
    }

    /// `gate report --markdown` (with a step summary to append to) and `--annotations`: both
    /// exit 0 whatever the run; the comment, which the step summary holds too, and the
    /// annotation lines.
    fn report(&self, run: &str) -> (String, Vec<String>) {
        let summary = self
            .t
            .root
            .parent()
            .unwrap()
            .join(format!("summary-{run}.md"));
        let _ = std::fs::remove_file(&summary);
        let out = self
            .t
            .gate(&[
                "report",
                "--markdown",
                "--run",
                run,
                "--db",
                &self.store.url,
            ])
            .env("GITHUB_STEP_SUMMARY", &summary)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let markdown = String::from_utf8(out.stdout).unwrap();
        let kept = std::fs::read_to_string(&summary).unwrap();
        assert_eq!(kept, markdown, "the step summary is the comment");
        let out = self
            .t
            .gate(&[
                "report",
                "--annotations",
                "--run",
                run,
                "--db",
                &self.store.url,
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let lines = String::from_utf8(out.stdout).unwrap();
        (markdown, lines.lines().map(str::to_string).collect())
    }
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not a list: {v}"))
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

/// The first cells of the rows of the comment's table `title`, markdown escapes undone; none
/// when the comment has no such section.
fn column(markdown: &str, title: &str) -> Option<Vec<(String, String)>> {
    let section = markdown.split(&format!("\n### {title}\n")).nth(1)?;
    let section = section.split("\n### ").next().unwrap();
    let plain = |c: &str| c.trim().replace('\\', "");
    Some(
        section
            .lines()
            .filter(|l| l.starts_with("| ") && !l.starts_with("| test |"))
            .map(|l| {
                let cells: Vec<&str> = l.trim_matches('|').split(" | ").collect();
                (plain(cells[0]), plain(cells.get(1).unwrap_or(&"")))
            })
            .collect(),
    )
}

/// What every state of a run must say, from which shards have a leg (`present`): triage exits
/// 14 naming each missing shard with its units, else `whole` (0, or 1 on a new regression);
/// the comment lists as ran exactly the present shards' units and the others as not run,
/// naming the missing shards; the annotations hold one error per missing shard.
fn holds(s: &Split, run: &str, present: &BTreeSet<u32>, whole: i32) {
    let state = format!("run {run} with shards {present:?}");
    let missing: Vec<u32> = (1..=N).filter(|k| !present.contains(k)).collect();
    let (code, doc, human) = s.triage(run);
    if present.is_empty() {
        assert_eq!(code, 3, "{state}: {human}");
        assert!(
            human.contains(&format!("run {run}: nothing recorded under that id")),
            "{state}: {human}"
        );
        return;
    }
    let want = if missing.is_empty() { whole } else { 14 };
    assert_eq!(code, want, "{state}: {human}");
    let group = &doc["shards"][0];
    assert_eq!(
        doc["shards"].as_array().unwrap().len(),
        1,
        "{state}: {doc:#}"
    );
    assert_eq!(group["decision"], s.decision.as_str(), "{state}");
    assert_eq!(group["not_run"], serde_json::json!([]), "{state}: {doc:#}");
    let named: Vec<(String, Vec<String>)> = group["missing"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["leg"].as_str().unwrap().to_string(), strings(&m["units"])))
        .collect();
    let expected: Vec<(String, Vec<String>)> = missing
        .iter()
        .map(|k| (format!("py#{k}/{N}"), s.shards[*k as usize - 1].clone()))
        .collect();
    assert_eq!(named, expected, "{state}: {doc:#}");
    for (leg, units) in &expected {
        let line = human
            .lines()
            .find(|l| l.starts_with(&format!("missing shard   {leg}: ")))
            .unwrap_or_else(|| panic!("{state}: {leg} not named: {human}"));
        for u in units {
            assert!(line.contains(u.as_str()), "{state}: {u} not named: {line}");
        }
    }
    assert_eq!(
        human.matches("missing shard ").count(),
        missing.len(),
        "{state}: {human}"
    );
    reported(s, run, present, &state);
}

/// The comment of the run in state `state` (`present`: the shards with a leg) lists as ran
/// exactly the present shards' units and the others as not run, naming the missing shards;
/// the annotations hold one error per missing shard.
fn reported(s: &Split, run: &str, present: &BTreeSet<u32>, state: &str) {
    let missing: Vec<u32> = (1..=N).filter(|k| !present.contains(k)).collect();
    let (markdown, annotations) = s.report(run);
    let ran: BTreeSet<String> = column(&markdown, "Tests that ran")
        .unwrap()
        .into_iter()
        .map(|(u, _)| u)
        .collect();
    let given = |ks: &mut dyn Iterator<Item = u32>| -> BTreeSet<String> {
        ks.flat_map(|k| s.shards[k as usize - 1].clone()).collect()
    };
    assert_eq!(
        ran,
        given(&mut present.iter().copied()),
        "{state}: {markdown}"
    );
    let not_run = column(&markdown, "Not run");
    if missing.is_empty() {
        assert_eq!(not_run, None, "{state}: {markdown}");
        assert!(!markdown.contains("Not whole"), "{state}: {markdown}");
    } else {
        let not_run = not_run.unwrap_or_else(|| panic!("{state}: no Not run: {markdown}"));
        let units: BTreeSet<String> = not_run.iter().map(|(u, _)| u.clone()).collect();
        assert_eq!(units, given(&mut missing.iter().copied()), "{state}");
        for (unit, why) in &not_run {
            let k = (1..=N).find(|k| s.shards[*k as usize - 1].contains(unit));
            let want = format!("shard py#{}/{N}: no leg recorded", k.unwrap());
            assert_eq!(why, &want, "{state}: {markdown}");
        }
        let legs: Vec<String> = missing.iter().map(|k| format!("py\\#{k}/{N}")).collect();
        assert!(
            markdown.contains(&format!(
                "**Not whole:** no leg recorded shard(s) {}: their tests did not run.",
                legs.join(", ")
            )),
            "{state}: {markdown}"
        );
    }
    let errors: Vec<&String> = annotations
        .iter()
        .filter(|l| l.starts_with("::error title=gate%3A shard py#"))
        .collect();
    assert_eq!(errors.len(), missing.len(), "{state}: {annotations:?}");
    for (e, k) in errors.iter().zip(&missing) {
        assert!(
            e.starts_with(&format!(
                "::error title=gate%3A shard py#{k}/{N} recorded no leg::"
            )),
            "{state}: {e}"
        );
    }
}

/// Four orders of the three legs: their prefixes are every subset of the shards, each state
/// checked as if the run ended there. Then a run whose third leg is cancelled: not whole until
/// its re-run, attempt 2, is recorded; a re-run of another leg changes nothing.
#[test]
fn every_subset_of_missing_shards_is_named_and_exits_14() {
    let s = Split::new(Kind::Sqlite, "src/shop/__init__.py", "\n# touched\n");
    let orders: [[u32; 3]; 4] = [[1, 2, 3], [3, 2, 1], [2, 3, 1], [1, 3, 2]];
    let mut seen: BTreeSet<BTreeSet<u32>> = BTreeSet::new();
    for (n, order) in orders.iter().enumerate() {
        let run = format!("order-{n}");
        let mut present = BTreeSet::new();
        holds(&s, &run, &present, 0);
        seen.insert(present.clone());
        for k in order {
            s.leg(&run, "1", *k);
            present.insert(*k);
            holds(&s, &run, &present, 0);
            seen.insert(present.clone());
        }
    }
    assert_eq!(seen.len(), 1 << N, "every subset of the shards: {seen:?}");
    // A cancelled leg, re-run: attempt 2 of it makes the run whole.
    s.leg("rerun", "1", 1);
    s.leg("rerun", "1", 2);
    holds(&s, "rerun", &BTreeSet::from([1, 2]), 0);
    s.leg("rerun", "2", 3);
    holds(&s, "rerun", &BTreeSet::from([1, 2, 3]), 0);
    s.leg("rerun", "2", 1);
    holds(&s, "rerun", &BTreeSet::from([1, 2, 3]), 0);
}

on_both!(a_leg_that_ran_part_of_its_shard_is_not_whole: part_sqlite, part_postgres);
/// A change that breaks `money.py` (its tests fail): two shards run as legs, the third
/// recorded with `gate record --shard` from real pytest's JUnit of one of its units. Triage
/// exits 14 — before 1, though there are new regressions — naming the leg and each unit it
/// did not run; the comment lists them as not run. The whole shard recorded as attempt 2:
/// the run is whole, and exits 1 for its regressions.
fn a_leg_that_ran_part_of_its_shard_is_not_whole(kind: Kind) {
    let s = Split::new(kind, "src/shop/money.py", BREAK_MONEY);
    let k = (1..=N)
        .find(|k| s.shards[*k as usize - 1].len() >= 2)
        .expect("a shard of two units or more");
    let units = &s.shards[k as usize - 1];
    for other in (1..=N).filter(|o| *o != k) {
        s.leg("part", "1", other);
    }
    let shard = format!("{k}/{N}");
    let rec = |xml: &std::path::Path, attempt: &str| {
        let args = [
            "--junit",
            p(xml),
            "--run",
            "part",
            "--attempt",
            attempt,
            "--leg",
            "py",
            "--shard",
            &shard,
        ];
        let out = record(&s.t, &s.store, &args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    };
    rec(&s.junit("part", &units[..1]), "1");
    let (code, doc, human) = s.triage("part");
    assert_eq!(code, 14, "{human}");
    assert!(
        doc["counts"]["new_regression"].as_u64().unwrap() > 0,
        "{doc:#}"
    );
    let group = &doc["shards"][0];
    assert_eq!(group["missing"], serde_json::json!([]), "{doc:#}");
    assert_eq!(
        group["not_run"],
        serde_json::json!([{
            "leg": format!("py#{shard}"),
            "attempt": 1,
            "given": units.len(),
            "units": units[1..],
        }]),
        "{doc:#}"
    );
    let line = human
        .lines()
        .find(|l| l.starts_with(&format!("not run         leg `py#{shard}` attempt 1 ")))
        .unwrap_or_else(|| panic!("{human}"));
    assert!(
        line.contains(&format!(
            "recorded no result for {} of its shard's {} test unit(s)",
            units.len() - 1,
            units.len()
        )),
        "{line}"
    );
    for u in &units[1..] {
        assert!(line.contains(u.as_str()), "{line}");
    }
    short_reported(&s, &shard, units);
    // The whole shard, recorded as the leg's next attempt: whole, and red for its regressions.
    rec(&s.junit("whole", units), "2");
    let (code, doc, human) = s.triage("part");
    assert_eq!(code, 1, "{human}");
    assert_eq!(
        doc["shards"][0]["not_run"],
        serde_json::json!([]),
        "{doc:#}"
    );
    assert!(!human.contains("not whole"), "{human}");
}

/// The comment of a run whose leg of `shard` ran only the first of `units`: the others not
/// run, each with why; an annotation names the leg and how many it did not run.
fn short_reported(s: &Split, shard: &str, units: &[String]) {
    let (markdown, annotations) = s.report("part");
    let not_run = column(&markdown, "Not run").unwrap_or_else(|| panic!("{markdown}"));
    let want: Vec<(String, String)> = units[1..]
        .iter()
        .map(|u| (u.clone(), format!("leg py#{shard} recorded no result")))
        .collect();
    assert_eq!(not_run, want, "{markdown}");
    assert!(
        annotations.iter().any(|l| l.starts_with(&format!(
            "::error title=gate%3A leg py#{shard} did not run {} of its {} test unit(s)::",
            units.len() - 1,
            units.len()
        ))),
        "{annotations:?}"
    );
}
