//! A JavaScript or TypeScript configuration file read as literals, as gate reads every
//! configuration it bounds a change with: objects, arrays, strings, regular expressions,
//! booleans, numbers, the paths of `path.resolve(__dirname, …)`, `fileURLToPath(new URL(…,
//! import.meta.url))` and `import.meta.dirname`, and `const` names bound to one of those; the
//! exported value seen through `defineConfig`, `defineProject` and `defineWorkspace`. Anything
//! else is `Unknown` with its text, and a key gate needs that holds one is a refusal naming the
//! file and the key.

use super::analyze::Dialect;
use crate::analyze::paths::PathValue;
use std::collections::BTreeMap;
use tree_sitter::Node;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Lit {
    Str(String),
    /// A folder or file of the tree, repository-relative.
    Path(String),
    Regex(String),
    Bool(bool),
    Num,
    Arr(Vec<Lit>),
    Obj(Vec<(String, Lit)>),
    Unknown(String),
}

impl Lit {
    /// The value of `key` (dotted: `test.include`), if the object holds it.
    pub(super) fn get(&self, key: &str) -> Option<&Lit> {
        let mut at = self;
        for part in key.split('.') {
            let Lit::Obj(entries) = at else {
                return None;
            };
            at = entries
                .iter()
                .rev()
                .find(|(k, _)| k == part)
                .map(|(_, v)| v)?;
        }
        Some(at)
    }

    /// Its strings: a string, or an array of them (a tree path written relative to `dir`, the
    /// configuration's project); `Err` with the text of a value that is neither.
    pub(super) fn strings(&self, dir: &str) -> Result<Vec<String>, String> {
        match self {
            Lit::Str(s) => Ok(vec![s.clone()]),
            Lit::Path(p) => Ok(vec![from(dir, p)]),
            Lit::Arr(items) => items
                .iter()
                .map(|i| match i {
                    Lit::Str(s) => Ok(s.clone()),
                    Lit::Path(p) => Ok(from(dir, p)),
                    other => Err(other.text()),
                })
                .collect(),
            other => Err(other.text()),
        }
    }

    /// As the file wrote it, near enough to find it there.
    pub(super) fn text(&self) -> String {
        match self {
            Lit::Unknown(t) => t.clone(),
            Lit::Str(s) => format!("'{s}'"),
            Lit::Path(p) => format!("'{p}'"),
            Lit::Regex(r) => format!("/{r}/"),
            Lit::Bool(b) => b.to_string(),
            Lit::Num => "a number".to_string(),
            Lit::Arr(items) => format!(
                "[{}]",
                items.iter().map(Lit::text).collect::<Vec<_>>().join(", ")
            ),
            Lit::Obj(entries) => format!(
                "{{ {} }}",
                entries
                    .iter()
                    .map(|(k, v)| match v {
                        Lit::Unknown(t) if k == "*" => t.clone(),
                        v => format!("{k}: {}", v.text()),
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// Whether gate could read it whole.
    pub(super) fn is_known(&self) -> bool {
        match self {
            Lit::Unknown(_) => false,
            Lit::Arr(items) => items.iter().all(Lit::is_known),
            Lit::Obj(entries) => entries.iter().all(|(_, v)| v.is_known()),
            _ => true,
        }
    }
}

/// The tree path `path` written relative to the folder `dir` (`./x`, `../x`).
fn from(dir: &str, path: &str) -> String {
    if let Some(rest) = super::config::under(dir, path) {
        return format!("./{rest}");
    }
    let up = if dir.is_empty() {
        0
    } else {
        dir.split('/').count()
    };
    format!("{}{path}", "../".repeat(up))
}

/// The exported configuration of the file `path` (its text `bytes`): `export default …` or
/// `module.exports = …`, seen through `defineConfig(…)` and its kin.
pub(super) fn exported(path: &str, bytes: &[u8], defaults: &Defaults) -> Lit {
    let Some(tree) = super::analyze::parse(Dialect::of(path), bytes) else {
        return Lit::Unknown("the file does not parse".into());
    };
    let reader = Reader {
        src: bytes,
        file: path,
        bindings: bindings(&tree, bytes),
        defaults,
    };
    let root = tree.root_node();
    let mut cursor = root.walk();
    let mut found = None;
    for statement in root.named_children(&mut cursor) {
        match statement.kind() {
            "export_statement" => {
                let default = {
                    let mut c = statement.walk();
                    statement
                        .children(&mut c)
                        .any(|n| !n.is_named() && n.kind() == "default")
                };
                if let Some(value) = statement.child_by_field_name("value").filter(|_| default) {
                    found = Some(reader.value(value, 0));
                }
            }
            "expression_statement" => {
                let Some(assign) = statement
                    .named_child(0)
                    .filter(|n| n.kind() == "assignment_expression")
                else {
                    continue;
                };
                let left = assign.child_by_field_name("left").map(|l| reader.text(l));
                if left == Some("module.exports")
                    && let Some(right) = assign.child_by_field_name("right")
                {
                    found = Some(reader.value(right, 0));
                }
            }
            _ => {}
        }
    }
    found.unwrap_or_else(|| Lit::Unknown("no `export default` or `module.exports`".into()))
}

/// A JSON file's value (`jest.config.json`, `package.json`'s `jest`).
pub(super) fn of_json(value: &serde_json::Value) -> Lit {
    match value {
        serde_json::Value::String(s) => Lit::Str(s.clone()),
        serde_json::Value::Bool(b) => Lit::Bool(*b),
        serde_json::Value::Number(_) => Lit::Num,
        serde_json::Value::Null => Lit::Unknown("null".into()),
        serde_json::Value::Array(items) => Lit::Arr(items.iter().map(of_json).collect()),
        serde_json::Value::Object(map) => {
            Lit::Obj(map.iter().map(|(k, v)| (k.clone(), of_json(v))).collect())
        }
    }
}

/// Top-level `const NAME = …` declarations, for the values that name them.
fn bindings<'t>(tree: &'t tree_sitter::Tree, src: &[u8]) -> BTreeMap<String, Node<'t>> {
    let mut out = BTreeMap::new();
    let root = tree.root_node();
    let mut cursor = root.walk();
    for statement in root.named_children(&mut cursor) {
        if statement.kind() != "lexical_declaration" {
            continue;
        }
        let mut inner = statement.walk();
        for declarator in statement.named_children(&mut inner) {
            let (Some(name), Some(value)) = (
                declarator.child_by_field_name("name"),
                declarator.child_by_field_name("value"),
            ) else {
                continue;
            };
            if let Ok(name) = name.utf8_text(src) {
                out.insert(name.to_string(), value);
            }
        }
    }
    out
}

/// How deep a value is read: past it, unknown.
const MAX_DEPTH: usize = 32;

struct Reader<'s, 't> {
    src: &'s [u8],
    file: &'s str,
    bindings: BTreeMap<String, Node<'t>>,
    defaults: &'s Defaults,
}

/// Vitest's default test globs, which `vitest/config` exports by name: they changed with its
/// major version.
pub(super) struct Defaults {
    pub include: &'static str,
    pub exclude: &'static [&'static str],
}

/// Vitest 4's defaults: only installed packages and git's folder are left out.
pub(super) const VITEST_4: Defaults = Defaults {
    include: "**/*.{test,spec}.?(c|m)[jt]s?(x)",
    exclude: &["**/node_modules/**", "**/.git/**"],
};

/// Vitest 1 to 3's: builds, Cypress's folders, tools' caches and configuration files too.
pub(super) const VITEST_3: Defaults = Defaults {
    include: "**/*.{test,spec}.?(c|m)[jt]s?(x)",
    exclude: &[
        "**/node_modules/**",
        "**/dist/**",
        "**/cypress/**",
        "**/.{idea,git,cache,output,temp}/**",
        "**/{karma,rollup,webpack,vite,vitest,jest,ava,babel,nyc,cypress,tsup,build,eslint,prettier}.config.*",
    ],
};

impl Reader<'_, '_> {
    fn text(&self, node: Node<'_>) -> &str {
        std::str::from_utf8(&self.src[node.byte_range()]).unwrap_or_default()
    }

    fn unknown(&self, node: Node<'_>) -> Lit {
        Lit::Unknown(self.text(node).chars().take(120).collect())
    }

    fn value(&self, node: Node<'_>, depth: usize) -> Lit {
        if depth > MAX_DEPTH {
            return self.unknown(node);
        }
        let next = depth + 1;
        match node.kind() {
            "string" => {
                let t = self.text(node);
                Lit::Str(
                    t.get(1..t.len().saturating_sub(1))
                        .unwrap_or_default()
                        .to_string(),
                )
            }
            "template_string" => {
                let mut c = node.walk();
                if node
                    .named_children(&mut c)
                    .any(|n| n.kind() == "template_substitution")
                {
                    return self.unknown(node);
                }
                let t = self.text(node);
                Lit::Str(
                    t.get(1..t.len().saturating_sub(1))
                        .unwrap_or_default()
                        .to_string(),
                )
            }
            "regex" => {
                let pattern = node
                    .child_by_field_name("pattern")
                    .map_or("", |p| self.text(p));
                Lit::Regex(pattern.to_string())
            }
            "true" => Lit::Bool(true),
            "false" => Lit::Bool(false),
            "number" => Lit::Num,
            "array" => {
                let mut c = node.walk();
                let mut items = Vec::new();
                for item in node
                    .named_children(&mut c)
                    .filter(|n| n.kind() != "comment")
                {
                    match (item.kind(), self.value(item, next)) {
                        // `[...configDefaults.exclude, 'e2e/**']`: a known list spread in.
                        ("spread_element", Lit::Arr(spread)) => items.extend(spread),
                        (_, value) => items.push(value),
                    }
                }
                Lit::Arr(items)
            }
            "spread_element" => match node.named_child(0) {
                Some(inner) => match self.value(inner, next) {
                    known @ Lit::Arr(_) => known,
                    _ => self.unknown(node),
                },
                None => self.unknown(node),
            },

            "object" => self.object(node, next),
            "parenthesized_expression" | "as_expression" | "satisfies_expression" => node
                .named_child(0)
                .map_or_else(|| self.unknown(node), |n| self.value(n, next)),
            "identifier" => match self.bindings.get(self.text(node)) {
                Some(bound) => self.value(*bound, next),
                None => self.constant(node),
            },
            "member_expression" => self.constant(node),
            "call_expression" => self.call(node, next),
            _ => match self.path(node) {
                Some(path) => Lit::Path(path),
                None => self.unknown(node),
            },
        }
    }

    /// Vitest's own defaults by the names `vitest/config` exports (`configDefaults.exclude`,
    /// `defaultExclude`, `defaultInclude`), as the project's Vitest has them.
    fn constant(&self, node: Node<'_>) -> Lit {
        let strings =
            |list: &[&str]| Lit::Arr(list.iter().map(|s| Lit::Str(s.to_string())).collect());
        match self.text(node) {
            "configDefaults.exclude" | "defaultExclude" => strings(self.defaults.exclude),
            "configDefaults.include" | "defaultInclude" => strings(&[self.defaults.include]),
            _ => match self.path(node) {
                Some(path) => Lit::Path(path),
                None => self.unknown(node),
            },
        }
    }

    fn object(&self, node: Node<'_>, next: usize) -> Lit {
        let mut entries = Vec::new();
        let mut c = node.walk();
        for pair in node.named_children(&mut c) {
            match pair.kind() {
                "pair" => {
                    let (Some(key), Some(value)) = (
                        pair.child_by_field_name("key"),
                        pair.child_by_field_name("value"),
                    ) else {
                        continue;
                    };
                    let key = match key.kind() {
                        "string" => {
                            let t = self.text(key);
                            t.get(1..t.len().saturating_sub(1))
                                .unwrap_or_default()
                                .to_string()
                        }
                        "property_identifier" | "number" => self.text(key).to_string(),
                        // A computed key: what it names is not known, nor what it sets.
                        _ => {
                            entries.push(("*".to_string(), self.unknown(pair)));
                            continue;
                        }
                    };
                    entries.push((key, self.value(value, next)));
                }
                "shorthand_property_identifier" => {
                    let name = self.text(pair).to_string();
                    let value = match self.bindings.get(&name) {
                        Some(bound) => self.value(*bound, next),
                        None => self.unknown(pair),
                    };
                    entries.push((name, value));
                }
                "comment" => {}
                // A spread or a method: any key may be set by it.
                _ => entries.push(("*".to_string(), self.unknown(pair))),
            }
        }
        Lit::Obj(entries)
    }

    fn call(&self, node: Node<'_>, next: usize) -> Lit {
        let function = node.child_by_field_name("function").map(|f| self.text(f));
        let first = node
            .child_by_field_name("arguments")
            .and_then(|a| a.named_child(0));
        match (function, first) {
            (Some("defineConfig" | "defineProject" | "defineWorkspace"), Some(arg)) => {
                self.value(arg, next)
            }
            _ => match self.path(node) {
                Some(path) => Lit::Path(path),
                None => self.unknown(node),
            },
        }
    }

    /// A path expression's repository path (`path.resolve(__dirname, "src")`).
    fn path(&self, node: Node<'_>) -> Option<String> {
        let facts = super::analyze::analyze(
            Dialect::of(self.file),
            format!("const __gate_path = {};", self.text(node)).as_bytes(),
        );
        let value = facts.paths.first().map(|p| &p.value)?;
        let dir = crate::path::parent(self.file);
        let path = match value {
            PathValue::FileDir(p) => crate::path::join(dir, p),
            PathValue::File => self.file.to_string(),
            // `resolve('./src')`: from the working folder, where the runner reads its
            // configuration (the configuration's own folder).
            PathValue::Relative(p) => crate::path::join(dir, p),
            _ => return None,
        };
        (!path.contains(['*', '?', '[', '{'])).then(|| crate::path::normalize(&path))
    }
}
