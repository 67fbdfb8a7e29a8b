//! Latency under load: what the probes of a load-latency test (`--probe`) saw, the
//! load's phases, and each loaded flow's `TCP_INFO` over time; and the analysed
//! summary (`netsonde_analysis::load`) the reports render.
//!
//! The timeline is the client's: every time is counted from its receipt of
//! `Start` (the server's flows start at its own receipt, one one-way delay later).
//! Probes run through all of it; the load starts after the idle phase and ends
//! when the client's flows are done; the probes go on for the after phase.

use serde::{Deserialize, Serialize};

use crate::spec::FlowDir;
use crate::units::{BitRate, Nanos};

/// How a probe measures a round trip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProbeKind {
    /// One byte each way on a TCP connection of its own, opened before the test
    /// and kept: the application's round trip beside the load.
    Tcp,
    /// A UDP datagram echoed by the server, stamped at each end: the round trip and
    /// both one-way delays; a datagram that never came back is lost.
    Udp,
    /// A new TCP connection per probe (the responsiveness draft's foreign probe):
    /// its handshake (`connect`), then one byte each way on it (`rtt`).
    Connect,
}

impl ProbeKind {
    /// Every kind, in report order.
    pub const ALL: [ProbeKind; 3] = [ProbeKind::Tcp, ProbeKind::Udp, ProbeKind::Connect];

    /// Name in JSON and text.
    pub fn name(self) -> &'static str {
        match self {
            ProbeKind::Tcp => "tcp",
            ProbeKind::Udp => "udp",
            ProbeKind::Connect => "connect",
        }
    }
}

/// One probe.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ProbeSample {
    /// Its kind.
    pub kind: ProbeKind,
    /// When it was sent.
    pub t: Nanos,
    /// Its round trip (for `connect`, the request and response after the
    /// handshake); `None`: no answer (lost, or the test ended first).
    pub rtt: Option<Nanos>,
    /// The TCP handshake (`connect` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect: Option<Nanos>,
    /// UDP: the server's receive time minus the client's send time, each end's
    /// wall clock, nanoseconds (raw: add the clock offset estimate for a one-way
    /// delay across hosts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub up: Option<i64>,
    /// UDP: the client's receive time minus the server's send time, raw likewise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub down: Option<i64>,
}

/// The load's place on the client's timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Phases {
    /// The load flows started (the end of the idle phase).
    pub load_start: Nanos,
    /// Warm-up over: the measured (loaded) interval began.
    pub measured_start: Nanos,
    /// The measured interval ended.
    pub measured_end: Nanos,
    /// The load flows were done (the after phase begins).
    pub load_end: Nanos,
    /// The probes stopped.
    pub end: Nanos,
}

/// A phase of a load-latency test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// Before the load.
    Idle,
    /// The load's warm-up: queues filling.
    Ramp,
    /// The measured interval under load.
    Loaded,
    /// Draining, from the end of the measured interval to the load flows' end.
    Drain,
    /// After the load.
    After,
}

impl Phase {
    /// Name in JSON and text.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Idle => "idle",
            Phase::Ramp => "ramp",
            Phase::Loaded => "loaded",
            Phase::Drain => "drain",
            Phase::After => "after",
        }
    }
}

impl Phases {
    /// The phase a probe sent at `t` belongs to.
    pub fn at(&self, t: Nanos) -> Phase {
        if t < self.load_start {
            Phase::Idle
        } else if t < self.measured_start {
            Phase::Ramp
        } else if t < self.measured_end {
            Phase::Loaded
        } else if t < self.load_end {
            Phase::Drain
        } else {
            Phase::After
        }
    }
}

/// One `TCP_INFO` reading of a loaded flow's sending socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TcpSample {
    /// When, from the sending end's start of the load.
    pub t: Nanos,
    /// Bytes the receiver acknowledged (`tcpi_bytes_acked`).
    pub bytes_acked: u64,
    /// Smoothed round trip.
    pub srtt: Nanos,
    /// Congestion window, segments.
    pub cwnd: u32,
    /// Retransmitted segments so far (`tcpi_total_retrans`).
    pub retransmits: u64,
}

/// One sending flow's readings.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FlowSamples {
    /// Flow number.
    pub flow: u32,
    /// Its readings, in time order.
    pub samples: Vec<TcpSample>,
}

/// What the probes saw, raw (in the JSON so any figure can be recomputed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadLatency {
    /// The load's phases.
    pub phases: Phases,
    /// Every probe.
    pub probes: Vec<ProbeSample>,
    /// Both ends read one clock (one kernel: loopback, the lab): the one-way
    /// delays are exact. Otherwise they need an offset estimate.
    pub same_clock: bool,
    /// The analysed figures (set by the caller from `netsonde_analysis::load`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<LoadSummary>,
}

/// Latency percentiles of one probe kind in one phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseLatency {
    /// The phase.
    pub phase: Phase,
    /// The probe kind.
    pub kind: ProbeKind,
    /// Probes answered.
    pub answered: u64,
    /// Probes never answered.
    pub lost: u64,
    /// Least.
    pub min: Option<Nanos>,
    /// Median.
    pub p50: Option<Nanos>,
    /// 90th percentile.
    pub p90: Option<Nanos>,
    /// 99th percentile (only from 100 answers on; `None` below).
    pub p99: Option<Nanos>,
}

/// What the load added to a probe kind's round trip.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Added {
    /// The probe kind.
    pub kind: ProbeKind,
    /// Loaded median minus idle median, ms (negative when the load made it faster).
    pub p50_ms: f64,
    /// Loaded 90th percentile minus idle 90th percentile, ms.
    pub p90_ms: f64,
}

/// One-way delays from the UDP probes, by phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OneWay {
    /// `exact` (one clock) or `estimated` (offset from the idle probes).
    pub clock: String,
    /// The offset added to the server's clock, ns (0 when exact).
    pub offset_ns: i64,
    /// How far off the offset may be, ns: half the round trip of the probe it
    /// came from (0 when exact).
    pub uncertainty_ns: i64,
    /// Median client-to-server delay idle and loaded, ms.
    pub up_idle_ms: Option<f64>,
    /// Loaded.
    pub up_loaded_ms: Option<f64>,
    /// Median server-to-client delay idle, ms.
    pub down_idle_ms: Option<f64>,
    /// Loaded.
    pub down_loaded_ms: Option<f64>,
}

/// How sure a responsiveness figure is (the draft's §5.4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Confidence {
    /// Fewer than MAD intervals of probes.
    Low,
    /// MAD intervals or more, but not stable within SDT.
    Medium,
    /// Stable.
    High,
}

/// Responsiveness under working conditions (draft-ietf-ippm-responsiveness-08,
/// §5.3.1.2, TCP without TLS).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Responsiveness {
    /// Round trips per minute: the mean of the foreign and the loaded figures.
    pub rpm: f64,
    /// 60000 / mean(TM(connect), TM(request on the new connection)).
    pub foreign_rpm: f64,
    /// 60000 / TM(self): the loaded connections' own round trip.
    pub loaded_rpm: f64,
    /// The same computed from the idle phase's probes (no self probe there: the
    /// persistent TCP probe stands in), for scale.
    pub idle_rpm: Option<f64>,
    /// Trimmed means (95%, top tail), ms: handshake, request on it, self.
    pub tm_connect_ms: f64,
    /// Request/response on the new connection.
    pub tm_request_ms: f64,
    /// Self.
    pub tm_self_ms: f64,
    /// Poor (< 300), Fair (< 1000), Good (< 6000) or Excellent.
    pub rating: String,
    /// Whether the last MAD intervals' figures were within SDT of the last.
    pub stable: bool,
    /// The draft's confidence level.
    pub confidence: Confidence,
    /// Intervals (1 s) of the loaded phase the figure came from.
    pub intervals: u32,
    /// Which probes stood for which of the draft's (no TLS, no HTTP).
    pub probes: String,
}

/// How evenly the load's flows shared the path, per direction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fairness {
    /// Direction.
    pub dir: FlowDir,
    /// Flows in it.
    pub flows: u32,
    /// Jain's index over the flows' goodputs in the measured interval (1: equal,
    /// 1/n: one flow took everything).
    pub jain: f64,
    /// Jain's index of each interval of the over-time series.
    pub jain_intervals: Vec<f64>,
    /// The slowest and the fastest flow's goodput.
    pub slowest: BitRate,
    /// Fastest.
    pub fastest: BitRate,
}

/// One flow's goodput and `TCP_INFO` over time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlowSeries {
    /// Flow number.
    pub flow: u32,
    /// Direction.
    pub dir: FlowDir,
    /// Interval ends (from the load's start, at the sending end).
    pub t: Vec<Nanos>,
    /// Goodput (acknowledged bytes) over each interval.
    pub goodput: Vec<BitRate>,
    /// Smoothed round trip at each interval's end.
    pub srtt: Vec<Nanos>,
    /// Congestion window, segments.
    pub cwnd: Vec<u32>,
    /// Retransmissions in each interval.
    pub retransmits: Vec<u64>,
}

/// The analysed figures of a load-latency test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadSummary {
    /// Percentiles per phase and probe kind.
    pub phases: Vec<PhaseLatency>,
    /// What the load added, per probe kind (idle against loaded).
    pub added: Vec<Added>,
    /// One-way delays (UDP probes).
    pub one_way: Option<OneWay>,
    /// Responsiveness; absent without enough probes or without TCP load.
    pub responsiveness: Option<Responsiveness>,
    /// Fairness per direction with more than one flow.
    pub fairness: Vec<Fairness>,
    /// Each loaded TCP flow over time.
    pub flows: Vec<FlowSeries>,
    /// What the reader must know (too few probes, a phase with no answers, ...).
    pub caveats: Vec<String>,
}
