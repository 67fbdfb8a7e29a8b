//! A pair's page: a plot per watched metric over time (each round's figure,
//! its normal's band at that round, the degraded rounds marked, the failed
//! rounds marked at the axis), then every round with its state, change,
//! verdict and why, linked to its run.

use std::fmt::Write;

use netsonde_model::sweep::{Metric, Unit};
use netsonde_model::watch::{MetricWatch, PairState, PairWatch};

use super::{change, esc, when};
use crate::figure::{AxisUnit, PlotSpec, Series};

/// The pair's history, oldest first, as its page shows it.
pub fn pair_history(history: &[PairWatch]) -> String {
    let Some(last) = history.last() else {
        return "<p>No round of this pair is stored.</p>".into();
    };
    let mut o = format!(
        "<p>Now: <b class=\"state {s}\" data-state=\"{s}\">{s}</b> {}: {}</p>\n<div class=\"plots\">",
        esc(&change(last.change)),
        esc(&last.why),
        s = last.state.name(),
    );
    // The metrics of the latest round that measured any: a failed round has none.
    let metrics: &[MetricWatch] = history
        .iter()
        .rev()
        .find(|p| !p.metrics.is_empty())
        .map_or(&[], |p| &p.metrics);
    for m in metrics {
        o.push_str(&format!(
            "<div class=\"plot\" data-metric=\"{}\">{}</div>",
            esc(&m.metric),
            crate::plot::svg(&history_plot(history, &m.metric))
        ));
    }
    o.push_str(
        "</div>\n<table class=\"rounds\"><tr><th>started</th><th>run</th><th>state</th>\
         <th>change</th><th>limited by</th><th>why</th></tr>\n",
    );
    for p in history.iter().rev() {
        let _ = writeln!(
            o,
            "<tr data-state=\"{state}\"><td>{}</td><td><a href=\"/runs/{run}\">{run}</a></td>\
             <td class=\"{state}\">{state}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>",
            when(p.at_unix_s),
            esc(&change(p.change)),
            esc(p.verdict.as_deref().unwrap_or("-")),
            esc(&p.why),
            run = p.run,
            state = p.state.name(),
        );
    }
    o.push_str("</table>\n");
    o
}

/// How a metric's figures are plotted: the axis unit, the scale from the
/// stored unit, and the unit named in the axis label.
fn axis(metric: Option<Metric>) -> (AxisUnit, f64, &'static str) {
    match metric.map(Metric::unit) {
        Some(Unit::BitRate) => (AxisUnit::BitRate, 1.0, "bit/s"),
        Some(Unit::Nanos) => (AxisUnit::Seconds, 1e-9, "s"),
        Some(Unit::Micros) => (AxisUnit::Seconds, 1e-6, "s"),
        Some(Unit::Percent) => (AxisUnit::Plain, 1.0, "%"),
        Some(Unit::UsPerKib) => (AxisUnit::Plain, 1.0, "µs per KiB"),
        Some(Unit::PerSecond) => (AxisUnit::Plain, 1.0, "per second"),
        _ => (AxisUnit::Plain, 1.0, "as stored"),
    }
}

fn series(name: &str) -> Series {
    Series {
        name: name.into(),
        points: Vec::new(),
        band: Vec::new(),
        dashed: false,
    }
}

/// One metric of a pair over its rounds, against their start times.
fn history_plot(history: &[PairWatch], metric: &str) -> PlotSpec {
    let (y_unit, scale, unit) = axis(Metric::from_name(metric));
    let mut latest = series(&format!("{metric} (each round)"));
    let mut degraded = series("degraded rounds");
    let mut failed = series("failed rounds");
    let mut floor = f64::INFINITY;
    for p in history {
        let x = p.at_unix_s as f64;
        let Some(w) = p.metrics.iter().find(|w| w.metric == metric) else {
            if p.state == PairState::Failed {
                failed.points.push((x, f64::NAN));
            }
            continue;
        };
        floor = floor.min(w.latest * scale);
        latest.points.push((x, w.latest * scale));
        if let Some(b) = w.baseline {
            latest.band.push((x, b.low * scale, b.high * scale));
            floor = floor.min(b.low * scale);
        }
        if p.state == PairState::Degraded && w.worse {
            degraded.points.push((x, w.latest * scale));
        }
    }
    // A failed round has no figure: marked at the bottom of the plot.
    let floor = if floor.is_finite() {
        floor.max(0.0)
    } else {
        0.0
    };
    for pt in &mut failed.points {
        pt.1 = floor;
    }
    let mut all = vec![latest];
    all.extend(
        [degraded, failed]
            .into_iter()
            .filter(|s| !s.points.is_empty()),
    );
    let from = history
        .first()
        .map_or_else(String::new, |p| when(p.at_unix_s));
    PlotSpec {
        id: format!("history-{metric}"),
        title: format!("{metric}: each round, and its normal (band)"),
        x_label: format!("time (UTC), from {from}"),
        y_label: format!("{metric} ({unit})"),
        x_unit: AxisUnit::Clock,
        y_unit,
        log_x: false,
        log_y: false,
        y_max: None,
        series: all,
    }
}
