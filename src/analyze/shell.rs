//! Shell text (scripts, `sh -c`, `os.system`) → the words that may name a file, a folder or a
//! Python module. A careful line scanner, not a parser: it splits words as the shell does
//! (quotes, operators, comments), drops variable-prefixed parts (`"$(dirname "$0")"/x.sh` →
//! `x.sh`, tried beside the script), and notes `python -m X`. Only words that name something
//! in the tree become edges, so a word that merely looks like a path costs nothing.

use super::facts::{Facts, StringContext, StringRef};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Word {
    pub value: String,
    /// Follows `-m` after a `python` program: a module, not a path.
    pub module: bool,
    /// 1-based line within the scanned text.
    pub line: u32,
}

/// A shell script's facts: its words as argv strings, `python -m` modules as such.
pub(crate) fn facts(bytes: &[u8]) -> Facts {
    let text = String::from_utf8_lossy(bytes);
    let mut strings: Vec<StringRef> = scan(&text)
        .into_iter()
        // Shell syntax (`[`, `{`, `}`, awk code) and globs over an unknown folder (`*.go`) name
        // nothing in particular.
        .filter(|w| {
            w.value.len() <= 256
                && w.value
                    .starts_with(|c: char| c.is_alphanumeric() || "._/".contains(c))
                && w.value.chars().any(char::is_alphanumeric)
        })
        .map(|w| StringRef {
            line: w.line,
            value: w.value,
            context: if w.module {
                StringContext::RunModule
            } else {
                StringContext::Argv
            },
        })
        .collect();
    strings.sort();
    strings.dedup();
    Facts {
        strings,
        ..Facts::default()
    }
}

/// Splits one command text into words; `#` comments are dropped.
pub(crate) fn scan(text: &str) -> Vec<Word> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let words = split(line);
        let mut python = false;
        for (j, word) in words.iter().enumerate() {
            let program = word.rsplit('/').next().unwrap_or(word);
            if program.starts_with("python") {
                python = true;
            }
            let after_m = python && j > 0 && words[j - 1] == "-m";
            let value = strip_variables(word);
            if value.is_empty() || value.starts_with('-') || value.contains('=') {
                continue;
            }
            out.push(Word {
                value,
                module: after_m,
                line: i as u32 + 1,
            });
        }
    }
    out
}

/// Words as a POSIX shell splits them (quotes group, a backslash escapes), as pytest splits
/// an `addopts` string (`shlex.split`): `--doctest-glob='*.rst'` is `--doctest-glob=*.rst`.
pub(crate) fn words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut open = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => word.extend(chars.next()),
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                open = true;
            }
            (None, '\\') => word.extend(chars.next()),
            (None, c) if c.is_whitespace() => {
                if open || !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                open = false;
            }
            (None, c) => word.push(c),
        }
    }
    if open || !word.is_empty() {
        words.push(word);
    }
    words
}

/// Shell words of one line: quotes group, operators and whitespace separate, `#` starts a
/// comment at a word's start.
fn split(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => quote = Some(c),
            (None, '\\') => {
                if let Some(next) = chars.next() {
                    word.push(next);
                }
            }
            (None, '#') if word.is_empty() => break,
            (None, c) if c.is_whitespace() || ";|&<>()`".contains(c) => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            (None, c) => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// `$DIR/x.sh`, `${ROOT}/x.sh`, `$(dirname $0)/x.sh` → `x.sh`: the part after the last segment
/// that holds a variable. A word that is only a variable gives nothing.
fn strip_variables(word: &str) -> String {
    match word.rfind('$') {
        None => word.to_string(),
        Some(at) => word[at..]
            .split_once('/')
            .map(|(_, rest)| rest.to_string())
            .unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<(String, bool)> {
        scan(text)
            .into_iter()
            .map(|w| (w.value, w.module))
            .collect()
    }

    #[test]
    fn words_split_as_a_shell_does() {
        assert_eq!(
            super::words(r#"-p x --doctest-glob='*.rst' "a b" c\ d '' e"#),
            ["-p", "x", "--doctest-glob=*.rst", "a b", "c d", "", "e"]
        );
    }

    #[test]
    fn words_modules_and_variables() {
        let w = |s: &str, m: bool| (s.to_string(), m);
        assert_eq!(
            words(
                "source \"$(dirname \"$0\")/lib.sh\" && python3 -m shop.cli --x=1 # python -m no"
            ),
            [
                w("source", false),
                w("lib.sh", false),
                w("python3", false),
                w("shop.cli", true)
            ]
        );
        assert_eq!(
            words("cat data/a.json | ./bin/run 'tests dir/x'; echo $HOME"),
            [
                w("cat", false),
                w("data/a.json", false),
                w("./bin/run", false),
                w("tests dir/x", false),
                w("echo", false)
            ]
        );
        assert_eq!(
            words("# all comment\n. ${ROOT}/env.sh"),
            [w(".", false), w("env.sh", false)]
        );
    }

    mod fuzz {
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(96))]
            #[test]
            fn random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
                prop_assert_eq!(super::super::facts(&bytes), super::super::facts(&bytes));
            }
        }
    }
}
