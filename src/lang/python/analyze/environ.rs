//! Environment reads: the variables a file reads by a literal name (`os.environ["X"]`,
//! `os.getenv("X")`, `"X" in os.environ`), and the uses that read variables gate cannot name.
//! Kept apart from the other calls: the subscripts and names it judges are met everywhere.

use super::Pass;
use super::strings::{has_interpolation, string_value};
use crate::analyze::facts::Import;
use tree_sitter::Node;

/// Calls that read an environment variable named by their first argument.
pub(crate) const ENV_READS: &[&str] = &[
    "os.getenv",
    "getenv",
    "os.environ.get",
    "environ.get",
    "os.environ.setdefault",
    "environ.setdefault",
    "os.environb.get",
    "os.environ.pop",
    "environ.pop",
];

/// The objects a subscript reads an environment variable of (`os.environ["X"]`).
const ENVIRONS: &[&str] = &["os.environ", "environ", "os.environb"];

/// Whether `imports` bind `name` from os: by name (`from os import environ`) or by a star, as
/// `os.__all__` holds the environment's names. The fast path asks the same of a file's imports.
pub(crate) fn imported_from_os(imports: &[Import], name: &str) -> bool {
    imports
        .iter()
        .any(|i| i.level == 0 && i.module == "os" && i.names.iter().any(|n| n == name || n == "*"))
}

impl Pass<'_> {
    /// What a node reads of the environment, if anything.
    pub(super) fn environment(&mut self, node: Node<'_>, line: u32) {
        match node.kind() {
            "subscript" => self.environ_subscript(node, line),
            "attribute" | "identifier" => self.environ_use(node, line),
            _ => {}
        }
    }

    /// `os.environ["X"]`: a variable read by a literal name; `os.environ[k]`: by a name gate
    /// cannot know.
    fn environ_subscript(&mut self, node: Node<'_>, line: u32) {
        if !node.child_by_field_name("value").is_some_and(|v| {
            let v = self.text(v);
            ENVIRONS.contains(&v.as_str()) && self.is_os_name(&v)
        }) {
            return;
        }
        match node.child_by_field_name("subscript") {
            Some(key) if key.kind() == "string" && !has_interpolation(key) => {
                self.facts.env.push(string_value(key, self.source));
            }
            _ => self.env_any(node, line),
        }
    }

    /// A use of the environment or of an environment reader other than reading one variable
    /// by a literal name — `dict(os.environ)`, `env=os.environ`, `os.environ.copy()`,
    /// `for k in os.environ`, `get = os.getenv` — reads variables gate cannot name. The forms
    /// that name one (`os.environ["X"]`, `os.environ.get("X")`, `"X" in os.environ`) are read
    /// where they are: by `environ_subscript`, `call` and here.
    fn environ_use(&mut self, node: Node<'_>, line: u32) {
        // The cheap test first: this runs on every name of every file.
        let bytes = &self.source[node.byte_range()];
        let whole = matches!(bytes, b"os.environ" | b"os.environb")
            || (bytes == b"environ" && self.is_os_name("environ"));
        let reader = ENV_READS.iter().any(|r| r.as_bytes() == bytes)
            && self.is_os_name(&String::from_utf8_lossy(bytes));
        if !whole && !reader {
            return;
        }
        let Some(parent) = node.parent() else {
            return;
        };
        // Part of a longer name (`os.environ` inside `os.environ.get`, `environ` in
        // `os.environ`): the longer one is judged.
        if parent.kind() == "attribute"
            && parent
                .child_by_field_name("attribute")
                .is_some_and(|a| a.id() == node.id())
        {
            return;
        }
        let is = |n: Option<Node<'_>>| n.is_some_and(|n| n.id() == node.id());
        let named = match parent.kind() {
            // `os.environ[...]`, `os.getenv(...)`: judged as reads where they are.
            "subscript" => whole && is(parent.child_by_field_name("value")),
            "call" => reader && is(parent.child_by_field_name("function")),
            // `os.environ.get`, `.setdefault`, `.pop`: a reader, judged at its call.
            "attribute" => {
                whole
                    && ENV_READS.contains(&self.text(parent).as_str())
                    && parent.parent().is_some_and(|c| c.kind() == "call")
            }
            // `"X" in os.environ`: a read of X.
            "comparison_operator" => {
                if let Some(name) = parent.named_child(0).filter(|l| {
                    l.kind() == "string" && !has_interpolation(*l) && l.id() != node.id()
                }) {
                    self.facts.env.push(string_value(name, self.source));
                    true
                } else {
                    false
                }
            }
            // `from os import environ, getenv`: the import itself reads nothing.
            "dotted_name" | "aliased_import" | "import_from_statement" => true,
            _ => false,
        };
        if !named {
            self.env_any(parent, line);
        }
    }

    /// Whether `name` (`os.environ`, `environ.get`, `getenv`) is os's: spelled through `os.`,
    /// or its first part imported from os — WSGI's `environ` parameter is not.
    fn is_os_name(&self, name: &str) -> bool {
        name.starts_with("os.")
            || imported_from_os(
                &self.facts.imports,
                name.split('.').next().unwrap_or_default(),
            )
    }

    fn env_any(&mut self, node: Node<'_>, line: u32) {
        let text = self.text(node);
        self.facts.env_any.push((
            line,
            text.lines()
                .next()
                .unwrap_or_default()
                .chars()
                .take(80)
                .collect(),
        ));
    }

    /// A call of an environment reader (`os.getenv("X")`): the variable it names, or a read
    /// gate cannot name.
    pub(super) fn env_call(
        &mut self,
        node: Node<'_>,
        function: &str,
        args: &[Node<'_>],
        line: u32,
    ) {
        if ENV_READS.contains(&function) && self.is_os_name(function) {
            match args.first() {
                Some(first) if first.kind() == "string" && !has_interpolation(*first) => {
                    self.facts.env.push(string_value(*first, self.source));
                }
                _ => self.env_any(node, line),
            }
        }
    }
}
