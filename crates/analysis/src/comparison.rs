//! Two runs compared, as data: what `netsonde compare` found ([`Comparison`]),
//! built from the store by `netsonde_run::compare` and written out by
//! `netsonde_report::compare`. The judging itself (rank test, Holm's family,
//! practical change, the samples behind a percentile) is [`crate::compare`].

use crate::compare::{Delta, SearchDelta, Verdict};

/// Two runs compared.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The baseline run.
    pub a: i64,
    /// The run judged.
    pub b: i64,
    /// Differences of host or link that may explain a change by themselves,
    /// one sentence each.
    pub warnings: Vec<String>,
    /// What was compared.
    pub body: Compared,
}

/// Sweeps' metrics or searches' loss-free rates.
#[derive(Debug, Clone, PartialEq)]
pub enum Compared {
    /// Two sweeps (or single tests): per matched point, each compared metric.
    Sweeps(SweepComparison),
    /// Two loss-free rate searches: per frame size and strategy, NDR and PDR.
    Searches(SearchComparison),
}

/// Two sweeps compared.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepComparison {
    /// Each compared metric of each matched point, with the point's label
    /// (`axis=value ...`), in the order of run B's points; judged.
    pub rows: Vec<(String, Delta)>,
    /// Matched points whose options differ, not judged: `label: field a vs b; ...`.
    pub not_comparable: Vec<String>,
    /// Points of B with no counterpart in A.
    pub unmatched: usize,
    /// The fewest repetitions on a side behind a judged metric.
    pub min_reps: usize,
    /// Where each end's CPU moved, at matched points where both runs took a
    /// CPU breakdown: the category whose median cost changed most.
    pub moved: Vec<CategoryMove>,
}

/// The category of one end's CPU breakdown that moved most between two runs
/// at a point (medians over each run's repetitions; not judged: the
/// breakdown is a split of the CPU, whose change the metrics judge).
#[derive(Debug, Clone, PartialEq)]
pub struct CategoryMove {
    /// The point's label.
    pub point: String,
    /// `client` or `server`.
    pub side: String,
    /// `us/KiB` or `us/trans`.
    pub unit: &'static str,
    /// The category.
    pub category: netsonde_model::profile::Category,
    /// Its cost in run A and in run B.
    pub cost: (f64, f64),
    /// The end's whole breakdown in run A and in run B.
    pub total: (f64, f64),
}

impl CategoryMove {
    /// The category that moved most between two ends' medians per category
    /// (`(category, cost)` pairs), or `None` when nothing moved.
    pub fn largest(
        a: &[(netsonde_model::profile::Category, f64)],
        b: &[(netsonde_model::profile::Category, f64)],
    ) -> Option<(netsonde_model::profile::Category, f64, f64)> {
        let cost = |v: &[(netsonde_model::profile::Category, f64)], c| {
            v.iter().find(|x| x.0 == c).map_or(0.0, |x| x.1)
        };
        netsonde_model::profile::Category::ALL
            .iter()
            .map(|&c| (c, cost(a, c), cost(b, c)))
            .filter(|(_, x, y)| x != y)
            .max_by(|x, y| (x.2 - x.1).abs().total_cmp(&(y.2 - y.1).abs()))
    }
}

/// One search point's NDR or PDR compared.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchRow {
    /// `FRAME B STRATEGY`.
    pub key: String,
    /// Each run's searches' lower bounds (its repetitions), packets/s.
    pub values: [Vec<f64>; 2],
    /// The judged change.
    pub delta: SearchDelta,
}

/// Two searches compared.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchComparison {
    /// The loss ratios differ, so PDR is not compared: `(a's, b's)`.
    pub pdr_skipped: Option<(f64, f64)>,
    /// The judged rows.
    pub rows: Vec<SearchRow>,
    /// Points shown but not judged, one sentence each.
    pub unjudged: Vec<String>,
    /// Points of B with no counterpart in A.
    pub unmatched: usize,
    /// The fewest searches on a side behind a row.
    pub min_reps: usize,
}

impl SweepComparison {
    /// The comparisons in Holm's family (not the percentiles on too few samples).
    pub fn family(&self) -> usize {
        self.rows
            .iter()
            .filter(|(_, d)| d.not_judged.is_none())
            .count()
    }

    /// How many distinct points were compared.
    pub fn points(&self) -> usize {
        self.rows
            .iter()
            .map(|(l, _)| l.as_str())
            .collect::<std::collections::BTreeSet<_>>()
            .len()
    }
}

impl Comparison {
    /// Whether B regressed anywhere.
    pub fn regressed(&self) -> bool {
        match &self.body {
            Compared::Sweeps(s) => s.rows.iter().any(|(_, d)| d.verdict == Verdict::Worse),
            Compared::Searches(s) => s.rows.iter().any(|r| r.delta.verdict == Verdict::Worse),
        }
    }
}
