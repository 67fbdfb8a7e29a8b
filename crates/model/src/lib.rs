//! netsonde's shared vocabulary. Pure data, no I/O.
//!
//! - [`units`]: newtypes for bytes, bit rates, durations and percentages, with the one
//!   place where SI and IEC prefixes are parsed and printed.
//! - [`spec`]: what a user asks for ([`spec::TestSpec`]), validated once, sent over the
//!   control protocol and stored with every result.
//! - [`result`]: what a test produced on one side ([`result::SideResult`]) and the
//!   combined report ([`result::TestReport`]) that renderers consume.
//! - [`cpu`]: CPU accounting figures as exchanged between the two ends.
//! - [`host`]: facts about a host that make a result reproducible.
//! - [`nic`]: the interface a test used as diagnosis evidence: its facts, its
//!   counters over the interval, and the findings they support.
//! - [`load`]: latency under load: probes, phases, flows over time, and their
//!   analysed summary.
//! - [`link`]: the lab's emulated link (MTU, rate, delay, loss, ... per direction)
//!   and the mechanism that built it, stored with every lab result.
//! - [`watch`]: a fleet watched over time (`netsonde monitor`): each pair's
//!   figures against its own baseline, and its state.
#![forbid(unsafe_code)]

mod assemble;
pub mod cpu;
pub mod diagnosis;
pub mod health;
pub mod host;
pub mod link;
pub mod load;
pub mod nic;
pub mod profile;
pub mod result;
pub mod search;
pub mod spec;
pub mod sweep;
pub mod units;
pub mod watch;

/// Version of the JSON result document (`--json`, `--jsonl`). Bump on any change
/// that removes or renames a field; adding an optional field does not need a bump.
pub const JSON_SCHEMA_VERSION: u32 = 1;
