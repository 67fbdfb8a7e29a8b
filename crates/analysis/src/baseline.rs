//! A pair's latest round against its own normal (`netsonde monitor`): the
//! baseline is the median of its past rounds' medians and a band around it,
//! as wide as the larger of the practical change `compare` uses for the
//! metric ([`crate::practical_change`]) and three robust standard deviations
//! of the past rounds (1.4826 × their median absolute deviation, which one
//! odd round does not widen as it would a range or a standard deviation). The
//! latest is worse only outside the band on the worse side. A pair whose
//! normal spreads wide is judged by that spread, not by a fixed number; one
//! with too few past rounds is still learning.

use netsonde_model::sweep::Metric;
use netsonde_model::watch::{Baseline, MetricWatch};

/// The fewest past rounds that make a normal: a median absolute deviation
/// of fewer says little about the spread.
pub const MIN_ROUNDS: usize = 5;

/// How many robust standard deviations from the median still count as
/// normal: for a normal spread, 3 leaves one round in 370 outside by chance.
const SPREADS: f64 = 3.0;

/// The median absolute deviation's factor to a standard deviation's scale
/// for normally distributed figures.
const MAD_TO_SD: f64 = 1.4826;

/// For a metric whose normal is zero (loss, retransmissions): how far above
/// the median the latest must be to count, in the metric's unit (loss is in
/// percent: a tenth of a point).
fn absolute_floor(metric: Metric) -> f64 {
    match metric {
        Metric::Loss => 0.1,
        Metric::Retransmits => 10.0,
        _ => 0.0,
    }
}

/// The baseline of `metric` over `past` (oldest first): `None` below
/// [`MIN_ROUNDS`].
pub fn baseline(metric: Metric, past: &[f64]) -> Option<Baseline> {
    let mut v: Vec<f64> = past.iter().copied().filter(|x| x.is_finite()).collect();
    if v.len() < MIN_ROUNDS {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let median = crate::stats::median_of_sorted(&v);
    let mut dev: Vec<f64> = v.iter().map(|x| (x - median).abs()).collect();
    dev.sort_by(f64::total_cmp);
    let spread = MAD_TO_SD * crate::stats::median_of_sorted(&dev);
    let half = (crate::practical_change(metric) * median.abs())
        .max(SPREADS * spread)
        .max(absolute_floor(metric));
    Some(Baseline {
        median,
        low: median - half,
        high: median + half,
        spread,
        rounds: v.len(),
    })
}

/// The latest figure of `metric` against the rounds before it.
pub fn judge(metric: Metric, past: &[f64], latest: f64) -> MetricWatch {
    let base = baseline(metric, past);
    let change = base
        .filter(|b| b.median.abs() > f64::EPSILON)
        .map(|b| (latest - b.median) / b.median);
    let worse = base.is_some_and(|b| {
        if metric.higher_is_better() {
            latest < b.low
        } else {
            latest > b.high
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

/// How much worse than its normal `w` is, relative and positive (0.9: 90%
/// below a normal that is better higher); 0 when it is not worse, `None`
/// without a normal or when the normal is zero.
pub fn worse_ratio(metric: Metric, w: &MetricWatch) -> Option<f64> {
    let c = w.change?;
    if !w.worse {
        return Some(0.0);
    }
    Some(if metric.higher_is_better() { -c } else { c }.max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drop_past_the_threshold_and_the_band_is_worse() {
        let past = [9.41e9, 9.38e9, 9.45e9, 9.40e9, 9.43e9];
        let w = judge(Metric::Goodput, &past, 4.7e9);
        assert!(w.worse, "{w:?}");
        assert!((w.change.unwrap() + 0.5).abs() < 0.01);
        // Within 5% of the normal: not worse, however far from its range.
        assert!(!judge(Metric::Goodput, &past, 9.2e9).worse);
        // Better is not worse.
        assert!(!judge(Metric::Goodput, &past, 12e9).worse);
        let w = judge(Metric::Goodput, &past, 4.7e9);
        assert!((worse_ratio(Metric::Goodput, &w).unwrap() - 0.5).abs() < 0.01);
    }

    /// One odd round in the normal does not widen the band for good, as the
    /// past rounds' range did: a drop to where that round was is still worse.
    #[test]
    fn one_odd_round_does_not_widen_the_band() {
        let past = [9.4e9, 9.41e9, 3.0e9, 9.38e9, 9.42e9, 9.4e9];
        let b = baseline(Metric::Goodput, &past).unwrap();
        assert!(b.low > 8.5e9, "{b:?}");
        assert!(judge(Metric::Goodput, &past, 4.0e9).worse);
    }

    /// A pair whose normal spreads wide is judged by that spread.
    #[test]
    fn a_wide_normal_takes_a_larger_drop() {
        let past = [5e9, 9e9, 7e9, 8e9, 6e9];
        // Median 7e9, MAD 1e9: the band reaches 7e9 - 3 × 1.4826e9.
        assert!(!judge(Metric::Goodput, &past, 3.0e9).worse);
        assert!(judge(Metric::Goodput, &past, 2.0e9).worse);
    }

    #[test]
    fn latency_cpu_and_loss_are_worse_when_higher() {
        let past = [50e3, 52e3, 49e3, 50e3, 51e3];
        assert!(judge(Metric::LatencyP99, &past, 80e3).worse);
        // Tail latency needs 20%.
        assert!(!judge(Metric::LatencyP99, &past, 58e3).worse);
        let none = [0.0; 5];
        assert!(!judge(Metric::Loss, &none, 0.05).worse);
        assert!(judge(Metric::Loss, &none, 2.0).worse);
    }

    #[test]
    fn too_few_rounds_is_no_judgement() {
        let w = judge(Metric::Goodput, &[9e9; 4], 1e9);
        assert!(w.baseline.is_none() && !w.worse);
        let b = baseline(Metric::Goodput, &[1.0, 3.0, 2.0, 4.0, 6.0, 5.0]).unwrap();
        assert_eq!(b.median, 3.5);
    }
}
