//! Tests that measure whose CPU time is whose. They need a host where nothing else
//! of ours runs: cargo runs test binaries one after another, so this binary runs
//! alone, after (or before) the themed `tests` binary and its parallel load.

#[allow(dead_code)]
#[path = "util.rs"]
mod util;

mod cpu_attribution;
