//! `[[js.stated]]`: the values `.gate.toml` states for keys of a Vitest or Jest configuration
//! that gate cannot read as literals (a call, a name bound at run time, a spread). A stated
//! value stands in only where gate cannot read the key itself, and replaces the whole key: a
//! literal always wins, and a value stated for a literal (the configuration was made literal
//! since) or for a file the tree does not hold is a warning, never applied. `check` vets each
//! value when `.gate.toml` is parsed — a configuration file gate reads, a key it reads there, a
//! value of the type that key takes — so a wrong one is a configuration error on its line
//! rather than a refusal of every change, far from what caused it.

use super::config::{JEST_CONFIGS, VITE_CONFIGS, VITEST_CONFIGS};
use super::literal::{self, Lit};
use super::vitest_config::WORKSPACE_FILES;
use crate::lang::StatedValue;
use serde_json::Value as Json;
use std::cell::Cell;
use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};

/// Which configuration a file is, by its name: what its keys are.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Runner {
    Vitest,
    /// A `vitest.workspace.*` file: a list of projects.
    Workspace,
    Jest,
}

fn runner_of(file: &str) -> Option<Runner> {
    let name = crate::path::file_name(file);
    if VITEST_CONFIGS.contains(&name) || VITE_CONFIGS.contains(&name) {
        Some(Runner::Vitest)
    } else if WORKSPACE_FILES.contains(&name) {
        Some(Runner::Workspace)
    } else if JEST_CONFIGS.contains(&name) {
        Some(Runner::Jest)
    } else {
        None
    }
}

/// What a key gate reads holds.
#[derive(Debug, Clone, Copy)]
enum Shape {
    /// An object of keys, the ones gate reads among them.
    Table,
    /// A string or a list of strings (globs, files).
    Strings,
    Str,
    Bool,
    /// Vite's `resolve.alias`: `{ find = replacement }` or `[{ find, replacement }]`.
    Aliases,
    /// Jest's `moduleNameMapper`: a pattern → a replacement or a list of them.
    Mapper,
    /// Vitest's projects: folder and file globs, or inline configurations.
    Projects,
}

impl Shape {
    /// The value a refusal's TOML shows, for the user to fill in.
    fn placeholder(self) -> &'static str {
        match self {
            Shape::Table => "{ … }",
            Shape::Strings | Shape::Projects => "[\"…\"]",
            Shape::Str => "\"…\"",
            Shape::Bool => "true",
            Shape::Aliases | Shape::Mapper => "{ \"…\" = \"…\" }",
        }
    }
}

/// The keys gate reads of a Vitest configuration (`config.rs`, `vitest_config.rs`) and the
/// objects holding them, which a spread makes unreadable whole. Not Vitest's `root`,
/// `test.root` or `test.includeSource`: set at all, they are refused whatever they hold.
const VITEST: &[(&str, Shape)] = &[
    ("", Shape::Table),
    ("test", Shape::Table),
    ("resolve", Shape::Table),
    ("test.typecheck", Shape::Table),
    ("test.projects", Shape::Projects),
    ("test.workspace", Shape::Projects),
    ("test.dir", Shape::Str),
    ("test.include", Shape::Strings),
    ("test.exclude", Shape::Strings),
    ("test.setupFiles", Shape::Strings),
    ("test.globalSetup", Shape::Strings),
    ("test.typecheck.include", Shape::Strings),
    ("test.typecheck.enabled", Shape::Bool),
    ("test.typecheck.only", Shape::Bool),
    ("resolve.alias", Shape::Aliases),
    ("test.alias", Shape::Aliases),
];

/// Jest's, as `jest_project` reads them (not the keys it refuses when set).
const JEST: &[(&str, Shape)] = &[
    ("", Shape::Table),
    ("testMatch", Shape::Strings),
    ("testRegex", Shape::Strings),
    ("roots", Shape::Strings),
    ("testPathIgnorePatterns", Shape::Strings),
    ("setupFiles", Shape::Strings),
    ("setupFilesAfterEnv", Shape::Strings),
    ("globalSetup", Shape::Strings),
    ("globalTeardown", Shape::Strings),
    ("testEnvironment", Shape::Strings),
    ("snapshotResolver", Shape::Strings),
    ("moduleNameMapper", Shape::Mapper),
];

const WORKSPACE: &[(&str, Shape)] = &[("", Shape::Projects)];

fn keys(runner: Runner) -> &'static [(&'static str, Shape)] {
    match runner {
        Runner::Vitest => VITEST,
        Runner::Workspace => WORKSPACE,
        Runner::Jest => JEST,
    }
}

fn shape(runner: Runner, key: &str) -> Option<Shape> {
    keys(runner)
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, s)| *s)
}

fn join(key: &str, sub: &str) -> String {
    if key.is_empty() {
        sub.to_string()
    } else {
        format!("{key}.{sub}")
    }
}

/// Where a stated value is wrong, for the line its error names.
#[derive(Debug)]
pub(crate) enum Wrong {
    File(String),
    Key(String),
    Value(String),
}

/// Whether `value` may be stated for `key` of `file`: the file a configuration gate reads, the
/// key one it reads there, the value of the type it takes (an object's keys gate does not read
/// hold anything).
pub(crate) fn check(file: &str, key: &str, value: &Json) -> Result<(), Wrong> {
    let Some(runner) = runner_of(file) else {
        return Err(Wrong::File(format!(
            "`{file}` is no configuration gate reads (vitest.config.*, vite.config.*, vitest.workspace.*, jest.config.*)"
        )));
    };
    let Some(shape) = shape(runner, key) else {
        let known: Vec<String> = keys(runner).iter().map(|(k, _)| format!("`{k}`")).collect();
        return Err(Wrong::Key(format!(
            "gate reads no `{key}` of {file}; a value can be stated for {}",
            known.join(", ")
        )));
    };
    fits(runner, key, shape, value).map_err(Wrong::Value)
}

fn fits(runner: Runner, key: &str, shape: Shape, value: &Json) -> Result<(), String> {
    let wrong = |takes: &str| {
        let name = if key.is_empty() {
            "the whole file"
        } else {
            key
        };
        Err(format!("`{name}` takes {takes}, not {value}"))
    };
    let strings =
        |v: &Json| v.is_string() || v.as_array().is_some_and(|a| a.iter().all(Json::is_string));
    match shape {
        Shape::Table => {
            let Json::Object(map) = value else {
                return wrong("a table");
            };
            for (sub, v) in map {
                let sub = join(key, sub);
                if let Some(s) = self::shape(runner, &sub) {
                    fits(runner, &sub, s, v)?;
                }
            }
            Ok(())
        }
        Shape::Strings if strings(value) => Ok(()),
        Shape::Strings => wrong("a string or a list of strings"),
        Shape::Str if value.is_string() => Ok(()),
        Shape::Str => wrong("a string"),
        Shape::Bool if value.is_boolean() => Ok(()),
        Shape::Bool => wrong("true or false"),
        Shape::Aliases => {
            let pair = |v: &Json| {
                v.get("find").is_some_and(Json::is_string)
                    && v.get("replacement").is_some_and(Json::is_string)
            };
            let ok = match value {
                Json::Object(map) => map.values().all(Json::is_string),
                Json::Array(items) => items.iter().all(pair),
                _ => false,
            };
            if ok {
                Ok(())
            } else {
                wrong("a table of replacements or a list of `{ find, replacement }` strings")
            }
        }
        Shape::Mapper if value.as_object().is_some_and(|m| m.values().all(strings)) => Ok(()),
        Shape::Mapper => wrong("a table of patterns to a replacement or a list of them"),
        Shape::Projects => {
            let Json::Array(items) = value else {
                return wrong("a list of globs and inline configurations");
            };
            for item in items.iter().filter(|i| !i.is_string()) {
                fits(Runner::Vitest, "", Shape::Table, item)
                    .map_err(|why| format!("a project of `{key}`: {why}"))?;
            }
            Ok(())
        }
    }
}

/// What a refusal of `key` in `file` adds when `.gate.toml` can state it: the TOML to write,
/// indented to stand under the refusal, the value for the user to fill in.
pub(super) fn hint(file: &str, key: &str) -> String {
    let Some(value) = runner_of(file).and_then(|r| shape(r, key)) else {
        return String::new();
    };
    let quote = |s: &str| toml::Value::String(s.to_string()).to_string();
    format!(
        "; .gate.toml can state what it holds:\n    [[js.stated]]\n    file = {}\n    key = {}\n    value = {}",
        quote(file),
        quote(key),
        value.placeholder()
    )
}

/// What became of a stated value in one tree.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Outcome {
    /// Gate read no configuration from its file.
    NotRead,
    Used,
    /// Gate reads the key itself: the file's own value is used.
    Readable,
}

/// The values stated for one tree's configurations, as literals, and what became of each.
pub(super) struct Stated<'s> {
    entries: Vec<(&'s StatedValue, Lit, Cell<Outcome>)>,
}

impl<'s> Stated<'s> {
    pub(super) fn new(given: &'s [StatedValue]) -> Self {
        Stated {
            entries: given
                .iter()
                .map(|v| (v, literal::of_json(&v.value), Cell::new(Outcome::NotRead)))
                .collect(),
        }
    }

    /// `file`'s configuration with each value stated for it put where gate cannot read it.
    pub(super) fn apply(&self, file: &str, mut value: Lit) -> Lit {
        for (given, lit, outcome) in self.entries.iter().filter(|e| e.0.file == file) {
            let parts: Vec<&str> = match given.key.as_str() {
                "" => Vec::new(),
                key => key.split('.').collect(),
            };
            if put(&mut value, &parts, lit) {
                outcome.set(Outcome::Used);
            } else if outcome.get() == Outcome::NotRead {
                outcome.set(Outcome::Readable);
            }
        }
        value
    }

    /// The values it did not use, each naming its line; that gate read no configuration from
    /// a file only when nothing was refused (a refusal stops the reading early).
    pub(super) fn warnings(&self, files: &BTreeSet<String>, refused: bool) -> Vec<String> {
        let mut out = Vec::new();
        for (given, _, outcome) in &self.entries {
            let (line, file, key) = (given.line, &given.file, &given.key);
            let why = match outcome.get() {
                Outcome::Used => continue,
                _ if !files.contains(file) => {
                    format!("{file} is no file of the tree")
                }
                Outcome::Readable => {
                    format!("{file} says it as a literal, which wins (drop the entry)")
                }
                Outcome::NotRead if refused => continue,
                Outcome::NotRead => {
                    format!("gate reads no Vitest or Jest configuration from {file} in this tree")
                }
            };
            out.push(format!(
                "{} line {line}: the value stated for `{key}` of {file} is not used: {why}",
                crate::config::FILE
            ));
        }
        out
    }

    /// Adds every stated value to `hasher`: a kept graph is read under them.
    pub(super) fn hash(&self, hasher: &mut impl Hasher) {
        for (given, _, _) in &self.entries {
            (&given.file, &given.key, given.value.to_string()).hash(hasher);
        }
    }
}

/// Puts `stated` at `parts` of `at` when gate cannot read it there, and says whether it did:
/// the key's value holds what gate cannot read, or a spread, a computed key or a value gate
/// cannot read on the way may set it (`Keys::known`'s reading, which this must agree with).
fn put(at: &mut Lit, parts: &[&str], stated: &Lit) -> bool {
    let Some((first, rest)) = parts.split_first() else {
        if at.is_known() {
            return false;
        }
        *at = stated.clone();
        return true;
    };
    match at {
        Lit::Obj(entries) => {
            match entries.iter().rposition(|(k, _)| k == first || k == "*") {
                Some(i) if entries[i].0 == *first => put(&mut entries[i].1, rest, stated),
                // After the spread, as a key written after it overrides what it sets.
                Some(_) => {
                    entries.push((first.to_string(), beside(rest, stated)));
                    true
                }
                // Not set in an object gate reads whole: gate reads it, as unset.
                None => false,
            }
        }
        Lit::Unknown(text) => {
            let unknown = ("*".to_string(), Lit::Unknown(std::mem::take(text)));
            *at = Lit::Obj(vec![unknown, (first.to_string(), beside(rest, stated))]);
            true
        }
        // A literal that is no object holds no key: gate reads it as unset.
        _ => false,
    }
}

/// `stated` at `rest` of an object something unread may also fill: the rest of it stays
/// unread, so only the stated key is known.
fn beside(rest: &[&str], stated: &Lit) -> Lit {
    match rest.split_first() {
        None => stated.clone(),
        Some((first, rest)) => Lit::Obj(vec![
            (
                "*".to_string(),
                Lit::Unknown("what is not stated beside it".into()),
            ),
            (first.to_string(), beside(rest, stated)),
        ]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(src: &str) -> Lit {
        literal::exported("vitest.config.ts", src.as_bytes(), &literal::VITEST_4)
    }

    fn given(key: &str, value: Json) -> StatedValue {
        StatedValue {
            file: "vitest.config.ts".into(),
            key: key.into(),
            value,
            line: 3,
        }
    }

    /// A stated value is the literal the same value written in the file reads as.
    #[test]
    fn a_stated_value_reads_as_the_same_literal_would() {
        let value = json!({"test": {"include": ["src/**/*.test.ts"], "globals": true, "retry": 2}});
        assert_eq!(
            literal::of_json(&value),
            read(
                "export default { test: { include: ['src/**/*.test.ts'], globals: true, retry: 2 } };"
            )
        );
    }

    #[test]
    fn a_stated_value_stands_in_only_where_gate_cannot_read() {
        let values = [
            given("test.include", json!(["src/**/*.test.ts"])),
            given("test.exclude", json!(["e2e/**"])),
            given("test.setupFiles", json!(["./setup.ts"])),
        ];
        let stated = Stated::new(&values);
        let src = "const x = process.env.X;\nexport default { test: { include: [x ?? 'a/**'], exclude: ['b/**'] } };";
        let value = stated.apply("vitest.config.ts", read(src));
        assert_eq!(
            value.get("test.include"),
            Some(&Lit::Arr(vec![Lit::Str("src/**/*.test.ts".into())]))
        );
        // Read as a literal, and unset in an object read whole: the file's own (none) wins.
        assert_eq!(
            value.get("test.exclude"),
            Some(&Lit::Arr(vec![Lit::Str("b/**".into())]))
        );
        assert_eq!(value.get("test.setupFiles"), None);
        let files: BTreeSet<String> = ["vitest.config.ts".to_string()].into();
        let warned = stated.warnings(&files, false);
        assert_eq!(warned.len(), 2, "{warned:?}");
        assert!(warned[0].contains("line 3") && warned[0].contains("`test.exclude`"));
        // A file the tree does not hold: the warning says so.
        let warned = stated.warnings(&BTreeSet::new(), false);
        assert!(
            warned.iter().all(|w| w.contains("no file of the tree")),
            "{warned:?}"
        );
    }

    /// A stated key that a spread or an unread value may set goes after it; the rest of what
    /// that spread may set stays unread. The whole file replaces a value gate cannot read.
    #[test]
    fn a_stated_key_under_a_spread_is_known_and_its_siblings_are_not() {
        let values = [given("test.typecheck.include", json!(["t/**"]))];
        let stated = Stated::new(&values);
        let value = stated.apply(
            "vitest.config.ts",
            read("export default { test: { ...shared } };"),
        );
        assert_eq!(
            value.get("test.typecheck.include"),
            Some(&Lit::Arr(vec![Lit::Str("t/**".into())]))
        );
        let keys = super::super::keys::Keys {
            value: &value,
            file: "vitest.config.ts",
            dir: "",
            own: true,
        };
        assert!(keys.known("test.typecheck.include").is_ok());
        let why = keys.known("test.include").unwrap_err();
        assert!(why.contains("key = \"test\""), "{why}");
        assert!(keys.known("test.typecheck.enabled").is_err());
        let whole = [given("", json!({"test": {"include": ["t/**"]}}))];
        let stated = Stated::new(&whole);
        let value = stated.apply(
            "vitest.config.ts",
            read("export default mergeConfig(base, { test: {} });"),
        );
        assert_eq!(value, literal::of_json(&whole[0].value));
    }

    /// Through the layout: a Jest configuration's computed `testMatch`, refused with the table to
    /// write; stated, the tests it names, and a digest (a kept graph's key) of the values.
    #[test]
    fn a_jest_layout_reads_the_stated_value_and_keys_its_digest_on_it() {
        use crate::lang::Layout;
        use std::collections::BTreeMap;
        let texts: BTreeMap<String, Vec<u8>> = [
            ("package.json", r#"{"devDependencies":{"jest":"30"}}"#),
            (
                "jest.config.js",
                "module.exports = { testMatch: globs() };\n",
            ),
            ("spec/a.spec.js", ""),
            ("test/b.test.js", ""),
        ]
        .iter()
        .map(|(p, t)| (p.to_string(), t.as_bytes().to_vec()))
        .collect();
        let names: BTreeSet<String> = texts.keys().cloned().collect();
        let read = |p: &str| texts.get(p).cloned();
        let load = |stated: &[StatedValue]| {
            super::super::layout::JsLayout::load(&names, &read, stated).expect("a tree")
        };
        let refused = load(&[]);
        let why = refused.broken().expect("refused");
        assert!(why.contains("key = \"testMatch\""), "{why}");
        let stated = |globs: Json| StatedValue {
            file: "jest.config.js".into(),
            key: "testMatch".into(),
            value: globs,
            line: 2,
        };
        let layout = load(&[stated(json!(["**/spec/**/*.spec.js"]))]);
        assert!(layout.broken().is_none(), "{:?}", layout.broken());
        assert_eq!(layout.tests(&names), ["spec/a.spec.js".to_string()].into());
        assert!(layout.warnings().is_empty(), "{:?}", layout.warnings());
        let other = load(&[stated(json!(["**/test/**/*.test.js"]))]);
        assert_eq!(other.tests(&names), ["test/b.test.js".to_string()].into());
        assert_ne!(layout.digest(), refused.digest());
        assert_ne!(layout.digest(), other.digest());
    }

    #[test]
    fn a_refusal_gives_the_toml_to_write() {
        assert_eq!(
            hint("web/vitest.config.ts", "test.include"),
            "; .gate.toml can state what it holds:\n    [[js.stated]]\n    file = \"web/vitest.config.ts\"\n    key = \"test.include\"\n    value = [\"…\"]"
        );
        assert!(hint("jest.config.js", "").contains("value = { … }"));
        // The keys gate refuses when set, and what is no configuration file: nothing to state.
        assert_eq!(hint("vitest.config.ts", "test.includeSource"), "");
        assert_eq!(hint("package.json `jest`", "testMatch"), "");
    }

    #[test]
    fn a_value_is_checked_against_the_key_it_is_stated_for() {
        let ok = [
            ("vitest.config.ts", "test.include", json!("a/**")),
            (
                "vite.config.mjs",
                "test",
                json!({"include": ["a"], "pool": "forks"}),
            ),
            (
                "vitest.config.ts",
                "resolve.alias",
                json!([{"find": "@", "replacement": "./src"}]),
            ),
            (
                "vitest.workspace.ts",
                "",
                json!(["packages/*", {"test": {"include": ["x"]}}]),
            ),
            (
                "pkg/jest.config.js",
                "moduleNameMapper",
                json!({"^@/(.*)$": ["<rootDir>/src/$1"]}),
            ),
        ];
        for (file, key, value) in ok {
            assert!(check(file, key, &value).is_ok(), "{file} {key} {value}");
        }
        let wrong = [
            (
                "src/a.ts",
                "test.include",
                json!("a"),
                "no configuration gate reads",
            ),
            (
                "vitest.config.ts",
                "test.pool",
                json!("a"),
                "gate reads no `test.pool`",
            ),
            (
                "jest.config.js",
                "test.include",
                json!("a"),
                "gate reads no",
            ),
            (
                "vitest.config.ts",
                "test.include",
                json!(3),
                "`test.include` takes a string or a list of strings, not 3",
            ),
            (
                "vitest.config.ts",
                "",
                json!({"test": {"typecheck": {"enabled": "yes"}}}),
                "`test.typecheck.enabled` takes true or false",
            ),
            (
                "vitest.config.ts",
                "test.projects",
                json!([{"test": {"include": 1}}]),
                "a project of `test.projects`",
            ),
        ];
        for (file, key, value, says) in wrong {
            let why = match check(file, key, &value) {
                Err(Wrong::File(w) | Wrong::Key(w) | Wrong::Value(w)) => w,
                Ok(()) => panic!("{file} {key} {value} passed"),
            };
            assert!(why.contains(says), "{why}");
        }
    }
}
