//! The analysed view of a stored run: what every sweep renderer (HTML, Markdown,
//! CSV, JSON) shows. Built by [`RunView::build`], a pure function of the run's metadata
//! and points; renderers only format it.
//!
//! Configurations: points are grouped into lines by their axis values other than the
//! one on the x axis; a label names only the axes that vary in the run.

use std::collections::BTreeMap;

use crate::figure::AxisUnit;
pub use crate::figure::{PlotSpec, Series};
use netsonde_analysis::{
    diagnose, fit_linear, knee, predicted_throughput, theoretical_goodput, Bottleneck, CoreLoad,
    DiagnosisInput, LinearFit, L4,
};
use netsonde_model::host::HostFacts;
use netsonde_model::spec::TestSpec;
use netsonde_model::sweep::{PointSummary, Quality};
use serde::Serialize;

/// Run metadata.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunMeta {
    /// Run id in the store.
    pub id: i64,
    /// Label.
    pub label: String,
    /// Unix seconds.
    pub created_at: i64,
    /// netsonde version.
    pub tool_version: String,
    /// The command that made it.
    pub command: String,
    /// running, complete, interrupted, failed.
    pub status: String,
    /// Client host facts.
    pub client_host: Option<HostFacts>,
    /// Server host facts.
    pub server_host: Option<HostFacts>,
    /// Line rate for efficiency, bit/s.
    pub line_rate: Option<f64>,
    /// Repetitions per point.
    pub repeat: u32,
    /// The lab link (`netsonde lab run`), one line: spec, mechanism, detail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    /// The lab link's round trip (its configured delays both ways), ns.
    #[serde(default)]
    pub link_rtt_ns: Option<f64>,
    /// A mesh run's agents in some pair, in the mesh's order; empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mesh_agents: Vec<String>,
}

/// One point as stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PointView {
    /// Index.
    pub idx: u32,
    /// Axis values.
    pub axes: BTreeMap<String, String>,
    /// Its spec.
    pub spec: TestSpec,
    /// pending, done, skipped, failed.
    pub status: String,
    /// Why skipped or failed.
    pub reason: Option<String>,
    /// Statistics, once done.
    pub summary: Option<PointSummary>,
    /// What limited it: the verdict most of its repetitions got (each diagnosed
    /// from its full report), when known.
    #[serde(default)]
    pub diagnosis: Option<netsonde_analysis::Diagnosis>,
    /// In a loss-free rate search: what its trials found (so far, while pending).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<netsonde_model::search::SearchOutcome>,
}

impl PointView {
    /// The median of a metric.
    pub fn median(&self, metric: &str) -> Option<f64> {
        self.summary
            .as_ref()?
            .estimates
            .get(metric)
            .map(|e| e.median)
    }

    fn ci(&self, metric: &str) -> Option<(f64, f64)> {
        let e = self.summary.as_ref()?.estimates.get(metric)?;
        Some((e.ci_low?, e.ci_high?))
    }
}

/// A row of the outbound/inbound/bidirectional table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DirRow {
    /// Configuration without direction.
    pub config: String,
    /// Goodput by direction name (`out`, `in`, `bidir`), bit/s.
    pub goodput: BTreeMap<String, f64>,
    /// Client busy cores by direction.
    pub client_cpu: BTreeMap<String, f64>,
    /// Server busy cores by direction.
    pub server_cpu: BTreeMap<String, f64>,
}

/// One size of the latency model table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FitRow {
    /// Message size, bytes.
    pub size: f64,
    /// Measured one-way latency (half the ping-pong round trip), ns.
    pub measured_ns: f64,
    /// The fit at this size, ns.
    pub fitted_ns: f64,
    /// The one-in-flight bound of the fit, bit/s: B / (a·B + b), the throughput of one
    /// message at a time (stop and wait), a lower bound for a stream.
    pub predicted_bps: Option<f64>,
    /// Stream goodput measured at this size (same run), bit/s.
    pub measured_bps: Option<f64>,
}

/// The latency cost model `latency = a*B + b`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FitView {
    /// Which points it fits.
    pub config: String,
    /// The fit (slope ns/byte, intercept ns, R², residuals).
    pub fit: LinearFit,
    /// Estimated against actual.
    pub rows: Vec<FitRow>,
}

/// A knee: the smallest x that reaches a share of the best.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KneeRow {
    /// Configuration.
    pub config: String,
    /// `size` or `window`.
    pub axis: String,
    /// Best goodput, bit/s.
    pub max_bps: f64,
    /// Smallest x reaching 90%.
    pub at_90: Option<f64>,
    /// Smallest x reaching 95%.
    pub at_95: Option<f64>,
}

/// Efficiency and diagnosis of one stream point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EffRow {
    /// Point.
    pub idx: u32,
    /// Configuration including size.
    pub config: String,
    /// Goodput, bit/s.
    pub goodput: f64,
    /// Theoretical goodput at the line rate and MTU, bit/s.
    pub theoretical: Option<f64>,
    /// goodput / theoretical; `None` when the line rate is below the goodput
    /// (an input error, said in the diagnosis, never an efficiency above 100%).
    pub efficiency: Option<f64>,
    /// Bandwidth-delay product: the line rate times the path's round trip (the
    /// lab link's configured delay both ways; else the least RTT the senders
    /// measured), bytes; `None` without a line rate or a round trip.
    pub bdp: Option<f64>,
    /// The base round trip is below [`netsonde_model::result::HOST_RTT`]: RFC
    /// 6349's buffer delay is the host's own queueing, not a path buffer's.
    #[serde(default)]
    pub host_queueing: bool,
    /// What bounds it.
    pub bottleneck: Bottleneck,
    /// The evidence and advice behind it.
    pub diagnosis: Option<netsonde_analysis::Diagnosis>,
    /// RFC 6349 medians: TCP efficiency (%), buffer delay (%), transfer time ratio.
    #[serde(default)]
    pub rfc6349: [Option<f64>; 3],
}

/// The analysed run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunView {
    /// Metadata.
    pub run: RunMeta,
    /// Points.
    pub points: Vec<PointView>,
    /// MTU used for efficiency (client interface).
    pub mtu: Option<u64>,
    /// Outbound/inbound/bidirectional table.
    pub directions: Vec<DirRow>,
    /// Latency model.
    pub fit: Option<FitView>,
    /// Knees.
    pub knees: Vec<KneeRow>,
    /// Efficiencies.
    pub efficiency: Vec<EffRow>,
    /// Quality warnings: point, configuration, warning, hint.
    pub warnings: Vec<(u32, String, Quality, String)>,
    /// Plots.
    pub plots: Vec<PlotSpec>,
}

/// A searched point's frame size (RFC 2544's: payload, UDP, IPv4 and Ethernet)
/// and strategy.
pub fn search_key(p: &PointView) -> (u32, String) {
    (
        netsonde_model::search::frame_of(&p.spec) as u32,
        p.spec.rx_io.to_string(),
    )
}

/// A loss-free rate search's figures: per frame size, the loss each trial saw
/// against the rate it offered, one line per strategy; and NDR and PDR against
/// frame size, per strategy (the classic short-packet figure).
fn search_plots(points: &[PointView]) -> Vec<PlotSpec> {
    let searched: Vec<(&PointView, &netsonde_model::search::SearchOutcome)> = points
        .iter()
        .filter_map(|p| Some((p, p.search.as_ref()?)))
        .collect();
    if searched.is_empty() {
        return Vec::new();
    }
    let mut frames: Vec<u32> = searched.iter().map(|(p, _)| search_key(p).0).collect();
    frames.sort_unstable();
    frames.dedup();
    let mut ios: Vec<String> = searched.iter().map(|(p, _)| search_key(p).1).collect();
    ios.sort();
    ios.dedup();
    let mut plots = Vec::new();
    for &frame in &frames {
        let series = searched
            .iter()
            .filter(|(p, _)| search_key(p).0 == frame)
            .map(|(p, o)| {
                let mut pts: Vec<(f64, f64)> = o
                    .searches()
                    .flat_map(|x| &x.trials)
                    .map(|t| (t.offered_pps, t.loss_ratio()))
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                Series {
                    name: format!("--io {}", search_key(p).1),
                    points: pts,
                    band: Vec::new(),
                    dashed: false,
                }
            })
            .collect();
        plots.push(PlotSpec {
            id: format!("search-loss-{frame}"),
            title: format!("Loss against offered rate, {frame} B frames (every trial)"),
            x_label: "offered rate (packets/s)".into(),
            y_label: "loss (share of the datagrams sent)".into(),
            x_unit: AxisUnit::Plain,
            y_unit: AxisUnit::Fraction,
            log_x: false,
            log_y: false,
            y_max: Some(1.0),
            series,
        });
    }
    if frames.len() > 1 {
        let mut series = Vec::new();
        for io in &ios {
            for (goal, dashed) in [("NDR", false), ("PDR", true)] {
                let mut pts: Vec<(f64, f64)> = searched
                    .iter()
                    .filter(|(p, _)| &search_key(p).1 == io)
                    .filter_map(|(p, o)| {
                        let b = if dashed { o.pdr } else { o.ndr };
                        Some((f64::from(search_key(p).0), b.lower?))
                    })
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                if !pts.is_empty() {
                    series.push(Series {
                        name: format!("{goal} --io {io}"),
                        points: pts,
                        band: Vec::new(),
                        dashed,
                    });
                }
            }
        }
        plots.push(PlotSpec {
            id: "search-rate-frame".into(),
            title: "Loss-free rate (NDR) and partial-drop rate (PDR) against frame size".into(),
            x_label: "frame size (bytes)".into(),
            y_label: "offered rate (packets/s)".into(),
            x_unit: AxisUnit::Bytes,
            y_unit: AxisUnit::Plain,
            log_x: true,
            log_y: true,
            y_max: None,
            series,
        });
    }
    plots
}

fn human_size(v: &str) -> String {
    v.parse::<u64>()
        .map(|b| netsonde_model::units::Bytes(b).to_string().replace(' ', ""))
        .unwrap_or_else(|_| v.to_string())
}

/// Labels points by the axes that vary, leaving out `skip`.
struct Labeler {
    varying: Vec<String>,
}

impl Labeler {
    fn new(points: &[PointView]) -> Labeler {
        let mut values: BTreeMap<&str, std::collections::BTreeSet<&str>> = BTreeMap::new();
        for p in points {
            for (k, v) in &p.axes {
                values.entry(k).or_default().insert(v);
            }
        }
        Labeler {
            varying: values
                .into_iter()
                .filter(|(k, v)| v.len() > 1 || *k == "test")
                .map(|(k, _)| k.to_string())
                .collect(),
        }
    }

    fn label(&self, p: &PointView, skip: &[&str]) -> String {
        let mut parts = Vec::new();
        // The core axes in a fixed order, then any other axis (io, link axes) by name.
        const CORE: [&str; 5] = ["test", "direction", "size", "window", "parallel"];
        let others = self
            .varying
            .iter()
            .map(String::as_str)
            .filter(|k| !CORE.contains(k));
        for k in CORE.into_iter().chain(others) {
            if skip.contains(&k) || !self.varying.iter().any(|v| v == k) {
                continue;
            }
            let v = p.axes.get(k).map(String::as_str).unwrap_or("?");
            parts.push(match k {
                "size" => human_size(v),
                "window" if v == "default" => "w=default".into(),
                "window" => format!("w={}", human_size(v)),
                "parallel" => format!("P={v}"),
                "test" | "direction" | "io" => v.to_string(),
                // Lab link axes: rate in bit/s, delay in ns.
                "rate" if v == "0" => "rate=unlimited".into(),
                "rate" => v.parse::<f64>().map_or_else(
                    |_| format!("rate={v}"),
                    |r| format!("rate={}", netsonde_model::units::BitRate(r)).replace(' ', ""),
                ),
                "delay" => v.parse::<u64>().map_or_else(
                    |_| format!("delay={v}"),
                    |d| format!("delay={}", netsonde_model::units::Nanos(d)).replace(' ', ""),
                ),
                _ => format!("{k}={v}"),
            });
        }
        if parts.is_empty() {
            "all".into()
        } else {
            parts.join(" ")
        }
    }
}

/// Groups points into lines by label, in the order the labels first appear (the
/// plan's order: axis values ascending).
fn groups<'a>(
    pts: impl Iterator<Item = &'a PointView>,
    lab: &Labeler,
    skip: &[&str],
) -> Vec<(String, Vec<&'a PointView>)> {
    let mut g: Vec<(String, Vec<&PointView>)> = Vec::new();
    for p in pts {
        let l = lab.label(p, skip);
        match g.iter_mut().find(|(k, _)| *k == l) {
            Some((_, v)) => v.push(p),
            None => g.push((l, vec![p])),
        }
    }
    g
}

pub(crate) fn axis_num(p: &PointView, axis: &str) -> Option<f64> {
    p.axes.get(axis)?.parse().ok()
}

fn series(name: String, pts: &[&PointView], x_axis: &str, metric: &str, scale: f64) -> Series {
    let mut points: Vec<(f64, f64)> = Vec::new();
    let mut band = Vec::new();
    for p in pts {
        if let (Some(x), Some(y)) = (axis_num(p, x_axis), p.median(metric)) {
            points.push((x, y * scale));
            if let Some((lo, hi)) = p.ci(metric) {
                band.push((x, lo * scale, hi * scale));
            }
        }
    }
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    band.sort_by(|a, b| a.0.total_cmp(&b.0));
    Series {
        name,
        points,
        band,
        dashed: false,
    }
}

impl RunView {
    /// Analyses a run.
    pub fn build(run: RunMeta, points: Vec<PointView>) -> RunView {
        let lab = Labeler::new(&points);
        let done: Vec<&PointView> = points.iter().filter(|p| p.summary.is_some()).collect();
        let streams = || done.iter().copied().filter(|p| !p.spec.test.is_rr());
        let rrs = || done.iter().copied().filter(|p| p.spec.test.is_rr());
        // The client's interface, else the server's (a client that names its
        // server, as in the lab, records its facts before any connection).
        let mtu = [&run.client_host, &run.server_host]
            .into_iter()
            .filter_map(|h| h.as_ref()?.interface.as_ref())
            .map(|i| u64::from(i.mtu))
            .find(|&m| m > 0);
        let timestamps = run
            .client_host
            .as_ref()
            .and_then(|h| h.sysctls.get("net.ipv4.tcp_timestamps"))
            .is_none_or(|v| v != "0");
        let mut plots = Vec::new();

        // Throughput, CPU and service demand against size.
        let by_cfg = groups(streams(), &lab, &["size"]);
        let multi_size = by_cfg.iter().any(|(_, v)| v.len() > 1);
        if multi_size {
            plots.push(PlotSpec {
                id: "throughput-size".into(),
                title: "Throughput against message size".into(),
                x_label: "message size (bytes)".into(),
                y_label: "goodput (bit/s)".into(),
                x_unit: AxisUnit::Bytes,
                y_unit: AxisUnit::BitRate,
                log_x: true,
                log_y: false,
                y_max: None,
                series: by_cfg
                    .iter()
                    .map(|(k, v)| series(k.clone(), v, "size", "goodput", 1.0))
                    .collect(),
            });
            let mut cpu = Vec::new();
            let mut sd = Vec::new();
            // Both ends on one host read the same cores: one line, not two on
            // top of each other.
            let one_host = match (&run.client_host, &run.server_host) {
                (Some(c), Some(s)) => {
                    c.hostname == s.hostname && c.kernel == s.kernel && !c.kernel.is_empty()
                }
                _ => false,
            };
            for (k, v) in &by_cfg {
                if one_host {
                    cpu.push(series(
                        format!("{k} host (both ends)"),
                        v,
                        "size",
                        "client_busy_cores",
                        1.0,
                    ));
                } else {
                    cpu.push(series(
                        format!("{k} client"),
                        v,
                        "size",
                        "client_busy_cores",
                        1.0,
                    ));
                    cpu.push(series(
                        format!("{k} server"),
                        v,
                        "size",
                        "server_busy_cores",
                        1.0,
                    ));
                }
                sd.push(series(
                    format!("{k} client"),
                    v,
                    "size",
                    "client_us_per_kib",
                    1.0,
                ));
                sd.push(series(
                    format!("{k} server"),
                    v,
                    "size",
                    "server_us_per_kib",
                    1.0,
                ));
            }
            plots.push(PlotSpec {
                id: "cpu-size".into(),
                title: "CPU against message size (system-wide, both ends)".into(),
                x_label: "message size (bytes)".into(),
                y_label: "busy cores".into(),
                x_unit: AxisUnit::Bytes,
                y_unit: AxisUnit::Plain,
                log_x: true,
                log_y: false,
                y_max: None,
                series: cpu,
            });
            plots.push(PlotSpec {
                id: "service-demand-size".into(),
                title: "Service demand against message size".into(),
                x_label: "message size (bytes)".into(),
                y_label: "CPU us per KiB".into(),
                x_unit: AxisUnit::Bytes,
                y_unit: AxisUnit::Plain,
                log_x: true,
                log_y: false,
                y_max: None,
                series: sd,
            });
        }

        // The latency model, on the first RR configuration with several sizes.
        let rr_cfg = groups(rrs(), &lab, &["size"]);
        let mut fit = None;
        if let Some((cfg, pts)) = rr_cfg.iter().find(|(_, v)| v.len() >= 2) {
            let mut xy: Vec<(f64, f64)> = pts
                .iter()
                .filter_map(|p| Some((axis_num(p, "size")?, p.median("latency_p50")? / 2.0)))
                .collect();
            xy.sort_by(|a, b| a.0.total_cmp(&b.0));
            let (xs, ys): (Vec<f64>, Vec<f64>) = xy.iter().copied().unzip();
            if let Some(f) = fit_linear(&xs, &ys) {
                let stream_at = |size: f64| {
                    streams()
                        .filter(|p| p.axes.get("direction").map(String::as_str) == Some("out"))
                        .find(|p| axis_num(p, "size") == Some(size))
                        .and_then(|p| p.median("goodput"))
                };
                let rows = xy
                    .iter()
                    .map(|&(size, measured)| FitRow {
                        size,
                        measured_ns: measured,
                        fitted_ns: f.predict(size),
                        predicted_bps: predicted_throughput(&f, size),
                        measured_bps: stream_at(size),
                    })
                    .collect();
                let mut lat = vec![series(
                    format!("{cfg} measured (half RTT, p50)"),
                    pts,
                    "size",
                    "latency_p50",
                    0.5e-9,
                )];
                lat.push(Series {
                    name: format!("fit: {:.4} ns/B x B + {:.1} us", f.slope, f.intercept / 1e3),
                    points: xs.iter().map(|&x| (x, f.predict(x) / 1e9)).collect(),
                    band: vec![],
                    dashed: true,
                });
                plots.push(PlotSpec {
                    id: "latency-size".into(),
                    title: "Latency against message size, with the fitted line".into(),
                    x_label: "message size (bytes)".into(),
                    y_label: "one-way latency".into(),
                    x_unit: AxisUnit::Bytes,
                    y_unit: AxisUnit::Seconds,
                    log_x: false,
                    log_y: false,
                    y_max: None,
                    series: lat,
                });
                fit = Some(FitView {
                    config: cfg.clone(),
                    fit: f,
                    rows,
                });
            }
        }

        // Throughput against window.
        let by_win = groups(
            streams().filter(|p| axis_num(p, "window").is_some()),
            &lab,
            &["window"],
        );
        if by_win.iter().any(|(_, v)| v.len() > 1) {
            plots.push(PlotSpec {
                id: "throughput-window".into(),
                title: "Throughput against window".into(),
                x_label: "window (bytes)".into(),
                y_label: "goodput (bit/s)".into(),
                x_unit: AxisUnit::Bytes,
                y_unit: AxisUnit::BitRate,
                log_x: true,
                log_y: false,
                y_max: None,
                series: by_win
                    .iter()
                    .map(|(k, v)| series(k.clone(), v, "window", "goodput", 1.0))
                    .collect(),
            });
        }

        // Latency CDF from the percentiles of each RR point.
        let cdf: Vec<Series> = rrs()
            .filter_map(|p| {
                let q = [
                    ("latency_min", 0.0),
                    ("latency_p50", 0.5),
                    ("latency_p90", 0.9),
                    ("latency_p99", 0.99),
                    ("latency_p999", 0.999),
                ];
                let pts: Vec<(f64, f64)> = q
                    .iter()
                    .filter_map(|(m, f)| Some((p.median(m)? / 1e9, *f)))
                    .collect();
                (pts.len() >= 2).then(|| Series {
                    name: lab.label(p, &[]),
                    points: pts,
                    band: vec![],
                    dashed: false,
                })
            })
            .collect();
        if !cdf.is_empty() {
            plots.push(PlotSpec {
                id: "latency-cdf".into(),
                title: "Latency distribution (CDF from percentiles)".into(),
                x_label: "round-trip latency".into(),
                y_label: "fraction of transactions".into(),
                x_unit: AxisUnit::Seconds,
                y_unit: AxisUnit::Fraction,
                log_x: true,
                log_y: false,
                y_max: Some(1.0),
                series: cdf,
            });
        }

        // Outbound / inbound / bidirectional table.
        let mut directions = Vec::new();
        for (cfg, v) in groups(streams(), &lab, &["direction"]) {
            let mut row = DirRow {
                config: cfg,
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
            directions.push(row);
        }

        // Knees.
        let mut knees = Vec::new();
        for (axis, g) in [("size", &by_cfg), ("window", &by_win)] {
            for (cfg, v) in g.iter().filter(|(_, v)| v.len() > 1) {
                let xy: Vec<(f64, f64)> = v
                    .iter()
                    .filter_map(|p| Some((axis_num(p, axis)?, p.median("goodput")?)))
                    .collect();
                let max = xy.iter().map(|p| p.1).fold(0.0, f64::max);
                knees.push(KneeRow {
                    config: cfg.clone(),
                    axis: axis.into(),
                    max_bps: max,
                    at_90: knee(&xy, 0.90),
                    at_95: knee(&xy, 0.95),
                });
            }
        }

        // Efficiency and diagnosis per stream point.
        let efficiency = streams()
            .filter_map(|p| {
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
            })
            .collect();

        let warnings = done
            .iter()
            .flat_map(|p| {
                let cfg = lab.label(p, &[]);
                p.summary.as_ref().into_iter().flat_map(move |s| {
                    let cfg = cfg.clone();
                    s.quality
                        .iter()
                        .map(move |q| (p.idx, cfg.clone(), q.clone(), q.hint()))
                })
            })
            .collect();

        plots.extend(search_plots(&points));

        RunView {
            run,
            points,
            mtu,
            directions,
            fit,
            knees,
            efficiency,
            warnings,
            plots,
        }
    }

    /// How the points were measured, for the report's header: repetitions, or a
    /// loss-free rate search (whose trials are not repetitions of one setting).
    pub fn measured_as(&self) -> String {
        if self.points.iter().any(|p| p.search.is_some()) {
            "each point searched for its loss-free rate".into()
        } else {
            format!("{} repetitions per point", self.run.repeat)
        }
    }

    /// A point's label with every varying axis.
    pub fn label(&self, p: &PointView) -> String {
        Labeler::new(&self.points).label(p, &[])
    }
}
