//! The configuration files pytest reads, as text: the keys of an INI section or of pyproject's
//! pytest table, and the plugins a project registers (`-p`, `pytest11` entry points). Shared
//! with the readers of other settings (`roots`, `config`), so kept apart from discovery.

use crate::error::{Error, Result};

/// A configuration section's keys and values, in the file's order.
type Keys = Vec<(String, String)>;

/// The settings pytest reads: the first of its configuration files that holds them (the
/// file's name and its keys), or none for pytest's defaults.
pub(super) fn settings(read: &dyn Fn(&str) -> Option<Vec<u8>>) -> Result<Option<(String, Keys)>> {
    for (file, section) in [
        ("pytest.ini", "pytest"),
        ("pyproject.toml", ""),
        ("tox.ini", "pytest"),
        ("setup.cfg", "tool:pytest"),
    ] {
        let Some(bytes) = read(file) else { continue };
        let text = String::from_utf8_lossy(&bytes);
        let keys = if file == "pyproject.toml" {
            pyproject_keys(&text).map_err(|message| Error::config(file, message))?
        } else {
            ini_section(&text, section)
        };
        // pytest.ini wins even when empty; the others only when they have the section.
        if let Some(keys) = keys.or_else(|| (file == "pytest.ini").then(Vec::new)) {
            return Ok(Some((file.to_string(), keys)));
        }
    }
    Ok(None)
}

/// The plugins the project registers: `-p` in the `addopts` of `file`, and `pytest11` entry
/// points; each module once.
pub(super) fn plugins(
    file: &str,
    addopts: Option<&[String]>,
    read: &dyn Fn(&str) -> Option<Vec<u8>>,
) -> Vec<(String, String)> {
    let mut plugins: Vec<(String, String)> = addopts
        .map(addopts_plugins)
        .unwrap_or_default()
        .into_iter()
        .map(|m| (m.clone(), format!("{file} addopts `-p {m}`")))
        .collect();
    plugins.extend(entry_point_plugins(read));
    plugins.sort();
    plugins.dedup_by(|a, b| a.0 == b.0);
    plugins
}

/// The modules `-p NAME` / `-pNAME` load (`-p no:NAME` disables one: not a module).
fn addopts_plugins(addopts: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut words = addopts.iter().map(String::as_str);
    while let Some(word) = words.next() {
        let name = match word.strip_prefix("-p") {
            Some("") => words.next(),
            Some(rest) => Some(rest),
            None => None,
        };
        if let Some(name) = name.filter(|n| !n.starts_with("no:") && !n.is_empty()) {
            out.push(name.to_string());
        }
    }
    out
}

/// `pytest11` entry points of pyproject.toml (`[project.entry-points.pytest11]`, poetry's
/// `[tool.poetry.plugins.pytest11]`) and setup.cfg (`[options.entry_points]`): installed in
/// development mode, pytest loads each for every test.
fn entry_point_plugins(read: &dyn Fn(&str) -> Option<Vec<u8>>) -> Vec<(String, String)> {
    let module = |value: &str| {
        value
            .split(':')
            .next()
            .unwrap_or_default()
            .trim()
            .to_string()
    };
    let mut out = Vec::new();
    if let Some(bytes) = read("pyproject.toml") {
        let text = String::from_utf8_lossy(&bytes);
        // A malformed one is refused where pytest reads it (`pyproject_keys`); where pytest.ini
        // wins, its entry points are simply not there.
        let doc: toml::Table = toml::from_str(&text).unwrap_or_default();
        let tables = [
            doc.get("project")
                .and_then(|p| p.get("entry-points"))
                .and_then(|e| e.get("pytest11")),
            doc.get("tool")
                .and_then(|t| t.get("poetry"))
                .and_then(|p| p.get("plugins"))
                .and_then(|e| e.get("pytest11")),
        ];
        for table in tables.into_iter().flatten().filter_map(|t| t.as_table()) {
            for (name, value) in table {
                if let Some(v) = value.as_str() {
                    out.push((
                        module(v),
                        format!("pyproject.toml entry point pytest11 `{name}`"),
                    ));
                }
            }
        }
    }
    if let Some(bytes) = read("setup.cfg") {
        let text = String::from_utf8_lossy(&bytes);
        let keys = ini_section(&text, "options.entry_points").unwrap_or_default();
        for (_, value) in keys.iter().filter(|(k, _)| k == "pytest11") {
            // Continuation lines were joined with spaces: `name = module:attr name2 = …`.
            let words: Vec<&str> = value.split_whitespace().collect();
            for pair in words.windows(3).filter(|w| w[1] == "=") {
                out.push((
                    module(pair[2]),
                    format!("setup.cfg entry point pytest11 `{}`", pair[0]),
                ));
            }
        }
    }
    out
}

/// `[tool.pytest.ini_options]` keys, lists joined by spaces as pytest reads them.
fn pyproject_keys(text: &str) -> std::result::Result<Option<Vec<(String, String)>>, String> {
    let doc: toml::Table = toml::from_str(text).map_err(|e| one_line(&e.to_string()))?;
    let Some(pytest) = doc
        .get("tool")
        .and_then(|t| t.get("pytest"))
        .and_then(|p| p.as_table())
    else {
        return Ok(None);
    };
    // `[tool.pytest.ini_options]`, or pytest 9's native `[tool.pytest]` table.
    let options = match pytest.get("ini_options").and_then(|o| o.as_table()) {
        Some(ini) => ini,
        None => pytest,
    };
    let keys = options
        .iter()
        .filter(|(k, _)| k.as_str() != "ini_options")
        .map(|(k, v)| {
            let value = match v {
                toml::Value::String(s) => s.clone(),
                // A list is its items, each one word (quoted, as `addopts` is split as a
                // shell does).
                toml::Value::Array(items) => items
                    .iter()
                    .map(|i| i.as_str().map_or_else(|| i.to_string(), quote_word))
                    .collect::<Vec<_>>()
                    .join(" "),
                other => other.to_string(),
            };
            (k.clone(), value)
        })
        .collect();
    Ok(Some(keys))
}

/// One word, quoted for a shell's split when it holds what would split or unquote it.
fn quote_word(word: &str) -> String {
    if word.is_empty() || word.contains(|c: char| c.is_whitespace() || "'\"\\".contains(c)) {
        format!("'{}'", word.replace('\'', "'\"'\"'"))
    } else {
        word.to_string()
    }
}

/// The keys of one section of an INI file; continuation lines (indented) join the value.
pub(crate) fn ini_section(text: &str, section: &str) -> Option<Vec<(String, String)>> {
    let mut keys: Option<Vec<(String, String)>> = None;
    let mut inside = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        if let Some(name) = trimmed.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            inside = name.trim() == section;
            if inside {
                keys.get_or_insert_with(Vec::new);
            }
            continue;
        }
        if !inside {
            continue;
        }
        let keys = keys.get_or_insert_with(Vec::new);
        if line.starts_with([' ', '\t']) {
            if let Some((_, value)) = keys.last_mut() {
                value.push(' ');
                value.push_str(trimmed);
            }
        } else if let Some((k, v)) = trimmed.split_once(['=', ':']) {
            keys.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    keys
}

/// toml's errors span several lines with a source excerpt; gate prints one.
pub(crate) fn one_line(message: &str) -> String {
    message
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ")
}
