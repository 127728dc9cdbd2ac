//! The names a JavaScript or TypeScript file binds, read before its forms: how many times each
//! is bound (a value bound to a name bound once is the name's value; a name bound again —
//! assigned, declared twice, a parameter, a loop variable, a caught error — is unknown), and
//! which stand for a Node module or one of its functions under another name (`const p =
//! require("path")`, `import { join as j } from "node:path"`, `const { readFileSync: read } =
//! require("fs")`, `const read = fs.readFileSync`, `const req = createRequire(import.meta.url)`).

use std::collections::BTreeMap;
use tree_sitter::Node;

/// What a name stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Alias {
    /// A module's namespace or default export, by its canonical name (`module`).
    Module(&'static str),
    /// A function, by the name its module exports it as (`require` for one `createRequire`
    /// made).
    Function(String),
}

#[derive(Default)]
pub(super) struct Names {
    /// How many times each name is bound, anywhere in the file.
    sites: BTreeMap<String, u32>,
    aliases: BTreeMap<String, Alias>,
}

/// The Node modules (and their common stand-ins) whose functions gate reads, by a specifier
/// they are imported as.
pub(super) fn module(spec: &str) -> Option<&'static str> {
    let name = spec.strip_prefix("node:").unwrap_or(spec);
    Some(match name {
        "path" | "path/posix" | "path/win32" | "pathe" | "upath" => "path",
        "url" => "url",
        "fs" | "fs/promises" | "graceful-fs" | "fs-extra" => "fs",
        "module" => "module",
        "child_process" | "execa" => "child_process",
        "worker_threads" => "worker_threads",
        _ => return None,
    })
}

impl Names {
    /// Whether the file binds `name` anywhere.
    pub(super) fn bound(&self, name: &str) -> bool {
        self.sites.contains_key(name)
    }

    /// Whether the file binds `name` exactly once: its one value is its value.
    pub(super) fn once(&self, name: &str) -> bool {
        self.sites.get(name) == Some(&1)
    }

    pub(super) fn alias(&self, name: &str) -> Option<&Alias> {
        self.aliases.get(name)
    }

    /// Takes `name` as `alias`, when it is bound once.
    pub(super) fn set_alias(&mut self, name: &str, alias: Alias) {
        if self.once(name) {
            self.aliases.insert(name.to_string(), alias);
        }
    }

    /// Counts the names `node` binds.
    pub(super) fn count(&mut self, node: Node<'_>, src: &[u8]) {
        let field = |f: &str| node.child_by_field_name(f);
        let binders: Vec<Node<'_>> = match node.kind() {
            "variable_declarator" => field("name").into_iter().collect(),
            "assignment_expression" | "augmented_assignment_expression" => {
                field("left").into_iter().collect()
            }
            "update_expression" => field("argument").into_iter().collect(),
            "formal_parameters" => {
                let mut cursor = node.walk();
                node.named_children(&mut cursor).collect()
            }
            "arrow_function" => field("parameter").into_iter().collect(),
            "for_in_statement" => field("left").into_iter().collect(),
            "catch_clause" => field("parameter").into_iter().collect(),
            "function_declaration"
            | "generator_function_declaration"
            | "function_expression"
            | "generator_function"
            | "class_declaration"
            | "class" => field("name").into_iter().collect(),
            "import_clause" | "namespace_import" | "import_require_clause" => {
                let mut cursor = node.walk();
                node.named_children(&mut cursor)
                    .filter(|c| c.kind() == "identifier")
                    .collect()
            }
            "import_specifier" => field("alias")
                .or_else(|| field("name"))
                .into_iter()
                .collect(),
            _ => Vec::new(),
        };
        for binder in binders {
            for name in pattern_names(binder) {
                let text = std::str::from_utf8(&src[name.byte_range()]).unwrap_or_default();
                *self.sites.entry(text.to_string()).or_default() += 1;
            }
        }
    }
}

/// The names a binding pattern binds: an identifier, or those inside an object or array
/// pattern (keys and default values left out), a rest element, a TypeScript parameter.
fn pattern_names(pattern: Node<'_>) -> Vec<Node<'_>> {
    let mut out = Vec::new();
    let mut todo = vec![pattern];
    while let Some(node) = todo.pop() {
        match node.kind() {
            "identifier" | "shorthand_property_identifier_pattern" => out.push(node),
            "assignment_pattern" | "object_assignment_pattern" => {
                todo.extend(node.child_by_field_name("left"));
            }
            "pair_pattern" => todo.extend(node.child_by_field_name("value")),
            "required_parameter" | "optional_parameter" => {
                todo.extend(node.child_by_field_name("pattern"));
            }
            "object_pattern" | "array_pattern" | "rest_pattern" => {
                let mut cursor = node.walk();
                todo.extend(node.named_children(&mut cursor));
            }
            _ => {}
        }
    }
    out
}

/// What `module.name` stands for, `module` a canonical module name: the module itself
/// (`path.posix`, `fs.promises`, a `default` export) or its function `name`.
pub(super) fn member(module_name: &str, name: &str) -> Option<Alias> {
    let m = module(module_name)?;
    Some(match (m, name) {
        ("path", "posix" | "win32") | ("fs", "promises") | (_, "default") => Alias::Module(m),
        _ => Alias::Function(name.to_string()),
    })
}

impl super::Walk<'_, '_> {
    /// `import p from "node:path"`, `import * as p from "path"`, `import { join as j } from
    /// "path"`: the names a Node module's import binds.
    pub(super) fn import_names(&mut self, node: Node<'_>) {
        let Some(spec) = node
            .child_by_field_name("source")
            .and_then(|s| self.literal(s))
        else {
            return;
        };
        let Some(m) = module(&spec) else { return };
        let mut todo = vec![node];
        while let Some(n) = todo.pop() {
            let mut cursor = n.walk();
            for child in n.named_children(&mut cursor) {
                match (n.kind(), child.kind()) {
                    ("import_clause" | "namespace_import", "identifier") => {
                        let name = self.text(child).to_string();
                        self.names.set_alias(&name, Alias::Module(m));
                    }
                    (_, "import_specifier") => {
                        let imported = child.child_by_field_name("name");
                        let local = child.child_by_field_name("alias").or(imported);
                        if let (Some(imported), Some(local)) = (imported, local) {
                            let (imported, local) = (
                                self.text(imported).to_string(),
                                self.text(local).to_string(),
                            );
                            if let Some(alias) = member(m, imported.trim_matches(['"', '\''])) {
                                self.names.set_alias(&local, alias);
                            }
                        }
                    }
                    (_, "import_clause" | "namespace_import" | "named_imports") => {
                        todo.push(child);
                    }
                    _ => {}
                }
            }
        }
    }

    /// `const p = require("path")`, `const { join: j } = await import("node:path")`, `const
    /// read = fs.readFileSync`, `const req = createRequire(import.meta.url)`, `const r =
    /// require`: the names a declaration gives Node's modules and functions.
    pub(super) fn declared_names(&mut self, node: Node<'_>) {
        let (Some(name), Some(value)) = (
            node.child_by_field_name("name"),
            node.child_by_field_name("value"),
        ) else {
            return;
        };
        let value = super::value::unwrap(value);
        // The module the value is, or whose members the pattern takes.
        let m = match value.kind() {
            "call_expression" if self.makes_require_call(value) => {
                if name.kind() == "identifier" {
                    let local = self.text(name).to_string();
                    self.names
                        .set_alias(&local, Alias::Function("require".into()));
                }
                return;
            }
            "call_expression" => self.loaded_module(value),
            "identifier" | "member_expression" => module(&self.object(value, 0)),
            _ => None,
        };
        if name.kind() == "identifier" {
            let local = self.text(name).to_string();
            let alias = match (m, value.kind()) {
                (Some(m), _) => Some(Alias::Module(m)),
                (None, "identifier") if self.text(value) == "require" => {
                    Some(Alias::Function("require".into()))
                }
                (None, "identifier") => self.names.alias(self.text(value)).cloned(),
                (None, "member_expression") => {
                    let object = value.child_by_field_name("object");
                    let property = value.child_by_field_name("property");
                    match (object, property) {
                        (Some(o), Some(p)) => {
                            let o = self.object(o, 0);
                            member(&o, self.text(p)).filter(|a| matches!(a, Alias::Function(_)))
                        }
                        _ => None,
                    }
                }
                _ => None,
            };
            if let Some(alias) = alias {
                self.names.set_alias(&local, alias);
            }
            return;
        }
        let (Some(m), "object_pattern") = (m, name.kind()) else {
            return;
        };
        for entry in super::items(name) {
            let (key, local) = match entry.kind() {
                "shorthand_property_identifier_pattern" => (entry, entry),
                "object_assignment_pattern" => match entry.child_by_field_name("left") {
                    Some(left) => (left, left),
                    None => continue,
                },
                "pair_pattern" => match (
                    entry.child_by_field_name("key"),
                    entry.child_by_field_name("value"),
                ) {
                    (Some(k), Some(v)) if v.kind() == "identifier" => (k, v),
                    _ => continue,
                },
                _ => continue,
            };
            let (key, local) = (self.text(key).to_string(), self.text(local).to_string());
            if let Some(alias) = member(m, key.trim_matches(['"', '\''])) {
                self.names.set_alias(&local, alias);
            }
        }
    }
}
