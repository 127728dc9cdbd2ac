//! Stage 2 — analysis: what each source file says about its dependencies, read from its text
//! alone (so the result can be cached by blob id), and how the project's tests are discovered.

pub(crate) mod analysis;
pub(crate) mod facts;
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
    if crate::path::is_python(path) {
        python::analyze(bytes)
    } else if gomod::is_go(path) {
        golang::analyze(bytes)
    } else {
        shell::facts(bytes)
    }
}

/// Python and Go sources, and shell scripts (followed for what they run).
pub(crate) fn analysed(path: &str) -> bool {
    crate::path::is_python(path) || gomod::is_go(path) || is_shell(path)
}

pub(crate) fn is_shell(path: &str) -> bool {
    [".sh", ".bash", ".zsh"].iter().any(|e| path.ends_with(e))
}
