//! Caches: what an earlier run computed, kept under `.git/gate/cache/` so a warm gate costs
//! about what changed — the facts of every blob seen (`facts`), the last gated tree's listing
//! (`tree`), graph (`graph`) and its layouts' tests (`test_list`), the latter three in the
//! binary block layout of `blocks`; the states of files no commit holds, by their stat
//! (`disk`). Every cache names what it was built from and carries a checksum; a cache that does not match is a
//! warning and a rebuild, never trusted and never an error that sticks.

pub(crate) mod blocks;
pub(crate) mod closures;
pub(crate) mod disk;
pub(crate) mod facts;
pub(crate) mod graph;
pub(crate) mod test_list;
pub(crate) mod tree;
