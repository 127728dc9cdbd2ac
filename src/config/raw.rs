//! `.gate.toml` as written: the types serde reads it into. Their doc comments say what each
//! key is for; the user-facing reference is `docs/src/configuration.md`, which `reference.rs`
//! checks against these types. `parse` turns them into the resolved `Config`.

use super::rules::{Fallback, NamedFullMode, RelativeTo, When};
use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

/// The file as written. A key added here fails `reference.rs` until the reference documents it.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawConfig {
    /// Tests that run with every non-inert run: test file globs or pytest ids
    /// (`tests/test_health.py::test_up`, `tests.test_health::*`).
    #[serde(default)]
    pub(super) always_run: Vec<Spanned<String>>,
    /// Test file globs whose failures are known flaky; marked in reports.
    #[serde(default)]
    pub(super) known_flaky: Vec<Spanned<String>>,
    /// Dependencies no import graph can see: when a file matching `on` changes, run `tests`.
    #[serde(default)]
    pub(super) depends: Vec<RawDepends>,
    /// Extra globs of non-code files that are inert when nothing references them.
    #[serde(default)]
    pub(super) inert: Vec<Spanned<String>>,
    /// `false` drops the built-in inert globs.
    #[serde(default = "yes")]
    pub(super) inert_defaults: bool,
    /// Extra changes whose blast radius is the whole suite: `on` globs and a `reason`.
    #[serde(default)]
    pub(super) whole_suite: Vec<RawWholeSuite>,
    /// `false` drops the built-in whole-suite globs.
    #[serde(default = "yes")]
    pub(super) whole_suite_defaults: bool,
    /// On a `named_full` verdict: `"subset"` runs the resolved subset, `"full"` the whole suite.
    #[serde(default)]
    pub(super) named_full: NamedFullMode,
    /// Caps how many import hops the selection walks back; the report names what the cap cut.
    pub(super) max_depth: Option<u32>,
    /// The fraction of CI runs (chosen from the run id) that run the whole suite in shadow
    /// mode instead of the subset.
    pub(super) audit_rate: Option<Spanned<f64>>,
    /// A change nothing reaches: `"refuse"` (the default) or `"full"` (named_full, whole suite).
    #[serde(default)]
    pub(super) fallback: Fallback,
    /// The runner's command, as an argv list or a string split on spaces.
    pub(super) runner: Option<Spanned<Argv>>,
    /// Environment for the runner (e.g. `PYTHONPATH`).
    #[serde(default)]
    pub(super) env: BTreeMap<String, String>,
    #[serde(default)]
    pub(super) python: RawPython,
    #[serde(default)]
    pub(super) go: RawGo,
    #[serde(default)]
    pub(super) js: RawJs,
    #[serde(default)]
    pub(super) history: RawHistory,
    #[serde(default)]
    pub(super) ledger: RawLedger,
    /// The branch a new branch is compared with when pushed, after the remote's own HEAD.
    pub(super) base_branch: Option<String>,
    /// Ordered checks run by the pre-push hook and `gate verify` around the affected tests.
    #[serde(default)]
    pub(super) step: Vec<RawStep>,
    /// Extractors for references no built-in analysis knows: a regex with a `path` group.
    #[serde(default)]
    pub(super) reference: Vec<RawReference>,
    /// What a dynamic import with no literal part (`__import__(name)`) in `file` may load.
    #[serde(default)]
    pub(super) loads: Vec<RawLoads>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLoads {
    pub(super) file: Spanned<OneOrMany>,
    pub(super) modules: Spanned<OneOrMany>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawReference {
    pub(super) files: Spanned<OneOrMany>,
    pub(super) pattern: Spanned<String>,
    #[serde(default)]
    pub(super) relative_to: RelativeTo,
}

pub(super) fn yes() -> bool {
    true
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawDepends {
    pub(super) tests: Spanned<OneOrMany>,
    pub(super) on: Spanned<OneOrMany>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawWholeSuite {
    pub(super) on: Spanned<OneOrMany>,
    pub(super) reason: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawStep {
    pub(super) name: Spanned<String>,
    /// An argv list, or a string run by `sh -c`.
    pub(super) run: Option<Spanned<Argv>>,
    pub(super) on: Option<Spanned<OneOrMany>>,
    #[serde(default)]
    pub(super) when: When,
}

/// `[history]`: the store runs are recorded in and what selection takes from it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawHistory {
    /// Record every run the pre-push hook and `gate verify` make (`gate --affected … --record`
    /// does it for one run).
    #[serde(default)]
    pub(super) record: bool,
    /// The store: `postgres://…` or `sqlite:PATH` (default `.git/gate/history.sqlite`;
    /// `--db` and `GATE_DB` come first).
    pub(super) url: Option<String>,
    /// `false` keeps history out of selection (tests failing on main, co-failures).
    #[serde(default = "yes")]
    pub(super) signals: bool,
    /// The rollup and triage window (`90d`).
    pub(super) window: Option<Spanned<String>>,
}

/// `[ledger]`: reusing the passes of tests whose inputs are unchanged.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLedger {
    /// `false` runs every selected test (as `--no-reuse` does for one run).
    #[serde(default = "yes")]
    pub(super) enabled: bool,
    /// Whose passes count: `"main+branch"` (the default branch's and this branch's), `"main"`,
    /// or `"any"` (a single trusted developer).
    #[serde(default)]
    pub(super) trust: super::rules::Trust,
    /// More variables that change a run, beside the built-in list and those read by name.
    #[serde(default)]
    pub(super) env: Vec<Spanned<String>>,
}

impl Default for RawLedger {
    fn default() -> Self {
        RawLedger {
            enabled: true,
            trust: super::rules::Trust::default(),
            env: Vec::new(),
        }
    }
}

impl Default for RawHistory {
    fn default() -> Self {
        RawHistory {
            record: false,
            url: None,
            signals: true,
            window: None,
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawGo {
    /// Extra `go test` flags (`["-race", "-count=1"]`).
    #[serde(default)]
    pub(super) flags: Vec<String>,
    /// `go test` flags accepted after `--` beyond gate's allow-list (`"-tags VALUE"`).
    pub(super) allow_args: Option<Spanned<Vec<String>>>,
}

/// `[js]`: JavaScript and TypeScript.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawJs {
    /// Vitest and Jest options accepted after `--` beyond gate's allow-list
    /// (`"--passWithNoTests"`).
    pub(super) allow_args: Option<Spanned<Vec<String>>>,
    /// Values of a Vitest or Jest configuration gate cannot read as literals.
    #[serde(default)]
    pub(super) stated: Vec<RawStated>,
}

/// `[[js.stated]]`: one key of one configuration file, and what it holds.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawStated {
    /// The configuration file, repository-relative.
    pub(super) file: Spanned<String>,
    /// The dotted key as gate's refusal names it (`test.include`); `""` is the whole file.
    pub(super) key: Spanned<String>,
    /// What the key holds.
    pub(super) value: Spanned<toml::Value>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPython {
    /// Import roots (directories holding top-level packages); detected when absent.
    pub(super) roots: Option<Spanned<Vec<String>>>,
    /// `pytest`, `unittest` or `django`; detected when absent.
    pub(super) framework: Option<crate::lang::python::framework::Kind>,
    /// Runner options accepted after `--` beyond gate's allow-list (`"--timeout VALUE"`).
    pub(super) allow_args: Option<Spanned<Vec<String>>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

/// The globs of a `tests`/`on` value, each carrying the value's span for error lines.
pub(super) fn spread(value: Spanned<OneOrMany>) -> Vec<Spanned<String>> {
    let span = value.span();
    let items = match value.into_inner() {
        OneOrMany::One(s) => vec![s],
        OneOrMany::Many(v) => v,
    };
    items
        .into_iter()
        .map(|s| Spanned::new(span.clone(), s))
        .collect()
}

#[derive(Deserialize, Clone)]
#[serde(untagged)]
pub(super) enum Argv {
    Line(String),
    List(Vec<String>),
}
