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
    /// The median of the measured pairs' figures (of an even count, the mean of
    /// the two middle ones).
    fn median(&self) -> Option<f64> {
        let figures: Vec<f64> = self.cells.values().filter_map(Cell::figure).collect();
        netsonde_analysis::estimate(&figures).map(|e| e.median)
    }

    /// Whether a cell is under [`OUTLIER`] of the median.
    fn outlier(&self, median: Option<f64>, c: &Cell) -> bool {
        matches!((c.figure(), median), (Some(v), Some(m)) if m > 0.0 && v < OUTLIER * m)
    }
}

/// A matrix's cells by (source, destination).
type Cells = BTreeMap<(String, String), Cell>;

/// The matrices of a mesh run, one per test point (the axes other than the
/// pair); none for a run that is not a mesh.
pub fn matrices(view: &RunView) -> Vec<Matrix> {
    let names = &view.run.mesh_agents;
    if names.is_empty() {
        return Vec::new();
    }
    let mut tables: Vec<(String, Cells)> = Vec::new();
    let lab = crate::view::Labeler::new(&view.points);
    for p in &view.points {
        let (Some(src), Some(dst)) = (p.axes.get("src"), p.axes.get("dst")) else {
            continue;
        };
        // What varies in the run but the pair, which is the matrix's.
        let title = lab.label(p, &["src", "dst"]);
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
        // In the order the points come (the plan's: sizes ascending), not
        // the titles' alphabetical one.
        let at = match tables.iter().position(|(t, _)| *t == title) {
            Some(i) => i,
            None => {
                tables.push((title, BTreeMap::new()));
                tables.len() - 1
            }
        };
        tables[at].1.insert((src.clone(), dst.clone()), cell);
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

/// The most agents a text matrix has (one terminal-wide row of cells); a mesh of
/// more is listed by pair.
pub const TEXT_GRID_MAX: usize = 16;

/// The most agents an HTML heat map has; a mesh of more is a table of pairs.
pub const HTML_GRID_MAX: usize = 64;

/// The most pairs a listing shows in each of its parts (failed, outliers, the
/// slowest of the rest); the rest are counted.
pub const LISTED: usize = 20;

/// The most rows the HTML table of a large mesh's pairs has (failed and
/// slowest first); the count of the rest is said.
pub const TABLE_ROWS: usize = 1000;

/// A matrix as text: a grid of up to [`TEXT_GRID_MAX`] agents, else a listing
/// of the pairs that need a look (see [`listing`]).
pub fn text(m: &Matrix) -> String {
    if m.names.len() <= TEXT_GRID_MAX {
        grid(m)
    } else {
        listing(m)
    }
}

/// A grid of pairs. A pair outside the pattern is `·`; a failed one `failed`.
/// Cells far below the others' median (under [`OUTLIER`] of it) are marked
/// `<<`: the outliers a fleet check looks for.
fn grid(m: &Matrix) -> String {
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
    for (who, what) in verdicts(m) {
        let _ = writeln!(out, "{who}: {what}");
    }
    out
}

/// The pairs of a mesh too large for a grid: how many, the figures' median and
/// range, then the failed pairs, the outliers and the slowest of the rest (up to
/// [`LISTED`] each, slowest first), each with its verdict or reason.
pub fn listing(m: &Matrix) -> String {
    let median = m.median();
    let parts = m.parts(median);
    let mut out = format!(
        "{}: {} pair(s) of {} agents, {} measured, {} failed",
        m.title,
        m.cells.len(),
        m.names.len(),
        m.cells.len() - parts.failed.len(),
        parts.failed.len()
    );
    if let (Some(med), Some(lo), Some(hi)) = (median, parts.slowest(), parts.fastest()) {
        let f = |c: &Cell| {
            let mut t = c.text();
            t.retain(|ch| ch != '<');
            t
        };
        let _ = write!(
            out,
            "; median {}, slowest {}, fastest {}",
            m.show(med),
            f(lo.2),
            f(hi.2)
        );
    }
    out.push('\n');
    let mut section = |name: &str, pairs: &[(&str, &str, &Cell)]| {
        if pairs.is_empty() {
            return;
        }
        let _ = writeln!(out, "{name}:");
        for (src, dst, c) in pairs.iter().take(LISTED) {
            let what = match c {
                Cell::Measured { verdict, .. } => verdict.clone().unwrap_or_default(),
                Cell::Failed(why) => why.clone(),
            };
            let _ = writeln!(out, "  {src} -> {dst}  {}  {what}", c.text());
        }
        if pairs.len() > LISTED {
            let _ = writeln!(out, "  ... and {} more", pairs.len() - LISTED);
        }
    };
    section("failed", &parts.failed);
    section("outliers (under a quarter of the median)", &parts.outliers);
    section("slowest of the rest", &parts.rest);
    out
}

/// A matrix's pairs in three parts, each slowest first.
struct Parts<'a> {
    failed: Vec<(&'a str, &'a str, &'a Cell)>,
    outliers: Vec<(&'a str, &'a str, &'a Cell)>,
    rest: Vec<(&'a str, &'a str, &'a Cell)>,
}

impl<'a> Parts<'a> {
    fn measured(&self) -> impl Iterator<Item = &(&'a str, &'a str, &'a Cell)> {
        self.outliers.iter().chain(&self.rest)
    }

    fn slowest(&self) -> Option<&(&'a str, &'a str, &'a Cell)> {
        self.measured().next()
    }

    fn fastest(&self) -> Option<&(&'a str, &'a str, &'a Cell)> {
        self.measured().last()
    }
}

impl Matrix {
    fn parts(&self, median: Option<f64>) -> Parts<'_> {
        let mut all: Vec<(&str, &str, &Cell)> = self
            .cells
            .iter()
            .map(|((s, d), c)| (s.as_str(), d.as_str(), c))
            .collect();
        all.sort_by(|a, b| {
            let key = |c: &Cell| c.figure().unwrap_or(f64::NEG_INFINITY);
            key(a.2).total_cmp(&key(b.2))
        });
        let (failed, measured): (Vec<_>, Vec<_>) =
            all.into_iter().partition(|(_, _, c)| c.figure().is_none());
        let (outliers, rest) = measured
            .into_iter()
            .partition(|(_, _, c)| self.outlier(median, c));
        Parts {
            failed,
            outliers,
            rest,
        }
    }

    /// A figure in the matrix's unit.
    fn show(&self, v: f64) -> String {
        let rr = self.cells.values().any(|c| {
            matches!(
                c,
                Cell::Measured {
                    goodput: None,
                    transactions: Some(_),
                    ..
                }
            )
        });
        if rr {
            format!("{v:.0}/s")
        } else {
            BitRate(v).to_string()
        }
    }
}

/// Each verdict or failure once, with the pairs that got it, in the order
/// first met: (what, pairs); `every pair` when all of the matrix's got it.
fn verdicts(m: &Matrix) -> Vec<(String, String)> {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for ((src, dst), c) in &m.cells {
        let what = match c {
            Cell::Measured {
                verdict: Some(v), ..
            } => v.clone(),
            // A reason that says "failed" already is not said twice.
            Cell::Failed(why) => {
                format!("failed: {}", why.strip_prefix("failed: ").unwrap_or(why))
            }
            Cell::Measured { verdict: None, .. } => continue,
        };
        let pair = format!("{src} -> {dst}");
        match groups.iter_mut().find(|(w, _)| *w == what) {
            Some((_, pairs)) => pairs.push(pair),
            None => groups.push((what, vec![pair])),
        }
    }
    groups
        .into_iter()
        .map(|(what, pairs)| {
            let who = if pairs.len() == m.cells.len() && pairs.len() > 1 {
                "every pair".to_string()
            } else {
                pairs.join(", ")
            };
            (who, what)
        })
        .collect()
}

/// A matrix in HTML: a heat map of up to [`HTML_GRID_MAX`] agents, else a
/// table of the pairs, slowest first.
pub fn html(m: &Matrix) -> String {
    if m.names.len() <= HTML_GRID_MAX {
        heat_map(m)
    } else {
        pair_table(m)
    }
}

/// The pairs of a mesh too large for a heat map, as a table, failed first and
/// then slowest first, up to [`TABLE_ROWS`] rows.
fn pair_table(m: &Matrix) -> String {
    let median = m.median();
    let parts = m.parts(median);
    let rows: Vec<_> = parts.failed.iter().chain(parts.measured()).collect();
    let mut o = format!(
        "<h3>{}</h3>\n<p class=\"note\">{} pairs of {} agents, failed first, then slowest \
         first{}.</p>\n<table class=\"heat\"><tr><th>from</th><th>to</th><th>figure</th>\
         <th>verdict or reason</th></tr>\n",
        esc(&m.title),
        m.cells.len(),
        m.names.len(),
        if rows.len() > TABLE_ROWS {
            format!("; the first {TABLE_ROWS} shown")
        } else {
            String::new()
        }
    );
    for (src, dst, c) in rows.into_iter().take(TABLE_ROWS) {
        let (class, what) = match c {
            Cell::Failed(why) => (" class=\"failed\"", why.clone()),
            Cell::Measured { verdict, .. } => (
                if m.outlier(median, c) {
                    " class=\"out\""
                } else {
                    ""
                },
                verdict.clone().unwrap_or_default(),
            ),
        };
        let _ = writeln!(
            o,
            "<tr><td>{}</td><td>{}</td><td{class}>{}</td><td>{}</td></tr>",
            esc(src),
            esc(dst),
            esc(&c.text()),
            esc(&what)
        );
    }
    o.push_str("</table>\n");
    o
}

/// A heat map: each measured cell shaded by its share of the test's fastest
/// pair (darker is faster), outliers outlined, failures grey; each cell's
/// verdict or reason as its tooltip and listed below.
fn heat_map(m: &Matrix) -> String {
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
    // What the shades mean: a scale from nothing to the fastest pair.
    let _ = writeln!(
        o,
        "<p class=\"legend\">shade: the pair's share of the fastest \
         <span class=\"scale\">{}</span> {}; <span class=\"out\">outlined</span>: under a \
         quarter of the median; <span class=\"failed\">grey</span>: failed; ·: not a pair of \
         the pattern</p>",
        [0.0, 0.25, 0.5, 0.75, 1.0]
            .iter()
            .map(|f| {
                let light = 95.0 - 60.0 * f;
                format!(
                    "<i style=\"background:hsl(210,65%,{light:.0}%)\" title=\"{:.0}%\"></i>",
                    100.0 * f
                )
            })
            .collect::<String>(),
        if max > 0.0 { m.show(max) } else { "-".into() }
    );
    let lines = verdicts(m);
    if !lines.is_empty() {
        o.push_str("<ul class=\"note\">");
        for (who, what) in lines {
            let who = who.replace(" -> ", " → ");
            let _ = write!(o, "<li>{}: {}</li>", esc(&who), esc(&what));
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
        // One line per verdict, with its pairs.
        assert!(
            m.contains("h1 -> h2, h1 -> h3, h2 -> h1, h2 -> h3, h3 -> h2: link-bound"),
            "{m}"
        );
        // The diagonal is not a pair.
        assert_eq!(m.lines().nth(2).unwrap().matches('·').count(), 1, "{m}");
        // The heat map: one outlined outlier, one failure, three diagonal cells,
        // the fastest pairs darkest, verdicts as tooltips and below.
        let (grid, legend) = html.split_once("<p class=\"legend\">").unwrap();
        assert_eq!(grid.matches("class=\"out\"").count(), 1, "{html}");
        assert_eq!(grid.matches("class=\"failed\"").count(), 1, "{html}");
        assert_eq!(grid.matches("class=\"none\"").count(), 3, "{html}");
        assert_eq!(grid.matches("hsl(210,65%,35%)").count(), 4, "{html}");
        // The legend: the scale from nothing to the fastest pair, and the marks.
        assert!(legend.contains("hsl(210,65%,95%)") && legend.contains("940.00 Mbit/s"));
        assert!(
            legend.contains("outlined") && legend.contains("failed"),
            "{legend}"
        );
        assert!(html.contains("title=\"link-bound\">95.00 Mbit/s"), "{html}");
        assert!(
            html.contains("<li>h3 → h1: failed: agent h3 did not answer</li>"),
            "{html}"
        );
    }

    #[test]
    fn the_median_of_an_even_count_of_pairs_is_the_mean_of_the_middle_two() {
        let names: Vec<String> = ["a", "b"].iter().map(|s| s.to_string()).collect();
        let cell = |g: f64| Cell::Measured {
            goodput: Some(g),
            transactions: None,
            verdict: None,
        };
        let cells = BTreeMap::from([
            (("a".into(), "b".into()), cell(100e6)),
            (("b".into(), "a".into()), cell(300e6)),
        ]);
        let m = Matrix {
            title: "tcp-stream out".into(),
            names,
            cells,
        };
        // Not 300 Mbit/s, the upper of the two, which it was.
        assert_eq!(m.median(), Some(200e6));
    }

    /// A ring of `n` agents, each pair 9.4 Gbit/s but a0003 -> a0004 (95
    /// Mbit/s) and a0007 -> a0008 (failed).
    fn ring(n: usize) -> Matrix {
        let names: Vec<String> = (0..n).map(|i| format!("a{i:04}")).collect();
        let cells = (0..n)
            .map(|i| {
                let (src, dst) = (names[i].clone(), names[(i + 1) % n].clone());
                let cell = match i {
                    3 => Cell::Measured {
                        goodput: Some(95e6),
                        transactions: None,
                        verdict: Some("link-bound".into()),
                    },
                    7 => Cell::Failed("agent a0007 did not answer".into()),
                    _ => Cell::Measured {
                        goodput: Some(9.4e9 + i as f64),
                        transactions: None,
                        verdict: Some("CPU-bound".into()),
                    },
                };
                ((src, dst), cell)
            })
            .collect();
        Matrix {
            title: "tcp-stream out".into(),
            names,
            cells,
        }
    }

    #[test]
    fn a_large_mesh_is_listed_by_pair_not_drawn() {
        let small = text(&ring(TEXT_GRID_MAX));
        assert!(small.contains("rows: source"), "{small}");
        let m = ring(1000);
        let t = text(&m);
        assert!(t.len() < 4000, "{} bytes", t.len());
        assert!(
            t.starts_with(
                "tcp-stream out: 1000 pair(s) of 1000 agents, 999 measured, 1 failed; median \
                 9.40 Gbit/s, slowest 95.00 Mbit/s, fastest 9.40 Gbit/s"
            ),
            "{t}"
        );
        assert!(
            t.contains("failed:\n  a0007 -> a0008  failed  agent a0007 did not answer"),
            "{t}"
        );
        assert!(t.contains("outliers (under a quarter of the median):\n  a0003 -> a0004  95.00 Mbit/s  link-bound"), "{t}");
        // The slowest of the rest, slowest first, then a count.
        assert!(
            t.contains(
                "slowest of the rest:\n  a0000 -> a0001  9.40 Gbit/s  CPU-bound\n  a0001 -> a0002"
            ),
            "{t}"
        );
        assert!(t.contains("... and 978 more"), "{t}");
        let h = html(&m);
        assert!(!h.contains("hsl("), "a heat map of 1000 agents");
        assert_eq!(h.matches("<tr>").count(), 1001, "every pair and the header");
        assert!(
            h.find("a0007").unwrap() < h.find("a0003").unwrap(),
            "failed first"
        );
        assert_eq!(h.matches("class=\"out\"").count(), 1);
    }
}
