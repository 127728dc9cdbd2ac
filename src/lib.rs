//! gate: a deterministic, local "affected tests" gate.
//!
//! The pipeline, in the order data flows: `repo` (range → diff → snapshot) → `analyze`
//! (tree-sitter facts, test discovery) → `plan` (cached, serialized) → `graph` (edges) →
//! `verdict` (a row per changed file) → `run` (the project's runner) → `decision` (records) →
//! `report` (human, JSON). `commands` strings the stages together per subcommand.

pub mod analyze;
pub mod audit;
pub mod cache;
pub mod cli;
pub mod commands;
pub mod config;
pub mod decision;
pub mod error;
pub mod exit_codes;
pub mod graph;
pub mod hook;
pub mod plan;
pub mod process;
pub mod project;
pub mod repo;
pub mod report;
pub mod run;
pub mod timings;
pub mod verdict;
