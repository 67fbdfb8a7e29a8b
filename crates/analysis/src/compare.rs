//! Regression detection between two runs of the same point: [`compare`] sets a new
//! [`Estimate`] against a baseline and says, as a [`Delta`] with a [`Verdict`],
//! whether it changed for the better, for the worse, or not measurably.
//!
//! A change counts only when it is both statistically visible (the two 95%
//! confidence intervals of the median do not overlap) and large enough to matter
//! (beyond a minimum relative change). Which direction is better comes from
//! [`higher_is_better`].

use netsonde_model::sweep::{higher_is_better, Estimate};
use serde::{Deserialize, Serialize};

/// Whether a metric improved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// A significant change in the good direction.
    Better,
    /// A significant change in the bad direction: a regression.
    Worse,
    /// No significant change.
    Same,
}

/// One metric compared between a baseline `a` and a candidate `b`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Delta {
    /// The metric's name (see [`netsonde_model::sweep::Metrics`]).
    pub metric: String,
    /// The baseline.
    pub a: Estimate,
    /// The candidate.
    pub b: Estimate,
    /// `(b.median − a.median) / |a.median|`: positive when b is higher. When the
    /// baseline median is 0 this is 0 if b's is too, else ±infinity.
    pub rel_change: f64,
    /// The confidence intervals are disjoint and `|rel_change|` exceeds the minimum.
    pub significant: bool,
    /// Better or Worse when significant, by [`higher_is_better`]; Same otherwise.
    pub verdict: Verdict,
}

/// Compares `b` against the baseline `a` for `metric`.
///
/// The change is significant iff the two 95% CIs do not overlap AND
/// `|rel_change| > min_rel` (e.g. 0.02). The verdict follows
/// [`higher_is_better`]`(metric)`, and is [`Verdict::Same`] when the change is not
/// significant.
pub fn compare(metric: &str, a: &Estimate, b: &Estimate, min_rel: f64) -> Delta {
    let diff = b.median - a.median;
    let rel_change = if a.median != 0.0 {
        diff / a.median.abs()
    } else if diff == 0.0 {
        0.0
    } else {
        diff.signum() * f64::INFINITY
    };
    let disjoint = b.ci_low > a.ci_high || b.ci_high < a.ci_low;
    let significant = disjoint && rel_change.abs() > min_rel;
    let verdict = if !significant {
        Verdict::Same
    } else if (diff > 0.0) == higher_is_better(metric) {
        Verdict::Better
    } else {
        Verdict::Worse
    };
    Delta {
        metric: metric.to_string(),
        a: a.clone(),
        b: b.clone(),
        rel_change,
        significant,
        verdict,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(median: f64, half: f64) -> Estimate {
        Estimate {
            n: 10,
            median,
            mean: median,
            ci_low: median - half,
            ci_high: median + half,
            cv: 0.01,
        }
    }

    #[test]
    fn significant_goodput_drop_is_a_regression() {
        let d = compare("goodput", &est(9.4e9, 0.05e9), &est(8.5e9, 0.05e9), 0.02);
        assert!(d.significant);
        assert_eq!(d.verdict, Verdict::Worse);
        assert!((d.rel_change - (8.5 - 9.4) / 9.4).abs() < 1e-12);
        // The same rise is an improvement.
        let d = compare("goodput", &est(8.5e9, 0.05e9), &est(9.4e9, 0.05e9), 0.02);
        assert_eq!(d.verdict, Verdict::Better);
    }

    #[test]
    fn latency_rise_is_a_regression() {
        let d = compare(
            "latency_p99",
            &est(50_000.0, 1000.0),
            &est(60_000.0, 1000.0),
            0.02,
        );
        assert_eq!(d.verdict, Verdict::Worse);
        let d = compare(
            "latency_p99",
            &est(60_000.0, 1000.0),
            &est(50_000.0, 1000.0),
            0.02,
        );
        assert_eq!(d.verdict, Verdict::Better);
    }

    #[test]
    fn overlapping_intervals_are_the_same() {
        // A 10% drop, but the intervals overlap: not significant.
        let d = compare("goodput", &est(10.0, 1.0), &est(9.0, 1.0), 0.02);
        assert!(!d.significant);
        assert_eq!(d.verdict, Verdict::Same);
    }

    #[test]
    fn tiny_change_with_tight_intervals_is_the_same() {
        // Disjoint intervals, but a 1% change is under the 2% threshold.
        let d = compare("goodput", &est(100.0, 0.1), &est(99.0, 0.1), 0.02);
        assert!(!d.significant);
        assert_eq!(d.verdict, Verdict::Same);
    }

    #[test]
    fn zero_baseline() {
        let d = compare("retransmits", &est(0.0, 0.0), &est(50.0, 5.0), 0.02);
        assert_eq!(d.rel_change, f64::INFINITY);
        assert_eq!(d.verdict, Verdict::Worse);
        let d = compare("retransmits", &est(0.0, 0.0), &est(0.0, 0.0), 0.02);
        assert_eq!((d.rel_change, d.verdict), (0.0, Verdict::Same));
    }

    #[test]
    fn verdict_serializes_kebab_case() {
        assert_eq!(serde_json::to_string(&Verdict::Worse).unwrap(), "\"worse\"");
    }
}
