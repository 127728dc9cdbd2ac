//! Python source → facts, in one tree-sitter pass: every import (module level, in functions,
//! under `TYPE_CHECKING`, in both `try`/`except ImportError` branches), the string literals that
//! may name a module or a file (with where they stood: an import call, a subprocess argv, a path
//! argument, a pytest-bdd binding), path expressions built from `__file__`, package resources or
//! joins, dynamic imports, and the lines that create a Flask app. Meaning (which file a name
//! resolves to) is decided later, in `graph`, because it depends on the rest of the tree; facts
//! depend on the text alone, so they are cached by blob id.

use crate::analyze::facts::{Facts, Import, PathRef, StringContext, cut_point};
use crate::analyze::paths::{PathValue, eval as eval_path};
use std::cell::RefCell;
use std::collections::BTreeMap;
use tree_sitter::{Node, Parser};

/// The grammar gate was built with; recorded in plans so a grammar bump invalidates caches.
pub(crate) const GRAMMAR: &str = "tree-sitter-python 0.25";

thread_local! {
    static PARSER: RefCell<Parser> = RefCell::new({
        let mut parser = Parser::new();
        parser
            .set_language(&tree_sitter_python::LANGUAGE.into())
            .expect("the bundled Python grammar matches the tree-sitter ABI");
        parser
    });
}

mod bindings;
mod calls;
mod environ;
mod import_calls;
mod strings;

pub(crate) use bindings::{is_listing_method, loop_value};
pub(crate) use calls::{argument_context_of, is_read_call, path_keyword};
pub(crate) use environ::{ENV_READS, imported_from_os};
use strings::{from_import, text};
pub(crate) use strings::{keeps, one_line, reads_as_path};

/// Per-file state of the one pass: module-level names bound to path expressions, and the
/// lines whose expressions were too deep to evaluate.
pub(super) struct Pass<'s> {
    pub(super) source: &'s [u8],
    pub(super) facts: Facts,
    pub(super) names: BTreeMap<String, PathValue>,
    pub(super) too_deep: RefCell<Vec<u32>>,
    /// The end of the last expression found too deep to evaluate.
    pub(super) skip_until: std::cell::Cell<usize>,
}

thread_local! {
    /// Off while the fast path is checked against tree-sitter: the reference reads every file,
    /// doctest examples and `python -c` code included, with tree-sitter alone.
    static FAST: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
}

/// A file's facts: read by the fast path where it reads the file exactly, else by tree-sitter.
pub(crate) fn analyze(source: &[u8]) -> Facts {
    if FAST.with(std::cell::Cell::get)
        && let Some(facts) = super::scan::facts(source)
    {
        return facts;
    }
    analyze_tree(source)
}

/// A file's facts as tree-sitter reads them, every nested source too: the fast path's
/// reference.
pub(crate) fn analyze_reference(source: &[u8]) -> Facts {
    let was = FAST.with(|f| f.replace(false));
    let facts = analyze_tree(source);
    FAST.with(|f| f.set(was));
    facts
}

fn analyze_tree(source: &[u8]) -> Facts {
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
    pub(super) fn text(&self, node: Node<'_>) -> String {
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
            self.environment(node, line);
            match node.kind() {
                "import_statement" => {
                    self.import(node, line);
                    continue;
                }
                "import_from_statement" => {
                    self.import_from(node, line);
                    continue;
                }
                "future_import_statement" => continue,
                "call" => {
                    self.call(node, line);
                    self.listing(node, line);
                }
                "assignment" => {
                    let left = node.child_by_field_name("left");
                    self.module_getattr(node, line);
                    if left.is_some_and(|l| self.text(l) == "pytest_plugins") {
                        child_context = StringContext::PytestPlugins;
                    }
                    if let Some(left) = left {
                        self.bind(left, node.child_by_field_name("right"));
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
                _ => self.bind_other(node),
            }
            // Names are not recorded where used: their value was recorded where it was bound.
            if matches!(
                node.kind(),
                "call" | "binary_operator" | "attribute" | "subscript"
            ) {
                self.path_expression(node, line);
            }
            self.push_children(&mut stack, node, child_context);
        }
    }

    /// `node`'s children onto the walk's stack, the first on top, each with its context.
    fn push_children<'t>(
        &self,
        stack: &mut Vec<(Node<'t>, StringContext)>,
        node: Node<'t>,
        child_context: StringContext,
    ) {
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

    /// `import a.b`, `import a.b as c`: the modules imported, and the names they bind.
    fn import(&mut self, node: Node<'_>, line: u32) {
        for name in node.children_by_field_name("name", &mut node.walk()) {
            let dotted = if name.kind() == "aliased_import" {
                name.child_by_field_name("name")
            } else {
                Some(name)
            };
            if let Some(dotted) = dotted {
                let module = self.text(dotted);
                let alias = (name.kind() == "aliased_import")
                    .then(|| name.child_by_field_name("alias"))
                    .flatten()
                    .map(|a| self.text(a));
                let bound = alias
                    .clone()
                    .unwrap_or_else(|| module.split('.').next().unwrap_or_default().to_string());
                self.names.remove(&bound);
                self.names.extend(module_files(&module, alias.as_deref()));
                self.facts.imports.push(Import {
                    line,
                    level: 0,
                    module,
                    names: Vec::new(),
                });
            }
        }
    }

    /// `from a import b as c`: the import, and the names it binds (`c.__file__` is `a.b`'s).
    fn import_from(&mut self, node: Node<'_>, line: u32) {
        let import = from_import(node, self.source, line);
        for (_, alias) in strings::from_import_aliases(node, self.source) {
            self.names.remove(&alias);
        }
        if import.level == 0 {
            for (name, alias) in strings::from_import_aliases(node, self.source) {
                self.names.extend(module_files(
                    &format!("{}.{name}", import.module),
                    Some(&alias),
                ));
            }
        }
        self.facts.imports.push(import);
    }
    /// A string holding doctest examples: their imports, on the lines they stand on.
    pub(super) fn doctest(&mut self, text: &str, line: u32) {
        self.facts
            .doctest_imports
            .extend(doctest_imports(text, line));
    }

    /// A module-level `__getattr__` (PEP 562) runs on the first use of a name the module lacks
    /// — how packages load their submodules lazily (`pkg.sub` imports `pkg/sub.py` then).
    /// Bound from a call (`__getattr__, … = lazy.attach(__name__, …)`), it is a library's code
    /// gate does not read: it may load any module of the file's own package, so that is its
    /// bound. A `def __getattr__` is this file's code, whose import calls are read where they
    /// stand (a `__version__` shim loads nothing of the package).
    fn module_getattr(&mut self, node: Node<'_>, line: u32) {
        let from_call = node
            .child_by_field_name("right")
            .is_some_and(|r| r.kind() == "call");
        if !from_call
            || !node
                .child_by_field_name("left")
                .is_some_and(|b| self.binds_getattr(b))
        {
            return;
        }
        let mut up = node.parent();
        while let Some(scope) = up {
            if matches!(
                scope.kind(),
                "function_definition" | "class_definition" | "lambda"
            ) {
                return;
            }
            up = scope.parent();
        }
        let anchor = crate::analyze::facts::Anchor {
            own_module: true,
            up: 0,
        };
        let text = "module __getattr__ (PEP 562): loads its package's modules when first used";
        self.dynamic(line, text.to_string(), Some(anchor), String::new(), false);
    }

    /// Whether an assignment's target binds `__getattr__` (`__getattr__, __dir__, __all__ =
    /// lazy.attach(…)`).
    fn binds_getattr(&self, left: Node<'_>) -> bool {
        match left.kind() {
            "identifier" => self.text(left) == "__getattr__",
            "pattern_list" | "tuple_pattern" | "list_pattern" => {
                let mut cursor = left.walk();
                left.named_children(&mut cursor)
                    .any(|c| c.kind() == "identifier" && self.text(c) == "__getattr__")
            }
            _ => false,
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
        if matches!(&value, PathValue::Relative(p) if p.starts_with('/')) {
            return; // absolute (`os.sep`, a temporary folder): outside the repository
        }
        if node
            .parent()
            .is_some_and(|p| self.builds_on(p) || self.puts_on_sys_path(p))
            || value.is_anchor()
            || !value.is_specific()
        {
            return;
        }
        let text = one_line(&self.text(node));
        self.facts.paths.push(PathRef { line, value, text });
    }

    /// True when `parent` is the argument list of a call that puts a folder on `sys.path`:
    /// the folder is recorded as an import root (`sys_paths`), not as data.
    fn puts_on_sys_path(&self, parent: Node<'_>) -> bool {
        parent.kind() == "argument_list"
            && parent
                .parent()
                .and_then(|call| call.child_by_field_name("function"))
                .is_some_and(|f| calls::is_sys_path_call(&self.text(f)))
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

    /// The path `node` evaluates to, its unknown parts sealed into globs: what facts record.
    fn eval(&self, node: Node<'_>) -> Option<PathValue> {
        self.eval_raw(node).map(PathValue::seal)
    }

    /// The path `node` evaluates to, unknown parts still marked (a name keeps its value so, to
    /// be joined further). Once an expression proved too deep, nothing inside it is evaluated
    /// again: each of its thousands of sub-expressions would be as deep (the walk would cost
    /// the square of the file).
    fn eval_raw(&self, node: Node<'_>) -> Option<PathValue> {
        if node.start_byte() < self.skip_until.get() {
            return None;
        }
        let (value, too_deep) = eval_path(node, self.source, &self.names);
        if too_deep {
            self.too_deep
                .borrow_mut()
                .push(node.start_position().row as u32 + 1);
            self.skip_until.set(node.end_byte());
        }
        value
    }
    fn finish(mut self) -> Facts {
        self.facts.too_deep = std::mem::take(self.too_deep.get_mut());
        normalize(&mut self.facts);
        self.facts
    }
}

/// What `import module` binds (`a.__file__` and `a.b.__file__` for `import a.b`; `c.__file__`
/// for `import a.b as c` or `from a import b as c`, whose module is `a.b`): so a path built on
/// another module's file is followed. Both readers bind these.
pub(crate) fn module_files(module: &str, alias: Option<&str>) -> Vec<(String, PathValue)> {
    if let Some(alias) = alias {
        let value = PathValue::ModuleFile(module.to_string());
        return vec![(format!("{alias}.__file__"), value)];
    }
    let mut out = Vec::new();
    let mut prefix = String::new();
    for part in module.split('.') {
        if !prefix.is_empty() {
            prefix.push('.');
        }
        prefix.push_str(part);
        out.push((
            format!("{prefix}.__file__"),
            PathValue::ModuleFile(prefix.clone()),
        ));
    }
    out
}

/// Facts in their one order: sorted, without repeats, a string kept once per line and value
/// with its strongest context. Both readers end here, so their facts compare equal.
pub(crate) fn normalize(facts: &mut Facts) {
    facts.too_deep.sort_unstable();
    facts.too_deep.dedup();
    facts.imports.sort();
    facts.imports.dedup();
    facts.doctest_imports.sort();
    facts.doctest_imports.dedup();
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
    facts.env.sort();
    facts.env.dedup();
    facts.env_any.sort();
    facts.env_any.dedup();
    facts.parse_errors.sort_unstable();
    facts.parse_errors.dedup();
}

/// The imports of the doctest examples in a string that starts on `line`.
pub(crate) fn doctest_imports(text: &str, line: u32) -> Vec<Import> {
    let code = examples(text);
    if code.trim().is_empty() {
        return Vec::new();
    }
    let read = analyze(code.as_bytes());
    let imports = read
        .imports
        .into_iter()
        .map(|mut import| {
            import.line += line - 1;
            import
        })
        .collect();
    let errors = !read.parse_errors.is_empty();
    example_imports(text, line, imports, errors)
}

/// A text file's doctest examples read as one Python source, each line where the file has it:
/// their imports (edges only when the file is collected as a doctest), strings and paths. An
/// example that does not parse is the file's parse error, as in a module.
pub(crate) fn doctest_text(bytes: &[u8]) -> Facts {
    let text = String::from_utf8_lossy(bytes);
    if !text.contains(">>>") {
        return Facts::default();
    }
    let mut facts = analyze(examples(&text).as_bytes());
    let imports = std::mem::take(&mut facts.imports);
    facts.doctest_imports = example_imports(&text, 1, imports, !facts.parse_errors.is_empty());
    facts
}

/// The imports of the doctest examples in `text` (its first line is line `first`), given those
/// read from all examples at once: when that read met a parse error, tree-sitter's recovery
/// may have swallowed the examples around the broken one, so each example is read alone too.
/// (doctest compiles each example on its own: one that does not compile runs nothing.)
pub(crate) fn example_imports(
    text: &str,
    first: u32,
    mut imports: Vec<Import>,
    errors: bool,
) -> Vec<Import> {
    if errors {
        for (line, example) in example_blocks(text) {
            for mut import in analyze(example.as_bytes()).imports {
                import.line += first + line - 2;
                imports.push(import);
            }
        }
        imports.sort();
        imports.dedup();
    }
    imports
}

/// Each doctest example (a `>>> ` line and its `... ` continuations) with the line it starts on.
fn example_blocks(text: &str) -> Vec<(u32, String)> {
    let mut blocks: Vec<(u32, String)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if let Some(code) = t
            .strip_prefix(">>> ")
            .or_else(|| (t == ">>>").then_some(""))
        {
            blocks.push((i as u32 + 1, format!("{code}\n")));
        } else if let Some(code) = t
            .strip_prefix("... ")
            .or_else(|| (t == "...").then_some(""))
            && let Some((_, block)) = blocks.last_mut()
        {
            block.push_str(code);
            block.push('\n');
        }
    }
    blocks
}

/// The code of doctest examples (`>>> ` lines and their `... ` continuations) with every other
/// line left empty, so line numbers stay the text's.
pub(crate) fn examples(text: &str) -> String {
    let mut code = String::with_capacity(text.len() / 4);
    for line in text.lines() {
        let t = line.trim_start();
        let example = [">>> ", "... "]
            .iter()
            .find_map(|p| t.strip_prefix(p))
            .or_else(|| (t == ">>>" || t == "...").then_some(""));
        code.push_str(example.unwrap_or_default());
        code.push('\n');
    }
    code
}

#[cfg(test)]
mod tests;
