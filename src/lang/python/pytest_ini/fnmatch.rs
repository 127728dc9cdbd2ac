//! pytest's `fnmatch_ex` as globsets: `python_files` and `--doctest-glob` patterns are compiled
//! once and matched against every path of a walk, so their translation lives on its own.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// Patterns matched as pytest's `fnmatch_ex` matches them (`python_files`, `--doctest-glob`):
/// a pattern without a `/` matches the file's name; one with a `/` matches the end of its
/// absolute path after any folders (`*/` + pattern), and fnmatch's `*` crosses folders —
/// `docs/*.md` matches `a/docs/b/c.md`. fnmatch has no `{a,b}` (braces are literal) and reads
/// an unclosed `[` as itself. An absolute pattern names folders outside the tree's paths: its
/// last part is matched against the name, which can only widen. Not known here: the root's
/// own folder names, which a pattern may spell out (`myrepo/docs/*.md`).
#[derive(Debug, Clone)]
pub(crate) struct Fnmatch {
    names: GlobSet,
    paths: GlobSet,
}

impl Fnmatch {
    pub(crate) fn new<'p>(patterns: impl IntoIterator<Item = &'p str>) -> Fnmatch {
        let (mut names, mut paths) = (GlobSetBuilder::new(), GlobSetBuilder::new());
        for pattern in patterns {
            let pattern = match pattern.strip_prefix('/') {
                Some(absolute) => crate::path::file_name(absolute),
                None => pattern,
            };
            let (set, glob) = match pattern.contains('/') {
                true => (&mut paths, format!("*/{}", glob_of(pattern, true))),
                false => (&mut names, glob_of(pattern, true)),
            };
            let compile = |glob: &str| {
                GlobBuilder::new(glob)
                    .literal_separator(false)
                    .backslash_escape(false)
                    .build()
            };
            // A class globset rejects (a reversed range) stands for any one character: wider.
            set.add(compile(&glob).unwrap_or_else(|_| {
                compile(&glob_of(&glob, false)).expect("a pattern without classes compiles")
            }));
        }
        Fnmatch {
            names: names.build().expect("translated patterns compile"),
            paths: paths.build().expect("translated patterns compile"),
        }
    }

    pub(crate) fn is_match(&self, path: &str) -> bool {
        self.names.is_match(crate::path::file_name(path))
            || (!self.paths.is_empty() && self.paths.is_match(format!("/{path}")))
    }
}

/// An fnmatch pattern as a globset pattern, following `fnmatch.translate`: `*`, `?` and a
/// closed `[...]` class (`!` negates, a `]` first is a member) keep their meaning; every other
/// character, an unclosed `[` included, is itself. Without `classes`, a class is `?`.
fn glob_of(pattern: &str, classes: bool) -> String {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        match c {
            '*' | '?' => out.push(c),
            '[' => {
                let mut j = i;
                if chars.get(j) == Some(&'!') {
                    j += 1;
                }
                if chars.get(j) == Some(&']') {
                    j += 1;
                }
                while j < chars.len() && chars[j] != ']' {
                    j += 1;
                }
                if j >= chars.len() {
                    out.push_str("[[]");
                    continue;
                }
                if !classes {
                    out.push('?');
                    i = j + 1;
                    continue;
                }
                let (negate, members) = match chars[i] {
                    '!' => (true, &chars[i + 1..j]),
                    _ => (false, &chars[i..j]),
                };
                out.push('[');
                if negate {
                    out.push('!');
                }
                out.extend(members);
                out.push(']');
                i = j + 1;
            }
            '{' | '}' | ']' => {
                out.push('[');
                out.push(c);
                out.push(']');
            }
            c => out.push(c),
        }
    }
    out
}
