//! netsonde's engine: the only code that moves test bytes.
//!
//! Each workload is a per-flow loop over an already connected socket:
//!
//! | test | client side | server side |
//! |---|---|---|
//! | tcp-stream | [`stream::tcp_send`] / [`stream::tcp_recv`] | the other one |
//! | udp-stream | [`udp::udp_send`] / [`udp::udp_recv`] | the other one |
//! | tcp-rr | [`rr::tcp_requester`] | [`rr::tcp_responder`] |
//! | udp-rr | [`rr::udp_requester`] | [`rr::udp_responder`] |
//! | tcp-crr | [`crr::crr_requester`] | [`crr::crr_responder`] |
//!
//! Every loop shares one discipline, kept in [`meter::Meter`]: it reads the data
//! path's clock ([`clock`]: the invariant TSC where the CPU has one, as `u64`
//! nanoseconds since the test's start) once per message (an unpaced TCP sender
//! about every 10 us), counts into plain locals,
//! publishes them to [`meter::FlowCounters`] with relaxed stores for the interval
//! reporter (which reads them off the hot path), and snapshots the counts when the
//! warm-up ends and when the measured interval ends. Buffers are allocated before the
//! loop; nothing in a loop allocates, locks or formats. Sockets carry a short
//! `SO_RCVTIMEO`/`SO_SNDTIMEO` so a loop notices its deadline or a stop request even
//! when the peer has gone quiet.
#![deny(unsafe_code)]

mod buf;
pub mod clock;
pub mod crr;
pub mod datagram;
pub mod flow;
pub mod footprint;
pub mod io;
pub mod latency;
pub mod meter;
pub mod probe;
pub mod rr;
mod send;
pub mod sockopt;
mod stall;
pub mod stream;
mod sys;
pub mod udp;
pub mod verify;

use netsonde_model::result::FlowResult;

pub use meter::{Boundary, FlowClock, FlowCounters, FlowCtx, UdpCounters};
pub use sys::fdtable::own_table;
pub use sys::limit_malloc_arenas;

/// A flow's figures, plus its latency histogram for requesters (merged by the
/// driver across flows).
#[derive(Debug)]
pub struct FlowOutput {
    /// The figures.
    pub result: FlowResult,
    /// Every measured transaction's latency in nanoseconds.
    pub latency: Option<latency::Histogram>,
}

/// Why a flow failed.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// A socket call failed.
    #[error("{op} failed: {source}")]
    Io {
        /// The operation.
        op: &'static str,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The peer closed before the test was over.
    #[error("peer closed the data connection early (flow {flow})")]
    PeerClosed {
        /// The flow.
        flow: u32,
    },
    /// A receiving stream got nothing for its idle limit.
    #[error("flow {flow} received nothing for {after} (--rcv-timeout)")]
    Idle {
        /// The flow.
        flow: u32,
        /// The limit.
        after: netsonde_model::units::Nanos,
    },
    /// The I/O strategy cannot run here.
    #[error(transparent)]
    Strategy(#[from] io::IoError),
    /// A socket option the kernel refused.
    #[error("could not set {option}: {source}")]
    SockOpt {
        /// The option.
        option: &'static str,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

impl EngineError {
    fn io(op: &'static str) -> impl FnOnce(std::io::Error) -> EngineError {
        move |source| EngineError::Io { op, source }
    }
}

/// Whether an I/O error only means "the socket timeout passed; check the clock".
pub(crate) fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock
            | std::io::ErrorKind::TimedOut
            | std::io::ErrorKind::Interrupted
    )
}

/// The byte pattern every sender writes: byte `i` of the stream is `i % 251`, a
/// prime period so that it never lines up with a message size.
pub fn fill_pattern(buf: &mut [u8]) {
    for (i, b) in buf.iter_mut().enumerate() {
        *b = (i % 251) as u8;
    }
}

/// An IPv4 address seen through an IPv6 socket compares as itself.
pub(crate) fn canonical(ip: std::net::IpAddr) -> std::net::IpAddr {
    use std::net::IpAddr;
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
        v4 => v4,
    }
}
