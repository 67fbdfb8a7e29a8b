//! Regression detection between two runs of the same point: [`delta`] sets the
//! repetitions of a candidate against a baseline's for one metric, and [`judge`]
//! decides over every comparison of a run pair at once which changed for the
//! better, for the worse, or not measurably.
//!
//! A change counts only when it is both statistically significant and large enough
//! to matter:
//! - **the test**: the exact one-sided Mann–Whitney rank test
//!   ([`crate::stats::mann_whitney_less`]) in each direction, which assumes only
//!   independent repetitions;
//! - **the family**: a run pair compares many points and metrics, so the p-values
//!   are judged together with Holm's step-down procedure at a family level of
//!   [`FAMILY_ALPHA`]: the chance that comparing two runs of one configuration
//!   reports any regression at all is at most 5% (measured on this project's host:
//!   `docs/EXPERIMENTS.md`);
//! - **the size**: `|rel_change|` beyond a minimum (2% by default).
//!
//! Few repetitions cannot reach significance: the smallest p-value of n against n
//! repetitions is `1 / C(2n, n)` (0.05 at 3 against 3), so [`reps_for`] says how
//! many a family of comparisons needs. Which direction is better comes from
//! [`Metric::higher_is_better`].

use netsonde_model::sweep::{Estimate, Metric};
use serde::{Deserialize, Serialize};

use crate::stats::{estimate, mann_whitney_less};

/// The family-wise false-alarm level of a comparison of two runs.
pub const FAMILY_ALPHA: f64 = 0.05;

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
    /// The metric.
    pub metric: Metric,
    /// The baseline.
    pub a: Estimate,
    /// The candidate.
    pub b: Estimate,
    /// `(b.median − a.median) / |a.median|`: positive when b is higher. When the
    /// baseline median is 0 this is 0 if b's is too, else ±infinity.
    pub rel_change: f64,
    /// The one-sided p-value that b is worse than a (exact Mann–Whitney).
    pub p_worse: f64,
    /// The one-sided p-value that b is better than a.
    pub p_better: f64,
    /// Set by [`judge`]: significant within its family and beyond the minimum
    /// change.
    pub significant: bool,
    /// Better or Worse when significant; Same otherwise.
    pub verdict: Verdict,
}

/// The estimates of `a` and `b`, `b`'s change relative to `a`'s median, and the
/// one-sided p-values that `b` is lower and that it is higher.
fn ranked(a: &[f64], b: &[f64]) -> Option<(Estimate, Estimate, f64, f64, f64)> {
    let (ea, eb) = (estimate(a)?, estimate(b)?);
    let diff = eb.median - ea.median;
    let rel_change = if ea.median != 0.0 {
        diff / ea.median.abs()
    } else if diff == 0.0 {
        0.0
    } else {
        diff.signum() * f64::INFINITY
    };
    let p_lower = mann_whitney_less(a, b)?;
    let p_higher = mann_whitney_less(b, a)?;
    Some((ea, eb, rel_change, p_lower, p_higher))
}

/// Compares the repetitions `b` of a candidate against those of a baseline `a`
/// for `metric`. `None` when either side has no finite value. The verdict is
/// [`Verdict::Same`] until [`judge`] decides.
pub fn delta(metric: Metric, a: &[f64], b: &[f64]) -> Option<Delta> {
    let (ea, eb, rel_change, p_lower, p_higher) = ranked(a, b)?;
    let (p_worse, p_better) = if metric.higher_is_better() {
        (p_lower, p_higher)
    } else {
        (p_higher, p_lower)
    };
    Some(Delta {
        metric,
        a: ea,
        b: eb,
        rel_change,
        p_worse,
        p_better,
        significant: false,
        verdict: Verdict::Same,
    })
}

/// What Holm's procedure needs of a comparison.
trait Judged {
    /// The one-sided p-value of worsening (`worse`) or of improvement.
    fn p(&self, worse: bool) -> f64;
    /// Whether the change in that direction exceeds `min_rel`.
    fn moved(&self, worse: bool, min_rel: f64) -> bool;
    /// Sets the verdict.
    fn set(&mut self, v: Verdict);
    /// The verdict so far.
    fn verdict(&self) -> Verdict;
}

impl Judged for Delta {
    fn p(&self, worse: bool) -> f64 {
        if worse {
            self.p_worse
        } else {
            self.p_better
        }
    }
    fn moved(&self, worse: bool, min_rel: f64) -> bool {
        if worse == self.metric.higher_is_better() {
            self.rel_change < -min_rel
        } else {
            self.rel_change > min_rel
        }
    }
    fn set(&mut self, v: Verdict) {
        self.significant = v != Verdict::Same;
        self.verdict = v;
    }
    fn verdict(&self) -> Verdict {
        self.verdict
    }
}

/// Holm's step-down procedure at `alpha` over the p-values of worsening, and
/// separately of improvement, each change also beyond `min_rel`.
fn holm<T: Judged>(deltas: &mut [T], alpha: f64, min_rel: f64) {
    for d in deltas.iter_mut() {
        d.set(Verdict::Same);
    }
    for worse in [true, false] {
        let mut order: Vec<usize> = (0..deltas.len()).collect();
        order.sort_by(|&i, &j| deltas[i].p(worse).total_cmp(&deltas[j].p(worse)));
        let m = order.len();
        for (k, &i) in order.iter().enumerate() {
            // Holm: the k-th smallest p must be at most alpha / (m - k); the first
            // that is not ends the procedure.
            if deltas[i].p(worse) > alpha / (m - k) as f64 {
                break;
            }
            let d = &mut deltas[i];
            if d.moved(worse, min_rel) && d.verdict() == Verdict::Same {
                d.set(if worse {
                    Verdict::Worse
                } else {
                    Verdict::Better
                });
            }
        }
    }
}

/// Decides every delta of one run pair together: Holm's procedure at `alpha` over
/// the p-values of worsening, and separately of improvement, each change also
/// beyond `min_rel`.
pub fn judge(deltas: &mut [Delta], alpha: f64, min_rel: f64) {
    holm(deltas, alpha, min_rel)
}

/// The smallest one-sided p-value `n_a` against `n_b` repetitions can give:
/// `1 / C(n_a + n_b, n_b)`.
pub fn smallest_p(n_a: usize, n_b: usize) -> f64 {
    let c = (0..n_b).fold(1.0, |c, i| c * (n_a + n_b - i) as f64 / (i + 1) as f64);
    1.0 / c
}

/// The fewest repetitions per run (the same in both) with which a change can be
/// significant among `comparisons` at family level `alpha`.
pub fn reps_for(comparisons: usize, alpha: f64) -> usize {
    let need = alpha / comparisons.max(1) as f64;
    (2..=64).find(|&n| smallest_p(n, n) <= need).unwrap_or(64)
}

/// One goal (NDR or PDR) of a point's loss-free rate searches compared: the
/// lower bounds the baseline's repeated searches (`search --repeat`) found
/// against the candidate's, as repetitions of a measurement (higher is better).
/// One search's bounds are a single draw of a rate that moves between runs (on
/// loopback by 10% and more), so the rank test on repeated searches, not the
/// bounds of one, decides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchDelta {
    /// NDR or PDR.
    pub goal: netsonde_model::search::Goal,
    /// The baseline's lower bounds.
    pub a: Estimate,
    /// The candidate's.
    pub b: Estimate,
    /// `(b.median − a.median) / a.median`.
    pub rel_change: f64,
    /// The one-sided p-value that b is lower (exact Mann–Whitney).
    pub p_worse: f64,
    /// The one-sided p-value that b is higher.
    pub p_better: f64,
    /// Set by [`judge_searches`].
    pub verdict: Verdict,
}

impl Judged for SearchDelta {
    fn p(&self, worse: bool) -> f64 {
        if worse {
            self.p_worse
        } else {
            self.p_better
        }
    }
    fn moved(&self, worse: bool, min_rel: f64) -> bool {
        if worse {
            self.rel_change < -min_rel
        } else {
            self.rel_change > min_rel
        }
    }
    fn set(&mut self, v: Verdict) {
        self.verdict = v;
    }
    fn verdict(&self) -> Verdict {
        self.verdict
    }
}

/// Compares `goal`'s lower bounds of the baseline's searches `a` with the
/// candidate's `b`; `None` when either side found none. The verdict is
/// [`Verdict::Same`] until [`judge_searches`] decides.
pub fn search_delta(
    goal: netsonde_model::search::Goal,
    a: &[f64],
    b: &[f64],
) -> Option<SearchDelta> {
    let (ea, eb, rel_change, p_worse, p_better) = ranked(a, b)?;
    Some(SearchDelta {
        goal,
        a: ea,
        b: eb,
        rel_change,
        p_worse,
        p_better,
        verdict: Verdict::Same,
    })
}

/// Decides every search delta of one run pair together, as [`judge`] does.
pub fn judge_searches(deltas: &mut [SearchDelta], alpha: f64, min_rel: f64) {
    holm(deltas, alpha, min_rel)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reps(center: f64, spread: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| center + spread * (i as f64 / (n - 1).max(1) as f64 - 0.5))
            .collect()
    }

    fn judged(metric: Metric, a: &[f64], b: &[f64]) -> Delta {
        let mut d = vec![delta(metric, a, b).unwrap()];
        judge(&mut d, FAMILY_ALPHA, 0.02);
        d.pop().unwrap()
    }

    #[test]
    fn a_separated_goodput_drop_is_a_regression() {
        let d = judged(
            Metric::Goodput,
            &reps(9.4e9, 0.1e9, 5),
            &reps(8.5e9, 0.1e9, 5),
        );
        assert!(d.significant);
        assert_eq!(d.verdict, Verdict::Worse);
        assert!((d.rel_change - (8.5 - 9.4) / 9.4).abs() < 1e-12);
        assert!((d.p_worse - 1.0 / 252.0).abs() < 1e-12);
        // The same rise is an improvement.
        let d = judged(
            Metric::Goodput,
            &reps(8.5e9, 0.1e9, 5),
            &reps(9.4e9, 0.1e9, 5),
        );
        assert_eq!(d.verdict, Verdict::Better);
    }

    #[test]
    fn latency_rise_is_a_regression() {
        let d = judged(Metric::LatencyP99, &reps(50e3, 1e3, 5), &reps(60e3, 1e3, 5));
        assert_eq!(d.verdict, Verdict::Worse);
        let d = judged(Metric::LatencyP99, &reps(60e3, 1e3, 5), &reps(50e3, 1e3, 5));
        assert_eq!(d.verdict, Verdict::Better);
    }

    /// The reported failure: a 29% drop with 3 repetitions each was "within noise"
    /// because the intervals were wrong. It is now tested: fully separated, p = 0.05,
    /// significant alone.
    #[test]
    fn a_29_percent_drop_at_three_repetitions_is_seen_when_alone() {
        let d = judged(
            Metric::Goodput,
            &[10.1e9, 10.4e9, 10.6e9],
            &[7.2e9, 7.4e9, 7.5e9],
        );
        assert_eq!(d.verdict, Verdict::Worse);
    }

    #[test]
    fn overlapping_repetitions_are_the_same() {
        // A 10% drop in the medians, but the repetitions interleave.
        let d = judged(
            Metric::Goodput,
            &[9.0, 10.0, 11.0, 12.0],
            &[8.0, 9.5, 10.5, 8.5],
        );
        assert!(!d.significant);
        assert_eq!(d.verdict, Verdict::Same);
    }

    #[test]
    fn tiny_change_with_separated_repetitions_is_the_same() {
        let d = judged(Metric::Goodput, &reps(100.0, 0.2, 5), &reps(99.0, 0.2, 5));
        assert!(d.p_worse < 0.01);
        assert!(!d.significant, "1% is under the 2% threshold");
    }

    /// Holm over a family: 3 against 3 gives p = 0.05 at best, which cannot pass
    /// for two comparisons or more; 5 against 5 can for up to 12.
    #[test]
    fn a_family_needs_enough_repetitions() {
        let a = reps(10.0, 0.1, 3);
        let b = reps(5.0, 0.1, 3);
        let mut two = vec![
            delta(Metric::Goodput, &a, &b).unwrap(),
            delta(Metric::MessagesPerSec, &a, &b).unwrap(),
        ];
        judge(&mut two, FAMILY_ALPHA, 0.02);
        assert!(two.iter().all(|d| d.verdict == Verdict::Same));
        assert_eq!(reps_for(1, 0.05), 3);
        assert_eq!(reps_for(2, 0.05), 4);
        assert_eq!(reps_for(12, 0.05), 5);
        assert!((smallest_p(3, 3) - 0.05).abs() < 1e-12);
    }

    #[test]
    fn zero_baseline() {
        let d = judged(Metric::Retransmits, &[0.0, 0.0, 0.0], &[40.0, 50.0, 60.0]);
        assert_eq!(d.rel_change, f64::INFINITY);
        assert_eq!(d.verdict, Verdict::Worse);
        let d = judged(Metric::Retransmits, &[0.0; 3], &[0.0; 3]);
        assert_eq!((d.rel_change, d.verdict), (0.0, Verdict::Same));
    }

    #[test]
    fn repeated_searches_are_judged_like_repetitions() {
        use netsonde_model::search::Goal;
        let a = [100e3, 101e3, 99e3, 100.5e3, 99.5e3];
        let lower: Vec<f64> = a.iter().map(|v| v * 0.9).collect();
        let mut ds = vec![
            search_delta(Goal::Ndr, &a, &lower).unwrap(),
            search_delta(Goal::Pdr, &a, &a).unwrap(),
        ];
        judge_searches(&mut ds, FAMILY_ALPHA, 0.02);
        assert_eq!(ds[0].verdict, Verdict::Worse);
        assert!((ds[0].rel_change + 0.1).abs() < 1e-9);
        assert_eq!(ds[1].verdict, Verdict::Same);
        // One search a side: no p-value small enough, however far apart.
        let mut one = vec![search_delta(Goal::Ndr, &[100e3], &[50e3]).unwrap()];
        judge_searches(&mut one, FAMILY_ALPHA, 0.02);
        assert_eq!(one[0].verdict, Verdict::Same);
        assert!(search_delta(Goal::Ndr, &[], &[1.0]).is_none());
    }

    #[test]
    fn verdict_serializes_kebab_case() {
        assert_eq!(serde_json::to_string(&Verdict::Worse).unwrap(), "\"worse\"");
    }
}
