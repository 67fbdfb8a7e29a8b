//! What a run's view holds: the run, its points, and the tables and figures
//! made of them.

use std::collections::BTreeMap;

use netsonde_analysis::{Bottleneck, LinearFit};
use netsonde_model::host::HostFacts;
use netsonde_model::spec::TestSpec;
use netsonde_model::sweep::{PointSummary, Quality};
use serde::Serialize;

use super::PlotSpec;

/// Run metadata.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunMeta {
    /// Run id in the store.
    pub id: i64,
    /// Label.
    pub label: String,
    /// Unix seconds.
    pub created_at: i64,
    /// netsonde version.
    pub tool_version: String,
    /// The command that made it.
    pub command: String,
    /// running, complete, interrupted, failed.
    pub status: String,
    /// Client host facts.
    pub client_host: Option<HostFacts>,
    /// Server host facts.
    pub server_host: Option<HostFacts>,
    /// Line rate for efficiency, bit/s.
    pub line_rate: Option<f64>,
    /// Repetitions per point.
    pub repeat: u32,
    /// The lab link (`netsonde lab run`), one line: spec, mechanism, detail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    /// The lab link's round trip (its configured delays both ways), ns.
    #[serde(default)]
    pub link_rtt_ns: Option<f64>,
    /// A mesh run's agents in some pair, in the mesh's order; empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mesh_agents: Vec<String>,
    /// A loss-free rate search's settings; `None` for a sweep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<SearchMeta>,
}

/// How a run's points were searched (`netsonde search`): what its summary
/// and `--json` document say beside the rows.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SearchMeta {
    /// The search's settings.
    pub config: netsonde_model::search::SearchConfig,
    /// Measured time of one trial.
    pub trial: netsonde_model::units::Nanos,
    /// Warm-up before each trial.
    pub warmup: netsonde_model::units::Nanos,
    /// A TCP search (loss: retransmitted segments) rather than UDP's.
    pub tcp: bool,
    /// The lab link's rate, bit/s, when the run had one: its frame rate per
    /// size bounds each row.
    pub link_bps: Option<f64>,
}

/// One point as stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PointView {
    /// Index.
    pub idx: u32,
    /// Axis values.
    pub axes: BTreeMap<String, String>,
    /// Its spec.
    pub spec: TestSpec,
    /// pending, done, skipped, failed.
    pub status: String,
    /// Why skipped or failed.
    pub reason: Option<String>,
    /// Statistics, once done.
    pub summary: Option<PointSummary>,
    /// What limited it: the verdict most of its repetitions got (each diagnosed
    /// from its full report), when known.
    #[serde(default)]
    pub diagnosis: Option<netsonde_analysis::Diagnosis>,
    /// In a loss-free rate search: what its trials found (so far, while pending).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<netsonde_model::search::SearchOutcome>,
    /// Where each end's flow threads' CPU went: per category, the median over
    /// the repetitions that took a breakdown; empty without one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub breakdown: Vec<SideBreakdown>,
}

/// One end's CPU breakdown at a point: each category's median cost per unit
/// over the point's repetitions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SideBreakdown {
    /// `client` or `server`.
    pub side: String,
    /// `us/KiB` or `us/trans`.
    pub unit: &'static str,
    /// Each category with a cost, in table order: its median.
    pub categories: Vec<(netsonde_model::profile::Category, f64)>,
    /// Repetitions it is the median of.
    pub reps: usize,
}

impl SideBreakdown {
    /// The medians of each category's cost over `reports` at `side`: per KiB,
    /// or per transaction for a request/response test. `None` where no
    /// repetition took a breakdown.
    pub fn of(
        side: &str,
        reports: &[&netsonde_model::result::TestReport],
    ) -> Option<SideBreakdown> {
        use netsonde_model::profile::Category;
        let costs: Vec<&Vec<netsonde_model::profile::CostShare>> = reports
            .iter()
            .filter_map(|r| {
                let c = if side == "client" {
                    &r.client_cost
                } else {
                    &r.server_cost
                };
                c.as_ref().map(|c| &c.breakdown).filter(|b| !b.is_empty())
            })
            .collect();
        if costs.is_empty() {
            return None;
        }
        let per_trans = costs
            .iter()
            .flat_map(|c| c.iter())
            .any(|c| c.us_per_transaction.is_some());
        let value = |c: &netsonde_model::profile::CostShare| {
            if per_trans {
                c.us_per_transaction
            } else {
                c.us_per_kib
            }
        };
        let categories = Category::ALL
            .iter()
            .filter_map(|&cat| {
                let mut v: Vec<f64> = costs
                    .iter()
                    .map(|c| {
                        c.iter()
                            .find(|x| x.category == cat)
                            .and_then(value)
                            .unwrap_or(0.0)
                    })
                    .collect();
                v.sort_by(f64::total_cmp);
                let m = if v.len() % 2 == 1 {
                    v[v.len() / 2]
                } else {
                    (v[v.len() / 2 - 1] + v[v.len() / 2]) / 2.0
                };
                (m > 0.0).then_some((cat, m))
            })
            .collect();
        Some(SideBreakdown {
            side: side.into(),
            unit: if per_trans { "us/trans" } else { "us/KiB" },
            categories,
            reps: costs.len(),
        })
    }

    /// The categories' sum.
    pub fn total(&self) -> f64 {
        self.categories.iter().map(|c| c.1).sum()
    }
}

impl PointView {
    /// The median of a metric.
    pub fn median(&self, metric: &str) -> Option<f64> {
        self.summary
            .as_ref()?
            .estimates
            .get(metric)
            .map(|e| e.median)
    }

    pub(crate) fn ci(&self, metric: &str) -> Option<(f64, f64)> {
        let e = self.summary.as_ref()?.estimates.get(metric)?;
        Some((e.ci_low?, e.ci_high?))
    }
}

/// A row of the outbound/inbound/bidirectional table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DirRow {
    /// Configuration without direction.
    pub config: String,
    /// Goodput by direction name (`out`, `in`, `bidir`), bit/s.
    pub goodput: BTreeMap<String, f64>,
    /// Client busy cores by direction.
    pub client_cpu: BTreeMap<String, f64>,
    /// Server busy cores by direction.
    pub server_cpu: BTreeMap<String, f64>,
}

/// One size of the latency model table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FitRow {
    /// Message size, bytes.
    pub size: f64,
    /// Measured one-way latency (half the ping-pong round trip), ns.
    pub measured_ns: f64,
    /// The fit at this size, ns.
    pub fitted_ns: f64,
    /// The one-in-flight bound of the fit, bit/s: B / (a·B + b), the throughput of one
    /// message at a time (stop and wait), a lower bound for a stream.
    pub predicted_bps: Option<f64>,
    /// Stream goodput measured at this size (same run), bit/s.
    pub measured_bps: Option<f64>,
}

/// The latency cost model `latency = a*B + b`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FitView {
    /// Which points it fits.
    pub config: String,
    /// The fit (slope ns/byte, intercept ns, R², residuals).
    pub fit: LinearFit,
    /// Estimated against actual.
    pub rows: Vec<FitRow>,
}

/// A knee: the smallest x that reaches a share of the best.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KneeRow {
    /// Configuration.
    pub config: String,
    /// `size` or `window`.
    pub axis: String,
    /// Best goodput, bit/s.
    pub max_bps: f64,
    /// Smallest x reaching 90%.
    pub at_90: Option<f64>,
    /// Smallest x reaching 95%.
    pub at_95: Option<f64>,
    /// The points the curve has; below [`KneeRow::MIN_POINTS`] no knee is
    /// claimed.
    #[serde(default)]
    pub points: usize,
}

impl KneeRow {
    /// The fewest points of a curve whose knee is said.
    pub const MIN_POINTS: usize = 3;
}

/// Efficiency and diagnosis of one stream point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EffRow {
    /// Point.
    pub idx: u32,
    /// Configuration including size.
    pub config: String,
    /// Goodput, bit/s.
    pub goodput: f64,
    /// Theoretical goodput at the line rate and MTU, bit/s.
    pub theoretical: Option<f64>,
    /// goodput / theoretical; `None` when the line rate is below the goodput
    /// (an input error, said in the diagnosis, never an efficiency above 100%).
    pub efficiency: Option<f64>,
    /// Bandwidth-delay product: the line rate times the path's round trip (the
    /// lab link's configured delay both ways; else the least RTT the senders
    /// measured), bytes; `None` without a line rate or a round trip.
    pub bdp: Option<f64>,
    /// The base round trip is below [`netsonde_model::result::HOST_RTT`]: RFC
    /// 6349's buffer delay is the host's own queueing, not a path buffer's.
    #[serde(default)]
    pub host_queueing: bool,
    /// What bounds it.
    pub bottleneck: Bottleneck,
    /// The evidence and advice behind it.
    pub diagnosis: Option<netsonde_analysis::Diagnosis>,
    /// RFC 6349 medians: TCP efficiency (%), buffer delay (%), transfer time ratio.
    #[serde(default)]
    pub rfc6349: [Option<f64>; 3],
}

/// The analysed run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunView {
    /// Metadata.
    pub run: RunMeta,
    /// Points.
    pub points: Vec<PointView>,
    /// MTU used for efficiency (client interface).
    pub mtu: Option<u64>,
    /// Outbound/inbound/bidirectional table.
    pub directions: Vec<DirRow>,
    /// Latency model.
    pub fit: Option<FitView>,
    /// Knees.
    pub knees: Vec<KneeRow>,
    /// Efficiencies.
    pub efficiency: Vec<EffRow>,
    /// Quality warnings: point, configuration, warning, hint.
    pub warnings: Vec<(u32, String, Quality, String)>,
    /// Plots.
    pub plots: Vec<PlotSpec>,
}
