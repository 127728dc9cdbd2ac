//! The run and what is shown of it: the human rows before anything runs, a refusal that stands
//! (each missing fact, and how to cite a decision), the caller's steps with every step and test
//! one event on one stream, and the closing output.

use super::Inputs;
use super::{Caller, Options, Shadow};
use crate::config::{Step, When};
use crate::error::Result;
use crate::history::recorder::Recorder;
use crate::report::json::Report;
use crate::report::view::View;
use crate::report::{human, styles::Styles};
use crate::run::events::{Collected, Sink, Tee};
use crate::run::steps::{self, Steps};
use crate::verdict::{RunVerdict, Verdict};
use owo_colors::OwoColorize;
use std::io::Write;

/// The human rows (none under `--json`), rendered whole, then written through the escaping
/// backstop every human line has.
pub(super) fn show_rows(view: &View<'_>, opts: &Options<'_>) -> Result<()> {
    if !opts.json {
        print_rows(view, opts.styles)?;
    }
    crate::timings::mark("rows printed");
    Ok(())
}

fn print_rows(view: &View<'_>, styles: &Styles) -> Result<()> {
    let mut rows = Vec::new();
    human::rows(&mut rows, view, styles).expect("writing to memory does not fail");
    let rows = String::from_utf8_lossy(&rows);
    crate::terminal::ignore_broken_pipe(write!(
        std::io::stdout().lock(),
        "{}",
        crate::terminal::line(&rows)
    ))
}

/// The run: nothing for a refusal that stands (it is named, with how to cite a decision) or
/// for `--list`; otherwise the caller's steps, each step and test reported as it goes to the
/// live lines, the report's collection and the recording.
pub(super) fn execute(
    at: &Inputs<'_>,
    view: &View<'_>,
    opts: &Options<'_>,
    collected: &mut Collected,
    recorder: Option<&mut Recorder<'_>>,
) -> Result<Option<steps::Ran>> {
    // A shadow run runs the whole suite whatever the verdict: it judges the decision, it does
    // not act on it.
    if view.decision.verdict == RunVerdict::Refused
        && view.record.is_none()
        && opts.shadow == Shadow::Off
    {
        refuse(view, opts);
        return Ok(None);
    }
    if opts.list {
        return Ok(None);
    }
    let root = crate::repo::workdir(at.repo)?;
    let steps = Steps {
        steps: steps_of(opts.caller, at.project),
        plan: view.plan,
        project: at.project,
        root: &root,
        head: at.input.head,
        changed: &at.input.changed(),
        tree: &view.tree,
        quiet_stdout: opts.json,
    };
    let mut live = human::Live {
        styles: opts.styles,
        steps: opts.caller != Caller::Command && !opts.json,
    };
    let shows_steps = live.steps;
    let mut sinks: Vec<&mut dyn Sink> = vec![&mut live, collected];
    if let Some(recorder) = recorder {
        sinks.push(recorder);
    }
    let ran = steps::run_all(at.repo, &steps, &mut Tee(sinks))?;
    if let (Some(name), true) = (&ran.blocked_by, shows_steps) {
        tell!("error: step `{name}` failed — {}", blocked(opts.caller));
    }
    Ok(Some(ran))
}

/// The steps a caller runs: the affected tests alone for `gate --affected`, the configured
/// steps of its context for the hook and `verify`.
fn steps_of(caller: Caller, project: &crate::project::Project) -> Vec<&Step> {
    static BUILTIN: std::sync::LazyLock<Step> = std::sync::LazyLock::new(Step::affected_tests);
    match caller {
        Caller::Command => vec![&*BUILTIN],
        Caller::PrePush => steps::for_context(&project.config.steps, When::PrePush).collect(),
        Caller::Verify => steps::for_context(&project.config.steps, When::Verify).collect(),
    }
}

fn blocked(caller: Caller) -> &'static str {
    match caller {
        Caller::PrePush => "the push is blocked (bypass once with `git push --no-verify`)",
        _ => "verify failed",
    }
}

/// A refusal without a decision: each missing fact, and how to record a decision.
fn refuse(view: &View<'_>, opts: &Options<'_>) {
    if opts.json {
        return;
    }
    let mut facts: Vec<&str> = view
        .range_refusal
        .into_iter()
        .chain(view.tree_refusal)
        .collect();
    facts.extend(
        view.decision
            .rows
            .iter()
            .filter(|r| r.verdict == Verdict::Refused)
            .flat_map(|r| r.reasons.iter().map(String::as_str)),
    );
    tell!("error: refused — {}", facts.join("; "));
    tell!(
        "\nhint: fix the missing fact (fetch the base, add a [[depends]] rule or an edge), or record a decision:\n      {}",
        opts.retry
    );
}

/// The closing output — the JSON report, or the summary line — and the JSON text for a receipt
/// (built only when someone reads it).
pub(super) fn finish(report: &Report<'_>, opts: &Options<'_>) -> Result<String> {
    let json = if opts.json || opts.keep_json {
        serde_json::to_string_pretty(report).expect("reports serialize")
    } else {
        String::new()
    };
    let mut stdout = std::io::stdout().lock();
    if opts.json {
        crate::terminal::ignore_broken_pipe(writeln!(stdout, "{json}"))?;
    } else {
        crate::terminal::ignore_broken_pipe(writeln!(
            stdout,
            "{}",
            report.summary.style(opts.styles.bold)
        ))?;
    }
    Ok(json)
}
