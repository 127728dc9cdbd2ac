//! What a file reads of the environment: `process.env.X`, `process.env["X"]`, `const { X } =
//! process.env`, `"X" in process.env` by name; `process.env[k]` and the whole object (spread,
//! passed on, bound to another name) as any variable.

use super::{Walk, items};
use tree_sitter::Node;

impl Walk<'_, '_> {
    /// `process.env.X`, `process.env["X"]`: a variable by name; `process.env[k]` or the whole
    /// object (spread, passed on, iterated): any of them.
    pub(super) fn env(&mut self, node: Node<'_>) {
        let Some(object) = node.child_by_field_name("object") else {
            return;
        };
        if matches!(self.text(object), "process.env" | "import.meta.env") {
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
        // `process.env` itself, not read by one name: the whole environment — but for a
        // pattern of names (`const { X } = process.env`) or a test of one (`"X" in process.env`).
        if node.kind() != "member_expression" || self.text(node) != "process.env" {
            return;
        }
        let parent = node.parent();
        let named = parent.is_some_and(|p| {
            matches!(p.kind(), "member_expression" | "subscript_expression")
                && p.child_by_field_name("object") == Some(node)
                || p.kind() == "variable_declarator" && self.env_names(p).is_some()
                || p.kind() == "binary_expression" && self.env_test(p).is_some()
        });
        if !named {
            self.facts
                .env_any
                .push((Self::line(node), self.text(node).to_string()));
        }
    }

    /// `const { X, Y: y = "d" } = process.env`: the names it reads (none with a rest element
    /// or a computed key: then it is the whole environment).
    pub(super) fn env_names(&self, declarator: Node<'_>) -> Option<Vec<String>> {
        let value = declarator.child_by_field_name("value")?;
        let pattern = declarator.child_by_field_name("name")?;
        if self.text(value) != "process.env" || pattern.kind() != "object_pattern" {
            return None;
        }
        let mut names = Vec::new();
        for entry in items(pattern) {
            let key = match entry.kind() {
                "shorthand_property_identifier_pattern" => Some(entry),
                "object_assignment_pattern" => entry.child_by_field_name("left"),
                "pair_pattern" => entry.child_by_field_name("key"),
                _ => None,
            }?;
            let name = match key.kind() {
                "string" => self.literal(key)?,
                "property_identifier" | "shorthand_property_identifier_pattern" => {
                    self.text(key).to_string()
                }
                _ => return None,
            };
            names.push(name);
        }
        Some(names)
    }

    pub(super) fn env_pattern(&mut self, node: Node<'_>) {
        if let Some(names) = self.env_names(node) {
            self.facts.env.extend(names);
        }
    }

    /// `"X" in process.env`: the name it tests.
    pub(super) fn env_test(&self, node: Node<'_>) -> Option<String> {
        let op = node.child_by_field_name("operator")?;
        let right = node.child_by_field_name("right")?;
        if self.text(op) != "in" || self.text(right) != "process.env" {
            return None;
        }
        self.literal(node.child_by_field_name("left")?)
    }

    pub(super) fn env_in(&mut self, node: Node<'_>) {
        if let Some(name) = self.env_test(node) {
            self.facts.env.push(name);
        }
    }
}
