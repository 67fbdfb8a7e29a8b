//! 001: DSNIC, a PCI adapter for DS-link networks.

use netsonde_model::sweep::Metric;

use crate::{
    change, fmt, median, pct, points, rate, Analysis, Data, Finding, PartDef, PartKind, StudyDef,
    ThenNow, Verdict,
};

pub(crate) const DEF: StudyDef = StudyDef {
    id: "001",
    slug: "dsnic",
    title: "DSNIC: throughput share of the maximum, 1-byte latency, CPU load, interrupt against poll",
    seed: "001_00ac1a174c9c56b7.txt",
    summary: "The seed reported uni- and bidirectional process-to-process throughput as a share of the link's theoretical maximum (90%), a 1-byte message latency (67 µs), the CPU load of a 4096-byte stream (7%, 19% both ways), and the cost of handling a packet by interrupt against polling (32.5 µs against 11.5 µs). Here the link is the lab's, shaped to 100 Mbit/s; the latency is a 1-byte TCP ping-pong between two pinned cores, blocking (woken by the kernel) against busy-polling.",
    parts: &[
        PartDef {
            name: "share",
            what: "4 KiB TCP stream over a 100 Mbit/s link, one way and both ways, with CPU",
            lab: true,
            kind: PartKind::Sweep {
                file: include_str!("../experiments/s001-share.toml"),
                quick: include_str!("../experiments/s001-share-quick.toml"),
                figures: &[],
            },
        },
        PartDef {
            name: "latency",
            what: "1-byte TCP ping-pong, client on core 0 and server on core 1, blocking (copy) against busy-polling",
            lab: false,
            kind: PartKind::Sweep {
                file: include_str!("../experiments/s001-latency.toml"),
                quick: include_str!("../experiments/s001-latency-quick.toml"),
                figures: &["latency-cdf"],
            },
        },
    ],
    buffers: None,
    analyse,
};

fn analyse(d: &Data) -> Analysis {
    let mut a = Analysis::default();
    efficiency(d, &mut a);
    cpu_cost(d, &mut a);
    latency(d, &mut a);
    a
}

/// Shares of the theoretical maximum.
fn efficiency(d: &Data, a: &mut Analysis) {
    let share = d.sweeps.get("share");
    let eff = |dir: &str| -> Option<(f64, f64, f64)> {
        let s = share?;
        let p = *points(s, &[("direction", dir)]).first()?;
        let th = s.efficiency.iter().find(|e| e.idx == p.idx)?.theoretical?;
        let (o, i) = (
            p.median(Metric::GoodputOut.name())
                .or(p.median(Metric::Goodput.name()))?,
            p.median(Metric::GoodputIn.name()).unwrap_or(0.0),
        );
        Some((o, i, th))
    };
    // A bidirectional point's ceiling counts both directions: each has half.
    let uni = eff("out").map(|(o, _, th)| (o, o / th));
    let bi = eff("bidir").map(|(o, i, th)| (o + i, o.min(i) / (th / 2.0)));
    a.then_now.push(ThenNow {
        quantity: "unidirectional throughput, share of the maximum".into(),
        then: "8.3 MB/s (66 Mbit/s), 90%".into(),
        now: uni.map_or("-".into(), |(g, s)| {
            format!("{} of a 100 Mbit/s link, {}", rate(Some(g)), pct(s))
        }),
    });
    a.then_now.push(ThenNow {
        quantity: "bidirectional throughput (both ways summed), share of the maximum".into(),
        then: "16.6 MB/s (133 Mbit/s), 90%".into(),
        now: bi.map_or("-".into(), |(g, s)| {
            format!("{}, {} each way (the slower)", rate(Some(g)), pct(s))
        }),
    });
    let claim = "Up to 90% of the theoretical maximum is exploited, one way and both ways";
    let criterion = "goodput at least 85% of the link's ceiling after headers one way and, both ways, in the slower direction; in part if only one way";
    a.findings.push(match (uni, bi) {
        (Some((_, u)), Some((_, b))) => Finding {
            claim: claim.into(),
            criterion: criterion.into(),
            evidence: format!(
                "one way {}, both ways {} (slower direction)",
                pct(u),
                pct(b)
            ),
            verdict: if u >= 0.85 && b >= 0.85 {
                Verdict::Holds
            } else if u >= 0.85 || b >= 0.85 {
                Verdict::Partly
            } else {
                Verdict::DoesNotHold
            },
        },
        _ => Finding::not_measured(claim, criterion, "the lab part did not run"),
    });
}

/// CPU at 4 KiB.
fn cpu_cost(d: &Data, a: &mut Analysis) {
    let share = d.sweeps.get("share");
    let busy =
        |dir: &str| share.and_then(|s| median(s, &[("direction", dir)], Metric::ClientBusyCores));
    let cores = share
        .and_then(|s| s.run.client_host.as_ref())
        .map(|h| f64::from(h.cores.max(1)));
    let host_share = |dir: &str| Some(busy(dir)? / cores?);
    a.then_now.push(ThenNow {
        quantity: "CPU load of a 4 KB stream, one way / both ways".into(),
        then: "7% / 19% (the receiving host)".into(),
        now: format!(
            "{} / {} of the host (both ends on it)",
            host_share("out").map_or("-".into(), pct),
            host_share("bidir").map_or("-".into(), pct)
        ),
    });
    let claim = "A 4 KB stream at the link's rate costs little CPU (7%)";
    let criterion = "the host's busy share, both ends together, at most 14% (twice the seed's, since both ends share this host)";
    a.findings.push(match host_share("out") {
        Some(s) => Finding {
            claim: claim.into(),
            criterion: criterion.into(),
            evidence: format!(
                "{} of the host ({} busy of {})",
                pct(s),
                fmt(Metric::ClientBusyCores, busy("out")),
                cores.unwrap_or(0.0)
            ),
            verdict: if s <= 0.14 {
                Verdict::Holds
            } else {
                Verdict::DoesNotHold
            },
        },
        None => Finding::not_measured(claim, criterion, "the lab part did not run"),
    });
    let claim = "Both ways at once cost more CPU than one way (19% against 7%)";
    let criterion = "busy cores both ways at least 1.2 times one way's";
    a.findings.push(match (busy("out"), busy("bidir")) {
        (Some(u), Some(b)) if u > 0.0 => Finding {
            claim: claim.into(),
            criterion: criterion.into(),
            evidence: format!(
                "{} against {}: {}",
                fmt(Metric::ClientBusyCores, Some(b)),
                fmt(Metric::ClientBusyCores, Some(u)),
                change(b / u)
            ),
            verdict: if b >= 1.2 * u {
                Verdict::Holds
            } else {
                Verdict::DoesNotHold
            },
        },
        _ => Finding::not_measured(claim, criterion, "the lab part did not run"),
    });
}

/// Latency, interrupt against poll.
fn latency(d: &Data, a: &mut Analysis) {
    let lat = |io: &str| {
        d.sweeps
            .get("latency")
            .and_then(|s| median(s, &[("io", io)], Metric::LatencyP50))
            .map(|ns| ns / 2.0)
    };
    let (blocking, polled) = (lat("copy"), lat("busypoll"));
    a.then_now.push(ThenNow {
        quantity: "1-byte message latency (one way, process to process)".into(),
        then: "67 µs".into(),
        now: format!(
            "{} blocking, {} busy-polling (half the round trip, median; cores 0 and 1)",
            fmt(Metric::LatencyP50, blocking),
            fmt(Metric::LatencyP50, polled)
        ),
    });
    a.then_now.push(ThenNow {
        quantity: "a packet handled by interrupt against by polling".into(),
        then: "32.5 µs against 11.5 µs (interrupt overhead 65%)".into(),
        now: match (blocking, polled) {
            (Some(b), Some(p)) if b > 0.0 => format!(
                "{} against {} (blocking's overhead {})",
                fmt(Metric::LatencyP50, Some(b)),
                fmt(Metric::LatencyP50, Some(p)),
                pct(1.0 - p / b)
            ),
            _ => "-".into(),
        },
    });
    let claim = "Handling a message by interrupt costs more than polling for it (65% overhead)";
    let criterion =
        "busy-polling's one-way latency at least 20% below blocking's; in part if 5-20% below";
    a.findings.push(match (blocking, polled) {
        (Some(b), Some(p)) if b > 0.0 => {
            let saved = 1.0 - p / b;
            Finding {
                claim: claim.into(),
                criterion: criterion.into(),
                evidence: format!("polling saves {} of the one-way latency", pct(saved)),
                verdict: if saved >= 0.2 {
                    Verdict::Holds
                } else if saved > 0.05 {
                    Verdict::Partly
                } else {
                    Verdict::DoesNotHold
                },
            }
        }
        _ => Finding::not_measured(claim, criterion, "the latency part did not run"),
    });
    a.findings.push(Finding::not_measured(
        "Protocol offload frees up to 53% of the CPU at 1 KB packets",
        "an offloading adapter against the host stack",
        "this host has no protocol-offloading adapter to compare (a virtual NIC and veth)",
    ));
    a.caveats.push("A vCPU woken from idle costs about 100 µs on this kind of VM, so the blocking latency is dominated by wake-ups; busy-polling keeps both cores awake (and busy) instead.".into());
}
