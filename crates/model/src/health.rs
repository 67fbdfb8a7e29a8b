//! What a long-running netsonde reports of itself and of its last results, for
//! Prometheus (`--metrics`): a snapshot taken off the data path whenever it is
//! scraped.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A server's or agent's own state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerHealth {
    /// Sessions ended, by (protocol, outcome): `netsonde`, `iperf3` or
    /// `netsonde-job`; `ok`, `refused`, `failed` or `dropped`.
    pub sessions: BTreeMap<(String, String), u64>,
    /// Tests running now.
    pub running_tests: u64,
    /// Control connections open now.
    pub connections: u64,
    /// What running sessions hold of the budget: memory (bytes), threads,
    /// descriptors.
    pub held: Resources,
    /// The budget's size.
    pub budget: Resources,
    /// The QUIC perf server beside it (`--quic-perf`), if it runs one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quic_perf: Option<QuicPerfCounts>,
}

/// What a server's QUIC perf server answered since it started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuicPerfCounts {
    /// Connections accepted.
    pub connections: u64,
    /// Connections refused at its limit.
    pub refused: u64,
    /// Requests answered (or cut short by their client).
    pub requests: u64,
    /// Upload bytes read.
    pub read_bytes: u64,
    /// Bytes handed to the stack in answers.
    pub sent_bytes: u64,
}

/// Memory, threads and descriptors.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resources {
    /// Bytes of memory.
    pub memory: u64,
    /// Threads.
    pub threads: u64,
    /// File descriptors.
    pub fds: u64,
}

/// The last result of one test between two hosts, as its figures and verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairResult {
    /// The client's side (an agent's name or address).
    pub src: String,
    /// The server's side.
    pub dst: String,
    /// The test (`tcp-stream`, `udp-rr`...), with its direction for streams.
    pub test: String,
    /// Goodput, bit/s, all directions (stream tests).
    pub goodput_bps: Option<f64>,
    /// Median and 99th percentile transaction latency, seconds (RR tests).
    pub latency_p50_s: Option<f64>,
    /// The 99th percentile.
    pub latency_p99_s: Option<f64>,
    /// Datagrams lost over sent (UDP).
    pub loss_ratio: Option<f64>,
    /// Responsiveness, round trips per minute (`--probe`).
    pub rpm: Option<f64>,
    /// Client CPU per KiB moved, microseconds.
    pub client_us_per_kib: Option<f64>,
    /// The CPU quota of the client's cgroup, in cores (a container's
    /// limit); `None` without one.
    #[serde(default)]
    pub client_cpu_quota_cores: Option<f64>,
    /// The share of the quota's periods in which it throttled the client
    /// over the test, 0 to 1.
    #[serde(default)]
    pub client_throttled_ratio: Option<f64>,
    /// What limited it: the verdict's kind (`cpu`, `link`, `window`...).
    pub verdict: String,
    /// When it ended, Unix seconds.
    pub at_unix_s: u64,
}
