//! A Vitest project's configuration read as literals: its test globs, setup files and
//! aliases, and its `projects` (Vitest 3.2's `test.projects`, the older `test.workspace` and
//! `vitest.workspace.*` files): each a folder or configuration file matched by a glob, or an
//! inline configuration, run from the folder that lists them.

use super::config::{
    Matcher, RunnerKind, TestProject, VITE_CONFIGS, VITEST_CONFIGS, globs, imports_of, place,
    relative_to, under, vite_aliases,
};
use super::keys::Keys;
use super::literal::{self, Defaults, Lit, VITEST_3, VITEST_4};
use super::stated::{Stated, hint};
use std::collections::BTreeSet;

/// What Vitest's configuration is read against: the tree's files, a reader of one, and the
/// defaults of the Vitest the project locks.
struct At<'a> {
    files: &'a BTreeSet<String>,
    read: &'a dyn Fn(&str) -> Option<Vec<u8>>,
    defaults: &'static Defaults,
    /// The project's `test` script runs `vitest --typecheck`.
    typecheck: bool,
    stated: &'a Stated<'a>,
}

/// Vitest's default type tests.
const TYPECHECK_INCLUDE: &str = "**/*.{test,spec}-d.?(c|m)[jt]s?(x)";

pub(super) const WORKSPACE_FILES: &[&str] = &[
    "vitest.workspace.ts",
    "vitest.workspace.mts",
    "vitest.workspace.js",
    "vitest.workspace.mjs",
    "vitest.workspace.json",
];

/// The projects of the Vitest folder `dir` whose configuration file is `config`: itself, or
/// the projects it lists.
pub(super) fn projects(
    dir: &str,
    config: Option<String>,
    (files, typecheck): (&BTreeSet<String>, bool),
    read: &dyn Fn(&str) -> Option<Vec<u8>>,
    stated: &Stated<'_>,
) -> Result<Vec<TestProject>, String> {
    let at = &At {
        files,
        read,
        defaults: defaults(dir, files, read),
        typecheck,
        stated,
    };
    let value = match &config {
        Some(file) => exported(file, at)?,
        None => Lit::Obj(Vec::new()),
    };
    let file = config.as_deref().unwrap_or("vitest's defaults");
    let keys = Keys {
        value: &value,
        file,
        dir,
        own: config.is_some(),
    };
    let listed = match (keys.known("test.projects")?, keys.known("test.workspace")?) {
        (Some(list), _) | (None, Some(list)) => Some((list.clone(), file.to_string())),
        (None, None) => workspace_file(dir, at)?,
    };
    match listed {
        Some((Lit::Arr(entries), from)) => {
            let root = project(dir, config.clone(), &value, at)?;
            let mut out = Vec::new();
            for entry in &entries {
                out.extend(listed_project(dir, &from, entry, &root, at)?);
            }
            // `!packages/skip`: a folder the positive globs matched that is no project.
            for entry in &entries {
                if let Lit::Str(negated) = entry
                    && let Some(pattern) = negated.strip_prefix('!')
                {
                    let left_out = matches(dir, pattern, at.files)
                        .map_err(|e| format!("{from}: Vitest project `{negated}`: {e}"))?;
                    out.retain(|p| !left_out.contains(&p.dir));
                }
            }
            Ok(out)
        }
        Some((other, from)) => Err(format!(
            "{from}: Vitest's projects are not a literal list: {}",
            other.text()
        )),
        None => Ok(vec![project(dir, config, &value, at)?]),
    }
}

/// A configuration file's exported object, with the values stated for it.
fn exported(file: &str, at: &At<'_>) -> Result<Lit, String> {
    let bytes = (at.read)(file).ok_or_else(|| format!("{file}: cannot be read"))?;
    let value = if file.ends_with(".json") {
        serde_json::from_slice::<serde_json::Value>(&bytes)
            .map(|v| literal::of_json(&v))
            .map_err(|e| format!("{file}: not JSON: {e}"))?
    } else {
        literal::exported(file, &bytes, at.defaults)
    };
    let value = at.stated.apply(file, value);
    if matches!(value, Lit::Obj(_) | Lit::Arr(_)) {
        Ok(value)
    } else {
        Err(format!(
            "{file}: its configuration is not a literal object (`export default defineConfig({{…}})`): {}; gate cannot tell its tests{}",
            value.text(),
            hint(file, "")
        ))
    }
}

/// A `vitest.workspace.*` file of `dir`: its list, with the file.
fn workspace_file(dir: &str, at: &At<'_>) -> Result<Option<(Lit, String)>, String> {
    let Some(file) = WORKSPACE_FILES
        .iter()
        .map(|f| crate::path::join(dir, f))
        .find(|f| at.files.contains(f))
    else {
        return Ok(None);
    };
    // Read whole, as `test.projects` is: an entry it cannot read is the list's to state.
    let value = exported(&file, at)?;
    if !value.is_known() {
        return Err(format!(
            "{file}: its projects are not literals ({}): gate cannot tell them{}",
            value.text(),
            hint(&file, "")
        ));
    }
    Ok(Some((value, file)))
}

/// One entry of a `projects` list: a glob of folders and configuration files (each folder a
/// project, with its own configuration when it has one; `!` leaves folders out), or an inline
/// configuration (`extends: true` takes the listing project's setup files and aliases).
fn listed_project(
    dir: &str,
    from: &str,
    entry: &Lit,
    root: &TestProject,
    at: &At<'_>,
) -> Result<Vec<TestProject>, String> {
    let in_project = |mut p: TestProject| {
        p.run_dir = dir.to_string();
        p
    };
    match entry {
        Lit::Str(pattern) if pattern.starts_with('!') => Ok(Vec::new()),
        Lit::Str(pattern) | Lit::Path(pattern) => {
            let matched = matches(dir, pattern, at.files)
                .map_err(|e| format!("{from}: Vitest project `{pattern}`: {e}"))?;
            let mut out = Vec::new();
            for path in matched {
                let (folder, config) = if at.files.contains(&path) {
                    (crate::path::parent(&path).to_string(), Some(path))
                } else {
                    let config = VITEST_CONFIGS
                        .iter()
                        .chain(VITE_CONFIGS)
                        .map(|c| crate::path::join(&path, c))
                        .find(|c| at.files.contains(c));
                    (path, config)
                };
                let value = match &config {
                    Some(file) => exported(file, at)?,
                    None => Lit::Obj(Vec::new()),
                };
                out.push(in_project(project(&folder, config, &value, at)?));
            }
            Ok(out)
        }
        Lit::Obj(_) => {
            let keys = Keys {
                value: entry,
                file: from,
                dir,
                own: false,
            };
            let folder = match keys.strings("test.root")?.into_iter().next() {
                Some(root) => relative_to(dir, &root),
                None => dir.to_string(),
            };
            let mut p = project(&folder, None, entry, at)?;
            if matches!(entry.get("extends"), Some(Lit::Bool(true))) {
                p.setup.extend(root.setup.iter().cloned());
                p.setup_specs.extend(root.setup_specs.iter().cloned());
                p.aliases.extend(root.aliases.iter().cloned());
                p.config_imports.extend(root.config_imports.iter().cloned());
            }
            p.config = root.config.clone();
            Ok(vec![in_project(p)])
        }
        other => Err(format!(
            "{from}: a Vitest project gate cannot read: {}",
            other.text()
        )),
    }
}

/// The folders and files of `dir` a project glob matches.
fn matches(dir: &str, pattern: &str, files: &BTreeSet<String>) -> Result<Vec<String>, String> {
    let pattern = relative_to(dir, pattern.trim_end_matches('/'));
    let set = globs(&[pattern], None)?;
    let mut folders: BTreeSet<&str> = BTreeSet::new();
    for f in files {
        folders.extend(crate::path::ancestors(f).filter(|d| !d.is_empty()));
    }
    let mut out: Vec<String> = folders
        .into_iter()
        .filter(|d| under(dir, d).is_some() && set.is_match(d))
        .filter(|d| !d.contains("node_modules"))
        .map(str::to_string)
        .collect();
    out.extend(
        files
            .iter()
            .filter(|f| set.is_match(f.as_str()) && under(dir, f).is_some())
            .cloned(),
    );
    Ok(out)
}

/// A Vitest project in `dir` configured by `value` (read from `config`, or inline).
fn project(
    dir: &str,
    config: Option<String>,
    value: &Lit,
    at: &At<'_>,
) -> Result<TestProject, String> {
    let file = config.as_deref().unwrap_or("vitest's defaults");
    let keys = Keys {
        value,
        file,
        dir,
        own: config.is_some(),
    };
    // Set at all, these are refused whatever they hold: a stated value cannot stand in.
    for key in ["root", "test.root"] {
        if keys.set(key)? && config.is_some() {
            return Err(format!(
                "{file}: `{key}` is set: gate does not read another Vitest root yet"
            ));
        }
    }
    // In-source tests are the source files that hold `import.meta.vitest`: not read yet.
    if keys.set("test.includeSource")? {
        return Err(format!(
            "{file}: `test.includeSource` is set: gate does not read in-source tests yet"
        ));
    }
    let test_dir = keys.strings("test.dir")?.into_iter().next();
    let mut include = keys.strings("test.include")?;
    if include.is_empty() {
        include.push(at.defaults.include.to_string());
    }
    // Type tests run in the type checker (`--typecheck`, `typecheck.enabled`): tests too.
    let typecheck =
        at.typecheck || matches!(keys.known("test.typecheck.enabled")?, Some(Lit::Bool(true)));
    if typecheck {
        if matches!(keys.known("test.typecheck.only")?, Some(Lit::Bool(true))) {
            include.clear();
        }
        let types = keys.strings("test.typecheck.include")?;
        if types.is_empty() {
            include.push(TYPECHECK_INCLUDE.to_string());
        }
        include.extend(types);
    }
    let mut exclude = keys.strings("test.exclude")?;
    if keys.known("test.exclude")?.is_none() {
        exclude = at.defaults.exclude.iter().map(|s| s.to_string()).collect();
    }
    let prefix = test_dir
        .map(|d| relative_to(dir, &d))
        .and_then(|d| under(dir, &d).map(str::to_string))
        .filter(|d| !d.is_empty());
    let include =
        globs(&include, prefix.as_deref()).map_err(|e| format!("{file}: `test.include`: {e}"))?;
    let exclude = globs(&exclude, None).map_err(|e| format!("{file}: `test.exclude`: {e}"))?;
    let mut setup = Vec::new();
    let mut setup_specs = Vec::new();
    for key in ["test.setupFiles", "test.globalSetup"] {
        for s in keys.strings(key)? {
            place(dir, &s, &mut setup, &mut setup_specs);
        }
    }
    let mut aliases = Vec::new();
    for key in ["resolve.alias", "test.alias"] {
        if let Some(v) = keys.known(key)? {
            aliases.extend(vite_aliases(dir, v).map_err(|e| format!("{file}: `{key}`: {e}"))?);
        }
    }
    Ok(TestProject {
        dir: dir.to_string(),
        run_dir: dir.to_string(),
        runner: RunnerKind::Vitest,
        config_imports: imports_of(config.as_deref(), at.read),
        config,
        matcher: Matcher::Globs { include, exclude },
        setup,
        setup_specs,
        aliases,
    })
}

/// The defaults of the Vitest the lock file nearest `dir` installs: Vitest 1 to 3 leave more
/// out than 4 does. Unknown, Vitest 4's, which leave less out: a file gate counts as a test
/// that Vitest does not collect is a broken run, never a missed test.
fn defaults(
    dir: &str,
    files: &BTreeSet<String>,
    read: &dyn Fn(&str) -> Option<Vec<u8>>,
) -> &'static Defaults {
    let patterns = [
        (
            "package-lock.json",
            r#""node_modules/vitest":\s*\{\s*"version":\s*"(\d+)\."#,
        ),
        ("pnpm-lock.yaml", r"(?m)^\s*'?/?vitest@(\d+)\."),
        (
            "yarn.lock",
            r#"(?m)^"?vitest@[^\n]*\n\s*version:?\s*"?(\d+)\."#,
        ),
    ];
    let mut folder = Some(dir);
    while let Some(d) = folder {
        for (name, pattern) in patterns {
            let lock = crate::path::join(d, name);
            if !files.contains(&lock) {
                continue;
            }
            let text = read(&lock).map(|b| String::from_utf8_lossy(&b).into_owned());
            let major = text.and_then(|t| {
                regex::Regex::new(pattern)
                    .ok()?
                    .captures(&t)?
                    .get(1)?
                    .as_str()
                    .parse::<u32>()
                    .ok()
            });
            if let Some(major) = major {
                return if major < 4 { &VITEST_3 } else { &VITEST_4 };
            }
        }
        folder = (!d.is_empty()).then(|| crate::path::parent(d));
    }
    &VITEST_4
}
