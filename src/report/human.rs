//! The human report: one row per changed file with its reasons and the edges that selected each
//! test, the selection, the command, and one closing summary line; while the run goes, one line
//! per step (for the hook and `verify`) and each runner's notes, on stderr.

use super::styles::Styles;
use super::view::View;
use crate::run::events::{Event, Sink};
use crate::run::events::{StepOutcome, StepResult};
use crate::terminal::shown;
use crate::verdict::{Row, RunVerdict, Verdict, status_word};
use owo_colors::OwoColorize;
use std::io::{self, Write};

pub(crate) fn rows(out: &mut dyn Write, view: &View<'_>, s: &Styles) -> io::Result<()> {
    match view.range {
        Some(r) => writeln!(
            out,
            "{} {} ({}; {})",
            "gate:".style(s.bold),
            r.spec,
            r.mode,
            view.tree
        )?,
        None => writeln!(out, "{} {}", "gate:".style(s.bold), view.tree)?,
    }
    if view.framework.kind != crate::lang::python::framework::Kind::Pytest {
        writeln!(
            out,
            "  {}",
            format!(
                "python tests: {} — {}",
                view.framework.kind.name(),
                view.framework.why
            )
            .style(s.dim)
        )?;
    }
    for fact in view.range_refusal.iter().chain(&view.tree_refusal) {
        writeln!(out, "  {:<10} {}", "refused".style(s.bad), fact)?;
    }
    let cut = Cut::of(view);
    for row in &view.decision.rows {
        verdict_row(out, row, s, cut)?;
    }
    selection(out, view, s)?;
    if let Some(shard) = &view.shard {
        writeln!(out, "{shard}")?;
    }
    commands(out, view, s)
}

/// How much of a big selection the rows print: all of it with `--verbose`; else a few chains
/// per row and the first tests of the list, each cut said with its count (`--json` has all).
#[derive(Clone, Copy)]
struct Cut {
    chains: usize,
    reasons: usize,
    tests: usize,
}

impl Cut {
    fn of(view: &View<'_>) -> Cut {
        if view.verbose {
            Cut {
                chains: usize::MAX,
                reasons: usize::MAX,
                tests: usize::MAX,
            }
        } else {
            Cut {
                chains: 5,
                reasons: 8,
                tests: 20,
            }
        }
    }
}

/// `… and 583 more; --verbose or --json for all`, when `shown` of `total` were printed.
fn more(
    out: &mut dyn Write,
    indent: &str,
    total: usize,
    shown: usize,
    what: &str,
) -> io::Result<()> {
    if total > shown {
        writeln!(
            out,
            "{indent}… and {} more {what}; --verbose or --json for all",
            total - shown
        )?;
    }
    Ok(())
}

/// One changed file: its verdict, its reasons, and the chain that selected each test.
fn verdict_row(out: &mut dyn Write, row: &Row, s: &Styles, cut: Cut) -> io::Result<()> {
    let (word, style) = match row.verdict {
        Verdict::Resolved => ("resolved", s.good),
        Verdict::Inert => ("inert", s.dim),
        Verdict::NamedFull => ("named_full", s.warn),
        Verdict::Refused => ("refused", s.bad),
    };
    let moved = row
        .other
        .as_ref()
        .map(|o| {
            let way = if row.status == crate::repo::diff::Status::Renamed {
                "from"
            } else {
                "to"
            };
            format!(" ({way} {})", shown(o))
        })
        .unwrap_or_default();
    writeln!(
        out,
        "  {:<10} {:<8} {}{moved}",
        word.style(style),
        status_word(row.status),
        shown(&row.path).style(s.bold)
    )?;
    for reason in row.reasons.iter().take(cut.reasons) {
        writeln!(out, "             {}", shown(reason).style(s.dim))?;
    }
    more(
        out,
        "             ",
        row.reasons.len(),
        cut.reasons,
        "reason(s)",
    )?;
    for e in row.edges.iter().take(cut.chains) {
        let why = match (&e.rule, e.chain.is_empty()) {
            (Some(rule), _) => rule.clone(),
            (None, true) => "changed".to_string(),
            (None, false) => crate::graph::explain_chain(&e.chain),
        };
        writeln!(out, "             → {}: {}", shown(&e.test), shown(&why))?;
    }
    more(
        out,
        "             ",
        row.edges.len(),
        cut.chains,
        "test file(s) this change selects",
    )
}

/// The configuration notes, what `max_depth` cut, the selected tests and the decision cited.
fn selection(out: &mut dyn Write, view: &View<'_>, s: &Styles) -> io::Result<()> {
    let d = view.decision;
    for note in &d.notes {
        writeln!(out, "{} {}", "warning:".style(s.warn), shown(note))?;
    }
    if !d.cut.is_empty() {
        writeln!(
            out,
            "{} max_depth kept {} test file(s) out:",
            "warning:".style(s.warn),
            d.cut.len()
        )?;
        for (test, from) in &d.cut {
            writeln!(
                out,
                "  {} (reached from {})",
                shown(test),
                shown(&from.join(", "))
            )?;
        }
    }
    if !d.selected.is_empty() {
        writeln!(out, "selected ({}):", d.selected.len())?;
        let listed = Cut::of(view).tests;
        for (test, reasons) in d.selected.iter().take(listed) {
            // History's reasons are shown here: no changed file's row names them.
            let history: Vec<&str> = reasons
                .iter()
                .filter_map(|r| r.strip_prefix(crate::history::signals::REASON))
                .collect();
            if history.is_empty() {
                writeln!(out, "  {}", shown(test))?;
            } else {
                writeln!(
                    out,
                    "  {}  (history: {})",
                    shown(test),
                    shown(&history.join("; "))
                )?;
            }
        }
        more(out, "  ", d.selected.len(), listed, "selected")?;
    }
    if !view.reused.is_empty() {
        writeln!(out, "reused ({}):", view.reused.len())?;
        let listed = Cut::of(view).tests;
        for (test, from) in view.reused.iter().take(listed) {
            writeln!(
                out,
                "  {}  (passed at {}, {}, {})",
                shown(test),
                shown(&from.commit[..12.min(from.commit.len())]),
                shown(&from.passed_at),
                shown(&from.leg)
            )?;
        }
        more(out, "  ", view.reused.len(), listed, "reused")?;
    }
    if let Some(r) = view.record {
        writeln!(
            out,
            "decision: {} — recorded by {} at {}",
            shown(&r.citation),
            shown(&r.user),
            shown(&r.time)
        )?;
    }
    Ok(())
}

/// The ready-to-run commands, and what the run-level verdict means for them.
fn commands(out: &mut dyn Write, view: &View<'_>, s: &Styles) -> io::Result<()> {
    let plan = view.plan;
    for cmd in &plan.commands {
        let listed = Cut::of(view).tests;
        let argv = cmd.argv();
        let cut = cmd.test_args().saturating_sub(listed);
        let place = match cmd.dir() {
            "" => String::new(),
            dir => format!(" (in {dir})"),
        };
        writeln!(
            out,
            "command: {}{place}",
            shell_words(&argv[..argv.len() - cut])
        )?;
        more(
            out,
            "         ",
            cmd.test_args(),
            listed,
            "path(s) in the command",
        )?;
    }
    let verdict = view.decision.verdict;
    match (plan.runs(), verdict) {
        (true, _) => {}
        (false, RunVerdict::Refused) if view.record.is_none() => {}
        (false, _) => writeln!(out, "command: none — nothing to run")?,
    }
    if view.shadow {
        // The selection above is what is judged; the run is the whole suite.
        writeln!(
            out,
            "{}",
            format!(
                "shadow run — the whole suite, judged against decision {}",
                view.frozen.get(..12).unwrap_or(view.frozen)
            )
            .style(s.dim)
        )?;
    }
    match verdict {
        RunVerdict::Bounded if plan.runs() && !view.shadow => writeln!(
            out,
            "{}",
            "subset run — non-authoritative, full suite still owed".style(s.dim)
        )?,
        RunVerdict::NamedFull => {
            for row in view
                .decision
                .rows
                .iter()
                .filter(|r| r.verdict == Verdict::NamedFull)
            {
                writeln!(
                    out,
                    "{} {}: {}",
                    "named_full:".style(s.warn),
                    shown(&row.path),
                    shown(&row.reasons.join("; "))
                )?;
            }
        }
        RunVerdict::Inert => writeln!(out, "all changes inert (non-code)")?,
        _ => {}
    }
    Ok(())
}

/// `gate: 3 changed files → 2 resolved, 1 inert; 4 of 212 test files selected (bounded)`
pub(crate) fn summary(view: &View<'_>) -> String {
    let rows = &view.decision.rows;
    let count = |v: Verdict| rows.iter().filter(|r| r.verdict == v).count();
    let parts: Vec<String> = [
        (Verdict::Resolved, "resolved"),
        (Verdict::Inert, "inert"),
        (Verdict::NamedFull, "named_full"),
        (Verdict::Refused, "refused"),
    ]
    .iter()
    .filter(|(v, _)| count(*v) > 0)
    .map(|(v, w)| format!("{} {w}", count(*v)))
    .collect();
    let verdict = match view.decision.verdict {
        RunVerdict::Bounded => "bounded",
        RunVerdict::NamedFull => "named_full",
        RunVerdict::Refused => "refused",
        RunVerdict::Inert => "inert",
        RunVerdict::Empty => "empty",
    };
    let files = rows.len();
    let decided = if view.record.is_some() {
        ", decision recorded"
    } else {
        ""
    };
    let reused = if let Some(shard) = &view.shard {
        // A leg runs its shard of the selection, its reuses among them left out.
        let reused = shard
            .units
            .iter()
            .filter(|u| view.reused.contains_key(crate::run::shard::unit_of(u)))
            .count();
        let of_them = if reused > 0 {
            format!(" ({reused} reused)")
        } else {
            String::new()
        };
        format!(
            ", shard {} runs {}{of_them}",
            shard.shard,
            shard.units.len() - reused
        )
    } else if view.reused.is_empty() {
        String::new()
    } else {
        format!(
            ", {} reused, {} run",
            view.reused.len(),
            view.decision
                .selected
                .len()
                .saturating_sub(view.reused.len())
        )
    };
    format!(
        "gate: {files} changed file{} → {}; {} of {} test files selected{reused} ({verdict}{decided})",
        if files == 1 { "" } else { "s" },
        if parts.is_empty() {
            "nothing to gate".to_string()
        } else {
            parts.join(", ")
        },
        view.decision.selected.len(),
        view.test_files,
    )
}

/// The run as it goes, on stderr: each runner's notes, and (`steps`: for the hook and
/// `verify`) each step's command and result.
pub(crate) struct Live<'s> {
    pub styles: &'s Styles,
    pub steps: bool,
}

impl Sink for Live<'_> {
    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::StepStarted {
                name,
                argv: Some(argv),
            } if self.steps => {
                crate::terminal::tell(format_args!("gate: step `{name}`: {}", shell_words(argv)))
            }
            Event::StepFinished(result) if self.steps => step_line(result, self.styles),
            Event::Note(note) => crate::terminal::tell(format_args!("gate: {note}")),
            _ => {}
        }
    }
}

fn step_line(result: &StepResult, s: &Styles) {
    let (word, style) = match result.outcome {
        StepOutcome::Passed => ("passed", s.good),
        StepOutcome::Failed => ("failed", s.bad),
        StepOutcome::Broken => ("broken", s.bad),
        StepOutcome::Skipped => ("skipped", s.dim),
    };
    let detail = match (&result.reason, result.outcome) {
        (Some(r), _) => format!(" — {r}"),
        (None, StepOutcome::Failed) => format!(
            " (exit {}) in {:.1} s",
            result.exit_code.unwrap_or(-1),
            result.duration_ms as f64 / 1000.0
        ),
        (None, _) => format!(" in {:.1} s", result.duration_ms as f64 / 1000.0),
    };
    crate::terminal::tell(format_args!(
        "gate: step `{}` {}{detail}",
        result.name,
        word.style(style)
    ));
}

/// An argv as one line a POSIX shell reads back as the same words: anything but plain path
/// characters is single-quoted, so a file name like `$(touch x).py` stays a name when pasted.
pub(crate) fn shell_words(argv: &[String]) -> String {
    argv.iter()
        .map(|w| {
            let plain = !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c));
            if plain {
                w.clone()
            } else if w.chars().any(char::is_control) {
                // A control character is never printed raw (it would forge a line or drive the
                // terminal): bash's `$'…'` spells it as an escape and reads it back the same.
                let mut q = String::from("$'");
                for c in w.chars() {
                    match c {
                        '\\' | '\'' => {
                            q.push('\\');
                            q.push(c);
                        }
                        '\n' => q.push_str("\\n"),
                        c if c.is_control() && (c as u32) < 0x80 => {
                            q.push_str(&format!("\\x{:02x}", c as u32));
                        }
                        c if c.is_control() => q.push_str(&format!("\\u{:04x}", c as u32)),
                        c => q.push(c),
                    }
                }
                q.push('\'');
                q
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_control_character_is_spelled_as_an_escape_bash_reads_back() {
        let argv: Vec<String> = ["./tests/test_a\nok.py", "x\u{1b}]0;t\u{7}'\\y", "plain"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let line = super::shell_words(&argv);
        assert!(!line.chars().any(char::is_control), "{line}");
        let out = std::process::Command::new("bash")
            .args([
                "-c",
                &format!("for w in {line}; do printf '%s\\0' \"$w\"; done"),
            ])
            .output()
            .unwrap();
        let words: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .split_terminator('\0')
            .map(str::to_string)
            .collect();
        assert_eq!(words, argv);
    }

    #[test]
    fn shell_words_read_back_as_the_same_words() {
        let argv: Vec<String> = [
            "python3",
            "-m",
            "pytest",
            "./tests/test_$(touch PWNED).py",
            "it's",
            "",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let line = super::shell_words(&argv);
        assert_eq!(
            line,
            "python3 -m pytest './tests/test_$(touch PWNED).py' 'it'\\''s' ''"
        );
        let out = std::process::Command::new("sh")
            .args([
                "-c",
                &format!("for w in {line}; do printf '%s\\n' \"$w\"; done"),
            ])
            .output()
            .unwrap();
        let words: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        assert_eq!(words, argv);
    }
}
