//! The Python analyser against small sources, one form per test; random bytes and deep
//! nestings in `fuzz`.

use super::*;

fn imports(src: &str) -> Vec<(u32, u32, String, Vec<String>)> {
    analyze(src.as_bytes())
        .imports
        .into_iter()
        .map(|i| (i.line, i.level, i.module, i.names))
        .collect()
}

#[test]
fn every_import_form() {
    let src = "import a.b.c\nimport a.b as x, d\nfrom e.f import g, h as i\nfrom .. import j\nfrom .k import *\n\
               def f():\n    import l\nif TYPE_CHECKING:\n    import m\ntry:\n    import n\nexcept ImportError:\n    import o\n\
               from __future__ import annotations\n";
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(
        imports(src),
        vec![
            (1, 0, "a.b.c".into(), vec![]),
            (2, 0, "a.b".into(), vec![]),
            (2, 0, "d".into(), vec![]),
            (3, 0, "e.f".into(), s(&["g", "h"])),
            (4, 2, "".into(), s(&["j"])),
            (5, 1, "k".into(), s(&["*"])),
            (7, 0, "l".into(), vec![]),
            (9, 0, "m".into(), vec![]),
            (11, 0, "n".into(), vec![]),
            (13, 0, "o".into(), vec![]),
        ]
    );
}

#[test]
fn strings_that_may_name_modules_or_files() {
    let src = "importlib.import_module('plugins')\n__import__(\"x.y\")\npytest_plugins = ['fix']\n\
               patch('shop.cart.total')\nopen('data/prices.json')\n\"\"\"A docstring, with words.\"\"\"\nf'{a}.b'\nname = 'plain'\n";
    let got: Vec<(u32, String, StringContext)> = analyze(src.as_bytes())
        .strings
        .into_iter()
        .map(|s| (s.line, s.value, s.context))
        .collect();
    assert_eq!(
        got,
        vec![
            (1, "plugins".into(), StringContext::ImportCall),
            (2, "x.y".into(), StringContext::ImportCall),
            (3, "fix".into(), StringContext::PytestPlugins),
            (4, "shop.cart.total".into(), StringContext::Plain),
            (5, "data/prices.json".into(), StringContext::PathArg),
        ]
    );
}

fn paths(src: &str) -> Vec<(u32, PathValue)> {
    analyze(src.as_bytes())
        .paths
        .into_iter()
        .map(|p| (p.line, p.value))
        .collect()
}

#[test]
fn path_expressions_from_file_joins_constants_and_resources() {
    let src = "import os\nfrom pathlib import Path\nHERE = Path(__file__).parent\nROOT = HERE.parent\n\
               DATA = ROOT / 'data' / 'prices.json'\nT = os.path.join(os.path.dirname(__file__), 'templates')\n\
               R = importlib.resources.files('shop') / 'rates.json'\nB = pkgutil.get_data('shop', 'x/y.bin')\n\
               J = os.path.join('tests', 'data', 'a.json')\nF = open(f'{HERE}/cases/{name}.txt')\n\
               U = Path(__file__).parents[1] / 'conf'\nW = Path(__file__).with_name('sibling.json')\n";
    let fd = |p: &str| PathValue::FileDir(p.into());
    let pkg = |p: &str, q: &str| PathValue::Package {
        package: p.into(),
        path: q.into(),
    };
    assert_eq!(
        paths(src),
        vec![
            (5, fd("../data/prices.json")),
            (6, fd("templates")),
            (7, pkg("shop", "rates.json")),
            (8, pkg("shop", "x/y.bin")),
            (9, PathValue::Relative("tests/data/a.json".into())),
            // `name` may hold a `/`: any `.txt` below `cases/` (the `/` after the folder
            // is the separator: before, `/cases/…` read as absolute and named nothing).
            (10, fd("cases/**/*.txt")),
            (11, fd("../conf")),
            (12, fd("sibling.json")),
        ],
        "anchors (HERE, ROOT) are not references"
    );
}

/// A join onto an absolute or home path leaves the repository: it names nothing, even
/// where the tree holds a file of that name below the anchor.
#[test]
fn joins_onto_absolute_paths_name_nothing() {
    let src = "from pathlib import Path\nA = Path(__file__).parent / '/etc/passwd'\nB = Path(__file__).parent / '~/x.json'\nC = Path(__file__).parent / 'x.json'\n";
    assert_eq!(paths(src), vec![(4, PathValue::FileDir("x.json".into()))]);
}

/// A bare `system(...)` (`from os import system`) and a call through a module's own
/// `subprocess` are processes too.
#[test]
fn bare_system_and_qualified_subprocess_calls_run_what_they_name() {
    let src = "from os import system\nsystem('sh tools/gen.sh')\nlib.subprocess.run(['bash', 'scripts/y.sh'])\n";
    let got = strings(src);
    for want in [
        ("tools/gen.sh", StringContext::Argv),
        ("scripts/y.sh", StringContext::Argv),
    ] {
        assert!(
            got.contains(&(want.0.to_string(), want.1)),
            "{want:?} in {got:?}"
        );
    }
}

#[test]
fn django_settings_paths() {
    let src = "from pathlib import Path\nimport os\nBASE_DIR = Path(__file__).resolve().parent.parent\n\
               TEMPLATES = [{'DIRS': [BASE_DIR / 'templates']}]\nSTATICFILES_DIRS = [os.path.join(BASE_DIR, 'static')]\n";
    assert_eq!(
        paths(src),
        vec![
            (4, PathValue::FileDir("../templates".into())),
            (5, PathValue::FileDir("../static".into())),
        ]
    );
}

fn strings(src: &str) -> Vec<(String, StringContext)> {
    analyze(src.as_bytes())
        .strings
        .into_iter()
        .map(|s| (s.value, s.context))
        .collect()
}

#[test]
fn subprocess_argv_python_c_and_shell_strings() {
    let src = "subprocess.run(['bash', 'scripts/x.sh'])\nsubprocess.run([sys.executable, '-m', 'cli'])\n\
               subprocess.check_call([sys.executable, '-c', 'import shop.cli; shop.cli.main()'])\n\
               subprocess.run(['mypy', 'src'])\nos.system('sh tools/gen.sh --fast')\n\
               subprocess.run(['sh', '-c', 'python -m shop.tool && cat data/x.txt'])\n";
    let f = analyze(src.as_bytes());
    assert!(
        f.imports
            .iter()
            .any(|i| i.module == "shop.cli" && i.line == 3),
        "{:?}",
        f.imports
    );
    let got = strings(src);
    for want in [
        ("scripts/x.sh", StringContext::Argv),
        ("cli", StringContext::RunModule),
        ("src", StringContext::Argv),
        ("tools/gen.sh", StringContext::Argv),
        ("shop.tool", StringContext::RunModule),
        ("data/x.txt", StringContext::Argv),
    ] {
        assert!(
            got.contains(&(want.0.to_string(), want.1)),
            "{want:?} in {got:?}"
        );
    }
    assert!(
        !got.contains(&("cli".to_string(), StringContext::Argv)),
        "`-m cli` runs the module, not every file of a folder `cli`: {got:?}"
    );
}

#[test]
fn dynamic_imports_keep_their_constant_prefix_or_none() {
    let src = "importlib.import_module(f'shop.plugins.{name}')\nimport_module('shop.ext.' + name)\n\
               __import__(name)\nimport_module('shop.fmt_%s' % kind)\nimport_module('fixed.name')\n";
    let got: Vec<(u32, String)> = analyze(src.as_bytes())
        .dynamic_imports
        .into_iter()
        .map(|d| (d.line, d.prefix))
        .collect();
    assert_eq!(
        got,
        vec![
            (1, "shop.plugins.".into()),
            (2, "shop.ext.".into()),
            (3, String::new()),
            (4, "shop.fmt_".into())
        ]
    );
}

/// Names relative to the file's own module or package keep that anchor; what cannot be
/// placed is unbounded (no prefix, no anchor), never dropped.
#[test]
fn relative_run_time_names_keep_their_anchor() {
    let src = "import_module('.sub', __name__)\nimport_module(f'.{x}', __package__)\n\
               import_module(f'{__name__}.{x}')\nimport_module('.' + x, package=pkg)\n\
               __import__(x, globals(), locals(), [], 2)\n__import__('pkg', fromlist=[x])\n\
               import_module('..b.c', 'a.x')\nimport_module('plug_'.upper() + x)\n\
               __getattr__, __dir__, __all__ = lazy.attach(__name__, ['a'])\n\
               def f():\n    def __getattr__(name): pass\n";
    type Found = (u32, String, Option<(bool, u32)>, bool);
    let got: Vec<Found> = analyze(src.as_bytes())
        .dynamic_imports
        .into_iter()
        .map(|d| {
            (
                d.line,
                d.prefix,
                d.anchor.map(|a| (a.own_module, a.up)),
                d.exact,
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (1, "sub".into(), Some((true, 0)), true),
            (2, String::new(), Some((false, 0)), false),
            (3, String::new(), Some((true, 0)), false),
            (4, String::new(), None, false),
            (5, String::new(), Some((false, 1)), false),
            (6, "pkg.".into(), None, false),
            (8, String::new(), None, false),
            (9, String::new(), Some((true, 0)), false),
        ]
    );
    let strings = analyze(src.as_bytes()).strings;
    assert!(
        strings.iter().any(|s| s.line == 7 && s.value == "a.b.c"),
        "{strings:?}"
    );
}

/// Code run from a file by a path gate cannot evaluate is unbounded; a literal or evaluated
/// path is a path edge, literal code is read as this file's.
#[test]
fn files_run_by_path_are_placed_or_unbounded() {
    let src = "import runpy, pkgutil\nrunpy.run_path(p)\nrunpy.run_path('lib/script.py')\n\
               spec_from_file_location('m', where)\nexec(open(conf).read())\nexec('import lib.a')\n\
               pkgutil.walk_packages(lib.__path__, 'lib.')\npkgutil.walk_packages(__path__, __name__ + '.')\n\
               pkgutil.walk_packages(path)\nexec(code)\n";
    let f = analyze(src.as_bytes());
    let got: Vec<(u32, String, bool)> = f
        .dynamic_imports
        .iter()
        .map(|d| (d.line, d.prefix.clone(), d.anchor.is_some()))
        .collect();
    assert_eq!(
        got,
        vec![
            (2, String::new(), false),
            (4, String::new(), false),
            (5, String::new(), false),
            (7, "lib.".into(), false),
            (8, String::new(), true),
            (9, String::new(), false),
        ]
    );
    assert!(f.imports.iter().any(|i| i.line == 6 && i.module == "lib.a"));
    assert!(
        f.strings
            .iter()
            .any(|s| s.line == 3 && s.value == "lib/script.py")
    );
}

/// `lazy.attach_stub(name, file)` reads the stubs beside the module file (found in
/// lazy_loader's own tests: a changed `.pyi` was called inert).
#[test]
fn attach_stub_reads_the_stubs_beside_the_file() {
    let src = "import lazy_loader as lazy\nimport pkg.fake as fake\n\
               __getattr__, __dir__, __all__ = lazy.attach_stub(__name__, __file__)\n\
               lazy.attach_stub(fake.__name__, fake.__file__)\n";
    let got = paths(src);
    assert!(
        got.contains(&(3, PathValue::FileDir("*.pyi".into()))),
        "{got:?}"
    );
    assert!(
        got.contains(&(
            4,
            PathValue::ModuleDir {
                module: "pkg.fake".into(),
                path: "*.pyi".into()
            }
        )),
        "{got:?}"
    );
}

#[test]
fn flask_apps_and_bdd_bindings() {
    let src = "app = Flask(__name__)\nscenarios('features/cart.feature')\n@scenario('pay.feature', 'Pay')\ndef test_pay(): pass\n\
               bp = Blueprint('x', __name__, template_folder='templates')\n";
    let f = analyze(src.as_bytes());
    assert_eq!(f.apps, vec![1]);
    let got = strings(src);
    assert!(
        got.contains(&("features/cart.feature".into(), StringContext::Feature)),
        "{got:?}"
    );
    assert!(
        got.contains(&("pay.feature".into(), StringContext::Feature)),
        "{got:?}"
    );
    assert!(
        got.contains(&("templates".into(), StringContext::PathArg)),
        "{got:?}"
    );
}

#[test]
fn near_misses_make_no_reference() {
    let src =
        "# open('data/prices.json')\nx = 'just words here'\nrun(['bash', 'x.sh'])\nimport_module\n";
    let f = analyze(src.as_bytes());
    assert!(
        f.strings.iter().all(|s| s.value != "data/prices.json"),
        "{:?}",
        f.strings
    );
    assert!(
        f.strings.iter().all(|s| s.context != StringContext::Argv),
        "an unqualified run() is not a subprocess: {:?}",
        f.strings
    );
    assert!(f.dynamic_imports.is_empty() && f.paths.is_empty());
}

#[test]
fn broken_file_keeps_what_was_recovered() {
    let facts = analyze(b"import good\ndef broken(:\n    pass\nfrom also import kept\n");
    assert!(!facts.parse_errors.is_empty());
    let modules: Vec<&str> = facts.imports.iter().map(|i| i.module.as_str()).collect();
    assert!(modules.contains(&"good"), "{modules:?}");
}

/// Random bytes, and random deep nestings of Python's bracketing forms, never panic or
/// overflow the stack, and the same bytes give the same facts.
mod fuzz {
    use super::super::analyze;
    use proptest::prelude::*;

    fn nesting() -> impl Strategy<Value = String> {
        let open = prop::sample::select(vec![
            "(",
            "[",
            "{",
            "f'{",
            "not ",
            "-",
            "lambda: ",
            "x[",
            "os.path.join(",
            "Path(",
            "'a' + ",
            "import_module(",
        ]);
        (prop::collection::vec(open, 1..64), 1usize..400).prop_map(|(parts, times)| {
            let mut s = String::from("X = ");
            for _ in 0..times {
                for p in &parts {
                    s.push_str(p);
                }
            }
            s.push_str("__file__\n");
            s
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]
        #[test]
        fn random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
            prop_assert_eq!(analyze(&bytes), analyze(&bytes));
        }

        #[test]
        fn deep_nesting(src in nesting()) {
            let _ = analyze(src.as_bytes());
        }

        #[test]
        fn python_shaped_noise(src in "[a-z_().\\[\\]{}'\"+/,:= \n#fimport]{0,3000}") {
            let _ = analyze(src.as_bytes());
        }
    }
}

#[test]
fn folders_put_on_sys_path_are_roots_not_paths() {
    let src = "import sys, os, site\nfrom pathlib import Path\nHERE = Path(__file__).parent\n\
               sys.path.insert(0, str(HERE / 'apps'))\n\
               sys.path.append(os.path.join(os.path.dirname(__file__), 'more'))\n\
               site.addsitedir('vendor')\n\
               def test_x(monkeypatch):\n    monkeypatch.syspath_prepend(HERE / 'late')\n\
               DATA = HERE / 'data' / 'x.json'\n";
    let f = analyze(src.as_bytes());
    let roots: Vec<(u32, PathValue)> = f
        .sys_paths
        .iter()
        .map(|p| (p.line, p.value.clone()))
        .collect();
    assert_eq!(
        roots,
        [
            (4, PathValue::FileDir("apps".into())),
            (5, PathValue::FileDir("more".into())),
            (6, PathValue::Relative("vendor".into())),
            (8, PathValue::FileDir("late".into())),
        ]
    );
    // Only the data path is a path reference; the folders on sys.path are not.
    let paths: Vec<&PathValue> = f.paths.iter().map(|p| &p.value).collect();
    assert_eq!(paths, [&PathValue::FileDir("data/x.json".into())]);
    assert!(
        f.strings
            .iter()
            .all(|s| s.value != "vendor" || s.context == StringContext::SysPath),
        "{:?}",
        f.strings
    );
}

/// `mod.__file__` is the file of the module imported by that name (`import a.b`, `import a.b
/// as c`, `from a import b`); a name never imported is no path.
#[test]
fn paths_built_on_an_imported_modules_file() {
    let src = "from pathlib import Path\nimport os\nimport js.core\nimport js.util as u\nfrom js import extra as ex\n\
               A = Path(js.__file__).parent.parent / 'json'\nB = os.path.join(os.path.dirname(u.__file__), 'x.txt')\n\
               C = Path(ex.__file__).parent / 'y.txt'\nD = Path(js.core.__file__).with_name('z.txt')\nE = Path(other.__file__).parent / 'n.txt'\n";
    let dir = |m: &str, p: &str| PathValue::ModuleDir {
        module: m.into(),
        path: p.into(),
    };
    assert_eq!(
        paths(src),
        vec![
            (6, dir("js", "../json")),
            (7, dir("js.util", "x.txt")),
            (8, dir("js.extra", "y.txt")),
            (9, dir("js.core", "z.txt")),
            (10, PathValue::Relative("**/n.txt".into())),
        ],
        "`other` was never imported: line 10 is an `n.txt` in any folder"
    );
}

#[test]
fn variables_read_by_a_literal_name() {
    let src = "import os\nfrom os import environ, getenv\n\
               a = os.environ['A']\nb = os.getenv('B', 'x')\nc = environ.get('C')\nd = getenv('D')\n\
               e = os.environ.setdefault('E', '1')\nf = os.environ[name]\ng = os.getenv(f'G{x}')\n\
               os.environ['A'] = 'again'\n";
    assert_eq!(analyze(src.as_bytes()).env, ["A", "B", "C", "D", "E"]);
}

/// Every read of the environment that names no variable gate can know is kept with its line:
/// computed names, the whole mapping, aliases of it or of a reader. Reads by a literal name and
/// WSGI's own `environ` parameter are not among them.
#[test]
fn environment_reads_gate_cannot_name() {
    let src = "import os\nfrom os import environ\n\
               a = os.environ[name]\nb = os.getenv(f'G{x}')\nc = environ.get(key)\n\
               d = dict(os.environ)\ne = os.environ.copy()\nenv = os.environ\n\
               for k in os.environ:\n    pass\nrun(cmd, env={**os.environ, 'A': '1'})\n\
               get = os.getenv\nf = os.environ.get('F')\ng = 'G' in os.environ\n\
               h = os.environ['H']\nos.environ.setdefault('I', '1')\n";
    let facts = analyze(src.as_bytes());
    let lines: Vec<u32> = facts.env_any.iter().map(|(l, _)| *l).collect();
    assert_eq!(lines, [3, 4, 5, 6, 7, 8, 9, 11, 12], "{:?}", facts.env_any);
    assert_eq!(facts.env, ["F", "G", "H", "I"]);
    let wsgi = "def app(environ, start_response):\n    return environ.get(key), dict(environ)\n";
    assert!(analyze(wsgi.as_bytes()).env_any.is_empty());
    // A star import of os binds its names as `from os import environ` does.
    let star = "from os import *\nx = environ['X']\ny = getenv(k)\n";
    let facts = analyze(star.as_bytes());
    assert_eq!(facts.env, ["X"]);
    assert_eq!(facts.env_any.len(), 1, "{:?}", facts.env_any);
}

/// What the path space (tests/it/path_space.rs) found, one form each: templates, the working
/// folder, folders not known here under a known tail, loops over literal lists, stale names,
/// listings of an anchor, f-strings passed on, and unknowns that may hold a `/` or climb.
#[test]
fn templates_unknown_folders_loops_and_listings() {
    let src = "import os\nfrom pathlib import Path\nfrom conf import BASE\nHERE = Path(__file__).parent\n\
               A = '%s/data/a.json' % HERE\nB = '{}/data/{}'.format(HERE, 'b.json')\n\
               C = os.path.join(os.getcwd(), 'data', 'c.json')\nD = BASE / 'data' / 'd.json'\n\
               for n in ['e.json', 'f.json']:\n    open(HERE / n)\n\
               X = HERE / 'old.json'\nX = os.environ.get('X', 'y')\nG = X + '/g.json'\n\
               os.listdir(HERE)\ncopy2(f'{BASE}/h.json', dst)\n\
               def f(name):\n    return HERE / 'cases' / name / 'in.txt'\n\
               I = os.path.join(HERE, name, '..', 'i.json')\nJ = HERE + os.sep + 'j.json'\n\
               K = tmp_path / 'k.json'\n";
    let fd = |p: &str| PathValue::FileDir(p.into());
    let rel = |p: &str| PathValue::Relative(p.into());
    assert_eq!(
        paths(src),
        vec![
            (5, fd("data/a.json")),
            (6, fd("data/b.json")),
            (7, rel("./data/c.json")),
            (8, rel("**/data/d.json")),
            (10, fd("{e.json,f.json}")),
            (11, fd("old.json")),
            (13, rel("**/g.json")),
            (14, fd(".")),
            (15, rel("**/h.json")),
            (17, fd("cases/**/in.txt")),
            (18, fd("../**/i.json")),
            (19, fd("./j.json")),
        ],
    );
}
