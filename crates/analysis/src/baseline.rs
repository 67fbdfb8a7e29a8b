//! A pair's latest round against its own normal (`netsonde monitor`): the
//! baseline is the median of its past rounds' medians and their range; the
//! latest is worse only when it is past both the practical change `compare`
//! uses for the metric ([`crate::practical_change`]) and everything the past
//! rounds did. A pair whose normal spreads wide is judged by that spread, not
//! by a fixed number; one with too few past rounds is still learning.

use netsonde_model::sweep::Metric;
use netsonde_model::watch::{Baseline, MetricWatch};

/// The fewest past rounds that make a normal.
pub const MIN_ROUNDS: usize = 3;

/// For a metric whose normal is zero (loss, retransmissions): how far above
/// the highest past round the latest must be to count, in the metric's unit
/// (loss is in percent: a tenth of a point).
fn absolute_floor(metric: Metric) -> f64 {
    match metric {
        Metric::Loss => 0.1,
        Metric::Retransmits => 10.0,
        _ => 0.0,
    }
}

/// The baseline of `past` (oldest first): `None` below [`MIN_ROUNDS`].
pub fn baseline(past: &[f64]) -> Option<Baseline> {
    let mut v: Vec<f64> = past.iter().copied().filter(|x| x.is_finite()).collect();
    if v.len() < MIN_ROUNDS {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    Some(Baseline {
        median,
        low: v[0],
        high: v[n - 1],
        rounds: n,
    })
}

/// The latest figure of `metric` against the rounds before it.
pub fn judge(metric: Metric, past: &[f64], latest: f64) -> MetricWatch {
    let base = baseline(past);
    let change = base
        .filter(|b| b.median.abs() > f64::EPSILON)
        .map(|b| (latest - b.median) / b.median);
    let worse = base.is_some_and(|b| {
        let t = crate::practical_change(metric);
        if metric.higher_is_better() {
            latest < b.median * (1.0 - t) && latest < b.low
        } else if b.median.abs() <= f64::EPSILON {
            latest > b.high + absolute_floor(metric)
        } else {
            latest > b.median * (1.0 + t) && latest > b.high
        }
    });
    MetricWatch {
        metric: metric.name().into(),
        latest,
        baseline: base,
        change,
        worse,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drop_past_the_threshold_and_the_past_range_is_worse() {
        let past = [9.41e9, 9.38e9, 9.45e9, 9.40e9];
        let w = judge(Metric::Goodput, &past, 4.7e9);
        assert!(w.worse, "{w:?}");
        assert!((w.change.unwrap() + 0.5).abs() < 0.01);
        // Within 5% of the normal: not worse, however far from its range.
        assert!(!judge(Metric::Goodput, &past, 9.2e9).worse);
        // Better is not worse.
        assert!(!judge(Metric::Goodput, &past, 12e9).worse);
    }

    /// A pair whose normal spreads wide is judged by that spread.
    #[test]
    fn a_wide_normal_takes_a_larger_drop() {
        let past = [5e9, 9e9, 7e9, 8e9, 6e9];
        assert!(!judge(Metric::Goodput, &past, 5.5e9).worse);
        assert!(judge(Metric::Goodput, &past, 4.0e9).worse);
    }

    #[test]
    fn latency_cpu_and_loss_are_worse_when_higher() {
        let past = [50e3, 52e3, 49e3];
        assert!(judge(Metric::LatencyP99, &past, 80e3).worse);
        // Tail latency needs 20%.
        assert!(!judge(Metric::LatencyP99, &past, 58e3).worse);
        let none = [0.0, 0.0, 0.0];
        assert!(!judge(Metric::Loss, &none, 0.05).worse);
        assert!(judge(Metric::Loss, &none, 2.0).worse);
    }

    #[test]
    fn too_few_rounds_is_no_judgement() {
        let w = judge(Metric::Goodput, &[9e9, 9e9], 1e9);
        assert!(w.baseline.is_none() && !w.worse);
        assert_eq!(baseline(&[1.0, 3.0, 2.0, 4.0]).unwrap().median, 2.5);
    }
}
