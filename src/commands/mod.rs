//! Thin orchestration: each subcommand strings the pipeline stages together.

mod explain;
mod gate;
mod plan;

use crate::cli::{Cli, Sub};
use crate::error::Result;
use crate::report::styles::Styles;

pub fn dispatch(cli: Cli) -> Result<u8> {
    let dir = cli
        .dir
        .clone()
        .unwrap_or_else(|| std::path::PathBuf::from("."));
    let styles = Styles::new(cli.color);
    match cli.command {
        Some(Sub::Plan { rev, out }) => plan::run(&dir, rev.as_deref(), out.as_deref()),
        Some(Sub::Explain { path, rev }) => explain::run(&dir, &path, rev.as_deref(), &styles),
        None => gate::run(&dir, &cli.gate, &styles),
    }
}

/// Warnings go to stderr, one line each, and never stop the run.
fn warn(line: String) {
    eprintln!("warning: {line}");
}

/// Output to a closed pipe (`gate … | head`) is not an error.
fn ignore_broken_pipe(result: std::io::Result<()>) -> Result<()> {
    match result {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(crate::error::Error::io(
            "<stdout>",
            "cannot write the report",
            e,
        )),
        _ => Ok(()),
    }
}
