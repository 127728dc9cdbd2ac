//! `gate plan`: analyse a tree, refresh the blob-id cache, and export the plans for review.

use crate::error::Result;
use crate::graph::EdgeKind;
use crate::plan::Plans;
use crate::project::Project;
use crate::repo::{self, range, snapshot::Snapshot};
use std::path::Path;

pub(super) fn run(dir: &Path, rev: Option<&str>, out: Option<&Path>) -> Result<u8> {
    let repo = repo::open(dir)?;
    let snapshot = match rev {
        Some(rev) => Snapshot::of_commit(&repo, range::commit(&repo, rev)?)?,
        None => Snapshot::of_workdir(&repo)?,
    };
    let project = match out {
        Some(_) => Project::load_with_facts(&repo, &snapshot, &mut super::warn)?,
        None => Project::load(&repo, &snapshot, &[], &mut super::warn)?,
    };
    // The plans are whole documents of every file and edge: made only to be written.
    if let Some(out) = out {
        let is_test = |p: &str| project.tests.contains(p);
        let plans = Plans::new(
            snapshot.describe(),
            &snapshot.links,
            &project.analysis,
            &project.graph,
            &project.roots,
            project.discovery.source.as_deref(),
            &is_test,
        );
        for path in plans.write(out)? {
            say!("wrote {}", path.display());
        }
    }
    let a = &project.analysis;
    let imports = project
        .graph
        .kinds()
        .filter(|&k| k == EdgeKind::Import)
        .count();
    let references = project.graph.kinds().filter(|k| k.is_reference()).count();
    let count = |is: fn(&str) -> bool| a.blobs.keys().filter(|p| is(p)).count();
    let python = count(crate::path::is_python);
    let go = count(crate::lang::go::gomod::is_go);
    let js = count(crate::lang::js::is_js);
    let text = count(crate::analyze::is_doctest_text);
    say!(
        "gate plan: {python} Python files, {go} Go files, {js} JavaScript and TypeScript files, {} shell scripts and {text} text files read for doctest examples ({} parsed, {} from cache), {} test files, {} import edges, {} reference edges, {} flagged ({})",
        a.blobs.len() - python - go - js - text,
        a.parsed,
        a.cached,
        project.tests.len(),
        imports,
        references,
        project.flagged.len(),
        snapshot.describe()
    );
    for (path, flags) in &project.flagged {
        say!("  flagged {path}: {}", flags.reasons().join("; "));
    }
    Ok(crate::exit_codes::OK)
}
