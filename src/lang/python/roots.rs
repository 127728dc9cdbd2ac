//! Python import roots: the directories whose children are top-level packages. `python.roots`
//! in `.gate.toml` wins; otherwise the repository root, `src/` (src layout) and whatever
//! pyproject.toml or setup.cfg declares (setuptools `where`/`package-dir`, poetry `from`).

use crate::lang::python::pytest_ini::ini_section;
use std::collections::BTreeSet;

pub(crate) fn detect(
    files: &BTreeSet<String>,
    read: impl Fn(&str) -> Option<Vec<u8>>,
) -> Vec<String> {
    let mut roots = BTreeSet::from([String::new()]);
    let has_python_under = |dir: &str| {
        let prefix = format!("{dir}/");
        files
            .range(prefix.clone()..)
            .take_while(|f| f.starts_with(&prefix))
            .any(|f| f.ends_with(".py"))
    };
    if !files.contains("src/__init__.py") && has_python_under("src") {
        roots.insert("src".to_string());
    }
    if let Some(text) = read("pyproject.toml").map(|b| String::from_utf8_lossy(&b).into_owned())
        && let Ok(doc) = toml::from_str::<toml::Table>(&text)
    {
        let tool = doc.get("tool");
        let setuptools = tool.and_then(|t| t.get("setuptools"));
        if let Some(where_) = setuptools
            .and_then(|s| s.get("packages"))
            .and_then(|p| p.get("find"))
            .and_then(|f| f.get("where"))
            .and_then(|w| w.as_array())
        {
            roots.extend(where_.iter().filter_map(|w| w.as_str()).map(clean));
        }
        if let Some(dirs) = setuptools
            .and_then(|s| s.get("package-dir"))
            .and_then(|d| d.as_table())
        {
            roots.extend(
                dirs.iter()
                    .filter(|(k, _)| k.is_empty())
                    .filter_map(|(_, v)| v.as_str())
                    .map(clean),
            );
        }
        if let Some(packages) = tool
            .and_then(|t| t.get("poetry"))
            .and_then(|p| p.get("packages"))
            .and_then(|p| p.as_array())
        {
            roots.extend(
                packages
                    .iter()
                    .filter_map(|p| p.get("from"))
                    .filter_map(|f| f.as_str())
                    .map(clean),
            );
        }
    }
    if let Some(text) = read("setup.cfg").map(|b| String::from_utf8_lossy(&b).into_owned()) {
        for (key, value) in ini_section(&text, "options").unwrap_or_default() {
            if key == "package_dir" {
                // `package_dir = =src` or a mapping line `= src`
                roots.extend(
                    value
                        .split_whitespace()
                        .filter_map(|m| m.strip_prefix('='))
                        .filter(|d| !d.is_empty())
                        .map(clean),
                );
                if let Some(rest) = value.trim().strip_prefix('=') {
                    roots.insert(clean(rest.trim()));
                }
            }
        }
        for (key, value) in ini_section(&text, "options.packages.find").unwrap_or_default() {
            if key == "where" {
                roots.insert(clean(&value));
            }
        }
    }
    roots.into_iter().collect()
}

fn clean(dir: &str) -> String {
    dir.trim()
        .trim_start_matches("./")
        .trim_matches('/')
        .trim_start_matches('.')
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts() {
        let files: BTreeSet<String> = ["src/shop/__init__.py", "lib/x/__init__.py"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(detect(&files, |_| None), vec!["".to_string(), "src".into()]);
        let cfg = |name: &str| {
            (name == "setup.cfg").then(|| b"[options]\npackage_dir =\n    = lib\n".to_vec())
        };
        assert_eq!(
            detect(&files, cfg),
            vec!["".to_string(), "lib".into(), "src".into()]
        );
        let pyproject = |name: &str| {
            (name == "pyproject.toml")
                .then(|| b"[tool.setuptools.packages.find]\nwhere = [\"lib\"]\n".to_vec())
        };
        assert!(detect(&files, pyproject).contains(&"lib".to_string()));
    }
}
