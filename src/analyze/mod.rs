//! Stage 3 — analysis: what each source file says about its dependencies, read from its text
//! alone (so the result can be cached by blob id), and how the project's tests are discovered.

pub(crate) mod analysis;
pub(crate) mod facts;
pub(crate) mod paths;
pub(crate) mod shell;

/// The facts of one file's contents, by its kind: Python sources and stubs, Go sources, shell
/// scripts (the bytes mean different things to each).
pub(crate) fn facts_of(path: &str, bytes: &[u8]) -> facts::Facts {
    if is_case_file_name(path) {
        type_cases(bytes)
    } else if let Some(language) = crate::lang::of_source(path) {
        language.facts(path, bytes)
    } else if is_doctest_text(path) {
        crate::lang::python::analyze::doctest_text(bytes)
    } else {
        shell::facts(bytes)
    }
}

/// Text files pytest's doctest plugin may collect (`test*.txt` by default, `--doctest-glob`):
/// whether one is a test is decided with the project's options, later; its examples' code is
/// read here.
pub(crate) fn is_doctest_text(path: &str) -> bool {
    [".txt", ".rst", ".md"].iter().any(|e| path.ends_with(e))
}

/// Python and Go sources, shell scripts (followed for what they run) and the YAML files
/// pytest-mypy-plugins may collect.
pub(crate) fn analysed(path: &str) -> bool {
    crate::lang::of_source(path).is_some()
        || is_shell(path)
        || is_case_file_name(path)
        || is_doctest_text(path)
}

/// The names pytest-mypy-plugins collects: `test*.yml`, `test*.yaml`.
pub(crate) fn is_case_file_name(path: &str) -> bool {
    let name = crate::path::file_name(path);
    name.starts_with("test") && (name.ends_with(".yml") || name.ends_with(".yaml"))
}

/// Whether a YAML file is a pytest-mypy-plugins case file: a list of `- case:` entries.
pub(crate) fn is_case_file(bytes: &[u8]) -> bool {
    String::from_utf8_lossy(bytes)
        .lines()
        .any(|l| l.trim_end().starts_with("- case:"))
}

/// A pytest-mypy-plugins case file's facts: the imports of its `main: |` snippets (read as one
/// Python source, each snippet's lines where the YAML has them), and that it type-checks.
/// Any other YAML file has none.
fn type_cases(bytes: &[u8]) -> facts::Facts {
    if !is_case_file(bytes) {
        return facts::Facts::default();
    }
    let text = String::from_utf8_lossy(bytes);
    let mut code = String::new();
    let mut block: Option<usize> = None;
    for line in text.lines() {
        let indent = line.len() - line.trim_start().len();
        match block {
            Some(at) if line.trim().is_empty() || indent > at => {
                code.push_str(line.get(at + 2..).unwrap_or_default().trim_end());
                code.push('\n');
                continue;
            }
            _ => block = None,
        }
        let key = line.trim_start().trim_start_matches("- ");
        if key.starts_with("main: |") || key.starts_with("main: >") {
            block = Some(indent);
        }
        code.push('\n');
    }
    let mut facts = crate::lang::python::analyze::analyze(code.as_bytes());
    // Only the snippets' imports: their strings are mypy's input, not paths the test opens.
    facts.strings.clear();
    facts.paths.clear();
    facts.dynamic_imports.clear();
    facts.sys_paths.clear();
    facts.apps.clear();
    facts.type_check = true;
    facts
}

pub(crate) fn is_shell(path: &str) -> bool {
    [".sh", ".bash", ".zsh"].iter().any(|e| path.ends_with(e))
}

#[cfg(test)]
mod tests {
    /// A broken example does not hide the imports of the examples around it (tree-sitter's
    /// recovery may swallow them when all are read at once); the file says it has an error.
    #[test]
    fn a_broken_example_hides_no_other_examples_import() {
        let text = "Guide\n\n    >>> from pkg.a import x\n    >>> s = '''abc\n    >>> import pkg.b\n    >>> t = (1,\n    >>> from pkg.c import y\n    y\n";
        let facts = super::facts_of("docs/guide.md", text.as_bytes());
        let got: Vec<(String, u32)> = facts
            .doctest_imports
            .iter()
            .map(|i| (i.module.clone(), i.line))
            .collect();
        for (module, line) in [("pkg.a", 3), ("pkg.b", 5), ("pkg.c", 7)] {
            assert!(
                got.contains(&(module.to_string(), line)),
                "{module}: {got:?}"
            );
        }
        assert!(!facts.parse_errors.is_empty());
        // The same in a docstring, whose lines count from the module's.
        let module = format!(
            "def f():\n    \"\"\"\n{}\n    \"\"\"\n",
            text.replace('\n', "\n    ")
        );
        let facts = super::facts_of("pkg/m.py", module.as_bytes());
        let got: Vec<(String, u32)> = facts
            .doctest_imports
            .iter()
            .map(|i| (i.module.clone(), i.line))
            .collect();
        for (module, line) in [("pkg.a", 5), ("pkg.b", 7), ("pkg.c", 9)] {
            assert!(
                got.contains(&(module.to_string(), line)),
                "{module}: {got:?}"
            );
        }
    }
}
