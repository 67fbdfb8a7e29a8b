//! Latency histograms: one per requester flow, recorded on the hot path without
//! allocation (bounds fixed up front), merged and summarised off it.

use netsonde_model::result::LatencySummary;
use netsonde_model::units::Nanos;

/// Nanosecond latencies from 1 ns to 100 s with 3 significant digits.
pub type Histogram = hdrhistogram::Histogram<u64>;

/// A histogram with netsonde's bounds.
pub fn new_histogram() -> Histogram {
    Histogram::new_with_bounds(1, 100_000_000_000, 3).expect("static bounds are valid")
}

/// Summarises a histogram.
pub fn summarize(h: &Histogram) -> LatencySummary {
    if h.is_empty() {
        return LatencySummary::default();
    }
    let q = |p: f64| Nanos(h.value_at_quantile(p));
    LatencySummary {
        count: h.len(),
        min: Nanos(h.min()),
        mean: Nanos(h.mean().round() as u64),
        stddev: Nanos(h.stdev().round() as u64),
        p50: q(0.50),
        p90: q(0.90),
        p99: q(0.99),
        p999: q(0.999),
        max: Nanos(h.max()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_is_ordered_and_close() {
        let mut h = new_histogram();
        for v in 1..=10_000u64 {
            h.record(v * 1000).unwrap();
        }
        let s = summarize(&h);
        assert_eq!(s.count, 10_000);
        assert!(s.min <= s.p50 && s.p50 <= s.p90 && s.p90 <= s.p99);
        assert!(s.p99 <= s.p999 && s.p999 <= s.max);
        // 3 significant digits: within 0.1% of the true quantiles.
        let close = |got: Nanos, want: f64| (got.0 as f64 - want).abs() / want < 0.002;
        assert!(close(s.p50, 5_000_000.0), "{s:?}");
        assert!(close(s.p99, 9_900_000.0), "{s:?}");
        assert!(close(s.mean, 5_000_500.0), "{s:?}");
    }

    #[test]
    fn empty_is_zero() {
        assert_eq!(summarize(&new_histogram()), LatencySummary::default());
    }
}
