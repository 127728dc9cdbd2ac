//! Stage 7 — reports: the same result as a human table (with colour only on a TTY without
//! `NO_COLOR`) or as versioned JSON (`plans/report.schema.json`).

pub mod human;
pub mod json;
pub mod styles;
pub mod view;

/// A problem that does not stop the run: one line on stderr (stdout may be JSON).
pub fn warn(line: String) {
    eprintln!("warning: {line}");
}
