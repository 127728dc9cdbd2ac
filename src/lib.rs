//! gate: a deterministic, local "affected tests" gate.
//!
//! The pipeline, in the order data flows: `repo` (range → diff → snapshot) → `analyze`
//! (tree-sitter facts, test discovery) → `graph` (edges) → `verdict` (a row per changed file)
//! → `run::select` (the run plan) → `decision` (records) → `run` (steps, runners, one event
//! stream) → `report` (human, JSON). `cache` keeps what a warm run reuses; `plan` exports the
//! analysis for review; `commands` strings the stages together per subcommand. Only what the
//! binary calls is public: the rest is the crate's own (`ARCHITECTURE.md` maps it).

/// `println!` for a command's output: a closed pipe (`gate explain x | head -1`) ends the
/// output quietly instead of the command with a panic.
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::terminal::say_line(format_args!($($arg)*))?
    };
}

/// One human line on stderr, escaped as `say!` is.
macro_rules! tell {
    ($($arg:tt)*) => {
        $crate::terminal::tell(format_args!($($arg)*))
    };
}

mod analyze;
mod audit;
mod bounded;
mod cache;
pub mod cli;
pub mod commands;
mod config;
mod decision;
pub mod error;
pub mod exit_codes;
mod fingerprint;
mod graph;
mod history;
mod hook;
mod lang;
mod ledger;
mod path;
mod pipeline;
mod plan;
mod process;
mod project;
mod proof;
mod repo;
mod report;
mod run;
mod terminal;
pub mod timings;
mod verdict;
mod version;

pub use report::json::ErrorReport;

/// An error's text as `main` prints it: escaped as every human line is (`report::line`).
pub fn report_line(text: &str) -> String {
    terminal::line(text).into_owned()
}
