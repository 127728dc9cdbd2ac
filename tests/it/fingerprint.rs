//! `gate explain TEST --fingerprint`: a test's fingerprint changes with every input of its
//! outcome — a file of its closure (a conftest, a parent `__init__.py`, a data file read
//! through a path expression, a lock file), a variable that changes a run, the interpreter —
//! and with nothing else; an input gate cannot hash makes it unknown, with why.

use crate::support::{TestRepo, text};
use serde_json::Value;

/// The fingerprint document of `test` in the working tree.
fn print(t: &TestRepo, test: &str, env: &[(&str, &str)]) -> Value {
    let mut cmd = t.gate(&["explain", test, "--fingerprint", "--json"]);
    cmd.env_remove("PYTHONHASHSEED");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    crate::plans::validate("fingerprint.schema.json", &doc);
    doc["fingerprint"].clone()
}

fn digest(t: &TestRepo, test: &str) -> String {
    print(t, test, &[])["digest"].as_str().unwrap().to_string()
}

#[test]
fn a_fingerprint_changes_with_every_input_and_nothing_else() {
    let t = TestRepo::from_fixture("shop");
    t.write("requirements.txt", "pytest==8.0\n");
    t.commit("pin");
    let money = "tests/test_money.py";
    let prices = "tests/test_prices.py";
    let before = (digest(&t, money), digest(&t, prices));
    // Nothing the tests depend on: both unchanged.
    t.append("docs/guide.md", "\nmore\n");
    t.append("src/shop/untested.py", "\n# nobody\n");
    assert_eq!((digest(&t, money), digest(&t, prices)), before);
    // The conftest is in both closures.
    t.append("tests/conftest.py", "\n# fixture edit\n");
    let (mut last, prices_now) = (digest(&t, money), digest(&t, prices));
    assert_ne!(last, before.0);
    assert_ne!(prices_now, before.1);
    // The package test_money imports changes test_money's only (test_prices reads a data
    // file, not the package).
    for (file, line) in [
        ("src/shop/__init__.py", "\n# parent package\n"),
        ("src/shop/money.py", "\n# source\n"),
    ] {
        t.append(file, line);
        let now = digest(&t, money);
        assert_ne!(now, last, "{file}");
        last = now;
    }
    assert_eq!(
        digest(&t, prices),
        prices_now,
        "test_prices imports none of those"
    );
    // The data file test_prices reads through its path changes only test_prices.
    t.write("tests/data/prices.json", "{\"apple\": 4}\n");
    assert_ne!(digest(&t, prices), prices_now);
    assert_eq!(digest(&t, money), last);
    // A lock file entry: every test's.
    let (m, p) = (digest(&t, money), digest(&t, prices));
    t.write("requirements.txt", "pytest==8.1\n");
    assert_ne!(digest(&t, money), m);
    assert_ne!(digest(&t, prices), p);
    // A variable that changes a run: its value is hashed, never shown.
    let m = digest(&t, money);
    let seeded = print(&t, money, &[("PYTHONHASHSEED", "123")]);
    assert_ne!(seeded["digest"].as_str().unwrap(), m);
    let var = seeded["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == "PYTHONHASHSEED")
        .unwrap();
    assert_ne!(var["hash"], "123");
    assert_ne!(var["hash"], "unset");
    // The runner's configuration.
    t.write(".gate.toml", "[env]\nSHOP_MODE = \"strict\"\n");
    assert_ne!(digest(&t, money), m);
}

#[test]
fn another_interpreter_is_another_fingerprint() {
    let t = TestRepo::from_fixture("shop");
    let before = print(&t, "tests/test_money.py", &[]);
    // A virtualenv of the repository is the interpreter gate runs: its packages differ.
    let venv = std::process::Command::new("python3")
        .args(["-m", "venv", "--without-pip", ".venv"])
        .current_dir(&t.root)
        .output()
        .unwrap();
    assert!(venv.status.success(), "{}", text(&venv));
    let after = print(&t, "tests/test_money.py", &[]);
    assert_ne!(after["digest"], before["digest"]);
    let toolchain = |doc: &Value| {
        doc["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["kind"] == "toolchain")
            .cloned()
            .unwrap()
    };
    assert_eq!(toolchain(&after)["name"], ".venv/bin/python");
    assert_ne!(toolchain(&after)["hash"], toolchain(&before)["hash"]);
}

#[test]
fn an_input_gate_cannot_hash_makes_the_fingerprint_unknown() {
    let t = TestRepo::from_fixture("shop");
    t.write(
        "tests/test_dyn.py",
        "import importlib\nimport os\n\n\ndef test_dyn():\n    importlib.import_module(os.environ.get('MOD', 'json'))\n",
    );
    std::os::unix::fs::symlink("/etc/hostname", t.root.join("tests/data/host.txt")).unwrap();
    t.write(
        "tests/test_host.py",
        "def test_host():\n    assert open('tests/data/host.txt').read()\n",
    );
    // A module of the closure reads a file outside the repository; another writes to
    // /dev/null, which reads nothing.
    t.write(
        "src/shop/settings.py",
        "def load():\n    with open('/etc/shop.conf') as f:\n        return f.read()\n",
    );
    t.write(
        "tests/test_settings.py",
        "from shop import settings\n\n\ndef test_load():\n    assert settings.load\n",
    );
    t.write(
        "tests/test_quiet.py",
        "def test_quiet():\n    open('/dev/null', 'w').write('x')\n",
    );
    t.commit("unbounded");
    let settings = print(&t, "tests/test_settings.py", &[]);
    assert!(settings["digest"].is_null(), "{settings:#}");
    assert_eq!(
        settings["unknown"][0],
        "src/shop/settings.py:2: reads `/etc/shop.conf`, outside the repository: gate cannot hash it",
        "{settings:#}"
    );
    let quiet = print(&t, "tests/test_quiet.py", &[]);
    assert!(quiet["digest"].is_string(), "{quiet:#}");
    let dynamic = print(&t, "tests/test_dyn.py", &[]);
    assert!(dynamic["digest"].is_null(), "{dynamic:#}");
    let why = dynamic["unknown"][0].as_str().unwrap();
    assert!(why.contains("imports a module named at run time"), "{why}");
    let host = print(&t, "tests/test_host.py", &[]);
    assert!(host["digest"].is_null(), "{host:#}");
    assert!(
        host["unknown"][0]
            .as_str()
            .unwrap()
            .contains("a symlink that leaves the tree"),
        "{host:#}"
    );
    // The human form says it is never reused, and why; the unset variables it holds are one
    // line.
    let out = t
        .gate(&["explain", "tests/test_dyn.py", "--fingerprint"])
        .env_remove("PYTHONOPTIMIZE")
        .output()
        .unwrap();
    let unset = text(&out)
        .lines()
        .filter(|l| l.contains("unset"))
        .map(str::to_string)
        .collect::<Vec<_>>();
    assert_eq!(unset.len(), 1, "{}", text(&out));
    assert!(
        unset[0].contains("unset (held unset: setting one changes the fingerprint)")
            && unset[0].contains("PYTHONOPTIMIZE"),
        "{}",
        text(&out)
    );
    assert!(
        text(&out).contains("fingerprint unknown — never reused"),
        "{}",
        text(&out)
    );
    assert!(
        text(&out).contains("unknown: tests/test_dyn.py:"),
        "{}",
        text(&out)
    );
    // A file that is not a test has no fingerprint: an error, not an empty answer.
    let out = t
        .gate(&["explain", "src/shop/money.py", "--fingerprint"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
}

#[test]
fn a_go_package_s_fingerprint_holds_its_files_its_dependencies_and_the_toolchain() {
    let t = TestRepo::from_fixture("goshop");
    let doc = print(&t, "./ws/shop/cart", &[]);
    assert!(doc["digest"].is_string(), "{doc:#}");
    let names: Vec<&str> = doc["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    for want in [
        "ws/shop/cart/cart.go",
        "ws/shop/cart/cart_test.go",
        "ws/shop/cart/testdata/items.json",
        "ws/shop/money/money.go",
        "ws/shop/go.mod",
        "go",
    ] {
        assert!(names.contains(&want), "{want}: {names:?}");
    }
    let before = doc["digest"].clone();
    t.append("ws/shop/money/money.go", "\n// edit\n");
    assert_ne!(print(&t, "./ws/shop/cart", &[])["digest"], before);
    let unrelated = print(&t, "./ws/shop/web", &[])["digest"].clone();
    t.append("ws/shop/cart/cart.go", "\n// edit\n");
    assert_eq!(print(&t, "./ws/shop/web", &[])["digest"], unrelated);
}

#[test]
fn a_variable_the_closure_reads_by_name_is_an_input() {
    let t = TestRepo::from_fixture("shop");
    t.append(
        "src/shop/tax.py",
        "\nimport os\n\nREGION = os.environ.get('SHOP_REGION', 'eu')\nDEBUG = os.environ['SHOP_DEBUG'] if 'SHOP_DEBUG' in os.environ else ''\n",
    );
    t.commit("env");
    // test_cart reaches tax.py through the cart; test_prices does not.
    let cart = print(&t, "tests/test_cart.py", &[]);
    let names: Vec<&str> = cart["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["kind"] == "env")
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"SHOP_REGION") && names.contains(&"SHOP_DEBUG"),
        "{names:?}"
    );
    let other = print(&t, "tests/test_cart.py", &[("SHOP_REGION", "us")]);
    assert_ne!(other["digest"], cart["digest"]);
    let prices = print(&t, "tests/test_prices.py", &[]);
    assert_eq!(
        print(&t, "tests/test_prices.py", &[("SHOP_REGION", "us")])["digest"],
        prices["digest"],
        "a variable no file of its closure reads"
    );
    // Go: os.Getenv in a package the test imports.
    let g = TestRepo::from_fixture("goshop");
    g.append(
        "ws/shop/money/money.go",
        "\nfunc currency() string { return os.Getenv(\"SHOP_CURRENCY\") }\n",
    );
    g.commit("env");
    let cart = print(&g, "./ws/shop/cart", &[]);
    assert_ne!(
        print(&g, "./ws/shop/cart", &[("SHOP_CURRENCY", "EUR")])["digest"],
        cart["digest"]
    );
}
