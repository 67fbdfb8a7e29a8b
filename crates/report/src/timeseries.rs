//! One test over time, as flent shows it first: each flow's goodput, round
//! trip, congestion window and retransmissions, and the probes' latency under
//! load, on one time axis (seconds from the start of the measured interval;
//! the warm-up is negative), in a self-contained HTML page
//! (`client --report DIR`).
//!
//! The per-flow series come from each TCP sender's `TCP_INFO`, read every
//! sample period by a thread of its own (`TestSpec::samples`): goodput is the
//! bytes the receiver acknowledged over each period. A test without them (UDP,
//! request/response, an iperf3 peer) shows each direction's interval rates.

use std::fmt::Write;

use netsonde_model::load::{FlowSamples, ProbeKind, TcpSample};
use netsonde_model::result::TestReport;
use netsonde_model::units::Nanos;

use crate::figure::{AxisUnit, PlotSpec, Series};
use crate::markup::esc;

/// Seconds from the start of the measured interval.
fn at(t: Nanos, warmup: Nanos) -> f64 {
    (t.0 as f64 - warmup.0 as f64) / 1e9
}

/// Every sending flow's samples (two or more), named by its end and number.
fn flows(r: &TestReport) -> Vec<(String, &FlowSamples)> {
    [("client", &r.client), ("server", &r.server)]
        .into_iter()
        .flat_map(|(name, s)| {
            s.tcp_samples
                .iter()
                .filter(|f| f.samples.len() >= 2)
                .map(move |f| (format!("flow {} ({name} sends)", f.flow), f))
        })
        .collect()
}

/// A series of one quantity per sample period of each flow: `value` of two
/// consecutive samples, at the later one's time.
fn per_flow(r: &TestReport, value: impl Fn(&TcpSample, &TcpSample) -> Option<f64>) -> Vec<Series> {
    flows(r)
        .into_iter()
        .map(|(name, f)| Series {
            name,
            points: f
                .samples
                .windows(2)
                .filter_map(|w| Some((at(w[1].t, r.spec.warmup), value(&w[0], &w[1])?)))
                .collect(),
            band: vec![],
            dashed: false,
        })
        .filter(|s| !s.points.is_empty())
        .collect()
}

fn plot(id: &str, title: &str, y_label: &str, y_unit: AxisUnit, series: Vec<Series>) -> PlotSpec {
    PlotSpec {
        id: id.into(),
        title: title.into(),
        x_label: "time from the start of the measured interval (s)".into(),
        y_label: y_label.into(),
        x_unit: AxisUnit::Seconds,
        y_unit,
        log_x: false,
        log_y: false,
        y_max: None,
        series,
    }
}

/// Goodput over time: per flow from its acknowledged bytes, else per
/// direction from the interval lines.
fn goodput(r: &TestReport) -> Option<PlotSpec> {
    let mut series = per_flow(r, |a, b| {
        let dt = b.t.0.checked_sub(a.t.0).filter(|d| *d > 0)? as f64 / 1e9;
        Some(b.bytes_acked.saturating_sub(a.bytes_acked) as f64 * 8.0 / dt)
    });
    if series.is_empty() {
        for dir in r.directions.iter().map(|d| d.dir) {
            let points: Vec<(f64, f64)> = r
                .intervals
                .iter()
                .filter(|i| i.dir == dir)
                .map(|i| (at(i.end, Nanos::ZERO), i.rate.bps()))
                .collect();
            if !points.is_empty() {
                series.push(Series {
                    name: format!("{} (interval lines)", dir.name()),
                    points,
                    band: vec![],
                    dashed: false,
                });
            }
        }
    }
    (!series.is_empty()).then(|| {
        plot(
            "goodput-time",
            "Goodput over time",
            "goodput (bit/s)",
            AxisUnit::BitRate,
            series,
        )
    })
}

/// The probes' round trips (a new connection's handshake) over time.
fn probes(r: &TestReport) -> Option<PlotSpec> {
    let load = r.load.as_ref()?;
    let warm = load.phases.measured_start;
    let series: Vec<Series> = ProbeKind::ALL
        .into_iter()
        .map(|k| Series {
            name: format!("{} probe", k.name()),
            points: load
                .probes
                .iter()
                .filter(|s| s.kind == k)
                .filter_map(|s| {
                    let v = if k == ProbeKind::Connect {
                        s.connect
                    } else {
                        s.rtt
                    };
                    Some((at(s.t, warm), v?.0 as f64 / 1e9))
                })
                .collect(),
            band: vec![],
            dashed: false,
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    (!series.is_empty()).then(|| {
        plot(
            "probes-time",
            "The probes' round trip under load (a new connection: its handshake)",
            "round trip",
            AxisUnit::Seconds,
            series,
        )
    })
}

/// Every time series the report has, goodput first.
pub fn plots(r: &TestReport) -> Vec<PlotSpec> {
    let mut out: Vec<PlotSpec> = goodput(r).into_iter().collect();
    let tcp = [
        (
            "rtt-time",
            "Smoothed round trip over time (TCP_INFO)",
            "round trip",
            AxisUnit::Seconds,
            per_flow(r, |_, b| Some(b.srtt.0 as f64 / 1e9)),
        ),
        (
            "cwnd-time",
            "Congestion window over time (TCP_INFO)",
            "congestion window (segments)",
            AxisUnit::Plain,
            per_flow(r, |_, b| Some(f64::from(b.cwnd))),
        ),
        (
            "retransmits-time",
            "Retransmitted segments per sample period (TCP_INFO)",
            "segments retransmitted",
            AxisUnit::Plain,
            per_flow(r, |a, b| {
                Some(b.retransmits.saturating_sub(a.retransmits) as f64)
            }),
        ),
    ];
    for (id, title, y, unit, series) in tcp {
        if !series.is_empty() {
            out.push(plot(id, title, y, unit, series));
        }
    }
    out.extend(probes(r));
    out
}

/// The test's page: its title, its figures over time, and the text report.
pub fn html(r: &TestReport, text: &str) -> String {
    let mut o = String::new();
    let title = format!(
        "netsonde {} {} against {}",
        r.spec.test,
        r.spec.direction.name(),
        r.server_address
    );
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\
         <style>{}pre{{overflow-x:auto;font-size:.8em}}</style></head><body>\n<h1>{}</h1>\n",
        esc(&title),
        crate::html::STYLE,
        esc(&title)
    );
    let figures = plots(r);
    let period = r.spec.sample_period();
    let _ = writeln!(
        o,
        "<h2>Over time</h2><p class=\"note\">Seconds from the start of the measured \
         interval (the warm-up is negative). {}</p><div class=\"plots\">",
        if r.client.tcp_samples.is_empty() && r.server.tcp_samples.is_empty() {
            "Per direction, from the interval lines: this test has no TCP sender to read \
             TCP_INFO from."
                .to_string()
        } else {
            format!(
                "Per flow, from each TCP sender's TCP_INFO read every {period} (goodput: \
                 the bytes its receiver acknowledged)."
            )
        }
    );
    for p in &figures {
        let _ = writeln!(
            o,
            "<div class=\"plot\" id=\"plot-{}\">{}</div>",
            esc(&p.id),
            crate::plot::svg(p)
        );
    }
    let _ = writeln!(
        o,
        "</div>\n<h2>The report</h2>\n<pre>{}</pre>\n</body></html>",
        esc(text)
    );
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use netsonde_model::load::TcpSample;

    fn sample(ms: u64, acked: u64, retrans: u64) -> TcpSample {
        TcpSample {
            t: Nanos::from_millis(ms),
            bytes_acked: acked,
            srtt: Nanos((100 + ms) * 1000),
            cwnd: 10 + ms as u32 / 100,
            retransmits: retrans,
        }
    }

    /// Two flows sampled every 100 ms after a 200 ms warm-up: one goodput,
    /// RTT, cwnd and retransmission series each, on the measured interval's
    /// clock.
    #[test]
    fn each_sending_flow_is_a_series_of_every_quantity() {
        let mut r = crate::fixture::stream_report();
        r.spec.warmup = Nanos::from_millis(200);
        r.client.tcp_samples = (0..2)
            .map(|flow| FlowSamples {
                flow,
                samples: (0..5)
                    .map(|k| sample(100 * k, 1_250_000 * k * u64::from(flow + 1), k))
                    .collect(),
            })
            .collect();
        let p = plots(&r);
        let ids: Vec<&str> = p.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(
            ids,
            ["goodput-time", "rtt-time", "cwnd-time", "retransmits-time"]
        );
        let g = &p[0].series;
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].name, "flow 0 (client sends)");
        // 1.25 MB per 100 ms is 100 Mbit/s; flow 1 twice that.
        assert_eq!(g[0].points[0], (-0.1, 100e6));
        assert_eq!(g[1].points[3], (0.2, 200e6));
        assert!(p[3].series[0].points.iter().all(|&(_, v)| v == 1.0));
        let page = html(&r, "text & report");
        assert!(page.contains("id=\"plot-cwnd-time\"") && page.contains("text &amp; report"));
    }

    /// Without samples, the interval lines per direction.
    #[test]
    fn a_test_without_samples_shows_its_interval_lines() {
        let r = crate::fixture::stream_report();
        let p = plots(&r);
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(p[0].id, "goodput-time");
        let names: Vec<&str> = p[0].series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "client->server (interval lines)",
                "server->client (interval lines)"
            ]
        );
        assert_eq!(p[0].series[0].points, [(5.0, 8e9), (10.0, 8e9)]);
    }
}
