//! Test discovery against pytest's own reading: settings from each file, plugins, doctest
//! options, and `fnmatch_ex` on generated patterns.

use super::*;

fn discovery(files: &[(&str, &str)]) -> TestDiscovery {
    TestDiscovery::load(|name| {
        files
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, c)| c.as_bytes().to_vec())
    })
}

#[test]
fn plugins_the_project_registers() {
    let d = discovery(&[(
        "pyproject.toml",
        "[tool.pytest.ini_options]\naddopts = [\"-p\", \"tests.fixtures_plugin\", \"-pno:cacheprovider\", \"-p\", \"no:warnings\", \"-pxdist.plugin\"]\n\
         [project.entry-points.pytest11]\nmine = \"myproj.pytest_plugin:entry\"\n",
    )]);
    let modules: Vec<&str> = d.plugins.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(
        modules,
        [
            "myproj.pytest_plugin",
            "tests.fixtures_plugin",
            "xdist.plugin"
        ]
    );
    assert!(
        d.plugins[0].1.contains("pytest11 `mine`"),
        "{:?}",
        d.plugins
    );
    let cfg = discovery(&[(
        "setup.cfg",
        "[options.entry_points]\npytest11 =\n    one = pkg.one\n    two = pkg.two:hook\nconsole_scripts =\n    x = pkg.cli:main\n",
    )]);
    let modules: Vec<&str> = cfg.plugins.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(modules, ["pkg.one", "pkg.two"]);
    assert!(cfg.broken.is_none());
}

#[test]
fn a_pyproject_pytest_cannot_read_is_named_not_fatal() {
    let d = discovery(&[("pyproject.toml", "[tool.pytest.ini_options]\naddopts = [\n")]);
    let broken = d
        .broken
        .as_deref()
        .expect("a malformed pyproject.toml is named");
    assert!(broken.starts_with("pyproject.toml: "), "{broken}");
    assert!(broken.contains("line"), "{broken}");
    // pytest's defaults stand in, so the rows can still be decided.
    assert!(d.tests(&["tests/test_a.py".to_string()], &d.doctests).len() == 1);
}

/// The folder-reusing listing picks exactly the files `is_test` accepts, with pytest's
/// default names and with the ini's own.
#[test]
fn listing_tests_agrees_with_is_test() {
    let mut files: Vec<String> = [
        "a.py",
        "build/test_x.py",
        "build/x/test_y.py",
        "conftest.py",
        "pkg/check_a.py",
        "pkg/test_a.py",
        "pkg/test_a.pyi",
        "pkg/x_test.py",
        "tests/.hidden/test_h.py",
        "tests/test_b.py",
        "tests/test_.py",
        "tests/testing.py",
    ]
    .map(String::from)
    .to_vec();
    files.sort();
    let custom = [(
        "pytest.ini",
        "[pytest]\npython_files = check_*.py test_*.py\n",
    )];
    let doctest = [(
        "pytest.ini",
        "[pytest]\naddopts = --doctest-modules --doctest-glob=*.md\n",
    )];
    files.extend(
        [
            "README.md",
            "docs/guide.md",
            "docs/test_x.txt",
            "pkg/__main__.py",
        ]
        .map(String::from),
    );
    files.sort();
    for d in [discovery(&[]), discovery(&custom), discovery(&doctest)] {
        let expected: Vec<&String> = files.iter().filter(|f| d.is_test(f)).collect();
        assert_eq!(d.tests(&files, &d.doctests), expected);
        assert!(!expected.is_empty());
    }
    assert_eq!(
        discovery(&[]).tests(&files, &Doctests::default()),
        [
            "docs/test_x.txt",
            "pkg/test_a.py",
            "pkg/x_test.py",
            "tests/test_.py",
            "tests/test_b.py"
        ]
        .iter()
        .collect::<Vec<_>>()
    );
}

/// Doctests are tests: `--doctest-modules` makes every module pytest walks to one (but
/// `setup.py`, `__main__.py`, conftests), `--doctest-glob` the text files it names —
/// `test*.txt` without one; the runner's options count as `addopts` do.
#[test]
fn doctest_options_make_modules_and_text_files_tests() {
    let files: Vec<String> = [
        "README.md",
        "conftest.py",
        "docs/index.rst",
        "docs/test_guide.txt",
        "setup.py",
        "src/pkg/__init__.py",
        "src/pkg/__main__.py",
        "src/pkg/core.py",
        "src/pkg/data.txt",
        "tests/test_core.py",
    ]
    .map(String::from)
    .to_vec();
    let names = |d: &TestDiscovery, doctests: &Doctests| -> Vec<String> {
        d.tests(&files, doctests).into_iter().cloned().collect()
    };
    let plain = discovery(&[]);
    assert_eq!(
        names(&plain, &plain.doctests),
        ["docs/test_guide.txt", "tests/test_core.py"]
    );
    let d = discovery(&[(
        "pytest.ini",
        "[pytest]\naddopts = -ra --doctest-modules --doctest-glob *.md --doctest-glob=*.rst\n",
    )]);
    assert_eq!(
        names(&d, &d.doctests),
        [
            "README.md",
            "docs/index.rst",
            "src/pkg/__init__.py",
            "src/pkg/core.py",
            "tests/test_core.py"
        ]
    );
    let mut runner = plain.doctests.clone();
    runner.read(["pytest", "--doctest-modules"]);
    assert_eq!(
        names(&plain, &runner),
        [
            "docs/test_guide.txt",
            "src/pkg/__init__.py",
            "src/pkg/core.py",
            "tests/test_core.py"
        ]
    );
    // pytest 9's native table (lists of words), and a quoted glob split as a shell does.
    let native = discovery(&[(
        "pyproject.toml",
        "[tool.pytest]\naddopts = [\"--doctest-modules\"]\ntestpaths = [\"src\", \"tests\"]\n",
    )]);
    assert_eq!(
        names(&native, &native.doctests),
        [
            "src/pkg/__init__.py",
            "src/pkg/core.py",
            "tests/test_core.py"
        ]
    );
    let quoted = discovery(&[(
        "setup.cfg",
        "[tool:pytest]\naddopts = --doctest-glob='*.rst' --cov pkg\n",
    )]);
    assert_eq!(
        names(&quoted, &quoted.doctests),
        ["docs/index.rst", "tests/test_core.py"]
    );
    let under = discovery(&[(
        "pytest.ini",
        "[pytest]\ntestpaths = src\naddopts = --doctest-modules\n",
    )]);
    assert_eq!(
        names(&under, &under.doctests),
        ["src/pkg/__init__.py", "src/pkg/core.py"]
    );
}

#[test]
fn defaults_match_pytest() {
    let d = discovery(&[]);
    assert!(d.is_test("tests/test_cart.py"));
    assert!(d.is_test("cart_test.py"));
    assert!(!d.is_test("tests/conftest.py"));
    assert!(!d.is_test("tests/helpers.py"));
    assert!(!d.is_test(".venv/lib/test_x.py"));
    assert!(!d.is_test("build/test_x.py"));
}

#[test]
fn settings_from_each_file() {
    let ini = discovery(&[(
        "pytest.ini",
        "[pytest]\npython_files = check_*.py\ntestpaths =\n    tests\n    more\n",
    )]);
    assert!(ini.is_test("tests/check_a.py") && ini.is_test("more/x/check_b.py"));
    assert!(!ini.is_test("tests/test_a.py") && !ini.is_test("other/check_a.py"));
    let py = discovery(&[(
        "pyproject.toml",
        "[tool.pytest.ini_options]\ntestpaths = [\"t\"]\n",
    )]);
    assert!(py.is_test("t/test_a.py") && !py.is_test("src/test_a.py"));
    let cfg = discovery(&[(
        "setup.cfg",
        "[metadata]\nname=x\n[tool:pytest]\npython_files = spec_*.py\n",
    )]);
    assert!(cfg.is_test("spec_a.py") && !cfg.is_test("test_a.py"));
    let tox = discovery(&[
        ("tox.ini", "[tox]\n[pytest]\ntestpaths = it\n"),
        ("setup.cfg", "[tool:pytest]\ntestpaths = no\n"),
    ]);
    assert_eq!(tox.source.as_deref(), Some("tox.ini"));
    assert!(tox.is_test("it/test_a.py"));
}

/// `python_files` and `--doctest-glob` patterns, generated (seeded) from the pieces that
/// matter to fnmatch, against pytest's own `fnmatch_ex` on the absolute paths pytest sees.
/// (The root's own folder names are not known to a plan: a pattern that spells them out —
/// `myrepo/docs/*.md` — is not matched. The root here is one no generated part can spell.)
#[test]
fn patterns_match_as_pytests_fnmatch_ex() {
    const PIECES: &[&str] = &[
        "*", "?", "/", "docs", "a", ".md", "test", "_x", "[ab]", "[!a]", "[", "]", "{a,b}", "**",
        ".", "[]a]", "[z-a]", "[a-c]", "\\", "-",
    ];
    const PARTS: &[&str] = &[
        "docs", "a", "b", "test", "{a,b}", "[", "]", "x.md", "c", "-", "\\",
    ];
    let mut seed: u64 = 0x5eed_f00d;
    let mut next = |n: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 33) as usize) % n
    };
    let mut cases = Vec::new();
    for _ in 0..3000 {
        let pieces: Vec<&str> = (0..1 + next(5))
            .map(|_| PIECES[next(PIECES.len())])
            .collect();
        let pattern: String = pieces.concat();
        // Half the paths are the pattern filled in, under some folders: mostly matches.
        if next(2) == 0 {
            let filled: String = pieces
                .iter()
                .map(|p| match *p {
                    "*" | "**" => ["", "a", "b/c", "x.md"][next(4)],
                    "?" | "[ab]" | "[]a]" | "[a-c]" => "a",
                    "[!a]" => "b",
                    p => p,
                })
                .collect();
            let above = ["", "a/", "docs/b/"][next(3)];
            cases.push((
                pattern,
                format!("{above}{filled}").trim_matches('/').to_string(),
            ));
            continue;
        }
        let path = (0..1 + next(4))
            .map(|_| {
                let a = PARTS[next(PARTS.len())];
                let b = PARTS[next(PARTS.len())];
                format!("{a}{b}")
            })
            .collect::<Vec<_>>()
            .join("/");
        cases.push((pattern, path));
    }
    // Only paths a tree holds: no empty, `.` or `..` part.
    cases.retain(|(_, path)| path.split('/').all(|p| !matches!(p, "" | "." | "..")));
    let input = serde_json::to_string(&cases).unwrap();
    let script = "import json,sys\nfrom _pytest.pathlib import fnmatch_ex\n\
        cases=json.load(sys.stdin)\n\
        print(json.dumps([fnmatch_ex(p, '/tree-root-q/' + f) for p, f in cases]))";
    let mut child = std::process::Command::new("python3")
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "this test needs pytest importable by python3"
    );
    let truth: Vec<bool> = serde_json::from_slice(&out.stdout).unwrap();
    let truth_count = truth.iter().filter(|t| **t).count();
    let mut wrong = Vec::new();
    for ((pattern, path), expected) in cases.iter().zip(truth) {
        let ours = Fnmatch::new([pattern.as_str()]).is_match(path);
        // A class globset cannot take, or an absolute pattern, may only widen.
        let widens = pattern.contains("[z-a]") || pattern.starts_with('/');
        if ours != expected && !(ours && widens) {
            wrong.push(format!(
                "{pattern:?} {path:?}: pytest {expected}, gate {ours}"
            ));
        }
    }
    let matched = truth_count;
    assert!(
        matched > cases.len() / 4,
        "the generator yields matches: {matched}"
    );
    assert!(
        wrong.is_empty(),
        "{} of {}:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
}
