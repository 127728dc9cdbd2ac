//! The proof loop: whether the selection was safe and what it saved, from evidence recorded
//! before anything was judged. A decision is frozen before its tests run (`frozen`); a
//! whole-suite run judges its failures against it (`shadow`); the compares add up to recall
//! and savings (`evaluate`, `costs`); a run leaves the machine as a bounded export
//! (`observations`); another party's recommendations only add to a selection
//! (`recommendations`); a split run's legs are checked whole against its frozen split
//! (`whole`).

pub(crate) mod costs;
pub(crate) mod evaluate;
pub(crate) mod frozen;
pub(crate) mod observations;
pub(crate) mod recommendations;
pub(crate) mod recorded;
pub(crate) mod shadow;
pub(crate) mod whole;
