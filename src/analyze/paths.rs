//! Path expressions evaluated from the source text alone: `__file__` and its parents, `/` and
//! `os.path.join` joins, `Path(...)` wrappers, module-level names bound to paths, package
//! resources. An unknown part becomes `*`, so the value is a glob over what it can name.

use serde::{Deserialize, Serialize};
use std::cell::Cell;
use std::collections::BTreeMap;
use tree_sitter::Node;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "anchor", content = "path")]
pub(crate) enum PathValue {
    /// Relative to the repository root or to the file's folder (a literal says not which).
    Relative(String),
    /// Relative to the folder of the file that holds the expression (built from `__file__`).
    FileDir(String),
    /// The file itself (`__file__`).
    File,
    /// Inside a package's folder: `importlib.resources.files("pkg") / "x.json"`.
    Package { package: String, path: String },
    /// Another module's file (`jsonschema.__file__`, the module imported by that name).
    ModuleFile(String),
    /// Relative to the folder that holds another module's file (`Path(jsonschema.__file__)
    /// .parent.parent / "json"`): a package's own folder, or the folder a plain module is in.
    ModuleDir { module: String, path: String },
}

impl PathValue {
    /// The file's own folder or one above it (`Path(__file__).parent`, `ROOT`): an anchor other
    /// paths are built from, not a reference to everything below it.
    pub(crate) fn is_anchor(&self) -> bool {
        match self {
            PathValue::File | PathValue::ModuleFile(_) => true,
            PathValue::FileDir(p) | PathValue::ModuleDir { path: p, .. } => {
                p.split('/').all(|s| s.is_empty() || s == "..")
            }
            PathValue::Package { path, .. } => path.is_empty(),
            PathValue::Relative(p) => p.is_empty() || p == "." || p.split('/').all(|s| s == ".."),
        }
    }

    /// A glob must say something besides its wildcards: `"*/*"` (from `a + "/" + b`) names
    /// nothing in particular, so it is no reference.
    pub(crate) fn is_specific(&self) -> bool {
        match self {
            PathValue::Relative(p) => !p.contains('*') || p.chars().any(char::is_alphanumeric),
            _ => true,
        }
    }

    fn parent(self) -> Option<PathValue> {
        Some(match self {
            PathValue::File => PathValue::FileDir(String::new()),
            PathValue::FileDir(p) => PathValue::FileDir(up(&p)),
            PathValue::Relative(p) => PathValue::Relative(up(&p)),
            PathValue::Package { package, path } => PathValue::Package {
                package,
                path: up(&path),
            },
            PathValue::ModuleFile(module) => PathValue::ModuleDir {
                module,
                path: String::new(),
            },
            PathValue::ModuleDir { module, path } => PathValue::ModuleDir {
                module,
                path: up(&path),
            },
        })
    }

    fn join(self, rest: &str) -> Option<PathValue> {
        if rest.starts_with('/') || rest.starts_with('~') {
            return None; // absolute: outside the repository
        }
        let glue = |p: &str| {
            if p.is_empty() {
                rest.to_string()
            } else {
                format!("{p}/{rest}")
            }
        };
        Some(match self {
            PathValue::File | PathValue::ModuleFile(_) => return None,
            PathValue::FileDir(p) => PathValue::FileDir(glue(&p)),
            PathValue::Relative(p) => PathValue::Relative(glue(&p)),
            PathValue::Package { package, path } => PathValue::Package {
                package,
                path: glue(&path),
            },
            PathValue::ModuleDir { module, path } => PathValue::ModuleDir {
                module,
                path: glue(&path),
            },
        })
    }

    /// String concatenation: `HERE + "/data.json"`.
    fn concat(self, rest: &str) -> Option<PathValue> {
        Some(match self {
            PathValue::File | PathValue::ModuleFile(_) => return None,
            PathValue::FileDir(p) => PathValue::FileDir(format!("{p}{rest}")),
            PathValue::Relative(p) => PathValue::Relative(format!("{p}{rest}")),
            PathValue::Package { package, path } => PathValue::Package {
                package,
                path: format!("{path}{rest}"),
            },
            PathValue::ModuleDir { module, path } => PathValue::ModuleDir {
                module,
                path: format!("{path}{rest}"),
            },
        })
    }
}

/// `a/b` → `a`; `` → `..`; `..` → `../..`: lexical, so `FileDir` can climb above the file.
fn up(path: &str) -> String {
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() || trimmed == "." {
        return "..".into();
    }
    if trimmed.split('/').all(|s| s == "..") {
        return format!("{trimmed}/..");
    }
    trimmed
        .rsplit_once('/')
        .map_or(String::new(), |(d, _)| d.to_string())
}

const WRAPPERS: &[&str] = &[
    "Path",
    "pathlib.Path",
    "PurePath",
    "pathlib.PurePath",
    "PosixPath",
    "str",
    "os.fspath",
    "os.path.abspath",
    "os.path.realpath",
    "os.path.normpath",
    "path.abspath",
    "path.realpath",
];
const METHODS_KEEPING_PATH: &[&str] = &["resolve", "absolute", "expanduser"];
const RESOURCE_FILES: &[&str] = &[
    "importlib.resources.files",
    "importlib_resources.files",
    "resources.files",
    "files",
];
/// `(package, resource)` readers: `pkgutil.get_data("pkg", "data/x.json")`.
const RESOURCE_READERS: &[&str] = &[
    "pkgutil.get_data",
    "get_data",
    "importlib.resources.read_text",
    "importlib.resources.read_binary",
    "importlib.resources.open_text",
    "importlib.resources.open_binary",
    "importlib.resources.path",
    "resources.read_text",
    "resources.read_binary",
    "resources.open_text",
    "resources.open_binary",
    "resources.path",
    "pkg_resources.resource_filename",
    "pkg_resources.resource_string",
    "pkg_resources.resource_stream",
    "resource_filename",
    "resource_string",
];

/// How deep an expression is followed. Deeper ones (a generated `1+1+…` of thousands of
/// terms, thousands of nested parentheses) are not evaluated, and say so: recursion on input
/// depth would overflow the stack.
pub(crate) const MAX_DEPTH: u32 = 200;

/// The path `node` evaluates to, if it is a path expression, and whether the expression was
/// too deep to follow (then the value is `None`).
pub(crate) fn eval(
    node: Node<'_>,
    source: &[u8],
    names: &BTreeMap<String, PathValue>,
) -> (Option<PathValue>, bool) {
    let e = Eval {
        source,
        names,
        depth: Cell::new(0),
        too_deep: Cell::new(false),
    };
    let value = e.eval(node);
    (value, e.too_deep.get())
}

struct Eval<'s> {
    source: &'s [u8],
    names: &'s BTreeMap<String, PathValue>,
    depth: Cell<u32>,
    too_deep: Cell<bool>,
}

impl Eval<'_> {
    fn eval(&self, node: Node<'_>) -> Option<PathValue> {
        if self.depth.get() >= MAX_DEPTH {
            self.too_deep.set(true);
            return None;
        }
        self.depth.set(self.depth.get() + 1);
        let value = self.eval_here(node);
        self.depth.set(self.depth.get() - 1);
        value
    }

    fn eval_here(&self, node: Node<'_>) -> Option<PathValue> {
        let (source, names) = (self.source, self.names);
        let text = |n: Node<'_>| n.utf8_text(source).unwrap_or_default();
        match node.kind() {
            "string" => {
                // `f"{HERE}/data.json"`: a path-valued first interpolation anchors the rest.
                let mut cursor = node.walk();
                let parts: Vec<Node<'_>> = node
                    .named_children(&mut cursor)
                    .filter(|c| c.kind() != "string_start" && c.kind() != "string_end")
                    .collect();
                if let Some(first) = parts.first().filter(|c| c.kind() == "interpolation")
                    && let Some(anchor) = first
                        .named_child(0)
                        .and_then(|e| self.eval(e))
                        .filter(|v| !matches!(v, PathValue::Relative(_)))
                {
                    let rest: String = parts[1..]
                        .iter()
                        .map(|c| match c.kind() {
                            "string_content" => c.utf8_text(source).unwrap_or_default().to_string(),
                            _ => "*".to_string(),
                        })
                        .collect();
                    return anchor.concat(&rest);
                }
                Some(PathValue::Relative(self.literal(node)))
            }
            "concatenated_string" => Some(PathValue::Relative(self.literal(node))),
            "identifier" if text(node) == "__file__" => Some(PathValue::File),
            "identifier" => names.get(text(node)).cloned(),
            "parenthesized_expression" => self.eval(node.named_child(0)?),
            "attribute" => {
                let object = node.child_by_field_name("object")?;
                match text(node.child_by_field_name("attribute")?) {
                    "parent" => self.eval(object)?.parent(),
                    // `mod.__file__`: bound where `mod` was imported.
                    "__file__" => names.get(text(node)).cloned(),
                    _ => None,
                }
            }
            "subscript" => {
                // `Path(__file__).parents[2]`
                let value = node.child_by_field_name("value")?;
                let index: usize = text(node.child_by_field_name("subscript")?).parse().ok()?;
                if value.kind() != "attribute"
                    || text(value.child_by_field_name("attribute")?) != "parents"
                {
                    return None;
                }
                let mut out = self.eval(value.child_by_field_name("object")?)?;
                for _ in 0..=index {
                    out = out.parent()?;
                }
                Some(out)
            }
            "binary_operator" => {
                let left = node.child_by_field_name("left")?;
                let right = node.child_by_field_name("right")?;
                let op = text(node.child_by_field_name("operator")?);
                let l = self.eval(left);
                let r = self.part(right);
                match (op, l) {
                    ("/", Some(l)) => l.join(&r),
                    ("+", Some(l)) => l.concat(&r),
                    // `"data/" + name`: the unknown left part is a wildcard only when the right
                    // part says enough to name something.
                    ("+", None) if r.contains('/') => Some(PathValue::Relative(format!("*{r}"))),
                    _ => None,
                }
            }
            "call" => self.call(node),
            _ => None,
        }
    }

    fn call(&self, node: Node<'_>) -> Option<PathValue> {
        let source = self.source;
        let text = |n: Node<'_>| n.utf8_text(source).unwrap_or_default();
        let function = node.child_by_field_name("function")?;
        let name = text(function);
        let args: Vec<Node<'_>> = {
            let list = node.child_by_field_name("arguments")?;
            let mut cursor = list.walk();
            list.named_children(&mut cursor)
                .filter(|a| a.kind() != "keyword_argument" && a.kind() != "comment")
                .collect()
        };
        let first = || args.first().and_then(|a| self.eval(*a));
        let join_rest = |mut value: PathValue, rest: &[Node<'_>]| {
            for a in rest {
                value = value.join(&self.part(*a))?;
            }
            Some(value)
        };
        if WRAPPERS.contains(&name) {
            return join_rest(first()?, args.get(1..).unwrap_or_default());
        }
        match name {
            "os.path.dirname" | "path.dirname" | "dirname" => return first()?.parent(),
            "os.path.join" | "path.join" => {
                return join_rest(first()?, args.get(1..).unwrap_or_default());
            }
            _ => {}
        }
        if RESOURCE_FILES.contains(&name) {
            let package = args.first().filter(|a| a.kind() == "string")?;
            return Some(PathValue::Package {
                package: self.literal(*package),
                path: String::new(),
            });
        }
        if RESOURCE_READERS.contains(&name) && args.len() >= 2 && args[0].kind() == "string" {
            return PathValue::Package {
                package: self.literal(args[0]),
                path: String::new(),
            }
            .join(&self.part(args[1]));
        }
        // Methods on a path: `p.resolve()`, `p.joinpath("a", "b")`, `p.with_name("x.json")`.
        if function.kind() == "attribute" {
            let object = self.eval(function.child_by_field_name("object")?)?;
            let method = text(function.child_by_field_name("attribute")?);
            return match method {
                m if METHODS_KEEPING_PATH.contains(&m) => Some(object),
                "joinpath" => join_rest(object, &args),
                "with_name" => object.parent()?.join(&self.part(*args.first()?)),
                _ => None,
            };
        }
        None
    }

    /// A literal's text, with `*` for every interpolation an f-string has (or the path a name
    /// bound in the module holds, when it is a plain literal).
    fn literal(&self, node: Node<'_>) -> String {
        let source = self.source;
        let mut out = String::new();
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            match child.kind() {
                "string_content" => out.push_str(child.utf8_text(source).unwrap_or_default()),
                "string" => out.push_str(&self.literal(child)),
                "interpolation" => match child.named_child(0).and_then(|e| self.eval(e)) {
                    Some(PathValue::Relative(p)) => out.push_str(&p),
                    _ => out.push('*'),
                },
                _ => {}
            }
        }
        out
    }

    /// A join operand: its literal value, or `*` when it is computed.
    fn part(&self, node: Node<'_>) -> String {
        match self.eval(node) {
            Some(PathValue::Relative(p)) => p,
            _ => "*".into(),
        }
    }
}
