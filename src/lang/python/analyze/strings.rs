//! Strings: which literals may name a module or a file (and where they stood), their values
//! with interpolations left out, and the text of import statements.

use super::Pass;
use crate::analyze::facts::{Import, PathRef, StringContext, StringRef};
use crate::analyze::paths::PathValue;
use tree_sitter::Node;

impl Pass<'_> {
    pub(super) fn string(&mut self, node: Node<'_>, context: StringContext, line: u32) {
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
                // Elsewhere, one that reads as a path (`f"{base}/data/{name}.json"`, passed
                // on to a reader), as a literal with a `/` would.
                Some(PathValue::Relative(glob)) if reads_as_path(&glob) => {
                    let text = one_line(&self.text(node));
                    let value = PathValue::Relative(glob);
                    self.facts.paths.push(PathRef { line, value, text });
                }
                Some(
                    value @ (PathValue::FileDir(_)
                    | PathValue::Package { .. }
                    | PathValue::ModuleDir { .. }),
                ) => {
                    let text = one_line(&self.text(node));
                    self.facts.paths.push(PathRef { line, value, text });
                }
                _ => {}
            }
            return;
        }
        let value = string_value(node, self.source);
        if value.contains(">>>") {
            self.doctest(&value, line);
        }
        self.push(line, value, context);
    }

    /// Keeps a string that may name a module or a file; prose and docstrings are dropped so
    /// plans stay small.
    pub(super) fn push(&mut self, line: u32, value: String, context: StringContext) {
        if context == StringContext::Argv && value.starts_with('-') {
            return; // an option, not a file
        }
        // `[python, "-m", "pkg"]`: `pkg` was recorded as the module it runs (its `__main__`
        // and what that imports), not as the folder of that name (every file under it).
        if context == StringContext::Argv
            && self
                .facts
                .strings
                .iter()
                .rev()
                .take(64)
                .any(|s| s.context == StringContext::RunModule && s.value == value)
        {
            return;
        }
        if keeps(&value, context) {
            self.facts.strings.push(StringRef {
                line,
                value,
                context,
            });
        }
    }
}

/// Whether a string may name a module or a file where it stands: prose and docstrings are
/// dropped so plans stay small.
pub(crate) fn keeps(value: &str, context: StringContext) -> bool {
    let bare_allowed = !matches!(context, StringContext::Plain);
    !value.is_empty()
        && value.len() <= 256
        && value
            .chars()
            .all(|c| c.is_alphanumeric() || "._-/:+@*?[]{},~".contains(c))
        && (bare_allowed || value.contains('.') || value.contains('/'))
        // A glob must say something besides its wildcards (`f"{x}"` names nothing), and
        // only counts where a path is expected: `"*.md"` in a list is a pattern, not a read.
        && (!value.contains(['*', '?', '[', ']', '{', '}'])
            || (bare_allowed && value.chars().any(char::is_alphanumeric)))
}

/// Whether an f-string's value (its holes sealed into globs) reads as a path where no path is
/// expected: `f"{base}/data/{name}.json"`, passed on to a reader, as a literal with a `/` would.
pub(crate) fn reads_as_path(glob: &str) -> bool {
    glob.contains('/')
        && !glob.starts_with('/')
        && glob.chars().any(char::is_alphanumeric)
        && glob
            .chars()
            .all(|c| c.is_alphanumeric() || "._-/:+@*?[]{},~".contains(c))
}

pub(super) fn has_interpolation(node: Node<'_>) -> bool {
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

pub(crate) fn one_line(s: &str) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > 120 {
        format!("{}…", flat.chars().take(119).collect::<String>())
    } else {
        flat
    }
}

pub(super) fn from_import(node: Node<'_>, source: &[u8], line: u32) -> Import {
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

/// The names a `from m import a, b as c` binds, with the name each is bound to: `(a, a)`,
/// `(b, c)`.
pub(super) fn from_import_aliases(node: Node<'_>, source: &[u8]) -> Vec<(String, String)> {
    node.children_by_field_name("name", &mut node.walk())
        .filter_map(|n| {
            if n.kind() == "aliased_import" {
                let name = text(n.child_by_field_name("name")?, source);
                let alias = text(n.child_by_field_name("alias")?, source);
                Some((name, alias))
            } else {
                let name = text(n, source);
                Some((name.clone(), name))
            }
        })
        .collect()
}
