//! The summary a sweep, a search and a mesh end with on the terminal, and that
//! `netsonde runs show` prints: one line per point (the axes that vary, the
//! median goodput or transaction rate with its interval, the test's CPU per
//! KiB or per transaction at each end, the verdict in a few words), a mesh's
//! matrices, the warnings once each with the points they concern, and where the
//! report and the run are. [`Summary::of`] builds it from a [`RunView`];
//! [`text`] fits it to a terminal's width; serialised, it is the `--json`
//! document (docs/JSON.md, "The summary").

use std::collections::BTreeMap;
use std::fmt::Write;

use netsonde_model::spec::TestKind;
use netsonde_model::sweep::{Metric, Quality};
use serde::Serialize;

pub use crate::layout::wrapped;
use crate::layout::{columns_cut, prefixed, sig3, width_of};
use crate::search::SearchRow;
use crate::view::{PointView, RunView, SearchMeta};

/// The width of the text off a terminal.
pub const WIDTH: usize = 80;

/// What kind of run it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// A grid of points with repetitions (`sweep`, `run FILE`, one test stored).
    Sweep,
    /// Each point searched for its loss-free rate (`search`).
    Search,
    /// Points between pairs of agents (`mesh`).
    Mesh,
}

/// A run's summary.
#[derive(Debug, Serialize)]
pub struct Summary {
    /// Version of this document.
    pub schema_version: u32,
    /// The stored run.
    pub run: i64,
    /// Its label.
    pub label: String,
    /// complete, incomplete, interrupted, running.
    pub status: String,
    /// Sweep, search or mesh.
    pub kind: Kind,
    /// How its points were measured (`3 repetitions per point`).
    pub measured_as: String,
    /// Every point, in the plan's order.
    pub points: Vec<Row>,
    /// Each warning once, with the points it concerns.
    pub warnings: Vec<Warning>,
    /// The report written, when one was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<String>,
    /// The store the run is in (a URL's password redacted).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store: Option<String>,
    /// A search's settings and rows (the fields of the search's own
    /// document, docs/JSON.md).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub search: Option<SearchPart>,
    /// A mesh's matrices of pairs, as text.
    #[serde(skip)]
    matrices: Vec<String>,
}

/// A search's settings and rows.
#[derive(Debug, Serialize)]
pub struct SearchPart {
    /// Its settings.
    pub config: netsonde_model::search::SearchConfig,
    /// Measured time of a trial.
    pub trial: netsonde_model::units::Nanos,
    /// Warm-up of a trial.
    pub warmup: netsonde_model::units::Nanos,
    /// One row per frame size and strategy.
    pub searches: Vec<SearchRow>,
    #[serde(skip)]
    meta: SearchMeta,
}

/// One point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// Its index in the run.
    pub point: u32,
    /// The axes that vary in the run (`tcp-stream out 64KiB`).
    pub label: String,
    /// Every axis.
    pub axes: BTreeMap<String, String>,
    /// done, skipped, failed, pending.
    pub status: String,
    /// Why skipped or failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Its headline figure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub figure: Option<Figure>,
    /// The test's CPU at each end per unit of work.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu: Option<Cpu>,
    /// What limited it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// An encrypted test's median against plain TCP's at the same point of
    /// this run (tls-stream and quic-stream against tcp-stream, tls-rr and
    /// quic-rr against tcp-rr, the crr tests against tcp-crr; every other axis
    /// the same): what the encryption and the transport cost, at a glance.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to_tcp: Option<f64>,
    /// A request/response test's (its figures are transactions).
    #[serde(skip)]
    rr: bool,
}

/// Each encrypted point's [`Row::to_tcp`], where the run has its TCP point.
fn ratios_to_tcp(rows: &mut [Row]) {
    let key = |r: &Row, test: &str| {
        let mut axes = r.axes.clone();
        axes.insert("test".into(), test.into());
        axes
    };
    let medians: BTreeMap<BTreeMap<String, String>, f64> = rows
        .iter()
        .filter(|r| r.status == "done")
        .filter_map(|r| Some((r.axes.clone(), r.figure.as_ref()?.median)))
        .collect();
    for r in rows.iter_mut() {
        let plain = r
            .axes
            .get("test")
            .and_then(|t| t.parse::<TestKind>().ok()?.plain());
        let Some(tcp) = plain.map(TestKind::name) else {
            continue;
        };
        let base = medians.get(&key(r, tcp)).copied().filter(|m| *m > 0.0);
        r.to_tcp = base.zip(r.figure.as_ref()).map(|(b, f)| f.median / b);
    }
}

/// A median with its interval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figure {
    /// `goodput`, `transactions_per_sec`, or a search's `ndr` (packets per second).
    pub metric: &'static str,
    /// `bit/s` or `1/s`.
    pub unit: &'static str,
    /// The median over repetitions (a search: its first search's NDR).
    pub median: f64,
    /// The interval of the median, low end (a repeated search: the lowest NDR).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub low: Option<f64>,
    /// Its high end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub high: Option<f64>,
    /// The interval's coverage (0.75 with 3 repetitions).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<f64>,
    /// Repetitions (searches) behind it.
    pub n: usize,
}

/// The test's own CPU per unit of work: each end's flow threads and the
/// interrupt time its traffic caused.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cpu {
    /// `us/KiB` (streams) or `us/transaction`.
    pub unit: &'static str,
    /// The client's median.
    pub client: Option<f64>,
    /// The server's median.
    pub server: Option<f64>,
}

/// A verdict, long and short.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// As the report names it (`CPU-bound (client, system)`).
    pub name: String,
    /// In a few words (`CPU client sys`).
    pub short: String,
}

/// One warning and the points it concerns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Warning {
    /// What is wrong (of several points, the worst case).
    pub what: String,
    /// What to do about it.
    pub advice: String,
    /// The points.
    pub points: Vec<u32>,
}

impl Summary {
    /// The summary of an analysed run.
    pub fn of(view: &RunView) -> Summary {
        let search = view.run.search.map(|meta| SearchPart {
            config: meta.config,
            trial: meta.trial,
            warmup: meta.warmup,
            searches: crate::search::rows(view, meta.link_bps),
            meta,
        });
        let kind = match (&search, view.run.mesh_agents.is_empty()) {
            (Some(_), _) => Kind::Search,
            (None, false) => Kind::Mesh,
            (None, true) => Kind::Sweep,
        };
        Summary {
            schema_version: 1,
            run: view.run.id,
            label: crate::printable(&view.run.label).into_owned(),
            status: view.run.status.clone(),
            kind,
            measured_as: view.measured_as(),
            points: {
                let mut rows: Vec<Row> = view.points.iter().map(|p| row(view, p)).collect();
                ratios_to_tcp(&mut rows);
                rows
            },
            warnings: warnings(view),
            report: None,
            store: None,
            search,
            matrices: crate::mesh::matrices(view)
                .iter()
                .map(crate::mesh::text)
                .collect(),
        }
    }

    /// Each test's best point, a line each: `tcp-stream: 17.8 Gbit/s [17.6–18.0]
    /// at 64KiB, CPU client sys` (the highest median goodput or transaction
    /// rate; a search's highest NDR).
    pub fn headlines(&self) -> Vec<String> {
        let mut best: Vec<(&str, &Row)> = Vec::new();
        for r in &self.points {
            let (Some(f), Some(test)) = (&r.figure, r.axes.get("test")) else {
                continue;
            };
            match best.iter_mut().find(|(t, _)| t == test) {
                Some((_, b)) => {
                    if b.figure.as_ref().is_some_and(|g| f.median > g.median) {
                        *b = r;
                    }
                }
                None => best.push((test, r)),
            }
        }
        best.into_iter()
            .map(|(test, r)| {
                let f = r.figure.as_ref().map(figure_cell).unwrap_or_default();
                let limit = r
                    .verdict
                    .as_ref()
                    // The verdict's own name says what kind of limit it is
                    // ("CPU-bound (...)", "link-bound"): no "limited by" before it.
                    .map(|v| format!("; {}", v.name))
                    .unwrap_or_default();
                format!("{test}: best {f} at {}{limit}", r.label)
            })
            .collect()
    }

    /// What was measured, in a sentence: `Measured: 12 of 12 points
    /// (tcp-stream, tcp-rr), 3 repetitions per point.`
    pub fn measured(&self) -> String {
        let mut tests: Vec<&str> = Vec::new();
        for t in self.points.iter().filter_map(|r| r.axes.get("test")) {
            if !tests.contains(&t.as_str()) {
                tests.push(t);
            }
        }
        let done = self.points.iter().filter(|r| r.status == "done").count();
        format!(
            "Measured: {done} of {} points ({}), {}.",
            self.points.len(),
            tests.join(", "),
            self.measured_as
        )
    }

    /// The points as a report's table: the figure with its interval and
    /// unit, each end's CPU per unit, the verdict named in full.
    pub fn table(&self) -> crate::tables::Table {
        let rows = self
            .points
            .iter()
            .map(|r| {
                let (figure, cpu, verdict) = if r.status == "done" {
                    (
                        r.figure.as_ref().map(figure_cell).unwrap_or_default(),
                        r.cpu
                            .as_ref()
                            .map(|c| format!("{} {}", cpu_cell(c), c.unit.replace("us/", "µs/")))
                            .unwrap_or_default(),
                        r.verdict
                            .as_ref()
                            .map(|v| v.name.clone())
                            .unwrap_or_default(),
                    )
                } else {
                    let why = r.reason.as_deref().unwrap_or_default();
                    (format!("{}: {why}", r.status), String::new(), String::new())
                };
                vec![r.point.to_string(), r.label.clone(), figure, cpu, verdict]
            })
            .collect();
        crate::tables::Table {
            title: "Summary".into(),
            note: "Medians over the repetitions with the distribution-free interval of the \
                   median (a search: its NDR); CPU is the test's own at each end, client | \
                   server, per KiB or per transaction; the verdict most repetitions got."
                .into(),
            headers: [
                "#",
                "point",
                "figure [interval]",
                "CPU client | server",
                "limited by",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        }
    }

    /// Where the report and the run are: the two lines `--quiet` keeps.
    pub fn footer(&self) -> String {
        let mut o = String::new();
        if let Some(r) = &self.report {
            let _ = writeln!(o, "report: {r}");
        }
        if let Some(s) = &self.store {
            let _ = writeln!(o, "run {} stored in {s}", self.run);
        }
        o
    }
}

/// A point's row.
fn row(view: &RunView, p: &PointView) -> Row {
    let est = |m: Metric| p.summary.as_ref()?.estimates.get(m.name());
    let rr = p.spec.test.is_rr();
    let (metric, unit) = if rr {
        (Metric::TransactionsPerSec, "1/s")
    } else {
        (Metric::Goodput, "bit/s")
    };
    let figure = match &p.search {
        Some(o) => o.ndr.lower.map(|first| {
            let all = o.lower_bounds(netsonde_model::search::Goal::Ndr);
            Figure {
                metric: "ndr",
                unit: "1/s",
                median: first,
                low: all
                    .iter()
                    .copied()
                    .reduce(f64::min)
                    .filter(|_| all.len() > 1),
                high: all
                    .iter()
                    .copied()
                    .reduce(f64::max)
                    .filter(|_| all.len() > 1),
                coverage: None,
                n: all.len().max(1),
            }
        }),
        None => est(metric).map(|e| Figure {
            metric: metric.name(),
            unit,
            median: e.median,
            low: e.ci_low,
            high: e.ci_high,
            coverage: e.ci_coverage,
            n: e.n,
        }),
    };
    let (c, s, cpu_unit) = if rr {
        (
            Metric::ClientUsPerTrans,
            Metric::ServerUsPerTrans,
            "us/transaction",
        )
    } else {
        (Metric::ClientUsPerKib, Metric::ServerUsPerKib, "us/KiB")
    };
    let cpu = Some(Cpu {
        unit: cpu_unit,
        client: est(c).map(|e| e.median),
        server: est(s).map(|e| e.median),
    })
    .filter(|c| c.client.is_some() || c.server.is_some());
    let verdict = match (&p.search, &p.diagnosis) {
        (Some(o), _) => Some(search_verdict(o, p)),
        (None, Some(d)) => Some(Verdict {
            name: d.bottleneck.name(),
            short: d.bottleneck.short(),
        }),
        (None, None) => None,
    };
    Row {
        point: p.idx,
        label: view.label(p),
        axes: p.axes.clone(),
        status: p.status.clone(),
        reason: p.reason.clone(),
        figure,
        cpu,
        verdict,
        to_tcp: None,
        rr,
    }
}

/// A search's end in words.
fn search_verdict(o: &netsonde_model::search::SearchOutcome, p: &PointView) -> Verdict {
    let (name, short) = if o.sender_bound {
        ("the sender: nothing lost unpaced", "sender")
    } else if o.converged {
        ("found", "found")
    } else if p.status == "done" {
        ("not converged: trial budget spent", "not converged")
    } else {
        ("search unfinished", "unfinished")
    };
    Verdict {
        name: name.into(),
        short: short.into(),
    }
}

/// The run's quality warnings, one per kind (the worst case said, with the
/// points it concerns), then the verdicts' caveats, each once.
fn warnings(view: &RunView) -> Vec<Warning> {
    let mut by_kind: Vec<(String, &Quality, Vec<u32>)> = Vec::new();
    for (idx, _, q, _) in &view.warnings {
        let key = kind_of(q);
        match by_kind.iter_mut().find(|(k, ..)| *k == key) {
            Some((_, worst, points)) => {
                if severity(q) > severity(worst) {
                    *worst = q;
                }
                points.push(*idx);
            }
            None => by_kind.push((key, q, vec![*idx])),
        }
    }
    let mut out: Vec<Warning> = by_kind
        .into_iter()
        .map(|(_, q, points)| Warning {
            what: q.to_string(),
            advice: q.hint(),
            points,
        })
        .collect();
    let mut caveats: Vec<(String, Vec<u32>)> = Vec::new();
    for p in &view.points {
        for c in p.diagnosis.iter().flat_map(|d| &d.caveats) {
            match caveats.iter_mut().find(|(t, _)| t == c) {
                Some((_, v)) => v.push(p.idx),
                None => caveats.push((c.clone(), vec![p.idx])),
            }
        }
    }
    out.extend(caveats.into_iter().map(|(what, points)| Warning {
        what,
        advice: String::new(),
        points,
    }));
    out
}

/// What makes two warnings the same warning: their kind and whom it concerns.
fn kind_of(q: &Quality) -> String {
    match q {
        Quality::NotSteady { .. } => "not-steady".into(),
        Quality::CpuSaturated { side, .. } => format!("cpu-saturated {side}"),
        Quality::TooFewRepetitions { .. } => "too-few".into(),
        Quality::HighVariance { metric, .. } => format!("variance {metric}"),
        Quality::KernelCappedWindow { .. } => "capped".into(),
    }
}

/// How bad a warning of its kind is, to say the worst one.
fn severity(q: &Quality) -> f64 {
    match q {
        Quality::NotSteady { cv } | Quality::HighVariance { cv, .. } => *cv,
        Quality::CpuSaturated { busy, .. } => *busy,
        Quality::TooFewRepetitions { need, .. } => *need as f64,
        Quality::KernelCappedWindow { requested, granted } => {
            *requested as f64 / (*granted).max(1) as f64
        }
    }
}

/// Point numbers as ranges: `0–3, 5, 7–9`.
fn ranges(points: &[u32]) -> String {
    let mut v = points.to_vec();
    v.sort_unstable();
    v.dedup();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        parts.push(match j - i {
            0 => v[i].to_string(),
            1 => format!("{}, {}", v[i], v[j]),
            _ => format!("{}–{}", v[i], v[j]),
        });
        i = j + 1;
    }
    parts.join(", ")
}

/// A figure as a cell: `17.7 Gbit/s [17.6–18.2]`, `50.1 k trans/s [49.6–50.5]`, or
/// `17.7 Gbit/s (n = 1)` with too few repetitions for an interval.
pub(crate) fn figure_cell(f: &Figure) -> String {
    let (scale, prefix) = prefixed(f.median);
    let d = if f.median == 0.0 {
        1.0
    } else {
        f.median / scale
    };
    let unit = match f.metric {
        "goodput" => format!(" {prefix}bit/s"),
        "ndr" => format!(" {prefix}pps"),
        _ if prefix.is_empty() => " trans/s".into(),
        _ => format!(" {prefix} trans/s"),
    };
    let median = format!("{}{unit}", sig3(scale));
    match (f.low, f.high) {
        (Some(l), Some(h)) => format!("{median} [{}–{}]", sig3(l / d), sig3(h / d)),
        _ => format!("{median} (n = {})", f.n),
    }
}

pub(crate) fn cpu_cell(c: &Cpu) -> String {
    let v = |x: Option<f64>| x.map_or("-".to_string(), sig3);
    format!("{}|{}", v(c.client), v(c.server))
}

/// The summary as text, fitted to `width` columns ([`WIDTH`] off a terminal;
/// a wider one shows whole labels and verdicts).
pub fn text(s: &Summary, width: usize) -> String {
    let width = width.max(40);
    let mut o = header(s, width);
    match &s.search {
        Some(part) => {
            o.push('\n');
            o.push_str(&crate::search::text(
                &part.meta,
                s.run,
                &part.searches,
                width,
            ));
        }
        None => {
            let (rr, streams): (Vec<&Row>, Vec<&Row>) = s.points.iter().partition(|r| r.rr);
            for (rows, figure, cpu) in [
                (streams, "goodput", "µs/KiB c|s"),
                (rr, "transactions", "µs/trans c|s"),
            ] {
                if !rows.is_empty() {
                    o.push('\n');
                    o.push_str(&point_table(&rows, figure, cpu, width));
                }
            }
        }
    }
    for m in &s.matrices {
        o.push('\n');
        o.push_str(m);
    }
    if !s.warnings.is_empty() {
        o.push_str("\nwarnings:\n");
        for line in warning_lines(s) {
            o.push_str(&wrapped(&line, width, "- "));
        }
    }
    o.push('\n');
    o.push_str(&s.footer());
    o
}

/// Each warning in a line: what, the points it concerns, what to do.
pub fn warning_lines(s: &Summary) -> Vec<String> {
    s.warnings
        .iter()
        .map(|w| {
            let mut line = match w.points.len() {
                1 => format!("{}, at point {}", w.what, ranges(&w.points)),
                n => format!("{}, at {n} points ({})", w.what, ranges(&w.points)),
            };
            if !w.advice.is_empty() {
                let _ = write!(line, ": {}", w.advice);
            }
            line
        })
        .collect()
}

/// The run in a line, and what the figures are.
fn header(s: &Summary, width: usize) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for r in s.points.iter().filter(|r| r.status != "done") {
        *counts.entry(r.status.as_str()).or_default() += 1;
    }
    let not_done = match counts.is_empty() {
        true => String::new(),
        false => format!(
            " ({})",
            counts
                .iter()
                .map(|(k, n)| format!("{n} {k}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut o = wrapped(
        &format!(
            "run {} \"{}\": {}; {} point{}{not_done}, {}",
            s.run,
            s.label,
            s.status,
            s.points.len(),
            if s.points.len() == 1 { "" } else { "s" },
            s.measured_as
        ),
        width,
        "",
    );
    let coverages: std::collections::BTreeSet<u32> = s
        .points
        .iter()
        .filter_map(|r| r.figure.as_ref()?.coverage)
        .map(|c| (c * 100.0).round() as u32)
        .collect();
    let interval = match (coverages.first(), coverages.last()) {
        (Some(a), Some(b)) if a == b => format!("[its {a}% interval]"),
        (Some(a), Some(b)) => format!("[its {a}–{b}% interval]"),
        _ => "(too few repetitions for an interval)".into(),
    };
    if s.search.is_none() {
        o.push_str(&wrapped(
            &format!(
                "medians {interval}; µs: the test's own CPU per KiB or per transaction, \
                 client|server"
            ),
            width,
            "",
        ));
    }
    o
}

/// One table of points whose figures share a unit; the verdicts whole when
/// they all fit, else in a few words.
fn point_table(rows: &[&Row], figure: &str, cpu: &str, width: usize) -> String {
    // `full`: whole verdicts; `inline`: a point's reason for not being done
    // in its row (else under the table, whole).
    // A column of ratios to plain TCP where the run has any.
    let ratios = rows.iter().any(|r| r.to_tcp.is_some());
    let table = |full: bool, inline: bool| -> Vec<Vec<String>> {
        let mut head = ["#", "point", figure, cpu, "limit"]
            .map(String::from)
            .to_vec();
        if ratios {
            head.insert(3, "of TCP".into());
        }
        std::iter::once(head)
            .chain(rows.iter().map(|r| {
                if r.status != "done" {
                    // The reason whole, under the table: a cell would cut it.
                    let why = match &r.reason {
                        Some(why) if inline => format!("{}: {why}", r.status),
                        Some(_) => format!("{} (why: below)", r.status),
                        None => r.status.clone(),
                    };
                    return vec![r.point.to_string(), r.label.clone(), why];
                }
                let v = r.verdict.as_ref().map_or(String::new(), |v| {
                    if full {
                        v.name.clone()
                    } else {
                        v.short.clone()
                    }
                });
                let mut cells = vec![
                    r.point.to_string(),
                    r.label.clone(),
                    r.figure.as_ref().map_or(String::new(), figure_cell),
                    r.cpu.as_ref().map_or(String::new(), cpu_cell),
                    v,
                ];
                if ratios {
                    cells.insert(3, r.to_tcp.map_or(String::new(), |x| format!("{x:.2}")));
                }
                cells
            }))
            .collect()
    };
    let shortest = rows
        .iter()
        .filter_map(|r| Some(width_of(&r.verdict.as_ref()?.short)))
        .max()
        .unwrap_or(0);
    // Whole verdicts, else short ones; a reason under the table only where
    // its row would cut it.
    for full in [true, false] {
        let (text, cut) = columns_cut(&table(full, true), &[1, 2], shortest, width);
        if !cut {
            return text;
        }
    }
    let mut text = columns_cut(&table(false, false), &[1, 2], shortest, width).0;
    for r in rows.iter().filter(|r| r.status != "done") {
        if let Some(why) = &r.reason {
            text.push_str(&wrapped(
                &format!("{}: {why}", r.status),
                width,
                &format!("  point {}: ", r.point),
            ));
        }
    }
    text
}

#[cfg(test)]
#[path = "summary_tests.rs"]
mod tests;
