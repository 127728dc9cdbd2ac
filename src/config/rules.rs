//! The rules a configuration holds once resolved: compiled globs with `!` excludes, the
//! `[[depends]]`, `[[loads]]` and `[[reference]]` rules, the steps, and the settings' enums.

use globset::{GlobMatcher, GlobSet};
use serde::Deserialize;
use std::collections::BTreeSet;

/// `[[loads]]`: the files a run-time-named import in `file` can load, declared by the team.
pub(crate) struct Loads {
    pub index: usize,
    pub file: Matcher,
    pub modules: Matcher,
}

#[derive(Deserialize, Default, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RelativeTo {
    #[default]
    File,
    Root,
}

/// A `[[reference]]` extractor: in files matching `files`, every match of `pattern` names a
/// path (its `path` group).
pub(crate) struct Reference {
    pub index: usize,
    pub files: Matcher,
    pub pattern: regex::Regex,
    pub relative_to: RelativeTo,
}

#[derive(Deserialize, Default, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
pub(crate) enum NamedFullMode {
    #[default]
    Subset,
    Full,
}

/// Whose ledger entries a run trusts.
#[derive(Deserialize, Default, Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Trust {
    #[default]
    #[serde(rename = "main+branch")]
    MainAndBranch,
    #[serde(rename = "main")]
    Main,
    #[serde(rename = "any")]
    Any,
}

/// Where a step runs: in the pre-push hook, in `gate verify`, or both.
#[derive(Deserialize, Default, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum When {
    PrePush,
    Verify,
    #[default]
    Always,
}

/// The name of the built-in step that selects and runs the affected tests.
pub(crate) const AFFECTED_TESTS: &str = "affected-tests";

pub(crate) enum StepRun {
    /// The built-in step: the affected tests, with the project's runner.
    AffectedTests,
    Argv(Vec<String>),
    /// Run by `sh -c`.
    Shell(String),
}

pub(crate) struct Step {
    pub name: String,
    pub run: StepRun,
    /// Run only when a changed path matches.
    pub on: Option<Matcher>,
    pub when: When,
}

impl Step {
    /// The built-in step, unfiltered, in every context.
    pub(crate) fn affected_tests() -> Step {
        Step {
            name: AFFECTED_TESTS.into(),
            run: StepRun::AffectedTests,
            on: None,
            when: When::Always,
        }
    }

    /// The command to run; `None` for the built-in affected-tests step.
    pub(crate) fn argv(&self) -> Option<Vec<String>> {
        match &self.run {
            StepRun::AffectedTests => None,
            StepRun::Argv(argv) => Some(argv.clone()),
            StepRun::Shell(line) => Some(vec!["sh".into(), "-c".into(), line.clone()]),
        }
    }
}

#[derive(Deserialize, Default, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Fallback {
    #[default]
    Refuse,
    Full,
}

/// Globs with `!` excludes, as in `on = ["**/*.go", "!**/*_test.go"]`.
pub(crate) struct Matcher {
    pub(super) include: GlobSet,
    pub(super) exclude: GlobSet,
    pub text: String,
}

impl Matcher {
    pub(crate) fn is_match(&self, path: &str) -> bool {
        self.include.is_match(path) && !self.exclude.is_match(path)
    }
}

pub(crate) struct DependsRule {
    pub index: usize,
    pub tests: Matcher,
    pub on: Matcher,
}

/// An `always_run` entry, compiled: a test file glob, a pytest id (`path::name`), or a dotted
/// module id (`tests.test_health::*`).
pub(crate) struct AlwaysRun {
    /// As written.
    pub entry: String,
    pub(super) matcher: GlobMatcher,
    /// For a dotted id: the file path it names (`tests/test_health.py`).
    pub(super) dotted: Option<String>,
    /// The test name after `::`, unless `*`.
    pub(super) name: Option<String>,
}

impl AlwaysRun {
    /// The tests of the gated tree (`tests`) it names: files, or `file::name` ids.
    pub(crate) fn matches(&self, tests: &BTreeSet<String>) -> Vec<String> {
        tests
            .iter()
            .filter(|t| {
                self.matcher.is_match(t.as_str())
                    && self
                        .dotted
                        .as_ref()
                        .is_none_or(|d| t.as_str() == d || t.ends_with(&format!("/{d}")))
            })
            .map(|t| match &self.name {
                Some(n) => format!("{t}::{n}"),
                None => t.clone(),
            })
            .collect()
    }
}
