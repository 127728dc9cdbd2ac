//! One integration binary: real git repositories, the real `gate` binary, real pytest.

mod audit;
mod errors;
mod golang;
mod hook;
mod install;
mod plans;
mod push_support;
mod references;
mod selection;
mod steps;
mod support;
mod verdicts;
