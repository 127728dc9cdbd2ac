//! The documented exit codes. They are API: hooks, ship scripts and CI branch on them.
//! A run stopped by signal n exits with 128 + n, after the runner stopped and nothing was left.

/// Tests passed, or there was nothing to run (every change inert, or no test reaches it).
pub const OK: u8 = 0;
/// The selected tests ran and at least one failed (or a Go package they need did not build).
pub const TESTS_FAILED: u8 = 1;
/// A change could not be bounded and no decision was recorded: the run was aborted.
pub const REFUSED: u8 = 2;
/// Usage or configuration: a bad flag (an empty `--workflow`), a runner argument after `--`
/// (or in `PYTEST_ADDOPTS`, `GOFLAGS`) not on the runner's allow-list nor in `allow_args`, an
/// unknown revision, a path naming nothing, a malformed
/// `.gate.toml` or one that matches nothing. Nothing was selected or run.
pub const USAGE: u8 = 3;
/// The runner (or a tool gate drives, such as strace) could not be started, or stopped without
/// a test verdict: among them a run that ran no test body, or reported results under ids no
/// selected file defines.
pub const RUNNER: u8 = 4;
/// A gate step (`[[step]]` in `.gate.toml`) failed or could not start: the push or ship is blocked.
pub const STEP_FAILED: u8 = 5;
/// The repository could not be read: a missing object, a repository owned by another user, a
/// bare repository.
pub const GIT: u8 = 6;
/// A file gate must read or write could not be: a receipt, the decisions, a temporary folder;
/// an observation export that does not fit its limit even without dependencies (not written).
pub const IO: u8 = 7;
/// The history store is unavailable: it cannot be opened or written, it stayed locked, or its
/// schema is newer than this gate. Nothing was recorded.
pub const STORE: u8 = 8;
/// An internal error of gate (a broken invariant): a bug to report.
pub const INTERNAL: u8 = 9;
/// An input file gate was asked to read (a JUnit report, a `go test -json` stream) is
/// malformed, truncated or not of that kind: the error names the file and where it broke, and
/// nothing was recorded. A `--recommendations` file whose context is not the gated tree's
/// source and configuration (the field named), that is malformed or holds a field gate does not
/// know (its path, line and column named), that names a path outside the tree, or that is not a
/// regular file or is past its size limit: nothing ran.
pub const INPUT: u8 = 10;
/// `gate shadow`: a test the whole suite failed was one the frozen decision left out (or
/// reused): the selection missed it. The miss and the rule that would have caught it are named.
pub const MISSED: u8 = 11;
/// `gate shadow`: no test file or Go package had a result (a report holding no test, a run that
/// ran none), so nothing was judged. The compare is still recorded — `gate evaluate` counts its
/// units unknown — but a CI step that audited nothing must not look green.
pub const NOTHING_JUDGED: u8 = 12;
/// A run whose runner arguments (after `--`) left none of the selected tests to run (`-k`
/// matching nothing, `-run=` naming no test): nothing was tested, so it is not a pass.
pub const NOTHING_RAN: u8 = 13;
/// `gate triage`: the run's legs ran shards K/N and a shard has no recorded leg, or a leg
/// recorded no result for some of the units the frozen decision's split gave its shard: the
/// run is not whole. Every missing shard and unit is named; the code stays until every shard
/// has a leg, and comes before `TESTS_FAILED`.
pub const INCOMPLETE: u8 = 14;
