//! `.gate.toml` → resolved settings: compiled globs, the runner's argv, defaults filled in.
//! The file is read from the tree being gated, so a pushed config governs its own push.
//! Every mistake (unknown key, bad glob, wrong type) is one error naming the key and line.

mod parse;
mod raw;
/// The configuration reference page checked against the parser.
#[cfg(test)]
mod reference;
mod rules;

pub(crate) use rules::{
    AlwaysRun, DependsRule, Fallback, Loads, Matcher, NamedFullMode, Reference, RelativeTo, Step,
    Trust, When,
};

pub(crate) mod error;

use crate::error::{Error, Result};
use globset::{GlobBuilder, GlobMatcher};
use std::collections::BTreeMap;

pub(crate) const FILE: &str = ".gate.toml";

/// The history rollup window when `[history] window` gives none.
pub(crate) const DEFAULT_WINDOW_DAYS: u64 = 90;

/// Non-code files that cannot break a test unless something references them.
pub(crate) const DEFAULT_INERT: &[&str] = &[
    "**/*.md",
    "**/*.rst",
    "**/*.adoc",
    "docs/**",
    "doc/**",
    "**/LICENSE*",
    "**/LICENCE*",
    "**/COPYING*",
    "AUTHORS*",
    "CHANGELOG*",
    "CHANGES*",
    "HISTORY*",
    "NEWS*",
    "CONTRIBUTING*",
    "CODE_OF_CONDUCT*",
    "**/.gitignore",
    "**/.gitattributes",
    ".mailmap",
    ".editorconfig",
    ".git-blame-ignore-revs",
    // Repository metadata and tool configuration no test reads (still resolved when an edge
    // reaches one): GitHub's files but its workflows and actions, linters, formatters,
    // documentation builders, editors, packaging lists, citation files, changelog fragments.
    ".github/**",
    "!.github/workflows/**",
    "!.github/actions/**",
    ".pre-commit-config.yaml",
    ".pre-commit-hooks.yaml",
    ".readthedocs.yml",
    ".readthedocs.yaml",
    "mkdocs.yml",
    "mkdocs.yaml",
    "CITATION.cff",
    ".zenodo.json",
    ".devcontainer/**",
    ".vscode/**",
    ".idea/**",
    "MANIFEST.in",
    "**/Makefile",
    "**/makefile",
    "**/GNUmakefile",
    ".golangci.yml",
    ".golangci.yaml",
    ".golangci.toml",
    ".flake8",
    ".pylintrc",
    "ruff.toml",
    ".ruff.toml",
    ".prettierrc*",
    ".prettierignore",
    ".eslintrc*",
    ".eslintignore",
    "codecov.yml",
    "codecov.yaml",
    ".codecov.yml",
    ".codecov.yaml",
    ".git_archival.txt",
    // An sdist's generated metadata: installed metadata is read from site-packages instead.
    "PKG-INFO",
    ".markdownlint*",
    ".yamllint*",
    "changelog.d/**",
    "newsfragments/**",
];

/// Changes whose honest blast radius is the whole suite, with the reason recorded.
pub(crate) const DEFAULT_WHOLE_SUITE: &[(&str, &str)] = &[
    ("conftest.py", "root conftest.py applies to every test"),
    ("pytest.ini", "pytest configuration"),
    ("pyproject.toml", "project and pytest configuration"),
    ("setup.cfg", "project and pytest configuration"),
    ("tox.ini", "test environment and pytest configuration"),
    ("setup.py", "package build configuration"),
    ("noxfile.py", "test session configuration"),
    ("**/requirements*.txt", "dependency versions"),
    ("**/constraints*.txt", "dependency versions"),
    ("**/*.lock", "locked dependency versions"),
    ("Pipfile", "dependency versions"),
    (".python-version*", "interpreter version"),
    (".github/workflows/**", "CI configuration"),
    (".gitlab-ci.yml", "CI configuration"),
    (".ci/**", "CI configuration"),
    (FILE, "gate's own configuration"),
    ("**/go.mod", "Go module requirements (dependency versions)"),
    ("**/go.sum", "Go dependency checksums (dependency versions)"),
    ("**/go.work", "Go workspace"),
    ("**/go.work.sum", "Go workspace checksums"),
    ("**/vendor/modules.txt", "vendored Go module versions"),
];

/// `[history]`, resolved.
#[derive(Debug, Clone)]
pub(crate) struct History {
    pub record: bool,
    pub url: Option<String>,
    pub signals: bool,
    pub window_days: u64,
}

/// `[ledger]`, resolved.
#[derive(Debug, Clone)]
pub(crate) struct Ledger {
    pub enabled: bool,
    pub trust: rules::Trust,
    /// Variables every fingerprint holds beside the built-in list (`[ledger] env`).
    pub env: Vec<String>,
}

/// Changes that are the whole suite: glob, reason, and whether it is a built-in default.
pub(crate) type WholeSuite = Vec<(GlobMatcher, String, bool)>;

pub(crate) struct Config {
    /// A hash of the text the settings were parsed from: what a kept graph was built under.
    pub digest: u64,
    pub always_run: Vec<AlwaysRun>,
    pub known_flaky: Matcher,
    pub depends: Vec<DependsRule>,
    pub inert: Matcher,
    /// Changes that are the whole suite: glob, reason, and whether it is a built-in default.
    pub whole_suite: WholeSuite,
    /// The same globs as one set: which files of a tree are whole-suite inputs, in one pass.
    pub whole_suite_any: globset::GlobSet,
    pub named_full: NamedFullMode,
    pub max_depth: Option<u32>,
    /// The fraction of CI runs that audit: the whole suite in shadow mode (0: none).
    pub audit_rate: f64,
    pub fallback: Fallback,
    pub runner: Option<Vec<String>>,
    pub env: BTreeMap<String, String>,
    pub python_roots: Option<Vec<String>>,
    /// `[python] framework`: what runs the Python tests, when set.
    pub python_framework: Option<crate::lang::python::framework::Kind>,
    /// The line of `[python] roots`, for errors about what it names.
    pub python_roots_line: usize,
    /// Extra `go test` flags.
    pub go_flags: Vec<String>,
    /// `[python] allow_args` and `[go] allow_args`: runner options accepted after `--` beyond
    /// gate's allow-list.
    pub python_allow_args: Vec<crate::lang::args::Allowed>,
    pub go_allow_args: Vec<crate::lang::args::Allowed>,
    /// `[js] allow_args`: Vitest and Jest options accepted after `--` beyond gate's allow-list.
    pub js_allow_args: Vec<crate::lang::args::Allowed>,
    /// `[[js.stated]]`: values of configuration gate cannot read as literals, by language.
    pub stated: crate::lang::Stated,
    pub history: History,
    pub ledger: Ledger,
    pub base_branch: Option<String>,
    /// In order; always holds the affected-tests step (last unless placed).
    pub steps: Vec<Step>,
    pub references: Vec<Reference>,
    pub loads: Vec<Loads>,
}

impl Config {
    /// The `known_flaky` pattern `file` matches, as triage names it.
    pub(crate) fn known_flaky_of(&self, file: &str) -> Option<String> {
        self.known_flaky
            .is_match(file)
            .then(|| self.known_flaky.text.clone())
    }

    pub(crate) fn defaults() -> Self {
        Self::parse(None, "").expect("the built-in defaults are valid")
    }

    /// Parses `.gate.toml`'s text; `file` names it in errors.
    pub(crate) fn parse(file: Option<&str>, text: &str) -> Result<Self> {
        parse::parse(file, text)
    }

    /// The reason a change's blast radius is the whole suite, if it is one of those.
    /// Whether a change to `path` is the whole suite (`whole_suite_reason` is some).
    pub(crate) fn is_whole_suite(&self, path: &str) -> bool {
        self.whole_suite_any.is_match(path)
    }

    pub(crate) fn whole_suite_reason(&self, path: &str) -> Option<&str> {
        self.whole_suite_match(path).map(|(r, _)| r)
    }

    /// The reason a change to `path` is the whole suite, and whether only a built-in default
    /// says so (the team's own `[[whole_suite]]` entries are never second-guessed).
    pub(crate) fn whole_suite_match(&self, path: &str) -> Option<(&str, bool)> {
        let mut found = self.whole_suite.iter().filter(|(g, _, _)| g.is_match(path));
        let first = found.next()?;
        let builtin = first.2 && found.all(|(_, _, b)| *b);
        Some((first.1.as_str(), builtin))
    }
}

/// `.gate.toml` of a commit (through symlinks inside its tree), or the defaults when it has
/// none.
pub(crate) fn at_commit(repo: &git2::Repository, commit: git2::Oid) -> Result<Config> {
    Config::parse(Some(FILE), &text_at(repo, commit)?)
}

/// The text of `.gate.toml` in a commit (through symlinks inside its tree), `""` when it has
/// none: what `digest` hashes, so two commits' configurations compare without parsing either.
pub(crate) fn text_at(repo: &git2::Repository, commit: git2::Oid) -> Result<String> {
    use crate::repo::snapshot::{LinkTarget, link_target};
    let tree = repo
        .find_commit(commit)
        .and_then(|c| c.tree())
        .map_err(|e| Error::git(format!("cannot read the tree of {commit}"), e))?;
    let mut path = FILE.to_string();
    for _ in 0..40 {
        let Ok(entry) = tree.get_path(std::path::Path::new(&path)) else {
            return Ok(String::new());
        };
        let blob = repo
            .find_blob(entry.id())
            .map_err(|e| Error::git(format!("{path}: cannot read it in {commit}"), e))?;
        let text = String::from_utf8_lossy(blob.content()).into_owned();
        if entry.filemode() & 0o170000 != 0o120000 {
            return Ok(text);
        }
        match link_target(&path, &text) {
            LinkTarget::Inside(next) => path = next,
            LinkTarget::Outside => break,
        }
    }
    Err(Error::config(
        FILE,
        format!("in {commit} it is a symlink that leads out of the tree or in a circle"),
    ))
}

/// What `Config::digest` is for a configuration's text.
pub(crate) fn digest(text: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(text.as_bytes())
}

/// gate's glob dialect: `*` stops at `/`, `**` crosses directories.
pub(crate) fn glob(pattern: &str) -> std::result::Result<globset::Glob, globset::Error> {
    GlobBuilder::new(pattern).literal_separator(true).build()
}

/// The pattern that matches `path` and nothing else: every character the dialect (or a
/// leading `!`, an exclusion in a list) would read as more than itself escaped — for rules
/// gate writes for a user to paste.
pub(crate) fn glob_literal(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        if matches!(c, '\\' | '*' | '?' | '[' | ']' | '{' | '}' | '!') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// An import root as written (`src`, `./lib/`, `.`) as a repository-relative folder; an
/// absolute path or one leaving the repository would make every import resolve to nothing.
fn root(raw: &str) -> std::result::Result<String, &'static str> {
    if raw.starts_with('/') {
        return Err("is an absolute path: roots are folders of the repository");
    }
    let path = crate::path::normalize(raw);
    if path == ".." || path.starts_with("../") {
        return Err("leaves the repository: roots are folders of the repository");
    }
    Ok(path)
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

#[cfg(test)]
mod tests {
    /// A path written as a pattern matches itself and nothing else, whatever it holds.
    #[test]
    fn a_literal_pattern_matches_its_path_alone() {
        for path in [
            "./ws/shop/cart",
            "tests/test_[a].py",
            "tests/test_*.py",
            "!weird/{x,y}?.py",
            "back\\slash.py",
        ] {
            let m = super::glob(&super::glob_literal(path))
                .unwrap()
                .compile_matcher();
            assert!(m.is_match(path), "{path}");
            for other in [
                "tests/test_a.py",
                "tests/test_b.py",
                "weird/x1.py",
                "./ws/shop/cartx",
            ] {
                assert!(!m.is_match(other), "{path} matched {other}");
            }
        }
    }

    /// The one-pass set says what the ordered list says, for the defaults and a team's own.
    #[test]
    fn the_whole_suite_set_agrees_with_its_globs() {
        let with_own = super::Config::parse(
            None,
            "[[whole_suite]]\non = [\"ci/**\", \"tools/*.sh\"]\nreason = \"CI\"\n",
        )
        .unwrap();
        let none = super::Config::parse(None, "whole_suite_defaults = false\n").unwrap();
        let paths = [
            "conftest.py",
            "tests/conftest.py",
            "pyproject.toml",
            "sub/pyproject.toml",
            "req/requirements-dev.txt",
            "poetry.lock",
            "a/b/Cargo.lock",
            "go.mod",
            "svc/go.sum",
            "ci/deploy.yml",
            "tools/run.sh",
            "tools/sub/run.sh",
            "src/shop/money.py",
            ".python-version",
        ];
        for config in [&with_own, &none, &super::Config::defaults()] {
            for p in paths {
                assert_eq!(
                    config.is_whole_suite(p),
                    config.whole_suite_reason(p).is_some(),
                    "{p}"
                );
            }
        }
        assert!(with_own.is_whole_suite("ci/deploy.yml"));
        assert!(!none.is_whole_suite("pyproject.toml"));
    }

    use super::rules::AFFECTED_TESTS;
    use super::*;

    #[test]
    fn unknown_key_names_key_and_line() {
        let e = Config::parse(Some(".gate.toml"), "always_run = []\nmax_dpth = 3\n")
            .err()
            .unwrap();
        let msg = e.to_string();
        assert!(msg.starts_with(".gate.toml: line 2:"), "{msg}");
        assert!(msg.contains("max_dpth"), "{msg}");
        assert!(!msg.contains('\n'), "{msg}");
    }

    /// `[[js.stated]]`: each value converted as a JSON configuration would hold it; each
    /// mistake one error naming the line of the part that is wrong.
    #[test]
    fn stated_values_are_converted_and_checked_by_line() {
        let c = Config::parse(
            None,
            "[[js.stated]]\nfile = \"./web/vitest.config.ts\"\nkey = \"test\"\nvalue = { include = [\"a/**\"], retry = 2, bail = 1.5, globals = true }\n",
        )
        .unwrap();
        let stated = c.stated.of("js");
        assert_eq!(stated[0].file, "web/vitest.config.ts");
        assert_eq!(stated[0].line, 2);
        assert_eq!(
            stated[0].value,
            serde_json::json!({"include": ["a/**"], "retry": 2, "bail": 1.5, "globals": true})
        );
        let entry = |file: &str, key: &str, value: &str| {
            format!("[[js.stated]]\nfile = \"{file}\"\nkey = \"{key}\"\nvalue = {value}\n")
        };
        for (bad, says) in [
            (
                entry("vitest.config.ts", "test.include", "3"),
                "line 4: `js.stated`: `test.include` takes a string or a list of strings, not 3",
            ),
            (
                entry("vitest.config.ts", "test.include", "1979-05-27"),
                "line 4: `js.stated`: `1979-05-27` is a date",
            ),
            (
                entry("vitest.config.ts", "test.pool", "\"forks\""),
                "line 3: `js.stated`: gate reads no `test.pool`",
            ),
            (
                entry("../vitest.config.ts", "test.include", "[]"),
                "line 2: `js.stated`: file `../vitest.config.ts` is not a path of the repository",
            ),
            (
                entry("src/a.ts", "test.include", "[]"),
                "line 2: `js.stated`: `src/a.ts` is no configuration gate reads",
            ),
            (
                entry("vitest.config.ts", "test.include", "[]")
                    + &entry("vitest.config.ts", "test.include", "[]"),
                "line 7: `js.stated`: `test.include` of vitest.config.ts is stated twice",
            ),
            (
                "[[js.stated]]\nfile = \"vitest.config.ts\"\nkey = \"test.include\"\n".into(),
                "missing field `value`",
            ),
        ] {
            let e = Config::parse(Some(".gate.toml"), &bad)
                .err()
                .unwrap()
                .to_string();
            assert!(e.starts_with(".gate.toml: "), "{e}");
            assert!(e.contains(says), "{bad:?}: {e}");
            assert_eq!(e.lines().count(), 1, "{e}");
        }
    }

    #[test]
    fn bad_glob_names_key_and_line() {
        let e = Config::parse(
            Some(".gate.toml"),
            "\n[[depends]]\ntests = \"tests/**\"\non = [\"src/[a\"]\n",
        )
        .err()
        .unwrap();
        assert_eq!(e.to_string().lines().count(), 1);
        assert!(
            e.to_string()
                .contains("line 4: `depends.on`: bad glob `src/[a`"),
            "{e}"
        );
    }

    #[test]
    fn depends_excludes_and_defaults() {
        let c = Config::parse(
            None,
            "[[depends]]\ntests = \"tests/cli/**\"\non = [\"**/*.sh\", \"!scripts/skip.sh\"]\n",
        )
        .unwrap();
        let on = &c.depends[0].on;
        assert!(on.is_match("scripts/run.sh") && !on.is_match("scripts/skip.sh"));
        assert!(c.inert.is_match("README.md") && c.inert.is_match("docs/x/y.txt"));
        assert_eq!(
            c.whole_suite_reason("conftest.py"),
            Some("root conftest.py applies to every test")
        );
        assert_eq!(c.whole_suite_reason("tests/conftest.py"), None);
        assert!(c.whole_suite_reason("requirements-dev.txt").is_some());
    }

    #[test]
    fn steps_keep_order_and_the_builtin_goes_last_unless_placed() {
        let names = |c: &Config| c.steps.iter().map(|s| s.name.clone()).collect::<Vec<_>>();
        let c = Config::parse(None, "[[step]]\nname = \"lint\"\nrun = \"ruff check\"\n").unwrap();
        assert_eq!(names(&c), ["lint", AFFECTED_TESTS]);
        let c = Config::parse(
            None,
            "[[step]]\nname = \"affected-tests\"\n[[step]]\nname = \"docs\"\nrun = [\"make\", \"docs\"]\nwhen = \"verify\"\non = \"docs/**\"\n",
        )
        .unwrap();
        assert_eq!(names(&c), [AFFECTED_TESTS, "docs"]);
        assert_eq!(c.steps[1].when, When::Verify);
        assert!(c.steps[1].on.as_ref().unwrap().is_match("docs/a.md"));
        for (bad, says) in [
            ("[[step]]\nname = \"x\"\n", "line 2: step `x` has no `run`"),
            (
                "[[step]]\nname = \"affected-tests\"\nrun = \"pytest\"\n",
                "takes no `run`",
            ),
            (
                "[[step]]\nname = \"x\"\nrun = \"a\"\n[[step]]\nname = \"x\"\nrun = \"b\"\n",
                "line 5: step `x` is defined twice",
            ),
            (
                "[[step]]\nname = \"x\"\nrun = \"a\"\nwhen = \"sometimes\"\n",
                "line 4",
            ),
        ] {
            let e = Config::parse(Some(".gate.toml"), bad)
                .err()
                .unwrap()
                .to_string();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
    }
}
