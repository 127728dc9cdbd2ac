//! What the user typed (clap derive only); meaning is given in `commands`.

use crate::report::styles::ColorChoice;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// Runs only the tests a change can break, and names the missing fact when it cannot tell.
#[derive(Parser, Debug)]
#[command(name = "gate", version, after_long_help = examples_help())]
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

/// The first commands a user needs, and what each does: `gate --help` ends with them and the
/// man page has them as its EXAMPLES.
pub const EXAMPLES: [(&str, &str); 4] = [
    (
        "gate --affected origin/main...HEAD",
        "run the tests this branch's commits can break",
    ),
    (
        "gate --since HEAD --list",
        "show what the uncommitted changes would run, and run nothing",
    ),
    (
        "gate explain src/shop/money.py",
        "show which tests reach a file, and through what",
    ),
    (
        "gate install-hook",
        "gate every `git push` of this repository",
    ),
];

fn examples_help() -> String {
    let width = EXAMPLES.iter().map(|(c, _)| c.len()).max().unwrap_or(0);
    EXAMPLES
        .iter()
        .fold("Examples:".to_string(), |text, (command, what)| {
            format!("{text}\n  {command:width$}   {what}")
        })
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
    /// Go on past a refusal with the tests gate could bound, citing the human decision that allows it.
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
    #[command(flatten)]
    pub legs: LegArgs,
    /// Add the test files a recommendations file names to the selection; it never removes one.
    ///
    /// `{version: 1, context, selectedFiles: [{file, project, pool}]}`: its context must be
    /// this tree's source and configuration, or gate stops (exit 10) naming the field.
    #[arg(long, value_name = "FILE")]
    pub recommendations: Option<PathBuf>,
    /// Arguments for the test runner, after `--`: given after gate's own, before the tests.
    ///
    /// They can never replace the selection: an argument that would take a test as its value
    /// is refused. A run given them enters no pass in the ledger.
    #[arg(last = true, value_name = "RUNNER_ARGS")]
    pub runner_args: Vec<String>,
}

/// A CI leg: its environment, its shard of a split selection, the decision it shares with
/// the other legs, the store they share.
#[derive(Args, Debug, Default)]
pub struct LegArgs {
    /// The environment this leg runs in, e.g. `py3.12-linux`: its runs are recorded under it.
    ///
    /// A shard split reads the durations recorded under it.
    #[arg(long, value_name = "NAME")]
    pub leg: Option<String>,
    /// Run shard K of N of the selection, split by recorded durations.
    ///
    /// Every selected test file (Go package) is in exactly one shard. The split is frozen
    /// into the decision: legs given the same decision (--decision) run the same split.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    /// With --shard: use the split of this frozen decision (made by one select job).
    ///
    /// It must be frozen for the same commit and base, split into N shards.
    #[arg(long, value_name = "ID", requires = "shard")]
    pub decision: Option<String>,
    /// With --shard: split by test file (and Go package), or by pytest test.
    ///
    /// `test` splits a suite dominated by a few long files inside them: the select job lists
    /// the selected files' node ids with pytest, and so does each leg.
    #[arg(
        long,
        value_enum,
        value_name = "BY",
        default_value = "file",
        requires = "shard"
    )]
    pub shard_by: ShardBy,
    /// The history store: `postgres://…`, `sqlite:PATH` or a path.
    ///
    /// Where runs are recorded, decisions frozen and durations read. Default: the GATE_DB
    /// variable, else .git/gate/history.sqlite.
    #[arg(long, value_name = "URL")]
    pub db: Option<String>,
}

/// What a shard split divides.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ShardBy {
    /// Test files and Go packages.
    #[default]
    File,
    /// pytest's tests (node ids); Go packages stay whole.
    Test,
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
    /// Gate a range for ship scripts and CI: the `verify` steps, no colour, a JSON receipt.
    Verify {
        /// `A...B`, `A..B` or `R` (`R...HEAD`), as for `--affected`.
        range: String,
        /// Write the receipt (the JSON report) to FILE, whatever the outcome.
        ///
        /// It holds the shas, verdicts, selection, decision, steps, exit codes, durations and
        /// gate's version.
        #[arg(long, value_name = "FILE")]
        receipt: Option<PathBuf>,
        /// Print the receipt on stdout as well.
        #[arg(long)]
        json: bool,
        /// Record a human decision for a refused range (also read from `GATE_DECISION`).
        #[arg(long, value_name = "CITATION")]
        affected_decision: Option<String>,
        /// Add the test files a recommendations file names to the selection (as `gate --recommendations`).
        #[arg(long, value_name = "FILE")]
        recommendations: Option<PathBuf>,
        #[command(flatten)]
        legs: LegArgs,
        /// Arguments for the test runner, after `--` (as `gate --affected RANGE -- ARGS`).
        #[arg(last = true, value_name = "RUNNER_ARGS")]
        runner_args: Vec<String>,
    },
    /// Run the whole suite and check that the selection caught every failing test; exit 11 on a miss.
    ///
    /// Every failing test file is judged against the decision frozen for the same commit and
    /// base: caught, missed (with the cause and the rule that would have caught it) or flaky (by
    /// evidence recorded before this run). A run or report with no result judged nothing: exit 12.
    Shadow(ShadowArgs),
    /// Measure the selection over the recorded shadow runs: recall, tests selected, misses by cause.
    ///
    /// Failure recall (with its 95% Wilson lower bound), faulty-change recall, the fraction of
    /// tests selected, and the misses by cause.
    Evaluate {
        /// The window: `30d`, `12h`.
        #[arg(long, value_name = "DURATION", default_value = "30d")]
        since: String,
        /// Print the evaluation as JSON (plans/evaluate.schema.json).
        #[arg(long)]
        json: bool,
        /// The history store: `postgres://…`, `sqlite:PATH` or a path.
        ///
        /// Default: the GATE_DB variable, else .git/gate/history.sqlite.
        #[arg(long, value_name = "URL")]
        db: Option<String>,
    },
    /// Estimate what gating saves in CI: runner seconds, vCPU-minutes and list cost, with and without.
    ///
    /// The baseline runs every job's whole suite, the candidate what gate selects; the saving
    /// is negative when gating costs more. The jobs come from a scenario file or from the shadow
    /// runs recorded.
    #[command(group = clap::ArgGroup::new("source").required(true).args(["scenario", "from_history"]))]
    Costs {
        /// The scenario: `{version: 1, mode, jobs: [...], modelUsage}`.
        #[arg(long, value_name = "FILE")]
        scenario: Option<PathBuf>,
        /// Build the scenario from the shadow runs recorded in the window.
        ///
        /// One job per shadow run: its whole suite's seconds are the baseline, what its
        /// decision ran is retained, gate's recorded selection time is the overhead, and
        /// `audit_rate` is as configured.
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
        /// With --from-history, also write the scenario it built to FILE (the --scenario format).
        #[arg(long, value_name = "FILE", requires = "from_history")]
        scenario_out: Option<PathBuf>,
        /// With --from-history, the history store: `postgres://…`, `sqlite:PATH` or a path.
        ///
        /// Default: the GATE_DB variable, else .git/gate/history.sqlite.
        #[arg(long, value_name = "URL", requires = "from_history")]
        db: Option<String>,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        /// Write the report as a Markdown table to FILE.
        #[arg(long, value_name = "FILE")]
        markdown: Option<PathBuf>,
    },
    /// Export one recorded run as observations to share: JSON with digests, no names or logs.
    ///
    /// Versioned JSON: identities as digests, the inventory, each test file's outcome,
    /// duration and dependencies; no test names, errors or logs. It is kept within a size
    /// limit.
    Export {
        /// Where to write the export (atomically).
        #[arg(long, value_name = "FILE")]
        observations: PathBuf,
        /// The run (default: the latest recorded one).
        #[arg(long, value_name = "ID")]
        run: Option<String>,
        /// The size limit in bytes.
        ///
        /// Past it the dependencies take a compact form, then become null, then nothing is
        /// written.
        #[arg(long, value_name = "BYTES", default_value_t = 8 * 1024 * 1024)]
        max_bytes: usize,
        /// The history store: `postgres://…`, `sqlite:PATH` or a path.
        ///
        /// Default: the GATE_DB variable, else .git/gate/history.sqlite.
        #[arg(long, value_name = "URL")]
        db: Option<String>,
    },
    /// Import an observation export (either form) into the store, its digest checked.
    Import {
        /// The export to read.
        #[arg(long, value_name = "FILE")]
        observations: PathBuf,
        /// The history store: `postgres://…`, `sqlite:PATH` or a path.
        ///
        /// Default: the GATE_DB variable, else .git/gate/history.sqlite.
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
        /// The history store for the audit's tallies and traces: `postgres://…`, `sqlite:PATH` or a path.
        ///
        /// Traces are kept for a committed tree only. Default: the GATE_DB variable, else
        /// .git/gate/history.sqlite.
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
        /// The matrix leg the results belong to, named by its environment (`py3.12-linux`).
        ///
        /// Legs never overwrite each other.
        #[arg(long, value_name = "NAME", default_value = "default")]
        leg: String,
        /// The shard of the suite the results are of, K of N.
        ///
        /// The leg's history is its environment's, whichever shard ran a test.
        #[arg(long, value_name = "K/N")]
        shard: Option<String>,
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
        /// The base the commit's change is taken against (default: its merge-base with the default branch).
        ///
        /// A commit on the default branch itself has no base.
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
        /// The history store: `postgres://…`, `sqlite:PATH` or a path.
        ///
        /// Default: the GATE_DB variable, else .git/gate/history.sqlite.
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
        /// The history store: `postgres://…`, `sqlite:PATH` or a path.
        ///
        /// Default: the GATE_DB variable, else .git/gate/history.sqlite.
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
    /// Judge each failing test of a recorded run: new regression, pre-existing, flaky or unknown.
    ///
    /// The verdicts are new_regression, pre_existing, flaky and unknown; gate exits 1 when
    /// there is a new regression.
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
    /// Write a recorded run for CI: the pull request comment, annotations, a JUnit report.
    ///
    /// gate holds no token and posts nothing: the workflow posts what it prints. With
    /// GITHUB_STEP_SUMMARY set, --markdown also appends the comment to that file.
    Report {
        /// The run (default: the latest recorded one).
        #[arg(long, value_name = "ID")]
        run: Option<String>,
        /// Print the pull request comment (markdown, under GitHub's comment limit).
        #[arg(long)]
        markdown: bool,
        /// Print GitHub workflow commands: errors for missing shards and new regressions, warnings for refusals.
        #[arg(long)]
        annotations: bool,
        /// Write a JUnit report of the verdicts (changed paths and triaged tests) to FILE.
        #[arg(long, value_name = "FILE")]
        junit: Option<PathBuf>,
        /// The workflow in the comment's hidden marker (default: GITHUB_WORKFLOW, else gate).
        #[arg(long, value_name = "NAME")]
        workflow: Option<String>,
        /// The store: `postgres://…`, `sqlite:PATH` or a path.
        #[arg(long, value_name = "URL")]
        db: Option<String>,
    },
    /// Suggest how many CI legs to split the tests over, from the durations recorded.
    ///
    /// For 1 to --max legs: the recorded test files (Go packages) split as `--shard K/N` splits
    /// them, the longest leg against the best any split could do, the slowest leg's time and the
    /// machine time, each leg paying --fixed-cost; then the fewest legs whose slowest leg is
    /// within 10% of the fastest.
    Shards {
        /// Print the table for 1 to --max legs and the suggested number.
        #[arg(long, required = true)]
        suggest: bool,
        /// What a leg costs before its tests start (checkout, setup): `180s`, `3m`, `500ms`.
        #[arg(long, value_name = "DURATION", default_value = "60s")]
        fixed_cost: humantime::Duration,
        /// The environment whose recorded durations are read, as given to `--leg` when recording.
        #[arg(long, value_name = "NAME", default_value = "default")]
        leg: String,
        /// The most legs to consider.
        #[arg(long, value_name = "N", default_value_t = 32,
              value_parser = clap::value_parser!(u32).range(1..=1024))]
        max: u32,
        /// Print the table as JSON (plans/shards.schema.json).
        #[arg(long)]
        json: bool,
        /// The history store: `postgres://…`, `sqlite:PATH` or a path.
        ///
        /// Default: the GATE_DB variable, else .git/gate/history.sqlite.
        #[arg(long, value_name = "URL")]
        db: Option<String>,
    },
    /// Manage the ledger of passing tests that later runs reuse by fingerprint.
    Ledger {
        #[command(subcommand)]
        action: LedgerAction,
    },
    /// Check the fast Python reader against tree-sitter on every file under PATH… (JSON).
    // Hidden: gate's own equality check and bench mode, not a user's command.
    #[command(hide = true)]
    ScanCheck {
        /// Files or folders to read.
        #[arg(required = true, value_name = "PATH")]
        paths: Vec<PathBuf>,
    },
    /// Entry points for git hooks (called by the installed hook scripts).
    // Hidden: a user never types it; the hook script gate installs does.
    #[command(hide = true)]
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
    /// Print the man page or a shell's completions, generated from this command line.
    // Hidden: install.sh calls it to install them; a user reads the result, not the command.
    #[command(hide = true)]
    Generate {
        #[command(subcommand)]
        what: Generate,
    },
}

#[derive(Subcommand, Debug)]
pub enum Generate {
    /// Print gate's man page (roff), or write it and one page per subcommand into DIR.
    Man {
        /// Write gate.1 and a gate-SUBCOMMAND.1 for each subcommand into DIR.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Print the completion script of SHELL.
    Completions {
        /// The shell the script is for.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
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
    /// The history store: `postgres://…`, `sqlite:PATH` or a path.
    ///
    /// Default: the GATE_DB variable, else .git/gate/history.sqlite.
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
    PrePush {
        /// The remote pushed to, as git names it (or its URL when it has no name).
        remote: String,
        /// The remote's URL.
        url: Option<String>,
    },
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
            || g.decision_out.is_some()
            || g.recommendations.is_some()
            || !g.runner_args.is_empty();
        match (&self.command, gate_flags) {
            (Some(_), true) => Err(
                "--affected, --since, --files, --list, --json, --verbose, --affected-decision, --record, --no-reuse, --decision-out, --recommendations and `-- RUNNER_ARGS` go without a subcommand (`gate --affected RANGE`); a subcommand takes its own".into(),
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
                | Sub::Triage { json, .. }
                | Sub::Shards { json, .. },
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

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    #[test]
    fn the_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    /// Every one-line help (a command's `about`, an option's first paragraph: what `gate -h`
    /// lists) fits one line, and no help, short or long, speaks the project's internal words.
    #[test]
    fn every_help_is_one_short_line_in_the_users_words() {
        fn walk(cmd: &clap::Command, path: &str, bad: &mut Vec<String>) {
            let jargon = regex::Regex::new(r"(?i)\bseed\b|\bpart [0-9]").unwrap();
            let mut check = |what: String, short: Option<String>, long: Option<String>| {
                match &short {
                    None => bad.push(format!("{what}: no help")),
                    Some(s) if s.contains('\n') || s.chars().count() > 100 => {
                        bad.push(format!("{what}: longer than one line of 100: {s}"));
                    }
                    _ => {}
                }
                for text in short.iter().chain(&long) {
                    if let Some(m) = jargon.find(text) {
                        bad.push(format!("{what}: internal jargon `{}`: {text}", m.as_str()));
                    }
                }
            };
            check(
                path.to_string(),
                cmd.get_about().map(ToString::to_string),
                cmd.get_long_about().map(ToString::to_string),
            );
            for arg in cmd.get_arguments() {
                check(
                    format!("{path} {}", arg.get_id()),
                    arg.get_help().map(ToString::to_string),
                    arg.get_long_help().map(ToString::to_string),
                );
            }
            for sub in cmd.get_subcommands() {
                walk(sub, &format!("{path} {}", sub.get_name()), bad);
            }
        }
        let mut bad = Vec::new();
        walk(&Cli::command(), "gate", &mut bad);
        assert!(bad.is_empty(), "{}", bad.join("\n"));
    }
}
