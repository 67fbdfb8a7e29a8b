//! `netsonde sweep` and `netsonde run FILE.toml`: plan, store, execute, report.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use netsonde_driver::client::ClientError;
use netsonde_driver::client::{self, ClientConfig};
use netsonde_driver::server::{Server, ServerConfig, ServerHandle};
use netsonde_model::result::TestReport;
use netsonde_model::spec::TestSpec;
use netsonde_model::sweep::{Metrics, PointSummary};
use netsonde_store::{FailureKind, NewRun, PlannedPoint, PointStatus, RunId, RunStatus, Store};
use netsonde_sweep::exec::{
    execute, Hooks, Progress, RetryPolicy, RunError, Runner, Sink, SinkError,
};
use netsonde_sweep::fake::FakeRunner;
use netsonde_sweep::{Plan, Point};

use crate::runs::{self, StoredPlan};

/// Runs measurements with the real client. Without a host, one embedded server
/// serves the whole sweep.
pub(crate) struct RealRunner {
    host: String,
    port: u16,
    key: Option<netsonde_proto::auth::Key>,
    _embedded: Option<ServerHandle>,
    /// Inside `netsonde lab run`: the lab's control socket and the link in place.
    lab: Option<LabLink>,
}

/// The lab this sweep runs in.
struct LabLink {
    control: PathBuf,
    /// The link in place, recorded with every repetition.
    current: Option<netsonde_model::link::LinkRecord>,
    /// The link axes last asked for.
    asked: Option<netsonde_model::link::LinkPoint>,
}

/// Link axes or a `[link]` table need the lab: refuse them outside it.
fn check_lab(plan: &Plan, engine: &str) -> anyhow::Result<()> {
    let wants_lab = !plan.link_axes.is_empty() || plan.link.is_some();
    if wants_lab && engine != "fake" && netsonde_lab::control::control_from_env().is_none() {
        return Err(crate::args::UsageError(
            "this sweep sets the link (link axes mtus/rates/delays/losses, or a [link] table): \
             run it in the lab, `netsonde lab run FILE` or `netsonde lab run -- sweep ...`"
                .into(),
        )
        .into());
    }
    Ok(())
}

impl RealRunner {
    pub(crate) fn new(
        host: Option<String>,
        port: u16,
        key: Option<netsonde_proto::auth::Key>,
    ) -> anyhow::Result<RealRunner> {
        Ok(match host {
            Some(h) => RealRunner {
                host: h,
                port,
                key,
                _embedded: None,
                lab: netsonde_lab::control::control_from_env().map(|control| LabLink {
                    control,
                    current: netsonde_lab::control::link_from_env(),
                    asked: None,
                }),
            },
            None => {
                let mut cfg =
                    ServerConfig::new(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0));
                cfg.log = netsonde_driver::policy::LogFormat::Off;
                cfg.auth_key = key.clone();
                let h = Server::bind(cfg)?.spawn();
                RealRunner {
                    host: h.addr.ip().to_string(),
                    port: h.addr.port(),
                    key,
                    _embedded: Some(h),
                    lab: None,
                }
            }
        })
    }
}

/// What the executor should make of a client error: a busy server is waited for,
/// a refused configuration is the point's own, anything else is a failure.
fn run_error(e: ClientError) -> RunError {
    match e {
        ClientError::Busy {
            message,
            retry_after_ms,
            ..
        } => RunError::Busy {
            message,
            retry_after: retry_after_ms.map(Duration::from_millis),
        },
        e @ ClientError::Refused { .. } => RunError::Refused(e.to_string()),
        e => RunError::Failed(crate::one_line(&anyhow::Error::from(e))),
    }
}

impl Runner for RealRunner {
    fn run(&mut self, spec: &TestSpec) -> Result<TestReport, RunError> {
        let cfg = ClientConfig {
            host: Some(self.host.clone()),
            port: self.port,
            spec: spec.clone(),
            deadlines: Default::default(),
            auth_key: self.key.clone(),
        };
        let mut report = client::run(&cfg, &mut |_| {}).map_err(run_error)?;
        report.link = self.lab.as_ref().and_then(|l| l.current.clone());
        // Stored with the repetition: its verdict and RFC 6349 metrics (the lab's
        // link rate is the line rate there).
        report.diagnosis = Some(netsonde_analysis::diagnose(
            &netsonde_analysis::input_from_report(&report, None),
        ));
        report.rfc6349 = netsonde_analysis::rfc6349(&report, None);
        Ok(report)
    }

    /// In the lab, asks for the point's link (only when its link axes differ from
    /// the last asked; the lab itself rebuilds only what changed).
    fn prepare(&mut self, point: &Point) -> Result<(), RunError> {
        let want = netsonde_model::link::LinkPoint::from_axes(&point.axes)
            .map_err(|e| RunError::Refused(e.to_string()))?;
        if want.is_empty() {
            return Ok(());
        }
        let lab = self.lab.as_mut().ok_or_else(|| {
            RunError::Refused(
                "link axes need the lab: run the sweep with `netsonde lab run -- sweep ...`".into(),
            )
        })?;
        if lab.asked != Some(want) {
            lab.current = Some(
                netsonde_lab::control::request(&lab.control, &want).map_err(RunError::Failed)?,
            );
            lab.asked = Some(want);
        }
        Ok(())
    }
}

/// The fake engine with an optional delay per repetition (tests kill a sweep in
/// the middle with it).
struct SlowFake(FakeRunner, Duration);

impl Runner for SlowFake {
    fn run(&mut self, spec: &TestSpec) -> Result<TestReport, RunError> {
        std::thread::sleep(self.1);
        self.0.run(spec)
    }
}

struct StoreSink<'a> {
    store: &'a mut Store,
    run: RunId,
    server_host_set: bool,
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

    fn point_done(&mut self, point: &Point, summary: &PointSummary) -> Result<(), SinkError> {
        let json = serde_json::to_string(summary).map_err(SinkError::new)?;
        self.store
            .complete_point(self.run, point.idx, &json)
            .map_err(SinkError::new)
    }

    fn rep_failed(&mut self, point: &Point, rep: u32, error: &RunError) -> Result<(), SinkError> {
        let kind = match error {
            RunError::Busy { .. } => FailureKind::Busy,
            RunError::Refused(_) => FailureKind::Refused,
            RunError::Failed(_) => FailureKind::Failed,
        };
        self.store
            .record_failure(self.run, point.idx, rep, now(), kind, &error.to_string())
            .map_err(SinkError::new)
    }
}

struct Bar(indicatif::ProgressBar);

impl Progress for Bar {
    fn begin(&mut self, point: &Point, rep: u32) {
        let a = &point.axes;
        let get = |k: &str| a.get(k).map(String::as_str).unwrap_or("");
        self.0.set_message(format!(
            "{} {} size {} rep {}",
            get("test"),
            get("direction"),
            get("size"),
            rep + 1
        ));
    }
    fn end(&mut self, point: &Point, rep: u32, outcome: &str) {
        if outcome.starts_with("failed") {
            self.say(format!("point {} rep {}: {outcome}", point.idx, rep + 1));
        }
        self.0.inc(1);
    }
    fn retry(&mut self, point: &Point, rep: u32, wait: Duration, why: &str) {
        self.say(format!(
            "point {} rep {}: {why}; trying again in {:.1} s",
            point.idx,
            rep + 1,
            wait.as_secs_f64()
        ));
    }
}

impl Bar {
    /// A line above the bar, or on stderr when there is no terminal to draw on.
    fn say(&self, line: String) {
        if self.0.is_hidden() {
            eprintln!("{line}");
        } else {
            self.0.println(line);
        }
    }
}

/// How a sweep ended, for the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SweepEnd {
    /// Every point that could run has all its repetitions.
    Complete,
    /// Points are still pending because measurements failed; a resume finishes
    /// them.
    Incomplete,
}

/// What `sweep` and `run` were asked.
#[derive(Debug)]
pub struct SweepRequest {
    /// The plan (ignored when resuming).
    pub plan: Option<Plan>,
    /// Server host.
    pub host: Option<String>,
    /// Port.
    pub port: u16,
    /// Label.
    pub label: String,
    /// Store.
    pub db: Option<PathBuf>,
    /// Report folder.
    pub out: Option<PathBuf>,
    /// Resume this run.
    pub resume: Option<String>,
    /// `fake` for the scripted engine.
    pub engine: String,
    /// Delay per fake repetition.
    pub fake_delay: Duration,
    /// Fake engine speed factor.
    pub fake_scale: f64,
    /// Key file for an authenticated server.
    pub auth_key: Option<PathBuf>,
    /// Write no report.
    pub no_report: bool,
    /// The command line, stored with the run.
    pub command: String,
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// A lab run resumes only inside a lab with the same link: outside it, its stored
/// server address would be reached through this host's default route. A run made
/// outside the lab does not resume inside one either.
fn check_resume_place(run: RunId, stored_link: Option<&str>) -> anyhow::Result<()> {
    let here = netsonde_lab::control::link_from_env();
    let in_lab = netsonde_lab::control::control_from_env().is_some();
    let stored = stored_link
        .map(serde_json::from_str::<netsonde_model::link::LinkRecord>)
        .transpose()
        .context("the run's stored link")?;
    let usage = |m: String| anyhow::Error::from(crate::args::UsageError(m));
    match (stored, in_lab, here) {
        (None, false, _) => Ok(()),
        (None, true, _) => Err(usage(format!(
            "run {run} was not measured in the lab: resume it outside the lab, \
             `netsonde sweep --resume {run}`"
        ))),
        (Some(s), false, _) => Err(usage(format!(
            "run {run} was measured in the lab over {}: resume it inside a lab with the same \
             link, `netsonde lab run <the same link flags> -- sweep --resume {run}`",
            s.spec
        ))),
        (Some(s), true, Some(h)) if h.spec == s.spec => Ok(()),
        (Some(s), true, h) => Err(usage(format!(
            "run {run} was measured over {}; this lab's link is {}: resume it in a lab with the \
             same link",
            s.spec,
            h.map(|h| h.spec.to_string())
                .unwrap_or_else(|| "unknown".into())
        ))),
    }
}

/// Why no point of a plan can run, or `None` when one can.
fn nothing_to_run(points: usize, skipped: &[netsonde_sweep::plan::Skipped]) -> Option<String> {
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

/// Runs a sweep (new or resumed) and says how it ended. An interruption is an
/// error, after keeping every completed repetition.
pub fn sweep(req: SweepRequest) -> anyhow::Result<SweepEnd> {
    let mut store = runs::open_store(req.db.as_deref())?;
    let (run, stored, points, prior, lock) = match &req.resume {
        Some(r) => {
            let run = runs::run_id(&store, Some(r))?;
            let row = store.run(run)?;
            let mut stored: StoredPlan =
                serde_json::from_str(&row.plan_json).context("the run's plan")?;
            check_lab(&stored.plan, &stored.engine)?;
            if stored.engine != "fake" {
                check_resume_place(run, row.link_json.as_deref())?;
                // Inside the lab, the server is where this lab says, never an
                // address stored by another.
                if row.link_json.is_some() {
                    stored.host = std::env::var("NETSONDE_HOST")
                        .ok()
                        .filter(|h| !h.is_empty());
                }
            }
            let lock = store.lock_run(run)?;
            let mut points = Vec::new();
            let mut prior: BTreeMap<u32, Vec<Metrics>> = BTreeMap::new();
            for p in store.points(run)? {
                if p.status == PointStatus::Pending {
                    prior.insert(p.idx, p.reps.iter().map(|r| r.metrics.clone()).collect());
                }
                points.push((
                    p.status,
                    Point {
                        idx: p.idx,
                        axes: serde_json::from_str(&p.axes_json)?,
                        spec: serde_json::from_str(&p.config_json)?,
                    },
                ));
            }
            store.reopen_run(run)?;
            eprintln!(
                "resuming run {run}: {} of {} points pending",
                prior.len(),
                points.len()
            );
            (run, stored, points, prior, lock)
        }
        None => {
            let plan = req.plan.clone().context("no plan")?;
            check_lab(&plan, &req.engine)?;
            let (pts, skipped) = plan.points();
            if let Some(why) = nothing_to_run(pts.len(), &skipped) {
                return Err(crate::args::UsageError(why).into());
            }
            let order = plan.order(pts.len());
            let first_round: BTreeMap<u32, u32> = order
                .iter()
                .take(pts.len())
                .enumerate()
                .map(|(i, (idx, _))| (*idx, i as u32))
                .collect();
            let mut planned: Vec<PlannedPoint> = pts
                .iter()
                .map(|p| PlannedPoint {
                    idx: p.idx,
                    run_order: first_round.get(&p.idx).copied().unwrap_or(0),
                    config_json: serde_json::to_string(&p.spec).expect("specs serialize"),
                    axes_json: serde_json::to_string(&p.axes).expect("axes serialize"),
                })
                .collect();
            let n = pts.len() as u32;
            for (i, s) in skipped.iter().enumerate() {
                planned.push(PlannedPoint {
                    idx: n + i as u32,
                    run_order: n + i as u32,
                    config_json: serde_json::to_string(&plan.base).expect("specs serialize"),
                    axes_json: serde_json::to_string(&s.axes).expect("axes serialize"),
                });
            }
            let stored = StoredPlan {
                plan: plan.clone(),
                host: req.host.clone(),
                port: req.port,
                engine: req.engine.clone(),
            };
            let client_host = netsonde_cpu_facts(req.host.is_none());
            let run = store.create_run(
                &NewRun {
                    label: req.label.clone(),
                    tool_version: env!("CARGO_PKG_VERSION").into(),
                    command: req.command.clone(),
                    plan_json: serde_json::to_string(&stored)?,
                    client_host_json: client_host,
                    created_at: now(),
                },
                &planned,
            )?;
            let lock = store.lock_run(run)?;
            for (i, s) in skipped.iter().enumerate() {
                store.skip_point(run, n + i as u32, PointStatus::Skipped, &s.reason)?;
            }
            if let Some(link) = netsonde_lab::control::link_from_env() {
                store.set_link(run, &serde_json::to_string(&link)?)?;
            }
            let points = pts.into_iter().map(|p| (PointStatus::Pending, p)).collect();
            (run, stored, points, BTreeMap::new(), lock)
        }
    };
    let plan = &stored.plan;
    let runnable: Vec<Point> = points
        .iter()
        .filter(|(s, _)| *s == PointStatus::Pending)
        .map(|(_, p)| p.clone())
        .collect();
    // Point indices are dense over runnable and skipped points; the executor
    // indexes by idx, so give it the full list with placeholders.
    let all: Vec<Point> = points.iter().map(|(_, p)| p.clone()).collect();
    let n_planned = runnable
        .iter()
        .map(|p| p.idx)
        .max()
        .map_or(0, |m| m as usize + 1);
    let order: Vec<(u32, u32)> = plan
        .order(n_planned)
        .into_iter()
        .filter(|(idx, rep)| {
            runnable.iter().any(|p| p.idx == *idx)
                && prior.get(idx).is_none_or(|r| (*rep as usize) >= r.len())
        })
        .collect();
    eprintln!(
        "run {run}: {} points x {} repetitions, {} measurements, about {:.0} s of measuring",
        runnable.len(),
        plan.repeat,
        order.len(),
        order.len() as f64 * (plan.base.duration.as_secs_f64() + plan.base.warmup.as_secs_f64())
    );

    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone()).context("installing the signal handler")?;
    }
    let bar = indicatif::ProgressBar::new(order.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:30} {pos}/{len} [{elapsed_precise} eta {eta}] {msg}",
        )
        .expect("static template"),
    );
    let started = Instant::now();
    let mut runner: Box<dyn Runner> = if stored.engine == "fake" {
        let mut fake = FakeRunner::new(plan.seed);
        fake.scale = req.fake_scale;
        Box::new(SlowFake(fake, req.fake_delay))
    } else {
        let key = crate::keys::load_opt(req.auth_key.as_deref())?;
        Box::new(RealRunner::new(stored.host.clone(), stored.port, key)?)
    };
    let outcome = {
        let mut sink = StoreSink {
            store: &mut store,
            run,
            server_host_set: req.resume.is_some(),
        };
        let (stop_run, stop_wait) = (stop.clone(), stop.clone());
        execute(
            &all,
            plan.repeat,
            &order,
            prior,
            &RetryPolicy::default(),
            Hooks {
                runner: runner.as_mut(),
                sink: &mut sink,
                progress: &mut Bar(bar.clone()),
                stop: &move || stop_run.load(Ordering::Relaxed),
                // Waits in small steps, so Ctrl-C is heard during a busy wait.
                wait: &move |d| {
                    let until = Instant::now() + d;
                    while Instant::now() < until {
                        if stop_wait.load(Ordering::Relaxed) {
                            return false;
                        }
                        std::thread::sleep((until - Instant::now()).min(Duration::from_millis(50)));
                    }
                    true
                },
            },
        )
    };
    bar.finish_and_clear();
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            store.finish_run(run, RunStatus::Failed, now())?;
            return Err(e).context(format!("run {run}"));
        }
    };
    // Complete only when no point is left pending, whatever this call did.
    let pending = store.pending_points(run)?.len();
    let status = if outcome.interrupted {
        RunStatus::Interrupted
    } else if pending > 0 {
        RunStatus::Incomplete
    } else {
        RunStatus::Complete
    };
    store.finish_run(run, status, now())?;
    drop(lock);
    let wall = started.elapsed().as_secs_f64();
    let measured =
        outcome.reps as f64 * (plan.base.duration.as_secs_f64() + plan.base.warmup.as_secs_f64());
    let overhead = if stored.engine == "fake" || measured <= 0.0 {
        String::new()
    } else {
        format!(
            " ({measured:.1} s measured, {:.1}% overhead)",
            100.0 * (wall - measured) / measured
        )
    };
    eprintln!(
        "run {run}: {} measurements in {wall:.1} s{overhead}, {} failed attempt(s), {pending} \
         point(s) pending",
        outcome.reps,
        outcome.failures.len()
    );
    for f in &outcome.failures {
        eprintln!("  point {} rep {} failed: {}", f.idx, f.rep + 1, f.error);
    }
    if !req.no_report {
        let dir = req
            .out
            .clone()
            .unwrap_or_else(|| runs::default_report_dir(run));
        let path = runs::write_report(&store, run, &dir, runs::Format::Html)?;
        println!("report: {}", path.display());
    }
    println!(
        "run {run} stored in {}",
        req.db.clone().unwrap_or_else(Store::default_path).display()
    );
    if outcome.interrupted {
        anyhow::bail!("run {run} interrupted; completed measurements are kept; finish it with: netsonde sweep --resume {run}");
    }
    if status == RunStatus::Incomplete {
        let why = outcome
            .gave_up
            .map(|g| format!("gave up: {g}; "))
            .unwrap_or_default();
        eprintln!(
            "netsonde: run {run} incomplete: {why}{pending} point(s) still pending, every measured \
             repetition is kept; finish it with: netsonde sweep --resume {run}"
        );
        return Ok(SweepEnd::Incomplete);
    }
    Ok(SweepEnd::Complete)
}

/// Host facts of this end as JSON (the client; for an embedded server, also the
/// server).
fn netsonde_cpu_facts(loopback: bool) -> String {
    let facts = netsonde_driver::host_facts(loopback.then_some(IpAddr::V4(Ipv4Addr::LOCALHOST)));
    serde_json::to_string(&facts).expect("facts serialize")
}
