//! Go string values, evaluated from one file's text: what a path expression names, anchored on
//! the file's own folder (`runtime.Caller(0)`, Go's `__file__`), on the working directory of
//! the test binary (`os.Getwd()`, relative paths), or on something unknown (a parameter, a
//! helper of another file). Bindings (`:=`, `=`, `var`, `const`, `range` over literal slices)
//! are read flow-insensitively: a name is every value it is ever given in its function or at
//! package level. What cannot be known becomes a wildcard, and a wildcard becomes a glob over
//! the folder of the literal part — never a dropped path. A Go string literal's value and the
//! test of which strings are kept (`literal`, `push`) live here too: the walk in `golang` uses
//! them as well, so the arrows run from it to here only.

mod algebra;

use crate::analyze::facts::{Facts, PathRef, StringContext, StringRef};
use algebra::{
    CWD, DIR, Fact, NAME, TEMP, Val, any, base, bounded, concat, dir, fact, join, sprintf,
    trim_suffix,
};
use std::collections::BTreeMap;
use tree_sitter::Node;

/// Past this deep a chain of bindings a value is unknown.
const MAX_DEPTH: u32 = 16;

/// Calls that make a fresh temporary folder (`t.TempDir()`, `os.MkdirTemp(…)`): what is joined
/// onto it is outside the tree.
const TEMP_CALLS: &[&str] = &["TempDir", "MkdirTemp"];

/// Where a name got a value: an expression (the `index`th of a call's results when `multi`),
/// an element of a ranged collection, or nothing known (a parameter, `+=`).
#[derive(Clone, Copy)]
enum Bound<'t> {
    Expr {
        node: Node<'t>,
        index: usize,
        multi: bool,
    },
    Element(Node<'t>),
    Unknown,
}

/// One file's bindings and same-file functions, read once before the walk that emits facts.
pub(super) struct Values<'t> {
    source: &'t [u8],
    /// (the enclosing function's node id, or 0 at package level; the name) → its bindings.
    bindings: BTreeMap<(usize, String), Vec<Bound<'t>>>,
    /// Top-level function name → the expressions it returns.
    returns: BTreeMap<String, Vec<Node<'t>>>,
    /// Every function's byte span and node id, by start: the functions around a node are
    /// found here, not by walking its parents (tree-sitter finds a parent by searching down
    /// from the root, so a walk up a large table is quadratic).
    functions: Vec<(usize, usize, usize)>,
    /// What each node evaluates to at each depth, once worked out. A value depends on
    /// nothing else, and a name bound many times whose bindings read it again (`op = op +
    /// "W"` among a hundred `op = …`) branches at every level: worked out afresh each time,
    /// that took hours on one file of Go's own tree.
    known: std::cell::RefCell<std::collections::HashMap<(usize, u32), Val>>,
    /// The file declares `TestX`/`BenchmarkX`/`FuzzX`/`ExampleX`: it is a `_test.go` file, so
    /// `go test` runs it in its own folder. Elsewhere the working directory is the folder of
    /// whichever package's tests call it.
    runs_tests: bool,
}

fn text<'s>(node: Node<'_>, source: &'s [u8]) -> &'s str {
    node.utf8_text(source).unwrap_or_default()
}

/// A function declaration, method or function literal: a scope of its own.
fn is_function(node: Node<'_>) -> bool {
    matches!(
        node.kind(),
        "function_declaration" | "method_declaration" | "func_literal"
    )
}

fn named_children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).collect()
}

/// The expressions of an expression list, or the expression itself.
fn list<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    if node.kind() == "expression_list" {
        named_children(node)
    } else {
        vec![node]
    }
}

impl<'t> Values<'t> {
    pub(super) fn new(root: Node<'t>, source: &'t [u8]) -> Values<'t> {
        let mut v = Values {
            source,
            bindings: BTreeMap::new(),
            returns: BTreeMap::new(),
            functions: Vec::new(),
            known: Default::default(),
            runs_tests: false,
        };
        // One cursor over the named nodes: a list of children made per node was most of this
        // walk's time. For each node the walk is inside: the function its children are in
        // (0 at package level) and, in a function declaration's own body, the function's name
        // (its `return`s are what a call of it evaluates to).
        let mut cursor = root.walk();
        let mut above: Vec<(usize, Option<&'t str>)> = Vec::new();
        loop {
            let node = cursor.node();
            let (scope, declared) = above.last().copied().unwrap_or((0, None));
            let named = node.is_named();
            if named {
                v.read(node, scope);
                if let (Some(name), "return_statement") = (declared, node.kind()) {
                    v.returned(name, node);
                }
            }
            if named && cursor.goto_first_child() {
                above.push(if is_function(node) {
                    v.functions
                        .push((node.start_byte(), node.end_byte(), node.id()));
                    let name = (node.kind() == "function_declaration")
                        .then(|| node.child_by_field_name("name"))
                        .flatten()
                        .map(|n| text(n, source));
                    (node.id(), name)
                } else {
                    (scope, declared)
                });
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() {
                    v.functions.sort_unstable();
                    return v;
                }
                above.pop();
            }
        }
    }

    /// Records what one node binds; `scope` is the function it is in.
    fn read(&mut self, node: Node<'t>, scope: usize) {
        match node.kind() {
            "short_var_declaration" | "assignment_statement" => {
                let (Some(left), Some(right)) = (
                    node.child_by_field_name("left"),
                    node.child_by_field_name("right"),
                ) else {
                    return;
                };
                let plain = node
                    .child_by_field_name("operator")
                    .is_none_or(|o| matches!(text(o, self.source), "=" | ":="));
                self.bind(scope, &list(left), &list(right), plain);
            }
            "var_spec" | "const_spec" => {
                let mut cursor = node.walk();
                let names: Vec<Node<'t>> =
                    node.children_by_field_name("name", &mut cursor).collect();
                if let Some(value) = node.child_by_field_name("value") {
                    self.bind(scope, &names, &list(value), true);
                }
            }
            "range_clause" => {
                let (Some(left), Some(right)) = (
                    node.child_by_field_name("left"),
                    node.child_by_field_name("right"),
                ) else {
                    return;
                };
                let names = list(left);
                for (i, name) in names.iter().enumerate() {
                    // `for i, x := range xs`: the index is no string; a single name is the index.
                    let bound = if i == 1 {
                        Bound::Element(right)
                    } else {
                        Bound::Unknown
                    };
                    self.add(scope, *name, bound);
                }
            }
            "parameter_declaration" | "variadic_parameter_declaration" => {
                let mut cursor = node.walk();
                let names: Vec<Node<'t>> =
                    node.children_by_field_name("name", &mut cursor).collect();
                for name in names {
                    self.add(scope, name, Bound::Unknown);
                }
            }
            "function_declaration" => self.function(node),
            _ => {}
        }
    }

    /// A test function's file is run by `go test` in its own folder.
    fn function(&mut self, node: Node<'t>) {
        let Some(name) = node.child_by_field_name("name") else {
            return;
        };
        if ["Test", "Benchmark", "Fuzz", "Example"]
            .iter()
            .any(|p| text(name, self.source).starts_with(p))
        {
            self.runs_tests = true;
        }
    }

    /// What a `return` in the body of the declared function `name` gives (one value only).
    fn returned(&mut self, name: &str, node: Node<'t>) {
        if let Some(first) = named_children(node).first() {
            let values = list(*first);
            if values.len() == 1 {
                self.returns
                    .entry(name.to_string())
                    .or_default()
                    .push(values[0]);
            }
        }
    }

    fn bind(&mut self, scope: usize, names: &[Node<'t>], values: &[Node<'t>], plain: bool) {
        for (i, name) in names.iter().enumerate() {
            let bound = match (plain, values.len()) {
                (false, _) => Bound::Unknown,
                (_, 1) if names.len() > 1 => Bound::Expr {
                    node: values[0],
                    index: i,
                    multi: true,
                },
                (_, n) if n == names.len() => Bound::Expr {
                    node: values[i],
                    index: 0,
                    multi: false,
                },
                _ => Bound::Unknown,
            };
            self.add(scope, *name, bound);
        }
    }

    fn add(&mut self, scope: usize, name: Node<'t>, bound: Bound<'t>) {
        let name = text(name, self.source);
        if name == "_" || name.is_empty() {
            return;
        }
        self.bindings
            .entry((scope, name.to_string()))
            .or_default()
            .push(bound);
    }

    /// The bindings of `name` seen from `node`: the innermost function that binds it, else the
    /// package.
    fn lookup(&self, name: &str, node: Node<'t>) -> Option<&Vec<Bound<'t>>> {
        // The functions around `node` (itself included), innermost first: spans nest, so the
        // latest start among those that hold it is the innermost.
        let (start, end) = (node.start_byte(), node.end_byte());
        let before = self.functions.partition_point(|f| f.0 <= start);
        self.functions[..before]
            .iter()
            .rev()
            .filter(|f| end <= f.1)
            .find_map(|f| self.bindings.get(&(f.2, name.to_string())))
            .or_else(|| self.bindings.get(&(0, name.to_string())))
    }

    fn eval(&self, node: Node<'t>, depth: u32) -> Val {
        if depth > MAX_DEPTH {
            return any();
        }
        let key = (node.id(), depth);
        if let Some(known) = self.known.borrow().get(&key) {
            return known.clone();
        }
        let value = self.eval_afresh(node, depth);
        self.known.borrow_mut().insert(key, value.clone());
        value
    }

    fn eval_afresh(&self, node: Node<'t>, depth: u32) -> Val {
        let source = self.source;
        match node.kind() {
            "interpreted_string_literal" | "raw_string_literal" => {
                vec![literal(node, source)]
            }
            "parenthesized_expression" => named_children(node)
                .first()
                .map_or_else(any, |n| self.eval(*n, depth + 1)),
            "identifier" => self.identifier(node, depth),
            "binary_expression" => {
                let op = node.child_by_field_name("operator");
                match (
                    op.map(|o| text(o, source)),
                    node.child_by_field_name("left"),
                    node.child_by_field_name("right"),
                ) {
                    (Some("+"), Some(l), Some(r)) => {
                        concat(&self.eval(l, depth + 1), &self.eval(r, depth + 1))
                    }
                    _ => any(),
                }
            }
            "composite_literal" => {
                let Some(body) = node.child_by_field_name("body") else {
                    return any();
                };
                let mut out = Vec::new();
                for element in named_children(body) {
                    match (element.kind(), named_children(element).first()) {
                        ("literal_element", Some(e)) => out.extend(self.eval(*e, depth + 1)),
                        _ => out.extend(any()),
                    }
                }
                bounded(out)
            }
            "index_expression" => node
                .child_by_field_name("operand")
                .map_or_else(any, |o| self.eval(o, depth + 1)),
            "selector_expression" => match text(node, source) {
                "filepath.Separator" | "os.PathSeparator" => vec!["/".to_string()],
                _ => any(),
            },
            "call_expression" => self.call(node, 0, depth),
            _ => any(),
        }
    }

    fn identifier(&self, node: Node<'t>, depth: u32) -> Val {
        let name = text(node, self.source);
        let Some(bounds) = self.lookup(name, node) else {
            return any();
        };
        let mut out = Vec::new();
        for bound in bounds.clone() {
            out.extend(match bound {
                Bound::Expr {
                    node,
                    index,
                    multi: true,
                } if node.kind() == "call_expression" => self.call(node, index, depth + 1),
                Bound::Expr { multi: true, .. } | Bound::Unknown => any(),
                Bound::Expr { node, .. } => self.eval(node, depth + 1),
                Bound::Element(collection) => self.eval(collection, depth + 1),
            });
        }
        bounded(out)
    }

    /// Result `index` of a call.
    fn call(&self, node: Node<'t>, index: usize, depth: u32) -> Val {
        let source = self.source;
        let function = node
            .child_by_field_name("function")
            .map(|f| text(f, source))
            .unwrap_or_default();
        let args: Vec<Node<'t>> = node
            .child_by_field_name("arguments")
            .map(named_children)
            .unwrap_or_default();
        let arg = |i: usize| args.get(i).map_or_else(any, |a| self.eval(*a, depth + 1));
        let last = function.rsplit('.').next().unwrap_or(function);
        match (function, index) {
            ("runtime.Caller", 1) => vec![format!("{DIR}/{NAME}")],
            ("os.Getwd", 0) => vec![CWD.to_string()],
            ("filepath.Abs", 0) => arg(0),
            (_, 0) if TEMP_CALLS.contains(&last) => vec![TEMP.to_string()],
            (_, i) if i > 0 => any(),
            ("filepath.Join" | "path.Join", _) => {
                let parts: Vec<Val> = (0..args.len()).map(arg).collect();
                join(&parts)
            }
            ("filepath.Dir" | "path.Dir", _) => arg(0).iter().map(|v| dir(v)).collect(),
            ("filepath.Base" | "path.Base", _) => arg(0).iter().map(|v| base(v)).collect(),
            (
                "filepath.Clean" | "path.Clean" | "filepath.ToSlash" | "filepath.FromSlash"
                | "string",
                _,
            ) => arg(0),
            ("strings.TrimSuffix", _) => trim_suffix(&arg(0), &arg(1)),
            ("fmt.Sprintf", _) => {
                let rest: Vec<Val> = (1..args.len()).map(arg).collect();
                bounded(arg(0).iter().flat_map(|f| sprintf(f, &rest)).collect())
            }
            (name, _) if self.returns.contains_key(name) => {
                let mut out = Vec::new();
                for r in &self.returns[name] {
                    out.extend(self.eval(*r, depth + 1));
                }
                bounded(out)
            }
            _ => any(),
        }
    }

    /// A literal path handed to a reader, in a file no `go test` runs in its own folder: it is
    /// relative to the folder of whichever package's tests call it, so it names its tail in any
    /// folder (beside the literal itself, which gate resolves as any other).
    pub(super) fn emit_literal(&self, facts: &mut Facts, value: &str, line: u32) {
        if self.runs_tests || value.starts_with(['/', '~', '*']) {
            return;
        }
        if let Some(Fact::Path(path)) = fact(value, false, false) {
            facts.paths.push(PathRef {
                line,
                value: path,
                text: format!("{value:?}"),
            });
        }
    }

    /// Emits what `node` names, at `line`: a path relative to the file's folder, a glob over
    /// the folder of the literal part, or (a relative path in a test file) a literal like any
    /// other. `read`: the value is given to a call that reads it (`os.ReadDir(dir)` reads the
    /// folder itself); elsewhere a bare anchor (`filepath.Join(file, "..")`) names nothing.
    pub(super) fn emit(&self, facts: &mut Facts, node: Node<'t>, line: u32, read: bool) {
        let shown: String = text(node, self.source).chars().take(160).collect();
        for value in self.eval(node, 0) {
            match fact(&value, self.runs_tests, read) {
                Some(Fact::Literal(s)) => {
                    push(facts, line, s, StringContext::PathArg);
                }
                Some(Fact::Path(value)) => facts.paths.push(PathRef {
                    line,
                    value,
                    text: shown.clone(),
                }),
                None => {}
            }
        }
    }
}

/// Keeps a string that may name a file: not an option, not only dots and slashes (`".."` alone
/// would name the parent folder), not only wildcards (but `**/x` from a join onto an unknown
/// base), no space or control character (a message, not a name); a name's punctuation
/// (`c,d.json`, `k{x}.json`) is kept.
pub(super) fn push(facts: &mut Facts, line: u32, value: String, context: StringContext) {
    let keep = !value.is_empty()
        && (!value.starts_with('*') || value.starts_with("**/"))
        && value.len() <= 256
        && !value.starts_with('-')
        && value
            .chars()
            .all(|c| c.is_alphanumeric() || "._-/+@*?[]{},\\%'#$()=~!&".contains(c))
        && value.chars().any(char::is_alphanumeric);
    if keep {
        facts.strings.push(StringRef {
            line,
            value,
            context,
        });
    }
}

/// The value of a Go string literal (escapes other than `\\` and `\"` kept as written).
pub(super) fn literal(node: Node<'_>, source: &[u8]) -> String {
    let t = text(node, source);
    let inner = t
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .or_else(|| t.strip_prefix('`').and_then(|s| s.strip_suffix('`')))
        .unwrap_or(t);
    inner.replace("\\\\", "\\").replace("\\\"", "\"")
}
