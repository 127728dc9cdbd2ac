//! Stage 5 — running: the project's own runner over the selection, its output streamed.

pub mod pytest;
