//! A real bare remote and a clone of it, driven with the git command line (pushes run the real
//! hook, which runs the real `gate` binary and real pytest).

use crate::support::fixture;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub(crate) struct Remote {
    pub dir: tempfile::TempDir,
    pub bare: PathBuf,
    pub clone: PathBuf,
}

/// What a command printed (stdout and stderr together) and whether it succeeded.
pub(crate) struct Ran {
    pub ok: bool,
    pub code: Option<i32>,
    pub text: String,
    /// stdout alone (a JSON report).
    pub stdout: String,
}

impl From<Output> for Ran {
    fn from(out: Output) -> Self {
        Ran {
            ok: out.status.success(),
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            text: format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        }
    }
}

pub(crate) fn gate_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_gate"))
}

impl Remote {
    /// A bare remote whose `master` holds the fixture, cloned (so `origin/HEAD` exists).
    pub(crate) fn with_fixture(name: &str) -> Remote {
        let dir = tempfile::tempdir().unwrap();
        let bare = dir.path().join("remote.git");
        let seed = dir.path().join("seed");
        let r = Remote {
            bare: bare.clone(),
            clone: dir.path().join("clone"),
            dir,
        };
        r.git_in(
            r.dir.path(),
            &["init", "-q", "--bare", "-b", "master", "remote.git"],
        );
        crate::support::copy_tree(&fixture(name), &seed);
        r.git_in(&seed, &["init", "-q", "-b", "master"]);
        r.git_in(&seed, &["add", "-A"]);
        r.git_in(&seed, &["commit", "-q", "-m", "initial"]);
        r.git_in(&seed, &["push", "-q", bare.to_str().unwrap(), "master"]);
        r.git_in(r.dir.path(), &["clone", "-q", "remote.git", "clone"]);
        r
    }

    fn env(&self, cmd: &mut Command) {
        cmd.env("HOME", self.dir.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "gate test")
            .env("GIT_AUTHOR_EMAIL", "test@example.com")
            .env("GIT_COMMITTER_NAME", "gate test")
            .env("GIT_COMMITTER_EMAIL", "test@example.com")
            .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
            .env("NO_COLOR", "1")
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env_remove("GATE_DECISION");
    }

    /// Runs git in `dir`; panics with its output when it fails.
    pub(crate) fn git_in(&self, dir: &Path, args: &[&str]) -> String {
        let ran = self.try_git_in(dir, args, &[]);
        assert!(ran.ok, "git {args:?} failed: {}", ran.text);
        ran.text
    }

    pub(crate) fn try_git_in(&self, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Ran {
        let mut cmd = Command::new("git");
        cmd.args(args).current_dir(dir);
        self.env(&mut cmd);
        cmd.envs(env.iter().copied());
        cmd.output().unwrap().into()
    }

    /// git in the clone.
    pub(crate) fn git(&self, args: &[&str]) -> String {
        self.git_in(&self.clone, args)
    }

    /// `git push <args>` from the clone, whatever the outcome.
    pub(crate) fn push(&self, args: &[&str], env: &[(&str, &str)]) -> Ran {
        let mut all = vec!["push"];
        all.extend(args);
        self.try_git_in(&self.clone, &all, env)
    }

    /// The commit a ref of the bare remote points at, if it exists.
    pub(crate) fn remote_ref(&self, name: &str) -> Option<String> {
        let ran = self.try_git_in(&self.bare, &["rev-parse", "--verify", "-q", name], &[]);
        ran.ok.then(|| ran.text.trim().to_string())
    }

    pub(crate) fn head(&self) -> String {
        self.git(&["rev-parse", "HEAD"]).trim().to_string()
    }

    pub(crate) fn write(&self, path: &str, content: &str) {
        let full = self.clone.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, content).unwrap();
    }

    pub(crate) fn append(&self, path: &str, content: &str) {
        let old = std::fs::read_to_string(self.clone.join(path)).unwrap();
        self.write(path, &format!("{old}{content}"));
    }

    pub(crate) fn commit(&self, message: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", message]);
    }

    /// `gate <args>` (the test build) in the clone.
    pub(crate) fn gate(&self, args: &[&str]) -> Ran {
        self.gate_in(&self.clone, args)
    }

    /// `gate <args>` (the test build) in another checkout of the remote.
    pub(crate) fn gate_in(&self, dir: &Path, args: &[&str]) -> Ran {
        let mut cmd = Command::new(gate_bin());
        cmd.args(args).current_dir(dir);
        self.env(&mut cmd);
        cmd.output().unwrap().into()
    }

    /// Installs the hook with `gate install-hook`, as a user would.
    pub(crate) fn install_hook(&self) {
        let ran = self.gate(&["install-hook"]);
        assert!(ran.ok, "{}", ran.text);
    }
}

/// How many pytest sessions a run's output shows.
pub(crate) fn sessions(text: &str) -> usize {
    text.matches("test session starts").count()
}
