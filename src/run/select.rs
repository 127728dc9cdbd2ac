//! The run plan: what runs, decided once from the verdicts — each language's runner commands
//! (`lang::suite::Suite::commands`), the whole suite by name or the subset — before anything runs.
//! Steps, reports, the ledger and the history store read this value; none decides again.

use super::Runner;
use crate::config::NamedFullMode;
use crate::lang::suite::{SUITES, Tests};
use crate::project::Project;
use crate::verdict::{Decision, RunVerdict};
use std::collections::BTreeSet;
use std::path::Path;

/// What runs: the runners' commands in the order they run (the languages' order), or why
/// nothing does. The whole suite by name (`named_full = "full"` on a named_full verdict) is
/// each language's whole-suite commands.
pub(crate) struct RunPlan {
    pub commands: Vec<Box<dyn Runner>>,
    /// Why nothing runs, when nothing does.
    pub idle: Option<String>,
}

impl RunPlan {
    /// Whether a runner runs at all.
    pub(crate) fn runs(&self) -> bool {
        !self.commands.is_empty()
    }

    /// The commands of one language (`Runner::language`).
    pub(crate) fn of<'p>(&'p self, language: &'p str) -> impl Iterator<Item = &'p dyn Runner> {
        self.commands
            .iter()
            .map(|c| c.as_ref())
            .filter(move |c| c.language() == language)
    }
}

/// What `decision` runs in `project`'s tree (whose files are `files`, its root `root`):
/// nothing when every change is inert or none is, or when a refusal stands (`cited` false);
/// the bounded remainder after a cited refusal; the subset (but the `reused` units, whose
/// passes the ledger holds), or the whole suite by name; each command with the user's runner
/// arguments `extra`.
pub(crate) fn select(
    decision: &Decision,
    project: &Project,
    cited: bool,
    files: &BTreeSet<String>,
    root: &Path,
    (reused, extra): (&BTreeSet<String>, &[String]),
    shard: Option<&BTreeSet<String>>,
) -> RunPlan {
    let runs = runs(decision, cited);
    // A shard names its units, the whole suite's among them: it runs those by name.
    let whole_suite = shard.is_none() && whole_suite(decision, project);
    let units: Vec<&str> = match shard {
        Some(own) => own.iter().map(String::as_str).collect(),
        None => decision.selected.keys().map(String::as_str).collect(),
    };
    // A reused unit's tests (a split by test names them) are reused with it.
    let units: Vec<&str> = units
        .into_iter()
        .filter(|k| !reused.contains(super::shard::unit_of(k)))
        .collect();
    let mut commands = Vec::new();
    for language in SUITES.iter().filter(|_| runs) {
        let own: Vec<&str> = units
            .iter()
            .copied()
            .filter(|u| language.is_test_unit(u))
            .collect();
        let tests = if whole_suite {
            // A language without a test in the tree has no suite to run.
            let any = project.tests.iter().any(|t| language.is_test_unit(t));
            any.then_some(Tests::Whole)
        } else {
            (!own.is_empty()).then_some(Tests::Some(&own))
        };
        if let Some(tests) = tests {
            commands.extend(language.commands(project, tests, files, root, extra));
        }
    }
    let idle = commands.is_empty().then(|| {
        match decision.verdict {
            RunVerdict::Inert => "every change is inert",
            RunVerdict::Empty => "nothing changed",
            RunVerdict::Refused if !cited => "refused",
            _ if shard.is_some_and(|own| {
                own.iter()
                    .all(|u| reused.contains(super::shard::unit_of(u)))
            }) =>
            {
                "this shard holds none of the selected tests left to run"
            }
            _ if !reused.is_empty() => {
                "every selected test passed with these inputs before (reused)"
            }
            _ => "no test reaches the changes",
        }
        .to_string()
    });
    RunPlan { commands, idle }
}

/// Whether `decision` runs anything: not when every change is inert or none is, nor for a
/// refusal no decision was cited for.
fn runs(decision: &Decision, cited: bool) -> bool {
    match decision.verdict {
        RunVerdict::Inert | RunVerdict::Empty => false,
        RunVerdict::Refused => cited,
        RunVerdict::Bounded | RunVerdict::NamedFull => true,
    }
}

/// Whether `decision` runs the whole suite by name (`named_full = "full"` on a named_full
/// verdict).
fn whole_suite(decision: &Decision, project: &Project) -> bool {
    decision.verdict == RunVerdict::NamedFull && project.config.named_full == NamedFullMode::Full
}

/// The units `decision` runs before the ledger's reuses leave: the selected ones, every test
/// unit of the tree for the whole suite, none when nothing runs. What a shard split divides.
pub(crate) fn units<'d>(decision: &'d Decision, project: &'d Project, cited: bool) -> Vec<&'d str> {
    if !runs(decision, cited) {
        return Vec::new();
    }
    if whole_suite(decision, project) {
        return project
            .tests
            .iter()
            .filter(|t| SUITES.iter().any(|l| l.is_test_unit(t)))
            .map(String::as_str)
            .collect();
    }
    decision.selected.keys().map(String::as_str).collect()
}

/// The whole suite, whatever the verdicts: what a shadow run runs (`gate shadow`), to judge
/// the selection against every test's outcome.
pub(crate) fn whole(project: &Project, files: &BTreeSet<String>, root: &Path) -> RunPlan {
    // A shadow run judges the selection against every test's outcome: never narrowed.
    let commands: Vec<Box<dyn Runner>> = SUITES
        .iter()
        .filter(|l| project.tests.iter().any(|t| l.is_test_unit(t)))
        .flat_map(|l| l.commands(project, Tests::Whole, files, root, &[]))
        .collect();
    let idle = commands
        .is_empty()
        .then(|| "the tree has no test".to_string());
    RunPlan { commands, idle }
}
