//! The quality of one point of a sweep, judged from its repetitions:
//! [`point_quality`] raises the [`Quality`] warnings that apply, and
//! [`estimate_all`] summarises every metric as an [`Estimate`].
//!
//! Thresholds, in one place:
//!
//! | warning | when |
//! |---|---|
//! | [`Quality::TooFewRepetitions`] | fewer than [`MIN_REPETITIONS`] |
//! | [`Quality::HighVariance`] | CV of the primary metric above [`MAX_CV`] |
//! | [`Quality::NotSteady`] | median `interval_cv` above [`MAX_INTERVAL_CV`] |
//! | [`Quality::CpuSaturated`] | median busiest core at or above [`CPU_SATURATED_PCT`] |
//! | [`Quality::KernelCappedWindow`] | median `window_granted` below twice the request |

use std::collections::{BTreeMap, BTreeSet};

use netsonde_model::sweep::{Estimate, Metric, Metrics, Quality};

use crate::stats::{estimate, reps_needed};

/// Fewest repetitions that give a confidence interval worth the name.
pub const MIN_REPETITIONS: usize = 3;

/// Largest acceptable coefficient of variation of the primary metric across
/// repetitions.
pub const MAX_CV: f64 = 0.10;

/// Relative CI half-width that [`Quality::HighVariance`] advises repeating for.
pub const TARGET_REL_HALF_WIDTH: f64 = 0.05;

/// Largest acceptable median coefficient of variation of interval rates within a
/// repetition.
pub const MAX_INTERVAL_CV: f64 = 0.15;

/// Busy share of one core, in percent, from which an end counts as CPU-saturated.
pub const CPU_SATURATED_PCT: f64 = 95.0;

/// The values of one metric over the repetitions that have it.
fn values(reps: &[Metrics], metric: Metric) -> Vec<f64> {
    reps.iter().filter_map(|m| m.value(metric)).collect()
}

/// The median of one metric over the repetitions that have it.
fn median(reps: &[Metrics], metric: Metric) -> Option<f64> {
    estimate(&values(reps, metric)).map(|e| e.median)
}

/// The metric whose spread decides [`Quality::HighVariance`]: `goodput` when any
/// repetition has it, else `transactions_per_sec`.
fn primary_metric(reps: &[Metrics]) -> Metric {
    if reps.iter().any(|m| m.value(Metric::Goodput).is_some()) {
        Metric::Goodput
    } else {
        Metric::TransactionsPerSec
    }
}

/// Quality warnings for one point from its repetitions' metrics (all of the same
/// point), in this order:
///
/// - [`Quality::TooFewRepetitions`] `{ n, need: 3 }` if n < 3;
/// - [`Quality::HighVariance`] `{ metric, cv, need: reps_needed(cv, 0.05) }` for the
///   point's primary metric (`goodput` if present, else `transactions_per_sec`) if
///   its CV exceeds 0.10;
/// - [`Quality::NotSteady`] `{ cv }` if the median of `interval_cv` exceeds 0.15;
/// - [`Quality::CpuSaturated`] `{ side, busy }` if the median of
///   `{side}_cpu_max_core` is at least 95%, for the client, then the server;
/// - [`Quality::KernelCappedWindow`] `{ requested, granted }` if a window was
///   requested and the median `window_granted` is under twice the request (Linux
///   doubles what `setsockopt` asks for, so an uncapped grant is `2·w`).
///
/// A metric that no repetition has raises no warning.
pub fn point_quality(reps: &[Metrics], requested_window: Option<u64>) -> Vec<Quality> {
    let mut out = Vec::new();
    let n = reps.len();
    if n < MIN_REPETITIONS {
        out.push(Quality::TooFewRepetitions {
            n,
            need: MIN_REPETITIONS,
        });
    }
    let metric = primary_metric(reps);
    if let Some(e) = estimate(&values(reps, metric)) {
        if e.cv > MAX_CV {
            out.push(Quality::HighVariance {
                metric: metric.name().to_string(),
                cv: e.cv,
                need: reps_needed(e.cv, TARGET_REL_HALF_WIDTH),
            });
        }
    }
    if let Some(cv) = median(reps, Metric::IntervalCv) {
        if cv > MAX_INTERVAL_CV {
            out.push(Quality::NotSteady { cv });
        }
    }
    for (side, max_core) in [
        ("client", Metric::ClientCpuMaxCore),
        ("server", Metric::ServerCpuMaxCore),
    ] {
        if let Some(busy) = median(reps, max_core) {
            if busy >= CPU_SATURATED_PCT {
                out.push(Quality::CpuSaturated {
                    side: side.to_string(),
                    busy,
                });
            }
        }
    }
    if let Some(requested) = requested_window {
        if let Some(granted) = median(reps, Metric::WindowGranted) {
            if granted < 2.0 * requested as f64 {
                out.push(Quality::KernelCappedWindow {
                    requested,
                    granted: granted.max(0.0).round() as u64,
                });
            }
        }
    }
    out
}

/// An [`Estimate`] for every metric present in any repetition, over the repetitions
/// that have it, keyed by metric name. Metrics with no finite value are left out.
pub fn estimate_all(reps: &[Metrics]) -> BTreeMap<String, Estimate> {
    let present: BTreeSet<Metric> = reps.iter().flat_map(|m| m.iter().map(|(k, _)| k)).collect();
    present
        .into_iter()
        .filter_map(|m| Some((m.name().to_string(), estimate(&values(reps, m))?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rep(pairs: &[(&str, f64)]) -> Metrics {
        pairs
            .iter()
            .map(|&(k, v)| (Metric::from_name(k).expect("a metric's name"), v))
            .collect()
    }

    /// Five calm repetitions that raise no warning.
    fn calm() -> Vec<Metrics> {
        [9.40e9, 9.41e9, 9.39e9, 9.40e9, 9.42e9]
            .iter()
            .map(|&g| {
                rep(&[
                    ("goodput", g),
                    ("interval_cv", 0.02),
                    ("client_cpu_max_core", 60.0),
                    ("server_cpu_max_core", 70.0),
                    ("window_granted", 8_388_608.0),
                ])
            })
            .collect()
    }

    fn set(reps: &mut [Metrics], metric: &str, vals: &[f64]) {
        for (m, &v) in reps.iter_mut().zip(vals) {
            m.set(Metric::from_name(metric).expect("a metric's name"), v);
        }
    }

    #[test]
    fn calm_point_has_no_warnings() {
        assert_eq!(point_quality(&calm(), Some(4_194_304)), vec![]);
    }

    #[test]
    fn too_few_repetitions() {
        let reps = &calm()[..2];
        assert_eq!(
            point_quality(reps, None),
            vec![Quality::TooFewRepetitions { n: 2, need: 3 }]
        );
    }

    #[test]
    fn high_variance_in_goodput() {
        let mut reps = calm();
        set(&mut reps, "goodput", &[5e9, 9e9, 7e9, 9.4e9, 6e9]);
        let q = point_quality(&reps, None);
        let [Quality::HighVariance { metric, cv, need }] = q.as_slice() else {
            panic!("{q:?}");
        };
        assert_eq!(metric, "goodput");
        assert!(*cv > 0.10);
        assert_eq!(*need, reps_needed(*cv, 0.05));
    }

    #[test]
    fn high_variance_falls_back_to_transactions() {
        let reps: Vec<Metrics> = [10_000.0, 20_000.0, 15_000.0]
            .iter()
            .map(|&t| rep(&[("transactions_per_sec", t)]))
            .collect();
        let q = point_quality(&reps, None);
        assert!(
            matches!(q.as_slice(), [Quality::HighVariance { metric, .. }] if metric == "transactions_per_sec"),
            "{q:?}"
        );
    }

    #[test]
    fn not_steady() {
        let mut reps = calm();
        set(&mut reps, "interval_cv", &[0.3, 0.2, 0.05, 0.25, 0.1]);
        assert_eq!(
            point_quality(&reps, None),
            vec![Quality::NotSteady { cv: 0.2 }]
        );
    }

    #[test]
    fn cpu_saturated_on_each_side() {
        let mut reps = calm();
        set(
            &mut reps,
            "server_cpu_max_core",
            &[99.0, 97.0, 100.0, 98.0, 80.0],
        );
        assert_eq!(
            point_quality(&reps, None),
            vec![Quality::CpuSaturated {
                side: "server".into(),
                busy: 98.0
            }]
        );
        set(&mut reps, "client_cpu_max_core", &[95.0; 5]);
        let q = point_quality(&reps, None);
        assert_eq!(q.len(), 2);
        assert!(matches!(&q[0], Quality::CpuSaturated { side, .. } if side == "client"));
    }

    #[test]
    fn kernel_capped_window() {
        // Asked for 64 MiB; the kernel granted 8 MiB (as reported, doubled).
        let q = point_quality(&calm(), Some(64 << 20));
        assert_eq!(
            q,
            vec![Quality::KernelCappedWindow {
                requested: 64 << 20,
                granted: 8 << 20
            }]
        );
    }

    #[test]
    fn every_warning_at_once_in_order() {
        let reps: Vec<Metrics> = [1e9, 3e9]
            .iter()
            .map(|&g| {
                rep(&[
                    ("goodput", g),
                    ("interval_cv", 0.5),
                    ("client_cpu_max_core", 100.0),
                    ("server_cpu_max_core", 100.0),
                    ("window_granted", 1000.0),
                ])
            })
            .collect();
        let kinds: Vec<&str> = point_quality(&reps, Some(1000))
            .iter()
            .map(|q| match q {
                Quality::TooFewRepetitions { .. } => "few",
                Quality::HighVariance { .. } => "variance",
                Quality::NotSteady { .. } => "steady",
                Quality::CpuSaturated { .. } => "cpu",
                Quality::KernelCappedWindow { .. } => "window",
            })
            .collect();
        assert_eq!(kinds, ["few", "variance", "steady", "cpu", "cpu", "window"]);
    }

    #[test]
    fn estimate_all_covers_the_union_of_metrics() {
        let reps = vec![
            rep(&[("goodput", 1.0), ("retransmits", 0.0)]),
            rep(&[("goodput", 3.0)]),
            rep(&[("goodput", 2.0), ("srtt", 5000.0)]),
        ];
        let all = estimate_all(&reps);
        assert_eq!(
            all.keys().collect::<Vec<_>>(),
            ["goodput", "retransmits", "srtt"]
        );
        assert_eq!(all["goodput"].n, 3);
        assert_eq!(all["goodput"].median, 2.0);
        assert_eq!(all["srtt"].n, 1);
        assert!(estimate_all(&[]).is_empty());
    }
}
