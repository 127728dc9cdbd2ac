//! The fast path: a Python file's facts read at token level, without a syntax tree, for every
//! file whose constructs it knows; any other file is read by tree-sitter (`analyze`). The rule
//! is exactness: where the fast path answers, its facts are the facts tree-sitter's pass
//! gives, field by field. So it answers only for a file that parses without an error (its
//! parser accepts a subset of what tree-sitter reads cleanly) and that names nothing only the
//! tree pass reads — a process, import, environment, listing or resource call, a `sys.path`
//! folder — leaving it imports, strings in their context, doctest examples and the path
//! expressions the evaluator reads (`__file__` and its folders, wrappers, joins, methods,
//! templates), evaluated with the evaluator's own functions. `gate scan-check` and
//! `tests/it/scan.rs` hold it to that over real corpora.

mod environ;
mod expressions;
mod grammar;
mod lexer;

use crate::analyze::facts::{Facts, MAX_PARSED, StringContext, StringRef};
use crate::lang::python::analyze as tree;
use grammar::Parser;
use std::collections::BTreeSet;

/// Names whose every use the tree pass reads (a module `__getattr__`, `pytest_plugins`): a
/// file that holds one goes to tree-sitter.
const TREE_NAMES: &[&str] = &["pytest_plugins"];

/// The environment's names. The tree pass reads them as os's when spelled through `os.` (read
/// by the parser, `environ.rs`, or sent to tree-sitter inside an f-string's hole) or imported
/// from os (a file that does goes to tree-sitter, once its imports are read); any other
/// `environ` (WSGI's) or `getenv` reads nothing to it.
const ENV_NAMES: &[&str] = &["environ", "environb", "getenv"];

/// The first name of `tokens` only the tree pass reads; in an f-string's hole (`hole`), the
/// environment's too (the parser reads os's environment elsewhere: `scan/environ.rs`).
fn tree_name(source: &[u8], tokens: &[lexer::Token], hole: bool) -> Option<&'static str> {
    let mut after_dot = false;
    let mut after_def = false;
    let mut after_os_dot = false;
    let mut after_os = false;
    for t in tokens {
        let text = &source[t.start as usize..t.end as usize];
        let name = t.kind == lexer::Kind::Name;
        // A module `__getattr__` bound from a call is the tree pass's (PEP 562 loaders); a
        // method defined or looked up by that name is no binding.
        if name && text == b"__getattr__" && !after_dot && !after_def {
            return Some("__getattr__");
        }
        after_def = name && text == b"def";
        if name && let Some(found) = TREE_NAMES.iter().find(|n| n.as_bytes() == text) {
            return Some(found);
        }
        // `os.environ`, whatever stands around the dot: the tree pass reads the text only
        // when nothing does, and this need not tell.
        if name
            && hole
            && after_os_dot
            && let Some(found) = ENV_NAMES.iter().find(|n| n.as_bytes() == text)
        {
            return Some(found);
        }
        let dot = t.kind == lexer::Kind::Op && text == b".";
        after_os_dot = after_os && dot;
        after_os = name && text == b"os";
        after_dot = dot;
    }
    None
}

/// Whether the file imports one of the environment's names from os (`from os import environ`,
/// or `*`): then the tree pass reads its bare uses too.
fn imports_env_name(imports: &[crate::analyze::facts::Import]) -> bool {
    ENV_NAMES
        .iter()
        .any(|name| tree::imported_from_os(imports, name))
}

/// The facts of `source`, if the fast path reads it exactly; `None` sends it to tree-sitter.
pub(crate) fn facts(source: &[u8]) -> Option<Facts> {
    read(source).ok()
}

/// The facts of `source`, or why the fast path leaves it to tree-sitter.
fn read(source: &[u8]) -> Result<Facts, String> {
    if source.len() > MAX_PARSED {
        return Err("larger than the parsed limit".into());
    }
    let Ok(text) = std::str::from_utf8(source) else {
        return Err("not UTF-8".into());
    };
    let lexed = lexer::lex(source).map_err(|_| "a token it does not know".to_string())?;
    let found = std::iter::once((lexed.tokens.as_slice(), false))
        .chain(
            lexed
                .strings
                .iter()
                .flat_map(|s| s.holes.iter().map(|h| (h.as_slice(), true))),
        )
        .find_map(|(tokens, hole)| tree_name(source, tokens, hole));
    if let Some(name) = found {
        return Err(format!("name {name}"));
    }
    let mut parser = Parser::new(text, &lexed);
    parser
        .file()
        .map_err(|_| "a construct it does not parse".to_string())?;
    if let Some(why) = parser.defer {
        return Err(why);
    }
    if parser.env_unclaimed > 0 {
        return Err("name environ".into());
    }
    if imports_env_name(&parser.imports) {
        return Err("an environment name imported from os".into());
    }
    let mut facts = Facts {
        imports: parser.imports,
        env: parser.env,
        env_any: parser.env_any,
        paths: parser.paths.into_iter().flatten().collect(),
        ..Facts::default()
    };
    for (line, value, context) in parser.strings {
        if value.contains(">>>") {
            facts
                .doctest_imports
                .extend(tree::doctest_imports(&value, line));
        }
        if tree::keeps(&value, context) {
            facts.strings.push(StringRef {
                line,
                value: value.into_owned(),
                context,
            });
        }
    }
    tree::normalize(&mut facts);
    Ok(facts)
}

/// Whether a call of `function` (the callee's text) with or without arguments is one only the
/// tree pass reads: its arguments are argv, a `sys.path` folder or a feature file, it runs or
/// imports code, reads the environment or a folder, or names a package's resource. (The
/// strings of a path call are read here in their context; path values, by `expressions`.)
/// `context` is `argument_context_of(function)`.
pub(super) fn call_matters(function: &str, context: Option<StringContext>, has_args: bool) -> bool {
    // `environ.get(…)` not through `os.`: WSGI's, unless imported from os (see ENV_NAMES).
    let foreign_env_reader = tree::ENV_READS.contains(&function) && !function.starts_with("os.");
    (has_args && context.is_some_and(|c| c != StringContext::PathArg))
        || (tree::is_read_call(function) && !foreign_env_reader)
        || crate::analyze::paths::reads_resource(function)
}

/// One file read both ways: whether the fast path answered, and where its facts differ from
/// tree-sitter's (`None`: they are equal, or it did not answer), with the time each took.
pub(crate) struct Checked {
    pub fast: bool,
    /// Why the fast path left it to tree-sitter.
    pub deferred: Option<String>,
    pub differs: Option<String>,
    pub fast_time: std::time::Duration,
    pub tree_time: std::time::Duration,
}

/// Reads `source` with the fast path and with tree-sitter alone, and compares them.
pub(crate) fn check(source: &[u8]) -> Checked {
    let started = std::time::Instant::now();
    let read = read(source);
    let fast_time = started.elapsed();
    let (fast, deferred) = match read {
        Ok(facts) => (Some(facts), None),
        Err(why) => (None, Some(why)),
    };
    let started = std::time::Instant::now();
    let reference = tree::analyze_reference(source);
    let tree_time = started.elapsed();
    let differs = fast
        .as_ref()
        .filter(|f| **f != reference)
        .map(|f| first_difference(f, &reference));
    Checked {
        fast: fast.is_some(),
        deferred,
        differs,
        fast_time,
        tree_time,
    }
}

/// The first field where `fast` and `reference` differ, both values shown.
fn first_difference(fast: &Facts, reference: &Facts) -> String {
    let (a, b) = (
        serde_json::to_value(fast).unwrap_or_default(),
        serde_json::to_value(reference).unwrap_or_default(),
    );
    let fields: BTreeSet<&String> = a
        .as_object()
        .into_iter()
        .chain(b.as_object())
        .flat_map(|o| o.keys())
        .collect();
    for field in fields {
        if a.get(field) != b.get(field) {
            let show = |v: Option<&serde_json::Value>| {
                let text = v.map_or("absent".to_string(), ToString::to_string);
                text.chars().take(400).collect::<String>()
            };
            return format!(
                "{field}: fast {} / tree-sitter {}",
                show(a.get(field)),
                show(b.get(field))
            );
        }
    }
    "facts differ".to_string()
}

#[cfg(test)]
mod tests;
