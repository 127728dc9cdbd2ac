//! `go test`: one command per module, run from the module's folder, naming the selected
//! packages (`./internal/cart`), so tests a change added run too. The whole suite by name is
//! `./...`.

use crate::error::Result;
use crate::graph;
use crate::lang::go::gomod::GoLayout;
use crate::repo::checkout::Workspace;
use crate::run::RunnerError;
use crate::run::events::{Event, Sink, TestOutcome, TestResult};
use crate::run::{At, Outcome};
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GoCommand {
    /// The module folder the command runs in (`""`: the repository root).
    pub module: String,
    pub argv: Vec<String>,
    /// The user's runner arguments are among its flags: a run they left with no test to run
    /// is `Outcome::NothingRan`.
    pub user_args: bool,
    /// The selected test units it runs (none for the whole suite).
    pub units: Vec<String>,
}

/// The commands for the selected Go test units (`./dir`), or for every module's `./...`.
pub(crate) fn commands(
    layout: &GoLayout,
    units: &[&str],
    whole_suite: bool,
    flags: &[String],
) -> Vec<GoCommand> {
    let mut by_module: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut units_of: BTreeMap<String, Vec<String>> = BTreeMap::new();
    if whole_suite {
        for m in &layout.modules {
            if m.root.split('/').any(|d| d == "vendor" || d == "testdata") {
                continue;
            }
            by_module
                .entry(m.root.clone())
                .or_default()
                .push("./...".into());
        }
    } else {
        for unit in units {
            let dir = graph::go_dir_of(unit);
            // A package outside every module still runs (from the root): go itself then says
            // what is wrong, rather than gate leaving the package out.
            let root = layout
                .module_of(&format!("{dir}/x"))
                .map(|m| m.root.clone())
                .unwrap_or_default();
            let rel = dir
                .strip_prefix(&root)
                .unwrap_or(dir)
                .trim_start_matches('/')
                .to_string();
            let arg = if rel.is_empty() {
                ".".to_string()
            } else {
                format!("./{rel}")
            };
            units_of
                .entry(root.clone())
                .or_default()
                .push(unit.to_string());
            by_module.entry(root).or_default().push(arg);
        }
    }
    by_module
        .into_iter()
        .map(|(module, packages)| GoCommand {
            units: units_of.remove(&module).unwrap_or_default(),
            module,
            user_args: false,
            argv: ["go".to_string(), "test".to_string()]
                .into_iter()
                .chain(flags.iter().cloned())
                .chain(packages)
                .collect(),
        })
        .collect()
}

impl crate::run::Runner for GoCommand {
    fn language(&self) -> &'static str {
        "go"
    }

    fn argv(&self) -> Vec<String> {
        self.argv.clone()
    }

    fn dir(&self) -> &str {
        &self.module
    }

    /// In the module's folder of the gated tree (a temporary checkout's, when it is one).
    fn run(&self, at: &At<'_>, sink: &mut dyn Sink) -> Result<Outcome> {
        let module = Workspace::in_place(&at.workspace.dir.join(&self.module));
        let module = if at.workspace.is_temporary() {
            module.temporary_view()
        } else {
            module
        };
        let outcome = run(
            self,
            &at.project.go,
            at.env,
            &module,
            at.root,
            at.quiet_stdout,
            sink,
        )?;
        super::reads::list(self, at.env, (&module, &at.workspace.dir), at.root, sink);
        Ok(outcome)
    }
}

/// Runs one `go test` command in its module's folder, with `-json` so each test's result is
/// known: the events are read as they come, each test's result goes to `sink`, and the output a
/// plain `go test` prints (a failing test's lines, each package's `ok`/`FAIL` line) is printed as
/// it would be. go exits 1 when a test or a build failed; anything else (2: bad flags) is broken.
fn run(
    command: &GoCommand,
    layout: &GoLayout,
    env: &BTreeMap<String, String>,
    module: &Workspace,
    root: &Path,
    quiet_stdout: bool,
    sink: &mut dyn Sink,
) -> Result<Outcome> {
    // `-count=1`: go's own test cache keys a result by the files its test opened inside the
    // module only — a file above it (`../../shared.txt`) changes unseen, and a cached pass is
    // no run. Reuse is the ledger's, whose fingerprint names such a file. The user's own
    // `-count` comes later and wins.
    let mut argv = command.argv.clone();
    argv.splice(2..2, ["-json".to_string(), "-count=1".to_string()]);
    let mut cmd =
        crate::run::command(&argv, env, module, root).ok_or(RunnerError::Empty("go test"))?;
    cmd.stdout(std::process::Stdio::piped());
    let echo = if quiet_stdout {
        Echo::Stderr
    } else {
        Echo::Stdout
    };
    let mut stream = Stream::new(layout, &command.module, echo);
    let status = crate::process::run_reading(&mut cmd, |line| stream.line(line, sink)).map_err(
        |source| RunnerError::Start {
            program: "go".into(),
            source,
        },
    )?;
    crate::run::interrupted()?;
    Ok(match status.code() {
        // `go test -n` (or `-c`, `-list`), however asked for, exits 0 having run nothing: no
        // package's result is no pass.
        Some(0) if stream.packages == 0 => {
            sink.event(Event::Note(
                "go test reported no package's result: it ran no test binary, and the run is no pass",
            ));
            Outcome::Broken(Some(0))
        }
        Some(0) if command.user_args && stream.tests == 0 => {
            sink.event(Event::Note(&format!(
                "the runner arguments in `{}` left none of the selected packages' tests to run: nothing was tested",
                command.argv.join(" ")
            )));
            Outcome::NothingRan
        }
        Some(0) => Outcome::Passed,
        Some(1) if stream.failures > 0 => Outcome::Failed(1),
        // go exits 1 reporting nothing on stdout when a package cannot be set up (an import
        // that no longer resolves): each selected package with no result failed, and is
        // recorded so, or the failure would leave nothing for triage to judge. Given the
        // user's flags, it may as well be a flag go rejected: no verdict.
        Some(1) if !command.user_args && !command.units.is_empty() => {
            stream.unreported(&command.units, sink);
            Outcome::Failed(1)
        }
        Some(1) => {
            sink.event(Event::Note(
                "go test exited 1 but reported no failing test or package: the run broke before it tested anything",
            ));
            Outcome::Broken(Some(1))
        }
        // go exits 2 when a package did not build: the change broke its tests, a verdict.
        Some(2) if stream.unbuilt => Outcome::Failed(1),
        other => Outcome::Broken(other),
    })
}

/// One line of `go test -json` (test2json's event).
#[derive(serde::Deserialize)]
#[serde(rename_all = "PascalCase")]
struct GoEvent {
    action: String,
    package: Option<String>,
    test: Option<String>,
    elapsed: Option<f64>,
    output: Option<String>,
}

/// Where the output of plain `go test` goes: gate's stdout, stderr (when stdout is JSON), or
/// nowhere (a recorded file is read, not shown).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Echo {
    Stdout,
    Stderr,
    Nothing,
}

/// A `go test -json` file that cannot be read whole: the line where it broke.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StreamError {
    #[error("line {0}: not a `go test -json` event (a truncated or edited stream)")]
    NotAnEvent(usize),
    #[error("the stream ends while {0} is still running (truncated)")]
    Truncated(String),
    /// Text, XML, bytes: a file of another kind given as `go test -json`.
    #[error("not a `go test -json` stream: no line is a test event")]
    NoEvents,
}

/// The results a recorded `go test -json` stream holds (`layout` places each package on its
/// folder), as the run that wrote it would have reported them.
pub(crate) fn read_json(bytes: &[u8], layout: &GoLayout) -> Result<Vec<TestResult>, StreamError> {
    let mut stream = Stream::new(layout, "", Echo::Nothing);
    let mut collected = crate::run::events::Collected::default();
    let mut running: BTreeMap<(String, String), usize> = BTreeMap::new();
    // A real stream has an event even with no test (a package's `start`); plain `go test`
    // lines between events are allowed (`2>&1` captures build output that way).
    let mut events = 0usize;
    for (n, line) in String::from_utf8_lossy(bytes).lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        if trimmed.starts_with('{') {
            let event: GoEvent =
                serde_json::from_str(trimmed).map_err(|_| StreamError::NotAnEvent(n + 1))?;
            events += 1;
            if let (Some(package), Some(test)) = (&event.package, &event.test) {
                let key = (package.clone(), test.clone());
                match event.action.as_str() {
                    "run" => {
                        running.insert(key, n + 1);
                    }
                    "pass" | "fail" | "skip" => {
                        running.remove(&key);
                    }
                    _ => {}
                }
            }
        }
        stream.line(trimmed, &mut collected);
    }
    if let Some(((package, test), _)) = running.into_iter().next() {
        return Err(StreamError::Truncated(format!("{package} {test}")));
    }
    if events == 0 {
        return Err(StreamError::NoEvents);
    }
    Ok(collected.tests)
}

/// Reads `go test -json` as it comes: results to the sink, and the output of plain `go test`.
struct Stream<'l> {
    layout: &'l GoLayout,
    /// A file in the module's folder, to resolve import paths from.
    from: String,
    echo: Echo,
    /// Per (package, test): the output a failure shows.
    pending: BTreeMap<(String, String), Vec<String>>,
    /// Packages with a failed test: their own failure is that test's, not a build's.
    failed: std::collections::BTreeSet<String>,
    /// A package did not build (`FAIL pkg [build failed]`).
    unbuilt: bool,
    /// How many packages ended (passed, failed or skipped), how many tests did, and how many
    /// results were failures (a test's, a package's, a build's).
    packages: usize,
    tests: usize,
    failures: usize,
    /// The test units a result was placed on.
    seen: std::collections::BTreeSet<String>,
}

impl<'l> Stream<'l> {
    fn new(layout: &'l GoLayout, module: &str, echo: Echo) -> Stream<'l> {
        Stream {
            layout,
            from: crate::path::join(module, "go.mod"),
            echo,
            pending: BTreeMap::new(),
            failed: Default::default(),
            unbuilt: false,
            packages: 0,
            tests: 0,
            failures: 0,
            seen: Default::default(),
        }
    }

    fn print(&self, text: &str) {
        use std::io::Write;
        // The human output: stdout, or stderr when gate's stdout is JSON.
        let _ = match self.echo {
            Echo::Stdout => std::io::stdout().write_all(text.as_bytes()),
            Echo::Stderr => std::io::stderr().write_all(text.as_bytes()),
            Echo::Nothing => Ok(()),
        };
    }

    /// The package folder of an import path the command ran.
    fn dir(&self, package: &str) -> Option<String> {
        self.layout.resolve(&self.from, package).into_iter().next()
    }

    fn line(&mut self, line: &str, sink: &mut dyn Sink) {
        let Ok(event) = serde_json::from_str::<GoEvent>(line) else {
            // Not an event: what go prints as is (a package that did not build).
            self.print(&format!("{line}\n"));
            let unbuilt = line.strip_prefix("FAIL\t").and_then(|rest| {
                rest.strip_suffix(" [build failed]")
                    .or(rest.strip_suffix(" [setup failed]"))
            });
            if let Some(package) = unbuilt {
                self.unbuilt = true;
                self.result(package, None, "fail", None, sink);
            }
            return;
        };
        let package = event.package.clone().unwrap_or_default();
        let output = event.output.as_deref().unwrap_or_default();
        let Some(test) = event.test.clone() else {
            // The package's own lines: what plain `go test` prints, without `-v`'s PASS.
            if event.action == "output" && output != "PASS\n" {
                self.print(output);
            }
            if matches!(event.action.as_str(), "pass" | "fail" | "skip") {
                self.packages += 1;
            }
            if event.action == "fail" && !self.failed.contains(&package) {
                self.result(&package, None, "fail", event.elapsed, sink);
            }
            return;
        };
        let key = (package.clone(), test.clone());
        match event.action.as_str() {
            "output" => {
                let verbose = ["=== RUN", "=== PAUSE", "=== CONT", "=== NAME"]
                    .iter()
                    .any(|p| output.starts_with(p));
                if !verbose {
                    self.pending
                        .entry(key)
                        .or_default()
                        .push(output.to_string());
                }
            }
            "pass" | "fail" | "skip" => {
                self.tests += 1;
                let lines = self.pending.remove(&key).unwrap_or_default();
                if event.action == "fail" {
                    self.print(&lines.concat());
                    self.failed.insert(package.clone());
                }
                self.result(&package, Some(&test), &event.action, event.elapsed, sink);
            }
            _ => {}
        }
    }

    /// Each of `units` that no result was placed on, as an error of its tests, said in a note.
    fn unreported(&mut self, units: &[String], sink: &mut dyn Sink) {
        let missing: Vec<&String> = units.iter().filter(|u| !self.seen.contains(*u)).collect();
        if missing.is_empty() {
            return;
        }
        sink.event(Event::Note(&format!(
            "go test exited 1 with no result for {} (a package that could not be set up): recorded as an error of its tests",
            missing.iter().map(|u| u.as_str()).collect::<Vec<_>>().join(", ")
        )));
        for unit in missing {
            let result = TestResult {
                id: graph::go_dir_of(unit).to_string(),
                file: Some(unit.clone()),
                outcome: TestOutcome::Error,
                duration_ms: 0,
                attempt: 1,
            };
            sink.event(Event::Test(&result));
        }
    }

    fn result(
        &mut self,
        package: &str,
        test: Option<&str>,
        action: &str,
        elapsed: Option<f64>,
        sink: &mut dyn Sink,
    ) {
        let dir = self.dir(package);
        let unit = dir.as_deref().map(graph::go_tests);
        let place = dir.clone().unwrap_or_else(|| package.to_string());
        if action == "fail" {
            self.failures += 1;
        }
        if let Some(unit) = &unit {
            self.seen.insert(unit.clone());
        }
        let outcome = match (action, test) {
            ("pass", _) => TestOutcome::Passed,
            ("skip", _) => TestOutcome::Skipped,
            // A package that fails with no test failing did not build, or its test binary died.
            (_, None) => TestOutcome::Error,
            _ => TestOutcome::Failed,
        };
        let result = TestResult {
            id: match test {
                Some(t) => format!("{place}::{t}"),
                None => place,
            },
            file: unit,
            outcome,
            duration_ms: (elapsed.unwrap_or(0.0) * 1000.0).round().max(0.0) as u64,
            attempt: 1,
        };
        sink.event(Event::Test(&result));
    }
}
