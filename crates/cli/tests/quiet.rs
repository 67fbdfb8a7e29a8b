//! Tests that measure whose CPU time is whose, and the lab's tests whose figures
//! need the host to themselves. They need a host where nothing else of ours
//! runs: cargo runs test binaries one after another, so this binary runs alone,
//! after (or before) the themed `tests` binary and its parallel load; within it,
//! every test takes one lock.

#[allow(dead_code)]
#[path = "util.rs"]
mod util;

mod breakdown;
mod busy_host;
mod cpu_attribution;
mod fleet_heavy;
#[allow(dead_code)]
mod fleet_util;
mod lab_precise;
#[allow(dead_code)]
mod lab_util;
