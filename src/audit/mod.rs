//! `gate audit`: the graph measured against what the tests really open. Each test file runs
//! alone under a file-access tracer; every (test, file) it opened is checked against the
//! selection gate would make if that file changed. Misses come with a ready-to-paste rule.
//! Traces are kept per test under `.git/gate/audit/<tree fingerprint>/`, so an interrupted
//! audit resumes where it stopped.

pub(crate) mod trace;

use crate::error::{Error, Result};
use crate::graph::Direction;
use crate::project::Project;
use crate::repo::diff::{Change, Status};
use crate::verdict::{self, Verdict};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use trace::Observed;

pub(crate) const AUDIT_VERSION: u32 = 1;

/// The full result (`--json`, `plans/audit.schema.json`).
#[derive(Serialize)]
pub(crate) struct Audit {
    pub version: u32,
    pub gate: &'static str,
    pub tree: String,
    /// Test files audited: traced now, or kept from an earlier, interrupted audit.
    pub tests: usize,
    pub traced: usize,
    pub reused: usize,
    pub duration_ms: u64,
    /// Files every traced test opened (configuration, the root conftest): one named set, not
    /// a miss per test.
    pub shared: Vec<String>,
    /// Observed (test, file) dependencies (a test's own file is not counted).
    pub observed: usize,
    /// Files the Go toolchain opened only to scan them: other packages' `_test.go` files,
    /// read for their build constraints and imports, never compiled into the test.
    pub scanned: usize,
    /// Selected through edges or rules when the file changes.
    pub covered: usize,
    /// A change to the file is `named_full`: the plan names it as running everything.
    pub named_full: usize,
    /// Safe but unbounded: a change to the file is `refused` until a rule bounds it.
    pub refused: usize,
    pub missed: usize,
    /// (covered + named_full) / observed: the share of what runs really open that the plan
    /// accounts for.
    pub completeness: f64,
    /// Per file whose change would not select a test that opened it.
    pub misses: Vec<Finding>,
    /// Per file opened by tests whose change is refused, or is bounded only by the tests that
    /// reach a run-time-named import (`may_load`): `[[loads]]` would bound or narrow it.
    pub unbounded: Vec<Finding>,
    /// Static (test, file) pairs no trace confirmed: static selection over-approximates.
    pub over_selection: OverSelection,
    pub runs: Vec<Run>,
    /// What changed since the observations in `--out FILE`, when it held earlier ones.
    pub since: Option<Since>,
}

#[derive(Serialize)]
pub(crate) struct Finding {
    pub file: String,
    pub verdict: Verdict,
    /// Why the file's change would not (or not boundedly) select them.
    pub reason: String,
    pub tests: Vec<String>,
    /// A `.gate.toml` rule that makes the next audit cover these pairs.
    pub rule: String,
}

#[derive(Serialize)]
pub(crate) struct OverSelection {
    pub pairs: usize,
    /// Files with the most statically selected tests that never opened them.
    pub top: Vec<(String, usize)>,
}

#[derive(Serialize)]
pub(crate) struct Run {
    pub test: String,
    pub files: usize,
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    pub reused: bool,
}

#[derive(Serialize, Default)]
pub(crate) struct Since {
    pub added: Vec<(String, String)>,
    pub removed: Vec<(String, String)>,
}

/// The observations `--out` keeps: test → the repository files its run opened.
#[derive(Serialize, Deserialize)]
pub(crate) struct Observations {
    pub version: u32,
    pub tree: String,
    pub tests: BTreeMap<String, BTreeSet<String>>,
}

pub(crate) struct Options<'a> {
    pub tests: Option<&'a str>,
    pub jobs: usize,
    pub fresh: bool,
    /// Where traces of this tree are kept between runs.
    pub state: PathBuf,
    pub progress: bool,
    /// Every file of the audited tree: only opens of these count.
    pub files: &'a BTreeSet<String>,
}

/// Traces every selected test (in parallel, resuming earlier traces) and compares. Also gives
/// the observations themselves: test → the repository files its run opened.
pub(crate) fn audit(
    project: &Project,
    root: &Path,
    tree: &str,
    opts: &Options<'_>,
) -> Result<(Audit, BTreeMap<String, BTreeSet<String>>)> {
    let started = std::time::Instant::now();
    if !trace::available() {
        return Err(crate::run::RunnerError::Missing {
            tool: "strace",
            why: "gate audit traces each test with it (Debian: apt-get install strace)",
        }
        .into());
    }
    let tests = selected_tests(project, opts)?;
    if opts.fresh {
        let _ = std::fs::remove_dir_all(&opts.state);
    }
    std::fs::create_dir_all(&opts.state)
        .map_err(|e| Error::io(&opts.state, "cannot create the audit directory", e))?;
    let mut results: BTreeMap<String, (Observed, bool)> = BTreeMap::new();
    let mut todo = Vec::new();
    for test in &tests {
        match load_trace(&opts.state, test) {
            Some(o) => {
                results.insert(test.clone(), (o, true));
            }
            None => todo.push(test.clone()),
        }
    }
    let reused = results.len();
    for (test, result) in trace_all(project, root, opts, &todo) {
        results.insert(test, (result?, false));
    }
    let audit = compare(
        project,
        opts.files,
        tree,
        &results,
        reused,
        started.elapsed().as_millis() as u64,
    );
    let observations = results
        .into_iter()
        .map(|(t, (o, _))| (t, o.files))
        .collect();
    Ok((audit, observations))
}

/// The test files to audit: every test of the project, or those `--tests` matches.
fn selected_tests(project: &Project, opts: &Options<'_>) -> Result<Vec<String>> {
    let filter = match opts.tests {
        Some(g) => Some(
            crate::config::glob(g)
                .map_err(|e| Error::Usage(format!("--tests: bad glob `{g}`: {e}")))?
                .compile_matcher(),
        ),
        None => None,
    };
    let tests: Vec<String> = project
        .tests
        .iter()
        .filter(|t| filter.as_ref().is_none_or(|m| m.is_match(t)))
        .cloned()
        .collect();
    if tests.is_empty() {
        return Err(Error::Usage(match opts.tests {
            Some(g) => format!("--tests `{g}` matches no test file"),
            None => "no test files to audit".into(),
        }));
    }
    Ok(tests)
}

/// Traces each test of `todo` alone, `opts.jobs` at a time, keeping each trace taken; the
/// results in the order they finished.
fn trace_all(
    project: &Project,
    root: &Path,
    opts: &Options<'_>,
    todo: &[String],
) -> Vec<(String, Result<Observed>)> {
    let known = opts.files;
    let done = AtomicUsize::new(0);
    let next = AtomicUsize::new(0);
    let fresh: Mutex<Vec<(String, Result<Observed>)>> = Mutex::new(Vec::new());
    let total = todo.len();
    let last_line = Mutex::new(std::time::Instant::now());
    std::thread::scope(|scope| {
        for _ in 0..opts.jobs.max(1).min(total.max(1)) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(test) = todo.get(i) else { break };
                    let result = match crate::lang::suite::of_test_unit(test) {
                        Some(language) => {
                            let (argv, cwd) = language.alone(project, root, test);
                            trace::run(&argv, &project.config.env, &cwd, root, known, &opts.state)
                        }
                        None => Err(crate::error::Error::Internal(format!(
                            "{test} is no language's test"
                        ))),
                    };
                    if let Ok(o) = &result {
                        save_trace(&opts.state, test, o);
                    }
                    let n = done.fetch_add(1, Ordering::SeqCst) + 1;
                    if opts.progress {
                        progress(n, total, test, &last_line);
                    }
                    fresh
                        .lock()
                        .expect("no panics hold it")
                        .push((test.clone(), result));
                }
            });
        }
    });
    if opts.progress && std::io::stderr().is_terminal() && total > 0 {
        eprintln!();
    }
    fresh.into_inner().expect("threads joined")
}

fn progress(n: usize, total: usize, test: &str, last: &Mutex<std::time::Instant>) {
    if std::io::stderr().is_terminal() {
        let width = 30;
        let filled = n * width / total.max(1);
        eprint!(
            "\r\x1b[2Kgate audit: [{}{}] {n}/{total} {test}",
            "=".repeat(filled),
            " ".repeat(width - filled)
        );
        return;
    }
    // Not a terminal (CI logs): a line every 10 s, and the last one.
    let mut last = last.lock().expect("no panics hold it");
    if n == total || last.elapsed().as_secs() >= 10 {
        eprintln!("gate audit: {n}/{total} test files traced");
        *last = std::time::Instant::now();
    }
}

fn trace_path(state: &Path, test: &str) -> PathBuf {
    let id = git2::Oid::hash_object(git2::ObjectType::Blob, test.as_bytes())
        .map(|o| o.to_string())
        .unwrap_or_else(|_| test.replace('/', "_"));
    state.join(format!("{id}.json"))
}

fn load_trace(state: &Path, test: &str) -> Option<Observed> {
    serde_json::from_slice(&std::fs::read(trace_path(state, test)).ok()?).ok()
}

/// A trace that cannot be kept costs a re-run later, not correctness.
fn save_trace(state: &Path, test: &str, observed: &Observed) {
    let path = trace_path(state, test);
    if let Ok(bytes) = serde_json::to_vec(observed) {
        let _ = crate::cache::blocks::replace(&path, |f| std::io::Write::write_all(f, &bytes));
    }
}

/// What a file's change selects: (verdict, its reasons, the selected tests).
type Selection = (Verdict, String, BTreeSet<String>);

/// The observed (test, file) pairs sorted by what gate would do if the file changed.
#[derive(Default)]
struct Tally {
    observed: usize,
    scanned: usize,
    covered: usize,
    named_full: usize,
    refused: usize,
    missed: usize,
    misses: BTreeMap<String, (Verdict, String, Vec<String>)>,
    unbounded: BTreeMap<String, (Verdict, String, Vec<String>)>,
}

fn compare(
    project: &Project,
    files: &BTreeSet<String>,
    tree: &str,
    results: &BTreeMap<String, (Observed, bool)>,
    reused: usize,
    duration_ms: u64,
) -> Audit {
    let t = tally(project, results);
    let finding = |entry| finding(project, entry);
    Audit {
        version: AUDIT_VERSION,
        gate: crate::version::ANALYZER,
        tree: tree.to_string(),
        tests: results.len(),
        traced: results.len() - reused,
        reused,
        duration_ms,
        shared: shared_files(results).into_iter().collect(),
        observed: t.observed,
        scanned: t.scanned,
        covered: t.covered,
        named_full: t.named_full,
        refused: t.refused,
        missed: t.missed,
        completeness: if t.observed == 0 {
            1.0
        } else {
            (t.covered + t.named_full) as f64 / t.observed as f64
        },
        misses: t.misses.into_iter().map(finding).collect(),
        unbounded: t.unbounded.into_iter().map(finding).collect(),
        over_selection: over_selection(project, files, results),
        runs: results
            .iter()
            .map(|(test, (o, reused))| Run {
                test: test.clone(),
                files: o.files.len(),
                exit_code: o.exit_code,
                duration_ms: o.duration_ms,
                reused: *reused,
            })
            .collect(),
        since: None,
    }
}

/// Each observed (test, file) pair against what gate selects when the file changes.
fn tally(project: &Project, results: &BTreeMap<String, (Observed, bool)>) -> Tally {
    let ctx = project.context();
    let mut selection: BTreeMap<String, Selection> = BTreeMap::new();
    let mut select = |file: &str| {
        selection
            .entry(file.to_string())
            .or_insert_with(|| {
                let change = Change {
                    path: crate::path::RepoPath::new(file),
                    status: Status::Modified,
                    other: None,
                    non_utf8: false,
                };
                let decided = verdict::decide(&[change], &ctx, false);
                let row = &decided.rows[0];
                (
                    row.verdict,
                    row.reasons.join("; "),
                    decided.selected.into_keys().collect(),
                )
            })
            .clone()
    };
    let mut t = Tally::default();
    for (test, (o, _)) in results {
        for file in o.files.iter().filter(|f| *f != test) {
            // Another package's `_test.go` that go opens only to read its imports.
            if crate::graph::is_go_unit(test)
                && file.ends_with("_test.go")
                && crate::path::parent(file) != crate::graph::go_dir_of(test)
            {
                t.scanned += 1;
                continue;
            }
            t.observed += 1;
            let (v, reason, selected) = select(file);
            let entry = |map: &mut BTreeMap<String, (Verdict, String, Vec<String>)>, why| {
                map.entry(file.clone())
                    .or_insert((v, why, Vec::new()))
                    .2
                    .push(test.clone());
            };
            // Selected through a run-time-named import (`may_load`): safe, and `[[loads]]`
            // would narrow it — suggested with the unbounded files.
            if v != Verdict::Refused && reason.contains(" imports a module named at run time (") {
                entry(&mut t.unbounded, reason.clone());
            }
            if v == Verdict::NamedFull {
                t.named_full += 1;
            } else if v == Verdict::Refused {
                t.refused += 1;
                entry(&mut t.unbounded, reason);
            } else if selected.contains(test) {
                t.covered += 1;
            } else {
                t.missed += 1;
                let why = match v {
                    Verdict::Inert => "inert, and no edge reaches it".to_string(),
                    _ if selected.is_empty() => "no edge reaches it".to_string(),
                    _ => format!(
                        "its edges reach {} other test(s), not this one",
                        selected.len()
                    ),
                };
                entry(&mut t.misses, why);
            }
        }
    }
    t
}

/// The files every traced test opened (pytest's configuration, the root conftest, the core).
fn shared_files(results: &BTreeMap<String, (Observed, bool)>) -> BTreeSet<String> {
    if results.len() < 2 {
        return BTreeSet::new();
    }
    let mut sets = results.values().map(|(o, _)| &o.files);
    let first = sets.next().cloned().unwrap_or_default();
    sets.fold(first, |acc, s| acc.intersection(s).cloned().collect())
}

/// A missed or unbounded file, with the rule that would bound it.
fn finding(
    project: &Project,
    (file, (verdict, reason, tests)): (String, (Verdict, String, Vec<String>)),
) -> Finding {
    // A module refused because a run-time-named import may load it is bounded by saying what
    // that import loads (which a trace cannot tell), not by another edge.
    let loaders: BTreeSet<&String> = project
        .graph
        .unbounded
        .iter()
        .map(|(f, _, _)| f)
        .filter(|f| reason.contains(&format!("{f} line ")))
        .collect();
    let rule = if loaders.is_empty() {
        depends_rule(&tests, &file)
    } else {
        loaders
            .iter()
            .map(|f| {
                format!(
                    "[[loads]]\nfile = {:?}\nmodules = []  # globs of the modules it can load; [] if none of this tree",
                    crate::config::glob_literal(f)
                )
            })
            .collect::<Vec<_>>()
            .join("\n\n")
    };
    Finding {
        file,
        verdict,
        reason,
        tests,
        rule,
    }
}

/// Per traced test, the files whose edges reach it that its run never opened.
fn over_selection(
    project: &Project,
    files: &BTreeSet<String>,
    results: &BTreeMap<String, (Observed, bool)>,
) -> OverSelection {
    let mut over: BTreeMap<String, usize> = BTreeMap::new();
    for (test, (o, _)) in results {
        let walk = project.graph.walk(test, Direction::Dependencies, None);
        for file in walk.nodes(&project.graph) {
            if files.contains(file) && file != test && !o.files.contains(file) {
                *over.entry(file.to_string()).or_default() += 1;
            }
        }
    }
    let mut top: Vec<(String, usize)> = over.iter().map(|(f, n)| (f.clone(), *n)).collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    top.truncate(10);
    OverSelection {
        pairs: over.values().sum(),
        top,
    }
}

/// `[[depends]]` that selects `tests` when `file` changes.
fn depends_rule(tests: &[String], file: &str) -> String {
    let literal = |p: &str| format!("{:?}", crate::config::glob_literal(p));
    let tests = if tests.len() == 1 {
        literal(&tests[0])
    } else {
        format!(
            "[{}]",
            tests
                .iter()
                .map(|t| literal(t))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    format!("[[depends]]\ntests = {tests}\non = {}", literal(file))
}

/// (test, file) pairs observed now but not before, and before but not now.
pub(crate) fn since(before: &Observations, now: &BTreeMap<String, BTreeSet<String>>) -> Since {
    let pairs = |m: &BTreeMap<String, BTreeSet<String>>| -> BTreeSet<(String, String)> {
        m.iter()
            .flat_map(|(t, fs)| fs.iter().map(move |f| (t.clone(), f.clone())))
            .collect()
    };
    let (a, b) = (pairs(&before.tests), pairs(now));
    Since {
        added: b.difference(&a).cloned().collect(),
        removed: a.difference(&b).cloned().collect(),
    }
}
