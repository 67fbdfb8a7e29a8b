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
    /// Its latest round was measured but cannot be judged: a host at either
    /// end was busy with other work or its CPU quota throttled the test, so
    /// the figures say more about the host than about the path. Not part of
    /// the normal; a degraded pair stays degraded through it.
    Inconclusive,
    /// Its latest round is worse than its normal by more than counts, on some
    /// metric.
    Degraded,
    /// Its latest round failed (the agent did not answer, the test failed).
    Failed,
}

impl PairState {
    /// Every state, in the order a grid's legend lists them.
    pub const ALL: [PairState; 5] = [
        PairState::Ok,
        PairState::Learning,
        PairState::Inconclusive,
        PairState::Degraded,
        PairState::Failed,
    ];

    /// Its name (`ok`, `learning`, `inconclusive`, `degraded`, `failed`).
    pub fn name(self) -> &'static str {
        match self {
            PairState::Ok => "ok",
            PairState::Learning => "learning",
            PairState::Inconclusive => "inconclusive",
            PairState::Degraded => "degraded",
            PairState::Failed => "failed",
        }
    }
}

/// A metric's normal: the median of its past rounds and the band around it
/// that counts as normal.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    /// The median of the past rounds' medians.
    pub median: f64,
    /// The band's lower edge: the median less the larger of the metric's
    /// practical change and three robust standard deviations of the past
    /// rounds (1.4826 × their median absolute deviation).
    pub low: f64,
    /// The band's upper edge, likewise.
    pub high: f64,
    /// The past rounds' robust standard deviation (1.4826 × MAD).
    #[serde(default)]
    pub spread: f64,
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

/// The conclusive rounds a pair's state is decided over.
pub const JUDGED_ROUNDS: u32 = 3;

/// Of the last [`JUDGED_ROUNDS`], how many must be worse than the normal for
/// the pair to be degraded (and within it for a degraded pair to recover): a
/// single bad round, whatever caused it, never pages.
pub const WORSE_ROUNDS: u32 = 2;

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
    /// Its headline figure (goodput, or transactions a second) against its
    /// normal, relative (-0.40: 40% lower), once it has one.
    #[serde(default)]
    pub change: Option<f64>,
    /// How much worse than its normal its worst metric is, relative and
    /// positive (0.9: goodput 90% below; 1.5: latency 150% above); 0 when no
    /// metric is worse. `None` while learning.
    #[serde(default)]
    pub worse_ratio: Option<f64>,
    /// Of its last conclusive rounds judged against a normal (at most
    /// [`JUDGED_ROUNDS`]), how many were worse: the pair is degraded when
    /// [`WORSE_ROUNDS`] of them were, and recovers when as many were not.
    #[serde(default)]
    pub worse_of: (u32, u32),
    /// Each metric watched.
    pub metrics: Vec<MetricWatch>,
    /// The round it was judged on (its stored run).
    pub run: i64,
    /// When that round started, Unix seconds.
    pub at_unix_s: i64,
}

/// What a monitor last knew: every pair's test as last judged, and how its
/// rounds go. What its `--metrics` serves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// Each agent as the latest round saw it.
    #[serde(default)]
    pub agents: Vec<AgentWatch>,
    /// Whether the last write to the results store worked.
    #[serde(default = "yes")]
    pub store_up: bool,
    /// Rounds measured and held in memory until the store takes them.
    #[serde(default)]
    pub held_rounds: u64,
}

fn yes() -> bool {
    true
}

impl Default for Watched {
    fn default() -> Watched {
        Watched {
            pairs: Vec::new(),
            rounds: 0,
            skipped: 0,
            last_round_unix_s: None,
            every_s: 0.0,
            agents: Vec::new(),
            store_up: true,
            held_rounds: 0,
        }
    }
}

/// An agent as a monitor's latest round saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentWatch {
    /// Its name in the mesh.
    pub name: String,
    /// Whether any of its pair-tests in the latest round it took part in was
    /// measured; an agent none of whose tests was, and some failed, is down.
    pub up: bool,
    /// Its pair-tests that failed in that round, at either end.
    pub failed_pairs: u32,
    /// Why it is down: the first of those failures.
    pub why: Option<String>,
    /// When a round last measured a test of it, Unix seconds.
    pub last_seen_unix_s: Option<i64>,
}
