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

/// Whether gate colours its output (`Styles`: a terminal, or `--color always`). Until it does,
/// no `ESC[…m` in a line is gate's.
static COLOURS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Says gate colours its output from here on: its `ESC[…m` pass `line`.
pub(crate) fn colours_on() {
    COLOURS.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// A whole line gate composed: escapes what `Shown` does, except the newlines gate wrote and,
/// when gate colours its output, its colours (`ESC[…m`, which only select a colour) — the
/// backstop for a value that reached a line unescaped: it can no longer clear the screen,
/// retitle the terminal, move the cursor, hide text in a log that gate does not colour, or
/// start a line with `::`, which a CI runner reads as a workflow command (`::error::…`,
/// `::add-mask::…`): that `:` is written `\u{3a}`. gate's own commands go through `command`.
pub(crate) fn line(text: &str) -> std::borrow::Cow<'_, str> {
    let colours = COLOURS.load(std::sync::atomic::Ordering::Relaxed);
    guarded(escaped(text, colours), false)
}

/// A workflow command gate composed (`gate report --annotations`): one line, escaped as
/// `line` escapes, its own leading `::` kept.
pub(crate) fn command(text: &str) -> std::borrow::Cow<'_, str> {
    let colours = COLOURS.load(std::sync::atomic::Ordering::Relaxed);
    guarded(escaped(text, colours), true)
}

/// `text` with every line that a CI runner would read as a workflow command — its first
/// characters after blanks `::` — made plain; the first line kept when it is gate's `command`.
fn guarded(text: std::borrow::Cow<'_, str>, command: bool) -> std::borrow::Cow<'_, str> {
    let forged = |n: usize, l: &str| !(command && n == 0) && l.trim_start().starts_with("::");
    if !text.split('\n').enumerate().any(|(n, l)| forged(n, l)) {
        return text;
    }
    let lines: Vec<String> = text
        .split('\n')
        .enumerate()
        .map(|(n, l)| {
            if forged(n, l) {
                let blanks = l.len() - l.trim_start().len();
                format!("{}\\u{{3a}}{}", &l[..blanks], &l[blanks + 1..])
            } else {
                l.to_string()
            }
        })
        .collect();
    lines.join("\n").into()
}

/// `line`'s escapes: every hidden character but gate's newlines and, with `colours`, its
/// `ESC[…m`.
fn escaped(text: &str, colours: bool) -> std::borrow::Cow<'_, str> {
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
            .filter(|(r, n)| colours && r[*n..].starts_with('m'))
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

/// `value` as pretty JSON that reaches a terminal as it reads: a character `line` would escape
/// that JSON keeps raw inside a string (DEL, a C1 control, a bidi mark) is written as JSON's
/// own `\uXXXX` escape instead — the same value to a parser, and valid JSON still, where
/// `line`'s `\u{…}` would not be.
/// `value` with every object's keys in sorted order: what gate prints, stores and hashes of a
/// JSON value it builds. serde_json keeps an object's keys in insertion order in this build
/// (a dependency, oxc_resolver, turns on its `preserve_order`); gate's documents keep the
/// sorted order they have always had, whatever order the code built them in.
pub(crate) fn sorted(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    // Iterative: a document's depth is the input's, and no recursion follows input depth.
    enum Step {
        Visit(Value),
        Array(usize),
        Object(Vec<String>),
    }
    let mut steps = vec![Step::Visit(value)];
    let mut done: Vec<Value> = Vec::new();
    while let Some(step) = steps.pop() {
        match step {
            Step::Visit(Value::Array(items)) => {
                steps.push(Step::Array(items.len()));
                steps.extend(items.into_iter().rev().map(Step::Visit));
            }
            Step::Visit(Value::Object(map)) => {
                let mut entries: Vec<(String, Value)> = map.into_iter().collect();
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                let (keys, values): (Vec<String>, Vec<Value>) = entries.into_iter().unzip();
                steps.push(Step::Object(keys));
                steps.extend(values.into_iter().rev().map(Step::Visit));
            }
            Step::Visit(scalar) => done.push(scalar),
            Step::Array(n) => {
                let items = done.split_off(done.len() - n);
                done.push(Value::Array(items));
            }
            Step::Object(keys) => {
                let values = done.split_off(done.len() - keys.len());
                done.push(Value::Object(keys.into_iter().zip(values).collect()));
            }
        }
    }
    done.pop().unwrap_or(Value::Null)
}

pub(crate) fn json(value: &impl serde::Serialize) -> String {
    let text = serde_json::to_string_pretty(value).expect("JSON serializes");
    // Every other control is escaped by the serializer; a newline here is the layout's.
    let raw = |c: char| c != '\n' && hidden(c);
    if !text.chars().any(raw) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if raw(c) {
            // Every hidden character is in the Basic Multilingual Plane: one `\uXXXX`.
            let _ = std::fmt::Write::write_fmt(&mut out, format_args!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Writes one line to stdout; once the reader has gone, the rest is dropped without a word.
pub(crate) fn say_line(args: std::fmt::Arguments<'_>) -> crate::error::Result<()> {
    // The backstop for text from tests and files that reached a line unescaped: no control
    // character but gate's own newlines reaches the terminal or log, and no line of it is a
    // workflow command.
    write_out(&line(&args.to_string()))
}

/// Writes one workflow command gate composed to stdout (`command`'s escapes).
pub(crate) fn say_command(text: &str) -> crate::error::Result<()> {
    write_out(&command(text))
}

fn write_out(text: &str) -> crate::error::Result<()> {
    use std::io::Write;
    use std::sync::atomic::{AtomicBool, Ordering};
    static CLOSED: AtomicBool = AtomicBool::new(false);
    if CLOSED.load(Ordering::Relaxed) {
        return Ok(());
    }
    let written = writeln!(std::io::stdout().lock(), "{text}");
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
            escaped(text, true),
            "\u{1b}[1mgate:\u{1b}[0m a\n\\u{1b}[2J b \\u{1b}]0;t\\u{7} \\u{1b}[31"
        );
        // Output gate does not colour holds no ESC at all.
        assert_eq!(
            escaped("\u{1b}[8mhidden\u{1b}[0m", false),
            "\\u{1b}[8mhidden\\u{1b}[0m"
        );
        assert!(matches!(line("no controls"), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn json_shows_hidden_characters_as_its_own_escapes() {
        let value = serde_json::json!({"leg": "a\u{202e}b\u{7f}\u{85}\n\u{1b}[8m"});
        let text = json(&value);
        assert!(!text.chars().any(|c| c != '\n' && hidden(c)), "{text}");
        assert_eq!(line(&text), text);
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, value);
    }

    #[test]
    fn no_line_but_gate_s_command_is_a_workflow_command() {
        assert_eq!(
            line("leg l1\n::warning::x\n \t::error::y\nok :: z"),
            "leg l1\n\\u{3a}:warning::x\n \t\\u{3a}:error::y\nok :: z"
        );
        assert_eq!(
            command("::error title=t::m\n::error::forged"),
            "::error title=t::m\n\\u{3a}:error::forged"
        );
        assert!(matches!(line("a::b"), std::borrow::Cow::Borrowed(_)));
    }
}
