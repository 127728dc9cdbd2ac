//! Test discovery as pytest does it: the first of `pytest.ini`, `pyproject.toml`
//! (`[tool.pytest.ini_options]`), `tox.ini` (`[pytest]`) and `setup.cfg` (`[tool:pytest]`) at the
//! repository root gives `python_files` and `testpaths`; without one, pytest's defaults apply.

mod config;
mod doctests;
mod fnmatch;

use crate::error::{Error, Result};
use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

pub(crate) use config::{ini_section, one_line};
pub(crate) use doctests::Doctests;
pub(crate) use fnmatch::Fnmatch;

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
        let found = config::settings(read)?;
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
        let file = found.as_ref().map_or("", |(f, _)| f.as_str());
        let plugins = config::plugins(file, addopts.as_deref(), read);
        let mut doctests = Doctests::default();
        if let Some(opts) = &addopts {
            doctests.read(opts.iter().map(String::as_str));
        }
        let source = found.map(|(file, _)| file);
        let origin = source.clone().unwrap_or_else(|| "pytest defaults".into());
        Ok(TestDiscovery {
            norecurse: norecurse(),
            default_names: python_files.split_whitespace().eq(DEFAULT_NAMES.split(' ')),
            python_files: Fnmatch::new(python_files.split_whitespace()),
            testpaths: testpaths.map(|t| under(&t, &origin)).transpose()?,
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

/// `testpaths`: each pattern and everything under what it names (`origin`: the file that gave
/// them, for errors).
fn under(patterns: &str, origin: &str) -> Result<GlobSet> {
    let mut set = GlobSetBuilder::new();
    for p in patterns.split_whitespace() {
        let p = p.trim_end_matches('/');
        let glob = |pattern: &str| {
            GlobBuilder::new(pattern)
                .literal_separator(true)
                .build()
                .map_err(|e| Error::config(origin, format!("bad pattern `{p}`: {e}")))
        };
        set.add(glob(p)?);
        set.add(glob(&format!("{p}/**"))?);
    }
    set.build()
        .map_err(|e| Error::config(origin, e.to_string()))
}

/// `NORECURSE` as one set.
fn norecurse() -> GlobSet {
    let mut norecurse = GlobSetBuilder::new();
    for pat in NORECURSE {
        norecurse.add(Glob::new(pat).expect("built-in norecursedirs patterns are valid"));
    }
    norecurse
        .build()
        .expect("built-in norecursedirs patterns are valid")
}

#[cfg(test)]
mod tests;
