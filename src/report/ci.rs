//! A recorded run for CI systems, as text gate prints or writes: GitHub's workflow commands
//! (an error per gap of a run that is not whole and per new regression, a warning per refused
//! row — at most `PER_KIND` of each, as
//! GitHub keeps no more per step and drops the rest without a word), the step summary file,
//! and a JUnit report of the verdicts for other CI systems. gate holds no token and speaks no
//! HTTP: the workflow posts what gate prints.

use std::fmt::Write;

/// GitHub shows at most ten annotations of each kind per step.
pub(crate) const PER_KIND: usize = 10;
/// `GITHUB_STEP_SUMMARY` takes at most 1 MiB per step.
pub(crate) const STEP_SUMMARY_MAX: usize = 1024 * 1024;

/// One annotation: where, and what.
pub(crate) struct Annotation {
    pub file: Option<String>,
    pub line: Option<u32>,
    pub title: String,
    pub message: String,
}

/// The workflow command lines: errors then warnings, each kind cut at `PER_KIND`, then one
/// plain line counting what was left out.
pub(crate) fn annotations(errors: &[Annotation], warnings: &[Annotation]) -> Vec<String> {
    let mut lines = Vec::new();
    for (kind, all) in [("error", errors), ("warning", warnings)] {
        lines.extend(all.iter().take(PER_KIND).map(|a| command(kind, a)));
    }
    let (e, w) = (
        errors.len().saturating_sub(PER_KIND),
        warnings.len().saturating_sub(PER_KIND),
    );
    if e + w > 0 {
        lines.push(format!(
            "gate: {e} more new regression(s) and {w} more refused path(s) not annotated (GitHub keeps {PER_KIND} of each per step); `gate triage` lists them all"
        ));
    }
    lines
}

fn command(kind: &str, a: &Annotation) -> String {
    let mut props = Vec::new();
    if let Some(file) = &a.file {
        props.push(format!("file={}", property(file)));
        if let Some(line) = a.line {
            props.push(format!("line={line}"));
        }
    }
    props.push(format!("title={}", property(&a.title)));
    format!("::{kind} {}::{}", props.join(","), data(&a.message))
}

/// A workflow command's message, escaped as GitHub's toolkit does: a newline can never end
/// the command and start another.
pub(crate) fn data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A property's value: `data`'s escapes, and `:` and `,` that would end it.
pub(crate) fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}

/// Appends `markdown` to the step summary file, cut to fit its 1 MiB with what was left said.
pub(crate) fn append_step_summary(path: &std::path::Path, markdown: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    let used = std::fs::metadata(path).map_or(0, |m| m.len() as usize);
    let room = STEP_SUMMARY_MAX.saturating_sub(used + 2);
    let text = if markdown.len() > room {
        let note = "\n\n… the rest does not fit the step summary: see the pull request comment.\n";
        let mut end = room.saturating_sub(note.len());
        while end > 0 && !markdown.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}{note}", &markdown[..end])
    } else {
        markdown.to_string()
    };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    writeln!(file, "{text}")
}

/// A JUnit report of the verdicts: a suite of the changed paths (a refused one fails) and a
/// suite of the triaged tests (a new regression fails), each case with its evidence.
pub(crate) fn junit(rows: &[[String; 3]], triaged: &[[String; 5]]) -> String {
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
    let paths: Vec<(String, String, bool)> = rows
        .iter()
        .map(|[path, verdict, why]| {
            (
                path.clone(),
                format!("{verdict}: {why}"),
                verdict == "refused",
            )
        })
        .collect();
    let tests: Vec<(String, String, bool)> = triaged
        .iter()
        .map(|[verdict, confidence, test, leg, evidence]| {
            (
                format!("{test} [{leg}]"),
                format!("{verdict} ({confidence}): {evidence}"),
                verdict == "new_regression",
            )
        })
        .collect();
    for (suite, cases) in [("gate.paths", paths), ("gate.triage", tests)] {
        let failures = cases.iter().filter(|c| c.2).count();
        let _ = writeln!(
            xml,
            "  <testsuite name=\"{suite}\" tests=\"{}\" failures=\"{failures}\">",
            cases.len()
        );
        for (name, text, failed) in &cases {
            let (name, text) = (xml_text(name), xml_text(text));
            let body = if *failed {
                format!("<failure message=\"{text}\">{text}</failure>")
            } else {
                format!("<system-out>{text}</system-out>")
            };
            let _ = writeln!(
                xml,
                "    <testcase classname=\"{suite}\" name=\"{name}\">{body}</testcase>"
            );
        }
        xml.push_str("  </testsuite>\n");
    }
    xml.push_str("</testsuites>\n");
    xml
}

/// XML cannot hold most control characters at all: they are written as visible escapes first.
fn xml_text(text: &str) -> String {
    quick_xml::escape::escape(crate::terminal::shown(text).to_string()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workflow_command_values_are_escaped() {
        let a = Annotation {
            file: Some("t/a,b:c.py".into()),
            line: Some(3),
            title: "new regression: x".into(),
            message: "100% broke\r\nnext".into(),
        };
        assert_eq!(
            command("error", &a),
            "::error file=t/a%2Cb%3Ac.py,line=3,title=new regression%3A x::100%25 broke%0D%0Anext"
        );
    }

    #[test]
    fn the_step_summary_is_appended_and_kept_under_its_limit() {
        let dir = std::env::temp_dir().join(format!("gate-step-summary-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("summary.md");
        std::fs::write(&path, "x".repeat(STEP_SUMMARY_MAX - 1000)).unwrap();
        append_step_summary(&path, &"é|".repeat(2000)).unwrap();
        let kept = std::fs::read_to_string(&path).unwrap();
        assert!(kept.len() <= STEP_SUMMARY_MAX, "{}", kept.len());
        assert!(kept.ends_with("see the pull request comment.\n\n"));
        std::fs::write(&path, "before\n").unwrap();
        append_step_summary(&path, "# gate").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "before\n# gate\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
