//! netsonde's driver: runs the sans-IO protocol sessions of `netsonde-proto` over
//! real TCP control connections and the flow loops of `netsonde-engine` on threads.
//!
//! - [`control`]: pumps an [`netsonde_proto::Endpoint`] over a `TcpStream` with the
//!   session's own deadlines as read timeouts.
//! - [`flows`]: starts one thread per flow (pinned when asked), the CPU sampler for
//!   the measured interval, and collects their results.
//! - [`policy`]: abuse limits, per-address caps and session log lines.
//! - [`budget`]: the memory, threads and descriptors a session may hold, reserved
//!   at setup and released when it ends.
//! - [`server`]: the accept loop, one thread per control connection, the busy slot
//!   (one test at a time) and data-connection setup.
//! - [`agent`]: jobs, a test an agent runs as a client for a controller
//!   (`netsonde mesh`), both ends; [`jobs`]: what the server hands a job's
//!   handler.
//! - [`health`]: a server's own figures for `--metrics` (sessions by outcome,
//!   what runs, the budget held).
//! - [`client`]: one test from hello to report, with an embedded loopback server
//!   when no host is given.
//! - `conn`: what a client connection is (config, errors, resolving, data
//!   connections); `intervals`: interval records off the data path.
//! - `iperf3`: what the iperf3 halves share; `iperf3_client`: the client
//!   against `iperf3 -s`; `iperf3_server`: an iperf3 client's session on the
//!   server.
//! - `iperf3_output`: what the server sends an iperf3 client that asked for
//!   `--get-server-output`, in iperf3's text or JSON shapes.
#![forbid(unsafe_code)]

pub mod agent;
pub mod budget;
pub mod client;
mod conn;
pub mod control;
mod cpu_watch;
pub mod flows;
pub mod health;
mod intervals;
mod iperf3;
mod iperf3_client;
mod iperf3_output;
mod iperf3_server;
pub mod jobs;
pub mod policy;
mod probes;
mod quic_perf_client;
pub mod server;
mod start;
mod subflows;
pub mod vet;
mod workload;

/// Host facts of this end (re-exported for callers that record them).
pub use netsonde_cpu::host_facts;
/// Which I/O strategies this host supports.
pub use netsonde_engine::io::{caps as io_caps, IoError};
pub use netsonde_engine::sockopt::transport_caps;

use std::sync::OnceLock;
use std::time::Instant;

use netsonde_model::units::Nanos;

/// The driver's clock for protocol sessions: time since the first call.
pub fn now() -> Nanos {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    Nanos::from(EPOCH.get_or_init(Instant::now).elapsed())
}

/// Fresh randomness from the OS (tokens, nonces, keys).
pub fn random_bytes<const N: usize>() -> std::io::Result<[u8; N]> {
    let mut b = [0u8; N];
    getrandom::fill(&mut b).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(b)
}

/// A fresh session token.
pub(crate) fn random_token() -> std::io::Result<netsonde_proto::Token> {
    random_bytes::<16>().map(netsonde_proto::Token)
}
