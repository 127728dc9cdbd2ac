//! Python's tests behind `lang::suite::Suite`.

use super::{Python, args, framework::Kind, pytest, toolchain};
use crate::graph::Node;
use crate::lang::suite::{Suite, Tests};
use crate::project::Project;
use crate::run::Runner;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

impl Suite for Python {
    /// A file, unless it is another language's source (a Vitest test file).
    fn is_test_unit(&self, unit: &str) -> bool {
        matches!(Node::of(unit), Node::File(_))
            && crate::lang::of_source(unit).is_none_or(|l| l.name() == "python")
    }

    /// One command: pytest's (test files and node ids), or unittest's or Django's (dotted
    /// labels), with the project's runner.
    fn commands(
        &self,
        project: &Project,
        tests: Tests<'_>,
        files: &BTreeSet<String>,
        root: &Path,
        extra: &[String],
    ) -> Vec<Box<dyn Runner>> {
        let base = pytest::base_argv(&project.config, &project.framework, root);
        let mut command = match tests {
            Tests::Whole => pytest::Command::whole_suite(base),
            Tests::Some(tests) => match project.framework.kind {
                Kind::Pytest => pytest::Command::new(base, tests, files),
                Kind::Unittest | Kind::Django => {
                    pytest::Command::labels(base, tests, &project.framework)
                }
            },
        };
        command.extra = extra.to_vec();
        vec![Box::new(command)]
    }

    fn check_args(&self, project: &Project, args: &[String]) -> Result<(), String> {
        let kind = project.framework.kind;
        // pytest reads more options from `PYTEST_ADDOPTS`, before the command line's: the same
        // list holds for them, less what narrows a run (gate would not know it was narrowed).
        let pytest_env = |name| {
            (kind == Kind::Pytest)
                .then(|| crate::lang::suite::runner_env(project, name))
                .flatten()
        };
        let (addopts, plugins) = (pytest_env("PYTEST_ADDOPTS"), pytest_env("PYTEST_PLUGINS"));
        let nothing = args.is_empty() && addopts.is_none() && plugins.is_none();
        if nothing || !crate::lang::suite::has_tests(project, self) {
            return Ok(());
        }
        let allowed = &project.config.python_allow_args;
        if let Some(addopts) = addopts {
            args::read_env("PYTEST_ADDOPTS", &addopts, allowed)?;
        }
        // `PYTEST_PLUGINS` loads each module it names as `-p` would: read as such.
        if let Some(plugins) = plugins {
            let words: Vec<String> = plugins
                .split(',')
                .flat_map(|p| ["-p".to_string(), p.trim().to_string()])
                .collect();
            args::read(kind, &words, allowed)
                .map_err(|why| format!("`PYTEST_PLUGINS` (`{plugins}`): {why}"))?;
        }
        args::read(kind, args, allowed).map(drop)
    }

    /// The project's runner from the root, without pytest's cache (a traced run must not
    /// leave state that changes the next).
    fn alone(&self, project: &Project, root: &Path, unit: &str) -> (Vec<String>, PathBuf) {
        let mut argv = pytest::base_argv(&project.config, &project.framework, root);
        // `./`: a test named `-k…` or `@…` must stay a path.
        argv.extend(["-p".into(), "no:cacheprovider".into(), format!("./{unit}")]);
        (argv, root.to_path_buf())
    }

    fn name(&self) -> &'static str {
        "python"
    }

    /// pytest's node ids; unittest and Django name no test gate could give them.
    fn tests_in(
        &self,
        project: &Project,
        root: &Path,
        units: &[&str],
    ) -> Result<BTreeMap<String, Vec<String>>, String> {
        if project.framework.kind != Kind::Pytest {
            return Err(format!(
                "--shard-by test splits pytest's node ids; this project's Python tests run with {}: split by file",
                project.framework.kind.name()
            ));
        }
        let base = pytest::base_argv(&project.config, &project.framework, root);
        pytest::collect::node_ids(&base, root, units)
    }

    fn runner_argv(&self, project: &Project, root: &Path) -> Vec<String> {
        pytest::base_argv(&project.config, &project.framework, root)
    }

    /// The interpreter the runner starts (`python3 -m pytest` → `python3`).
    fn toolchain(&self, project: &Project, root: &Path, _unit: &str) -> Result<String, String> {
        let argv = self.runner_argv(project, root);
        toolchain::python_of(&argv).ok_or_else(|| {
            format!(
                "the runner `{}` is not a Python interpreter gate can ask for its packages",
                argv.join(" ")
            )
        })
    }

    /// pytest itself loads gate's probe, which lists every module file and every file read
    /// outside the repository; unittest, Django's runner and a wrapper are not observed.
    fn reads_outside(&self, project: &Project, root: &Path) -> Option<bool> {
        Some(pytest::runs_pytest(&self.runner_argv(project, root)))
    }

    fn toolchain_identity(
        &self,
        name: &str,
        root: &Path,
        state: &Path,
        env: &BTreeMap<String, String>,
    ) -> Result<String, String> {
        toolchain::identity(name, root, state, env)
    }
}
