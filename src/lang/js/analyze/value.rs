//! What an expression of the file is: a literal's text, a path expression's value
//! (`PathValue`: literals, templates and `+` on known parts, `__dirname`, `__filename`,
//! `import.meta.dirname`/`filename`/`url`, names bound once, `path.join`/`resolve`/`dirname`,
//! `fileURLToPath`, `pathToFileURL`, `new URL(x, base)`, `process.cwd()`), and what a callee or
//! an object stands for under the file's names.

use super::names::{self, Alias};
use super::{FILE_CALLS, MAX_DEPTH, MOCKS, PROCESS_CALLS, Walk, item, items};
use crate::analyze::paths::{PathValue, UNKNOWN};
use tree_sitter::Node;

/// `(x)`, `await x`, `x as T`, `x satisfies T`, `x!`: `x`.
pub(super) fn unwrap(mut node: Node<'_>) -> Node<'_> {
    while matches!(
        node.kind(),
        "parenthesized_expression"
            | "await_expression"
            | "as_expression"
            | "satisfies_expression"
            | "non_null_expression"
    ) {
        match item(node, 0) {
            Some(inner) => node = inner,
            None => break,
        }
    }
    node
}

/// Whether `object.name(…)` builds a path (`object` as `Walk::object` reads it): its outermost
/// call is recorded.
pub(super) fn is_path_call(object: &str, name: &str) -> bool {
    matches!(
        (object, name),
        ("" | "path", "join" | "resolve") | ("" | "url", "fileURLToPath" | "pathToFileURL")
    )
}

/// A URL's path as a file path: its query and fragment left off, `./` and `.` dropped.
fn url_path(spec: &str) -> String {
    let end = spec.find(['?', '#']).unwrap_or(spec.len());
    let path = spec[..end].trim_start_matches("./");
    if path == "." { "" } else { path }.to_string()
}

pub(super) fn has_extension(value: &str) -> bool {
    let name = value.rsplit('/').next().unwrap_or(value);
    name.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && (1..=5).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphanumeric())
            && ext.chars().any(|c| c.is_ascii_alphabetic())
    })
}

/// A string literal's escapes: the common ones; anything else kept as written.
pub(super) fn unescape(text: &str) -> String {
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

impl Walk<'_, '_> {
    /// What a callee stands for: `(object, function)` under the file's names — `("path",
    /// "join")` for `p.join` when `p` is `require("path")`, `("", "readFileSync")` for `read`
    /// when `read` is `fs.readFileSync`, `("", "require")` for `createRequire(url)` and a name
    /// bound to it, `("require", "resolve")` for its `.resolve`.
    pub(super) fn callee(&self, function: Node<'_>) -> (String, String) {
        let function = unwrap(function);
        match function.kind() {
            "import" => (String::new(), "import".into()),
            "identifier" => {
                let text = self.text(function);
                match self.names.alias(text) {
                    Some(Alias::Function(f)) => (String::new(), f.clone()),
                    _ => (String::new(), text.to_string()),
                }
            }
            "member_expression" => {
                let object = function
                    .child_by_field_name("object")
                    .map_or(String::new(), |o| self.object(o, 0));
                let property = function
                    .child_by_field_name("property")
                    .map_or("", |p| self.text(p));
                (object, property.to_string())
            }
            "call_expression" if self.makes_require(function, 0) => {
                (String::new(), "require".into())
            }
            _ => (String::new(), String::new()),
        }
    }

    /// Whether a call makes a `require` function: `createRequire(url)`, under any name.
    pub(super) fn makes_require_call(&self, call: Node<'_>) -> bool {
        self.makes_require(call, 0)
    }

    fn makes_require(&self, call: Node<'_>, depth: usize) -> bool {
        let Some(function) = call.child_by_field_name("function") else {
            return false;
        };
        let function = unwrap(function);
        let name = match function.kind() {
            "identifier" => match self.names.alias(self.text(function)) {
                Some(Alias::Function(f)) => f.as_str(),
                _ => self.text(function),
            },
            "member_expression" if depth < MAX_DEPTH => function
                .child_by_field_name("property")
                .map_or("", |p| self.text(p)),
            _ => "",
        };
        name == "createRequire"
    }

    /// What an object stands for: a Node module's canonical name (`path` for `p` bound to
    /// `require("node:path")`, for `path.posix`, for `(await import("path"))`), `require` for
    /// a `require` function, else its text.
    pub(super) fn object(&self, node: Node<'_>, depth: usize) -> String {
        let node = unwrap(node);
        let text = || self.text(node).to_string();
        if depth > MAX_DEPTH {
            return text();
        }
        match node.kind() {
            "identifier" => match self.names.alias(self.text(node)) {
                Some(Alias::Module(m)) => (*m).to_string(),
                Some(Alias::Function(f)) if f == "require" => "require".into(),
                _ => text(),
            },
            "call_expression" => {
                if self.makes_require(node, depth + 1) {
                    return "require".into();
                }
                match self.loaded_module(node) {
                    Some(m) => m.to_string(),
                    None => text(),
                }
            }
            "member_expression" => {
                let (Some(object), Some(property)) = (
                    node.child_by_field_name("object"),
                    node.child_by_field_name("property"),
                ) else {
                    return text();
                };
                let inner = self.object(object, depth + 1);
                match names::member(&inner, self.text(property)) {
                    Some(Alias::Module(m)) => m.to_string(),
                    _ => text(),
                }
            }
            _ => text(),
        }
    }

    /// `require("node:path")`, `import("fs")`: the Node module a call loads, if it is one.
    pub(super) fn loaded_module(&self, call: Node<'_>) -> Option<&'static str> {
        let function = call.child_by_field_name("function")?;
        let (object, name) = self.callee(function);
        if !(object.is_empty() && matches!(name.as_str(), "require" | "import")) {
            return None;
        }
        let spec = self.literal(item(call.child_by_field_name("arguments")?, 0)?)?;
        names::module(&spec)
    }

    /// Whether `node` is an argument of a call that builds a path (`path.join`, `new URL`,
    /// `fileURLToPath`, `dirname`): only the outermost such expression is recorded.
    pub(super) fn inside_path_call(&self, node: Node<'_>) -> bool {
        node.parent()
            .filter(|p| p.kind() == "arguments")
            .and_then(|a| a.parent())
            .is_some_and(|call| self.builds_path(call))
    }

    /// Whether a call records its arguments itself: a path call (the outermost is recorded),
    /// a load (its specifier is evaluated), a file call (its first argument).
    pub(super) fn takes_path(&self, call: Node<'_>) -> bool {
        if self.builds_path(call) {
            return true;
        }
        let Some(function) = call.child_by_field_name("function") else {
            return false;
        };
        let (object, name) = self.callee(function);
        matches!(
            (object.as_str(), name.as_str()),
            ("", "import" | "require") | ("require" | "import.meta", "resolve")
        ) || FILE_CALLS.contains(&name.as_str())
    }

    /// Whether `call` builds a path: `new URL(…)`, a path call, `dirname`.
    fn builds_path(&self, call: Node<'_>) -> bool {
        if call.kind() == "new_expression" {
            return call
                .child_by_field_name("constructor")
                .is_some_and(|c| self.text(c) == "URL");
        }
        let Some(function) = call.child_by_field_name("function") else {
            return false;
        };
        let (object, name) = self.callee(function);
        is_path_call(&object, &name)
            || matches!((object.as_str(), name.as_str()), ("" | "path", "dirname"))
    }

    /// Whether a call's string arguments are left to `plain` (no other reading took them).
    pub(super) fn plain_call(&self, call: Node<'_>) -> bool {
        let Some(function) = call.child_by_field_name("function") else {
            return true;
        };
        let (object, name) = self.callee(function);
        let name = name.as_str();
        !(matches!(
            (object.as_str(), name),
            ("", "import" | "require") | ("require" | "import.meta", "resolve" | "glob")
        ) || MOCKS.contains(&name)
            || FILE_CALLS.contains(&name)
            || PROCESS_CALLS.contains(&name))
    }

    /// A string or a template with no substitution: its text.
    pub(super) fn literal(&self, node: Node<'_>) -> Option<String> {
        let node = unwrap(node);
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
            _ => None,
        }
    }

    /// A path expression's value (unknown parts as `UNKNOWN`), if it has one.
    pub(super) fn value(&self, node: Node<'_>, depth: usize) -> Option<PathValue> {
        if depth > MAX_DEPTH {
            self.too_deep.borrow_mut().push(Self::line(node));
            return None;
        }
        let next = depth + 1;
        let node = unwrap(node);
        match node.kind() {
            "string" => self.literal(node).map(PathValue::Relative),
            "template_string" => self.template_value(node, next),
            "identifier" => match self.text(node) {
                // A name the file binds is what it binds it to (known only when bound once).
                name if self.names.bound(name) => self.bindings.get(name).cloned().flatten(),
                "__dirname" => Some(PathValue::FileDir(String::new())),
                "__filename" => Some(PathValue::File),
                _ => None,
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
            "new_expression" => self.url_value(node, next),
            "call_expression" => self.call_value(node, next),
            _ => None,
        }
    }

    /// A template's value: its text, each substitution its value (a first one may be a folder:
    /// `` `${__dirname}/x.json` ``) or unknown.
    fn template_value(&self, node: Node<'_>, next: usize) -> Option<PathValue> {
        let mut out: Option<PathValue> = None;
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            let piece = match child.kind() {
                "string_fragment" => Some(PathValue::Relative(self.text(child).to_string())),
                "escape_sequence" => Some(PathValue::Relative(unescape(self.text(child)))),
                "template_substitution" => item(child, 0).and_then(|e| self.value(e, next)),
                _ => continue,
            };
            out = Some(match out {
                None => piece.unwrap_or_else(|| PathValue::Relative(UNKNOWN.to_string())),
                Some(value) => {
                    let rest = match piece {
                        Some(PathValue::Relative(r)) => r,
                        _ => UNKNOWN.to_string(),
                    };
                    value.concat(&rest)?
                }
            });
        }
        Some(out.unwrap_or_else(|| PathValue::Relative(String::new())))
    }

    /// `new URL("./x.json", import.meta.url)`: beside the file.
    fn url_value(&self, node: Node<'_>, next: usize) -> Option<PathValue> {
        let constructor = node.child_by_field_name("constructor")?;
        if self.text(constructor) != "URL" {
            return None;
        }
        let args = node.child_by_field_name("arguments")?;
        let spec = self.value(item(args, 0)?, next)?;
        let base = item(args, 1).and_then(|b| self.value(b, next));
        let PathValue::Relative(spec) = spec else {
            return Some(spec);
        };
        let folder = match base? {
            PathValue::File => PathValue::File.parent()?,
            folder @ PathValue::FileDir(_) => folder,
            _ => return None,
        };
        match url_path(&spec) {
            path if path.is_empty() => Some(folder),
            path => folder.join(&path),
        }
    }

    fn call_value(&self, node: Node<'_>, next: usize) -> Option<PathValue> {
        let function = node.child_by_field_name("function")?;
        let args = node.child_by_field_name("arguments")?;
        let (object, name) = self.callee(function);
        let values: Vec<Option<PathValue>> = items(args)
            .into_iter()
            .map(|a| self.value(a, next))
            .collect();
        match (object.as_str(), name.as_str()) {
            // The working folder: `.`, a folder `+ "/x"` goes into.
            ("process", "cwd") => Some(PathValue::Relative(".".into())),
            ("" | "url", "fileURLToPath" | "pathToFileURL") => values.into_iter().next().flatten(),
            ("" | "path", "dirname") => values.into_iter().next().flatten()?.parent(),
            ("" | "path", "join" | "resolve") => {
                let mut parts = values.into_iter();
                // An unknown first part is a folder anywhere: the rest is a path under it.
                let mut value = parts
                    .next()?
                    .unwrap_or_else(|| PathValue::Relative(UNKNOWN.to_string()));
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
                    match rest.trim_start_matches("./") {
                        "" | "." => {}
                        rest => value = value.join(rest)?,
                    }
                }
                Some(value)
            }
            _ => None,
        }
    }
}
