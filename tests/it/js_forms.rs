//! The space of JavaScript load and read forms, checked against the real runtime: thousands of
//! seeded members, each a module (`.mjs`, `.cjs`, `.js` of either module type) in a folder of
//! its own that loads or reads its own files in one of the forms real code uses — static
//! `import`, `export … from`, `require` (of a file, a folder, JSON), `require.resolve`,
//! `import.meta.resolve`, `createRequire`, `import()` of a literal, a template or a sum with a
//! literal folder, or of a name with no literal part; `new URL(…, import.meta.url)`,
//! `fileURLToPath`, `path.join`/`resolve` on `__dirname`, `import.meta.dirname` or a folder bound
//! to a name, paths from the working folder, folder listings, workers, child processes, and
//! `process.env` reads — written every way the pieces are spelled (aliased and renamed
//! modules and functions, comments, parentheses, line breaks, `await`, bound names, names
//! bound again or shadowed). Real `node` runs every member once, in one process under
//! `strace` (every repository file a member or its children opened, stat-ed or listed) and an
//! observer of `process.env`; `gate plan` reads the same tree. Every file a member really
//! loaded or read must be reached by gate's graph from the member's file — or, for a module,
//! the file holds an unbounded import (`may_load`) — and every variable it read by name must
//! be among its file's variables. A TypeScript copy of many members (type annotations,
//! generics, `as`, `satisfies`, `!`, JSX in `.tsx`), which Node 20 cannot run, must parse
//! without errors and reach at least what its JavaScript original really read.
//!
//! The forms of `docs/src/load-forms.md`'s JavaScript section are executed here too.

mod generate;
mod spell;
mod table;

use generate::member;

use crate::support::{Rng, text};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MEMBERS: usize = 2400;

/// Member folders: `esm/` (`"type": "module"`), `cjs/` (`"type": "commonjs"`), `any/` (the
/// root's manifest, no type: CommonJS, or ES modules by their syntax).
const GROUPS: &[(&str, &str)] = &[
    ("esm", "{\"type\": \"module\"}\n"),
    ("cjs", "{\"type\": \"commonjs\"}\n"),
];

struct Member {
    index: usize,
    loader: String,
    /// The TypeScript copy, checked by parsing.
    typed: Option<String>,
    files: Vec<(String, String)>,
    class: &'static str,
    tags: Vec<String>,
    /// It reads a path its text does not bound (`readFileSync(p)` of a computed `p`): gate
    /// does not see it (the guide's "not seen"), and the member is counted apart.
    opaque: bool,
}

/// Records the env variables each member reads, by name (the members read `GATE_JS_*`).
const OBSERVER: &str = r#"
import { writeFileSync } from "node:fs";
const out = process.env.GATE_OBSERVER_OUT;
const seen = [];
const note = (k) => {
  if (typeof k === "string" && k.startsWith("GATE_JS_")) seen.push([String(globalThis.__gateMember), k]);
};
const env = new Proxy(process.env, {
  get(t, k) { note(k); return Reflect.get(t, k); },
  has(t, k) { note(k); return Reflect.has(t, k); },
  getOwnPropertyDescriptor(t, k) { note(k); return Reflect.getOwnPropertyDescriptor(t, k); },
});
Object.defineProperty(process, "env", { value: env, configurable: true, writable: true, enumerable: true });
process.on("exit", () => { if (out) writeFileSync(`${out}.${process.pid}`, JSON.stringify(seen)); });
"#;

/// Imports every member in turn (awaiting what a CommonJS one exports): the errors, by member.
const DRIVER: &str = r#"
import { pathToFileURL } from "node:url";
import { readFileSync, writeFileSync } from "node:fs";
const [list, out, scratch] = process.argv.slice(2);
let copies = 0;
globalThis.__gateCopy = () => `${scratch}/c${++copies}`;
const errors = {};
let current = null;
process.on("unhandledRejection", (e) => { errors[current] = "unhandled: " + String(e); });
for (const line of readFileSync(list, "utf8").split("\n")) {
  if (!line) continue;
  const [index, file] = line.split(" ");
  current = index;
  globalThis.__gateMember = index;
  try {
    const run = (async () => {
      const m = await import(pathToFileURL(file).href);
      const d = m.default;
      if (d && typeof d.then === "function") await d;
    })();
    let timer;
    const late = new Promise((_, no) => { timer = setTimeout(() => no(new Error("timeout")), 20000); });
    await Promise.race([run, late]);
    clearTimeout(timer);
  } catch (e) {
    errors[index] = String((e && e.stack) || e).slice(0, 400);
  }
}
globalThis.__gateMember = null;
writeFileSync(out, JSON.stringify(errors));
"#;

/// What a run really did: per member, the repository files it loaded or read, the variables
/// it read, its error.
#[derive(Default)]
struct Truth {
    files: BTreeMap<usize, BTreeSet<String>>,
    env: BTreeMap<usize, BTreeSet<String>>,
    errors: BTreeMap<usize, String>,
}

/// The member a repository path belongs to (`esm/m12/…` → 12).
fn owner(path: &str) -> Option<usize> {
    path.split('/').nth(1)?.strip_prefix('m')?.parse().ok()
}

/// The first quoted string of an strace line, and whether the call succeeded.
fn traced(line: &str) -> Option<(&str, String)> {
    let call = line.split('(').next()?;
    let start = line.find('"')? + 1;
    let end = start + line[start..].find('"')?;
    let ret = line.rsplit(" = ").next()?;
    if !ret.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    Some((call, line[start..end].to_string()))
}

fn run_node(root: &Path, scratch: &Path, members: &[Member]) -> Truth {
    let list: String = members
        .iter()
        .map(|m| format!("{} {}\n", m.index, m.loader))
        .collect();
    std::fs::write(scratch.join("list.txt"), list).unwrap();
    std::fs::write(scratch.join("observer.mjs"), OBSERVER).unwrap();
    std::fs::write(scratch.join("driver.mjs"), DRIVER).unwrap();
    let traces = scratch.join("trace");
    std::fs::create_dir_all(scratch.join("copies")).unwrap();
    std::fs::create_dir_all(&traces).unwrap();
    let mut node = std::process::Command::new("strace");
    // The members read `GATE_JS_*` variables: none is set where they run.
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("GATE_JS_") {
            node.env_remove(key);
        }
    }
    let out = node
        .args([
            "-f",
            "-ff",
            "-qq",
            "-s",
            "512",
            "-e",
            "trace=%file",
            "-e",
            "signal=none",
            "-o",
        ])
        .arg(traces.join("t"))
        .arg("node")
        .arg("--no-warnings")
        .arg("--import")
        .arg(url_of(&scratch.join("observer.mjs")))
        .arg(scratch.join("driver.mjs"))
        .arg(scratch.join("list.txt"))
        .arg(scratch.join("errors.json"))
        .arg(scratch.join("copies"))
        .current_dir(root)
        .env("GATE_OBSERVER_OUT", scratch.join("env.json"))
        .env_remove("NODE_OPTIONS")
        .output()
        .unwrap();
    assert!(out.status.success(), "node: {}", text(&out));
    let mut truth = Truth::default();
    let errors: BTreeMap<String, String> =
        serde_json::from_slice(&std::fs::read(scratch.join("errors.json")).unwrap()).unwrap();
    for (k, e) in errors {
        truth.errors.insert(k.parse().unwrap_or(usize::MAX), e);
    }
    let prefix = format!("{}/", root.display());
    for entry in std::fs::read_dir(&traces).unwrap() {
        let trace = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for line in trace.lines() {
            let Some((call, path)) = traced(line) else {
                continue;
            };
            let rel = path.strip_prefix(&prefix).unwrap_or(&path);
            if rel.starts_with('/') {
                continue;
            }
            let rel = rel.trim_start_matches("./").to_string();
            let Some(m) = owner(&rel) else { continue };
            let full = root.join(&rel);
            let found: Vec<String> = if call == "openat" && line.contains("O_DIRECTORY") {
                // A listing: the names in the folder.
                std::fs::read_dir(&full)
                    .unwrap()
                    .map(|e| e.unwrap())
                    .filter(|e| e.file_type().unwrap().is_file())
                    .map(|e| format!("{rel}/{}", e.file_name().to_string_lossy()))
                    .collect()
            } else if full.is_file() {
                vec![rel]
            } else {
                Vec::new()
            };
            let files = truth.files.entry(m).or_default();
            files.extend(
                found
                    .into_iter()
                    .filter(|f| !f.ends_with("package.json"))
                    .map(|f| normalize(&f)),
            );
        }
    }
    for entry in std::fs::read_dir(scratch).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !name.starts_with("env.json.") {
            continue;
        }
        let seen: Vec<(String, String)> =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        for (member, var) in seen {
            if let Ok(m) = member.parse() {
                truth.env.entry(m).or_default().insert(var);
            }
        }
    }
    truth
}

fn url_of(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// `a/./b/../c` → `a/c`.
fn normalize(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            p => out.push(p),
        }
    }
    out.join("/")
}

/// What `gate plan` says of the tree.
struct Plans {
    forward: BTreeMap<String, BTreeSet<String>>,
    files: BTreeMap<String, Value>,
}

fn plans(out: &Path) -> Plans {
    let read = |name: &str| -> Value {
        serde_json::from_slice(&std::fs::read(out.join(name)).unwrap()).unwrap()
    };
    let mut forward: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for plan in ["import-graph.json", "reference-edges.json"] {
        for e in read(plan)["edges"].as_array().unwrap() {
            forward
                .entry(e["from"].as_str().unwrap().to_string())
                .or_default()
                .insert(e["to"].as_str().unwrap().to_string());
        }
    }
    let files = read("ast-plan.json")["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap().to_string(), f.clone()))
        .collect();
    Plans { forward, files }
}

impl Plans {
    /// Every file reachable from `from` (itself left out).
    fn reach(&self, from: &str) -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(f) = todo.pop() {
            for to in self.forward.get(&f).into_iter().flatten() {
                if seen.insert(to.clone()) {
                    todo.push(to.clone());
                }
            }
        }
        seen.remove(from);
        seen
    }

    fn unbounded(&self, file: &str) -> bool {
        self.files[file]["dynamic_imports"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|d| d["prefix"] == "" && d.get("anchor").is_none_or(Value::is_null))
    }

    fn env(&self, files: &BTreeSet<String>) -> BTreeSet<String> {
        files
            .iter()
            .filter_map(|f| self.files.get(f))
            .flat_map(|f| f["env"].as_array().cloned().unwrap_or_default())
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect()
    }

    fn parse_errors(&self, file: &str) -> Vec<Value> {
        self.files[file]["parse_errors"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// What gate recorded for a file, for a failure report.
    fn said(&self, file: &str) -> String {
        let f = &self.files[file];
        format!(
            "imports {}, strings {}, paths {}, dynamic {}",
            f["imports"], f["strings"], f["paths"], f["dynamic_imports"]
        )
    }
}

fn is_module(path: &str) -> bool {
    let ext = path.rsplit_once('.').map_or("", |(_, e)| e);
    matches!(
        ext,
        "js" | "mjs" | "cjs" | "jsx" | "ts" | "mts" | "cts" | "tsx"
    )
}

#[derive(Default)]
struct Row {
    members: usize,
    read: usize,
    exact: usize,
    over: usize,
    unbounded: usize,
    opaque: usize,
    missed: usize,
    typed: usize,
}

#[derive(Default)]
struct Tally {
    rows: BTreeMap<&'static str, Row>,
    examples: Vec<String>,
    errors: Vec<String>,
    silent: Vec<String>,
}

/// Checks one member against the truth: what it missed, if anything.
fn judge(m: &Member, truth: &Truth, plans: &Plans, tally: &mut Tally, source: &str) {
    let row = tally.rows.entry(m.class).or_default();
    row.members += 1;
    if let Some(e) = truth.errors.get(&m.index) {
        tally
            .errors
            .push(format!("{} [{}]: {e}\n{source}", m.loader, m.class));
        return;
    }
    let files: BTreeSet<String> = truth
        .files
        .get(&m.index)
        .into_iter()
        .flatten()
        .filter(|f| **f != m.loader)
        .cloned()
        .collect();
    let env = truth.env.get(&m.index).cloned().unwrap_or_default();
    if files.is_empty() && env.is_empty() {
        tally
            .silent
            .push(format!("{} [{}] read nothing\n{source}", m.loader, m.class));
        return;
    }
    row.read += 1;
    let mut wrong = Vec::new();
    for (file, label) in std::iter::once((&m.loader, "")).chain(m.typed.iter().map(|t| (t, "TS ")))
    {
        let reach = plans.reach(file);
        let unbounded = plans.unbounded(file);
        let missed: Vec<&String> = files
            .iter()
            .filter(|f| !(reach.contains(*f) || unbounded && is_module(f)))
            .collect();
        let mut scope = reach.clone();
        scope.insert(file.clone());
        let named = plans.env(&scope);
        let env_missed: Vec<&String> = env.difference(&named).collect();
        let errors = plans.parse_errors(file);
        if !errors.is_empty() {
            wrong.push(format!("{label}{file}: parse errors on lines {errors:?}"));
        }
        if (!missed.is_empty() && !m.opaque) || !env_missed.is_empty() {
            wrong.push(format!(
                "{label}{file}: read {missed:?} and variables {env_missed:?} gate does not reach; gate: {}",
                plans.said(file)
            ));
        }
        if !label.is_empty() {
            continue;
        }
        if m.opaque && !missed.is_empty() {
            row.opaque += 1;
        } else if unbounded {
            row.unbounded += 1;
        } else if reach
            .iter()
            .filter(|f| !f.ends_with("package.json") && Some(*f) != m.typed.as_ref())
            .all(|f| files.contains(f))
        {
            row.exact += 1;
        } else {
            row.over += 1;
        }
    }
    if m.typed.is_some() {
        row.typed += 1;
    }
    if !wrong.is_empty() {
        row.missed += 1;
        tally.examples.push(format!(
            "[{} {}] {}\ntruth: files {files:?}, variables {env:?}\n{source}",
            m.class,
            m.tags.join(" "),
            wrong.join("\n")
        ));
    }
}

/// A scratch repository of thousands of small files: on tmpfs where there is one (a disk
/// mounted with `discard` takes seconds to create and delete them), with nothing committed
/// (`gate plan` reads the working tree).
struct Space {
    dir: tempfile::TempDir,
    root: PathBuf,
}

impl Space {
    fn new() -> Space {
        let shm = Path::new("/dev/shm");
        let dir = if shm.is_dir() {
            tempfile::tempdir_in(shm).unwrap()
        } else {
            tempfile::tempdir().unwrap()
        };
        let root = dir.path().join("repo");
        std::fs::create_dir_all(&root).unwrap();
        git2::Repository::init(&root).unwrap();
        let root = root.canonicalize().unwrap();
        Space { dir, root }
    }

    fn write(&self, path: &str, content: &str) {
        let full = self.root.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, content).unwrap();
    }

    /// `gate plan --out` of the working tree, as `TestRepo::gate` runs gate.
    fn plan(&self) -> PathBuf {
        let out = self.dir.path().join("plans");
        let run = std::process::Command::new(env!("CARGO_BIN_EXE_gate"))
            .args(["plan", "--out"])
            .arg(&out)
            .current_dir(&self.root)
            .env("HOME", self.dir.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        assert_eq!(run.status.code(), Some(0), "{}", text(&run));
        out
    }
}

/// One repository, one node run, one `gate plan`: the time each took.
fn check(members: &[Member], tally: &mut Tally) -> String {
    let clock = std::time::Instant::now();
    let space = Space::new();
    space.write(
        "package.json",
        "{\"name\": \"js-forms\", \"private\": true}\n",
    );
    for (group, manifest) in GROUPS {
        space.write(&format!("{group}/package.json"), manifest);
    }
    for m in members {
        for (path, content) in &m.files {
            space.write(path, content);
        }
    }
    let written = clock.elapsed();
    let scratch = space.dir.path().join("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    let truth = run_node(&space.root, &scratch, members);
    let ran = clock.elapsed();
    let plans = plans(&space.plan());
    let planned = clock.elapsed();
    for m in members {
        let source = m
            .files
            .iter()
            .find(|(p, _)| *p == m.loader)
            .map(|(_, s)| s.as_str())
            .unwrap_or_default();
        judge(m, &truth, &plans, tally, source);
    }
    format!(
        "{} files written in {written:.1?}, node {:.1?}, gate plan {:.1?}",
        members.iter().map(|m| m.files.len()).sum::<usize>(),
        ran - written,
        planned - ran
    )
}

#[test]
fn every_file_a_javascript_module_loads_or_reads_is_reached() {
    let seed: u64 = std::env::var("GATE_JS_SPACE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x05_f0_e5);
    let n: usize = std::env::var("GATE_JS_SPACE_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(MEMBERS);
    let started = std::time::Instant::now();
    let mut rng = Rng(seed);
    let members: Vec<Member> = (0..n).map(|i| member(&mut rng, i)).collect();
    let mut tally = Tally::default();
    let times = check(&members, &mut tally);
    let mut total = Row::default();
    let mut lines = Vec::new();
    for (class, r) in &tally.rows {
        lines.push(format!(
            "{class:24} {:5} {:5} {:5} {:5} {:5} {:5} {:5} {:5}",
            r.members, r.read, r.exact, r.over, r.unbounded, r.opaque, r.typed, r.missed
        ));
        total.members += r.members;
        total.read += r.read;
        total.exact += r.exact;
        total.over += r.over;
        total.unbounded += r.unbounded;
        total.opaque += r.opaque;
        total.typed += r.typed;
        total.missed += r.missed;
    }
    eprintln!(
        "js forms: seed {seed} (GATE_JS_SPACE_SEED), {n} members in {:.1?} ({times})\n{:24} members  read exact  over unbnd opaqu typed missd\n{}\n{:24} {:5} {:5} {:5} {:5} {:5} {:5} {:5} {:5}",
        started.elapsed(),
        "class",
        lines.join("\n"),
        "total",
        total.members,
        total.read,
        total.exact,
        total.over,
        total.unbounded,
        total.opaque,
        total.typed,
        total.missed
    );
    if let Ok(dump) = std::env::var("GATE_JS_SPACE_DUMP") {
        std::fs::write(dump, tally.examples.join("\n---\n")).unwrap();
    }
    assert!(
        tally.errors.is_empty(),
        "{} members failed to run (the generator writes code node rejects):\n{}",
        tally.errors.len(),
        tally.errors[..tally.errors.len().min(5)].join("\n---\n")
    );
    assert!(
        tally.silent.is_empty(),
        "{} members read nothing (the generator writes code that does nothing):\n{}",
        tally.silent.len(),
        tally.silent[..tally.silent.len().min(5)].join("\n---\n")
    );
    assert_eq!(
        total.missed,
        0,
        "seed {seed}: {} members read what gate does not reach:\n{}",
        total.missed,
        tally.examples[..tally.examples.len().min(12)].join("\n---\n")
    );
}
