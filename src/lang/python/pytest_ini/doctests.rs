//! Which files pytest's doctest plugin collects (`--doctest-modules`, `--doctest-glob`): read
//! from `addopts` and from the runner's argv alike, so apart from the rest of the settings.

use super::Fnmatch;

/// Which files pytest's doctest plugin collects, from the options it is given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Doctests {
    pub modules: bool,
    /// `--doctest-glob` patterns; pytest's default when none is given.
    pub globs: Vec<String>,
}

impl Default for Doctests {
    fn default() -> Self {
        Doctests {
            modules: false,
            globs: vec!["test*.txt".to_string()],
        }
    }
}

impl Doctests {
    /// The options among `words` (`addopts`, or the runner's argv) added to these.
    pub(crate) fn read<'w>(&mut self, words: impl IntoIterator<Item = &'w str>) {
        let mut words = words.into_iter();
        let mut given = Vec::new();
        while let Some(word) = words.next() {
            if word == "--doctest-modules" {
                self.modules = true;
            } else if word == "--doctest-glob" {
                given.extend(words.next().map(str::to_string));
            } else if let Some(glob) = word.strip_prefix("--doctest-glob=") {
                given.push(glob.to_string());
            }
        }
        if !given.is_empty() {
            if self.globs == Doctests::default().globs {
                self.globs.clear();
            }
            self.globs.extend(given);
        }
    }

    /// The files these options make tests, compiled once for a walk of the tree.
    pub(crate) fn files(&self) -> DoctestFiles {
        DoctestFiles {
            modules: self.modules,
            globs: Fnmatch::new(self.globs.iter().map(String::as_str)),
        }
    }
}

pub(crate) struct DoctestFiles {
    modules: bool,
    globs: Fnmatch,
}

impl DoctestFiles {
    /// Whether pytest's doctest plugin collects `path` as a test file (where pytest walks):
    /// any module but `setup.py`, `__main__.py` and a conftest (whose own changes select
    /// every test below it) under `--doctest-modules`; any other file a glob matches.
    pub(crate) fn collects(&self, path: &str) -> bool {
        let name = crate::path::file_name(path);
        if path.ends_with(".py") {
            return self.modules && !matches!(name, "setup.py" | "__main__.py" | "conftest.py");
        }
        self.globs.is_match(path)
    }
}
