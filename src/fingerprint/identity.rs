//! The identities of a whole run rather than of one test: a frozen decision's configuration,
//! lock and environment digests, and a recorded leg's inputs digest.

use super::{Input, Kind, Memo, RUN_ENV, Scope, hex, value_of};
use sha2::{Digest, Sha256};

/// A run's identities (`Scope::identity`).
pub(crate) struct Identity {
    pub config: String,
    pub lock: Option<String>,
    pub environment: Option<String>,
    /// Why an identity is missing.
    pub unknown: Vec<String>,
}

impl Scope<'_> {
    /// The run's identities, for a frozen decision: the runner and configuration, the
    /// whole-suite files, and the environment (the variables that change every run and the
    /// interpreter's or toolchain's identity for each language the tree tests), each a SHA-256;
    /// none where an input cannot be hashed, with why.
    pub(crate) fn identity(&self, memo: &mut Memo) -> Identity {
        let digest = |inputs: &[Input]| {
            let mut h = Sha256::new();
            for input in inputs {
                h.update(format!("{:?}\0{}\0{}\0", input.kind, input.name, input.hash).as_bytes());
            }
            hex(&h.finalize())
        };
        let config = digest(&self.runner());
        let (whole, whole_unknown) = self.whole_suite(memo).clone();
        let mut unknown = whole_unknown.clone();
        let lock = whole_unknown.is_empty().then(|| digest(&whole));
        let mut environment: Vec<Input> = self
            .run_variables()
            .map(|name| Input {
                kind: Kind::Env,
                name: name.to_string(),
                hash: value_of(name),
            })
            .collect();
        let tests = &self.project.tests;
        // One test of each language stands for its toolchain.
        let languages = crate::lang::suite::SUITES
            .iter()
            .filter_map(|l| tests.iter().find(|t| l.is_test_unit(t)));
        let mut known = true;
        for test in languages {
            match self.toolchain(test, memo) {
                Ok(input) => environment.push(input),
                Err(why) => {
                    known = false;
                    unknown.push(why);
                }
            }
        }
        Identity {
            config,
            lock,
            environment: known.then(|| digest(&environment)),
            unknown,
        }
    }
}

/// What can change a leg's outcomes besides its code, as one digest: its environment (OS,
/// interpreter and toolchain versions), the runner's `[env]`, and the values of the variables
/// every fingerprint holds. Two legs of one commit with the same digest are the same
/// experiment; with different ones a pass says nothing of the other's failure.
pub(crate) fn run_inputs(config: &crate::config::Config, env: &serde_json::Value) -> String {
    let mut h = Sha256::new();
    h.update(format!("gate inputs 1\0{env}\0").as_bytes());
    for (k, v) in &config.env {
        h.update(format!("env\0{k}\0{v}\0").as_bytes());
    }
    for name in RUN_ENV
        .iter()
        .copied()
        .chain(config.ledger.env.iter().map(String::as_str))
    {
        h.update(format!("var\0{name}\0{}\0", value_of(name)).as_bytes());
    }
    hex(&h.finalize()[..16])
}
