//! The run's figures: throughput, CPU and service demand against size, the
//! latency model, throughput against window, the latency CDF, and a loss-free
//! rate search's.

use netsonde_analysis::{fit_linear, predicted_throughput};

use super::group::{axis_num, search_key, series, Labeler};
use super::{FitRow, FitView, PlotSpec, PointView, RunMeta, Series};
use crate::figure::AxisUnit;

/// Lines of points by configuration.
type Lines<'a> = [(String, Vec<&'a PointView>)];

/// Throughput, CPU and service demand against message size, when some
/// configuration has several sizes.
pub(crate) fn against_size(by_cfg: &Lines<'_>, run: &RunMeta) -> Vec<PlotSpec> {
    if !by_cfg.iter().any(|(_, v)| v.len() > 1) {
        return Vec::new();
    }
    // A panel per test when several were run: a UDP test paced at 1 Gbit/s
    // beside a TCP stream at 60 would sit on the floor of one shared axis.
    // An encrypted test shares its plain-TCP test's panel, on one y axis, so
    // what TLS and QUIC cost is seen at each size.
    let panel = |p: &PointView| p.spec.test.plain().unwrap_or(p.spec.test).name();
    let mut tests: Vec<&str> = Vec::new();
    for (_, v) in by_cfg {
        if let Some(p) = v.first() {
            let t = panel(p);
            if !tests.contains(&t) {
                tests.push(t);
            }
        }
    }
    let mut plots: Vec<PlotSpec> = tests
        .iter()
        .map(|&test| {
            // The panel's title names every test on it.
            let mut names: Vec<&str> = Vec::new();
            for (_, v) in by_cfg {
                if let Some(p) = v.first().filter(|p| panel(p) == test) {
                    if !names.contains(&p.spec.test.name()) {
                        names.push(p.spec.test.name());
                    }
                }
            }
            let (id, title) = if tests.len() > 1 {
                (
                    format!("throughput-size-{test}"),
                    format!("Throughput against message size: {}", names.join(", ")),
                )
            } else {
                (
                    "throughput-size".to_string(),
                    "Throughput against message size".to_string(),
                )
            };
            PlotSpec {
                id,
                title,
                x_label: "message size (bytes)".into(),
                y_label: "goodput (bit/s)".into(),
                x_unit: AxisUnit::Bytes,
                y_unit: AxisUnit::BitRate,
                log_x: true,
                log_y: false,
                y_max: None,
                series: by_cfg
                    .iter()
                    .filter(|(_, v)| v.first().is_some_and(|p| panel(p) == test))
                    .map(|(k, v)| series(k.clone(), v, "size", "goodput", 1.0))
                    .collect(),
            }
        })
        .collect();
    let mut cpu = Vec::new();
    let mut sd = Vec::new();
    // Both ends on one host read the same cores: one line, not two on top of
    // each other.
    let one_host = match (&run.client_host, &run.server_host) {
        (Some(c), Some(s)) => {
            c.hostname == s.hostname && c.kernel == s.kernel && !c.kernel.is_empty()
        }
        _ => false,
    };
    for (k, v) in by_cfg {
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
    plots
}

/// The latency model, on the first request/response configuration with three
/// sizes or more ([`netsonde_analysis::fit::LinearFit::MIN_JUDGED`]): half the median round trip against size, the line fitted to it, and
/// what the line predicts for a stream of each size beside what one measured.
pub(crate) fn latency_model(
    rr_cfg: &Lines<'_>,
    streams: &[&PointView],
) -> Option<(FitView, PlotSpec)> {
    // A line through two points fits them exactly and says nothing: a model
    // needs the sizes a fit can be judged on.
    let (cfg, pts) = rr_cfg
        .iter()
        .find(|(_, v)| v.len() >= netsonde_analysis::fit::LinearFit::MIN_JUDGED)?;
    let mut xy: Vec<(f64, f64)> = pts
        .iter()
        .filter_map(|p| Some((axis_num(p, "size")?, p.median("latency_p50")? / 2.0)))
        .collect();
    xy.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (xs, ys): (Vec<f64>, Vec<f64>) = xy.iter().copied().unzip();
    let f = fit_linear(&xs, &ys)?;
    let stream_at = |size: f64| {
        streams
            .iter()
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
    let lat = vec![
        series(
            format!("{cfg} measured (half RTT, p50)"),
            pts,
            "size",
            "latency_p50",
            0.5e-9,
        ),
        Series {
            name: format!("fit: {:.4} ns/B x B + {:.1} us", f.slope, f.intercept / 1e3),
            points: xs.iter().map(|&x| (x, f.predict(x) / 1e9)).collect(),
            band: vec![],
            dashed: true,
        },
    ];
    let plot = PlotSpec {
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
    };
    Some((
        FitView {
            config: cfg.clone(),
            fit: f,
            rows,
        },
        plot,
    ))
}

/// Throughput against window, when some configuration has several windows.
pub(crate) fn against_window(by_win: &Lines<'_>) -> Option<PlotSpec> {
    by_win.iter().any(|(_, v)| v.len() > 1).then(|| PlotSpec {
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
    })
}

/// The latency distribution, a CDF from the percentiles of each
/// request/response point.
pub(crate) fn latency_cdf(rrs: &[&PointView], lab: &Labeler) -> Option<PlotSpec> {
    let cdf: Vec<Series> = rrs
        .iter()
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
    (!cdf.is_empty()).then(|| PlotSpec {
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
    })
}

/// A loss-free rate search's figures: per frame size, the loss each trial saw
/// against the rate it offered, one line per strategy; and NDR and PDR against
/// frame size, per strategy (the classic short-packet figure).
pub(crate) fn search_plots(points: &[PointView]) -> Vec<PlotSpec> {
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
