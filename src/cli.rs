//! What the user typed (clap derive only); meaning is given in `commands`.

use crate::report::styles::ColorChoice;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// Runs only the tests a change can break, and names the missing fact when it cannot tell.
#[derive(Parser, Debug)]
#[command(name = "gate", version)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Sub>,
    #[command(flatten)]
    pub gate: GateArgs,
    /// Run as if gate was started in DIR (like `git -C`).
    #[arg(short = 'C', global = true, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// When to colour output.
    #[arg(long, global = true, value_enum, default_value = "auto")]
    pub color: ColorChoice,
}

#[derive(Args, Debug)]
pub struct GateArgs {
    /// Gate a range: `A...B` (since the merge-base), `A..B` (tree to tree) or `R` (`R...HEAD`).
    #[arg(long, value_name = "RANGE", group = "input")]
    pub affected: Option<String>,
    /// Gate the changes from REV to the working tree, uncommitted ones included.
    #[arg(long, value_name = "REV", group = "input")]
    pub since: Option<String>,
    /// Gate these paths as changed (working tree).
    #[arg(long, value_name = "PATH", num_args = 1.., group = "input")]
    pub files: Vec<String>,
    /// Select only: print the verdicts, the selection and the command; run nothing.
    #[arg(long)]
    pub list: bool,
    /// Print the report as JSON (plans/report.schema.json) on stdout.
    #[arg(long)]
    pub json: bool,
    /// Print every selected test and every chain (a big selection is cut to a count).
    #[arg(long, short = 'v')]
    pub verbose: bool,
    /// Record a human decision (a citation) that lets a refused run go on with its bounded remainder.
    #[arg(long, value_name = "CITATION")]
    pub affected_decision: Option<String>,
    /// Run every selected test, reusing no earlier pass from the ledger.
    #[arg(long)]
    pub no_reuse: bool,
    /// Also write the frozen decision (plans/frozen.schema.json) to FILE, before anything runs.
    #[arg(long, value_name = "FILE")]
    pub decision_out: Option<std::path::PathBuf>,
    /// Record the run's results and its selection in the history store.
    #[arg(long)]
    pub record: bool,
    /// The leg the run is recorded under (with --record).
    #[arg(long, value_name = "NAME", requires = "record")]
    pub leg: Option<String>,
    /// The history store (with --record): `postgres://…`, `sqlite:PATH` or a path.
    #[arg(long, value_name = "URL", requires = "record")]
    pub db: Option<String>,
}

#[derive(Subcommand, Debug)]
pub enum Sub {
    /// Analyse the tree and refresh the plan cache; `--out` exports the plans for review.
    Plan {
        /// Analyse this commit's tree instead of the working tree.
        #[arg(long, value_name = "REV")]
        rev: Option<String>,
        /// Write ast-plan.json, import-graph.json and reference-edges.json into DIR.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
    /// Show which tests reach a file, or what a test depends on, as chains with file:line.
    Explain {
        /// A path relative to the repository root.
        path: String,
        /// Explain in this commit's tree instead of the working tree.
        #[arg(long, value_name = "REV")]
        rev: Option<String>,
        /// For a test: every input of its fingerprint with its hash, and why it is unknown
        /// when it is.
        #[arg(long)]
        fingerprint: bool,
        /// With --fingerprint: print it as JSON.
        #[arg(long, requires = "fingerprint")]
        json: bool,
    },
    /// Gate a range non-interactively for ship/deploy scripts and CI: the `verify` steps, no
    /// colour, a JSON receipt.
    Verify {
        /// `A...B`, `A..B` or `R` (`R...HEAD`), as for `--affected`.
        range: String,
        /// Write the receipt (the JSON report: shas, verdicts, selection, decision, steps,
        /// exit codes, durations, gate's version) to FILE.
        #[arg(long, value_name = "FILE")]
        receipt: Option<PathBuf>,
        /// Print the receipt on stdout as well.
        #[arg(long)]
        json: bool,
        /// Record a human decision for a refused range (also read from `GATE_DECISION`).
        #[arg(long, value_name = "CITATION")]
        affected_decision: Option<String>,
    },
    /// Run the whole suite and judge every failing test file against the decision frozen for
    /// the same commit and base: caught, missed (with the cause and the rule that would have
    /// caught it) or flaky (by evidence recorded before this run). Exit 11 on a miss.
    Shadow(ShadowArgs),
    /// Evaluate the selection over the recorded shadow runs: failure recall (with its 95%
    /// Wilson lower bound), faulty-change recall, the selected fraction, misses by cause.
    Evaluate {
        /// The window: `30d`, `12h`.
        #[arg(long, value_name = "DURATION", default_value = "30d")]
        since: String,
        /// Print the evaluation as JSON (plans/evaluate.schema.json).
        #[arg(long)]
        json: bool,
        /// The store: `postgres://…`, `sqlite:PATH` or a path (default: GATE_DB, else .git/gate/history.sqlite).
        #[arg(long, value_name = "URL")]
        db: Option<String>,
    },
    /// Seed 001's cost model over a scenario (its format and field names): runner seconds,
    /// vCPU-minutes and list cost for the baseline and the candidate, and the saving (negative
    /// when it is).
    #[command(group = clap::ArgGroup::new("source").required(true).args(["scenario", "from_history"]))]
    Costs {
        /// The scenario: `{version: 1, mode, jobs: [...], modelUsage}`.
        #[arg(long, value_name = "FILE")]
        scenario: Option<PathBuf>,
        /// Build the scenario from the shadow compares recorded in the window: one job per
        /// compare, its whole suite's seconds the baseline, what its decision ran retained,
        /// gate's recorded selection time the overhead, `audit_rate` as configured.
        #[arg(long)]
        from_history: bool,
        /// With --from-history, the window: `30d`, `12h`.
        #[arg(
            long,
            value_name = "DURATION",
            default_value = "30d",
            requires = "from_history"
        )]
        since: String,
        /// With --from-history, write the scenario built to FILE (seed 001's format).
        #[arg(long, value_name = "FILE", requires = "from_history")]
        scenario_out: Option<PathBuf>,
        /// The store: `postgres://…`, `sqlite:PATH` or a path (default: GATE_DB, else .git/gate/history.sqlite).
        #[arg(long, value_name = "URL", requires = "from_history")]
        db: Option<String>,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        /// Write the report as a Markdown table to FILE.
        #[arg(long, value_name = "FILE")]
        markdown: Option<PathBuf>,
    },
    /// Export one recorded run as observations (versioned JSON: identities as digests, the
    /// inventory, each test file's outcome, duration and dependencies; no test names, errors
    /// or logs), within a size limit.
    Export {
        /// Where to write the export (atomically).
        #[arg(long, value_name = "FILE")]
        observations: PathBuf,
        /// The run (default: the latest recorded one).
        #[arg(long, value_name = "ID")]
        run: Option<String>,
        /// The limit: past it the dependencies take a compact form, then become null, then
        /// nothing is written.
        #[arg(long, value_name = "BYTES", default_value_t = 8 * 1024 * 1024)]
        max_bytes: usize,
        /// The store: `postgres://…`, `sqlite:PATH` or a path (default: GATE_DB, else .git/gate/history.sqlite).
        #[arg(long, value_name = "URL")]
        db: Option<String>,
    },
    /// Import an observation export (either form) into the store, its digest checked.
    Import {
        /// The export to read.
        #[arg(long, value_name = "FILE")]
        observations: PathBuf,
        /// The store: `postgres://…`, `sqlite:PATH` or a path (default: GATE_DB, else .git/gate/history.sqlite).
        #[arg(long, value_name = "URL")]
        db: Option<String>,
    },
    /// Trace each test file's run (strace) and measure the graph against what it really opened.
    Audit {
        /// Audit only the test files matching this glob.
        #[arg(long, value_name = "GLOB")]
        tests: Option<String>,
        /// Test files traced at once (default: the number of CPUs).
        #[arg(long, value_name = "N")]
        jobs: Option<usize>,
        /// Print the full result as JSON (plans/audit.schema.json).
        #[arg(long)]
        json: bool,
        /// Keep the observed dependencies in FILE; when FILE holds earlier ones, report what
        /// changed since.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Trace every test again instead of resuming an earlier, interrupted audit.
        #[arg(long)]
        fresh: bool,
        /// The store that keeps the audit's tallies and, of a committed tree, its traces:
        /// `postgres://…`, `sqlite:PATH` or a path (default: GATE_DB, else .git/gate/history.sqlite).
        #[arg(long, value_name = "URL")]
        db: Option<String>,
    },
    /// Record one leg of a run — JUnit XML or `go test -json` results — in the history store.
    Record {
        /// JUnit XML reports (pytest `--junitxml`, xunit1 or xunit2; gotestsum; go-junit-report).
        #[arg(long, value_name = "FILE", num_args = 1..)]
        junit: Vec<PathBuf>,
        /// `go test -json` output.
        #[arg(long = "go-json", value_name = "FILE", num_args = 1..)]
        go_json: Vec<PathBuf>,
        /// The matrix leg (part of the key: legs never overwrite each other).
        #[arg(long, value_name = "NAME", default_value = "default")]
        leg: String,
        /// The run id (default: from CI variables such as GITHUB_RUN_ID, else generated and printed).
        #[arg(long, value_name = "ID")]
        run: Option<String>,
        /// The attempt of the run (default: GITHUB_RUN_ATTEMPT and the like, else 1).
        #[arg(long, value_name = "N")]
        attempt: Option<u32>,
        /// The commit the results are of (default: HEAD).
        #[arg(long, value_name = "REV", default_value = "HEAD")]
        commit: String,
        /// The branch (default: the current one, else CI's GITHUB_HEAD_REF, GITHUB_REF_NAME …).
        #[arg(long, value_name = "NAME")]
        branch: Option<String>,
        /// The base the commit's change is taken against (default: the merge-base with the
        /// default branch; none on the default branch itself).
        #[arg(long, value_name = "REV")]
        base: Option<String>,
        /// The store: `sqlite:PATH` or a path (default: GATE_DB, else .git/gate/history.sqlite).
        #[arg(long, value_name = "URL")]
        db: Option<String>,
    },
    /// Print a frozen decision (plans/frozen.schema.json) by its id, as the store holds it.
    Decision {
        /// The id a run reported (`frozen_decision` in its JSON report).
        id: String,
        /// The store: `postgres://…`, `sqlite:PATH` or a path (default: GATE_DB, else .git/gate/history.sqlite).
        #[arg(long, value_name = "URL")]
        db: Option<String>,
    },
    /// Show a test's recent recorded runs (newest first), every attempt of each.
    History {
        /// The test id as recorded: `tests/test_cart.py::TestCart::test_total[2-3]`, `pkg/dir::TestName`.
        test: String,
        /// Show at most N runs.
        #[arg(long, value_name = "N", default_value_t = 20)]
        limit: u32,
        /// Print the runs as JSON (plans/history.schema.json).
        #[arg(long)]
        json: bool,
        /// The store: `postgres://…`, `sqlite:PATH` or a path (default: GATE_DB, else .git/gate/history.sqlite).
        #[arg(long, value_name = "URL")]
        db: Option<String>,
    },
    /// Recompute the per-test rollup over the window (`gate record` rolls up its own leg).
    Rollup {
        /// The window (default: `[history] window`, else 90d).
        #[arg(long, value_name = "DAYS")]
        window: Option<humantime::Duration>,
        /// The store: `postgres://…`, `sqlite:PATH` or a path.
        #[arg(long, value_name = "URL")]
        db: Option<String>,
    },
    /// Give every failing test of a recorded run one verdict: new_regression, pre_existing,
    /// flaky or unknown. Exits 1 when there is a new regression.
    Triage {
        /// The run (default: the latest recorded one).
        #[arg(long, value_name = "ID")]
        run: Option<String>,
        /// Print the verdicts as JSON (plans/triage.schema.json).
        #[arg(long)]
        json: bool,
        /// The store: `postgres://…`, `sqlite:PATH` or a path.
        #[arg(long, value_name = "URL")]
        db: Option<String>,
    },
    /// The green ledger of passes reused by fingerprint.
    Ledger {
        #[command(subcommand)]
        action: LedgerAction,
    },
    /// Entry points for git hooks (called by the installed hook scripts).
    Hook {
        #[command(subcommand)]
        hook: HookKind,
    },
    /// Install gate's pre-push hook (honours core.hooksPath; never overwrites a foreign hook).
    InstallHook {
        /// The repository (default: the current one).
        #[arg(long, value_name = "REPO")]
        repo: Option<PathBuf>,
        /// Keep an existing pre-push hook and run it before gate.
        #[arg(long)]
        chain: bool,
    },
    /// Remove gate's pre-push hook (only gate's; a chained hook is put back).
    UninstallHook {
        /// The repository (default: the current one).
        #[arg(long, value_name = "REPO")]
        repo: Option<PathBuf>,
    },
}

#[derive(Subcommand, Debug)]
pub enum LedgerAction {
    /// Drop entries older than the window, and all but the newest of each test's fingerprint.
    Prune {
        /// The store: `postgres://…`, `sqlite:PATH` or a path.
        #[arg(long, value_name = "URL")]
        db: Option<String>,
    },
}

/// `gate shadow`'s arguments.
#[derive(Args, Debug)]
pub struct ShadowArgs {
    /// `A...B`, `A..B` or `R` (`R...HEAD`), as for `--affected` (default: the default
    /// branch `...HEAD`).
    pub range: Option<String>,
    /// The leg the run is recorded under.
    #[arg(long, value_name = "NAME", default_value = "default")]
    pub leg: String,
    /// The store: `postgres://…`, `sqlite:PATH` or a path (default: GATE_DB, else .git/gate/history.sqlite).
    #[arg(long, value_name = "URL")]
    pub db: Option<String>,
    /// Print the run's report as JSON on stdout (the judgements go to stderr).
    #[arg(long)]
    pub json: bool,
    /// Judge a whole-suite run already made: its JUnit XML reports (pytest `--junitxml`).
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub junit: Vec<PathBuf>,
    /// Judge a whole-suite run already made: its `go test -json` streams.
    #[arg(long = "go-json", value_name = "FILE", num_args = 1..)]
    pub go_json: Vec<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum HookKind {
    /// git's pre-push protocol: refs on stdin, `<remote-name> <remote-url>` as arguments.
    PrePush { remote: String, url: Option<String> },
}

impl Cli {
    /// The gate's own flags (`--affected`, `--list`, …) go without a subcommand; `-C` and
    /// `--color` go with any (`gate -C DIR plan`, as `git -C DIR log`).
    pub fn check(&self) -> Result<(), String> {
        let g = &self.gate;
        let gate_flags = g.affected.is_some()
            || g.since.is_some()
            || !g.files.is_empty()
            || g.list
            || g.json
            || g.verbose
            || g.affected_decision.is_some()
            || g.record
            || g.no_reuse
            || g.decision_out.is_some();
        match (&self.command, gate_flags) {
            (Some(_), true) => Err(
                "--affected, --since, --files, --list, --json, --verbose, --affected-decision, --record, --no-reuse and --decision-out go without a subcommand (`gate --affected RANGE`); a subcommand takes its own".into(),
            ),
            _ => Ok(()),
        }
    }

    /// Whether the command's answer is JSON on stdout (then an error is JSON too).
    pub fn json(&self) -> bool {
        match &self.command {
            None => self.gate.json,
            Some(
                Sub::Verify { json, .. }
                | Sub::Explain { json, .. }
                | Sub::Audit { json, .. }
                | Sub::History { json, .. }
                | Sub::Shadow(ShadowArgs { json, .. })
                | Sub::Costs { json, .. }
                | Sub::Evaluate { json, .. }
                | Sub::Triage { json, .. },
            ) => *json,
            Some(_) => false,
        }
    }

    /// The receipt `gate verify` writes, whatever the outcome.
    pub fn receipt(&self) -> Option<&std::path::Path> {
        match &self.command {
            Some(Sub::Verify { receipt, .. }) => receipt.as_deref(),
            _ => None,
        }
    }
}
