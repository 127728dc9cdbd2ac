//! `gate generate man | completions SHELL`: the man pages and shell completions, rendered from
//! the clap definition itself so they never drift from what gate accepts. `install.sh` calls it.

use crate::cli::{Cli, EXAMPLES, Generate};
use crate::error::{Error, Result};
use crate::exit_codes;
use clap::CommandFactory;
use std::io::Write;
use std::path::Path;

pub(super) fn run(what: &Generate) -> Result<u8> {
    match what {
        Generate::Man { dir: Some(dir) } => man_pages(dir),
        Generate::Man { dir: None } => {
            let mut page = Vec::new();
            gate_page(&mut page)
                .map_err(|e| Error::io("gate.1", "cannot render the man page", e))?;
            stdout(&page)
        }
        Generate::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(*shell, &mut completion_command(), "gate", &mut script);
            stdout(&script)
        }
    }
}

/// gate.1 and one page per visible subcommand (gate.1 lists them as `gate-plan(1)` …).
fn man_pages(dir: &Path) -> Result<u8> {
    let top = dir.join("gate.1");
    std::fs::create_dir_all(dir)
        .and_then(|()| clap_mangen::generate_to(man_command(), dir))
        .map_err(|e| Error::io(dir, "cannot write the man pages", e))?;
    let mut page = Vec::new();
    gate_page(&mut page)
        .and_then(|()| std::fs::write(&top, page))
        .map_err(|e| Error::io(top, "cannot write the man page", e))?;
    Ok(exit_codes::OK)
}

/// The command line without its hidden subcommands, which clap_complete would offer at a tab
/// (it does not skip them, as clap_mangen does). clap has no way to remove a subcommand, so the
/// root is put together again from the definition's own arguments and visible subcommands.
fn completion_command() -> clap::Command {
    let full = Cli::command();
    let visible: Vec<clap::Command> = full
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .cloned()
        .collect();
    clap::Command::new("gate")
        .version(env!("CARGO_PKG_VERSION"))
        .args(full.get_arguments().cloned())
        .subcommands(visible)
}

/// The command line the pages describe: without `gate help` (the pages are the help) and
/// without `--help`'s examples, which gate.1 has as a section of its own.
fn man_command() -> clap::Command {
    Cli::command()
        .disable_help_subcommand(true)
        .after_long_help(None::<&str>)
}

/// gate.1 section by section, as clap_mangen renders it, but with the examples as an EXAMPLES
/// section of their own: `--help`'s plain text would be filled into one roff paragraph.
fn gate_page(w: &mut dyn Write) -> std::io::Result<()> {
    let man = clap_mangen::Man::new(man_command());
    man.render_title(w)?;
    man.render_name_section(w)?;
    man.render_synopsis_section(w)?;
    man.render_description_section(w)?;
    man.render_options_section(w)?;
    man.render_subcommands_section(w)?;
    writeln!(w, ".SH EXAMPLES")?;
    for (command, what) in EXAMPLES {
        writeln!(w, ".TP\n\\fB{}\\fR\n{}", roff(command), roff(what))?;
    }
    man.render_version_section(w)
}

/// Text as roff prints it literally: a backslash is `\e`, a minus sign `\-` (a bare `-` is a
/// hyphen, which breaks copying a flag out of the page).
fn roff(text: &str) -> String {
    text.replace('\\', "\\e").replace('-', "\\-")
}

/// Output to a closed pipe (`gate generate man | head`) is not an error.
fn stdout(bytes: &[u8]) -> Result<u8> {
    crate::terminal::ignore_broken_pipe(std::io::stdout().lock().write_all(bytes))?;
    Ok(exit_codes::OK)
}
