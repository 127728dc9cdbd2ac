//! Names bound to paths as the text binds them: an assignment binds its value (or, when it is
//! no path, unbinds the name: a stale value would name the wrong file); a loop over a literal
//! list binds the alternatives; parameters, `as` targets, imports and augmented assignments
//! unbind. And the listings: a folder read whole (`os.listdir(HERE)`), even an anchor.

use super::Pass;
use super::strings::{has_interpolation, one_line, string_value};
use crate::analyze::facts::PathRef;
use crate::analyze::paths::PathValue;
use tree_sitter::Node;

/// Calls that read a folder named by their first argument: every file under it.
const LISTINGS: &[&str] = &[
    "os.listdir",
    "listdir",
    "os.scandir",
    "scandir",
    "os.walk",
    "os.fwalk",
    "shutil.copytree",
    "copytree",
];
/// Methods that read the folder a path names (`Path.iterdir`, `Path.walk`).
const LISTING_METHODS: &[&str] = &["iterdir", "walk"];

/// How many items a loop's literal list may have to be bound as alternatives.
const MAX_ALTERNATIVES: usize = 32;

/// Whether `method` reads the folder it is called on (`.iterdir()`, `.walk()`).
pub(crate) fn is_listing_method(method: &str) -> bool {
    LISTING_METHODS.contains(&method)
}

/// Whether a call of `function` reads a folder whole: a listing call, or a listing method
/// (`.iterdir()`, `.walk()`) of whatever it is called on.
pub(super) fn is_listing(function: &str) -> bool {
    let last = function.rsplit('.').next().unwrap_or(function);
    LISTINGS.contains(&function) || (function.contains('.') && LISTING_METHODS.contains(&last))
}

/// What a loop over a literal list binds its name to: one of the items, an alternation
/// (`{a.json,b.json}`, in `paths::ALTERNATIVES`), when each is a plain file name (`Some`: a
/// string literal's value).
/// Items that are no plain file names (a `/`, a glob character) or anything else leave it
/// unknown.
pub(crate) fn loop_value(items: Vec<Option<String>>) -> Option<PathValue> {
    let mut plain: Vec<String> = Vec::new();
    for value in items {
        let value = value?;
        let ok = !value.is_empty()
            && value != "."
            && value != ".."
            && !value.contains(['/', '\\', '*', '?', '[', ']', '{', '}', ',']);
        if !ok {
            return None;
        }
        if !plain.contains(&value) {
            plain.push(value);
        }
    }
    if plain.is_empty() || plain.len() > MAX_ALTERNATIVES {
        return None;
    }
    let [open, next, close] = crate::analyze::paths::ALTERNATIVES;
    Some(PathValue::Relative(if plain.len() == 1 {
        plain.swap_remove(0)
    } else {
        format!("{open}{}{close}", plain.join(&next.to_string()))
    }))
}

impl Pass<'_> {
    /// The bindings other than plain assignments: loops, `:=`, parameters, `as` targets and
    /// augmented assignments (`p += "/x"`, not followed: unbound).
    pub(super) fn bind_other(&mut self, node: Node<'_>) {
        match node.kind() {
            "for_statement" | "for_in_clause" => self.bind_loop(node),
            "named_expression" => {
                if let Some(name) = node.child_by_field_name("name") {
                    self.bind(name, node.child_by_field_name("value"));
                }
            }
            "augmented_assignment" => {
                if let Some(left) = node.child_by_field_name("left") {
                    self.unbind(left);
                }
            }
            "parameters" | "lambda_parameters" | "as_pattern_target" => self.unbind(node),
            _ => {}
        }
    }

    /// `name = value`: a path value binds; anything else unbinds what the left side names.
    pub(super) fn bind(&mut self, left: Node<'_>, right: Option<Node<'_>>) {
        let value = right
            .filter(|_| left.kind() == "identifier")
            .and_then(|r| self.eval_raw(r));
        match value {
            Some(value) => {
                self.names.insert(self.text(left), value);
            }
            None => self.unbind(left),
        }
    }

    /// Every name a target binds (`a`, `a, b`, `[a, *b]`, `as (a, b)`) is no longer known.
    pub(super) fn unbind(&mut self, target: Node<'_>) {
        let mut stack = vec![target];
        while let Some(node) = stack.pop() {
            match node.kind() {
                "identifier" => {
                    self.names.remove(&self.text(node));
                }
                "pattern_list"
                | "tuple_pattern"
                | "list_pattern"
                | "list_splat_pattern"
                | "parenthesized_expression"
                | "tuple"
                | "list"
                | "as_pattern_target"
                | "parameters"
                | "lambda_parameters"
                | "typed_parameter"
                | "list_splat"
                | "dictionary_splat_pattern" => {
                    let mut cursor = node.walk();
                    stack.extend(node.named_children(&mut cursor));
                }
                "default_parameter" | "typed_default_parameter" => {
                    stack.extend(node.child_by_field_name("name"));
                }
                _ => {}
            }
        }
    }

    /// `for name in ["a.json", "b.json"]`: `name` is one of them, a glob alternation
    /// (`{a.json,b.json}`). Items that are no plain file names (a `/`, a glob character) or
    /// any other iterable leave it unknown.
    pub(super) fn bind_loop(&mut self, node: Node<'_>) {
        let Some(left) = node.child_by_field_name("left") else {
            return;
        };
        let value = node
            .child_by_field_name("right")
            .filter(|r| matches!(r.kind(), "list" | "tuple"))
            .and_then(|list| {
                let mut cursor = list.walk();
                let items: Vec<Option<String>> = list
                    .named_children(&mut cursor)
                    .map(|item| {
                        (item.kind() == "string" && !has_interpolation(item))
                            .then(|| string_value(item, self.source))
                    })
                    .collect();
                loop_value(items)
            });
        match value {
            Some(value) if left.kind() == "identifier" => {
                self.names.insert(self.text(left), value);
            }
            _ => self.unbind(left),
        }
    }

    /// `os.listdir(HERE)`, `DATA.iterdir()`: the folder is read whole, so it is recorded even
    /// where it is an anchor (the file's own folder) or a name.
    pub(super) fn listing(&mut self, call: Node<'_>, line: u32) {
        let Some(function) = call.child_by_field_name("function") else {
            return;
        };
        let name = self.text(function);
        let folder = if LISTINGS.contains(&name.as_str()) {
            call.child_by_field_name("arguments").and_then(|a| {
                let mut cursor = a.walk();
                a.named_children(&mut cursor)
                    .find(|c| c.kind() != "keyword_argument" && c.kind() != "comment")
            })
        } else if function.kind() == "attribute"
            && function
                .child_by_field_name("attribute")
                .is_some_and(|m| LISTING_METHODS.contains(&self.text(m).as_str()))
        {
            function.child_by_field_name("object")
        } else {
            None
        };
        let Some(value) = folder.and_then(|f| self.eval(f)) else {
            return;
        };
        // The folder itself: `.` names what is under it, an empty path names nothing.
        let value = match value {
            PathValue::File | PathValue::ModuleFile(_) => return,
            PathValue::FileDir(p) if p.is_empty() => PathValue::FileDir(".".into()),
            PathValue::Package { package, path } if path.is_empty() => PathValue::Package {
                package,
                path: ".".into(),
            },
            PathValue::ModuleDir { module, path } if path.is_empty() => PathValue::ModuleDir {
                module,
                path: ".".into(),
            },
            v => v,
        };
        if !value.is_specific() {
            return;
        }
        let text = one_line(&self.text(folder.unwrap_or(call)));
        self.facts.paths.push(PathRef { line, value, text });
    }
}
