//! CSV export: one row per point and metric (`netsonde runs export RUN --csv`).
//!
//! Columns: `point, test, direction, size, window, parallel, status, metric, n,
//! median, mean, ci_low, ci_high, ci_coverage, cv` (the interval is empty where
//! fewer than 3 repetitions give none). Points without a summary give one row with
//! empty metric columns, so skipped and failed points stay visible.

use std::fmt::Write;

use crate::study::Study;

fn field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Renders the CSV.
pub fn render(s: &Study) -> String {
    let mut o = String::from(
        "point,test,direction,size,window,parallel,status,metric,n,median,mean,ci_low,ci_high,ci_coverage,cv\n",
    );
    for p in &s.points {
        let ax = |k: &str| field(p.axes.get(k).map(String::as_str).unwrap_or(""));
        let head = format!(
            "{},{},{},{},{},{},{}",
            p.idx,
            ax("test"),
            ax("direction"),
            ax("size"),
            ax("window"),
            ax("parallel"),
            field(&p.status)
        );
        match &p.summary {
            Some(sum) => {
                for (m, e) in &sum.estimates {
                    let _ = writeln!(
                        o,
                        "{head},{},{},{},{},{},{},{},{}",
                        field(m),
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
                let _ = writeln!(o, "{head},,,,,,,,");
            }
        }
    }
    o
}

/// An optional number, empty when absent.
fn num(v: Option<f64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}
