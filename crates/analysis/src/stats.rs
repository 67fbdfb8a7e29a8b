//! Statistics over the repetitions of one point: [`estimate`] (median, mean,
//! coefficient of variation and a 95% confidence interval of the median), the Student
//! t quantile it uses for tiny samples ([`t975`]), and [`reps_needed`], which turns a
//! coefficient of variation into a repetition count.
//!
//! The median is the headline figure because network measurements have heavy upper
//! or lower tails (a repetition that hit a retransmission storm); its interval is
//! distribution-free whenever there are enough repetitions for one to exist.

use netsonde_model::sweep::Estimate;

/// Factor from the standard error of the mean to the asymptotic standard error of
/// the median for normal data, `sqrt(pi / 2)`.
const MEDIAN_SE_FACTOR: f64 = 1.2533;

/// Two-sided 95% quantiles of Student's t, `t_{0.975, df}` for df = 1..=30.
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// Median, mean, CV, and a 95% confidence interval of the median of `samples`.
///
/// Non-finite values are ignored; `None` when no finite value remains. The CV is the
/// sample standard deviation (n − 1 denominator) over the absolute mean; it is 0 for
/// a single value and when the mean is 0.
///
/// The interval depends on the count n of finite values:
/// - n ≥ 6: the distribution-free order-statistic interval `[x(r), x(n+1−r)]`
///   (1-based ranks of the sorted values), with the largest r whose coverage under
///   Binomial(n, ½) is still at least 95%. It assumes only independent repetitions.
/// - 2 ≤ n < 6: no order-statistic interval reaches 95%, so this is an
///   approximation assuming roughly normal data:
///   `median ± t975(n−1) · s/√n · 1.2533`, where 1.2533 = √(π/2) scales the
///   standard error of the mean to the asymptotic standard error of the median.
/// - n = 1: `ci_low = ci_high = median`.
pub fn estimate(samples: &[f64]) -> Option<Estimate> {
    let mut xs: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    let median = median_of_sorted(&xs);
    let mean = xs.iter().sum::<f64>() / n as f64;
    let sd = if n > 1 {
        (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    let cv = if mean == 0.0 { 0.0 } else { sd / mean.abs() };
    let (ci_low, ci_high) = if n >= 6 {
        let r = order_statistic_rank(n);
        (xs[r], xs[n - 1 - r])
    } else if n >= 2 {
        let half = t975(n - 1) * sd / (n as f64).sqrt() * MEDIAN_SE_FACTOR;
        (median - half, median + half)
    } else {
        (median, median)
    };
    Some(Estimate {
        n,
        median,
        mean,
        ci_low,
        ci_high,
        cv,
    })
}

/// The median of already sorted, non-empty values: the middle one, or the mean of
/// the two middle ones.
fn median_of_sorted(xs: &[f64]) -> f64 {
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// The 0-based rank m of the lower end of the order-statistic 95% interval of the
/// median for n ≥ 6 values: the largest m with P(B ≤ m) ≤ 0.025 for
/// B ~ Binomial(n, ½), so that `[x[m], x[n−1−m]]` covers the median with probability
/// `1 − 2·P(B ≤ m) ≥ 0.95`. (x[m] is above the median exactly when at most m values
/// fall below it.)
///
/// The binomial terms are summed in log space so that large n neither overflows the
/// binomial coefficient nor underflows ½ⁿ.
fn order_statistic_rank(n: usize) -> usize {
    debug_assert!(n >= 6, "P(B <= 0) = 1/2^n exceeds 2.5% below n = 6");
    let ln_half_n = n as f64 * 0.5f64.ln();
    // ln C(n, j), updated as j grows.
    let mut ln_choose = 0.0;
    let mut cdf = 0.0;
    // Number of leading j with P(B <= j) <= 0.025.
    let mut within = 0;
    while within < n / 2 {
        let j = within;
        cdf += (ln_choose + ln_half_n).exp();
        // The tolerance lets a tail of exactly 2.5% count as within it.
        if cdf > 0.025 + 1e-12 {
            break;
        }
        ln_choose += ((n - j) as f64 / (j + 1) as f64).ln();
        within += 1;
    }
    within.saturating_sub(1)
}

/// Student t quantile `t_{0.975, df}` (two-sided 95%) for df = 1..=30 from a table,
/// and the normal quantile 1.96 above 30. df = 0 has no finite quantile: infinity.
pub fn t975(df: usize) -> f64 {
    match df {
        0 => f64::INFINITY,
        1..=30 => T975[df - 1],
        _ => 1.96,
    }
}

/// Repetitions needed so the 95% CI half-width of the mean is under `rel` (e.g. 0.05)
/// of the mean, given the coefficient of variation `cv`: `ceil((1.96·cv/rel)²)`, and
/// at least 3.
///
/// A `rel` of zero or less asks for the impossible and saturates to `usize::MAX`; a
/// NaN `cv` gives the minimum of 3.
pub fn reps_needed(cv: f64, rel: f64) -> usize {
    if rel.is_nan() || rel <= 0.0 {
        return usize::MAX;
    }
    let need = (1.96 * cv.abs() / rel).powi(2).ceil();
    // `as` saturates: infinity becomes usize::MAX, NaN becomes 0.
    (need as usize).max(3)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn empty_or_all_non_finite_is_none() {
        assert_eq!(estimate(&[]), None);
        assert_eq!(estimate(&[f64::NAN, f64::INFINITY]), None);
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(estimate(&[3.0, 1.0, 2.0]).unwrap().median, 2.0);
        assert_eq!(estimate(&[4.0, 1.0, 3.0, 2.0]).unwrap().median, 2.5);
        // Non-finite values are dropped before anything is counted.
        let e = estimate(&[5.0, f64::NAN, 1.0, 3.0]).unwrap();
        assert_eq!(e.n, 3);
        assert_eq!(e.median, 3.0);
    }

    #[test]
    fn mean_and_cv_by_hand() {
        // Mean 5, deviations -3,-1,1,3: sum of squares 20, sample variance 20/3.
        let e = estimate(&[2.0, 4.0, 6.0, 8.0]).unwrap();
        assert_eq!(e.mean, 5.0);
        assert!(close(e.cv, (20.0f64 / 3.0).sqrt() / 5.0, 1e-12));
        let same = estimate(&[7.0, 7.0, 7.0]).unwrap();
        assert_eq!(same.cv, 0.0);
        assert_eq!((same.ci_low, same.ci_high), (7.0, 7.0));
    }

    #[test]
    fn single_value_has_degenerate_interval() {
        let e = estimate(&[42.0]).unwrap();
        assert_eq!((e.n, e.median, e.mean, e.cv), (1, 42.0, 42.0, 0.0));
        assert_eq!((e.ci_low, e.ci_high), (42.0, 42.0));
    }

    #[test]
    fn small_samples_use_the_t_approximation() {
        // n = 3, s = 1: half-width = 4.303 / sqrt(3) * 1.2533.
        let e = estimate(&[9.0, 10.0, 11.0]).unwrap();
        let half = 4.303 / 3f64.sqrt() * 1.2533;
        assert!(close(e.ci_low, 10.0 - half, 1e-9));
        assert!(close(e.ci_high, 10.0 + half, 1e-9));
    }

    #[test]
    fn order_statistic_ranks_match_binomial_tables() {
        // n = 6: P(B <= 0) = 1/64, coverage 96.9%; trimming one more drops to 78%.
        assert_eq!(order_statistic_rank(6), 0);
        // n = 10: P(B <= 1) = 11/1024, coverage 97.9%; P(B <= 2) = 56/1024 is too much.
        assert_eq!(order_statistic_rank(10), 1);
        // n = 20: P(B <= 5) = 0.0207, P(B <= 6) = 0.0577.
        assert_eq!(order_statistic_rank(20), 5);
        // Large n stays finite and lands near n/2 - 1.96 * sqrt(n)/2.
        let r = order_statistic_rank(10_000);
        assert!((4895..=4905).contains(&r), "{r}");
        let xs: Vec<f64> = (1..=10).map(f64::from).collect();
        let e = estimate(&xs).unwrap();
        assert_eq!((e.ci_low, e.ci_high), (2.0, 9.0));
    }

    /// A 64-bit linear congruential generator (Knuth's MMIX constants): enough for
    /// deterministic test data.
    struct Lcg(u64);

    impl Lcg {
        fn uniform(&mut self) -> f64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 11) as f64 / (1u64 << 53) as f64
        }

        /// Approximately standard normal: the sum of 12 uniforms minus 6.
        fn normalish(&mut self) -> f64 {
            (0..12).map(|_| self.uniform()).sum::<f64>() - 6.0
        }
    }

    #[test]
    fn interval_covers_the_true_median_at_least_93_percent() {
        let mut rng = Lcg(0x5eed);
        let trials = 2000;
        let mut covered = 0;
        for _ in 0..trials {
            let xs: Vec<f64> = (0..10).map(|_| 100.0 + 5.0 * rng.normalish()).collect();
            let e = estimate(&xs).unwrap();
            if e.ci_low <= 100.0 && 100.0 <= e.ci_high {
                covered += 1;
            }
        }
        let share = covered as f64 / trials as f64;
        // The nominal coverage for n = 10 is 97.9%.
        assert!(share >= 0.93, "coverage {share}");
    }

    #[test]
    fn t_table_edges() {
        assert_eq!(t975(1), 12.706);
        assert_eq!(t975(30), 2.042);
        assert_eq!(t975(31), 1.96);
        assert_eq!(t975(0), f64::INFINITY);
    }

    #[test]
    fn reps_needed_by_hand() {
        // (1.96 * 0.2 / 0.05)^2 = 61.47 -> 62.
        assert_eq!(reps_needed(0.2, 0.05), 62);
        // Tiny variance still asks for the minimum of 3.
        assert_eq!(reps_needed(0.001, 0.05), 3);
        assert_eq!(reps_needed(0.1, 0.0), usize::MAX);
        assert_eq!(reps_needed(f64::NAN, 0.05), 3);
    }
}
