//! Ordinary least squares ([`fit_linear`], [`LinearFit`]) and the message-size
//! latency model built on it ([`predicted_throughput`]).
//!
//! The model, from the reference study of message-size sweeps: the time to move one
//! message of B bytes is linear in B, `latency_ns = a·B + b`, where `a` is the
//! per-byte cost (copies, checksums, the wire) and `b` the per-message cost (system
//! calls, interrupts, protocol processing). Fitting `a` and `b` on request-response
//! latencies predicts the throughput a stream of B-byte messages can reach.

use serde::{Deserialize, Serialize};

/// A least-squares line `y = slope·x + intercept` with its goodness of fit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinearFit {
    /// Change of y per unit of x.
    pub slope: f64,
    /// y at x = 0.
    pub intercept: f64,
    /// Coefficient of determination, `1 − SS_res/SS_tot`; 1 when the points are
    /// explained exactly (including when all y are equal).
    pub r2: f64,
    /// `y − predict(x)` for each point used, in input order.
    pub residuals: Vec<f64>,
    /// Points used.
    pub n: usize,
}

impl LinearFit {
    /// The fewest points a line must be fitted to for its fit to say anything: a
    /// line through two points fits them exactly (R² = 1 whatever they are).
    pub const MIN_JUDGED: usize = 3;

    /// Whether it rests on enough points to be judged ([`LinearFit::MIN_JUDGED`]).
    pub fn judged(&self) -> bool {
        self.n >= LinearFit::MIN_JUDGED
    }

    /// Its R² as a report shows it: `R² = 0.9876`, or why there is none worth
    /// showing.
    pub fn r2_text(&self) -> String {
        if self.judged() {
            format!("R² = {:.4}", self.r2)
        } else {
            format!(
                "no R²: a line through {} points fits them exactly (needs ≥ {} sizes)",
                self.n,
                LinearFit::MIN_JUDGED
            )
        }
    }

    /// The fitted y at `x`.
    pub fn predict(&self, x: f64) -> f64 {
        self.slope * x + self.intercept
    }
}

/// Ordinary least squares `y = slope·x + intercept` over the pairs `(xs[i], ys[i])`.
///
/// Pairs where either coordinate is non-finite are left out. `None` if the slices
/// differ in length, fewer than 2 points remain, or all x are equal (the slope is
/// then undefined).
pub fn fit_linear(xs: &[f64], ys: &[f64]) -> Option<LinearFit> {
    if xs.len() != ys.len() {
        return None;
    }
    let pts: Vec<(f64, f64)> = xs
        .iter()
        .zip(ys)
        .map(|(&x, &y)| (x, y))
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect();
    let n = pts.len();
    if n < 2 {
        return None;
    }
    let nf = n as f64;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / nf;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / nf;
    // Centred sums: numerically kinder than the textbook Σxy − n·x̄·ȳ when x is large
    // (message sizes in bytes) and the spread is small.
    let sxx: f64 = pts.iter().map(|(x, _)| (x - mx).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|(x, y)| (x - mx) * (y - my)).sum();
    let syy: f64 = pts.iter().map(|(_, y)| (y - my).powi(2)).sum();
    if sxx == 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    let residuals: Vec<f64> = pts
        .iter()
        .map(|(x, y)| y - (slope * x + intercept))
        .collect();
    let ss_res: f64 = residuals.iter().map(|r| r * r).sum();
    let r2 = if syy == 0.0 { 1.0 } else { 1.0 - ss_res / syy };
    Some(LinearFit {
        slope,
        intercept,
        r2,
        residuals,
        n,
    })
}

/// The one-in-flight bound in bit/s for messages of `size_bytes` from a fit of
/// latency in nanoseconds against message size in bytes (`latency_ns = a·B + b`,
/// with `a = fit.slope`, `b = fit.intercept`): `B·8 / ((a·B + b)·10⁻⁹)`, the
/// throughput of one message at a time (stop and wait). A stream keeps many
/// messages in flight, so this is a lower bound for it, not a prediction (measured
/// on loopback: 26 Mbit/s against 900 at 64 B).
///
/// `None` if the predicted latency is not positive (or not finite): the model says
/// nothing useful there.
pub fn predicted_throughput(fit: &LinearFit, size_bytes: f64) -> Option<f64> {
    let latency_ns = fit.predict(size_bytes);
    if !latency_ns.is_finite() || latency_ns <= 0.0 {
        return None;
    }
    Some(size_bytes * 8.0 / (latency_ns * 1e-9))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_line_through_two_points_is_not_judged() {
        let two = super::fit_linear(&[1.0, 2.0], &[5.0, 3.0]).unwrap();
        assert_eq!(two.r2, 1.0);
        assert!(!two.judged());
        assert!(two.r2_text().starts_with("no R²"), "{}", two.r2_text());
        let three = super::fit_linear(&[1.0, 2.0, 3.0], &[1.0, 2.1, 2.9]).unwrap();
        assert!(three.judged());
        assert!(
            three.r2_text().starts_with("R² = 0.99"),
            "{}",
            three.r2_text()
        );
    }

    use super::*;

    const SIZES: [f64; 8] = [
        64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0, 131072.0, 262144.0,
    ];

    #[test]
    fn noiseless_line_is_recovered_exactly() {
        // 0.8 ns per byte, 5 µs per message.
        let ys: Vec<f64> = SIZES.iter().map(|b| 0.8 * b + 5000.0).collect();
        let fit = fit_linear(&SIZES, &ys).unwrap();
        assert!((fit.slope - 0.8).abs() < 1e-12, "{}", fit.slope);
        assert!((fit.intercept - 5000.0).abs() < 1e-6, "{}", fit.intercept);
        assert!((fit.r2 - 1.0).abs() < 1e-12);
        assert_eq!(fit.n, SIZES.len());
        assert!(fit.residuals.iter().all(|r| r.abs() < 1e-6));
        assert!((fit.predict(1000.0) - 5800.0).abs() < 1e-6);
    }

    #[test]
    fn small_noise_stays_within_one_percent() {
        // Deterministic ±0.5% noise that alternates in sign and size.
        let noise = [0.005, -0.003, 0.004, -0.005, 0.002, -0.004, 0.003, -0.002];
        let ys: Vec<f64> = SIZES
            .iter()
            .zip(noise)
            .map(|(b, e)| (0.8 * b + 5000.0) * (1.0 + e))
            .collect();
        let fit = fit_linear(&SIZES, &ys).unwrap();
        assert!((fit.slope / 0.8 - 1.0).abs() < 0.01, "{}", fit.slope);
        assert!(
            (fit.intercept / 5000.0 - 1.0).abs() < 0.01,
            "{}",
            fit.intercept
        );
        assert!(fit.r2 > 0.999, "{}", fit.r2);
    }

    #[test]
    fn degenerate_inputs() {
        assert_eq!(fit_linear(&[1.0], &[2.0]), None);
        assert_eq!(fit_linear(&[3.0, 3.0, 3.0], &[1.0, 2.0, 3.0]), None);
        assert_eq!(fit_linear(&[1.0, 2.0], &[1.0]), None);
        // A non-finite pair is left out; two good points remain.
        let fit = fit_linear(&[1.0, f64::NAN, 3.0], &[2.0, 0.0, 6.0]).unwrap();
        assert_eq!(fit.n, 2);
        assert!((fit.slope - 2.0).abs() < 1e-12);
        // All y equal: a flat line explains them exactly.
        let flat = fit_linear(&[1.0, 2.0, 3.0], &[4.0, 4.0, 4.0]).unwrap();
        assert_eq!((flat.slope, flat.intercept, flat.r2), (0.0, 4.0, 1.0));
    }

    #[test]
    fn predicted_throughput_by_hand() {
        let fit = LinearFit {
            slope: 0.8,
            intercept: 5000.0,
            r2: 1.0,
            residuals: vec![],
            n: 2,
        };
        // 64 KiB: latency 0.8 * 65536 + 5000 = 57428.8 ns;
        // 65536 * 8 bit / 57.4288 µs = 9.1292... Gbit/s.
        let bps = predicted_throughput(&fit, 65536.0).unwrap();
        let want = 65536.0 * 8.0 / 57428.8e-9;
        assert!((bps - want).abs() < 1.0, "{bps} vs {want}");
        assert!((bps / 1e9 - 9.1292).abs() < 1e-3, "{bps}");
        // As B grows the prediction tends to 8/a bit/ns = 10 Gbit/s.
        let big = predicted_throughput(&fit, 1e12).unwrap();
        assert!((big / 1e10 - 1.0).abs() < 1e-3);
        // A negative predicted latency has no meaning.
        let bad = LinearFit {
            intercept: -5000.0,
            ..fit
        };
        assert_eq!(predicted_throughput(&bad, 1000.0), None);
    }
}
