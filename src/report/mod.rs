//! Stage 9 — reports: the same result as a human table (with colour only on a TTY without
//! `NO_COLOR`) or as versioned JSON (`plans/report.schema.json`).

pub(crate) mod ci;
pub(crate) mod human;
pub(crate) mod json;
pub(crate) mod markdown;
pub(crate) mod styles;
pub(crate) mod view;
