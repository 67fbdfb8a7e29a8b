//! What a test produced: per-flow figures from each end ([`SideResult`]), and the
//! combined [`TestReport`] built from both by the pure function [`TestReport::assemble`].
//!
//! Counting rules (documented in `docs/JSON.md`):
//! - `bytes_total` counts every test byte a flow moved, warm-up included. For TCP the
//!   sender's and receiver's totals are counted independently and must be equal.
//! - `bytes`, `messages`, `calls` and `transactions` count the measured interval only
//!   (after warm-up), as timed by the end that counted them; `elapsed` is that interval.

use serde::{Deserialize, Serialize};

use crate::cpu::CpuReport;
use crate::host::HostFacts;
use crate::spec::{FlowDir, TestSpec};
use crate::units::{BitRate, Bytes, Nanos, Percent};

/// Figures from the kernel's `TCP_INFO` for one connection, read just before close.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TcpInfoSummary {
    /// Segments retransmitted over the connection's life (`tcpi_total_retrans`).
    pub retransmits: u64,
    /// Congestion window in segments.
    pub cwnd: u32,
    /// Sender MSS in bytes.
    pub mss: u32,
    /// Path MTU.
    pub pmtu: u32,
    /// Smoothed round-trip time.
    pub srtt: Nanos,
    /// Round-trip time variation.
    pub rttvar: Nanos,
    /// The most recent delivery rate estimate.
    pub delivery_rate: BitRate,
    /// Time with data in flight.
    pub busy: Nanos,
    /// Time limited by the receiver's window.
    pub rwnd_limited: Nanos,
    /// Time limited by the send buffer.
    pub sndbuf_limited: Nanos,
    /// The least round trip the connection measured (`tcpi_min_rtt`): its
    /// handshake and first segments, before a queue built up.
    #[serde(default)]
    pub min_rtt: Nanos,
    /// Bytes sent, retransmissions included (`tcpi_bytes_sent`, Linux 4.19).
    #[serde(default)]
    pub bytes_sent: u64,
    /// Bytes retransmitted (`tcpi_bytes_retrans`, Linux 4.19).
    #[serde(default)]
    pub bytes_retrans: u64,
    /// Data segments sent as they went on the wire, after GSO/TSO cut them
    /// (`tcpi_data_segs_out`); with `bytes_sent`, the payload each frame carried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_segs_out: Option<u64>,
    /// The receiver's advertised window as this sender last saw it, bytes
    /// (`tcpi_snd_wnd`, Linux 6.2): the window the kernel granted, not the one asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snd_wnd: Option<u64>,
    /// Retransmissions the receiver reported as duplicates (DSACK;
    /// `tcpi_dsack_dups`, Linux 5.0): needless ones, of segments that were
    /// reordered or delayed, not lost. 0 on older kernels.
    #[serde(default)]
    pub dsack_dups: u64,
}

/// A baseline round trip below this is a host's own, or one switch's: RFC 6349's
/// buffer delay over it measures host queueing.
pub const HOST_RTT: Nanos = Nanos(100_000);

/// The RFC 6349 (framework for TCP throughput testing) metrics of a TCP test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rfc6349 {
    /// Baseline RTT: the least round trip the senders' connections measured
    /// (TCP_INFO `min_rtt`: the handshake and first segments, before the load).
    pub baseline_rtt: Nanos,
    /// Mean RTT during the transfer: the senders' smoothed RTT at its end.
    pub mean_rtt: Nanos,
    /// Buffer delay: (mean RTT − baseline RTT) / baseline RTT, percent (§3.3.3).
    pub buffer_delay_pct: f64,
    /// TCP efficiency: (bytes sent − bytes retransmitted) / bytes sent, percent
    /// (§3.3.2); `None` on kernels before 4.19.
    pub tcp_efficiency_pct: Option<f64>,
    /// Bandwidth-delay product: the path's rate × the baseline RTT; `None` without
    /// a rate.
    pub bdp: Option<Bytes>,
    /// The maximum achievable TCP throughput of the path: its rate less Ethernet,
    /// IP and TCP header overhead at its MTU (§3.3.1); `None` without a rate.
    pub ideal: Option<BitRate>,
    /// TCP transfer time ratio: actual over ideal transfer time of the same bytes,
    /// `ideal / goodput` (§3.3.1); 1.0 is the best; `None` without a rate.
    pub transfer_time_ratio: Option<f64>,
    /// The baseline RTT is below [`HOST_RTT`]: a round trip inside one host (or
    /// one rack's switch), so the buffer delay is the host's own queueing (socket
    /// buffers, qdisc, backlog), not a path buffer's, and its percentage is large
    /// because the base is tiny.
    #[serde(default)]
    pub host_queueing: bool,
}

/// Receive-side accounting of a UDP stream.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct UdpStats {
    /// Distinct datagrams the sender sent in the measured interval (by the time
    /// it stamped on them, its own clock) that arrived, whenever they arrived.
    pub packets: u64,
    /// Datagrams never received (sequence gaps net of late arrivals): in a flow's
    /// result, over the whole test; in a direction's summary, of those sent in the
    /// measured interval.
    pub lost: u64,
    /// Datagrams received more than once, whole test.
    pub duplicates: u64,
    /// Datagrams that arrived after a later one, whole test.
    pub reordered: u64,
    /// RFC 3550 interarrival jitter at the end of the test.
    pub jitter: Nanos,
    /// Distinct datagrams received, whole test.
    pub packets_total: u64,
    /// `packets` and `lost` count by sequence number alone, as iperf3 does: the
    /// sender was iperf3, whose datagrams carry no time of this test's clock, so
    /// they cannot be matched to a measured interval; `packets` is then every
    /// distinct datagram received and `lost` the sequence gaps, over the test.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub by_sequence: bool,
}

/// A latency distribution.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Transactions measured.
    pub count: u64,
    /// Smallest.
    pub min: Nanos,
    /// Mean.
    pub mean: Nanos,
    /// Standard deviation.
    pub stddev: Nanos,
    /// Median.
    pub p50: Nanos,
    /// 90th percentile.
    pub p90: Nanos,
    /// 99th percentile.
    pub p99: Nanos,
    /// 99.9th percentile.
    pub p999: Nanos,
    /// Largest.
    pub max: Nanos,
}

/// What one flow did on one end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// Sent stream bytes.
    Sender,
    /// Received stream bytes.
    Receiver,
    /// Sent requests and timed responses.
    Requester,
    /// Answered requests.
    Responder,
}

/// How one flow moved its bytes, and what that cost in the kernel interface.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct IoReport {
    /// The strategy that ran (for `auto`, the one it chose).
    pub strategy: String,
    /// Zero-copy sends issued (MSG_ZEROCOPY, io_uring SEND_ZC).
    pub zc_sends: u64,
    /// Zero-copy completions read from the error queue.
    pub zc_completions: u64,
    /// Completions the kernel reported as copied after all (always on loopback).
    pub zc_copied: u64,
    /// Bytes that did not match the pattern (`--verify`), or `None` unchecked.
    pub verify_errors: Option<u64>,
    /// What the strategy decided or fell back to, for a human.
    pub note: Option<String>,
    /// How many flows shared this flow's thread and epoll (`epoll` streams), or
    /// `None` when the flow had a thread of its own.
    #[serde(default)]
    pub thread_flows: Option<u32>,
    /// Frames the strategy's own receive rings dropped (`xdp`: the AF_XDP
    /// socket's receive ring was full, its fill ring empty, or a frame longer
    /// than a chunk; `XDP_STATISTICS`), or `None` for a strategy without them.
    #[serde(default)]
    pub ring_drops: Option<u64>,
    /// What sealing and opening the flow's TLS records or QUIC packets took
    /// on its thread, whole flow (`tls-` and `quic-` tests), or `None`.
    #[serde(default)]
    pub crypto: Option<CryptoCost>,
    /// The transport's own smoothed round-trip time as the flow ended, for a
    /// transport in user space (QUIC: quinn's path RTT), or `None` (TCP's is
    /// in `tcp_info`).
    #[serde(default)]
    pub rtt: Option<Nanos>,
}

/// The crypto's time on one flow's thread: the records' (every seal and open
/// counted, a random sample of them timed, the time estimated for all) and
/// the handshakes' public-key operations (each timed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CryptoCost {
    /// Estimated time in the AEAD's seals and opens.
    pub ns: Nanos,
    /// Seals and opens (records, or QUIC packets).
    pub calls: u64,
    /// How many of them were timed.
    pub sampled: u64,
    /// Time in the handshakes' key exchanges and signatures, made or checked.
    #[serde(default)]
    pub handshake_ns: Nanos,
    /// Key exchanges completed (one per handshake at each end).
    #[serde(default)]
    pub key_exchanges: u64,
    /// Signatures made (the server) or checked (the client): one per full
    /// handshake, none for a resumed one.
    #[serde(default)]
    pub signatures: u64,
}

/// One flow on one end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlowResult {
    /// Flow number, shared by both ends.
    pub id: u32,
    /// Which way its stream bytes (or requests) go.
    pub dir: FlowDir,
    /// What this end did.
    pub role: Role,
    /// Every test byte moved, warm-up included.
    pub bytes_total: Bytes,
    /// Bytes moved in the measured interval.
    pub bytes: Bytes,
    /// Messages (writes, reads, datagrams) in the measured interval.
    pub messages: u64,
    /// I/O system calls in the measured interval.
    pub calls: u64,
    /// Transactions in the measured interval (RR, CRR).
    pub transactions: u64,
    /// Transactions, warm-up included.
    pub transactions_total: u64,
    /// Length of the measured interval as this end timed it.
    pub elapsed: Nanos,
    /// Datagrams sent, whole test (UDP senders).
    pub datagrams_sent: Option<u64>,
    /// `TCP_INFO` at the end (TCP; for CRR, of the last connection).
    pub tcp_info: Option<TcpInfoSummary>,
    /// Receive accounting (UDP stream receivers).
    pub udp: Option<UdpStats>,
    /// Latency (requesters).
    pub latency: Option<LatencySummary>,
    /// I/O strategy and its kernel-interface costs.
    #[serde(default)]
    pub io: Option<IoReport>,
    /// An MPTCP connection's subflows at the end (`--mptcp`), each path's
    /// share of what it carried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mptcp: Option<Vec<Subflow>>,
    /// A stream receiver's longest stretch without data in its measured
    /// interval, and how much of it its thread waited for a core: whether the
    /// data stopped or only the receiver was late ([`Stall`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall: Option<Stall>,
}

/// The longest stretch of a receiver's measured interval in which no data
/// came, less the time its thread waited for a core in it (its `schedstat`
/// run delay, read at the stretch's edges: an upper bound by at most one
/// reading period). What is left is time the peer or the path sent nothing:
/// a test is cut short by that, never by a late thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Stall {
    /// Where it began, from the measured interval's start.
    pub at: Nanos,
    /// How long no data came.
    pub gap: Nanos,
    /// Of it, the receiving thread waited for a core (0 where the kernel
    /// keeps no `schedstat`).
    pub waited: Nanos,
}

impl Stall {
    /// The time no data came that the receiver's own lateness does not explain.
    pub fn unexplained(&self) -> Nanos {
        Nanos(self.gap.0.saturating_sub(self.waited.0))
    }
}

impl FlowResult {
    /// The crypto's time in the measured interval (the records' and the
    /// handshakes'): the whole flow's, in the share of its bytes that the
    /// interval moved.
    pub fn crypto_in_interval(&self) -> Option<Nanos> {
        let c = self.io.as_ref()?.crypto?;
        let share = self.bytes.0 as f64 / self.bytes_total.0.max(1) as f64;
        Some(Nanos(
            ((c.ns.0 + c.handshake_ns.0) as f64 * share.min(1.0)) as u64,
        ))
    }

    /// Of [`FlowResult::crypto_in_interval`], the handshakes' public-key
    /// operations.
    pub fn handshakes_in_interval(&self) -> Option<Nanos> {
        let c = self.io.as_ref()?.crypto?;
        let share = self.bytes.0 as f64 / self.bytes_total.0.max(1) as f64;
        Some(Nanos((c.handshake_ns.0 as f64 * share.min(1.0)) as u64))
    }
}

/// One MPTCP subflow as its connection ended: its path, and what it carried
/// (its own `TCP_INFO`, read through `MPTCP_TCPINFO`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Subflow {
    /// This end's address and port.
    pub local: String,
    /// The peer's.
    pub remote: String,
    /// Bytes the peer acknowledged on it: what this end sent over it.
    pub bytes_acked: u64,
    /// Bytes this end received on it.
    pub bytes_received: u64,
    /// Its smoothed round-trip time.
    pub srtt: Nanos,
    /// Its retransmitted segments.
    pub retransmits: u64,
}

/// Socket buffer sizes and TCP options as the kernel granted them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SocketFacts {
    /// `SO_SNDBUF` read back after setting (Linux doubles the request, capped at
    /// `wmem_max`).
    pub sndbuf: u64,
    /// `SO_RCVBUF` read back after setting.
    pub rcvbuf: u64,
    /// The MSS, for TCP: what the connection used (TCP_INFO at the end of the test)
    /// where a flow reported it, else `TCP_MAXSEG` read when it opened.
    pub mss: Option<u32>,
    /// `TCP_CONGESTION` read back, for TCP.
    pub congestion: Option<String>,
}

/// Everything one end reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SideResult {
    /// Host facts.
    pub host: HostFacts,
    /// Per flow.
    pub flows: Vec<FlowResult>,
    /// CPU over the measured interval.
    pub cpu: Option<CpuReport>,
    /// What the kernel granted on this end's data sockets.
    pub socket: Option<SocketFacts>,
    /// A load-latency test: this end's sending TCP flows' `TCP_INFO` over time.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tcp_samples: Vec<crate::load::FlowSamples>,
}

impl SideResult {
    /// Whether `other` ran on the same kernel (loopback, the lab's namespaces),
    /// known by its boot id, so both ends' clocks are one: a one-way delay taken
    /// across the two is exact.
    pub fn same_clock(&self, other: &SideResult) -> bool {
        !self.host.boot_id.is_empty() && self.host.boot_id == other.host.boot_id
    }

    /// Whether `other` ran on the same host (loopback, the lab's namespaces): the
    /// two read one `/proc/stat`, so their host-wide figures are one and the same.
    pub fn same_host(&self, other: &SideResult) -> bool {
        self.host.hostname == other.host.hostname
            && self.host.kernel == other.host.kernel
            && self.host.cpu_model == other.host.cpu_model
    }
}

/// One interval line, summed over the flows of one direction, as the client saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalRecord {
    /// Start, from the beginning of the measured interval (negative time is warm-up,
    /// which is not reported).
    pub start: Nanos,
    /// End.
    pub end: Nanos,
    /// Direction.
    pub dir: FlowDir,
    /// Bytes in the interval: for a TCP stream the client sends, what its
    /// receiver acknowledged (against an iperf3 server, what it wrote, as iperf3
    /// counts); for UDP it sends, what it sent; for a direction it receives, what
    /// it received.
    pub bytes: Bytes,
    /// The rate over the interval.
    pub rate: BitRate,
    /// Messages.
    pub messages: u64,
    /// Transactions.
    pub transactions: u64,
    /// A UDP direction this end receives: the datagrams expected in the
    /// interval, those lost, and the jitter at its end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp: Option<IntervalUdp>,
    /// A direction this end sends over MPTCP (`--mptcp`): each subflow's share
    /// of the interval, from its own `TCP_INFO` (`MPTCP_TCPINFO`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subflows: Option<Vec<IntervalSubflow>>,
}

/// One MPTCP subflow over one interval record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntervalSubflow {
    /// The flow (MPTCP connection) it belongs to.
    pub flow: u32,
    /// This end's address and port.
    pub local: String,
    /// The peer's.
    pub remote: String,
    /// Bytes the peer acknowledged on it in the interval.
    pub bytes: Bytes,
    /// Segments it retransmitted in the interval.
    pub retransmits: u64,
    /// Its smoothed round-trip time as the interval ended.
    pub srtt: Nanos,
    /// Whether it carried data, was new, or went away.
    pub state: SubflowState,
}

/// What a subflow did in an interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SubflowState {
    /// It carried data.
    Carrying,
    /// It was made in this interval (it was not there at the last record).
    Established,
    /// It was there, and the peer acknowledged nothing on it.
    Idle,
    /// It was there at the last record and is gone now, while its connection
    /// has others.
    Closed,
}

/// Something that happened during a test, at a moment of its measured
/// interval: the subflows of an MPTCP connection made, stalled, resumed and
/// closed, from the interval records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestEvent {
    /// When, from the measured interval's start: the start of the interval
    /// record that first showed it (the records' resolution).
    pub at: Nanos,
    /// What.
    pub kind: EventKind,
    /// What it happened to (`flow 1 10.77.1.2:41234 -> 10.77.1.1:5390`).
    pub subject: String,
}

/// What kind of thing happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EventKind {
    /// A subflow was made.
    SubflowEstablished,
    /// A subflow that carried data carried none for an interval.
    SubflowStalled,
    /// A stalled subflow carried data again.
    SubflowResumed,
    /// A subflow went away.
    SubflowClosed,
}

impl EventKind {
    /// In words.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::SubflowEstablished => "subflow established",
            EventKind::SubflowStalled => "subflow stalled",
            EventKind::SubflowResumed => "subflow resumed",
            EventKind::SubflowClosed => "subflow closed",
        }
    }
}

/// A UDP receiver's figures over one interval, as iperf3's interval lines have
/// them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntervalUdp {
    /// Datagrams expected: the advance of the highest sequence number seen.
    pub packets: u64,
    /// Of those, not (yet) arrived.
    pub lost: u64,
    /// RFC 3550's interarrival jitter at the interval's end.
    pub jitter: Nanos,
}
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DirectionSummary {
    /// Direction.
    pub dir: FlowDir,
    /// Bytes the sending end counted, whole test.
    pub sender_bytes_total: Bytes,
    /// Bytes the receiving end counted, whole test.
    pub receiver_bytes_total: Bytes,
    /// Bytes received in the measured interval.
    pub bytes: Bytes,
    /// The receiver's measured interval.
    pub elapsed: Nanos,
    /// Goodput: measured bytes over the measured interval, at the receiver.
    pub goodput: BitRate,
    /// Messages written per second by the sender.
    pub messages_per_sec: f64,
    /// Datagrams received per second (UDP).
    pub packets_per_sec: Option<f64>,
    /// Datagrams sent, whole test (UDP).
    pub datagrams_sent: Option<u64>,
    /// Datagrams sent in the measured interval (UDP): warm-up traffic, and the
    /// drops while a receiver starts, are not the measurement's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub datagrams_sent_measured: Option<u64>,
    /// Loss as a share of the datagrams sent in the measured interval (UDP).
    pub loss: Option<Percent>,
    /// Lost, duplicate and reordered datagrams and jitter, summed (worst jitter).
    pub udp: Option<UdpStats>,
    /// Retransmitted segments summed over the sender's connections (TCP).
    pub retransmits: Option<u64>,
}

/// A request/response test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RrSummary {
    /// Transactions in the measured interval, at the client.
    pub transactions: u64,
    /// Transactions per second.
    pub transactions_per_sec: f64,
    /// Round-trip latency of every measured transaction.
    pub latency: LatencySummary,
    /// Transactions the client completed, whole test.
    pub client_transactions_total: u64,
    /// Transactions the server answered, whole test.
    pub server_transactions_total: u64,
}

/// CPU cost on one end, and whose it is.
///
/// The **test's CPU** is its flow threads' own CPU clocks and the rest of its
/// process, the processes that are part of it (a peer tool's server, the lab's
/// emulator), and its share of the kernel's network work outside any process
/// (interrupts, softirq on idle cores, ksoftirqd and other kernel threads),
/// apportioned by the test's share of the bytes the host's interfaces counted
/// ([`SideCost::stack_share`]); when both ends share the host, each takes half of
/// what is not its own. **Foreign load** is the host's other processes (less the
/// peer when it is another process on the same host) and the rest of the
/// kernel's work. docs/DIAGNOSIS.md ("Whose CPU") gives the model and its error.
/// Service demand is the test's CPU per KiB or transaction; the system-wide
/// figure (netperf's definition, foreign load included) stands beside it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SideCost {
    /// Busy cores over the measured interval (system-wide).
    pub busy_cores: f64,
    /// The test's own CPU on this end, in cores (see above); `None` when the flow
    /// threads' clocks were not read.
    #[serde(default)]
    pub test_cores: Option<f64>,
    /// Busy cores that belong to neither end of the test.
    #[serde(default)]
    pub foreign_cores: Option<f64>,
    /// The test's share of the bytes the host's network interfaces counted over
    /// the interval (0 to 1): its share of the kernel's network work. `None`
    /// where the interfaces were not read (reports before this figure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack_share: Option<f64>,
    /// Microseconds of the test's CPU per KiB moved, both directions counted
    /// (service demand); the system-wide figure when the test's is unknown.
    pub us_per_kib: Option<f64>,
    /// Microseconds of the test's CPU per transaction.
    pub us_per_transaction: Option<f64>,
    /// Microseconds of busy CPU, system-wide, per KiB (netperf's service demand,
    /// foreign load included).
    #[serde(default)]
    pub system_us_per_kib: Option<f64>,
    /// Microseconds of busy CPU, system-wide, per transaction.
    #[serde(default)]
    pub system_us_per_transaction: Option<f64>,
    /// I/O system calls per message.
    pub calls_per_message: Option<f64>,
    /// Context switches of this process per message.
    pub ctxsw_per_message: Option<f64>,
    /// Messages per I/O system call.
    #[serde(default)]
    pub messages_per_call: Option<f64>,
    /// Context switches of this process per MB (10^6 bytes) moved.
    #[serde(default)]
    pub ctxsw_per_mb: Option<f64>,
    /// Where this end's flow threads' CPU went (their sampled call chains, by
    /// category), per KiB moved or per transaction; empty where not taken.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub breakdown: Vec<crate::profile::CostShare>,
}

#[path = "warning.rs"]
mod warning;
pub use warning::Warning;

/// A whole test as reported to the user: the `--json` document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestReport {
    /// [`crate::JSON_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// netsonde version of the client.
    pub tool_version: String,
    /// Every effective option.
    pub spec: TestSpec,
    /// Where the server was (`embedded` or `HOST:PORT`).
    pub server_address: String,
    /// The client's figures.
    pub client: SideResult,
    /// The server's figures, sent back over the control connection.
    pub server: SideResult,
    /// Interval lines (when `--interval` was given).
    pub intervals: Vec<IntervalRecord>,
    /// Stream directions.
    pub directions: Vec<DirectionSummary>,
    /// Request/response summary.
    pub rr: Option<RrSummary>,
    /// Client CPU cost.
    pub client_cost: Option<SideCost>,
    /// Server CPU cost.
    pub server_cost: Option<SideCost>,
    /// Quality warnings.
    pub warnings: Vec<Warning>,
    /// What happened during the test, in order (an MPTCP connection's
    /// subflows); set by `netsonde_analysis::finish` from the intervals.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<TestEvent>,
    /// The lab link the test ran over (`netsonde lab run`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<crate::link::LinkRecord>,
    /// What limited the test, with evidence and advice (set by the caller from
    /// `netsonde_analysis::diagnose`); absent where not diagnosed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnosis: Option<crate::diagnosis::Diagnosis>,
    /// RFC 6349 metrics of a TCP stream test (set by the caller from
    /// `netsonde_analysis::rfc6349`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rfc6349: Option<Rfc6349>,
    /// The server was another tool (`client --peer iperf3`): what it reported of
    /// itself beyond its per-stream figures (which are in `server`). Absent
    /// against a netsonde server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer: Option<PeerReport>,
    /// A load-latency test (`--probe`): what the probes saw, and its analysis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<crate::load::LoadLatency>,
    /// The test started with others at one moment (`netsonde mesh
    /// --concurrency`): when, and how far apart the round's tests started.
    /// Absent for a test started on its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub synced: Option<SyncedStart>,
}

/// When a test of a round of concurrent tests started, against the moment the
/// round was set to start (the hosts' clocks are taken as synchronised).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SyncedStart {
    /// The round's start, milliseconds since the Unix epoch.
    pub start_at_unix_ms: u64,
    /// When this test started, by its agent's clock.
    pub started_unix_ms: u64,
    /// The latest start of the round less the earliest, milliseconds.
    pub round_skew_ms: u64,
    /// Tests in the round.
    pub round_size: u32,
}

/// What a server of another tool reported of itself, in its own terms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerReport {
    /// The tool (`iperf3`).
    pub tool: String,
    /// Its process's CPU time over the test, percent of one core (iperf3's
    /// `cpu_util_total`: its whole test, not netsonde's measured interval).
    pub cpu_util_total: f64,
    /// Its user part.
    pub cpu_util_user: f64,
    /// Its system part.
    pub cpu_util_system: f64,
    /// TCP retransmissions it counted as a sender, all streams.
    pub retransmits: Option<u64>,
    /// The congestion control it used.
    pub congestion: Option<String>,
    /// Its own report, when it sent one (iperf3's server output).
    pub output: Option<String>,
}

/// A core busier than this is reported as saturated.
pub const SATURATED: Percent = Percent(95.0);

/// A UDP sender below this share of the asked rate raises a warning.
pub const SENDER_SHORTFALL: f64 = 0.9;

/// Figures that are not what they seem: a UDP sender that fell short of its rate,
/// jitter measured on batched datagrams, receivers that discard the data.
/// UDP loss from which a test is flagged as not having got through, percent.
pub const TOTAL_LOSS_PCT: f64 = 99.0;

/// Foreign load (busy cores that are neither end's) from which a warning is raised.
pub const FOREIGN_LOAD: f64 = 0.15;

#[cfg(test)]
mod tests {
    use super::*;

    fn side(hostname: &str, boot_id: &str) -> SideResult {
        SideResult {
            host: HostFacts {
                hostname: hostname.into(),
                boot_id: boot_id.into(),
                ..HostFacts::default()
            },
            flows: Vec::new(),
            cpu: None,
            socket: None,
            tcp_samples: Vec::new(),
        }
    }

    #[test]
    fn one_clock_is_one_boot_of_one_kernel_not_one_host_name() {
        assert!(side("a", "b-1").same_clock(&side("a", "b-1")));
        // Two machines cloned from one image share a name, not a boot.
        assert!(!side("a", "b-1").same_clock(&side("a", "b-2")));
        // An end that does not say cannot be assumed to share the clock.
        assert!(!side("a", "").same_clock(&side("a", "")));
    }
}
