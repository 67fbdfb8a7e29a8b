//! A sweep, a search or a mesh from its request to its stored end: the run
//! opened (new, or resumed where it was measured), what measures it chosen,
//! its points measured into the store, and how it ended. The binary owns the
//! terminal (the progress it is handed, the signals that raise `stop`) and the
//! report written afterwards.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use netsonde_driver::client;
use netsonde_proto::auth::Key;
use netsonde_store::{Location, RunId, RunLock, RunStatus, Store};
use netsonde_sweep::exec::{
    drive, ExecError, Hooks, Outcome, Progress, RetryPolicy, Runner, Schedule, Sink,
};
use netsonde_sweep::fake::FakeRunner;
use netsonde_sweep::search::SearchConfig;
use netsonde_sweep::{Plan, Point};

use crate::agents::{AgentRunner, LastResults};
use crate::error::SweepError;
use crate::real::{check_lab, RealRunner, SlowFake};
use crate::{Engine, Opened, PipelineError, RunMeta, StoreSink, StoredPlan};

/// How a sweep ended, for the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SweepEnd {
    /// Every point that could run has all its repetitions.
    Complete,
    /// Points are still pending because measurements failed; a resume finishes
    /// them.
    Incomplete,
    /// Stopped by a signal; completed measurements are kept.
    Interrupted,
}

/// What `sweep`, `run`, `search` and `mesh` ask.
#[derive(Debug)]
pub struct SweepRequest {
    /// The plan (ignored when resuming).
    pub plan: Option<Plan>,
    /// Server host (`None`: an embedded server).
    pub host: Option<String>,
    /// Port.
    pub port: u16,
    /// Label.
    pub label: String,
    /// The store, for what the run's messages say.
    pub db: Location,
    /// Resume this run.
    pub resume: Option<RunId>,
    /// What measures.
    pub engine: Engine,
    /// Delay per fake repetition.
    pub fake_delay: Duration,
    /// Fake engine speed factor.
    pub fake_scale: f64,
    /// The key of an authenticated server, or of a mesh's agents.
    pub auth_key: Option<Key>,
    /// The command line, stored with the run.
    pub command: String,
    /// What the server is.
    pub peer: client::Peer,
    /// Search each point for its loss-free rate instead of repeating it (a new
    /// run; a resumed one is what it was).
    pub search: Option<SearchConfig>,
    /// A mesh's pairs at once (`mesh --concurrency`); 1 elsewhere.
    pub concurrency: usize,
    /// A mesh's `--metrics`: where each pair's last result goes.
    pub mesh_results: Option<Arc<LastResults>>,
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
fn check_resume_place(run: RunId, stored_link: Option<&str>) -> Result<(), SweepError> {
    let here = netsonde_lab::control::link_from_env();
    let in_lab = netsonde_lab::control::control_from_env().is_some();
    let stored = stored_link
        .map(serde_json::from_str::<netsonde_model::link::LinkRecord>)
        .transpose()
        .map_err(SweepError::StoredLink)?;
    match (stored, in_lab, here) {
        (None, false, _) => Ok(()),
        (None, true, _) => Err(SweepError::Usage(format!(
            "run {run} was not measured in the lab: resume it outside the lab, \
             `netsonde sweep --resume {run}`"
        ))),
        (Some(s), false, _) => Err(SweepError::Usage(format!(
            "run {run} was measured in the lab over {}: resume it inside a lab with the same \
             link, `netsonde lab run <the same link flags> -- sweep --resume {run}`",
            s.spec
        ))),
        (Some(s), true, Some(h)) if h.spec == s.spec => Ok(()),
        (Some(s), true, h) => Err(SweepError::Usage(format!(
            "run {run} was measured over {}; this lab's link is {}: resume it in a lab with the \
             same link",
            s.spec,
            h.map(|h| h.spec.to_string())
                .unwrap_or_else(|| "unknown".into())
        ))),
    }
}

/// The run to measure: a resumed one (checked against the lab it is in) or a
/// new one made from the request's plan; with the line a resume says.
fn open(store: &mut Store, req: &SweepRequest) -> Result<(Opened, Option<String>), SweepError> {
    if let Some(run) = req.resume {
        let (mut stored, link) = crate::load(store, run)?;
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
        let opened = crate::resume(store, run, stored)?;
        let line = format!(
            "resuming run {run}: {} of {} points pending",
            opened.pending(),
            opened.points.len()
        );
        return Ok((opened, Some(line)));
    }
    let plan = req
        .plan
        .clone()
        .ok_or_else(|| SweepError::Usage("nothing to run: no plan and no run to resume".into()))?;
    check_lab(&plan, req.engine)?;
    let mut stored = StoredPlan::new(plan, req.host.clone(), req.port, req.engine, req.peer);
    stored.search = req.search;
    let link_json = netsonde_lab::control::link_from_env()
        .map(|l| serde_json::to_string(&l).expect("a link record serializes"));
    let meta = RunMeta {
        label: req.label.clone(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        command: req.command.clone(),
        client_host_json: host_facts(req.host.is_none()),
        created_at: now(),
        link_json,
    };
    match crate::create(store, stored, &meta) {
        Err(PipelineError::NothingToRun(why)) => Err(SweepError::Usage(why)),
        r => Ok((r?, None)),
    }
}

/// What measures, one at a time or in rounds.
enum Measurer {
    /// One measurement at a time.
    One(Box<dyn Runner>),
    /// A mesh's agents, up to this many pairs at once.
    Rounds(Box<AgentRunner>, usize),
}

/// What measures: the scripted engine, the agents of a mesh, or the real client
/// against the run's server.
fn measurer(stored: &StoredPlan, req: &SweepRequest) -> Result<Measurer, SweepError> {
    Ok(Measurer::One(if stored.engine == Engine::Fake {
        let mut fake = FakeRunner::new(stored.plan.seed);
        fake.scale = req.fake_scale;
        Box::new(SlowFake(fake, req.fake_delay))
    } else if let Some(mesh) = &stored.plan.mesh {
        let key = req.auth_key.clone().ok_or_else(|| {
            SweepError::Usage(
                "a mesh directs agents, which take jobs only from a holder of their key: \
                 pass --auth-key FILE"
                    .into(),
            )
        })?;
        let agents = AgentRunner::new(mesh.clone(), key, req.mesh_results.clone());
        if req.concurrency > 1 {
            return Ok(Measurer::Rounds(Box::new(agents), req.concurrency));
        }
        Box::new(agents)
    } else {
        Box::new(RealRunner::new(
            stored.host.clone(),
            stored.port,
            req.auth_key.clone(),
            stored.peer,
        )?)
    }))
}

/// The command that resumes a run like `stored`.
fn again(stored: &StoredPlan) -> &'static str {
    if stored.search.is_some() {
        "search"
    } else if stored.plan.mesh.is_some() {
        "mesh --auth-key FILE"
    } else {
        "sweep"
    }
}

/// A run opened and ready to measure: what it will take is known before it
/// starts (the binary sizes its progress bar on it).
pub struct Prepared {
    run: RunId,
    stored: StoredPlan,
    lock: RunLock,
    all: Vec<Point>,
    schedule: Box<dyn Schedule>,
    pending: usize,
    resumed: Option<String>,
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("run", &self.run)
            .field("pending", &self.pending)
            .finish_non_exhaustive()
    }
}

/// Opens the run `req` asks for (new or resumed) and plans what is left of it.
pub fn prepare(store: &mut Store, req: &SweepRequest) -> Result<Prepared, SweepError> {
    let (opened, resumed) = open(store, req)?;
    let (all, schedule) = opened.schedule();
    let pending = opened.pending();
    let Opened {
        run, stored, lock, ..
    } = opened;
    Ok(Prepared {
        run,
        stored,
        lock,
        all,
        schedule,
        pending,
        resumed,
    })
}

impl Prepared {
    /// The run.
    pub fn run(&self) -> RunId {
        self.run
    }

    /// Its stored plan.
    pub fn stored(&self) -> &StoredPlan {
        &self.stored
    }

    /// The measurements it is expected to take.
    pub fn planned(&self) -> usize {
        self.schedule.remaining()
    }

    /// What is about to run, as said before it starts (a resume's line first).
    pub fn describe(&self) -> String {
        let plan = &self.stored.plan;
        let secs = self.schedule.remaining_secs(&self.all);
        let what = match &self.stored.search {
            None => format!("{} points x {} repetitions", self.pending, plan.repeat),
            Some(cfg) => format!(
                "a loss-free rate search of each point, about {} trials each (at most {})",
                cfg.expected_trials(),
                cfg.max_trials
            ),
        };
        let mut out = self.resumed.clone().map(|l| l + "\n").unwrap_or_default();
        out.push_str(&format!(
            "run {}: {what}, about {} measurements: about {} of measuring",
            self.run,
            self.planned(),
            netsonde_model::units::Nanos((secs * 1e9) as u64)
        ));
        out
    }

    /// Measures the run's remaining points into the store until they are done
    /// or `stop` is raised, and stores how it ended.
    pub fn measure(
        mut self,
        store: &mut Store,
        req: &SweepRequest,
        progress: &mut dyn Progress,
        stop: &AtomicBool,
    ) -> Result<Concluded, SweepError> {
        let started = Instant::now();
        let measurer = measurer(&self.stored, req)?;
        let run = self.run;
        let outcome = {
            let mut sink = StoreSink::new(store, run, req.resume.is_some(), now);
            let policy = match &self.stored.plan.mesh {
                Some(mesh) => crate::agents::retry_policy(mesh),
                None => RetryPolicy::default(),
            };
            let schedule = self.schedule.as_mut();
            let hooks = (&mut sink as &mut dyn Sink, progress);
            measure(measurer, &self.all, schedule, &policy, hooks, stop)
        };
        let outcome = match outcome {
            Ok(o) => o,
            Err(source) => {
                // A store that vanished cannot be told; the error that stopped the
                // run is the one to report.
                let _ = store.finish_run(run, RunStatus::Failed, now());
                return Err(SweepError::Stopped {
                    run,
                    at: req.db.clone(),
                    again: again(&self.stored),
                    source,
                });
            }
        };
        let concluded = conclude(store, &self.stored, run, &outcome, started)?;
        drop(self.lock);
        Ok(concluded)
    }
}

/// Measures the points into the sink, one at a time or a mesh's pairs in
/// rounds, until they are done or `stop` is raised.
fn measure(
    measurer: Measurer,
    all: &[Point],
    schedule: &mut dyn Schedule,
    policy: &RetryPolicy,
    (sink, progress): (&mut dyn Sink, &mut dyn Progress),
    stop: &AtomicBool,
) -> Result<Outcome, ExecError> {
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
            &crate::agents::apart,
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
                // Waits in small steps, so a signal is heard during a busy wait.
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

/// How a run ended, stored and said.
#[derive(Debug)]
pub struct Concluded {
    /// The run.
    pub run: RunId,
    /// How it ended.
    pub end: SweepEnd,
    /// What happened: measurements, time, overhead, failed attempts (for
    /// standard error).
    pub summary: String,
    /// For a run that is not complete: why, and the command that finishes it.
    pub unfinished: Option<String>,
}

/// The run's end: its status stored and what happened said.
fn conclude(
    store: &mut Store,
    stored: &StoredPlan,
    run: RunId,
    outcome: &Outcome,
    started: Instant,
) -> Result<Concluded, SweepError> {
    let plan = &stored.plan;
    let (status, pending) = crate::finish(store, run, outcome, now())?;
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
    let retried = match outcome.retried.len() {
        0 => String::new(),
        n => format!(" ({n} more tried again)"),
    };
    let mut summary = format!(
        "run {run}: {} measurements in {wall:.1} s{overhead}, {} failed attempt(s){retried}, \
         {pending} point(s) pending",
        outcome.reps,
        outcome.failures.len()
    );
    for (f, what) in outcome
        .retried
        .iter()
        .map(|f| (f, "tried again after"))
        .chain(outcome.failures.iter().map(|f| (f, "failed")))
    {
        summary.push_str(&format!(
            "\n  point {} rep {} {what}: {}",
            f.idx,
            f.rep + 1,
            f.error
        ));
    }
    let again = again(stored);
    let (end, unfinished) = if outcome.interrupted {
        let why = format!(
            "run {run} interrupted; completed measurements are kept; finish it with: \
             netsonde {again} --resume {run}"
        );
        (SweepEnd::Interrupted, Some(why))
    } else if status == RunStatus::Incomplete {
        let gave_up = outcome
            .gave_up
            .as_ref()
            .map(|g| format!("gave up: {g}; "))
            .unwrap_or_default();
        let why = format!(
            "run {run} incomplete: {gave_up}{pending} point(s) still pending, every measured \
             repetition is kept; finish it with: netsonde {again} --resume {run}"
        );
        (SweepEnd::Incomplete, Some(why))
    } else {
        (SweepEnd::Complete, None)
    };
    Ok(Concluded {
        run,
        end,
        summary,
        unfinished,
    })
}

/// Host facts of this end as JSON (the client; for an embedded server, also the
/// server).
fn host_facts(loopback: bool) -> String {
    let facts = netsonde_driver::host_facts(loopback.then_some(IpAddr::V4(Ipv4Addr::LOCALHOST)));
    serde_json::to_string(&facts).expect("facts serialize")
}
