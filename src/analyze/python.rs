//! Python source → facts, in one tree-sitter pass: every import (module level, in functions,
//! under `TYPE_CHECKING`, in both `try`/`except ImportError` branches), the string literals that
//! may name a module or a file (with where they stood: an import call, a subprocess argv, a path
//! argument, a pytest-bdd binding), path expressions built from `__file__`, package resources or
//! joins, dynamic imports, and the lines that create a Flask app. Meaning (which file a name
//! resolves to) is decided later, in `graph`, because it depends on the rest of the tree; facts
//! depend on the text alone, so they are cached by blob id.

use super::facts::{DynamicImport, Facts, Import, PathRef, StringContext, StringRef, cut_point};
use super::paths::{self, PathValue};
use super::shell;
use std::cell::RefCell;
use std::collections::BTreeMap;
use tree_sitter::{Node, Parser};

/// The grammar gate was built with; recorded in plans so a grammar bump invalidates caches.
pub const GRAMMAR: &str = "tree-sitter-python 0.25";

thread_local! {
    static PARSER: RefCell<Parser> = RefCell::new({
        let mut parser = Parser::new();
        parser
            .set_language(&tree_sitter_python::LANGUAGE.into())
            .expect("the bundled Python grammar matches the tree-sitter ABI");
        parser
    });
}

const IMPORT_FUNCTIONS: &[&str] = &["importlib.import_module", "import_module", "__import__"];

/// Calls that start a process: an argv list, or a command line for a shell.
const PROCESS_CALLS: &[&str] = &[
    "run",
    "call",
    "check_call",
    "check_output",
    "Popen",
    "getoutput",
    "getstatusoutput",
    "create_subprocess_exec",
    "create_subprocess_shell",
    "system",
    "popen",
    "execv",
    "execvp",
    "execl",
    "execlp",
    "spawnv",
    "spawnl",
    "invoke",
];
/// Calls whose string argument is always a shell command line.
const SHELL_CALLS: &[&str] = &[
    "os.system",
    "os.popen",
    "subprocess.getoutput",
    "subprocess.getstatusoutput",
    "asyncio.create_subprocess_shell",
    "create_subprocess_shell",
];
/// Calls whose string arguments are paths (so a bare `"templates"` may name a folder).
const PATH_CALLS: &[&str] = &[
    "open",
    "io.open",
    "codecs.open",
    "Path",
    "pathlib.Path",
    "PurePath",
    "FileSystemLoader",
    "jinja2.FileSystemLoader",
    "os.listdir",
    "os.scandir",
    "os.walk",
    "glob",
    "glob.glob",
    "glob.iglob",
    "iglob",
    "load_dotenv",
    "dotenv.load_dotenv",
    "send_from_directory",
    "StaticFiles",
    "Jinja2Templates",
    "shutil.copy",
    "shutil.copyfile",
    "shutil.copytree",
    "os.path.exists",
    "os.path.isfile",
    "os.path.isdir",
];
/// Keyword arguments whose value is a path (`template_folder="templates"`, `cwd=…`).
fn path_keyword(name: &str) -> bool {
    [
        "folder",
        "dir",
        "dirs",
        "directory",
        "path",
        "file",
        "filename",
        "root",
    ]
    .iter()
    .any(|s| name == *s || name.ends_with(&format!("_{s}")))
}

/// Per-file state of the one pass: module-level names bound to path expressions, and the
/// lines whose expressions were too deep to evaluate.
struct Pass<'s> {
    source: &'s [u8],
    facts: Facts,
    names: BTreeMap<String, PathValue>,
    too_deep: RefCell<Vec<u32>>,
    /// The end of the last expression found too deep to evaluate.
    skip_until: std::cell::Cell<usize>,
}

pub fn analyze(source: &[u8]) -> Facts {
    let Some(cut) = cut_point(source) else {
        return analyze_whole(source);
    };
    let mut facts = analyze_whole(&source[..cut]);
    let first = source[..cut].iter().filter(|&&b| b == b'\n').count() as u32 + 1;
    facts.cut_at = Some(first);
    facts.imports.extend(scan_imports(&source[cut..], first));
    facts.imports.sort();
    facts.imports.dedup();
    facts
}

/// The import statements of text not parsed, line by line (a statement continued in
/// parentheses or after `\\` is joined first), each parsed alone; `first` is its first line.
fn scan_imports(rest: &[u8], first: u32) -> Vec<Import> {
    let text = String::from_utf8_lossy(rest);
    let mut out = Vec::new();
    let mut lines = text.lines().zip(first..);
    while let Some((line, number)) = lines.next() {
        let trimmed = line.trim_start();
        if !(trimmed.starts_with("import ") || trimmed.starts_with("from ")) {
            continue;
        }
        let mut statement = trimmed.to_string();
        let open = |s: &str| s.matches('(').count() > s.matches(')').count() || s.ends_with('\\');
        while open(&statement) && statement.len() < 64 << 10 {
            let Some((more, _)) = lines.next() else { break };
            statement.push('\n');
            statement.push_str(more);
        }
        for mut import in analyze_whole(statement.as_bytes()).imports {
            import.line = number;
            out.push(import);
        }
    }
    out
}

fn analyze_whole(source: &[u8]) -> Facts {
    let tree = PARSER.with(|p| p.borrow_mut().parse(source, None));
    let Some(tree) = tree else {
        // The parser gives up only on cancellation or timeouts, neither of which gate sets.
        return Facts {
            parse_errors: vec![1],
            ..Facts::default()
        };
    };
    let mut pass = Pass {
        source,
        facts: Facts::default(),
        names: BTreeMap::new(),
        too_deep: RefCell::new(Vec::new()),
        skip_until: std::cell::Cell::new(0),
    };
    pass.walk(tree.root_node());
    pass.finish()
}

impl<'s> Pass<'s> {
    fn text(&self, node: Node<'_>) -> String {
        text(node, self.source)
    }

    /// Visits `root` in source order (an explicit stack: deeply nested files must not
    /// overflow).
    fn walk(&mut self, root: Node<'_>) {
        let mut stack: Vec<(Node<'_>, StringContext)> = vec![(root, StringContext::Plain)];
        while let Some((node, context)) = stack.pop() {
            let line = node.start_position().row as u32 + 1;
            if node.is_error() || node.is_missing() {
                self.facts.parse_errors.push(line);
            }
            let mut child_context = context;
            match node.kind() {
                "import_statement" => {
                    for name in node.children_by_field_name("name", &mut node.walk()) {
                        let dotted = if name.kind() == "aliased_import" {
                            name.child_by_field_name("name")
                        } else {
                            Some(name)
                        };
                        if let Some(dotted) = dotted {
                            let module = self.text(dotted);
                            self.facts.imports.push(Import {
                                line,
                                level: 0,
                                module,
                                names: Vec::new(),
                            });
                        }
                    }
                    continue;
                }
                "import_from_statement" => {
                    self.facts
                        .imports
                        .push(from_import(node, self.source, line));
                    continue;
                }
                "future_import_statement" => continue,
                "call" => self.call(node, line),
                "assignment" => {
                    let left = node.child_by_field_name("left");
                    if left.is_some_and(|l| self.text(l) == "pytest_plugins") {
                        child_context = StringContext::PytestPlugins;
                    }
                    if let (Some(left), Some(right)) = (left, node.child_by_field_name("right"))
                        && left.kind() == "identifier"
                        && let Some(value) = self.eval(right)
                    {
                        self.names.insert(self.text(left), value);
                    }
                }
                "keyword_argument"
                    if node
                        .child_by_field_name("name")
                        .is_some_and(|n| path_keyword(&self.text(n))) =>
                {
                    child_context = StringContext::PathArg;
                }
                "string" | "concatenated_string" => {
                    self.string(node, context, line);
                    continue;
                }
                _ => {}
            }
            // Names are not recorded where used: their value was recorded where it was bound.
            if matches!(
                node.kind(),
                "call" | "binary_operator" | "attribute" | "subscript"
            ) {
                self.path_expression(node, line);
            }
            let mut cursor = node.walk();
            let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
            let context_of = |c: &Node<'_>| {
                // Arguments of calls keep their own context (set in `call`); the callee's
                // own strings are plain.
                if c.kind() == "argument_list" {
                    self.argument_context(node).unwrap_or(child_context)
                } else {
                    child_context
                }
            };
            let pushed: Vec<(Node<'_>, StringContext)> =
                children.iter().rev().map(|c| (*c, context_of(c))).collect();
            stack.extend(pushed);
        }
    }

    /// The context for the strings among a call's arguments.
    fn argument_context(&self, call: Node<'_>) -> Option<StringContext> {
        let function = self.text(call.child_by_field_name("function")?);
        let last = function.rsplit('.').next().unwrap_or(&function);
        if PATH_CALLS.contains(&function.as_str()) || PATH_CALLS.contains(&last) {
            return Some(StringContext::PathArg);
        }
        if matches!(last, "scenarios" | "scenario") {
            return Some(StringContext::Feature);
        }
        if is_process_call(&function) {
            return Some(StringContext::Argv);
        }
        None
    }

    fn call(&mut self, node: Node<'_>, line: u32) {
        let Some(function) = node.child_by_field_name("function").map(|f| self.text(f)) else {
            return;
        };
        let args: Vec<Node<'_>> = node
            .child_by_field_name("arguments")
            .map(|a| {
                let mut cursor = a.walk();
                a.named_children(&mut cursor).collect()
            })
            .unwrap_or_default();
        let last = function.rsplit('.').next().unwrap_or(&function).to_string();
        if IMPORT_FUNCTIONS.contains(&function.as_str())
            && let Some(first) = args.first()
        {
            if first.kind() == "string" && !has_interpolation(*first) {
                self.push(
                    line,
                    string_value(*first, self.source),
                    StringContext::ImportCall,
                );
            } else if first.kind() != "keyword_argument" {
                let prefix = self.constant_prefix(*first);
                self.facts.dynamic_imports.push(DynamicImport {
                    line,
                    prefix,
                    text: one_line(&self.text(node)),
                });
            }
        }
        if (function == "Flask" || function == "flask.Flask")
            && args.first().is_some_and(|a| self.text(*a) == "__name__")
        {
            self.facts.apps.push(line);
        }
        if !is_process_call(&function) {
            return;
        }
        let shell_kw = args.iter().any(|a| {
            a.kind() == "keyword_argument" && self.text(*a).replace(' ', "") == "shell=True"
        });
        let Some(first) = args.first() else { return };
        match first.kind() {
            "list" | "tuple" => self.argv(*first, line),
            "string" | "concatenated_string"
                if shell_kw || SHELL_CALLS.contains(&function.as_str()) || last == "system" =>
            {
                let command = string_value(*first, self.source);
                self.shell(&command, line);
            }
            _ => {}
        }
    }

    /// An argv list: `-m X` names a module, `-c CODE` is Python (or shell, after `sh`/`bash`).
    fn argv(&mut self, list: Node<'_>, line: u32) {
        let mut cursor = list.walk();
        let items: Vec<Node<'_>> = list.named_children(&mut cursor).collect();
        let words: Vec<Option<String>> = items
            .iter()
            .map(|n| (n.kind() == "string").then(|| string_value(*n, self.source)))
            .collect();
        let program = words.first().cloned().flatten().unwrap_or_default();
        let shell_program = matches!(
            program.rsplit('/').next().unwrap_or(&program),
            "sh" | "bash" | "zsh" | "dash"
        );
        for (i, word) in words.iter().enumerate() {
            let (Some(prev), Some(word)) = (i.checked_sub(1).and_then(|p| words[p].as_ref()), word)
            else {
                continue;
            };
            match prev.as_str() {
                "-m" => self.push(line, word.clone(), StringContext::RunModule),
                "-c" if shell_program => self.shell(word, line),
                "-c" => self.python_code(word, line),
                _ => {}
            }
        }
    }

    /// Code given to `python -c`: its imports and strings are this file's, on the string's line.
    fn python_code(&mut self, code: &str, line: u32) {
        let inner = analyze(code.as_bytes());
        for mut import in inner.imports {
            import.line = line;
            self.facts.imports.push(import);
        }
        for mut s in inner.strings {
            s.line = line;
            self.facts.strings.push(s);
        }
    }

    /// A shell command line: its words may name scripts, files and `python -m` modules.
    fn shell(&mut self, command: &str, line: u32) {
        for word in shell::scan(command) {
            let context = if word.module {
                StringContext::RunModule
            } else {
                StringContext::Argv
            };
            self.push(line, word.value, context);
        }
    }

    fn string(&mut self, node: Node<'_>, context: StringContext, line: u32) {
        if has_interpolation(node) {
            // An f-string in a path position is a glob over what it can name.
            match self.eval(node) {
                Some(PathValue::Relative(glob))
                    if matches!(
                        context,
                        StringContext::PathArg | StringContext::Argv | StringContext::Feature
                    ) =>
                {
                    self.push(line, glob, context)
                }
                Some(value @ (PathValue::FileDir(_) | PathValue::Package { .. })) => {
                    let text = one_line(&self.text(node));
                    self.facts.paths.push(PathRef { line, value, text });
                }
                _ => {}
            }
            return;
        }
        let value = string_value(node, self.source);
        self.push(line, value, context);
    }

    /// Keeps a string that may name a module or a file; prose and docstrings are dropped so
    /// plans stay small.
    fn push(&mut self, line: u32, value: String, context: StringContext) {
        if context == StringContext::Argv && value.starts_with('-') {
            return; // an option, not a file
        }
        let bare_allowed = !matches!(context, StringContext::Plain);
        let looks_like_name = !value.is_empty()
            && value.len() <= 256
            && value
                .chars()
                .all(|c| c.is_alphanumeric() || "._-/:+@*?[]{},".contains(c))
            && (bare_allowed || value.contains('.') || value.contains('/'))
            // A glob must say something besides its wildcards (`f"{x}"` names nothing), and
            // only counts where a path is expected: `"*.md"` in a list is a pattern, not a read.
            && (!value.contains(['*', '?', '[', ']', '{', '}'])
                || (bare_allowed && value.chars().any(char::is_alphanumeric)));
        if looks_like_name {
            self.facts.strings.push(StringRef {
                line,
                value,
                context,
            });
        }
    }

    /// Records a path expression that is not a lone literal, where it is complete: its parent
    /// does not build on it (`Path(__file__).parent` inside `… / "data.json"` is not recorded,
    /// the whole join is).
    fn path_expression(&mut self, node: Node<'_>, line: u32) {
        let Some(value) = self.eval(node) else { return };
        if matches!(&value, PathValue::Relative(p) if !p.contains('/')) {
            return; // a lone word: the string itself was already recorded
        }
        if node.parent().is_some_and(|p| self.builds_on(p))
            || value.is_anchor()
            || !value.is_specific()
        {
            return;
        }
        let text = one_line(&self.text(node));
        self.facts.paths.push(PathRef { line, value, text });
    }

    /// True when `parent` is itself a path expression or an argument list of one.
    fn builds_on(&self, parent: Node<'_>) -> bool {
        let node = if parent.kind() == "argument_list" {
            match parent.parent() {
                Some(call) => call,
                None => return false,
            }
        } else {
            parent
        };
        matches!(
            node.kind(),
            "call" | "binary_operator" | "attribute" | "subscript"
        ) && self.eval(node).is_some()
    }

    /// The path `node` evaluates to. Once an expression proved too deep, nothing inside it is
    /// evaluated again: each of its thousands of sub-expressions would be as deep (the walk
    /// would cost the square of the file).
    fn eval(&self, node: Node<'_>) -> Option<PathValue> {
        if node.start_byte() < self.skip_until.get() {
            return None;
        }
        let (value, too_deep) = paths::eval(node, self.source, &self.names);
        if too_deep {
            self.too_deep
                .borrow_mut()
                .push(node.start_position().row as u32 + 1);
            self.skip_until.set(node.end_byte());
        }
        value
    }

    /// The literal start of a module name built at run time: `f"shop.plugins.{x}"`,
    /// `"shop.plugins." + x`, `"shop.plugins.%s" % x`, `"shop.plugins.{}".format(x)`. Walks
    /// down the left of the expression in a loop: a generated chain of thousands of `+` must
    /// not recurse.
    fn constant_prefix(&self, mut node: Node<'_>) -> String {
        let raw = loop {
            match node.kind() {
                "string" => {
                    let mut cursor = node.walk();
                    let mut out = String::new();
                    for part in node.named_children(&mut cursor) {
                        match part.kind() {
                            "string_content" => out.push_str(&self.text(part)),
                            "interpolation" => break,
                            _ => {}
                        }
                    }
                    break out;
                }
                "binary_operator" => match node.child_by_field_name("left") {
                    Some(left) => node = left,
                    None => break String::new(),
                },
                "call" => match node
                    .child_by_field_name("function")
                    .and_then(|f| f.child_by_field_name("object"))
                    .filter(|o| o.kind() == "string")
                {
                    Some(object) => node = object,
                    None => break String::new(),
                },
                _ => break String::new(),
            }
        };
        let cut = raw.find(['%', '{']).unwrap_or(raw.len());
        raw[..cut].to_string()
    }

    fn finish(mut self) -> Facts {
        let facts = &mut self.facts;
        facts.too_deep = std::mem::take(self.too_deep.get_mut());
        facts.too_deep.sort_unstable();
        facts.too_deep.dedup();
        facts.imports.sort();
        facts.imports.dedup();
        // A string given to an import function was also met as a plain string; keep the
        // strongest context per line and value.
        facts.strings.sort_by(|a, b| {
            (a.line, &a.value, std::cmp::Reverse(a.context)).cmp(&(
                b.line,
                &b.value,
                std::cmp::Reverse(b.context),
            ))
        });
        facts
            .strings
            .dedup_by(|later, first| later.line == first.line && later.value == first.value);
        facts.strings.sort();
        facts.paths.sort();
        facts.paths.dedup();
        facts.dynamic_imports.sort();
        facts.dynamic_imports.dedup();
        facts.apps.sort_unstable();
        facts.apps.dedup();
        facts.parse_errors.sort_unstable();
        facts.parse_errors.dedup();
        self.facts
    }
}

fn is_process_call(function: &str) -> bool {
    let last = function.rsplit('.').next().unwrap_or(function);
    if !PROCESS_CALLS.contains(&last) {
        return false;
    }
    // A bare `run(...)`/`call(...)` is too common a name; those count only when qualified.
    let module = function.rsplit_once('.').map(|(m, _)| m).unwrap_or("");
    matches!(
        module,
        "subprocess" | "os" | "asyncio" | "sp" | "commands" | "pexpect"
    ) || matches!(last, "Popen" | "check_output" | "check_call")
        || (module.is_empty() && matches!(last, "system"))
        || module.ends_with(".subprocess")
}

fn has_interpolation(node: Node<'_>) -> bool {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .any(|c| c.kind() == "interpolation" || (c.kind() == "string" && has_interpolation(c)))
}

/// The literal value of a string or concatenated string (interpolations left out).
pub(super) fn string_value(node: Node<'_>, source: &[u8]) -> String {
    let mut out = String::new();
    let mut cursor = node.walk();
    for part in node.named_children(&mut cursor) {
        match part.kind() {
            "string_content" => out.push_str(&text(part, source)),
            "string" => out.push_str(&string_value(part, source)),
            _ => {}
        }
    }
    out
}

fn one_line(s: &str) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > 120 {
        format!("{}…", flat.chars().take(119).collect::<String>())
    } else {
        flat
    }
}

fn from_import(node: Node<'_>, source: &[u8], line: u32) -> Import {
    let (mut level, mut module) = (0, String::new());
    if let Some(m) = node.child_by_field_name("module_name") {
        if m.kind() == "relative_import" {
            let mut cursor = m.walk();
            for part in m.named_children(&mut cursor) {
                match part.kind() {
                    "import_prefix" => level = text(part, source).matches('.').count() as u32,
                    _ => module = text(part, source),
                }
            }
        } else {
            module = text(m, source);
        }
    }
    let mut names: Vec<String> = node
        .children_by_field_name("name", &mut node.walk())
        .filter_map(|n| {
            if n.kind() == "aliased_import" {
                n.child_by_field_name("name")
            } else {
                Some(n)
            }
        })
        .map(|n| text(n, source))
        .collect();
    let mut cursor = node.walk();
    if node
        .named_children(&mut cursor)
        .any(|c| c.kind() == "wildcard_import")
    {
        names.push("*".to_string());
    }
    Import {
        line,
        level,
        module,
        names,
    }
}

pub(super) fn text(node: Node<'_>, source: &[u8]) -> String {
    node.utf8_text(source).unwrap_or_default().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn imports(src: &str) -> Vec<(u32, u32, String, Vec<String>)> {
        analyze(src.as_bytes())
            .imports
            .into_iter()
            .map(|i| (i.line, i.level, i.module, i.names))
            .collect()
    }

    #[test]
    fn every_import_form() {
        let src = "import a.b.c\nimport a.b as x, d\nfrom e.f import g, h as i\nfrom .. import j\nfrom .k import *\n\
                   def f():\n    import l\nif TYPE_CHECKING:\n    import m\ntry:\n    import n\nexcept ImportError:\n    import o\n\
                   from __future__ import annotations\n";
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            imports(src),
            vec![
                (1, 0, "a.b.c".into(), vec![]),
                (2, 0, "a.b".into(), vec![]),
                (2, 0, "d".into(), vec![]),
                (3, 0, "e.f".into(), s(&["g", "h"])),
                (4, 2, "".into(), s(&["j"])),
                (5, 1, "k".into(), s(&["*"])),
                (7, 0, "l".into(), vec![]),
                (9, 0, "m".into(), vec![]),
                (11, 0, "n".into(), vec![]),
                (13, 0, "o".into(), vec![]),
            ]
        );
    }

    #[test]
    fn strings_that_may_name_modules_or_files() {
        let src = "importlib.import_module('plugins')\n__import__(\"x.y\")\npytest_plugins = ['fix']\n\
                   patch('shop.cart.total')\nopen('data/prices.json')\n\"\"\"A docstring, with words.\"\"\"\nf'{a}.b'\nname = 'plain'\n";
        let got: Vec<(u32, String, StringContext)> = analyze(src.as_bytes())
            .strings
            .into_iter()
            .map(|s| (s.line, s.value, s.context))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, "plugins".into(), StringContext::ImportCall),
                (2, "x.y".into(), StringContext::ImportCall),
                (3, "fix".into(), StringContext::PytestPlugins),
                (4, "shop.cart.total".into(), StringContext::Plain),
                (5, "data/prices.json".into(), StringContext::PathArg),
            ]
        );
    }

    fn paths(src: &str) -> Vec<(u32, PathValue)> {
        analyze(src.as_bytes())
            .paths
            .into_iter()
            .map(|p| (p.line, p.value))
            .collect()
    }

    #[test]
    fn path_expressions_from_file_joins_constants_and_resources() {
        let src = "import os\nfrom pathlib import Path\nHERE = Path(__file__).parent\nROOT = HERE.parent\n\
                   DATA = ROOT / 'data' / 'prices.json'\nT = os.path.join(os.path.dirname(__file__), 'templates')\n\
                   R = importlib.resources.files('shop') / 'rates.json'\nB = pkgutil.get_data('shop', 'x/y.bin')\n\
                   J = os.path.join('tests', 'data', 'a.json')\nF = open(f'{HERE}/cases/{name}.txt')\n\
                   U = Path(__file__).parents[1] / 'conf'\nW = Path(__file__).with_name('sibling.json')\n";
        let fd = |p: &str| PathValue::FileDir(p.into());
        let pkg = |p: &str, q: &str| PathValue::Package {
            package: p.into(),
            path: q.into(),
        };
        assert_eq!(
            paths(src),
            vec![
                (5, fd("../data/prices.json")),
                (6, fd("templates")),
                (7, pkg("shop", "rates.json")),
                (8, pkg("shop", "x/y.bin")),
                (9, PathValue::Relative("tests/data/a.json".into())),
                (10, fd("/cases/*.txt")),
                (11, fd("../conf")),
                (12, fd("sibling.json")),
            ],
            "anchors (HERE, ROOT) are not references"
        );
    }

    /// A join onto an absolute or home path leaves the repository: it names nothing, even
    /// where the tree holds a file of that name below the anchor.
    #[test]
    fn joins_onto_absolute_paths_name_nothing() {
        let src = "from pathlib import Path\nA = Path(__file__).parent / '/etc/passwd'\nB = Path(__file__).parent / '~/x.json'\nC = Path(__file__).parent / 'x.json'\n";
        assert_eq!(paths(src), vec![(4, PathValue::FileDir("x.json".into()))]);
    }

    /// A bare `system(...)` (`from os import system`) and a call through a module's own
    /// `subprocess` are processes too.
    #[test]
    fn bare_system_and_qualified_subprocess_calls_run_what_they_name() {
        let src = "from os import system\nsystem('sh tools/gen.sh')\nlib.subprocess.run(['bash', 'scripts/y.sh'])\n";
        let got = strings(src);
        for want in [
            ("tools/gen.sh", StringContext::Argv),
            ("scripts/y.sh", StringContext::Argv),
        ] {
            assert!(
                got.contains(&(want.0.to_string(), want.1)),
                "{want:?} in {got:?}"
            );
        }
    }

    #[test]
    fn django_settings_paths() {
        let src = "from pathlib import Path\nimport os\nBASE_DIR = Path(__file__).resolve().parent.parent\n\
                   TEMPLATES = [{'DIRS': [BASE_DIR / 'templates']}]\nSTATICFILES_DIRS = [os.path.join(BASE_DIR, 'static')]\n";
        assert_eq!(
            paths(src),
            vec![
                (4, PathValue::FileDir("../templates".into())),
                (5, PathValue::FileDir("../static".into())),
            ]
        );
    }

    fn strings(src: &str) -> Vec<(String, StringContext)> {
        analyze(src.as_bytes())
            .strings
            .into_iter()
            .map(|s| (s.value, s.context))
            .collect()
    }

    #[test]
    fn subprocess_argv_python_c_and_shell_strings() {
        let src = "subprocess.run(['bash', 'scripts/x.sh'])\nsubprocess.run([sys.executable, '-m', 'cli'])\n\
                   subprocess.check_call([sys.executable, '-c', 'import shop.cli; shop.cli.main()'])\n\
                   subprocess.run(['mypy', 'src'])\nos.system('sh tools/gen.sh --fast')\n\
                   subprocess.run(['sh', '-c', 'python -m shop.tool && cat data/x.txt'])\n";
        let f = analyze(src.as_bytes());
        assert!(
            f.imports
                .iter()
                .any(|i| i.module == "shop.cli" && i.line == 3),
            "{:?}",
            f.imports
        );
        let got = strings(src);
        for want in [
            ("scripts/x.sh", StringContext::Argv),
            ("cli", StringContext::RunModule),
            ("src", StringContext::Argv),
            ("tools/gen.sh", StringContext::Argv),
            ("shop.tool", StringContext::RunModule),
            ("data/x.txt", StringContext::Argv),
        ] {
            assert!(
                got.contains(&(want.0.to_string(), want.1)),
                "{want:?} in {got:?}"
            );
        }
    }

    #[test]
    fn dynamic_imports_keep_their_constant_prefix_or_none() {
        let src = "importlib.import_module(f'shop.plugins.{name}')\nimport_module('shop.ext.' + name)\n\
                   __import__(name)\nimport_module('shop.fmt_%s' % kind)\nimport_module('fixed.name')\n";
        let got: Vec<(u32, String)> = analyze(src.as_bytes())
            .dynamic_imports
            .into_iter()
            .map(|d| (d.line, d.prefix))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, "shop.plugins.".into()),
                (2, "shop.ext.".into()),
                (3, String::new()),
                (4, "shop.fmt_".into())
            ]
        );
    }

    #[test]
    fn flask_apps_and_bdd_bindings() {
        let src = "app = Flask(__name__)\nscenarios('features/cart.feature')\n@scenario('pay.feature', 'Pay')\ndef test_pay(): pass\n\
                   bp = Blueprint('x', __name__, template_folder='templates')\n";
        let f = analyze(src.as_bytes());
        assert_eq!(f.apps, vec![1]);
        let got = strings(src);
        assert!(
            got.contains(&("features/cart.feature".into(), StringContext::Feature)),
            "{got:?}"
        );
        assert!(
            got.contains(&("pay.feature".into(), StringContext::Feature)),
            "{got:?}"
        );
        assert!(
            got.contains(&("templates".into(), StringContext::PathArg)),
            "{got:?}"
        );
    }

    #[test]
    fn near_misses_make_no_reference() {
        let src = "# open('data/prices.json')\nx = 'just words here'\nrun(['bash', 'x.sh'])\nimport_module\n";
        let f = analyze(src.as_bytes());
        assert!(
            f.strings.iter().all(|s| s.value != "data/prices.json"),
            "{:?}",
            f.strings
        );
        assert!(
            f.strings.iter().all(|s| s.context != StringContext::Argv),
            "an unqualified run() is not a subprocess: {:?}",
            f.strings
        );
        assert!(f.dynamic_imports.is_empty() && f.paths.is_empty());
    }

    #[test]
    fn broken_file_keeps_what_was_recovered() {
        let facts = analyze(b"import good\ndef broken(:\n    pass\nfrom also import kept\n");
        assert!(!facts.parse_errors.is_empty());
        let modules: Vec<&str> = facts.imports.iter().map(|i| i.module.as_str()).collect();
        assert!(modules.contains(&"good"), "{modules:?}");
    }

    /// Random bytes, and random deep nestings of Python's bracketing forms, never panic or
    /// overflow the stack, and the same bytes give the same facts.
    mod fuzz {
        use super::super::analyze;
        use proptest::prelude::*;

        fn nesting() -> impl Strategy<Value = String> {
            let open = prop::sample::select(vec![
                "(",
                "[",
                "{",
                "f'{",
                "not ",
                "-",
                "lambda: ",
                "x[",
                "os.path.join(",
                "Path(",
                "'a' + ",
                "import_module(",
            ]);
            (prop::collection::vec(open, 1..64), 1usize..400).prop_map(|(parts, times)| {
                let mut s = String::from("X = ");
                for _ in 0..times {
                    for p in &parts {
                        s.push_str(p);
                    }
                }
                s.push_str("__file__\n");
                s
            })
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(96))]
            #[test]
            fn random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
                prop_assert_eq!(analyze(&bytes), analyze(&bytes));
            }

            #[test]
            fn deep_nesting(src in nesting()) {
                let _ = analyze(src.as_bytes());
            }

            #[test]
            fn python_shaped_noise(src in "[a-z_().\\[\\]{}'\"+/,:= \n#fimport]{0,3000}") {
                let _ = analyze(src.as_bytes());
            }
        }
    }
}
