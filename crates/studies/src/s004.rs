//! 004: end-to-end latency and data-passing semantics (Brustoloni and Steenkiste).

use netsonde_analysis::fit::{fit_linear, LinearFit};
use netsonde_model::sweep::Metric;
use netsonde_model::units::Bytes;
use netsonde_report::plot::AxisUnit;
use netsonde_report::tables::Table;
use netsonde_report::view::{PlotSpec, Series};

use crate::{
    axis, change, fmt, pct, points, rate, Analysis, Data, Finding, PartDef, PartKind, StudyDef,
    ThenNow, Verdict,
};

/// The seed's packet: single 60 KB AAL5 packets.
const PREDICT_AT: f64 = 61_440.0;
/// The stream model is fitted from here up (below 60 KiB): the large sizes, where
/// the per-byte cost dominates, as the seed predicted "at a large B". Smaller
/// writes pay per-call costs (wake-ups, acknowledgements) the line does not model.
const FIT_FROM: f64 = 8_192.0;

pub(crate) const DEF: StudyDef = StudyDef {
    id: "004",
    slug: "copy-semantics",
    title: "Latency against size and data-passing semantics: copy, emulated copy, emulated share",
    seed: "004_af8b0c42ccafa5be.txt",
    summary: "The seed fitted end-to-end latency against message size as a line, latency = a·B + b, estimated it against measurement, predicted the throughput of single 60 KB packets from the model for copy, emulated copy and emulated share semantics (132/348/384 Mbit/s predicted against 136/341/380 measured) and set them against the host's memory-copy bandwidth (351 Mbit/s). Here the semantics are Linux's: copy is send/recv (`copy`), emulated copy is MSG_ZEROCOPY (`zerocopy`: the sender's pages are pinned, not copied), and emulated share is sendfile from the page cache (`sendfile`: no user buffer at all), over loopback. The throughput model is the stream's own cost per message, t(B) = a·B + b, fitted over 8 to 32 KiB and asked for 60 KiB, where it is compared with the measurement; a ping-pong line like the seed's only bounds a stream (one message in flight), so it is fitted and shown but not used to predict.",
    parts: &[
        PartDef {
            name: "latency",
            what: "TCP ping-pong latency against message size (64 B to 60 KiB), client on core 0, server on core 1",
            lab: false,
            kind: PartKind::Sweep {
                file: include_str!("../experiments/s004-latency.toml"),
                quick: include_str!("../experiments/s004-latency-quick.toml"),
                figures: &["latency-size"],
            },
        },
        PartDef {
            name: "stream",
            what: "TCP stream throughput against message size (1 KiB to 60 KiB) for copy, zerocopy and sendfile semantics",
            lab: false,
            kind: PartKind::Sweep {
                file: include_str!("../experiments/s004-stream.toml"),
                quick: include_str!("../experiments/s004-stream-quick.toml"),
                figures: &["throughput-size"],
            },
        },
        PartDef {
            name: "memcpy",
            what: "this host's memory-copy bandwidth: copies between two 64 MiB buffers (main memory, not cache), the best round",
            lab: false,
            kind: PartKind::MemCopy,
        },
    ],
    buffers: None,
    analyse,
};

/// One semantics' stream model: the fit of time per message against size below
/// 60 KiB, and its prediction at 60 KiB against the measurement.
struct Model {
    io: &'static str,
    slope_ns_per_byte: f64,
    intercept_ns: f64,
    r2: f64,
    predicted: f64,
    measured: f64,
}

fn model(d: &Data, io: &'static str) -> Option<Model> {
    let s = d.sweeps.get("stream")?;
    let mut fit_x = Vec::new();
    let mut fit_y = Vec::new();
    let mut measured = None;
    for p in points(s, &[("io", io)]) {
        let (Some(b), Some(g)) = (axis(p, "size"), p.median(Metric::Goodput.name())) else {
            continue;
        };
        if g <= 0.0 {
            continue;
        }
        if b == PREDICT_AT {
            measured = Some(g);
        } else if b >= FIT_FROM {
            // Nanoseconds per message at this goodput.
            fit_x.push(b);
            fit_y.push(b * 8.0 / g * 1e9);
        }
    }
    let f = fit_linear(&fit_x, &fit_y).filter(LinearFit::judged)?;
    let t = f.predict(PREDICT_AT);
    (t > 0.0).then(|| Model {
        io,
        slope_ns_per_byte: f.slope,
        intercept_ns: f.intercept,
        r2: f.r2,
        predicted: PREDICT_AT * 8.0 / t * 1e9,
        measured: measured.unwrap_or(f64::NAN),
    })
}

/// The stream's median goodput at 60 KiB for semantics `io`, as measured
/// (with or without a model: `--quick` measures too few sizes to fit one).
fn measured_at_60(d: &Data, io: &str) -> Option<f64> {
    let s = d.sweeps.get("stream")?;
    points(s, &[("io", io)])
        .into_iter()
        .filter(|p| axis(p, "size") == Some(PREDICT_AT))
        .find_map(|p| p.median(Metric::Goodput.name()))
        .filter(|g| g.is_finite() && *g > 0.0)
}

/// Why the stream part has no figure: it did not run, or ran without the
/// 60 KiB point.
fn stream_missing(d: &Data) -> &'static str {
    if d.sweeps.contains_key("stream") {
        "the stream part measured no 60 KiB goodput for copy and a zero-copy semantics"
    } else {
        "the stream part did not run"
    }
}

fn analyse(d: &Data) -> Analysis {
    let mut a = Analysis::default();
    latency_line(d, &mut a);
    stream_model(d, &mut a);
    let copy = copy_against_zero_copy(d, &mut a);
    copy_ceiling(d, &mut a, copy);
    a
}

/// The latency line, as the seed's Table 1.
fn latency_line(d: &Data, a: &mut Analysis) {
    let fit = d.sweeps.get("latency").and_then(|s| s.fit.as_ref());
    a.then_now.push(ThenNow {
        quantity: "one-way latency line, copy semantics (actual)".into(),
        then: "0.0561 µs/B × B + 129 µs (ATM at 513 Mbit/s)".into(),
        now: fit.map_or("-".into(), |f| {
            format!(
                "{:.5} µs/B × B + {:.1} µs (R² {:.3}, loopback)",
                f.fit.slope / 1e3,
                f.fit.intercept / 1e3,
                f.fit.r2
            )
        }),
    });
    let claim = "Latency grows as a straight line in message size, latency = a·B + b";
    let criterion = "the least-squares line over the ping-pong sizes explains R² ≥ 0.95 of the variance; in part from 0.8";
    a.findings.push(match fit {
        Some(f) if !f.fit.judged() => Finding::not_measured(
            claim,
            criterion,
            format!(
                "{}: a line through so few sizes cannot be judged (run the study without \
                 --quick)",
                f.fit.r2_text()
            ),
        ),
        Some(f) => Finding {
            claim: claim.into(),
            criterion: criterion.into(),
            evidence: format!(
                "a = {:.4} ns/B, b = {:.1} µs, R² = {:.3} over {} sizes",
                f.fit.slope,
                f.fit.intercept / 1e3,
                f.fit.r2,
                f.fit.n
            ),
            verdict: if f.fit.r2 >= 0.95 {
                Verdict::Holds
            } else if f.fit.r2 >= 0.8 {
                Verdict::Partly
            } else {
                Verdict::DoesNotHold
            },
        },
        None => Finding::not_measured(claim, criterion, "the latency part did not run"),
    });
    if let Some(f) = fit {
        let mut t = Table {
            title: "Latency line: estimated against actual".into(),
            note: "Estimated: the fitted line at each size; actual: half the median round trip. The seed's own (copy, early demultiplexing): E 0.0581 B + 141 µs, A 0.0561 B + 129 µs.".into(),
            headers: ["size", "actual", "estimated", "error"].map(String::from).to_vec(),
            rows: vec![],
        };
        for r in &f.rows {
            t.rows.push(vec![
                Bytes(r.size as u64).to_string(),
                fmt(Metric::LatencyP50, Some(r.measured_ns)),
                fmt(Metric::LatencyP50, Some(r.fitted_ns)),
                format!("{:+.1}%", 100.0 * (r.fitted_ns / r.measured_ns - 1.0)),
            ]);
        }
        a.tables.push(t);
    }
}

/// The stream model per semantics.
fn stream_model(d: &Data, a: &mut Analysis) {
    let models: Vec<Model> = ["copy", "zerocopy", "sendfile"]
        .into_iter()
        .filter_map(|io| model(d, io))
        .collect();
    let seed = |io: &str| match io {
        "copy" => "132 predicted / 136 measured Mbit/s",
        "zerocopy" => "348 / 341 Mbit/s (emulated copy)",
        _ => "384 / 380 Mbit/s (emulated share)",
    };
    let mut t = Table {
        title: "Throughput of 60 KiB messages: predicted by the stream model against measured".into(),
        note: "Model: time per message t(B) = a·B + b, fitted to the stream's own goodput at the sizes from 8 KiB below 60 KiB; predicted throughput B / t(B) at 60 KiB.".into(),
        headers: ["semantics", "a", "b", "R²", "predicted", "measured", "error", "the seed"].map(String::from).to_vec(),
        rows: vec![],
    };
    for m in &models {
        t.rows.push(vec![
            m.io.into(),
            format!("{:.4} ns/B", m.slope_ns_per_byte),
            format!("{:.2} µs", m.intercept_ns / 1e3),
            format!("{:.3}", m.r2),
            rate(Some(m.predicted)),
            rate(Some(m.measured).filter(|v| v.is_finite())),
            if m.measured.is_finite() {
                format!("{:+.1}%", 100.0 * (m.predicted / m.measured - 1.0))
            } else {
                "-".into()
            },
            seed(m.io).into(),
        ]);
        a.then_now.push(ThenNow {
            quantity: format!("60 KB throughput, {}: predicted / measured", m.io),
            then: seed(m.io).into(),
            now: format!(
                "{} / {}",
                rate(Some(m.predicted)),
                rate(Some(m.measured).filter(|v| v.is_finite()))
            ),
        });
    }
    if !t.rows.is_empty() {
        a.tables.push(t);
    }
    let claim = "The linear model predicts the throughput of 60 KB messages closely (within 3% in the seed)";
    let criterion =
        "prediction within 15% of the measurement for every semantics; in part for some";
    let judged: Vec<&Model> = models.iter().filter(|m| m.measured.is_finite()).collect();
    a.findings.push(if judged.is_empty() {
        Finding::not_measured(
            claim,
            criterion,
            if d.sweeps.contains_key("stream") {
                format!(
                    "the stream part measured fewer than {} sizes from {} below {} for \
                     each semantics: a line through fewer fits any points (run the study \
                     without --quick)",
                    LinearFit::MIN_JUDGED,
                    Bytes(FIT_FROM as u64),
                    Bytes(PREDICT_AT as u64)
                )
            } else {
                "the stream part did not run".into()
            },
        )
    } else {
        let ok = judged
            .iter()
            .filter(|m| (m.predicted / m.measured - 1.0).abs() <= 0.15)
            .count();
        Finding {
            claim: claim.into(),
            criterion: criterion.into(),
            evidence: judged
                .iter()
                .map(|m| format!("{} {:+.1}%", m.io, 100.0 * (m.predicted / m.measured - 1.0)))
                .collect::<Vec<_>>()
                .join(", "),
            verdict: if ok == judged.len() {
                Verdict::Holds
            } else if ok > 0 {
                Verdict::Partly
            } else {
                Verdict::DoesNotHold
            },
        }
    });
}

/// Copy against the zero-copy semantics, as measured at 60 KiB.
fn copy_against_zero_copy(d: &Data, a: &mut Analysis) -> Option<f64> {
    let at60 = |io: &str| measured_at_60(d, io);
    let copy = at60("copy");
    let other = crate::max_opt(at60("zerocopy"), at60("sendfile"));
    let claim = "Avoiding the copy (emulated copy, emulated share) raises throughput well above copy semantics (341 and 380 against 136 Mbit/s)";
    let criterion =
        "the better of zerocopy and sendfile at 60 KiB at least 10% above copy; in part above 2%";
    a.findings.push(match (copy, other) {
        (Some(c), Some(o)) if c > 0.0 => Finding {
            claim: claim.into(),
            criterion: criterion.into(),
            evidence: format!(
                "copy {}, zerocopy {}, sendfile {}: {}",
                rate(copy),
                rate(at60("zerocopy")),
                rate(at60("sendfile")),
                change(o / c)
            ),
            verdict: if o >= 1.1 * c {
                Verdict::Holds
            } else if o > 1.02 * c {
                Verdict::Partly
            } else {
                Verdict::DoesNotHold
            },
        },
        _ => Finding::not_measured(claim, criterion, stream_missing(d)),
    });
    copy
}

/// The memory-copy ceiling.
fn copy_ceiling(d: &Data, a: &mut Analysis, copy: Option<f64>) {
    let claim = "Memory-copy bandwidth is the ceiling: copy semantics stays under it (the others reach it: 341 and 380 against 351 Mbit/s)";
    let criterion =
        "copy semantics' goodput at 60 KiB below this host's main-memory copy bandwidth";
    a.then_now.push(ThenNow {
        quantity: "memory-copy bandwidth".into(),
        then: "351 Mbit/s".into(),
        now: d.memcpy_bps.map_or("-".into(), |m| {
            format!("{} (64 MiB buffers, measured)", rate(Some(m)))
        }),
    });
    a.findings.push(match (copy, d.memcpy_bps) {
        (Some(c), Some(m)) => Finding {
            claim: claim.into(),
            criterion: criterion.into(),
            evidence: format!(
                "copy {} is {} of the memory-copy bandwidth {}",
                rate(Some(c)),
                pct(c / m),
                rate(Some(m))
            ),
            verdict: if c < m {
                Verdict::Holds
            } else {
                Verdict::DoesNotHold
            },
        },
        (None, _) => Finding::not_measured(claim, criterion, stream_missing(d)),
        (_, None) => Finding::not_measured(claim, criterion, "the memory-copy part did not run"),
    });
    if let Some(m) = d.memcpy_bps {
        a.figures.push(PlotSpec {
            id: "semantics-ceiling".into(),
            title: "Stream throughput by semantics against the memory-copy ceiling".into(),
            x_label: "message size (bytes)".into(),
            y_label: "goodput (bit/s)".into(),
            x_unit: AxisUnit::Bytes,
            y_unit: AxisUnit::BitRate,
            log_x: true,
            log_y: false,
            y_max: None,
            series: {
                let mut v: Vec<Series> = ["copy", "zerocopy", "sendfile"]
                    .into_iter()
                    .filter_map(|io| {
                        let s = d.sweeps.get("stream")?;
                        let mut pts: Vec<(f64, f64)> = points(s, &[("io", io)])
                            .into_iter()
                            .filter_map(|p| {
                                Some((axis(p, "size")?, p.median(Metric::Goodput.name())?))
                            })
                            .collect();
                        pts.sort_by(|x, y| x.0.total_cmp(&y.0));
                        (!pts.is_empty()).then(|| Series {
                            name: io.into(),
                            points: pts,
                            band: vec![],
                            dashed: false,
                        })
                    })
                    .collect();
                if let Some((x0, x1)) = v.iter().flat_map(|s| s.points.iter().map(|p| p.0)).fold(
                    None,
                    |r: Option<(f64, f64)>, x| {
                        Some(r.map_or((x, x), |(a, b)| (a.min(x), b.max(x))))
                    },
                ) {
                    v.push(Series {
                        name: "memory-copy bandwidth (64 MiB)".into(),
                        points: vec![(x0, m), (x1, m)],
                        band: vec![],
                        dashed: true,
                    });
                }
                v
            },
        });
    }
    a.caveats.push("Over loopback the receiver copies every byte whatever the sender does (and MSG_ZEROCOPY's pages are copied on delivery), so the zero-copy semantics save the sender's copy only.".into());
}
