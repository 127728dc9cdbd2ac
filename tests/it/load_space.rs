//! The space of run-time-named imports, checked against the real interpreter: thousands of
//! seeded compositions of the pieces real code uses (import functions, literal starts,
//! `__name__`/`__package__` anchors, leading dots, `package=`, `level=`, `fromlist`, `+`,
//! f-strings, `%`, `.format`, names bound by loops, imported constants, the environment), each
//! run by Python under an audit hook that records every repository source file it opens. Every
//! file a load really opened must be reached by gate's graph from the loading file — or the
//! loading file holds an unbounded import (`may_load`, which every changed module meets).

use crate::support::{Rng, TestRepo, selected, text};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Where a loader lives: its file, and for a package, children its own-name imports can find.
const HOMES: &[&str] = &["module", "sub_module", "package"];
/// Names to load, absolute or relative to the loader's package: each is cut at a random point
/// into a literal start and a run-time part.
const NAMES: &[&str] = &[
    "pkg.a",
    "pkg.plug_x",
    "pkg.plug_y",
    "pkg.b.c",
    "pkg.sub.deep",
    "pkg.sub.plug_z",
    "other.z",
    "lazy.x",
    ".a",
    ".plug_x",
    ".b.c",
    ".deep",
    "..a",
    "..other.z",
    "..sub.plug_z",
];
/// What follows an own-name anchor (`f"{__name__}.{x}"`).
const VALUES: &[&str] = &["a", "plug_x", "b.c", "deep", "z"];
/// How the run-time part is bound.
const BINDINGS: &[&str] = &["inline", "local", "loop", "constant", "environ", "default"];
/// How the name is joined.
const JOINS: &[&str] = &[
    "literal",
    "fstring",
    "plus",
    "percent",
    "format",
    "own_f",
    "own_plus",
    "own_percent",
    "own_format",
    "package_f",
];
const CALLS: &[&str] = &[
    "importlib.import_module",
    "import_module",
    "import_module_kw",
    "__import__",
    "__import__level",
    "__import__fromlist",
    "importlib.__import__",
    "runpy.run_module",
];
const PACKAGES: &[&str] = &[
    "__name__",
    "__package__",
    "__spec__.parent",
    "\"pkg\"",
    "\"pkg.sub\"",
    "P",
    "none",
];

struct Case {
    file: String,
    module: String,
    source: String,
    /// The classes it was composed from, for the failure report.
    class: String,
}

fn case(rng: &mut Rng, i: usize) -> Case {
    let home = rng.pick(HOMES);
    let (file, module) = match home {
        "module" => (format!("pkg/g{i}.py"), format!("pkg.g{i}")),
        "sub_module" => (format!("pkg/sub/g{i}.py"), format!("pkg.sub.g{i}")),
        _ => (format!("pkg/q{i}/__init__.py"), format!("pkg.q{i}")),
    };
    let join = rng.pick(JOINS);
    let (start, value) = if join.starts_with("own") || join.starts_with("package") {
        ("", rng.pick(VALUES))
    } else {
        let full = rng.pick(NAMES);
        full.split_at((rng.next() % (full.len() as u64 + 1)) as usize)
    };
    let binding = rng.pick(BINDINGS);
    let call = rng.pick(CALLS);
    let package = rng.pick(PACKAGES);
    let other = rng.pick(VALUES);
    // An imported constant stands for its value: `SUB` is "a" in pkg/names.py.
    let value = if binding == "constant" { "a" } else { value };
    // The run-time part: an expression, and the lines binding it.
    let (x, bind, indent) = match binding {
        // Single quotes: Python before 3.12 takes no double quotes inside an f"…" string.
        "inline" => (format!("'{value}'"), String::new(), "    "),
        "local" => ("x".into(), format!("    x = {value:?}\n"), "    "),
        "loop" => (
            "x".into(),
            format!("    for x in [{value:?}, {other:?}]:\n"),
            "        ",
        ),
        "constant" => ("SUB".into(), String::new(), "    "),
        "environ" => (
            "x".into(),
            format!("    x = os.environ.get(\"GATE_SPACE_UNSET\", {value:?})\n"),
            "    ",
        ),
        _ => ("x".into(), String::new(), "    "),
    };
    let lit = |s: &str| format!("{s:?}");
    let name = match join {
        "literal" if binding == "inline" => lit(&format!("{start}{value}")),
        "literal" | "plus" => format!("{} + {x}", lit(start)),
        "fstring" => format!("f\"{start}{{{x}}}\""),
        "percent" => format!("\"{start}%s\" % {x}"),
        "format" => format!("\"{start}{{}}\".format({x})"),
        "own_f" => format!("f\"{{__name__}}.{{{x}}}\""),
        "own_plus" => format!("__name__ + \".\" + {x}"),
        "own_percent" => format!("\"%s.%s\" % (__name__, {x})"),
        "own_format" => format!("\"{{}}.{{}}\".format(__name__, {x})"),
        _ => format!("f\"{{__package__}}.{{{x}}}\""),
    };
    let package_arg = |keyword: bool| match (package, keyword) {
        ("none", _) => String::new(),
        (p, true) => format!(", package={p}"),
        (p, false) => format!(", {p}"),
    };
    let level = 1 + rng.next() % 2;
    let call_text = match call {
        "importlib.import_module" => {
            format!("importlib.import_module({name}{})", package_arg(false))
        }
        "import_module" => format!("import_module({name}{})", package_arg(false)),
        "import_module_kw" => format!("importlib.import_module(name={name}{})", package_arg(true)),
        "__import__" => format!("__import__({name})"),
        "__import__level" => format!("__import__({name}, globals(), locals(), [], {level})"),
        "__import__fromlist" => format!(
            "__import__({}, fromlist=[{x}])",
            lit(start.trim_end_matches('.'))
        ),
        "importlib.__import__" => format!("importlib.__import__({name}, globals(), None, [{x}])"),
        _ => format!("runpy.run_module({name})"),
    };
    let signature = if binding == "default" {
        format!("x={value:?}")
    } else {
        String::new()
    };
    let source = format!(
        "import importlib\nimport os\nimport runpy\nfrom importlib import import_module\n\nfrom pkg.names import SUB\n\nP = \"pkg\"\n\n\ndef load({signature}):\n{bind}{indent}{call_text}\n"
    );
    Case {
        file,
        module,
        source,
        class: format!("{home}/{binding}/{join}/{call}/{package}"),
    }
}

/// Python imports each loader fresh (the repository's modules dropped from `sys.modules`), then
/// runs its `load()` under an audit hook: the repository's `.py` files opened meanwhile.
const HARNESS: &str = r#"
import importlib, json, os, sys
sys.dont_write_bytecode = True
root = os.path.realpath(os.getcwd())
sys.path.insert(0, root)
seen, on = set(), [False]
def hook(event, args):
    if on[0] and event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        p = os.path.realpath(os.fsdecode(args[0]))
        if p.endswith(".py") and p.startswith(root + os.sep):
            seen.add(os.path.relpath(p, root))
sys.addaudithook(hook)
out = {}
for name in sys.stdin.read().split():
    for k, m in list(sys.modules.items()):
        f = getattr(m, "__file__", None) or ""
        if os.path.realpath(f).startswith(root + os.sep):
            del sys.modules[k]
    importlib.invalidate_caches()
    loader = importlib.import_module(name)
    seen.clear()
    on[0] = True
    try:
        loader.load()
    except BaseException:
        pass
    on[0] = False
    out[name] = sorted(seen)
print(json.dumps(out))
"#;

/// What the batches found.
#[derive(Default)]
struct Tally {
    loads: usize,
    bounded: usize,
    by_class: BTreeMap<String, Vec<String>>,
}

/// One repository of loaders: the truth from Python, the answer from `gate plan`. Loaders
/// share a package, and a name relative to it may load any module there, so a batch stays
/// small (a package of thousands of loaders is a graph of millions of edges).
fn check(cases: &[Case], tally: &mut Tally) {
    let t = TestRepo::from_fixture("loads");
    for c in cases {
        t.write(&c.file, &c.source);
        if c.file.ends_with("__init__.py") {
            let dir = c.file.trim_end_matches("__init__.py");
            t.write(&format!("{dir}a.py"), "A = 1\n");
            t.write(&format!("{dir}plug_x.py"), "X = 1\n");
        }
    }
    t.commit("loaders");

    // The truth: what each load really opened.
    let mut python = std::process::Command::new("python3")
        .arg("-c")
        .arg(HARNESS)
        .current_dir(&t.root)
        .env("PYTHONDONTWRITEBYTECODE", "1")
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
    let truth: BTreeMap<String, Vec<String>> = serde_json::from_slice(&out.stdout).unwrap();

    // gate's answer: the graph's edges and the files holding an unbounded import.
    let plans = t.root.join(".git/space-plans");
    let out = t
        .gate(&["plan", "--out", plans.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let read = |name: &str| -> Value {
        serde_json::from_slice(&std::fs::read(plans.join(name)).unwrap()).unwrap()
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
    let unbounded: BTreeSet<String> = read("ast-plan.json")["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| {
            f["dynamic_imports"]
                .as_array()
                .unwrap()
                .iter()
                .any(|d| d["prefix"] == "" && d.get("anchor").is_none())
        })
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect();
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(f) = todo.pop() {
            for to in forward.get(&f).into_iter().flatten() {
                if seen.insert(to.clone()) {
                    todo.push(to.clone());
                }
            }
        }
        seen
    };

    for c in cases {
        let opened: Vec<&String> = truth[&c.module].iter().filter(|f| **f != c.file).collect();
        if opened.is_empty() {
            continue;
        }
        tally.loads += 1;
        if unbounded.contains(&c.file) {
            continue;
        }
        tally.bounded += 1;
        let reached = reach(&c.file);
        let missed: Vec<&&String> = opened.iter().filter(|f| !reached.contains(**f)).collect();
        if !missed.is_empty() {
            let line = c.source.lines().last().unwrap_or_default().trim();
            tally
                .by_class
                .entry(c.class.clone())
                .or_default()
                .push(format!(
                    "{}: `{line}` opened {missed:?}, gate reaches none of them",
                    c.file
                ));
        }
    }
}

#[test]
fn every_module_a_run_time_name_loads_is_reached_or_unbounded() {
    let seed: u64 = std::env::var("GATE_SPACE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(27);
    let n: usize = std::env::var("GATE_SPACE_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let mut rng = Rng(seed);
    let cases: Vec<Case> = (0..n).map(|i| case(&mut rng, i)).collect();
    let mut tally = Tally::default();
    for batch in cases.chunks(250) {
        check(batch, &mut tally);
    }
    let Tally {
        loads,
        bounded,
        by_class,
    } = tally;
    eprintln!(
        "load space: seed {seed}, {n} expressions, {loads} loaded a repository module ({bounded} bounded by gate, {} unbounded)",
        loads - bounded
    );
    let misses: usize = by_class.values().map(Vec::len).sum();
    let report: Vec<String> = by_class
        .iter()
        .map(|(class, cases)| {
            format!(
                "{class} ({}):\n  {}",
                cases.len(),
                cases[..cases.len().min(2)].join("\n  ")
            )
        })
        .collect();
    assert_eq!(
        misses,
        0,
        "seed {seed}: {misses} loads gate does not reach:\n{}",
        report.join("\n")
    );
    // The space must be exercised: most compositions load something, and gate bounds most.
    assert!(loads * 4 > n, "only {loads} of {n} loads opened a module");
    assert!(
        bounded * 2 > loads,
        "only {bounded} of {loads} loads were bounded"
    );
}

/// A namespace package (PEP 420, no `__init__.py`) is one package merged from the folders of
/// its dotted name under every import root: a relative import in one portion loads modules of
/// another. Each form's test file, run by real pytest, fails when the other portion's module
/// breaks, and gate selects each.
#[test]
fn relative_names_in_a_namespace_package_reach_every_portion() {
    const FORMS: &[&str] = &[
        "from . import x\n\ndef load():\n    return x.X\n",
        "from .x import X\n\ndef load():\n    return X\n",
        "import importlib\n\ndef load():\n    return importlib.import_module('.x', __package__).X\n",
        "import importlib\n\nNAME = 'x'\n\ndef load():\n    return importlib.import_module('.' + NAME, __name__.rpartition('.')[0]).X\n",
        "def load():\n    return __import__('x', globals(), fromlist=['X'], level=1).X\n",
        "from .. import b\n\ndef load():\n    return b.B\n",
    ];
    let t = TestRepo::from_fixture("loads");
    t.write(
        "pyproject.toml",
        "[tool.pytest.ini_options]\npythonpath = [\"src1\", \"src2\"]\ntestpaths = [\"tests\"]\n",
    );
    t.write("src2/ns/a/x.py", "X = 1\n");
    t.write("src2/ns/b.py", "from ns.a.x import X as B\n");
    let mut tests = Vec::new();
    for (i, form) in FORMS.iter().enumerate() {
        t.write(&format!("src1/ns/a/loader_{i}.py"), form);
        let test = format!("tests/test_form_{i}.py");
        t.write(
            &test,
            &format!(
                "from ns.a.loader_{i} import load\n\ndef test_load():\n    assert load() == 1\n"
            ),
        );
        tests.push(test);
    }
    t.commit("a namespace package in two roots");
    t.write("src2/ns/a/x.py", "X = 2\n");
    t.commit("break the other portion");
    let r = t.report(&["--affected", "HEAD~1...HEAD"]);
    let got = selected(&r);
    for test in &tests {
        assert!(got.contains(test), "{test} not selected: {got:?}");
    }
    // The truth: every one of them fails in the real run.
    let out = std::process::Command::new("python3")
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .current_dir(&t.root)
        .output()
        .unwrap();
    let said = text(&out);
    for test in &tests {
        assert!(
            said.contains(&format!("FAILED {test}::test_load")),
            "{test}: {said}"
        );
    }
}
