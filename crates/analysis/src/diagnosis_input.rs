//! What a diagnosis is made from: the test's figures, each end's busiest core
//! and flow threads, a peer tool's process, and what each end's host and NIC
//! showed ([`DiagnosisInput`]).

pub use netsonde_model::diagnosis::CpuKind;
use netsonde_model::nic::NicFinding;
use netsonde_model::units::BitRate;
use serde::{Deserialize, Serialize};

/// The busiest core of one end.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CoreLoad {
    /// The core, when known.
    pub core: Option<u32>,
    /// Busy share, percent.
    pub busy: f64,
    /// User share, percent.
    pub user: f64,
    /// System share, percent.
    pub sys: f64,
    /// irq + softirq share, percent.
    pub softirq: f64,
    /// The test's share of its host's busy time, percent (both ends' on one
    /// host): whether the busy core was the test's or other work's. `None` where
    /// not known (a sweep's stored metric, a report before the attribution).
    #[serde(default)]
    pub test_pct: Option<f64>,
    /// The other processes that ran most on the host, as the foreign-load
    /// warning names them.
    #[serde(default)]
    pub foreign: Vec<String>,
}

impl CoreLoad {
    /// Only the busy share is known (a sweep's stored metric).
    pub fn busy(busy: f64) -> CoreLoad {
        CoreLoad {
            busy,
            ..CoreLoad::default()
        }
    }

    pub(crate) fn kind(&self) -> Option<CpuKind> {
        let parts = [
            (CpuKind::User, self.user),
            (CpuKind::System, self.sys),
            (CpuKind::Softirq, self.softirq),
        ];
        if parts.iter().all(|(_, v)| *v <= 0.0) {
            return None;
        }
        parts
            .into_iter()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(k, _)| k)
    }
}

/// One end's cgroup CPU limits over the measured interval.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SideQuota {
    /// `client`, `server`, or `host` when both ends are one process.
    pub side: String,
    /// Its cgroup's quota and throttling.
    pub cgroup: netsonde_model::cpu::CgroupCpu,
}

/// One flow thread's CPU over the measured interval.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ThreadLoad {
    /// `client` or `server`.
    pub side: String,
    /// The flows it ran.
    pub flows: Vec<u32>,
    /// What its flows did (`sender`, `receiver`, `requester`, `responder`).
    pub role: String,
    /// The share of the measured interval it ran, percent.
    pub busy: f64,
    /// Its user time, percent of the interval (at the kernel's tick).
    pub user: Option<f64>,
    /// Its system time, percent of the interval (with the softirq work run in
    /// its context).
    pub sys: Option<f64>,
    /// The share of the interval it was runnable but waited for a core
    /// (another thread or process had it), percent.
    pub waited: Option<f64>,
    /// The share of the interval the hypervisor took from it: its core's steal
    /// time while it ran or waited to, percent (a VM's vCPU is not always on a
    /// physical core, and the guest does not count that time as the thread's).
    #[serde(default)]
    pub stolen: Option<f64>,
    /// The core it last ran on.
    pub core: Option<u32>,
    /// That core's irq + softirq share over the interval, percent.
    pub core_softirq: Option<f64>,
    /// Idle cores on its host over the interval.
    pub idle_cores: Option<f64>,
    /// It busy-polls (`--io busypoll`): it spins by design, so its busy share
    /// says nothing about its work.
    pub spins: bool,
    /// It checks every received byte (`--verify`).
    pub verifies: bool,
    /// It seals or opens TLS records: its user time is mostly the crypto.
    #[serde(default)]
    pub encrypts: bool,
    /// It runs a QUIC connection: its user time is a whole transport in user
    /// space (packets, encryption, acknowledgements, congestion control).
    #[serde(default)]
    pub quic: bool,
    /// Its crypto, timed, as a share of the interval, percent (`tls-` and
    /// `quic-` tests): the TLS records' or QUIC packets' sealing and opening,
    /// and the handshakes' public-key operations.
    #[serde(default)]
    pub crypto: Option<f64>,
    /// Of that, the handshakes' key exchanges and signatures, percent; `None`
    /// when its flows made no handshake in the interval worth counting (a
    /// connection per transaction: tls-crr, quic-crr).
    #[serde(default)]
    pub handshakes: Option<f64>,
    /// What it spent its CPU on, from its sampled call chains: each category's
    /// share (0 to 1), most first; empty where no breakdown was taken.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spent: Vec<(netsonde_model::profile::Category, f64)>,
}

impl ThreadLoad {
    /// The share of the interval it wanted a core: ran, was runnable and waited
    /// for one, or had its vCPU taken by the hypervisor.
    pub fn demand(&self) -> f64 {
        self.busy + self.waited.unwrap_or(0.0) + self.stolen.unwrap_or(0.0)
    }

    /// The share of the interval it had a core: it ran, or its vCPU was taken
    /// from under it while it did (the guest does not count that time as the
    /// thread's). Only this makes a thread the test's CPU limit; what it
    /// waited for a core beside it is other work's (or a quota's) doing.
    pub fn ran(&self) -> f64 {
        self.busy + self.stolen.unwrap_or(0.0)
    }

    /// Its flows, as the evidence lists them: `0,1`.
    pub fn flow_list(&self) -> String {
        self.flows
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(",")
    }

    /// It wanted a core (nearly) all the interval but ran less than that: it
    /// was starved by other work or a quota, not bound by its own.
    pub fn starved(&self, at: f64) -> bool {
        !self.spins && self.demand() >= at && self.ran() < at
    }

    pub(crate) fn kind(&self) -> Option<CpuKind> {
        match (self.user, self.sys) {
            (Some(u), Some(s)) if u + s > 0.0 => Some(if u > s {
                CpuKind::User
            } else {
                CpuKind::System
            }),
            _ => None,
        }
    }
}

/// A peer tool's process on the other end (`--peer iperf3`), as it reported its
/// own CPU.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PeerProcess {
    /// The tool (`iperf3`).
    pub tool: String,
    /// Its end (`server`).
    pub side: String,
    /// Its CPU time over its test, percent of one core.
    pub busy: f64,
    /// The user part, percent.
    pub user: f64,
    /// The system part, percent.
    pub sys: f64,
    /// How many threads carried its streams (1: iperf3 before 3.16 runs every
    /// stream on its one thread).
    pub threads: u32,
    /// When it ran on this host (a loopback address): what the hypervisor took
    /// from it (this host's steal share of the time it ran), percent of one core.
    #[serde(default)]
    pub stolen: Option<f64>,
}

impl PeerProcess {
    /// Its demand of one core: what it ran plus what was stolen from it.
    pub fn demand(&self) -> f64 {
        self.busy + self.stolen.unwrap_or(0.0)
    }
}

/// What was measured about one test, as [`diagnose`](crate::diagnose::diagnose) needs it. `None` means
/// unknown, and a rule that needs an unknown figure does not apply.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DiagnosisInput {
    /// Measured goodput, bit/s (0 for request/response tests).
    pub goodput_bps: f64,
    /// Line rate of the link, bit/s, as given (`--line-rate`) or known (the lab).
    pub line_rate_bps: Option<f64>,
    /// Theoretical maximum goodput of the link, bit/s, for the frames the test
    /// sent (see [`crate::link::path_ceiling`]).
    pub theoretical_bps: Option<f64>,
    /// The client's busiest core.
    pub client_core: Option<CoreLoad>,
    /// The server's busiest core.
    pub server_core: Option<CoreLoad>,
    /// Both ends ran on one host (loopback, the lab): their CPU figures are the
    /// same host's, so a busy core is named as the host's, not one end's.
    pub one_host: bool,
    /// Each flow thread of both ends.
    #[serde(default)]
    pub threads: Vec<ThreadLoad>,
    /// A peer tool's process, when the other end was one.
    #[serde(default)]
    pub peer_process: Option<PeerProcess>,
    /// The test judged, when known: the advice offers only flags it accepts
    /// and has not set ([`crate::advice`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<netsonde_model::spec::TestSpec>,
    /// Each end's cgroup CPU limits and throttling, where it has a quota (one
    /// entry, `host`, when both ends are one process).
    #[serde(default)]
    pub quotas: Vec<SideQuota>,
    /// The window in force when one was set (`-w`, `--rcv-window`): what the
    /// kernel granted (the receiver's advertised window from TCP_INFO, else half
    /// the granted receive buffer), bytes.
    pub window_bytes: Option<f64>,
    /// Where `window_bytes` came from, for the evidence.
    #[serde(default)]
    pub window_source: String,
    /// Round-trip time, ns (the senders' smoothed RTT).
    pub rtt_ns: Option<f64>,
    /// The least round trip the senders measured (TCP_INFO `min_rtt`), ns.
    #[serde(default)]
    pub base_rtt_ns: Option<f64>,
    /// Payload per TCP segment on the wire, bytes.
    #[serde(default)]
    pub segment_bytes: Option<f64>,
    /// The send buffer the kernel granted the TCP senders when the user set one
    /// (`-w`), bytes: the least of them (`SO_SNDBUF` read back).
    #[serde(default)]
    pub sender_buffer_bytes: Option<f64>,
    /// The receive buffer the kernel granted the receivers, bytes: the least of
    /// them (`SO_RCVBUF` read back; the start of an autotuned one).
    #[serde(default)]
    pub receiver_buffer_bytes: Option<f64>,
    /// The TCP senders' congestion control, as the kernel read it back
    /// (`TCP_CONGESTION`).
    #[serde(default)]
    pub congestion: Option<String>,
    /// Share of the TCP senders' busy time limited by the receiver's window.
    pub rwnd_limited: Option<f64>,
    /// Share of the TCP senders' busy time limited by their socket buffer.
    pub sndbuf_limited: Option<f64>,
    /// Retransmitted segments over segments sent, percent (TCP), not counting
    /// the needless ones (`spurious_pct`).
    pub retransmit_pct: Option<f64>,
    /// Retransmissions the receiver reported as duplicates (DSACK) over segments
    /// sent, percent: segments reordered, not lost.
    #[serde(default)]
    pub spurious_pct: Option<f64>,
    /// Loss, percent (UDP).
    pub loss_pct: Option<f64>,
    /// The test moved datagrams (UDP): messages are at most 64 KiB, and advice
    /// speaks of datagrams, not writes.
    #[serde(default)]
    pub datagrams: bool,
    /// What the UDP senders offered in the measured interval, bit/s.
    #[serde(default)]
    pub offered_bps: Option<f64>,
    /// Pacing rate the senders were held to, all flows, bit/s.
    pub paced_bps: Option<f64>,
    /// Request/response: transactions per second measured.
    pub transactions_per_sec: Option<f64>,
    /// Request/response: flows over the mean latency, the most one-at-a-time
    /// transactions can reach, per second.
    pub round_trip_bound: Option<f64>,
    /// What the NIC rules found on each end ([`crate::nic::findings`]).
    #[serde(default)]
    pub nic: Vec<SideFinding>,
    /// The share of the vCPUs' time the hypervisor took (steal), percent: the
    /// more of either end's host.
    #[serde(default)]
    pub steal_pct: Option<f64>,
}

/// Steal above this share of a host's vCPU time, in percent, is a caveat on
/// every verdict.
pub const STEAL_PCT: f64 = 5.0;

/// A NIC rule's finding on one end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SideFinding {
    /// `client`, `server`, or `host` for the kernel's per-core counters of a host
    /// both ends share.
    pub side: String,
    /// What the rule found.
    pub finding: NicFinding,
}

pub(crate) fn rate(v: f64) -> String {
    BitRate(v).to_string()
}
