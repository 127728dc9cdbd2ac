//! Go source → facts, in one tree-sitter pass: the package clause, every import path with its
//! line, `//go:embed` patterns, and the string literals that name files (`os.ReadFile`,
//! `filepath.Join`, `template.ParseFiles`, …) or programs (`exec.Command` argv). Build tags and
//! GOOS/GOARCH suffixes are not evaluated: every file counts (conservative).

use super::facts::{Facts, Import, StringContext, StringRef};
use super::go_values::Values;
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

/// Calls that make a fresh temporary folder (`t.TempDir()`, `os.MkdirTemp(…)`): what is joined
/// onto it is outside the tree.
pub(super) const TEMP_CALLS: &[&str] = &["TempDir", "MkdirTemp"];
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
    if let Some(cut) = super::facts::cut_point(source) {
        facts.cut_at = Some(source[..cut].iter().filter(|&&b| b == b'\n').count() as u32 + 1);
        source = &source[..cut];
    }
    let tree = PARSER.with(|p| p.borrow_mut().parse(source, None));
    let Some(tree) = tree else {
        facts.parse_errors.push(1);
        return facts;
    };
    let values = Values::new(tree.root_node(), source);
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
            // The outermost `a + b`: a path built by concatenation.
            "binary_expression"
                if node
                    .child_by_field_name("operator")
                    .is_some_and(|o| o.kind() == "+")
                    && node
                        .parent()
                        .is_none_or(|p| p.kind() != "binary_expression") =>
            {
                values.emit(&mut facts, node, line, false);
            }
            "call_expression" => match call(&mut facts, &values, node, line, source) {
                Some(c) => child_context = c.unwrap_or(context),
                None => continue,
            },
            "interpreted_string_literal" | "raw_string_literal" => {
                let value = literal(node, source);
                if context != StringContext::Plain {
                    if context == StringContext::PathArg {
                        values.emit_literal(&mut facts, &value, line);
                    }
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

/// The facts of one call: an environment read, a path built whole (a join's parts are not
/// read again: `None`), or a reader whose literal arguments are paths (`Some(Some(context))`)
/// and whose other arguments are evaluated.
fn call<'t>(
    facts: &mut Facts,
    values: &Values<'t>,
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
        values.emit(facts, node, line, false);
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
            values.emit(facts, arg, line, true);
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

/// Keeps a string that may name a file: not an option, not only dots and slashes (`".."` alone
/// would name the parent folder), not only wildcards (but `**/x` from a join onto an unknown
/// base).
pub(super) fn push(facts: &mut Facts, line: u32, value: String, context: StringContext) {
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
pub(super) fn literal(node: Node<'_>, source: &[u8]) -> String {
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
        let src = "package x\n\nimport \"os\"\n\nfunc f(k string) {\n\t_ = os.Getenv(\"B\")\n\t_, _ = os.LookupEnv(`A`)\n\t_ = os.Getenv(k)\n\t_ = os.Environ()\n\t_ = os.ExpandEnv(\"$HOME/x\")\n}\n";
        let facts = analyze(src.as_bytes());
        assert_eq!(facts.env, ["A", "B"]);
        // A computed name, the whole environment: reads gate cannot name, by line.
        let lines: Vec<u32> = facts.env_any.iter().map(|(l, _)| *l).collect();
        assert_eq!(lines, [8, 9, 10], "{:?}", facts.env_any);
    }

    #[test]
    fn paths_anchored_on_the_file_and_joins_onto_unknown_bases() {
        let src = "package x\n\nimport (\n\t\"path\"\n\t\"path/filepath\"\n\t\"runtime\"\n)\n\nfunc f(dir string) {\n\t_, file, _, _ := runtime.Caller(0)\n\tbase := filepath.Dir(file)\n\t_ = path.Join(path.Dir(file), \"../testdata\")\n\t_ = filepath.Join(base, \"golden\", \"a.txt\")\n\t_ = filepath.Join(file, \"..\", \"up.json\")\n\t_ = filepath.Join(dir, \"x.golden\")\n\t_ = filepath.Join(dir, \"src\")\n\ttmp := t.TempDir()\n\t_ = filepath.Join(tmp, \"out.txt\")\n\t_ = filepath.Join(os.TempDir(), \"gen\", \"a.json\")\n}\n";
        let f = analyze(src.as_bytes());
        let paths: Vec<String> = f.paths.iter().map(|p| format!("{:?}", p.value)).collect();
        for want in [
            "FileDir(\"../testdata\")",
            "FileDir(\"golden/a.txt\")",
            "FileDir(\"up.json\")",
            // Joined onto an unknown base (a parameter): that path in any folder.
            "Relative(\"**/x.golden\")",
            "Relative(\"**/src\")",
        ] {
            assert!(paths.iter().any(|p| p == want), "{want}: {paths:?}");
        }
        // A join onto a temporary folder is never a tree path.
        assert!(
            !paths
                .iter()
                .any(|v| v.contains("out.txt") || v.contains("a.json")),
            "{paths:?}"
        );
        // Other spellings of the same anchors: a helper returning the folder, a package-level
        // `var (…)`, `Sprintf`, `+`, consts, loops over literal slices, `TrimSuffix`, another
        // package's helper (its `..` climb from a folder not known), `os.Getwd` in a test.
        let more = "package x\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"path/filepath\"\n\t\"runtime\"\n\t\"strings\"\n\t\"testing\"\n)\n\nvar (\n\t_, self, _, _ = runtime.Caller(0)\n\troot          = filepath.Dir(filepath.Dir(self))\n)\n\nconst name = \"c.json\"\n\nfunc here() string {\n\t_, f, _, _ := runtime.Caller(0)\n\treturn filepath.Dir(f)\n}\n\nfunc TestT(t *testing.T) {\n\t_, _ = os.ReadFile(fmt.Sprintf(\"%s/a.json\", here()))\n\t_, _ = os.ReadFile(root + \"/data/\" + name)\n\tfor _, n := range []string{\"d1.json\", \"d2.json\"} {\n\t\t_, _ = os.ReadFile(filepath.Join(here(), \"testdata\", n))\n\t}\n\t_, file, _, _ := runtime.Caller(0)\n\t_, _ = os.ReadFile(strings.TrimSuffix(file, \".go\") + \".golden\")\n\t_, _ = os.ReadFile(filepath.Join(testutil.Dir(), \"..\", \"shared\", \"e.json\"))\n\twd, _ := os.Getwd()\n\t_, _ = os.ReadFile(filepath.Join(wd, \"testdata\", \"w.json\"))\n}\n";
        let f = analyze(more.as_bytes());
        let paths: Vec<String> = f.paths.iter().map(|p| format!("{:?}", p.value)).collect();
        for want in [
            "FileDir(\"a.json\")",
            "FileDir(\"../data/c.json\")",
            "FileDir(\"testdata/d1.json\")",
            "FileDir(\"testdata/d2.json\")",
            "FileDir(\"*.golden\")",
            "Relative(\"**/shared/e.json\")",
        ] {
            assert!(paths.iter().any(|p| p == want), "{want}: {paths:?}");
        }
        let values: Vec<&str> = f.strings.iter().map(|s| s.value.as_str()).collect();
        assert!(values.contains(&"testdata/w.json"), "{values:?}");
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
