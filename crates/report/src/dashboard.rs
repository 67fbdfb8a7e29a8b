//! `netsonde dashboard`'s pages, rendered on the server from the store (no
//! script, no build step): each monitor's grid of pairs per test coloured by
//! state against each pair's own normal, a pair's history as plots with its
//! baseline band and its degraded rounds marked, the runs with links to their
//! reports, and a form to compare two. Pure: the binary reads the store and
//! serves them.

use std::collections::BTreeMap;
use std::fmt::Write;

use netsonde_model::sweep::{Metric, Unit};
use netsonde_model::watch::{PairState, PairWatch};

use crate::figure::{AxisUnit, PlotSpec, Series};

const STYLE: &str = "body{font-family:sans-serif;margin:1.5em auto;max-width:1200px;color:#222}\
nav a{margin-right:1em}h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.4em}\
table{border-collapse:collapse;font-size:.9em;margin:.5em 0}td,th{border:1px solid #ccc;padding:4px 8px}\
th{background:#f0f0f0}td.cell{text-align:center;min-width:7em}td.cell a{color:inherit;text-decoration:none;display:block}\
td.ok{background:#d8f0d8}td.learning{background:#e6e9f2}td.degraded{background:#f7c873}\
td.failed{background:#e8837b;color:#fff}td.none{color:#bbb;text-align:center}\
.note{color:#555;font-size:.9em}.plots{display:flex;flex-wrap:wrap;gap:12px}pre{background:#f6f6f6;padding:1em;overflow:auto}";

/// `<`, `>`, `&` and quotes escaped.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A query string's value, escaped for a link.
fn q(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// A page with its title and the navigation.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t} — netsonde</title>\
         <style>{STYLE}</style></head><body>\n<nav><a href=\"/\">pairs</a><a href=\"/runs\">runs</a>\
         <a href=\"/compare\">compare</a></nav>\n<h1>{t}</h1>\n{body}</body></html>\n",
        t = esc(title)
    )
}

/// A metric's latest figure as a cell shows it.
fn figure(p: &PairWatch) -> String {
    p.metrics
        .first()
        .map(|m| show(&m.metric, m.latest))
        .unwrap_or_default()
}

/// A figure of a stored metric in its unit.
pub fn show(metric: &str, v: f64) -> String {
    use netsonde_model::units::{BitRate, Nanos};
    match Metric::from_name(metric).map(Metric::unit) {
        Some(Unit::BitRate) => BitRate(v).to_string(),
        Some(Unit::Nanos) => Nanos(v.max(0.0) as u64).to_string(),
        Some(Unit::Percent) => format!("{v:.2}%"),
        Some(Unit::UsPerKib) => format!("{v:.3} µs/KiB"),
        Some(Unit::Micros) => format!("{v:.2} µs"),
        Some(Unit::PerSecond) => format!("{v:.0}/s"),
        _ => format!("{v:.3}"),
    }
}

/// The grids of one monitor: a table per test, rows the source agent,
/// columns the destination, each cell its latest figure and state, linked to
/// the pair's history.
pub fn grids(label: &str, pairs: &[PairWatch], last_round: Option<i64>) -> String {
    let mut o = format!(
        "<section class=\"monitor\" data-monitor=\"{}\">",
        esc(label)
    );
    let _ = writeln!(
        o,
        "<h2>{}</h2><p class=\"note\">{} pair test(s); latest round {}. Colours: each pair \
         against its own normal (its past rounds): <span class=\"legend ok\">ok</span>, \
         learning (too few rounds yet), degraded (worse by more than counts), failed.</p>",
        esc(label),
        pairs.len(),
        last_round.map_or("-".into(), crate::dashboard::when)
    );
    let mut tests: Vec<&str> = Vec::new();
    for p in pairs {
        if !tests.contains(&p.test.as_str()) {
            tests.push(&p.test);
        }
    }
    for test in tests {
        let cells: BTreeMap<(&str, &str), &PairWatch> = pairs
            .iter()
            .filter(|p| p.test == test)
            .map(|p| ((p.src.as_str(), p.dst.as_str()), p))
            .collect();
        let mut names: Vec<&str> = Vec::new();
        for (s, d) in cells.keys() {
            for n in [*s, *d] {
                if !names.contains(&n) {
                    names.push(n);
                }
            }
        }
        names.sort_unstable();
        let _ = write!(
            o,
            "<h3>{}</h3><table class=\"grid\" data-test=\"{}\"><tr><th>from \\ to</th>",
            esc(test),
            esc(test)
        );
        for n in &names {
            let _ = write!(o, "<th>{}</th>", esc(n));
        }
        o.push_str("</tr>\n");
        for src in &names {
            let _ = write!(o, "<tr><th>{}</th>", esc(src));
            for dst in &names {
                match cells.get(&(*src, *dst)) {
                    None => o.push_str("<td class=\"none\">·</td>"),
                    Some(p) => {
                        let title = match &p.verdict {
                            Some(v) => format!("{}; limited by {v}", p.why),
                            None => p.why.clone(),
                        };
                        let _ = write!(
                            o,
                            "<td class=\"cell {state}\" data-src=\"{s}\" data-dst=\"{d}\" \
                             data-state=\"{state}\" title=\"{title}\"><a href=\"/pair?monitor={ql}\
                             &amp;src={qs}&amp;dst={qd}&amp;test={qt}\">{fig}<br><small>{state}</small></a></td>",
                            state = p.state.name(),
                            s = esc(&p.src),
                            d = esc(&p.dst),
                            title = esc(&title),
                            ql = q(label),
                            qs = q(&p.src),
                            qd = q(&p.dst),
                            qt = q(&p.test),
                            fig = esc(&figure(p)),
                        );
                    }
                }
            }
            o.push_str("</tr>\n");
        }
        o.push_str("</table>\n");
    }
    o.push_str("</section>\n");
    o
}

/// Unix seconds as `YYYY-MM-DD HH:MM UTC`.
pub fn when(unix: i64) -> String {
    let fmt = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute] UTC");
    time::OffsetDateTime::from_unix_timestamp(unix)
        .ok()
        .and_then(|t| t.format(&fmt).ok())
        .unwrap_or_else(|| unix.to_string())
}

/// A pair's history: a plot per metric (the latest figure of each round, its
/// normal's band at that round, the degraded rounds marked), then every round
/// with its state, verdict and why, linked to its run.
pub fn pair_history(history: &[PairWatch]) -> String {
    let Some(last) = history.last() else {
        return "<p>No round of this pair is stored.</p>".into();
    };
    let mut o = format!(
        "<p>Now: <b class=\"state\" data-state=\"{}\">{}</b>: {}</p>\n<div class=\"plots\">",
        last.state.name(),
        last.state.name(),
        esc(&last.why)
    );
    for m in &last.metrics {
        o.push_str(&format!(
            "<div class=\"plot\" data-metric=\"{}\">{}</div>",
            esc(&m.metric),
            crate::plot::svg(&history_plot(history, &m.metric))
        ));
    }
    o.push_str("</div>\n<table class=\"rounds\"><tr><th>round</th><th>run</th><th>started</th><th>state</th><th>limited by</th><th>why</th></tr>\n");
    for (i, p) in history.iter().enumerate().rev() {
        let _ = writeln!(
            o,
            "<tr data-state=\"{state}\"><td>{}</td><td><a href=\"/runs/{run}\">{run}</a></td><td>{}</td>\
             <td>{state}</td><td>{}</td><td>{}</td></tr>",
            i + 1,
            when(p.at_unix_s),
            esc(p.verdict.as_deref().unwrap_or("-")),
            esc(&p.why),
            run = p.run,
            state = p.state.name(),
        );
    }
    o.push_str("</table>\n");
    o
}

/// One metric of a pair over its rounds.
fn history_plot(history: &[PairWatch], metric: &str) -> PlotSpec {
    let m = Metric::from_name(metric);
    let (y_unit, scale) = match m.map(Metric::unit) {
        Some(Unit::BitRate) => (AxisUnit::BitRate, 1.0),
        Some(Unit::Nanos) => (AxisUnit::Seconds, 1e-9),
        _ => (AxisUnit::Plain, 1.0),
    };
    let mut latest = Series {
        name: format!("{metric} (each round)"),
        points: Vec::new(),
        band: Vec::new(),
        dashed: false,
    };
    let mut degraded = Series {
        name: "degraded rounds".into(),
        points: Vec::new(),
        band: Vec::new(),
        dashed: false,
    };
    for (i, p) in history.iter().enumerate() {
        let x = (i + 1) as f64;
        let Some(w) = p.metrics.iter().find(|w| w.metric == metric) else {
            continue;
        };
        latest.points.push((x, w.latest * scale));
        if let Some(b) = w.baseline {
            latest.band.push((x, b.low * scale, b.high * scale));
        }
        if p.state == PairState::Degraded && w.worse {
            degraded.points.push((x, w.latest * scale));
        }
    }
    let mut series = vec![latest];
    if !degraded.points.is_empty() {
        series.push(degraded);
    }
    PlotSpec {
        id: format!("history-{metric}"),
        title: format!("{metric}: each round, and its normal's range (band)"),
        x_label: "round".into(),
        y_label: metric.into(),
        x_unit: AxisUnit::Plain,
        y_unit,
        log_x: false,
        log_y: false,
        y_max: None,
        series,
    }
}

/// The stored runs, newest first: (id, started, label, status, points done,
/// points), each linked to its report.
pub fn runs(rows: &[(i64, i64, String, String, u64, u64)]) -> String {
    let mut o = String::from(
        "<table class=\"runs\"><tr><th>run</th><th>started</th><th>label</th><th>status</th><th>points</th></tr>\n",
    );
    for (id, at, label, status, done, total) in rows {
        let _ = writeln!(
            o,
            "<tr><td><a href=\"/runs/{id}\">{id}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{done}/{total}</td></tr>",
            when(*at),
            esc(label),
            esc(status)
        );
    }
    o.push_str("</table>\n");
    o
}

/// The compare form, and `result` (the comparison's text) under it.
pub fn compare(a: Option<&str>, b: Option<&str>, result: Option<&str>) -> String {
    let mut o = format!(
        "<form method=\"get\" action=\"/compare\">baseline run <input name=\"a\" value=\"{}\" size=\"6\"> \
         against run <input name=\"b\" value=\"{}\" size=\"6\"> <button>compare</button></form>\n",
        esc(a.unwrap_or_default()),
        esc(b.unwrap_or_default())
    );
    if let Some(r) = result {
        let _ = write!(o, "<pre class=\"comparison\">{}</pre>", esc(r));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use netsonde_model::watch::{Baseline, MetricWatch};

    fn pair(src: &str, dst: &str, state: PairState, latest: f64) -> PairWatch {
        PairWatch {
            src: src.into(),
            dst: dst.into(),
            test: "tcp-stream".into(),
            state,
            why: "within its normal".into(),
            verdict: Some("link-bound".into()),
            metrics: vec![MetricWatch {
                metric: "goodput".into(),
                latest,
                baseline: Some(Baseline {
                    median: 9.4e8,
                    low: 9.3e8,
                    high: 9.5e8,
                    rounds: 5,
                }),
                change: None,
                worse: state == PairState::Degraded,
            }],
            run: 7,
            at_unix_s: 1_700_000_000,
        }
    }

    #[test]
    fn the_grid_colours_each_pair_by_its_state_and_links_its_history() {
        let pairs = [
            pair("a", "b", PairState::Ok, 9.4e8),
            pair("b", "a", PairState::Degraded, 4.1e8),
            pair("a", "c", PairState::Failed, 0.0),
        ];
        let html = page("pairs", &grids("monitor", &pairs, Some(1_700_000_000)));
        assert_eq!(html.matches("class=\"cell degraded\"").count(), 1, "{html}");
        assert!(html.contains("data-src=\"b\" data-dst=\"a\" data-state=\"degraded\""));
        assert!(html
            .contains("href=\"/pair?monitor=monitor&amp;src=b&amp;dst=a&amp;test=tcp%2Dstream\""));
        assert!(!html.contains("<script"));
        assert_eq!(when(1_700_000_000), "2023-11-14 22:13 UTC");
    }

    #[test]
    fn a_pairs_history_plots_each_metric_with_its_band_and_marks_degraded_rounds() {
        let h = [
            pair("a", "b", PairState::Ok, 9.4e8),
            pair("a", "b", PairState::Ok, 9.5e8),
            pair("a", "b", PairState::Degraded, 4.0e8),
        ];
        let html = pair_history(&h);
        assert_eq!(html.matches("<svg").count(), 1);
        assert!(html.contains("degraded rounds"), "{html}");
        assert_eq!(html.matches("<tr data-state=").count(), 3);
    }
}
