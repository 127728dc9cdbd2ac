//! Processes gate starts or left behind: whether a pid still runs (so a killed run's
//! temporary files and checkouts can be told from a live run's), and the signals that must
//! reach the runner instead of killing gate while it holds a temporary checkout.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// The prefixes of the temporary directories gate makes: checkouts, probe and step folders.
pub(crate) const TEMP_PREFIXES: [&str; 3] = ["gate-run", "gate-probe", "gate-steps"];

/// A temporary directory `<prefix>-<pid>-…` (the pid tells a later run whether it is stale).
pub(crate) fn temp_dir(prefix: &str) -> std::io::Result<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix(&format!("{prefix}-{}-", std::process::id()))
        .tempdir()
}

/// Removes the temporary directories of gate runs that are gone: a run killed with SIGKILL
/// cannot remove its own checkout.
pub(crate) fn remove_stale_temp_dirs() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let pid = TEMP_PREFIXES
            .iter()
            .find_map(|p| name.strip_prefix(p)?.strip_prefix('-'))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok());
        if pid.is_some_and(|pid| pid != std::process::id() && !alive(pid)) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Runs `cmd` to its end in a process group of its own, which the stop signals reach while
/// a `Guard` lives.
pub(crate) fn run(cmd: &mut std::process::Command) -> std::io::Result<std::process::ExitStatus> {
    run_reading(cmd, |_| {})
}

/// As `run`; when `cmd` pipes its stdout, that is read line by line as it comes.
pub(crate) fn run_reading(
    cmd: &mut std::process::Command,
    mut line: impl FnMut(&str),
) -> std::io::Result<std::process::ExitStatus> {
    use std::io::BufRead;
    use std::os::unix::process::CommandExt;
    cmd.process_group(0);
    let mut child = cmd.spawn()?;
    running(Some(child.id()));
    // A signal that came while the runner was starting had no group to reach.
    if let Some(sig) = received()
        && let Ok(group) = libc::pid_t::try_from(child.id())
    {
        // SAFETY: signals the process group gate just created.
        unsafe {
            libc::kill(-group, sig);
        }
    }
    if let Some(out) = child.stdout.take() {
        for text in std::io::BufReader::new(out).lines() {
            match text {
                Ok(text) => line(&text),
                Err(_) => break,
            }
        }
    }
    let status = child.wait();
    running(None);
    status
}

/// Whether process `pid` exists (a signal 0 probe: no signal is sent).
pub(crate) fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: kill with signal 0 only checks that the process exists and may be signalled.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// The signals a terminal, a CI runner or a supervisor sends to stop a run.
const STOPS: [i32; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Set while gate holds something a default signal death would leave behind (a temporary
/// checkout, a runner in its own process group).
static GUARDED: AtomicBool = AtomicBool::new(false);
/// The process group of the runner now running (0: none).
static CHILD_GROUP: AtomicI32 = AtomicI32::new(0);
/// The first stop signal received while guarded (0: none).
static RECEIVED: AtomicI32 = AtomicI32::new(0);

/// While a `Guard` lives, SIGINT, SIGTERM and SIGHUP do not kill gate: they are forwarded to
/// the runner's process group and remembered, so gate waits for the runner, removes its
/// checkout and then stops (`Error::Interrupted`). Outside a guard they act as usual.
pub(crate) struct Guard(());

impl Guard {
    /// Guards a run, after removing what killed runs left behind.
    pub(crate) fn hold() -> Guard {
        remove_stale_temp_dirs();
        install();
        GUARDED.store(true, Ordering::SeqCst);
        Guard(())
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        GUARDED.store(false, Ordering::SeqCst);
    }
}

/// The stop signal received while guarded, if any.
pub(crate) fn received() -> Option<i32> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        sig => Some(sig),
    }
}

/// Marks `group` as the runner's process group for the time it runs.
fn running(group: Option<u32>) {
    let group = group.and_then(|g| i32::try_from(g).ok()).unwrap_or(0);
    CHILD_GROUP.store(group, Ordering::SeqCst);
}

fn install() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let Ok(mut signals) = signal_hook::iterator::Signals::new(STOPS) else {
            return;
        };
        std::thread::spawn(move || {
            for sig in signals.forever() {
                if !GUARDED.load(Ordering::SeqCst) {
                    // Not guarded: the signal's own action (gate stops, nothing is left).
                    let _ = signal_hook::low_level::emulate_default_handler(sig);
                    continue;
                }
                let _ = RECEIVED.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
                let group = CHILD_GROUP.load(Ordering::SeqCst);
                if group > 0 {
                    // SAFETY: signals the runner's own process group, which gate created.
                    unsafe {
                        libc::kill(-group, sig);
                    }
                }
            }
        });
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn this_process_is_alive_and_an_impossible_pid_is_not() {
        assert!(super::alive(std::process::id()));
        assert!(!super::alive(u32::MAX - 1));
    }
}
