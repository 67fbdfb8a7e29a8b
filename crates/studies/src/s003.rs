//! 003: Gigabit NICs across a long-distance research network (KISTI).

use netsonde_model::sweep::Metric;
use netsonde_model::units::Bytes;
use netsonde_report::tables::Table;

use crate::{
    axis, fmt, pct, points, rate, Analysis, Data, Finding, PartDef, PartKind, StudyDef, ThenNow,
    Verdict,
};

/// The link: 1 Gbit/s, 228 ms round trip.
const RATE: f64 = 1e9;
const RTT: f64 = 0.228;

pub(crate) const DEF: StudyDef = StudyDef {
    id: "003",
    slug: "kisti-lfn",
    title: "Gigabit NICs over a long fat network (1 Gbit/s, 228 ms): MTU and window sweeps, dual tests",
    seed: "003_8b7da651ae92140a.txt",
    summary: "The seed ran memory-to-memory TCP and UDP (iperf 2) between 1 Gbit/s NICs 228 ms apart, swept MTU 1500 to 9000 and windows 64 KB to 256 MB, ran dual (both ways) tests, and tabled each NIC's best throughput with the MTU and window that reached it (about 780-800 Mbit/s, MTU 9000, 256 MB windows). It states a bandwidth-delay product of 14.3 MB. Here the path is the lab's: 1 Gbit/s and 114 ms each way through the userspace link emulator (this kernel has no netem); the bus type, which the seed varied, is not a variable on one host.",
    parts: &[
        PartDef {
            name: "windows",
            what: "TCP throughput against the window, 64 KiB to 256 MiB, at MTU 1500 and 9000",
            lab: true,
            kind: PartKind::Sweep {
                file: include_str!("../experiments/s003-windows.toml"),
                quick: include_str!("../experiments/s003-windows-quick.toml"),
                figures: &["throughput-window"],
            },
        },
        PartDef {
            name: "mtus",
            what: "TCP throughput at MTU 1500, 3000, 4500 and 9000 with a 256 MiB window",
            lab: true,
            kind: PartKind::Sweep {
                file: include_str!("../experiments/s003-mtus.toml"),
                quick: include_str!("../experiments/s003-mtus-quick.toml"),
                figures: &[],
            },
        },
        PartDef {
            name: "udp",
            what: "UDP throughput at each MTU, 1400-byte datagrams paced at 960 Mbit/s",
            lab: true,
            kind: PartKind::Sweep {
                file: include_str!("../experiments/s003-udp.toml"),
                quick: include_str!("../experiments/s003-udp-quick.toml"),
                figures: &[],
            },
        },
        PartDef {
            name: "dual",
            what: "dual tests: TCP both ways at once, MTU 9000, two windows",
            lab: true,
            kind: PartKind::Sweep {
                file: include_str!("../experiments/s003-dual.toml"),
                quick: include_str!("../experiments/s003-dual-quick.toml"),
                figures: &[],
            },
        },
    ],
    buffers: Some(256 << 20),
    analyse,
};

/// A TCP one-way point: (MTU, window, goodput, srtt).
type TcpPoint = (f64, f64, f64, Option<f64>);

fn analyse(d: &Data) -> Analysis {
    let mut a = Analysis::default();
    let (tcp, mut impossible, dropped) = tcp_points(d);
    let best = tcp.iter().copied().max_by(|x, y| x.2.total_cmp(&y.2));
    best_per_mtu(&mut a, &tcp, best);
    window_over_rtt(&mut a, &tcp);
    let measured_rtt = bdp(&mut a, best);
    largest_mtu_and_window(&mut a, &tcp, &dropped, best);
    udp(d, &mut a);
    dual(d, &mut a, &mut impossible);
    caveats(d, &mut a, &impossible, measured_rtt);
    a
}

/// Every TCP one-way point of the window and MTU parts, (mtu, window, goodput,
/// srtt), and the points left out as physically impossible: as text, and as
/// (mtu, window).
fn tcp_points(d: &Data) -> (Vec<TcpPoint>, Vec<String>, Vec<(f64, f64)>) {
    let mut tcp: Vec<TcpPoint> = Vec::new();
    let mut impossible = Vec::new();
    let mut dropped = Vec::new();
    for part in ["windows", "mtus"] {
        if let Some(s) = d.sweeps.get(part) {
            for p in points(s, &[]) {
                if let (Some(m), Some(w), Some(g)) = (
                    axis(p, "mtu"),
                    axis(p, "window"),
                    p.median(Metric::Goodput.name()),
                ) {
                    let ceiling = s
                        .efficiency
                        .iter()
                        .find(|e| e.idx == p.idx)
                        .and_then(|e| e.theoretical);
                    if let Some(c) = ceiling.filter(|c| g > *c) {
                        impossible.push(format!(
                            "{part}: MTU {m}, {} window, {} over a ceiling of {}",
                            Bytes(w as u64),
                            rate(Some(g)),
                            rate(Some(c))
                        ));
                        dropped.push((m, w));
                        continue;
                    }
                    tcp.push((m, w, g, p.median(Metric::Srtt.name())));
                }
            }
        }
    }
    (tcp, impossible, dropped)
}

/// The best per configuration.
fn best_per_mtu(a: &mut Analysis, tcp: &[TcpPoint], best: Option<TcpPoint>) {
    let mut table = Table {
        title: "Best TCP throughput per MTU, with the window that reached it".into(),
        note: "The seed's table gave each NIC's best (all at MTU 9000 and 256 MB windows, 778-800 Mbit/s); here the NIC is the same for every row, so the rows are MTUs.".into(),
        headers: ["MTU", "best goodput", "window", "share of 1 Gbit/s"].map(String::from).to_vec(),
        rows: vec![],
    };
    let mut mtus: Vec<f64> = tcp.iter().map(|t| t.0).collect();
    mtus.sort_by(f64::total_cmp);
    mtus.dedup();
    for m in &mtus {
        if let Some(b) = tcp
            .iter()
            .filter(|t| t.0 == *m)
            .max_by(|x, y| x.2.total_cmp(&y.2))
        {
            table.rows.push(vec![
                format!("{m}"),
                rate(Some(b.2)),
                Bytes(b.1 as u64).to_string(),
                pct(b.2 / RATE),
            ]);
        }
    }
    if !table.rows.is_empty() {
        a.tables.push(table);
    }
    a.then_now.push(ThenNow {
        quantity: "best TCP throughput, with its MTU and window".into(),
        then: "778-800 Mbit/s at MTU 9000, 256 MB windows".into(),
        now: best.map_or("-".into(), |b| {
            format!(
                "{} at MTU {}, {} window",
                rate(Some(b.2)),
                b.0,
                Bytes(b.1 as u64)
            )
        }),
    });
}

/// Throughput follows window / RTT below the BDP.
fn window_over_rtt(a: &mut Analysis, tcp: &[TcpPoint]) {
    let claim = "Below the bandwidth-delay product, throughput is the window over the round trip";
    let criterion = "at the smallest window, goodput within 35% of window / 228 ms (Linux grants twice the request and advertises part of it, so a factor near 1-2 is expected)";
    let small = tcp
        .iter()
        .copied()
        .filter(|t| t.0 == 1500.0 || t.0 == 9000.0)
        .min_by(|x, y| x.1.total_cmp(&y.1));
    a.findings.push(match small {
        Some((_, w, g, _)) => {
            let model = w * 8.0 / RTT;
            let r = g / model;
            Finding {
                claim: claim.into(),
                criterion: criterion.into(),
                evidence: format!(
                    "{} window: {} against {} predicted ({:.2}x)",
                    Bytes(w as u64),
                    rate(Some(g)),
                    rate(Some(model)),
                    r
                ),
                verdict: if (0.65..=2.7).contains(&r) {
                    Verdict::Holds
                } else {
                    Verdict::DoesNotHold
                },
            }
        }
        None => Finding::not_measured(claim, criterion, "the lab part did not run"),
    });
}

/// Which BDP the data support. The round trip measured at the best point, in seconds.
fn bdp(a: &mut Analysis, best: Option<TcpPoint>) -> Option<f64> {
    let claim = "The path's bandwidth-delay product is 14.3 MB (1 Gbit/s x 228 ms is 28.5 MB)";
    let criterion = "BDP from the data, the best goodput times the measured round trip (TCP_INFO srtt), nearer 14.3 or 28.5 MB (log ratio)";
    let measured_rtt = best.and_then(|b| b.3).map(|ns| ns / 1e9);
    a.findings.push(match (best, measured_rtt) {
        (Some(b), Some(rtt)) => {
            let bdp = b.2 / 8.0 * rtt;
            let near = |x: f64| (bdp / x).ln().abs();
            let seed_closer = near(14.3e6) < near(28.5e6);
            Finding {
                claim: claim.into(),
                criterion: criterion.into(),
                evidence: format!(
                    "{} x {:.0} ms = {:.1} MB, nearer {}; the line rate's BDP is {:.1} MB",
                    rate(Some(b.2)),
                    rtt * 1e3,
                    bdp / 1e6,
                    if seed_closer { "14.3 MB" } else { "28.5 MB" },
                    RATE / 8.0 * RTT / 1e6
                ),
                verdict: if seed_closer {
                    Verdict::Holds
                } else {
                    Verdict::DoesNotHold
                },
            }
        }
        _ => Finding::not_measured(claim, criterion, "the lab part did not run"),
    });
    a.then_now.push(ThenNow {
        quantity: "bandwidth-delay product".into(),
        then: "14.3 MB (stated)".into(),
        now: match (best, measured_rtt) {
            (Some(b), Some(rtt)) => format!(
                "{:.1} MB (best goodput x measured RTT); 28.5 MB at the line rate",
                b.2 / 8.0 * rtt / 1e6
            ),
            _ => "28.5 MB at the line rate".into(),
        },
    });
    measured_rtt
}

/// The best came with the largest MTU and window.
/// A finding whose own points were left out as physically impossible was not
/// validly measured: it is "not measured", with the points that say why.
fn largest_mtu_and_window(
    a: &mut Analysis,
    tcp: &[TcpPoint],
    dropped: &[(f64, f64)],
    best: Option<TcpPoint>,
) {
    let claim = "The best throughput comes with the largest MTU (9000) and window (256 MB)";
    let criterion = "the MTU 9000 / largest-window point within 5% of the best point";
    let largest = tcp
        .iter()
        .map(|t| (t.0, t.1))
        .chain(dropped.iter().copied())
        .filter(|t| t.0 == 9000.0)
        .map(|t| t.1)
        .fold(0.0, f64::max);
    if dropped.contains(&(9000.0, largest)) {
        let windows: Vec<String> = dropped
            .iter()
            .filter(|t| t.0 == 9000.0)
            .map(|t| Bytes(t.1 as u64).to_string())
            .collect();
        a.findings.push(Finding::not_measured(
            claim,
            criterion,
            format!(
                "the MTU 9000 points at {} were left out as physically impossible (above the \
                 link's ceiling: see the caveats), so the point the claim is about was not \
                 validly measured",
                windows.join(" and ")
            ),
        ));
        return;
    }
    let top = tcp
        .iter()
        .find(|t| t.0 == 9000.0 && t.1 == largest)
        .map(|t| t.2);
    a.findings.push(match (best, top) {
        (Some(b), Some(t)) => Finding {
            claim: claim.into(),
            criterion: criterion.into(),
            evidence: format!(
                "MTU 9000 with {}: {}; the best: {} at MTU {} with {}",
                Bytes(largest as u64),
                rate(Some(t)),
                rate(Some(b.2)),
                b.0,
                Bytes(b.1 as u64)
            ),
            verdict: if t >= 0.95 * b.2 {
                Verdict::Holds
            } else {
                Verdict::DoesNotHold
            },
        },
        _ => Finding::not_measured(claim, criterion, "the lab part did not run"),
    });
}

/// UDP near the line rate at every MTU.
fn udp(d: &Data, a: &mut Analysis) {
    let udp: Vec<(f64, f64)> = d
        .sweeps
        .get("udp")
        .map(|s| {
            points(s, &[])
                .into_iter()
                .filter_map(|p| Some((axis(p, "mtu")?, p.median(Metric::Goodput.name())?)))
                .collect()
        })
        .unwrap_or_default();
    let claim = "UDP reaches about 950 Mbit/s at every MTU";
    let criterion = "UDP goodput at every MTU at least 90% of 1 Gbit/s";
    a.findings.push(if udp.is_empty() {
        Finding::not_measured(claim, criterion, "the lab part did not run")
    } else {
        let min = udp.iter().map(|u| u.1).fold(f64::MAX, f64::min);
        Finding {
            claim: claim.into(),
            criterion: criterion.into(),
            evidence: udp
                .iter()
                .map(|(m, g)| format!("MTU {m}: {}", rate(Some(*g))))
                .collect::<Vec<_>>()
                .join("; "),
            verdict: if min >= 0.9 * RATE {
                Verdict::Holds
            } else {
                Verdict::DoesNotHold
            },
        }
    });
    a.then_now.push(ThenNow {
        quantity: "UDP throughput".into(),
        then: "about 950 Mbit/s at every MTU (PCI-X, PCI-E)".into(),
        now: if udp.is_empty() {
            "-".into()
        } else {
            format!(
                "{} to {}",
                rate(udp.iter().map(|u| u.1).reduce(f64::min)),
                rate(udp.iter().map(|u| u.1).reduce(f64::max))
            )
        },
    });
}

/// Dual tests.
fn dual(d: &Data, a: &mut Analysis, impossible: &mut Vec<String>) {
    let dual: Vec<(f64, f64, f64)> = d
        .sweeps
        .get("dual")
        .map(|s| {
            points(s, &[])
                .into_iter()
                .filter_map(|p| {
                    // Each direction's ceiling is half the bidirectional point's.
                    let c = s
                        .efficiency
                        .iter()
                        .find(|e| e.idx == p.idx)
                        .and_then(|e| e.theoretical)
                        .map_or(f64::INFINITY, |t| t / 2.0);
                    let (o, i) = (
                        p.median(Metric::GoodputOut.name())?,
                        p.median(Metric::GoodputIn.name())?,
                    );
                    let w = axis(p, "window")?;
                    if o > c || i > c {
                        impossible.push(format!(
                            "dual: {} window, {} out and {} in over a ceiling of {} each way",
                            Bytes(w as u64),
                            rate(Some(o)),
                            rate(Some(i)),
                            rate(Some(c))
                        ));
                        return None;
                    }
                    Some((w, o, i))
                })
                .collect()
        })
        .unwrap_or_default();
    a.then_now.push(ThenNow {
        quantity: "dual test (both ways at once)".into(),
        then: "figures only (Fig. 6-9), no numbers in the text".into(),
        now: if dual.is_empty() {
            "-".into()
        } else {
            dual.iter()
                .map(|(w, o, i)| {
                    format!(
                        "{}: {} out, {} in",
                        Bytes(*w as u64),
                        rate(Some(*o)),
                        rate(Some(*i))
                    )
                })
                .collect::<Vec<_>>()
                .join("; ")
        },
    });
}

/// What qualifies the findings: points left out, the host's caps, the round trip.
fn caveats(d: &Data, a: &mut Analysis, impossible: &[String], measured_rtt: Option<f64>) {
    if !impossible.is_empty() {
        a.caveats.push(format!(
            "Left out as physically impossible, goodput above the 1 Gbit/s link's ceiling after headers (the userspace link emulator let more than its rate through at the largest windows: a lab defect, not a result): {}",
            impossible.join("; ")
        ));
    }
    a.findings.push(Finding::not_measured(
        "Host parameters (window, MTU), not the bus type, decide the result",
        "NICs on PCI, PCI-X and PCI-E buses compared",
        "one host has one (virtual) NIC; the window and MTU sweeps above show how much the host parameters alone move the result",
    ));
    if let Some(max) = d.rmem_max {
        if (max as f64) < 256.0 * 1048576.0 {
            a.caveats.push(format!(
                "net.core.rmem_max was {} during the run (not raised: needs root): windows above it were capped by the kernel; see window_granted in the sweep reports",
                Bytes(max)
            ));
        }
    }
    if let Some(rtt) = measured_rtt {
        a.caveats.push(format!("The round trip TCP measured at the best point was {} (the link's 228 ms plus queueing).", fmt(Metric::Srtt, Some(rtt * 1e9))));
    }
}
