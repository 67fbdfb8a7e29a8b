//! The kind of server a client talks to, and what each can run.

use serde::{Deserialize, Serialize};

use super::TestSpec;

/// The kind of server a client talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Peer {
    /// `netsonde server`.
    #[default]
    Netsonde,
    /// An unmodified `iperf3 -s` (its control protocol; stream tests only).
    Iperf3,
    /// Another QUIC stack's perf server (draft-banks-quic-performance: quinn's
    /// `perf`, msquic's `secnetperf`, picoquic's `quicperf`); the QUIC tests only.
    QuicPerf,
}

impl Peer {
    /// Why this kind of server cannot run `spec`, if it cannot: an iperf3
    /// server runs stream tests of whole seconds, with one window and no DSCP
    /// for all streams, and answers no latency probes.
    pub fn cannot_run(self, spec: &TestSpec) -> Option<String> {
        match self {
            Peer::Netsonde => return None,
            Peer::QuicPerf => return quic_perf_cannot_run(spec),
            Peer::Iperf3 => {}
        }
        if spec.test.is_rr() {
            return Some(format!("{} (iperf3 runs stream tests only)", spec.test));
        }
        if spec.test.is_tls() || spec.test.is_quic() {
            return Some(format!("{} (iperf3 has no TLS or QUIC)", spec.test));
        }
        if spec.mptcp {
            return Some("--mptcp (iperf3 3.12 has no MPTCP)".into());
        }
        if !spec.warmup.0.is_multiple_of(1_000_000_000)
            || !spec.duration.0.is_multiple_of(1_000_000_000)
        {
            return Some("a time or warm-up that is not whole seconds".into());
        }
        if spec.probe.is_some() {
            return Some("--probe (an iperf3 server answers no latency probes)".into());
        }
        if !spec.flow_windows.is_empty() || !spec.dscp.is_empty() {
            return Some("per-flow windows or DSCP (iperf3 sets one for all streams)".into());
        }
        None
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Peer::Netsonde => "netsonde",
            Peer::Iperf3 => "iperf3",
            Peer::QuicPerf => "quic-perf",
        }
    }

    /// Its control port when none is given.
    pub const fn default_port(self) -> u16 {
        match self {
            Peer::Netsonde => 5300,
            Peer::Iperf3 => 5201,
            Peer::QuicPerf => 4433,
        }
    }
}

/// Why a QUIC perf server cannot run `spec`: it speaks only QUIC, and has no
/// control connection to agree on the rest (it sends what a request asks
/// for, and answers no probes).
fn quic_perf_cannot_run(spec: &TestSpec) -> Option<String> {
    if !spec.test.is_quic() {
        return Some(format!(
            "{} (a QUIC perf server runs quic-stream, quic-rr and quic-crr only)",
            spec.test
        ));
    }
    if spec.probe.is_some() {
        return Some("--probe (a QUIC perf server answers no latency probes)".into());
    }
    if spec.verify && spec.direction.server_sends() {
        return Some(
            "--verify on bytes it sends (a perf server's bytes are not netsonde's pattern)".into(),
        );
    }
    None
}
