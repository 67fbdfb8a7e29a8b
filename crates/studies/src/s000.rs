//! 000: an OC-48c (2.4 Gbit/s) PCI adapter with the MAPOS link protocol.

use netsonde_model::sweep::Metric;
use netsonde_report::tables::Table;

use crate::{
    axis, change, gain_verdict, max_opt, median, pct, points, rate, Analysis, Data, Finding,
    PartDef, PartKind, StudyDef, ThenNow, Verdict,
};

pub(crate) const DEF: StudyDef = StudyDef {
    id: "000",
    slug: "oc48c",
    title: "OC-48c (2.4 Gbit/s) PCI adapter: packet size, short-packet batching, the loss-free rate",
    seed: "000_96a0070d8e6bacc3.txt",
    summary: "The seed measured throughput against packet size up to a 64 KiB MTU over a 2.4 Gbit/s link, the gain of non-interrupt-driven sending and batched receiving for 64-byte packets, the loss-free receive rate at 4 KB, adaptive switching of the send algorithm, and a peak TCP throughput set against a benchmark's results database. Here the link is the lab's (a veth pair at MTU 65535 shaped to 2.4 Gbit/s); batching is netsonde's `batch` strategy (sendmmsg/recvmmsg), polling its `busypoll`, adaptive switching its `auto`, and the results database is the store.",
    parts: &[
        PartDef {
            name: "size",
            what: "UDP throughput against datagram size, unpaced, over a 2.4 Gbit/s link at MTU 65535 (no fragmentation up to 60 KiB)",
            lab: true,
            kind: PartKind::Sweep {
                file: include_str!("../experiments/s000-size.toml"),
                quick: include_str!("../experiments/s000-size-quick.toml"),
                figures: &["throughput-size"],
            },
        },
        PartDef {
            name: "short",
            what: "64-byte and 16 KiB datagrams, unpaced, by I/O strategy: one system call per datagram (copy), batched (sendmmsg/recvmmsg), busy-polled, and auto (measured switching)",
            lab: false,
            kind: PartKind::Sweep {
                file: include_str!("../experiments/s000-short.toml"),
                quick: include_str!("../experiments/s000-short-quick.toml"),
                figures: &["throughput-size"],
            },
        },
        PartDef {
            name: "lossfree",
            what: "the loss-free receive rate (RFC 2544 throughput, NDR) of 4096-byte frames, plain against batched",
            lab: false,
            kind: PartKind::Search {
                args: &["--frames", "4096", "--io", "copy,batch"],
                quick: &[
                    "--trial",
                    "300ms",
                    "--warmup",
                    "100ms",
                    "--precision",
                    "5%",
                    "--final-trials",
                    "1",
                    "--max-trials",
                    "12",
                ],
            },
        },
        PartDef {
            name: "peak",
            what: "peak TCP throughput on this host (loopback, 128 KiB writes, one and two streams)",
            lab: false,
            kind: PartKind::Sweep {
                file: include_str!("../experiments/s000-peak.toml"),
                quick: include_str!("../experiments/s000-peak-quick.toml"),
                figures: &[],
            },
        },
    ],
    buffers: None,
    analyse,
};

const WIRE_SHARE: f64 = 0.95;

fn analyse(d: &Data) -> Analysis {
    let mut a = Analysis::default();
    wire_speed(d, &mut a);
    short_packets(d, &mut a);
    loss_free_rate(d, &mut a);
    peak(d, &mut a);
    a
}

/// Throughput against size: the smallest size at 95% of the link's ceiling.
fn wire_speed(d: &Data, a: &mut Analysis) {
    let claim = "Wire speed is reached only with large packets (above 16 KB)";
    let criterion = "64 B stays below 95% of the link's goodput ceiling after headers and the smallest size that reaches it is within 2x of 16 KB (8 to 32 KiB); in part when it is reached from another size";
    let mut wire_at = None;
    match d.sweeps.get("size") {
        Some(s) => {
            let mut rows: Vec<(f64, f64, Option<f64>)> = points(s, &[])
                .into_iter()
                .filter_map(|p| {
                    let g = p.median(Metric::Goodput.name())?;
                    let th = s.efficiency.iter().find(|e| e.idx == p.idx)?.theoretical;
                    Some((axis(p, "size")?, g, th))
                })
                .collect();
            rows.sort_by(|x, y| x.0.total_cmp(&y.0));
            let share = |r: &(f64, f64, Option<f64>)| r.2.map(|t| r.1 / t);
            wire_at = rows
                .iter()
                .find(|r| share(r).is_some_and(|s| s >= WIRE_SHARE))
                .map(|r| r.0);
            let small = rows.first().and_then(share);
            let evidence = rows
                .iter()
                .map(|r| {
                    format!(
                        "{}: {}{}",
                        netsonde_model::units::Bytes(r.0 as u64),
                        rate(Some(r.1)),
                        share(r)
                            .map(|s| format!(" ({})", pct(s)))
                            .unwrap_or_default()
                    )
                })
                .collect::<Vec<_>>()
                .join("; ");
            let verdict = match (wire_at, small) {
                (Some(w), Some(s)) if s < WIRE_SHARE && (8192.0..=32768.0).contains(&w) => {
                    Verdict::Holds
                }
                (Some(_), Some(s)) if s < WIRE_SHARE => Verdict::Partly,
                _ => Verdict::DoesNotHold,
            };
            a.findings.push(Finding {
                claim: claim.into(),
                criterion: criterion.into(),
                evidence: format!(
                    "{evidence}; the link's rate is reached from {}",
                    wire_at.map_or("no size".into(), |w| netsonde_model::units::Bytes(w as u64)
                        .to_string())
                ),
                verdict,
            });
        }
        None => a.findings.push(Finding::not_measured(
            claim,
            criterion,
            "the lab part did not run",
        )),
    }
    a.then_now.push(ThenNow {
        quantity: "packet size from which the link runs at its rate".into(),
        then: "above 16 KB (OC-48c, 2.4 Gbit/s, MTU up to 64 KB)".into(),
        now: wire_at.map_or("not reached".into(), |w| {
            format!(
                "{} (lab link 2.4 Gbit/s, MTU 65535)",
                netsonde_model::units::Bytes(w as u64)
            )
        }),
    });
}

/// 64-byte packets: batched or polled against one system call per packet.
fn short_packets(d: &Data, a: &mut Analysis) {
    let claim =
        "Non-interrupt-driven sending and batched receiving raise 64-byte throughput by 50%";
    let criterion = "the better of batch and busypoll over copy at 64 B: holds from +25% (half the seed's gain), in part above +5%";
    let mut strategies = Table {
        title: "Short packets by I/O strategy".into(),
        note: "UDP goodput, unpaced; auto's share is against the best fixed strategy at that size."
            .into(),
        headers: vec![
            "size".into(),
            "copy".into(),
            "batch".into(),
            "busypoll".into(),
            "auto".into(),
            "auto / best fixed".into(),
        ],
        rows: vec![],
    };
    let short = d.sweeps.get("short");
    let g = |size: &str, io: &str| {
        short.and_then(|s| median(s, &[("size", size), ("io", io)], Metric::Goodput))
    };
    let gain64 = match (
        g("64", "copy"),
        max_opt(g("64", "batch"), g("64", "busypoll")),
    ) {
        (Some(c), Some(b)) if c > 0.0 => Some(b / c),
        _ => None,
    };
    match gain64 {
        Some(r) => a.findings.push(Finding {
            claim: claim.into(),
            criterion: criterion.into(),
            evidence: format!(
                "copy {}, batch {}, busypoll {}: {}",
                rate(g("64", "copy")),
                rate(g("64", "batch")),
                rate(g("64", "busypoll")),
                change(r)
            ),
            verdict: gain_verdict(r, 1.5, 0.05),
        }),
        None => a.findings.push(Finding::not_measured(
            claim,
            criterion,
            "no 64 B results for copy and a batched or polled strategy",
        )),
    }
    a.then_now.push(ThenNow {
        quantity: "64-byte throughput, batched or polled against per-packet".into(),
        then: "+50%".into(),
        now: gain64.map_or("-".into(), change),
    });

    // Adaptive switching: auto against the best fixed strategy at each size.
    let claim = "Adaptive switching of the send algorithm keeps the best algorithm's throughput";
    let criterion = "auto within 10% of the best fixed strategy at every size; in part within 25%";
    let mut worst: Option<f64> = None;
    for size in ["64", "16384"] {
        let fixed = ["copy", "batch", "busypoll"].map(|io| g(size, io));
        let best = fixed.into_iter().fold(None, max_opt);
        let auto = g(size, "auto");
        let share = match (auto, best) {
            (Some(x), Some(b)) if b > 0.0 => Some(x / b),
            _ => None,
        };
        if let Some(s) = share {
            worst = Some(worst.map_or(s, |w| w.min(s)));
        }
        if fixed.iter().any(Option::is_some) || auto.is_some() {
            strategies.rows.push(vec![
                netsonde_model::units::Bytes(size.parse().unwrap_or(0)).to_string(),
                rate(fixed[0]),
                rate(fixed[1]),
                rate(fixed[2]),
                rate(auto),
                share.map_or("-".into(), pct),
            ]);
        }
    }
    match worst {
        Some(w) => a.findings.push(Finding {
            claim: claim.into(),
            criterion: criterion.into(),
            evidence: format!(
                "auto reaches at worst {} of the best fixed strategy",
                pct(w)
            ),
            verdict: if w >= 0.9 {
                Verdict::Holds
            } else if w >= 0.75 {
                Verdict::Partly
            } else {
                Verdict::DoesNotHold
            },
        }),
        None => a.findings.push(Finding::not_measured(
            claim,
            criterion,
            "auto or the fixed strategies did not run",
        )),
    }
    a.then_now.push(ThenNow {
        quantity: "adaptive algorithm against the best fixed one".into(),
        then: "resolves DMA falling behind the CPU (no figure given)".into(),
        now: worst.map_or("-".into(), |w| {
            format!("at worst {} of the best fixed", pct(w))
        }),
    });
    if !strategies.rows.is_empty() {
        a.tables.push(strategies);
    }
}

/// The loss-free receive rate at 4 KB.
fn loss_free_rate(d: &Data, a: &mut Analysis) {
    let claim = "Batched receiving raises the maximum loss-free receive rate at 4 KB by 50%";
    let criterion =
        "NDR with batch over NDR with copy at 4096-byte frames: holds from +25%, in part above +5%";
    let rows = d.searches.get("lossfree");
    let ndr = |io: &str| {
        rows.and_then(|r| r.iter().find(|r| r.io == io))
            .and_then(|r| r.ndr_pps)
    };
    let ndr_gain = match (ndr("copy"), ndr("batch")) {
        (Some(c), Some(b)) if c > 0.0 => Some(b / c),
        _ => None,
    };
    let kpps = |v: Option<f64>| v.map_or("none".into(), |v| format!("{:.1} kpps", v / 1e3));
    match ndr_gain {
        Some(r) => a.findings.push(Finding {
            claim: claim.into(),
            criterion: criterion.into(),
            evidence: format!(
                "NDR copy {}, batch {}: {}",
                kpps(ndr("copy")),
                kpps(ndr("batch")),
                change(r)
            ),
            verdict: gain_verdict(r, 1.5, 0.05),
        }),
        None => a.findings.push(Finding::not_measured(
            claim,
            criterion,
            if rows.is_none() {
                "the search did not run".to_string()
            } else {
                format!(
                    "no loss-free rate for one of them (copy {}, batch {})",
                    kpps(ndr("copy")),
                    kpps(ndr("batch"))
                )
            },
        )),
    }
    a.then_now.push(ThenNow {
        quantity: "loss-free receive rate at 4 KB, batched against plain".into(),
        then: "+50%".into(),
        now: ndr_gain.map_or("-".into(), change),
    });
}

/// Peak TCP against the results store.
fn peak(d: &Data, a: &mut Analysis) {
    let peak = d.sweeps.get("peak").and_then(|s| {
        points(s, &[])
            .into_iter()
            .map(|p| p.median(Metric::Goodput.name()))
            .fold(None, max_opt)
    });
    a.then_now.push(ThenNow {
        quantity: "peak TCP throughput".into(),
        then: "2342.5 Mbit/s (two PCs over the OC-48c link)".into(),
        now: format!("{} (one host, loopback)", rate(peak)),
    });
    let claim = "The peak TCP throughput is the highest in the results database";
    let criterion = "this study's peak at or above every stream result of the store's other runs";
    match (peak, &d.stored_peak) {
        (Some(p), Some(sp)) => match &sp.best {
            Some((best, run, label)) => a.findings.push(Finding {
                claim: claim.into(),
                criterion: criterion.into(),
                evidence: format!(
                    "peak {} against {} stream results in {} other runs, the best {} (run {run}, {label})",
                    rate(Some(p)),
                    sp.points,
                    sp.runs,
                    rate(Some(*best))
                ),
                verdict: if p >= *best { Verdict::Holds } else { Verdict::DoesNotHold },
            }),
            None => a.findings.push(Finding::not_measured(
                claim,
                criterion,
                format!("peak {}; the store holds no other stream results to compare with", rate(Some(p))),
            )),
        },
        _ => a.findings.push(Finding::not_measured(claim, criterion, "the peak part or the store lookup did not run")),
    }
    a.caveats.push("The short-packet part runs `batch` without GSO and GRO (`no_gso`): sendmmsg and recvmmsg move up to 64 datagrams a call, each its own packet, as the seed's batching did. With GSO a super-packet of 64-byte datagrams crosses loopback whole and is never cut into packets, which is a per-call saving, not a per-packet rate; busypoll's is the per-packet polling gain alone.".into());
    a.caveats.push("The seed measured between two PCs over a real OC-48c line; here both ends share one host, so a 'link' result is the lab's shaper and a peak is the host's stack and memory, not an adapter.".into());
}
