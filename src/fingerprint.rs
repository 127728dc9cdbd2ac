//! A test's input fingerprint: a hash of everything that can change its outcome — the blob of
//! every file it depends on (the relation the selection walks, forwards: imports, parent
//! packages, conftests, every reference edge, `[[depends]]` rules), the files whose change is
//! the whole suite, the runner's argv and `[env]`, the environment variables that change a
//! run or that a file of the closure reads by a literal name (`os.environ["X"]`,
//! `os.getenv("X")`, `os.Getenv("X")`), and the interpreter's or toolchain's identity. An input gate cannot hash makes the
//! fingerprint unknown, with why: an unknown fingerprint is never reused (part 11's ledger).

use crate::graph::{Direction, Node};
use crate::project::Project;
use crate::repo::snapshot::{LinkTarget, Snapshot};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The environment variables that change any run, whatever the tests read.
pub(crate) const RUN_ENV: &[&str] = &[
    "PYTHONPATH",
    "PYTHONHASHSEED",
    "PYTHONWARNINGS",
    "PYTEST_ADDOPTS",
    "PYTEST_PLUGINS",
    "GOFLAGS",
    "GOOS",
    "GOARCH",
    "CGO_ENABLED",
    "GOEXPERIMENT",
];

/// What kind of input a line of the fingerprint is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Kind {
    /// A file the test depends on, through the graph or a `[[depends]]` rule.
    File,
    /// A file whose change is the whole suite (pyproject.toml, a lock file, go.mod …).
    WholeSuite,
    /// The runner's argv and `[env]`.
    Runner,
    /// An environment variable that changes a run (its value hashed, never shown).
    Env,
    /// The interpreter or toolchain: its version and installed packages.
    Toolchain,
}

/// One input and its hash.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub(crate) struct Input {
    pub kind: Kind,
    pub name: String,
    pub hash: String,
}

/// A test's fingerprint: its inputs, and the hash binding them — none when an input could not
/// be hashed, with each reason.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Fingerprint {
    pub test: String,
    pub digest: Option<String>,
    pub inputs: Vec<Input>,
    pub unknown: Vec<String>,
}

/// The interpreter's and toolchain's identities, asked once per process (a process each),
/// and the facts cache, read once when a file's facts are not in the project (a graph
/// patched from the last one holds only the changed files' facts).
#[derive(Default)]
pub(crate) struct Toolchains {
    python: BTreeMap<String, Result<String, String>>,
    go: Option<Result<String, String>>,
    facts: Option<crate::cache::facts::Cache>,
    /// The whole-suite files' inputs: the same for every test of the tree.
    whole_suite: Option<(Vec<Input>, Vec<String>)>,
    /// The variables each file reads by name, once per file.
    env: BTreeMap<String, Vec<String>>,
}

impl Toolchains {
    /// `python`'s version and every installed distribution (name and version, from its
    /// environment's metadata), hashed.
    fn python(&mut self, python: &str, root: &Path) -> Result<String, String> {
        self.python
            .entry(python.to_string())
            .or_insert_with(|| {
                identity(
                    &[
                        python,
                        "-c",
                        "import sys, importlib.metadata as m\n\
                         print(sys.version)\n\
                         print(sys.implementation.cache_tag)\n\
                         for d in sorted((d.metadata['Name'] or '').lower() + ' ' + d.version for d in m.distributions()):\n    print(d)",
                    ],
                    root,
                )
            })
            .clone()
    }

    /// `go env` values that change a build and a test run, hashed.
    fn go(&mut self, root: &Path) -> Result<String, String> {
        self.go
            .get_or_insert_with(|| {
                identity(
                    &[
                        "go",
                        "env",
                        "GOVERSION",
                        "GOOS",
                        "GOARCH",
                        "CGO_ENABLED",
                        "GOFLAGS",
                        "GOEXPERIMENT",
                        "GOAMD64",
                        "GOARM64",
                        "GOTOOLCHAIN",
                    ],
                    root,
                )
            })
            .clone()
    }
}

/// The hash of what `argv` prints, or why it could not be asked.
fn identity(argv: &[&str], root: &Path) -> Result<String, String> {
    let out = std::process::Command::new(argv[0])
        .args(&argv[1..])
        .current_dir(root)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("`{}` cannot be asked its identity: {e}", argv[0]))?;
    if !out.status.success() {
        return Err(format!(
            "`{}` did not say its identity (exit {:?})",
            argv[0],
            out.status.code()
        ));
    }
    Ok(hash(&out.stdout))
}

fn hash(bytes: &[u8]) -> String {
    format!("{:032x}", xxhash_rust::xxh3::xxh3_128(bytes))
}

/// The fingerprint of `test` (a test file or Go test unit) in `project`'s tree.
pub(crate) fn of_test(
    repo: &git2::Repository,
    snapshot: &Snapshot,
    project: &Project,
    test: &str,
    root: &Path,
    toolchains: &mut Toolchains,
) -> Fingerprint {
    let mut inputs: Vec<Input> = Vec::new();
    let mut unknown: Vec<String> = Vec::new();
    let graph = &project.graph;
    let files = closure(snapshot, project, test);
    for file in &files {
        if let Some(flags) = project.flagged.get(file) {
            for why in flags.reasons() {
                unknown.push(format!("{file}: {why}"));
            }
        }
        if let Some((_, line, text)) = graph.unbounded.iter().find(|(f, _, _)| f == file) {
            unknown.push(format!(
                "{file}:{line}: imports a module named at run time (`{text}`): what it loads is not bounded — add a [[loads]] rule"
            ));
        }
        inputs.push(Input {
            kind: Kind::File,
            name: file.clone(),
            hash: blob(repo, snapshot, file, &mut unknown),
        });
    }
    let (whole, whole_unknown) = toolchains.whole_suite.get_or_insert_with(|| {
        let mut why = Vec::new();
        let inputs = snapshot
            .files
            .iter()
            .filter(|f| project.config.whole_suite_reason(f).is_some())
            .map(|file| Input {
                kind: Kind::WholeSuite,
                name: file.clone(),
                hash: blob(repo, snapshot, file, &mut why),
            })
            .collect();
        (inputs, why)
    });
    inputs.extend(whole.iter().cloned());
    unknown.extend(whole_unknown.iter().cloned());
    let go = crate::graph::is_go_unit(test);
    let argv = runner(project, root, go);
    let env: Vec<String> = project
        .config
        .env
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    inputs.push(Input {
        kind: Kind::Runner,
        name: argv.join(" "),
        hash: hash(format!("{argv:?}\n{env:?}").as_bytes()),
    });
    inputs.extend(variables(repo, snapshot, project, &files, toolchains));
    match toolchain(&argv, go, root, toolchains) {
        Ok(input) => inputs.push(input),
        Err(why) => unknown.push(why),
    }
    inputs.sort();
    let digest = unknown.is_empty().then(|| {
        let text = serde_json::to_string(&inputs).expect("inputs serialize");
        hash(text.as_bytes())
    });
    Fingerprint {
        test: test.to_string(),
        digest,
        inputs,
        unknown,
    }
}

/// Every file the test depends on: the selection's relation walked forwards, the files of
/// `[[depends]]` rules naming it, and a Go package's own files.
fn closure(snapshot: &Snapshot, project: &Project, test: &str) -> Vec<String> {
    let graph = &project.graph;
    let walk = graph.walk(test, Direction::Dependencies, None);
    let mut files: Vec<String> = std::iter::once(test.to_string())
        .chain(walk.nodes(graph).map(str::to_string))
        .filter(|n| matches!(Node::of(n), Node::File(_)))
        .collect();
    for rule in project
        .config
        .depends
        .iter()
        .filter(|r| r.tests.is_match(test))
    {
        files.extend(
            snapshot
                .files
                .iter()
                .filter(|f| rule.on.is_match(f))
                .cloned(),
        );
    }
    if crate::graph::is_go_unit(test) {
        // The package's own files: what `go test ./dir` builds.
        let dir = crate::graph::go_dir_of(test);
        files.extend(
            snapshot
                .files
                .iter()
                .filter(|f| crate::path::parent(f) == dir && f.ends_with(".go"))
                .cloned(),
        );
    }
    files.sort();
    files.dedup();
    files
}

/// The runner's argv before the test arguments.
fn runner(project: &Project, root: &Path, go: bool) -> Vec<String> {
    if go {
        let mut argv = vec!["go".to_string(), "test".to_string()];
        argv.extend(project.config.go_flags.iter().cloned());
        argv
    } else {
        crate::run::pytest::base_argv(&project.config, &project.framework, root)
    }
}

/// The variables every run reads, and those a file of the closure reads by a literal name:
/// each value hashed (`unset` when it is).
fn variables(
    repo: &git2::Repository,
    snapshot: &Snapshot,
    project: &Project,
    files: &[String],
    toolchains: &mut Toolchains,
) -> Vec<Input> {
    let mut read: Vec<String> = Vec::new();
    for file in files {
        if let Some(facts) = project.analysis.facts.get(file) {
            read.extend(facts.env.iter().cloned());
        } else if crate::analyze::analysed(file) && snapshot.contains(file) {
            if !toolchains.env.contains_key(file) {
                let names = env_of(repo, snapshot, file, toolchains);
                toolchains.env.insert(file.clone(), names);
            }
            read.extend(toolchains.env[file].iter().cloned());
        }
    }
    let mut names: Vec<&str> = RUN_ENV.to_vec();
    names.extend(read.iter().map(String::as_str));
    names.sort_unstable();
    names.dedup();
    names
        .into_iter()
        .map(|name| Input {
            kind: Kind::Env,
            name: name.to_string(),
            hash: std::env::var_os(name)
                .map_or_else(|| "unset".to_string(), |v| hash(v.as_encoded_bytes())),
        })
        .collect()
}

/// The variables `file` reads by name: from the facts cache by blob id, else parsed.
fn env_of(
    repo: &git2::Repository,
    snapshot: &Snapshot,
    file: &str,
    toolchains: &mut Toolchains,
) -> Vec<String> {
    let cache = toolchains.facts.get_or_insert_with(|| {
        crate::cache::facts::load(
            &crate::cache::facts::path(&crate::repo::state_dir(repo)),
            &mut |_| {},
        )
    });
    if let Some(facts) = snapshot
        .known_blob(file)
        .and_then(|oid| cache.entries.get(&oid.to_string()))
    {
        return facts.env.clone();
    }
    let Ok((oid, bytes)) = snapshot.read(repo, file) else {
        return Vec::new();
    };
    match cache.entries.get(&oid.to_string()) {
        Some(facts) => facts.env.clone(),
        None => crate::analyze::facts_of(file, &bytes).env,
    }
}

/// The interpreter's or toolchain's identity, or why it cannot be known.
fn toolchain(
    argv: &[String],
    go: bool,
    root: &Path,
    toolchains: &mut Toolchains,
) -> Result<Input, String> {
    let (name, hash) = if go {
        ("go".to_string(), toolchains.go(root)?)
    } else {
        let python = python_of(argv).ok_or_else(|| {
            format!(
                "the runner `{}` is not a Python interpreter gate can ask for its packages",
                argv.join(" ")
            )
        })?;
        let h = toolchains.python(&python, root)?;
        (python, h)
    };
    Ok(Input {
        kind: Kind::Toolchain,
        name,
        hash,
    })
}

/// A file's blob id; a file absent from the tree is an input too (it appearing changes the
/// fingerprint); a symlink that leaves the tree cannot be hashed.
fn blob(
    repo: &git2::Repository,
    snapshot: &Snapshot,
    file: &str,
    unknown: &mut Vec<String>,
) -> String {
    if let Some(text) = snapshot.links.get(file)
        && !matches!(
            crate::repo::snapshot::link_target(file, text),
            LinkTarget::Inside(_)
        )
    {
        unknown.push(format!(
            "{file}: a symlink that leaves the tree (-> {text}): what it reads is not in the tree"
        ));
    }
    if !snapshot.contains(file) {
        return "absent".into();
    }
    if let Some(oid) = snapshot.known_blob(file) {
        return oid.to_string();
    }
    match snapshot.read(repo, file) {
        Ok((oid, _)) => oid.to_string(),
        Err(e) => {
            unknown.push(format!("{file}: cannot be read ({e})"));
            "unreadable".into()
        }
    }
}

/// The interpreter a pytest/unittest/Django argv runs: `python3 -m pytest` → `python3`.
fn python_of(argv: &[String]) -> Option<String> {
    let first = argv.first()?;
    let name = Path::new(first).file_name()?.to_str()?;
    (name.starts_with("python") || name.starts_with("pypy")).then(|| first.clone())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_interpreter_of_a_runner() {
        let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            super::python_of(&argv(&["python3", "-m", "pytest"])).as_deref(),
            Some("python3")
        );
        assert_eq!(
            super::python_of(&argv(&[".venv/bin/python", "-m", "pytest"])).as_deref(),
            Some(".venv/bin/python")
        );
        assert_eq!(super::python_of(&argv(&["tox", "-e", "py"])), None);
    }
}
