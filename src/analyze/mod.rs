//! Stage 2 — analysis: what each source file says about its dependencies, read from its text
//! alone (so the result can be cached by blob id), and how the project's tests are discovered.

pub mod golang;
pub mod gomod;
pub mod paths;
pub mod pytest_ini;
pub mod python;
pub mod roots;
pub mod shell;
