//! `netsonde sweep` and `netsonde run FILE.toml`: plan, store, execute, report.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use netsonde_driver::client::{self, ClientConfig};
use netsonde_driver::server::{Server, ServerConfig, ServerHandle};
use netsonde_model::result::TestReport;
use netsonde_model::spec::TestSpec;
use netsonde_store::{RunId, RunStatus, Store};
use netsonde_sweep::exec::{drive, Hooks, Outcome, Progress, RetryPolicy, RunError, Runner};
use netsonde_sweep::fake::FakeRunner;
use netsonde_sweep::{Plan, Point};

use crate::runs;
use netsonde_run as pipeline;
use netsonde_run::Engine;

/// Runs measurements with the real client. Without a host, one embedded server
/// serves the whole sweep.
pub(crate) struct RealRunner {
    host: String,
    port: u16,
    key: Option<netsonde_proto::auth::Key>,
    _embedded: Option<ServerHandle>,
    /// Inside `netsonde lab run`: the lab's control socket and the link in place.
    lab: Option<LabLink>,
    peer: client::Peer,
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
fn check_lab(plan: &Plan, engine: Engine) -> anyhow::Result<()> {
    let wants_lab = !plan.link_axes.is_empty() || plan.link.is_some();
    if wants_lab && engine == Engine::Real && netsonde_lab::control::control_from_env().is_none() {
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
        peer: client::Peer,
    ) -> anyhow::Result<RealRunner> {
        Ok(match host {
            Some(h) => RealRunner {
                host: h,
                port,
                key,
                peer,
                _embedded: None,
                lab: netsonde_lab::control::control_from_env().map(|control| LabLink {
                    control,
                    current: netsonde_lab::control::link_from_env(),
                    asked: None,
                }),
            },
            None if peer == client::Peer::Iperf3 => {
                return Err(crate::args::UsageError(
                    "--peer iperf3 needs the HOST of an `iperf3 -s` (there is no embedded iperf3 server)"
                        .into(),
                )
                .into())
            }
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
                    peer,
                }
            }
        })
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
            peer: self.peer,
            local: Default::default(),
            connect_timeout: client::CONNECT_TIMEOUT,
        };
        let mut report = client::run(&cfg, &mut |_| {}).map_err(crate::run_error::run_error)?;
        report.link = self.lab.as_ref().and_then(|l| l.current.clone());
        // Stored with the repetition, finished as a single test is: its warnings,
        // verdict and RFC 6349 metrics (the lab's link rate is the line rate there).
        netsonde_analysis::finish(&mut report, None);
        Ok(report)
    }

    /// In the lab, asks for the point's link (only when its link axes differ from
    /// the last asked; the lab itself rebuilds only what changed).
    fn prepare(&mut self, point: &Point) -> Result<(), RunError> {
        let want =
            netsonde_model::link::LinkPoint::from_axes(&point.axes).map_err(RunError::refused)?;
        if want.is_empty() {
            return Ok(());
        }
        let lab = self.lab.as_mut().ok_or_else(|| {
            RunError::refused(
                "link axes need the lab: run the sweep with `netsonde lab run -- sweep ...`",
            )
        })?;
        if lab.asked != Some(want) {
            lab.current = Some(
                netsonde_lab::control::request(&lab.control, &want).map_err(RunError::failed)?,
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

/// The progress bar; with `every`, a line per measurement above it (a search's
/// trials, each deciding the next).
struct Bar {
    bar: indicatif::ProgressBar,
    every: bool,
}

/// A point's axes as a short label: `udp-stream out size 18 io batch`.
fn point_label(point: &Point) -> String {
    let a = &point.axes;
    let get = |k: &str| a.get(k).map(String::as_str).unwrap_or("");
    let mut l = format!("{} {} size {}", get("test"), get("direction"), get("size"));
    if let Some(io) = a.get("io") {
        l.push_str(&format!(" io {io}"));
    }
    l
}

impl Progress for Bar {
    fn begin(&mut self, point: &Point, rep: u32) {
        self.bar
            .set_message(format!("{} rep {}", point_label(point), rep + 1));
    }
    fn end(&mut self, point: &Point, rep: u32, outcome: &str) {
        if self.every {
            self.say(format!(
                "point {} ({}) trial {:>2}: {outcome}",
                point.idx,
                point_label(point),
                rep + 1
            ));
        } else if outcome.starts_with("failed") {
            self.say(format!("point {} rep {}: {outcome}", point.idx, rep + 1));
        }
        self.bar.inc(1);
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
        if self.bar.is_hidden() {
            eprintln!("{line}");
        } else {
            self.bar.println(line);
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
    pub db: Option<netsonde_store::Location>,
    /// Report folder.
    pub out: Option<PathBuf>,
    /// Resume this run.
    pub resume: Option<String>,
    /// What measures.
    pub engine: Engine,
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
    /// What the server is.
    pub peer: client::Peer,
    /// Standard output carries one document (`search --json`): the report's
    /// path and the store go to standard error.
    pub stdout_is_data: bool,
    /// Search each point for its loss-free rate instead of repeating it (a new
    /// run; a resumed one is what it was).
    pub search: Option<netsonde_sweep::search::SearchConfig>,
    /// A mesh's pairs at once (`mesh --concurrency`); 1 elsewhere.
    pub concurrency: usize,
    /// A mesh's `--metrics`: where each pair's last result goes.
    pub mesh_results: Option<Arc<crate::metrics_http::LastResults>>,
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

/// The run to measure: a resumed one (checked against the lab it is in) or a
/// new one made from the request's plan.
fn open(store: &mut Store, req: &SweepRequest) -> anyhow::Result<pipeline::Opened> {
    Ok(match &req.resume {
        Some(r) => {
            let run = runs::run_id(store, Some(r))?;
            let (mut stored, link) = pipeline::load(store, run)?;
            check_lab(&stored.plan, stored.engine)?;
            if stored.engine == Engine::Real {
                check_resume_place(run, link.as_deref())?;
                // Inside the lab, the server is where this lab says, never an
                // address stored by another.
                if link.is_some() {
                    stored.host = std::env::var("NETSONDE_HOST")
                        .ok()
                        .filter(|h| !h.is_empty());
                }
            }
            let opened = pipeline::resume(store, run, stored)?;
            eprintln!(
                "resuming run {run}: {} of {} points pending",
                opened.pending(),
                opened.points.len()
            );
            opened
        }
        None => {
            let plan = req.plan.clone().context("no plan")?;
            check_lab(&plan, req.engine)?;
            let mut stored =
                pipeline::StoredPlan::new(plan, req.host.clone(), req.port, req.engine, req.peer);
            stored.search = req.search;
            let meta = pipeline::RunMeta {
                label: req.label.clone(),
                tool_version: env!("CARGO_PKG_VERSION").into(),
                command: req.command.clone(),
                client_host_json: netsonde_cpu_facts(req.host.is_none()),
                created_at: now(),
                link_json: netsonde_lab::control::link_from_env()
                    .map(|l| serde_json::to_string(&l))
                    .transpose()?,
            };
            match pipeline::create(store, stored, &meta) {
                Err(pipeline::PipelineError::NothingToRun(why)) => {
                    return Err(crate::args::UsageError(why).into())
                }
                r => r?,
            }
        }
    })
}

/// What measures, one at a time or in rounds.
enum Measurer {
    /// One measurement at a time.
    One(Box<dyn Runner>),
    /// A mesh's agents, up to this many pairs at once.
    Rounds(Box<crate::mesh::AgentRunner>, usize),
}

/// What measures: the scripted engine, the agents of a mesh, or the real client
/// against the run's server.
fn runner(stored: &pipeline::StoredPlan, req: &SweepRequest) -> anyhow::Result<Measurer> {
    Ok(Measurer::One(if stored.engine == Engine::Fake {
        let mut fake = FakeRunner::new(stored.plan.seed);
        fake.scale = req.fake_scale;
        Box::new(SlowFake(fake, req.fake_delay))
    } else if let Some(mesh) = &stored.plan.mesh {
        let key = crate::keys::load_opt(req.auth_key.as_deref())?.ok_or_else(|| {
            crate::args::UsageError(
                "a mesh directs agents, which take jobs only from a holder of their key: \
                 pass --auth-key FILE"
                    .into(),
            )
        })?;
        let agents = crate::mesh::AgentRunner::new(mesh.clone(), key, req.mesh_results.clone());
        if req.concurrency > 1 {
            return Ok(Measurer::Rounds(Box::new(agents), req.concurrency));
        }
        Box::new(agents)
    } else {
        let key = crate::keys::load_opt(req.auth_key.as_deref())?;
        Box::new(RealRunner::new(
            stored.host.clone(),
            stored.port,
            key,
            stored.peer,
        )?)
    }))
}

/// The run's end: its status stored, what happened said, the report written.
fn conclude(
    store: &mut Store,
    req: &SweepRequest,
    stored: &pipeline::StoredPlan,
    run: RunId,
    outcome: &Outcome,
    started: Instant,
) -> anyhow::Result<(RunId, SweepEnd)> {
    let say = |line: String| {
        if req.stdout_is_data {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    };
    let plan = &stored.plan;
    let (status, pending) = pipeline::finish(store, run, outcome, now())?;
    let wall = started.elapsed().as_secs_f64();
    let per = plan.base.duration.as_secs_f64() + plan.base.warmup.as_secs_f64();
    let measured = outcome.reps as f64 * per;
    // A search's bursts end by volume, before the time its measurements are
    // planned for: no overhead can be told from that.
    let overhead = if stored.engine == Engine::Fake || measured <= 0.0 || stored.search.is_some() {
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
        let path = runs::write_report(store, run, &dir, runs::Format::Html)?;
        say(format!("report: {}", path.display()));
    }
    say(format!(
        "run {run} stored in {}",
        req.db
            .clone()
            .unwrap_or_else(netsonde_store::Location::default_file)
    ));
    let again = again(stored);
    if outcome.interrupted {
        anyhow::bail!("run {run} interrupted; completed measurements are kept; finish it with: netsonde {again} --resume {run}");
    }
    if status == RunStatus::Incomplete {
        let why = outcome
            .gave_up
            .as_ref()
            .map(|g| format!("gave up: {g}; "))
            .unwrap_or_default();
        eprintln!(
            "netsonde: run {run} incomplete: {why}{pending} point(s) still pending, every measured \
             repetition is kept; finish it with: netsonde {again} --resume {run}"
        );
        return Ok((run, SweepEnd::Incomplete));
    }
    Ok((run, SweepEnd::Complete))
}

/// The command that resumes a run like `stored`.
fn again(stored: &pipeline::StoredPlan) -> &'static str {
    if stored.search.is_some() {
        "search"
    } else if stored.plan.mesh.is_some() {
        "mesh --auth-key FILE"
    } else {
        "sweep"
    }
}

/// Measures the run's remaining points into the sink, one at a time or a
/// mesh's pairs in rounds, until they are done or `stop` is raised.
fn measure(
    measurer: Measurer,
    all: &[Point],
    schedule: &mut dyn netsonde_sweep::exec::Schedule,
    policy: &RetryPolicy,
    sink: &mut dyn netsonde_sweep::exec::Sink,
    progress: &mut Bar,
    stop: &Arc<AtomicBool>,
) -> Result<Outcome, netsonde_sweep::exec::ExecError> {
    let stop_run = || stop.load(Ordering::Relaxed);
    match measurer {
        Measurer::Rounds(mut agents, width) => netsonde_sweep::rounds::drive_rounds(
            all,
            schedule,
            policy,
            netsonde_sweep::rounds::RoundHooks {
                runner: agents.as_mut(),
                sink,
                progress,
                stop: &stop_run,
            },
            width,
            &crate::mesh::apart,
        ),
        Measurer::One(mut runner) => drive(
            all,
            schedule,
            policy,
            Hooks {
                runner: runner.as_mut(),
                sink,
                progress,
                stop: &stop_run,
                // Waits in small steps, so Ctrl-C is heard during a busy wait.
                wait: &|d| {
                    let until = Instant::now() + d;
                    while Instant::now() < until {
                        if stop.load(Ordering::Relaxed) {
                            return false;
                        }
                        std::thread::sleep((until - Instant::now()).min(Duration::from_millis(50)));
                    }
                    true
                },
            },
        ),
    }
}

/// Runs a sweep (new or resumed) and says how it ended. An interruption is an
/// error, after keeping every completed repetition.
pub fn sweep(req: SweepRequest) -> anyhow::Result<(RunId, SweepEnd)> {
    let mut store = runs::open_store(req.db.as_ref())?;
    let opened = open(&mut store, &req)?;
    let (all, mut schedule) = opened.schedule();
    let pending = opened.pending();
    let pipeline::Opened {
        run, stored, lock, ..
    } = opened;
    let plan = &stored.plan;
    let planned = schedule.remaining();
    let secs = schedule.remaining_secs(&all);
    eprintln!(
        "run {run}: {}, about {planned} measurements: about {} of measuring",
        match &stored.search {
            None => format!("{pending} points x {} repetitions", plan.repeat),
            Some(cfg) => format!(
                "a loss-free rate search of each point, about {} trials each (at most {})",
                cfg.expected_trials(),
                cfg.max_trials
            ),
        },
        netsonde_model::units::Nanos((secs * 1e9) as u64)
    );

    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone()).context("installing the signal handler")?;
    }
    let bar = indicatif::ProgressBar::new(planned as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:30} {pos}/{len} [{elapsed_precise} eta {eta}] {msg}",
        )
        .expect("static template"),
    );
    let started = Instant::now();
    let measurer = runner(&stored, &req)?;
    let outcome = {
        let mut sink = pipeline::StoreSink::new(&mut store, run, req.resume.is_some(), now);
        let policy = match &stored.plan.mesh {
            Some(mesh) => crate::mesh::retry_policy(mesh),
            None => RetryPolicy::default(),
        };
        let mut progress = Bar {
            bar: bar.clone(),
            every: stored.search.is_some(),
        };
        let schedule = schedule.as_mut();
        measure(
            measurer,
            &all,
            schedule,
            &policy,
            &mut sink,
            &mut progress,
            &stop,
        )
    };
    bar.finish_and_clear();
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            // A store that vanished cannot be told; the error that stopped the
            // run is the one to report.
            let _ = store.finish_run(run, RunStatus::Failed, now());
            let at = req
                .db
                .clone()
                .unwrap_or_else(netsonde_store::Location::default_file);
            return Err(e).context(format!(
                "run {run} stopped; what {at} holds of it is kept; once the store answers, \
                 finish it with: netsonde {} --resume {run}",
                again(&stored)
            ));
        }
    };
    let end = conclude(&mut store, &req, &stored, run, &outcome, started);
    drop(lock);
    end
}

/// Host facts of this end as JSON (the client; for an embedded server, also the
/// server).
fn netsonde_cpu_facts(loopback: bool) -> String {
    let facts = netsonde_driver::host_facts(loopback.then_some(IpAddr::V4(Ipv4Addr::LOCALHOST)));
    serde_json::to_string(&facts).expect("facts serialize")
}
