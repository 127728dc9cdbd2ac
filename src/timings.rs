//! `GATE_TIMINGS=1`: the wall time at the end of each stage, on stderr, to find where a slow
//! gate spends it without a profiler. Off (one environment lookup) otherwise.

use std::sync::OnceLock;
use std::time::Instant;

static START: OnceLock<Option<Instant>> = OnceLock::new();

/// Starts the clock when timings are asked for; later marks count from here.
pub fn start() {
    START.get_or_init(|| std::env::var_os("GATE_TIMINGS").map(|_| Instant::now()));
}

/// `gate: 12.3 ms graph loaded`.
pub fn mark(stage: &str) {
    if let Some(Some(start)) = START.get() {
        eprintln!(
            "gate: {:8.1} ms  {stage}",
            start.elapsed().as_secs_f64() * 1e3
        );
    }
}
