//! Path expressions evaluated from the source text alone: `__file__` and its parents, `/` and
//! `os.path.join` joins, `Path(...)` wrappers, module-level names bound to paths, package
//! resources, `%` and `.format` templates, names bound by loops over literal lists. An unknown
//! part is kept as a marker while the value is built, then sealed into a glob that covers
//! whatever it may hold — a `/` too: `data/{name}.json` is `data/**/*.json`, and an unknown
//! folder under a literal tail (`settings.BASE / "x.json"`) is `**/x.json`.

mod expr;

use serde::{Deserialize, Serialize};

pub(crate) use expr::{
    Chunk, MAX_DEPTH, assemble, attribute_value, binary_value, eval, format_value, is_path_method,
    is_split, method_value, name_value, named_call_value, parents_value, percent_value,
    reads_resource,
};

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "anchor", content = "path")]
pub(crate) enum PathValue {
    /// Relative to the repository root or to the file's folder (a literal says not which).
    Relative(String),
    /// Relative to the folder of the file that holds the expression (built from `__file__`).
    FileDir(String),
    /// The file itself (`__file__`).
    File,
    /// Inside a package's folder: `importlib.resources.files("pkg") / "x.json"`.
    Package { package: String, path: String },
    /// Another module's file (`jsonschema.__file__`, the module imported by that name).
    ModuleFile(String),
    /// Relative to the folder that holds another module's file (`Path(jsonschema.__file__)
    /// .parent.parent / "json"`): a package's own folder, or the folder a plain module is in.
    ModuleDir { module: String, path: String },
}

/// An unknown part while a value is built: replaced by `seal` with the glob that covers it.
pub(crate) const UNKNOWN: char = '\u{1}';

/// The evaluator's own alternatives while a value is built (a loop over literal names is
/// `{a.json,b.json}`): kept apart from braces and commas in the source's text, which are a
/// name's characters, until `seal` writes them as a glob's.
pub(crate) const ALTERNATIVES: [char; 3] = ['\u{2}', '\u{3}', '\u{4}'];

impl PathValue {
    fn path_mut(&mut self) -> Option<&mut String> {
        match self {
            PathValue::File | PathValue::ModuleFile(_) => None,
            PathValue::Relative(p) | PathValue::FileDir(p) => Some(p),
            PathValue::Package { path, .. } | PathValue::ModuleDir { path, .. } => Some(path),
        }
    }

    /// The value with its unknown parts as globs: what facts record.
    pub(crate) fn seal(mut self) -> PathValue {
        // Only text may start with a folder not known here; the others start at a known one.
        let text = matches!(self, PathValue::Relative(_));
        if let Some(p) = self.path_mut()
            && p.contains([UNKNOWN, ALTERNATIVES[0]])
        {
            *p = seal(p, text);
        }
        self
    }

    /// The file's own folder or one above it (`Path(__file__).parent`, `ROOT`): an anchor other
    /// paths are built from, not a reference to everything below it.
    pub(crate) fn is_anchor(&self) -> bool {
        match self {
            PathValue::File | PathValue::ModuleFile(_) => true,
            PathValue::FileDir(p) | PathValue::ModuleDir { path: p, .. } => {
                p.split('/').all(|s| s.is_empty() || s == "..")
            }
            PathValue::Package { path, .. } => path.is_empty(),
            PathValue::Relative(p) => p.is_empty() || p == "." || p.split('/').all(|s| s == ".."),
        }
    }

    /// A glob must say something besides its wildcards: `"*/*"` (from `a + "/" + b`) names
    /// nothing in particular, so it is no reference.
    pub(crate) fn is_specific(&self) -> bool {
        match self {
            PathValue::Relative(p) => !p.contains('*') || p.chars().any(char::is_alphanumeric),
            _ => true,
        }
    }

    pub(crate) fn parent(self) -> Option<PathValue> {
        Some(match self {
            PathValue::File => PathValue::FileDir(String::new()),
            PathValue::FileDir(p) => PathValue::FileDir(up(&p)),
            PathValue::Relative(p) => PathValue::Relative(up(&p)),
            PathValue::Package { package, path } => PathValue::Package {
                package,
                path: up(&path),
            },
            PathValue::ModuleFile(module) => PathValue::ModuleDir {
                module,
                path: String::new(),
            },
            PathValue::ModuleDir { module, path } => PathValue::ModuleDir {
                module,
                path: up(&path),
            },
        })
    }

    pub(crate) fn join(self, rest: &str) -> Option<PathValue> {
        if rest.starts_with('/') || rest.starts_with('~') {
            return None; // absolute: outside the repository
        }
        let glue = |p: &str| {
            if p.is_empty() {
                rest.to_string()
            } else {
                format!("{p}/{rest}")
            }
        };
        Some(match self {
            PathValue::File | PathValue::ModuleFile(_) => return None,
            PathValue::FileDir(p) => PathValue::FileDir(glue(&p)),
            PathValue::Relative(p) => PathValue::Relative(glue(&p)),
            PathValue::Package { package, path } => PathValue::Package {
                package,
                path: glue(&path),
            },
            PathValue::ModuleDir { module, path } => PathValue::ModuleDir {
                module,
                path: glue(&path),
            },
        })
    }

    /// String concatenation: `HERE + "/data.json"`. Onto a folder itself, a leading `/` is
    /// the separator; anything else names a sibling whose name starts with the folder's
    /// (`HERE + "_old"`), a name not known here.
    pub(crate) fn concat(mut self, rest: &str) -> Option<PathValue> {
        let text = matches!(self, PathValue::Relative(_));
        let path = self.path_mut()?;
        let folder =
            (path.is_empty() && !text) || matches!(path.rsplit('/').next(), Some(".." | "."));
        match rest.strip_prefix('/') {
            // `HERE + os.sep`: inside the folder, ready for a name.
            Some("") if path.is_empty() && !text => *path = "./".to_string(),
            Some(inside) if path.is_empty() && !text => *path = inside.to_string(),
            None if folder => {
                let sep = if path.is_empty() { "" } else { "/" };
                path.push_str(&format!("{sep}../{UNKNOWN}{rest}"));
            }
            _ => path.push_str(rest),
        }
        Some(self)
    }
}

/// A path with unknown parts as the glob that covers every value they may hold, `/` included
/// (an unknown part is taken to go down, not up: a name, not `../x`): an unknown followed by
/// `..` is a folder at or under the parent; a whole unknown segment is `**` (or `*` last, where
/// a folder matched names what is under it); `pre?post` is `pre*post` or `pre*/**/*post`.
fn seal(path: &str, text: bool) -> String {
    let u = UNKNOWN.to_string();
    let mut segments: Vec<String> = Vec::new();
    for (k, seg) in path.split('/').enumerate() {
        let first = text && segments.len() == 1;
        match segments.last_mut() {
            _ if seg == "." || (seg.is_empty() && k > 0) => {}
            // An unknown first part is a folder anywhere: its parent is one too.
            Some(last) if seg == ".." && last.contains(UNKNOWN) && first => {
                *last = u.clone();
            }
            // `x/?/..` is `x/..` (`?` may be `.`) or a folder below `x`: `x/../**`.
            Some(last) if seg == ".." && last.contains(UNKNOWN) => {
                *last = "..".to_string();
                segments.push(u.clone());
            }
            _ => segments.push(seg.to_string()),
        }
    }
    let n = segments.len();
    let mut out: Vec<String> = Vec::with_capacity(n);
    for (k, seg) in segments.iter().enumerate() {
        let last = k + 1 == n;
        let seg = &widen(seg);
        let glob = if !seg.contains(UNKNOWN) {
            seg.clone()
        } else {
            let pre = &seg[..seg.find(UNKNOWN).unwrap_or(0)];
            let post = &seg[seg.rfind(UNKNOWN).map_or(0, |i| i + UNKNOWN.len_utf8())..];
            let core = one_star(&format!("{pre}*{post}"));
            match (pre.is_empty(), post.is_empty()) {
                (true, true) if last => "*".to_string(),
                (true, true) => "**".to_string(),
                (false, true) if last => core,
                (false, true) => format!("{core}/**"),
                (true, false) => format!("**/{core}"),
                (false, false) => format!(
                    "{{{core},{}/**/{}}}",
                    one_star(&format!("{pre}*")),
                    one_star(&format!("*{post}"))
                ),
            }
        };
        if glob == "**" && out.last().is_some_and(|l| l == "**") {
            continue;
        }
        out.push(glob);
    }
    let [open, next, close] = ALTERNATIVES;
    out.join("/")
        .replace(open, "{")
        .replace(next, ",")
        .replace(close, "}")
}

/// The literal text of a path that becomes a glob, read both ways: as a name (every character
/// a glob would take as syntax escaped: `data[1].json`, `{k},x`) and, where it holds a class, as
/// the pattern it would be to `glob`/`Path.glob` (`case[0-9].txt`): `{name,pattern}`. Neither
/// Python's nor Go's globs have braces. An escape of the source (`\t`, `\u00e9`, `\\`) is a
/// character not known here: `*`. Markers (control characters) are kept; the text between them
/// is read run by run, so no alternation spans one.
pub(crate) fn widen(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut run = String::new();
    for c in text.chars() {
        if c.is_control() {
            out.push_str(&widen_run(&run));
            run.clear();
            out.push(c);
        } else {
            run.push(c);
        }
    }
    out.push_str(&widen_run(&run));
    out
}

/// One run of `widen`: no markers in it.
fn widen_run(text: &str) -> String {
    if !text.contains(['[', ']', '{', '}', ',', '\\']) {
        return text.to_string();
    }
    let escape = |out: &mut String, c: char| {
        if matches!(c, '[' | ']' | '{' | '}' | ',') {
            out.push('\\');
        }
        out.push(c);
    };
    let (mut name, mut pattern, mut class) = (String::new(), String::new(), false);
    let chars: Vec<char> = text.chars().collect();
    let mut k = 0;
    while k < chars.len() {
        let c = chars[k];
        k += 1;
        match c {
            '\\' => {
                let rest = &chars[k..];
                let hex = |n: usize| {
                    rest.iter()
                        .skip(1)
                        .take(n)
                        .take_while(|d| d.is_ascii_hexdigit())
                        .count()
                        + 1
                };
                k += match rest.first() {
                    Some('x') => hex(2),
                    Some('u') => hex(4),
                    Some('U') => hex(8),
                    Some('N') if rest.get(1) == Some(&'{') => {
                        rest.iter().position(|&d| d == '}').map_or(1, |end| end + 1)
                    }
                    Some(d) if d.is_digit(8) => {
                        rest.iter().take(3).take_while(|d| d.is_digit(8)).count()
                    }
                    Some(_) => 1,
                    None => 0,
                };
                for out in [&mut name, &mut pattern] {
                    if !out.ends_with('*') {
                        out.push('*');
                    }
                }
            }
            // `{{` is `{` in an f-string (whose text the evaluator keeps as written) and two
            // braces elsewhere: `\{*` is both.
            '{' | '}' if chars.get(k) == Some(&c) => {
                k += 1;
                for out in [&mut name, &mut pattern] {
                    escape(out, c);
                    out.push('*');
                }
            }
            // A class the two dialects read alike (letters, digits, ranges, `!`); any other
            // `[` is read character by character, as a name.
            '[' => match chars[k..].iter().position(|&d| d == ']') {
                Some(end)
                    if end > 0
                        && chars[k..k + end]
                            .iter()
                            .all(|d| d.is_alphanumeric() || matches!(d, '-' | '_' | '.' | '!')) =>
                {
                    let inside = &chars[k..k + end];
                    k += end + 1;
                    name.push_str("\\[");
                    name.extend(inside);
                    name.push_str("\\]");
                    pattern.push('[');
                    pattern.extend(inside);
                    pattern.push(']');
                    class = true;
                }
                _ => {
                    escape(&mut name, c);
                    escape(&mut pattern, c);
                }
            },
            _ => {
                escape(&mut name, c);
                escape(&mut pattern, c);
            }
        }
    }
    if class {
        format!("{{{},{}}}", one_star(&name), one_star(&pattern))
    } else {
        one_star(&name)
    }
}

/// Runs of `*` inside a segment as one: the same to a glob, and a `**` right after an escaped
/// `{` or `,` in an alternation is read by globset as a recursive suffix that swallows it.
fn one_star(glob: &str) -> String {
    let mut out = String::with_capacity(glob.len());
    for c in glob.chars() {
        if !(c == '*' && out.ends_with('*')) {
            out.push(c);
        }
    }
    out
}

/// Whether a part says something: more than unknowns and separators.
fn known(part: &str) -> bool {
    part.chars().any(|c| c != UNKNOWN && c != '/' && c != '.')
}

/// `a/b` → `a`; `` → `..`; `..` → `../..`: lexical, so `FileDir` can climb above the file.
fn up(path: &str) -> String {
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() || trimmed == "." {
        return "..".into();
    }
    if trimmed.split('/').all(|s| s == "..") {
        return format!("{trimmed}/..");
    }
    trimmed
        .rsplit_once('/')
        .map_or(String::new(), |(d, _)| d.to_string())
}

#[cfg(test)]
mod tests {
    use super::{PathValue, UNKNOWN};
    use proptest::prelude::*;

    fn matches(glob: &str, path: &str) -> bool {
        crate::config::glob(glob).is_ok_and(|g| g.compile_matcher().is_match(path))
    }

    /// Text a file name may hold, glob characters among them: as the source writes it (what
    /// the evaluator keeps), as it runs when it names a file, and the name it matches when it is
    /// a pattern (`Path.glob`: a class is one of its characters).
    fn text() -> impl Strategy<Value = (String, String, String)> {
        prop::collection::vec(
            prop::sample::select(vec![
                ("a", "a", "a"),
                ("b", "b", "b"),
                ("1", "1", "1"),
                (".", ".", "."),
                ("-", "-", "-"),
                (" ", " ", " "),
                ("[", "[", "["),
                ("]", "]", "]"),
                ("{", "{", "{"),
                ("}", "}", "}"),
                (",", ",", ","),
                ("*", "*", "*"),
                ("?", "?", "?"),
                ("[1]", "[1]", "1"),
                ("[ab]", "[ab]", "b"),
                ("[0-9]", "[0-9]", "7"),
                ("[!x]", "[!x]", "y"),
                ("'", "'", "'"),
                ("\\\\", "\\", "\\"),
                ("\\t", "\t", "\t"),
                ("\\u00e9", "\u{e9}", "\u{e9}"),
                ("\\x41", "A", "A"),
                ("{{", "{", "{"),
                ("}}", "}", "}"),
                ("\\101", "A", "A"),
            ]),
            0..6,
        )
        .prop_map(|parts| {
            // With a lone bracket the text has no one reading as a pattern: its name alone.
            let lone = parts.iter().any(|p| p.0 == "[" || p.0 == "]");
            (
                parts.iter().map(|p| p.0).collect(),
                parts.iter().map(|p| p.1).collect(),
                parts.iter().map(|p| if lone { p.1 } else { p.2 }).collect(),
            )
        })
    }

    proptest! {
        /// Whatever text stands around an unknown part, the glob `seal` makes of it matches
        /// every name that text and a value of the part make (or a folder above it), in the
        /// part's segment or with folders in it, read as a name or as a pattern: a name with
        /// glob characters is not read as a pattern that misses it, nor a pattern as a name.
        #[test]
        fn a_sealed_glob_matches_every_name_its_text_makes(
            folder in text(),
            pre in text(),
            post in text(),
            value in prop::sample::select(vec!["x", "7", "a/b", "long name"]),
        ) {
            let sealed =
                PathValue::Relative(format!("d{}/{}{UNKNOWN}{}", folder.0, pre.0, post.0)).seal();
            let PathValue::Relative(glob) = sealed else { unreachable!() };
            for name in [
                format!("d{}/{}{value}{}", folder.1, pre.1, post.1),
                format!("d{}/{}{value}{}", folder.2, pre.2, post.2),
            ] {
                // A folder matched names what is under it (`resolve`'s rule).
                let covered = name
                    .match_indices('/')
                    .map(|(at, _)| &name[..at])
                    .chain([name.as_str()])
                    .any(|p| matches(&glob, p));
                prop_assert!(covered, "{glob:?} does not match {name:?}");
            }
        }
    }

    /// A one-character class is that character to a glob: the name holding the bracket and the
    /// one holding the character both match.
    #[test]
    fn a_class_of_one_character_matches_both_readings() {
        let sealed = PathValue::Relative(format!("case[1]_{UNKNOWN}.json")).seal();
        let PathValue::Relative(glob) = sealed else {
            unreachable!()
        };
        assert!(matches(&glob, "case[1]_x.json"), "{glob}");
        assert!(matches(&glob, "case1_x.json"), "{glob}");
        assert!(!matches(&glob, "other_x.json"), "{glob}");
    }
}
