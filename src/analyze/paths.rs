//! Path expressions evaluated from the source text alone: `__file__` and its parents, `/` and
//! `os.path.join` joins, `Path(...)` wrappers, module-level names bound to paths, package
//! resources, `%` and `.format` templates, names bound by loops over literal lists. An unknown
//! part is kept as a marker while the value is built, then sealed into a glob that covers
//! whatever it may hold — a `/` too: `data/{name}.json` is `data/**/*.json`, and an unknown
//! folder under a literal tail (`settings.BASE / "x.json"`) is `**/x.json`.

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

/// An unknown part while a value is built: replaced by `seal` with the glob that covers it.
pub(crate) const UNKNOWN: char = '\u{1}';

impl PathValue {
    fn path_mut(&mut self) -> Option<&mut String> {
        match self {
            PathValue::File | PathValue::ModuleFile(_) => None,
            PathValue::Relative(p) | PathValue::FileDir(p) => Some(p),
            PathValue::Package { path, .. } | PathValue::ModuleDir { path, .. } => Some(path),
        }
    }

    /// The value with its unknown parts as globs: what facts record.
    pub(crate) fn seal(mut self) -> PathValue {
        // Only text may start with a folder not known here; the others start at a known one.
        let text = matches!(self, PathValue::Relative(_));
        if let Some(p) = self.path_mut()
            && p.contains(UNKNOWN)
        {
            *p = seal(p, text);
        }
        self
    }

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

    /// String concatenation: `HERE + "/data.json"`. Onto a folder itself, a leading `/` is
    /// the separator; anything else names a sibling whose name starts with the folder's
    /// (`HERE + "_old"`), a name not known here.
    fn concat(mut self, rest: &str) -> Option<PathValue> {
        let text = matches!(self, PathValue::Relative(_));
        let path = self.path_mut()?;
        let folder =
            (path.is_empty() && !text) || matches!(path.rsplit('/').next(), Some(".." | "."));
        match rest.strip_prefix('/') {
            // `HERE + os.sep`: inside the folder, ready for a name.
            Some("") if path.is_empty() && !text => *path = "./".to_string(),
            Some(inside) if path.is_empty() && !text => *path = inside.to_string(),
            None if folder => {
                let sep = if path.is_empty() { "" } else { "/" };
                path.push_str(&format!("{sep}../{UNKNOWN}{rest}"));
            }
            _ => path.push_str(rest),
        }
        Some(self)
    }
}

/// A path with unknown parts as the glob that covers every value they may hold, `/` included
/// (an unknown part is taken to go down, not up: a name, not `../x`): an unknown followed by
/// `..` is a folder at or under the parent; a whole unknown segment is `**` (or `*` last, where
/// a folder matched names what is under it); `pre?post` is `pre*post` or `pre*/**/*post`.
fn seal(path: &str, text: bool) -> String {
    let u = UNKNOWN.to_string();
    let mut segments: Vec<String> = Vec::new();
    for (k, seg) in path.split('/').enumerate() {
        let first = text && segments.len() == 1;
        match segments.last_mut() {
            _ if seg == "." || (seg.is_empty() && k > 0) => {}
            // An unknown first part is a folder anywhere: its parent is one too.
            Some(last) if seg == ".." && last.contains(UNKNOWN) && first => {
                *last = u.clone();
            }
            // `x/?/..` is `x/..` (`?` may be `.`) or a folder below `x`: `x/../**`.
            Some(last) if seg == ".." && last.contains(UNKNOWN) => {
                *last = "..".to_string();
                segments.push(u.clone());
            }
            _ => segments.push(seg.to_string()),
        }
    }
    let n = segments.len();
    let mut out: Vec<String> = Vec::with_capacity(n);
    for (k, seg) in segments.iter().enumerate() {
        let last = k + 1 == n;
        let glob = if !seg.contains(UNKNOWN) {
            seg.clone()
        } else {
            let pre = &seg[..seg.find(UNKNOWN).unwrap_or(0)];
            let post = &seg[seg.rfind(UNKNOWN).map_or(0, |i| i + UNKNOWN.len_utf8())..];
            let core = format!("{pre}*{post}");
            match (pre.is_empty(), post.is_empty()) {
                (true, true) if last => "*".to_string(),
                (true, true) => "**".to_string(),
                (false, true) if last => core,
                (false, true) => format!("{core}/**"),
                (true, false) => format!("**/{core}"),
                (false, false) => format!("{{{core},{pre}*/**/*{post}}}"),
            }
        };
        if glob == "**" && out.last().is_some_and(|l| l == "**") {
            continue;
        }
        out.push(glob);
    }
    out.join("/")
}

/// Whether a part says something: more than unknowns and separators.
fn known(part: &str) -> bool {
    part.chars().any(|c| c != UNKNOWN && c != '/' && c != '.')
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

/// Calls that make or name a temporary folder: outside the repository.
const TEMPORARY: &[&str] = &[
    "tempfile.mkdtemp",
    "tempfile.gettempdir",
    "mkdtemp",
    "gettempdir",
    "tmp_path_factory.mktemp",
    "tmpdir_factory.mktemp",
];

/// A folder outside the repository: a join onto it names nothing.
fn outside() -> PathValue {
    PathValue::Relative("/tmp".into())
}

/// A piece of a template: its text, or a hole's value (`None`: not known here).
enum Chunk {
    Text(String),
    Value(Option<PathValue>),
}

/// A template filled in: a path-valued first hole anchors the rest (`f"{HERE}/x.json"`); else
/// it is text, with known text holes in place and unknown ones marked.
fn assemble(chunks: Vec<Chunk>) -> Option<PathValue> {
    let mut chunks = chunks
        .into_iter()
        .filter(|c| !matches!(c, Chunk::Text(t) if t.is_empty()));
    let mut out = String::new();
    let mut anchor = None;
    let push = |out: &mut String, chunk: Chunk| match chunk {
        Chunk::Text(t) => out.push_str(&t),
        Chunk::Value(Some(PathValue::Relative(p))) => out.push_str(&p),
        Chunk::Value(_) => out.push(UNKNOWN),
    };
    match chunks.next() {
        Some(Chunk::Value(Some(v))) if !matches!(v, PathValue::Relative(_)) => anchor = Some(v),
        Some(first) => push(&mut out, first),
        None => {}
    }
    for c in chunks {
        push(&mut out, c);
    }
    match anchor {
        Some(a) => a.concat(&out),
        None => Some(PathValue::Relative(out)),
    }
}

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
                let chunks: Vec<Chunk> = node
                    .named_children(&mut cursor)
                    .filter_map(|c| match c.kind() {
                        "string_content" => Some(Chunk::Text(text(c).to_string())),
                        "interpolation" => {
                            Some(Chunk::Value(c.named_child(0).and_then(|e| self.eval(e))))
                        }
                        _ => None,
                    })
                    .collect();
                assemble(chunks)
            }
            "concatenated_string" => Some(PathValue::Relative(self.literal(node))),
            "identifier" if text(node) == "__file__" => Some(PathValue::File),
            "identifier" => names.get(text(node)).cloned().or_else(|| {
                // pytest's temporary folders: outside the repository.
                matches!(text(node), "tmp_path" | "tmpdir").then(outside)
            }),
            "parenthesized_expression" => self.eval(node.named_child(0)?),
            "attribute" => {
                let object = node.child_by_field_name("object")?;
                match (text(node), text(node.child_by_field_name("attribute")?)) {
                    // The working folder: the root, where tests run from.
                    ("os.curdir", _) => Some(PathValue::Relative(".".into())),
                    ("os.pardir", _) => Some(PathValue::Relative("..".into())),
                    ("os.sep" | "os.path.sep", _) => Some(PathValue::Relative("/".into())),
                    (_, "parent") => self.eval(object)?.parent(),
                    // `mod.__file__`: bound where `mod` was imported.
                    (_, "__file__") => names.get(text(node)).cloned(),
                    _ => None,
                }
            }
            "subscript" => {
                // `Path(__file__).parents[2]`
                let value = node.child_by_field_name("value")?;
                let index: usize = text(node.child_by_field_name("subscript")?).parse().ok()?;
                // `os.path.split(p)[0]`: the folder.
                if index == 0
                    && value.kind() == "call"
                    && value
                        .child_by_field_name("function")
                        .is_some_and(|f| matches!(text(f), "os.path.split" | "path.split"))
                {
                    let args = value.child_by_field_name("arguments")?;
                    return self.eval(args.named_child(0)?)?.parent();
                }
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
                if op == "%" {
                    return self.percent(left, right);
                }
                let l = self.eval(left);
                let r = self.part(right);
                match (op, l) {
                    ("/", Some(l)) => l.join(&r),
                    ("+", Some(l)) => l.concat(&r),
                    // `settings.BASE / "x.json"`: a folder not known here, under a known tail.
                    ("/", None) if known(&r) => Some(PathValue::Relative(format!("{UNKNOWN}/{r}"))),
                    // `base + os.sep + "data"`: text not known here, then more; recorded only
                    // where it says enough to name something.
                    ("+", None) => Some(PathValue::Relative(format!("{UNKNOWN}{r}"))),
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
        let rest = args.get(1..).unwrap_or_default();
        // `os.path.join(base, "x.json")` with `base` not known here: a folder under a known tail.
        let base = || {
            first().or_else(|| {
                rest.iter()
                    .any(|a| known(&self.part(*a)))
                    .then(|| PathValue::Relative(UNKNOWN.to_string()))
            })
        };
        let join_rest = |mut value: PathValue, rest: &[Node<'_>]| {
            for a in rest {
                value = value.join(&self.part(*a))?;
            }
            Some(value)
        };
        if WRAPPERS.contains(&name) {
            if args.is_empty() && name != "str" {
                return Some(PathValue::Relative(".".into())); // `Path()`: the working folder
            }
            return join_rest(base()?, rest);
        }
        match name {
            "os.path.dirname" | "path.dirname" | "dirname" => return first()?.parent(),
            "os.path.join" | "path.join" => return join_rest(base()?, rest),
            // The working folder: the root, where tests run from.
            "os.getcwd" | "Path.cwd" | "pathlib.Path.cwd" => {
                return Some(PathValue::Relative(".".into()));
            }
            n if TEMPORARY.contains(&n) => return Some(outside()),
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
        // Methods on a path: `p.resolve()`, `p.joinpath("a", "b")`, `p.with_name("x.json")`,
        // `p.glob("*.json")`; `"{}/x.json".format(HERE)` on a template.
        if function.kind() == "attribute" {
            let object = function.child_by_field_name("object")?;
            let method = text(function.child_by_field_name("attribute")?);
            if method == "format" && object.kind() == "string" {
                return self.format(object, node.child_by_field_name("arguments")?);
            }
            let value = self.eval(object);
            let value = match (value, method) {
                (Some(v), _) => v,
                // `BASE.joinpath("x.json")`, `BASE.glob("*.json")` on a folder not known here.
                (None, "joinpath" | "glob" | "rglob")
                    if args.iter().any(|a| known(&self.part(*a))) =>
                {
                    PathValue::Relative(UNKNOWN.to_string())
                }
                _ => return None,
            };
            return match method {
                m if METHODS_KEEPING_PATH.contains(&m) => Some(value),
                "joinpath" => join_rest(value, &args),
                "with_name" => value.parent()?.join(&self.part(*args.first()?)),
                "glob" => value.join(&self.part(*args.first()?)),
                "rglob" => value.join(&format!("**/{}", self.part(*args.first()?))),
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
                    _ => out.push(UNKNOWN),
                },
                _ => {}
            }
        }
        out
    }

    /// A join operand: its literal value, or the unknown marker when it is computed.
    fn part(&self, node: Node<'_>) -> String {
        match self.eval(node) {
            Some(PathValue::Relative(p)) => p,
            _ => UNKNOWN.to_string(),
        }
    }

    /// `"%s/data/%s.json" % (HERE, name)`: the template's holes filled in order.
    fn percent(&self, template: Node<'_>, args: Node<'_>) -> Option<PathValue> {
        let template = self.template(template)?;
        let values: Vec<Node<'_>> = match args.kind() {
            "tuple" => {
                let mut cursor = args.walk();
                args.named_children(&mut cursor).collect()
            }
            "dictionary" => Vec::new(),
            _ => vec![args],
        };
        let mut values = values.into_iter();
        let mut chunks = Vec::new();
        let mut text = String::new();
        let mut chars = template.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '%' {
                text.push(c);
                continue;
            }
            if chars.next_if_eq(&'%').is_some() {
                text.push('%');
                continue;
            }
            // `%(name)s` takes no positional value; then flags, width, precision, conversion.
            let named = chars.next_if_eq(&'(').is_some();
            if named {
                chars.by_ref().find(|d| *d == ')');
            }
            chars.by_ref().find(char::is_ascii_alphabetic);
            chunks.push(Chunk::Text(std::mem::take(&mut text)));
            let value = if named { None } else { values.next() };
            chunks.push(Chunk::Value(value.and_then(|v| self.eval(v))));
        }
        chunks.push(Chunk::Text(text));
        assemble(chunks)
    }

    /// `"{}/data/{name}.json".format(HERE, name=x)`: fields by position, index or keyword.
    fn format(&self, template: Node<'_>, arguments: Node<'_>) -> Option<PathValue> {
        let template = self.template(template)?;
        let mut cursor = arguments.walk();
        let (mut positional, mut keywords) = (Vec::new(), BTreeMap::new());
        for a in arguments.named_children(&mut cursor) {
            match a.kind() {
                "keyword_argument" => {
                    let name = a.child_by_field_name("name").map(|n| self.text(n));
                    if let (Some(name), Some(value)) = (name, a.child_by_field_name("value")) {
                        keywords.insert(name.to_string(), value);
                    }
                }
                "comment" => {}
                _ => positional.push(a),
            }
        }
        let mut chunks = Vec::new();
        let mut text = String::new();
        let mut next = 0;
        let mut chars = template.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '{' if chars.peek() == Some(&'{') => {
                    chars.next();
                    text.push('{');
                }
                '}' if chars.peek() == Some(&'}') => {
                    chars.next();
                    text.push('}');
                }
                '{' => {
                    let field: String = chars.by_ref().take_while(|d| *d != '}').collect();
                    let name = field.split([':', '!']).next().unwrap_or_default();
                    let value = if name.is_empty() {
                        next += 1;
                        positional.get(next - 1).copied()
                    } else if let Ok(k) = name.parse::<usize>() {
                        positional.get(k).copied()
                    } else if name.contains(['.', '[']) {
                        None
                    } else {
                        keywords.get(name).copied()
                    };
                    chunks.push(Chunk::Text(std::mem::take(&mut text)));
                    chunks.push(Chunk::Value(value.and_then(|v| self.eval(v))));
                }
                _ => text.push(c),
            }
        }
        chunks.push(Chunk::Text(text));
        assemble(chunks)
    }

    /// A template's text: a plain literal (an f-string's holes are no template's).
    fn template(&self, node: Node<'_>) -> Option<String> {
        if node.kind() != "string" {
            return None;
        }
        let mut cursor = node.walk();
        let mut out = String::new();
        for c in node.named_children(&mut cursor) {
            match c.kind() {
                "string_content" => out.push_str(self.text(c)),
                "interpolation" => return None,
                _ => {}
            }
        }
        Some(out)
    }

    fn text(&self, node: Node<'_>) -> &str {
        node.utf8_text(self.source).unwrap_or_default()
    }
}
