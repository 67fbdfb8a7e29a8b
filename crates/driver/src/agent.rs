//! Jobs: a controller (`netsonde mesh`) asks an agent (`netsonde agent`, a
//! server that takes jobs) to run one test as a client against another agent,
//! and gets the whole report back over the same authenticated control protocol.
//!
//! - [`request`]: the controller's end, one job from hello to report.
//! - [`handler`]: the agent's end, which the server's session calls when a job
//!   is asked for instead of a setup; it admits the job against the server's own
//!   limits and budget (a job is a session like any other), waits for its start
//!   time, runs the client and sends the report.

use std::net::SocketAddr;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use netsonde_model::result::TestReport;
use netsonde_proto::auth::Key;
use netsonde_proto::frame::MAX_FRAME;
use netsonde_proto::message::{ErrorCode, Job, JobReport, MAX_START_DELAY};
use netsonde_proto::session::{Deadlines, Event, ProtoError, ServerSession};
use netsonde_proto::ClientSession;

use crate::client::{self, ClientConfig, ClientError, Peer};
use crate::conn::{resolve, session_error, CONNECT_TIMEOUT};
use crate::control::Control;
use crate::jobs::{JobHandler, ServeCtx};
use crate::now;
use crate::policy::SessionLog;

/// Milliseconds since the Unix epoch on this host's clock.
pub fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Asks the agent at `host`:`port` to run `job`, and waits for its report. The
/// agent's refusals come back as the client's own do (busy, refused).
pub fn request(
    host: &str,
    port: u16,
    key: Option<&Key>,
    job: Job,
    deadlines: Deadlines,
) -> Result<JobReport, ClientError> {
    let addr = resolve(host, port)?;
    let cfg = ClientConfig {
        host: Some(host.to_string()),
        port,
        spec: job.spec.clone(),
        deadlines,
        auth_key: key.cloned(),
        peer: Peer::Netsonde,
        local: Default::default(),
        connect_timeout: CONNECT_TIMEOUT,
        cancel: None,
    };
    let connect = |source| ClientError::Connect { addr, source };
    let stream = cfg.connect_control(addr).map_err(connect)?;
    let mut ctl = Control::new(stream).map_err(connect)?;
    let auth = match key {
        None => None,
        Some(k) => Some((k.clone(), crate::random_bytes::<32>().map_err(connect)?)),
    };
    let spec = job.spec.clone();
    let mut s = ClientSession::job(now(), job, deadlines, auth);
    loop {
        for ev in ctl.pump(&mut s, Duration::from_secs(1)) {
            match ev {
                Event::JobDone(r) => {
                    ctl.flush(&mut s);
                    return match crate::vet::vet(&spec, &r.report) {
                        Ok(()) => Ok(*r),
                        Err(why) => Err(ClientError::Unbelievable { addr, why }),
                    };
                }
                Event::Failed(e) => return Err(session_error(addr, e)),
                _ => {}
            }
        }
        if s.is_over() {
            return Err(session_error(
                addr,
                ProtoError::PeerClosed {
                    phase: "the agent's job report",
                },
            ));
        }
    }
}

/// Why a job was refused before it ran, in the words a controller shows.
fn check(job: &Job, authenticated: bool) -> Result<(), (ErrorCode, String)> {
    if !authenticated {
        // An agent always has a key (the command insists); this holds the line.
        return Err((
            ErrorCode::AuthRequired,
            "jobs need an authenticated controller".into(),
        ));
    }
    if job.target_host.is_empty() || job.target_port == 0 {
        return Err((ErrorCode::BadSpec, "the job names no target".into()));
    }
    if let Some(at) = job.start_at_unix_ms {
        let ahead = at.saturating_sub(unix_ms());
        if ahead > MAX_START_DELAY.as_duration().as_millis() as u64 {
            return Err((
                ErrorCode::BadSpec,
                format!(
                    "the job's start is {:.1} s ahead of this agent's clock (at most {:.0} s): \
                     are the hosts' clocks synchronised?",
                    ahead as f64 / 1e3,
                    MAX_START_DELAY.as_duration().as_secs_f64()
                ),
            ));
        }
    }
    Ok(())
}

/// The error code a controller sees for a job's client error: a busy or
/// refusing target is the target's answer, passed on; a target that did not
/// answer on its control channel is unreachable; anything else failed here.
fn code_of(e: &ClientError) -> (ErrorCode, Option<u64>) {
    match e {
        ClientError::Busy { retry_after_ms, .. } => (ErrorCode::Busy, *retry_after_ms),
        ClientError::Refused { .. } | ClientError::Spec(_) => (ErrorCode::BadSpec, None),
        ClientError::Resolve { .. }
        | ClientError::Connect { .. }
        | ClientError::Silent { .. }
        | ClientError::Iperf3Server { .. } => (ErrorCode::Unreachable, None),
        ClientError::Session { source, .. }
            if !matches!(source, netsonde_proto::ProtoError::Remote { .. }) =>
        {
            (ErrorCode::Unreachable, None)
        }
        _ => (ErrorCode::Internal, None),
    }
}

/// The handler `netsonde agent` gives its server: each job admitted, started
/// at its time, run as a client against its target, and its report sent back.
/// `on_report`, when given, sees each job's report and its target
/// (`HOST:PORT`) before it is sent back (`--metrics` keeps the last of each).
pub fn handler(on_report: Option<OnReport>, measure: Measure, allow: Targets) -> JobHandler {
    JobHandler(std::sync::Arc::new(move |ctl, s, job, ctx| {
        serve(ctl, s, job, ctx, on_report.as_ref(), &measure, &allow)
    }))
}

/// The targets an agent may test (`--allow-targets`): `None` allows any.
pub type Targets = Option<Vec<ipnet::IpNet>>;

/// Whether `job`'s target is one the agent may test, or why not: its name is
/// resolved here, and every address it resolves to must be allowed, so a name
/// cannot lead the agent elsewhere.
fn allowed(job: &Job, allow: &Targets) -> Result<(), String> {
    let Some(nets) = allow else {
        return Ok(());
    };
    use std::net::ToSocketAddrs;
    let addrs: Vec<SocketAddr> = (job.target_host.as_str(), job.target_port)
        .to_socket_addrs()
        .map_err(|e| format!("target {}: {e}", job.target_host))?
        .collect();
    match addrs
        .iter()
        .find(|a| !nets.iter().any(|n| n.contains(&a.ip())))
    {
        _ if addrs.is_empty() => Err(format!("target {} has no address", job.target_host)),
        Some(a) => Err(format!(
            "target {} ({}) is not among this agent's --allow-targets",
            job.target_host,
            a.ip()
        )),
        None => Ok(()),
    }
}

/// Runs a job's test as a client: [`real`] measures; a caller may script it
/// (`netsonde agent --engine fake` answers at once, for testing controllers).
pub type Measure =
    std::sync::Arc<dyn Fn(&ClientConfig) -> Result<TestReport, ClientError> + Send + Sync>;

/// The test measured for real, by [`client::run`].
pub fn real() -> Measure {
    std::sync::Arc::new(|cfg| client::run(cfg, &mut |_| {}))
}

/// Sees a job's report and its target (`HOST:PORT`).
pub type OnReport = std::sync::Arc<dyn Fn(&TestReport, &str) + Send + Sync>;

/// Runs a job the controller on `s` asked for, to the end of the session.
fn serve(
    ctl: &mut Control,
    s: &mut ServerSession,
    job: Job,
    ctx: ServeCtx<'_>,
    on_report: Option<&OnReport>,
    measure: &Measure,
    allow: &Targets,
) {
    let log = ctx.log;
    log.test = Some(job.spec.clone());
    let refuse = |ctl: &mut Control,
                  s: &mut ServerSession,
                  log: &mut SessionLog,
                  code,
                  why: String,
                  retry| {
        s.reject(now(), code, why.clone(), retry);
        ctl.flush(s);
        log.outcome = "refused";
        log.reason = why;
    };
    if let Err((code, why)) = check(&job, s.authenticated()) {
        return refuse(ctl, s, log, code, why, None);
    }
    if let Err(why) = allowed(&job, allow) {
        return refuse(ctl, s, log, ErrorCode::BadSpec, why, None);
    }
    let _held = match (ctx.admit)(&job.spec) {
        Ok(h) => h,
        Err((code, why, retry)) => return refuse(ctl, s, log, code, why, retry),
    };
    // Wait for the start, answering the controller (who may vanish).
    let tick = Duration::from_millis(20);
    if let Some(at) = job.start_at_unix_ms {
        while unix_ms() < at && !s.is_over() {
            let left = Duration::from_millis(at.saturating_sub(unix_ms()));
            std::thread::sleep(left.min(tick));
        }
    }
    // The controller's departure stops the test at once, freeing the slot.
    let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let cfg = ClientConfig {
        host: Some(job.target_host.clone()),
        port: job.target_port,
        spec: job.spec.clone(),
        deadlines: ctx.deadlines,
        auth_key: ctx.key.cloned(),
        peer: Peer::Netsonde,
        local: Default::default(),
        connect_timeout: CONNECT_TIMEOUT,
        cancel: Some(cancel.clone()),
    };
    let started = unix_ms();
    let began = Instant::now();
    let measure = measure.clone();
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(measure(&cfg));
    });
    // Wait for the test, answering the controller between waits (it may
    // vanish): the report goes out as soon as the test ends.
    let mut gone = None;
    let outcome = loop {
        match finished.recv_timeout(Duration::from_millis(50)) {
            Ok(outcome) => break outcome,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                break Err(ClientError::Session {
                    addr: SocketAddr::from(([0, 0, 0, 0], job.target_port)),
                    source: ProtoError::PeerClosed {
                        phase: "the job's client, which panicked",
                    },
                })
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
        }
        // Once the controller is gone the test is stopped: nobody wants its
        // report, and it holds the slot.
        if !s.is_over() {
            for ev in ctl.pump(s, Duration::from_millis(1)) {
                if let Event::Failed(e) = ev {
                    gone.get_or_insert(e);
                }
            }
        }
        if gone.is_some() || s.is_over() {
            cancel.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    };
    log.seconds = began.elapsed().as_secs_f64();
    if let Some(e) = gone {
        log.outcome = "failed";
        log.reason = format!("the controller went away during the job: {e}");
        return;
    }
    let report = match outcome {
        Ok(r) => match too_large(&r) {
            None => r,
            Some(why) => return refuse(ctl, s, log, ErrorCode::Internal, why, None),
        },
        Err(e) => {
            let (code, retry) = code_of(&e);
            let why = format!("job to {}:{}: {e}", job.target_host, job.target_port);
            s.reject(now(), code, why.clone(), retry);
            ctl.flush(s);
            log.outcome = "failed";
            log.reason = why;
            return;
        }
    };
    if let Some(f) = on_report {
        f(&report, &format!("{}:{}", job.target_host, job.target_port));
    }
    let report = JobReport {
        report,
        started_unix_ms: started,
    };
    s.job_done(now(), report);
    let until = Instant::now() + ctx.deadlines.done.as_duration();
    while Instant::now() < until && !s.is_over() {
        for ev in ctl.pump(s, Duration::from_millis(100)) {
            match ev {
                Event::Finished => {
                    log.outcome = "ok";
                    return;
                }
                Event::Failed(e) => {
                    log.outcome = "failed";
                    log.reason = format!("after the job's report: {e}");
                    return;
                }
                _ => {}
            }
        }
    }
    log.outcome = "ok";
}

/// Whether a report fits one control frame (about 8 KB for a 10 s test; a
/// long test with fine intervals over many flows may not): the words to fail
/// the job with when it does not.
fn too_large(report: &netsonde_model::result::TestReport) -> Option<String> {
    let len = serde_json::to_vec(report).map_or(usize::MAX, |v| v.len());
    let room = MAX_FRAME - 64 * 1024;
    (len > room).then(|| {
        format!(
            "the job's report is {len} bytes, more than one control frame carries ({room}): \
             ask for fewer intervals (-i) or a shorter test"
        )
    })
}
