//! JavaScript and TypeScript source → facts, in one tree-sitter pass over the file's dialect
//! (`.ts`/`.mts`/`.cts` TypeScript, `.tsx` TSX, every JavaScript extension the JavaScript
//! grammar, which reads JSX): every form that loads a module — `import`, `export … from`,
//! `import type`, `require`, `require.resolve`, `import()`, `import.meta.glob`, the mock
//! functions of Vitest and Jest, triple-slash references, `import x = require()` — each as an
//! `Import` whose `names` holds its form (`facts::Import`); the path expressions of part 3's
//! table (`new URL(…, import.meta.url)`, `path.join(__dirname, …)`, `path.resolve`,
//! `fileURLToPath`, `import.meta.dirname`); string arguments of file and process calls; and
//! `process.env` reads. A load whose name gate cannot evaluate is never dropped: a template
//! with a literal folder is every module under it, anything else is a `dynamic_imports` entry
//! with no prefix (the `may_load` bound).

use crate::analyze::facts::{
    DynamicImport, Facts, Import, PathRef, StringContext, StringRef, cut_point,
};
use crate::analyze::paths::{PathValue, UNKNOWN};
use std::cell::RefCell;
use std::collections::BTreeMap;
use tree_sitter::{Node, Parser, Tree};

pub(crate) const GRAMMAR: &str = "tree-sitter-javascript 0.25, tree-sitter-typescript 0.23";

/// The grammar a file is read with, by its extension.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    JavaScript,
    TypeScript,
    Tsx,
}

impl Dialect {
    pub(crate) fn of(path: &str) -> Dialect {
        let ext = path.rsplit('.').next().unwrap_or_default();
        match ext {
            "ts" | "mts" | "cts" => Dialect::TypeScript,
            "tsx" => Dialect::Tsx,
            _ => Dialect::JavaScript,
        }
    }
}

thread_local! {
    static PARSERS: RefCell<[Parser; 3]> = RefCell::new([
        parser(tree_sitter_javascript::LANGUAGE.into()),
        parser(tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into()),
        parser(tree_sitter_typescript::LANGUAGE_TSX.into()),
    ]);
}

fn parser(language: tree_sitter::Language) -> Parser {
    let mut parser = Parser::new();
    parser
        .set_language(&language)
        .expect("the bundled JavaScript and TypeScript grammars match the tree-sitter ABI");
    parser
}

/// Calls whose string arguments name files: Node's `fs` (sync, callback and promise forms
/// share the names), and the snapshot file of Vitest's `toMatchFileSnapshot`.
const FILE_CALLS: &[&str] = &[
    "readFileSync",
    "readFile",
    "existsSync",
    "exists",
    "statSync",
    "stat",
    "lstatSync",
    "lstat",
    "accessSync",
    "access",
    "openSync",
    "open",
    "readdirSync",
    "readdir",
    "opendirSync",
    "opendir",
    "createReadStream",
    "readJsonSync",
    "readJson",
    "readJSON",
    "toMatchFileSnapshot",
    "loadFixture",
];

/// Calls that start a process: each string of their argv (an array, or a command line's
/// words) names what runs.
const PROCESS_CALLS: &[&str] = &[
    "spawn",
    "spawnSync",
    "execFile",
    "execFileSync",
    "exec",
    "execSync",
    "fork",
    "execa",
    "execaSync",
    "execaNode",
];

/// Vitest's and Jest's functions that load (or replace) a module by its specifier.
const MOCKS: &[&str] = &[
    "mock",
    "doMock",
    "unmock",
    "doUnmock",
    "importActual",
    "importMock",
    "requireActual",
    "requireMock",
    "createMockFromModule",
    "setMock",
];

/// The syntax tree of `source` in `dialect`.
pub(super) fn parse(dialect: Dialect, source: &[u8]) -> Option<Tree> {
    PARSERS.with(|p| {
        let mut parsers = p.borrow_mut();
        let at = match dialect {
            Dialect::JavaScript => 0,
            Dialect::TypeScript => 1,
            Dialect::Tsx => 2,
        };
        parsers[at].parse(source, None)
    })
}

/// The facts of a JavaScript or TypeScript file of dialect `dialect`.
pub(crate) fn analyze(dialect: Dialect, bytes: &[u8]) -> Facts {
    let cut = cut_point(bytes);
    let source = &bytes[..cut.unwrap_or(bytes.len())];
    let tree = parse(dialect, source);
    let mut facts = Facts::default();
    if let Some(tree) = tree {
        Walk {
            src: source,
            facts: &mut facts,
            bindings: BTreeMap::new(),
        }
        .run(&tree);
    }
    if cut.is_some() {
        facts.cut_at = Some(line_count(source) + 1);
    }
    facts.imports.sort();
    facts.imports.dedup();
    facts.strings.sort();
    facts.strings.dedup();
    facts.paths.sort();
    facts.paths.dedup();
    facts.env.sort();
    facts.env.dedup();
    facts
}

fn line_count(source: &[u8]) -> u32 {
    source.iter().filter(|&&b| b == b'\n').count() as u32
}

/// How deep an expression is evaluated: past it a value is unknown.
const MAX_DEPTH: usize = 24;

struct Walk<'s, 'f> {
    src: &'s [u8],
    facts: &'f mut Facts,
    /// `const NAME = <path expression>` → its value; `None` once a name is bound twice.
    bindings: BTreeMap<String, Option<PathValue>>,
}

impl Walk<'_, '_> {
    fn run(&mut self, tree: &Tree) {
        // Bindings first, so a use above its declaration (a function body) still reads it.
        let mut order = Vec::new();
        let mut cursor = tree.walk();
        'walk: loop {
            let node = cursor.node();
            order.push(node);
            if cursor.goto_first_child() {
                continue;
            }
            loop {
                if cursor.goto_next_sibling() {
                    continue 'walk;
                }
                if !cursor.goto_parent() {
                    break 'walk;
                }
            }
        }
        for node in &order {
            if node.kind() == "variable_declarator" {
                self.bind(*node);
            }
        }
        for node in order {
            self.visit(node);
        }
    }

    fn text(&self, node: Node<'_>) -> &str {
        std::str::from_utf8(&self.src[node.byte_range()]).unwrap_or_default()
    }

    fn line(node: Node<'_>) -> u32 {
        node.start_position().row as u32 + 1
    }

    fn bind(&mut self, node: Node<'_>) {
        let (Some(name), Some(value)) = (
            node.child_by_field_name("name"),
            node.child_by_field_name("value"),
        ) else {
            return;
        };
        if name.kind() != "identifier" {
            return;
        }
        let name = self.text(name).to_string();
        let value = self.value(value, 0);
        match self.bindings.get_mut(&name) {
            Some(slot) => *slot = None,
            None => {
                self.bindings.insert(name, value);
            }
        }
    }

    fn visit(&mut self, node: Node<'_>) {
        match node.kind() {
            "ERROR" => self.facts.parse_errors.push(Self::line(node)),
            _ if node.is_missing() => self.facts.parse_errors.push(Self::line(node)),
            "import_statement" | "export_statement" => self.statement(node),
            "import_require_clause" => {
                if let Some(source) = node.child_by_field_name("source") {
                    self.import(source, "require");
                }
            }
            "call_expression" => self.call(node),
            "new_expression" => self.new_url(node),
            "comment" => self.reference(node),
            "member_expression" | "subscript_expression" => self.env(node),
            "string" | "template_string" => self.plain(node),
            _ => {}
        }
    }

    /// `import … from "x"`, `import "x"`, `export … from "x"`, with `type` marked.
    fn statement(&mut self, node: Node<'_>) {
        let Some(source) = node.child_by_field_name("source") else {
            return;
        };
        let mut cursor = node.walk();
        let type_only = node
            .children(&mut cursor)
            .any(|c| !c.is_named() && c.kind() == "type");
        let form = match (node.kind(), type_only) {
            (_, true) => "type",
            ("import_statement", false) => "import",
            _ => "export",
        };
        self.import(source, form);
    }

    /// A load of the module `spec` names, when it is a literal; else its literal folder, or the
    /// unbounded bound.
    fn import(&mut self, spec: Node<'_>, form: &str) {
        let line = Self::line(spec);
        match self.literal(spec) {
            Some(module) => self.facts.imports.push(Import {
                line,
                level: 0,
                module,
                names: vec![form.to_string()],
            }),
            None => self.computed_import(spec, line),
        }
    }

    /// `import(`./locale/${l}.js`)`: every module under its literal folder; with no literal
    /// folder, any module (`may_load`).
    fn computed_import(&mut self, spec: Node<'_>, line: u32) {
        let text = self.text(spec).to_string();
        let prefix = match self.value(spec, 0) {
            Some(PathValue::Relative(p)) => p.split(UNKNOWN).next().unwrap_or_default().to_string(),
            _ => String::new(),
        };
        let folder = prefix.rsplit_once('/').map(|(dir, _)| format!("{dir}/"));
        match folder.filter(|f| f.starts_with("./") || f.starts_with("../")) {
            Some(folder) => self.facts.imports.push(Import {
                line,
                level: 0,
                module: folder,
                names: vec!["under".to_string()],
            }),
            None => self.facts.dynamic_imports.push(DynamicImport {
                line,
                prefix: String::new(),
                text,
                anchor: None,
                exact: false,
            }),
        }
    }

    fn call(&mut self, node: Node<'_>) {
        let Some(function) = node.child_by_field_name("function") else {
            return;
        };
        let args = node.child_by_field_name("arguments");
        let first = args.and_then(|a| a.named_child(0));
        let (object, name) = match function.kind() {
            "import" => ("", "import"),
            "identifier" => ("", self.text(function)),
            "member_expression" => {
                let object = function
                    .child_by_field_name("object")
                    .map_or("", |o| self.text(o));
                let property = function
                    .child_by_field_name("property")
                    .map_or("", |p| self.text(p));
                (object, property)
            }
            _ => return,
        };
        let (object, name) = (object.to_string(), name.to_string());
        match (object.as_str(), name.as_str()) {
            ("", "import" | "require") => {
                if let Some(spec) = first {
                    let form = if name == "import" {
                        "dynamic"
                    } else {
                        "require"
                    };
                    self.import(spec, form);
                }
            }
            ("require", "resolve") | ("import.meta", "resolve") => {
                if let Some(spec) = first {
                    self.import(spec, "resolve");
                }
            }
            ("vi" | "jest", m) if MOCKS.contains(&m) => {
                if let Some(spec) = first {
                    self.import(spec, "mock");
                }
            }
            ("import.meta", "glob" | "globEager") => {
                if let Some(first) = first {
                    self.glob(first);
                }
            }
            (_, f) if PROCESS_CALLS.contains(&f) => self.process(args),
            (_, f) if FILE_CALLS.contains(&f) => {
                if let Some(first) = first {
                    self.path_arg(first);
                }
            }
            _ => {}
        }
        if is_path_call(&object, &name) && !self.inside_path_call(node) {
            self.record_path(node);
        }
    }

    /// `import.meta.glob("./dir/*.ts")` or `(["./a/*.ts", "!./a/x.ts"])`: each pattern, relative
    /// to the file; a negation is left out (the positive patterns bound it from above).
    fn glob(&mut self, first: Node<'_>) {
        let patterns: Vec<Node<'_>> = if first.kind() == "array" {
            let mut cursor = first.walk();
            first.named_children(&mut cursor).collect()
        } else {
            vec![first]
        };
        for pattern in patterns {
            let line = Self::line(pattern);
            match self.literal(pattern) {
                Some(p) if p.starts_with('!') => {}
                Some(p) => self.facts.imports.push(Import {
                    line,
                    level: 0,
                    module: p,
                    names: vec!["glob".to_string()],
                }),
                None => self.computed_import(pattern, line),
            }
        }
    }

    /// A process's argv: each literal word names what it may run or read.
    fn process(&mut self, args: Option<Node<'_>>) {
        let Some(args) = args else { return };
        let mut cursor = args.walk();
        for arg in args.named_children(&mut cursor) {
            let words: Vec<(Node<'_>, String)> = match arg.kind() {
                "array" => {
                    let mut inner = arg.walk();
                    arg.named_children(&mut inner)
                        .filter_map(|w| self.literal(w).map(|t| (w, t)))
                        .collect()
                }
                "string" | "template_string" => self
                    .literal(arg)
                    .map(|t| {
                        crate::analyze::shell::words(&t)
                            .into_iter()
                            .map(|w| (arg, w))
                            .collect()
                    })
                    .unwrap_or_default(),
                _ => Vec::new(),
            };
            for (node, word) in words {
                self.facts.strings.push(StringRef {
                    line: Self::line(node),
                    value: word,
                    context: StringContext::Argv,
                });
            }
        }
    }

    /// A file call's argument: a literal path, or a path expression.
    fn path_arg(&mut self, arg: Node<'_>) {
        if let Some(value) = self.literal(arg) {
            self.facts.strings.push(StringRef {
                line: Self::line(arg),
                value,
                context: StringContext::PathArg,
            });
        } else if !matches!(arg.kind(), "call_expression" | "new_expression") {
            // A call is recorded as itself (`readFileSync(path.join(…))`).
            self.record_path(arg);
        }
    }

    /// A path expression's value, when it has one worth an edge.
    fn record_path(&mut self, node: Node<'_>) {
        let Some(value) = self.value(node, 0) else {
            return;
        };
        if matches!(&value, PathValue::Relative(p) if p.trim_matches(UNKNOWN).is_empty()) {
            return;
        }
        self.facts.paths.push(PathRef {
            line: Self::line(node),
            value: value.seal(),
            text: self.text(node).chars().take(200).collect(),
        });
    }

    /// `new URL("./x.json", import.meta.url)`: a file beside this one.
    fn new_url(&mut self, node: Node<'_>) {
        let constructor = node.child_by_field_name("constructor");
        if constructor.is_none_or(|c| self.text(c) != "URL") || self.inside_path_call(node) {
            return;
        }
        self.record_path(node);
    }

    /// `/// <reference path="./x.d.ts" />`: the file, relative to this one (`types=` names a
    /// package: external).
    fn reference(&mut self, node: Node<'_>) {
        let text = self.text(node);
        let Some(rest) = text.strip_prefix("///") else {
            return;
        };
        let rest = rest.trim();
        if !rest.starts_with("<reference") {
            return;
        }
        let Some(at) = rest.find("path=") else {
            return;
        };
        let value = rest[at + 5..].trim_start();
        let quote = value.chars().next().filter(|q| *q == '"' || *q == '\'');
        let Some(quote) = quote else { return };
        if let Some(end) = value[1..].find(quote) {
            let path = &value[1..1 + end];
            let module = if path.starts_with('.') {
                path.to_string()
            } else {
                format!("./{path}")
            };
            self.facts.imports.push(Import {
                line: Self::line(node),
                level: 0,
                module,
                names: vec!["reference".to_string()],
            });
        }
    }

    /// `process.env.X`, `process.env["X"]`: a variable by name; `process.env[k]` or the whole
    /// object (spread, passed on, iterated): any of them.
    fn env(&mut self, node: Node<'_>) {
        let Some(object) = node.child_by_field_name("object") else {
            return;
        };
        let object_text = self.text(object);
        let is_env = matches!(object_text, "process.env" | "import.meta.env");
        if is_env {
            let name = match node.kind() {
                "member_expression" => node
                    .child_by_field_name("property")
                    .map(|p| self.text(p).to_string()),
                _ => node
                    .child_by_field_name("index")
                    .and_then(|i| self.literal(i)),
            };
            match name {
                Some(name) => self.facts.env.push(name),
                None => self
                    .facts
                    .env_any
                    .push((Self::line(node), self.text(node).to_string())),
            }
            return;
        }
        // `process.env` itself, not read by one name: the whole environment.
        if node.kind() == "member_expression" && self.text(node) == "process.env" {
            let parent = node.parent();
            let named = parent.is_some_and(|p| {
                matches!(p.kind(), "member_expression" | "subscript_expression")
                    && p.child_by_field_name("object") == Some(node)
            });
            if !named {
                self.facts
                    .env_any
                    .push((Self::line(node), self.text(node).to_string()));
            }
        }
    }

    /// Any other string that looks like a path (a `/` or a file extension): resolved against
    /// the tree if it names a file of it. A string another reading took (a load's specifier,
    /// a file or process call's argument) is left to it.
    fn plain(&mut self, node: Node<'_>) {
        let parent = node.parent();
        if parent.is_some_and(|p| {
            matches!(
                p.kind(),
                "import_statement" | "export_statement" | "import_require_clause"
            )
        }) {
            return;
        }
        let call = parent
            .filter(|p| matches!(p.kind(), "arguments" | "array"))
            .and_then(|p| p.parent())
            .and_then(|p| {
                if p.kind() == "arguments" {
                    p.parent()
                } else {
                    Some(p)
                }
            })
            .filter(|c| c.kind() == "call_expression");
        if call.is_some_and(|c| !self.plain_call(c)) {
            return;
        }
        let Some(value) = self.literal(node) else {
            return;
        };
        let looks_like_path = value.len() < 300
            && !value.contains(['\n', ' '])
            && (value.contains('/') || has_extension(&value));
        if looks_like_path {
            self.facts.strings.push(StringRef {
                line: Self::line(node),
                value,
                context: StringContext::Plain,
            });
        }
    }

    /// Whether `node` is an argument of a call that builds a path (`path.join`, `new URL`,
    /// `fileURLToPath`, `dirname`): only the outermost such expression is recorded.
    fn inside_path_call(&self, node: Node<'_>) -> bool {
        let Some(call) = node
            .parent()
            .filter(|p| p.kind() == "arguments")
            .and_then(|a| a.parent())
        else {
            return false;
        };
        let callee = call
            .child_by_field_name("function")
            .or_else(|| call.child_by_field_name("constructor"));
        callee.is_some_and(|f| {
            let name = match f.kind() {
                "member_expression" => f
                    .child_by_field_name("property")
                    .map_or("", |p| self.text(p)),
                _ => self.text(f),
            };
            matches!(
                name,
                "join" | "resolve" | "dirname" | "fileURLToPath" | "URL"
            )
        })
    }

    /// Whether a call's string arguments are left to `plain` (no other reading took them).
    fn plain_call(&self, call: Node<'_>) -> bool {
        let Some(function) = call.child_by_field_name("function") else {
            return true;
        };
        let name = match function.kind() {
            "import" => return false,
            "identifier" => self.text(function),
            "member_expression" => function
                .child_by_field_name("property")
                .map_or("", |p| self.text(p)),
            _ => return true,
        };
        !(name == "require"
            || name == "resolve" && self.text(function) == "require.resolve"
            || MOCKS.contains(&name)
            || FILE_CALLS.contains(&name)
            || PROCESS_CALLS.contains(&name)
            || name == "glob" && self.text(function) == "import.meta.glob")
    }

    /// A string or a template with no substitution: its text.
    fn literal(&self, node: Node<'_>) -> Option<String> {
        match node.kind() {
            "string" => {
                let text = self.text(node);
                let inner = text.get(1..text.len().saturating_sub(1))?;
                Some(unescape(inner))
            }
            "template_string" => {
                let mut cursor = node.walk();
                if node
                    .named_children(&mut cursor)
                    .any(|c| c.kind() == "template_substitution")
                {
                    return None;
                }
                let text = self.text(node);
                Some(text.get(1..text.len().saturating_sub(1))?.to_string())
            }
            "parenthesized_expression" => self.literal(node.named_child(0)?),
            _ => None,
        }
    }

    /// A path expression's value: literals, templates (unknown parts as `UNKNOWN`),
    /// `__dirname`, `__filename`, `import.meta.dirname`/`filename`/`url`, bindings,
    /// `path.join`/`resolve`/`dirname`, `fileURLToPath`, `new URL(x, base)`, `+`,
    /// `process.cwd()`.
    fn value(&self, node: Node<'_>, depth: usize) -> Option<PathValue> {
        if depth > MAX_DEPTH {
            return None;
        }
        let next = depth + 1;
        match node.kind() {
            "string" => self.literal(node).map(PathValue::Relative),
            "template_string" => {
                let mut out = String::new();
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    match child.kind() {
                        "string_fragment" => out.push_str(self.text(child)),
                        "escape_sequence" => out.push_str(&unescape(self.text(child))),
                        _ => out.push(UNKNOWN),
                    }
                }
                Some(PathValue::Relative(out))
            }
            "parenthesized_expression" | "await_expression" => {
                self.value(node.named_child(0)?, next)
            }
            "as_expression" | "satisfies_expression" | "non_null_expression" => {
                self.value(node.named_child(0)?, next)
            }
            "identifier" => match self.text(node) {
                "__dirname" => Some(PathValue::FileDir(String::new())),
                "__filename" => Some(PathValue::File),
                name => self.bindings.get(name).cloned().flatten(),
            },
            "member_expression" => match self.text(node) {
                "import.meta.dirname" => Some(PathValue::FileDir(String::new())),
                "import.meta.filename" | "import.meta.url" => Some(PathValue::File),
                _ => {
                    let property = node.child_by_field_name("property")?;
                    let object = node.child_by_field_name("object")?;
                    match self.text(property) {
                        "pathname" | "href" => self.value(object, next),
                        _ => None,
                    }
                }
            },
            "binary_expression" => {
                let op = node.child_by_field_name("operator")?;
                if self.text(op) != "+" {
                    return None;
                }
                let left = self.value(node.child_by_field_name("left")?, next)?;
                let right = match self.value(node.child_by_field_name("right")?, next) {
                    Some(PathValue::Relative(r)) => r,
                    _ => UNKNOWN.to_string(),
                };
                left.concat(&right)
            }
            "new_expression" => {
                let constructor = node.child_by_field_name("constructor")?;
                if self.text(constructor) != "URL" {
                    return None;
                }
                let args = node.child_by_field_name("arguments")?;
                let spec = self.value(args.named_child(0)?, next)?;
                let base = args.named_child(1).and_then(|b| self.value(b, next));
                let PathValue::Relative(spec) = spec else {
                    return Some(spec);
                };
                match base? {
                    // `new URL("./x", import.meta.url)`: beside the file.
                    PathValue::File => PathValue::File.parent()?.join(&url_path(&spec)),
                    folder @ PathValue::FileDir(_) => folder.join(&url_path(&spec)),
                    _ => None,
                }
            }
            "call_expression" => self.call_value(node, next),
            _ => None,
        }
    }

    fn call_value(&self, node: Node<'_>, next: usize) -> Option<PathValue> {
        let function = node.child_by_field_name("function")?;
        let args = node.child_by_field_name("arguments")?;
        let name = match function.kind() {
            "identifier" => self.text(function),
            "member_expression" => function
                .child_by_field_name("property")
                .map_or("", |p| self.text(p)),
            _ => return None,
        };
        let mut cursor = args.walk();
        let values: Vec<Option<PathValue>> = args
            .named_children(&mut cursor)
            .map(|a| self.value(a, next))
            .collect();
        match name {
            "cwd" if self.text(function) == "process.cwd" => {
                Some(PathValue::Relative(String::new()))
            }
            "fileURLToPath" => values.into_iter().next().flatten(),
            "dirname" => values.into_iter().next().flatten()?.parent(),
            "join" | "resolve" => {
                let mut parts = values.into_iter();
                let mut value = parts.next().flatten()?;
                for part in parts {
                    let rest = match part {
                        Some(PathValue::Relative(r)) => r,
                        // An absolute or anchored part starts over (`resolve`), or is unknown.
                        Some(other) if name == "resolve" => {
                            value = other;
                            continue;
                        }
                        _ => UNKNOWN.to_string(),
                    };
                    value = value.join(rest.trim_start_matches("./"))?;
                }
                Some(value)
            }
            _ => None,
        }
    }
}

/// A URL's path as a file path: its query and fragment left off.
fn url_path(spec: &str) -> String {
    let end = spec.find(['?', '#']).unwrap_or(spec.len());
    spec[..end].trim_start_matches("./").to_string()
}

/// Whether `object.name(...)` builds a path: its outermost call is recorded.
fn is_path_call(object: &str, name: &str) -> bool {
    matches!(
        (object, name),
        (
            "path" | "path.posix" | "posix" | "node:path",
            "join" | "resolve"
        ) | ("", "join" | "resolve" | "fileURLToPath")
            | ("url", "fileURLToPath")
    )
}

fn has_extension(value: &str) -> bool {
    let name = value.rsplit('/').next().unwrap_or(value);
    name.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && (1..=5).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphanumeric())
            && ext.chars().any(|c| c.is_ascii_alphabetic())
    })
}

/// A string literal's escapes: the common ones; anything else kept as written.
fn unescape(text: &str) -> String {
    if !text.contains('\\') {
        return text.to_string();
    }
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(c) => out.push(c),
                    None => out.push(UNKNOWN),
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}
