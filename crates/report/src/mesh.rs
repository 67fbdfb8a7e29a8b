//! A mesh run as matrices: one per test, one row per source agent, one column
//! per destination, each cell the pair's median goodput (or transaction rate),
//! and below it each measured pair's verdict and each failed pair's reason. As
//! text (what `netsonde mesh` prints) and as the HTML report's heat maps.

use std::collections::BTreeMap;
use std::fmt::Write;

use netsonde_model::sweep::Metric;
use netsonde_model::units::BitRate;

use crate::markup::esc;
use crate::view::RunView;

/// What one ordered pair measured.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// Measured: the headline figure and what limited it.
    Measured {
        /// Median goodput (bit/s) over the pair's repetitions, for stream tests.
        goodput: Option<f64>,
        /// Median transactions per second, for request/response tests.
        transactions: Option<f64>,
        /// The verdict most of its repetitions got.
        verdict: Option<String>,
    },
    /// Not measured (yet): why.
    Failed(String),
}

impl Cell {
    /// The headline figure: goodput, else transactions per second.
    fn figure(&self) -> Option<f64> {
        match self {
            Cell::Measured {
                goodput: Some(g), ..
            } => Some(*g),
            Cell::Measured {
                transactions: Some(t),
                ..
            } => Some(*t),
            _ => None,
        }
    }

    fn text(&self) -> String {
        match self {
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
    }
}

/// A pair below this share of the pairs' median is marked: a link or host far
/// off the others, not the spread of pairs measured one after another on busy
/// hosts (a quarter; half flagged pairs of a healthy 4-host VM mesh).
pub const OUTLIER: f64 = 0.25;

/// One test's pairs.
#[derive(Debug, Clone, PartialEq)]
pub struct Matrix {
    /// The test and whatever else varies but the pair (`tcp-stream out size 128K`).
    pub title: String,
    /// The agents, in the mesh's order, that are in some pair.
    pub names: Vec<String>,
    /// Each (source, destination) pair of the pattern.
    pub cells: BTreeMap<(String, String), Cell>,
}

impl Matrix {
    /// The median of the measured pairs' figures.
    fn median(&self) -> Option<f64> {
        let mut figures: Vec<f64> = self.cells.values().filter_map(Cell::figure).collect();
        figures.sort_by(f64::total_cmp);
        figures.get(figures.len() / 2).copied()
    }

    /// Whether a cell is under [`OUTLIER`] of the median.
    fn outlier(&self, median: Option<f64>, c: &Cell) -> bool {
        matches!((c.figure(), median), (Some(v), Some(m)) if m > 0.0 && v < OUTLIER * m)
    }
}

/// The matrices of a mesh run, one per test point (the axes other than the
/// pair); none for a run that is not a mesh.
pub fn matrices(view: &RunView) -> Vec<Matrix> {
    let names = &view.run.mesh_agents;
    if names.is_empty() {
        return Vec::new();
    }
    let mut tables: BTreeMap<String, BTreeMap<(String, String), Cell>> = BTreeMap::new();
    for p in &view.points {
        let (Some(src), Some(dst)) = (p.axes.get("src"), p.axes.get("dst")) else {
            continue;
        };
        // The test first, then what else varies (the pair is the matrix's).
        const FIRST: [&str; 3] = ["test", "direction", "size"];
        let title: Vec<String> = FIRST
            .iter()
            .filter_map(|k| p.axes.get(*k).map(|v| (*k, v)))
            .chain(
                p.axes
                    .iter()
                    .map(|(k, v)| (k.as_str(), v))
                    .filter(|(k, _)| !FIRST.contains(k) && !["src", "dst"].contains(k)),
            )
            .map(|(k, v)| match k {
                "test" | "direction" => v.clone(),
                _ => format!("{k} {v}"),
            })
            .collect();
        let cell = match (p.status.as_str(), &p.summary) {
            ("done", Some(_)) => Cell::Measured {
                goodput: p.median(Metric::Goodput.name()).filter(|g| *g > 0.0),
                transactions: p
                    .median(Metric::TransactionsPerSec.name())
                    .filter(|t| *t > 0.0),
                verdict: p.diagnosis.as_ref().map(|d| d.bottleneck.to_string()),
            },
            (status, _) => Cell::Failed(
                p.reason
                    .clone()
                    .unwrap_or_else(|| format!("{status} (not measured)")),
            ),
        };
        tables
            .entry(title.join(" "))
            .or_default()
            .insert((src.clone(), dst.clone()), cell);
    }
    tables
        .into_iter()
        .map(|(title, cells)| Matrix {
            title,
            names: names.clone(),
            cells,
        })
        .collect()
}

/// A matrix as text. A pair outside the pattern is `·`; a failed one `failed`.
/// Cells far below the others' median (under [`OUTLIER`] of it) are marked
/// `<<`: the outliers a fleet check looks for.
pub fn text(m: &Matrix) -> String {
    let (title, names, cells) = (&m.title, &m.names, &m.cells);
    let median = m.median();
    let text = Cell::text;
    let outlier = |c: &Cell| m.outlier(median, c);
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
    for (src, dst, what) in verdicts(m) {
        let _ = writeln!(out, "{src} -> {dst}: {what}");
    }
    out
}

/// Each measured pair's verdict and each failed pair's reason:
/// (source, destination, what).
fn verdicts(m: &Matrix) -> Vec<(&str, &str, String)> {
    m.cells
        .iter()
        .filter_map(|((src, dst), c)| {
            let what = match c {
                Cell::Measured {
                    verdict: Some(v), ..
                } => v.clone(),
                Cell::Failed(why) => format!("failed: {why}"),
                Cell::Measured { verdict: None, .. } => return None,
            };
            Some((src.as_str(), dst.as_str(), what))
        })
        .collect()
}

/// A matrix as an HTML heat map: each measured cell shaded by its share of the
/// test's fastest pair (darker is faster), outliers outlined, failures grey;
/// each cell's verdict or reason as its tooltip and listed below.
pub fn html(m: &Matrix) -> String {
    let median = m.median();
    let max = m
        .cells
        .values()
        .filter_map(Cell::figure)
        .fold(0.0, f64::max);
    let mut o = format!(
        "<h3>{}</h3>\n<table class=\"heat\"><tr><th>from \\ to</th>",
        esc(&m.title)
    );
    for n in &m.names {
        let _ = write!(o, "<th>{}</th>", esc(n));
    }
    o.push_str("</tr>\n");
    for src in &m.names {
        let _ = write!(o, "<tr><th>{}</th>", esc(src));
        for dst in &m.names {
            let Some(c) = m.cells.get(&(src.clone(), dst.clone())) else {
                o.push_str("<td class=\"none\">·</td>");
                continue;
            };
            let tip = match c {
                Cell::Measured { verdict, .. } => verdict.clone().unwrap_or_default(),
                Cell::Failed(why) => why.clone(),
            };
            let class = match c {
                Cell::Failed(_) => " class=\"failed\"",
                _ if m.outlier(median, c) => " class=\"out\"",
                _ => "",
            };
            let style = match c.figure() {
                Some(v) if max > 0.0 => {
                    // Lightness 95% (nothing) to 35% (the fastest pair).
                    let light = 95.0 - 60.0 * (v / max).clamp(0.0, 1.0);
                    let ink = if light < 60.0 { "#fff" } else { "#222" };
                    format!(" style=\"background:hsl(210,65%,{light:.0}%);color:{ink}\"")
                }
                _ => String::new(),
            };
            let _ = write!(
                o,
                "<td{class}{style} title=\"{}\">{}</td>",
                esc(&tip),
                esc(&c.text())
            );
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</table>\n");
    let lines = verdicts(m);
    if !lines.is_empty() {
        o.push_str("<ul class=\"note\">");
        for (src, dst, what) in lines {
            let _ = write!(o, "<li>{} → {}: {}</li>", esc(src), esc(dst), esc(&what));
        }
        o.push_str("</ul>\n");
    }
    o
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
        let m = Matrix {
            title: "tcp-stream out".into(),
            names,
            cells,
        };
        let html = html(&m);
        let m = text(&m);
        assert!(m.contains("<< 95.00 Mbit/s"), "{m}");
        assert_eq!(m.matches("<<").count(), 2, "{m}"); // the cell and the legend
        assert!(
            m.contains("h3 -> h1: failed: agent h3 did not answer"),
            "{m}"
        );
        assert!(m.contains("h1 -> h2: link-bound"), "{m}");
        // The diagonal is not a pair.
        assert_eq!(m.lines().nth(2).unwrap().matches('·').count(), 1, "{m}");
        // The heat map: one outlined outlier, one failure, three diagonal cells,
        // the fastest pairs darkest, verdicts as tooltips and below.
        assert_eq!(html.matches("class=\"out\"").count(), 1, "{html}");
        assert_eq!(html.matches("class=\"failed\"").count(), 1, "{html}");
        assert_eq!(html.matches("class=\"none\"").count(), 3, "{html}");
        assert_eq!(html.matches("hsl(210,65%,35%)").count(), 4, "{html}");
        assert!(html.contains("title=\"link-bound\">95.00 Mbit/s"), "{html}");
        assert!(
            html.contains("<li>h3 → h1: failed: agent h3 did not answer</li>"),
            "{html}"
        );
    }
}
