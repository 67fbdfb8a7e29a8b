//! The executor: runs a [`Schedule`] through a [`Runner`] into a [`Sink`].
//!
//! A schedule says what to measure next and when a point is complete; it may
//! decide from the results so far. Two kinds drive the same executor
//! ([`drive`]): [`Repeated`], a plan's fixed interleaved order of repetitions (a
//! sweep), and the loss-free rate search
//! ([`SearchSchedule`](crate::search::SearchSchedule)), whose next rate depends on
//! the last trial.
//!
//! Every measurement goes to the sink as soon as it ends (the store commits it in
//! its own transaction), and a point's summary follows once the schedule says it is
//! complete. A resumed run hands the schedule what is already stored. The stop hook
//! is checked before each measurement, so Ctrl-C ends the run between measurements
//! and keeps everything completed.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Duration;

use netsonde_analysis::{estimate_all, point_quality};
use netsonde_model::result::TestReport;
use netsonde_model::search::SearchOutcome;
use netsonde_model::spec::TestSpec;
use netsonde_model::sweep::{Metric, Metrics, PointSummary};

use crate::plan::Point;

/// Why one measurement did not produce a report.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunError {
    /// The server is running another test; it said how long that has left.
    #[error("{message}")]
    Busy {
        /// The server's words.
        message: String,
        /// How long the server expects to stay busy.
        retry_after: Option<Duration>,
    },
    /// The server refused this point's configuration (a limit, a bad spec): other
    /// points may still run.
    #[error(transparent)]
    Refused(Cause),
    /// Anything else: unreachable, a broken connection, a failed flow, a link the
    /// lab could not build.
    #[error(transparent)]
    Failed(Cause),
    /// Not tried: a party of the point is already known to be down (a mesh's
    /// agent that stopped answering). It is stored as a failure, with why, and
    /// neither counts towards giving up nor proves anything answers: the other
    /// points, between healthy parties, are always measured.
    #[error(transparent)]
    Skipped(Cause),
}

impl RunError {
    /// A refusal, for the runner's own error.
    pub fn refused(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> RunError {
        RunError::Refused(Cause::new(e))
    }

    /// A failure, for the runner's own error.
    pub fn failed(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> RunError {
        RunError::Failed(Cause::new(e))
    }

    /// A point not tried, for the runner's own reason.
    pub fn skipped(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> RunError {
        RunError::Skipped(Cause::new(e))
    }
}

/// What a runner's measurement failed with: its own error, kept whole and
/// shared (a failure is both recorded and returned). It shows as one line, the
/// error and its causes, as the store keeps it; two are equal when they read
/// the same.
#[derive(Debug, Clone)]
pub struct Cause(std::sync::Arc<dyn std::error::Error + Send + Sync>);

impl Cause {
    /// Wraps any error (or words: `&str` and `String` convert).
    pub fn new(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Cause {
        Cause(std::sync::Arc::from(e.into()))
    }
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut line = self.0.to_string();
        let mut source = self.0.source();
        while let Some(e) = source {
            // Errors that print their cause in their own words show it once.
            let text = e.to_string();
            if !line.contains(&text) {
                line.push_str(": ");
                line.push_str(&text);
            }
            source = e.source();
        }
        f.write_str(&line.replace('\n', " "))
    }
}

impl std::error::Error for Cause {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

impl PartialEq for Cause {
    fn eq(&self, other: &Cause) -> bool {
        self.to_string() == other.to_string()
    }
}

/// Runs one measurement.
pub trait Runner {
    /// Runs `spec` once.
    fn run(&mut self, spec: &TestSpec) -> Result<TestReport, RunError>;

    /// Readies the path for a repetition of `point` (in the lab: the point's link
    /// axes); an error fails the attempt. Called before every repetition; nothing
    /// by default.
    fn prepare(&mut self, point: &Point) -> Result<(), RunError> {
        let _ = point;
        Ok(())
    }
}

/// The sink could not keep a result: whatever it says, as its own error.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct SinkError(pub Box<dyn std::error::Error + Send + Sync>);

impl SinkError {
    /// Wraps any error.
    pub fn new(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> SinkError {
        SinkError(e.into())
    }
}

/// Where results go. Nothing here ever deletes a recorded repetition.
pub trait Sink {
    /// One repetition finished.
    fn rep_done(
        &mut self,
        point: &Point,
        rep: u32,
        report: &TestReport,
        metrics: &Metrics,
    ) -> Result<(), SinkError>;
    /// A point is complete: all its repetitions, or its search's end.
    fn point_done(&mut self, point: &Point, summary: &Summary) -> Result<(), SinkError>;
    /// An attempt at repetition `rep` failed (after any retries); the point keeps
    /// what it has and stays pending.
    fn rep_failed(&mut self, point: &Point, rep: u32, error: &RunError) -> Result<(), SinkError>;
}

/// Progress reports.
pub trait Progress {
    /// A repetition is about to run.
    fn begin(&mut self, point: &Point, rep: u32);
    /// It ended with `outcome` (a short figure or an error).
    fn end(&mut self, point: &Point, rep: u32, outcome: &str);
    /// The server was busy: the repetition is tried again after `wait`.
    fn retry(&mut self, point: &Point, rep: u32, wait: Duration, why: &str) {
        let _ = (point, rep, wait, why);
    }
}

/// Does nothing: for tests and quiet runs.
#[derive(Debug, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn begin(&mut self, _: &Point, _: u32) {}
    fn end(&mut self, _: &Point, _: u32, _: &str) {}
}

/// How the executor meets failures.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Attempts at one repetition while the server answers busy (the first
    /// included).
    pub busy_tries: u32,
    /// The wait between them: the server's stated wait, clamped to this range
    /// (a server that names no wait gets the lower bound doubled).
    pub busy_wait: (Duration, Duration),
    /// Attempts at one repetition that fails for a reason that is not its
    /// setup's (a flow that failed, a test cut short: a host doing other work
    /// can do that to a healthy pair), the first included; each failed one is
    /// stored and said. A point's setup (a lab's link, a refusal, a party known
    /// down) is not tried again.
    pub failed_tries: u32,
    /// The run ends after this many failed attempts in a row (busy after its
    /// retries, or failed; a refused configuration is the point's own, and proves
    /// the server answers, so it starts the count again): a server that is gone fails every point, and trying each of them
    /// would only fill the store with the same failure.
    pub max_consecutive_failures: u32,
}

impl Default for RetryPolicy {
    fn default() -> RetryPolicy {
        RetryPolicy {
            busy_tries: 6,
            busy_wait: (Duration::from_millis(250), Duration::from_secs(60)),
            failed_tries: 3,
            max_consecutive_failures: 3,
        }
    }
}

impl RetryPolicy {
    /// How long to wait after a busy answer that named `stated`.
    pub fn busy_wait(&self, stated: Option<Duration>) -> Duration {
        let (lo, hi) = self.busy_wait;
        stated.unwrap_or(lo * 2).clamp(lo, hi)
    }
}

/// Summarises repetitions of `spec`: every metric's estimate and the quality
/// warnings.
pub fn summarize(spec: &TestSpec, reps: &[Metrics]) -> PointSummary {
    PointSummary {
        reps: reps.len(),
        estimates: estimate_all(reps),
        quality: point_quality(reps, spec.window.map(|w| w.0)),
    }
}

/// What a complete point's summary is.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(untagged)]
pub enum Summary {
    /// Estimates over a fixed number of repetitions (a sweep's point).
    Repeated(PointSummary),
    /// A loss-free rate search's bounds and trials.
    Search(SearchOutcome),
}

/// What a schedule wants next.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Measure `spec` as repetition (or trial) `rep` of point `idx`.
    Measure {
        /// The point.
        idx: u32,
        /// Its repetition or trial number, from 0.
        rep: u32,
        /// What to run instead of the point's own spec: one the schedule derived
        /// from it (a search's rate).
        spec: Option<TestSpec>,
    },
    /// Point `idx` is complete.
    Complete {
        /// The point.
        idx: u32,
        /// Its summary.
        summary: Summary,
    },
    /// Nothing is left to do.
    Done,
}

/// Says what to measure next, from what has been measured: sans-IO, so a test
/// drives it with a scripted runner and a resume hands it the stored results.
pub trait Schedule {
    /// The next step. `points` are the run's points, by index.
    fn next(&mut self, points: &[Point]) -> Step;
    /// The measurement `next` asked for at (`idx`, `rep`) produced `report`. An
    /// error is a report the schedule cannot use: the point stops, pending.
    fn record(&mut self, idx: u32, rep: u32, report: &TestReport) -> Result<(), RunError>;
    /// The measurement at `idx` failed: the point stops, pending, for a resume.
    fn failed(&mut self, idx: u32);
    /// A measurement's headline for progress lines.
    fn headline(&self, report: &TestReport) -> String {
        headline(&Metrics::from_report(report))
    }
    /// Measurements left, as far as the schedule can tell (for progress bars).
    fn remaining(&self) -> usize;
    /// Seconds of measuring left, as far as the schedule can tell (for the
    /// estimate a user sees before a run starts).
    fn remaining_secs(&self, points: &[Point]) -> f64;
}

/// Seconds one measurement of `spec` takes: its warm-up, its measured time and
/// its probes' idle phases before and after the load.
pub fn measuring_secs(spec: &TestSpec) -> f64 {
    let idle = spec.probe.map_or(0.0, |p| 2.0 * p.idle.as_secs_f64());
    spec.warmup.as_secs_f64() + spec.duration.as_secs_f64() + idle
}

/// A plan's fixed order: every point measured `repeat` times, in an order
/// computed in advance (interleaved rounds), each summarized after its last
/// repetition.
#[derive(Debug)]
pub struct Repeated {
    repeat: u32,
    order: VecDeque<(u32, u32)>,
    prior: BTreeMap<u32, Vec<Metrics>>,
    failed: BTreeSet<u32>,
    complete: VecDeque<u32>,
}

impl Repeated {
    /// Runs `order` (pairs of point index and repetition). `prior` holds the
    /// metrics of repetitions already recorded (a resumed run).
    pub fn new(repeat: u32, order: Vec<(u32, u32)>, prior: BTreeMap<u32, Vec<Metrics>>) -> Self {
        // A run killed between a point's last repetition and its summary left the
        // point with every repetition stored and no summary: nothing is left to
        // measure, so it is summarized first.
        let complete = prior
            .iter()
            .filter(|(idx, reps)| {
                reps.len() >= repeat as usize && !order.iter().any(|(i, _)| i == *idx)
            })
            .map(|(&idx, _)| idx)
            .collect();
        Repeated {
            repeat,
            order: order.into(),
            prior,
            failed: BTreeSet::new(),
            complete,
        }
    }
}

impl Schedule for Repeated {
    fn next(&mut self, points: &[Point]) -> Step {
        if let Some(idx) = self.complete.pop_front() {
            let reps = self.prior.get(&idx).map(Vec::as_slice).unwrap_or(&[]);
            let Some(point) = points.get(idx as usize) else {
                // Asked for, the executor reports the missing point.
                return Step::Measure {
                    idx,
                    rep: 0,
                    spec: None,
                };
            };
            let summary = summarize(&point.spec, reps);
            return Step::Complete {
                idx,
                summary: Summary::Repeated(summary),
            };
        }
        while let Some((idx, rep)) = self.order.pop_front() {
            if self.failed.contains(&idx) {
                continue;
            }
            return Step::Measure {
                idx,
                rep,
                spec: None,
            };
        }
        Step::Done
    }

    fn record(&mut self, idx: u32, _: u32, report: &TestReport) -> Result<(), RunError> {
        let reps = self.prior.entry(idx).or_default();
        reps.push(Metrics::from_report(report));
        if reps.len() == self.repeat as usize {
            self.complete.push_back(idx);
        }
        Ok(())
    }

    fn failed(&mut self, idx: u32) {
        self.failed.insert(idx);
    }

    fn remaining(&self) -> usize {
        self.order
            .iter()
            .filter(|(i, _)| !self.failed.contains(i))
            .count()
    }

    fn remaining_secs(&self, points: &[Point]) -> f64 {
        self.order
            .iter()
            .filter(|(i, _)| !self.failed.contains(i))
            .filter_map(|(i, _)| points.get(*i as usize))
            .map(|p| measuring_secs(&p.spec))
            .sum()
    }
}

/// One failed attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// The point.
    pub idx: u32,
    /// The repetition.
    pub rep: u32,
    /// Why.
    pub error: RunError,
}

/// How a run ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// Repetitions measured by this call.
    pub reps: usize,
    /// Failed attempts (after retries), in order.
    pub failures: Vec<Failure>,
    /// Failed attempts that were tried again (stored as failures too), in order.
    pub retried: Vec<Failure>,
    /// Whether the stop hook ended it early.
    pub interrupted: bool,
    /// Set when the run gave up after too many failures in a row: why.
    pub gave_up: Option<String>,
}

/// Why a run could not go on.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The sink (the store) failed: nothing more can be kept.
    #[error("cannot record results")]
    Sink(#[source] SinkError),
    /// The order names a point the plan lacks.
    #[error("run order names point {0}, which the plan does not have")]
    NoSuchPoint(u32),
}

/// What the executor works through: a runner, a sink, progress, a stop hook and a
/// clock to wait on.
pub struct Hooks<'a> {
    /// Runs measurements.
    pub runner: &'a mut dyn Runner,
    /// Keeps results.
    pub sink: &'a mut dyn Sink,
    /// Shows progress.
    pub progress: &'a mut dyn Progress,
    /// Asked before each repetition; true ends the run.
    pub stop: &'a dyn Fn() -> bool,
    /// Waits this long before a retry; returns false if the run should stop
    /// instead (the caller owns the clock, so tests wait in virtual time).
    pub wait: &'a dyn Fn(Duration) -> bool,
}

impl std::fmt::Debug for Hooks<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Hooks")
    }
}

/// A repetition's headline figure for progress lines.
fn headline(metrics: &Metrics) -> String {
    metrics
        .value(Metric::Goodput)
        .map(|g| Metric::Goodput.format(g))
        .or_else(|| {
            metrics
                .value(Metric::LatencyP50)
                .map(|l| format!("p50 {}", Metric::LatencyP50.format(l)))
        })
        .unwrap_or_default()
}

/// Runs `order` (pairs of point index and repetition) with [`drive`] and a
/// [`Repeated`] schedule. `prior` holds the metrics of repetitions already recorded
/// (a resumed run).
pub fn execute(
    points: &[Point],
    repeat: u32,
    order: &[(u32, u32)],
    prior: BTreeMap<u32, Vec<Metrics>>,
    policy: &RetryPolicy,
    hooks: Hooks<'_>,
) -> Result<Outcome, ExecError> {
    let mut schedule = Repeated::new(repeat, order.to_vec(), prior);
    drive(points, &mut schedule, policy, hooks)
}

/// What the executor keeps while it settles measurements, for [`drive`] and
/// the rounds of `rounds::drive_rounds` alike: the sink, progress, the failures in a
/// row and the outcome so far.
pub(crate) struct Settle<'a> {
    sink: &'a mut dyn Sink,
    progress: &'a mut dyn Progress,
    policy: &'a RetryPolicy,
    in_a_row: u32,
    /// Points that failed in this call (their held steps are not run).
    pub(crate) failed: BTreeSet<u32>,
    /// The outcome so far.
    pub(crate) out: Outcome,
}

impl<'a> Settle<'a> {
    pub(crate) fn new(
        sink: &'a mut dyn Sink,
        progress: &'a mut dyn Progress,
        policy: &'a RetryPolicy,
    ) -> Settle<'a> {
        Settle {
            sink,
            progress,
            policy,
            in_a_row: 0,
            failed: BTreeSet::new(),
            out: Outcome::default(),
        }
    }

    /// A complete point's summary, to the sink.
    pub(crate) fn complete(&mut self, point: &Point, summary: &Summary) -> Result<(), ExecError> {
        self.sink
            .point_done(point, summary)
            .map_err(ExecError::Sink)
    }

    /// A repetition is about to run.
    pub(crate) fn begin(&mut self, point: &Point, rep: u32) {
        self.progress.begin(point, rep);
    }

    /// Whether a failed attempt, the `failed`th at this repetition, is tried
    /// again: one that is not the setup's, within the policy's tries. If so it
    /// is stored and said first.
    pub(crate) fn again(
        &mut self,
        point: &Point,
        rep: u32,
        failed: u32,
        result: &Result<TestReport, RunError>,
    ) -> Result<bool, ExecError> {
        let Err(error @ RunError::Failed(_)) = result else {
            return Ok(false);
        };
        if failed >= self.policy.failed_tries {
            return Ok(false);
        }
        self.sink
            .rep_failed(point, rep, error)
            .map_err(ExecError::Sink)?;
        let why = format!(
            "{error} (try {failed} of {}, not the setup's)",
            self.policy.failed_tries
        );
        self.progress.retry(point, rep, Duration::ZERO, &why);
        self.out.retried.push(Failure {
            idx: point.idx,
            rep,
            error: error.clone(),
        });
        Ok(true)
    }

    /// One measurement's result, after `tries` attempts: a report is stored
    /// before the schedule judges it (a measurement is never lost to a schedule
    /// that cannot use it); an error is a failed attempt, the point left pending.
    /// Returns false when the run gives up (too many failures in a row).
    pub(crate) fn settle(
        &mut self,
        schedule: &mut dyn Schedule,
        point: &Point,
        rep: u32,
        tries: u32,
        result: Result<TestReport, RunError>,
    ) -> Result<bool, ExecError> {
        let idx = point.idx;
        let error = match result {
            Ok(report) => {
                let metrics = Metrics::from_report(&report);
                self.sink
                    .rep_done(point, rep, &report, &metrics)
                    .map_err(ExecError::Sink)?;
                self.out.reps += 1;
                match schedule.record(idx, rep, &report) {
                    Ok(()) => {
                        self.in_a_row = 0;
                        self.progress.end(point, rep, &schedule.headline(&report));
                        return Ok(true);
                    }
                    Err(e) => e,
                }
            }
            Err(e) => e,
        };
        let tried = if tries > 1 {
            format!(" (after {tries} tries)")
        } else {
            String::new()
        };
        self.progress
            .end(point, rep, &format!("failed{tried}: {error}"));
        self.sink
            .rep_failed(point, rep, &error)
            .map_err(ExecError::Sink)?;
        schedule.failed(idx);
        self.failed.insert(idx);
        // A refusal is the point's own, and proves the server answers; a point
        // skipped for a party known down proves nothing either way.
        self.in_a_row = match error {
            RunError::Refused(_) => 0,
            RunError::Skipped(_) => self.in_a_row,
            _ => self.in_a_row + 1,
        };
        self.out.failures.push(Failure { idx, rep, error });
        if self.in_a_row >= self.policy.max_consecutive_failures {
            self.out.gave_up = Some(format!(
                "{} measurements in a row failed, the last: {}",
                self.in_a_row,
                self.out
                    .failures
                    .last()
                    .map(|f| f.error.to_string())
                    .unwrap_or_default()
            ));
            return Ok(false);
        }
        Ok(true)
    }
}

/// Runs `schedule` until it is done, stopped, or gives up.
///
/// A busy server is waited for as it asks, up to the policy's tries; any other
/// failure is handed to the sink as a failed attempt, and the point is left
/// pending for a resume. Nothing recorded is ever taken back.
pub fn drive(
    points: &[Point],
    schedule: &mut dyn Schedule,
    policy: &RetryPolicy,
    hooks: Hooks<'_>,
) -> Result<Outcome, ExecError> {
    let Hooks {
        runner,
        sink,
        progress,
        stop,
        wait,
    } = hooks;
    let mut settle = Settle::new(sink, progress, policy);
    let point_at = |idx: u32| points.get(idx as usize).ok_or(ExecError::NoSuchPoint(idx));
    'steps: loop {
        let (idx, rep, spec) = match schedule.next(points) {
            Step::Done => break,
            Step::Complete { idx, summary } => {
                settle.complete(point_at(idx)?, &summary)?;
                continue;
            }
            Step::Measure { idx, rep, spec } => (idx, rep, spec),
        };
        if stop() {
            settle.out.interrupted = true;
            break;
        }
        let point = point_at(idx)?;
        let spec = spec.as_ref().unwrap_or(&point.spec);
        settle.begin(point, rep);
        let (mut tries, mut failed) = (0, 0);
        let result = loop {
            tries += 1;
            // A point's setup that fails is not tried again; its measurement may be.
            let measured = match runner.prepare(point) {
                Ok(()) => runner.run(spec),
                Err(e) => break Err(e),
            };
            match measured {
                Err(RunError::Busy {
                    message,
                    retry_after,
                }) if tries < policy.busy_tries => {
                    let pause = policy.busy_wait(retry_after);
                    settle.progress.retry(point, rep, pause, &message);
                    if !wait(pause) {
                        settle.out.interrupted = true;
                        settle
                            .progress
                            .end(point, rep, "stopped while waiting for a busy server");
                        break 'steps;
                    }
                }
                r => {
                    failed += u32::from(r.is_err());
                    // Not tried again once a stop is asked for: the failure
                    // is kept, and the run ends at the next step.
                    if (r.is_err() && stop()) || !settle.again(point, rep, failed, &r)? {
                        break r;
                    }
                }
            }
        };
        if !settle.settle(schedule, point, rep, tries, result)? {
            break;
        }
    }
    Ok(settle.out)
}

#[cfg(test)]
#[path = "exec_tests.rs"]
mod tests;
