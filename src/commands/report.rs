//! `gate report`: a recorded run for the pull request and the CI system — the comment body
//! (`--markdown`, also appended to `GITHUB_STEP_SUMMARY` when set), workflow-command
//! annotations (`--annotations`) and a JUnit report of the verdicts (`--junit FILE`). Read from
//! the store alone; the verdict rows' reasons and the reused passes come from the decision
//! frozen for the run's commit and base, when the store holds one; a split run's missing shards
//! and units not run from its frozen split (`proof::whole`). gate posts nothing: the
//! workflow, which holds the token, does.

use crate::error::{Error, Result};
use crate::history::triage::{Rules, Triaged, Verdict};
use crate::history::{Store, triage::LegInfo};
use crate::proof::whole::Whole;
use crate::report::ci::{self, Annotation};
use crate::report::markdown::{self, Summary};
use crate::run::events::TestResult;
use std::collections::BTreeMap;
use std::path::Path;

struct Args<'a> {
    pub run: Option<&'a str>,
    pub db: Option<&'a str>,
    pub markdown: bool,
    pub annotations: bool,
    pub junit: Option<&'a Path>,
    pub workflow: Option<&'a str>,
}

/// `gate report`'s arguments, from the command line.
pub(super) fn dispatch(dir: &Path, sub: crate::cli::Sub) -> Result<u8> {
    let crate::cli::Sub::Report {
        run: id,
        markdown,
        annotations,
        junit,
        workflow,
        db,
    } = sub
    else {
        return Err(Error::Internal(format!("{sub:?} is not `gate report`")));
    };
    run(
        dir,
        &Args {
            run: id.as_deref(),
            db: db.as_deref(),
            markdown,
            annotations,
            junit: junit.as_deref(),
            workflow: workflow.as_deref(),
        },
    )
}

fn run(dir: &Path, args: &Args<'_>) -> Result<u8> {
    if !args.markdown && !args.annotations && args.junit.is_none() {
        return Err(Error::Usage(
            "gate report: say what to write: --markdown, --annotations or --junit FILE".into(),
        ));
    }
    // An empty name would make a marker every unnamed workflow shares: said, not defaulted,
    // since a flag given empty is a script's unset variable.
    if args.workflow.is_some_and(str::is_empty) {
        return Err(Error::Usage(
            "--workflow is empty: give the workflow's name (GitHub's is in GITHUB_WORKFLOW), or leave the flag out for GITHUB_WORKFLOW, else `gate`".into(),
        ));
    }
    let repo = crate::repo::open(dir)?;
    let crate::history::RecordedRun {
        mut store,
        config,
        run,
        legs,
    } = crate::history::recorded_run(&repo, args.db, args.run)?;
    let first = &legs[0];
    let known_flaky = |file: &str| config.known_flaky_of(file);
    let rules = Rules {
        window_days: config.history.window_days,
        known_flaky: &known_flaky,
    };
    let mut read = Read::default();
    for leg in &legs {
        read.leg(&mut store, leg, &rules)?;
    }
    let frozen = store.decision_for(&first.commit, first.base.as_deref())?;
    let frozen: serde_json::Value = frozen
        .and_then(|(_, body)| serde_json::from_str(&body).ok())
        .unwrap_or_default();
    let workflow = args
        .workflow
        .map(str::to_string)
        .or_else(|| {
            std::env::var("GITHUB_WORKFLOW")
                .ok()
                .filter(|w| !w.is_empty())
        })
        .unwrap_or_else(|| "gate".into());
    let shadow = shadow_line(&mut store, &first.commit, config.history.window_days)?;
    let whole = crate::proof::whole::read(&mut store, &legs)?;
    let summary = read.summary(&run, &legs, (&frozen, &whole), workflow, shadow);
    if args.markdown {
        let text = markdown::render(&summary);
        if let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) {
            ci::append_step_summary(Path::new(&path), &text)
                .map_err(|e| Error::io(Path::new(&path), "cannot append the step summary", e))?;
        }
        say!("{text}");
    }
    if args.annotations {
        let (mut errors, warnings) = annotations(&repo, &read, &summary, &first.commit);
        // A run that is not whole is the first thing to see: its gaps go before the regressions.
        errors.splice(0..0, gaps(&whole));
        for line in ci::annotations(&errors, &warnings) {
            crate::terminal::say_command(&line)?;
        }
    }
    if let Some(out) = args.junit {
        let xml = ci::junit(&summary.rows, &summary.triaged);
        std::fs::write(out, xml).map_err(|e| Error::io(out, "cannot write the JUnit report", e))?;
    }
    Ok(crate::exit_codes::OK)
}

/// What the run's legs recorded.
#[derive(Default)]
struct Read {
    triaged: Vec<Triaged>,
    paths: BTreeMap<String, String>,
    /// Test unit → the changed paths that selected it.
    selected: BTreeMap<String, Vec<String>>,
    results: Vec<TestResult>,
}

impl Read {
    fn leg(
        &mut self,
        store: &mut Store,
        leg: &LegInfo,
        rules: &Rules<'_>,
    ) -> std::result::Result<(), crate::history::StoreError> {
        self.triaged.extend(store.triage(leg, rules)?);
        let change = store.change_of(leg.seq)?;
        self.paths.extend(change.paths);
        for (unit, cause) in change.selected {
            let causes = self.selected.entry(unit).or_default();
            if !causes.contains(&cause) {
                causes.push(cause);
            }
        }
        self.results.extend(store.results_of_leg(leg.seq)?);
        Ok(())
    }

    /// The passes the ledger reused: the frozen decision's, kept only where this run's legs
    /// agree — selected, with no result recorded. A leg does not record its decision's id,
    /// and the decision read is the latest frozen for the commit and base: one frozen by a
    /// later gate of the same commit names no reuse this run did not make.
    fn reused(&self, frozen: &serde_json::Value) -> BTreeMap<String, String> {
        let ran: std::collections::BTreeSet<&str> = self
            .results
            .iter()
            .filter_map(|r| r.file.as_deref())
            .collect();
        frozen["reused"]
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(unit, _)| self.selected.contains_key(*unit) && !ran.contains(unit.as_str()))
            .map(|(unit, p)| {
                let at = p["commit"]
                    .as_str()
                    .map_or("", |c| c.get(..12).unwrap_or(c));
                let leg = p["leg"].as_str().unwrap_or("");
                (unit.clone(), format!("passed at {at} on {leg}"))
            })
            .collect()
    }

    /// The units with a result, each with what selected it; and the units that were to run
    /// and have none — selected by the run's change, or given to a shard of its split — each
    /// with why. A selected unit with no result did not run, whatever selected it.
    fn ran(
        &self,
        frozen: &serde_json::Value,
        reused: &BTreeMap<String, String>,
        whole: &Whole,
    ) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
        // A unit history added (failing on main, a co-failure, a traced edge) has no changed
        // path as its cause: the frozen decision's first reason says why it was selected.
        let reason = |unit: &str| frozen["selected"][unit][0].as_str().map(str::to_string);
        let mut ran = BTreeMap::new();
        for r in &self.results {
            if let Some(file) = &r.file
                && !reused.contains_key(file)
            {
                ran.entry(file.clone()).or_insert_with(|| {
                    self.selected.get(file).map_or_else(
                        || reason(file).unwrap_or_else(|| "ran".into()),
                        |causes| causes.join(", "),
                    )
                });
            }
        }
        let ids: std::collections::BTreeSet<&str> =
            self.results.iter().map(|r| r.id.as_str()).collect();
        let mut not_run = whole.not_run();
        not_run.retain(|unit, _| !ran.contains_key(unit) && !ids.contains(unit.as_str()));
        for unit in self.selected.keys() {
            if !ran.contains_key(unit) && !reused.contains_key(unit) {
                not_run
                    .entry(unit.clone())
                    .or_insert_with(|| "selected; no leg recorded a result".into());
            }
        }
        (ran, not_run)
    }

    fn summary(
        &mut self,
        run: &str,
        legs: &[LegInfo],
        (frozen, whole): (&serde_json::Value, &Whole),
        workflow: String,
        shadow: Option<String>,
    ) -> Summary {
        let rank = |v: Verdict| match v {
            Verdict::NewRegression => 0,
            Verdict::PreExisting => 1,
            Verdict::Flaky => 2,
            Verdict::Unknown => 3,
        };
        self.triaged.sort_by(|a, b| {
            (rank(a.verdict), &a.test, &a.leg).cmp(&(rank(b.verdict), &b.test, &b.leg))
        });
        let why: BTreeMap<&str, &str> = frozen["rows"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| Some((r["path"].as_str()?, r["reasons"][0].as_str()?)))
            .collect();
        let reused = self.reused(frozen);
        let (ran, not_run) = self.ran(frozen, &reused, whole);
        let mut slowest: Vec<(String, u64)> = self
            .results
            .iter()
            .map(|r| (r.id.clone(), r.duration_ms))
            .collect();
        slowest.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        slowest.dedup_by(|a, b| a.0 == b.0);
        slowest.truncate(5);
        Summary {
            workflow,
            run: run.to_string(),
            head: legs[0].commit.clone(),
            attempt: legs.iter().map(|l| l.attempt).max().unwrap_or(1),
            legs: legs.iter().map(|l| l.leg.clone()).collect(),
            triaged: self.triaged.iter().map(triaged_row).collect(),
            rows: self
                .paths
                .iter()
                .map(|(p, v)| {
                    [
                        p.clone(),
                        v.clone(),
                        (*why.get(p.as_str()).unwrap_or(&"")).into(),
                    ]
                })
                .collect(),
            ran: ran.into_iter().map(|(u, c)| [u, c]).collect(),
            not_run: not_run.into_iter().map(|(u, c)| [u, c]).collect(),
            missing: whole
                .missing_legs()
                .into_iter()
                .map(str::to_string)
                .collect(),
            reused: reused.into_iter().map(|(u, c)| [u, c]).collect(),
            shadow,
            results: self.results.len(),
            total_ms: self.results.iter().map(|r| r.duration_ms).sum(),
            slowest,
        }
    }
}

/// An error per shard no leg recorded and per leg that recorded no result for some of its
/// shard's units, naming what did not run.
fn gaps(whole: &Whole) -> Vec<Annotation> {
    let names = |units: &[String]| {
        let shown: Vec<String> = units
            .iter()
            .take(10)
            .map(|u| crate::terminal::shown(u).to_string())
            .collect();
        match units.len().saturating_sub(10) {
            0 => shown.join(", "),
            more => format!("{} and {more} more", shown.join(", ")),
        }
    };
    let mut out = Vec::new();
    for g in &whole.groups {
        for m in &g.missing {
            out.push(Annotation {
                file: None,
                line: None,
                title: format!(
                    "gate: shard {} recorded no leg",
                    crate::terminal::shown(&m.leg)
                ),
                message: if m.units.is_empty() {
                    "the run is not whole: its units are not known (no decision split it)".into()
                } else {
                    format!(
                        "the run is not whole: {} test unit(s) did not run: {}",
                        m.units.len(),
                        names(&m.units)
                    )
                },
            });
        }
        for s in &g.not_run {
            out.push(Annotation {
                file: None,
                line: None,
                title: format!(
                    "gate: leg {} did not run {} of its {} test unit(s)",
                    crate::terminal::shown(&s.leg),
                    s.units.len(),
                    s.given
                ),
                message: format!("the run is not whole: not run: {}", names(&s.units)),
            });
        }
    }
    out
}

/// A triaged test as the comment's and JUnit's row: verdict, confidence, test, leg, evidence.
fn triaged_row(t: &Triaged) -> [String; 5] {
    let confidence = serde_json::to_value(t.confidence)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    [
        t.verdict.name().into(),
        confidence,
        t.test.clone(),
        t.leg.clone(),
        t.evidence.clone(),
    ]
}

/// The last shadow compare recorded at `commit` in the window, as one line.
fn shadow_line(store: &mut Store, commit: &str, days: u64) -> Result<Option<String>> {
    let Some(s) = store
        .shadows(days)?
        .into_iter()
        .rev()
        .find(|s| s.commit == commit)
    else {
        return Ok(None);
    };
    let judged: Vec<serde_json::Value> = serde_json::from_str(&s.judged).unwrap_or_default();
    let class = |c: &str| judged.iter().filter(|j| j["class"] == c).count();
    Ok(Some(format!(
        "decision {}: {} failing in the whole suite: {} caught, {} missed, {} flaky, {} pre-existing",
        s.decision.get(..12).unwrap_or(&s.decision),
        judged.len(),
        class("caught"),
        class("missed"),
        class("flaky"),
        class("pre_existing")
    )))
}

/// An error per new regression (at its test's definition when the test file at the run's
/// commit shows it), a warning per refused path.
fn annotations(
    repo: &git2::Repository,
    read: &Read,
    summary: &Summary,
    commit: &str,
) -> (Vec<Annotation>, Vec<Annotation>) {
    let file_of: BTreeMap<&str, &str> = read
        .results
        .iter()
        .filter_map(|r| Some((r.id.as_str(), r.file.as_deref()?)))
        .collect();
    let errors = read
        .triaged
        .iter()
        .filter(|t| t.verdict == Verdict::NewRegression)
        .map(|t| {
            // A Go unit is a package folder: no file to point at, the test named in the title.
            let file = file_of
                .get(t.test.as_str())
                .map(|f| (*f).to_string())
                .or_else(|| t.test.split_once("::").map(|(f, _)| f.to_string()))
                .filter(|f| f.ends_with(".py"));
            let line = file
                .as_deref()
                .and_then(|f| line_of(repo, commit, f, &t.test));
            Annotation {
                file: file.map(|f| crate::terminal::shown(&f).to_string()),
                line,
                title: format!("new regression: {}", crate::terminal::shown(&t.test)),
                message: format!(
                    "[{}] {}",
                    crate::terminal::shown(&t.leg),
                    crate::terminal::shown(&t.evidence)
                ),
            }
        })
        .collect();
    let warnings = summary
        .rows
        .iter()
        .filter(|[_, verdict, _]| verdict == "refused")
        .map(|[path, _, why]| Annotation {
            file: Some(crate::terminal::shown(path).to_string()),
            line: None,
            title: "gate refused this change".into(),
            message: if why.is_empty() {
                "gate could not bound what this change reaches".into()
            } else {
                crate::terminal::shown(why).to_string()
            },
        })
        .collect();
    (errors, warnings)
}

/// The line of `def NAME` for test id `id` in `file` at `commit`, if found.
fn line_of(repo: &git2::Repository, commit: &str, file: &str, id: &str) -> Option<u32> {
    let name = id.rsplit("::").next()?.split('[').next()?;
    let blob = repo
        .revparse_single(&format!("{commit}:{file}"))
        .ok()?
        .peel_to_blob()
        .ok()?;
    let text = std::str::from_utf8(blob.content()).ok()?;
    let def = format!("def {name}(");
    text.lines()
        .position(|l| {
            let l = l.trim_start();
            l.starts_with(&def)
                || l.strip_prefix("async ")
                    .is_some_and(|l| l.starts_with(&def))
        })
        .map(|n| n as u32 + 1)
}
