//! `go test`: one command per module, run from the module's folder, naming the selected
//! packages (`./internal/cart`), so tests a change added run too. The whole suite by name is
//! `./...`.

use super::pytest::Outcome;
use crate::analyze::gomod::GoLayout;
use crate::error::Result;
use crate::graph;
use crate::repo::checkout::Workspace;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct GoCommand {
    /// The module folder the command runs in (`""`: the repository root).
    pub module: String,
    pub argv: Vec<String>,
}

/// The commands for the selected Go test units (`./dir`), or for every module's `./...`.
pub fn commands(
    layout: &GoLayout,
    units: &[&str],
    whole_suite: bool,
    flags: &[String],
) -> Vec<GoCommand> {
    let mut by_module: BTreeMap<String, Vec<String>> = BTreeMap::new();
    if whole_suite {
        for m in &layout.modules {
            if m.root.split('/').any(|d| d == "vendor" || d == "testdata") {
                continue;
            }
            by_module
                .entry(m.root.clone())
                .or_default()
                .push("./...".into());
        }
    } else {
        for unit in units {
            let dir = graph::go_dir_of(unit);
            // A package outside every module still runs (from the root): go itself then says
            // what is wrong, rather than gate leaving the package out.
            let root = layout
                .module_of(&format!("{dir}/x"))
                .map(|m| m.root.clone())
                .unwrap_or_default();
            let rel = dir
                .strip_prefix(&root)
                .unwrap_or(dir)
                .trim_start_matches('/')
                .to_string();
            let arg = if rel.is_empty() {
                ".".to_string()
            } else {
                format!("./{rel}")
            };
            by_module.entry(root).or_default().push(arg);
        }
    }
    by_module
        .into_iter()
        .map(|(module, packages)| GoCommand {
            module,
            argv: ["go".to_string(), "test".to_string()]
                .into_iter()
                .chain(flags.iter().cloned())
                .chain(packages)
                .collect(),
        })
        .collect()
}

/// Runs one `go test` command in its module's folder. go exits 1 when a test or a build
/// failed; anything else (2: bad flags) is a broken run.
pub fn run(
    argv: &[String],
    env: &BTreeMap<String, String>,
    module: &Workspace,
    root: &Path,
    quiet_stdout: bool,
) -> Result<Outcome> {
    Ok(
        match super::exit_code(argv, env, module, root, quiet_stdout)? {
            Some(0) => Outcome::Passed,
            Some(1) => Outcome::Failed(1),
            other => Outcome::Broken(other),
        },
    )
}
