//! Stage 2 — analysis: what each source file says about its dependencies, read from its text
//! alone (so the result can be cached by blob id), and how the project's tests are discovered.

pub(crate) mod analysis;
pub(crate) mod facts;
pub(crate) mod framework;
pub(crate) mod go_values;
pub(crate) mod golang;
pub(crate) mod gomod;
pub(crate) mod paths;
pub(crate) mod pytest_ini;
pub(crate) mod python;
pub(crate) mod roots;
pub(crate) mod shell;

/// The facts of one file's contents, by its kind: Python sources and stubs, Go sources, shell
/// scripts (the bytes mean different things to each).
pub(crate) fn facts_of(path: &str, bytes: &[u8]) -> facts::Facts {
    if is_case_file_name(path) {
        type_cases(bytes)
    } else if crate::path::is_python(path) {
        python::analyze(bytes)
    } else if gomod::is_go(path) {
        golang::analyze(bytes)
    } else if is_doctest_text(path) {
        doctest_text(bytes)
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

/// A text file's doctest examples read as one Python source, each line where the file has it:
/// their imports (edges only when the file is collected as a doctest), strings and paths.
/// Prose between the examples is not code: a parse error there says nothing of them.
fn doctest_text(bytes: &[u8]) -> facts::Facts {
    let text = String::from_utf8_lossy(bytes);
    if !text.contains(">>>") {
        return facts::Facts::default();
    }
    let mut facts = python::analyze(examples(&text).as_bytes());
    facts.doctest_imports = std::mem::take(&mut facts.imports);
    facts.parse_errors.clear();
    facts
}

/// The code of doctest examples (`>>> ` lines and their `... ` continuations) with every other
/// line left empty, so line numbers stay the text's.
pub(crate) fn examples(text: &str) -> String {
    let mut code = String::with_capacity(text.len() / 4);
    for line in text.lines() {
        let t = line.trim_start();
        let example = [">>> ", "... "]
            .iter()
            .find_map(|p| t.strip_prefix(p))
            .or_else(|| (t == ">>>" || t == "...").then_some(""));
        code.push_str(example.unwrap_or_default());
        code.push('\n');
    }
    code
}

/// Python and Go sources, shell scripts (followed for what they run) and the YAML files
/// pytest-mypy-plugins may collect.
pub(crate) fn analysed(path: &str) -> bool {
    crate::path::is_python(path)
        || gomod::is_go(path)
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
    let mut facts = python::analyze(code.as_bytes());
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
