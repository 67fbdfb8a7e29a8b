//! The loss-free rate search's vocabulary (RFC 2544 §26.1 throughput, NDR and
//! PDR): frame sizes and their overheads, the search's settings, one trial and
//! what the trials found. The search itself is `netsonde_sweep::search`.

use serde::{Deserialize, Serialize};

use crate::load::PhaseLatency;
use crate::result::TestReport;
use crate::units::PacketRate;

/// Ethernet bytes of a frame beyond the IP packet that RFC 2544's frame sizes
/// count: MAC header 14 and FCS 4.
pub const FRAME_L2: u32 = 18;
/// Bytes a frame carries beyond its UDP payload: L2 18, IPv4 20, UDP 8.
pub const FRAME_OVERHEAD: u32 = FRAME_L2 + 28;
/// Bytes a frame carries beyond a TCP segment's payload: L2 18, IPv4 20, TCP 20
/// and the timestamp option 12 (Linux sends it by default).
pub const TCP_FRAME_OVERHEAD: u32 = FRAME_L2 + 52;

/// The Ethernet frame that carries one message of a searched `spec`: a UDP
/// datagram, or a TCP segment of the message's size (the search sends TCP
/// messages one segment each, with `TCP_NODELAY`).
pub fn frame_of(spec: &crate::spec::TestSpec) -> u64 {
    let overhead = if spec.test == crate::spec::TestKind::TcpStream {
        TCP_FRAME_OVERHEAD
    } else {
        FRAME_OVERHEAD
    };
    spec.size.0 + u64::from(overhead)
}

/// Bytes on the wire per frame beyond the frame: preamble 8, inter-frame gap 12.
pub const WIRE_GAP: u32 = 20;
/// RFC 2544's frame sizes for Ethernet (§9.1), in bytes.
pub const RFC2544_FRAMES: [u32; 7] = [64, 128, 256, 512, 1024, 1280, 1518];

/// How a search runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SearchConfig {
    /// PDR's loss ratio (0.005 is 0.5%).
    pub loss_ratio: f64,
    /// The bounds' relative width at which a goal is found (0.01 is 1%).
    pub precision: f64,
    /// Below this many packets per second a goal is given up (nothing passes).
    pub min_pps: f64,
    /// Trials at the NDR found that must see no loss.
    pub final_trials: u32,
    /// At most this many trials in all (per goal: the rate search, and the
    /// back-to-back search).
    pub max_trials: u32,
    /// After NDR and PDR, also find the longest burst at the sender's full rate
    /// that loses nothing (RFC 2544 §26.4, back-to-back frames).
    #[serde(default)]
    pub back_to_back: bool,
    /// After the rates (and bursts), measure latency beside a load at each of
    /// [`LATENCY_AT`] of the NDR found (RFC 2544 §26.2 measures it at the
    /// throughput).
    #[serde(default)]
    pub latency: bool,
    /// Independent searches of each point, one after another (`--repeat`): the
    /// spread of their NDRs is what `compare` judges a change against.
    #[serde(default = "one")]
    pub searches: u32,
}

fn one() -> u32 {
    1
}

/// The loads, as fractions of the NDR found, at which `latency` measures.
pub const LATENCY_AT: [f64; 4] = [0.1, 0.5, 0.9, 1.0];
/// Probes a second in a latency trial (the most a probe kind may send).
pub const LATENCY_PROBE_RATE: u32 = crate::spec::MAX_PROBE_RATE;
/// A latency trial's load lasts at least this long: 200 probes, enough for a 99th
/// percentile.
pub const LATENCY_MIN_TRIAL: crate::units::Nanos = crate::units::Nanos(2_000_000_000);
/// Probing alone before a latency trial's load (and after it): the idle round trip.
pub const LATENCY_IDLE: crate::units::Nanos = crate::units::Nanos(500_000_000);

impl Default for SearchConfig {
    fn default() -> SearchConfig {
        SearchConfig {
            loss_ratio: 0.005,
            precision: 0.01,
            min_pps: 100.0,
            final_trials: 2,
            max_trials: 40,
            back_to_back: false,
            latency: false,
            searches: 1,
        }
    }
}

impl SearchConfig {
    /// About how many trials one search takes (for the estimate a user sees before
    /// it starts): the probe, a few narrowing steps per goal, and the confirmations.
    pub fn expected_trials(&self) -> u32 {
        let halvings = (1.0 / self.precision.max(1e-6)).log2().ceil() as u32;
        (1 + 2 * (2 + halvings / 2) + self.final_trials).min(self.max_trials)
    }
}

/// A paced trial that offered less than this share of its asked rate
/// under-delivered (see [`Trial::under_delivered`]).
pub const UNDER_DELIVERED: f64 = 0.97;

/// What one trial saw.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    /// The rate asked, in packets per second; `None` for the unpaced probe.
    pub asked_pps: Option<f64>,
    /// The rate offered: datagrams per second the sender sent in its measured
    /// interval.
    pub offered_pps: f64,
    /// Datagrams the sender sent in its measured interval.
    pub sent: u64,
    /// Datagrams lost of those.
    pub lost: u64,
    /// Datagrams the host's kernel dropped at full receive buffers
    /// (`RcvbufErrors`) during the trial: the receiver could not keep up.
    /// `None` for a TCP trial, which these UDP counters do not describe.
    pub rcvbuf_errors: Option<u64>,
    /// Datagrams dropped on the sending host (`SndbufErrors`): at a full send
    /// buffer, or by a qdisc or device queue there (the kernel counts both).
    /// `None` for a TCP trial.
    pub sndbuf_errors: Option<u64>,
    /// Frames the receiver's AF_XDP socket dropped (`--io xdp`: its receive ring
    /// full, no free frame, or a frame longer than a chunk), which never reach the
    /// UDP counters; `None` when the receiver has no such socket.
    #[serde(default)]
    pub ring_drops: Option<u64>,
}

impl std::fmt::Display for Trial {
    /// `asked A offered O lost L% (kernel: ...)`: the search's progress line.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let asked = self
            .asked_pps
            .map_or("unpaced".to_string(), |p| PacketRate(p).to_string());
        write!(
            f,
            "asked {asked:<12} offered {:<12} lost {:>7.3}% ",
            PacketRate(self.offered_pps).to_string(),
            100.0 * self.loss_ratio(),
        )?;
        match (self.rcvbuf_errors, self.sndbuf_errors) {
            (Some(r), Some(s)) => write!(
                f,
                "(kernel: {r} at full receive buffers, {s} at the sender's buffers or queues{})",
                match self.ring_drops {
                    Some(x) => format!(", {x} at the AF_XDP rings"),
                    None => String::new(),
                }
            ),
            _ => write!(f, "(retransmitted)"),
        }
    }
}

impl Trial {
    /// The offered rate, packets per second.
    pub fn offered_pps(&self) -> f64 {
        self.offered_pps
    }

    /// The paced sender offered less than [`UNDER_DELIVERED`] of the rate asked:
    /// it stalled and caught up, so a loss says more about its bursts than about
    /// the path at the rate it averaged.
    pub fn under_delivered(&self) -> bool {
        self.asked_pps
            .is_some_and(|a| a > 0.0 && self.offered_pps < UNDER_DELIVERED * a)
    }

    /// The forwarding rate: packets per second that arrived.
    pub fn received_pps(&self) -> f64 {
        self.offered_pps * (1.0 - self.loss_ratio())
    }

    /// Lost over sent.
    pub fn loss_ratio(&self) -> f64 {
        if self.sent == 0 {
            0.0
        } else {
            self.lost as f64 / self.sent as f64
        }
    }

    /// The trial of a UDP stream's report: its first direction's counts over the
    /// measured interval, and the kernel's drop counters over it (one host's when
    /// both ends share it).
    pub fn from_report(asked_pps: Option<f64>, r: &TestReport) -> Option<Trial> {
        let d = r.directions.first()?;
        if r.spec.test == crate::spec::TestKind::TcpStream {
            return Self::from_tcp(asked_pps, r, d);
        }
        let udp = d.udp.as_ref()?;
        let sent = d.datagrams_sent_measured?;
        let drops = |s: &crate::result::SideResult| {
            s.cpu.as_ref().and_then(|c| c.udp_drops).unwrap_or_default()
        };
        let (c, s) = (drops(&r.client), drops(&r.server));
        let one_host = r.client.same_host(&r.server);
        let ring_drops = [&r.client, &r.server]
            .into_iter()
            .flat_map(|side| &side.flows)
            .filter(|f| f.dir == d.dir && f.role == crate::result::Role::Receiver)
            .filter_map(|f| f.io.as_ref().and_then(|io| io.ring_drops))
            .reduce(|a, b| a + b);
        Some(Trial {
            asked_pps,
            offered_pps: d.messages_per_sec,
            sent,
            lost: udp.lost,
            rcvbuf_errors: Some(if one_host {
                c.rcvbuf_errors.max(s.rcvbuf_errors)
            } else {
                c.rcvbuf_errors + s.rcvbuf_errors
            }),
            sndbuf_errors: Some(if one_host {
                c.sndbuf_errors.max(s.sndbuf_errors)
            } else {
                c.sndbuf_errors + s.sndbuf_errors
            }),
            ring_drops,
        })
    }
}

impl Trial {
    /// The trial of a TCP stream's report: messages as packets (the offered rate
    /// is the sender's writes per second over the measured interval); sent and
    /// lost are the sending connections' bytes sent and bytes retransmitted
    /// (`TCP_INFO`) over their whole life, warm-up included, in messages (a
    /// retransmitted byte counts as a lost message: a rate that needed a
    /// retransmission anywhere is not loss-free). Bytes, not segments: the kernel
    /// may coalesce messages into larger segments. The UDP drop counters do not
    /// apply (`None`).
    fn from_tcp(
        asked_pps: Option<f64>,
        r: &TestReport,
        d: &crate::result::DirectionSummary,
    ) -> Option<Trial> {
        let infos: Vec<&crate::result::TcpInfoSummary> = [&r.client, &r.server]
            .into_iter()
            .flat_map(|s| &s.flows)
            .filter(|f| f.dir == d.dir && f.role == crate::result::Role::Sender)
            .filter_map(|f| f.tcp_info.as_ref())
            .collect();
        if infos.is_empty() {
            return None;
        }
        let size = r.spec.size.0.max(1);
        let bytes = |f: fn(&crate::result::TcpInfoSummary) -> u64| -> u64 {
            infos.iter().map(|t| f(t)).sum()
        };
        Some(Trial {
            asked_pps,
            offered_pps: d.messages_per_sec,
            sent: bytes(|t| t.bytes_sent) / size,
            lost: bytes(|t| t.bytes_retrans).div_ceil(size),
            rcvbuf_errors: None,
            sndbuf_errors: None,
            ring_drops: None,
        })
    }
}

/// NDR or PDR.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Goal {
    /// No loss.
    Ndr,
    /// Loss at or below the configured ratio.
    Pdr,
}

/// What the trials say about one goal.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bounds {
    /// The highest offered rate that met the goal (below every failure), pps.
    pub lower: Option<f64>,
    /// The lowest offered rate that did not, pps; `None` if every trial met it.
    pub upper: Option<f64>,
    /// Whether the bounds are as close as asked (or nothing passes above the
    /// floor, or nothing failed).
    pub found: bool,
}

/// A finished search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchOutcome {
    /// No-drop rate bounds.
    pub ndr: Bounds,
    /// Partial-drop rate bounds.
    pub pdr: Bounds,
    /// Nothing was lost even unpaced: the sender is the limit.
    pub sender_bound: bool,
    /// Every trial, in order.
    pub trials: Vec<Trial>,
    /// False when the trial budget ran out first.
    pub converged: bool,
    /// Back-to-back (RFC 2544 §26.4), when asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub back_to_back: Option<BurstOutcome>,
    /// Latency beside a load at fractions of NDR, when asked for, in the order
    /// measured.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latency: Vec<LatencyAt>,
    /// The point's further independent searches (`--repeat`), each whole, in the
    /// order run; this one is the first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repeats: Vec<SearchOutcome>,
}

impl SearchOutcome {
    /// This search and its repeats.
    pub fn searches(&self) -> impl Iterator<Item = &SearchOutcome> {
        std::iter::once(self).chain(&self.repeats)
    }

    /// `goal`'s lower bound in each search that found one.
    pub fn lower_bounds(&self, goal: Goal) -> Vec<f64> {
        self.searches()
            .filter_map(|s| match goal {
                Goal::Ndr => s.ndr.lower,
                Goal::Pdr => s.pdr.lower,
            })
            .collect()
    }
}

/// Latency beside a UDP load at a fraction of NDR: UDP probes, each echoed by the
/// server and stamped at both ends, sent alone first (idle) and then beside the
/// load (loaded), on the same path as the load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyAt {
    /// The load asked, as a fraction of the NDR it was measured at (1.0: at NDR).
    pub fraction: f64,
    /// The load: what it offered and lost beside the probes.
    pub trial: Trial,
    /// The probes' round trip before the load.
    pub idle: Option<PhaseLatency>,
    /// The probes' round trip beside the load (its measured interval).
    pub loaded: Option<PhaseLatency>,
    /// The median one-way delay in the load's direction (client to server) beside
    /// the load, ms, when both ends read one clock (loopback, the lab).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub one_way_ms: Option<f64>,
    /// The same before the load, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub one_way_idle_ms: Option<f64>,
}

/// The back-to-back search's result: bursts of datagrams sent at the sender's full
/// rate (unpaced), each alone, counted whole.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BurstOutcome {
    /// The longest burst that lost nothing (below every burst that lost), in
    /// datagrams.
    pub lower: Option<u64>,
    /// The shortest burst that lost, datagrams; `None` when none did (the longest
    /// burst tried, a whole trial's worth, passed: the receiver keeps up).
    pub upper: Option<u64>,
    /// Whether the bounds are as close as asked (or nothing was lost, or even the
    /// shortest burst lost).
    pub found: bool,
    /// Every burst: its length and what it saw.
    pub trials: Vec<(u64, Trial)>,
}
