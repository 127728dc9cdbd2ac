//! What a gate knows before anything runs — the range, the verdict rows, the selection, the run
//! plan, the decision cited — as the human report prints it first and the JSON report builds
//! on at the end.

use crate::decision::Record;
use crate::repo::input::RangeInfo;
use crate::run::select::RunPlan;
use crate::verdict::Decision;

pub(crate) struct View<'a> {
    pub range: Option<&'a RangeInfo>,
    /// `commit <sha>` or `working tree`.
    pub tree: String,
    pub decision: &'a Decision,
    pub plan: &'a RunPlan,
    /// Set when the range itself cannot be bounded (its base is missing).
    pub range_refusal: Option<&'a str>,
    /// Set when the tree says something gate cannot read that the run depends on (a
    /// pyproject.toml pytest cannot parse): the file, the line and the parser's message.
    pub tree_refusal: Option<&'a str>,
    /// Test files (and Go test units) of the tree.
    pub test_files: usize,
    /// What runs the Python tests, and why.
    pub framework: &'a crate::lang::python::framework::Framework,
    pub record: Option<&'a Record>,
    /// Selected tests the ledger reused, with where each passed.
    pub reused: &'a std::collections::BTreeMap<String, crate::ledger::Provenance>,
    /// The id of the decision frozen for this run.
    pub frozen: &'a str,
    /// A shadow run: the whole suite runs, whatever was selected.
    pub shadow: bool,
    /// Every selected test and chain in the human rows (`--verbose`); else a big list is cut.
    pub verbose: bool,
    /// This leg's shard of a split selection (`--shard K/N`).
    pub shard: Option<crate::run::shard::Described<'a>>,
}
