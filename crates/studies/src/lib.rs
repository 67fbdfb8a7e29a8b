//! The reference studies (`netsonde study NAME`): five classic adapter and
//! host-stack evaluations (`../shared/reference/`) and a recent one on where a
//! host stack's cycles go (Cai et al., SIGCOMM 2021), each rerun on today's host.
//!
//! A study is a list of parts, each an experiment file (run as a sweep, in the lab
//! where it needs a link), a loss-free rate search, or a measurement of the host's
//! memory-copy bandwidth; the seed's published figures, typed from its text; and
//! an analysis that puts them beside today's and decides each of the seed's
//! findings from the data, by a criterion stated with it. This crate is pure: the
//! binary runs the parts and hands their stored results back as [`Data`].

#![forbid(unsafe_code)]

use std::collections::BTreeMap;
use std::fmt::Write;

use netsonde_model::sweep::Metric;
use netsonde_report::tables::Table;
use netsonde_report::view::{PlotSpec, PointView, RunView};
use netsonde_sweep::file::Experiment;
use serde::{Deserialize, Serialize};

pub mod ending;
mod s000;
mod s001;
mod s002;
mod s003;
mod s004;
mod s005;

/// Why a study's definition could not be turned into something to run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StudyError {
    /// No study by that name.
    #[error("no study '{0}' (netsonde study --list shows them)")]
    Unknown(String),
    /// A part's experiment does not parse (a defect of the definition).
    #[error("study {study}, part {part}: {message}")]
    Part {
        /// The study.
        study: &'static str,
        /// The part.
        part: &'static str,
        /// What is wrong.
        message: String,
    },
}

/// What a part runs.
#[derive(Debug, Clone, Copy)]
pub enum PartKind {
    /// A sweep from an experiment file; `quick` overlays its keys for `--quick`.
    /// `figures` are the ids of the sweep report's plots the study shows.
    Sweep {
        /// The experiment (TOML).
        file: &'static str,
        /// Keys that replace the file's for `--quick` (TOML).
        quick: &'static str,
        /// The sweep plots the study's report shows.
        figures: &'static [&'static str],
    },
    /// `netsonde search` over frame sizes and strategies (its `--json` document).
    Search {
        /// Its arguments.
        args: &'static [&'static str],
        /// Arguments added for `--quick`.
        quick: &'static [&'static str],
    },
    /// The host's memory-copy bandwidth, measured in the process.
    MemCopy,
}

/// One part of a study.
#[derive(Debug, Clone, Copy)]
pub struct PartDef {
    /// Its name (file and figure names).
    pub name: &'static str,
    /// What it measures, in a sentence.
    pub what: &'static str,
    /// Whether it needs the lab (root, namespaces).
    pub lab: bool,
    /// What it runs.
    pub kind: PartKind,
}

impl PartDef {
    /// The experiment a sweep part runs, with `--quick`'s keys over the file's.
    pub fn experiment(
        &self,
        study: &'static str,
        quick: bool,
    ) -> Result<Option<Experiment>, StudyError> {
        let PartKind::Sweep { file, quick: q, .. } = self.kind else {
            return Ok(None);
        };
        let err = |message: String| StudyError::Part {
            study,
            part: self.name,
            message,
        };
        let mut base: toml::Table = toml::from_str(file).map_err(|e| err(e.to_string()))?;
        if quick {
            let over: toml::Table = toml::from_str(q).map_err(|e| err(e.to_string()))?;
            for (k, v) in over {
                base.insert(k, v);
            }
        }
        let text = toml::to_string(&base).map_err(|e| err(e.to_string()))?;
        let exp = Experiment::parse(&text).map_err(|e| err(e.to_string()))?;
        exp.plan().map_err(|e| err(e.to_string()))?;
        Ok(Some(exp))
    }
}

/// A reference study.
#[derive(Debug, Clone, Copy)]
pub struct StudyDef {
    /// Its number, as the seed's file name starts (`000`).
    pub id: &'static str,
    /// A short name (`oc48c`).
    pub slug: &'static str,
    /// The seed's subject.
    pub title: &'static str,
    /// The seed's file in `shared/reference/` (`*.txt`), or, for a study
    /// whose seed is not there, its citation.
    pub seed: &'static str,
    /// What the seed measured and how this study reproduces it.
    pub summary: &'static str,
    /// The parts, in run order.
    pub parts: &'static [PartDef],
    /// Socket buffer ceiling (`net.core.rmem_max`, `wmem_max`) the study wants,
    /// raised for its run where allowed and restored afterwards.
    pub buffers: Option<u64>,
    /// The analysis.
    pub analyse: fn(&Data) -> Analysis,
}

impl StudyDef {
    /// `000-oc48c`: the study's directory and label stem.
    pub fn name(&self) -> String {
        format!("{}-{}", self.id, self.slug)
    }

    /// Where its seed is: `shared/reference/FILE`, or the paper's citation.
    pub fn citation(&self) -> String {
        if self.seed.ends_with(".txt") {
            format!("shared/reference/{}", self.seed)
        } else {
            self.seed.to_string()
        }
    }
}

/// Every study, in order.
pub fn all() -> [StudyDef; 6] {
    [
        s000::DEF,
        s001::DEF,
        s002::DEF,
        s003::DEF,
        s004::DEF,
        s005::DEF,
    ]
}

/// A study by number (`000`, `0`) or short name (`oc48c`).
pub fn find(name: &str) -> Result<StudyDef, StudyError> {
    let n = name.trim();
    all()
        .into_iter()
        .find(|d| {
            n == d.id
                || n == d.slug
                || n == d.name()
                || n.parse::<u32>().ok() == d.id.parse::<u32>().ok().filter(|_| !n.is_empty())
        })
        .ok_or_else(|| StudyError::Unknown(name.to_string()))
}

/// One loss-free rate search's result (from `netsonde search --json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchRow {
    /// Frame size, bytes.
    pub frame: u32,
    /// Strategy.
    pub io: String,
    /// No-drop rate, packets per second (`None`: no loss-free rate found).
    pub ndr_pps: Option<f64>,
    /// Partial-drop rate, packets per second.
    pub pdr_pps: Option<f64>,
    /// Whether the search converged within its trial budget.
    pub converged: bool,
}

/// The best stream result in the store's other runs: the "results database".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredPeak {
    /// Runs searched.
    pub runs: usize,
    /// Stream points with a goodput, across them.
    pub points: usize,
    /// The best goodput, bit/s, and the run it came from.
    pub best: Option<(f64, i64, String)>,
}

/// What the parts produced, for the analysis.
#[derive(Debug, Default)]
pub struct Data {
    /// Whether this was a `--quick` run.
    pub quick: bool,
    /// Each sweep part's analysed run.
    pub sweeps: BTreeMap<&'static str, RunView>,
    /// Each search part's rows.
    pub searches: BTreeMap<&'static str, Vec<SearchRow>>,
    /// The host's memory-copy bandwidth, bit/s.
    pub memcpy_bps: Option<f64>,
    /// The store's best stream result outside this study.
    pub stored_peak: Option<StoredPeak>,
    /// Parts that did not run, and why.
    pub skipped: BTreeMap<&'static str, String>,
    /// The socket buffer ceiling in force (`net.core.rmem_max`), when known.
    pub rmem_max: Option<u64>,
}

/// Whether the seed's finding holds on this host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The data meet the criterion.
    Holds,
    /// The direction holds but not the size of the effect.
    Partly,
    /// The data contradict it.
    DoesNotHold,
    /// Not measured here (the evidence says why).
    NotMeasured,
}

impl Verdict {
    /// As the report writes it.
    pub fn text(self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::Partly => "holds in part",
            Verdict::DoesNotHold => "does not hold",
            Verdict::NotMeasured => "not measured",
        }
    }
}

/// One of the seed's findings, decided from today's data.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// The seed's finding, in our words.
    pub claim: String,
    /// How it is decided.
    pub criterion: String,
    /// Today's figures.
    pub evidence: String,
    /// The decision.
    pub verdict: Verdict,
}

impl Finding {
    fn not_measured(claim: &str, criterion: &str, why: impl Into<String>) -> Finding {
        Finding {
            claim: claim.into(),
            criterion: criterion.into(),
            evidence: why.into(),
            verdict: Verdict::NotMeasured,
        }
    }
}

/// A row of the "then and now" table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThenNow {
    /// What is compared.
    pub quantity: String,
    /// The seed's figure, as published.
    pub then: String,
    /// Today's, on this host.
    pub now: String,
}

/// What a study concludes.
#[derive(Debug, Default)]
pub struct Analysis {
    /// Then and now.
    pub then_now: Vec<ThenNow>,
    /// The seed's findings, decided.
    pub findings: Vec<Finding>,
    /// Tables beyond the sweeps' own.
    pub tables: Vec<Table>,
    /// Figures beyond the sweeps' own.
    pub figures: Vec<PlotSpec>,
    /// Caveats on the whole study.
    pub caveats: Vec<String>,
}

// ---- helpers over a sweep's points --------------------------------------------

/// The points of a sweep part whose axes have these values (numbers compared as
/// numbers: `size = 4096` matches `"4096"`).
pub(crate) fn points<'a>(s: &'a RunView, want: &[(&str, &str)]) -> Vec<&'a PointView> {
    s.points
        .iter()
        .filter(|p| p.summary.is_some())
        .filter(|p| {
            want.iter().all(|(k, v)| {
                let Some(have) = p.axes.get(*k) else {
                    return false;
                };
                have == v || matches!((num(have), num(v)), (Some(a), Some(b)) if a == b)
            })
        })
        .collect()
}

fn num(s: &str) -> Option<f64> {
    s.parse::<f64>().ok().or_else(|| {
        s.parse::<netsonde_model::units::Bytes>()
            .ok()
            .map(|b| b.0 as f64)
    })
}

/// A point's axis as a number.
pub(crate) fn axis(p: &PointView, key: &str) -> Option<f64> {
    num(p.axes.get(key)?)
}

/// The median of a metric at the one point matching `want`.
pub(crate) fn median(s: &RunView, want: &[(&str, &str)], m: Metric) -> Option<f64> {
    points(s, want).first()?.median(m.name())
}

/// A metric's value, written with its unit.
pub(crate) fn fmt(m: Metric, v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| m.unit().format(v))
}

pub(crate) fn rate(v: Option<f64>) -> String {
    fmt(Metric::Goodput, v)
}

/// The larger of two optional values (either alone if the other is missing).
pub(crate) fn max_opt(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

pub(crate) fn pct(v: f64) -> String {
    format!("{:.0}%", 100.0 * v)
}

/// A ratio written as a change: `+52%`, `-8%`.
pub(crate) fn change(r: f64) -> String {
    format!("{:+.0}%", 100.0 * (r - 1.0))
}

/// The decision for "X raises Y by about `seed` (a ratio)": the full effect holds
/// from half the seed's gain, a smaller gain beyond the noise margin holds in
/// part, and none contradicts it.
pub(crate) fn gain_verdict(measured: f64, seed: f64, noise: f64) -> Verdict {
    if measured >= 1.0 + (seed - 1.0) / 2.0 {
        Verdict::Holds
    } else if measured > 1.0 + noise {
        Verdict::Partly
    } else {
        Verdict::DoesNotHold
    }
}

/// The run's caveats every study shares: skipped parts, quick mode, shared cores.
fn common_caveats(d: &Data) -> Vec<String> {
    let mut c = Vec::new();
    if d.quick {
        c.push("--quick: fewer points, one repetition and short trials; figures are indicative and intervals absent (the full study takes repetitions)".into());
    }
    for (part, why) in &d.skipped {
        c.push(format!("part '{part}' did not run: {why}"));
    }
    let shared = d.sweeps.values().any(|s| {
        matches!((&s.run.client_host, &s.run.server_host), (Some(a), Some(b)) if a.hostname == b.hostname)
    });
    if shared {
        c.push("client and server share this host's cores (loopback or the lab's namespaces): CPU figures are the host's, both ends together".into());
    }
    c
}

/// The study's figures: each sweep part's chosen plots (named after the part),
/// then the analysis's own.
pub fn figures(def: &StudyDef, d: &Data, a: &Analysis) -> Vec<PlotSpec> {
    let mut plots = Vec::new();
    for part in def.parts {
        if let (PartKind::Sweep { figures, .. }, Some(s)) = (part.kind, d.sweeps.get(part.name)) {
            for id in figures {
                if let Some(p) = s.plots.iter().find(|p| p.id == *id) {
                    let mut p = p.clone();
                    p.id = format!("{}-{}", part.name, p.id);
                    p.title = format!("{} ({})", p.title, part.name);
                    plots.push(p);
                }
            }
        }
    }
    plots.extend(a.figures.iter().cloned());
    plots
}

/// The report of a study, as Markdown. `figures` are the file stems and titles
/// of the figures the caller wrote into `figures/` as SVG (and as PNG when `png`),
/// in order: the sweeps' chosen plots and the analysis's own.
#[allow(clippy::too_many_arguments)]
pub fn markdown(
    def: &StudyDef,
    d: &Data,
    a: &Analysis,
    figures: &[(String, String)],
    png: bool,
    commands: &BTreeMap<&'static str, String>,
    runs: &BTreeMap<&'static str, i64>,
    command: &str,
) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "# Study {}: {}\n", def.id, def.title);
    let _ = writeln!(o, "Seed: `{}`. {}\n", def.citation(), def.summary);
    let _ = writeln!(o, "Regenerate: `{command}`\n");
    if let Some(h) = d.sweeps.values().find_map(|s| s.run.client_host.as_ref()) {
        let _ = writeln!(
            o,
            "Host: {}, kernel {}, {} cores, {}.\n",
            h.hostname, h.kernel, h.cores, h.cpu_model
        );
    }
    let _ = writeln!(o, "## Then and now\n");
    let _ = writeln!(
        o,
        "| quantity | then (the seed) | now (this host) |\n|---|---|---|"
    );
    for r in &a.then_now {
        let _ = writeln!(
            o,
            "| {} | {} | {} |",
            cell(&r.quantity),
            cell(&r.then),
            cell(&r.now)
        );
    }
    let _ = writeln!(o, "\n## The seed's findings, on this host\n");
    let _ = writeln!(
        o,
        "Each finding is decided from this run's data by the criterion beside it.\n"
    );
    let _ = writeln!(
        o,
        "| finding | criterion | today | verdict |\n|---|---|---|---|"
    );
    for f in &a.findings {
        let _ = writeln!(
            o,
            "| {} | {} | {} | **{}** |",
            cell(&f.claim),
            cell(&f.criterion),
            cell(&f.evidence),
            f.verdict.text()
        );
    }
    let held = a
        .findings
        .iter()
        .filter(|f| f.verdict == Verdict::Holds)
        .count();
    let part = a
        .findings
        .iter()
        .filter(|f| f.verdict == Verdict::Partly)
        .count();
    let not = a
        .findings
        .iter()
        .filter(|f| f.verdict == Verdict::DoesNotHold)
        .count();
    let _ = writeln!(
        o,
        "\nIn words: of the seed's {} findings, {held} hold on this host, {part} hold in part and {not} do not{}.",
        a.findings.len(),
        match a.findings.iter().filter(|f| f.verdict == Verdict::NotMeasured).count() {
            0 => String::new(),
            n => format!("; {n} could not be measured here"),
        }
    );
    for f in a.findings.iter().filter(|f| f.verdict != Verdict::Holds) {
        let _ = writeln!(o, "- {} ({}): {}", f.claim, f.verdict.text(), f.evidence);
    }
    if !figures.is_empty() {
        let _ = writeln!(o, "\n## Figures\n");
        for (stem, title) in figures {
            if png {
                let _ = writeln!(
                    o,
                    "![{title}](figures/{stem}.png)\n\n[{title} (SVG)](figures/{stem}.svg)\n"
                );
            } else {
                let _ = writeln!(o, "![{title}](figures/{stem}.svg)\n");
            }
        }
    }
    for t in &a.tables {
        o.push_str(&netsonde_report::markdown::table(t));
    }
    let _ = writeln!(o, "\n## Parts\n");
    for p in def.parts {
        let run = runs
            .get(p.name)
            .map(|r| format!(" Stored as run {r}: `netsonde report {r}` renders it in full."))
            .unwrap_or_default();
        let how = commands
            .get(p.name)
            .map(|c| format!(" Ran `{c}`."))
            .unwrap_or_default();
        let skipped = d
            .skipped
            .get(p.name)
            .map(|w| format!(" Did not run: {w}."))
            .unwrap_or_default();
        let _ = writeln!(
            o,
            "- **{}**{}: {}{how}{run}{skipped}",
            p.name,
            if p.lab { " (lab)" } else { "" },
            p.what
        );
    }
    let mut caveats = common_caveats(d);
    caveats.extend(a.caveats.iter().cloned());
    if !caveats.is_empty() {
        let _ = writeln!(o, "\n## Caveats\n");
        for c in caveats {
            let _ = writeln!(o, "- {c}");
        }
    }
    o
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

#[cfg(test)]
mod tests;
