//! The whole-suite inputs every fingerprint shares: the files whose change is the whole suite,
//! and the pytest configuration found above the repository when its root does not end the
//! search.

use super::files::blob;
use super::{Input, Kind, Memo, Scope, hash, value_of};
use std::path::Path;

impl Scope<'_> {
    /// The whole-suite files' blobs, and why any cannot be hashed: once per run.
    pub(super) fn whole_suite<'m>(&self, memo: &'m mut Memo) -> &'m (Vec<Input>, Vec<String>) {
        // The kept list comes with the kept closures: only when this run builds them.
        let kept = memo.closures.as_ref().and_then(|c| c.whole_suite.clone());
        memo.whole_suite.get_or_insert_with(|| {
            let mut why = Vec::new();
            // Kept for this graph key, which covers the file set and the configuration.
            let files: Vec<String> = kept.unwrap_or_else(|| {
                let config = &self.project.config;
                let whole = |f: &&String| config.is_whole_suite(f);
                self.snapshot.files.iter().filter(whole).cloned().collect()
            });
            let mut inputs: Vec<Input> = files
                .iter()
                .map(|file| Input {
                    kind: Kind::WholeSuite,
                    name: file.clone(),
                    hash: blob(Some(self.repo), self.snapshot, self.root, file, &mut why)
                        .expect("read with the repository"),
                })
                .collect();
            // What a whole-suite file reads from the environment by name changes every run
            // (a Vitest configuration's `process.env.X`): each such variable is an input, and
            // one read by a name gate cannot know makes every fingerprint unknown.
            let mut read: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
            for file in &files {
                let Some(reads) = self.project.reads.get(file) else {
                    continue;
                };
                read.extend(reads.env.iter().map(String::as_str));
                for (line, text) in &reads.env_any {
                    why.push(format!(
                        "{file}:{line}: reads the environment by a name gate cannot know (`{text}`): no variable's value can stand for it"
                    ));
                }
            }
            inputs.extend(read.into_iter().map(|name| Input {
                kind: Kind::Env,
                name: name.to_string(),
                hash: value_of(name),
            }));
            // A pytest.ini or pyproject.toml at the root ends pytest's search there.
            let ends = ["pytest.ini", ".pytest.ini", "pyproject.toml"];
            if !ends.iter().any(|f| self.snapshot.contains(f)) {
                inputs.extend(above_root(self.root, &mut why));
            }
            (inputs, why)
        })
    }
}

/// What pytest reads above the repository: its rootdir search walks up from the tests'
/// common folder, so a `pytest.ini` (or `pyproject.toml`, `tox.ini`, `setup.cfg`) in a parent
/// folder configures the run when the repository has none, and a `conftest.py` there is loaded
/// by every test. Configuration files are hashed by content; a conftest cannot be bounded (it
/// imports what it likes), so it makes every fingerprint unknown. A few stats per run, when
/// the repository's own root does not end the search.
fn above_root(root: &Path, why: &mut Vec<String>) -> Vec<Input> {
    let mut inputs = Vec::new();
    for folder in root.ancestors().skip(1) {
        for name in [
            "pytest.ini",
            ".pytest.ini",
            "pyproject.toml",
            "tox.ini",
            "setup.cfg",
            "conftest.py",
        ] {
            let path = folder.join(name);
            let Ok(bytes) = std::fs::read(&path) else {
                continue;
            };
            if name == "conftest.py" {
                why.push(format!(
                    "{}: a conftest.py above the repository, loaded by every test: gate cannot bound it",
                    path.display()
                ));
            }
            inputs.push(Input {
                kind: Kind::WholeSuite,
                name: path.display().to_string(),
                hash: hash(&bytes),
            });
        }
    }
    inputs
}
