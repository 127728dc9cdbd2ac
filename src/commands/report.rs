//! `gate report`: a recorded run for the pull request and the CI system — the comment body
//! (`--markdown`, also appended to `GITHUB_STEP_SUMMARY` when set), workflow-command
//! annotations (`--annotations`) and a JUnit report of the verdicts (`--junit FILE`). Read from
//! the store alone; the verdict rows' reasons and the reused passes come from the decision
//! frozen for the run's commit and base, when the store holds one. gate posts nothing: the
//! workflow, which holds the token, does.

use crate::error::{Error, Result};
use crate::history::triage::{Rules, Triaged, Verdict};
use crate::history::{Store, triage::LegInfo};
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
        .or_else(|| std::env::var("GITHUB_WORKFLOW").ok())
        .unwrap_or_else(|| "gate".into());
    let shadow = shadow_line(&mut store, &first.commit, config.history.window_days)?;
    let summary = read.summary(&run, &legs, &frozen, workflow, shadow);
    if args.markdown {
        let text = markdown::render(&summary);
        if let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) {
            ci::append_step_summary(Path::new(&path), &text)
                .map_err(|e| Error::io(Path::new(&path), "cannot append the step summary", e))?;
        }
        say!("{text}");
    }
    if args.annotations {
        let (errors, warnings) = annotations(&repo, &read, &summary, &first.commit);
        for line in ci::annotations(&errors, &warnings) {
            say!("{line}");
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

    fn summary(
        &mut self,
        run: &str,
        legs: &[LegInfo],
        frozen: &serde_json::Value,
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
        let mut ran: BTreeMap<String, String> = self
            .selected
            .iter()
            .filter(|(unit, _)| !reused.contains_key(*unit))
            .map(|(unit, causes)| (unit.clone(), causes.join(", ")))
            .collect();
        // A unit history added (failing on main, a co-failure, a traced edge) has no changed
        // path as its cause: the frozen decision's first reason says why it was selected.
        let reason = |unit: &str| frozen["selected"][unit][0].as_str().map(str::to_string);
        for r in &self.results {
            if let Some(file) = &r.file
                && !reused.contains_key(file)
            {
                ran.entry(file.clone())
                    .or_insert_with(|| reason(file).unwrap_or_else(|| "ran".into()));
            }
        }
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
            reused: reused.into_iter().map(|(u, c)| [u, c]).collect(),
            shadow,
            results: self.results.len(),
            total_ms: self.results.iter().map(|r| r.duration_ms).sum(),
            slowest,
        }
    }
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
                file,
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
