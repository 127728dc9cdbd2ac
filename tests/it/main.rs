//! One integration binary: real git repositories, the real `gate` binary, real pytest.

mod audit;
mod caches;
mod checkouts;
mod config_guard;
mod doctests;
mod errors;
mod fingerprint;
mod forms;
mod frameworks;
mod golang;
#[macro_use]
mod history;
mod frozen;
mod hook;
mod install;
mod ledger;
mod limits;
mod load_space;
mod observations;
mod output;
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
