//! Stage 2 — analysis: what each source file says about its dependencies, read from its text
//! alone (so the result can be cached by blob id), and how the project's tests are discovered.

pub mod analysis;
pub mod facts;
pub mod golang;
pub mod gomod;
pub mod paths;
pub mod pytest_ini;
pub mod python;
pub mod roots;
pub mod shell;

/// The facts of one file's contents, by its kind: Python sources and stubs, Go sources, shell
/// scripts (the bytes mean different things to each).
pub fn facts_of(path: &str, bytes: &[u8]) -> facts::Facts {
    if crate::graph::is_python(path) {
        python::analyze(bytes)
    } else if gomod::is_go(path) {
        golang::analyze(bytes)
    } else {
        shell::facts(bytes)
    }
}

/// Python and Go sources, and shell scripts (followed for what they run).
pub fn analysed(path: &str) -> bool {
    crate::graph::is_python(path) || gomod::is_go(path) || is_shell(path)
}

pub fn is_shell(path: &str) -> bool {
    [".sh", ".bash", ".zsh"].iter().any(|e| path.ends_with(e))
}
