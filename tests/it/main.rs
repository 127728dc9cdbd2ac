//! One integration binary: real git repositories, the real `gate` binary, real pytest.

mod audit;
mod caches;
mod checkouts;
mod config_guard;
mod errors;
mod fingerprint;
mod frameworks;
mod golang;
#[macro_use]
mod history;
mod frozen;
mod hook;
mod install;
mod ledger;
mod limits;
mod observations;
mod output;
mod path_space;
mod paths;
mod plans;
mod push_support;
mod references;
mod refusals;
mod results;
mod runner_argv;
mod selection;
mod shadow;
mod snapshots;
mod steps;
mod support;
mod symlinks;
mod triage;
mod verdicts;
