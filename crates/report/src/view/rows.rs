//! The run's tables: outbound, inbound and bidirectional side by side, the
//! knees of throughput curves, each stream point's efficiency and diagnosis, and
//! the quality warnings.

use std::collections::BTreeMap;

use netsonde_analysis::{
    diagnose, knee, theoretical_goodput, Bottleneck, CoreLoad, DiagnosisInput, L4,
};
use netsonde_model::sweep::Quality;

use super::group::{axis_num, Labeler};
use super::{DirRow, EffRow, KneeRow, PointView, RunMeta};

/// Lines of points by configuration.
type Lines<'a> = [(String, Vec<&'a PointView>)];

/// Each configuration's goodput and CPU by direction.
pub(crate) fn directions(by_dir: &Lines<'_>) -> Vec<DirRow> {
    by_dir
        .iter()
        .map(|(cfg, v)| {
            let mut row = DirRow {
                config: cfg.clone(),
                goodput: BTreeMap::new(),
                client_cpu: BTreeMap::new(),
                server_cpu: BTreeMap::new(),
            };
            for p in v {
                let d = p.axes.get("direction").cloned().unwrap_or_default();
                if let Some(g) = p.median("goodput") {
                    row.goodput.insert(d.clone(), g);
                }
                if let Some(c) = p.median("client_busy_cores") {
                    row.client_cpu.insert(d.clone(), c);
                }
                if let Some(c) = p.median("server_busy_cores") {
                    row.server_cpu.insert(d, c);
                }
            }
            row
        })
        .collect()
}

/// Where each curve against size or window reaches 90% and 95% of its top.
pub(crate) fn knees(by_cfg: &Lines<'_>, by_win: &Lines<'_>) -> Vec<KneeRow> {
    let mut knees = Vec::new();
    for (axis, g) in [("size", by_cfg), ("window", by_win)] {
        for (cfg, v) in g.iter().filter(|(_, v)| v.len() > 1) {
            let xy: Vec<(f64, f64)> = v
                .iter()
                .filter_map(|p| Some((axis_num(p, axis)?, p.median("goodput")?)))
                .collect();
            let max = xy.iter().map(|p| p.1).fold(0.0, f64::max);
            // Two points make no curve to bend: no knee is claimed.
            let curve = xy.len() >= KneeRow::MIN_POINTS;
            knees.push(KneeRow {
                config: cfg.clone(),
                axis: axis.into(),
                max_bps: max,
                at_90: knee(&xy, 0.90).filter(|_| curve),
                at_95: knee(&xy, 0.95).filter(|_| curve),
                points: xy.len(),
            });
        }
    }
    knees
}

/// What the efficiency table needs of the run beside a point.
pub(crate) struct Line<'a> {
    pub(crate) run: &'a RunMeta,
    /// The interface's MTU.
    pub(crate) mtu: Option<u64>,
    /// Whether TCP carries timestamps (12 bytes of each segment).
    pub(crate) timestamps: bool,
}

/// A stream point's goodput against what its line could carry, and what
/// limited it.
pub(crate) fn efficiency(p: &PointView, lab: &Labeler, at: &Line<'_>) -> Option<EffRow> {
    let (run, mtu, timestamps) = (at.run, at.mtu, at.timestamps);

    let goodput = p.median("goodput")?;
    let l4 = if p.spec.test.is_tcp() {
        L4::Tcp { timestamps }
    } else {
        L4::Udp
    };
    // In the lab, a point's own link (MTU, rate axes) is its line.
    let line = axis_num(p, "rate").filter(|r| *r > 0.0).or(run.line_rate);
    let mtu = axis_num(p, "mtu").map(|m| m as u64).or(mtu);
    let theoretical = match (line, mtu) {
        (Some(r), Some(m)) => {
            let per_dir = theoretical_goodput(r, m, l4);
            Some(
                if p.spec.direction == netsonde_model::spec::Direction::Bidir {
                    2.0 * per_dir
                } else {
                    per_dir
                },
            )
        }
        _ => None,
    };
    let rtt = p.median("srtt");
    let diagnosis = p.diagnosis.clone().unwrap_or_else(|| {
        diagnose(&DiagnosisInput {
            goodput_bps: goodput,
            line_rate_bps: line,
            theoretical_bps: theoretical,
            client_core: p.median("client_cpu_max_core").map(CoreLoad::busy),
            server_core: p.median("server_cpu_max_core").map(CoreLoad::busy),
            window_bytes: p.spec.window.map(|w| w.0 as f64),
            rtt_ns: rtt,
            loss_pct: p.median("loss"),
            paced_bps: p.spec.rate.map(|r| r.bps() * f64::from(p.spec.parallel)),
            spec: Some(p.spec.clone()),
            ..DiagnosisInput::default()
        })
    });
    let input_error = matches!(
        diagnosis.bottleneck,
        Bottleneck::LineRateBelowGoodput { .. }
    );
    // The path's round trip, as RFC 6349 defines the BDP's: the lab
    // link's own delays when it has them, else the least RTT the
    // senders measured (never the smoothed RTT under load, which is
    // the queue's as much as the path's).
    let path_rtt = axis_num(p, "delay")
        .map(|d| 2.0 * d)
        .or(run.link_rtt_ns)
        .or(p.median("base_rtt"));
    Some(EffRow {
        idx: p.idx,
        config: lab.label(p, &[]),
        goodput,
        theoretical,
        efficiency: theoretical.filter(|_| !input_error).map(|t| goodput / t),
        bdp: line
            .zip(path_rtt)
            .map(|(r, t)| netsonde_analysis::bdp_bytes(r, t)),
        host_queueing: p
            .median("base_rtt")
            .is_some_and(|b| b < netsonde_model::result::HOST_RTT.0 as f64),
        bottleneck: diagnosis.bottleneck.clone(),
        diagnosis: Some(diagnosis),
        rfc6349: [
            p.median("tcp_efficiency"),
            p.median("buffer_delay"),
            p.median("transfer_time_ratio"),
        ],
    })
}

/// Each point's quality warnings: (point, configuration, warning, hint).
pub(crate) fn warnings(done: &[&PointView], lab: &Labeler) -> Vec<(u32, String, Quality, String)> {
    done.iter()
        .flat_map(|p| {
            let cfg = lab.label(p, &[]);
            p.summary.as_ref().into_iter().flat_map(move |s| {
                let cfg = cfg.clone();
                s.quality
                    .iter()
                    .map(move |q| (p.idx, cfg.clone(), q.clone(), q.hint()))
            })
        })
        .collect()
}
