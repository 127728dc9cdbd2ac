//! The members: each a module in a folder of its own that loads or reads its files in one form
//! (`CLASSES`), spelled one of the ways real code spells it (`Gen`'s styles), with a
//! TypeScript copy for parsing.

use super::Member;
use super::spell::Gen;
use crate::support::Rng;

/// TypeScript-only text is written `«…»` (and TSX-only `‹…›`): left out of the JavaScript.
fn render(source: &str, dialect: &str) -> String {
    let mut out = String::new();
    let mut skip = 0;
    for c in source.chars() {
        match c {
            '«' if dialect == "js" => skip += 1,
            '‹' if dialect != "tsx" => skip += 1,
            '»' if dialect == "js" => skip -= 1,
            '›' if dialect != "tsx" => skip -= 1,
            '«' | '»' | '‹' | '›' => {}
            _ if skip > 0 => {}
            c => out.push(c),
        }
    }
    out
}

/// The content of a data file: JSON, whatever its name (a reader may parse it).
fn data(_rel: &str) -> &'static str {
    "{\"x\": 1}\n"
}

/// Data files a reader may name, below the member's folder.
const DATA: &[&str] = &["data/x.json", "data/deep/y.txt", "data/z.txt", "x.json"];

/// What a module target holds: neutral code, valid as an ES module and as CommonJS.
const NEUTRAL: &str = "globalThis.__gateLoaded = (globalThis.__gateLoaded || 0) + 1;\n";
pub(super) const ESM_TARGET: &str = "export const a = 1;\nexport default a;\n";

/// The classes of members, each with its weight.
const CLASSES: &[(&str, usize)] = &[
    ("read:path", 16),
    ("read:bound_folder", 4),
    ("read:reassigned", 4),
    ("read:shadowed", 3),
    ("read:loop", 2),
    ("read:helper", 4),
    ("read:bound_file", 3),
    ("read:dir", 5),
    ("read:opaque", 1),
    ("load:import", 6),
    ("load:export", 3),
    ("load:json_attribute", 1),
    ("load:require", 6),
    ("load:require_json", 2),
    ("load:require_dir", 2),
    ("load:resolve", 3),
    ("load:create_require", 4),
    ("load:dynamic", 5),
    ("load:template_folder", 3),
    ("load:concat", 3),
    ("load:bound_spec", 2),
    ("load:reassigned_spec", 2),
    ("load:unbounded", 3),
    ("load:ternary", 2),
    ("load:url", 4),
    ("load:worker", 1),
    ("load:transitive", 3),
    ("process:node", 1),
    ("process:tool", 2),
    ("env:read", 5),
];

fn pick_class(rng: &mut Rng) -> &'static str {
    let total: usize = CLASSES.iter().map(|c| c.1).sum();
    let mut at = rng.below(total);
    for (class, weight) in CLASSES {
        if at < *weight {
            return class;
        }
        at -= weight;
    }
    unreachable!()
}

pub(super) fn member(rng: &mut Rng, index: usize) -> Member {
    let class = pick_class(rng);
    // The file's kind: `.mjs`, `.cjs`, or `.js` of its folder's type.
    let (ext, esm, group) = match rng.below(4) {
        0 => ("mjs", true, rng.pick(&["esm", "cjs", "any"])),
        1 => ("cjs", false, rng.pick(&["esm", "cjs", "any"])),
        2 => ("js", true, "esm"),
        _ => ("js", false, rng.pick(&["cjs", "any"])),
    };
    let class = match class {
        // Forms only an ES module has.
        "load:import" | "load:export" | "load:json_attribute" | "load:create_require" if !esm => {
            "load:require"
        }
        c => c,
    };
    let sub = rng.chance(3);
    let dir = format!("{group}/m{index}");
    let mut g = Gen {
        rng,
        esm,
        dir: dir.clone(),
        sub,
        head: Vec::new(),
        body: Vec::new(),
        files: Vec::new(),
        tags: vec![format!("file:{ext}:{group}"), format!("sub:{sub}")],
        opaque: false,
        names: 0,
        fs_style: "",
        path_style: "",
        url_style: "",
        anchor: None,
        is_url: false,
    };
    g.fs_style = g.rng.pick(&[
        "default",
        "namespace",
        "named",
        "renamed",
        "alias",
        "dynamic",
        "destructured",
        "member",
    ]);
    g.path_style = g.rng.pick(&[
        "default",
        "namespace",
        "alias",
        "named",
        "renamed",
        "posix",
        "dynamic",
        "destructured",
    ]);
    g.url_style = g
        .rng
        .pick(&["named", "named_bare", "default", "namespace", "renamed"]);
    let (fs_style, path_style) = (g.fs_style, g.path_style);
    g.tag(format!("fs:{fs_style}"));
    g.tag(format!("path:{path_style}"));
    primary(&mut g, class);
    let loader_dir = if sub {
        format!("{dir}/sub")
    } else {
        dir.clone()
    };
    let loader = format!("{loader_dir}/main.{ext}");
    let source = assemble(&g);
    let mut files = std::mem::take(&mut g.files);
    files.push((loader.clone(), render(&source, "js")));
    let typed = g.rng.chance(3).then(|| {
        let tx = if esm {
            g.rng.pick(&["ts", "mts", "tsx"])
        } else {
            g.rng.pick(&["cts", "ts"])
        };
        let path = format!("{loader_dir}/main.{tx}");
        let dialect = if tx == "tsx" { "tsx" } else { "ts" };
        files.push((path.clone(), render(&source, dialect)));
        path
    });
    Member {
        index,
        loader,
        typed,
        files,
        class,
        tags: std::mem::take(&mut g.tags),
        opaque: g.opaque,
    }
}

/// The member's source: its imports, TypeScript's own lines, and its statements (in an
/// async function a CommonJS module exports, for `await`).
fn assemble(g: &Gen<'_>) -> String {
    let mut out = String::new();
    let (imports, consts): (Vec<&String>, Vec<&String>) =
        g.head.iter().partition(|l| l.starts_with("import "));
    for line in imports {
        out.push_str(line);
        out.push('\n');
    }
    out.push_str("«import type { Stats } from \"node:fs\";»\n");
    out.push_str("«type Json = { [key: string]: unknown };»\n");
    out.push_str("«interface Loaded<T> { value: T; at?: string }»\n");
    out.push_str("«enum Mode { Plain = \"plain\" }»\n");
    out.push_str("‹const view = <section data-mode=\"x\">{String(1 < 2)}</section>;›\n");
    let indent = if g.esm { "" } else { "  " };
    if !g.esm {
        for line in &consts {
            out.push_str(line);
            out.push('\n');
        }
        out.push_str("module.exports = (async () => {\n");
    } else {
        for line in &consts {
            out.push_str(line);
            out.push('\n');
        }
    }
    for line in &g.body {
        for l in line.lines() {
            out.push_str(indent);
            out.push_str(l);
            out.push('\n');
        }
    }
    if !g.esm {
        out.push_str("})();\n");
    }
    out
}

fn primary(g: &mut Gen<'_>, class: &str) {
    match class.split_once(':').map_or("", |(k, _)| k) {
        "read" => read_class(g, class),
        "load" => load_class(g, class),
        "process" => process_class(g, class),
        _ => env_class(g),
    }
}

fn read_class(g: &mut Gen<'_>, class: &str) {
    let rel = g.rng.pick(DATA);
    g.file(rel, data(rel));
    match class {
        "read:bound_file" | "read:bound_folder" | "read:loop" | "read:reassigned"
        | "read:shadowed" => read_bound(g, class, rel),
        _ => read_other(g, class, rel),
    }
}

/// Reads of paths bound to names: once, twice, shadowed, by a loop.
fn read_bound(g: &mut Gen<'_>, class: &str, rel: &str) {
    let (folder, name) = rel.rsplit_once('/').unwrap_or(("", rel));
    match class {
        "read:bound_folder" | "read:reassigned" => {
            let dir_rel = if folder.is_empty() { "." } else { folder };
            let name_var = g.fresh("DIR");
            let first = if class == "read:reassigned" {
                let p = g.path_expr("nope", false, true);
                g.line(format!("let {name_var}«: string» = {p};"));
                let p = g.path_expr(dir_rel, false, true);
                match g.rng.below(3) {
                    0 => g.line(format!("{name_var} = {p};")),
                    1 => g.line(format!("if (Date.now() > 0) {{\n  {name_var} = {p};\n}}")),
                    _ => {
                        let f = g.fresh("setDir");
                        g.line(format!(
                            "function {f}() {{\n  {name_var} = {p};\n}}\n{f}();"
                        ));
                    }
                }
                name_var.clone()
            } else {
                let p = g.path_expr(dir_rel, false, true);
                g.line(format!("const {name_var}«: string» = {p};"));
                name_var.clone()
            };
            let j = g.path("join");
            let q = g.quote(name);
            let stmt = g.read(&format!("{j}({first}, {q})"), false);
            g.line(stmt);
        }
        "read:bound_file" => {
            let n = g.fresh("FILE");
            if g.rng.chance(2) {
                let p = g.path_expr(rel, true, true);
                g.line(format!("const {n} = {p};"));
            } else {
                let nope = g.path_expr("nope.json", true, true);
                g.line(format!("let {n} = {nope};"));
                let p = g.path_expr(rel, true, true);
                g.line(format!("{n} = {p};"));
            }
            let stmt = g.read(&n, false);
            g.line(stmt);
        }
        "read:shadowed" => {
            let n = g.fresh("NAME");
            let f = g.fresh("readOne");
            g.line(format!("const {n} = \"nope.json\";"));
            let (a, j) = (g.anchor(), g.path("join"));
            let local = g.local(folder);
            let folder_arg = if local.is_empty() {
                String::new()
            } else {
                format!("\"{local}\", ")
            };
            let stmt = g.read(&format!("{j}({a}, {folder_arg}{n})"), false);
            g.line(format!(
                "async function {f}({n}«: string») {{\n  {stmt}\n}}\nawait {f}(\"{name}\");"
            ));
        }
        "read:loop" => {
            let n = g.fresh("item");
            let (a, j) = (g.anchor(), g.path("join"));
            let local = g.local(folder);
            let local = if local.is_empty() { ".".into() } else { local };
            let stmt = g.read(&format!("{j}({a}, \"{local}\", {n})"), false);
            g.line(format!(
                "for (const {n} of [\"{name}\", \"{name}\"]) {{\n  {stmt}\n}}"
            ));
        }
        _ => unreachable!("{class}"),
    }
}

/// Reads of paths written out, listings, helpers, opaque names.
fn read_other(g: &mut Gen<'_>, class: &str, rel: &str) {
    let folder = rel.rsplit_once('/').map_or("", |(f, _)| f);
    match class {
        "read:path" => {
            let p = g.path_expr(rel, true, true);
            let stmt = g.read(&p, false);
            g.line(stmt);
        }
        "read:dir" => {
            let folder = if folder.is_empty() { "data" } else { folder };
            g.file(&format!("{folder}/listed.txt"), "listed\n");
            let p = g.path_expr(folder, true, true);
            let stmt = g.read(&p, true);
            g.line(stmt);
        }
        "read:helper" => {
            let f = g.fresh("load");
            // The parameter may be a `URL`: no string wrapper.
            g.is_url = true;
            let inner = g.read("file", false);
            g.line(format!(
                "async function {f}(file«: string | URL»)«: Promise<void>» {{\n  {inner}\n}}"
            ));
            let p = g.path_expr(rel, true, true);
            g.line(format!("await {f}«<Json>»({p});"));
        }
        _ => {
            // No literal part gate can see: the name comes out of an array at run time.
            g.opaque = true;
            let parts: Vec<String> = g.cwd(rel).split('/').map(|s| format!("\"{s}\"")).collect();
            let n = g.fresh("file");
            g.line(format!("const {n} = [{}].join(\"/\");", parts.join(", ")));
            let stmt = g.read(&n, false);
            g.line(stmt);
        }
    }
}

/// The module a load names: its path below the member's folder, its content, and (for a
/// load that goes on) what it loads in turn.
fn target(g: &mut Gen<'_>, ext: &str) -> String {
    let rel = format!("lib/a.{ext}");
    let content = if ext == "mjs" { ESM_TARGET } else { NEUTRAL };
    g.file(&rel, content);
    rel
}

fn load_class(g: &mut Gen<'_>, class: &str) {
    match class {
        "load:export" | "load:import" | "load:json_attribute" => load_static(g, class),
        "load:create_require"
        | "load:require"
        | "load:require_dir"
        | "load:require_json"
        | "load:resolve" => load_require(g, class),
        "load:bound_spec"
        | "load:concat"
        | "load:dynamic"
        | "load:reassigned_spec"
        | "load:template_folder"
        | "load:ternary"
        | "load:unbounded" => load_dynamic(g, class),
        _ => load_other(g, class),
    }
}

/// Static imports and exports.
fn load_static(g: &mut Gen<'_>, class: &str) {
    match class {
        "load:import" => {
            let rel = target(g, "mjs");
            let q = g.quote(&g.spec(&rel)).replace('`', "\"");
            let form = g.rng.below(6);
            g.tag(format!("import:{form}"));
            let line = match form {
                0 => format!("import {q};"),
                1 => format!("import a from {q};"),
                2 => format!("import {{ a }} from {q};"),
                3 => format!("import * as ns from {q};"),
                4 => format!("import a, {{ a as b }} from {q};"),
                _ => format!("import {{\n  // the value\n  a,\n}} from\n  {q};"),
            };
            g.head(line);
        }
        "load:export" => {
            let rel = target(g, "mjs");
            let q = g.quote(&g.spec(&rel)).replace('`', "\"");
            let form = g.rng.below(5);
            g.tag(format!("export:{form}"));
            let line = match form {
                0 => format!("export {{ a }} from {q};"),
                1 => format!("export * from {q};"),
                2 => format!("export * as ns from {q};"),
                3 => format!("export {{ default as d }} from {q};"),
                _ => format!("export {{\n  a as b,\n}} from {q};"),
            };
            g.head(line);
        }
        "load:json_attribute" => {
            let rel = "data/x.json";
            g.file(rel, data(rel));
            let q = format!("\"{}\"", g.spec(rel));
            if g.rng.chance(2) {
                g.head(format!("import config from {q} with {{ type: \"json\" }};"));
            } else {
                g.line(format!(
                    "await import({q}, {{ with: {{ type: \"json\" }} }});"
                ));
            }
        }
        _ => unreachable!("{class}"),
    }
}

/// `require`, `require.resolve`, `import.meta.resolve`, `createRequire`.
fn load_require(g: &mut Gen<'_>, class: &str) {
    match class {
        "load:require" | "load:require_json" | "load:require_dir" => {
            let rel = match class {
                "load:require" => {
                    if g.rng.chance(2) {
                        target(g, "cjs")
                    } else {
                        g.file("lib/a.js", NEUTRAL);
                        "lib/a".to_string()
                    }
                }
                "load:require_json" => {
                    g.file("data/x.json", data("x.json"));
                    "data/x.json".to_string()
                }
                _ => {
                    g.file("lib/index.js", NEUTRAL);
                    "lib".to_string()
                }
            };
            let req = requirer(g);
            let q = g.quote(&g.spec(&rel));
            let q = g.deco(&q);
            g.line(format!("{req}({q});"));
        }
        "load:resolve" => {
            let rel = target(g, if g.esm { "mjs" } else { "cjs" });
            let q = g.quote(&g.spec(&rel));
            let q = g.deco(&q);
            let line = if g.esm && g.rng.chance(2) {
                g.tag("import.meta.resolve");
                format!("import.meta.resolve({q});")
            } else {
                let req = requirer(g);
                format!("{req}.resolve({q});")
            };
            g.line(line);
        }
        "load:create_require" => {
            let rel = if g.rng.chance(2) {
                target(g, "cjs")
            } else {
                // No extension: `require` finds `lib/a.js`.
                g.file("lib/a.js", NEUTRAL);
                "lib/a".to_string()
            };
            let q = g.quote(&g.spec(&rel));
            let form = g.rng.below(4);
            g.tag(format!("create_require:{form}"));
            let line = match form {
                0 => {
                    g.head("import { createRequire } from \"node:module\";".into());
                    format!("createRequire(import.meta.url)({q});")
                }
                1 => {
                    g.head("import { createRequire as cr } from \"module\";".into());
                    g.head("const req = cr(import.meta.url);".into());
                    format!("req({q});")
                }
                2 => {
                    g.head("import module from \"node:module\";".into());
                    format!("module.createRequire(import.meta.url)({q});")
                }
                _ => {
                    g.head("import * as nodeModule from \"node:module\";".into());
                    g.head("const load = nodeModule.createRequire(import.meta.url);".into());
                    format!("load({q});")
                }
            };
            g.line(line);
        }
        _ => unreachable!("{class}"),
    }
}

/// `import()` (and `require`) of computed specifiers.
fn load_dynamic(g: &mut Gen<'_>, class: &str) {
    match class {
        "load:dynamic" => {
            let rel = target(g, "mjs");
            let q = g.quote(&g.spec(&rel));
            let q = g.deco(&q);
            let line = match g.rng.below(3) {
                0 => format!("await import({q});"),
                1 => format!("await (import({q}));"),
                _ => format!("await import({q}).then((m«: any») => m.default);"),
            };
            g.line(line);
        }
        "load:template_folder" | "load:concat" => {
            for lang in ["en", "fr"] {
                g.file(&format!("locale/{lang}.mjs"), ESM_TARGET);
            }
            let lang = g.fresh("lang");
            match g.rng.below(3) {
                0 => g.line(format!(
                    "const {lang} = process.env.GATE_JS_UNSET ?? \"en\";"
                )),
                1 => g.line(format!("const {lang} = [\"en\"][0];")),
                _ => g.line(format!("const {lang} = String(\"en\");")),
            }
            let folder = g.spec("locale/");
            let spec = if class == "load:template_folder" {
                format!("`{folder}${{{lang}}}.mjs`")
            } else {
                format!("\"{folder}\" + {lang} + \".mjs\"")
            };
            let line = if !g.esm && g.rng.chance(2) {
                let req = requirer(g);
                format!("{req}({spec});")
            } else {
                format!("await import({spec});")
            };
            g.line(line);
        }
        "load:bound_spec" | "load:reassigned_spec" => {
            let rel = target(g, "mjs");
            let spec = g.spec(&rel);
            let n = g.fresh("spec");
            if class == "load:bound_spec" {
                g.line(format!("const {n} = \"{spec}\"« as const»;"));
            } else {
                // Bound first to a folder gate could bound, then to another.
                let which = g.fresh("which");
                g.line(format!("const {which} = \"a\";"));
                let (other, lib) = (g.spec("other/"), g.spec("lib/"));
                g.line(format!("let {n}«: string» = `{other}${{{which}}}.mjs`;"));
                g.line(format!("{n} = `{lib}${{{which}}}.mjs`;"));
            }
            g.line(format!("await import({n});"));
        }
        "load:ternary" => {
            let rel = target(g, if g.esm { "mjs" } else { "cjs" });
            g.file("data/x.json", data("x.json"));
            let (a, b) = (g.spec(&rel), g.spec("data/x.json"));
            let line = if g.esm {
                format!("await import(Date.now() > 0 ? \"{a}\" : \"{b}\");")
            } else if g.rng.chance(2) {
                format!("require(Date.now() > 0 ? \"{b}\" : \"{a}\");")
            } else {
                format!("require(Date.now() > 0 ? \"{a}\" : \"{b}\");")
            };
            g.line(line);
        }
        "load:unbounded" => {
            let rel = target(g, "mjs");
            let spec = g.spec(&rel);
            let n = g.fresh("name");
            let (dir, name) = spec.rsplit_once('/').unwrap_or_default();
            g.line(format!("const {n} = [\"{dir}\", \"{name}\"].join(\"/\");"));
            let line = match g.rng.below(4) {
                0 => format!("await import({n});"),
                1 => format!("await import(/* @vite-ignore */ {n});"),
                2 if g.esm => format!("import.meta.resolve({n});"),
                _ => {
                    let req = requirer(g);
                    g.file("lib/a.js", NEUTRAL);
                    format!("{req}({n}.replace(\".mjs\", \".js\"));")
                }
            };
            g.line(line);
        }
        _ => unreachable!("{class}"),
    }
}

/// `URL`s and paths as specifiers, workers, and modules that load or read in turn.
fn load_other(g: &mut Gen<'_>, class: &str) {
    match class {
        "load:url" => {
            let esm = g.esm;
            let rel = target(g, if esm { "mjs" } else { "cjs" });
            let line = match (esm, g.rng.below(3)) {
                (true, 0) => {
                    let q = g.quote(&g.spec(&rel));
                    format!("await import(new URL({q}, import.meta.url).href);")
                }
                (true, 1) => {
                    let q = g.quote(&g.spec(&rel));
                    format!("await import(new URL({q}, import.meta.url));")
                }
                _ => {
                    let p = g.path_expr(&rel, false, false);
                    let to_url = g.url("pathToFileURL");
                    if esm || g.rng.chance(2) {
                        format!("await import({to_url}({p}).href);")
                    } else {
                        let req = requirer(g);
                        format!("{req}({p});")
                    }
                }
            };
            g.line(line);
        }
        "load:worker" => {
            g.file("lib/w.mjs", ESM_TARGET);
            let worker = if g.esm {
                g.head("import { Worker } from \"node:worker_threads\";".into());
                "Worker"
            } else {
                g.head("const { Worker } = require(\"worker_threads\");".into());
                "Worker"
            };
            let arg = match (g.esm, g.rng.below(3)) {
                (true, 0) => format!("new URL(\"{}\", import.meta.url)", g.spec("lib/w.mjs")),
                (_, 1) => g.path_expr("lib/w.mjs", false, false),
                _ => format!("\"./{}\"", g.cwd("lib/w.mjs")),
            };
            g.line(format!(
                "await new Promise((ok, no) => new {worker}({arg}).on(\"exit\", ok).on(\"error\", no));"
            ));
        }
        _ => {
            // A module that loads or reads in turn.
            let data_rel = "data/t.json";
            g.file(data_rel, data(data_rel));
            g.file("lib/b.mjs", ESM_TARGET);
            let esm_target = g.esm || g.rng.chance(2);
            let (rel, content) = if esm_target {
                (
                    "lib/t.mjs",
                    "import fs from \"node:fs\";\nimport \"./b.mjs\";\nfs.readFileSync(new URL(\"../data/t.json\", import.meta.url));\n",
                )
            } else {
                (
                    "lib/t.cjs",
                    "const path = require(\"path\");\nrequire(\"fs\").readFileSync(path.join(__dirname, \"..\", \"data\", \"t.json\"));\n",
                )
            };
            g.file(rel, content);
            let q = g.quote(&g.spec(rel));
            let line = if esm_target {
                format!("await import({q});")
            } else {
                let req = requirer(g);
                format!("{req}({q});")
            };
            g.line(line);
        }
    }
}

/// A `require` function: CommonJS's own, or one `createRequire` makes in an ES module.
fn requirer(g: &mut Gen<'_>) -> String {
    if !g.esm {
        return "require".to_string();
    }
    g.head("import { createRequire } from \"node:module\";".into());
    g.head("const require = createRequire(import.meta.url);".into());
    "require".to_string()
}

fn process_class(g: &mut Gen<'_>, class: &str) {
    let cp = if g.esm {
        g.head("import * as cp from \"node:child_process\";".into());
        "cp."
    } else if g.rng.chance(2) {
        g.head(
            "const { execFileSync, spawn, spawnSync, execSync, fork } = require(\"child_process\");"
                .into(),
        );
        ""
    } else {
        g.head("const cp = require(\"node:child_process\");".into());
        "cp."
    };
    if class == "process:node" {
        g.file(
            "script.cjs",
            "require(\"fs\").readFileSync(__dirname + \"/data/c.txt\");\n",
        );
        g.file("data/c.txt", "c\n");
        let script = g.cwd("script.cjs");
        let line = match g.rng.below(5) {
            4 => format!(
                "await new Promise((ok) => {cp}spawn(\"node\", [\"{script}\"]).on(\"exit\", ok));"
            ),
            0 => format!("{cp}execFileSync(\"node\", [\"{script}\"]);"),
            1 => format!("{cp}spawnSync(process.execPath, [\"{script}\"]);"),
            2 => format!("{cp}execSync(\"node {script}\");"),
            _ => format!(
                "await new Promise((ok) => {cp}fork(\"{script}\", [], {{ execArgv: [] }}).on(\"exit\", ok));"
            ),
        };
        g.line(line);
    } else {
        let file = g.cwd("data/z.txt");
        g.file("data/z.txt", "z\n");
        g.file("tool.sh", "cat \"$1\" > /dev/null\n");
        let tool = g.cwd("tool.sh");
        let line = match g.rng.below(3) {
            0 => format!("{cp}execFileSync(\"cat\", [\"{file}\"]);"),
            1 => format!("{cp}execSync(\"cat {file}\");"),
            _ => format!("{cp}execFileSync(\"sh\", [\"{tool}\", \"{file}\"]);"),
        };
        g.line(line);
    }
}

fn env_class(g: &mut Gen<'_>) {
    let name = format!("GATE_JS_{}", g.dir.replace('/', "_").to_uppercase());
    let form = g.rng.below(6);
    g.tag(format!("env:{form}"));
    let line = match form {
        0 => format!("process.env.{name};"),
        1 => format!("process.env[\"{name}\"];"),
        2 => format!("process.env?.{name};"),
        3 => format!("const {{ {name} }} = process.env;"),
        4 => format!("const {{ {name}: value = \"d\" }} = process.env;"),
        _ => format!("\"{name}\" in process.env;"),
    };
    g.line(line);
}
