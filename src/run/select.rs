//! The run plan: what runs, decided once from the verdicts — the pytest command, the `go test`
//! commands per module, the whole suite by name or the subset — before anything runs. Steps,
//! reports and (next) the ledger and the history store read this value; none decides again.

use crate::config::NamedFullMode;
use crate::graph;
use crate::lang::go::gotest::{self, GoCommand};
use crate::lang::python::framework::Kind;
use crate::lang::python::pytest;
use crate::project::Project;
use crate::verdict::{Decision, RunVerdict};
use std::collections::BTreeSet;
use std::path::Path;

/// What runs. The whole suite by name (`named_full = "full"` on a named_full verdict) is a
/// pytest command without test paths and `go test ./...` per module.
pub(crate) struct RunPlan {
    pub pytest: Option<pytest::Command>,
    pub go: Vec<GoCommand>,
    /// Why nothing runs, when nothing does.
    pub idle: Option<String>,
}

impl RunPlan {
    /// Whether a runner runs at all.
    pub(crate) fn runs(&self) -> bool {
        self.pytest.is_some() || !self.go.is_empty()
    }
}

/// What `decision` runs in `project`'s tree (whose files are `files`, its root `root`):
/// nothing when every change is inert or none is, or when a refusal stands (`cited` false);
/// the bounded remainder after a cited refusal; the subset (but the `reused` units, whose
/// passes the ledger holds), or the whole suite by name.
pub(crate) fn select(
    decision: &Decision,
    project: &Project,
    cited: bool,
    files: &BTreeSet<String>,
    root: &Path,
    reused: &BTreeSet<String>,
) -> RunPlan {
    let runs = match decision.verdict {
        RunVerdict::Inert | RunVerdict::Empty => false,
        RunVerdict::Refused => cited,
        RunVerdict::Bounded | RunVerdict::NamedFull => true,
    };
    let whole_suite = decision.verdict == RunVerdict::NamedFull
        && project.config.named_full == NamedFullMode::Full;
    let (go_units, python_tests): (Vec<&str>, Vec<&str>) = decision
        .selected
        .keys()
        .filter(|k| !reused.contains(*k))
        .map(String::as_str)
        .partition(|s| graph::is_go_unit(s));
    let has_python_tests = project.tests.iter().any(|t| !graph::is_go_unit(t));
    let has_go_tests = project.tests.iter().any(|t| graph::is_go_unit(t));
    let base = pytest::base_argv(&project.config, &project.framework, root);
    let subset = |base, tests: &[&str]| match project.framework.kind {
        Kind::Pytest => pytest::Command::new(base, tests, files),
        Kind::Unittest | Kind::Django => pytest::Command::labels(base, tests, &project.framework),
    };
    let pytest = match (runs, whole_suite) {
        (false, _) => None,
        (true, true) => has_python_tests.then(|| pytest::Command::whole_suite(base)),
        (true, false) if python_tests.is_empty() => None,
        (true, false) => Some(subset(base, &python_tests)),
    };
    let go = if !runs || (whole_suite && !has_go_tests) {
        Vec::new()
    } else {
        gotest::commands(
            &project.go,
            &go_units,
            whole_suite,
            &project.config.go_flags,
        )
    };
    let idle = (pytest.is_none() && go.is_empty()).then(|| {
        match decision.verdict {
            RunVerdict::Inert => "every change is inert",
            RunVerdict::Empty => "nothing changed",
            RunVerdict::Refused if !cited => "refused",
            _ if !reused.is_empty() => {
                "every selected test passed with these inputs before (reused)"
            }
            _ => "no test reaches the changes",
        }
        .to_string()
    });
    RunPlan { pytest, go, idle }
}

/// The whole suite, whatever the verdicts: what a shadow run runs (`gate shadow`), to judge
/// the selection against every test's outcome.
pub(crate) fn whole(project: &Project, root: &Path) -> RunPlan {
    let has_python_tests = project.tests.iter().any(|t| !graph::is_go_unit(t));
    let has_go_tests = project.tests.iter().any(|t| graph::is_go_unit(t));
    let pytest = has_python_tests.then(|| {
        pytest::Command::whole_suite(pytest::base_argv(&project.config, &project.framework, root))
    });
    let go = if has_go_tests {
        gotest::commands(&project.go, &[], true, &project.config.go_flags)
    } else {
        Vec::new()
    };
    let idle = (pytest.is_none() && go.is_empty()).then(|| "the tree has no test".to_string());
    RunPlan { pytest, go, idle }
}
