//! A fleet watched over time (`netsonde monitor`): each pair's test, its
//! latest figures against its own normal (a baseline of its past rounds), and
//! its state. The vocabulary only; `netsonde-analysis` judges, `netsonde-run`
//! keeps it.

use serde::{Deserialize, Serialize};

/// Where a pair stands against its own past.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PairState {
    /// Its latest round is within its normal.
    Ok,
    /// Too few past rounds for a normal yet.
    Learning,
    /// Its latest round is worse than its normal by more than counts, on some
    /// metric.
    Degraded,
    /// Its latest round failed (the agent did not answer, the test failed).
    Failed,
}

impl PairState {
    /// Every state, in the order a grid's legend lists them.
    pub const ALL: [PairState; 4] = [
        PairState::Ok,
        PairState::Learning,
        PairState::Degraded,
        PairState::Failed,
    ];

    /// Its name (`ok`, `learning`, `degraded`, `failed`).
    pub fn name(self) -> &'static str {
        match self {
            PairState::Ok => "ok",
            PairState::Learning => "learning",
            PairState::Degraded => "degraded",
            PairState::Failed => "failed",
        }
    }
}

/// A metric's normal: the median of its past rounds and their range.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    /// The median of the past rounds' medians.
    pub median: f64,
    /// The lowest of them.
    pub low: f64,
    /// The highest.
    pub high: f64,
    /// How many rounds.
    pub rounds: usize,
}

/// One metric of a pair's test: its latest figure against its baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricWatch {
    /// The metric's stored name (`goodput`, `latency_p99`, ...).
    pub metric: String,
    /// The latest round's median.
    pub latest: f64,
    /// Its normal, once there are enough past rounds.
    pub baseline: Option<Baseline>,
    /// The latest against the baseline's median, relative (+0.10: 10% higher).
    pub change: Option<f64>,
    /// Whether this metric is worse than its normal by more than counts.
    pub worse: bool,
}

/// A pair's test, as the monitor last judged it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairWatch {
    /// The client's agent.
    pub src: String,
    /// The server's agent.
    pub dst: String,
    /// The test and what else varies but the pair (`tcp-stream 128KiB`).
    pub test: String,
    /// Its state.
    pub state: PairState,
    /// Why, in a line: the metric that is worse and by how much, the failure,
    /// or how many rounds the normal still needs.
    pub why: String,
    /// The verdict of its latest round (what limited it), when measured.
    pub verdict: Option<String>,
    /// Each metric watched.
    pub metrics: Vec<MetricWatch>,
    /// The round it was judged on (its stored run).
    pub run: i64,
    /// When that round started, Unix seconds.
    pub at_unix_s: i64,
}

/// What a monitor last knew: every pair's test as last judged, and how its
/// rounds go. What its `--metrics` serves.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Watched {
    /// Every pair's test, as last judged.
    pub pairs: Vec<PairWatch>,
    /// Rounds this process ran.
    pub rounds: u64,
    /// Slots skipped because a round overran them.
    pub skipped: u64,
    /// When the last stored round started, Unix seconds.
    pub last_round_unix_s: Option<i64>,
    /// The interval between rounds, seconds.
    pub every_s: f64,
}
