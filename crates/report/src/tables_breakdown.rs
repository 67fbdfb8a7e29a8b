//! The sweep report's CPU-breakdown tables: each point's cost per category at
//! each end, and, where the message size varies, each category's cost per
//! message fitted as a·B + b (per byte against per message, as the host-stack
//! studies split copying from protocol work).

use std::collections::BTreeMap;

use netsonde_model::profile::Category;

use super::{t, Table};
use crate::view::{PointView, RunView, SideBreakdown};

/// The categories any point's breakdown has, in table order.
fn categories(points: &[(&PointView, &SideBreakdown)]) -> Vec<Category> {
    Category::ALL
        .into_iter()
        .filter(|c| {
            points
                .iter()
                .any(|(_, b)| b.categories.iter().any(|x| x.0 == *c))
        })
        .collect()
}

fn cost(b: &SideBreakdown, c: Category) -> f64 {
    b.categories.iter().find(|x| x.0 == c).map_or(0.0, |x| x.1)
}

/// Each point's and end's cost per category.
pub(super) fn breakdown_table(s: &RunView, out: &mut Vec<Table>) {
    let rows: Vec<(&PointView, &SideBreakdown)> = s
        .points
        .iter()
        .flat_map(|p| p.breakdown.iter().map(move |b| (p, b)))
        .collect();
    if rows.is_empty() {
        return;
    }
    let cats = categories(&rows);
    let mut headers = vec!["#", "configuration", "end", "reps", "total"];
    headers.extend(cats.iter().map(|c| c.label()));
    let body = rows
        .iter()
        .map(|(p, b)| {
            let mut r = vec![
                p.idx.to_string(),
                s.label(p),
                b.side.clone(),
                b.reps.to_string(),
                format!("{:.3} {}", b.total(), b.unit),
            ];
            r.extend(cats.iter().map(|&c| match cost(b, c) {
                v if v > 0.0 => format!("{v:.3}"),
                _ => "-".into(),
            }));
            r
        })
        .collect();
    out.push(t(
        "Where the CPU went",
        "Each end's flow threads' CPU per KiB moved (per transaction for request/response), split by their sampled call chains into the host-stack studies' categories (docs/CPU-BREAKDOWN.md); medians over the repetitions that took a breakdown. Per-byte work (copy, checksum) grows with the bytes; per-packet work (TCP/IP, netdev, skb, memory) falls per KiB with larger messages, GSO/GRO and a larger MTU.",
        &headers,
        body,
    ));
    fit_table(s, &rows, &cats, out);
}

/// Per configuration (every axis but the size) and end, each category's cost
/// per message fitted as a·B + b over the sizes.
fn fit_table(
    s: &RunView,
    rows: &[(&PointView, &SideBreakdown)],
    cats: &[Category],
    out: &mut Vec<Table>,
) {
    let mut groups: BTreeMap<(String, String), Vec<(f64, &SideBreakdown)>> = BTreeMap::new();
    for (p, b) in rows {
        if b.unit != "us/KiB" {
            continue;
        }
        let size = p.spec.size.0 as f64;
        groups
            .entry((s.label_without(p, &["size"]), b.side.clone()))
            .or_default()
            .push((size, b));
    }
    let mut body = Vec::new();
    for ((config, side), pts) in &groups {
        let sizes: std::collections::BTreeSet<u64> = pts.iter().map(|p| p.0 as u64).collect();
        if sizes.len() < netsonde_analysis::LinearFit::MIN_JUDGED {
            continue;
        }
        let xs: Vec<f64> = pts.iter().map(|p| p.0).collect();
        for &c in cats {
            // µs per message: µs/KiB × KiB per message.
            let ys: Vec<f64> = pts.iter().map(|(x, b)| cost(b, c) * x / 1024.0).collect();
            if ys.iter().all(|y| *y == 0.0) {
                continue;
            }
            let Some(f) = netsonde_analysis::fit_linear(&xs, &ys) else {
                continue;
            };
            body.push(vec![
                config.clone(),
                side.clone(),
                c.label().to_string(),
                format!("{:.4}", f.slope * 1024.0),
                format!("{:.3}", f.intercept),
                f.r2_text(),
            ]);
        }
    }
    if body.is_empty() {
        return;
    }
    out.push(t(
        "Cost per message by category",
        "Each category's µs per message fitted over the message sizes as a·B + b: a (µs per KiB) is the work each byte costs, b (µs) the work each message costs whatever its size. Copying and checksums are per byte; system calls, wake-ups and, with GSO/GRO, much of TCP/IP are per message.",
        &["configuration", "end", "category", "a (us/KiB)", "b (us/message)", "fit"],
        body,
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fixture sweep with a made-up breakdown at every stream point: a
    /// copy of 0.05 us/KiB and per-message work of 2 us, so the fit finds
    /// each where it is.
    fn sweep_with_breakdowns() -> RunView {
        let mut s = crate::fixture::sweep();
        for p in &mut s.points {
            if !p.spec.test.is_stream() {
                continue;
            }
            let kib = p.spec.size.0 as f64 / 1024.0;
            p.breakdown = vec![SideBreakdown {
                side: "client".into(),
                unit: "us/KiB",
                categories: vec![(Category::DataCopy, 0.05), (Category::Syscall, 2.0 / kib)],
                reps: 3,
            }];
        }
        s
    }

    #[test]
    fn each_point_gets_its_costs_and_the_fit_splits_per_byte_from_per_message() {
        let s = sweep_with_breakdowns();
        let tables = crate::tables::tables(&s);
        let t = tables
            .iter()
            .find(|t| t.title == "Where the CPU went")
            .expect("a breakdown table");
        assert_eq!(t.headers[5..], ["copy", "syscall"]);
        assert!(
            t.rows.iter().all(|r| r[2] == "client" && r[5] == "0.050"),
            "{:?}",
            t.rows
        );
        let fit = tables
            .iter()
            .find(|t| t.title == "Cost per message by category")
            .expect("a fit over the sizes");
        let copy = fit.rows.iter().find(|r| r[2] == "copy").unwrap();
        assert_eq!(
            (copy[3].as_str(), copy[4].as_str()),
            ("0.0500", "0.000"),
            "{copy:?}"
        );
        let sys = fit.rows.iter().find(|r| r[2] == "syscall").unwrap();
        assert_eq!(
            (sys[3].as_str(), sys[4].as_str()),
            ("0.0000", "2.000"),
            "{sys:?}"
        );
    }

    #[test]
    fn the_report_draws_a_bar_per_point_on_one_scale() {
        let s = sweep_with_breakdowns();
        let html = crate::html::render(&s);
        assert!(html.contains("<h2>Where the CPU went</h2>"));
        assert!(html.contains("id=\"breakdown-client\""));
        assert!(
            !html.contains("id=\"breakdown-server\""),
            "no server breakdown"
        );
        let bars = s.points.iter().filter(|p| !p.breakdown.is_empty()).count();
        assert_eq!(
            html.matches("<title>copy: 0.050 us/KiB</title>").count(),
            bars
        );
        let none = crate::html::render(&crate::fixture::sweep());
        assert!(!none.contains("Where the CPU went"));
    }
}
