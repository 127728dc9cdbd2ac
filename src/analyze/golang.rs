//! Go source → facts, in one tree-sitter pass: the package clause, every import path with its
//! line, `//go:embed` patterns, and the string literals that name files (`os.ReadFile`,
//! `filepath.Join`, `template.ParseFiles`, …) or programs (`exec.Command` argv). Build tags and
//! GOOS/GOARCH suffixes are not evaluated: every file counts (conservative).

use super::facts::{Facts, Import, StringContext, StringRef};
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

/// Stands for the file itself in a joined path (`runtime.Caller(0)`'s file name, Go's
/// `__file__`): `Join(file, "..", "x")` normalises to the file's folder's `x`.
const THIS_FILE: &str = "__this_file__";
/// A join part that is a fresh temporary folder (`t.TempDir()`, `os.MkdirTemp(…)`): what is
/// joined onto it is outside the tree.
const TEMP_DIR: &str = "__temp_dir__";
const TEMP_CALLS: &[&str] = &["TempDir", "MkdirTemp"];

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
    if let Some(cut) = super::facts::cut_point(source) {
        facts.cut_at = Some(source[..cut].iter().filter(|&&b| b == b'\n').count() as u32 + 1);
        source = &source[..cut];
    }
    let tree = PARSER.with(|p| p.borrow_mut().parse(source, None));
    let Some(tree) = tree else {
        facts.parse_errors.push(1);
        return facts;
    };
    let mut anchors = Anchors::default();
    // In test code a fixture path may be handed to any helper: every literal that looks like
    // a relative file path is kept (only one naming a file of the tree becomes an edge).
    let test_code = source.windows(9).any(|w| w == b"\"testing\"");
    let mut stack: Vec<(Node<'_>, StringContext)> = vec![(tree.root_node(), StringContext::Plain)];
    while let Some((node, context)) = stack.pop() {
        let line = node.start_position().row as u32 + 1;
        if node.is_error() || node.is_missing() {
            facts.parse_errors.push(line);
        }
        let mut child_context = context;
        match node.kind() {
            "package_clause" => {
                let mut cursor = node.walk();
                facts.package = node
                    .named_children(&mut cursor)
                    .find(|c| c.kind() == "package_identifier")
                    .map(|c| text(c, source));
                continue;
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
                continue;
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
                continue;
            }
            "short_var_declaration" | "assignment_statement" | "var_spec" => {
                anchors.bind(node, source);
            }
            "call_expression" => {
                let function = node
                    .child_by_field_name("function")
                    .map(|f| text(f, source))
                    .unwrap_or_default();
                let last = function.rsplit('.').next().unwrap_or(&function);
                env_read(&mut facts, node, &function, source);
                if last == "Join" {
                    let joined = anchors.join(node, source);
                    if !joined.starts_with(TEMP_DIR) {
                        push_join(&mut facts, line, joined);
                    }
                    continue;
                }
                if EXEC_CALLS.contains(&last) && function.contains("exec.") {
                    child_context = StringContext::Argv;
                } else if PATH_CALLS.contains(&last) {
                    child_context = StringContext::PathArg;
                }
            }
            "interpreted_string_literal" | "raw_string_literal" => {
                let value = literal(node, source);
                if context != StringContext::Plain {
                    push(&mut facts, line, value, context);
                } else if test_code && looks_like_file(&value) {
                    push(&mut facts, line, value, StringContext::PathArg);
                }
                continue;
            }
            _ => {}
        }
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        stack.extend(children.into_iter().rev().map(|c| (c, child_context)));
    }
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

/// `os.Getenv("X")`, `os.LookupEnv("X")`: a variable read by a literal name.
fn env_read(facts: &mut Facts, call: tree_sitter::Node<'_>, function: &str, source: &[u8]) {
    if matches!(function, "os.Getenv" | "os.LookupEnv")
        && let Some(arg) = call.child_by_field_name("arguments").and_then(|a| {
            let mut cursor = a.walk();
            a.named_children(&mut cursor).next()
        })
        && matches!(
            arg.kind(),
            "interpreted_string_literal" | "raw_string_literal"
        )
    {
        facts.env.push(literal(arg, source));
    }
}

/// The lines of syntax errors anywhere in a Go file. `analyze` usually reads a file only up to
/// its first declaration (its imports are all there), so errors below are found only here:
/// for the changed files, whose rows say so.
pub(crate) fn parse_errors(source: &[u8]) -> Vec<u32> {
    let source = match super::facts::cut_point(source) {
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

/// The names a file binds to its own path: `_, file, _, _ := runtime.Caller(0)` (Go's
/// `__file__`) and `dir := filepath.Dir(file)`. Bindings are read in source order, before the
/// joins that use them.
#[derive(Default)]
struct Anchors {
    files: Vec<String>,
    dirs: Vec<String>,
    temps: Vec<String>,
}

impl Anchors {
    /// `a, file, _, _ := runtime.Caller(0)` or `dir := filepath.Dir(file)`.
    fn bind(&mut self, node: Node<'_>, source: &[u8]) {
        let (Some(left), Some(right)) = (
            node.child_by_field_name("left")
                .or_else(|| node.child_by_field_name("name")),
            node.child_by_field_name("right")
                .or_else(|| node.child_by_field_name("value")),
        ) else {
            return;
        };
        let mut cursor = left.walk();
        let names: Vec<String> = if left.kind() == "identifier" {
            vec![text(left, source)]
        } else {
            left.named_children(&mut cursor)
                .map(|n| text(n, source))
                .collect()
        };
        let mut cursor = right.walk();
        let Some(value) = (if right.kind() == "expression_list" {
            right.named_children(&mut cursor).next()
        } else {
            Some(right)
        }) else {
            return;
        };
        let call = text(value, source);
        if call.starts_with("runtime.Caller(") {
            self.files.extend(names.get(1).cloned());
        } else {
            match self.part(value, source).as_str() {
                "." => self.dirs.extend(names.first().cloned()),
                TEMP_DIR => self.temps.extend(names.first().cloned()),
                _ => {}
            }
        }
    }

    /// `filepath.Join("..", "configs", name)` → `../configs/*`;
    /// `path.Join(path.Dir(file), "../testdata")` → `./../testdata`.
    fn join(&self, call: Node<'_>, source: &[u8]) -> String {
        let mut parts = Vec::new();
        if let Some(args) = call.child_by_field_name("arguments") {
            let mut cursor = args.walk();
            for a in args.named_children(&mut cursor) {
                parts.push(self.part(a, source));
            }
        }
        parts.join("/")
    }

    /// One argument of a join: its literal, `.` for the file's folder, the file itself, or
    /// `*` for what is unknown.
    fn part(&self, node: Node<'_>, source: &[u8]) -> String {
        match node.kind() {
            "interpreted_string_literal" | "raw_string_literal" => literal(node, source),
            "identifier" => {
                let name = text(node, source);
                if self.files.contains(&name) {
                    THIS_FILE.to_string()
                } else if self.dirs.contains(&name) {
                    ".".to_string()
                } else if self.temps.contains(&name) {
                    TEMP_DIR.to_string()
                } else {
                    "*".to_string()
                }
            }
            "call_expression" => {
                let function = node
                    .child_by_field_name("function")
                    .map(|f| text(f, source))
                    .unwrap_or_default();
                let arg = node.child_by_field_name("arguments").and_then(|a| {
                    let mut cursor = a.walk();
                    a.named_children(&mut cursor).next()
                });
                let of_file = arg.is_some_and(|a| self.part(a, source) == THIS_FILE);
                let last = function.rsplit('.').next().unwrap_or(&function);
                if matches!(function.as_str(), "path.Dir" | "filepath.Dir") && of_file {
                    ".".to_string()
                } else if TEMP_CALLS.contains(&last) {
                    TEMP_DIR.to_string()
                } else {
                    "*".to_string()
                }
            }
            _ => "*".to_string(),
        }
    }
}

/// A join onto an unknown base (`filepath.Join(dir, "x.golden")` → `*/x.golden`) may name
/// that path under any folder: kept as a glob, `**/x.golden` or `**/testdata/cases`, never
/// dropped (only what exists in the tree becomes an edge). Joins onto a temporary folder never
/// reach here; a join whose first known part is a wildcard or `..` names nothing in particular.
fn push_join(facts: &mut Facts, line: u32, value: String) {
    let value = normalize_anchored(&value);
    let value = match value.strip_prefix("*/") {
        Some(rest) => {
            let rest = rest.trim_start_matches("*/");
            let file = rest
                .rsplit('/')
                .next()
                .is_some_and(|f| f.contains('.') && !f.starts_with('*') && !f.ends_with('.'));
            let specific = rest
                .split('/')
                .next()
                .is_some_and(|f| !f.is_empty() && !f.contains('*') && f != "..");
            if file || specific {
                format!("**/{rest}")
            } else {
                return;
            }
        }
        None => value,
    };
    push(facts, line, value, StringContext::PathArg);
}

/// Keeps a string that may name a file: not an option, not only dots and slashes (`".."` alone
/// would name the parent folder), not only wildcards (but `**/x` from a join onto an unknown
/// base).
fn push(facts: &mut Facts, line: u32, value: String, context: StringContext) {
    let value = normalize_anchored(&value);
    let keep = !value.is_empty()
        && (!value.starts_with('*') || value.starts_with("**/"))
        && value.len() <= 256
        && !value.starts_with('-')
        && value
            .chars()
            .all(|c| c.is_alphanumeric() || "._-/+@*?[]".contains(c))
        && value.chars().any(char::is_alphanumeric);
    if keep {
        facts.strings.push(StringRef {
            line,
            value,
            context,
        });
    }
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

/// A join anchored on the file (`__this_file__/../testdata`, `./../x`) as a path from the
/// package folder; other values unchanged.
fn normalize_anchored(value: &str) -> String {
    if !value.starts_with(THIS_FILE) && !value.starts_with("./..") {
        return value.to_string();
    }
    let mut parts: Vec<&str> = Vec::new();
    let mut ups = 0;
    for part in value.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.pop().is_none() => ups += 1,
            ".." => {}
            p => parts.push(p),
        }
    }
    let mut out: Vec<&str> = std::iter::repeat_n("..", ups).collect();
    out.extend(parts);
    out.join("/")
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

/// The value of a Go string literal (escapes other than `\\` and `\"` kept as written).
fn literal(node: Node<'_>, source: &[u8]) -> String {
    let t = text(node, source);
    let inner = t
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .or_else(|| t.strip_prefix('`').and_then(|s| s.strip_suffix('`')))
        .unwrap_or(&t);
    inner.replace("\\\\", "\\").replace("\\\"", "\"")
}

fn text(node: Node<'_>, source: &[u8]) -> String {
    node.utf8_text(source).unwrap_or_default().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_read_by_a_literal_name() {
        let src = "package x\n\nimport \"os\"\n\nfunc f(k string) {\n\t_ = os.Getenv(\"B\")\n\t_, _ = os.LookupEnv(`A`)\n\t_ = os.Getenv(k)\n}\n";
        assert_eq!(analyze(src.as_bytes()).env, ["A", "B"]);
    }

    #[test]
    fn paths_anchored_on_the_file_and_joins_onto_unknown_bases() {
        let src = "package x\n\nimport (\n\t\"path\"\n\t\"path/filepath\"\n\t\"runtime\"\n)\n\nfunc f(dir string) {\n\t_, file, _, _ := runtime.Caller(0)\n\tbase := filepath.Dir(file)\n\t_ = path.Join(path.Dir(file), \"../testdata\")\n\t_ = filepath.Join(base, \"golden\", \"a.txt\")\n\t_ = filepath.Join(file, \"..\", \"up.json\")\n\t_ = filepath.Join(dir, \"x.golden\")\n\t_ = filepath.Join(dir, \"src\")\n\ttmp := t.TempDir()\n\t_ = filepath.Join(tmp, \"out.txt\")\n\t_ = filepath.Join(os.TempDir(), \"gen\", \"a.json\")\n}\n";
        let f = analyze(src.as_bytes());
        let values: Vec<&str> = f.strings.iter().map(|s| s.value.as_str()).collect();
        for want in ["../testdata", "./golden/a.txt", "up.json", "**/x.golden"] {
            assert!(values.contains(&want), "{want}: {values:?}");
        }
        // A folder joined onto an unknown base is that folder anywhere; a join onto a
        // temporary folder is never a tree path.
        assert!(values.contains(&"**/src"), "{values:?}");
        assert!(
            !values
                .iter()
                .any(|v| v.contains("out.txt") || v.contains("a.json")),
            "{values:?}"
        );
        // Test code keeps fixture paths handed to any helper; other code does not.
        let test = "package x\n\nimport \"testing\"\n\nfunc TestT(t *testing.T) { load(t, \"_cases/table.txt\", \"a b\", \"name\") }\n";
        let values: Vec<String> = analyze(test.as_bytes())
            .strings
            .into_iter()
            .map(|s| s.value)
            .collect();
        assert_eq!(values, ["_cases/table.txt"]);
        let plain = test.replace("\"testing\"", "\"fmt\"");
        assert!(analyze(plain.as_bytes()).strings.is_empty());
    }

    #[test]
    fn package_imports_embeds_and_references() {
        let src = r#"package cart_test

import (
	"testing"
	m "example.com/shop/money"
	_ "embed"
)

import "os/exec"

//go:embed testdata/*.json "static files/x.txt"
var data string

func TestX(t *testing.T) {
	b, _ := os.ReadFile(filepath.Join("..", "..", "configs", "x.yaml"))
	exec.Command("go", "run", "./cmd/tool").Run()
	fmt.Println("not a path", b)
}
"#;
        let f = analyze(src.as_bytes());
        assert_eq!(f.package.as_deref(), Some("cart_test"));
        let imports: Vec<(u32, &str)> = f
            .imports
            .iter()
            .map(|i| (i.line, i.module.as_str()))
            .collect();
        assert_eq!(
            imports,
            [
                (4, "testing"),
                (5, "example.com/shop/money"),
                (6, "embed"),
                (9, "os/exec")
            ]
        );
        let strings: Vec<(&str, StringContext)> = f
            .strings
            .iter()
            .map(|s| (s.value.as_str(), s.context))
            .collect();
        for want in [
            ("testdata/*.json", StringContext::Embed),
            ("static files/x.txt", StringContext::Embed),
            ("../../configs/x.yaml", StringContext::PathArg),
            ("./cmd/tool", StringContext::Argv),
        ] {
            assert!(strings.contains(&want), "{want:?} in {strings:?}");
        }
        assert!(!strings.iter().any(|(s, _)| *s == "not a path"));
    }

    #[test]
    fn a_file_without_path_calls_is_read_up_to_its_first_declaration() {
        let src = "// Package p.\npackage p\n\nimport (\n\t\"fmt\"\n)\n\nimport \"strings\"\n\nfunc F() { fmt.Println(strings.ToUpper(\"x\")) }\n";
        assert!(header(src.as_bytes()).len() < src.len());
        let f = analyze(src.as_bytes());
        let imports: Vec<&str> = f.imports.iter().map(|i| i.module.as_str()).collect();
        assert_eq!(imports, ["fmt", "strings"]);
        assert!(f.parse_errors.is_empty());
        // An import after a declaration-looking line (here inside a comment) keeps it whole.
        let odd = "/*\nvar x\n*/\npackage p\n\nimport \"fmt\"\n\nfunc F() { fmt.Println() }\n";
        assert_eq!(header(odd.as_bytes()).len(), odd.len());
        assert_eq!(analyze(odd.as_bytes()).imports.len(), 1);
        // A file that reads files is parsed whole.
        let reads = "package p\n\nimport \"os\"\n\nfunc F() { os.ReadFile(\"data.json\") }\n";
        assert_eq!(header(reads.as_bytes()).len(), reads.len());
    }

    mod fuzz {
        use super::super::{analyze, parse_errors};
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(96))]
            #[test]
            fn random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
                prop_assert_eq!(analyze(&bytes), analyze(&bytes));
                let _ = parse_errors(&bytes);
            }

            #[test]
            fn deep_nesting(depth in 1usize..20_000, open in "[(\\[{]") {
                let close = match open.as_str() { "(" => ")", "[" => "]", _ => "}" };
                let src = format!(
                    "package p\n\nimport \"os\"\n\nvar x = os.ReadFile({}1{})\n",
                    open.repeat(depth),
                    close.repeat(depth)
                );
                let _ = analyze(src.as_bytes());
                let _ = parse_errors(src.as_bytes());
            }
        }
    }
}
