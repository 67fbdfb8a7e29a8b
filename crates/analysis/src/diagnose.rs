//! Bottleneck diagnosis: [`diagnose`] reads what was measured about one test or
//! sweep point ([`DiagnosisInput`]) and names what limited it ([`Bottleneck`]),
//! with the evidence and one concrete piece of advice ([`Diagnosis`]).
//!
//! A verdict is given only when its evidence holds; the rules are ordered and the
//! first that holds wins, because the earlier limits explain the later symptoms:
//!
//! 1. **input error**: the line rate the user gave is below the measured goodput
//!    (never "efficiency 376%");
//! 2. **link**: goodput at 90% or more of the link's ceiling after header overhead;
//! 3. **application**: the sender was paced (`-b`) and reached 90% of that rate;
//! 4. **CPU**: a core of either end at 90% busy or more, named with its side and
//!    whether user, system or softirq time filled it (a saturated receiver also
//!    fills the sender's buffer, so CPU comes before the window rules);
//! 5. **receiver window**: TCP_INFO says the receiver's advertised window held the
//!    sender 30% of its busy time or more;
//! 6. **sender buffer**: the sender's socket buffer did (`sndbuf_limited`);
//! 7. **window**: a window was set (`-w`) and goodput reached 80% of window/RTT;
//! 8. **loss**: UDP loss over 0.1%, or TCP retransmitted over 0.1% of its segments;
//! 9. **round trip** (request/response tests): the transactions ran one at a time
//!    per flow at 90% of flows/latency or more;
//! 10. otherwise **no single bottleneck**, with the candidates that came within
//!     reach of their rule (70% of its threshold).

pub use netsonde_model::diagnosis::{Bottleneck, CpuKind, Diagnosis};
use netsonde_model::result::TestReport;
use netsonde_model::units::{BitRate, Bytes, Nanos};
use serde::{Deserialize, Serialize};

/// Goodput within this share of the theoretical maximum is link-limited.
pub const LINK_SHARE: f64 = 0.90;

/// Goodput above the line rate's ceiling by more than this share is an input error.
pub const ABOVE_LINE: f64 = 1.02;

/// Goodput within this share of the pacing rate is application-limited.
pub const PACED_SHARE: f64 = 0.90;

/// A busiest core at or above this busy share, in percent, is CPU-limited.
pub const CPU_BUSY_PCT: f64 = 90.0;

/// A share of the sender's busy time limited by a window, from which it is the
/// bottleneck.
pub const LIMITED_SHARE: f64 = 0.30;

/// Goodput within this share of window/RTT is window-limited.
pub const WINDOW_SHARE: f64 = 0.80;

/// Loss above this, in percent, is loss-limited (UDP loss, or TCP retransmitted
/// segments over segments sent).
pub const LOSS_PCT: f64 = 0.1;

/// Transactions per second within this share of flows/latency are round-trip
/// bound.
pub const RTT_SHARE: f64 = 0.90;

/// Within this share of a rule's threshold, the rule is a candidate.
pub const NEAR: f64 = 0.70;

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
}

impl CoreLoad {
    /// Only the busy share is known (a sweep's stored metric).
    pub fn busy(busy: f64) -> CoreLoad {
        CoreLoad {
            busy,
            ..CoreLoad::default()
        }
    }

    fn kind(&self) -> Option<CpuKind> {
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

/// What was measured about one test, as [`diagnose`] needs it. `None` means
/// unknown, and a rule that needs an unknown figure does not apply.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DiagnosisInput {
    /// Measured goodput, bit/s (0 for request/response tests).
    pub goodput_bps: f64,
    /// Line rate of the link, bit/s, as given (`--line-rate`) or known (the lab).
    pub line_rate_bps: Option<f64>,
    /// Theoretical maximum goodput of the link, bit/s (see
    /// [`crate::link::theoretical_goodput`]).
    pub theoretical_bps: Option<f64>,
    /// The client's busiest core.
    pub client_core: Option<CoreLoad>,
    /// The server's busiest core.
    pub server_core: Option<CoreLoad>,
    /// Both ends ran on one host (loopback, the lab): their CPU figures are the
    /// same host's, so a busy core is named as the host's, not one end's.
    pub one_host: bool,
    /// The window set with `-w` (the request, bytes).
    pub window_bytes: Option<f64>,
    /// Round-trip time, ns.
    pub rtt_ns: Option<f64>,
    /// Share of the TCP senders' busy time limited by the receiver's window.
    pub rwnd_limited: Option<f64>,
    /// Share of the TCP senders' busy time limited by their socket buffer.
    pub sndbuf_limited: Option<f64>,
    /// Retransmitted segments over segments sent, percent (TCP).
    pub retransmit_pct: Option<f64>,
    /// Loss, percent (UDP).
    pub loss_pct: Option<f64>,
    /// Pacing rate the senders were held to, all flows, bit/s.
    pub paced_bps: Option<f64>,
    /// Request/response: transactions per second measured.
    pub transactions_per_sec: Option<f64>,
    /// Request/response: flows over the mean latency, the most one-at-a-time
    /// transactions can reach, per second.
    pub round_trip_bound: Option<f64>,
}

fn rate(v: f64) -> String {
    BitRate(v).to_string()
}

/// Names the bottleneck, with evidence and advice. See the module docs for the
/// rules.
pub fn diagnose(d: &DiagnosisInput) -> Diagnosis {
    let g = d.goodput_bps;
    let positive = |v: Option<f64>| v.filter(|v| v.is_finite() && *v > 0.0);
    let verdict = |b: Bottleneck, evidence: String, advice: String| Diagnosis {
        bottleneck: b,
        evidence,
        advice,
        candidates: Vec::new(),
    };
    let ceiling = positive(d.theoretical_bps).or(positive(d.line_rate_bps));
    let mut near: Vec<String> = Vec::new();

    if let (Some(line), Some(max)) = (positive(d.line_rate_bps), ceiling) {
        if g > ABOVE_LINE * max {
            return verdict(
                Bottleneck::LineRateBelowGoodput {
                    line_rate_bps: line,
                },
                format!(
                    "the measured goodput {} is above what a {} link can carry ({} after \
                     headers): the line rate given is wrong",
                    rate(g),
                    rate(line),
                    rate(max)
                ),
                format!(
                    "give the link's real rate with --line-rate (at least {})",
                    rate(g / max * line)
                ),
            );
        }
    }
    if let Some(max) = ceiling {
        if g >= LINK_SHARE * max {
            return verdict(
                Bottleneck::Link,
                format!(
                    "goodput {} is {:.1}% of the link's ceiling {} after header overhead",
                    rate(g),
                    100.0 * g / max,
                    rate(max)
                ),
                "nothing on the hosts raises it: a faster link, or a larger MTU (less header \
                 overhead per byte)"
                    .into(),
            );
        }
        if g >= NEAR * LINK_SHARE * max {
            near.push(Bottleneck::Link.name());
        }
    }
    if let Some(paced) = positive(d.paced_bps) {
        if g >= PACED_SHARE * paced {
            return verdict(
                Bottleneck::Application,
                format!(
                    "goodput {} reached {:.1}% of the pacing rate {}",
                    rate(g),
                    100.0 * g / paced,
                    rate(paced)
                ),
                "raise the pacing rate -b, or -b 0 for unlimited".into(),
            );
        }
    }
    let client = if d.one_host { "host" } else { "client" };
    let busiest = [(client, &d.client_core), ("server", &d.server_core)]
        .into_iter()
        .filter_map(|(side, c)| Some((side, c.as_ref()?)))
        .reduce(|a, b| if b.1.busy > a.1.busy { b } else { a });
    if let Some((side, c)) = busiest {
        if c.busy >= CPU_BUSY_PCT {
            let kind = c.kind();
            let core = c
                .core
                .map(|n| format!("core {n}"))
                .unwrap_or("a core".into());
            let split = if kind.is_some() {
                format!(
                    " (user {:.0}%, system {:.0}%, irq+softirq {:.0}%)",
                    c.user, c.sys, c.softirq
                )
            } else {
                String::new()
            };
            let advice = match kind {
                Some(CpuKind::Softirq) => {
                    "spread the receive work over cores: more streams (-P 2), or RPS \
                     (/sys/class/net/DEV/queues/rx-0/rps_cpus)"
                }
                Some(CpuKind::User) => {
                    "less work per byte in the application: larger messages (-l 128K)"
                }
                _ => {
                    "fewer system calls per byte: --io batch (or auto), larger messages \
                     (-l 128K), or more streams on more cores (-P 2)"
                }
            };
            return verdict(
                Bottleneck::Cpu {
                    side: side.into(),
                    core: c.core,
                    cpu: kind,
                },
                format!("{side} {core} was {:.1}% busy{split}", c.busy),
                advice.into(),
            );
        }
        if c.busy >= NEAR * CPU_BUSY_PCT {
            near.push(format!("CPU ({side} core {:.0}% busy)", c.busy));
        }
    }
    if let Some(share) = d.rwnd_limited.filter(|s| s.is_finite()) {
        if share >= LIMITED_SHARE {
            return verdict(
                Bottleneck::ReceiverWindow,
                format!(
                    "the receiver's advertised window held the sender {:.0}% of its busy time \
                     (TCP_INFO rwnd_limited)",
                    100.0 * share
                ),
                bdp_advice(
                    d,
                    "a larger receive buffer: -w, or raise net.ipv4.tcp_rmem's maximum \
                     (and net.core.rmem_max)",
                ),
            );
        }
        if share >= NEAR * LIMITED_SHARE {
            near.push(Bottleneck::ReceiverWindow.name());
        }
    }
    if let Some(share) = d.sndbuf_limited.filter(|s| s.is_finite()) {
        if share >= LIMITED_SHARE {
            return verdict(
                Bottleneck::SenderBuffer,
                format!(
                    "the sender's socket buffer held it {:.0}% of its busy time (TCP_INFO \
                     sndbuf_limited)",
                    100.0 * share
                ),
                bdp_advice(
                    d,
                    "a larger send buffer: -w, or raise net.ipv4.tcp_wmem's maximum (and \
                     net.core.wmem_max)",
                ),
            );
        }
        if share >= NEAR * LIMITED_SHARE {
            near.push(Bottleneck::SenderBuffer.name());
        }
    }
    if let (Some(w), Some(rtt)) = (positive(d.window_bytes), positive(d.rtt_ns)) {
        let window_rate = w * 8.0 / (rtt * 1e-9);
        if g >= WINDOW_SHARE * window_rate {
            return verdict(
                Bottleneck::Window,
                format!(
                    "goodput {} is {:.0}% of window/RTT = {} / {} = {}",
                    rate(g),
                    100.0 * g / window_rate,
                    Bytes(w as u64),
                    Nanos(rtt as u64),
                    rate(window_rate)
                ),
                bdp_advice(d, "a larger -w"),
            );
        }
    }
    let loss = d.loss_pct.or(d.retransmit_pct).filter(|l| l.is_finite());
    if let Some(l) = loss {
        if l > LOSS_PCT {
            let what = if d.loss_pct.is_some() {
                "of the datagrams were lost"
            } else {
                "of the segments were retransmitted"
            };
            return verdict(
                Bottleneck::Loss,
                format!("{l:.2}% {what}"),
                "find where packets are dropped (interface, qdisc and socket drop counters); \
                 with TCP, BBR (--congestion bbr) keeps more rate under random loss"
                    .into(),
            );
        }
        if l > NEAR * LOSS_PCT {
            near.push(Bottleneck::Loss.name());
        }
    }
    if let (Some(tps), Some(bound)) = (
        positive(d.transactions_per_sec),
        positive(d.round_trip_bound),
    ) {
        if tps >= RTT_SHARE * bound {
            return verdict(
                Bottleneck::RoundTrip,
                format!(
                    "{tps:.0} transactions/s is {:.0}% of flows / mean latency = {bound:.0}/s: \
                     one transaction at a time per flow",
                    100.0 * tps / bound
                ),
                "more transactions in flight: more flows (-P), or a lower latency path \
                 (--io busypoll, pinning with -A)"
                    .into(),
            );
        }
    }
    Diagnosis {
        bottleneck: Bottleneck::Unknown,
        evidence: "no rule's evidence holds".into(),
        advice: String::new(),
        candidates: near,
    }
}

/// The advice for a window, with the path's bandwidth-delay product when the line
/// rate and RTT are known.
fn bdp_advice(d: &DiagnosisInput, what: &str) -> String {
    match (d.line_rate_bps, d.rtt_ns) {
        (Some(r), Some(rtt)) if r > 0.0 && rtt > 0.0 => {
            let bdp = crate::link::bdp_bytes(r, rtt);
            format!(
                "{what}; the path's bandwidth-delay product is {} ({} x {})",
                Bytes(bdp as u64),
                rate(r),
                Nanos(rtt as u64)
            )
        }
        _ => what.into(),
    }
}

/// What a single test's report says, for [`diagnose`]. `line_rate_bps` is the
/// user's `--line-rate`; in the lab the link's own rate stands in when none is
/// given.
pub fn input_from_report(r: &TestReport, line_rate_bps: Option<f64>) -> DiagnosisInput {
    let spec = &r.spec;
    let (line, theoretical) = crate::link::path_ceiling(r, line_rate_bps);
    let directions = r.directions.len().max(1) as f64;
    let core = |side: &netsonde_model::result::SideResult| {
        let cpu = side.cpu.as_ref()?;
        let c = cpu
            .cores
            .iter()
            .max_by(|a, b| a.busy().0.total_cmp(&b.busy().0))?;
        Some(CoreLoad {
            core: c.core,
            busy: c.busy().0,
            user: c.user.0 + c.nice.0,
            sys: c.sys.0,
            softirq: c.irq.0 + c.softirq.0,
        })
    };
    // The TCP senders' TCP_INFO: how their busy time was limited, RTT, segments.
    let senders = crate::link::tcp_senders(r);
    let busy: u64 = senders.iter().map(|(_, t)| t.busy.0).sum();
    let share = |v: u64| (busy > 0).then(|| v as f64 / busy as f64);
    let rtt = (!senders.is_empty())
        .then(|| senders.iter().map(|(_, t)| t.srtt.0 as f64).sum::<f64>() / senders.len() as f64);
    let segments: f64 = senders
        .iter()
        .map(|(f, t)| f.bytes_total.0 as f64 / f64::from(t.mss.max(1)))
        .sum();
    let retrans: u64 = senders.iter().map(|(_, t)| t.retransmits).sum();
    let goodput: f64 = r.directions.iter().map(|d| d.goodput.bps()).sum();
    let loss = r
        .directions
        .iter()
        .filter_map(|d| d.loss.map(|l| l.0))
        .reduce(f64::max);
    let (tps, bound) = match &r.rr {
        Some(rr) if rr.latency.mean.0 > 0 => (
            Some(rr.transactions_per_sec),
            Some(f64::from(spec.parallel) / (rr.latency.mean.0 as f64 * 1e-9)),
        ),
        _ => (None, None),
    };
    let one_host = r.client.same_host(&r.server);
    DiagnosisInput {
        goodput_bps: goodput,
        line_rate_bps: line,
        theoretical_bps: theoretical,
        client_core: core(&r.client),
        // One host: one /proc/stat, read by both ends.
        server_core: if one_host { None } else { core(&r.server) },
        one_host,
        window_bytes: spec.window.map(|w| w.0 as f64),
        rtt_ns: rtt,
        rwnd_limited: share(senders.iter().map(|(_, t)| t.rwnd_limited.0).sum()),
        sndbuf_limited: share(senders.iter().map(|(_, t)| t.sndbuf_limited.0).sum()),
        retransmit_pct: (segments > 0.0).then(|| 100.0 * retrans as f64 / segments),
        loss_pct: loss,
        paced_bps: spec
            .rate
            .filter(|_| !spec.test.is_rr())
            .map(|r| r.bps() * f64::from(spec.parallel) * directions),
        transactions_per_sec: tps,
        round_trip_bound: bound,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 10 Gbit/s link, 1 ms RTT, quiet CPUs, no loss, and goodput far below every
    /// limit.
    fn base() -> DiagnosisInput {
        DiagnosisInput {
            goodput_bps: 2e9,
            line_rate_bps: Some(10e9),
            theoretical_bps: Some(9.415e9),
            client_core: Some(CoreLoad::busy(40.0)),
            server_core: Some(CoreLoad::busy(50.0)),
            rtt_ns: Some(1e6),
            rwnd_limited: Some(0.0),
            sndbuf_limited: Some(0.0),
            retransmit_pct: Some(0.0),
            ..DiagnosisInput::default()
        }
    }

    fn kind(d: &DiagnosisInput) -> Bottleneck {
        diagnose(d).bottleneck
    }

    #[test]
    fn nothing_applies() {
        assert_eq!(kind(&base()), Bottleneck::Unknown);
        assert_eq!(kind(&DiagnosisInput::default()), Bottleneck::Unknown);
    }

    /// The reported failure: "link-limited at 376% efficiency" with CPU warnings.
    #[test]
    fn a_line_rate_below_the_goodput_is_an_input_error() {
        let d = DiagnosisInput {
            goodput_bps: 35.4e9,
            client_core: Some(CoreLoad::busy(99.7)),
            ..base()
        };
        let v = diagnose(&d);
        assert!(matches!(
            v.bottleneck,
            Bottleneck::LineRateBelowGoodput { .. }
        ));
        assert!(v.evidence.contains("line rate given is wrong"), "{v}");
        assert!(v.advice.contains("--line-rate"), "{v}");
    }

    #[test]
    fn link() {
        let d = DiagnosisInput {
            goodput_bps: 9.3e9,
            // A saturated core does not matter once the link is full.
            client_core: Some(CoreLoad::busy(99.0)),
            ..base()
        };
        assert_eq!(kind(&d), Bottleneck::Link);
        let d = DiagnosisInput {
            theoretical_bps: None,
            goodput_bps: 9.1e9,
            ..base()
        };
        assert_eq!(kind(&d), Bottleneck::Link);
    }

    #[test]
    fn application() {
        let d = DiagnosisInput {
            goodput_bps: 0.98e9,
            paced_bps: Some(1e9),
            ..base()
        };
        assert_eq!(kind(&d), Bottleneck::Application);
        assert!(diagnose(&d).advice.contains("-b 0"));
    }

    #[test]
    fn cpu_names_the_side_core_and_kind() {
        let d = DiagnosisInput {
            server_core: Some(CoreLoad {
                core: Some(1),
                busy: 97.0,
                user: 5.0,
                sys: 30.0,
                softirq: 62.0,
            }),
            ..base()
        };
        let v = diagnose(&d);
        assert_eq!(
            v.bottleneck,
            Bottleneck::Cpu {
                side: "server".into(),
                core: Some(1),
                cpu: Some(CpuKind::Softirq)
            }
        );
        assert!(v.evidence.contains("server core 1 was 97.0% busy"), "{v}");
        assert!(v.advice.contains("RPS"), "{v}");
    }

    #[test]
    fn windows_are_told_apart_by_tcp_info() {
        let d = DiagnosisInput {
            rwnd_limited: Some(0.8),
            ..base()
        };
        assert_eq!(kind(&d), Bottleneck::ReceiverWindow);
        assert!(diagnose(&d)
            .advice
            .contains("bandwidth-delay product is 1.19 MiB"));
        let d = DiagnosisInput {
            sndbuf_limited: Some(0.6),
            ..base()
        };
        assert_eq!(kind(&d), Bottleneck::SenderBuffer);
        // 64 KiB over 20 ms is 26.2 Mbit/s.
        let d = DiagnosisInput {
            goodput_bps: 25e6,
            window_bytes: Some(65536.0),
            rtt_ns: Some(20e6),
            ..base()
        };
        assert_eq!(kind(&d), Bottleneck::Window);
    }

    #[test]
    fn loss() {
        let d = DiagnosisInput {
            retransmit_pct: Some(1.2),
            ..base()
        };
        assert_eq!(kind(&d), Bottleneck::Loss);
        let d = DiagnosisInput {
            loss_pct: Some(0.5),
            retransmit_pct: None,
            ..base()
        };
        assert!(diagnose(&d).evidence.contains("datagrams were lost"));
    }

    #[test]
    fn round_trip() {
        let d = DiagnosisInput {
            goodput_bps: 0.0,
            transactions_per_sec: Some(19_500.0),
            round_trip_bound: Some(20_000.0),
            ..base()
        };
        assert_eq!(kind(&d), Bottleneck::RoundTrip);
    }

    #[test]
    fn near_misses_are_candidates_not_verdicts() {
        let d = DiagnosisInput {
            goodput_bps: 7e9,
            client_core: Some(CoreLoad::busy(80.0)),
            ..base()
        };
        let v = diagnose(&d);
        assert_eq!(v.bottleneck, Bottleneck::Unknown);
        assert_eq!(v.candidates.len(), 2, "{v}");
    }
}
