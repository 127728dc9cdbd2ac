//! `gate audit`: trace the tests of the working tree, compare with the graph, print the gaps
//! and the rules that close them.

use crate::audit::{self, Audit, Observations};
use crate::error::{Error, Result};
use crate::exit_codes;
use crate::project::Project;
use crate::repo::{self, snapshot::Snapshot};
use crate::run::events::Trace;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::Path;

pub(super) struct Args<'a> {
    pub tests: Option<&'a str>,
    pub jobs: Option<usize>,
    pub json: bool,
    pub out: Option<&'a Path>,
    pub fresh: bool,
    pub db: Option<&'a str>,
}

pub(super) fn run(dir: &Path, args: &Args<'_>) -> Result<u8> {
    let repo = repo::open(dir)?;
    let root = repo::workdir(&repo)?;
    let snapshot = Snapshot::of_workdir(&repo)?;
    let project = Project::load(&repo, &snapshot, &[], &mut super::warn)?;
    let before: Option<Observations> = match args.out {
        Some(path) if path.exists() => Some(
            serde_json::from_slice(
                &std::fs::read(path).map_err(|e| Error::io(path, "cannot read", e))?,
            )
            .map_err(|e| {
                Error::Usage(format!(
                    "{}: not observations gate wrote ({e}); move it aside or choose another --out",
                    path.display()
                ))
            })?,
        ),
        _ => None,
    };
    let jobs = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let traced = state(
        &repo,
        &format!(
            "{:?} {:?}",
            crate::lang::python::pytest::base_argv(&project.config, &project.framework, &root),
            project.config.env
        ),
    )?;
    let opts = audit::Options {
        files: &snapshot.files,
        tests: args.tests,
        jobs,
        fresh: args.fresh,
        state: repo::state_dir(&repo)
            .join("audit")
            .join(&traced.fingerprint),
        progress: true,
    };
    let tree = snapshot.describe();
    let (mut result, observations) = audit::audit(&project, &root, &tree, &opts)?;
    if let Some(before) = &before {
        result.since = Some(audit::since(before, &observations));
    }
    keep(
        &repo,
        &project,
        args.db,
        &result,
        traced.committed.as_ref(),
        &observations,
    );
    if let Some(path) = args.out {
        let kept = Observations {
            version: audit::AUDIT_VERSION,
            tree: tree.clone(),
            tests: observations,
        };
        let text = serde_json::to_string_pretty(&kept).expect("observations serialize");
        std::fs::write(path, text + "\n")
            .map_err(|e| Error::io(path, "cannot write the observations", e))?;
    }
    let mut out = std::io::stdout().lock();
    let written = if args.json {
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&result).expect("audits serialize")
        )
    } else {
        print(&mut out, &result)
    };
    crate::terminal::ignore_broken_pipe(written)?;
    Ok(if result.missed == 0 {
        exit_codes::OK
    } else {
        exit_codes::TESTS_FAILED
    })
}

/// What is traced: its identity — HEAD, every uncommitted change, and how tests run (`runner`,
/// the interpreter, `[env]`), so traces of one state are reused and any edit starts afresh —
/// and HEAD's tree id when the working tree is HEAD's, untracked files included: only then do
/// the traces describe a commit an export can be of.
struct State {
    fingerprint: String,
    /// HEAD's tree and commit ids.
    committed: Option<(String, String)>,
}

fn state(repo: &git2::Repository, runner: &str) -> Result<State> {
    let head = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    let root = repo::workdir(repo)?;
    let mut opts = git2::StatusOptions::new();
    opts.include_untracked(true).recurse_untracked_dirs(true);
    let statuses = repo
        .statuses(Some(&mut opts))
        .map_err(|e| Error::git("cannot read the working tree's status", e))?;
    let mut text = format!(
        "{}\n{runner}",
        head.as_ref()
            .map(|c| c.id().to_string())
            .unwrap_or_default()
    );
    for entry in statuses.iter() {
        let path = String::from_utf8_lossy(entry.path_bytes()).into_owned();
        let blob = git2::Oid::hash_file(git2::ObjectType::Blob, root.join(&path))
            .map(|o| o.to_string())
            .unwrap_or_else(|_| "gone".into());
        text.push_str(&format!("\n{path} {blob}"));
    }
    let fingerprint = git2::Oid::hash_object(git2::ObjectType::Blob, text.as_bytes())
        .map(|o| o.to_string())
        .map_err(|e| Error::git("cannot fingerprint the working tree", e))?;
    Ok(State {
        fingerprint,
        committed: head
            .filter(|_| statuses.is_empty())
            .map(|c| (c.tree_id().to_string(), c.id().to_string())),
    })
}

/// Keeps the tallies (`gate evaluate`'s graph completeness) and, of a committed tree, the
/// traces (an export's dependencies, and each unit's traced edges, which join the selection);
/// a store that cannot take them is a note, not a failed audit.
fn keep(
    repo: &git2::Repository,
    project: &Project,
    db: Option<&str>,
    result: &Audit,
    committed: Option<&(String, String)>,
    traces: &BTreeMap<String, BTreeSet<String>>,
) {
    let kept = crate::history::location(
        db,
        project.config.history.url.as_deref(),
        &repo::state_dir(repo),
    )
    .and_then(|at| {
        let mut store = crate::history::Store::open(&at)?;
        store.audited(
            &result.tree,
            (
                result.observed,
                result.covered,
                result.named_full,
                result.missed,
            ),
        )?;
        if let Some((tree, commit)) = committed {
            store.traced(tree, traces)?;
            // strace sees files, not which module's import read them.
            let read_by = BTreeMap::new();
            store.keep_traced(
                commit,
                &traced_edges(result, traces),
                &read_by,
                &BTreeMap::new(),
            )?;
        }
        Ok(())
    });
    match kept {
        Err(e) => super::warn(format!(
            "the audit was not kept in the store: {}",
            e.one_line()
        )),
        Ok(()) if committed.is_none() => tell!(
            "gate audit: the traces are not kept for exports: the working tree is not HEAD's (commit or stash its changes, untracked files included)"
        ),
        Ok(()) => {}
    }
}

/// Each unit's trace as traced edges: whole when its traced run exited 0 (a failing run may
/// have stopped before what it would have opened).
fn traced_edges(
    result: &Audit,
    traces: &BTreeMap<String, BTreeSet<String>>,
) -> BTreeMap<String, Trace> {
    let passed: BTreeSet<&str> = result
        .runs
        .iter()
        .filter(|r| r.exit_code == Some(0))
        .map(|r| r.test.as_str())
        .collect();
    traces
        .iter()
        .map(|(unit, files)| {
            let whole = passed.contains(unit.as_str());
            let files = files.clone();
            (unit.clone(), Trace { files, whole })
        })
        .collect()
}

fn print(out: &mut dyn Write, a: &Audit) -> std::io::Result<()> {
    writeln!(
        out,
        "gate audit: {} test file(s) ({} traced, {} kept from an earlier run) in {:.1} s — {}",
        a.tests,
        a.traced,
        a.reused,
        a.duration_ms as f64 / 1000.0,
        a.tree
    )?;
    writeln!(
        out,
        "  observed {} dependencies (test → repository file), {} of them on the {} file(s) every test opens",
        a.observed,
        a.shared.len() * a.tests,
        a.shared.len()
    )?;
    writeln!(
        out,
        "  covered by edges and rules: {}; named_full (runs everything by name): {} — graph completeness {:.1}%",
        a.covered,
        a.named_full,
        a.completeness * 100.0
    )?;
    writeln!(out, "  refused (safe, unbounded): {}", a.refused)?;
    if a.scanned > 0 {
        writeln!(
            out,
            "  not counted: {} other packages' _test.go files go opened only to read their imports",
            a.scanned
        )?;
    }
    writeln!(out, "  missed: {}", a.missed)?;
    if !a.shared.is_empty() {
        let shown: Vec<&str> = a.shared.iter().take(10).map(String::as_str).collect();
        let more = a.shared.len() - shown.len();
        writeln!(
            out,
            "opened by every test (the named_full set, {} files): {}{}",
            a.shared.len(),
            shown.join(", "),
            if more > 0 {
                format!(" … and {more} more (--json lists them)")
            } else {
                String::new()
            }
        )?;
    }
    findings(out, a)?;
    tail(out, a)
}

/// The misses and the unbounded files, with the rules that would bound them.
fn findings(out: &mut dyn Write, a: &Audit) -> std::io::Result<()> {
    if !a.misses.is_empty() {
        writeln!(
            out,
            "missed (a change to the file would not select the test):"
        )?;
        for m in &a.misses {
            if m.tests.len() == a.tests && a.tests > 1 {
                writeln!(out, "  every test read {} — {}", m.file, m.reason)?;
                continue;
            }
            for t in &m.tests {
                writeln!(out, "  {t} read {} — {}", m.file, m.reason)?;
            }
        }
    }
    if !a.unbounded.is_empty() {
        writeln!(
            out,
            "bounded only by a run-time-named import, or refused (safe; a [[loads]] rule narrows it):"
        )?;
        for u in &a.unbounded {
            writeln!(out, "  {} — read by {}", u.file, u.tests.join(", "))?;
        }
    }
    let rules: Vec<&str> = a
        .misses
        .iter()
        .chain(&a.unbounded)
        .map(|f| f.rule.as_str())
        .collect();
    if !rules.is_empty() {
        writeln!(out, "suggested rules for .gate.toml:\n")?;
        for r in rules {
            writeln!(out, "{r}\n")?;
        }
    }
    Ok(())
}

/// Over-selection and what changed since earlier observations.
fn tail(out: &mut dyn Write, a: &Audit) -> std::io::Result<()> {
    writeln!(
        out,
        "over-selection (informational): {} static (test, file) pair(s) no trace confirmed{}",
        a.over_selection.pairs,
        if a.over_selection.top.is_empty() {
            String::new()
        } else {
            format!(
                "; most: {}",
                a.over_selection
                    .top
                    .iter()
                    .take(5)
                    .map(|(f, n)| format!("{f} ({n})"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    )?;
    if let Some(s) = &a.since {
        writeln!(
            out,
            "since the earlier observations: {} new dependencies, {} gone",
            s.added.len(),
            s.removed.len()
        )?;
        for (t, f) in s.added.iter().take(20) {
            writeln!(out, "  + {t} → {f}")?;
        }
        for (t, f) in s.removed.iter().take(20) {
            writeln!(out, "  - {t} → {f}")?;
        }
    }
    Ok(())
}
