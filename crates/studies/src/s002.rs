//! 002: HP's performance report for 155 and 622 Mbit/s ATM adapters.

use netsonde_model::sweep::Metric;
use netsonde_model::units::Bytes;
use netsonde_report::tables::Table;

use crate::{
    axis, change, fmt, median, pct, points, rate, Analysis, Data, Finding, PartDef, PartKind,
    StudyDef, ThenNow, Verdict,
};

pub(crate) const DEF: StudyDef = StudyDef {
    id: "002",
    slug: "hp-atm",
    title: "HP ATM/622 adapters: out, in and both ways by MTU, the window for full rate, message size",
    seed: "002_b66f75e61f819253.txt",
    summary: "The seed tabled outbound, inbound and bidirectional TCP throughput with CPU for a 622 Mbit/s adapter at MTU 9180 and 1516, showed that the receive window had to grow from 64 KB to 144 KB for full rate, and plotted throughput and CPU against message size for the two windows. Here the adapter is the lab's link shaped to 622 Mbit/s at MTU 9000 and 1500; the window parts add 0.5 ms each way (a 1 ms round trip, 78 KB in flight at 622 Mbit/s), since a window only limits a path with a delay.",
    parts: &[
        PartDef {
            name: "directions",
            what: "TCP out, in and both ways at MTU 1500 and 9000 over a 622 Mbit/s link, 64 KiB writes, with CPU",
            lab: true,
            kind: PartKind::Sweep {
                file: include_str!("../experiments/s002-directions.toml"),
                quick: include_str!("../experiments/s002-directions-quick.toml"),
                figures: &[],
            },
        },
        PartDef {
            name: "window",
            what: "TCP throughput against the window over 622 Mbit/s with a 1 ms round trip, 8 KiB writes",
            lab: true,
            kind: PartKind::Sweep {
                file: include_str!("../experiments/s002-window.toml"),
                quick: include_str!("../experiments/s002-window-quick.toml"),
                figures: &["throughput-window"],
            },
        },
        PartDef {
            name: "sizes",
            what: "TCP throughput and CPU against message size for 64 KB and 144 KB windows, same link",
            lab: true,
            kind: PartKind::Sweep {
                file: include_str!("../experiments/s002-sizes.toml"),
                quick: include_str!("../experiments/s002-sizes-quick.toml"),
                figures: &["throughput-size", "service-demand-size"],
            },
        },
    ],
    buffers: None,
    analyse,
};

/// The seed's Table 3 (622 Mbit/s adapter): (direction, Classical IP MTU 9180
/// Mbit/s and CPU %, LANE MTU 1516 Mbit/s and CPU %).
const SEED: [(&str, f64, f64, f64, f64); 3] = [
    ("out", 538.14, 26.85, 448.0, 88.79),
    ("in", 535.42, 23.61, 454.48, 20.05),
    ("bidir", 1005.0, 57.1, 453.15, 71.27),
];

fn analyse(d: &Data) -> Analysis {
    let mut a = Analysis::default();
    by_mtu(d, &mut a);
    window_needed(d, &mut a);
    size_sensitivity(d, &mut a);
    a
}

/// Out, in and both ways by MTU, then and now.
fn by_mtu(d: &Data, a: &mut Analysis) {
    let dirs = d.sweeps.get("directions");
    let cores = dirs
        .and_then(|s| s.run.client_host.as_ref())
        .map(|h| f64::from(h.cores.max(1)));
    let at = |dir: &str, mtu: &str, m: Metric| {
        dirs.and_then(|s| median(s, &[("direction", dir), ("mtu", mtu)], m))
    };
    let mut table = Table {
        title: "Out, in and both ways by MTU (the seed's Table 3 beside today's)".into(),
        note: "Then: 622 Mbit/s ATM adapter, one CPU, Classical IP at MTU 9180 and LANE at MTU 1516. Now: the lab's 622 Mbit/s link at MTU 9000 and 1500; CPU is the host's busy share with both ends on it, and service demand the client test's CPU per KiB.".into(),
        headers: ["direction", "then 9180", "then CPU", "then 1516", "then CPU", "now 9000", "now CPU", "now µs/KiB", "now 1500", "now CPU", "now µs/KiB"]
            .map(String::from)
            .to_vec(),
        rows: vec![],
    };
    for (dir, t9, c9, t15, c15) in SEED {
        let share = |mtu: &str| match (at(dir, mtu, Metric::ClientBusyCores), cores) {
            (Some(b), Some(c)) => pct(b / c),
            _ => "-".into(),
        };
        table.rows.push(vec![
            dir.into(),
            format!("{t9} Mbit/s"),
            format!("{c9}%"),
            format!("{t15} Mbit/s"),
            format!("{c15}%"),
            rate(at(dir, "9000", Metric::Goodput)),
            share("9000"),
            fmt(
                Metric::ClientUsPerKib,
                at(dir, "9000", Metric::ClientUsPerKib),
            ),
            rate(at(dir, "1500", Metric::Goodput)),
            share("1500"),
            fmt(
                Metric::ClientUsPerKib,
                at(dir, "1500", Metric::ClientUsPerKib),
            ),
        ]);
        a.then_now.push(ThenNow {
            quantity: format!("{dir}: large MTU / 1500-ish MTU"),
            then: format!("{t9} / {t15} Mbit/s"),
            now: format!(
                "{} / {}",
                rate(at(dir, "9000", Metric::Goodput)),
                rate(at(dir, "1500", Metric::Goodput))
            ),
        });
    }
    a.tables.push(table);

    let (g9, g15) = (
        at("out", "9000", Metric::Goodput),
        at("out", "1500", Metric::Goodput),
    );
    let claim =
        "The large MTU carries more than MTU 1516 at 622 Mbit/s (538 against 448 Mbit/s outbound)";
    let criterion = "outbound goodput at MTU 9000 at least 5% above MTU 1500's";
    a.findings.push(match (g9, g15) {
        (Some(x), Some(y)) if y > 0.0 => Finding {
            claim: claim.into(),
            criterion: criterion.into(),
            evidence: format!("{} against {}: {}", rate(g9), rate(g15), change(x / y)),
            verdict: if x >= 1.05 * y {
                Verdict::Holds
            } else {
                Verdict::DoesNotHold
            },
        },
        _ => Finding::not_measured(claim, criterion, "the lab part did not run"),
    });
    let (s9, s15) = (
        at("out", "9000", Metric::ClientUsPerKib),
        at("out", "1500", Metric::ClientUsPerKib),
    );
    let claim = "The large MTU costs less CPU per byte (26.85% against 88.79% outbound)";
    let criterion = "outbound service demand at MTU 9000 at least 10% below MTU 1500's";
    a.findings.push(match (s9, s15) {
        (Some(x), Some(y)) if y > 0.0 => Finding {
            claim: claim.into(),
            criterion: criterion.into(),
            evidence: format!(
                "{} against {} per KiB: {}",
                fmt(Metric::ClientUsPerKib, s9),
                fmt(Metric::ClientUsPerKib, s15),
                change(x / y)
            ),
            verdict: if x <= 0.9 * y {
                Verdict::Holds
            } else {
                Verdict::DoesNotHold
            },
        },
        _ => Finding::not_measured(claim, criterion, "the lab part did not run"),
    });
    let b9 = at("bidir", "9000", Metric::Goodput);
    let claim = "Both ways at once nearly double one way's throughput at the large MTU (1005 against 538 Mbit/s)";
    let criterion = "bidirectional at MTU 9000 at least 1.8 times outbound; in part from 1.2 times";
    a.findings.push(match (b9, g9) {
        (Some(b), Some(o)) if o > 0.0 => Finding {
            claim: claim.into(),
            criterion: criterion.into(),
            evidence: format!("{} against {}: {:.2}x", rate(b9), rate(g9), b / o),
            verdict: if b >= 1.8 * o {
                Verdict::Holds
            } else if b >= 1.2 * o {
                Verdict::Partly
            } else {
                Verdict::DoesNotHold
            },
        },
        _ => Finding::not_measured(claim, criterion, "the lab part did not run"),
    });
}

/// The window needed for full rate.
fn window_needed(d: &Data, a: &mut Analysis) {
    let win = d.sweeps.get("window");
    let by_window: Vec<(f64, f64)> = win
        .map(|s| {
            let mut v: Vec<(f64, f64)> = points(s, &[])
                .into_iter()
                .filter_map(|p| Some((axis(p, "window")?, p.median(Metric::Goodput.name())?)))
                .collect();
            v.sort_by(|x, y| x.0.total_cmp(&y.0));
            v
        })
        .unwrap_or_default();
    let best = by_window.iter().map(|v| v.1).fold(0.0, f64::max);
    let at_w = |w: f64| by_window.iter().find(|v| v.0 == w).map(|v| v.1);
    let (w64, w144) = (at_w(65536.0), at_w(147456.0));
    let full = by_window.iter().find(|v| v.1 >= 0.9 * best).map(|v| v.0);
    a.then_now.push(ThenNow {
        quantity: "receive window needed for full rate at 622 Mbit/s".into(),
        then: "144 KB (64 KB falls short)".into(),
        now: full.map_or("-".into(), |w| {
            format!("{} (90% of the best, 1 ms round trip)", Bytes(w as u64))
        }),
    });
    let claim = "A 64 KB window falls short of the full rate and 144 KB reaches it";
    let criterion = "64 KiB below 90% of the best window's goodput and 144 KiB at or above it";
    a.findings.push(match (w64, w144) {
        (Some(x), Some(y)) if best > 0.0 => Finding {
            claim: claim.into(),
            criterion: criterion.into(),
            evidence: format!(
                "64 KiB {} ({}), 144 KiB {} ({}) of the best {}",
                rate(w64),
                pct(x / best),
                rate(w144),
                pct(y / best),
                rate(Some(best))
            ),
            verdict: if x < 0.9 * best && y >= 0.9 * best {
                Verdict::Holds
            } else if y > x * 1.05 {
                Verdict::Partly
            } else {
                Verdict::DoesNotHold
            },
        },
        _ => Finding::not_measured(claim, criterion, "the lab part did not run"),
    });
}

/// Sensitivity to message size under each window.
fn size_sensitivity(d: &Data, a: &mut Analysis) {
    let spread = |w: &str| -> Option<f64> {
        let s = d.sweeps.get("sizes")?;
        let v: Vec<f64> = points(s, &[("window", w)])
            .into_iter()
            .filter(|p| axis(p, "size").is_some_and(|b| b >= 1024.0))
            .filter_map(|p| p.median(Metric::Goodput.name()))
            .collect();
        let max = v.iter().copied().fold(f64::MIN, f64::max);
        let min = v.iter().copied().fold(f64::MAX, f64::min);
        (v.len() >= 2 && max > 0.0).then(|| (max - min) / max)
    };
    let (s64, s144) = (spread("65536"), spread("147456"));
    let claim = "The 144 KB window also makes throughput less sensitive to the message size";
    let criterion = "the spread of goodput over sizes from 1 KiB, (max - min) / max, smaller with 144 KiB than with 64 KiB";
    a.findings.push(match (s64, s144) {
        (Some(x), Some(y)) => Finding {
            claim: claim.into(),
            criterion: criterion.into(),
            evidence: format!("spread {} with 64 KiB, {} with 144 KiB", pct(x), pct(y)),
            verdict: if y < x {
                Verdict::Holds
            } else {
                Verdict::DoesNotHold
            },
        },
        _ => Finding::not_measured(
            claim,
            criterion,
            "the lab part did not run, or too few sizes from 1 KiB",
        ),
    });
    a.caveats.push("Linux doubles a requested socket buffer and advertises a share of it as the window, so a 64 KiB setting is not a 64 KB window; the sweep reports record the granted buffer (window_granted).".into());
    a.caveats.push("On veth, TCP hands the kernel segments up to 64 KiB (GSO) at any MTU, so the MTU changes the per-packet cost less than on an ATM adapter.".into());
}
