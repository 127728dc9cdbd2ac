//! The interpreter's and toolchain's identities, as a test's fingerprint holds them: its
//! language names the toolchain that runs the test (or why gate cannot hash it) and asks it who
//! it is (`lang::suite::Suite::toolchain`, `toolchain_identity`: Python's version and installed
//! distributions, `go env`'s values that change a build). Asking costs a process, so each
//! toolchain is asked once per run here, and the languages keep what they asked on disk.

use super::{Input, Kind, Memo, Scope};

impl Scope<'_> {
    /// The interpreter's or toolchain's identity, or why it cannot be known.
    pub(super) fn toolchain(&self, test: &str, memo: &mut Memo) -> Result<Input, String> {
        let language = crate::lang::suite::of_test_unit(test)
            .ok_or_else(|| format!("{test} is no language's test: no toolchain runs it"))?;
        let name = language.toolchain(self.project, self.root, test)?;
        let state = crate::repo::state_dir(self.repo);
        let hash = memo
            .toolchains
            .entry((language.name(), name.clone()))
            .or_insert_with(|| {
                language.toolchain_identity(&name, self.root, &state, &self.project.config.env)
            })
            .clone()?;
        Ok(Input {
            kind: Kind::Toolchain,
            name,
            hash,
        })
    }
}
