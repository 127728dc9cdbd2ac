//! Import calls: the modules `importlib.import_module`, `__import__`, `runpy.run_module` and
//! `pkgutil.walk_packages` load, read as exactly as the text says them — a literal name, a
//! literal start, or a name relative to the file's own module or package. Apart from the
//! other calls: placing a name built at run time is most of the work.

use super::Pass;
use super::strings::{has_interpolation, one_line, string_value};
use crate::analyze::facts::{Anchor, DynamicImport, StringContext};
use tree_sitter::Node;

/// Calls that import (or run) a module named by their first argument.
pub(super) const IMPORT_FUNCTIONS: &[&str] = &[
    "importlib.import_module",
    "import_module",
    "__import__",
    "importlib.__import__",
    "builtins.__import__",
    "runpy.run_module",
    "run_module",
];

impl Pass<'_> {
    /// A call of an import function: the module it loads, as exactly as the text says it —
    /// a literal name, a literal start, or a name relative to the file's own module or package
    /// (`import_module(".sub", __name__)`, `f"{__name__}.{x}"`, `__import__(x, globals(),
    /// level=1)`). What cannot be placed is recorded with no prefix and no anchor: unbounded,
    /// never dropped (the verdicts bound it by the tests that run this file: `may_load`).
    pub(super) fn import_call(
        &mut self,
        node: Node<'_>,
        function: &str,
        args: &[Node<'_>],
        line: u32,
    ) {
        if !IMPORT_FUNCTIONS.contains(&function) {
            return;
        }
        let Some(name) = self
            .argument(args, 0, "name")
            .or_else(|| self.argument(args, 0, "mod_name"))
        else {
            return;
        };
        let dunder = function.ends_with("__import__");
        let Some(mut found) = self.target(name, args, dunder) else {
            return;
        };
        if found
            .as_ref()
            .is_some_and(|(anchor, prefix, _)| anchor.is_none() && prefix.is_empty())
        {
            found = None;
        }
        let text = one_line(&self.text(node));
        let Some((anchor, prefix, exact)) = found else {
            self.dynamic(line, text, None, String::new(), false);
            return;
        };
        let fromlist = self
            .argument(args, 3, "fromlist")
            .filter(|_| dunder && exact);
        let subs = fromlist.map_or_else(Vec::new, |l| self.fromlist(l));
        for sub in &subs {
            let name = match sub {
                Some(sub) => format!("{prefix}.{sub}"),
                None => format!("{prefix}."),
            };
            self.module(line, &text, anchor, name, sub.is_some());
        }
        self.module(line, &text, anchor, prefix, exact);
    }

    /// Argument `at` of a call, else its keyword argument `name` (splats are neither).
    fn argument<'t>(&self, args: &[Node<'t>], at: usize, name: &str) -> Option<Node<'t>> {
        args.iter()
            .copied()
            .filter(|a| {
                !matches!(
                    a.kind(),
                    "keyword_argument" | "list_splat" | "dictionary_splat"
                )
            })
            .nth(at)
            .or_else(|| {
                args.iter()
                    .filter(|a| a.kind() == "keyword_argument")
                    .find(|a| {
                        a.child_by_field_name("name")
                            .is_some_and(|n| self.text(n) == name)
                    })
                    .and_then(|a| a.child_by_field_name("value"))
            })
    }

    /// Where the module `name` of an import call lands: none when it is the file itself
    /// (`import_module(__name__)`: nothing to record), `Some(None)` when it cannot be placed.
    fn target(&self, name: Node<'_>, args: &[Node<'_>], dunder: bool) -> Option<Option<Target>> {
        let (lead, prefix, exact) = self.module_name(name);
        Some(match lead {
            Lead::Own | Lead::Package => match prefix.strip_prefix('.') {
                Some(rest) => Some((
                    Some(Anchor {
                        own_module: lead == Lead::Own,
                        up: 0,
                    }),
                    rest.to_string(),
                    exact,
                )),
                // `__name__` alone is the file itself; `f"{__name__}{x}"` is unbounded.
                None if prefix.is_empty() && exact => return None,
                None => None,
            },
            Lead::Literal if prefix.starts_with('.') => {
                let dots = prefix.chars().take_while(|&c| c == '.').count() as u32;
                let rest = prefix[dots as usize..].to_string();
                let package = self.argument(args, 1, "package");
                match (dunder, package.and_then(|p| self.literal(p))) {
                    (false, Some(package)) => {
                        absolute(&package, dots, &rest).map(|p| (None, p, exact))
                    }
                    _ => self
                        .relative_to(args, dunder, dots)
                        .map(|a| (Some(a), rest, exact)),
                }
            }
            Lead::Literal if dunder => {
                match self.argument(args, 4, "level").map(|l| self.text(l)) {
                    None => Some((None, prefix, exact)),
                    Some(level) if level == "0" => Some((None, prefix, exact)),
                    Some(level) => match level.parse::<u32>() {
                        Ok(n) => self
                            .relative_to(args, dunder, n)
                            .map(|a| (Some(a), prefix, exact)),
                        Err(_) => None,
                    },
                }
            }
            Lead::Literal => Some((None, prefix, exact)),
        })
    }

    /// The package a name with leading dots (or `__import__`'s level) is resolved in.
    fn relative_to(&self, args: &[Node<'_>], dunder: bool, dots: u32) -> Option<Anchor> {
        if dunder {
            // `__import__` resolves in the caller's package, as `globals()` gives it.
            let globals_ok = self
                .argument(args, 1, "globals")
                .is_none_or(|g| self.text(g) == "globals()");
            return globals_ok.then_some(Anchor {
                own_module: false,
                up: dots.saturating_sub(1),
            });
        }
        let package = self.argument(args, 1, "package")?;
        self.anchor_of(package).map(|own_module| Anchor {
            own_module,
            up: dots.saturating_sub(1),
        })
    }

    /// `__import__("pkg", fromlist=["a"])` also loads `pkg.a` when it is a submodule: each
    /// literal name, or none for a name not known (any submodule).
    fn fromlist(&self, list: Node<'_>) -> Vec<Option<String>> {
        if matches!(list.kind(), "list" | "tuple") {
            let mut cursor = list.walk();
            return list
                .named_children(&mut cursor)
                .map(|item| self.literal(item).filter(|n| n != "*"))
                .filter(|n| n.as_deref() != Some(""))
                .collect();
        }
        if self.text(list) == "None" {
            Vec::new()
        } else {
            vec![None]
        }
    }

    /// `pkgutil.walk_packages(path, prefix)` imports every package under `path` to recurse,
    /// by `prefix` + its name: the modules under the prefix (`"lib."`, `__name__ + "."`), or
    /// unbounded when the prefix is not known.
    pub(super) fn walk_packages(&mut self, node: Node<'_>, args: &[Node<'_>], line: u32) {
        let prefix = args
            .iter()
            .filter(|a| a.kind() != "keyword_argument")
            .nth(1)
            .copied()
            .or_else(|| {
                args.iter()
                    .filter(|a| a.kind() == "keyword_argument")
                    .find(|a| {
                        a.child_by_field_name("name")
                            .is_some_and(|n| self.text(n) == "prefix")
                    })
                    .and_then(|a| a.child_by_field_name("value"))
            });
        let text = one_line(&self.text(node));
        let placed = prefix
            .map(|p| self.module_name(p))
            .and_then(|(lead, name, _)| match lead {
                Lead::Literal if !name.is_empty() && !name.starts_with('.') => Some((None, name)),
                Lead::Own | Lead::Package => name.strip_prefix('.').map(|rest| {
                    let own_module = lead == Lead::Own;
                    (Some(Anchor { own_module, up: 0 }), rest.to_string())
                }),
                Lead::Literal => None,
            });
        match placed {
            Some((anchor, name)) => self.dynamic(line, text, anchor, name, false),
            None => self.dynamic(line, text, None, String::new(), false),
        }
    }

    /// One module an import call loads (`exact`) or may load (a prefix of its name).
    fn module(&mut self, line: u32, text: &str, anchor: Option<Anchor>, name: String, exact: bool) {
        if anchor.is_none() && exact {
            self.push(line, name, StringContext::ImportCall);
        } else {
            self.dynamic(line, text.to_string(), anchor, name, exact);
        }
    }

    pub(super) fn dynamic(
        &mut self,
        line: u32,
        text: String,
        anchor: Option<Anchor>,
        prefix: String,
        exact: bool,
    ) {
        self.facts.dynamic_imports.push(DynamicImport {
            line,
            prefix,
            text,
            anchor,
            exact,
        });
    }

    /// Whether a package argument is the file's own module (`__name__`: true), its package
    /// (`__package__`, `__spec__.parent`: false), or something else (none).
    fn anchor_of(&self, node: Node<'_>) -> Option<bool> {
        match self.text(node).as_str() {
            "__name__" | "__spec__.name" => Some(true),
            "__package__" | "__spec__.parent" => Some(false),
            _ => None,
        }
    }

    /// A plain string literal's value (no interpolation, no escape).
    fn literal(&self, node: Node<'_>) -> Option<String> {
        (node.kind() == "string" && !has_interpolation(node))
            .then(|| string_value(node, self.source))
            .filter(|v| !v.contains('\\'))
    }

    /// What the text says of a module name built at run time: whether it starts with the
    /// file's own module or package name, its literal start after that, and whether that is
    /// all of it. `f"shop.plugins.{x}"`, `"shop.plugins." + x`, `"shop.fmt_%s" % x`,
    /// `"shop.{}".format(x)`, `f"{__name__}.{x}"`, `__name__ + "." + x`. A `+` chain is
    /// flattened in a loop (a generated chain of thousands must not recurse); any other
    /// operator, method or escape ends the literal start where it stands.
    fn module_name(&self, node: Node<'_>) -> (Lead, String, bool) {
        let mut operands = Vec::new();
        let mut right = Vec::new();
        let mut at = node;
        loop {
            match at.kind() {
                "binary_operator"
                    if at
                        .child_by_field_name("operator")
                        .is_some_and(|o| self.text(o) == "+") =>
                {
                    match (
                        at.child_by_field_name("left"),
                        at.child_by_field_name("right"),
                    ) {
                        (Some(l), Some(r)) => {
                            right.push(r);
                            at = l;
                        }
                        _ => break,
                    }
                }
                "parenthesized_expression" => match at.named_child(0) {
                    Some(inner) => at = inner,
                    None => break,
                },
                _ => break,
            }
        }
        operands.push(at);
        operands.extend(right.into_iter().rev());
        let mut lead = Lead::Literal;
        let mut out = String::new();
        for (i, operand) in operands.iter().enumerate() {
            let piece = self.name_piece(*operand, i == 0);
            if i == 0
                && let Some(l) = piece.lead
            {
                lead = l;
            }
            out.push_str(&piece.text);
            if !piece.whole {
                return (lead, cut(&out), false);
            }
        }
        (lead, out, true)
    }

    /// One operand of a module name: its literal text up to the first unknown, whether that
    /// was all of it, and (first operand only) a leading `__name__`/`__package__`.
    fn name_piece(&self, node: Node<'_>, first: bool) -> Piece {
        match node.kind() {
            "string" => self.string_piece(node, first),
            "binary_operator"
                if node
                    .child_by_field_name("operator")
                    .is_some_and(|o| self.text(o) == "%") =>
            {
                let text = node
                    .child_by_field_name("left")
                    .and_then(|l| self.literal(l))
                    .map(|t| cut(&t))
                    .unwrap_or_default();
                Piece {
                    lead: None,
                    text,
                    whole: false,
                }
            }
            "call" => self.format_piece(node),
            _ => match first.then(|| self.anchor_of(node)).flatten() {
                Some(own) => Piece {
                    lead: Some(if own { Lead::Own } else { Lead::Package }),
                    text: String::new(),
                    whole: true,
                },
                None => Piece {
                    lead: None,
                    text: String::new(),
                    whole: false,
                },
            },
        }
    }

    /// A string operand: its literal text, with a leading `{__name__}`/`{__package__}` of an
    /// f-string as its lead (first operand only).
    fn string_piece(&self, node: Node<'_>, first: bool) -> Piece {
        let anchored = |n: Node<'_>| first.then(|| self.anchor_of(n)).flatten();
        let mut cursor = node.walk();
        let mut piece = Piece {
            lead: None,
            text: String::new(),
            whole: true,
        };
        for (k, part) in node.named_children(&mut cursor).enumerate() {
            match part.kind() {
                "string_content" => piece.text.push_str(&self.text(part)),
                "interpolation" => {
                    let own = part.child_by_field_name("expression").and_then(&anchored);
                    match own {
                        Some(own) if k <= 1 && piece.text.is_empty() && piece.lead.is_none() => {
                            piece.lead = Some(if own { Lead::Own } else { Lead::Package });
                        }
                        _ => {
                            piece.whole = false;
                            break;
                        }
                    }
                }
                "string_start" | "string_end" => {}
                _ => {
                    piece.whole = false;
                    break;
                }
            }
        }
        if piece.text.contains(['\\', '{', '}']) {
            piece.text = cut(&piece.text);
            piece.whole = false;
        }
        piece
    }

    /// A call operand: the literal start of a `"….{}".format(…)` template, never all of it.
    fn format_piece(&self, node: Node<'_>) -> Piece {
        let function = node.child_by_field_name("function");
        let text = function
            .filter(|f| f.kind() == "attribute")
            .filter(|f| {
                f.child_by_field_name("attribute")
                    .is_some_and(|a| self.text(a) == "format")
            })
            .and_then(|f| f.child_by_field_name("object"))
            .and_then(|o| self.literal(o))
            .map(|t| cut(&t))
            .unwrap_or_default();
        Piece {
            lead: None,
            text,
            whole: false,
        }
    }
}

/// A module an import call names: its anchor (none: an absolute name), its name or the start
/// of it, and whether that is all of it.
type Target = (Option<Anchor>, String, bool);

/// Where a module name built at run time starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lead {
    Literal,
    /// `__name__`: the file's own module.
    Own,
    /// `__package__`: the file's package.
    Package,
}

struct Piece {
    lead: Option<Lead>,
    text: String,
    whole: bool,
}

/// A literal start ends before the first character that formats or escapes (`%`, `{`, `\\`):
/// what follows it is not known.
fn cut(text: &str) -> String {
    let end = text.find(['%', '{', '}', '\\']).unwrap_or(text.len());
    text[..end].to_string()
}

/// A relative name resolved in a literal package (`import_module("..x", "a.b.c")` is `a.b.x`):
/// none when the dots climb past the package's top.
fn absolute(package: &str, dots: u32, rest: &str) -> Option<String> {
    let mut parts: Vec<&str> = package.split('.').filter(|p| !p.is_empty()).collect();
    for _ in 1..dots {
        parts.pop()?;
    }
    if parts.is_empty() {
        return None;
    }
    let base = parts.join(".");
    Some(if rest.is_empty() {
        base
    } else {
        format!("{base}.{rest}")
    })
}
