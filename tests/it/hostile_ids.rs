//! Leg names, run ids, environments and workflow names are text from outside (a matrix value,
//! `GITHUB_RUN_ID`, a flag): every human line shows them escaped (issue 49). Generated: ids
//! built from a seeded mix of what a CI log or terminal acts on — a newline or `\r` before a
//! workflow command (`::error::`, `::warning file=…::`, `::add-mask::`), SGR and OSC escapes,
//! `%0A`, bidirectional overrides, leading blanks, thousands of characters — recorded as legs
//! of runs (`gate record`, and a gated run with `--record --shard`), then read back by
//! `gate triage`, `gate report` (markdown, step summary, annotations), `gate history` and
//! `gate shards`. No output holds ESC, `\r` or a bidi override; no line starts with `::` but
//! the annotations gate writes, whose count is what the run holds; `--json` keeps the values
//! as they were. An empty `--workflow` is refused by name.

use crate::history::{Kind, Store, p, record};
use crate::support::{BREAK_MONEY, Rng, TestRepo, text};
use serde_json::Value;

/// What a terminal or a CI runner acts on.
const PIECES: &[&str] = &[
    "\n",
    "\r",
    "\r\n",
    "\n  ",
    "\n\t",
    "\u{1b}[8m",
    "\u{1b}[2J",
    "\u{1b}]0;owned\u{7}",
    "%0A",
    "%0D%0A",
    "\u{202e}",
    "\u{2066}",
    "\u{200f}",
];
const COMMANDS: &[&str] = &[
    "::error::forged",
    "::warning file=x.py,line=1::forged",
    "::add-mask::secret",
    "::stop-commands::token",
    "::notice title=t::forged",
];

/// `n` ids named `stem`: each a seeded mix of pieces and commands, and one very long.
fn hostile(rng: &mut Rng, stem: &str, n: usize) -> Vec<String> {
    let mut ids: Vec<String> = (0..n)
        .map(|i| {
            let mut id = format!("{stem}{i}");
            for _ in 0..1 + rng.below(3) {
                id.push_str(rng.pick(PIECES));
                id.push_str(rng.pick(COMMANDS));
            }
            id
        })
        .collect();
    ids.push(format!("{stem}{}\n::error::long", "x".repeat(5_000)));
    ids
}

/// What no output may hold: ESC, a carriage return, a bidi override; and a line a runner
/// reads as a workflow command, unless `commands` of them are gate's annotations.
fn clean(what: &str, out: &str, commands: usize) {
    let bad = out.chars().find(|c| {
        matches!(c, '\u{1b}' | '\r' | '\u{7}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    });
    assert_eq!(bad, None, "{what}: {out:?}");
    let forged: Vec<&str> = out
        .lines()
        .filter(|l| l.trim_start().starts_with("::"))
        .collect();
    assert_eq!(forged.len(), commands, "{what}: {forged:#?}");
}

/// `value` as a human line shows it: each control character and bidi mark as an escape
/// (`\n`, `\u{1b}`), so the whole value stays on its line.
fn escaped(value: &str) -> String {
    value
        .chars()
        .map(|c| match c {
            '\n' => "\\n".to_string(),
            '\r' => "\\r".to_string(),
            '\t' => "\t".to_string(),
            c if c.is_control()
                || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}') =>
            {
                format!("\\u{{{:x}}}", c as u32)
            }
            c => c.to_string(),
        })
        .collect()
}

/// Runs `gate ARGS` with `env`: its exit code and stdout + stderr.
fn gate(t: &TestRepo, args: &[&str], env: &[(&str, &str)]) -> (i32, String) {
    let mut cmd = t.gate(args);
    cmd.env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_WORKFLOW");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (out.status.code().unwrap(), text(&out))
}

#[test]
fn hostile_leg_and_run_ids_never_reach_a_line_raw() {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(Kind::Sqlite, &t);
    let db = store.url.clone();
    t.branch("change");
    t.checkout("change");
    t.append("src/shop/money.py", BREAK_MONEY);
    t.commit("break money");
    // Real pytest's report of the broken change: 4 failing tests, each a new regression.
    let xml = t.root.parent().unwrap().join("junit.xml");
    let run = std::process::Command::new("python3")
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(format!("--junitxml={}", xml.display()))
        .arg("tests")
        .current_dir(&t.root)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1), "{}", text(&run));
    let mut rng = Rng(0x5eed_0049);
    let legs = hostile(&mut rng, "leg", 6);
    let runs = hostile(&mut rng, "run", 6);
    for (leg, run) in legs.iter().zip(&runs) {
        recorded(&t, &store, &xml, leg, run);
        let regressions = triaged(&t, &db, leg, run);
        reported(&t, &db, leg, run, regressions);
    }
    // A run id nothing is recorded under is named, escaped, on one line.
    let (code, out) = gate(&t, &["triage", "--run", &runs[0][1..], "--db", &db], &[]);
    assert_eq!(code, 3, "{out}");
    clean("gate triage of an unknown run", &out, 0);
    assert_eq!(out.lines().count(), 1, "{out}");
}

/// Two legs of run `run` recorded from `xml`: `leg` as shard 1 of 2 (shard 2 never recorded)
/// and a plain one, so verdict lines name their leg; the first uploaded again, said unchanged.
/// Each record says so on one line, the values whole on it.
fn recorded(t: &TestRepo, store: &Store, xml: &std::path::Path, leg: &str, run: &str) {
    let hostile = ["--leg", leg, "--shard", "1/2"];
    let name = escaped(&format!("{leg}#1/2"));
    let says = [
        format!("recorded leg `{name}` of run {} attempt 1 ", escaped(run)),
        format!("recorded leg `plain` of run {} attempt 1 ", escaped(run)),
        format!(
            "already recorded, unchanged leg `{name}` of run {} ",
            escaped(run)
        ),
    ];
    for (args, says) in [&hostile[..], &["--leg", "plain"], &hostile[..]]
        .iter()
        .zip(says)
    {
        let mut all = vec!["--junit", p(xml), "--run", run];
        all.extend(*args);
        let out = record(t, store, &all);
        let shown = text(&out);
        assert_eq!(out.status.code(), Some(0), "{shown}");
        clean("gate record", &shown, 0);
        assert_eq!(shown.lines().count(), 1, "{shown}");
        assert!(shown.contains(&says), "{says}: {shown}");
    }
}

/// `gate triage` of the run: exit 14 (shard 2 is missing), the missing shard named escaped,
/// no value adding a line; `--json` valid, against its schema, keeping the values. Its new
/// regressions.
fn triaged(t: &TestRepo, db: &str, leg: &str, run: &str) -> usize {
    let (code, human) = gate(t, &["triage", "--run", run, "--db", db], &[]);
    assert_eq!(code, 14, "a shard is missing: {human}");
    clean("gate triage", &human, 0);
    let missing = escaped(&format!("{leg}#2/2"));
    assert!(
        human.contains(&format!(
            "\nmissing shard   {missing}: no leg recorded it ("
        )),
        "{human}"
    );
    let (_, out) = gate(t, &["triage", "--run", run, "--db", db, "--json"], &[]);
    let doc: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    crate::plans::validate("triage.schema.json", &doc);
    // Each verdict two lines, the missing shard one, the counts one: no value adds one.
    let verdicts = doc["verdicts"].as_array().unwrap().len();
    assert_eq!(human.lines().count(), 2 * verdicts + 2, "{human}");
    assert_eq!(doc["run"], run, "--json keeps the value");
    assert_eq!(doc["shards"][0]["environment"], leg);
    doc["counts"]["new_regression"].as_u64().unwrap() as usize
}

/// `gate report` (markdown with the leg as the workflow's name, the step summary, the
/// annotations: the missing shard's error and one per new regression, nothing else),
/// `gate history` and `gate shards --suggest --leg`: all clean.
fn reported(t: &TestRepo, db: &str, leg: &str, run: &str, regressions: usize) {
    let summary = t.root.parent().unwrap().join("summary.md");
    let report = [
        "report",
        "--markdown",
        "--run",
        run,
        "--db",
        db,
        "--workflow",
        leg,
    ];
    let (code, out) = gate(t, &report, &[("GITHUB_STEP_SUMMARY", p(&summary))]);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("<!-- gate-report workflow=leg"), "{out}");
    clean("gate report --markdown", &out, 0);
    let kept = std::fs::read_to_string(&summary).unwrap();
    clean("the step summary", &kept, 0);
    let args = ["report", "--annotations", "--run", run, "--db", db];
    let (code, out) = gate(t, &args, &[]);
    assert_eq!(code, 0, "{out}");
    clean("gate report --annotations", &out, 1 + regressions);
    assert_eq!(out.lines().count(), 1 + regressions, "{out}");
    let money = "tests/test_money.py::test_to_cents";
    let (code, out) = gate(t, &["history", money, "--db", db], &[]);
    assert_eq!(code, 0, "{out}");
    clean("gate history", &out, 0);
    let (code, out) = gate(t, &["shards", "--suggest", "--leg", leg, "--db", db], &[]);
    assert!(matches!(code, 0 | 3), "{out}");
    clean("gate shards --suggest", &out, 0);
}

/// A gated leg (`--record --shard`) whose environment and CI run id are hostile: its live
/// output, its shard line and its record line are escaped.
#[test]
fn a_gated_leg_with_hostile_ids_is_escaped() {
    let t = TestRepo::from_fixture("shop");
    t.branch("change");
    t.checkout("change");
    t.append("src/shop/__init__.py", "\n# touched\n");
    t.commit("change");
    let mut rng = Rng(0x5eed_0050);
    for (leg, run) in hostile(&mut rng, "leg", 2)
        .iter()
        .zip(hostile(&mut rng, "run", 2).iter())
    {
        let args = [
            "--affected",
            "master...HEAD",
            "--shard",
            "1/2",
            "--leg",
            leg,
            "--record",
            "--no-reuse",
        ];
        let (code, out) = gate(
            &t,
            &args,
            &[("GITHUB_RUN_ID", run), ("GITHUB_RUN_ATTEMPT", "1")],
        );
        assert_eq!(code, 0, "{out}");
        clean("a gated leg", &out, 0);
        assert!(
            out.lines().any(|l| l.starts_with("shard 1/2: ")
                && l.contains(&format!(" recorded under `{}`", escaped(leg)))),
            "{out}"
        );
        let name = escaped(&format!("{leg}#1/2"));
        assert!(
            out.contains(&format!(
                "\ngate record: recorded leg `{name}` of run {} attempt 1 ",
                escaped(run)
            )),
            "{out}"
        );
    }
}

/// An empty `--workflow` (a script's unset variable) is refused by name, exit 3; an empty
/// GITHUB_WORKFLOW is as if unset: the marker says `gate`.
#[test]
fn an_empty_workflow_is_refused() {
    let t = TestRepo::from_fixture("shop");
    let store = Store::new(Kind::Sqlite, &t);
    let xml = crate::triage::junit(&t, "one", &[(crate::triage::MONEY, "passed")]);
    let out = record(&t, &store, &["--junit", p(&xml), "--run", "1"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let args = ["report", "--markdown", "--db", &store.url];
    let mut empty = args.to_vec();
    empty.extend(["--workflow", ""]);
    let (code, out) = gate(&t, &empty, &[]);
    assert_eq!(code, 3, "{out}");
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.starts_with("error: --workflow is empty"), "{out}");
    let (code, out) = gate(&t, &args, &[("GITHUB_WORKFLOW", "")]);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("<!-- gate-report workflow=gate "), "{out}");
}
