//! Bottleneck diagnosis: [`diagnose`] reads what was measured about one test or
//! sweep point ([`DiagnosisInput`], built from a report by
//! [`crate::evidence::input_from_report`]) and names what limited it
//! ([`Bottleneck`]), with the evidence and one concrete piece of advice
//! ([`Diagnosis`]).
//!
//! A verdict is given only when its evidence holds; the rules are ordered and the
//! first that holds wins, because the earlier limits explain the later symptoms:
//!
//! 1. **input error**: the line rate the user gave is below the measured goodput
//!    (never "efficiency 376%");
//! 2. **link**: goodput at 90% or more of the link's ceiling after the header
//!    overhead of the frames actually sent (a clamped MSS or small UDP datagrams
//!    put more headers on the wire per byte);
//! 3. **NIC, link speed**: the interface negotiated a speed below the line rate
//!    given, or the goodput reached 90% of its speed (`ethtool`);
//! 4. **link overloaded**: a UDP sender offered more than the link's ceiling and
//!    lost more than 0.1%: the link dropped the rest;
//! 5. **application**: the sender was paced (`-b`) and reached 90% of that rate;
//! 6. **CPU, one thread**: a flow thread of either end (or a peer tool's
//!    single-threaded process) wanted a core 90% or more of the measured
//!    interval (it ran, waited for a core, or had its vCPU stolen): one
//!    thread is the limit even when the host has idle cores. Busy-polling threads
//!    spin by design and are left out;
//! 7. **NIC, interrupt core**: the core that took most of the NIC's interrupts
//!    was saturated, mostly in softirq;
//! 8. **receiver window**: TCP_INFO says the receiver's advertised window held the
//!    sender 30% of its busy time or more;
//! 9. **sender buffer**: the sender's socket buffer did (`sndbuf_limited`);
//! 10. **window**: a window was set (`-w`, `--rcv-window`) and goodput reached 80%
//!     of the *granted* window over the RTT (never more than 110% of it: a
//!     goodput above window/RTT means the window figure is not the one in force);
//! 11. **NIC, drops**: the NIC's receive ring or a core's backlog dropped packets
//!     and the test lost more than 0.1%: the drops are the loss's cause;
//! 12. **loss**: UDP loss over 0.1%, or TCP retransmitted over 0.1% of its
//!     segments *and* the goodput within reach of what that loss allows (within
//!     4x either way of the Mathis bound `MSS/RTT · 1.22/√p`); far below it,
//!     something else held the flow; far above it, its congestion control (BBR)
//!     did not back off on loss: either way loss was not the limit. A BBR flow
//!     is never held by loss under 20% ([`BBR_LOSS_PCT`]);
//! 13. **buffers together**: neither the sender's buffer nor the receiver's
//!     window held the sender 30% of its busy time, but the two together did
//!     (TCP_INFO's `sndbuf_limited` and `rwnd_limited` are exclusive states, so
//!     their sum is the share a buffer held it): a window verdict, naming both;
//! 14. **CPU, one core**: a core of either end at 90% busy or more, named with its
//!     side and whether user, system or softirq time filled it, when the test's
//!     share of that host's busy time is the majority; when it is not, **host
//!     busy with other work**, naming the processes that ran most, with the
//!     rules that came within reach as candidates. A busy core is circumstantial:
//!     the direct evidence above (TCP_INFO's limits, window/RTT, loss by Mathis,
//!     pacing) decides first, and only the test's own saturated thread (rule 6)
//!     comes before it;
//! 15. **round trip** (request/response tests): the transactions ran one at a time
//!     per flow at 90% of flows/latency or more;
//! 16. otherwise **no single bottleneck**, with the candidates that came within
//!     reach of their rule (70% of its threshold; every rule with a threshold
//!     names itself so).
//!
//! Every NIC finding the verdict does not rest on (an offload off, a cross-NUMA
//! placement, drops the test did not feel, softirq time squeezes) is one of its
//! caveats ([`Diagnosis::caveats`]).

pub use netsonde_model::diagnosis::{Bottleneck, BusyThread, CpuKind, Diagnosis};
use netsonde_model::nic::NicFinding;
use netsonde_model::units::{Bytes, Nanos};

/// Goodput within this share of the theoretical maximum is link-limited.
pub const LINK_SHARE: f64 = 0.90;

/// Goodput above the line rate's ceiling by more than this share is an input error.
pub const ABOVE_LINE: f64 = 1.02;

/// Goodput within this share of the pacing rate is application-limited.
pub const PACED_SHARE: f64 = 0.90;

/// A busiest core at or above this busy share, in percent, is CPU-limited.
pub const CPU_BUSY_PCT: f64 = 90.0;

/// A thread that wanted a core (ran, waited for one, or had its vCPU taken by
/// the hypervisor) at least this share of the measured interval, in percent, is
/// the limit: it had under a tenth of its time to do more. (On this project's
/// VM the default loopback sender measured 94-98% so counted, the rest spent
/// blocked for send-buffer space: a 95% bar called it no bottleneck one run in
/// two.)
pub const THREAD_BUSY_PCT: f64 = 90.0;

/// A share of the sender's busy time limited by a window, from which it is the
/// bottleneck.
pub const LIMITED_SHARE: f64 = 0.30;

/// Goodput within this share of window/RTT is window-limited.
pub const WINDOW_SHARE: f64 = 0.80;

/// Goodput above window/RTT by more than this share means the window figure is
/// not the one in force: the window rule does not apply.
pub const WINDOW_ABOVE: f64 = 1.10;

/// Loss above this, in percent, is loss-limited (UDP loss, or TCP retransmitted
/// segments over segments sent).
pub const LOSS_PCT: f64 = 0.1;

/// Loss below this, in percent, does not hold a BBR flow back: BBR paces at
/// the bandwidth and round trip it measures, and Linux's BBR takes loss for a
/// policer only from 20% (`lt_loss_thresh`, 50/256). Below it, loss is a
/// candidate, never the verdict (a busy CI run called a CPU-bound sender's
/// 0.13% of drops at a full backlog "loss").
pub const BBR_LOSS_PCT: f64 = 20.0;

/// TCP goodput below this share of the Mathis bound, or above its inverse, was
/// not held down by loss.
pub const MATHIS_SHARE: f64 = 0.25;

/// Transactions per second within this share of flows/latency are round-trip
/// bound.
pub const RTT_SHARE: f64 = 0.90;

/// A busy core names the test only when the test's share of its host's busy
/// time is at least this, in percent (the majority); below it, the host was
/// busy with other work.
pub const MAJORITY_PCT: f64 = 50.0;

/// Within this share of a rule's threshold, the rule is a candidate.
pub const NEAR: f64 = 0.70;

use crate::advice::{offer, Part, Try};
use crate::diagnosis_input::rate;
pub use crate::diagnosis_input::{
    CoreLoad, DiagnosisInput, PeerProcess, SideFinding, SideQuota, ThreadLoad, STEAL_PCT,
};
use netsonde_model::spec::IoStrategy;

fn verdict(b: Bottleneck, evidence: String, advice: impl Into<String>) -> Diagnosis {
    Diagnosis {
        bottleneck: b,
        evidence,
        advice: advice.into(),
        candidates: Vec::new(),
        caveats: Vec::new(),
    }
}

fn positive(v: Option<f64>) -> Option<f64> {
    v.filter(|v| v.is_finite() && *v > 0.0)
}

/// One rule: a verdict when its evidence holds; a candidate's name in `near`
/// when it came within reach.
type Rule = fn(&DiagnosisInput, &mut Vec<String>) -> Option<Diagnosis>;

/// The rules in order: the first that holds wins.
const RULES: [Rule; 19] = [
    input_error,
    link,
    nic_link_speed,
    link_overload,
    application,
    busy_thread,
    nic_irq_core,
    buffers::receiver_window,
    buffers::sender_buffer,
    buffers::window,
    nic_drops,
    loss,
    buffers::buffers_together,
    host::cpu_quota,
    host::own_threads,
    host::busy_core,
    round_trip,
    host::starved_thread,
    host::host_busy,
];

/// Names the bottleneck, with evidence and advice. See the module docs for the
/// rules. The NIC findings the verdict does not rest on are its caveats.
pub fn diagnose(d: &DiagnosisInput) -> Diagnosis {
    let mut near: Vec<String> = Vec::new();
    let mut v = RULES
        .iter()
        .find_map(|rule| rule(d, &mut near))
        .unwrap_or_else(|| Diagnosis {
            bottleneck: Bottleneck::Unknown,
            evidence: "no rule's evidence holds".into(),
            advice: String::new(),
            candidates: near,
            caveats: Vec::new(),
        });
    let used = match &v.bottleneck {
        Bottleneck::Nic { finding, .. } => Some(finding.clone()),
        _ => None,
    };
    v.caveats = d
        .nic
        .iter()
        .filter(|s| Some(&s.finding) != used.as_ref())
        .map(|s| format!("{}: {} (try: {})", s.side, s.finding, s.finding.advice()))
        .collect();
    if let Some(st) = d.steal_pct.filter(|s| *s >= STEAL_PCT) {
        v.caveats.push(format!(
            "the hypervisor took {st:.1}% of the vCPUs' time (steal): a VM's figures move \
             with its neighbours' load; repeat the test, or compare within one run"
        ));
    }
    if let Some(p) = d.spurious_pct.filter(|p| *p > LOSS_PCT) {
        v.caveats.push(format!(
            "{p:.2}% of the segments were retransmitted needlessly: the receiver reported \
             them as duplicates (DSACK), so they were reordered or delayed, not lost (on \
             loopback and veth, a sender that moved between cores); they are not counted as \
             loss"
        ));
    }
    v
}

/// The first NIC finding `pick` accepts, as the verdict.
fn nic_verdict(d: &DiagnosisInput, pick: fn(&NicFinding) -> bool) -> Option<Diagnosis> {
    let s = d.nic.iter().find(|s| pick(&s.finding))?;
    Some(verdict(
        Bottleneck::Nic {
            side: s.side.clone(),
            finding: s.finding.clone(),
        },
        s.finding.to_string(),
        s.finding.advice(),
    ))
}

/// The link negotiated a speed below the line rate given, or the goodput
/// reached it.
fn nic_link_speed(d: &DiagnosisInput, _: &mut Vec<String>) -> Option<Diagnosis> {
    nic_verdict(d, |f| {
        matches!(f, NicFinding::LinkSpeedBelowLineRate { .. })
    })
}

/// The core that took most of the NIC's interrupts was saturated in softirq:
/// named before the busy-core rule, which would say only "softirq".
fn nic_irq_core(d: &DiagnosisInput, _: &mut Vec<String>) -> Option<Diagnosis> {
    nic_verdict(d, |f| matches!(f, NicFinding::IrqCoreSaturated { .. }))
}

/// The NIC or a core's backlog dropped packets and the test lost them (TCP
/// retransmitted, or UDP lost, over [`LOSS_PCT`]): the drops are the loss's
/// cause. Drops the test did not feel are caveats.
fn nic_drops(d: &DiagnosisInput, _: &mut Vec<String>) -> Option<Diagnosis> {
    let lost = d
        .retransmit_pct
        .into_iter()
        .chain(d.loss_pct)
        .any(|p| p > LOSS_PCT);
    if !lost {
        return None;
    }
    nic_verdict(d, |f| {
        matches!(
            f,
            NicFinding::NicRingDrops { .. } | NicFinding::SoftnetDrops { .. }
        )
    })
}

fn ceiling(d: &DiagnosisInput) -> Option<f64> {
    positive(d.theoretical_bps).or(positive(d.line_rate_bps))
}

fn input_error(d: &DiagnosisInput, _: &mut Vec<String>) -> Option<Diagnosis> {
    let (line, max) = (positive(d.line_rate_bps)?, ceiling(d)?);
    let g = d.goodput_bps;
    (g > ABOVE_LINE * max).then(|| {
        verdict(
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
        )
    })
}

fn segment_note(d: &DiagnosisInput) -> String {
    match positive(d.segment_bytes) {
        Some(s) => format!(" for segments of {} of payload", Bytes(s as u64)),
        None => String::new(),
    }
}

fn link(d: &DiagnosisInput, near: &mut Vec<String>) -> Option<Diagnosis> {
    let max = ceiling(d)?;
    let g = d.goodput_bps;
    if g >= LINK_SHARE * max {
        // Above the ceiling (and under the input-error bound): a shaper's burst,
        // or its overhead charged once per GSO packet, let a little more through
        // within one test. Said in the verdict line itself.
        let above = if g > max {
            "; above 100%: the shaper's burst, and an overhead charged once per GSO packet, \
             let up to 2% more through within one test: quote the link's rate"
        } else {
            ""
        };
        return Some(verdict(
            Bottleneck::Link,
            format!(
                "goodput {} is {:.1}% of the link's ceiling {} after header overhead{}{above}",
                rate(g),
                100.0 * g / max,
                rate(max),
                segment_note(d)
            ),
            "nothing on the hosts raises it: a faster link, or larger frames (a larger MTU, \
             an unclamped MSS, larger datagrams: less header overhead per byte)",
        ));
    }
    if g >= NEAR * LINK_SHARE * max {
        near.push(Bottleneck::Link.name());
    }
    None
}

fn link_overload(d: &DiagnosisInput, _: &mut Vec<String>) -> Option<Diagnosis> {
    let (offered, max) = (positive(d.offered_bps)?, ceiling(d)?);
    let loss = d.loss_pct.filter(|l| *l > LOSS_PCT)?;
    (offered > ABOVE_LINE * max).then(|| {
        verdict(
            Bottleneck::LinkOverload {
                offered_bps: offered,
                ceiling_bps: max,
            },
            format!(
                "the senders offered {} into a link that carries {} of such datagrams: {:.2}% \
                 were lost to the link, not to the hosts",
                rate(offered),
                rate(max),
                loss
            ),
            format!(
                "pace the senders below the link's ceiling (-b, at most {} in all)",
                rate(max)
            ),
        )
    })
}

fn application(d: &DiagnosisInput, near: &mut Vec<String>) -> Option<Diagnosis> {
    let paced = positive(d.paced_bps)?;
    let g = d.goodput_bps;
    if (NEAR * PACED_SHARE * paced..PACED_SHARE * paced).contains(&g) {
        near.push(Bottleneck::Application.name());
    }
    (g >= PACED_SHARE * paced).then(|| {
        verdict(
            Bottleneck::Application,
            format!(
                "goodput {} reached {:.1}% of the pacing rate {}",
                rate(g),
                100.0 * g / paced,
                rate(paced)
            ),
            "raise the pacing rate -b, or -b 0 for unlimited",
        )
    })
}

fn busy_thread(d: &DiagnosisInput, near: &mut Vec<String>) -> Option<Diagnosis> {
    // A thread is the limit by the time it ran, never by what it waited for a
    // core (that is other work's, or a quota's: `host`).
    let mut busy: Vec<&ThreadLoad> = d.threads.iter().filter(|t| !t.spins).collect();
    busy.sort_by(|a, b| b.ran().total_cmp(&a.ran()));
    if let Some(t) = busy.first().filter(|t| t.ran() >= THREAD_BUSY_PCT) {
        let also: Vec<String> = busy[1..]
            .iter()
            .filter(|o| o.ran() >= THREAD_BUSY_PCT)
            .map(|o| format!("{} flow thread {:?} at {:.1}%", o.side, o.flows, o.ran()))
            .collect();
        return Some(thread_verdict(t, &also, d.datagrams, d.spec.as_ref()));
    }
    if let Some(p) = d
        .peer_process
        .as_ref()
        .filter(|p| p.demand() >= THREAD_BUSY_PCT * f64::from(p.threads.max(1)))
    {
        return Some(peer_verdict(p));
    }
    if let Some(t) = busy.first().filter(|t| t.ran() >= NEAR * THREAD_BUSY_PCT) {
        near.push(format!("CPU ({} flow thread {:.0}% busy)", t.side, t.ran()));
    }
    None
}

fn peer_verdict(p: &PeerProcess) -> Diagnosis {
    let kind = if p.user > p.sys {
        CpuKind::User
    } else {
        CpuKind::System
    };
    verdict(
        Bottleneck::Cpu {
            side: p.side.clone(),
            core: None,
            cpu: Some(kind),
            thread: Some(BusyThread {
                what: format!("{} process", p.tool),
                flows: Vec::new(),
                busy: p.busy,
            }),
        },
        format!(
            "the {} {} process ran {:.1}% of one core (user {:.0}%, system {:.0}%, as it \
             reported), on {} thread(s){}",
            p.side,
            p.tool,
            p.busy,
            p.user,
            p.sys,
            p.threads,
            match p.stolen {
                Some(st) if st >= 1.0 => format!(
                    "; the hypervisor took about {st:.1}% more from it (steal time on this host)"
                ),
                _ => String::new(),
            }
        ),
        format!(
            "{} before 3.16 runs every stream on one thread: against `netsonde server` each \
             flow has a thread of its own; with {} 3.16 or later, more streams (-P)",
            p.tool, p.tool
        ),
    )
}

/// The most a loss-based TCP flow gets at loss `p` (a fraction): Mathis et al.,
/// `MSS/RTT · 1.22/√p`, bit/s.
pub fn mathis_bound(segment_bytes: f64, rtt_ns: f64, p: f64) -> f64 {
    segment_bytes * 8.0 / (rtt_ns * 1e-9) * 1.22 / p.sqrt()
}

fn loss(d: &DiagnosisInput, near: &mut Vec<String>) -> Option<Diagnosis> {
    let l = d.loss_pct.or(d.retransmit_pct).filter(|l| l.is_finite())?;
    if l <= LOSS_PCT {
        if l > NEAR * LOSS_PCT {
            near.push(Bottleneck::Loss.name());
        }
        return None;
    }
    if d.loss_pct.is_some() {
        return Some(verdict(
            Bottleneck::Loss,
            format!("{l:.2}% of the datagrams were lost"),
            "find where packets are dropped (interface, qdisc and socket drop counters)",
        ));
    }
    if d.congestion.as_deref() == Some("bbr") && l < BBR_LOSS_PCT {
        near.push(format!(
            "loss ({l:.2}% retransmitted; BBR paces at the bandwidth it measures and does \
             not back off on loss below {BBR_LOSS_PCT:.0}%)"
        ));
        return None;
    }
    let bound = match (positive(d.segment_bytes), positive(d.rtt_ns)) {
        (Some(s), Some(rtt)) => Some(mathis_bound(s, rtt, l / 100.0)),
        _ => None,
    };
    let outside = |b: &f64| {
        let share = d.goodput_bps / b;
        !(MATHIS_SHARE..=1.0 / MATHIS_SHARE).contains(&share)
    };
    if let Some(b) = bound.filter(outside) {
        let why = if d.goodput_bps < b {
            "far below what that loss allows: something else held it"
        } else {
            "far above what that loss allows a loss-based flow: its congestion control did \
             not back off on it"
        };
        near.push(format!(
            "loss ({l:.2}% retransmitted; the goodput is {:.1}% of the {} that loss allows, \
             {why})",
            100.0 * d.goodput_bps / b,
            rate(b)
        ));
        return None;
    }
    let mathis = bound
        .map(|b| format!("; that loss allows about {} (Mathis)", rate(b)))
        .unwrap_or_default();
    Some(verdict(
        Bottleneck::Loss,
        format!("{l:.2}% of the segments were retransmitted{mathis}"),
        offer(
            d.spec.as_ref(),
            "find where packets are dropped (interface, qdisc and socket drop counters)",
            &[(
                "BBR ({}) keeps more rate under random loss",
                Try::Congestion("bbr"),
            )],
            "find where packets are dropped (interface, qdisc and socket drop counters)",
        )
        .replacen(": BBR", "; BBR", 1),
    ))
}

fn round_trip(d: &DiagnosisInput, near: &mut Vec<String>) -> Option<Diagnosis> {
    let (tps, bound) = (
        positive(d.transactions_per_sec)?,
        positive(d.round_trip_bound)?,
    );
    if (NEAR * RTT_SHARE * bound..RTT_SHARE * bound).contains(&tps) {
        near.push(Bottleneck::RoundTrip.name());
    }
    let advice = round_trip_advice(d);
    (tps >= RTT_SHARE * bound).then(|| {
        verdict(
            Bottleneck::RoundTrip,
            format!(
                "{tps:.0} transactions/s is {:.0}% of flows / mean latency = {bound:.0}/s: \
                 one transaction at a time per flow",
                100.0 * tps / bound
            ),
            advice,
        )
    })
}

/// What to try when one transaction at a time per flow is the limit. TLS and
/// QUIC read and write through their own libraries: busy-polling the socket
/// is not theirs to try. A handshake per transaction (tls-crr, quic-crr) is
/// said with what its public-key operations took, timed.
fn round_trip_advice(d: &DiagnosisInput) -> String {
    let spec = d.spec.as_ref();
    let more = |extra: &[Part]| {
        let mut parts: Vec<Part> = vec![
            ("more flows ({})", Try::MoreStreams),
            ("pinning ({})", Try::Pin),
        ];
        parts.extend_from_slice(extra);
        offer(
            spec,
            "more transactions in flight",
            &parts,
            "a lower latency path: the flows and pinning asked are in place",
        )
    };
    let shakes = d
        .threads
        .iter()
        .filter_map(|t| Some((t, t.handshakes?)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    if let Some((t, h)) = shakes {
        let resume = if spec.is_none_or(|s| Try::TlsResume.runnable(s)) {
            "; --tls-resume resumes sessions"
        } else {
            ""
        };
        format!(
            "{}; each transaction is also a handshake at both ends: its key exchange and \
             signature took {h:.0}% of the interval on the {} {}'s thread (timed; the thread \
             was busy {:.0}%){resume}, and tcp-crr on the same path shows what the handshake \
             adds",
            more(&[]),
            t.side,
            t.role,
            t.busy
        )
    } else if d.threads.iter().any(|t| t.encrypts) {
        format!(
            "{}; each transaction also seals and opens a record at both ends (tcp-rr on \
             the same path shows what TLS adds)",
            more(&[])
        )
    } else if d.threads.iter().any(|t| t.quic) {
        format!(
            "{}; each transaction also crosses QUIC's user-space stack at both ends \
             (tcp-rr on the same path shows the kernel's)",
            more(&[])
        )
    } else {
        more(&[("a lower latency path ({})", Try::Io(IoStrategy::Busypoll))])
    }
}

/// The advice for a window, with the path's bandwidth-delay product (the line
/// rate times the base RTT, as RFC 6349 defines it) when both are known.
fn bdp_advice(d: &DiagnosisInput, what: &str) -> String {
    let rtt = positive(d.base_rtt_ns).or(positive(d.rtt_ns));
    match (positive(d.line_rate_bps), rtt) {
        (Some(r), Some(rtt)) => {
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

#[path = "diagnose_thread.rs"]
mod thread;

#[path = "diagnose_host.rs"]
mod host;

#[path = "diagnose_buffers.rs"]
mod buffers;
pub use host::THROTTLED_PCT;
use thread::thread_verdict;

#[cfg(test)]
#[path = "diagnose_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "diagnose_spent_tests.rs"]
mod spent_tests;

#[cfg(test)]
#[path = "diagnose_buffers_tests.rs"]
mod buffers_tests;
