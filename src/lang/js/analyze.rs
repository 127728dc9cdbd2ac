//! JavaScript and TypeScript source → facts, in one tree-sitter pass over the file's dialect
//! (`.ts`/`.mts`/`.cts` TypeScript, `.tsx` TSX, every JavaScript extension the JavaScript
//! grammar, which reads JSX): every form that loads a module — `import`, `export … from`,
//! `import type`, `require` (and one `createRequire` makes), `require.resolve`,
//! `import.meta.resolve`, `import()`, `import.meta.glob`, the mock functions of Vitest and
//! Jest, triple-slash references, `import x = require()` — each as an `Import` whose `names`
//! holds its form (`facts::Import`); path expressions (`new URL(…, import.meta.url)`,
//! `path.join(__dirname, …)`, `path.resolve`, `fileURLToPath`, `import.meta.dirname`, `+` and
//! templates on them, names bound to them: `value`); string arguments of file and process
//! calls; and `process.env` reads. Node's modules and functions are known under any name the
//! file gives them (`names`), and a name bound more than once is never trusted. A load whose
//! name gate cannot evaluate is never dropped: a template with a literal folder is every
//! module under it, anything else is a `dynamic_imports` entry with no prefix (the `may_load`
//! bound).

mod environ;
mod names;
mod reads;
#[cfg(test)]
mod tests;
mod value;

use crate::analyze::facts::{DynamicImport, Facts, Import, cut_point};
use crate::analyze::paths::{PathValue, UNKNOWN};
use std::cell::RefCell;
use std::collections::BTreeMap;
use tree_sitter::{Node, Parser, Tree};

/// The grammars, and the revision of what is read with them: part of the facts cache's key.
pub(crate) const GRAMMAR: &str =
    "tree-sitter-javascript 0.25, tree-sitter-typescript 0.23; js facts 2";

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
    "copyFileSync",
    "copyFile",
    "cpSync",
    "cp",
    "realpathSync",
    "realpath",
    "readlinkSync",
    "readlink",
    "watch",
    "watchFile",
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

/// The facts of a JavaScript or TypeScript file of dialect `dialect`. Past `MAX_PARSED` bytes
/// it is parsed up to the last line that fits and only scanned for loads after that.
pub(crate) fn analyze(dialect: Dialect, bytes: &[u8]) -> Facts {
    let cut = cut_point(bytes);
    let source = &bytes[..cut.unwrap_or(bytes.len())];
    let mut facts = walk(dialect, source);
    if let Some(cut) = cut {
        let first = line_count(source) + 1;
        facts.cut_at = Some(first);
        scan_loads(dialect, &bytes[cut..], first, &mut facts);
    }
    facts.imports.sort();
    facts.imports.dedup();
    facts.strings.sort();
    facts.strings.dedup();
    facts.paths.sort();
    facts.paths.dedup();
    facts.env.sort();
    facts.env.dedup();
    facts.too_deep.sort();
    facts.too_deep.dedup();
    facts
}

fn walk(dialect: Dialect, source: &[u8]) -> Facts {
    let mut facts = Facts::default();
    if let Some(tree) = parse(dialect, source) {
        let mut walk = Walk {
            src: source,
            facts: &mut facts,
            names: names::Names::default(),
            bindings: BTreeMap::new(),
            too_deep: RefCell::new(Vec::new()),
        };
        walk.run(&tree);
        let deep = walk.too_deep.into_inner();
        facts.too_deep.extend(deep);
    }
    facts
}

/// The loads of text past the cut, line by line: a line that starts an `import` or `export`
/// statement (joined with the lines after it up to its specifier's quote) or that calls
/// `require(` or `import(`, each read alone; `first` is its first line.
fn scan_loads(dialect: Dialect, rest: &[u8], first: u32, facts: &mut Facts) {
    let text = String::from_utf8_lossy(rest);
    let mut lines = text.lines().zip(first..);
    while let Some((line, number)) = lines.next() {
        let trimmed = line.trim_start();
        let statement = trimmed.starts_with("import") || trimmed.starts_with("export");
        if !(statement || line.contains("require(") || line.contains("import(")) {
            continue;
        }
        let mut text = line.to_string();
        let quoted = |s: &str| s.contains(['"', '\'', '`']);
        while statement && !quoted(&text) && text.len() < 64 << 10 {
            let Some((more, _)) = lines.next() else { break };
            text.push('\n');
            text.push_str(more);
        }
        let found = walk(dialect, text.as_bytes());
        for mut import in found.imports {
            import.line = number;
            facts.imports.push(import);
        }
        for mut dynamic in found.dynamic_imports {
            dynamic.line = number;
            facts.dynamic_imports.push(dynamic);
        }
    }
}

fn line_count(source: &[u8]) -> u32 {
    source.iter().filter(|&&b| b == b'\n').count() as u32
}

/// How deep an expression is evaluated: past it a value is unknown, and the line flagged.
const MAX_DEPTH: usize = 24;

struct Walk<'s, 'f> {
    src: &'s [u8],
    facts: &'f mut Facts,
    names: names::Names,
    /// A name bound once to a path expression → its value.
    bindings: BTreeMap<String, Option<PathValue>>,
    /// Lines of expressions nested deeper than `MAX_DEPTH`.
    too_deep: RefCell<Vec<u32>>,
}

/// The nodes of a tree, in document order.
fn preorder(tree: &Tree) -> Vec<Node<'_>> {
    let mut order = Vec::new();
    let mut cursor = tree.walk();
    'walk: loop {
        order.push(cursor.node());
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
    order
}

/// Whether a node stands in a TypeScript type (`typeof import("./x")`, `let v:
/// import("./x").T`): erased at run time.
fn in_type(node: Node<'_>) -> bool {
    let mut up = node.parent();
    while let Some(n) = up {
        let kind = n.kind();
        if kind.starts_with("type_") || kind.ends_with("_type") || kind == "interface_declaration" {
            return true;
        }
        up = n.parent();
    }
    false
}

/// A node's named children other than comments: a call's arguments, an array's items.
fn items(node: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .filter(|c| c.kind() != "comment")
        .collect()
}

fn item(node: Node<'_>, at: usize) -> Option<Node<'_>> {
    items(node).into_iter().nth(at)
}

impl Walk<'_, '_> {
    fn run(&mut self, tree: &Tree) {
        let order = preorder(tree);
        // Names first: how often each is bound, which stand for Node's modules and functions,
        // and the paths bound to names bound once — so a use above its declaration (a
        // function body) still reads them.
        for node in &order {
            self.names.count(*node, self.src);
        }
        for node in &order {
            match node.kind() {
                "import_statement" => self.import_names(*node),
                "variable_declarator" => self.declared_names(*node),
                _ => {}
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

    /// `const NAME = <path expression>`, when `NAME` is bound nowhere else.
    fn bind(&mut self, node: Node<'_>) {
        let (Some(name), Some(value)) = (
            node.child_by_field_name("name"),
            node.child_by_field_name("value"),
        ) else {
            return;
        };
        let name = self.text(name).to_string();
        if !self.names.once(&name) {
            return;
        }
        let value = self.value(value, 0);
        self.bindings.insert(name, value);
    }

    fn visit(&mut self, node: Node<'_>) {
        match node.kind() {
            // `export type * from "x"` (TypeScript 5): a syntax the grammar predates, read.
            "ERROR" if self.type_star(node) => {}
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
            "variable_declarator" => self.env_pattern(node),
            "binary_expression" => {
                self.env_in(node);
                self.anchored(node);
            }
            "template_string" => {
                self.plain(node);
                self.anchored(node);
            }
            "string" => self.plain(node),
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
            .any(|c| !c.is_named() && c.kind() == "type" || self.type_star(c));
        let form = match (node.kind(), type_only) {
            (_, true) => "type",
            ("import_statement", false) => "import",
            _ => "export",
        };
        self.import(source, form);
    }

    /// The `type` of `export type * from "x"`, which tree-sitter-typescript 0.23 reads as an
    /// error inside the export.
    fn type_star(&self, node: Node<'_>) -> bool {
        node.kind() == "ERROR"
            && self.text(node).trim() == "type"
            && node
                .parent()
                .is_some_and(|p| p.kind() == "export_statement")
            && node
                .next_sibling()
                .is_some_and(|n| n.kind() == "*" || n.kind() == "namespace_export")
    }

    /// A load of the module `spec` names, when it is a literal; else what its value says.
    fn import(&mut self, spec: Node<'_>, form: &str) {
        let line = Self::line(spec);
        match self.literal(spec) {
            Some(module) => self.push_import(line, module, form),
            None => self.computed_import(spec, line, form),
        }
    }

    fn push_import(&mut self, line: u32, module: String, form: &str) {
        self.facts.imports.push(Import {
            line,
            level: 0,
            module,
            names: vec![form.to_string()],
        });
    }

    /// A specifier gate evaluates: whole (a name bound once to a literal, `new URL("./x.js",
    /// import.meta.url)`, `path.join(__dirname, "x.js")`), it is that module; with a literal
    /// folder (`` `./locale/${l}.js` ``), every module under the folder; with none, any module
    /// (`may_load`).
    fn computed_import(&mut self, spec: Node<'_>, line: u32, form: &str) {
        let text = self.text(spec).to_string();
        let (path, relative) = match self.value(spec, 0) {
            Some(PathValue::Relative(p)) => (p, true),
            Some(PathValue::FileDir(p)) => (format!("./{p}"), false),
            _ => (String::new(), true),
        };
        let known = !path.is_empty()
            && !path.contains(UNKNOWN)
            && !path.contains(crate::analyze::paths::ALTERNATIVES);
        if known && (relative || !path.ends_with('/')) {
            self.push_import(line, path, form);
            return;
        }
        let prefix = path.split(UNKNOWN).next().unwrap_or_default();
        let folder = prefix.rsplit_once('/').map(|(dir, _)| format!("{dir}/"));
        match folder.filter(|f| f.starts_with("./") || f.starts_with("../")) {
            Some(folder) if !folder.contains(crate::analyze::paths::ALTERNATIVES) => {
                self.push_import(line, folder, "under");
            }
            _ => self.facts.dynamic_imports.push(DynamicImport {
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
        let first = args.and_then(|a| item(a, 0));
        let (object, name) = self.callee(function);
        match (object.as_str(), name.as_str()) {
            ("", "import" | "require") => {
                if let Some(spec) = first {
                    let form = match name.as_str() {
                        "import" if in_type(node) => "type",
                        "import" => "dynamic",
                        _ => "require",
                    };
                    self.import(spec, form);
                }
            }
            ("require" | "import.meta", "resolve") => {
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
        if value::is_path_call(&object, &name) && !self.inside_path_call(node) {
            self.record_path(node);
        }
    }

    /// `import.meta.glob("./dir/*.ts")` or `(["./a/*.ts", "!./a/x.ts"])`: each pattern, relative
    /// to the file; a negation is left out (the positive patterns bound it from above).
    fn glob(&mut self, first: Node<'_>) {
        let patterns: Vec<Node<'_>> = if first.kind() == "array" {
            items(first)
        } else {
            vec![first]
        };
        for pattern in patterns {
            let line = Self::line(pattern);
            match self.literal(pattern) {
                Some(p) if p.starts_with('!') => {}
                Some(p) => self.push_import(line, p, "glob"),
                None => self.computed_import(pattern, line, "glob"),
            }
        }
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
            self.push_import(Self::line(node), module, "reference");
        }
    }
}
