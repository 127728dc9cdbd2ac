//! One integration binary: real git repositories, the real `gate` binary, real pytest.

mod errors;
mod plans;
mod selection;
mod support;
mod verdicts;
