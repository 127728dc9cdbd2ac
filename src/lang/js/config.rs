//! Which folders of the tree hold a Vitest or Jest project, and what each runner's own
//! configuration says about it, read as literals: the test files (`include`/`exclude`,
//! `testMatch`/`testRegex`/`roots`/`testPathIgnorePatterns`), the setup files every test of the
//! project runs, and the aliases its imports resolve through (`resolve.alias`,
//! `moduleNameMapper`). A key gate needs that it cannot read as a literal is a refusal naming the
//! file and the key — unless `.gate.toml` states its value (`stated`): a guessed test set could
//! leave out the test a change breaks.

use super::keys::Keys;
use super::literal::{self, Lit};
use super::stated::Stated;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use regex::Regex;
use std::collections::BTreeSet;

/// The runner of a project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RunnerKind {
    Vitest,
    Jest,
}

impl RunnerKind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            RunnerKind::Vitest => "vitest",
            RunnerKind::Jest => "jest",
        }
    }
}

/// What a specifier matching `find` becomes.
#[derive(Debug, Clone)]
pub(super) enum Find {
    /// The specifier itself, or it followed by `/…`.
    Exact(String),
    Regex(Regex),
}

#[derive(Debug, Clone)]
pub(super) struct Alias {
    pub find: Find,
    /// Replacements, tried in order (`moduleNameMapper` takes a list); `$1` for a group.
    pub to: Vec<String>,
}

/// Which files of a project are its tests.
pub(super) enum Matcher {
    Globs {
        include: GlobSet,
        exclude: GlobSet,
    },
    Jest {
        globs: Option<GlobSet>,
        regexes: Vec<Regex>,
        ignore: Vec<Regex>,
        roots: Vec<String>,
    },
}

/// One test project: a folder whose runner gate runs there.
pub(crate) struct TestProject {
    /// Its folder, repository-relative (`""`: the root): its tests' paths are relative to it.
    pub dir: String,
    /// Where its runner runs: its folder, or the folder whose configuration lists it among
    /// Vitest's `projects`.
    pub run_dir: String,
    pub runner: RunnerKind,
    /// Its configuration file, when it has one.
    pub config: Option<String>,
    pub(super) matcher: Matcher,
    /// Files every test of the project runs (setup, global setup, environment).
    pub setup: Vec<String>,
    /// Setup modules named by a package name, resolved later.
    pub setup_specs: Vec<String>,
    /// What its configuration file imports (a shared configuration, a plugin of the tree):
    /// code every test of the project runs under. Its other strings (the test globs) are
    /// not its tests' dependencies, so the tests depend on these, not on the file.
    pub config_imports: Vec<String>,
    pub(super) aliases: Vec<Alias>,
}

impl TestProject {
    /// Whether `path` (repository-relative, under `dir`) is one of its tests.
    pub(crate) fn is_test(&self, path: &str) -> bool {
        let Some(rel) = under(&self.dir, path) else {
            return false;
        };
        match &self.matcher {
            Matcher::Globs { include, exclude } => include.is_match(rel) && !exclude.is_match(rel),
            Matcher::Jest {
                globs,
                regexes,
                ignore,
                roots,
            } => {
                let rooted = roots.is_empty() || roots.iter().any(|r| under(r, rel).is_some());
                // Jest matches its regular expressions against the absolute path: here the
                // project's folder is `ROOT_DIR`, which `<rootDir>` in a pattern is too.
                let full = format!("{ROOT_DIR}/{rel}");
                let matched = match globs {
                    Some(g) => g.is_match(rel),
                    None => regexes.iter().any(|r| r.is_match(&full)),
                };
                rooted && matched && !ignore.iter().any(|r| r.is_match(&full))
            }
        }
    }
}

/// `path` relative to `dir`, when it is under it.
pub(super) fn under<'p>(dir: &str, path: &'p str) -> Option<&'p str> {
    if dir.is_empty() {
        return Some(path);
    }
    path.strip_prefix(dir)?.strip_prefix('/')
}

/// What a Jest project's folder is written as when its paths are matched with its regular
/// expressions (`testRegex`, `testPathIgnorePatterns`): no real path holds it.
const ROOT_DIR: &str = "@gate-rootDir@";

pub(super) const VITEST_CONFIGS: &[&str] = &[
    "vitest.config.ts",
    "vitest.config.mts",
    "vitest.config.cts",
    "vitest.config.js",
    "vitest.config.mjs",
    "vitest.config.cjs",
];
pub(super) const VITE_CONFIGS: &[&str] = &[
    "vite.config.ts",
    "vite.config.mts",
    "vite.config.cts",
    "vite.config.js",
    "vite.config.mjs",
    "vite.config.cjs",
];
pub(super) const JEST_CONFIGS: &[&str] = &[
    "jest.config.js",
    "jest.config.ts",
    "jest.config.mjs",
    "jest.config.cjs",
    "jest.config.mts",
    "jest.config.cts",
    "jest.config.json",
];

const JEST_MATCH: &[&str] = &[
    "**/__tests__/**/*.?([mc])[jt]s?(x)",
    "**/?(*.)+(spec|test).?([mc])[jt]s?(x)",
];

/// The projects of the folder `dir` (whose manifest is `manifest`, parsed) when its runner
/// is Vitest or Jest (Vitest's `projects` are several); `Err` naming the file and key gate
/// cannot read and `stated` does not give.
pub(super) fn project(
    dir: &str,
    manifest: &serde_json::Value,
    files: &BTreeSet<String>,
    read: &dyn Fn(&str) -> Option<Vec<u8>>,
    stated: &Stated<'_>,
) -> Result<Vec<TestProject>, String> {
    let in_dir = |name: &str| {
        let path = crate::path::join(dir, name);
        files.contains(&path).then_some(path)
    };
    let vitest_config = VITEST_CONFIGS.iter().find_map(|c| in_dir(c));
    let vite_config = VITE_CONFIGS.iter().find_map(|c| in_dir(c));
    let jest_config = JEST_CONFIGS.iter().find_map(|c| in_dir(c));
    let mentions = |tool: &str| {
        ["dependencies", "devDependencies"]
            .iter()
            .any(|k| manifest.get(k).and_then(|d| d.get(tool)).is_some())
            || manifest
                .pointer("/scripts/test")
                .and_then(|s| s.as_str())
                .is_some_and(|s| s.contains(tool))
    };
    let test_script = manifest.pointer("/scripts/test").and_then(|s| s.as_str());
    let jest_first = test_script.is_some_and(|s| s.contains("jest") && !s.contains("vitest"));
    let vitest = vitest_config.is_some() || mentions("vitest");
    let jest = jest_config.is_some() || manifest.get("jest").is_some() || mentions("jest");
    if vitest && !(jest && jest_first) {
        let config = vitest_config.or(vite_config.filter(|_| mentions("vitest")));
        let typecheck = test_script.is_some_and(|s| s.contains("--typecheck"));
        return super::vitest_config::projects(dir, config, (files, typecheck), read, stated);
    }
    if jest {
        let project = jest_project(dir, jest_config, manifest, (read, stated))?;
        return Ok(vec![TestProject {
            config_imports: imports_of(project.config.as_deref(), read),
            ..project
        }]);
    }
    Ok(Vec::new())
}

/// What a configuration file imports (not its type-only imports).
pub(super) fn imports_of(
    config: Option<&str>,
    read: &dyn Fn(&str) -> Option<Vec<u8>>,
) -> Vec<String> {
    let Some(config) = config.filter(|c| super::is_js(c)) else {
        return Vec::new();
    };
    read(config)
        .map(|bytes| super::analyze::analyze(super::analyze::Dialect::of(config), &bytes))
        .map(|facts| {
            facts
                .imports
                .into_iter()
                .filter(|i| i.names.first().is_none_or(|f| f != "type"))
                .map(|i| i.module)
                .collect()
        })
        .unwrap_or_default()
}

/// What a Jest project reads its configuration with: a file of the tree, the stated values.
type Reading<'r> = (&'r dyn Fn(&str) -> Option<Vec<u8>>, &'r Stated<'r>);

fn jest_project(
    dir: &str,
    config: Option<String>,
    manifest: &serde_json::Value,
    reading: Reading<'_>,
) -> Result<TestProject, String> {
    let (value, file) = jest_value(dir, config.as_deref(), manifest, reading)?;
    let keys = Keys {
        value: &value,
        file: &file,
        dir,
        own: config.is_some(),
    };
    // Set at all, whatever they hold: a stated value could not make gate read them.
    for key in [
        "projects",
        "rootDir",
        "modulePaths",
        "moduleDirectories",
        "resolver",
    ] {
        if keys.set(key)? {
            return Err(format!(
                "{file}: `{key}` is set: gate does not read it yet, so it cannot tell how this project's tests and imports resolve"
            ));
        }
    }
    let strings = |key: &str| -> Result<Vec<String>, String> {
        Ok(keys
            .strings(key)?
            .into_iter()
            .map(|s| s.replace("<rootDir>/", "").replace("<rootDir>", ""))
            .collect())
    };
    let known = |key: &str| keys.known(key);
    let test_match = strings("testMatch")?;
    // Regular expressions keep `<rootDir>` as the marker the path is matched with.
    let marked = |key: &str| -> Result<Vec<String>, String> {
        Ok(keys
            .strings(key)?
            .into_iter()
            .map(|s| s.replace("<rootDir>", ROOT_DIR))
            .collect())
    };
    let test_regex = marked("testRegex")?;
    let globs_set = if !test_regex.is_empty() {
        None
    } else if test_match.is_empty() {
        Some(globs(&to_strings(JEST_MATCH), None).map_err(|e| format!("{file}: {e}"))?)
    } else {
        Some(globs(&test_match, None).map_err(|e| format!("{file}: `testMatch`: {e}"))?)
    };
    let test_regexes = regexes(&test_regex).map_err(|e| format!("{file}: `testRegex`: {e}"))?;
    let mut ignore = marked("testPathIgnorePatterns")?;
    if known("testPathIgnorePatterns")?.is_none() {
        ignore.push("/node_modules/".into());
    }
    let ignore = regexes(&ignore).map_err(|e| format!("{file}: `testPathIgnorePatterns`: {e}"))?;
    let roots = strings("roots")?
        .into_iter()
        .map(|r| crate::path::normalize(r.trim_start_matches("./")))
        .filter(|r| !r.is_empty() && r != ".")
        .collect();
    let mut setup = Vec::new();
    let mut setup_specs = Vec::new();
    for key in [
        "setupFiles",
        "setupFilesAfterEnv",
        "globalSetup",
        "globalTeardown",
        "testEnvironment",
        "snapshotResolver",
    ] {
        for s in strings(key)? {
            if key == "testEnvironment" && !s.starts_with('.') && !s.contains('/') {
                continue; // `node`, `jsdom`: a package
            }
            place(dir, &s, &mut setup, &mut setup_specs);
        }
    }
    let aliases = module_name_mapper(dir, &file, known("moduleNameMapper")?)?;
    Ok(TestProject {
        dir: dir.to_string(),
        run_dir: dir.to_string(),
        runner: RunnerKind::Jest,
        config,
        matcher: Matcher::Jest {
            globs: globs_set,
            regexes: test_regexes,
            ignore,
            roots,
        },
        setup,
        setup_specs,
        aliases,
        config_imports: Vec::new(),
    })
}

/// A Jest project's configuration and where it was read: its configuration file, its
/// manifest's `jest` key, or Jest's defaults.
fn jest_value(
    dir: &str,
    config: Option<&str>,
    manifest: &serde_json::Value,
    (read, stated): Reading<'_>,
) -> Result<(Lit, String), String> {
    let (value, file) = match (config, manifest.get("jest")) {
        (Some(file), _) => (
            stated.apply(file, jest_config(file, read)?),
            file.to_string(),
        ),
        (None, Some(v)) => (
            literal::of_json(v),
            crate::path::join(dir, "package.json") + " `jest`",
        ),
        (None, None) => (Lit::Obj(Vec::new()), "jest's defaults".to_string()),
    };
    if !matches!(value, Lit::Obj(_)) {
        return Err(format!(
            "{file}: its configuration is not a literal object: {}; gate cannot tell its tests{}",
            value.text(),
            super::stated::hint(&file, "")
        ));
    }
    Ok((value, file))
}

/// A Jest configuration file's value: JSON, or a module's export.
fn jest_config(file: &str, read: &dyn Fn(&str) -> Option<Vec<u8>>) -> Result<Lit, String> {
    let bytes = read(file).ok_or_else(|| format!("{file}: cannot be read"))?;
    if file.ends_with(".json") {
        serde_json::from_slice::<serde_json::Value>(&bytes)
            .map(|v| literal::of_json(&v))
            .map_err(|e| format!("{file}: not JSON: {e}"))
    } else {
        Ok(literal::exported(file, &bytes, &literal::VITEST_4))
    }
}

/// Jest's `moduleNameMapper`: each regular expression's replacements, `<rootDir>` the
/// project's folder.
fn module_name_mapper(dir: &str, file: &str, value: Option<&Lit>) -> Result<Vec<Alias>, String> {
    let Some(Lit::Obj(entries)) = value else {
        return Ok(Vec::new());
    };
    entries
        .iter()
        .map(|(pattern, to)| {
            let find = Regex::new(pattern)
                .map_err(|e| format!("{file}: `moduleNameMapper` `{pattern}`: {e}"))?;
            let to = to
                .strings(dir)
                .map_err(|t| format!("{file}: `moduleNameMapper` `{pattern}`: {t}"))?
                .into_iter()
                .map(|t| rooted(dir, &t.replace("<rootDir>/", "/").replace("<rootDir>", "/")))
                .collect();
            Ok(Alias {
                find: Find::Regex(find),
                to,
            })
        })
        .collect()
}

fn to_strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// A setup entry: a file of the project (relative, `./`, `/`-rooted or already a tree path),
/// or a package's module resolved later.
pub(super) fn place(dir: &str, entry: &str, setup: &mut Vec<String>, specs: &mut Vec<String>) {
    if entry.starts_with('.')
        || entry.starts_with('/')
        || entry.contains('/') && !entry.starts_with('@')
    {
        setup.push(relative_to(dir, entry));
    } else {
        specs.push(entry.to_string());
    }
}

/// A path a configuration names, relative to its project's folder (a `Lit::Path` is already
/// a tree path, written `/…` by `rooted`).
pub(super) fn relative_to(dir: &str, entry: &str) -> String {
    match entry.strip_prefix('/') {
        Some(tree) => crate::path::normalize(tree),
        None => crate::path::normalize(&crate::path::join(dir, entry.trim_start_matches("./"))),
    }
}

/// A replacement as a tree path (`/`-rooted) when it names one, else as written.
fn rooted(dir: &str, to: &str) -> String {
    if let Some(rest) = to.strip_prefix('/') {
        format!("/{}", crate::path::normalize(&crate::path::join(dir, rest)))
    } else if to.starts_with('.') {
        format!("/{}", crate::path::normalize(&crate::path::join(dir, to)))
    } else {
        to.to_string()
    }
}

/// Vite's `resolve.alias`: `{ "@": "/src" }` or `[{ find, replacement }]`.
pub(super) fn vite_aliases(dir: &str, value: &Lit) -> Result<Vec<Alias>, String> {
    let replacement = |lit: &Lit| -> Result<String, String> {
        match lit {
            Lit::Path(p) => Ok(format!("/{p}")),
            Lit::Str(s) if s.starts_with('/') || s.starts_with('.') => Ok(rooted(dir, s)),
            Lit::Str(s) => Ok(s.clone()),
            other => Err(format!(
                "a replacement that is not a string: {}",
                other.text()
            )),
        }
    };
    match value {
        Lit::Obj(entries) => entries
            .iter()
            .map(|(find, to)| {
                Ok(Alias {
                    find: Find::Exact(find.clone()),
                    to: vec![replacement(to)?],
                })
            })
            .collect(),
        Lit::Arr(items) => items
            .iter()
            .map(|item| {
                let find = match item.get("find") {
                    Some(Lit::Str(s)) => Find::Exact(s.clone()),
                    Some(Lit::Regex(r)) => {
                        Find::Regex(Regex::new(r).map_err(|e| format!("`find` /{r}/: {e}"))?)
                    }
                    other => return Err(format!("a `find` gate cannot read: {other:?}")),
                };
                let to = item
                    .get("replacement")
                    .ok_or("an entry with no `replacement`")?;
                Ok(Alias {
                    find,
                    to: vec![replacement(to)?],
                })
            })
            .collect(),
        other => Err(format!("not an object or an array: {}", other.text())),
    }
}

/// Globs as Vitest (picomatch) and Jest (micromatch) read them, relative to the project's
/// folder (and `prefix`), with extglobs written as globset's alternatives: `?(a|b)` is
/// `{,a,b}`, `@(a|b)` and `+(a|b)` are `{a,b}` (`+` repeated is not: a name repeating the
/// part, `x.spec.test.ts`, is left out — none of the defaults matches one).
pub(super) fn globs(patterns: &[String], prefix: Option<&str>) -> Result<GlobSet, String> {
    let mut set = GlobSetBuilder::new();
    for pattern in patterns {
        if pattern.starts_with('!') {
            return Err(format!("a negated pattern `{pattern}` is not read yet"));
        }
        let pattern = pattern.trim_start_matches("./");
        let pattern = match prefix {
            Some(p) if !pattern.starts_with("**") => format!("{p}/{pattern}"),
            Some(p) => format!("{p}/{pattern}"),
            None => pattern.to_string(),
        };
        let written = extglob(&pattern)
            .ok_or_else(|| format!("`{pattern}` uses a pattern form gate does not read"))?;
        for one in written {
            let glob = GlobBuilder::new(&one)
                .literal_separator(true)
                .build()
                .map_err(|e| format!("`{pattern}`: {e}"))?;
            set.add(glob);
        }
        // `**/x` also matches `x` at the top (globset's `**/` does already).
    }
    set.build().map_err(|e| e.to_string())
}

/// The globs an extglob pattern stands for: `?(a|b)` is each of ``, `a`, `b`; `@(a|b)` and
/// `+(a|b)` each of `a`, `b` (globset has no empty alternative, so the pattern is written out
/// once per choice); `*(…)` and `!(…)` are not read.
fn extglob(pattern: &str) -> Option<Vec<String>> {
    let mut out = vec![String::new()];
    let chars: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if matches!(c, '?' | '@' | '+' | '*' | '!') && chars.get(i + 1) == Some(&'(') {
            let close = chars[i + 2..].iter().position(|&c| c == ')')? + i + 2;
            let inner: String = chars[i + 2..close].iter().collect();
            if inner.contains(['(', '{']) || matches!(c, '*' | '!') {
                return None;
            }
            let mut choices: Vec<&str> = inner.split('|').collect();
            if c == '?' {
                choices.push("");
            }
            out = out
                .iter()
                .flat_map(|o| choices.iter().map(move |choice| format!("{o}{choice}")))
                .collect();
            if out.len() > 256 {
                return None;
            }
            i = close + 1;
            continue;
        }
        for o in &mut out {
            o.push(c);
        }
        i += 1;
    }
    Some(out)
}

fn regexes(patterns: &[String]) -> Result<Vec<Regex>, String> {
    patterns
        .iter()
        .map(|p| Regex::new(p).map_err(|e| format!("`{p}`: {e}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vitest_and_jest_defaults_match_what_the_runners_collect() {
        let vitest = globs(&[super::super::literal::VITEST_4.include.to_string()], None).unwrap();
        for yes in [
            "a.test.ts",
            "src/x/b.spec.tsx",
            "c.test.mjs",
            "d.spec.cjs",
            "e.test.js",
        ] {
            assert!(vitest.is_match(yes), "{yes}");
        }
        for no in [
            "a.ts",
            "test/a.ts",
            "a.test.py",
            "a.tests.ts",
            "a.test.mtsz",
        ] {
            assert!(!vitest.is_match(no), "{no}");
        }
        let jest = globs(&to_strings(JEST_MATCH), None).unwrap();
        for yes in [
            "__tests__/a.js",
            "src/__tests__/x/b.tsx",
            "a.test.js",
            "test.ts",
            "x.spec.mjs",
        ] {
            assert!(jest.is_match(yes), "{yes}");
        }
        for no in ["a.js", "src/test/a.js", "a.test.py"] {
            assert!(!jest.is_match(no), "{no}");
        }
    }
}
