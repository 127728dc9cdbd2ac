use clap::Parser;
use gate::{cli::Cli, commands, exit_codes};
use std::process::ExitCode;

fn main() -> ExitCode {
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
