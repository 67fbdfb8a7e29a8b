//! The sweep report's tables, built once from a [`RunView`] and rendered by both the
//! Markdown and the HTML writer.

use netsonde_model::sweep::Quality;
use netsonde_model::units::{BitRate, Bytes, Nanos, PacketRate};

use crate::view::{PointView, RunView};
use netsonde_model::search::SearchOutcome;

/// A titled table of text cells.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Title.
    pub title: String,
    /// A sentence under the title.
    pub note: String,
    /// Column headers.
    pub headers: Vec<String>,
    /// Rows.
    pub rows: Vec<Vec<String>>,
}

fn rate(v: f64) -> String {
    BitRate(v).to_string()
}

fn ns(v: f64) -> String {
    Nanos(v.max(0.0).round() as u64).to_string()
}

fn opt<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".into())
}

fn t(title: &str, note: &str, headers: &[&str], rows: Vec<Vec<String>>) -> Table {
    Table {
        title: title.into(),
        note: note.into(),
        headers: headers.iter().map(|h| h.to_string()).collect(),
        rows,
    }
}

/// Every table of the report, in order. Empty tables are left out.
pub fn tables(s: &RunView) -> Vec<Table> {
    let mut out = Vec::new();
    search_tables(s, &mut out);
    points_table(s, &mut out);
    directions_table(s, &mut out);
    fit_table(s, &mut out);
    knees_table(s, &mut out);
    efficiency_table(s, &mut out);
    breakdown::breakdown_table(s, &mut out);
    warnings_table(s, &mut out);
    out
}

#[path = "tables_breakdown.rs"]
mod breakdown;

/// A loss-free rate search's tables.
fn search_tables(s: &RunView, out: &mut Vec<Table>) {
    let searched: Vec<_> = s
        .points
        .iter()
        .filter_map(|p| Some((p, p.search.as_ref()?)))
        .collect();
    if searched.is_empty() {
        return;
    }
    search_bounds_tables(s, &searched, out);
    latency_at_rate_table(&searched, out);
}

/// Each search's bounds and rates, and every trial.
fn search_bounds_tables(
    s: &RunView,
    searched: &[(&PointView, &SearchOutcome)],
    out: &mut Vec<Table>,
) {
    let pps = |v: Option<f64>| opt(v, |v| PacketRate(v).to_string());
    // The link's frame rate at a point's frame size: its rate (the point's
    // own rate axis in the lab, else the run's line rate) over frame + gap.
    let link_pps = |p: &crate::view::PointView| {
        let bps = crate::view::axis_num(p, "rate")
            .filter(|r| *r > 0.0)
            .or(s.run.line_rate)?;
        let frame = crate::view::search_key(p).0 + netsonde_model::search::WIRE_GAP;
        Some(bps / (f64::from(frame) * 8.0))
    };
    let above = searched
        .iter()
        .any(|(p, o)| matches!((o.ndr.lower, link_pps(p)), (Some(n), Some(l)) if n > l));
    let rows = searched
        .iter()
        .map(|(p, o)| {
            let link = link_pps(p);
            let (frame, io) = crate::view::search_key(p);
            // Repeated searches: the median and range of their lower bounds
            // beside the first search's.
            let over = |goal, first: Option<f64>| {
                let mut v = o.lower_bounds(goal);
                if o.repeats.is_empty() || v.is_empty() {
                    return pps(first);
                }
                v.sort_by(f64::total_cmp);
                format!(
                    "{} (median of {}: {}, {} – {})",
                    pps(first),
                    v.len(),
                    PacketRate(v[v.len() / 2]),
                    PacketRate(v[0]),
                    PacketRate(v[v.len() - 1])
                )
            };
            vec![
                format!("{frame} B"),
                io,
                over(netsonde_model::search::Goal::Ndr, o.ndr.lower),
                pps(o.ndr.upper),
                over(netsonde_model::search::Goal::Pdr, o.pdr.lower),
                pps(link),
                match (o.ndr.lower, link) {
                    (Some(n), Some(l)) if n > l => {
                        format!("{:.1}% (above: see the note)", 100.0 * n / l)
                    }
                    (Some(n), Some(l)) => format!("{:.1}%", 100.0 * n / l),
                    _ => "-".into(),
                },
                o.searches()
                    .map(|x| x.trials.len())
                    .sum::<usize>()
                    .to_string(),
                match &o.back_to_back {
                    None => "-".into(),
                    Some(b) => match (b.lower, b.upper) {
                        (Some(l), None) => format!("≥ {l} (nothing lost)"),
                        (Some(l), Some(u)) => format!("{l} (lost at {u})"),
                        (None, Some(u)) => format!("none (lost at {u})"),
                        (None, None) => "-".into(),
                    },
                },
                if o.sender_bound {
                    "the sender: nothing lost unpaced".into()
                } else if o.converged {
                    "found".into()
                } else if p.status == "done" {
                    "not converged: trial budget spent".into()
                } else {
                    format!("{} (search unfinished)", p.status)
                },
            ]
        })
        .collect();
    let mut note = String::from("Per frame size and strategy: NDR, the highest offered rate at which a trial lost nothing (confirmed by repeats at that rate), the lowest rate that lost (the bound above it), and PDR, the highest with loss within the partial-drop ratio. Rates are datagrams per second as the sender sent them in the measured time. The link's rate: its frame rate at the size (its rate over frame + 20 B of preamble and gap), which no loss-free rate can pass for long; NDR/link, NDR's share of it. Back-to-back (when asked): the longest burst, in datagrams, sent at the sender's full rate that lost nothing. With repeated searches (--repeat), the first search's figures, and the median and range over all of them; the trials below are every search's.");
    if above {
        note.push_str(" An NDR above the link's rate passed because the link's queue and its shaper's burst absorbed the excess within one trial: the longer the trials (--trial), the less they can hide; the link's rate is the figure to quote.");
    }
    out.push(t(
        "Loss-free rate search",
        &note,
        &[
            "frame",
            "io",
            "NDR",
            "lost at",
            "PDR",
            "link's rate",
            "NDR/link",
            "trials",
            "back-to-back",
            "limit",
        ],
        rows,
    ));
    let rows = searched
        .iter()
        .flat_map(|(p, o)| {
            let (frame, io) = crate::view::search_key(p);
            o.searches()
                .flat_map(|x| &x.trials)
                .enumerate()
                .map(move |(k, tr)| {
                    vec![
                        format!("{frame} B"),
                        io.clone(),
                        (k + 1).to_string(),
                        tr.asked_pps
                            .map_or("unpaced".into(), |a| PacketRate(a).to_string()),
                        PacketRate(tr.offered_pps).to_string(),
                        format!("{:.3}%", 100.0 * tr.loss_ratio()),
                        opt(tr.rcvbuf_errors, |v| v.to_string()),
                        opt(tr.sndbuf_errors, |v| v.to_string()),
                    ]
                })
        })
        .collect();
    out.push(t(
        "Search trials",
        "Every trial in order: the rate asked, the rate the sender offered, the loss, and the kernel's drop counters over the trial (RcvbufErrors: a full receive buffer; SndbufErrors: a full send buffer or a queue on the sending host; '-' for a TCP search, whose loss is retransmissions).",
        &["frame", "io", "trial", "asked", "offered", "lost", "RcvbufErrors", "SndbufErrors"],
        rows,
    ));
}

/// Latency beside a load at shares of the NDR.
fn latency_at_rate_table(searched: &[(&PointView, &SearchOutcome)], out: &mut Vec<Table>) {
    let at = |v: Option<Nanos>| opt(v, |v| v.to_string());
    let rows: Vec<Vec<String>> = searched
        .iter()
        .flat_map(|(p, o)| {
            let (frame, io) = crate::view::search_key(p);
            o.latency.iter().map(move |l| {
                let loaded = l.loaded.as_ref();
                vec![
                    format!("{frame} B"),
                    io.clone(),
                    format!("{:.0}%", 100.0 * l.fraction),
                    PacketRate(l.trial.offered_pps).to_string(),
                    format!("{:.3}%", 100.0 * l.trial.loss_ratio()),
                    at(l.idle.as_ref().and_then(|p| p.p50)),
                    at(loaded.and_then(|p| p.p50)),
                    at(loaded.and_then(|p| p.p90)),
                    at(loaded.and_then(|p| p.p99)),
                    opt(l.one_way_idle_ms, |ms| ns(ms * 1e6)),
                    opt(l.one_way_ms, |ms| ns(ms * 1e6)),
                    opt(loaded, |p| format!("{} ({} lost)", p.answered, p.lost)),
                ]
            })
        })
        .collect();
    if !rows.is_empty() {
        out.push(t(
            "Latency at rate",
            "Latency beside a UDP load at a share of the NDR found (RFC 2544 §26.2 measures it at the throughput): UDP probes, each echoed by the server and stamped at both ends, 100 a second, first alone (idle) and then beside the load. Round-trip percentiles beside the load (the 99th from 100 answers on); one-way: the median delay in the load's direction, idle and loaded, where both ends read one clock. On a host whose cores idle between packets, a light load can show a longer round trip than a heavy one: waking an idle core costs tens of microseconds.",
            &["frame", "io", "of NDR", "load", "load lost", "idle p50", "p50", "p90", "p99", "one-way idle", "one-way", "probes"],
            rows,
        ));
    }
}

/// Every point: its medians with their intervals.
fn points_table(s: &RunView, out: &mut Vec<Table>) {
    let points = s
        .points
        .iter()
        .map(|p| {
            let est = |m: &str| p.summary.as_ref().and_then(|x| x.estimates.get(m));
            let with_ci = |m: &str, f: &dyn Fn(f64) -> String| {
                est(m)
                    .map(|e| match (e.ci_low, e.ci_high, e.ci_coverage) {
                        (Some(l), Some(h), Some(c)) => {
                            format!("{} [{} – {}, {:.0}%]", f(e.median), f(l), f(h), 100.0 * c)
                        }
                        _ => format!("{} (n = {}: too few for an interval)", f(e.median), e.n),
                    })
                    .unwrap_or_else(|| "-".into())
            };
            vec![
                p.idx.to_string(),
                s.label(p),
                p.status.clone(),
                opt(p.summary.as_ref(), |x| x.reps.to_string()),
                with_ci("goodput", &rate),
                with_ci("latency_p50", &ns),
                opt(est("transactions_per_sec"), |e| format!("{:.0}", e.median)),
                opt(est("client_busy_cores"), |e| format!("{:.2}", e.median)),
                opt(est("server_busy_cores"), |e| format!("{:.2}", e.median)),
                opt(
                    est("client_us_per_kib").or(est("client_us_per_trans")),
                    |e| format!("{:.3}", e.median),
                ),
                opt(est("goodput").or(est("transactions_per_sec")), |e| {
                    format!("{:.1}%", e.cv * 100.0)
                }),
                p.reason.clone().unwrap_or_default(),
            ]
        })
        .collect();
    out.push(t(
        "Points",
        "Medians over repetitions with distribution-free confidence intervals of the median and their coverage (75% with 3 repetitions, at least 95% from 6; none below 3); CPU is busy cores system-wide; service demand is the client test's own CPU (its flow threads and the host's interrupt time) in us per KiB (streams) or per transaction (RR).",
        &["#", "configuration", "status", "reps", "goodput", "latency p50", "trans/s", "client CPU", "server CPU", "service demand", "CV", "note"],
        points,
    ));
}

/// Outbound, inbound and bidirectional side by side.
fn directions_table(s: &RunView, out: &mut Vec<Table>) {
    if s.directions.iter().any(|d| !d.goodput.is_empty()) {
        let dirs = ["out", "in", "bidir"];
        let rows = s
            .directions
            .iter()
            .map(|d| {
                let mut r = vec![d.config.clone()];
                for k in dirs {
                    r.push(opt(d.goodput.get(k), |v| rate(*v)));
                }
                for k in dirs {
                    r.push(format!(
                        "{} / {}",
                        opt(d.client_cpu.get(k), |v| format!("{v:.2}")),
                        opt(d.server_cpu.get(k), |v| format!("{v:.2}"))
                    ));
                }
                r
            })
            .collect();
        out.push(t(
            "Outbound, inbound and bidirectional",
            "Goodput per direction (bidir: both directions summed) and busy cores client / server.",
            &[
                "configuration",
                "out",
                "in",
                "bidir",
                "CPU out",
                "CPU in",
                "CPU bidir",
            ],
            rows,
        ));
    }
}

/// The latency model's fit and what it predicts.
fn fit_table(s: &RunView, out: &mut Vec<Table>) {
    if let Some(f) = &s.fit {
        let rows = f
            .rows
            .iter()
            .map(|r| {
                vec![
                    Bytes(r.size as u64).to_string(),
                    ns(r.measured_ns),
                    ns(r.fitted_ns),
                    format!(
                        "{:+.1}%",
                        100.0 * (r.measured_ns - r.fitted_ns) / r.fitted_ns.max(1.0)
                    ),
                    opt(r.predicted_bps, rate),
                    opt(r.measured_bps, rate),
                ]
            })
            .collect();
        out.push(t(
            "Latency model",
            &format!(
                "{}: one-way latency (half the ping-pong p50) = {:.4} ns/B × B + {} ({}). The one-in-flight bound B / (a·B + b) is the throughput of one message at a time (stop and wait): a lower bound for a stream, which keeps many messages in flight, not a prediction of it.",
                f.config,
                f.fit.slope,
                ns(f.fit.intercept),
                f.fit.r2_text()
            ),
            &["size", "measured", "fitted", "residual", "one-in-flight bound", "measured stream throughput"],
            rows,
        ));
    }
}

/// Where throughput curves bend.
fn knees_table(s: &RunView, out: &mut Vec<Table>) {
    if !s.knees.is_empty() {
        let fmt = |axis: &str, v: Option<f64>| {
            opt(v, |x| {
                if axis == "size" || axis == "window" {
                    Bytes(x as u64).to_string()
                } else {
                    format!("{x}")
                }
            })
        };
        let rows = s
            .knees
            .iter()
            .map(|k| {
                let at = |v| {
                    if k.points < crate::view::KneeRow::MIN_POINTS {
                        format!("needs ≥ {} {}s", crate::view::KneeRow::MIN_POINTS, k.axis)
                    } else {
                        fmt(&k.axis, v)
                    }
                };
                vec![
                    k.config.clone(),
                    k.axis.clone(),
                    rate(k.max_bps),
                    at(k.at_90),
                    at(k.at_95),
                ]
            })
            .collect();
        out.push(t(
            "Knees",
            "The smallest size or window that reaches 90% and 95% of the best goodput.",
            &["configuration", "axis", "best", "90%", "95%"],
            rows,
        ));
    }
}

/// Each stream point against its line, and what limited it.
fn efficiency_table(s: &RunView, out: &mut Vec<Table>) {
    if !s.efficiency.is_empty() {
        let rows = s
            .efficiency
            .iter()
            .map(|e| {
                vec![
                    e.config.clone(),
                    rate(e.goodput),
                    opt(e.theoretical, rate),
                    opt(e.efficiency, efficiency),
                    opt(e.bdp, |b| Bytes(b as u64).to_string()),
                    opt(e.rfc6349[0], |x| format!("{x:.2}%")),
                    opt(e.rfc6349[1], |x| {
                        if e.host_queueing {
                            format!("{x:.0}% (host queueing)")
                        } else {
                            format!("{x:.0}%")
                        }
                    }),
                    opt(e.rfc6349[2], |x| format!("{x:.3}")),
                    match &e.diagnosis {
                        Some(d) => format!("{}: {}", d.bottleneck, d.evidence),
                        None => e.bottleneck.to_string(),
                    },
                ]
            })
            .collect();
        let note = match (s.run.line_rate, s.mtu) {
            (Some(r), Some(m)) => format!(
                "Theoretical goodput at {} and MTU {m} after Ethernet, IP and TCP/UDP overhead; \
                 BDP is the line rate times the path's round trip (the lab link's delays, else \
                 the least RTT the senders measured). A line rate below the goodput is an input \
                 error and gets no efficiency; an efficiency above 100% is shown as 100% with \
                 the figure measured: the goodput passed the ceiling computed with 38 B of \
                 framing per frame, which a shaper that charges its overhead once per GSO \
                 packet (htb) lets through by up to 1.6%.",
                rate(r)
            ),
            _ => "Give --line-rate to compare against a line rate (and get a BDP).".into(),
        }
            + " TCP efficiency, buffer delay and transfer time ratio are RFC 6349's (medians \
             over the repetitions): buffer delay is how much longer the average round trip \
             was than the base one, (RTT − base RTT) / base RTT, so 100% is a round trip \
             doubled by queueing. Over a base round trip under 100 us (loopback, a lab link \
             without delay) it is the host's own queueing in its socket buffers, not a path \
             buffer's, and runs to thousands of percent because its base is tiny: marked \
             'host queueing', it says nothing about a network. Each point's bottleneck is the \
             verdict most of its repetitions got, from their full reports (CPU per core and \
             per flow thread, TCP_INFO, loss).";
        out.push(t(
            "Efficiency and bottlenecks",
            &note,
            &[
                "configuration",
                "goodput",
                "theoretical",
                "efficiency",
                "BDP",
                "TCP efficiency",
                "buffer delay",
                "transfer time ratio",
                "bottleneck",
            ],
            rows,
        ));
    }
}

/// What the repetitions say about their own quality: a row per kind of
/// warning and advice, naming the points it hit, so that one hint is not
/// repeated down the table for every point (17 rows for 6 points, once).
fn warnings_table(s: &RunView, out: &mut Vec<Table>) {
    if s.warnings.is_empty() {
        return;
    }
    type Group<'a> = (
        std::mem::Discriminant<Quality>,
        &'a str,
        Vec<u32>,
        Vec<&'a str>,
        Vec<String>,
    );
    let mut groups: Vec<Group<'_>> = Vec::new();
    for (i, c, q, h) in &s.warnings {
        let kind = std::mem::discriminant(q);
        let g = match groups.iter_mut().position(|g| g.0 == kind && g.1 == h) {
            Some(at) => &mut groups[at],
            None => {
                groups.push((kind, h, Vec::new(), Vec::new(), Vec::new()));
                groups.last_mut().expect("just pushed")
            }
        };
        if !g.2.contains(i) {
            g.2.push(*i);
        }
        if !g.3.contains(&c.as_str()) {
            g.3.push(c);
        }
        g.4.push(q.to_string());
    }
    let rows = groups
        .into_iter()
        .map(|(_, hint, points, configs, said)| {
            let warning = match said.len() {
                1 => said[0].clone(),
                n => format!("{} (and {} more like it)", said[0], n - 1),
            };
            vec![
                points
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
                configs.join("; "),
                warning,
                hint.to_string(),
            ]
        })
        .collect();
    out.push(t(
        "Quality warnings",
        "One row per kind of warning: the points it hit, and the first of them said.",
        &["#", "configuration", "warning", "what to do"],
        rows,
    ));
}

/// An efficiency cell: at most 100%, with the figure measured when the goodput
/// passed the computed ceiling (see the table's note).
fn efficiency(x: f64) -> String {
    if x > 1.0 {
        format!("100.0% (measured {:.1}%)", x * 100.0)
    } else {
        format!("{:.1}%", x * 100.0)
    }
}
