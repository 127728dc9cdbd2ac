//! Go paths anchored on a file's own location or on the package folder, generated: a seeded
//! mix of anchors (`runtime.Caller` bound every way, helpers in the same file, the same package
//! or another package, `os.Getwd`, `filepath.Abs`, `strings.TrimSuffix`), path spellings
//! (joins, `+`, `Sprintf`, consts and vars, loops over literal slices) and readers (`os.ReadFile`,
//! `os.DirFS` + `fs.ReadFile`, globs, walks, `exec.Command`). The real go tool computes every
//! path an expression names (one `go test` run for the batch); gate must have a reference edge
//! from the expression's own lines to each of them, and a change to each data file must select
//! the package that reads it (or refuse).

use crate::golang::go_vars;
use crate::support::{Rng, TestRepo};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

const SEED: u64 = 0x00c0_ffee_2024;
const COUNT: usize = 720;

/// The files an expression may live in (each expression has a file of its own: an edge from
/// it is the expression's), with the package whose tests run it ("" for the helper package,
/// which either test package calls).
const SITES: &[(&str, &str)] = &[
    ("pkg/a/e#_test.go", "pkg/a"),
    ("pkg/a/e#.go", "pkg/a"),
    ("internal/h/e#.go", ""),
    ("svc/deep/b/e#_test.go", "svc/deep/b"),
    ("svc/deep/b/e#.go", "svc/deep/b"),
];

fn site_file(site: usize, n: usize) -> String {
    SITES[site].0.replace('#', &n.to_string())
}
const OWNERS: &[&str] = &["pkg/a", "svc/deep/b"];
const FOLDERS: &[&str] = &[
    "pkg/a/testdata",
    "pkg/a/testdata/sub",
    "pkg/a/fixtures",
    "pkg/a",
    "pkg/testdata",
    "testdata",
    "data",
    "data/nested/deep",
    "internal/h/testdata",
    "svc/deep/b/testdata",
    "svc/deep/shared",
    "svc/testdata",
];

/// One generated expression: where it is, who runs it, and what it was made of.
struct Expr {
    site: usize,
    owner: &'static str,
    label: String,
    decls: String,
    body: String,
}

/// How the base folder is found: (package-level declarations, statements, the Go expression
/// of the folder — `None` for a path relative to the working directory —, the folder).
struct Anchor {
    label: &'static str,
    decls: String,
    prologue: String,
    base: Option<String>,
    dir: String,
}

fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// `to` relative to folder `from` (`..` where it climbs).
fn rel(from: &str, to: &str) -> String {
    let f: Vec<&str> = from.split('/').filter(|s| !s.is_empty()).collect();
    let t: Vec<&str> = to.split('/').filter(|s| !s.is_empty()).collect();
    let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    let mut parts = vec![".."; f.len() - common];
    parts.extend(&t[common..]);
    if parts.is_empty() {
        ".".to_string()
    } else {
        parts.join("/")
    }
}

fn anchor(rng: &mut Rng, n: usize, site: usize, owner: &str) -> Anchor {
    let here = parent(&site_file(site, n)).to_string();
    match rng.below(18) {
        k @ 0..=7 => caller_anchor(k, n, &here),
        k => other_anchor(k, n, site, owner, &here),
    }
}

fn a(label: &'static str, decls: String, prologue: String, base: &str, dir: &str) -> Anchor {
    Anchor {
        label,
        decls,
        prologue,
        base: Some(base.to_string()),
        dir: dir.to_string(),
    }
}

/// `runtime.Caller(0)` in this file, bound every way.
fn caller_anchor(k: usize, n: usize, here: &str) -> Anchor {
    let caller = "_, file, _, _ := runtime.Caller(0)\n";
    match k {
        0 => a(
            "caller :=, dir :=",
            String::new(),
            format!("{caller}dir := filepath.Dir(file)\n"),
            "dir",
            here,
        ),
        1 => a(
            "pc, file, line, ok :=",
            String::new(),
            "pc, file, line, ok := runtime.Caller(0)\n_, _, _ = pc, line, ok\n".into(),
            "filepath.Dir(file)",
            here,
        ),
        2 => a(
            "var file; = runtime.Caller",
            String::new(),
            "var file string\n_, file, _, _ = runtime.Caller(0)\n".into(),
            "path.Dir(file)",
            here,
        ),
        3 => a(
            "caller ok check, Join(file, ..)",
            String::new(),
            "_, file, _, ok := runtime.Caller(0)\nif !ok {\n\tpanic(\"no caller\")\n}\n".into(),
            "filepath.Join(file, \"..\")",
            here,
        ),
        4 => a(
            "package var caller",
            format!("var _, file{n}, _, _ = runtime.Caller(0)\n"),
            String::new(),
            &format!("filepath.Dir(file{n})"),
            here,
        ),
        5 => a(
            "package var (...) caller + dir",
            format!(
                "var (\n\t_, file{n}, _, _ = runtime.Caller(0)\n\tdir{n}         = filepath.Dir(file{n})\n)\n"
            ),
            String::new(),
            &format!("dir{n}"),
            here,
        ),
        6 => a(
            "same-file helper returns dir",
            format!(
                "func here{n}() string {{\n\t_, f, _, _ := runtime.Caller(0)\n\treturn filepath.Dir(f)\n}}\n"
            ),
            String::new(),
            &format!("here{n}()"),
            here,
        ),
        _ => a(
            "same-file helper returns file",
            format!(
                "func file{n}() string {{\n\t_, f, _, _ := runtime.Caller(0)\n\treturn f\n}}\n"
            ),
            String::new(),
            &format!("filepath.Dir(file{n}())"),
            here,
        ),
    }
}

/// Helpers of other files and packages, the working directory, `TrimSuffix`.
fn other_anchor(k: usize, n: usize, site: usize, owner: &str, here: &str) -> Anchor {
    let file = site_file(site, n);
    let caller = "_, file, _, _ := runtime.Caller(0)\n".to_string();
    let (h, b) = match site {
        2 => ("", ""),
        3 => ("h.", "b."),
        _ => ("h.", ""),
    };
    match k {
        8 => a(
            "same-package helper (other file)",
            String::new(),
            String::new(),
            &format!("{b}PkgDir()"),
            here,
        ),
        9 => a(
            "other-package helper dir",
            String::new(),
            String::new(),
            &format!("{h}PkgDir()"),
            "internal/h",
        ),
        10 => a(
            "other-package helper root",
            String::new(),
            String::new(),
            &format!("{h}Root()"),
            "",
        ),
        11 => a(
            "os.Getwd",
            String::new(),
            "wd, err := os.Getwd()\nif err != nil {\n\tpanic(err)\n}\n".into(),
            "wd",
            owner,
        ),
        12 => a(
            "filepath.Abs(.)",
            String::new(),
            "abs, _ := filepath.Abs(\".\")\n".into(),
            "abs",
            owner,
        ),
        13 => Anchor {
            label: "relative to the working directory",
            decls: String::new(),
            prologue: String::new(),
            base: None,
            dir: owner.to_string(),
        },
        14 => a(
            "TrimSuffix(file, base name)",
            String::new(),
            caller.clone(),
            &format!(
                "strings.TrimSuffix(file, \"{}\")",
                file.rsplit('/').next().unwrap()
            ),
            here,
        ),
        15 => a(
            "Dir(Dir(file))",
            String::new(),
            caller.clone(),
            "filepath.Dir(filepath.Dir(file))",
            parent(here),
        ),
        16 => a(
            "TrimSuffix(file, Base(file))",
            String::new(),
            caller.clone(),
            "strings.TrimSuffix(file, filepath.Base(file))",
            here,
        ),
        _ => a(
            "relative \".\"",
            String::new(),
            String::new(),
            "\".\"",
            owner,
        ),
    }
}

/// The Go expression naming `rel` (a path relative to the anchor's folder), with the
/// declarations and statements it needs.
fn spell(
    rng: &mut Rng,
    n: usize,
    base: Option<&str>,
    rel: &str,
) -> (&'static str, String, String, String) {
    let segs: Vec<String> = rel.split('/').map(|s| format!("{s:?}")).collect();
    let join = |args: &str| match base {
        Some(b) => format!("filepath.Join({b}, {args})"),
        None => format!("filepath.Join({args})"),
    };
    let concat = |tail: &str| match base {
        Some(b) => format!("{b} + \"/\" + {tail}"),
        None => tail.to_string(),
    };
    let (d, name) = rel.rsplit_once('/').unwrap_or((".", rel));
    match rng.below(11) {
        0 => (
            "Join segments",
            String::new(),
            String::new(),
            join(&segs.join(", ")),
        ),
        1 => (
            "Join one literal",
            String::new(),
            String::new(),
            join(&format!("{rel:?}")),
        ),
        2 => (
            "concat +",
            String::new(),
            String::new(),
            concat(&format!("{rel:?}")),
        ),
        3 => match base {
            Some(b) => (
                "Sprintf %s/%s",
                String::new(),
                String::new(),
                format!("fmt.Sprintf(\"%s/%s\", {b}, {rel:?})"),
            ),
            None => (
                "Sprintf literal",
                String::new(),
                String::new(),
                format!("fmt.Sprintf(\"%s\", {rel:?})"),
            ),
        },
        4 => match base {
            Some(b) => (
                "Sprintf %s/rel",
                String::new(),
                String::new(),
                format!("fmt.Sprintf(\"%s/{rel}\", {b})"),
            ),
            None => (
                "Sprintf dir/%s",
                String::new(),
                String::new(),
                format!("fmt.Sprintf(\"{d}/%s\", {name:?})"),
            ),
        },
        5 => (
            "path.Join",
            String::new(),
            String::new(),
            join(&format!("{rel:?}")).replacen("filepath.", "path.", 1),
        ),
        6 => (
            "package const",
            format!("const rel{n} = {rel:?}\n"),
            String::new(),
            join(&format!("rel{n}")),
        ),
        7 => (
            "local var",
            String::new(),
            format!("rel := {rel:?}\n"),
            join("rel"),
        ),
        8 => (
            "package var concat",
            format!("var rel{n} = {rel:?}\n"),
            String::new(),
            concat(&format!("rel{n}")),
        ),
        9 => (
            "nested Join via a folder var",
            String::new(),
            format!("sub := {}\n", join(&format!("{d:?}"))),
            format!("filepath.Join(sub, {name:?})"),
        ),
        _ => (
            "Clean(Join)",
            String::new(),
            String::new(),
            format!("filepath.Clean({})", join(&format!("{rel:?}"))),
        ),
    }
}

/// Generates expression `n`; `files` collects the data files it needs.
fn generate(rng: &mut Rng, n: usize, files: &mut BTreeSet<String>) -> Expr {
    let site = rng.below(SITES.len());
    let owner = match SITES[site].1 {
        "" => rng.pick(OWNERS),
        o => o,
    };
    let an = anchor(rng, n, site, owner);
    let reader = rng.below(11);
    let dir_reader = (5..=9).contains(&reader);
    let folders: Vec<&str> = FOLDERS
        .iter()
        .copied()
        .filter(|f| reader != 4 || f.contains("testdata"))
        .collect();
    let folder = rng.pick(&folders);
    let name = if reader == 4 {
        format!("x{n}.go")
    } else {
        format!("x{n}.json")
    };
    let target = format!("{folder}/{name}");
    files.insert(target.clone());
    let named = if dir_reader {
        folder.to_string()
    } else {
        target.clone()
    };
    let mut r = rel(&an.dir, &named);
    let through_helper =
        an.label.contains("helper (other file)") || an.label.starts_with("other-package helper");
    if r == "." && dir_reader && through_helper {
        // A folder read through another file's helper with no literal part at all
        // (`os.ReadDir(h.PkgDir())`) is the one shape gate does not bound (a parameter looks
        // the same, and bounding it would put every file under every reader of a parameter):
        // name the folder through its parent instead.
        let up = folder.rsplit('/').next().unwrap();
        r = format!("../{up}");
    }
    let mut decls = an.decls.clone();
    let mut body = an.prologue.clone();
    let label;
    if reader == 10 {
        // A loop over a literal slice of names.
        let second = format!("{folder}/x{n}b.json");
        files.insert(second.clone());
        let (r1, r2) = (rel(&an.dir, &target), rel(&an.dir, &second));
        let p = match &an.base {
            Some(b) => format!("filepath.Join({b}, name)"),
            None => "name".to_string(),
        };
        label = format!("{} | loop over []string | os.ReadFile", an.label);
        let _ = write!(
            body,
            "var out []string\nfor _, name := range []string{{{r1:?}, {r2:?}}} {{\n\tp := {p}\n\tif _, err := os.ReadFile(p); err != nil {{\n\t\tpanic(err)\n\t}}\n\tout = append(out, p)\n}}\nreturn out\n"
        );
        return Expr {
            site,
            owner,
            label,
            decls,
            body,
        };
    }
    let (spelling, d2, pro2, e) = spell(rng, n, an.base.as_deref(), &r);
    decls.push_str(&d2);
    body.push_str(&pro2);
    let inline = rng.below(3) == 0 && reader < 4;
    let arg = if inline { e.clone() } else { "p".to_string() };
    if !inline {
        let _ = writeln!(body, "p := {e}");
    }
    let (rname, code) = read_code(reader, n, &name, &arg);
    body.push_str(&code);
    label = format!(
        "{} | {spelling}{} | {rname}",
        an.label,
        if inline { " (inline)" } else { "" }
    );
    Expr {
        site,
        owner,
        label,
        decls,
        body,
    }
}

/// The statements that read what `arg` (a file) or `p` (a folder) names, and return it.
fn read_code(reader: usize, n: usize, name: &str, arg: &str) -> (&'static str, String) {
    let check = "if rerr != nil {\n\tpanic(rerr)\n}\n";
    match reader {
        0 => (
            "os.ReadFile",
            format!("_, rerr := os.ReadFile({arg})\n{check}return []string{{{arg}}}\n"),
        ),
        1 => (
            "os.Open",
            format!("f, rerr := os.Open({arg})\n{check}f.Close()\nreturn []string{{{arg}}}\n"),
        ),
        2 => (
            "ioutil.ReadFile",
            format!("_, rerr := ioutil.ReadFile({arg})\n{check}return []string{{{arg}}}\n"),
        ),
        3 => (
            "os.Stat",
            format!("_, rerr := os.Stat({arg})\n{check}return []string{{{arg}}}\n"),
        ),
        4 => (
            "exec.Command go run",
            format!(
                "cmd := exec.Command(\"go\", \"run\", {arg})\n_, rerr := os.Stat(cmd.Args[2])\n{check}return []string{{cmd.Args[2]}}\n"
            ),
        ),
        5 => (
            "os.ReadDir",
            format!(
                "ents, rerr := os.ReadDir(p)\n{check}var out []string\nfor _, e := range ents {{\n\tif !e.IsDir() {{\n\t\tout = append(out, seen(p, e.Name()))\n\t}}\n}}\nreturn out\n"
            ),
        ),
        6 => (
            "os.DirFS + fs.ReadFile",
            format!(
                "fsys := os.DirFS(p)\n_, rerr := fs.ReadFile(fsys, {name:?})\n{check}return []string{{seen(p, {name:?})}}\n"
            ),
        ),
        7 => (
            "filepath.Glob",
            format!(
                "ms, rerr := filepath.Glob(filepath.Join(p, \"x{n}.js*\"))\n{check}return ms\n"
            ),
        ),
        8 => (
            "filepath.WalkDir",
            format!(
                "var out []string\nrerr := filepath.WalkDir(p, func(q string, e fs.DirEntry, err error) error {{\n\tif err == nil && !e.IsDir() {{\n\t\tout = append(out, q)\n\t}}\n\treturn err\n}})\n{check}return out\n"
            ),
        ),
        _ => (
            "fs.Glob(os.DirFS)",
            format!(
                "ms, rerr := fs.Glob(os.DirFS(p), \"x{n}.*\")\n{check}var out []string\nfor _, m := range ms {{\n\tout = append(out, seen(p, m))\n}}\nreturn out\n"
            ),
        ),
    }
}

const IMPORTS: &str = "import (\n\t\"fmt\"\n\t\"io/fs\"\n\t\"io/ioutil\"\n\t\"os\"\n\t\"os/exec\"\n\t\"path\"\n\t\"path/filepath\"\n\t\"runtime\"\n\t\"strings\"\n";
const SINKS: &str = "var (\n\t_ = fmt.Sprintf\n\t_ fs.FS\n\t_ = ioutil.ReadFile\n\t_ = os.ReadFile\n\t_ = exec.Command\n\t_ = path.Join\n\t_ = filepath.Join\n\t_ = runtime.Caller\n\t_ = strings.TrimSuffix\n)\n";

/// The header of each site file: its package, every import the generated code may use.
fn header(site: usize) -> String {
    let (package, extra) = match site {
        0 => (
            "a",
            "\t\"testing\"\n\n\t\"example.com/m/internal/h\"\n)\n\nvar _ testing.T\nvar _ = h.PkgDir\n",
        ),
        1 => (
            "a",
            "\n\t\"example.com/m/internal/h\"\n)\n\nvar _ = h.PkgDir\n",
        ),
        2 => ("h", ")\n"),
        3 => (
            "b_test",
            "\t\"testing\"\n\n\t\"example.com/m/internal/h\"\n\t\"example.com/m/svc/deep/b\"\n)\n\nvar _ testing.T\nvar _ = h.PkgDir\nvar _ = b.PkgDir\n",
        ),
        _ => (
            "b",
            "\n\t\"example.com/m/internal/h\"\n)\n\nvar _ = h.PkgDir\n",
        ),
    };
    format!("package {package}\n\n{IMPORTS}{extra}\n{SINKS}\n")
}

/// Writes the module: the site files (with each expression's line range), the anchor helpers,
/// the tests that print what each expression names, and the data files.
fn write_module(t: &TestRepo, exprs: &[Expr], files: &BTreeSet<String>) {
    for (n, e) in exprs.iter().enumerate() {
        let body: String = e.body.lines().map(|l| format!("\t{l}\n")).collect();
        let text = format!(
            "{}// {n}: {}\n{}func E{n}() []string {{\n{body}}}\n",
            header(e.site),
            e.label,
            e.decls
        );
        t.write(&site_file(e.site, n), &text);
    }
    let anchor = |package: &str| {
        format!(
            "package {package}\n\nimport (\n\t\"path/filepath\"\n\t\"runtime\"\n)\n\n// PkgDir is the folder of this file.\nfunc PkgDir() string {{\n\t_, f, _, _ := runtime.Caller(0)\n\treturn filepath.Dir(f)\n}}\n\n// Root is the module root, two folders up.\nfunc Root() string {{\n\treturn filepath.Join(PkgDir(), \"..\", \"..\")\n}}\n\nfunc seen(dir, name string) string {{\n\treturn dir + string(filepath.Separator) + name\n}}\n\nvar _ = seen\n"
        )
    };
    t.write("internal/h/anchor.go", &anchor("h"));
    t.write("pkg/a/anchor.go", &anchor("a"));
    t.write("svc/deep/b/anchor.go", &anchor("b"));
    t.write("svc/deep/b/seen_test.go", "package b_test\n\nimport \"path/filepath\"\n\nfunc seen(dir, name string) string {\n\treturn dir + string(filepath.Separator) + name\n}\n");
    for (owner, package, local) in [("pkg/a", "a", ""), ("svc/deep/b", "b_test", "b.")] {
        let mut calls = String::new();
        for (n, e) in exprs.iter().enumerate().filter(|(_, e)| e.owner == owner) {
            let prefix = match e.site {
                2 => "h.",
                4 => local,
                _ => "",
            };
            let _ = writeln!(calls, "\t\t{{{n}, {prefix}E{n}}},");
        }
        let imports = if local.is_empty() {
            "\t\"example.com/m/internal/h\"\n"
        } else {
            "\t\"example.com/m/internal/h\"\n\t\"example.com/m/svc/deep/b\"\n"
        };
        t.write(
            &format!("{owner}/main_test.go"),
            &format!("package {package}\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"path/filepath\"\n\t\"testing\"\n\n{imports})\n\nvar _ = h.PkgDir\n\n// TestAnchors prints every path each expression names, made absolute from the working\n// directory (the package folder).\nfunc TestAnchors(t *testing.T) {{\n\tout, err := os.Create(os.Getenv(\"GATE_TRUTH\") + \"/{package}.txt\")\n\tif err != nil {{\n\t\tt.Fatal(err)\n\t}}\n\tdefer out.Close()\n\tfor _, c := range []struct {{\n\t\tn  int\n\t\tfn func() []string\n\t}}{{\n{calls}\t}} {{\n\t\tfor _, p := range c.fn() {{\n\t\t\tabs, err := filepath.Abs(p)\n\t\t\tif err != nil {{\n\t\t\t\tt.Fatal(err)\n\t\t\t}}\n\t\t\tfmt.Fprintf(out, \"%d\\t%s\\n\", c.n, abs)\n\t\t}}\n\t}}\n}}\n"),
        );
    }
    for f in files {
        let content = if f.ends_with(".go") {
            "package main\n\nfunc main() {}\n"
        } else {
            "{}\n"
        };
        t.write(f, content);
    }
}

/// Expression number → the repository paths the go tool says it names.
fn truth(t: &TestRepo, out: &Path) -> BTreeMap<usize, BTreeSet<String>> {
    let run = Command::new("go")
        .envs(go_vars())
        .env("GATE_TRUTH", out)
        .args(["test", "-count=1", "-vet=off", "./pkg/a", "./svc/deep/b"])
        .current_dir(&t.root)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "go test: {}",
        crate::support::text(&run)
    );
    let root = format!("{}/", t.root.canonicalize().unwrap().display());
    let mut named: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
    for package in ["a", "b_test"] {
        let text = std::fs::read_to_string(out.join(format!("{package}.txt"))).unwrap();
        for line in text.lines() {
            let (n, abs) = line.split_once('\t').unwrap();
            let abs = Path::new(abs).canonicalize().unwrap();
            let path = abs
                .to_str()
                .unwrap()
                .strip_prefix(&root)
                .unwrap_or_else(|| panic!("{line} is outside the repository"));
            named
                .entry(n.parse().unwrap())
                .or_default()
                .insert(path.to_string());
        }
    }
    named
}

/// Reference edges of `gate plan`: (from, to) → the lines.
fn reference_edges(t: &TestRepo) -> BTreeMap<(String, String), Vec<u32>> {
    let dir = t.root.parent().unwrap().join("plans");
    let out = t
        .gate(&["plan", "--out", dir.to_str().unwrap()])
        .envs(go_vars())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", crate::support::text(&out));
    let plan: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("reference-edges.json")).unwrap())
            .unwrap();
    let mut edges: BTreeMap<(String, String), Vec<u32>> = BTreeMap::new();
    for e in plan["edges"].as_array().unwrap() {
        let key = (
            e["from"].as_str().unwrap().to_string(),
            e["to"].as_str().unwrap().to_string(),
        );
        edges
            .entry(key)
            .or_default()
            .push(e["line"].as_u64().unwrap() as u32);
    }
    edges
}

/// A change to the data files selects the package that reads each (or refuses): the rows
/// that do not.
fn unselected(
    t: &TestRepo,
    exprs: &[Expr],
    files: &BTreeSet<String>,
    named: &BTreeMap<usize, BTreeSet<String>>,
) -> Vec<String> {
    let data: Vec<&str> = files
        .iter()
        .map(String::as_str)
        .filter(|f| !f.ends_with(".go"))
        .collect();
    let mut args = vec!["--files"];
    args.extend(&data);
    args.extend(["--json", "--list"]);
    let out = t.gate(&args).envs(go_vars()).output().unwrap();
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", crate::support::text(&out)));
    let rows: BTreeMap<&str, &Value> = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["path"].as_str().unwrap(), r))
        .collect();
    let mut unselected = Vec::new();
    for (&n, paths) in named {
        let want = format!("./{}", exprs[n].owner);
        for p in paths.iter().filter(|p| !p.ends_with(".go")) {
            let Some(row) = rows.get(p.as_str()) else {
                continue;
            };
            let refused = matches!(row["verdict"].as_str(), Some("refused" | "named_full"));
            let selects = row["tests"]
                .as_array()
                .is_some_and(|ts| ts.iter().any(|t| t == want.as_str()));
            if !refused && !selects {
                unselected.push(format!(
                    "#{n} {}: {p} does not select {want}",
                    exprs[n].label
                ));
            }
        }
    }
    unselected
}

#[test]
fn every_generated_anchored_path_reaches_the_package_that_reads_it() {
    let started = std::time::Instant::now();
    let t = TestRepo::from_fixture("gomod");
    // GO_ANCHORS_SEED / GO_ANCHORS_COUNT explore further; the suite runs the fixed ones.
    let env = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let (seed, count) = (
        env("GO_ANCHORS_SEED", SEED),
        env("GO_ANCHORS_COUNT", COUNT as u64) as usize,
    );
    let mut rng = Rng(seed);
    let mut files = BTreeSet::new();
    let exprs: Vec<Expr> = (0..count)
        .map(|n| generate(&mut rng, n, &mut files))
        .collect();
    write_module(&t, &exprs, &files);
    t.commit("generated anchored paths");
    let scratch = t.root.parent().unwrap().join("truth");
    std::fs::create_dir_all(&scratch).unwrap();
    let named = truth(&t, &scratch);
    assert_eq!(named.len(), count, "every expression names a file");
    let edges = reference_edges(&t);
    // Each file an expression names has an edge from the expression's own lines.
    let mut missed: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (&n, paths) in &named {
        let e = &exprs[n];
        let site = site_file(e.site, n);
        for p in paths.iter().filter(|p| **p != site) {
            let hit = edges.contains_key(&(site.clone(), p.clone()));
            if !hit {
                let class = e.label.clone();
                missed
                    .entry(class)
                    .or_default()
                    .push(format!("#{n} {site} names {p}"));
                break;
            }
        }
    }
    let unselected = unselected(&t, &exprs, &files, &named);
    let total: usize = missed.values().map(Vec::len).sum();
    if std::env::var_os("GO_ANCHORS_KEEP").is_some() {
        // To look at the generated module after a failure.
        eprintln!("kept: {}", t.root.display());
        std::mem::forget(t);
    }
    // Misses counted by each part of the spelling (anchor, path, reader), with an example.
    let mut parts: BTreeMap<(usize, &str), (usize, &str)> = BTreeMap::new();
    for (class, cases) in &missed {
        for (i, part) in class.split(" | ").enumerate() {
            let entry = parts.entry((i, part)).or_insert((0, &cases[0]));
            entry.0 += cases.len();
        }
    }
    let mut summary = String::new();
    for ((i, part), (count, example)) in &parts {
        let kind = ["anchor", "path", "reader"][*i];
        let _ = writeln!(summary, "{count:4} {kind}: {part}   e.g. {example}");
    }
    eprintln!(
        "go_anchors: seed {seed:#x}, {count} expressions, {total} without an edge, {} unselected, {:.1}s",
        unselected.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        total == 0 && unselected.is_empty(),
        "{total} expressions without an edge:\n{summary}\n{} rows that do not select the reader:\n{}",
        unselected.len(),
        unselected
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
