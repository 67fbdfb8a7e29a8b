//! The run pipeline's bookkeeping, between a plan ([`netsonde_sweep`]) and the
//! store ([`netsonde_store`]):
//!
//! - [`create`]: a new plan becomes a stored run: its points (runnable and
//!   skipped, with why), the [`StoredPlan`] that lets it resume, and a lock.
//! - [`load`] and [`resume`]: a stored run becomes the points still pending, the
//!   repetitions they already have, and a lock.
//! - [`Opened::remaining_order`]: the plan's interleaved order, less what is measured.
//! - [`StoreSink`]: the executor's [`Sink`]: repetitions, point summaries and
//!   failed attempts into the store; nothing is ever deleted.
//! - [`finish`]: the run's status from what is left pending.
//! - [`record_single`]: one test (`netsonde client`) as a complete run of one
//!   point, so `runs`, `report` and `compare` work on it too.
//! - [`view()`]: a stored run's rows into the analysed view the reports render.
//! - [`compare`](mod@compare): two stored runs compared into a typed comparison.
//! - [`sweep`](mod@sweep): a sweep, search or mesh from its request to its
//!   stored end ([`sweep::prepare`], [`sweep::Prepared::measure`]), through
//!   what measures it: [`real`] (the real client, its embedded server and the
//!   lab's link; the scripted engine) or [`agents`] (a mesh's agents, one pair
//!   at a time or in rounds).
//! - [`kube`]: a mesh's agents, the ready endpoints of a Kubernetes Service
//!   as the API lists them, each named by its node.
//! - [`sessions`]: a client's test, and each iperf3 session a server ran,
//!   stored as a run of one point.
//! - [`study`]: a reference study run as this program's own commands into one
//!   store, and its report; [`output`]: figures as SVG and PNG files.
//!
//! The binary hands these a progress display and a stop flag its signal
//! handlers raise, and writes the report after.
#![forbid(unsafe_code)]

pub mod agents;
mod client_error;
pub mod compare;
mod error;
pub mod judge;
pub mod kube;
pub mod monitor;
pub mod output;
pub mod real;
pub mod sessions;
pub mod study;
pub mod sweep;
mod view;

pub use client_error::run_error;
pub use error::{open_store, open_store_read_only, OpenError, SweepError};
pub use view::view;

use std::collections::BTreeMap;

use netsonde_model::result::TestReport;
use netsonde_model::sweep::Metrics;
use netsonde_store::{
    FailureKind, NewRun, PlannedPoint, PointStatus, RunId, RunLock, RunStatus, Store, StoreError,
};
use netsonde_sweep::exec::{Outcome, Repeated, RunError, Schedule, Sink, SinkError, Summary};
use netsonde_sweep::plan::Skipped;
use netsonde_sweep::search::{self, Measured, SearchConfig, SearchSchedule};
use netsonde_sweep::{Plan, Point};
use serde::{Deserialize, Serialize};

/// The version of [`StoredPlan`] this build writes and reads.
pub const PLAN_VERSION: u32 = 4;

/// What a run's `plan_json` holds: the plan and where it ran, so a resume can go
/// on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredPlan {
    /// The format's version (absent in runs stored before it had one: 1).
    #[serde(default = "first_version")]
    pub version: u32,
    /// The plan.
    pub plan: Plan,
    /// Server host (`None`: embedded).
    pub host: Option<String>,
    /// Server port.
    pub port: u16,
    /// What measures its points (stored as `real` or `fake`).
    pub engine: Engine,
    /// What the server is (since version 2; before, always netsonde).
    #[serde(default)]
    pub peer: netsonde_model::spec::Peer,
    /// Set when the run is a loss-free rate search (since version 3): each point
    /// is searched, each trial stored as one of its repetitions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<SearchConfig>,
}

fn first_version() -> u32 {
    1
}

/// What measures a run's points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// Real tests, over sockets.
    Real,
    /// The scripted engine: deterministic reports at once, no traffic (tests,
    /// and controllers driven at scale). Its runs are not measurements.
    Fake,
}

impl std::str::FromStr for Engine {
    type Err = String;

    fn from_str(s: &str) -> Result<Engine, String> {
        match s {
            "real" => Ok(Engine::Real),
            "fake" => Ok(Engine::Fake),
            _ => Err(format!("the engine is real or fake, not '{s}'")),
        }
    }
}

impl StoredPlan {
    /// A plan as this build stores it.
    pub fn new(
        plan: Plan,
        host: Option<String>,
        port: u16,
        engine: Engine,
        peer: netsonde_model::spec::Peer,
    ) -> StoredPlan {
        StoredPlan {
            version: PLAN_VERSION,
            plan,
            host,
            port,
            engine,
            peer,
            search: None,
        }
    }

    /// The same plan, each point searched for its loss-free rate.
    pub fn searching(self, cfg: SearchConfig) -> StoredPlan {
        StoredPlan {
            search: Some(cfg),
            ..self
        }
    }

    /// Reads a stored plan, refusing a version this build does not know.
    pub fn parse(json: &str) -> Result<StoredPlan, PipelineError> {
        let p: StoredPlan = serde_json::from_str(json).map_err(PipelineError::Plan)?;
        if p.version > PLAN_VERSION {
            return Err(PipelineError::Version(p.version));
        }
        Ok(p)
    }
}

/// Why the pipeline could not go on.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A stored plan, point or axis map that does not parse.
    #[error("the run's stored plan: {0}")]
    Plan(#[source] serde_json::Error),
    /// A stored plan from a newer netsonde.
    #[error("the run's plan has format version {0}, newer than this netsonde's {PLAN_VERSION}: resume it with the netsonde that made it")]
    Version(u32),
    /// No point of the plan can run.
    #[error("{0}")]
    NothingToRun(String),
    /// A stored trial of a search that is not one (no UDP counts).
    #[error("a stored trial: {0}")]
    Trial(#[source] RunError),
    /// A measured result could not be stored.
    #[error("storing the result: {0}")]
    Sink(#[from] SinkError),
}

/// A run ready to execute.
#[derive(Debug)]
pub struct Opened {
    /// Its id.
    pub run: RunId,
    /// Its plan and where it runs.
    pub stored: StoredPlan,
    /// Every point, with its status (the executor indexes by `idx`).
    pub points: Vec<(PointStatus, Point)>,
    /// The repetitions pending points already have.
    pub prior: BTreeMap<u32, Vec<Metrics>>,
    /// In a search, the measurements pending points already have.
    pub trials: BTreeMap<u32, Vec<Measured>>,
    /// Held while it runs: a second resume is refused.
    pub lock: RunLock,
}

/// What a new run records besides its plan.
#[derive(Debug, Clone)]
pub struct RunMeta {
    /// Label.
    pub label: String,
    /// This netsonde's version.
    pub tool_version: String,
    /// The command line.
    pub command: String,
    /// The client host's facts, as JSON.
    pub client_host_json: String,
    /// Seconds since the epoch.
    pub created_at: i64,
    /// The lab link it runs over, as JSON, if any.
    pub link_json: Option<String>,
}

/// Why no point of a plan can run, or `None` when one can.
pub fn nothing_to_run(points: usize, skipped: &[Skipped]) -> Option<String> {
    if points > 0 {
        return None;
    }
    let mut reasons: Vec<&str> = skipped.iter().map(|s| s.reason.as_str()).collect();
    reasons.dedup();
    Some(if reasons.is_empty() {
        "the plan has no point to measure".into()
    } else {
        format!(
            "nothing to measure: every point of the plan is skipped ({})",
            reasons.join("; ")
        )
    })
}

fn json<T: Serialize>(v: &T) -> Result<String, PipelineError> {
    serde_json::to_string(v).map_err(PipelineError::Plan)
}

/// Stores a new run of `stored.plan`: its runnable points in their first-round
/// order, its skipped points with their reasons, and the plan; locks it.
pub fn create(
    store: &mut Store,
    stored: StoredPlan,
    meta: &RunMeta,
) -> Result<Opened, PipelineError> {
    let plan = &stored.plan;
    let (all, mut skipped) = plan.points();
    // Points the server cannot run (request/response against iperf3) are
    // skipped with why, not measured and refused.
    let mut pts = Vec::with_capacity(all.len());
    for mut p in all {
        match stored.peer.cannot_run(&p.spec) {
            Some(why) => skipped.push(netsonde_sweep::plan::Skipped {
                axes: p.axes,
                reason: format!("an {} server cannot run it: {why}", stored.peer.name()),
            }),
            None => {
                // The executor indexes the runnable points from 0.
                p.idx = pts.len() as u32;
                pts.push(p);
            }
        }
    }
    if let Some(why) = nothing_to_run(pts.len(), &skipped) {
        return Err(PipelineError::NothingToRun(why));
    }
    let order = plan.order(pts.len());
    let first_round: BTreeMap<u32, u32> = order
        .iter()
        .take(pts.len())
        .enumerate()
        .map(|(i, (idx, _))| (*idx, i as u32))
        .collect();
    let mut planned = Vec::with_capacity(pts.len() + skipped.len());
    for p in &pts {
        planned.push(PlannedPoint {
            idx: p.idx,
            run_order: first_round.get(&p.idx).copied().unwrap_or(0),
            config_json: json(&p.spec)?,
            axes_json: json(&p.axes)?,
        });
    }
    let n = pts.len() as u32;
    for (i, s) in skipped.iter().enumerate() {
        planned.push(PlannedPoint {
            idx: n + i as u32,
            run_order: n + i as u32,
            config_json: json(&plan.base)?,
            axes_json: json(&s.axes)?,
        });
    }
    let run = store.create_run(
        &NewRun {
            label: meta.label.clone(),
            tool_version: meta.tool_version.clone(),
            command: meta.command.clone(),
            plan_json: json(&stored)?,
            client_host_json: meta.client_host_json.clone(),
            created_at: meta.created_at,
        },
        &planned,
    )?;
    let lock = store.lock_run(run)?;
    for (i, s) in skipped.iter().enumerate() {
        store.skip_point(run, n + i as u32, PointStatus::Skipped, &s.reason)?;
    }
    if let Some(link) = &meta.link_json {
        store.set_link(run, link)?;
    }
    let points = pts.into_iter().map(|p| (PointStatus::Pending, p)).collect();
    Ok(Opened {
        run,
        stored,
        points,
        prior: BTreeMap::new(),
        trials: BTreeMap::new(),
        lock,
    })
}

/// A stored run's plan and the link it was measured over (JSON), for the caller's
/// checks before it resumes.
pub fn load(store: &Store, run: RunId) -> Result<(StoredPlan, Option<String>), PipelineError> {
    let row = store.run(run)?;
    Ok((StoredPlan::parse(&row.plan_json)?, row.link_json))
}

/// Locks a stored run and reads what is left: every point, and the repetitions
/// the pending ones have; marks it running again. `stored` is its plan as the
/// caller will run it (the server may be where this lab says).
pub fn resume(store: &mut Store, run: RunId, stored: StoredPlan) -> Result<Opened, PipelineError> {
    let lock = store.lock_run(run)?;
    let mut points = Vec::new();
    let mut prior: BTreeMap<u32, Vec<Metrics>> = BTreeMap::new();
    let mut trials: BTreeMap<u32, Vec<Measured>> = BTreeMap::new();
    for p in store.points(run)? {
        if p.status == PointStatus::Pending {
            prior.insert(p.idx, p.reps.iter().map(|r| r.metrics.clone()).collect());
            if stored.search.is_some() {
                trials.insert(p.idx, stored_trials(&p)?);
            }
        }
        points.push((
            p.status,
            Point {
                idx: p.idx,
                axes: serde_json::from_str(&p.axes_json).map_err(PipelineError::Plan)?,
                spec: serde_json::from_str(&p.config_json).map_err(PipelineError::Plan)?,
            },
        ));
    }
    store.reopen_run(run)?;
    Ok(Opened {
        run,
        stored,
        points,
        prior,
        trials,
        lock,
    })
}

/// A search point's stored measurements, in order.
fn stored_trials(p: &netsonde_store::PointRow) -> Result<Vec<Measured>, PipelineError> {
    p.reps
        .iter()
        .map(|r| {
            let report: TestReport =
                serde_json::from_str(&r.report_json).map_err(PipelineError::Plan)?;
            search::measured(&report).map_err(PipelineError::Trial)
        })
        .collect()
}

impl Opened {
    /// Every point (the executor indexes by `idx`) and what runs them: the plan's
    /// order less what is measured, or, for a search, each pending point's search
    /// from the trials it has.
    pub fn schedule(&self) -> (Vec<Point>, Box<dyn Schedule>) {
        let (all, order) = self.remaining_order();
        let schedule: Box<dyn Schedule> = match self.stored.search {
            Some(cfg) => Box::new(SearchSchedule::new(
                cfg,
                self.points
                    .iter()
                    .filter(|(s, _)| *s == PointStatus::Pending)
                    .map(|(_, p)| (p.idx, self.trials.get(&p.idx).cloned().unwrap_or_default()))
                    .collect(),
            )),
            None => Box::new(Repeated::new(
                self.stored.plan.repeat,
                order,
                self.prior.clone(),
            )),
        };
        (all, schedule)
    }

    /// The points still pending.
    pub fn pending(&self) -> usize {
        self.points
            .iter()
            .filter(|(s, _)| *s == PointStatus::Pending)
            .count()
    }

    /// Every point (the executor indexes by `idx`) and the plan's interleaved
    /// order less what pending points already have and what is not pending.
    pub fn remaining_order(&self) -> (Vec<Point>, Vec<(u32, u32)>) {
        let runnable: Vec<&Point> = self
            .points
            .iter()
            .filter(|(s, _)| *s == PointStatus::Pending)
            .map(|(_, p)| p)
            .collect();
        let all = self.points.iter().map(|(_, p)| p.clone()).collect();
        let n_planned = runnable
            .iter()
            .map(|p| p.idx)
            .max()
            .map_or(0, |m| m as usize + 1);
        let order = self
            .stored
            .plan
            .order(n_planned)
            .into_iter()
            .filter(|(idx, rep)| {
                runnable.iter().any(|p| p.idx == *idx)
                    && self
                        .prior
                        .get(idx)
                        .is_none_or(|r| (*rep as usize) >= r.len())
            })
            .collect();
        (all, order)
    }
}

/// The executor's sink over the store.
#[derive(Debug)]
pub struct StoreSink<'a> {
    store: &'a mut Store,
    run: RunId,
    server_host_set: bool,
    now: fn() -> i64,
}

impl<'a> StoreSink<'a> {
    /// A sink into `run`; `server_host_set` when the run already has its server's
    /// facts (a resume). `now` stamps failed attempts.
    pub fn new(
        store: &'a mut Store,
        run: RunId,
        server_host_set: bool,
        now: fn() -> i64,
    ) -> StoreSink<'a> {
        StoreSink {
            store,
            run,
            server_host_set,
            now,
        }
    }
}

impl Sink for StoreSink<'_> {
    fn rep_done(
        &mut self,
        point: &Point,
        rep: u32,
        report: &TestReport,
        metrics: &Metrics,
    ) -> Result<(), SinkError> {
        let json = serde_json::to_string(report).map_err(SinkError::new)?;
        if !self.server_host_set {
            let host = serde_json::to_string(&report.server.host).map_err(SinkError::new)?;
            self.store
                .set_server_host(self.run, &host)
                .map_err(SinkError::new)?;
            self.server_host_set = true;
        }
        self.store
            .record_rep(
                self.run,
                point.idx,
                rep,
                &(json, metrics.clone(), report.intervals.clone()),
            )
            .map_err(SinkError::new)
    }

    fn point_done(&mut self, point: &Point, summary: &Summary) -> Result<(), SinkError> {
        let json = serde_json::to_string(summary).map_err(SinkError::new)?;
        self.store
            .complete_point(self.run, point.idx, &json)
            .map_err(SinkError::new)
    }

    fn rep_failed(&mut self, point: &Point, rep: u32, error: &RunError) -> Result<(), SinkError> {
        let kind = match error {
            RunError::Busy { .. } => FailureKind::Busy,
            RunError::Refused(_) => FailureKind::Refused,
            RunError::Failed(_) | RunError::Skipped(_) => FailureKind::Failed,
        };
        self.store
            .record_failure(
                self.run,
                point.idx,
                rep,
                (self.now)(),
                kind,
                &error.to_string(),
            )
            .map_err(SinkError::new)
    }
}

/// Ends a run: complete only when no point is left pending, whatever this
/// execution did; interrupted when it was stopped. Returns the status and how many
/// points are pending.
pub fn finish(
    store: &mut Store,
    run: RunId,
    outcome: &Outcome,
    now: i64,
) -> Result<(RunStatus, usize), PipelineError> {
    let pending = store.pending_points(run)?.len();
    let status = if outcome.interrupted {
        RunStatus::Interrupted
    } else if pending > 0 {
        RunStatus::Incomplete
    } else {
        RunStatus::Complete
    };
    store.finish_run(run, status, now)?;
    Ok((status, pending))
}

/// Stores one measured test as a complete run of one point and one repetition:
/// the point's spec is the test's own, its axes the test's settings, and its
/// summary the same statistics a sweep's point gets.
pub fn record_single(
    store: &mut Store,
    meta: &RunMeta,
    report: &TestReport,
    host: Option<String>,
    port: u16,
) -> Result<RunId, PipelineError> {
    let spec = report.spec.clone();
    let size = if spec.test.is_rr() {
        spec.request_size
    } else {
        spec.size
    };
    let mut plan = Plan::default_characterization();
    plan.base = spec.clone();
    plan.tests = vec![spec.test];
    plan.directions = vec![spec.direction];
    plan.sizes = vec![size];
    plan.windows = vec![spec.window];
    plan.parallel = vec![spec.parallel];
    plan.repeat = 1;
    plan.io = vec![];
    plan.pacing = vec![];
    let mut axes = BTreeMap::new();
    axes.insert("test".to_string(), spec.test.name().to_string());
    axes.insert("direction".to_string(), spec.direction.name().to_string());
    axes.insert("size".to_string(), size.0.to_string());
    axes.insert(
        "window".to_string(),
        spec.window
            .map(|w| w.0.to_string())
            .unwrap_or_else(|| "default".into()),
    );
    axes.insert("parallel".to_string(), spec.parallel.to_string());
    let stored = StoredPlan::new(plan, host, port, Engine::Real, Default::default());
    let run = store.create_run(
        &NewRun {
            label: meta.label.clone(),
            tool_version: meta.tool_version.clone(),
            command: meta.command.clone(),
            plan_json: json(&stored)?,
            client_host_json: meta.client_host_json.clone(),
            created_at: meta.created_at,
        },
        &[PlannedPoint {
            idx: 0,
            run_order: 0,
            config_json: json(&spec)?,
            axes_json: json(&axes)?,
        }],
    )?;
    let _lock = store.lock_run(run)?;
    if let Some(link) = &meta.link_json {
        store.set_link(run, link)?;
    }
    let point = Point {
        idx: 0,
        axes,
        spec: spec.clone(),
    };
    let metrics = Metrics::from_report(report);
    let summary = netsonde_sweep::exec::summarize(&spec, std::slice::from_ref(&metrics));
    let mut sink = StoreSink::new(store, run, false, || 0);
    sink.rep_done(&point, 1, report, &metrics)?;
    sink.point_done(&point, &Summary::Repeated(summary))?;
    store.finish_run(run, RunStatus::Complete, meta.created_at)?;
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;
    use netsonde_model::spec::TestKind;
    use netsonde_model::units::Bytes;

    fn plan() -> Plan {
        let mut p = Plan::default_characterization();
        p.tests = vec![TestKind::TcpStream];
        p.sizes = vec![Bytes(64)];
        p.repeat = 2;
        p
    }

    fn meta() -> RunMeta {
        RunMeta {
            label: "t".into(),
            tool_version: "0".into(),
            command: "test".into(),
            client_host_json: "{}".into(),
            created_at: 0,
            link_json: None,
        }
    }

    #[test]
    fn a_stored_plan_without_a_version_is_version_one_and_a_newer_one_is_refused() {
        let mut v = serde_json::to_value(StoredPlan::new(
            plan(),
            None,
            1,
            Engine::Fake,
            Default::default(),
        ))
        .unwrap();
        v.as_object_mut().unwrap().remove("version");
        let old = StoredPlan::parse(&v.to_string()).unwrap();
        assert_eq!(old.version, 1);
        v["version"] = serde_json::json!(PLAN_VERSION + 1);
        assert!(matches!(
            StoredPlan::parse(&v.to_string()),
            Err(PipelineError::Version(_))
        ));
    }

    #[test]
    fn create_then_resume_gives_back_the_same_points_and_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("t.db")).unwrap();
        let meta = meta();
        let opened = create(
            &mut store,
            StoredPlan::new(plan(), None, 1, Engine::Fake, Default::default()),
            &meta,
        )
        .unwrap();
        let (all, order) = opened.remaining_order();
        assert_eq!(all.len(), 1);
        assert_eq!(order.len(), 2);
        let run = opened.run;
        drop(opened);
        let (stored, link) = load(&store, run).unwrap();
        assert_eq!(link, None);
        let again = resume(&mut store, run, stored).unwrap();
        assert_eq!(again.pending(), 1);
        assert_eq!(again.remaining_order().1, order);
        // A second resume while the first holds the lock is refused.
        let (stored, _) = load(&store, run).unwrap();
        assert!(resume(&mut store, run, stored).is_err());
    }

    #[test]
    fn an_iperf3_run_skips_what_iperf3_cannot_run_and_resumes_as_iperf3() {
        use netsonde_model::spec::Peer;
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("t.db")).unwrap();
        let meta = meta();
        let mut p = plan();
        p.tests = vec![TestKind::TcpRr, TestKind::TcpStream, TestKind::UdpRr];
        p.base.duration = netsonde_model::units::Nanos::from_secs(1);
        p.base.warmup = netsonde_model::units::Nanos::ZERO;
        let opened = create(
            &mut store,
            StoredPlan::new(p, Some("h".into()), 5201, Engine::Real, Peer::Iperf3),
            &meta,
        )
        .unwrap();
        let (all, order) = opened.remaining_order();
        // The stream point alone is runnable, numbered from 0.
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].spec.test, TestKind::TcpStream);
        assert_eq!(all[0].idx, 0);
        assert_eq!(order, vec![(0, 0), (0, 1)]);
        let run = opened.run;
        drop(opened);
        let skipped: Vec<_> = store
            .points(run)
            .unwrap()
            .into_iter()
            .filter(|p| p.status == PointStatus::Skipped)
            .collect();
        assert_eq!(skipped.len(), 2);
        let (stored, _) = load(&store, run).unwrap();
        assert_eq!((stored.peer, stored.version), (Peer::Iperf3, PLAN_VERSION));
    }
}
