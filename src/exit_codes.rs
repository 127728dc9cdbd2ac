//! The documented exit codes. They are API: hooks, ship scripts and CI branch on them.

/// Tests passed, or there was nothing to run (every change inert, or no test reaches it).
pub const OK: u8 = 0;
/// The selected tests ran and at least one failed.
pub const TESTS_FAILED: u8 = 1;
/// A change could not be bounded and no decision was recorded: the run was aborted.
pub const REFUSED: u8 = 2;
/// Usage, configuration or git error: nothing was selected or run.
pub const USAGE: u8 = 3;
/// The test runner could not be started, or stopped without a test verdict.
pub const RUNNER: u8 = 4;
/// A gate step (`[[step]]` in `.gate.toml`) failed or could not start: the push or ship is blocked.
pub const STEP_FAILED: u8 = 5;
