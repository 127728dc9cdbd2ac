//! The human report: one row per changed file with its reasons and the edges that selected each
//! test, the selection, the command, and one closing summary line.

use super::json::Report;
use super::styles::Styles;
use crate::verdict::{RunVerdict, Verdict, status_word};
use owo_colors::OwoColorize;
use std::io::{self, Write};

pub fn rows(out: &mut dyn Write, report: &Report<'_>, s: &Styles) -> io::Result<()> {
    match &report.range {
        Some(r) => writeln!(
            out,
            "{} {} ({}; {})",
            "gate:".style(s.bold),
            r.spec,
            r.mode,
            report.tree
        )?,
        None => writeln!(out, "{} {}", "gate:".style(s.bold), report.tree)?,
    }
    if let Some(fact) = &report.range_refusal {
        writeln!(out, "  {:<10} {}", "refused".style(s.bad), fact)?;
    }
    for row in report.files {
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
                format!(
                    " ({} {o})",
                    if row.status == crate::repo::diff::Status::Renamed {
                        "from"
                    } else {
                        "to"
                    }
                )
            })
            .unwrap_or_default();
        writeln!(
            out,
            "  {:<10} {:<8} {}{moved}",
            word.style(style),
            status_word(row.status),
            row.path.style(s.bold)
        )?;
        for reason in &row.reasons {
            writeln!(out, "             {}", reason.style(s.dim))?;
        }
        for e in &row.edges {
            let why = match (&e.rule, e.chain.is_empty()) {
                (Some(rule), _) => rule.clone(),
                (None, true) => "changed".to_string(),
                (None, false) => crate::graph::explain_chain(&e.chain),
            };
            writeln!(out, "             → {}: {}", e.test, why)?;
        }
    }
    for note in &report.notes {
        writeln!(out, "{} {note}", "warning:".style(s.warn))?;
    }
    if !report.cut.is_empty() {
        writeln!(
            out,
            "{} max_depth kept {} test file(s) out:",
            "warning:".style(s.warn),
            report.cut.len()
        )?;
        for c in &report.cut {
            writeln!(out, "  {} (reached from {})", c.path, c.reasons.join(", "))?;
        }
    }
    if !report.selected.is_empty() {
        writeln!(out, "selected ({}):", report.selected.len())?;
        for sel in &report.selected {
            writeln!(out, "  {}", sel.path)?;
        }
    }
    if let Some(d) = &report.decision {
        writeln!(
            out,
            "decision: {} — recorded by {} at {}",
            d.citation, d.user, d.time
        )?;
    }
    let runs = report.command.is_some() || !report.go_commands.is_empty();
    if let Some(cmd) = &report.command {
        writeln!(out, "command: {}", shell_words(cmd))?;
    }
    for go in &report.go_commands {
        let place = if go.module.is_empty() {
            String::new()
        } else {
            format!(" (in {})", go.module)
        };
        writeln!(out, "command: {}{place}", shell_words(&go.argv))?;
    }
    match (runs, report.verdict) {
        (true, _) => {}
        (false, RunVerdict::Refused) if report.decision.is_none() => {}
        (false, _) => writeln!(out, "command: none — nothing to run")?,
    }
    match report.verdict {
        RunVerdict::Bounded if runs => writeln!(
            out,
            "{}",
            "subset run — non-authoritative, full suite still owed".style(s.dim)
        )?,
        RunVerdict::NamedFull => {
            for row in report
                .files
                .iter()
                .filter(|r| r.verdict == Verdict::NamedFull)
            {
                writeln!(
                    out,
                    "{} {}: {}",
                    "named_full:".style(s.warn),
                    row.path,
                    row.reasons.join("; ")
                )?;
            }
        }
        RunVerdict::Inert => writeln!(out, "all changes inert (non-code)")?,
        _ => {}
    }
    Ok(())
}

/// `gate: 3 changed files → 2 resolved, 1 inert; 4 of 212 test files selected (bounded)`
pub fn summary(report: &Report<'_>) -> String {
    let count = |v: Verdict| report.files.iter().filter(|r| r.verdict == v).count();
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
    let verdict = match report.verdict {
        RunVerdict::Bounded => "bounded",
        RunVerdict::NamedFull => "named_full",
        RunVerdict::Refused => "refused",
        RunVerdict::Inert => "inert",
        RunVerdict::Empty => "empty",
    };
    let files = report.files.len();
    let decided = if report.decision.is_some() {
        ", decision recorded"
    } else {
        ""
    };
    format!(
        "gate: {files} changed file{} → {}; {} of {} test files selected ({verdict}{decided})",
        if files == 1 { "" } else { "s" },
        if parts.is_empty() {
            "nothing to gate".to_string()
        } else {
            parts.join(", ")
        },
        report.selected.len(),
        report.test_files,
    )
}

/// An argv as one line a POSIX shell reads back as the same words: anything but plain path
/// characters is single-quoted, so a file name like `$(touch x).py` stays a name when pasted.
pub fn shell_words(argv: &[String]) -> String {
    argv.iter()
        .map(|w| {
            let plain = !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c));
            if plain {
                w.clone()
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
