//! `gate --affected | --since | --files`: range → diff → snapshot → analyse → graph → verdicts
//! → decision → report → run → summary.

use crate::cli::GateArgs;
use crate::config::NamedFullMode;
use crate::decision;
use crate::error::{Error, Result};
use crate::exit_codes;
use crate::project::Project;
use crate::repo::{self, diff, range, snapshot::Snapshot};
use crate::report::json::{RangeInfo, Report, RunResult, Selected};
use crate::report::{human, styles::Styles};
use crate::run::pytest::{self, Outcome};
use crate::verdict::{self, Context, RunVerdict, Verdict};
use owo_colors::OwoColorize;
use std::io::Write;
use std::path::Path;

pub fn run(dir: &Path, args: &GateArgs, styles: &Styles) -> Result<u8> {
    let repo = repo::open(dir)?;
    let root = repo::workdir(&repo)?;
    let (range_info, snapshot, changes, range_refusal) = inputs(&repo, args)?;
    let deleted: Vec<String> = changes
        .iter()
        .filter(|c| c.status == diff::Status::Deleted)
        .map(|c| c.path.clone())
        .collect();
    let project = Project::load(&repo, &snapshot, &deleted, &mut super::warn)?;
    let ctx = Context {
        graph: &project.graph,
        config: &project.config,
        tests: &project.tests,
        flagged: &project.flagged,
    };
    let mut decided = verdict::decide(&changes, &ctx);
    if range_refusal.is_some() {
        decided.verdict = RunVerdict::Refused;
    }
    let refused = decided.verdict == RunVerdict::Refused;
    let citation = args.affected_decision.as_deref();
    let runs = match decided.verdict {
        RunVerdict::Inert | RunVerdict::Empty => false,
        RunVerdict::Refused => citation.is_some(),
        RunVerdict::Bounded | RunVerdict::NamedFull => true,
    };
    let whole_suite = decided.verdict == RunVerdict::NamedFull
        && project.config.named_full == NamedFullMode::Full;
    let selected: Vec<String> = decided.selected.keys().cloned().collect();
    let base = pytest::base_argv(&project.config, &root);
    let command = match (runs, whole_suite) {
        (false, _) => None,
        (true, true) => Some(base),
        (true, false) if selected.is_empty() => None,
        (true, false) => Some(base.into_iter().chain(selected.iter().cloned()).collect()),
    };
    let record = match citation {
        Some(c) => {
            let spec = range_info
                .as_ref()
                .map_or_else(|| snapshot.describe(), |r| r.spec.clone());
            let rec = decision::record(
                &repo,
                c,
                &spec,
                &decided.rows,
                range_refusal.as_deref(),
                &selected,
            )?;
            decision::append(&repo::state_dir(&repo), &rec)?;
            Some(rec)
        }
        None => None,
    };
    let mut report = Report {
        version: crate::report::json::REPORT_VERSION,
        gate: crate::plan::ANALYZER,
        range: range_info,
        tree: snapshot.describe(),
        verdict: decided.verdict,
        files: &decided.rows,
        selected: decided
            .selected
            .iter()
            .map(|(p, r)| Selected {
                path: p,
                reasons: r,
            })
            .collect(),
        cut: decided
            .cut
            .iter()
            .map(|(p, r)| Selected {
                path: p,
                reasons: r,
            })
            .collect(),
        range_refusal: range_refusal.clone(),
        notes: &decided.notes,
        test_files: project.tests.len(),
        command,
        decision: record,
        summary: String::new(),
        run: None,
    };
    report.summary = human::summary(&report);
    let mut stdout = std::io::stdout().lock();
    if !args.json {
        super::ignore_broken_pipe(human::rows(&mut stdout, &report, styles))?;
    }
    let mut code = exit_codes::OK;
    if refused && citation.is_none() {
        code = exit_codes::REFUSED;
        if !args.json {
            let _ = stdout.flush();
            eprintln!(
                "error: refused — {}",
                refusal_facts(&report, range_refusal.as_deref())
            );
            eprintln!(
                "\nhint: fix the missing fact (fetch the base, add a [[depends]] rule or an edge), or record a decision:\n      gate {} --affected-decision \"<citation>\"   (in a push: GATE_DECISION=\"<citation>\" git push)",
                match (&args.affected, &args.since) {
                    (Some(r), _) => format!("--affected {r}"),
                    (_, Some(r)) => format!("--since {r}"),
                    _ => format!("--files {}", args.files.join(" ")),
                }
            );
        }
    } else if let (false, Some(argv)) = (args.list, report.command.clone()) {
        let missing: Vec<&String> = selected
            .iter()
            .filter(|s| !whole_suite && !root.join(s.split("::").next().unwrap_or(s)).exists())
            .collect();
        if !missing.is_empty() {
            return Err(Error::Usage(format!(
                "selected test {} is not in the working tree — check out the gated commit ({}) before running",
                missing[0],
                snapshot.describe()
            )));
        }
        let _ = stdout.flush();
        let outcome = pytest::run(&argv, &project.config.env, &root, args.json)?;
        let (word, exit, c) = match outcome {
            Outcome::Passed => ("passed", Some(0), exit_codes::OK),
            Outcome::Failed(n) => ("failed", Some(n), exit_codes::TESTS_FAILED),
            Outcome::Broken(n) => ("broken", n, exit_codes::RUNNER),
        };
        code = c;
        report.run = Some(RunResult {
            outcome: word,
            exit_code: exit,
        });
    }
    if args.json {
        let text = serde_json::to_string_pretty(&report).expect("reports serialize");
        super::ignore_broken_pipe(writeln!(stdout, "{text}"))?;
    } else {
        super::ignore_broken_pipe(writeln!(stdout, "{}", report.summary.style(styles.bold)))?;
    }
    Ok(code)
}

fn refusal_facts(report: &Report<'_>, range_refusal: Option<&str>) -> String {
    let mut facts: Vec<String> = range_refusal.map(str::to_string).into_iter().collect();
    facts.extend(
        report
            .files
            .iter()
            .filter(|r| r.verdict == Verdict::Refused)
            .flat_map(|r| r.reasons.iter().cloned()),
    );
    facts.join("; ")
}

type Inputs = (
    Option<RangeInfo>,
    Snapshot,
    Vec<diff::Change>,
    Option<String>,
);

/// Which tree is gated and what changed in it, from the one input the user gave.
fn inputs(repo: &git2::Repository, args: &GateArgs) -> Result<Inputs> {
    if let Some(spec) = &args.affected {
        return Ok(match range::resolve(repo, spec)? {
            range::Resolution::Range(r) => {
                let changes = diff::between(repo, r.base, r.head)?;
                let info = RangeInfo {
                    spec: r.spec.clone(),
                    mode: r.mode.to_string(),
                    base: Some(r.base.to_string()),
                    head: Some(r.head.to_string()),
                };
                (
                    Some(info),
                    Snapshot::of_commit(repo, r.head)?,
                    changes,
                    None,
                )
            }
            range::Resolution::MissingBase { spec, fact, head } => {
                let info = RangeInfo {
                    spec,
                    mode: "unresolved".into(),
                    base: None,
                    head: Some(head.to_string()),
                };
                let fix = format!(
                    "{fact}; fetch it (`git fetch`) or record a decision with --affected-decision"
                );
                (
                    Some(info),
                    Snapshot::of_commit(repo, head)?,
                    Vec::new(),
                    Some(fix),
                )
            }
        });
    }
    let snapshot = Snapshot::of_workdir(repo)?;
    if let Some(rev) = &args.since {
        let base = range::commit(repo, rev)?;
        let changes = diff::to_workdir(repo, base)?;
        let info = RangeInfo {
            spec: rev.clone(),
            mode: "to-working-tree".into(),
            base: Some(base.to_string()),
            head: None,
        };
        return Ok((Some(info), snapshot, changes, None));
    }
    if !args.files.is_empty() {
        let changes = diff::named(&args.files, |p| snapshot.contains(p));
        return Ok((None, snapshot, changes, None));
    }
    Err(Error::Usage(
        "nothing to gate: give --affected RANGE, --since REV or --files PATH…".into(),
    ))
}
