//! Python source → facts, in one tree-sitter pass: every import (module level, in functions,
//! under `TYPE_CHECKING`, in both `try`/`except ImportError` branches), and the string literals
//! that may name a module or a file. Meaning (which file a name resolves to) is decided later,
//! in `graph`, because it depends on the rest of the tree.

use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use tree_sitter::{Node, Parser};

/// The grammar gate was built with; recorded in plans so a grammar bump invalidates caches.
pub const GRAMMAR: &str = "tree-sitter-python 0.25";

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Facts {
    pub imports: Vec<Import>,
    pub strings: Vec<StringRef>,
    /// Lines holding `ERROR`/`MISSING` nodes: what was recovered is kept, and the file is flagged.
    pub parse_errors: Vec<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Import {
    pub line: u32,
    /// Leading dots of a relative import; 0 for absolute.
    pub level: u32,
    /// `a.b` of `import a.b` or `from a.b import c`; empty for `from . import c`.
    pub module: String,
    /// The names of `from … import names` (`*` for a star import); empty for `import a.b`.
    pub names: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct StringRef {
    pub line: u32,
    pub value: String,
    pub context: StringContext,
}

/// Where a string stood: a module name given to an import function or `pytest_plugins` is a
/// module even without a dot; any other string must look like a dotted name or a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StringContext {
    Plain,
    ImportCall,
    PytestPlugins,
}

thread_local! {
    static PARSER: RefCell<Parser> = RefCell::new({
        let mut parser = Parser::new();
        parser
            .set_language(&tree_sitter_python::LANGUAGE.into())
            .expect("the bundled Python grammar matches the tree-sitter ABI");
        parser
    });
}

const IMPORT_FUNCTIONS: &[&str] = &["importlib.import_module", "import_module", "__import__"];

pub fn analyze(source: &[u8]) -> Facts {
    let tree = PARSER.with(|p| p.borrow_mut().parse(source, None));
    let mut facts = Facts::default();
    let Some(tree) = tree else {
        // The parser gives up only on cancellation or timeouts, neither of which gate sets.
        facts.parse_errors.push(1);
        return facts;
    };
    // An explicit stack, not recursion: deeply nested files must not overflow.
    let mut stack: Vec<(Node<'_>, StringContext)> = vec![(tree.root_node(), StringContext::Plain)];
    while let Some((node, context)) = stack.pop() {
        let line = node.start_position().row as u32 + 1;
        if node.is_error() || node.is_missing() {
            facts.parse_errors.push(line);
        }
        let mut child_context = context;
        match node.kind() {
            "import_statement" => {
                for name in node.children_by_field_name("name", &mut node.walk()) {
                    let dotted = if name.kind() == "aliased_import" {
                        name.child_by_field_name("name")
                    } else {
                        Some(name)
                    };
                    if let Some(dotted) = dotted {
                        facts.imports.push(Import {
                            line,
                            level: 0,
                            module: text(dotted, source),
                            names: Vec::new(),
                        });
                    }
                }
                continue;
            }
            "import_from_statement" => {
                facts.imports.push(from_import(node, source, line));
                continue;
            }
            "future_import_statement" => continue,
            "call" => {
                let function = node
                    .child_by_field_name("function")
                    .map(|f| text(f, source));
                if function.is_some_and(|f| IMPORT_FUNCTIONS.contains(&f.as_str()))
                    && let Some(first) = node
                        .child_by_field_name("arguments")
                        .and_then(|args| args.named_child(0))
                    && first.kind() == "string"
                {
                    push_string(&mut facts, first, source, StringContext::ImportCall);
                }
            }
            "assignment"
                if node
                    .child_by_field_name("left")
                    .is_some_and(|l| text(l, source) == "pytest_plugins") =>
            {
                child_context = StringContext::PytestPlugins;
            }
            "string" => {
                push_string(&mut facts, node, source, context);
                continue;
            }
            _ => {}
        }
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        stack.extend(children.into_iter().rev().map(|c| (c, child_context)));
    }
    facts.imports.sort();
    facts.imports.dedup();
    // A string given to an import function was also met as a plain string; keep the stronger one.
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
    facts.parse_errors.sort_unstable();
    facts.parse_errors.dedup();
    facts
}

fn from_import(node: Node<'_>, source: &[u8], line: u32) -> Import {
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

/// Keeps a literal string (f-strings are dynamic and are not names) that may name a module or a
/// file; prose and docstrings are dropped so plans stay small.
fn push_string(facts: &mut Facts, node: Node<'_>, source: &[u8], context: StringContext) {
    let mut cursor = node.walk();
    let mut value = String::new();
    for part in node.named_children(&mut cursor) {
        match part.kind() {
            "interpolation" => return,
            "string_content" => value.push_str(&text(part, source)),
            _ => {}
        }
    }
    let looks_like_name = !value.is_empty()
        && value.len() <= 256
        && value
            .chars()
            .all(|c| c.is_alphanumeric() || "._-/:+@".contains(c))
        && (context != StringContext::Plain || value.contains('.') || value.contains('/'));
    if looks_like_name {
        facts.strings.push(StringRef {
            line: node.start_position().row as u32 + 1,
            value,
            context,
        });
    }
}

fn text(node: Node<'_>, source: &[u8]) -> String {
    node.utf8_text(source).unwrap_or_default().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn imports(src: &str) -> Vec<(u32, u32, String, Vec<String>)> {
        analyze(src.as_bytes())
            .imports
            .into_iter()
            .map(|i| (i.line, i.level, i.module, i.names))
            .collect()
    }

    #[test]
    fn every_import_form() {
        let src = "import a.b.c\nimport a.b as x, d\nfrom e.f import g, h as i\nfrom .. import j\nfrom .k import *\n\
                   def f():\n    import l\nif TYPE_CHECKING:\n    import m\ntry:\n    import n\nexcept ImportError:\n    import o\n\
                   from __future__ import annotations\n";
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            imports(src),
            vec![
                (1, 0, "a.b.c".into(), vec![]),
                (2, 0, "a.b".into(), vec![]),
                (2, 0, "d".into(), vec![]),
                (3, 0, "e.f".into(), s(&["g", "h"])),
                (4, 2, "".into(), s(&["j"])),
                (5, 1, "k".into(), s(&["*"])),
                (7, 0, "l".into(), vec![]),
                (9, 0, "m".into(), vec![]),
                (11, 0, "n".into(), vec![]),
                (13, 0, "o".into(), vec![]),
            ]
        );
    }

    #[test]
    fn strings_that_may_name_modules_or_files() {
        let src = "importlib.import_module('plugins')\n__import__(\"x.y\")\npytest_plugins = ['fix']\n\
                   patch('shop.cart.total')\nopen('data/prices.json')\n\"\"\"A docstring, with words.\"\"\"\nf'{a}.b'\nname = 'plain'\n";
        let got: Vec<(u32, String, StringContext)> = analyze(src.as_bytes())
            .strings
            .into_iter()
            .map(|s| (s.line, s.value, s.context))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, "plugins".into(), StringContext::ImportCall),
                (2, "x.y".into(), StringContext::ImportCall),
                (3, "fix".into(), StringContext::PytestPlugins),
                (4, "shop.cart.total".into(), StringContext::Plain),
                (5, "data/prices.json".into(), StringContext::Plain),
            ]
        );
    }

    #[test]
    fn broken_file_keeps_what_was_recovered() {
        let facts = analyze(b"import good\ndef broken(:\n    pass\nfrom also import kept\n");
        assert!(!facts.parse_errors.is_empty());
        let modules: Vec<&str> = facts.imports.iter().map(|i| i.module.as_str()).collect();
        assert!(modules.contains(&"good"), "{modules:?}");
    }
}
