//! A diagnosis as it travels in results: what limited a test ([`Bottleneck`]), with
//! the evidence and advice ([`Diagnosis`]). How it is reached lives in
//! `netsonde-analysis` (`diagnose`); this is only the vocabulary.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Which kind of time filled a saturated core.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CpuKind {
    /// The application (user mode).
    User,
    /// System calls and the socket layer (kernel mode in process context).
    System,
    /// Interrupt and softirq work (the receive path).
    Softirq,
}

/// What limited a test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Bottleneck {
    /// The line rate given is below what was measured: an error in the input.
    LineRateBelowGoodput {
        /// The line rate given, bit/s.
        line_rate_bps: f64,
    },
    /// The link ran at (nearly) its theoretical maximum.
    Link,
    /// The sender was paced at a rate it reached.
    Application,
    /// One core on one end was (nearly) fully busy, or one thread was (nearly)
    /// always on a core.
    Cpu {
        /// `client` or `server` (`host` when a core of a host both ends share).
        side: String,
        /// The core.
        core: Option<u32>,
        /// What filled it.
        cpu: Option<CpuKind>,
        /// The thread that was the limit, when one was: the host may have had
        /// idle cores.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thread: Option<BusyThread>,
    },
    /// A UDP sender offered more than the link carries: the link was overloaded
    /// and dropped the rest.
    LinkOverload {
        /// What the senders offered, bit/s.
        offered_bps: f64,
        /// The link's goodput ceiling, bit/s.
        ceiling_bps: f64,
    },
    /// The receiver's advertised window held the sender back.
    ReceiverWindow,
    /// The sender's socket buffer held it back.
    SenderBuffer,
    /// The socket buffer set with `-w` limited the data in flight: goodput is near
    /// window / RTT.
    Window,
    /// Loss or retransmissions held the rate down.
    Loss,
    /// Request/response: one transaction at a time per flow, so the rate is the
    /// number of flows over the latency.
    RoundTrip,
    /// The NIC or the kernel's receive path of one end: drops for lack of
    /// receive buffers, a saturated interrupt core, or a link negotiated below
    /// the rate asked.
    Nic {
        /// `client`, `server`, or `host` when both ends share it.
        side: String,
        /// The evidence, as the NIC rule found it.
        finding: crate::nic::NicFinding,
    },
    /// A core of one end was (nearly) fully busy, but mostly with work that was
    /// not the test's: the host was busy with other processes or their traffic,
    /// and the test got what was left.
    HostBusy {
        /// `client` or `server` (`host` when both ends share it).
        side: String,
        /// The busy core.
        core: Option<u32>,
        /// The test's share of the host's busy time, percent.
        test_pct: f64,
    },
    /// The cgroup's CPU quota of one end (a container's CPU limit) stopped its
    /// threads in most periods: the quota, not the host, was its CPU ceiling.
    CpuQuota {
        /// `client` or `server` (`host` when both ends are one process).
        side: String,
        /// The quota, in cores.
        quota_cores: f64,
        /// Periods throttled, of `periods`, over the measured interval.
        throttled_periods: u64,
        /// Periods that elapsed.
        periods: u64,
    },
    /// None of the rules held.
    Unknown,
}

impl Bottleneck {
    /// A short name.
    pub fn name(&self) -> String {
        match self {
            Bottleneck::LineRateBelowGoodput { .. } => "input error".into(),
            Bottleneck::Link => "link-bound".into(),
            Bottleneck::Application => "application-bound (paced)".into(),
            Bottleneck::Cpu {
                side, cpu, thread, ..
            } => {
                let who = match thread {
                    Some(t) => format!("{side} {}", t.what),
                    None => side.clone(),
                };
                match cpu {
                    Some(CpuKind::Softirq) => format!("CPU-bound ({who}, softirq)"),
                    Some(CpuKind::User) => format!("CPU-bound ({who}, user)"),
                    Some(CpuKind::System) => format!("CPU-bound ({who}, system)"),
                    None => format!("CPU-bound ({who})"),
                }
            }
            Bottleneck::LinkOverload { .. } => "link overloaded".into(),
            Bottleneck::ReceiverWindow => "receiver-bound (receive window)".into(),
            Bottleneck::SenderBuffer => "window-bound (sender buffer)".into(),
            Bottleneck::Window => "window-bound (socket buffer)".into(),
            Bottleneck::Loss => "loss-bound".into(),
            Bottleneck::RoundTrip => "round-trip-bound".into(),
            Bottleneck::Nic { side, finding } => format!("NIC-bound ({side}, {})", finding.name()),
            Bottleneck::HostBusy { side, .. } => format!("host busy with other work ({side})"),
            Bottleneck::CpuQuota { side, .. } => format!("CPU quota ({side} cgroup)"),
            Bottleneck::Unknown => "no single bottleneck".into(),
        }
    }

    /// The verdict in a few words, for a table's narrow column
    /// (`CPU client sys`, `receive window`).
    pub fn short(&self) -> String {
        match self {
            Bottleneck::LineRateBelowGoodput { .. } => "input error".into(),
            Bottleneck::Link => "link".into(),
            Bottleneck::Application => "paced".into(),
            Bottleneck::Cpu { side, cpu, .. } => match cpu {
                Some(CpuKind::Softirq) => format!("CPU {side} softirq"),
                Some(CpuKind::User) => format!("CPU {side} user"),
                Some(CpuKind::System) => format!("CPU {side} sys"),
                None => format!("CPU {side}"),
            },
            Bottleneck::LinkOverload { .. } => "link overloaded".into(),
            Bottleneck::ReceiverWindow => "receive window".into(),
            Bottleneck::SenderBuffer => "send buffer".into(),
            Bottleneck::Window => "socket buffer".into(),
            Bottleneck::Loss => "loss".into(),
            Bottleneck::RoundTrip => "round trip".into(),
            Bottleneck::Nic { side, .. } => format!("NIC {side}"),
            Bottleneck::HostBusy { side, .. } => format!("host busy {side}"),
            Bottleneck::CpuQuota { side, .. } => format!("CPU quota {side}"),
            Bottleneck::Unknown => "no single limit".into(),
        }
    }
}

impl fmt::Display for Bottleneck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// A thread that was on a core for (nearly) all of the measured interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BusyThread {
    /// What it is: `flow thread`, or a peer tool's process (`iperf3 process`).
    pub what: String,
    /// The flows it carried (empty for a peer's process).
    pub flows: Vec<u32>,
    /// The share of the measured interval it ran, percent.
    pub busy: f64,
}

/// A verdict with what supports it and what to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diagnosis {
    /// What limited the test.
    pub bottleneck: Bottleneck,
    /// The figures behind the verdict, in words.
    pub evidence: String,
    /// One concrete thing to try.
    pub advice: String,
    /// For "no single bottleneck": the rules that came within reach, as names.
    pub candidates: Vec<String>,
    /// What qualifies the verdict without being the limit (an offload off, a
    /// cross-NUMA placement, NIC findings the verdict did not rest on).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub caveats: Vec<String>,
}

impl fmt::Display for Diagnosis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.bottleneck, self.evidence)?;
        if !self.candidates.is_empty() {
            write!(f, " (candidates: {})", self.candidates.join(", "))?;
        }
        if !self.advice.is_empty() {
            write!(f, "; try: {}", self.advice)?;
        }
        for c in &self.caveats {
            write!(f, "; caveat: {c}")?;
        }
        Ok(())
    }
}
