//! A real git repository in a temp dir, built from a fixture tree with fixed author and committer
//! dates and no global git config, and the real `gate` binary run inside it.

use assert_cmd::Command;
use git2::{IndexAddOption, Repository, Signature, Time};
use serde_json::Value;
use std::cell::Cell;
use std::path::{Path, PathBuf};

pub(crate) struct TestRepo {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub repo: Repository,
    /// This repository's own clock: its commit ids depend on its steps alone, not on the
    /// order the tests run in.
    clock: Cell<i64>,
}

pub(crate) fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

impl TestRepo {
    /// A repository whose first commit holds the fixture tree `name`.
    pub(crate) fn from_fixture(name: &str) -> TestRepo {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        copy_tree(&fixture(name), &root);
        let repo = Repository::init(&root).unwrap();
        repo.set_head("refs/heads/master").unwrap();
        let t = TestRepo {
            _dir: dir,
            root,
            repo,
            clock: Cell::new(1_700_000_000),
        };
        t.commit("initial");
        t
    }

    pub(crate) fn write(&self, path: &str, content: &str) -> &Self {
        let full = self.root.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, content).unwrap();
        self
    }

    pub(crate) fn append(&self, path: &str, content: &str) -> &Self {
        let old = std::fs::read_to_string(self.root.join(path)).unwrap();
        self.write(path, &format!("{old}{content}"))
    }

    pub(crate) fn remove(&self, path: &str) -> &Self {
        std::fs::remove_file(self.root.join(path)).unwrap();
        self
    }

    pub(crate) fn rename(&self, from: &str, to: &str) -> &Self {
        std::fs::rename(self.root.join(from), self.root.join(to)).unwrap();
        self
    }

    /// Stages everything (additions, edits, deletions) and commits with a fixed, rising date.
    pub(crate) fn commit(&self, message: &str) -> git2::Oid {
        let mut index = self.repo.index().unwrap();
        index.add_all(["*"], IndexAddOption::DEFAULT, None).unwrap();
        index.update_all(["*"], None).unwrap();
        index.write().unwrap();
        let tree = self.repo.find_tree(index.write_tree().unwrap()).unwrap();
        let now = self.clock.get();
        self.clock.set(now + 60);
        let when = Time::new(now, 0);
        let sig = Signature::new("gate test", "test@example.com", &when).unwrap();
        let parents: Vec<git2::Commit<'_>> = self
            .repo
            .head()
            .ok()
            .and_then(|h| h.peel_to_commit().ok())
            .into_iter()
            .collect();
        let parents: Vec<&git2::Commit<'_>> = parents.iter().collect();
        self.repo
            .commit(Some("HEAD"), &sig, &sig, message, &tree, &parents)
            .unwrap()
    }

    /// Merges branch `other` into the checked-out branch (a merge commit with a fixed date; the
    /// trees must not conflict) and checks the result out.
    pub(crate) fn merge(&self, other: &str, message: &str) -> git2::Oid {
        let theirs = self
            .repo
            .revparse_single(other)
            .unwrap()
            .peel_to_commit()
            .unwrap();
        let ours = self.repo.head().unwrap().peel_to_commit().unwrap();
        let mut index = self.repo.merge_commits(&ours, &theirs, None).unwrap();
        assert!(!index.has_conflicts(), "merging {other} conflicts");
        let tree = self
            .repo
            .find_tree(index.write_tree_to(&self.repo).unwrap())
            .unwrap();
        let now = self.clock.get();
        self.clock.set(now + 60);
        let sig = Signature::new("gate test", "test@example.com", &Time::new(now, 0)).unwrap();
        let id = self
            .repo
            .commit(Some("HEAD"), &sig, &sig, message, &tree, &[&ours, &theirs])
            .unwrap();
        self.repo
            .checkout_head(Some(git2::build::CheckoutBuilder::new().force()))
            .unwrap();
        id
    }

    pub(crate) fn branch(&self, name: &str) {
        let head = self.repo.head().unwrap().peel_to_commit().unwrap();
        self.repo.branch(name, &head, true).unwrap();
    }

    pub(crate) fn checkout(&self, name: &str) {
        let refname = format!("refs/heads/{name}");
        let obj = self.repo.revparse_single(&refname).unwrap();
        self.repo
            .checkout_tree(&obj, Some(git2::build::CheckoutBuilder::new().force()))
            .unwrap();
        self.repo.set_head(&refname).unwrap();
    }

    /// The real binary, run in the repository with a clean, isolated environment.
    pub(crate) fn gate(&self, args: &[&str]) -> Command {
        Command::from_std(self.gate_process(args))
    }

    /// As `gate`, as a plain process (to spawn it and hold its pipes).
    pub(crate) fn gate_process(&self, args: &[&str]) -> std::process::Command {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_gate"));
        cmd.args(args)
            .current_dir(&self.root)
            .env("HOME", self.root.parent().unwrap())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "gate test")
            .env("GIT_AUTHOR_EMAIL", "test@example.com")
            .env("NO_COLOR", "1")
            .env("PYTHONDONTWRITEBYTECODE", "1");
        cmd
    }

    /// `gate <args> --json --list`: the report, whatever the exit code.
    pub(crate) fn report(&self, args: &[&str]) -> Value {
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--json", "--list"]);
        let out = self.gate(&all).output().unwrap();
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "not JSON ({e}): {}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        })
    }
}

/// The selected test paths of a report.
pub(crate) fn selected(report: &Value) -> Vec<String> {
    report["selected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["path"].as_str().unwrap().to_string())
        .collect()
}

/// The row of one changed file.
pub(crate) fn row<'a>(report: &'a Value, path: &str) -> &'a Value {
    report["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["path"] == path)
        .unwrap_or_else(|| panic!("no row for {path}: {report:#}"))
}

pub(crate) fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

pub(crate) fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// What a finished command printed, stdout then stderr.
pub(crate) fn text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Appended to the shop fixture's `src/shop/money.py`: every test that reaches it fails.
pub(crate) const BREAK_MONEY: &str = "\n\ndef to_cents(amount):\n    return -1\n";

/// Breaks `src/shop/money.py` in a new commit and gates it: the run fails (exit 1) and each of
/// `failing` (pytest ids) is among the failures. What was printed, for more checks.
pub(crate) fn breaking_money_fails(t: &TestRepo, failing: &[&str]) -> String {
    t.append("src/shop/money.py", BREAK_MONEY);
    t.commit("break money");
    let out = t.gate(&["--affected", "HEAD~1...HEAD"]).output().unwrap();
    let all = text(&out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    for id in failing {
        assert!(all.contains(&format!("FAILED {id}")), "{id}: {all}");
    }
    all
}

/// Runs the shell block after `<!-- NAME -->` in the guide's page `docs/src/PAGE` verbatim but
/// for its build line (the binary under test is first on PATH), in a clean environment with
/// `scratch`'s HOME, on the store `db` (`GATE_DB`; none: the default SQLite store), from the
/// repository's root as the page tells its reader. It echoes the folder it ended in as
/// `walk-through dir: …`. The block is read from the page the reader reads, so the page
/// cannot drift from what runs.
pub(crate) fn guide_block(
    page: &str,
    name: &str,
    scratch: &TestRepo,
    db: Option<&str>,
) -> std::process::Output {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs/src")
        .join(page);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("the guide's page {}: {e}", path.display()));
    let block = text
        .split(&format!("<!-- {name} -->\n```sh\n"))
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .unwrap_or_else(|| panic!("docs/src/{page} holds the block {name}"));
    let (build, script) = block.split_once('\n').unwrap();
    assert!(build.starts_with("cargo build --release"), "{build}");
    let bin = Path::new(env!("CARGO_BIN_EXE_gate")).parent().unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let mut cmd = std::process::Command::new("bash");
    cmd.arg("-c")
        .arg(format!("{script}\necho \"walk-through dir: $PWD\""))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("PATH", path)
        .env("HOME", scratch.root.parent().unwrap())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("NO_COLOR", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("GITHUB_RUN_ID")
        .env_remove("GITHUB_RUN_ATTEMPT");
    match db {
        Some(url) => cmd.env("GATE_DB", url),
        None => cmd.env_remove("GATE_DB"),
    };
    cmd.output().unwrap()
}

/// splitmix64: a seeded sequence, the same on every machine, for the tests that generate a
/// space of cases (`load_space`, `path_space`, `go_anchors`).
pub(crate) struct Rng(pub u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub(crate) fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }

    pub(crate) fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}
