//! The alternatives a Go string expression may evaluate to, with markers for what is not
//! text (the file's folder and name, the working directory, an unknown part, a temporary
//! folder); the operations of the calls gate follows (`filepath.Join`, `Dir`, `Base`,
//! `TrimSuffix`, `Sprintf`) on them; and what a final value names. Plain string work, apart
//! from the syntax tree the bindings are read from.

use crate::analyze::paths::{PathValue, widen};

/// Markers inside an evaluated value: the file's own folder, the file's own name (one path
/// segment), the working directory, an unknown string (it may hold `/`), a temporary folder.
pub(super) const DIR: char = '\u{1}';
pub(super) const NAME: char = '\u{2}';
pub(super) const CWD: char = '\u{3}';
const ANY: char = '\u{4}';
pub(super) const TEMP: char = '\u{5}';

/// Past this many alternatives a value is unknown.
const MAX_ALTS: usize = 16;

/// The alternatives an expression may evaluate to.
pub(super) type Val = Vec<String>;

pub(super) fn any() -> Val {
    vec![ANY.to_string()]
}

/// Too many alternatives: unknown.
pub(super) fn bounded(mut values: Val) -> Val {
    values.sort();
    values.dedup();
    if values.len() > MAX_ALTS {
        any()
    } else {
        values
    }
}

pub(super) fn concat(a: &Val, b: &Val) -> Val {
    bounded(
        a.iter()
            .flat_map(|x| b.iter().map(move |y| format!("{x}{y}")))
            .collect(),
    )
}

/// `filepath.Join`: the non-empty parts joined with `/`, cleaned.
pub(super) fn join(parts: &[Val]) -> Val {
    let mut out: Val = vec![String::new()];
    for part in parts {
        let mut next = Vec::new();
        for prefix in &out {
            for p in part {
                next.push(match (prefix.is_empty(), p.is_empty()) {
                    (true, _) => p.clone(),
                    (_, true) => prefix.clone(),
                    _ => format!("{prefix}/{p}"),
                });
            }
        }
        out = bounded(next);
    }
    out.iter().map(|v| clean(v)).collect()
}

/// `.` and `..` resolved lexically, as `filepath.Clean` does — except that `..` never undoes
/// an unknown segment (it may hold several folders) and stays after an anchor.
fn clean(value: &str) -> String {
    let absolute = value.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in value.split('/') {
        match part {
            "" | "." => {}
            ".." => match parts.last() {
                Some(p) if p.contains(ANY) => {}
                Some(&p) if p != ".." && !is_anchor(p) => {
                    parts.pop();
                }
                _ => parts.push(".."),
            },
            p => parts.push(p),
        }
    }
    let joined = parts.join("/");
    if absolute {
        format!("/{joined}")
    } else if joined.is_empty() {
        ".".to_string()
    } else {
        joined
    }
}

fn is_anchor(segment: &str) -> bool {
    [DIR, CWD, TEMP]
        .iter()
        .any(|a| segment.len() == a.len_utf8() && segment.starts_with(*a))
}

/// `filepath.Dir`: the value without its last segment; an unknown last segment is kept (its
/// folder is not known, the glob over it covers it).
pub(super) fn dir(value: &str) -> String {
    let value = clean(value);
    match value.rsplit_once('/') {
        _ if is_anchor(&value) || value.ends_with("..") => format!("{value}/.."),
        Some((_, last)) if last.contains(ANY) => value,
        Some(("", _)) => "/".to_string(),
        Some((d, _)) => d.to_string(),
        None if value.contains(ANY) => value,
        None => ".".to_string(),
    }
}

pub(super) fn base(value: &str) -> String {
    let value = clean(value);
    let last = value.rsplit('/').next().unwrap_or(&value);
    if last.contains(ANY) || is_anchor(last) {
        ANY.to_string()
    } else {
        last.to_string()
    }
}

/// `strings.TrimSuffix`: the suffix dropped where the value ends with it. Where the value ends
/// in the file's own name or an unknown part, what is left of its last segment may be nothing
/// (`TrimSuffix(file, "x_test.go")`: the folder) or a part of a name (`TrimSuffix(file,
/// ".go")`): both; a suffix of several segments climbs out of the folders it names.
pub(super) fn trim_suffix(values: &Val, suffixes: &Val) -> Val {
    let mut out = Vec::new();
    for v in values {
        for s in suffixes {
            match v.strip_suffix(s.as_str()) {
                Some(trimmed) => out.push(trimmed.to_string()),
                None if v
                    .rsplit('/')
                    .next()
                    .is_some_and(|l| l.contains([NAME, ANY])) =>
                {
                    let mut up = v.clone();
                    for _ in 0..=s.matches('/').count() {
                        up = dir(&up);
                    }
                    out.push(format!("{up}/{NAME}"));
                    out.push(up);
                }
                None => out.push(v.clone()),
            }
        }
    }
    bounded(out)
}

/// `fmt.Sprintf`: `%s` and `%v` take their argument's value; other verbs are unknown.
pub(super) fn sprintf(format: &str, args: &[Val]) -> Val {
    let mut out: Val = vec![String::new()];
    let mut next_arg = 0;
    let mut chars = format.chars().peekable();
    let mut literal = String::new();
    while let Some(c) = chars.next() {
        if c != '%' {
            literal.push(c);
            continue;
        }
        let mut verb = chars.next().unwrap_or('%');
        while verb.is_ascii_digit() || "+-# .".contains(verb) {
            verb = chars.next().unwrap_or('v');
        }
        if verb == '%' {
            literal.push('%');
            continue;
        }
        out = concat(&out, &vec![std::mem::take(&mut literal)]);
        let value = match verb {
            's' | 'v' => args.get(next_arg).cloned().unwrap_or_else(any),
            _ => any(),
        };
        next_arg += 1;
        out = concat(&out, &value);
    }
    concat(&out, &vec![literal])
}

pub(super) enum Fact {
    /// Relative to the working directory of a test file: a literal, as any other.
    Literal(String),
    Path(PathValue),
}

/// What one evaluated value names, if anything.
pub(super) fn fact(value: &str, runs_tests: bool, read: bool) -> Option<Fact> {
    if value.contains(TEMP) {
        return None;
    }
    let value = clean(value);
    if value.starts_with('/') || value.starts_with('~') {
        // Outside the tree: a literal, so the file's reads name it.
        return (!value.contains([DIR, NAME, CWD, ANY])).then_some(Fact::Literal(value));
    }
    let (first, rest) = value.split_once('/').unwrap_or((&value, ""));
    // Whether a value says something besides its wildcards, read from the glob it becomes:
    // escaped syntax (`[%s]` is `\[*\]`) says nothing.
    let has_literal = |s: &str| {
        glob(s)
            .split('/')
            .any(|p| p != ".." && p.chars().any(char::is_alphanumeric))
    };
    if first.len() == DIR.len_utf8() && first.starts_with(DIR) {
        if !read && !has_literal(rest) {
            return None;
        }
        // The folder itself (`os.ReadDir(dir)`) is `.`: an empty path names nothing.
        let path = glob(rest);
        let path = if path.is_empty() {
            ".".to_string()
        } else {
            path
        };
        return Some(Fact::Path(PathValue::FileDir(path)));
    }
    // An unknown base (a parameter, another file's helper): the literal tail anywhere, its
    // leading `..` dropped (they climb from a folder not known).
    let relative = if first.starts_with(ANY) {
        rest
    } else if first.len() == CWD.len_utf8() && first.starts_with(CWD) {
        if runs_tests {
            return Some(Fact::Literal(glob(rest)));
        }
        rest
    } else if runs_tests {
        return has_literal(&value).then(|| Fact::Literal(glob(&value)));
    } else {
        // Relative to the working directory of a file no `go test` runs in its own folder:
        // the folder of any package whose tests call it.
        &value
    };
    let tail: Vec<&str> = relative
        .split('/')
        .skip_while(|p| *p == ".." || *p == "." || p.is_empty())
        .collect();
    let tail = tail.join("/");
    if has_literal(&tail) {
        Some(Fact::Path(PathValue::Relative(format!(
            "**/{}",
            glob(&tail)
        ))))
    } else if read && !first.starts_with(ANY) {
        // The working directory itself (`os.DirFS(".")`) where it is not known: any folder.
        Some(Fact::Path(PathValue::Relative("**".to_string())))
    } else {
        None
    }
}

/// Markers as glob syntax: the file's own name is one segment (`*`); an unknown part may hold
/// folders (`**`, or `**/x*` inside a segment).
fn glob(value: &str) -> String {
    // Text around a marker becomes part of a glob, read as a name and as a pattern
    // (`crate::analyze::paths::widen`). Text alone stays as written: resolution reads it both
    // ways.
    let marked = value.contains([ANY, NAME]);
    value
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .map(|p| if marked { widen(p) } else { p.to_string() })
        .map(|p| {
            if p.chars().all(|c| c == ANY) {
                "**".to_string()
            } else if p.contains(ANY) {
                format!("**/{}", p.replace([ANY, NAME], "*"))
            } else {
                p.replace(NAME, "*")
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cleaning_keeps_anchors_and_unknown_folders() {
        let d = DIR.to_string();
        assert_eq!(clean(&format!("{d}/{NAME}/../x")), format!("{d}/x"));
        assert_eq!(clean(&format!("{d}/../a/./b")), format!("{d}/../a/b"));
        assert_eq!(clean(&format!("{ANY}/../../data")), format!("{ANY}/data"));
        assert_eq!(dir(&format!("{d}/{NAME}")), d);
        assert_eq!(dir(&d), format!("{d}/.."));
        assert_eq!(glob(&format!("a/case_{ANY}.json")), "a/**/case_*.json");
        // Text around an unknown part is read as a name (its syntax escaped) and, holding a
        // class, as a pattern.
        assert_eq!(
            glob(&format!("a/case[1]{{{ANY}}}.json")),
            "a/**/{case\\[1\\]\\{,case[1]\\{}*\\}.json"
        );
        assert_eq!(glob("a/case[1].json"), "a/case[1].json");
        assert_eq!(
            sprintf("%s/x-%d.json", &[vec![d.clone()], any()]),
            [format!("{d}/x-{ANY}.json")]
        );
    }
}
