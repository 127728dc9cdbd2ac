//! The space of Python path expressions, checked against the real interpreter: thousands of
//! seeded compositions of the pieces real code uses (`__file__` anchors and their parents,
//! the working folder, package resources, another module's `__file__`, imported constants;
//! `os.path.join`, `/`, `joinpath`, `+`, f-strings, `%`, `.format`; names bound at module
//! level, by loops over literal lists, by defaults, by the environment's default), read by
//! the readers real code uses (`open`, `Path.read_text`, `json.load`, `shutil.copy*`,
//! `os.listdir`/`scandir`/`walk`, `Path.iterdir`/`glob`/`rglob`, `glob.glob`). Python runs
//! every reader once, under an audit hook: the repository files it opened, and those a listing
//! returned, are the truth. Each of them must be covered by gate's graph: a reference edge
//! from the reading file, or from a module it imports.

use crate::support::{Rng, TestRepo, text};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// The folders every data layout is repeated in (the fixture `paths`), and where readers live.
const BASES: &[&str] = &["", "pkg", "pkg/sub", "tests"];
/// The data under each base.
const FILES: &[&str] = &[
    "x.json",
    "data/a.json",
    "data/b.json",
    "data/sub/c.json",
    "testdata/case1.txt",
    "testdata/case2.txt",
];
const FOLDERS: &[&str] = &["data", "data/sub", "testdata"];

#[derive(Clone, Copy, PartialEq)]
enum Ty {
    Str,
    Path,
}

/// A folder expression: its text, its type, the folder it names (repository-relative), and
/// the module-level lines it needs.
struct Anchor {
    expr: String,
    ty: Ty,
    dir: String,
    kind: &'static str,
    top: Vec<String>,
}

fn up(dir: &str) -> String {
    dir.rsplit_once('/')
        .map_or(String::new(), |(d, _)| d.to_string())
}

const FILE_ANCHORS: &[(&str, Ty, &str)] = &[
    ("os.path.dirname(__file__)", Ty::Str, ""),
    ("os.path.dirname(os.path.abspath(__file__))", Ty::Str, ""),
    ("os.path.dirname(os.path.realpath(__file__))", Ty::Str, ""),
    ("os.path.abspath(os.path.dirname(__file__))", Ty::Str, ""),
    ("os.path.split(__file__)[0]", Ty::Str, ""),
    ("os.path.dirname(os.path.normpath(__file__))", Ty::Str, ""),
    ("os.path.realpath(os.path.dirname(__file__))", Ty::Str, ""),
    ("os.path.join(os.path.dirname(__file__), '.')", Ty::Str, ""),
    ("Path(__file__).parent", Ty::Path, ""),
    ("Path(__file__).resolve().parent", Ty::Path, ""),
    ("Path(__file__).absolute().parent", Ty::Path, ""),
    ("Path(__file__).parents[0]", Ty::Path, ""),
    ("pathlib.Path(__file__).parent", Ty::Path, ""),
    ("Path(os.path.dirname(__file__))", Ty::Path, ""),
    ("Path(__file__).resolve(strict=True).parent", Ty::Path, ""),
    ("Path(__file__).parent.resolve()", Ty::Path, ""),
    ("pathlib.Path(__file__).resolve().parent", Ty::Path, ""),
    ("Path(__file__).with_name('x.json').parent", Ty::Path, ""),
];
const PARENT_ANCHORS: &[(&str, Ty, &str)] = &[
    ("os.path.dirname(os.path.dirname(__file__))", Ty::Str, ""),
    ("os.path.join(os.path.dirname(__file__), '..')", Ty::Str, ""),
    (
        "os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir))",
        Ty::Str,
        "",
    ),
    (
        "os.path.normpath(os.path.join(os.path.dirname(__file__), '..'))",
        Ty::Str,
        "",
    ),
    (
        "os.path.dirname(os.path.dirname(os.path.abspath(__file__)))",
        Ty::Str,
        "",
    ),
    ("Path(__file__).parent.parent", Ty::Path, ""),
    ("Path(__file__).parents[1]", Ty::Path, ""),
    ("Path(__file__).resolve().parents[1]", Ty::Path, ""),
    ("Path(__file__).parent / '..'", Ty::Path, ""),
    ("Path(__file__).resolve().parent.parent", Ty::Path, ""),
    ("Path(__file__).parent.joinpath('..')", Ty::Path, ""),
];
const CWD_ANCHORS: &[(&str, Ty, &str)] = &[
    ("os.getcwd()", Ty::Str, ""),
    ("'.'", Ty::Str, ""),
    ("os.curdir", Ty::Str, ""),
    ("os.path.abspath('.')", Ty::Str, ""),
    ("os.path.abspath(os.curdir)", Ty::Str, ""),
    ("Path.cwd()", Ty::Path, ""),
    ("Path('.')", Ty::Path, ""),
    ("Path()", Ty::Path, ""),
    ("pathlib.Path.cwd()", Ty::Path, ""),
];
const PACKAGE_ANCHORS: &[(&str, Ty, &str)] = &[
    ("importlib.resources.files('pkg')", Ty::Path, "pkg"),
    ("files('pkg')", Ty::Path, "pkg"),
    ("importlib.resources.files('pkg.sub')", Ty::Path, "pkg/sub"),
    ("Path(pkg.__file__).parent", Ty::Path, "pkg"),
    ("Path(pkg.sub.__file__).parent", Ty::Path, "pkg/sub"),
    ("os.path.dirname(pkg.__file__)", Ty::Str, "pkg"),
    ("os.path.dirname(pkg.sub.__file__)", Ty::Str, "pkg/sub"),
    ("os.path.dirname(paths_mod.__file__)", Ty::Str, "pkg"),
];
const IMPORTED_ANCHORS: &[(&str, Ty, &str)] = &[
    ("PKG_DIR", Ty::Path, "pkg"),
    ("PKG_STR", Ty::Str, "pkg"),
    ("DATA_DIR", Ty::Path, "pkg/data"),
    ("DATA_STR", Ty::Str, "pkg/data"),
    ("paths.DATA_DIR", Ty::Path, "pkg/data"),
    ("paths.PKG_STR", Ty::Str, "pkg"),
];

fn anchor(rng: &mut Rng, home: &str) -> Anchor {
    let mut kinds = vec!["file", "cwd", "package", "imported"];
    if !home.is_empty() {
        kinds.push("parent");
    }
    let kind = rng.pick(&kinds);
    let (choices, dir): (&[(&str, Ty, &str)], String) = match kind {
        "file" => (FILE_ANCHORS, home.to_string()),
        "parent" => (PARENT_ANCHORS, up(home)),
        "cwd" => (CWD_ANCHORS, String::new()),
        "package" => (PACKAGE_ANCHORS, String::new()),
        _ => (IMPORTED_ANCHORS, String::new()),
    };
    let (expr, ty, at) = choices[rng.below(choices.len())];
    let dir = if at.is_empty() { dir } else { at.to_string() };
    let mut top = Vec::new();
    if expr.contains("paths_mod") {
        top.push("import pkg.paths as paths_mod".to_string());
    } else if expr.starts_with("paths.") {
        top.push("from pkg import paths".to_string());
    } else if expr.contains("pkg.sub.__file__") {
        top.push("import pkg.sub".to_string());
    } else if expr.contains("pkg.__file__") {
        top.push("import pkg".to_string());
    } else if kind == "imported" {
        top.push(format!("from pkg.paths import {expr}"));
    }
    Anchor {
        expr: expr.to_string(),
        ty,
        dir,
        kind,
        top,
    }
}

/// One piece of a path part: literal text, or an expression whose value is text.
#[derive(Clone)]
enum Piece {
    Lit(String),
    Var(String),
}

/// What the case needs besides its reader line: module-level lines, `read`'s parameters,
/// lines at its start, and loops around the reader.
#[derive(Default)]
struct Scaffold {
    top: Vec<String>,
    params: Vec<String>,
    locals: Vec<String>,
    loops: Vec<String>,
    names: usize,
}

impl Scaffold {
    fn fresh(&mut self, stem: &str) -> String {
        self.names += 1;
        format!("{stem}{}", self.names)
    }
}

/// A sibling that exists of a data path (`a.json` → `b.json`), for a loop's second item.
fn sibling(value: &str) -> String {
    value.replace("a.json", "b.json").replace("case1", "case2")
}

/// A part's value as the pieces the code builds it from, and the class of that binding.
fn name_part(rng: &mut Rng, value: &str, s: &mut Scaffold) -> (Vec<Piece>, &'static str) {
    let q = |v: &str| format!("{v:?}");
    let kinds = [
        "lit",
        "lit",
        "lit",
        "const",
        "loop",
        "imported",
        "stem",
        "stem_loop",
        "env",
        "param",
        "attr",
    ];
    // An unknown part is taken to stay below where it stands: a value climbing out with `..`
    // is written as it is.
    let kind = if value.contains("..") {
        "lit"
    } else {
        rng.pick(&kinds)
    };
    let imported = match value {
        "a.json" => Some("NAME_A"),
        "sub/c.json" => Some("NAME_SUB"),
        "data" => Some("NAME_DATA"),
        _ => None,
    };
    let stem = value
        .rsplit_once('.')
        .filter(|(s, e)| !s.is_empty() && !s.contains(['/', '.']) && !e.is_empty());
    match kind {
        "const" => {
            let n = s.fresh("NAME");
            s.top.push(format!("{n} = {}", q(value)));
            (vec![Piece::Var(n)], kind)
        }
        "loop" => {
            let n = s.fresh("item");
            let other = sibling(value);
            s.loops
                .push(format!("for {n} in [{}, {}]:", q(value), q(&other)));
            (vec![Piece::Var(n)], kind)
        }
        "imported" | "attr" if imported.is_some() => {
            let name = imported.unwrap_or_default();
            if kind == "attr" {
                s.top.push("from pkg import paths".into());
                (vec![Piece::Var(format!("paths.{name}"))], kind)
            } else {
                s.top.push(format!("from pkg.paths import {name}"));
                (vec![Piece::Var(name.to_string())], kind)
            }
        }
        "stem" | "stem_loop" if stem.is_some() => {
            let (stem, ext) = stem.unwrap_or_default();
            let n = s.fresh("stem");
            if kind == "stem" {
                s.top.push(format!("{n} = {}", q(stem)));
            } else {
                let other = sibling(value);
                let other = other.rsplit_once('.').map_or(stem, |(o, _)| o);
                s.loops
                    .push(format!("for {n} in [{}, {}]:", q(stem), q(other)));
            }
            (vec![Piece::Var(n), Piece::Lit(format!(".{ext}"))], kind)
        }
        "env" => {
            let n = s.fresh("env");
            s.locals.push(format!(
                "{n} = os.environ.get(\"GATE_SPACE_UNSET\", {})",
                q(value)
            ));
            (vec![Piece::Var(n)], kind)
        }
        "param" => {
            let n = s.fresh("arg");
            s.params.push(format!("{n}={}", q(value)));
            (vec![Piece::Var(n)], kind)
        }
        _ => (vec![Piece::Lit(value.to_string())], "lit"),
    }
}

/// A part as a Python expression of its own: a literal, a name, or an f-string.
fn part_expr(pieces: &[Piece]) -> String {
    match pieces {
        [Piece::Lit(l)] => format!("{l:?}"),
        [Piece::Var(v)] => v.clone(),
        _ => {
            let body: String = pieces
                .iter()
                .map(|p| match p {
                    Piece::Lit(l) => l.clone(),
                    Piece::Var(v) => format!("{{{v}}}"),
                })
                .collect();
            format!("f\"{body}\"")
        }
    }
}

const JOINS: &[&str] = &[
    "os_join",
    "slash",
    "joinpath",
    "plus",
    "plus_sep",
    "fstring",
    "percent",
    "format",
    "format_index",
    "format_kw",
];

/// `base` joined with `parts` by `how`: the expression and its type.
fn join(base: &str, ty: Ty, parts: &[Vec<Piece>], how: &str) -> (String, Ty) {
    if parts.is_empty() {
        return (base.to_string(), ty);
    }
    let exprs: Vec<String> = parts.iter().map(|p| part_expr(p)).collect();
    let as_path = || match ty {
        Ty::Path => base.to_string(),
        Ty::Str => format!("Path({base})"),
    };
    let as_str = || match ty {
        Ty::Str => base.to_string(),
        Ty::Path => format!("str({base})"),
    };
    // The pieces after the base, each part after a `/`.
    let mut tail: Vec<Piece> = Vec::new();
    for p in parts {
        tail.push(Piece::Lit("/".into()));
        tail.extend(p.iter().cloned());
    }
    let quote = if base.contains('"') { '\'' } else { '"' };
    match how {
        "os_join" => (
            format!("os.path.join({base}, {})", exprs.join(", ")),
            Ty::Str,
        ),
        "slash" => (format!("{} / {}", as_path(), exprs.join(" / ")), Ty::Path),
        "joinpath" => (
            format!("{}.joinpath({})", as_path(), exprs.join(", ")),
            Ty::Path,
        ),
        "plus" | "plus_sep" => {
            let mut out = as_str();
            for p in &tail {
                out.push_str(" + ");
                match p {
                    Piece::Lit(l) if how == "plus_sep" && l == "/" => out.push_str("os.sep"),
                    Piece::Lit(l) => out.push_str(&format!("{l:?}")),
                    Piece::Var(v) => out.push_str(v),
                }
            }
            (out, Ty::Str)
        }
        "fstring" if !(base.contains('"') && base.contains('\'')) => {
            let mut body = format!("{{{base}}}");
            for p in &tail {
                match p {
                    Piece::Lit(l) => body.push_str(l),
                    Piece::Var(v) => body.push_str(&format!("{{{v}}}")),
                }
            }
            (format!("f{quote}{body}{quote}"), Ty::Str)
        }
        "percent" | "format" | "format_index" | "format_kw" => {
            let mut fmt = String::new();
            let mut args = vec![base.to_string()];
            let hole = |k: usize| match how {
                "percent" => "%s".to_string(),
                "format" => "{}".to_string(),
                "format_index" => format!("{{{k}}}"),
                _ => format!("{{a{k}}}"),
            };
            fmt.push_str(&hole(0));
            for p in &tail {
                match p {
                    Piece::Lit(l) => fmt.push_str(l),
                    Piece::Var(v) => {
                        fmt.push_str(&hole(args.len()));
                        args.push(v.clone());
                    }
                }
            }
            let expr = match how {
                "percent" if args.len() == 1 => format!("\"{fmt}\" % {base}"),
                "percent" => format!("\"{fmt}\" % ({})", args.join(", ")),
                "format_kw" => {
                    let kws: Vec<String> = args
                        .iter()
                        .enumerate()
                        .map(|(k, a)| format!("a{k}={a}"))
                        .collect();
                    format!("\"{fmt}\".format({})", kws.join(", "))
                }
                _ => format!("\"{fmt}\".format({})", args.join(", ")),
            };
            (expr, Ty::Str)
        }
        _ => (
            format!("os.path.join({base}, {})", exprs.join(", ")),
            Ty::Str,
        ),
    }
}

/// A data file (or folder, for a listing) near `dir`, as the relative path code would write:
/// under it, or beside it through `..`; sometimes through a `.` detour.
fn target(rng: &mut Rng, dir: &str, folder: bool) -> String {
    let items: Vec<String> = BASES
        .iter()
        .flat_map(|b| {
            let own = if folder && !b.is_empty() {
                vec![String::new()]
            } else {
                Vec::new()
            };
            let list = if folder { FOLDERS } else { FILES };
            own.into_iter()
                .chain(list.iter().map(|f| f.to_string()))
                .map(move |f| match (b.is_empty(), f.is_empty()) {
                    (true, _) => f,
                    (false, true) => b.to_string(),
                    (false, false) => format!("{b}/{f}"),
                })
        })
        .filter(|f| !f.is_empty())
        .collect();
    let under = |d: &str, f: &str| d.is_empty() || f == d || f.starts_with(&format!("{d}/"));
    let rel = |d: &str, f: &str| {
        if f == d {
            String::new()
        } else if d.is_empty() {
            f.to_string()
        } else {
            f[d.len() + 1..].to_string()
        }
    };
    let mut candidates: Vec<String> = items
        .iter()
        .filter(|f| under(dir, f))
        .map(|f| rel(dir, f))
        .collect();
    if !dir.is_empty() {
        let above = up(dir);
        candidates.extend(
            items
                .iter()
                .filter(|f| under(&above, f) && !under(dir, f) && !rel(&above, f).is_empty())
                .map(|f| format!("../{}", rel(&above, f))),
        );
    }
    let mut tail = candidates[rng.below(candidates.len())].clone();
    if !tail.is_empty() && rng.chance(10) {
        tail = format!("./{tail}");
    }
    tail
}

/// The readers of a file: how each wraps the path, and whether it needs a `Path`.
const FILE_READERS: &[&str] = &[
    "open",
    "io.open",
    "open_kw",
    "codecs.open",
    "read_text",
    "read_bytes",
    "path_open",
    "json_load",
    "copy",
    "copyfile",
    "copy2",
];
const FOLDER_READERS: &[&str] = &[
    "listdir",
    "scandir",
    "walk",
    "iterdir",
    "path_glob",
    "path_glob_json",
    "rglob",
    "glob_join",
    "glob_recursive",
    "iglob",
    "copytree",
];

/// The reader's statement: `_seen(KIND, CALL)` (KIND says how the harness reads the result).
fn reader(how: &str, p: &str, ty: Ty) -> String {
    let path = match ty {
        Ty::Path => p.to_string(),
        Ty::Str => format!("Path({p})"),
    };
    let (kind, call) = match how {
        "open" => ("none", format!("open({p})")),
        "io.open" => ("none", format!("io.open({p})")),
        "open_kw" => ("none", format!("open({p}, encoding=\"utf-8\")")),
        "codecs.open" => ("none", format!("codecs.open({p})")),
        "read_text" => ("none", format!("{path}.read_text()")),
        "read_bytes" => ("none", format!("{path}.read_bytes()")),
        "path_open" => ("none", format!("{path}.open()")),
        "json_load" => ("none", format!("json.load(open({p}))")),
        "copy" => ("none", format!("shutil.copy({p}, _fresh())")),
        "copyfile" => ("none", format!("shutil.copyfile({p}, _fresh())")),
        "copy2" => ("none", format!("shutil.copy2({p}, _fresh())")),
        "listdir" => ("names", format!("os.listdir({p})")),
        "scandir" => ("entries", format!("os.scandir({p})")),
        "walk" => ("walk", format!("os.walk({p})")),
        "iterdir" => ("paths", format!("{path}.iterdir()")),
        "path_glob" => ("paths", format!("{path}.glob(\"*\")")),
        "path_glob_json" => ("paths", format!("{path}.glob(\"*.json\")")),
        "rglob" => ("paths", format!("{path}.rglob(\"*\")")),
        "glob_join" => ("paths", format!("glob.glob(os.path.join({p}, \"*\"))")),
        "glob_recursive" => (
            "paths",
            format!("glob.glob(os.path.join({p}, \"**\"), recursive=True)"),
        ),
        "iglob" => (
            "paths",
            format!("glob.iglob(os.path.join({p}, \"*.json\"))"),
        ),
        _ => ("none", format!("shutil.copytree({p}, _fresh())")),
    };
    format!("_seen({kind:?}, {call})")
}

struct Case {
    /// Whether gate can bound it from this file's text: an anchor not known here (imported,
    /// bound from the environment) joined with parts none of which is known here cannot be.
    bounded: bool,
    file: String,
    module: String,
    source: String,
    /// The reader's line, as written.
    line: String,
    /// The classes it was composed from, for the failure report.
    class: Vec<String>,
}

const BINDINGS: &[&str] = &["inline", "inline", "const", "split", "env", "stale"];

/// A tail's segments, grouped into parts at random: `["data/sub", "c.json"]`.
fn group(rng: &mut Rng, tail: &str) -> Vec<String> {
    let mut groups: Vec<String> = Vec::new();
    for seg in tail.split('/').filter(|s| !s.is_empty()) {
        match groups.last_mut() {
            Some(last) if rng.chance(3) => {
                last.push('/');
                last.push_str(seg);
            }
            _ => groups.push(seg.to_string()),
        }
    }
    groups
}

/// The base the read joins onto: the anchor inline, or bound at module level (whole, joined
/// with the first parts, from the environment, or after a stale binding).
fn bind_base(
    binding: &str,
    a: &Anchor,
    prefix: &[Vec<Piece>],
    m1: &str,
    s: &mut Scaffold,
) -> (String, Ty) {
    match binding {
        "inline" => (a.expr.clone(), a.ty),
        "const" => {
            s.top.push(format!("HERE = {}", a.expr));
            ("HERE".to_string(), a.ty)
        }
        "split" => {
            let (e, t) = join(&a.expr, a.ty, prefix, m1);
            s.top.push(format!("BASE = {e}"));
            ("BASE".to_string(), t)
        }
        "env" => {
            s.top.push(format!(
                "HERE = os.environ.get(\"GATE_SPACE_UNSET\", {})",
                a.expr
            ));
            ("HERE".to_string(), a.ty)
        }
        _ => {
            s.top.push("HERE = Path(\"elsewhere\")".to_string());
            s.top.push(format!(
                "HERE = os.environ.get(\"GATE_SPACE_UNSET\", {})",
                a.expr
            ));
            ("HERE".to_string(), a.ty)
        }
    }
}

fn case(rng: &mut Rng, i: usize) -> Case {
    let home = rng.pick(BASES);
    let (file, module) = if home.is_empty() {
        (format!("r{i}.py"), format!("r{i}"))
    } else {
        (
            format!("{home}/r{i}.py"),
            format!("{}.r{i}", home.replace('/', ".")),
        )
    };
    let a = anchor(rng, home);
    let folder = rng.chance(3);
    let tail = target(rng, &a.dir, folder);
    let binding = rng.pick(BINDINGS);
    let mut s = Scaffold {
        top: a.top.clone(),
        ..Scaffold::default()
    };
    let groups = group(rng, &tail);
    let split = if binding == "split" && !groups.is_empty() {
        1 + rng.below(groups.len())
    } else {
        0
    };
    let mut names = Vec::new();
    let parts: Vec<Vec<Piece>> = groups
        .iter()
        .enumerate()
        .map(|(k, g)| {
            if k < split {
                // Bound at module level: a literal or a module constant.
                if rng.chance(3) {
                    let n = s.fresh("PART");
                    s.top.push(format!("{n} = {g:?}"));
                    names.push("const".to_string());
                    vec![Piece::Var(n)]
                } else {
                    vec![Piece::Lit(g.clone())]
                }
            } else {
                let (pieces, kind) = name_part(rng, g, &mut s);
                names.push(kind.to_string());
                pieces
            }
        })
        .collect();
    // The parts gate knows from this file's text: literals, module constants, plain loops.
    let literal = groups.iter().zip(&names).any(|(g, n)| {
        let plain = !g.contains('/');
        g.chars().any(char::is_alphanumeric)
            && match n.as_str() {
                "lit" | "const" | "stem" | "stem_loop" => true,
                "loop" => plain,
                _ => false,
            }
    });
    // The working folder is the root: a path anywhere in the repository bounds nothing.
    let bounded =
        literal || !(matches!(a.kind, "imported" | "cwd") || matches!(binding, "env" | "stale"));
    let m1 = rng.pick(JOINS);
    let m2 = rng.pick(JOINS);
    let (base, ty) = bind_base(binding, &a, &parts[..split], m1, &mut s);
    let (p, ty) = join(&base, ty, &parts[split..], m2);
    let how = rng.pick(if folder { FOLDER_READERS } else { FILE_READERS });
    let line = reader(how, &p, ty);
    let source = render(&s, &line);
    let joins = if split > 0 {
        format!("{m1}+{m2}")
    } else {
        m2.to_string()
    };
    Case {
        bounded,
        file,
        module,
        source,
        line,
        class: vec![
            format!("anchor {}:{}", a.kind, a.expr),
            format!("binding {binding}"),
            format!("join {joins}"),
            format!("names {}", names.join(",")),
            format!("reader {how}"),
        ],
    }
}

/// The module: imports, module-level bindings, and `read` with its locals and loops.
fn render(s: &Scaffold, line: &str) -> String {
    let mut out = String::from(
        "import codecs\nimport glob\nimport importlib\nimport importlib.resources\nimport io\n\
         import json\nimport os\nimport pathlib\nimport shutil\nfrom importlib.resources import files\n\
         from pathlib import Path\n",
    );
    let mut seen = BTreeSet::new();
    for t in &s.top {
        if !t.starts_with("from pkg") && !t.starts_with("import pkg") || seen.insert(t.clone()) {
            out.push_str(t);
            out.push('\n');
        }
    }
    out.push_str(&format!("\n\ndef read({}):\n", s.params.join(", ")));
    let mut indent = "    ".to_string();
    for l in &s.locals {
        out.push_str(&format!("{indent}{l}\n"));
    }
    for l in &s.loops {
        out.push_str(&format!("{indent}{l}\n"));
        indent.push_str("    ");
    }
    out.push_str(&format!("{indent}{line}\n"));
    out
}

/// Python imports each reader, then runs its `read()` under an audit hook: the repository
/// files opened meanwhile, and those the listings returned (`_seen`), are what it read.
const HARNESS: &str = r#"
import builtins, importlib, json, os, sys, tempfile
sys.dont_write_bytecode = True
root = os.path.realpath(os.getcwd())
sys.path.insert(0, root)
opened, listed, found, on = [], [], [], [False]
def hook(event, args):
    if not on[0]:
        return
    if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
        opened.append(os.fsdecode(args[0]))
    elif event == "os.listdir":
        listed.append("." if args[0] is None else os.fsdecode(args[0]))
sys.addaudithook(hook)
scratch, count = tempfile.mkdtemp(), [0]
def fresh():
    count[0] += 1
    return os.path.join(scratch, str(count[0]))
def seen(kind, result):
    if kind == "names":
        found.extend(os.path.join(listed[-1], n) for n in result)
    elif kind == "paths":
        found.extend(os.fspath(p) for p in result)
    elif kind == "entries":
        found.extend(e.path for e in result)
    elif kind == "walk":
        found.extend(os.path.join(d, f) for d, _, fs in result for f in fs)
builtins._seen, builtins._fresh = seen, fresh
def rel(p):
    p = os.path.realpath(p)
    if os.path.isfile(p) and p.startswith(root + os.sep):
        r = os.path.relpath(p, root)
        if not r.startswith(".git" + os.sep):
            return r
out = {}
for name in sys.stdin.read().split():
    opened.clear(); listed.clear(); found.clear()
    error = None
    try:
        module = importlib.import_module(name)
        on[0] = True
        module.read()
    except Exception as e:
        error = repr(e)
    on[0] = False
    files = sorted({r for r in map(rel, opened + found) if r})
    out[name] = {"files": files, "error": error}
print(json.dumps(out))
"#;

/// What the batches found.
#[derive(Default)]
struct Tally {
    cases: usize,
    read: usize,
    unbounded: usize,
    errors: BTreeMap<String, usize>,
    missed: usize,
    by_class: BTreeMap<String, usize>,
    examples: Vec<String>,
}

/// Runs every case's `read()` in one Python process: file → what it read, or its error.
fn truth(t: &TestRepo, cases: &[Case]) -> BTreeMap<String, Value> {
    let mut python = std::process::Command::new("python3")
        .arg("-c")
        .arg(HARNESS)
        .current_dir(&t.root)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("GATE_SPACE_UNSET")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = python.stdin.take().unwrap();
        for c in cases {
            writeln!(stdin, "{}", c.module).unwrap();
        }
    }
    let out = python.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// gate's plans: what each file imports, what it references, and its path facts.
struct Plans {
    imports: BTreeMap<String, BTreeSet<String>>,
    references: BTreeMap<String, BTreeSet<String>>,
    facts: BTreeMap<String, Value>,
}

fn plans(t: &TestRepo) -> Plans {
    let dir = t.root.join(".git/space-plans");
    let out = t
        .gate(&["plan", "--out", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let read = |name: &str| -> Value {
        serde_json::from_slice(&std::fs::read(dir.join(name)).unwrap()).unwrap()
    };
    let edges = |name: &str| {
        let mut map: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for e in read(name)["edges"].as_array().unwrap() {
            map.entry(e["from"].as_str().unwrap().to_string())
                .or_default()
                .insert(e["to"].as_str().unwrap().to_string());
        }
        map
    };
    let facts = read("ast-plan.json")["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap().to_string(), f.clone()))
        .collect();
    Plans {
        imports: edges("import-graph.json"),
        references: edges("reference-edges.json"),
        facts,
    }
}

impl Plans {
    /// What a change can reach `from` through: the files it imports (transitively), and what
    /// those files and it reference.
    fn covered(&self, from: &str) -> BTreeSet<String> {
        let mut modules = BTreeSet::from([from.to_string()]);
        let mut todo = vec![from.to_string()];
        while let Some(f) = todo.pop() {
            for to in self.imports.get(&f).into_iter().flatten() {
                if modules.insert(to.clone()) {
                    todo.push(to.clone());
                }
            }
        }
        let mut out = modules.clone();
        for m in &modules {
            out.extend(self.references.get(m).into_iter().flatten().cloned());
        }
        out
    }

    /// The path values and path strings gate recorded for a file, for a failure report.
    fn values(&self, file: &str) -> String {
        let f = &self.facts[file];
        let paths: Vec<String> = f["paths"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| format!("{}", p["value"]))
            .collect();
        let strings: Vec<String> = f["strings"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|s| format!("{}", s["value"]))
            .collect();
        format!("paths {paths:?}, strings {strings:?}")
    }
}

/// One repository of readers: the truth from Python, the answer from `gate plan`.
fn check(cases: &[Case], tally: &mut Tally) {
    let t = TestRepo::from_fixture("paths");
    for c in cases {
        t.write(&c.file, &c.source);
    }
    t.commit("readers");
    let truth = truth(&t, cases);
    let plans = plans(&t);
    for c in cases {
        tally.cases += 1;
        let got = &truth[&c.module];
        if let Some(e) = got["error"].as_str() {
            let kind = e.split('(').next().unwrap_or(e).to_string();
            *tally.errors.entry(kind).or_default() += 1;
        }
        let read: Vec<&str> = got["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap())
            .filter(|f| *f != c.file)
            .collect();
        if read.is_empty() {
            continue;
        }
        tally.read += 1;
        if !c.bounded {
            tally.unbounded += 1;
            continue;
        }
        let covered = plans.covered(&c.file);
        let missed: Vec<&&str> = read.iter().filter(|f| !covered.contains(**f)).collect();
        if missed.is_empty() {
            continue;
        }
        tally.missed += 1;
        for class in &c.class {
            *tally.by_class.entry(class.clone()).or_default() += 1;
        }
        tally.examples.push(format!(
            "{}: `{}` read {missed:?}; gate: {}\n[{}]\n{}",
            c.file,
            c.line,
            plans.values(&c.file),
            c.class.join("; "),
            c.source
        ));
    }
}

const CASES: usize = 2400;
const BATCH: usize = 800;

#[test]
fn every_file_a_path_expression_reads_is_covered() {
    let seed: u64 = std::env::var("GATE_PATH_SPACE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_9a75);
    eprintln!("path space: seed {seed} (GATE_PATH_SPACE_SEED), {CASES} cases");
    let mut rng = Rng(seed);
    let cases: Vec<Case> = (0..CASES).map(|i| case(&mut rng, i)).collect();
    let mut tally = Tally::default();
    for batch in cases.chunks(BATCH) {
        check(batch, &mut tally);
    }
    if let Ok(dump) = std::env::var("GATE_PATH_SPACE_DUMP") {
        std::fs::write(dump, tally.examples.join("\n---\n")).unwrap();
    }
    let classes: Vec<String> = tally
        .by_class
        .iter()
        .map(|(c, n)| format!("{n:5}  {c}"))
        .collect();
    eprintln!(
        "path space: {} cases, {} read a repository file ({} not boundable from their text), {} missed; errors {:?}",
        tally.cases, tally.read, tally.unbounded, tally.missed, tally.errors
    );
    assert!(
        tally.read * 10 >= tally.cases * 8,
        "most cases must read something, or the space tests nothing: {} of {}; errors {:?}",
        tally.read,
        tally.cases,
        tally.errors
    );
    assert!(
        tally.missed == 0,
        "{} of {} reads name a file gate's edges do not cover (seed {seed}).\nBy class:\n{}\n\nExamples:\n{}",
        tally.missed,
        tally.read,
        classes.join("\n"),
        tally.examples[..tally.examples.len().min(20)].join("\n---\n")
    );
}

/// A file name with glob characters in it (`case[1].json`, `{k}.json`, `a,b*.json`), in a
/// folder that may have them too.
fn odd_name(rng: &mut Rng) -> String {
    const PIECES: &[&str] = &[
        "a", "b", "7", "_", "-", ".", " ", "[1]", "[x]", "[0-9]", "[", "]", "{k}", "{", "}", ",",
        "*", "?", "a,b", "[!x]", "é", "ü",
    ];
    let mut stem: String = (0..1 + rng.below(4)).map(|_| rng.pick(PIECES)).collect();
    if stem.chars().all(|c| c == '.') {
        stem.push('a');
    }
    format!("{stem}.json")
}

/// `text` in a Python string that is also a `%` template, an f-string or a `.format` template.
fn in_template(text: &str, how: &str) -> String {
    match how {
        "percent" => text.replace('%', "%%"),
        "fstring" | "format" => text.replace('{', "{{").replace('}', "}}"),
        _ => text.to_string(),
    }
}

/// A reader of `folder/name` in one of the forms real code builds such a path: written whole,
/// or with a part of the name (or the folder) given at run time by a parameter.
fn odd_case(rng: &mut Rng, i: usize, folder: &str, name: &str) -> Case {
    let chars: Vec<char> = name.chars().collect();
    let cut = rng.below(chars.len());
    let end = cut + rng.below(chars.len() - cut + 1);
    let pre: String = chars[..cut].iter().collect();
    let mid: String = chars[cut..end].iter().collect();
    let post: String = chars[end..].iter().collect();
    let how = rng.pick(&[
        "literal", "escaped", "percent", "fstring", "format", "slash", "folder",
    ]);
    let q = |s: &str| format!("{s:?}");
    let (param, path) = match how {
        "literal" => (
            None,
            format!("os.path.join(HERE, {})", q(&format!("{folder}/{name}"))),
        ),
        "percent" => (
            Some(mid),
            format!(
                "os.path.join(HERE, {}, {} % arg)",
                q(folder),
                q(&format!(
                    "{}%s{}",
                    in_template(&pre, how),
                    in_template(&post, how)
                ))
            ),
        ),
        "fstring" => (
            Some(mid),
            format!(
                "os.path.join(HERE, f{})",
                q(&format!(
                    "{}/{}{{arg}}{}",
                    in_template(folder, how),
                    in_template(&pre, how),
                    in_template(&post, how)
                ))
            ),
        ),
        "format" => (
            Some(mid),
            format!(
                "os.path.join(HERE, {}.format(arg))",
                q(&format!(
                    "{}/{}{{}}{}",
                    in_template(folder, how),
                    in_template(&pre, how),
                    in_template(&post, how)
                ))
            ),
        ),
        // Every character past ASCII written as the source's escape (`caf\u00e9`, `\xe9`).
        "escaped" => {
            let escaped: String = format!("{folder}/{name}")
                .chars()
                .map(|c| match c as u32 {
                    // The pieces hold no quote or backslash.
                    0..0x80 => c.to_string(),
                    n if n < 0x100 && rng.below(2) == 0 => format!("\\x{n:02x}"),
                    n => format!("\\u{n:04x}"),
                })
                .collect();
            (None, format!("os.path.join(HERE, \"{escaped}\")"))
        }
        "slash" => (
            Some(mid),
            format!(
                "Path(HERE) / {} / ({} + arg + {})",
                q(folder),
                q(&pre),
                q(&post)
            ),
        ),
        _ => (
            Some(folder.to_string()),
            format!("os.path.join(HERE, arg, {})", q(name)),
        ),
    };
    let params = param.map_or(String::new(), |p| format!("arg={}", q(&p)));
    let line = format!("open({path}).close()");
    Case {
        bounded: true,
        file: format!("r{i}.py"),
        module: format!("r{i}"),
        source: format!(
            "import os\nfrom pathlib import Path\n\nHERE = os.path.dirname(__file__)\n\n\ndef read({params}):\n    {line}\n"
        ),
        line,
        class: vec![how.to_string()],
    }
}

/// Names holding glob characters, read by paths written whole or built around a part known
/// only at run time: Python opens each file, and gate's edges from its reader cover it. (A
/// path's text became a glob as written: `data[1].json` was a class matching `data1.json`
/// only, and a brace or comma broke the alternation gate writes around an unknown part.)
#[test]
fn names_with_glob_characters_are_covered() {
    let mut rng = Rng(0x0dd_9105);
    let t = TestRepo::from_fixture("paths");
    let folders = ["odd", "odd[2]", "odd{x},y"];
    let mut cases = Vec::new();
    for i in 0..240 {
        let folder = rng.pick(&folders);
        let name = odd_name(&mut rng);
        t.write(&format!("{folder}/{name}"), "{}\n");
        cases.push(odd_case(&mut rng, i, folder, &name));
    }
    for c in &cases {
        t.write(&c.file, &c.source);
    }
    t.commit("odd names");
    let truth = truth(&t, &cases);
    let plans = plans(&t);
    let mut missed = Vec::new();
    let mut read = 0;
    for c in &cases {
        let got = &truth[&c.module];
        let files: Vec<&str> = got["files"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|f| f.as_str())
            .collect();
        assert!(
            got["error"].is_null() && !files.is_empty(),
            "{}: `{}` read nothing: {}",
            c.file,
            c.line,
            got
        );
        read += 1;
        let covered = plans.covered(&c.file);
        for f in files.iter().filter(|f| !covered.contains(**f)) {
            missed.push(format!(
                "{} [{}]: `{}` read {f}; gate: {}",
                c.file,
                c.class.join(", "),
                c.line,
                plans.values(&c.file)
            ));
        }
    }
    assert_eq!(read, cases.len());
    assert!(
        missed.is_empty(),
        "{} of {} reads not covered:\n{}",
        missed.len(),
        cases.len(),
        missed.join("\n")
    );
}
