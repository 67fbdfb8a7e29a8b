//! The knee of a curve: [`knee`] finds the smallest x at which y reaches a given share
//! of its maximum, e.g. the message size at which a stream reaches 90% of its best
//! goodput, or the number of flows that saturates a link.

/// Smallest x whose y reaches `frac` (e.g. 0.9) of the maximum y.
///
/// Points may come in any order. Points with a non-finite coordinate are left out;
/// `None` if no point remains.
pub fn knee(points: &[(f64, f64)], frac: f64) -> Option<f64> {
    let finite = || {
        points
            .iter()
            .copied()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
    };
    let max_y = finite().map(|(_, y)| y).reduce(f64::max)?;
    let target = frac * max_y;
    finite()
        .filter(|&(_, y)| y >= target)
        .map(|(x, _)| x)
        .reduce(f64::min)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knee_of_a_saturating_curve() {
        // y = 10 * (1 - 2^(-x/1000)) over x = 250, 500, ..., 8000, shuffled.
        // 90% of the maximum (about 9.96) is 8.96, first reached at x = 3500
        // (y = 9.116); x = 3250 gives y = 8.949, just short.
        let mut pts: Vec<(f64, f64)> = (1..=32)
            .map(|k| {
                let x = 250.0 * k as f64;
                (x, 10.0 * (1.0 - (-x / 1000.0).exp2()))
            })
            .collect();
        pts.reverse();
        pts.swap(3, 20);
        assert_eq!(knee(&pts, 0.9), Some(3500.0));
        // The whole curve reaches 0% of its maximum at its smallest x.
        assert_eq!(knee(&pts, 0.0), Some(250.0));
        // Only the maximum itself reaches 100%.
        assert_eq!(knee(&pts, 1.0), Some(8000.0));
    }

    #[test]
    fn empty_and_non_finite() {
        assert_eq!(knee(&[], 0.9), None);
        assert_eq!(knee(&[(f64::NAN, 1.0)], 0.9), None);
        assert_eq!(knee(&[(1.0, f64::NAN), (2.0, 5.0)], 0.9), Some(2.0));
    }
}
