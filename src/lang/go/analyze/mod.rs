//! Go source → facts, in one tree-sitter pass: the package clause, every import path with its
//! line, `//go:embed` patterns, and the string literals that name files (`os.ReadFile`,
//! `filepath.Join`, `template.ParseFiles`, …) or programs (`exec.Command` argv). Build tags and
//! GOOS/GOARCH suffixes are not evaluated: every file counts (conservative).

use super::values::{Values, literal, push};
use crate::analyze::facts::{Facts, Import, StringContext, StringRef};
use std::cell::RefCell;
use tree_sitter::{Node, Parser};

pub(crate) const GRAMMAR: &str = "tree-sitter-go 0.25";

thread_local! {
    static PARSER: RefCell<Parser> = RefCell::new({
        let mut parser = Parser::new();
        parser
            .set_language(&tree_sitter_go::LANGUAGE.into())
            .expect("the bundled Go grammar matches the tree-sitter ABI");
        parser
    });
}

/// Calls whose string arguments are paths, relative to the package folder (`go test`'s working
/// directory) or the repository root.
const PATH_CALLS: &[&str] = &[
    "ReadFile",
    "Open",
    "OpenFile",
    "Stat",
    "Lstat",
    "ReadDir",
    "Walk",
    "WalkDir",
    "Join",
    "ParseFiles",
    "ParseGlob",
    "Glob",
    "DirFS",
    "LoadFile",
];
const EXEC_CALLS: &[&str] = &["Command", "CommandContext"];

/// Names whose presence means a file may hold reference edges beyond its imports.
const NEEDS_FULL_PARSE: &[&str] = &[
    "go:embed",
    "exec.",
    "filepath.",
    "os.",
    "template.",
    "Glob",
    "DirFS",
    "ReadFile",
    "LoadFile",
    "runtime.Caller",
    "path.",
    "Join(",
    // Test code (and its helpers) names fixtures in any call: `testutil.CaseFile(t, "x.txt")`.
    "\"testing\"",
];

/// Calls whose value is a path built from parts: evaluated whole (`go_values`).
const BUILD_CALLS: &[&str] = &["filepath.Join", "path.Join", "fmt.Sprintf"];

/// The part of a Go file that holds its package clause and imports: Go puts every import
/// before the first top-level declaration, so a file that names no path call can stop there
/// (a parse of the header alone is many times cheaper). Anything unusual — an `import` after
/// the cut — keeps the whole file.
fn header(source: &[u8]) -> &[u8] {
    let Ok(text) = std::str::from_utf8(source) else {
        return source;
    };
    if NEEDS_FULL_PARSE.iter().any(|n| text.contains(n)) {
        return source;
    }
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if ["func ", "type ", "var ", "const "]
            .iter()
            .any(|d| line.starts_with(d))
        {
            let rest = &text[offset..];
            let later_import = rest
                .lines()
                .any(|l| l.starts_with("import ") || l.starts_with("import("));
            return if later_import {
                source
            } else {
                &source[..offset]
            };
        }
        offset += line.len();
    }
    source
}

pub(crate) fn analyze(source: &[u8]) -> Facts {
    let mut facts = Facts::default();
    let mut source = header(source);
    // Go's imports come first, so a cut past `MAX_PARSED` loses only path calls and embeds.
    if let Some(cut) = crate::analyze::facts::cut_point(source) {
        facts.cut_at = Some(source[..cut].iter().filter(|&&b| b == b'\n').count() as u32 + 1);
        source = &source[..cut];
    }
    let tree = PARSER.with(|p| p.borrow_mut().parse(source, None));
    let Some(tree) = tree else {
        facts.parse_errors.push(1);
        return facts;
    };
    walk(&mut facts, tree.root_node(), source);
    facts.imports.sort();
    facts.imports.dedup();
    facts.strings.sort();
    facts.strings.dedup();
    facts.env.sort();
    facts.env.dedup();
    facts.parse_errors.sort_unstable();
    facts.parse_errors.dedup();
    facts
}

/// Visits the tree in source order with one cursor (no recursion on nesting depth, no list of
/// children made per node: the walk is most of the time a parsed file costs), each node's
/// facts into `facts`. The file's bindings are read only once a value is asked for.
fn walk(facts: &mut Facts, root: Node<'_>, source: &[u8]) {
    let values = std::cell::OnceCell::new();
    let values = || values.get_or_init(|| Values::new(root, source));
    // In test code a fixture path may be handed to any helper: every literal that looks like
    // a relative file path is kept (only one naming a file of the tree becomes an edge).
    let test_code = source.windows(9).any(|w| w == b"\"testing\"");
    let mut cursor = root.walk();
    // For each node on the path from the root: the context its children inherit and whether
    // it is a binary expression (a `+` inside one is part of a larger value).
    let mut above: Vec<(StringContext, bool)> = Vec::new();
    loop {
        let node = cursor.node();
        let (context, in_binary) = above
            .last()
            .copied()
            .unwrap_or((StringContext::Plain, false));
        let line = node.start_position().row as u32 + 1;
        if node.is_error() || node.is_missing() {
            facts.parse_errors.push(line);
        }
        let mut child_context = Some(context);
        let binary = node.kind() == "binary_expression";
        match node.kind() {
            "package_clause" | "import_spec" | "comment" => {
                header_facts(facts, node, line, source);
                child_context = None;
            }
            // The outermost `a + b`: a path built by concatenation.
            "binary_expression"
                if !in_binary
                    && node
                        .child_by_field_name("operator")
                        .is_some_and(|o| o.kind() == "+") =>
            {
                values().emit(facts, node, line, false);
            }
            "call_expression" => {
                child_context =
                    call(facts, &values, node, line, source).map(|c| c.unwrap_or(context));
            }
            "interpreted_string_literal" | "raw_string_literal" => {
                let value = literal(node, source);
                if context != StringContext::Plain {
                    if context == StringContext::PathArg {
                        values().emit_literal(facts, &value, line);
                    }
                    push(facts, line, value, context);
                } else if test_code && looks_like_file(&value) {
                    push(facts, line, value, StringContext::PathArg);
                }
                child_context = None;
            }
            _ => {}
        }
        if let Some(child_context) = child_context
            && cursor.goto_first_child()
        {
            above.push((child_context, binary));
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return;
            }
            above.pop();
        }
    }
}

/// The facts of a package clause (the package's name), an import spec (an import) or a
/// comment (`//go:embed` patterns).
fn header_facts(facts: &mut Facts, node: Node<'_>, line: u32, source: &[u8]) {
    match node.kind() {
        "package_clause" => {
            let mut cursor = node.walk();
            facts.package = node
                .named_children(&mut cursor)
                .find(|c| c.kind() == "package_identifier")
                .map(|c| text(c, source));
        }
        "import_spec" => {
            if let Some(path) = node.child_by_field_name("path") {
                facts.imports.push(Import {
                    line,
                    level: 0,
                    module: literal(path, source),
                    names: Vec::new(),
                });
            }
        }
        "comment" => {
            let t = text(node, source);
            if let Some(patterns) = t.strip_prefix("//go:embed") {
                for pattern in embed_patterns(patterns) {
                    facts.strings.push(StringRef {
                        line,
                        value: pattern,
                        context: StringContext::Embed,
                    });
                }
            }
        }
        _ => {}
    }
}

/// `os.Getenv("X")`, `os.LookupEnv("X")`: a variable read by a literal name. A computed name
/// (`os.Getenv(v)`) or the whole environment (`os.Environ()`, `os.ExpandEnv(s)`) is a read gate
/// cannot name.
fn env_read(facts: &mut Facts, call: tree_sitter::Node<'_>, function: &str, source: &[u8]) {
    let any = |facts: &mut Facts| {
        let text = String::from_utf8_lossy(&source[call.byte_range()]);
        let line = call.start_position().row as u32 + 1;
        facts.env_any.push((line, text.chars().take(80).collect()));
    };
    match function {
        "os.Getenv" | "os.LookupEnv" | "syscall.Getenv" => {
            let arg = call.child_by_field_name("arguments").and_then(|a| {
                let mut cursor = a.walk();
                a.named_children(&mut cursor).next()
            });
            match arg {
                Some(arg)
                    if matches!(
                        arg.kind(),
                        "interpreted_string_literal" | "raw_string_literal"
                    ) =>
                {
                    facts.env.push(literal(arg, source));
                }
                _ => any(facts),
            }
        }
        "os.Environ" | "syscall.Environ" | "os.ExpandEnv" | "os.Expand" => any(facts),
        _ => {}
    }
}

/// The lines of syntax errors anywhere in a Go file. `analyze` usually reads a file only up to
/// its first declaration (its imports are all there), so errors below are found only here:
/// for the changed files, whose rows say so.
pub(crate) fn parse_errors(source: &[u8]) -> Vec<u32> {
    let source = match crate::analyze::facts::cut_point(source) {
        Some(cut) => &source[..cut],
        None => source,
    };
    let Some(tree) = PARSER.with(|p| p.borrow_mut().parse(source, None)) else {
        return vec![1];
    };
    let mut lines = Vec::new();
    let mut cursor = tree.walk();
    // A pre-order walk with the cursor: no recursion on nesting depth.
    loop {
        let node = cursor.node();
        if node.is_error() || node.is_missing() {
            lines.push(node.start_position().row as u32 + 1);
        }
        if node.has_error() && cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                lines.sort_unstable();
                lines.dedup();
                return lines;
            }
        }
    }
}

/// The facts of one call: an environment read, a path built whole (a join's parts are not
/// read again: `None`), or a reader whose literal arguments are paths (`Some(Some(context))`)
/// and whose other arguments are evaluated.
fn call<'t: 'v, 'v>(
    facts: &mut Facts,
    values: &impl Fn() -> &'v Values<'t>,
    node: Node<'t>,
    line: u32,
    source: &[u8],
) -> Option<Option<StringContext>> {
    let function = node
        .child_by_field_name("function")
        .map(|f| text(f, source))
        .unwrap_or_default();
    let last = function.rsplit('.').next().unwrap_or(&function);
    env_read(facts, node, &function, source);
    if BUILD_CALLS.contains(&function.as_str()) {
        values().emit(facts, node, line, false);
        if last == "Join" {
            return None;
        }
    }
    let context = if EXEC_CALLS.contains(&last) && function.contains("exec.") {
        go_tool_packages(facts, node, line, source);
        StringContext::Argv
    } else if PATH_CALLS.contains(&last) {
        StringContext::PathArg
    } else {
        return Some(None);
    };
    // A named value handed to a reader (`os.ReadFile(p)`, `os.DirFS(dir)`).
    for arg in call_args(node) {
        if !matches!(
            arg.kind(),
            "interpreted_string_literal" | "raw_string_literal"
        ) {
            values().emit(facts, arg, line, true);
        }
    }
    Some(Some(context))
}

/// `exec.Command("go", "run", "example.com/mod/tool")`: a go command's package arguments that
/// are import paths (not `./dir` folders, which the argv strings name) build that package — an
/// import of it, resolved as imports are.
fn go_tool_packages(facts: &mut Facts, call: Node<'_>, line: u32, source: &[u8]) {
    let words: Vec<String> = call_args(call)
        .iter()
        .filter(|a| {
            matches!(
                a.kind(),
                "interpreted_string_literal" | "raw_string_literal"
            )
        })
        .map(|a| literal(*a, source))
        .collect();
    let is_go = words
        .first()
        .is_some_and(|w| w == "go" || w.ends_with("/go"));
    let verb = words.get(1).map(String::as_str);
    if !is_go
        || !matches!(
            verb,
            Some("run" | "build" | "test" | "vet" | "install" | "generate")
        )
    {
        return;
    }
    for word in &words[2..] {
        let path = word.split('@').next().unwrap_or(word);
        let import_path = !path.starts_with('-')
            && !path.starts_with('.')
            && !path.starts_with('/')
            && !path.ends_with(".go")
            && path
                .split('/')
                .next()
                .is_some_and(|first| first.contains('.'));
        if import_path {
            facts.imports.push(crate::analyze::facts::Import {
                line,
                level: 0,
                module: path.to_string(),
                names: Vec::new(),
            });
        }
    }
}

fn call_args(call: Node<'_>) -> Vec<Node<'_>> {
    call.child_by_field_name("arguments")
        .map(|a| {
            let mut cursor = a.walk();
            a.named_children(&mut cursor).collect()
        })
        .unwrap_or_default()
}

/// `_cases/table.txt`, `testdata/in.json`: a relative path with a folder or an extension, no
/// spaces, no scheme.
fn looks_like_file(value: &str) -> bool {
    let name = value.rsplit('/').next().unwrap_or(value);
    let extension = name
        .rsplit_once('.')
        .is_some_and(|(stem, ext)| !stem.is_empty() && (1..=8).contains(&ext.len()));
    !value.contains(' ') && !value.contains("://") && (value.contains('/') || extension)
}

/// `//go:embed a.txt "b c.txt" static/*` → the patterns (`all:` prefixes dropped: every file
/// under a folder counts anyway).
fn embed_patterns(rest: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = rest.trim().chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        let mut word = String::new();
        if c == '"' || c == '`' {
            chars.next();
            for d in chars.by_ref() {
                if d == c {
                    break;
                }
                word.push(d);
            }
        } else {
            while let Some(&d) = chars.peek() {
                if d.is_whitespace() {
                    break;
                }
                word.push(d);
                chars.next();
            }
        }
        let word = word.strip_prefix("all:").unwrap_or(&word).to_string();
        if !word.is_empty() {
            out.push(word);
        }
    }
    out
}

fn text(node: Node<'_>, source: &[u8]) -> String {
    node.utf8_text(source).unwrap_or_default().to_string()
}

#[cfg(test)]
mod tests;
