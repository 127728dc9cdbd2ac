//! Test discovery as pytest does it: the first of `pytest.ini`, `pyproject.toml`
//! (`[tool.pytest.ini_options]`), `tox.ini` (`[pytest]`) and `setup.cfg` (`[tool:pytest]`) at the
//! repository root gives `python_files` and `testpaths`; without one, pytest's defaults apply.

use crate::error::{Error, Result};
use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

pub(crate) struct TestDiscovery {
    /// The file the settings came from, if any.
    pub source: Option<String>,
    python_files: Fnmatch,
    /// `python_files` is pytest's default (`test_*.py *_test.py`): names are checked directly.
    default_names: bool,
    testpaths: Option<GlobSet>,
    /// `NORECURSE`, compiled once.
    norecurse: GlobSet,
    /// `pythonpath`: directories pytest puts on `sys.path`, so import roots too.
    pub pythonpath: Vec<String>,
    /// pytest-bdd's `bdd_features_base_dir`: where feature paths are relative to.
    pub bdd_features_base_dir: Option<String>,
    /// Plugins the project registers itself (`-p NAME` in `addopts`, `pytest11` entry points):
    /// module name → where it is registered. Each applies to every test, as a root conftest does.
    pub plugins: Vec<(String, String)>,
    /// A configuration file pytest cannot read (file, line, the parser's message): discovery
    /// fell back to pytest's defaults, which pytest itself would not do — a refusal of the run.
    pub broken: Option<String>,
    /// The doctest options of `addopts`: with `--doctest-modules` every module pytest walks to
    /// is imported and its docstring examples run; `--doctest-glob` names the text files whose
    /// examples run (pytest's default, `test*.txt`, without one).
    pub doctests: Doctests,
}

/// Which files pytest's doctest plugin collects, from the options it is given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Doctests {
    pub modules: bool,
    /// `--doctest-glob` patterns; pytest's default when none is given.
    pub globs: Vec<String>,
}

impl Default for Doctests {
    fn default() -> Self {
        Doctests {
            modules: false,
            globs: vec!["test*.txt".to_string()],
        }
    }
}

impl Doctests {
    /// The options among `words` (`addopts`, or the runner's argv) added to these.
    pub(crate) fn read<'w>(&mut self, words: impl IntoIterator<Item = &'w str>) {
        let mut words = words.into_iter();
        let mut given = Vec::new();
        while let Some(word) = words.next() {
            if word == "--doctest-modules" {
                self.modules = true;
            } else if word == "--doctest-glob" {
                given.extend(words.next().map(str::to_string));
            } else if let Some(glob) = word.strip_prefix("--doctest-glob=") {
                given.push(glob.to_string());
            }
        }
        if !given.is_empty() {
            if self.globs == Doctests::default().globs {
                self.globs.clear();
            }
            self.globs.extend(given);
        }
    }

    /// The files these options make tests, compiled once for a walk of the tree.
    pub(crate) fn files(&self) -> DoctestFiles {
        DoctestFiles {
            modules: self.modules,
            globs: Fnmatch::new(self.globs.iter().map(String::as_str)),
        }
    }
}

pub(crate) struct DoctestFiles {
    modules: bool,
    globs: Fnmatch,
}

impl DoctestFiles {
    /// Whether pytest's doctest plugin collects `path` as a test file (where pytest walks):
    /// any module but `setup.py`, `__main__.py` and a conftest (whose own changes select
    /// every test below it) under `--doctest-modules`; any other file a glob matches.
    pub(crate) fn collects(&self, path: &str) -> bool {
        let name = crate::path::file_name(path);
        if path.ends_with(".py") {
            return self.modules && !matches!(name, "setup.py" | "__main__.py" | "conftest.py");
        }
        self.globs.is_match(path)
    }
}

/// Patterns matched as pytest's `fnmatch_ex` matches them (`python_files`, `--doctest-glob`):
/// a pattern without a `/` matches the file's name; one with a `/` matches the end of its
/// absolute path after any folders (`*/` + pattern), and fnmatch's `*` crosses folders —
/// `docs/*.md` matches `a/docs/b/c.md`. fnmatch has no `{a,b}` (braces are literal) and reads
/// an unclosed `[` as itself. An absolute pattern names folders outside the tree's paths: its
/// last part is matched against the name, which can only widen. Not known here: the root's
/// own folder names, which a pattern may spell out (`myrepo/docs/*.md`).
#[derive(Debug, Clone)]
pub(crate) struct Fnmatch {
    names: GlobSet,
    paths: GlobSet,
}

impl Fnmatch {
    pub(crate) fn new<'p>(patterns: impl IntoIterator<Item = &'p str>) -> Fnmatch {
        let (mut names, mut paths) = (GlobSetBuilder::new(), GlobSetBuilder::new());
        for pattern in patterns {
            let pattern = match pattern.strip_prefix('/') {
                Some(absolute) => crate::path::file_name(absolute),
                None => pattern,
            };
            let (set, glob) = match pattern.contains('/') {
                true => (&mut paths, format!("*/{}", glob_of(pattern, true))),
                false => (&mut names, glob_of(pattern, true)),
            };
            let compile = |glob: &str| {
                GlobBuilder::new(glob)
                    .literal_separator(false)
                    .backslash_escape(false)
                    .build()
            };
            // A class globset rejects (a reversed range) stands for any one character: wider.
            set.add(compile(&glob).unwrap_or_else(|_| {
                compile(&glob_of(&glob, false)).expect("a pattern without classes compiles")
            }));
        }
        Fnmatch {
            names: names.build().expect("translated patterns compile"),
            paths: paths.build().expect("translated patterns compile"),
        }
    }

    pub(crate) fn is_match(&self, path: &str) -> bool {
        self.names.is_match(crate::path::file_name(path))
            || (!self.paths.is_empty() && self.paths.is_match(format!("/{path}")))
    }
}

/// An fnmatch pattern as a globset pattern, following `fnmatch.translate`: `*`, `?` and a
/// closed `[...]` class (`!` negates, a `]` first is a member) keep their meaning; every other
/// character, an unclosed `[` included, is itself. Without `classes`, a class is `?`.
fn glob_of(pattern: &str, classes: bool) -> String {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        match c {
            '*' | '?' => out.push(c),
            '[' => {
                let mut j = i;
                if chars.get(j) == Some(&'!') {
                    j += 1;
                }
                if chars.get(j) == Some(&']') {
                    j += 1;
                }
                while j < chars.len() && chars[j] != ']' {
                    j += 1;
                }
                if j >= chars.len() {
                    out.push_str("[[]");
                    continue;
                }
                if !classes {
                    out.push('?');
                    i = j + 1;
                    continue;
                }
                let (negate, members) = match chars[i] {
                    '!' => (true, &chars[i + 1..j]),
                    _ => (false, &chars[i..j]),
                };
                out.push('[');
                if negate {
                    out.push('!');
                }
                out.extend(members);
                out.push(']');
                i = j + 1;
            }
            '{' | '}' | ']' => {
                out.push('[');
                out.push(c);
                out.push(']');
            }
            c => out.push(c),
        }
    }
    out
}

/// pytest's default `python_files`.
const DEFAULT_NAMES: &str = "test_*.py *_test.py";

/// Directories pytest never descends into by default (`norecursedirs`).
const NORECURSE: &[&str] = &[
    ".*",
    "*.egg",
    "_darcs",
    "build",
    "CVS",
    "dist",
    "node_modules",
    "venv",
    "{arch}",
];

impl TestDiscovery {
    /// `read` gives a root file's content from the gated tree.
    pub(crate) fn load(read: impl Fn(&str) -> Option<Vec<u8>>) -> Self {
        match Self::read(&read) {
            Ok(discovery) => discovery,
            Err(e) => {
                let mut defaults =
                    Self::read(&|_: &str| None).expect("pytest's defaults are valid");
                defaults.broken = Some(format!(
                    "{e} — pytest cannot read its configuration, so which files are tests and how they run is unknown; fix the file"
                ));
                defaults
            }
        }
    }

    fn read(read: &dyn Fn(&str) -> Option<Vec<u8>>) -> Result<Self> {
        let mut found: Option<(String, Vec<(String, String)>)> = None;
        for (file, section) in [
            ("pytest.ini", "pytest"),
            ("pyproject.toml", ""),
            ("tox.ini", "pytest"),
            ("setup.cfg", "tool:pytest"),
        ] {
            let Some(bytes) = read(file) else { continue };
            let text = String::from_utf8_lossy(&bytes);
            let keys = if file == "pyproject.toml" {
                pyproject_keys(&text).map_err(|message| Error::config(file, message))?
            } else {
                ini_section(&text, section)
            };
            // pytest.ini wins even when empty; the others only when they have the section.
            if let Some(keys) = keys.or_else(|| (file == "pytest.ini").then(Vec::new)) {
                found = Some((file.to_string(), keys));
                break;
            }
        }
        let get = |key: &str| {
            found
                .as_ref()
                .and_then(|(_, keys)| keys.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone()))
        };
        let python_files = get("python_files").unwrap_or_else(|| DEFAULT_NAMES.into());
        let testpaths = get("testpaths").filter(|t| !t.trim().is_empty());
        let pythonpath = get("pythonpath")
            .map(|p| p.split_whitespace().map(crate::path::normalize).collect())
            .unwrap_or_default();
        let bdd_features_base_dir = get("bdd_features_base_dir")
            .map(|d| crate::path::normalize(d.trim()))
            .filter(|d| !d.is_empty());
        // pytest splits `addopts` as a shell does.
        let addopts = get("addopts").map(|a| crate::analyze::shell::words(&a));
        let mut plugins: Vec<(String, String)> = addopts
            .as_deref()
            .map(addopts_plugins)
            .unwrap_or_default()
            .into_iter()
            .map(|m| {
                let file = found.as_ref().map_or("", |(f, _)| f.as_str());
                (m.clone(), format!("{file} addopts `-p {m}`"))
            })
            .collect();
        plugins.extend(entry_point_plugins(read));
        let mut doctests = Doctests::default();
        if let Some(opts) = &addopts {
            doctests.read(opts.iter().map(String::as_str));
        }
        plugins.sort();
        plugins.dedup_by(|a, b| a.0 == b.0);
        let source = found.map(|(file, _)| file);
        let origin = source.clone().unwrap_or_else(|| "pytest defaults".into());
        // `testpaths`: each pattern and everything under what it names.
        let under = |patterns: &str| -> Result<GlobSet> {
            let mut set = GlobSetBuilder::new();
            for p in patterns.split_whitespace() {
                let p = p.trim_end_matches('/');
                let glob = |pattern: &str| {
                    GlobBuilder::new(pattern)
                        .literal_separator(true)
                        .build()
                        .map_err(|e| Error::config(&origin, format!("bad pattern `{p}`: {e}")))
                };
                set.add(glob(p)?);
                set.add(glob(&format!("{p}/**"))?);
            }
            set.build()
                .map_err(|e| Error::config(&origin, e.to_string()))
        };
        let mut norecurse = GlobSetBuilder::new();
        for pat in NORECURSE {
            norecurse.add(Glob::new(pat).expect("built-in norecursedirs patterns are valid"));
        }
        Ok(TestDiscovery {
            norecurse: norecurse
                .build()
                .expect("built-in norecursedirs patterns are valid"),
            default_names: python_files.split_whitespace().eq(DEFAULT_NAMES.split(' ')),
            python_files: Fnmatch::new(python_files.split_whitespace()),
            testpaths: testpaths.map(|t| under(&t)).transpose()?,
            pythonpath,
            bdd_features_base_dir,
            plugins,
            broken: None,
            doctests,
            source,
        })
    }

    /// Would a plain `pytest` at the root collect this file as a test module? One file at a
    /// time: the reference `tests` is tested against.
    #[cfg(test)]
    fn is_test(&self, path: &str) -> bool {
        let (dirs, _) = path.rsplit_once('/').unwrap_or(("", path));
        (self.is_test_name(path) || self.doctests.files().collects(path))
            && self.collects_dir(dirs)
            && self.in_testpaths(path)
    }

    /// The test files among `files`, as pytest collects them, with each folder's verdict reused by the
    /// files that follow it in path order.
    /// `doctests`: the options these tests run with (`addopts` and the runner's).
    pub(crate) fn tests<'f>(
        &self,
        files: impl IntoIterator<Item = &'f String>,
        doctests: &Doctests,
    ) -> Vec<&'f String> {
        let doctests = doctests.files();
        let mut last: Option<(&str, bool)> = None;
        let mut out = Vec::new();
        for path in files {
            if !self.is_test_name(path) && !doctests.collects(path) {
                continue;
            }
            let (dirs, _) = path.rsplit_once('/').unwrap_or(("", path));
            let collected = match last {
                Some((dir, collected)) if dir == dirs => collected,
                _ => self.collects_dir(dirs),
            };
            last = Some((dirs, collected));
            if collected && self.in_testpaths(path) {
                out.push(path);
            }
        }
        out
    }

    /// Whether pytest walks into `path`'s folder and `testpaths` holds it (whatever its name).
    pub(crate) fn collects(&self, path: &str) -> bool {
        let (dirs, _) = path.rsplit_once('/').unwrap_or(("", path));
        self.collects_dir(dirs) && self.in_testpaths(path)
    }

    fn is_test_name(&self, path: &str) -> bool {
        let name = crate::path::file_name(path);
        if !name.ends_with(".py") || name == "conftest.py" {
            return false;
        }
        if self.default_names {
            name.starts_with("test_") || name.ends_with("_test.py")
        } else {
            self.python_files.is_match(path)
        }
    }

    /// Whether pytest walks into a folder of this name.
    pub(crate) fn collects_folder(&self, name: &str) -> bool {
        !self.norecurse.is_match(name)
    }

    fn collects_dir(&self, dirs: &str) -> bool {
        !dirs
            .split('/')
            .filter(|d| !d.is_empty())
            .any(|d| self.norecurse.is_match(d))
    }

    fn in_testpaths(&self, path: &str) -> bool {
        self.testpaths.as_ref().is_none_or(|t| t.is_match(path))
    }
}

/// The modules `-p NAME` / `-pNAME` load (`-p no:NAME` disables one: not a module).
fn addopts_plugins(addopts: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut words = addopts.iter().map(String::as_str);
    while let Some(word) = words.next() {
        let name = match word.strip_prefix("-p") {
            Some("") => words.next(),
            Some(rest) => Some(rest),
            None => None,
        };
        if let Some(name) = name.filter(|n| !n.starts_with("no:") && !n.is_empty()) {
            out.push(name.to_string());
        }
    }
    out
}

/// `pytest11` entry points of pyproject.toml (`[project.entry-points.pytest11]`, poetry's
/// `[tool.poetry.plugins.pytest11]`) and setup.cfg (`[options.entry_points]`): installed in
/// development mode, pytest loads each for every test.
fn entry_point_plugins(read: &dyn Fn(&str) -> Option<Vec<u8>>) -> Vec<(String, String)> {
    let module = |value: &str| {
        value
            .split(':')
            .next()
            .unwrap_or_default()
            .trim()
            .to_string()
    };
    let mut out = Vec::new();
    if let Some(bytes) = read("pyproject.toml") {
        let text = String::from_utf8_lossy(&bytes);
        // A malformed one is refused where pytest reads it (`pyproject_keys`); where pytest.ini
        // wins, its entry points are simply not there.
        let doc: toml::Table = toml::from_str(&text).unwrap_or_default();
        let tables = [
            doc.get("project")
                .and_then(|p| p.get("entry-points"))
                .and_then(|e| e.get("pytest11")),
            doc.get("tool")
                .and_then(|t| t.get("poetry"))
                .and_then(|p| p.get("plugins"))
                .and_then(|e| e.get("pytest11")),
        ];
        for table in tables.into_iter().flatten().filter_map(|t| t.as_table()) {
            for (name, value) in table {
                if let Some(v) = value.as_str() {
                    out.push((
                        module(v),
                        format!("pyproject.toml entry point pytest11 `{name}`"),
                    ));
                }
            }
        }
    }
    if let Some(bytes) = read("setup.cfg") {
        let text = String::from_utf8_lossy(&bytes);
        let keys = ini_section(&text, "options.entry_points").unwrap_or_default();
        for (_, value) in keys.iter().filter(|(k, _)| k == "pytest11") {
            // Continuation lines were joined with spaces: `name = module:attr name2 = …`.
            let words: Vec<&str> = value.split_whitespace().collect();
            for pair in words.windows(3).filter(|w| w[1] == "=") {
                out.push((
                    module(pair[2]),
                    format!("setup.cfg entry point pytest11 `{}`", pair[0]),
                ));
            }
        }
    }
    out
}

/// `[tool.pytest.ini_options]` keys, lists joined by spaces as pytest reads them.
fn pyproject_keys(text: &str) -> std::result::Result<Option<Vec<(String, String)>>, String> {
    let doc: toml::Table = toml::from_str(text).map_err(|e| one_line(&e.to_string()))?;
    let Some(pytest) = doc
        .get("tool")
        .and_then(|t| t.get("pytest"))
        .and_then(|p| p.as_table())
    else {
        return Ok(None);
    };
    // `[tool.pytest.ini_options]`, or pytest 9's native `[tool.pytest]` table.
    let options = match pytest.get("ini_options").and_then(|o| o.as_table()) {
        Some(ini) => ini,
        None => pytest,
    };
    let keys = options
        .iter()
        .filter(|(k, _)| k.as_str() != "ini_options")
        .map(|(k, v)| {
            let value = match v {
                toml::Value::String(s) => s.clone(),
                // A list is its items, each one word (quoted, as `addopts` is split as a
                // shell does).
                toml::Value::Array(items) => items
                    .iter()
                    .map(|i| i.as_str().map_or_else(|| i.to_string(), quote_word))
                    .collect::<Vec<_>>()
                    .join(" "),
                other => other.to_string(),
            };
            (k.clone(), value)
        })
        .collect();
    Ok(Some(keys))
}

/// One word, quoted for a shell's split when it holds what would split or unquote it.
fn quote_word(word: &str) -> String {
    if word.is_empty() || word.contains(|c: char| c.is_whitespace() || "'\"\\".contains(c)) {
        format!("'{}'", word.replace('\'', "'\"'\"'"))
    } else {
        word.to_string()
    }
}

/// The keys of one section of an INI file; continuation lines (indented) join the value.
pub(crate) fn ini_section(text: &str, section: &str) -> Option<Vec<(String, String)>> {
    let mut keys: Option<Vec<(String, String)>> = None;
    let mut inside = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        if let Some(name) = trimmed.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            inside = name.trim() == section;
            if inside {
                keys.get_or_insert_with(Vec::new);
            }
            continue;
        }
        if !inside {
            continue;
        }
        let keys = keys.get_or_insert_with(Vec::new);
        if line.starts_with([' ', '\t']) {
            if let Some((_, value)) = keys.last_mut() {
                value.push(' ');
                value.push_str(trimmed);
            }
        } else if let Some((k, v)) = trimmed.split_once(['=', ':']) {
            keys.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    keys
}

/// toml's errors span several lines with a source excerpt; gate prints one.
pub(crate) fn one_line(message: &str) -> String {
    message
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
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
            "*", "?", "/", "docs", "a", ".md", "test", "_x", "[ab]", "[!a]", "[", "]", "{a,b}",
            "**", ".", "[]a]", "[z-a]", "[a-c]", "\\", "-",
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
}
