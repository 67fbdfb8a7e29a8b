//! Steady-state detection over the interval rates of one repetition, in the spirit of
//! neper's steadiness statistic: [`steady_state`] finds where a series settles and
//! says, as a [`Steadiness`], whether what remains is steady enough to trust.
//!
//! A series "settles" at the first index from which every later value stays within a
//! relative tolerance of the mean of that tail, a tail of at least [`MIN_TAIL`]
//! values. A slow start (TCP slow start, CPU frequency ramp) therefore shows up as a
//! late settle index rather than as noise.

use netsonde_model::result::{TestReport, Warning};
use netsonde_model::spec::FlowDir;
use netsonde_model::units::Nanos;
use serde::{Deserialize, Serialize};

/// The tolerance a test's interval rates must settle within.
pub const STEADY_TOL: f64 = 0.15;

/// The fewest values a settled tail has: one or two values agree with their own
/// mean by chance, so a series whose only settled tail is that short never settled
/// (a claim of "settled after 2.75 s of 3 s, CV 0%" would rest on one interval).
pub const MIN_TAIL: usize = 3;

/// A warning per direction of a test whose interval rates (with `--interval`, at
/// least 4 of them) did not start settled: they settled within [`STEADY_TOL`] only
/// after some intervals (a ramp the summary averages in: the warning says from when,
/// so `--warmup` can cover it), or never.
pub fn steadiness_warnings(r: &TestReport) -> Vec<Warning> {
    let mut out = Vec::new();
    for dir in [FlowDir::Up, FlowDir::Down] {
        let iv: Vec<_> = r.intervals.iter().filter(|i| i.dir == dir).collect();
        if iv.len() < 4 {
            continue;
        }
        let rates: Vec<f64> = iv.iter().map(|i| i.rate.bps()).collect();
        let s = steady_state(&rates, STEADY_TOL);
        if s.steady && s.settled_at == Some(0) {
            continue;
        }
        out.push(Warning::NotSteady {
            dir,
            settled_after: s.settled_at.map(|k| iv[k].start),
            measured: iv.last().map_or(Nanos(0), |i| i.end),
            cv: s.cv_after,
        });
    }
    out
}

/// Where and how well a series of interval rates settled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Steadiness {
    /// First index from which every value stays within the tolerance of the mean of
    /// the rest of the series, leaving at least [`MIN_TAIL`] values (all of them in a
    /// shorter series); `None` when no such tail settles (a non-finite value among the
    /// last ones, or rates that swing to the end).
    pub settled_at: Option<usize>,
    /// Coefficient of variation (sample standard deviation over mean) of the values
    /// from `settled_at` on; 0 when there is no such tail or it has one value.
    pub cv_after: f64,
    /// The series settled, at most half of it was discarded, and `cv_after` is within
    /// the tolerance.
    pub steady: bool,
}

/// Finds the first index i such that every value of `values[i..]` stays within `tol`
/// (relative, e.g. 0.10) of the mean of `values[i..]`, and `values[i..]` has at least
/// [`MIN_TAIL`] values (or is the whole of a shorter series).
///
/// The series is steady when it settled, at most half of it was discarded
/// (`2·i ≤ n`), and the coefficient of variation of the tail is at most `tol`.
/// A non-finite value never counts as within tolerance, so the series settles only
/// after the last one. Runs in O(n) using suffix sums, minima and maxima.
pub fn steady_state(values: &[f64], tol: f64) -> Steadiness {
    let n = values.len();
    // Suffix sum, minimum and maximum, walking from the end; `ok[i]` records whether
    // the tail starting at i is within tolerance of its own mean.
    let mut ok = vec![false; n];
    let (mut sum, mut lo, mut hi) = (0.0, f64::INFINITY, f64::NEG_INFINITY);
    for i in (0..n).rev() {
        let v = values[i];
        sum += v;
        lo = lo.min(v);
        hi = hi.max(v);
        let mean = sum / (n - i) as f64;
        let band = tol * mean.abs();
        // NaN anywhere in the tail makes `sum` NaN and every comparison false.
        ok[i] = v.is_finite() && hi - mean <= band && mean - lo <= band;
    }
    let last = n.saturating_sub(MIN_TAIL);
    let settled_at = ok.iter().position(|&b| b).filter(|&i| i <= last);
    let cv_after = settled_at.map_or(0.0, |i| cv(&values[i..]));
    let steady = settled_at.is_some_and(|i| 2 * i <= n && cv_after <= tol);
    Steadiness {
        settled_at,
        cv_after,
        steady,
    }
}

/// Sample coefficient of variation; 0 for fewer than two values or a zero mean.
fn cv(xs: &[f64]) -> f64 {
    let n = xs.len();
    if n < 2 {
        return 0.0;
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    if mean == 0.0 {
        return 0.0;
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    var.sqrt() / mean.abs()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ramp_then_flat_settles_where_the_ramp_ends() {
        // Slow start over four intervals, then a flat 100 with ±1% jitter.
        let mut xs = vec![10.0, 30.0, 60.0, 85.0];
        xs.extend([
            100.0, 101.0, 99.0, 100.0, 100.5, 99.5, 100.0, 101.0, 99.0, 100.0,
        ]);
        let s = steady_state(&xs, 0.10);
        assert_eq!(s.settled_at, Some(4));
        assert!(s.steady);
        assert!(s.cv_after < 0.01, "{}", s.cv_after);
    }

    #[test]
    fn a_value_at_the_edge_of_the_band_is_kept() {
        // Tail [95, 100, 105] has mean 100 and every value within 5%, but including
        // 80 drags the mean to 95 and puts 80 outside 5%.
        let s = steady_state(&[80.0, 95.0, 100.0, 105.0], 0.05);
        assert_eq!(s.settled_at, Some(1));
        assert!(s.steady);
    }

    #[test]
    fn noisy_series_is_not_steady() {
        let xs = [
            100.0, 40.0, 130.0, 70.0, 160.0, 20.0, 110.0, 60.0, 150.0, 90.0,
        ];
        let s = steady_state(&xs, 0.10);
        assert!(!s.steady);
        // Only the last value or two agree with their own mean: never settled.
        assert_eq!(s.settled_at, None);
    }

    #[test]
    fn late_settle_discards_too_much() {
        // Settles at 6 of 10: more than half discarded, even though the tail is flat.
        let xs = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 100.0, 100.0, 100.0, 100.0];
        let s = steady_state(&xs, 0.10);
        assert_eq!(s.settled_at, Some(6));
        assert_eq!(s.cv_after, 0.0);
        assert!(!s.steady);
    }

    #[test]
    fn empty_and_non_finite() {
        let s = steady_state(&[], 0.1);
        assert_eq!(s.settled_at, None);
        assert!(!s.steady);
        let s = steady_state(&[100.0, f64::NAN, 100.0, 100.0, 100.0], 0.1);
        assert_eq!(s.settled_at, Some(2));
        assert!(s.steady);
        let s = steady_state(&[100.0, f64::NAN], 0.1);
        assert_eq!(s.settled_at, None);
        assert!(!s.steady);
    }

    #[test]
    fn a_tail_of_one_or_two_values_is_not_a_settled_series() {
        // Rates that swing to the end: only the last value (or two) agree with
        // their own mean, which says nothing. That is "never settled", not
        // "settled after 11 of 12 with a CV of 0".
        let xs = [
            21.0, 134.0, 34.0, 46.0, 46.0, 71.0, 38.0, 34.0, 38.0, 38.0, 76.0, 42.0,
        ];
        let s = steady_state(&xs, 0.15);
        assert_eq!(s.settled_at, None, "{s:?}");
        assert!(!s.steady);
        // Three settled values at the end are a tail.
        let s = steady_state(&[10.0, 200.0, 100.0, 101.0, 99.0], 0.15);
        assert_eq!(s.settled_at, Some(2));
        // A series shorter than the tail settles only as a whole.
        assert_eq!(steady_state(&[100.0, 100.0], 0.1).settled_at, Some(0));
        assert_eq!(steady_state(&[10.0, 100.0], 0.1).settled_at, None);
    }
}
