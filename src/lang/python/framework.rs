//! Which framework runs the Python tests — pytest, unittest or Django's test runner — set in
//! `.gate.toml` or detected when the tree leaves no doubt, with the reason; and, for unittest
//! and Django, their discovery (`test*.py` inside packages) and dotted test labels.

use super::pytest_ini::TestDiscovery;
use serde::Deserialize;
use std::collections::BTreeSet;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Kind {
    Pytest,
    Unittest,
    Django,
}

#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Framework {
    pub kind: Kind,
    /// unittest and Django: the folder test labels are dotted from (the top-level directory).
    #[serde(skip)]
    pub start: String,
    /// Django: the script that runs the tests (`manage.py`, `tests/runtests.py`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub script: Option<String>,
    /// Why this framework: the setting, or what the tree shows.
    pub why: String,
}

impl Kind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Pytest => "pytest",
            Kind::Unittest => "unittest",
            Kind::Django => "django",
        }
    }
}

/// How many test-named files the unittest check reads at most: enough to tell, cheap on a
/// large tree.
const SAMPLE: usize = 50;

/// The framework of a tree holding `files` (`read` gives a file's bytes).
pub(crate) fn detect(
    configured: Option<Kind>,
    discovery: &TestDiscovery,
    files: &BTreeSet<String>,
    read: &dyn Fn(&str) -> Option<Vec<u8>>,
) -> Framework {
    let text = |f: &str| read(f).map(|b| String::from_utf8_lossy(&b).into_owned());
    let django_script = || {
        ["manage.py", "tests/runtests.py", "runtests.py"]
            .into_iter()
            .find(|s| files.contains(*s) && text(s).is_some_and(|t| t.contains("django")))
    };
    let framework = |kind, script: Option<&str>, why: String| Framework {
        kind,
        start: script.map_or("", crate::path::parent).to_string(),
        script: script.map(str::to_string),
        why,
    };
    if let Some(kind) = configured {
        let script = (kind == Kind::Django).then(django_script).flatten();
        return framework(kind, script, "`[python] framework` in .gate.toml".into());
    }
    if let Some(source) = &discovery.source {
        return framework(Kind::Pytest, None, format!("{source} configures pytest"));
    }
    let declared = declared_in(files, read, &["pytest"]);
    if let Some(file) = declared {
        return framework(Kind::Pytest, None, format!("{file} names pytest"));
    }
    if let Some(script) = django_script() {
        return framework(
            Kind::Django,
            Some(script),
            format!("{script} runs Django's test runner, and nothing names pytest"),
        );
    }
    // Read lazily: the first file that does not settle it for unittest ends the check.
    let unittest = |t: &str| {
        (t.contains("import unittest") || t.contains("from unittest")) && !t.contains("pytest")
    };
    let mut read_files = 0;
    let all_unittest = files
        .iter()
        .filter(|f| is_test_name(f))
        .take(SAMPLE)
        .filter_map(|f| text(f))
        .all(|t| {
            read_files += 1;
            unittest(&t)
        });
    if read_files > 0 && all_unittest {
        let unittest = framework(
            Kind::Unittest,
            None,
            format!("all {read_files} test*.py file(s) read import unittest and none names pytest"),
        );
        // unittest's discovery walks packages only: test files in a folder without
        // `__init__.py` are no tests to it, but pytest (which runs TestCases too) collects
        // them. Selecting from no test at all would miss every one.
        if !unittest.tests(files).is_empty() {
            return unittest;
        }
        return framework(
            Kind::Pytest,
            None,
            format!(
                "the {read_files} test*.py file(s) import unittest, but unittest's discovery finds none of them (their folders are not packages): pytest collects them"
            ),
        );
    }
    framework(
        Kind::Pytest,
        None,
        "pytest's defaults (nothing names another framework)".into(),
    )
}

/// The first root file a project declares its tools and dependencies in (pyproject.toml,
/// setup.cfg, setup.py, tox.ini, noxfile.py, then `requirements*`) whose text names one of
/// `names`.
pub(crate) fn declared_in<'f>(
    files: &'f BTreeSet<String>,
    read: &dyn Fn(&str) -> Option<Vec<u8>>,
    names: &[&str],
) -> Option<&'f str> {
    const DECLARING: &[&str] = &[
        "pyproject.toml",
        "setup.cfg",
        "setup.py",
        "tox.ini",
        "noxfile.py",
    ];
    let requirements = files
        .iter()
        .map(String::as_str)
        .filter(|f| !f.contains('/') && f.starts_with("requirements"));
    DECLARING
        .iter()
        .filter_map(|d| files.get(*d).map(String::as_str))
        .chain(requirements)
        .find(|f| {
            read(f).is_some_and(|b| {
                let text = String::from_utf8_lossy(&b);
                names.iter().any(|n| text.contains(n))
            })
        })
}

/// unittest's default pattern, `test*.py`.
fn is_test_name(path: &str) -> bool {
    let name = crate::path::file_name(path);
    name.starts_with("test") && name.ends_with(".py")
}

impl Framework {
    /// unittest's discovery (Django's runner uses it): `test*.py` files under `start` whose
    /// folders below it are all packages (an `__init__.py` each), outside hidden folders.
    pub(crate) fn tests<'f>(&self, files: &'f BTreeSet<String>) -> Vec<&'f String> {
        let prefix = if self.start.is_empty() {
            String::new()
        } else {
            format!("{}/", self.start)
        };
        files
            .iter()
            .filter(|f| f.starts_with(&prefix) && is_test_name(f))
            .filter(|f| {
                let rest = &f[prefix.len()..];
                let mut dir = prefix.clone();
                for part in rest
                    .split('/')
                    .rev()
                    .skip(1)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                {
                    dir.push_str(part);
                    if part.starts_with('.') || !files.contains(&format!("{dir}/__init__.py")) {
                        return false;
                    }
                    dir.push('/');
                }
                true
            })
            .collect()
    }

    /// The runner when `.gate.toml` names none.
    pub(crate) fn default_argv(&self, python: String) -> Vec<String> {
        match (self.kind, &self.script) {
            (Kind::Pytest, _) => vec![python, "-m".into(), "pytest".into()],
            (Kind::Unittest, _) | (Kind::Django, None) => {
                vec![python, "-m".into(), "unittest".into()]
            }
            (Kind::Django, Some(script)) if script.ends_with("manage.py") => {
                vec![python, script.clone(), "test".into()]
            }
            (Kind::Django, Some(script)) => vec![python, script.clone()],
        }
    }

    /// A test file or `file::Class::name` id as the dotted label unittest and Django take:
    /// `tests/test_cart.py::TestCart::test_total` → `tests.test_cart.TestCart.test_total`.
    pub(crate) fn label(&self, test: &str) -> String {
        let (file, name) = test.split_once("::").unwrap_or((test, ""));
        let file = file
            .strip_prefix(&format!("{}/", self.start))
            .filter(|_| !self.start.is_empty())
            .unwrap_or(file);
        let mut label = file.trim_end_matches(".py").replace('/', ".");
        for part in name.split("::").filter(|p| !p.is_empty()) {
            label.push('.');
            label.push_str(part);
        }
        label
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(files: &[&str]) -> BTreeSet<String> {
        files.iter().map(|s| s.to_string()).collect()
    }

    /// unittest-style tests in a folder that is no package: unittest's discovery finds none of
    /// them, so pytest (which collects TestCases too) runs them — never a selection from zero
    /// tests (found in pytz: `pytz/tests/` has no `__init__.py`).
    #[test]
    fn unittest_tests_unittest_cannot_discover_run_with_pytest() {
        let case = "import unittest\n\n\nclass T(unittest.TestCase):\n    pass\n";
        let detect_in = |files: &[&str]| {
            let tree = set(files);
            let read = |f: &str| f.ends_with(".py").then(|| case.as_bytes().to_vec());
            let discovery = TestDiscovery::load(|_: &str| None);
            detect(None, &discovery, &tree, &read).kind
        };
        assert_eq!(
            detect_in(&[
                "lib/__init__.py",
                "lib/tests/test_a.py",
                "lib/tests/test_b.py"
            ]),
            Kind::Pytest
        );
        assert_eq!(
            detect_in(&[
                "lib/__init__.py",
                "lib/tests/__init__.py",
                "lib/tests/test_a.py"
            ]),
            Kind::Unittest
        );
    }

    #[test]
    fn unittest_discovery_and_labels() {
        let files = set(&[
            "app/__init__.py",
            "app/tests.py",
            "app/tests/__init__.py",
            "app/tests/test_models.py",
            "loose/test_x.py",
            "tests.py",
            "test_root.py",
        ]);
        let f = Framework {
            kind: Kind::Unittest,
            start: String::new(),
            script: None,
            why: String::new(),
        };
        let found: Vec<&str> = f.tests(&files).into_iter().map(String::as_str).collect();
        // `loose/` is no package: unittest does not descend into it.
        assert_eq!(
            found,
            [
                "app/tests.py",
                "app/tests/test_models.py",
                "test_root.py",
                "tests.py"
            ]
        );
        assert_eq!(
            f.label("app/tests/test_models.py::T::test_a"),
            "app.tests.test_models.T.test_a"
        );
        let django = Framework {
            kind: Kind::Django,
            start: "tests".into(),
            script: Some("tests/runtests.py".into()),
            why: String::new(),
        };
        assert_eq!(
            django.label("tests/admin_views/tests.py"),
            "admin_views.tests"
        );
        assert_eq!(
            django.default_argv("python3".into()),
            ["python3", "tests/runtests.py"]
        );
    }
}
