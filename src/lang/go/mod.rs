//! Go: its sources (`.go`) and their facts (`analyze`, with string expressions evaluated in
//! `values`), modules and workspaces (`gomod`), and `go test` with its `-json` stream
//! (`gotest`) and what its test binaries linked outside the main module (`reads`).

pub(crate) mod analyze;
pub(crate) mod args;
pub(crate) mod gomod;
pub(crate) mod gotest;
mod reads;
mod suite;
pub(crate) mod toolchain;
pub(crate) mod values;

use crate::analyze::facts::Facts;

pub(crate) struct Go;

impl super::Language for Go {
    fn name(&self) -> &'static str {
        "go"
    }

    fn is_source(&self, path: &str) -> bool {
        gomod::is_go(path)
    }

    fn facts(&self, _path: &str, bytes: &[u8]) -> Facts {
        analyze::analyze(bytes)
    }

    fn cache_tag(&self, _path: &str) -> &'static str {
        "go:"
    }

    fn plan_role(&self, path: &str) -> Option<&'static str> {
        Some(if path.ends_with("_test.go") {
            "go_test"
        } else {
            "go"
        })
    }

    fn stops_at_imports(&self) -> bool {
        true
    }

    fn changed_parse_errors(&self, bytes: &[u8]) -> Vec<u32> {
        analyze::parse_errors(bytes)
    }

    fn grammar(&self) -> &'static str {
        analyze::GRAMMAR
    }
}
