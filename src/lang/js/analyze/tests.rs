//! The JavaScript and TypeScript analyser against small sources: TypeScript's and TSX's own
//! syntax, Node's modules under other names, names bound again, the environment, a file cut
//! at `MAX_PARSED`. The space of forms against real Node is `tests/it/js_forms.rs`.

use super::*;
use crate::analyze::facts::{MAX_PARSED, StringContext};

fn facts(path: &str, src: &str) -> Facts {
    analyze(Dialect::of(path), src.as_bytes())
}

/// `(line, module, form)` of every import.
fn imports(f: &Facts) -> Vec<(u32, String, String)> {
    f.imports
        .iter()
        .map(|i| (i.line, i.module.clone(), i.names[0].clone()))
        .collect()
}

fn import(line: u32, module: &str, form: &str) -> (u32, String, String) {
    (line, module.to_string(), form.to_string())
}

/// `(line, value)` of every path expression.
fn paths(f: &Facts) -> Vec<(u32, PathValue)> {
    f.paths.iter().map(|p| (p.line, p.value.clone())).collect()
}

fn file_dir(p: &str) -> PathValue {
    PathValue::FileDir(p.to_string())
}

fn strings(f: &Facts, context: StringContext) -> Vec<(u32, String)> {
    f.strings
        .iter()
        .filter(|s| s.context == context)
        .map(|s| (s.line, s.value.clone()))
        .collect()
}

#[test]
fn typescript_only_forms() {
    let src = r#"import type { A } from "./a";
import { type B, C } from "./b";
import x = require("./c");
export type * from "./d";
export type * as NS from "./d2";
export type { E } from "./e";
/// <reference path="./f.d.ts" />
/// <reference types="node" />
const m = new Map<string, Array<number>>();
function id<T extends object>(v: T): T { return v; }
const y = id<{ a: string }>({ a: "b" });
const z = <any>require("./g");
enum Mode { A = "a", B = 1 << 2 }
declare module "virtual" { export const v: number; }
abstract class Base<T> { abstract get(): T; }
const cfg = { dir: "x" } satisfies Record<string, string>;
const w = (import.meta as any).dirname!;
export default await import("./h") as unknown as typeof import("./i");
"#;
    let f = facts("src/t.ts", src);
    assert!(f.parse_errors.is_empty(), "{:?}", f.parse_errors);
    assert_eq!(
        imports(&f),
        vec![
            import(1, "./a", "type"),
            import(2, "./b", "import"),
            import(3, "./c", "require"),
            import(4, "./d", "type"),
            import(5, "./d2", "type"),
            import(6, "./e", "type"),
            import(7, "./f.d.ts", "reference"),
            import(12, "./g", "require"),
            import(18, "./h", "dynamic"),
            // `typeof import("./i")` is a type: erased, kept as `import type` is.
            import(18, "./i", "type"),
        ]
    );
    assert!(f.dynamic_imports.is_empty(), "{:?}", f.dynamic_imports);
}

#[test]
fn generics_and_jsx_do_not_confuse_the_walk() {
    let src = r#"import React from "react";
const pick = <T,>(items: T[]): T => items[0];
export function List<T extends { id: string }>({ items }: { items: T[] }) {
  return (
    <ul className="list">
      {items.map((i) => <li key={i.id}>{i.id > "a" ? <b>{"x"}</b> : null}</li>)}
      <Row<T> value={pick(items)} />
    </ul>
  );
}
const late = await import("./late");
const data = require("./data.json");
"#;
    let tsx = facts("src/list.tsx", src.replace("<Row<T> ", "<Row ").as_str());
    assert!(tsx.parse_errors.is_empty(), "{:?}", tsx.parse_errors);
    assert_eq!(
        imports(&tsx),
        vec![
            import(1, "react", "import"),
            import(11, "./late", "dynamic"),
            import(12, "./data.json", "require"),
        ]
    );
    // The same file as JavaScript (JSX without types) and as `.jsx`.
    let js = src
        .replace("<T,>(items: T[]): T", "(items)")
        .replace(
            "<T extends { id: string }>({ items }: { items: T[] })",
            "({ items })",
        )
        .replace("<Row<T> ", "<Row ");
    for path in ["src/list.js", "src/list.jsx"] {
        let f = facts(path, &js);
        assert!(f.parse_errors.is_empty(), "{path}: {:?}", f.parse_errors);
        assert_eq!(imports(&f), imports(&tsx), "{path}");
    }
}

#[test]
fn node_modules_and_functions_under_other_names() {
    let src = r#"import { join as j } from "node:path";
import * as u from "url";
import nodeModule from "node:module";
import { createRequire as cr } from "module";
const p = require("path");
const { readFileSync: rf } = require("fs");
const read = require("node:fs").readFileSync;
const req = cr(import.meta.url);
const { dirname } = p;
rf(p.join(__dirname, "a.json"));
load(j(__dirname, "b.json"));
load(u.fileURLToPath(new URL("./c.json", import.meta.url)));
read("d.json");
req("./e");
req.resolve("./f");
nodeModule.createRequire(import.meta.url)("./g");
load(p.posix.resolve(dirname(__filename), "h.json"));
["a", "b"].join("/");
"#;
    let f = facts("src/m.cjs", src);
    assert_eq!(
        imports(&f)
            .into_iter()
            .filter(|i| i.1.starts_with("./"))
            .collect::<Vec<_>>(),
        vec![
            import(14, "./e", "require"),
            import(15, "./f", "resolve"),
            import(16, "./g", "require"),
        ]
    );
    assert_eq!(
        paths(&f),
        vec![
            (10, file_dir("a.json")),
            (11, file_dir("b.json")),
            (12, file_dir("c.json")),
            (17, file_dir("h.json")),
        ]
    );
    assert_eq!(
        strings(&f, StringContext::PathArg),
        vec![(13, "d.json".to_string())]
    );
}

#[test]
fn names_bound_again_are_not_trusted() {
    let src = r#"const once = "./lib/a.mjs";
await import(once);
let again = "./lib/b.mjs";
again = pick();
await import(again);
const DIR = join(__dirname, "nope");
function read(DIR) { return readFileSync(join(DIR, "x.json")); }
for (const item of list) readFileSync(join(__dirname, "data", item));
try { f(); } catch (once2) { readFileSync(once2); }
let later;
later = join(__dirname, "later.json");
readFileSync(later);
"#;
    let f = facts("src/n.mjs", src);
    assert_eq!(
        imports(&f),
        vec![import(2, "./lib/a.mjs", "dynamic")],
        "a name bound once is its value"
    );
    assert_eq!(
        f.dynamic_imports.iter().map(|d| d.line).collect::<Vec<_>>(),
        vec![5],
        "a name bound twice is unknown"
    );
    let sealed = |p: &str| PathValue::Relative(p.to_string());
    assert_eq!(
        paths(&f),
        vec![
            (6, file_dir("nope")),
            // The parameter shadows the constant: a folder anywhere, then `x.json`.
            (7, sealed("**/x.json")),
            (8, file_dir("data/*")),
            (11, file_dir("later.json")),
        ]
    );
}

#[test]
fn environment_reads_by_name_and_whole() {
    let src = r#"process.env.A;
process.env["B"];
process.env?.C;
const { D, E: e, F = "1", "G": g } = process.env;
if ("H" in process.env) {}
import.meta.env.VITE_I;
process.env[key];
const all = { ...process.env };
const env = process.env;
const { J, ...rest } = process.env;
"#;
    let f = facts("src/e.mjs", src);
    assert_eq!(f.env, ["A", "B", "C", "D", "E", "F", "G", "H", "VITE_I"]);
    let lines: Vec<u32> = f.env_any.iter().map(|(l, _)| *l).collect();
    assert_eq!(lines, [7, 8, 9, 10], "{:?}", f.env_any);
}

#[test]
fn arguments_after_comments_and_in_parentheses() {
    let src = r#"require(/* the config */ "./a");
await import(/* webpackChunkName: "b" */ "./b");
require(("./c"));
await (import(
  // the lazy one
  "./d"
));
readFileSync(/* data */ "e.json");
"#;
    let f = facts("src/c.mjs", src);
    assert_eq!(
        imports(&f),
        vec![
            import(1, "./a", "require"),
            import(2, "./b", "dynamic"),
            import(3, "./c", "require"),
            import(6, "./d", "dynamic"),
        ]
    );
    assert!(f.dynamic_imports.is_empty(), "{:?}", f.dynamic_imports);
    assert_eq!(
        strings(&f, StringContext::PathArg),
        vec![(8, "e.json".to_string())]
    );
}

#[test]
fn computed_specifiers_are_exact_a_folder_or_unbounded() {
    let src = r#"await import(`./locale/${lang}.js`);
await import("./plugins/" + name);
await import(new URL("./u.js", import.meta.url));
require(path.join(__dirname, "lib", "v.cjs"));
await import(pathToFileURL(join(import.meta.dirname, "w.js")).href);
await import(name);
await import(`${base}/x.js`);
require.resolve(`../up/${name}`);
"#;
    let f = facts("src/d.mjs", src);
    assert_eq!(
        imports(&f),
        vec![
            import(1, "./locale/", "under"),
            import(2, "./plugins/", "under"),
            import(3, "./u.js", "dynamic"),
            import(4, "./lib/v.cjs", "require"),
            import(5, "./w.js", "dynamic"),
            import(8, "../up/", "under"),
        ]
    );
    let unbounded: Vec<u32> = f.dynamic_imports.iter().map(|d| d.line).collect();
    assert_eq!(unbounded, [6, 7]);
}

#[test]
fn paths_built_on_the_files_folder_count_wherever_they_go() {
    let src = r#"load(__dirname + "/a.json");
load(`${import.meta.dirname}/b.json`);
load(process.cwd() + "/c.json");
load((__dirname + "/d.json").toString());
load("x" + y);
load(`${y}/z.json`);
const HERE = dirname(fileURLToPath(import.meta.url));
load(`${HERE}/../e.json`);
"#;
    let f = facts("src/p.mjs", src);
    assert_eq!(
        paths(&f),
        vec![
            (1, file_dir("a.json")),
            (2, file_dir("b.json")),
            (3, PathValue::Relative("./c.json".into())),
            (4, file_dir("d.json")),
            (8, file_dir("../e.json")),
        ]
    );
}

#[test]
fn a_file_over_max_parsed_is_cut_and_flagged() {
    let mut src =
        String::from("import \"./first.js\";\nreadFileSync(\"data/early.json\");\nconst big = [\n");
    while src.len() <= MAX_PARSED {
        src.push_str("  \"a line of generated data that says nothing at all\",\n");
    }
    src.push_str("];\n");
    let cut = src.lines().count() as u32;
    src.push_str(concat!(
        "import \"./late.js\";\n",
        "export * from \"./late2.js\";\n",
        "const x = require(\"./late3\");\n",
        "import {\n  a,\n  b,\n} from \"./late4.js\";\n",
        "await import(name);\n",
        "readFileSync(\"data/late.json\");\n",
    ));
    let f = facts("gen/big.js", &src);
    let at = f.cut_at.expect("a file over MAX_PARSED is cut");
    assert!(at <= cut, "cut at {at}, the data ends at {cut}");
    assert!(f.flags().is_some_and(|flags| flags.cut_at == Some(at)));
    let found: Vec<String> = f.imports.iter().map(|i| i.module.clone()).collect();
    assert_eq!(
        found,
        [
            "./first.js",
            "./late.js",
            "./late2.js",
            "./late3",
            "./late4.js"
        ]
    );
    let late = f.imports.iter().find(|i| i.module == "./late4.js").unwrap();
    assert_eq!(late.line, cut + 4, "a statement keeps its first line");
    assert_eq!(
        f.dynamic_imports.len(),
        1,
        "a load past the cut is still a load"
    );
    // Past the cut only loads are read.
    assert_eq!(
        strings(&f, StringContext::PathArg),
        vec![(2, "data/early.json".to_string())]
    );
}

#[test]
fn nesting_deeper_than_gate_evaluates_is_flagged() {
    let deep = format!("{}\"x.json\"{}", "(".repeat(200), ")".repeat(200));
    let src = format!(
        "readFileSync({deep});\nreadFileSync(join(__dirname, {}));\n",
        {
            let mut e = "\"y.json\"".to_string();
            for _ in 0..40 {
                e = format!("join({e})");
            }
            e
        }
    );
    let f = facts("src/deep.js", &src);
    assert_eq!(f.too_deep, [2]);
    assert!(f.flags().is_some());
}
