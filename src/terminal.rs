//! What reaches a terminal or a CI log: gate's lines on stdout and stderr, and the escaping
//! every value from outside gate (a test's name, a file name) passes through on its way there.
//! A leaf, so every stage can warn without reaching up to the reporters.

/// A problem that does not stop the run: one line on stderr (stdout may be JSON).
pub(crate) fn warn(text: String) {
    tell(format_args!("warning: {text}"));
}

/// One line on stderr, through `line`'s backstop (every human line on stderr goes here).
pub(crate) fn tell(args: std::fmt::Arguments<'_>) {
    let text = args.to_string();
    eprintln!("{}", line(&text));
}

/// Text that came from outside gate (a test's name or message, a file name, a leg) as it may
/// reach a terminal or a CI log: every control character — a newline that would forge a line,
/// `ESC` that would clear the screen or retitle the terminal — and every bidirectional override
/// is written as an escape (`\n`, `\u{1b}`), so what is printed is what was there.
pub(crate) struct Shown<'a>(pub &'a str);

impl std::fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        escape(f, self.0, false)
    }
}

/// `Shown` for `text`.
pub(crate) fn shown(text: &str) -> Shown<'_> {
    Shown(text)
}

/// A whole line gate composed: escapes what `Shown` does, except the newlines gate wrote and
/// its colours (`ESC[…m`, which only select a colour) — the backstop for a value that reached a
/// line unescaped: it can no longer clear the screen, retitle the terminal or move the cursor.
pub(crate) fn line(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(hidden) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut rest = text;
    while let Some(at) = rest.find('\u{1b}') {
        let _ = escape(&mut out, &rest[..at], true);
        let colour = rest[at + 1..]
            .strip_prefix('[')
            .and_then(|r| {
                r.find(|c: char| !(c.is_ascii_digit() || c == ';'))
                    .map(|n| (r, n))
            })
            .filter(|(r, n)| r[*n..].starts_with('m'))
            .map(|(_, n)| n + 3);
        match colour {
            Some(len) => {
                out.push_str(&rest[at..at + len]);
                rest = &rest[at + len..];
            }
            None => {
                out.push_str("\\u{1b}");
                rest = &rest[at + 1..];
            }
        }
    }
    let _ = escape(&mut out, rest, true);
    out.into()
}

/// A character a terminal acts on instead of showing: controls (C0, DEL, C1) and the Unicode
/// formatting marks that reorder what follows.
fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn escape(out: &mut dyn std::fmt::Write, text: &str, keep_newlines: bool) -> std::fmt::Result {
    for c in text.chars() {
        match c {
            '\n' if keep_newlines => out.write_char(c)?,
            // A tab moves the cursor and nothing else.
            '\t' => out.write_char(c)?,
            '\n' => out.write_str("\\n")?,
            '\r' => out.write_str("\\r")?,
            c if hidden(c) => write!(out, "\\u{{{:x}}}", c as u32)?,
            c => out.write_char(c)?,
        }
    }
    Ok(())
}

/// Writes one line to stdout; once the reader has gone, the rest is dropped without a word.
pub(crate) fn say_line(args: std::fmt::Arguments<'_>) -> crate::error::Result<()> {
    use std::io::Write;
    use std::sync::atomic::{AtomicBool, Ordering};
    static CLOSED: AtomicBool = AtomicBool::new(false);
    if CLOSED.load(Ordering::Relaxed) {
        return Ok(());
    }
    // The backstop for text from tests and files that reached a line unescaped: no control
    // character but gate's own newlines reaches the terminal or log.
    let text = args.to_string();
    let written = writeln!(std::io::stdout().lock(), "{}", crate::terminal::line(&text));
    if written
        .as_ref()
        .is_err_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    {
        CLOSED.store(true, Ordering::Relaxed);
    }
    ignore_broken_pipe(written)
}

/// Output to a closed pipe (`gate … | head`) is not an error.
pub(crate) fn ignore_broken_pipe(result: std::io::Result<()>) -> crate::error::Result<()> {
    match result {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(crate::error::Error::io(
            "<stdout>",
            "cannot write the report",
            e,
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_show_every_control_as_an_escape() {
        let name = "test_x[\u{1b}[2J\u{1b}]0;owned\u{7}\nok line\r\u{202e}]";
        let shown = shown(name).to_string();
        assert_eq!(
            shown,
            "test_x[\\u{1b}[2J\\u{1b}]0;owned\\u{7}\\nok line\\r\\u{202e}]"
        );
        assert!(!shown.chars().any(hidden));
        assert_eq!(super::shown("plain\tname").to_string(), "plain\tname");
    }

    #[test]
    fn a_line_keeps_gate_s_newlines_and_colours_only() {
        let text = "\u{1b}[1mgate:\u{1b}[0m a\n\u{1b}[2J b \u{1b}]0;t\u{7} \u{1b}[31";
        assert_eq!(
            line(text),
            "\u{1b}[1mgate:\u{1b}[0m a\n\\u{1b}[2J b \\u{1b}]0;t\\u{7} \\u{1b}[31"
        );
        assert!(matches!(line("no controls"), std::borrow::Cow::Borrowed(_)));
    }
}
