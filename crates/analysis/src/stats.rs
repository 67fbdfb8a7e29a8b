//! Statistics over the repetitions of one point: [`estimate`] (median, mean,
//! coefficient of variation and a distribution-free confidence interval of the
//! median with its exact coverage), [`mann_whitney_less`] (the exact one-sided
//! rank test `compare` decides with), the Student t quantile ([`t975`]) and
//! [`reps_needed`], which turns a coefficient of variation into a repetition count.
//!
//! The median is the headline figure because network measurements have heavy upper
//! or lower tails (a repetition that hit a retransmission storm). Its interval is the
//! order-statistic interval `[x(r), x(n+1−r)]`: it assumes only that repetitions are
//! independent draws from one distribution, its coverage is exact (a binomial sum,
//! stated with the interval), and its ends are measured values, so it can never leave
//! the physically possible range (no negative goodput, no more busy cores than the
//! host has). Reference: Conover, *Practical Nonparametric Statistics*, 3rd ed.,
//! §3.2 (confidence interval for a quantile) and §5.1 (the Mann–Whitney test).

use netsonde_model::sweep::Estimate;

/// Two-sided 95% quantiles of Student's t, `t_{0.975, df}` for df = 1..=30.
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// The fewest repetitions for which an interval is given: with 3, `[min, max]`
/// covers the median with probability 75%; with 2 it would be 50%, which is no
/// interval worth printing.
pub const MIN_REPS_FOR_INTERVAL: usize = 3;

/// The coverage the interval aims at; below 6 repetitions no order-statistic
/// interval reaches it, and `[min, max]` is given with its lower, exact coverage.
pub const TARGET_COVERAGE: f64 = 0.95;

/// Median, mean, CV, and a distribution-free confidence interval of the median of
/// `samples`, with its coverage.
///
/// Non-finite values are ignored; `None` when no finite value remains. The CV is the
/// sample standard deviation (n − 1 denominator) over the absolute mean; it is 0 for
/// a single value and when the mean is 0.
///
/// The interval depends on the count n of finite values:
/// - n ≥ 6: `[x(r), x(n+1−r)]` with the largest r whose coverage,
///   `1 − 2·P(B ≤ r−1)` for B ~ Binomial(n, ½), is at least 95%.
/// - 3 ≤ n ≤ 5: `[min, max]`, whose coverage `1 − 2·½ⁿ` is 75%, 87.5% or 93.75%:
///   less than 95%, and said so.
/// - n < 3: no interval ("n too small").
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
    let (ci_low, ci_high, ci_coverage) = if n >= MIN_REPS_FOR_INTERVAL {
        let r = order_statistic_rank(n);
        (Some(xs[r]), Some(xs[n - 1 - r]), Some(coverage(n, r)))
    } else {
        (None, None, None)
    };
    Some(Estimate {
        n,
        median,
        mean,
        ci_low,
        ci_high,
        ci_coverage,
        cv,
    })
}

/// The median of already sorted, non-empty values: the middle one, or the mean of
/// the two middle ones.
pub(crate) fn median_of_sorted(xs: &[f64]) -> f64 {
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// The 0-based rank m of the lower end of the order-statistic interval of the
/// median for n ≥ 3 values: the largest m with P(B ≤ m) ≤ 0.025 for
/// B ~ Binomial(n, ½), so that `[x[m], x[n−1−m]]` covers the median with probability
/// `1 − 2·P(B ≤ m) ≥ 0.95`; 0 (min and max) when even that falls short (n < 6).
/// (x[m] is above the median exactly when at most m values fall below it.)
///
/// The binomial terms are summed in log space so that large n neither overflows the
/// binomial coefficient nor underflows ½ⁿ.
fn order_statistic_rank(n: usize) -> usize {
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
        if cdf > (1.0 - TARGET_COVERAGE) / 2.0 + 1e-12 {
            break;
        }
        ln_choose += ((n - j) as f64 / (j + 1) as f64).ln();
        within += 1;
    }
    within.saturating_sub(1)
}

/// The exact coverage of `[x[m], x[n−1−m]]` for the median of n values:
/// `1 − 2·P(B ≤ m)`, B ~ Binomial(n, ½).
pub fn coverage(n: usize, m: usize) -> f64 {
    let ln_half_n = n as f64 * 0.5f64.ln();
    let mut ln_choose = 0.0;
    let mut cdf = 0.0;
    for j in 0..=m.min(n) {
        cdf += (ln_choose + ln_half_n).exp();
        ln_choose += ((n - j) as f64 / (j + 1) as f64).ln();
    }
    (1.0 - 2.0 * cdf).max(0.0)
}

/// The exact one-sided Mann–Whitney (Wilcoxon rank-sum) test that `b` tends to be
/// lower than `a`: the probability, under the hypothesis that both are draws from
/// one distribution, of a rank sum of `b` at most the one observed. Every way of
/// splitting the pooled values into groups of their sizes is equally likely under
/// that hypothesis; ties get mid-ranks. Exact by enumeration up to 20,000 splits
/// (8 against 8 is 12,870), else the normal approximation with the tie correction
/// and a continuity correction. `None` when either side is empty.
pub fn mann_whitney_less(a: &[f64], b: &[f64]) -> Option<f64> {
    let a: Vec<f64> = a.iter().copied().filter(|x| x.is_finite()).collect();
    let b: Vec<f64> = b.iter().copied().filter(|x| x.is_finite()).collect();
    let (n, m) = (b.len(), a.len());
    if n == 0 || m == 0 {
        return None;
    }
    let mut pooled: Vec<(f64, bool)> = b
        .iter()
        .map(|&x| (x, true))
        .chain(a.iter().map(|&x| (x, false)))
        .collect();
    pooled.sort_by(|x, y| x.0.total_cmp(&y.0));
    // Mid-ranks, 1-based.
    let mut ranks = vec![0.0; pooled.len()];
    let mut i = 0;
    while i < pooled.len() {
        let mut j = i;
        while j + 1 < pooled.len() && pooled[j + 1].0 == pooled[i].0 {
            j += 1;
        }
        let mid = (i + j) as f64 / 2.0 + 1.0;
        ranks[i..=j].iter_mut().for_each(|r| *r = mid);
        i = j + 1;
    }
    let observed: f64 = ranks
        .iter()
        .zip(&pooled)
        .filter(|(_, (_, in_b))| *in_b)
        .map(|(r, _)| r)
        .sum();
    let total = n + m;
    let splits = choose(total, n);
    if splits <= 20_000.0 {
        // Enumerate every n-subset of the pooled ranks.
        let mut count = 0u64;
        let mut at_most = 0u64;
        let mut idx: Vec<usize> = (0..n).collect();
        loop {
            let sum: f64 = idx.iter().map(|&k| ranks[k]).sum();
            count += 1;
            if sum <= observed + 1e-9 {
                at_most += 1;
            }
            // Next combination in lexicographic order.
            let mut k = n;
            loop {
                if k == 0 {
                    return Some(at_most as f64 / count as f64);
                }
                k -= 1;
                if idx[k] < total - n + k {
                    idx[k] += 1;
                    for l in k + 1..n {
                        idx[l] = idx[l - 1] + 1;
                    }
                    break;
                }
            }
        }
    }
    let mean = n as f64 * (total as f64 + 1.0) / 2.0;
    let ties: f64 = {
        let mut t = 0.0;
        let mut i = 0;
        while i < pooled.len() {
            let mut j = i;
            while j + 1 < pooled.len() && pooled[j + 1].0 == pooled[i].0 {
                j += 1;
            }
            let c = (j - i + 1) as f64;
            t += c * c * c - c;
            i = j + 1;
        }
        t
    };
    let nt = total as f64;
    let var = n as f64 * m as f64 / 12.0 * ((nt + 1.0) - ties / (nt * (nt - 1.0)));
    if var <= 0.0 {
        return Some(1.0);
    }
    // Continuity correction of one half.
    let z = (observed + 0.5 - mean) / var.sqrt();
    Some(normal_cdf(z))
}

/// C(n, k) as a float.
fn choose(n: usize, k: usize) -> f64 {
    (0..k).fold(1.0, |c, i| c * (n - i) as f64 / (i + 1) as f64)
}

/// The standard normal distribution function (Abramowitz and Stegun 7.1.26,
/// absolute error below 1.5e-7).
fn normal_cdf(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-x * x).exp();
    if z >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
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
        assert_eq!((same.ci_low, same.ci_high), (Some(7.0), Some(7.0)));
    }

    #[test]
    fn fewer_than_three_values_have_no_interval() {
        let e = estimate(&[42.0]).unwrap();
        assert_eq!((e.n, e.median, e.mean, e.cv), (1, 42.0, 42.0, 0.0));
        assert_eq!((e.ci_low, e.ci_high, e.ci_coverage), (None, None, None));
        assert_eq!(estimate(&[1.0, 2.0]).unwrap().ci_low, None);
    }

    #[test]
    fn small_samples_give_min_and_max_with_their_exact_coverage() {
        // The reported failure: 3 repetitions gave [-1.6 Gbit/s, 17.8 Gbit/s].
        let e = estimate(&[1.2e9, 8.1e9, 9.0e9]).unwrap();
        assert_eq!((e.ci_low, e.ci_high), (Some(1.2e9), Some(9.0e9)));
        assert_eq!(e.ci_coverage, Some(0.75));
        assert_eq!(
            estimate(&[1.0, 2.0, 3.0, 4.0]).unwrap().ci_coverage,
            Some(0.875)
        );
        assert_eq!(
            estimate(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap().ci_coverage,
            Some(0.9375)
        );
        assert!(close(coverage(6, 0), 1.0 - 2.0 / 64.0, 1e-12));
    }

    #[test]
    fn order_statistic_ranks_match_binomial_tables() {
        // n < 6: nothing reaches 95%; min and max.
        assert_eq!(order_statistic_rank(3), 0);
        assert_eq!(order_statistic_rank(5), 0);
        // n = 6: P(B <= 0) = 1/64, coverage 96.9%; trimming one more drops to 78%.
        assert_eq!(order_statistic_rank(6), 0);
        // n = 10: P(B <= 1) = 11/1024, coverage 97.9%; P(B <= 2) = 56/1024 is too much.
        assert_eq!(order_statistic_rank(10), 1);
        assert!(close(coverage(10, 1), 1.0 - 22.0 / 1024.0, 1e-12));
        // n = 20: P(B <= 5) = 0.0207, P(B <= 6) = 0.0577.
        assert_eq!(order_statistic_rank(20), 5);
        // Large n stays finite and lands near n/2 - 1.96 * sqrt(n)/2.
        let r = order_statistic_rank(10_000);
        assert!((4895..=4905).contains(&r), "{r}");
        let xs: Vec<f64> = (1..=10).map(f64::from).collect();
        let e = estimate(&xs).unwrap();
        assert_eq!((e.ci_low, e.ci_high), (Some(2.0), Some(9.0)));
    }

    #[test]
    fn mann_whitney_exact_tails_by_hand() {
        // 3 against 3, b all below a: 1 of C(6,3) = 20 splits.
        let p = mann_whitney_less(&[4.0, 5.0, 6.0], &[1.0, 2.0, 3.0]).unwrap();
        assert!(close(p, 0.05, 1e-12), "{p}");
        // b all above a: every split has a rank sum at most b's.
        let p = mann_whitney_less(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
        assert_eq!(p, 1.0);
        // 5 against 5, fully separated: 1/252.
        let p = mann_whitney_less(&[6.0, 7.0, 8.0, 9.0, 10.0], &[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
        assert!(close(p, 1.0 / 252.0, 1e-12), "{p}");
        // All tied: no evidence.
        assert_eq!(mann_whitney_less(&[1.0; 3], &[1.0; 3]), Some(1.0));
        assert_eq!(mann_whitney_less(&[], &[1.0]), None);
        // Past the enumeration limit, the normal approximation: 12 against 12, b
        // shifted down by a third of the spread. By hand: b takes ranks 1-4 and
        // then every other rank from 5 to 19, a rank sum of 106; the mean is
        // 12 * 25 / 2 = 150 and the variance 12 * 12 * 25 / 12 = 300, so
        // z = (106.5 - 150) / 17.32 = -2.51 and p = 0.0060.
        let a: Vec<f64> = (0..12).map(|i| f64::from(i) + 0.5).collect();
        let b: Vec<f64> = (0..12).map(|i| f64::from(i) - 3.7).collect();
        let p = mann_whitney_less(&a, &b).unwrap();
        assert!(close(p, 0.0060, 0.0002), "{p}");
    }

    /// Under the null (identical distributions) the one-sided test rejects at 5%
    /// about 5% of the time, and never more than the nominal level by much.
    #[test]
    fn mann_whitney_false_alarm_rate_is_its_level() {
        let mut rng = Lcg(0xa11ce);
        for n in [3usize, 5, 10] {
            let trials = 4000;
            let mut alarms = 0;
            for _ in 0..trials {
                let a: Vec<f64> = (0..n).map(|_| rng.normalish()).collect();
                let b: Vec<f64> = (0..n).map(|_| rng.normalish()).collect();
                if mann_whitney_less(&a, &b).unwrap() <= 0.05 {
                    alarms += 1;
                }
            }
            let rate = alarms as f64 / trials as f64;
            assert!(rate <= 0.065, "n = {n}: false-alarm rate {rate}");
        }
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

    /// Coverage by simulation at n = 3, 5, 10 from a symmetric, a skewed and a
    /// heavy-tailed distribution with known medians: the share of intervals that
    /// hold the true median matches the stated coverage.
    #[test]
    fn stated_coverage_holds_by_simulation() {
        let mut rng = Lcg(0x5eed);
        type Draw = fn(&mut Lcg) -> f64;
        let dists: [(&str, Draw, f64); 3] = [
            ("normal", |r| 100.0 + 5.0 * r.normalish(), 100.0),
            // Exponential(1): median ln 2.
            (
                "exponential",
                |r| -(1.0 - r.uniform()).ln(),
                std::f64::consts::LN_2,
            ),
            // Lognormal-ish heavy tail: exp of the normal, median 1.
            ("lognormal", |r| r.normalish().exp(), 1.0),
        ];
        for n in [3usize, 5, 10] {
            for (name, draw, true_median) in dists {
                let trials = 4000;
                let mut covered = 0;
                let mut stated = 0.0;
                for _ in 0..trials {
                    let xs: Vec<f64> = (0..n).map(|_| draw(&mut rng)).collect();
                    let e = estimate(&xs).unwrap();
                    stated = e.ci_coverage.unwrap();
                    if e.ci_low.unwrap() <= true_median && true_median <= e.ci_high.unwrap() {
                        covered += 1;
                    }
                }
                let share = covered as f64 / trials as f64;
                assert!(
                    (share - stated).abs() < 0.025,
                    "{name}, n = {n}: stated {stated}, simulated {share}"
                );
            }
        }
    }

    /// Property: whatever the values, the interval lies within them, so within any
    /// physical range they respect (goodput ≥ 0, busy cores ≤ the host's, loss in
    /// 0–100%).
    #[test]
    fn no_interval_leaves_the_range_of_its_values() {
        let mut rng = Lcg(7);
        for _ in 0..5000 {
            let n = 1 + (rng.uniform() * 30.0) as usize;
            let (lo, hi) = (0.0, 2.0);
            let xs: Vec<f64> = (0..n)
                .map(|_| lo + (hi - lo) * rng.uniform().powi(3))
                .collect();
            let e = estimate(&xs).unwrap();
            if let (Some(l), Some(h)) = (e.ci_low, e.ci_high) {
                assert!(
                    lo <= l && l <= e.median && e.median <= h && h <= hi,
                    "{xs:?} {e:?}"
                );
            }
            assert!(lo <= e.median && e.median <= hi);
        }
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
