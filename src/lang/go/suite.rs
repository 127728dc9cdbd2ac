//! Go's tests behind `lang::suite::Suite`.

use super::{Go, args, gotest, toolchain};
use crate::graph::Node;
use crate::lang::suite::{Suite, Tests};
use crate::project::Project;
use crate::run::Runner;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

impl Suite for Go {
    fn is_test_unit(&self, unit: &str) -> bool {
        matches!(Node::of(unit), Node::GoTests(_))
    }

    /// `go test` per module: the selected packages, or `./...` in every module.
    fn commands(
        &self,
        project: &Project,
        tests: Tests<'_>,
        _files: &BTreeSet<String>,
        _root: &Path,
        extra: &[String],
    ) -> Vec<Box<dyn Runner>> {
        let (units, whole): (&[&str], bool) = match tests {
            Tests::Whole => (&[], true),
            Tests::Some(units) => (units, false),
        };
        // The user's flags after the configured ones, all before the packages: `go test` hands
        // whatever follows the packages to the test binary.
        let flags: Vec<String> = project
            .config
            .go_flags
            .iter()
            .chain(extra)
            .cloned()
            .collect();
        gotest::commands(&project.go, units, whole, &flags)
            .into_iter()
            .map(|c| {
                Box::new(gotest::GoCommand {
                    user_args: !extra.is_empty(),
                    ..c
                }) as Box<dyn Runner>
            })
            .collect()
    }

    /// `go test -count=1` (so the test binary really runs, not a cached result) from its
    /// module's folder.
    fn alone(&self, project: &Project, root: &Path, unit: &str) -> (Vec<String>, PathBuf) {
        let mut flags = vec!["-count=1".to_string()];
        flags.extend(project.config.go_flags.iter().cloned());
        match gotest::commands(&project.go, &[unit], false, &flags).pop() {
            Some(cmd) => (cmd.argv, root.join(cmd.module)),
            None => (Vec::new(), root.to_path_buf()),
        }
    }

    fn name(&self) -> &'static str {
        "go"
    }

    /// `go list -deps -test` names, after each run, the files its test binaries linked
    /// outside the main module (`reads`).
    fn reads_outside(&self, _project: &Project, _root: &Path) -> Option<bool> {
        Some(true)
    }

    fn check_args(&self, project: &Project, args: &[String]) -> Result<(), String> {
        let goflags = crate::lang::suite::runner_env(project, "GOFLAGS");
        if (args.is_empty() && goflags.is_none()) || !crate::lang::suite::has_tests(project, self) {
            return Ok(());
        }
        let allowed = &project.config.go_allow_args;
        if let Some(goflags) = goflags {
            args::read_goflags(&goflags, allowed)?;
        }
        args::read(args, allowed).map(drop)
    }

    fn runner_argv(&self, project: &Project, _root: &Path) -> Vec<String> {
        let mut argv = vec!["go".to_string(), "test".to_string()];
        argv.extend(project.config.go_flags.iter().cloned());
        argv
    }

    /// The `go` on `PATH`, unless the unit's module (or the workspace) replaces a module with
    /// one outside the repository, whose code gate does not hash.
    fn toolchain(&self, project: &Project, _root: &Path, unit: &str) -> Result<String, String> {
        let dir = unit.trim_start_matches("./");
        let applies = |file: &String| {
            let module = crate::path::parent(file);
            crate::path::file_name(file) == "go.work"
                || module.is_empty()
                || dir == module
                || dir.starts_with(&format!("{module}/"))
        };
        if let Some((file, to)) = project.go.outside.iter().find(|(f, _)| applies(f)) {
            return Err(format!(
                "{file}: replace => {to}: a module outside the repository, whose code gate does not hash"
            ));
        }
        Ok("go".to_string())
    }

    fn toolchain_identity(
        &self,
        _name: &str,
        root: &Path,
        state: &Path,
        env: &BTreeMap<String, String>,
    ) -> Result<String, String> {
        toolchain::identity(root, state, env)
    }
}
