//! `.gate.toml` → resolved settings: compiled globs, the runner's argv, defaults filled in.
//! The file is read from the tree being gated, so a pushed config governs its own push.
//! Every mistake (unknown key, bad glob, wrong type) is one error naming the key and line.

use crate::analyze::pytest_ini::one_line;
use crate::error::{Error, Result};
use globset::{GlobBuilder, GlobMatcher, GlobSet, GlobSetBuilder};
use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

pub const FILE: &str = ".gate.toml";

/// Non-code files that cannot break a test unless something references them.
pub const DEFAULT_INERT: &[&str] = &[
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
];

/// Changes whose honest blast radius is the whole suite, with the reason recorded.
pub const DEFAULT_WHOLE_SUITE: &[(&str, &str)] = &[
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
    (".python-version", "interpreter version"),
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

/// The file as written. Doc comments here are the configuration reference.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    /// Tests that run with every non-inert run: test file globs or pytest ids
    /// (`tests/test_health.py::test_up`, `tests.test_health::*`).
    #[serde(default)]
    always_run: Vec<Spanned<String>>,
    /// Test file globs whose failures are known flaky; marked in reports.
    #[serde(default)]
    known_flaky: Vec<Spanned<String>>,
    /// Dependencies no import graph can see: when a file matching `on` changes, run `tests`.
    #[serde(default)]
    depends: Vec<RawDepends>,
    /// Extra globs of non-code files that are inert when nothing references them.
    #[serde(default)]
    inert: Vec<Spanned<String>>,
    /// `false` drops the built-in inert globs.
    #[serde(default = "yes")]
    inert_defaults: bool,
    /// Extra changes whose blast radius is the whole suite: `on` globs and a `reason`.
    #[serde(default)]
    whole_suite: Vec<RawWholeSuite>,
    /// `false` drops the built-in whole-suite globs.
    #[serde(default = "yes")]
    whole_suite_defaults: bool,
    /// On a `named_full` verdict: `"subset"` runs the resolved subset, `"full"` the whole suite.
    #[serde(default)]
    named_full: NamedFullMode,
    /// Caps how many import hops the selection walks back; the report names what the cap cut.
    max_depth: Option<u32>,
    /// A change nothing reaches: `"refuse"` (the default) or `"full"` (named_full, whole suite).
    #[serde(default)]
    fallback: Fallback,
    /// The runner's command, as an argv list or a string split on spaces.
    runner: Option<Spanned<Argv>>,
    /// Environment for the runner (e.g. `PYTHONPATH`).
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    python: RawPython,
    #[serde(default)]
    go: RawGo,
    /// The branch a new branch is compared with when pushed, after the remote's own HEAD.
    base_branch: Option<String>,
    /// Ordered checks run by the pre-push hook and `gate verify` around the affected tests.
    #[serde(default)]
    step: Vec<RawStep>,
    /// Extractors for references no built-in analysis knows: a regex with a `path` group.
    #[serde(default)]
    reference: Vec<RawReference>,
    /// What a dynamic import with no literal part (`__import__(name)`) in `file` may load.
    #[serde(default)]
    loads: Vec<RawLoads>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLoads {
    file: Spanned<OneOrMany>,
    modules: Spanned<OneOrMany>,
}

/// `[[loads]]`: the files a run-time-named import in `file` can load, declared by the team.
pub struct Loads {
    pub index: usize,
    pub file: Matcher,
    pub modules: Matcher,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReference {
    files: Spanned<OneOrMany>,
    pattern: Spanned<String>,
    #[serde(default)]
    relative_to: RelativeTo,
}

#[derive(Deserialize, Default, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
pub enum RelativeTo {
    #[default]
    File,
    Root,
}

/// A `[[reference]]` extractor: in files matching `files`, every match of `pattern` names a
/// path (its `path` group).
pub struct Reference {
    pub index: usize,
    pub files: Matcher,
    pub pattern: regex::Regex,
    pub relative_to: RelativeTo,
}

fn yes() -> bool {
    true
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDepends {
    tests: Spanned<OneOrMany>,
    on: Spanned<OneOrMany>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWholeSuite {
    on: Spanned<OneOrMany>,
    reason: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    name: Spanned<String>,
    /// An argv list, or a string run by `sh -c`.
    run: Option<Spanned<Argv>>,
    on: Option<Spanned<OneOrMany>>,
    #[serde(default)]
    when: When,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawGo {
    /// Extra `go test` flags (`["-race", "-count=1"]`).
    #[serde(default)]
    flags: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawPython {
    /// Import roots (directories holding top-level packages); detected when absent.
    roots: Option<Spanned<Vec<String>>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

/// The globs of a `tests`/`on` value, each carrying the value's span for error lines.
fn spread(value: Spanned<OneOrMany>) -> Vec<Spanned<String>> {
    let span = value.span();
    let items = match value.into_inner() {
        OneOrMany::One(s) => vec![s],
        OneOrMany::Many(v) => v,
    };
    items
        .into_iter()
        .map(|s| Spanned::new(span.clone(), s))
        .collect()
}

#[derive(Deserialize, Clone)]
#[serde(untagged)]
enum Argv {
    Line(String),
    List(Vec<String>),
}

#[derive(Deserialize, Default, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
pub enum NamedFullMode {
    #[default]
    Subset,
    Full,
}

/// Where a step runs: in the pre-push hook, in `gate verify`, or both.
#[derive(Deserialize, Default, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "kebab-case")]
pub enum When {
    PrePush,
    Verify,
    #[default]
    Always,
}

/// The name of the built-in step that selects and runs the affected tests.
pub const AFFECTED_TESTS: &str = "affected-tests";

pub enum StepRun {
    /// The built-in step: the affected tests, with the project's runner.
    AffectedTests,
    Argv(Vec<String>),
    /// Run by `sh -c`.
    Shell(String),
}

pub struct Step {
    pub name: String,
    pub run: StepRun,
    /// Run only when a changed path matches.
    pub on: Option<Matcher>,
    pub when: When,
}

impl Step {
    /// The built-in step, unfiltered, in every context.
    pub fn affected_tests() -> Step {
        Step {
            name: AFFECTED_TESTS.into(),
            run: StepRun::AffectedTests,
            on: None,
            when: When::Always,
        }
    }

    /// The command to run; `None` for the built-in affected-tests step.
    pub fn argv(&self) -> Option<Vec<String>> {
        match &self.run {
            StepRun::AffectedTests => None,
            StepRun::Argv(argv) => Some(argv.clone()),
            StepRun::Shell(line) => Some(vec!["sh".into(), "-c".into(), line.clone()]),
        }
    }
}

#[derive(Deserialize, Default, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
pub enum Fallback {
    #[default]
    Refuse,
    Full,
}

/// Globs with `!` excludes, as in `on = ["**/*.go", "!**/*_test.go"]`.
pub struct Matcher {
    include: GlobSet,
    exclude: GlobSet,
    pub text: String,
}

impl Matcher {
    pub fn is_match(&self, path: &str) -> bool {
        self.include.is_match(path) && !self.exclude.is_match(path)
    }
}

pub struct DependsRule {
    pub index: usize,
    pub tests: Matcher,
    pub on: Matcher,
}

pub struct Config {
    /// Where the settings came from: `.gate.toml`, or built-in defaults.
    pub source: Option<String>,
    /// A hash of the text the settings were parsed from: what a kept graph was built under.
    pub digest: u64,
    pub always_run: Vec<String>,
    pub known_flaky: Matcher,
    pub depends: Vec<DependsRule>,
    pub inert: Matcher,
    pub whole_suite: Vec<(GlobMatcher, String)>,
    pub named_full: NamedFullMode,
    pub max_depth: Option<u32>,
    pub fallback: Fallback,
    pub runner: Option<Vec<String>>,
    pub env: BTreeMap<String, String>,
    pub python_roots: Option<Vec<String>>,
    /// The line of `[python] roots`, for errors about what it names.
    pub python_roots_line: usize,
    /// Extra `go test` flags.
    pub go_flags: Vec<String>,
    pub base_branch: Option<String>,
    /// In order; always holds the affected-tests step (last unless placed).
    pub steps: Vec<Step>,
    pub references: Vec<Reference>,
    pub loads: Vec<Loads>,
}

impl Config {
    pub fn defaults() -> Self {
        Self::parse(None, "").expect("the built-in defaults are valid")
    }

    /// Parses `.gate.toml`'s text; `file` names it in errors.
    pub fn parse(file: Option<&str>, text: &str) -> Result<Self> {
        let path = file.unwrap_or(FILE);
        let err = |message: String| Error::Config {
            path: path.into(),
            message,
        };
        let raw: RawConfig = toml::from_str(text).map_err(|e| {
            let at = e
                .span()
                .map(|s| format!("line {}: ", line_of(text, s.start)))
                .unwrap_or_default();
            err(format!("{at}{}", one_line(e.message())))
        })?;
        let globs = |key: &str, items: Vec<Spanned<String>>, extra: &[&str]| -> Result<Matcher> {
            let mut include = GlobSetBuilder::new();
            let mut exclude = GlobSetBuilder::new();
            let mut text_parts: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
            for item in extra
                .iter()
                .map(|s| (s.to_string(), 0))
                .chain(items.into_iter().map(|s| {
                    let line = line_of(text, s.span().start);
                    (s.into_inner(), line)
                }))
            {
                let (pattern, line) = item;
                let (target, pat) = match pattern.strip_prefix('!') {
                    Some(rest) => (&mut exclude, rest.to_string()),
                    None => (&mut include, pattern.clone()),
                };
                target.add(glob(&pat).map_err(|e| {
                    err(format!("line {line}: `{key}`: bad glob `{pattern}`: {e}"))
                })?);
                if line > 0 {
                    text_parts.push(pattern);
                }
            }
            let build = |b: GlobSetBuilder| b.build().map_err(|e| err(format!("`{key}`: {e}")));
            Ok(Matcher {
                include: build(include)?,
                exclude: build(exclude)?,
                text: text_parts.join(", "),
            })
        };
        let always_run: Vec<String> = raw.always_run.iter().map(|s| s.get_ref().clone()).collect();
        for entry in &raw.always_run {
            let pattern = entry.get_ref().split("::").next().unwrap_or_default();
            if !pattern.contains('/') && pattern.contains('.') && !pattern.ends_with(".py") {
                continue; // a dotted module id, resolved against the tree later
            }
            glob(pattern).map_err(|e| {
                err(format!(
                    "line {}: `always_run`: bad glob `{}`: {e}",
                    line_of(text, entry.span().start),
                    entry.get_ref()
                ))
            })?;
        }
        let mut depends = Vec::new();
        for (index, rule) in raw.depends.into_iter().enumerate() {
            depends.push(DependsRule {
                index: index + 1,
                tests: globs("depends.tests", spread(rule.tests), &[])?,
                on: globs("depends.on", spread(rule.on), &[])?,
            });
        }
        let mut whole_suite = Vec::new();
        if raw.whole_suite_defaults {
            for (pattern, reason) in DEFAULT_WHOLE_SUITE {
                whole_suite.push((
                    glob(pattern).expect("built-in glob").compile_matcher(),
                    reason.to_string(),
                ));
            }
        }
        for entry in raw.whole_suite {
            for on in spread(entry.on) {
                let line = line_of(text, on.span().start);
                let g = glob(on.get_ref()).map_err(|e| {
                    err(format!(
                        "line {line}: `whole_suite.on`: bad glob `{}`: {e}",
                        on.get_ref()
                    ))
                })?;
                whole_suite.push((g.compile_matcher(), entry.reason.clone()));
            }
        }
        let runner = match raw.runner {
            None => None,
            Some(spanned) => {
                let line = line_of(text, spanned.span().start);
                let argv = match spanned.into_inner() {
                    Argv::Line(s) => s.split_whitespace().map(str::to_string).collect(),
                    Argv::List(v) => v,
                };
                if argv.is_empty() {
                    return Err(err(format!("line {line}: `runner` is empty")));
                }
                Some(argv)
            }
        };
        let mut steps: Vec<Step> = Vec::new();
        for raw_step in raw.step {
            let line = line_of(text, raw_step.name.span().start);
            let name = raw_step.name.into_inner();
            if name.trim().is_empty() {
                return Err(err(format!("line {line}: `step.name` is empty")));
            }
            if steps.iter().any(|s| s.name == name) {
                return Err(err(format!("line {line}: step `{name}` is defined twice")));
            }
            let run = match (
                name == AFFECTED_TESTS,
                raw_step.run.map(Spanned::into_inner),
            ) {
                (true, None) => StepRun::AffectedTests,
                (true, Some(_)) => {
                    return Err(err(format!(
                        "line {line}: step `{AFFECTED_TESTS}` is built in and takes no `run`"
                    )));
                }
                (false, None) => {
                    return Err(err(format!("line {line}: step `{name}` has no `run`")));
                }
                (false, Some(Argv::List(argv))) if !argv.is_empty() => StepRun::Argv(argv),
                (false, Some(Argv::Line(line_text))) if !line_text.trim().is_empty() => {
                    StepRun::Shell(line_text)
                }
                (false, Some(_)) => {
                    return Err(err(format!(
                        "line {line}: step `{name}` has an empty `run`"
                    )));
                }
            };
            let on = match raw_step.on {
                Some(on) => Some(globs("step.on", spread(on), &[])?),
                None => None,
            };
            steps.push(Step {
                name,
                run,
                on,
                when: raw_step.when,
            });
        }
        let mut references = Vec::new();
        for (i, raw_ref) in raw.reference.into_iter().enumerate() {
            let line = line_of(text, raw_ref.pattern.span().start);
            let pattern = regex::Regex::new(raw_ref.pattern.get_ref()).map_err(|e| {
                err(format!(
                    "line {line}: `reference.pattern`: {}",
                    one_line(&e.to_string())
                ))
            })?;
            if !pattern.capture_names().any(|n| n == Some("path")) {
                return Err(err(format!(
                    "line {line}: `reference.pattern` has no `(?P<path>…)` group naming the path"
                )));
            }
            references.push(Reference {
                index: i + 1,
                files: globs("reference.files", spread(raw_ref.files), &[])?,
                pattern,
                relative_to: raw_ref.relative_to,
            });
        }
        let mut loads = Vec::new();
        for (i, rule) in raw.loads.into_iter().enumerate() {
            loads.push(Loads {
                index: i + 1,
                file: globs("loads.file", spread(rule.file), &[])?,
                modules: globs("loads.modules", spread(rule.modules), &[])?,
            });
        }
        if !steps.iter().any(|s| s.name == AFFECTED_TESTS) {
            steps.push(Step::affected_tests());
        }
        Ok(Config {
            source: file.map(str::to_string),
            digest: xxhash_rust::xxh3::xxh3_64(text.as_bytes()),
            always_run,
            known_flaky: globs("known_flaky", raw.known_flaky, &[])?,
            depends,
            inert: globs(
                "inert",
                raw.inert,
                if raw.inert_defaults {
                    DEFAULT_INERT
                } else {
                    &[]
                },
            )?,
            whole_suite,
            named_full: raw.named_full,
            max_depth: raw.max_depth,
            fallback: raw.fallback,
            runner,
            env: raw.env,
            python_roots_line: raw
                .python
                .roots
                .as_ref()
                .map_or(0, |r| line_of(text, r.span().start)),
            python_roots: raw
                .python
                .roots
                .map(|roots| {
                    let line = line_of(text, roots.span().start);
                    roots
                        .into_inner()
                        .into_iter()
                        .map(|r| {
                            root(&r).map_err(|why| {
                                err(format!("line {line}: `python.roots`: `{r}` {why}"))
                            })
                        })
                        .collect::<Result<Vec<_>>>()
                })
                .transpose()?,
            go_flags: raw.go.flags,
            base_branch: raw.base_branch,
            steps,
            references,
            loads,
        })
    }

    /// The reason a change's blast radius is the whole suite, if it is one of those.
    pub fn whole_suite_reason(&self, path: &str) -> Option<&str> {
        self.whole_suite
            .iter()
            .find(|(g, _)| g.is_match(path))
            .map(|(_, r)| r.as_str())
    }
}

/// `.gate.toml` of a commit (through symlinks inside its tree), or the defaults when it has
/// none.
pub fn at_commit(repo: &git2::Repository, commit: git2::Oid) -> Result<Config> {
    use crate::repo::snapshot::{LinkTarget, link_target};
    let tree = repo
        .find_commit(commit)
        .and_then(|c| c.tree())
        .map_err(|e| Error::git(format!("cannot read the tree of {commit}"), e))?;
    let mut path = FILE.to_string();
    for _ in 0..40 {
        let Ok(entry) = tree.get_path(std::path::Path::new(&path)) else {
            return Ok(Config::defaults());
        };
        let blob = repo
            .find_blob(entry.id())
            .map_err(|e| Error::git(format!("{path}: cannot read it in {commit}"), e))?;
        let text = String::from_utf8_lossy(blob.content()).into_owned();
        if entry.filemode() & 0o170000 != 0o120000 {
            return Config::parse(Some(FILE), &text);
        }
        match link_target(&path, &text) {
            LinkTarget::Inside(next) => path = next,
            LinkTarget::Outside => break,
        }
    }
    Err(Error::Config {
        path: FILE.into(),
        message: format!("in {commit} it is a symlink that leads out of the tree or in a circle"),
    })
}

/// gate's glob dialect: `*` stops at `/`, `**` crosses directories.
pub fn glob(pattern: &str) -> std::result::Result<globset::Glob, globset::Error> {
    GlobBuilder::new(pattern).literal_separator(true).build()
}

/// An import root as written (`src`, `./lib/`, `.`) as a repository-relative folder; an
/// absolute path or one leaving the repository would make every import resolve to nothing.
fn root(raw: &str) -> std::result::Result<String, &'static str> {
    if raw.starts_with('/') {
        return Err("is an absolute path: roots are folders of the repository");
    }
    let path = crate::graph::normalize(raw);
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
