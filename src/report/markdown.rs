//! A recorded run as a pull request comment (`gate report --markdown`): the triage (new
//! regressions first, each with its evidence), what did not run (a shard no leg recorded, a
//! selected unit with no result: never listed as ran), the verdict rows, the selection with
//! the reused passes apart, the shadow compare and the durations, opened by a hidden marker naming the
//! workflow, the head commit and the run attempt, so a workflow never lets an older run
//! overwrite a newer one's comment. Pure: the store is read by `commands/report.rs`.
//!
//! Bounded by construction: the sections are written in priority order against `BUDGET`, a
//! list is cut between rows with a count of what was left out, and no cell is longer than
//! `CELL` characters before escaping — so thousands of huge test names still fit GitHub's
//! 65,536-character comment.

use std::fmt::Write;

/// The whole comment's bound: under GitHub's 65,536-character limit with room to spare.
pub(crate) const BUDGET: usize = 60_000;
/// A cell's bound in characters of the value, before escaping (a name longer is cut with `…`).
const CELL: usize = 200;
/// Room kept for each later list's heading and count line while an earlier list is written.
const HEADING_ROOM: usize = 400;
/// How many of the slowest tests the durations name.
const SLOWEST: usize = 5;

/// What the comment says, read from the store.
pub(crate) struct Summary {
    pub workflow: String,
    pub run: String,
    pub head: String,
    pub attempt: u32,
    pub legs: Vec<String>,
    /// (verdict, confidence, test, leg, evidence), new regressions first.
    pub triaged: Vec<[String; 5]>,
    /// (path, verdict, why): why is the first reason the frozen decision gave, if kept.
    pub rows: Vec<[String; 3]>,
    /// (test unit, what selected it) of the units that have a result.
    pub ran: Vec<[String; 2]>,
    /// (test unit, why) of the units that were to run and have no result: selected, or given
    /// to a shard no leg recorded or to a leg that recorded none for it.
    pub not_run: Vec<[String; 2]>,
    /// The shards of the run's split no leg recorded, by the name their leg would have had.
    pub missing: Vec<String>,
    /// (test unit, the pass it reused) of the units the ledger reused.
    pub reused: Vec<[String; 2]>,
    /// One line: the shadow compare recorded at the head commit, if any.
    pub shadow: Option<String>,
    /// Results recorded, their summed milliseconds, and the slowest (test, ms).
    pub results: usize,
    pub total_ms: u64,
    pub slowest: Vec<(String, u64)>,
}

/// The comment's first line: an HTML comment GitHub does not show, which a workflow reads
/// back to update its own comment only when this run is newer.
pub(crate) fn marker(workflow: &str, head: &str, attempt: u32) -> String {
    format!(
        "<!-- gate-report workflow={} head={} attempt={attempt} -->",
        token(workflow),
        token(head)
    )
}

/// The comment, at most `BUDGET` characters.
pub(crate) fn render(s: &Summary) -> String {
    let mut head = marker(&s.workflow, &s.head, s.attempt);
    let regressions = s
        .triaged
        .iter()
        .filter(|t| t[0] == "new_regression")
        .count();
    let _ = write!(
        head,
        "\n## gate: run {} at {}\n\n{}{} new regression(s), {} failing test(s) triaged, {} changed path(s), {} test unit(s) ran, {}{} reused; leg(s): {}\n",
        cell(&s.run),
        cell(short(&s.head)),
        not_whole(s),
        regressions,
        s.triaged.len(),
        s.rows.len(),
        s.ran.len(),
        match s.not_run.len() {
            0 => String::new(),
            n => format!("{n} not run, "),
        },
        s.reused.len(),
        list_cell(&s.legs),
    );
    let tail = format!("{}{}", shadow(s), durations(s));
    let mut lists: Vec<(&str, &[&str], Vec<String>)> = vec![(
        "Triage",
        &["verdict", "confidence", "test", "leg", "evidence"],
        s.triaged.iter().map(|r| row(r)).collect(),
    )];
    // What did not run comes right after the triage, and only when there is some: a run
    // whose every unit ran reads as before.
    if !s.not_run.is_empty() {
        lists.push((
            "Not run",
            &["test", "why"],
            s.not_run.iter().map(|r| row(r)).collect(),
        ));
    }
    lists.extend([
        (
            "Changed paths",
            &["path", "verdict", "why"][..],
            s.rows.iter().map(|r| row(r)).collect(),
        ),
        (
            "Tests that ran",
            &["test", "selected by"],
            s.ran.iter().map(|r| row(r)).collect(),
        ),
        (
            "Reused passes",
            &["test", "reused pass"],
            s.reused.iter().map(|r| row(r)).collect(),
        ),
    ]);
    let mut left = BUDGET.saturating_sub(head.chars().count() + tail.chars().count());
    let mut out = head;
    let count = lists.len();
    for (n, (title, columns, rows)) in lists.into_iter().enumerate() {
        let room = left.saturating_sub(HEADING_ROOM * (count - n - 1));
        let section = table(title, columns, &rows, room);
        left = left.saturating_sub(section.chars().count());
        out.push_str(&section);
    }
    out.push_str(&tail);
    out
}

/// A titled table of `rows` in at most `room` characters: cut between rows, the cut counted.
fn table(title: &str, columns: &[&str], rows: &[String], room: usize) -> String {
    let mut out = format!("\n### {title}\n\n");
    if rows.is_empty() {
        out.push_str("None.\n");
        return out;
    }
    let _ = writeln!(out, "| {} |", columns.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(columns.len()));
    // The count line is at most this long; it is always kept room for.
    let cut_room = 64;
    let mut used = out.chars().count();
    for (n, r) in rows.iter().enumerate() {
        let len = r.chars().count() + 1;
        if used + len + cut_room > room {
            let _ = writeln!(out, "\n… and {} more not shown.", rows.len() - n);
            return out;
        }
        out.push_str(r);
        out.push('\n');
        used += len;
    }
    out
}

fn row(cells: &[String]) -> String {
    let cells: Vec<String> = cells.iter().map(|c| cell(c)).collect();
    format!("| {} |", cells.join(" | "))
}

/// The line that opens the summary of a run that is not whole: the shards no leg recorded.
fn not_whole(s: &Summary) -> String {
    if s.missing.is_empty() {
        return String::new();
    }
    format!(
        "**Not whole:** no leg recorded shard(s) {}: their tests did not run.\n\n",
        list_cell(&s.missing)
    )
}

fn shadow(s: &Summary) -> String {
    match &s.shadow {
        Some(line) => format!("\n### Shadow\n\n{}\n", cell(line)),
        None => "\n### Shadow\n\nNo shadow compare is recorded at this commit.\n".into(),
    }
}

fn durations(s: &Summary) -> String {
    let mut out = format!(
        "\n### Durations\n\n{} result(s), {} in all.\n",
        s.results,
        seconds(s.total_ms)
    );
    if !s.slowest.is_empty() {
        out.push_str("\n| slowest test | time |\n|---|---|\n");
        for (test, ms) in s.slowest.iter().take(SLOWEST) {
            let _ = writeln!(out, "| {} | {} |", cell(test), seconds(*ms));
        }
    }
    out
}

fn seconds(ms: u64) -> String {
    format!("{}.{:03}s", ms / 1000, ms % 1000)
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

/// At most five items, so the header stays small whatever the legs are called.
fn list_cell(items: &[String]) -> String {
    let shown: Vec<String> = items.iter().take(5).map(|i| cell(i)).collect();
    let more = items.len().saturating_sub(5);
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

/// `text` as one table cell: cut to `CELL` characters, every control character written as an
/// escape (`terminal::shown`, so a newline never ends the row), then every character markdown
/// or HTML would act on escaped — a name shows as it is and never becomes markup, a link, a
/// mention that notifies someone, or a cell boundary.
pub(crate) fn cell(text: &str) -> String {
    let cut: String = if text.chars().count() > CELL {
        text.chars().take(CELL).chain(['…']).collect()
    } else {
        text.to_string()
    };
    let visible = crate::terminal::shown(&cut).to_string();
    let mut out = String::with_capacity(visible.len() + 8);
    for c in visible.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '@' => out.push_str("&#64;"),
            '\\' | '|' | '`' | '*' | '_' | '[' | ']' | '~' | '#' | '!' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// A marker value as one token: anything but `[A-Za-z0-9._/-]` percent-encoded, so a workflow
/// name can neither split the marker nor close the HTML comment; its first 100 characters,
/// enough for any workflow name and commit id.
fn token(text: &str) -> String {
    let mut out = String::new();
    let cut: String = text.chars().take(100).collect();
    for b in cut.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'/' | b'-') {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_escapes_markup_html_and_controls() {
        assert_eq!(
            cell("a|b<script>&`*_[x]\n@me\\"),
            "a\\|b&lt;script&gt;&amp;\\`\\*\\_\\[x\\]\\\\n&#64;me\\\\"
        );
        assert_eq!(cell(&"x".repeat(500)).chars().count(), CELL + 1);
    }

    /// Every value at its worst — the longest escape for every character, in every field,
    /// thousands of rows in every list — still fits the budget, each list cut with its count.
    #[test]
    fn the_worst_summary_fits_the_budget() {
        let huge = "\u{10ffff}".repeat(5_000);
        let many = |n: usize| (0..n).map(|i| format!("{i}{huge}")).collect::<Vec<_>>();
        let s = Summary {
            workflow: huge.clone(),
            run: huge.clone(),
            head: huge.clone(),
            attempt: u32::MAX,
            legs: many(1_000),
            triaged: many(3_000)
                .into_iter()
                .map(|v| std::array::from_fn(|_| v.clone()))
                .collect(),
            rows: many(3_000)
                .into_iter()
                .map(|v| std::array::from_fn(|_| v.clone()))
                .collect(),
            ran: many(3_000).into_iter().map(|v| [v.clone(), v]).collect(),
            not_run: many(3_000).into_iter().map(|v| [v.clone(), v]).collect(),
            missing: many(1_000),
            reused: many(3_000).into_iter().map(|v| [v.clone(), v]).collect(),
            shadow: Some(huge.clone()),
            results: usize::MAX,
            total_ms: u64::MAX,
            slowest: many(10).into_iter().map(|v| (v, u64::MAX)).collect(),
        };
        let text = render(&s);
        assert!(text.chars().count() <= BUDGET, "{}", text.chars().count());
        assert_eq!(text.matches(" more not shown.").count(), 5);
    }

    #[test]
    fn the_marker_is_one_token_per_value() {
        assert_eq!(
            marker("CI --> pr", "abc", 2),
            "<!-- gate-report workflow=CI%20--%3E%20pr head=abc attempt=2 -->"
        );
    }
}
