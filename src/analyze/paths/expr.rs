//! The evaluator: a path expression's tree-sitter nodes → its `PathValue`, with the calls,
//! methods and templates it knows. Apart from the value type, which facts and the graph use
//! without evaluating anything.

use super::{PathValue, UNKNOWN, known};
use std::cell::Cell;
use std::collections::BTreeMap;
use tree_sitter::Node;

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

/// Whether a call of `function` names a package's resource (`importlib.resources.files("pkg")`,
/// `pkgutil.get_data("pkg", "x.json")`): its package is read from a literal argument.
pub(crate) fn reads_resource(function: &str) -> bool {
    RESOURCE_FILES.contains(&function) || RESOURCE_READERS.contains(&function)
}

/// Whether `method` is one the evaluator reads on a path (`resolve`, `joinpath`, `glob`, …).
pub(crate) fn is_path_method(method: &str) -> bool {
    METHODS_KEEPING_PATH.contains(&method)
        || matches!(method, "joinpath" | "with_name" | "glob" | "rglob")
}

/// Whether `function` is `os.path.split`, whose `[0]` is its argument's folder.
pub(crate) fn is_split(function: &str) -> bool {
    matches!(function, "os.path.split" | "path.split")
}

/// What a call evaluates to where its callee's text decides it (a wrapper, a join, a folder,
/// the working or a temporary folder): `None` where the callee is none of these. `value(k)` is
/// the `k`th of its `n` positional arguments' values.
pub(crate) fn named_call_value(
    function: &str,
    n: usize,
    value: impl Fn(usize) -> Option<PathValue>,
) -> Option<Option<PathValue>> {
    if WRAPPERS.contains(&function) {
        if n == 0 && function != "str" {
            return Some(Some(PathValue::Relative(".".into()))); // `Path()`: the working folder
        }
        return Some(wrapped_value(n, value));
    }
    Some(match function {
        "os.path.dirname" | "path.dirname" | "dirname" => (n > 0)
            .then(|| value(0))
            .flatten()
            .and_then(PathValue::parent),
        "os.path.join" | "path.join" => wrapped_value(n, value),
        // The working folder: the root, where tests run from.
        "os.getcwd" | "Path.cwd" | "pathlib.Path.cwd" => Some(PathValue::Relative(".".into())),
        f if TEMPORARY.contains(&f) => Some(outside()),
        _ => return None,
    })
}

/// Methods on a path: `p.resolve()`, `p.joinpath("a", "b")`, `p.with_name("x.json")`,
/// `p.glob("*.json")`. `object` is the value of what it is called on; `value(k)` is the `k`th
/// of its `n` positional arguments' values.
pub(crate) fn method_value(
    method: &str,
    object: Option<PathValue>,
    n: usize,
    value: impl Fn(usize) -> Option<PathValue>,
) -> Option<PathValue> {
    let arg = |k: usize| part(value(k));
    let value = match (object, method) {
        (Some(v), _) => v,
        // `BASE.joinpath("x.json")`, `BASE.glob("*.json")` on a folder not known here.
        (None, "joinpath" | "glob" | "rglob") if (0..n).any(|k| known(&arg(k))) => {
            PathValue::Relative(UNKNOWN.to_string())
        }
        _ => return None,
    };
    match method {
        m if METHODS_KEEPING_PATH.contains(&m) => Some(value),
        "joinpath" => {
            let mut value = value;
            for k in 0..n {
                value = value.join(&arg(k))?;
            }
            Some(value)
        }
        "with_name" if n > 0 => value.parent()?.join(&arg(0)),
        "glob" if n > 0 => value.join(&arg(0)),
        "rglob" if n > 0 => value.join(&format!("**/{}", arg(0))),
        _ => None,
    }
}

/// What `text` (an attribute's whole text; `attribute` its last name) evaluates to: the
/// working folder's names (`os.curdir`, `os.sep`), a parent (`object` is the value it is taken
/// of), or another module's file (`module_file(text)`: bound where the module was imported).
pub(crate) fn attribute_value(
    text: &str,
    attribute: &str,
    object: impl FnOnce() -> Option<PathValue>,
    module_file: impl FnOnce(&str) -> Option<PathValue>,
) -> Option<PathValue> {
    match (text, attribute) {
        // The working folder: the root, where tests run from.
        ("os.curdir", _) => Some(PathValue::Relative(".".into())),
        ("os.pardir", _) => Some(PathValue::Relative("..".into())),
        ("os.sep" | "os.path.sep", _) => Some(PathValue::Relative("/".into())),
        (_, "parent") => object()?.parent(),
        // `mod.__file__`: bound where `mod` was imported.
        (_, "__file__") => module_file(text),
        _ => None,
    }
}

/// `p.parents[index]`: the `index + 1`th folder up.
pub(crate) fn parents_value(object: Option<PathValue>, index: usize) -> Option<PathValue> {
    let mut out = object?;
    for _ in 0..=index {
        out = out.parent()?;
    }
    Some(out)
}

/// What a name evaluates to where the module binds none: the file itself (`__file__`, which
/// no binding changes), pytest's temporary folders (outside the repository).
pub(crate) fn name_value(
    name: &str,
    bound: impl FnOnce(&str) -> Option<PathValue>,
) -> Option<PathValue> {
    if name == "__file__" {
        return Some(PathValue::File);
    }
    bound(name).or_else(|| matches!(name, "tmp_path" | "tmpdir").then(outside))
}

/// A join operand's text: its literal value, or the unknown marker when it is computed.
fn part(value: Option<PathValue>) -> String {
    match value {
        Some(PathValue::Relative(p)) => p,
        _ => UNKNOWN.to_string(),
    }
}

/// `left op right` from the operands' values (not sealed): `/` joins, `+` concatenates.
pub(crate) fn binary_value(
    op: &str,
    left: Option<PathValue>,
    right: Option<PathValue>,
) -> Option<PathValue> {
    let r = part(right);
    match (op, left) {
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

/// A wrapper or join of `n` arguments (`str(p)`, `os.path.join(base, "x")`): the first
/// argument's value (else, with a known part after it, a folder not known here) joined with
/// the rest. `value(k)` is the `k`th argument's.
pub(crate) fn wrapped_value(
    n: usize,
    value: impl Fn(usize) -> Option<PathValue>,
) -> Option<PathValue> {
    let base = (n > 0).then(|| value(0)).flatten().or_else(|| {
        (1..n)
            .any(|k| known(&part(value(k))))
            .then(|| PathValue::Relative(UNKNOWN.to_string()))
    })?;
    let mut out = base;
    for k in 1..n {
        out = out.join(&part(value(k)))?;
    }
    Some(out)
}

/// A `%` template filled: `next()` gives the next positional value (`%(name)s` takes none).
pub(crate) fn percent_value(
    template: &str,
    mut next: impl FnMut() -> Option<PathValue>,
) -> Option<PathValue> {
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
        let value = if named { None } else { next() };
        chunks.push(Chunk::Value(value));
    }
    chunks.push(Chunk::Text(text));
    assemble(chunks)
}

/// A `.format` template filled: fields by position (`positional(k)`), index or keyword.
pub(crate) fn format_value(
    template: &str,
    positional: impl Fn(usize) -> Option<PathValue>,
    keyword: impl Fn(&str) -> Option<PathValue>,
) -> Option<PathValue> {
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
                    positional(next - 1)
                } else if let Ok(k) = name.parse::<usize>() {
                    positional(k)
                } else if name.contains(['.', '[']) {
                    None
                } else {
                    keyword(name)
                };
                chunks.push(Chunk::Text(std::mem::take(&mut text)));
                chunks.push(Chunk::Value(value));
            }
            _ => text.push(c),
        }
    }
    chunks.push(Chunk::Text(text));
    assemble(chunks)
}

/// A folder outside the repository: a join onto it names nothing.
fn outside() -> PathValue {
    PathValue::Relative("/tmp".into())
}

/// A piece of a template: its text, or a hole's value (`None`: not known here).
pub(crate) enum Chunk {
    Text(String),
    Value(Option<PathValue>),
}

/// A template filled in: a path-valued first hole anchors the rest (`f"{HERE}/x.json"`); else
/// it is text, with known text holes in place and unknown ones marked.
pub(crate) fn assemble(chunks: Vec<Chunk>) -> Option<PathValue> {
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
        let text = |n: Node<'_>| self.text(n);
        match node.kind() {
            "string" => self.string(node),
            "concatenated_string" => Some(PathValue::Relative(self.literal(node))),
            "identifier" => name_value(text(node), |n| self.names.get(n).cloned()),
            "parenthesized_expression" => self.eval(node.named_child(0)?),
            "attribute" => self.attribute(node),
            "subscript" => self.subscript(node),
            "binary_operator" => self.binary(node),
            "call" => self.call(node),
            _ => None,
        }
    }

    /// `f"{HERE}/data.json"`: a path-valued first interpolation anchors the rest.
    fn string(&self, node: Node<'_>) -> Option<PathValue> {
        let mut cursor = node.walk();
        let chunks: Vec<Chunk> = node
            .named_children(&mut cursor)
            .filter_map(|c| match c.kind() {
                "string_content" => Some(Chunk::Text(self.text(c).to_string())),
                "interpolation" => Some(Chunk::Value(c.named_child(0).and_then(|e| self.eval(e)))),
                _ => None,
            })
            .collect();
        assemble(chunks)
    }

    fn attribute(&self, node: Node<'_>) -> Option<PathValue> {
        let object = node.child_by_field_name("object")?;
        attribute_value(
            self.text(node),
            self.text(node.child_by_field_name("attribute")?),
            || self.eval(object),
            |key| self.names.get(key).cloned(),
        )
    }

    /// `Path(__file__).parents[2]`
    fn subscript(&self, node: Node<'_>) -> Option<PathValue> {
        let text = |n: Node<'_>| self.text(n);
        let value = node.child_by_field_name("value")?;
        let index: usize = text(node.child_by_field_name("subscript")?).parse().ok()?;
        // `os.path.split(p)[0]`: the folder.
        if index == 0
            && value.kind() == "call"
            && value
                .child_by_field_name("function")
                .is_some_and(|f| is_split(text(f)))
        {
            let args = value.child_by_field_name("arguments")?;
            return self.eval(args.named_child(0)?)?.parent();
        }
        if value.kind() != "attribute" || text(value.child_by_field_name("attribute")?) != "parents"
        {
            return None;
        }
        parents_value(self.eval(value.child_by_field_name("object")?), index)
    }

    fn binary(&self, node: Node<'_>) -> Option<PathValue> {
        let left = node.child_by_field_name("left")?;
        let right = node.child_by_field_name("right")?;
        let op = self.text(node.child_by_field_name("operator")?);
        if op == "%" {
            return self.percent(left, right);
        }
        binary_value(op, self.eval(left), self.eval(right))
    }

    fn call(&self, node: Node<'_>) -> Option<PathValue> {
        let function = node.child_by_field_name("function")?;
        let name = self.text(function);
        let args: Vec<Node<'_>> = {
            let list = node.child_by_field_name("arguments")?;
            let mut cursor = list.walk();
            list.named_children(&mut cursor)
                .filter(|a| a.kind() != "keyword_argument" && a.kind() != "comment")
                .collect()
        };
        if let Some(value) = named_call_value(name, args.len(), |k| self.eval(args[k])) {
            return value;
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
        if function.kind() == "attribute" {
            return self.method(node, function, &args);
        }
        None
    }

    /// `"{}/x.json".format(HERE)` on a template; any other method, as `method_value` reads it.
    fn method(&self, node: Node<'_>, function: Node<'_>, args: &[Node<'_>]) -> Option<PathValue> {
        let object = function.child_by_field_name("object")?;
        let method = self.text(function.child_by_field_name("attribute")?);
        if method == "format" && object.kind() == "string" {
            return self.format(object, node.child_by_field_name("arguments")?);
        }
        method_value(method, self.eval(object), args.len(), |k| {
            self.eval(args[k])
        })
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
        part(self.eval(node))
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
        percent_value(&template, || values.next().and_then(|v| self.eval(v)))
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
        format_value(
            &template,
            |k| positional.get(k).and_then(|v| self.eval(*v)),
            |name| keywords.get(name).and_then(|v| self.eval(*v)),
        )
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
