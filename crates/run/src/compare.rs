//! `compare A B` from the store: matches the points of two runs, judges each
//! compared metric (or a search's NDR and PDR) and gives the typed
//! [`Comparison`] that `netsonde_report::compare` writes out.
//!
//! Points are matched by their axes. A matched pair whose full specs differ (an
//! `--io`, a duration, any option) is not judged and says which fields differ;
//! host facts that differ are named at the top. Each metric is tested with the
//! exact one-sided Mann–Whitney test on the repetitions, the whole comparison with
//! Holm's procedure at a 5% family level, and a change must also exceed its
//! metric's practical change, raised to a caller's floor if given. A percentile
//! on too few transactions is shown, not judged (`netsonde_analysis::compare`).

use std::collections::{BTreeMap, BTreeSet};

use netsonde_analysis::comparison::{
    Compared, Comparison, SearchComparison, SearchRow, SweepComparison,
};
use netsonde_model::host::HostFacts;
use netsonde_model::search::{frame_of, Goal, SearchConfig};
use netsonde_model::sweep::{Metric, Metrics};
use netsonde_model::units::PacketRate;
use netsonde_report::view::SideBreakdown;
use netsonde_store::{PointRow, RunId, Store};

use crate::PipelineError;

/// Metrics `compare` judges.
pub const COMPARED: [Metric; 6] = [
    Metric::Goodput,
    Metric::TransactionsPerSec,
    Metric::LatencyP50,
    Metric::LatencyP99,
    Metric::ClientUsPerKib,
    Metric::ServerUsPerKib,
];

/// Why two runs could not be compared.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// Reading either run failed.
    #[error(transparent)]
    Pipeline(#[from] PipelineError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] netsonde_store::StoreError),
    /// One is a search and the other a sweep.
    #[error("run {search} is a loss-free rate search and run {sweep} a sweep: compare a search with a search")]
    Mixed {
        /// The search.
        search: RunId,
        /// The sweep.
        sweep: RunId,
    },
    /// No point could be compared.
    #[error("runs {a} and {b} have no point with the same configuration and measured repetitions to compare{why}")]
    NoCommonPoint {
        /// The baseline.
        a: RunId,
        /// The run judged.
        b: RunId,
        /// Why, when some matched: ` (N matched by axes differ in their options)`.
        why: String,
    },
    /// No search point could be compared.
    #[error("searches {a} and {b} have no frame size and strategy with a loss-free rate found in both with the same options{why}")]
    NoCommonSearch {
        /// The baseline.
        a: RunId,
        /// The run judged.
        b: RunId,
        /// Why, when some matched.
        why: String,
    },
}

/// Compares run `b` against run `a`; `floor` raises every metric's practical
/// change (`compare --threshold`).
pub fn compare(
    store: &Store,
    a: RunId,
    b: RunId,
    floor: Option<f64>,
) -> Result<Comparison, CompareError> {
    let (sa, _) = crate::load(store, a)?;
    let (sb, _) = crate::load(store, b)?;
    let body = match (sa.search, sb.search) {
        (None, None) => Compared::Sweeps(sweeps(store, a, b, floor)?),
        (Some(ca), Some(cb)) => Compared::Searches(searches(store, (a, ca), (b, cb), floor)?),
        (Some(_), None) => {
            return Err(CompareError::Mixed {
                search: a,
                sweep: b,
            })
        }
        (None, Some(_)) => {
            return Err(CompareError::Mixed {
                search: b,
                sweep: a,
            })
        }
    };
    Ok(Comparison {
        a,
        b,
        warnings: differing_hosts(store, a, b)?,
        body,
    })
}

/// The host facts that change figures, as `name a vs b` for each that differs.
fn host_differences(a: Option<&HostFacts>, b: Option<&HostFacts>) -> Vec<String> {
    let (Some(a), Some(b)) = (a, b) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut diff = |name: &str, x: String, y: String| {
        if x != y {
            out.push(format!("{name} {x} vs {y}"));
        }
    };
    diff("kernel", a.kernel.clone(), b.kernel.clone());
    diff("CPU", a.cpu_model.clone(), b.cpu_model.clone());
    diff("cores", a.cores.to_string(), b.cores.to_string());
    for (k, va) in &a.sysctls {
        let vb = b.sysctls.get(k).cloned().unwrap_or_else(|| "unset".into());
        diff(k, va.clone(), vb);
    }
    // The interface the test ran over, named: a lab's sonde0 against a
    // host's lo says why the MTUs differ. Only when both runs recorded one.
    if let (Some(x), Some(y)) = (&a.interface, &b.interface) {
        if x.mtu != y.mtu {
            out.push(format!(
                "MTU {} ({}) vs {} ({})",
                x.mtu, x.name, y.mtu, y.name
            ));
        }
    }
    out
}

/// The fields of two point specs (JSON) that differ, as `field a vs b`.
fn spec_differences(a: &str, b: &str) -> Vec<String> {
    let (Ok(serde_json::Value::Object(a)), Ok(serde_json::Value::Object(b))) = (
        serde_json::from_str::<serde_json::Value>(a),
        serde_json::from_str::<serde_json::Value>(b),
    ) else {
        return if a == b {
            Vec::new()
        } else {
            vec!["the spec".into()]
        };
    };
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    let show = |v: Option<&serde_json::Value>| v.map_or("unset".to_string(), |v| v.to_string());
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| format!("{k} {} vs {}", show(a.get(k)), show(b.get(k))))
        .collect()
}

/// Warnings that the two runs' hosts or links differ, one sentence each.
fn differing_hosts(store: &Store, a: RunId, b: RunId) -> Result<Vec<String>, CompareError> {
    let (ra, rb) = (store.run(a)?, store.run(b)?);
    let host = |j: Option<&str>| j.and_then(|j| serde_json::from_str::<HostFacts>(j).ok());
    let mut out = Vec::new();
    for (side, x, y) in [
        (
            "client",
            host(Some(&ra.client_host_json)),
            host(Some(&rb.client_host_json)),
        ),
        (
            "server",
            host(ra.server_host_json.as_deref()),
            host(rb.server_host_json.as_deref()),
        ),
    ] {
        let d = host_differences(x.as_ref(), y.as_ref());
        if !d.is_empty() {
            out.push(format!(
                "the {side} hosts differ ({}): a change may come from that alone",
                d.join("; ")
            ));
        }
    }
    if ra.link_json != rb.link_json {
        out.push("the runs were measured over different links".into());
    }
    Ok(out)
}

/// A point's label: its axes as `name=value ...`; a mesh's pair first, as
/// `SRC -> DST:`.
fn label(p: &PointRow) -> String {
    serde_json::from_str::<BTreeMap<String, String>>(&p.axes_json)
        .map(|mut axes| {
            let pair = match (axes.remove("src"), axes.remove("dst")) {
                (Some(s), Some(d)) => format!("{s} -> {d}: "),
                (s, d) => {
                    axes.extend(s.map(|s| ("src".to_string(), s)));
                    axes.extend(d.map(|d| ("dst".to_string(), d)));
                    String::new()
                }
            };
            let rest: Vec<String> = axes.iter().map(|(k, v)| format!("{k}={v}")).collect();
            pair + &rest.join(" ")
        })
        .unwrap_or_else(|_| p.axes_json.clone())
}

/// Two sweeps: every compared metric of every point matched by its axes.
fn sweeps(
    store: &Store,
    a: RunId,
    b: RunId,
    floor: Option<f64>,
) -> Result<SweepComparison, CompareError> {
    let (pa, pb) = (store.points(a)?, store.points(b)?);
    let reps =
        |p: &PointRow| -> Vec<Metrics> { p.reps.iter().map(|r| r.metrics.clone()).collect() };
    let index: BTreeMap<&str, &PointRow> = pa.iter().map(|p| (p.axes_json.as_str(), p)).collect();
    let mut out = SweepComparison {
        rows: Vec::new(),
        not_comparable: Vec::new(),
        unmatched: 0,
        min_reps: usize::MAX,
        moved: Vec::new(),
    };
    for q in &pb {
        let Some(p) = index.get(q.axes_json.as_str()) else {
            out.unmatched += 1;
            continue;
        };
        let differs = spec_differences(&p.config_json, &q.config_json);
        if !differs.is_empty() {
            out.not_comparable
                .push(format!("{}: {}", label(q), differs.join("; ")));
            continue;
        }
        out.moved.extend(moved(&label(q), p, q));
        let (ra, rb) = (reps(p), reps(q));
        for m in COMPARED {
            if let Some(d) = netsonde_analysis::delta(m, &ra, &rb) {
                if d.not_judged.is_none() {
                    out.min_reps = out.min_reps.min(d.a.n).min(d.b.n);
                }
                out.rows.push((label(q), d));
            }
        }
    }
    if out.rows.is_empty() {
        let why = match out.not_comparable.len() {
            0 => String::new(),
            n => format!(" ({n} matched by axes differ in their options)"),
        };
        return Err(CompareError::NoCommonPoint { a, b, why });
    }
    let mut ds: Vec<netsonde_analysis::Delta> = out.rows.iter().map(|(_, d)| d.clone()).collect();
    netsonde_analysis::judge(&mut ds, netsonde_analysis::FAMILY_ALPHA, floor);
    for ((_, row), d) in out.rows.iter_mut().zip(ds) {
        *row = d;
    }
    Ok(out)
}

/// Per end, the category of the CPU breakdown that moved most between two
/// matched points, where both took one.
fn moved(
    label: &str,
    a: &PointRow,
    b: &PointRow,
) -> Vec<netsonde_analysis::comparison::CategoryMove> {
    let reports = |p: &PointRow| -> Vec<netsonde_model::result::TestReport> {
        p.reps
            .iter()
            .filter_map(|r| serde_json::from_str(&r.report_json).ok())
            .collect()
    };
    let (ra, rb) = (reports(a), reports(b));
    let (ra, rb): (Vec<_>, Vec<_>) = (ra.iter().collect(), rb.iter().collect());
    ["client", "server"]
        .iter()
        .filter_map(|side| {
            let x = SideBreakdown::of(side, &ra)?;
            let y = SideBreakdown::of(side, &rb)?;
            if x.unit != y.unit {
                return None;
            }
            let (category, ca, cb) =
                netsonde_analysis::comparison::CategoryMove::largest(&x.categories, &y.categories)?;
            Some(netsonde_analysis::comparison::CategoryMove {
                point: label.to_string(),
                side: side.to_string(),
                unit: x.unit,
                category,
                cost: (ca, cb),
                total: (x.total(), y.total()),
            })
        })
        .collect()
}

/// Two searches: per frame size and strategy, NDR and PDR, each point's
/// repeated searches (`search --repeat`) set against the other run's as
/// repetitions (`netsonde_analysis::search_delta`), judged together.
fn searches(
    store: &Store,
    (a, ca): (RunId, SearchConfig),
    (b, cb): (RunId, SearchConfig),
    floor: Option<f64>,
) -> Result<SearchComparison, CompareError> {
    let (sa, sb) = (crate::view(store, a)?, crate::view(store, b)?);
    let pdr_too = ca.loss_ratio == cb.loss_ratio;
    let mut out = SearchComparison {
        pdr_skipped: (!pdr_too).then_some((ca.loss_ratio, cb.loss_ratio)),
        rows: Vec::new(),
        unjudged: Vec::new(),
        unmatched: 0,
        min_reps: usize::MAX,
    };
    let mut not_comparable = 0;
    for q in &sb.points {
        let Some(qo) = &q.search else { continue };
        let Some(p) = sa.points.iter().find(|p| p.axes == q.axes) else {
            out.unmatched += 1;
            continue;
        };
        let Some(po) = &p.search else { continue };
        let key = format!("{} B {}", frame_of(&q.spec), q.spec.rx_io);
        let json = |s| serde_json::to_string(s).unwrap_or_default();
        let differs = spec_differences(&json(&p.spec), &json(&q.spec));
        if !differs.is_empty() {
            not_comparable += 1;
            out.unjudged.push(format!(
                "{key}: not compared (the options differ: {})",
                differs.join("; ")
            ));
            continue;
        }
        // Nothing lost in any search of either: the bounds are what the senders
        // reached unpaced, not a loss-free rate.
        if po.searches().chain(qo.searches()).all(|s| s.sender_bound) {
            out.unjudged.push(format!(
                "{key}: not judged: nothing was lost in any search, so the rates are the \
                 senders' unpaced ones ({} against {})",
                PacketRate(po.ndr.lower.unwrap_or(0.0)),
                PacketRate(qo.ndr.lower.unwrap_or(0.0))
            ));
            continue;
        }
        for goal in [Goal::Ndr, Goal::Pdr] {
            if goal == Goal::Pdr && !pdr_too {
                continue;
            }
            let (xa, xb) = (po.lower_bounds(goal), qo.lower_bounds(goal));
            if let Some(delta) = netsonde_analysis::search_delta(goal, &xa, &xb) {
                out.min_reps = out.min_reps.min(xa.len()).min(xb.len());
                out.rows.push(SearchRow {
                    key: key.clone(),
                    values: [xa, xb],
                    delta,
                });
            }
        }
    }
    if out.rows.is_empty() {
        let why = if not_comparable > 0 {
            format!(" ({not_comparable} differ in their options)")
        } else if !out.unjudged.is_empty() {
            format!(" ({} lost nothing in any search)", out.unjudged.len())
        } else {
            String::new()
        };
        return Err(CompareError::NoCommonSearch { a, b, why });
    }
    let mut ds: Vec<netsonde_analysis::SearchDelta> =
        out.rows.iter().map(|r| r.delta.clone()).collect();
    netsonde_analysis::judge_searches(&mut ds, netsonde_analysis::FAMILY_ALPHA, floor);
    for (r, d) in out.rows.iter_mut().zip(ds) {
        r.delta = d;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::host_differences;
    use netsonde_model::host::{HostFacts, InterfaceFacts};

    /// An MTU that differs is named with its interface; one a run did not
    /// record is no difference (a compare once said "MTU ? vs 65536").
    #[test]
    fn mtus_differ_by_interface_and_an_unrecorded_one_is_no_difference() {
        let on = |name: &str, mtu| HostFacts {
            interface: Some(InterfaceFacts {
                name: name.into(),
                mtu,
                ..InterfaceFacts::default()
            }),
            ..HostFacts::default()
        };
        let d = host_differences(Some(&on("sonde0", 1500)), Some(&on("lo", 65536)));
        assert_eq!(d, vec!["MTU 1500 (sonde0) vs 65536 (lo)".to_string()]);
        let none = HostFacts::default();
        assert!(host_differences(Some(&none), Some(&on("lo", 65536))).is_empty());
    }
}
