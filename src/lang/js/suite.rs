//! JavaScript's and TypeScript's tests behind `lang::suite::Suite`: one command per test
//! project (its folder, its runner), the selected files of that project run exactly.

use super::config::RunnerKind;
use super::layout::JsLayout;
use super::{Js, is_js};
use crate::lang::suite::{Suite, Tests};
use crate::project::Project;
use crate::run::Runner;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The tree's JavaScript layout, when it has one.
pub(super) fn layout(project: &Project) -> Option<&JsLayout> {
    project
        .layouts
        .named("js")
        .and_then(|l| l.as_any().downcast_ref::<JsLayout>())
}

/// One runner invocation: a project's runner over its selected test files (all of them by
/// name for the whole suite), from the project's folder.
pub(super) struct JsCommand {
    pub runner: RunnerKind,
    /// The project's folder, repository-relative.
    pub dir: String,
    /// The test files, repository-relative (every test of the project for the whole suite).
    pub files: Vec<String>,
    /// The user's runner arguments (`gate … -- ARGS`), checked against the runner's
    /// allow-list (`args`): given after gate's own options, before the files.
    pub args: Vec<String>,
}

impl JsCommand {
    /// The files relative to the project's folder, as the runner is given them.
    pub(super) fn relative_files(&self) -> Vec<String> {
        self.files
            .iter()
            .map(|f| super::config::under(&self.dir, f).unwrap_or(f).to_string())
            .collect()
    }
}

impl Suite for Js {
    fn is_test_unit(&self, unit: &str) -> bool {
        is_js(unit)
    }

    fn commands(
        &self,
        project: &Project,
        tests: Tests<'_>,
        _files: &BTreeSet<String>,
        _root: &Path,
        extra: &[String],
    ) -> Vec<Box<dyn Runner>> {
        let Some(layout) = layout(project) else {
            return Vec::new();
        };
        // The whole suite is every test of each project, by name: a runner left to collect
        // its own would also run a nested project's tests from the outer project's folder,
        // under the outer configuration.
        let mut by_project: BTreeMap<&str, (RunnerKind, Vec<String>)> = BTreeMap::new();
        let units: Vec<&str> = match tests {
            Tests::Whole => project
                .tests
                .iter()
                .map(String::as_str)
                .filter(|t| is_js(t))
                .collect(),
            Tests::Some(units) => units.to_vec(),
        };
        for unit in units {
            if let Some(p) = layout.project_of(unit) {
                let entry = by_project
                    .entry(p.run_dir.as_str())
                    .or_insert((p.runner, Vec::new()));
                entry.1.push(unit.to_string());
            }
        }
        by_project
            .into_iter()
            .map(|(dir, (runner, files))| {
                Box::new(JsCommand {
                    runner,
                    dir: dir.to_string(),
                    files,
                    args: extra.to_vec(),
                }) as Box<dyn Runner>
            })
            .collect()
    }

    /// The arguments read against the list of each runner the tree's test projects use (one
    /// command line goes to all of them), and the options each takes from the environment.
    fn check_args(&self, project: &Project, args: &[String]) -> Result<(), String> {
        let set: Vec<(&str, String)> = super::args::env_vars()
            .filter_map(|var| crate::lang::suite::runner_env(project, var).map(|v| (var, v)))
            .collect();
        if (args.is_empty() && set.is_empty()) || !crate::lang::suite::has_tests(project, self) {
            return Ok(());
        }
        let Some(layout) = layout(project) else {
            return Ok(());
        };
        let env = |var: &str| set.iter().find(|(k, _)| *k == var).map(|(_, v)| v.clone());
        let allowed = &project.config.js_allow_args;
        for runner in [RunnerKind::Vitest, RunnerKind::Jest] {
            if layout.projects.iter().any(|p| p.runner == runner) {
                super::args::read_env(runner, &env, allowed)?;
                super::args::read(runner, args, allowed)?;
            }
        }
        Ok(())
    }

    fn name(&self) -> &'static str {
        "js"
    }

    fn runner_argv(&self, project: &Project, _root: &Path) -> Vec<String> {
        let runner = layout(project)
            .and_then(|l| l.projects.first())
            .map_or("vitest", |p| p.runner.name());
        vec![runner.to_string()]
    }

    fn toolchain(&self, _project: &Project, _root: &Path, _unit: &str) -> Result<String, String> {
        Ok("node".to_string())
    }

    /// The `node` on `PATH` (its resolved file and its state) and the variables that change
    /// how Node and Vitest run: read from the file system, no process started.
    fn toolchain_identity(
        &self,
        name: &str,
        root: &Path,
        _state: &Path,
        env: &BTreeMap<String, String>,
    ) -> Result<String, String> {
        let binary = crate::lang::toolchain::resolve(name, root)
            .and_then(|p| std::fs::canonicalize(p).ok())
            .ok_or_else(|| format!("`{name}` is not on PATH"))?;
        let stat = crate::lang::toolchain::stat(&binary);
        let mut text = format!("{}\n{stat:?}\n", binary.display());
        for name in RUN_ENV {
            let value = env.get(name).cloned().or_else(|| std::env::var(name).ok());
            text.push_str(&format!("{name}={value:?}\n"));
        }
        Ok(crate::lang::toolchain::hash(text.as_bytes()))
    }

    /// Its runs load the project's installed packages (`node_modules`), which no commit
    /// holds: a run traced by strace names every file it read there (and anywhere outside
    /// the tree); with no strace on `PATH`, none is named, and no pass is entered.
    fn reads_outside(&self, _project: &Project, root: &Path) -> Option<bool> {
        Some(super::observe::on_path(root))
    }

    fn alone(&self, project: &Project, root: &Path, unit: &str) -> (Vec<String>, PathBuf) {
        let dir = layout(project)
            .and_then(|l| l.project_of(unit))
            .map_or(String::new(), |p| p.run_dir.clone());
        let command = JsCommand {
            runner: layout(project)
                .and_then(|l| l.project_of(unit))
                .map_or(RunnerKind::Vitest, |p| p.runner),
            dir: dir.clone(),
            files: vec![unit.to_string()],
            args: Vec::new(),
        };
        // The project's own runner, on that file exactly: `gate audit` traces one file's run.
        let folder = root.join(&dir);
        let argv = match command.runner {
            RunnerKind::Vitest => super::vitest::alone_argv(&command),
            RunnerKind::Jest => {
                let jest = installed_bin(&folder, root, "jest")
                    .unwrap_or_else(|| folder.join("node_modules/.bin/jest"));
                let mut argv = crate::run::Runner::argv(&command);
                argv[0] = jest.display().to_string();
                argv
            }
        };
        (argv, folder)
    }
}

/// The variables that change how Node, Vite and Vitest run whatever the tests read: Node's
/// options and module path, the mode (`NODE_ENV`, Vite's and Vitest's), whether it is CI (a
/// missing snapshot fails there, and is written elsewhere), the snapshots' update mode, and
/// Vitest's pool and module directories. Part of the toolchain's identity, so a Python or Go
/// test's fingerprint does not move with them.
const RUN_ENV: [&str; 9] = [
    "NODE_OPTIONS",
    "NODE_PATH",
    "NODE_ENV",
    "VITE_USER_NODE_ENV",
    "VITEST_MODE",
    "CI",
    "UPDATE_SNAPSHOT",
    "VITEST_VM_POOL",
    "VITEST_MODULE_DIRECTORIES",
];

/// The runner `name` installed for the project in `folder`: `node_modules/.bin/NAME` there or
/// in a folder above it up to `top` (a workspace's packages are installed at its root), as
/// Node looks a package up.
pub(super) fn installed_bin(folder: &Path, top: &Path, name: &str) -> Option<PathBuf> {
    folder
        .ancestors()
        .take_while(|d| d.starts_with(top))
        .map(|d| d.join("node_modules/.bin").join(name))
        .find(|bin| bin.exists())
}

/// A temporary checkout of the gated commit holds no untracked file, so none of the packages
/// the working tree at `root` has installed: each folder of the checkout with a
/// `package.json` gets the working tree's `node_modules` of the same folder, linked, so the
/// runners and what the tests import resolve as they do in the working tree.
pub(super) fn link_installed(checkout: &Path, root: &Path) {
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(checkout.join(&rel)) else {
            continue;
        };
        let mut manifest = false;
        for entry in entries.flatten() {
            let name = entry.file_name();
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if is_dir && name != ".git" && name != "node_modules" {
                stack.push(rel.join(&name));
            } else if name == "package.json" {
                manifest = true;
            }
        }
        let installed = root.join(&rel).join("node_modules");
        let link = checkout.join(&rel).join("node_modules");
        if manifest && installed.is_dir() && link.symlink_metadata().is_err() {
            // Not linked: the runner then says the packages are not installed.
            let _ = std::os::unix::fs::symlink(&installed, &link);
        }
    }
}

impl Runner for JsCommand {
    fn language(&self) -> &'static str {
        "js"
    }

    fn argv(&self) -> Vec<String> {
        let mut argv = match self.runner {
            RunnerKind::Vitest => vec!["vitest".to_string(), "run".to_string()],
            RunnerKind::Jest => vec!["jest".to_string()],
        };
        argv.extend(self.args.iter().cloned());
        if self.runner == RunnerKind::Jest {
            argv.extend(["--runTestsByPath".to_string(), "--".to_string()]);
        }
        argv.extend(self.relative_files());
        argv
    }

    fn dir(&self) -> &str {
        &self.dir
    }

    fn test_args(&self) -> usize {
        self.files.len()
    }

    /// `dir` is the project's folder in the checkout: each file is looked for there by the
    /// name its runner is given.
    fn missing(&self, dir: &Path) -> Option<&str> {
        self.files
            .iter()
            .find(|f| {
                let relative = super::config::under(&self.dir, f).unwrap_or(f);
                !dir.join(relative).exists()
            })
            .map(String::as_str)
    }

    fn run(
        &self,
        at: &crate::run::At<'_>,
        sink: &mut dyn crate::run::events::Sink,
    ) -> crate::error::Result<crate::run::Outcome> {
        match self.runner {
            RunnerKind::Vitest => super::vitest::run(self, at, sink),
            RunnerKind::Jest => super::jest::run(self, at, sink),
        }
    }
}
