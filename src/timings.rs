//! `GATE_TIMINGS=1`: the wall time at the end of each stage, on stderr, to find where a slow
//! gate spends it without a profiler, with the memory the process holds then and at most so
//! far (Linux). Off (one environment lookup) otherwise.

use std::sync::OnceLock;
use std::time::Instant;

static START: OnceLock<Option<Instant>> = OnceLock::new();

/// Starts the clock when timings are asked for; later marks count from here.
pub fn start() {
    START.get_or_init(|| std::env::var_os("GATE_TIMINGS").map(|_| Instant::now()));
}

/// `gate:     12.3 ms  graph loaded  (rss 120 MiB, peak 130 MiB)`.
pub fn mark(stage: &str) {
    if let Some(Some(start)) = START.get() {
        eprintln!(
            "gate: {:8.1} ms  {stage}{}",
            start.elapsed().as_secs_f64() * 1e3,
            memory().unwrap_or_default()
        );
    }
}

/// The resident and peak resident memory from `/proc/self/status`, where there is one.
fn memory() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        line[name.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()
    };
    Some(format!(
        "  (rss {} MiB, peak {} MiB)",
        field("VmRSS:")? / 1024,
        field("VmHWM:")? / 1024
    ))
}
