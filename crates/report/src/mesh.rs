//! A mesh run as a matrix: one row per source agent, one column per
//! destination, each cell the pair's median goodput (or transaction rate), and
//! below it each measured pair's verdict and each failed pair's reason.

use std::collections::BTreeMap;
use std::fmt::Write;

use netsonde_model::units::BitRate;

/// What one ordered pair measured.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// Measured: the headline figure and what limited it.
    Measured {
        /// Median goodput (bit/s) over the pair's repetitions, for stream tests.
        goodput: Option<f64>,
        /// Median transactions per second, for request/response tests.
        transactions: Option<f64>,
        /// The verdict of its last repetition.
        verdict: Option<String>,
    },
    /// Not measured (yet): why.
    Failed(String),
}

/// A pair below this share of the pairs' median is marked: a link or host far
/// off the others, not the spread of pairs measured one after another on busy
/// hosts (a quarter; half flagged pairs of a healthy 4-host VM mesh).
pub const OUTLIER: f64 = 0.25;

/// The matrix of `names` (in the mesh's order) for one test point, as text.
/// A pair outside the pattern is `·`; a failed one `failed`. Cells far below
/// the others' median (under [`OUTLIER`] of it) are marked `<<`: the outliers
/// a fleet check looks for.
pub fn matrix(title: &str, names: &[String], cells: &BTreeMap<(String, String), Cell>) -> String {
    let figure = |c: &Cell| match c {
        Cell::Measured {
            goodput: Some(g), ..
        } => Some(*g),
        Cell::Measured {
            transactions: Some(t),
            ..
        } => Some(*t),
        _ => None,
    };
    let mut figures: Vec<f64> = cells.values().filter_map(figure).collect();
    figures.sort_by(f64::total_cmp);
    let median = figures.get(figures.len() / 2).copied();
    let text = |c: &Cell| -> String {
        match c {
            Cell::Failed(_) => "failed".into(),
            Cell::Measured {
                goodput: Some(g), ..
            } => BitRate(*g).to_string(),
            Cell::Measured {
                transactions: Some(t),
                ..
            } => format!("{t:.0}/s"),
            Cell::Measured { .. } => "-".into(),
        }
    };
    let outlier =
        |c: &Cell| matches!((figure(c), median), (Some(v), Some(m)) if m > 0.0 && v < OUTLIER * m);
    let width = names
        .iter()
        .map(String::len)
        .chain(cells.values().map(|c| text(c).len() + 3))
        .max()
        .unwrap_or(4)
        .max(6);
    let mut out = format!("{title} (rows: source, columns: destination)\n");
    let _ = write!(out, "{:>width$}", "");
    for n in names {
        let _ = write!(out, " {n:>width$}");
    }
    out.push('\n');
    for src in names {
        let _ = write!(out, "{src:>width$}");
        for dst in names {
            let cell = match cells.get(&(src.clone(), dst.clone())) {
                None => "·".to_string(),
                Some(c) if outlier(c) => format!("<< {}", text(c)),
                Some(c) => text(c),
            };
            let _ = write!(out, " {cell:>width$}");
        }
        out.push('\n');
    }
    if cells.values().any(outlier) {
        out.push_str("<<: under a quarter of the median of the pairs\n");
    }
    for ((src, dst), c) in cells {
        match c {
            Cell::Measured {
                verdict: Some(v), ..
            } => {
                let _ = writeln!(out, "{src} -> {dst}: {v}");
            }
            Cell::Failed(why) => {
                let _ = writeln!(out, "{src} -> {dst}: failed: {why}");
            }
            Cell::Measured { verdict: None, .. } => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slow_pair_stands_out_and_failures_say_why() {
        let names: Vec<String> = ["h1", "h2", "h3"].iter().map(|s| s.to_string()).collect();
        let mut cells = BTreeMap::new();
        for a in &names {
            for b in &names {
                if a != b {
                    let g = if (a, b) == (&names[1], &names[2]) {
                        95e6
                    } else {
                        940e6
                    };
                    cells.insert(
                        (a.clone(), b.clone()),
                        Cell::Measured {
                            goodput: Some(g),
                            transactions: None,
                            verdict: Some("link-bound".into()),
                        },
                    );
                }
            }
        }
        cells.insert(
            ("h3".into(), "h1".into()),
            Cell::Failed("agent h3 did not answer".into()),
        );
        let m = matrix("tcp-stream out", &names, &cells);
        assert!(m.contains("<< 95.00 Mbit/s"), "{m}");
        assert_eq!(m.matches("<<").count(), 2, "{m}"); // the cell and the legend
        assert!(
            m.contains("h3 -> h1: failed: agent h3 did not answer"),
            "{m}"
        );
        assert!(m.contains("h1 -> h2: link-bound"), "{m}");
        // The diagonal is not a pair.
        assert_eq!(m.lines().nth(2).unwrap().matches('·').count(), 1, "{m}");
    }
}
