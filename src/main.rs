use clap::Parser;
use gate::ErrorReport;
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
            if !e.use_stderr() {
                return ExitCode::from(exit_codes::OK);
            }
            // clap exits 2 on usage errors; 2 is gate's "refused", so usage is 3. A caller that
            // asked for JSON still gets JSON.
            if std::env::args().any(|a| a == "--json") {
                let rendered = e.render().to_string();
                let first = rendered.lines().next().unwrap_or_default();
                let err = gate::error::Error::Usage(
                    first.strip_prefix("error: ").unwrap_or(first).to_string(),
                );
                print_json_error(&err);
            }
            return ExitCode::from(exit_codes::USAGE);
        }
    };
    if let Err(why) = cli.check() {
        eprintln!("error: {why}");
        return ExitCode::from(exit_codes::USAGE);
    }
    let (json, receipt) = (cli.json(), cli.receipt().map(std::path::Path::to_path_buf));
    let result = commands::dispatch(cli);
    // The process ends here: what the last gate built is freed by the OS, not dropped.
    std::mem::forget(commands::leftovers());
    match result {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            eprintln!("error: {}", gate::report_line(&err.to_string()));
            let mut source = std::error::Error::source(&err);
            while let Some(cause) = source {
                eprintln!("  caused by: {}", gate::report_line(&cause.to_string()));
                source = cause.source();
            }
            if let Some(hint) = err.hint() {
                eprintln!("\nhint: {hint}");
            }
            if json {
                print_json_error(&err);
            }
            if let Some(path) = receipt {
                let text = serde_json::to_string_pretty(&ErrorReport::new(&err))
                    .expect("errors serialize");
                if let Err(e) = std::fs::write(&path, text + "\n") {
                    eprintln!("error: {}: cannot write the receipt: {e}", path.display());
                }
            }
            ExitCode::from(err.exit_code())
        }
    }
}

fn print_json_error(err: &gate::error::Error) {
    use std::io::Write;
    let text = serde_json::to_string_pretty(&ErrorReport::new(err)).expect("errors serialize");
    let _ = writeln!(std::io::stdout(), "{text}");
}
