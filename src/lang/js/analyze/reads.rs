//! What a file reads: the arguments of file and process calls, path expressions (the
//! outermost of a call that builds one, a `URL` beside the file, a `+` or a template on the
//! file's folder or the working folder wherever it stands), and strings that look like paths.

use super::{MAX_DEPTH, Walk, item, items, value};
use crate::analyze::facts::{PathRef, StringContext, StringRef};
use crate::analyze::paths::PathValue;
use tree_sitter::Node;

impl Walk<'_, '_> {
    /// A process's argv: each literal word names what it may run or read.
    pub(super) fn process(&mut self, args: Option<Node<'_>>) {
        let Some(args) = args else { return };
        for arg in items(args) {
            let words: Vec<(Node<'_>, String)> = match arg.kind() {
                "array" => items(arg)
                    .into_iter()
                    .filter_map(|w| self.literal(w).map(|t| (w, t)))
                    .collect(),
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
    pub(super) fn path_arg(&mut self, arg: Node<'_>) {
        if let Some(value) = self.literal(arg) {
            self.facts.strings.push(StringRef {
                line: Self::line(arg),
                value,
                context: StringContext::PathArg,
            });
        } else if !matches!(
            value::unwrap(arg).kind(),
            "call_expression" | "new_expression"
        ) {
            // A call is recorded as itself (`readFileSync(path.join(…))`).
            self.record_path(arg);
        }
    }

    /// A path expression's value, when it has one worth an edge: it says something besides
    /// its unknown parts.
    pub(super) fn record_path(&mut self, node: Node<'_>) {
        let Some(value) = self.value(node, 0) else {
            return;
        };
        let said = match &value {
            PathValue::Relative(p) | PathValue::FileDir(p) => p
                .chars()
                .any(|c| c.is_alphanumeric() || c == '_' || c == '-'),
            _ => true,
        };
        if matches!(value, PathValue::Relative(_)) && !said {
            return;
        }
        self.facts.paths.push(PathRef {
            line: Self::line(node),
            value: value.seal(),
            text: self.text(node).chars().take(200).collect(),
        });
    }

    /// `new URL("./x.json", import.meta.url)`: a file beside this one.
    pub(super) fn new_url(&mut self, node: Node<'_>) {
        let constructor = node.child_by_field_name("constructor");
        if constructor.is_none_or(|c| self.text(c) != "URL") || self.inside_path_call(node) {
            return;
        }
        self.record_path(node);
    }

    /// A `+` or a template anywhere, built on the file's own place or the working folder
    /// (`__dirname + "/x.json"`, `` `${process.cwd()}/x.json` ``): a path whatever it is given
    /// to (a helper of the file's own). The outermost such expression only.
    pub(super) fn anchored(&mut self, node: Node<'_>) {
        if node.kind() == "binary_expression"
            && node
                .child_by_field_name("operator")
                .is_none_or(|o| self.text(o) != "+")
        {
            return;
        }
        let mut parent = node.parent();
        while let Some(p) = parent.filter(|p| p.kind() == "parenthesized_expression") {
            parent = p.parent();
        }
        let inner = parent.is_some_and(|p| {
            p.kind() == "template_substitution"
                || p.kind() == "binary_expression"
                    && p.child_by_field_name("operator")
                        .is_some_and(|o| self.text(o) == "+")
                || p.kind() == "arguments" && p.parent().is_some_and(|c| self.takes_path(c))
        });
        if inner {
            return;
        }
        let anchor = self.head(node).and_then(|h| self.value(h, 0));
        if anchor.is_some_and(|a| a.is_anchor())
            && self.value(node, 0).is_some_and(|v| !v.is_anchor())
        {
            self.record_path(node);
        }
    }

    /// The first operand of a `+` or a template: its left-most part.
    pub(super) fn head<'t>(&self, mut node: Node<'t>) -> Option<Node<'t>> {
        for _ in 0..MAX_DEPTH {
            node = value::unwrap(node);
            node = match node.kind() {
                "binary_expression" => node.child_by_field_name("left")?,
                "template_string" => {
                    let first = item(node, 0)?;
                    if first.kind() != "template_substitution" {
                        return None;
                    }
                    item(first, 0)?
                }
                _ => return Some(node),
            };
        }
        None
    }

    /// Any other string that looks like a path (a `/` or a file extension): resolved against
    /// the tree if it names a file of it. A string another reading took (a load's specifier,
    /// a file or process call's argument) is left to it.
    pub(super) fn plain(&mut self, node: Node<'_>) {
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
            && (value.contains('/') || value::has_extension(&value));
        if looks_like_path {
            self.facts.strings.push(StringRef {
                line: Self::line(node),
                value,
                context: StringContext::Plain,
            });
        }
    }
}
