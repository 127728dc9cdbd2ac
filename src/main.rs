use clap::Parser;
use gate::{cli::Cli, commands, exit_codes};
use std::process::ExitCode;

fn main() -> ExitCode {
    gate::timings::start();
    // As git itself does, trust the object database's contents instead of re-hashing every
    // object read: reading a large tree's blobs costs a third less.
    git2::opts::strict_hash_verification(false);
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // clap exits 2 on usage errors; 2 is gate's "refused", so usage is 3.
            return ExitCode::from(if e.use_stderr() {
                exit_codes::USAGE
            } else {
                exit_codes::OK
            });
        }
    };
    match commands::dispatch(cli) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            eprintln!("error: {err}");
            let mut source = std::error::Error::source(&err);
            while let Some(cause) = source {
                eprintln!("  caused by: {cause}");
                source = cause.source();
            }
            if let Some(hint) = err.hint() {
                eprintln!("\nhint: {hint}");
            }
            ExitCode::from(err.exit_code())
        }
    }
}
