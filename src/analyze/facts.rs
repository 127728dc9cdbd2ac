//! Facts: what one file's text says about its dependencies — imports, strings that may name a
//! module or a file (with where they stood), path expressions, dynamic imports, apps — and why
//! they may be incomplete. Every analyser (Python, Go, shell) gives them; they depend on the text
//! alone, so they are cached by blob id, and meaning (which file a name resolves to) is decided
//! later, in `graph`.

use super::paths::{self, PathValue};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Facts {
    pub imports: Vec<Import>,
    pub strings: Vec<StringRef>,
    /// Path expressions that are not a single literal: `Path(__file__).parent / "data.json"`,
    /// `os.path.join("tests", "data")`, `importlib.resources.files("pkg") / "x.json"`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<PathRef>,
    /// `import_module(f"pkg.{name}")`, `__import__(name)`: the constant prefix, or none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dynamic_imports: Vec<DynamicImport>,
    /// Folders put on `sys.path` (`sys.path.insert(0, str(HERE / "apps"))`,
    /// `monkeypatch.syspath_prepend(…)`, `site.addsitedir(…)`): import roots, not data.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sys_paths: Vec<PathRef>,
    /// Lines that create a Flask app (`Flask(__name__)`): it reads `templates/` and `static/`
    /// beside the file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub apps: Vec<u32>,
    /// Lines holding `ERROR`/`MISSING` nodes: what was recovered is kept, and the file is flagged.
    pub parse_errors: Vec<u32>,
    /// Lines whose expressions nest deeper than gate evaluates (`paths::MAX_DEPTH`): path
    /// expressions there are unknown, and the file is flagged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub too_deep: Vec<u32>,
    /// Set when the file is larger than `MAX_PARSED`: the first line not parsed. Past it only
    /// import statements are found (by a line scan), and the file is flagged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut_at: Option<u32>,
    /// A pytest-mypy-plugins case file: mypy type-checks its snippets, so it reads every stub
    /// (`.pyi`, `py.typed`) of the tree besides what the snippets import.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub type_check: bool,
    /// Environment variables read by a literal name (`os.environ["X"]`, `os.getenv("X")`,
    /// `os.Getenv("X")`): inputs of the tests that run this file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    /// Environment reads gate cannot name, `(line, text)`: a computed name (`os.environ[k]`,
    /// `os.Getenv(v)`) or the whole environment (`dict(os.environ)`, `os.Environ()`, an
    /// alias). Whatever the tests that run this file read is unknown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env_any: Vec<(u32, String)>,
    /// The imports of docstring examples (`>>> from pkg import x`), or of a text file's
    /// examples: edges only from a file pytest collects as a doctest, whose run executes them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub doctest_imports: Vec<Import>,
    /// Go: the package clause (`cart` or `cart_test`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
}

/// The largest file parsed whole: past it (a generated file of tens of megabytes costs seconds
/// and gigabytes to parse) a Python file is parsed up to the last line that fits and only
/// scanned for import statements after that; a Go file keeps its imports, which come first.
pub(crate) const MAX_PARSED: usize = 2 << 20;

/// Why a file's facts may be incomplete. A flagged file says so on its row and in `gate plan`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Flags {
    pub parse_errors: Vec<u32>,
    pub too_deep: Vec<u32>,
    pub cut_at: Option<u32>,
}

impl Facts {
    /// Why these facts may be incomplete, if they may.
    pub(crate) fn flags(&self) -> Option<Flags> {
        let flags = Flags {
            parse_errors: self.parse_errors.clone(),
            too_deep: self.too_deep.clone(),
            cut_at: self.cut_at,
        };
        (flags != Flags::default()).then_some(flags)
    }

    /// What `file` reads that may be no file of the tree, if anything.
    pub(crate) fn reads(&self, file: &str) -> Option<Reads> {
        let mut outside: Vec<(u32, String)> = self
            .strings
            .iter()
            .filter(|s| s.context == StringContext::PathArg && is_outside(&s.value))
            .map(|s| (s.line, s.value.clone()))
            .collect();
        let literal = self
            .strings
            .iter()
            .filter(|s| s.context == StringContext::PathArg && !is_outside(&s.value))
            .map(|s| {
                (
                    s.line,
                    crate::analyze::paths::PathValue::Relative(s.value.clone()),
                )
            });
        let mut named: Vec<String> = Vec::new();
        for (line, value) in literal.chain(self.paths.iter().map(|p| (p.line, p.value.clone()))) {
            let (names, patterns) = candidates(file, &value);
            named.extend(names);
            // A pattern that climbs out of the repository matches files no tree holds and no
            // listing of the tree can enumerate.
            outside.extend(patterns.into_iter().map(|p| (line, p)));
        }
        named.sort();
        named.dedup();
        outside.sort();
        outside.dedup();
        (!self.env.is_empty()
            || !outside.is_empty()
            || !self.env_any.is_empty()
            || !named.is_empty())
        .then(|| Reads {
            env: self.env.clone(),
            env_any: self.env_any.clone(),
            outside,
            named,
        })
    }
}

/// What a file reads from outside the tree: the variables it names and the paths it opens
/// that are absolute or in the home folder. Every file's is kept with the graph (a patched
/// graph holds only the changed files' facts); both are inputs of the tests that run it.
/// Kept in the graph cache in postcard, which reads fields by position: none may be skipped
/// when empty.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Reads {
    pub env: Vec<String>,
    /// `(line, text)`: environment reads by a name gate cannot know.
    pub env_any: Vec<(u32, String)>,
    /// `(line, path)`.
    pub outside: Vec<(u32, String)>,
    /// The repository paths its literal reads may name (`open("data/x.json")` from the root
    /// or its folder): one the tree does not hold may still be on disk where the runner runs
    /// (a git-ignored `.env`), and then its content is an input.
    pub named: Vec<String>,
}

/// The paths a literal read may name — from the root (the runner's folder) or the file's own
/// folder; from its folder when anchored on `__file__` — and the patterns among them that climb
/// out of the repository. A name that climbs out (`../shared.txt`) is a name still: the file
/// there is hashed by its content where the runner runs. A pattern inside the tree is the
/// graph's (its edges name what it matches); one that climbs out matches what no tree holds.
fn candidates(file: &str, value: &crate::analyze::paths::PathValue) -> (Vec<String>, Vec<String>) {
    use crate::analyze::paths::PathValue;
    let folder = crate::path::parent(file);
    let raw: Vec<String> = match value {
        // Absolute and home paths are outside (`/dev/null` is no file of anyone's).
        PathValue::Relative(p) if p.starts_with(['/', '~']) => Vec::new(),
        PathValue::Relative(p) => vec![p.clone(), crate::path::join(folder, p)],
        PathValue::FileDir(p) => vec![crate::path::join(folder, p)],
        _ => Vec::new(),
    };
    let (mut names, mut patterns) = (Vec::new(), Vec::new());
    for p in raw.iter().map(|p| crate::path::normalize(p)) {
        if p.is_empty() || p == "." {
            continue;
        }
        if !p.contains(['*', '?', '[', crate::analyze::paths::UNKNOWN]) {
            names.push(p);
        } else if p.starts_with("..") {
            patterns.push(p.replace(crate::analyze::paths::UNKNOWN, "*"));
        }
    }
    (names, patterns)
}

/// An absolute or home-relative path: `/etc/shop.conf`, `~/.shoprc`. `/` alone names no file,
/// and `/dev/null` reads the same nothing everywhere.
fn is_outside(path: &str) -> bool {
    (path.starts_with('/') && path.len() > 1 && path != "/dev/null") || path.starts_with("~/")
}

impl Flags {
    /// One reason per kind of gap, for the row and the plan.
    pub(crate) fn reasons(&self) -> Vec<String> {
        let lines = |l: &[u32]| l.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
        let mut out = Vec::new();
        if !self.parse_errors.is_empty() {
            out.push(format!(
                "parsed with errors (line {}): only the imports tree-sitter recovered are known",
                lines(&self.parse_errors)
            ));
        }
        if !self.too_deep.is_empty() {
            out.push(format!(
                "expressions nested more than {} levels deep (line {}): paths built in them are not evaluated",
                paths::MAX_DEPTH,
                lines(&self.too_deep)
            ));
        }
        if let Some(line) = self.cut_at {
            out.push(format!(
                "larger than {} MiB: parsed up to line {line}; past it only import statements were read",
                MAX_PARSED >> 20
            ));
        }
        out
    }
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) struct Import {
    pub line: u32,
    /// Leading dots of a relative import; 0 for absolute.
    pub level: u32,
    /// `a.b` of `import a.b` or `from a.b import c`; empty for `from . import c`.
    pub module: String,
    /// The names of `from … import names` (`*` for a star import); empty for `import a.b`.
    pub names: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) struct StringRef {
    pub line: u32,
    pub value: String,
    pub context: StringContext,
}

/// Where a string stood. A module name given to an import function, `pytest_plugins` or
/// `python -m` is a module even without a dot; a string in a subprocess argv or a path argument
/// may name a file or directory even without a `/`; any other string must look like a dotted
/// name or a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum StringContext {
    Plain,
    ImportCall,
    PytestPlugins,
    /// An element of a subprocess argv (`["mypy", "src"]`), or a word of a shell command.
    Argv,
    /// The module of `python -m X`, in an argv or a shell command.
    RunModule,
    /// An argument of a call that takes a path (`open`, `Path`, `FileSystemLoader`, `*_dir=`).
    PathArg,
    /// A pytest-bdd feature file or folder (`scenarios(...)`, `@scenario(...)`).
    Feature,
    /// A Go `//go:embed` pattern, relative to the package folder.
    Embed,
    /// A folder put on `sys.path`: an import root, recorded in `sys_paths`, never a file edge.
    SysPath,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) struct PathRef {
    pub line: u32,
    pub value: PathValue,
    /// The source text that produced it, for reports.
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) struct DynamicImport {
    pub line: u32,
    /// The constant module prefix (`shop.plugins.`); empty when the name has no literal part.
    /// Under an `anchor`, the part after it (`sub` of `import_module(".sub", __name__)`).
    pub prefix: String,
    pub text: String,
    /// Where a relative name starts: `import_module(f".{x}", __package__)`,
    /// `f"{__name__}.{x}"`, `__import__(x, globals(), level=1)`, a module `__getattr__`.
    /// None: the prefix is absolute, and an empty one is unbounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchor: Option<Anchor>,
    /// The whole name is known (`import_module(".sub", __name__)`): it loads that module and
    /// its parents, not every module whose name starts so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exact: bool,
}

/// The package a relative run-time name is resolved in, as the file knows it: its own
/// module (`__name__`: the package itself in an `__init__.py`, `pkg.mod` in `pkg/mod.py`) or
/// its package (`__package__`, `globals()`), `up` levels higher (the name's extra leading dots).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) struct Anchor {
    pub own_module: bool,
    pub up: u32,
}

/// Where a file larger than `MAX_PARSED` stops being parsed: after the last line that fits.
pub(crate) fn cut_point(source: &[u8]) -> Option<usize> {
    if source.len() <= MAX_PARSED {
        return None;
    }
    let end = source[..MAX_PARSED]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(MAX_PARSED, |i| i + 1);
    Some(end)
}

#[cfg(test)]
mod tests {
    use super::Reads;

    fn reads(file: &str, source: &str) -> Option<Reads> {
        crate::analyze::facts_of(file, source.as_bytes()).reads(file)
    }

    #[test]
    fn absolute_and_home_paths_given_to_a_path_call_are_read_outside_the_tree() {
        let py = reads(
            "src/conf.py",
            "import os\nfrom pathlib import Path\nA = open('/etc/shop.conf')\nB = Path('~/.shoprc').expanduser()\nC = open('data/x.json')\nD = open('/dev/null')\nE = os.environ['SHOP']\nF = '/etc/not-opened'\n",
        )
        .unwrap();
        assert_eq!(
            py.outside,
            [
                (3, "/etc/shop.conf".to_string()),
                (4, "~/.shoprc".to_string())
            ]
        );
        assert_eq!(py.env, ["SHOP"]);
        let go = reads(
            "conf/conf.go",
            "package conf\n\nimport \"os\"\n\nfunc Load() ([]byte, error) {\n\treturn os.ReadFile(\"/etc/shop.conf\")\n}\n",
        )
        .unwrap();
        assert_eq!(go.outside, [(6, "/etc/shop.conf".to_string())]);
        // A relative literal is named from the root and from the file's folder: one the tree
        // does not hold may be on disk.
        assert_eq!(py.named, ["data/x.json", "src/data/x.json"]);
        let plain = reads("src/plain.py", "X = open('data/x.json')\n").unwrap();
        assert!(plain.outside.is_empty() && plain.env.is_empty());
        assert!(reads("src/none.py", "X = 1\n").is_none());
    }
}
