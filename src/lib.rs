//! gate: a deterministic, local "affected tests" gate.
//!
//! The pipeline, in the order data flows: `repo` (range → diff → snapshot) → `analyze`
//! (tree-sitter facts, test discovery) → `graph` (edges) → `verdict` (a row per changed file)
//! → `run::select` (the run plan) → `decision` (records) → `run` (steps, runners, one event
//! stream) → `report` (human, JSON). `cache` keeps what a warm run reuses; `plan` exports the
//! analysis for review; `commands` strings the stages together per subcommand. Only what the
//! binary calls is public: the rest is the crate's own (`ARCHITECTURE.md` maps it).

mod analyze;
mod audit;
mod cache;
pub mod cli;
pub mod commands;
mod config;
mod costs;
mod decision;
pub mod error;
mod evaluate;
pub mod exit_codes;
mod fingerprint;
mod frozen;
mod graph;
mod history;
mod hook;
mod ledger;
mod observations;
mod path;
mod plan;
mod process;
mod project;
mod repo;
mod report;
mod run;
mod shadow;
pub mod timings;
mod verdict;
mod version;

pub use report::json::ErrorReport;

/// An error's text as `main` prints it: escaped as every human line is (`report::line`).
pub fn report_line(text: &str) -> String {
    report::line(text).into_owned()
}
