//! CSV export: one row per point and metric (`netsonde runs export RUN --csv`).
//!
//! Columns: `point, test, direction, size, window, parallel`, every other option of
//! the point (`tx_io, rx_io, request_size, response_size, mss, nodelay, congestion,
//! rate, duration_ns, warmup_ns, verify, client_affinity, server_affinity`), the
//! link (`mtu` — the point's, else the client interface's — and the lab's `rate_link,
//! delay, loss` axes), then `status, metric, unit, n, median, mean, ci_low, ci_high,
//! ci_coverage, cv` (values in the base unit the `unit` column names, unrounded;
//! the interval is empty where fewer than 3 repetitions give
//! none). Points without a summary give one row with
//! empty metric columns, so skipped and failed points stay visible.

use std::fmt::Write;

use crate::view::RunView;

fn field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The options of every point beside its axes, so rows that differ only in an
/// option (an I/O strategy, pacing, the time) never look alike.
const CONFIG: &str = "tx_io,rx_io,request_size,response_size,mss,nodelay,congestion,rate,duration_ns,warmup_ns,verify,client_affinity,server_affinity";

/// Renders the CSV.
pub fn render(s: &RunView) -> String {
    let mut o = format!(
        "point,test,direction,size,window,parallel,{CONFIG},mtu,rate_link,delay,loss,queue,status,metric,unit,n,median,mean,ci_low,ci_high,ci_coverage,cv\n"
    );
    for p in &s.points {
        let ax = |k: &str| field(p.axes.get(k).map(String::as_str).unwrap_or(""));
        let sp = &p.spec;
        let o_ = |v: Option<String>| field(&v.unwrap_or_default());
        let head = format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            p.idx,
            ax("test"),
            ax("direction"),
            ax("size"),
            ax("window"),
            ax("parallel"),
            sp.tx_io.name(),
            sp.rx_io.name(),
            sp.request_size.0,
            sp.response_size.0,
            o_(sp.mss.map(|m| m.to_string())),
            sp.nodelay,
            o_(sp.congestion.clone()),
            o_(sp.rate.map(|r| r.bps().to_string())),
            sp.duration.0,
            sp.warmup.0,
            sp.verify,
            o_(Some(
                sp.client_affinity
                    .iter()
                    .map(|c| c.to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            )),
            o_(Some(
                sp.server_affinity
                    .iter()
                    .map(|c| c.to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            )),
            o_(p.axes
                .get("mtu")
                .cloned()
                .or_else(|| s.mtu.map(|m| m.to_string()))),
            ax("rate"),
            ax("delay"),
            ax("loss"),
            ax("queue"),
            field(&p.status),
        );
        match &p.summary {
            Some(sum) => {
                for (m, e) in &sum.estimates {
                    let _ = writeln!(
                        o,
                        "{head},{},{},{},{},{},{},{},{},{}",
                        field(m),
                        netsonde_model::sweep::Metric::from_name(m)
                            .map_or("", |m| m.unit().symbol()),
                        e.n,
                        e.median,
                        e.mean,
                        num(e.ci_low),
                        num(e.ci_high),
                        num(e.ci_coverage),
                        e.cv
                    );
                }
            }
            None => {
                let _ = writeln!(o, "{head},,,,,,,,,");
            }
        }
    }
    o
}

/// An optional number, empty when absent.
fn num(v: Option<f64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}
