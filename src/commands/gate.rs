//! The gate itself, shared by `gate --affected | --since | --files`, `gate verify` and the
//! pre-push hook: target → diff → snapshot → analyse → graph → verdicts → decision → report →
//! steps (the affected tests among them) → summary.

use crate::cli::GateArgs;
use crate::config::{NamedFullMode, Step, When};
use crate::decision;
use crate::error::{Error, Result};
use crate::exit_codes;
use crate::graph;
use crate::project::Project;
use crate::repo::checkout::Workspace;
use crate::repo::{self, diff, range, snapshot::Snapshot};
use crate::report::json::{RangeInfo, Report, RunResult, Selected};
use crate::report::{human, styles::Styles};
use crate::run::gotest;
use crate::run::pytest::{self, Outcome};
use crate::run::steps::{self, StepResult};
use crate::verdict::{self, RunVerdict, Verdict};
use owo_colors::OwoColorize;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

/// What is gated.
pub enum Target {
    /// Ranges ending at one commit: one for `--affected` and `verify`, the refs of a push that
    /// share a head. Their changes are gated as a union against that commit's tree.
    Ranges(Vec<range::Resolution>),
    /// From a revision to the working tree.
    Since(String),
    /// Named paths of the working tree.
    Files(Vec<String>),
}

/// Who asked: it decides which steps run and how a refusal tells the user to cite a decision.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// `gate --affected …`: the affected tests only.
    Command,
    PrePush,
    Verify,
}

pub struct Options<'a> {
    pub caller: Caller,
    pub citation: Option<&'a str>,
    pub list: bool,
    pub json: bool,
    pub styles: &'a Styles,
    /// The same gate with a decision, shown when it refuses.
    pub retry: String,
    /// Build the JSON report even without `--json` (a receipt is written from it).
    pub keep_json: bool,
}

/// The exit code and the JSON report (a `verify` receipt is this report).
pub struct Gated {
    pub code: u8,
    pub json: String,
}

pub fn run(dir: &Path, args: &GateArgs, styles: &Styles) -> Result<u8> {
    let repo = repo::open(dir)?;
    let (target, retry) = if let Some(spec) = &args.affected {
        (
            Target::Ranges(vec![range::resolve(&repo, spec)?]),
            format!("gate --affected {spec} --affected-decision \"<citation>\""),
        )
    } else if let Some(rev) = &args.since {
        (
            Target::Since(rev.clone()),
            format!("gate --since {rev} --affected-decision \"<citation>\""),
        )
    } else if !args.files.is_empty() {
        let files = args
            .files
            .iter()
            .map(|f| crate::repo::pathspec::resolve(&repo, dir, f))
            .collect::<Result<Vec<_>>>()?;
        (
            Target::Files(files),
            format!(
                "gate --files {} --affected-decision \"<citation>\"",
                args.files.join(" ")
            ),
        )
    } else {
        return Err(Error::Usage(
            "nothing to gate: give --affected RANGE, --since REV or --files PATH…".into(),
        ));
    };
    let opts = Options {
        caller: Caller::Command,
        citation: args.affected_decision.as_deref(),
        list: args.list,
        json: args.json,
        styles,
        retry,
        keep_json: false,
    };
    gate(&repo, target, &opts).map(|g| g.code)
}

pub fn gate(repo: &git2::Repository, target: Target, opts: &Options<'_>) -> Result<Gated> {
    let started = Instant::now();
    let root = repo::workdir(repo)?;
    let input = inputs(repo, target)?;
    crate::timings::mark("changes and tree read");
    let deleted: Vec<String> = input
        .changes
        .iter()
        .filter(|c| c.status == diff::Status::Deleted)
        .map(|c| c.path.clone())
        .collect();
    let governing = super::config_change::governing(repo, &input.snapshot, &input.bases)?;
    let mut project = Project::load_for_selection(
        repo,
        &input.snapshot,
        &deleted,
        governing.config,
        &mut super::warn,
    )?;
    flag_go_syntax_errors(repo, &input, &mut project);
    crate::timings::mark("project loaded");
    let ctx = project.context();
    let mut decided = verdict::decide(&input.changes, &ctx);
    crate::timings::mark("verdicts decided");
    if let Some(change) = governing.change {
        change.explain(repo, &input, &deleted, &project, &mut decided)?;
    }
    if input.range_refusal.is_some() {
        decided.verdict = RunVerdict::Refused;
    }
    let refused = decided.verdict == RunVerdict::Refused;
    let runs = match decided.verdict {
        RunVerdict::Inert | RunVerdict::Empty => false,
        RunVerdict::Refused => opts.citation.is_some(),
        RunVerdict::Bounded | RunVerdict::NamedFull => true,
    };
    let whole_suite = decided.verdict == RunVerdict::NamedFull
        && project.config.named_full == NamedFullMode::Full;
    let selected: Vec<String> = decided.selected.keys().cloned().collect();
    let (go_units, python_tests): (Vec<&String>, Vec<&String>) =
        selected.iter().partition(|s| graph::is_go_unit(s));
    let has_python_tests = project.tests.iter().any(|t| !graph::is_go_unit(t));
    let has_go_tests = project.tests.iter().any(|t| graph::is_go_unit(t));
    let base = pytest::base_argv(&project.config, &root);
    let pytest_command = match (runs, whole_suite) {
        (false, _) => None,
        (true, true) if has_python_tests => Some(pytest::Command::whole_suite(base)),
        (true, true) => None,
        (true, false) if python_tests.is_empty() => None,
        (true, false) => {
            let tests: Vec<&str> = python_tests.iter().map(|s| s.as_str()).collect();
            Some(pytest::Command::new(base, &tests, &input.snapshot.files))
        }
    };
    let command = pytest_command.as_ref().map(pytest::Command::argv);
    let go_units: Vec<&str> = go_units.iter().map(|s| s.as_str()).collect();
    let go_commands = if !runs || (whole_suite && !has_go_tests) {
        Vec::new()
    } else {
        gotest::commands(
            &project.go,
            &go_units,
            whole_suite,
            &project.config.go_flags,
        )
    };
    let record = match opts.citation {
        Some(c) => {
            let spec = input
                .range
                .as_ref()
                .map_or_else(|| input.snapshot.describe(), |r| r.spec.clone());
            let rec = decision::record(
                repo,
                c,
                &spec,
                &decided.rows,
                input.range_refusal.as_deref(),
                &selected,
            )?;
            decision::append(&repo::state_dir(repo), &rec)?;
            Some(rec)
        }
        None => None,
    };
    let mut report = Report {
        version: crate::report::json::REPORT_VERSION,
        gate: crate::plan::ANALYZER,
        range: input.range,
        tree: input.snapshot.describe(),
        verdict: decided.verdict,
        files: &decided.rows,
        selected: listing(&decided.selected),
        cut: listing(&decided.cut),
        range_refusal: input.range_refusal.clone(),
        notes: decided.notes.clone(),
        test_files: project.tests.len(),
        command,
        go_commands,
        decision: record,
        summary: String::new(),
        run: None,
        steps: None,
        exit_code: exit_codes::OK,
        duration_ms: 0,
    };
    report.summary = human::summary(&report);
    crate::timings::mark("report built");
    let mut stdout = std::io::stdout().lock();
    if !opts.json {
        super::ignore_broken_pipe(human::rows(&mut stdout, &report, opts.styles))?;
    }
    crate::timings::mark("rows printed");
    let mut code = exit_codes::OK;
    if refused && opts.citation.is_none() {
        code = exit_codes::REFUSED;
        if !opts.json {
            let _ = stdout.flush();
            eprintln!("error: refused — {}", refusal_facts(&report));
            eprintln!(
                "\nhint: fix the missing fact (fetch the base, add a [[depends]] rule or an edge), or record a decision:\n      {}",
                opts.retry
            );
        }
    } else if !opts.list {
        let _ = stdout.flush();
        drop(stdout);
        let changed: Vec<&str> = decided
            .rows
            .iter()
            .flat_map(|r| std::iter::once(r.path.as_str()).chain(r.other.as_deref()))
            .collect();
        let plan = StepPlan {
            project: &project,
            pytest: pytest_command.as_ref(),
            root: &root,
            head: input.head,
            changed: &changed,
            whole_suite,
        };
        let (c, results) = run_steps(repo, &plan, &mut report, opts)?;
        code = c;
        if opts.caller != Caller::Command {
            report.steps = Some(results);
        }
        stdout = std::io::stdout().lock();
    }
    report.exit_code = code;
    report.duration_ms = started.elapsed().as_millis() as u64;
    // The JSON text is built only when someone reads it (`--json`, a receipt).
    let json = if opts.json || opts.keep_json {
        serde_json::to_string_pretty(&report).expect("reports serialize")
    } else {
        String::new()
    };
    if opts.json {
        super::ignore_broken_pipe(writeln!(stdout, "{json}"))?;
    } else {
        super::ignore_broken_pipe(writeln!(
            stdout,
            "{}",
            report.summary.style(opts.styles.bold)
        ))?;
    }
    // A CLI's last act: the OS frees the graph and the tree listing faster than dropping them
    // node by node.
    std::mem::forget(project);
    std::mem::forget(input.snapshot);
    Ok(Gated { code, json })
}

/// Go files are analysed only up to their imports; a changed one is parsed whole, so a syntax
/// error below them is named on its row.
fn flag_go_syntax_errors(repo: &git2::Repository, input: &Input, project: &mut Project) {
    let go = input.changes.iter().map(|c| &c.path).filter(|p| {
        crate::analyze::gomod::is_go(p)
            && input.snapshot.contains(p)
            && !input.snapshot.links.contains_key(*p)
    });
    for path in go {
        let Ok((_, bytes)) = input.snapshot.read(repo, path) else {
            continue;
        };
        let lines = crate::analyze::golang::parse_errors(&bytes);
        if !lines.is_empty() {
            let flags = project.flagged.entry(path.clone()).or_default();
            flags.parse_errors.extend(lines);
            flags.parse_errors.sort_unstable();
            flags.parse_errors.dedup();
        }
    }
}

fn listing(map: &std::collections::BTreeMap<String, Vec<String>>) -> Vec<Selected<'_>> {
    map.iter()
        .map(|(p, r)| Selected {
            path: p,
            reasons: r,
        })
        .collect()
}

struct StepPlan<'a> {
    project: &'a Project,
    pytest: Option<&'a pytest::Command>,
    root: &'a Path,
    /// The gated commit; `None` for the working tree.
    head: Option<git2::Oid>,
    changed: &'a [&'a str],
    whole_suite: bool,
}

/// Runs the caller's steps in order; the first failure blocks the rest.
fn run_steps(
    repo: &git2::Repository,
    plan: &StepPlan<'_>,
    report: &mut Report<'_>,
    opts: &Options<'_>,
) -> Result<(u8, Vec<StepResult>)> {
    let builtin = [Step::affected_tests()];
    let chosen: Vec<&Step> = match opts.caller {
        Caller::Command => builtin.iter().collect(),
        Caller::PrePush => steps::for_context(&plan.project.config.steps, When::PrePush).collect(),
        Caller::Verify => steps::for_context(&plan.project.config.steps, When::Verify).collect(),
    };
    let announce = opts.caller != Caller::Command && !opts.json;
    // Declared before the workspace, so a stop signal is still held while the checkout is
    // removed.
    let _guard = crate::process::Guard::hold();
    let mut workspace: Option<Workspace> = None;
    let mut results: Vec<StepResult> = Vec::new();
    let mut code = exit_codes::OK;
    let mut blocked_by: Option<String> = None;
    let mut env = plan.project.config.env.clone();
    env.insert("GATE_CHANGED_FILES".into(), plan.changed.join("\n"));
    // No environment variable can hold a NUL: the NUL-separated list (`git diff -z`'s form,
    // safe for any file name) is a file, named by `GATE_CHANGED_FILES0`.
    let scratch = crate::process::temp_dir("gate-steps")
        .map_err(|e| Error::io(std::env::temp_dir(), "cannot create a scratch folder", e))?;
    let list0 = scratch.path().join("changed-files0");
    let nul_separated: String = plan.changed.iter().map(|p| format!("{p}\0")).collect();
    std::fs::write(&list0, nul_separated)
        .map_err(|e| Error::io(&list0, "cannot write the changed files", e))?;
    env.insert("GATE_CHANGED_FILES0".into(), list0.display().to_string());
    for step in chosen {
        crate::run::interrupted()?;
        let result = if let Some(name) = &blocked_by {
            StepResult::skipped(&step.name, format!("blocked by the failure of `{name}`"))
        } else if let Some(why) = steps::unmatched(step, plan.changed) {
            StepResult::skipped(&step.name, why)
        } else if step.argv().is_none() && report.command.is_none() && report.go_commands.is_empty()
        {
            StepResult::skipped(&step.name, nothing_to_run(report.verdict))
        } else {
            if workspace.is_none() {
                let ws = match plan.head {
                    Some(head) => Workspace::for_commit(repo, plan.root, head)?,
                    None => Workspace::in_place(plan.root),
                };
                if let (Some(why), false) = (&ws.why, opts.json) {
                    eprintln!(
                        "gate: running in a temporary checkout of {} ({why})",
                        report.tree
                    );
                }
                workspace = Some(ws);
                crate::run::interrupted()?;
            }
            let ws = workspace.as_ref().expect("set just above");
            match step.argv() {
                Some(argv) => {
                    if announce {
                        eprintln!("gate: step `{}`: {}", step.name, argv.join(" "));
                    }
                    let result = steps::run(&step.name, &argv, &env, ws, plan.root, opts.json);
                    crate::run::interrupted()?;
                    result
                }
                None => affected_tests(plan, ws, report, &step.name, opts.json)?,
            }
        };
        if blocked_by.is_none() {
            let failed_code = match (result.outcome, step.argv().is_none()) {
                (steps::Outcome::Failed, true) => Some(exit_codes::TESTS_FAILED),
                (steps::Outcome::Broken, true) => Some(exit_codes::RUNNER),
                (steps::Outcome::Failed | steps::Outcome::Broken, false) => {
                    Some(exit_codes::STEP_FAILED)
                }
                _ => None,
            };
            if let Some(c) = failed_code {
                code = c;
                blocked_by = Some(step.name.clone());
            }
        }
        if announce {
            print_step(&result, opts.styles);
        }
        results.push(result);
    }
    if let (Some(name), true) = (&blocked_by, announce) {
        eprintln!(
            "error: step `{name}` failed — {}",
            match opts.caller {
                Caller::PrePush => "the push is blocked (bypass once with `git push --no-verify`)",
                _ => "verify failed",
            }
        );
    }
    Ok((code, results))
}

fn nothing_to_run(verdict: RunVerdict) -> String {
    match verdict {
        RunVerdict::Inert => "every change is inert".into(),
        RunVerdict::Empty => "nothing changed".into(),
        _ => "no test reaches the changes".into(),
    }
}

/// The built-in step: the selection, run by the project's runner in the gated tree.
fn affected_tests(
    plan: &StepPlan<'_>,
    ws: &Workspace,
    report: &mut Report<'_>,
    name: &str,
    quiet_stdout: bool,
) -> Result<StepResult> {
    if !plan.whole_suite
        && let Some(missing) = report
            .selected
            .iter()
            .map(|s| s.path.split("::").next().unwrap_or(s.path))
            .find(|p| !ws.dir.join(p).exists())
    {
        return Err(Error::Usage(format!(
            "selected test {missing} is not in {} — the checkout does not hold the gated tree ({})",
            ws.dir.display(),
            report.tree
        )));
    }
    let started = Instant::now();
    // Python first, then each Go module; the worst outcome is the step's.
    let mut outcomes = Vec::new();
    if let Some(command) = plan.pytest {
        let ran = pytest::run(
            command,
            &plan.project.config.env,
            ws,
            plan.root,
            quiet_stdout,
        )?;
        for note in &ran.notes {
            eprintln!("gate: {note}");
        }
        report.notes.extend(ran.notes);
        outcomes.push(ran.outcome);
    }
    for go in report.go_commands.clone() {
        let module = Workspace::in_place(&ws.dir.join(&go.module));
        let module = if ws.is_temporary() {
            module.temporary_view()
        } else {
            module
        };
        outcomes.push(gotest::run(
            &go.argv,
            &plan.project.config.env,
            &module,
            plan.root,
            quiet_stdout,
        )?);
    }
    let duration_ms = started.elapsed().as_millis() as u64;
    let worst = outcomes
        .into_iter()
        .max_by_key(|o| match o {
            Outcome::Passed => 0,
            Outcome::Failed(_) => 1,
            Outcome::Broken(_) => 2,
        })
        .unwrap_or(Outcome::Passed);
    let (word, exit, step_outcome) = match worst {
        Outcome::Passed => ("passed", Some(0), steps::Outcome::Passed),
        Outcome::Failed(n) => ("failed", Some(n), steps::Outcome::Failed),
        Outcome::Broken(n) => ("broken", n, steps::Outcome::Broken),
    };
    report.run = Some(RunResult {
        outcome: word,
        exit_code: exit,
        duration_ms,
        directory: ws
            .why
            .as_ref()
            .map(|why| format!("temporary checkout of the gated commit: {why}")),
    });
    Ok(StepResult {
        name: name.to_string(),
        outcome: step_outcome,
        exit_code: exit,
        duration_ms,
        reason: None,
    })
}

fn print_step(result: &StepResult, s: &Styles) {
    let (word, style) = match result.outcome {
        steps::Outcome::Passed => ("passed", s.good),
        steps::Outcome::Failed => ("failed", s.bad),
        steps::Outcome::Broken => ("broken", s.bad),
        steps::Outcome::Skipped => ("skipped", s.dim),
    };
    let detail = match (&result.reason, result.outcome) {
        (Some(r), _) => format!(" — {r}"),
        (None, steps::Outcome::Failed) => format!(
            " (exit {}) in {:.1} s",
            result.exit_code.unwrap_or(-1),
            result.duration_ms as f64 / 1000.0
        ),
        (None, _) => format!(" in {:.1} s", result.duration_ms as f64 / 1000.0),
    };
    eprintln!("gate: step `{}` {}{detail}", result.name, word.style(style));
}

fn refusal_facts(report: &Report<'_>) -> String {
    let mut facts: Vec<String> = report.range_refusal.iter().cloned().collect();
    facts.extend(
        report
            .files
            .iter()
            .filter(|r| r.verdict == Verdict::Refused)
            .flat_map(|r| r.reasons.iter().cloned()),
    );
    facts.join("; ")
}

/// The tree being gated and what changed in it.
pub(super) struct Input {
    range: Option<RangeInfo>,
    pub(super) snapshot: Snapshot,
    pub(super) changes: Vec<diff::Change>,
    /// The missing facts that keep the range itself from being bounded (its base is absent).
    range_refusal: Option<String>,
    /// The gated commit; `None` for the working tree.
    head: Option<git2::Oid>,
    /// The commits the changes are measured from, whose configuration governs a change to it.
    bases: Vec<git2::Oid>,
}

fn inputs(repo: &git2::Repository, target: Target) -> Result<Input> {
    match target {
        Target::Ranges(resolutions) => ranges(repo, resolutions),
        Target::Since(rev) => {
            let snapshot = Snapshot::of_workdir(repo)?;
            let base = range::commit(repo, &rev)?;
            let changes = diff::to_workdir(repo, base)?;
            let range = RangeInfo {
                spec: rev,
                mode: "to-working-tree".into(),
                base: Some(base.to_string()),
                head: None,
            };
            Ok(Input {
                range: Some(range),
                snapshot,
                changes,
                range_refusal: None,
                head: None,
                bases: vec![base],
            })
        }
        Target::Files(files) => {
            let snapshot = Snapshot::of_workdir(repo)?;
            // Named paths are changes to the working tree against HEAD.
            let head = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
            let in_head = |p: &str| match &head {
                Some(c) => crate::repo::pathspec::in_commit(repo, c.id(), p),
                None => Vec::new(),
            };
            let files = crate::repo::pathspec::files(&files, &snapshot.files, in_head)?;
            let changes = diff::named(&files, |p| snapshot.contains(p));
            Ok(Input {
                range: None,
                snapshot,
                changes,
                range_refusal: None,
                head: None,
                bases: head.map(|c| c.id()).into_iter().collect(),
            })
        }
    }
}

/// The union of ranges that end at one commit: every path changed in any of them.
fn ranges(repo: &git2::Repository, resolutions: Vec<range::Resolution>) -> Result<Input> {
    let mut specs = Vec::new();
    let mut bases = Vec::new();
    let mut bases_ids = Vec::new();
    let mut modes = Vec::new();
    let mut facts = Vec::new();
    // Keyed by path: one head, so a path is in its tree or not, whichever range named it.
    let mut changes: std::collections::BTreeMap<String, diff::Change> = Default::default();
    let mut head = None;
    for resolution in resolutions {
        match resolution {
            range::Resolution::Range(r) => {
                for change in diff::between(repo, r.base, r.head)? {
                    changes.entry(change.path.clone()).or_insert(change);
                }
                specs.push(r.spec);
                bases.push(r.base.to_string());
                bases_ids.push(r.base);
                modes.push(r.mode);
                head = Some(r.head);
            }
            range::Resolution::MissingBase {
                spec,
                fact,
                head: h,
            } => {
                facts.push(format!(
                    "{fact}; fetch it (`git fetch`) or record a decision"
                ));
                specs.push(spec);
                modes.push("unresolved");
                head = Some(h);
            }
        }
    }
    let head = head.ok_or_else(|| Error::Usage("no range to gate".into()))?;
    let one = specs.len() == 1;
    let range = RangeInfo {
        spec: specs.join(", "),
        mode: if one {
            modes[0].to_string()
        } else {
            "union".into()
        },
        base: (one && bases.len() == 1).then(|| bases[0].clone()),
        head: Some(head.to_string()),
    };
    Ok(Input {
        range: Some(range),
        snapshot: Snapshot::of_commit(repo, head)?,
        changes: changes.into_values().collect(),
        range_refusal: (!facts.is_empty()).then(|| facts.join("; ")),
        head: Some(head),
        bases: bases_ids,
    })
}
