//! `gate explain PATH`: for a test, what it depends on; for any other file, which tests reach
//! it — each as the chain of edges with file:line that a selection would report.

use crate::error::{Error, Result};
use crate::graph::{Direction, Edge};
use crate::project::Project;
use crate::repo::{self, range, snapshot::Snapshot};
use crate::report::styles::Styles;
use crate::terminal::shown;
use owo_colors::OwoColorize;
use std::path::Path;

/// What to show of a path.
#[derive(Clone, Copy)]
pub(super) struct Show {
    /// A test's fingerprint instead of its dependencies.
    pub fingerprint: bool,
    pub json: bool,
}

pub(super) fn run(
    dir: &Path,
    path: &str,
    rev: Option<&str>,
    show: Show,
    styles: &Styles,
) -> Result<u8> {
    let repo = repo::open(dir)?;
    let snapshot = match rev {
        Some(rev) => Snapshot::of_commit(&repo, range::commit(&repo, rev)?)?,
        None => Snapshot::of_workdir(&repo)?,
    };
    let project = Project::load(&repo, &snapshot, &[], &mut super::warn)?;
    let normalized = crate::repo::pathspec::resolve(&repo, dir, path)?;
    // A Go package folder names its tests (`./internal/cart`), as `go test` does.
    let unit = crate::graph::go_tests(&normalized);
    let path = if !snapshot.contains(&normalized) && project.tests.contains(&unit) {
        unit
    } else {
        normalized
    };
    if !snapshot.contains(&path) && !project.tests.contains(&path) {
        return Err(Error::Usage(format!(
            "{path}: not a file of the {}",
            snapshot.describe()
        )));
    }
    let graph = &project.graph;
    let is_test = project.tests.contains(&path);
    if show.fingerprint {
        if !is_test {
            return Err(Error::Usage(format!(
                "{path}: not a test of the {} (a fingerprint is a test file's or Go test package's)",
                snapshot.describe()
            )));
        }
        let root = repo::workdir(&repo)?;
        let scope = crate::fingerprint::Scope {
            repo: &repo,
            snapshot: &snapshot,
            project: &project,
            root: &root,
        };
        let print = scope.of_test(&path, &mut crate::fingerprint::Memo::default());
        return fingerprint(&print, show.json, styles);
    }
    let direction = if is_test {
        Direction::Dependencies
    } else {
        Direction::Dependents
    };
    let walk = graph.walk(&path, direction, None);
    let render = |chain: Vec<Edge>| crate::graph::explain_chain(&chain);
    if is_test {
        // Go package nodes (`go:dir`) are how files reach tests, not files one can change.
        let files: Vec<&str> = walk
            .nodes(graph)
            .filter(|n| !matches!(crate::graph::Node::of(n), crate::graph::Node::GoPackage(_)))
            .collect();
        say!(
            "{} is a test; a change to any of these {} files selects it:",
            shown(&path).style(styles.bold),
            files.len()
        );
        for node in files {
            let mut chain = walk.chain(graph, node);
            chain.reverse();
            say!(
                "  {}\n      {}",
                shown(node),
                shown(&render(chain)).style(styles.dim)
            );
        }
    } else {
        let tests: Vec<&str> = walk
            .nodes(graph)
            .filter(|n| project.tests.contains(*n))
            .collect();
        say!(
            "{} is reached by {} test file(s):",
            shown(&path).style(styles.bold),
            tests.len()
        );
        for test in tests {
            say!(
                "  {}\n      {}",
                shown(test),
                shown(&render(walk.chain(graph, test))).style(styles.dim)
            );
        }
        for rule in project
            .config
            .depends
            .iter()
            .filter(|r| r.on.is_match(&path))
        {
            say!(
                "  [[depends]] rule {} selects tests matching {}",
                rule.index,
                rule.tests.text
            );
        }
        if let Some(reason) = project.config.whole_suite_reason(&path) {
            say!("  a change to it is named_full: {}", shown(reason));
        }
    }
    Ok(crate::exit_codes::OK)
}

/// Version of the `gate explain --fingerprint --json` document
/// (`plans/fingerprint.schema.json`).
const FINGERPRINT_VERSION: u32 = 1;

fn fingerprint(print: &crate::fingerprint::Fingerprint, json: bool, styles: &Styles) -> Result<u8> {
    if json {
        let doc = serde_json::json!({
            "version": FINGERPRINT_VERSION,
            "kind": "fingerprint",
            "gate": crate::version::ANALYZER,
            "fingerprint": print,
        });
        let doc = crate::terminal::sorted(doc);
        say!("{}", crate::terminal::json(&doc));
        return Ok(crate::exit_codes::OK);
    }
    match &print.digest {
        Some(d) => say!("{}: fingerprint {d}", shown(&print.test).style(styles.bold)),
        None => say!(
            "{}: fingerprint unknown — never reused",
            shown(&print.test).style(styles.bold)
        ),
    }
    // Most of the run's variables are unset: held all the same, said in one line (`--json`
    // lists each).
    let unset = |i: &&crate::fingerprint::Input| {
        i.kind == crate::fingerprint::Kind::Env && i.hash == crate::fingerprint::UNSET
    };
    for input in print.inputs.iter().filter(|i| !unset(i)) {
        let kind = serde_json::to_value(input.kind)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        say!(
            "  {kind:<11} {}  {}",
            shown(&input.name),
            input.hash.style(styles.dim)
        );
    }
    let unset: Vec<&str> = print
        .inputs
        .iter()
        .filter(unset)
        .map(|i| i.name.as_str())
        .collect();
    if !unset.is_empty() {
        say!(
            "  {:<11} {} unset (held unset: setting one changes the fingerprint): {}",
            "env",
            unset.len(),
            unset.join(", ")
        );
    }
    for why in &print.unknown {
        say!("  unknown: {}", shown(why));
    }
    say!(
        "gate explain: {} input(s){}",
        print.inputs.len(),
        if print.unknown.is_empty() {
            String::new()
        } else {
            format!(", {} unknown", print.unknown.len())
        }
    );
    Ok(crate::exit_codes::OK)
}
