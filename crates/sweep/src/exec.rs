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
    let mut out = Outcome::default();
    let point_at = |idx: u32| points.get(idx as usize).ok_or(ExecError::NoSuchPoint(idx));
    let mut in_a_row = 0u32;
    'steps: loop {
        let (idx, rep, spec) = match schedule.next(points) {
            Step::Done => break,
            Step::Complete { idx, summary } => {
                sink.point_done(point_at(idx)?, &summary)
                    .map_err(ExecError::Sink)?;
                continue;
            }
            Step::Measure { idx, rep, spec } => (idx, rep, spec),
        };
        if stop() {
            out.interrupted = true;
            break;
        }
        let point = point_at(idx)?;
        let spec = spec.as_ref().unwrap_or(&point.spec);
        progress.begin(point, rep);
        let mut tries = 0;
        let result = loop {
            tries += 1;
            match runner.prepare(point).and_then(|()| runner.run(spec)) {
                Err(RunError::Busy {
                    message,
                    retry_after,
                }) if tries < policy.busy_tries => {
                    let pause = policy.busy_wait(retry_after);
                    progress.retry(point, rep, pause, &message);
                    if !wait(pause) {
                        out.interrupted = true;
                        progress.end(point, rep, "stopped while waiting for a busy server");
                        break 'steps;
                    }
                }
                r => break r,
            }
        };
        // A report is stored before the schedule judges it: a measurement is
        // never lost to a schedule that cannot use it.
        let error = match result {
            Ok(report) => {
                let metrics = Metrics::from_report(&report);
                sink.rep_done(point, rep, &report, &metrics)
                    .map_err(ExecError::Sink)?;
                out.reps += 1;
                match schedule.record(idx, rep, &report) {
                    Ok(()) => {
                        in_a_row = 0;
                        progress.end(point, rep, &schedule.headline(&report));
                        continue;
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
        progress.end(point, rep, &format!("failed{tried}: {error}"));
        sink.rep_failed(point, rep, &error)
            .map_err(ExecError::Sink)?;
        schedule.failed(idx);
        // A refusal is the point's own, and proves the server answers.
        in_a_row = match error {
            RunError::Refused(_) => 0,
            _ => in_a_row + 1,
        };
        out.failures.push(Failure { idx, rep, error });
        if in_a_row >= policy.max_consecutive_failures {
            out.gave_up = Some(format!(
                "{in_a_row} measurements in a row failed, the last: {}",
                out.failures
                    .last()
                    .map(|f| f.error.to_string())
                    .unwrap_or_default()
            ));
            break;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::collections::VecDeque;

    use super::*;
    use crate::fake::FakeRunner;
    use crate::Plan;

    /// The fake engine, with a `prepare` that records link keys and refuses one,
    /// and a script of errors handed out before the fake measures.
    struct Scripted {
        fake: FakeRunner,
        links: Vec<String>,
        script: VecDeque<Option<RunError>>,
    }

    impl Scripted {
        fn new(script: Vec<Option<RunError>>) -> Scripted {
            Scripted {
                fake: FakeRunner::new(1),
                links: Vec::new(),
                script: script.into(),
            }
        }
    }

    impl Runner for Scripted {
        fn run(&mut self, spec: &TestSpec) -> Result<TestReport, RunError> {
            match self.script.pop_front().flatten() {
                Some(e) => Err(e),
                None => self.fake.run(spec),
            }
        }
        fn prepare(&mut self, point: &Point) -> Result<(), RunError> {
            let key = crate::plan::link_key(&point.axes);
            if key.contains("mtu=9000") {
                return Err(RunError::failed("no 9000 here"));
            }
            self.links.push(key);
            Ok(())
        }
    }

    /// Repetitions, failures and summaries, by point index.
    #[derive(Default)]
    struct Keep(Vec<u32>, Vec<(u32, u32)>, Vec<u32>);

    impl Sink for Keep {
        fn rep_done(
            &mut self,
            p: &Point,
            _: u32,
            _: &TestReport,
            _: &Metrics,
        ) -> Result<(), SinkError> {
            self.0.push(p.idx);
            Ok(())
        }
        fn point_done(&mut self, p: &Point, _: &Summary) -> Result<(), SinkError> {
            self.2.push(p.idx);
            Ok(())
        }
        fn rep_failed(&mut self, p: &Point, rep: u32, _: &RunError) -> Result<(), SinkError> {
            self.1.push((p.idx, rep));
            Ok(())
        }
    }

    fn plan(sizes: &[u64], repeat: u32) -> (Vec<Point>, Vec<(u32, u32)>) {
        let mut plan = Plan::default_characterization();
        plan.tests = vec![netsonde_model::spec::TestKind::TcpStream];
        plan.directions = vec![netsonde_model::spec::Direction::Out];
        plan.sizes = sizes
            .iter()
            .map(|&b| netsonde_model::units::Bytes(b))
            .collect();
        plan.repeat = repeat;
        let (points, _) = plan.points();
        let order = plan.order(points.len());
        (points, order)
    }

    fn busy(ms: u64) -> Option<RunError> {
        Some(RunError::Busy {
            message: "server busy".into(),
            retry_after: Some(Duration::from_millis(ms)),
        })
    }

    /// Runs with a virtual clock; returns the outcome, the sink and the waits.
    fn run(
        points: &[Point],
        repeat: u32,
        order: &[(u32, u32)],
        runner: &mut dyn Runner,
        policy: &RetryPolicy,
    ) -> (Outcome, Keep, Vec<Duration>) {
        let waits = RefCell::new(Vec::new());
        let mut sink = Keep::default();
        let out = execute(
            points,
            repeat,
            order,
            BTreeMap::new(),
            policy,
            Hooks {
                runner,
                sink: &mut sink,
                progress: &mut NoProgress,
                stop: &|| false,
                wait: &|d| {
                    waits.borrow_mut().push(d);
                    true
                },
            },
        )
        .unwrap();
        (out, sink, waits.into_inner())
    }

    #[test]
    fn prepare_runs_before_each_repetition_and_its_error_fails_the_point() {
        let mut plan = Plan::default_characterization();
        plan.tests = vec![netsonde_model::spec::TestKind::TcpStream];
        plan.directions = vec![netsonde_model::spec::Direction::Out];
        plan.sizes = vec![netsonde_model::units::Bytes(1024)];
        plan.link_axes.mtu = vec![1500, 9000];
        plan.repeat = 2;
        let (points, _) = plan.points();
        let order = plan.order(points.len());
        let mut lab = Scripted::new(vec![]);
        let (out, sink, _) = run(&points, 2, &order, &mut lab, &RetryPolicy::default());
        assert_eq!(out.reps, 2);
        assert_eq!(lab.links, vec!["mtu=1500", "mtu=1500"]);
        assert_eq!(out.failures.len(), 1);
        assert!(out.failures[0].error.to_string().contains("no 9000"));
        assert_eq!(sink.1.len(), 1, "the failed attempt reaches the sink");
    }

    /// A busy server is waited for as long as it says (within the policy's
    /// bounds), and the repetition is measured once it is free.
    #[test]
    fn a_busy_server_is_waited_for_as_it_asks_then_measured() {
        let (points, order) = plan(&[1024], 1);
        let mut r = Scripted::new(vec![busy(1500), busy(10), busy(600_000)]);
        let (out, sink, waits) = run(&points, 1, &order, &mut r, &RetryPolicy::default());
        assert_eq!(out.reps, 1);
        assert!(out.failures.is_empty());
        assert_eq!(sink.0, vec![0]);
        assert_eq!(sink.2, vec![0]);
        assert_eq!(
            waits,
            vec![
                Duration::from_millis(1500),
                Duration::from_millis(250),
                Duration::from_secs(60)
            ]
        );
    }

    /// Busy past the policy's tries is a failed attempt: stored as such, the
    /// point stays pending, the rest of the run goes on.
    #[test]
    fn busy_past_its_tries_fails_the_attempt_only() {
        let (points, order) = plan(&[1024, 4096], 2);
        let policy = RetryPolicy {
            busy_tries: 2,
            ..RetryPolicy::default()
        };
        let mut r = Scripted::new(vec![busy(100), busy(100)]);
        let (out, sink, waits) = run(&points, 2, &order, &mut r, &policy);
        assert_eq!(waits.len(), 1);
        assert_eq!(out.failures.len(), 1);
        let f = &out.failures[0];
        assert!(matches!(f.error, RunError::Busy { .. }));
        assert_eq!(sink.1, vec![(f.idx, f.rep)]);
        // The other point gets both repetitions; the failed one keeps its second
        // for a resume (its first round was the failure).
        let other = 1 - f.idx;
        assert_eq!(sink.2, vec![other]);
        assert_eq!(out.reps, 2);
    }

    /// A failure after some repetitions keeps them: the sink never hears of a
    /// deletion, only of the failed attempt.
    #[test]
    fn a_failure_in_round_two_keeps_round_one() {
        let (points, order) = plan(&[1024], 3);
        let mut r = Scripted::new(vec![None, Some(RunError::failed("connection refused"))]);
        let (out, sink, _) = run(&points, 3, &order, &mut r, &RetryPolicy::default());
        assert_eq!(sink.0, vec![0], "round one is kept");
        assert_eq!(sink.1, vec![(0, 1)]);
        assert!(sink.2.is_empty(), "not summarized: it lacks repetitions");
        assert_eq!(out.reps, 1);
    }

    /// A server that is gone fails every point: the run gives up after the
    /// policy's count, and a refused configuration does not count toward it.
    #[test]
    fn the_run_gives_up_after_failures_in_a_row_but_not_after_refusals() {
        let (points, order) = plan(&[64, 256, 1024, 4096, 16384], 1);
        let gone = || Some(RunError::failed("connection refused"));
        let refused = || Some(RunError::refused("server limit"));
        let mut r = Scripted::new(vec![refused(), gone(), refused(), gone(), gone()]);
        let (out, sink, _) = run(&points, 1, &order, &mut r, &RetryPolicy::default());
        assert_eq!(out.failures.len(), 5);
        assert!(out.gave_up.is_none(), "refusals are the points' own");
        let mut r = Scripted::new(vec![None, gone(), gone(), gone(), None]);
        let (out, _, _) = run(&points, 1, &order, &mut r, &RetryPolicy::default());
        assert_eq!(out.reps, 1);
        assert_eq!(out.failures.len(), 3);
        assert!(out.gave_up.unwrap().contains("3 measurements in a row"));
        drop(sink);
    }

    /// A stop asked for during a busy wait ends the run there.
    #[test]
    fn a_stop_during_a_busy_wait_interrupts() {
        let (points, order) = plan(&[1024], 1);
        let mut r = Scripted::new(vec![busy(1000)]);
        let mut sink = Keep::default();
        let out = execute(
            &points,
            1,
            &order,
            BTreeMap::new(),
            &RetryPolicy::default(),
            Hooks {
                runner: &mut r,
                sink: &mut sink,
                progress: &mut NoProgress,
                stop: &|| false,
                wait: &|_| false,
            },
        )
        .unwrap();
        assert!(out.interrupted);
        assert!(out.failures.is_empty() && sink.0.is_empty() && sink.1.is_empty());
    }

    /// A resumed run whose point has every repetition stored but no summary (the
    /// process died between the two writes) summarizes it without measuring again.
    #[test]
    fn a_point_with_all_its_repetitions_but_no_summary_is_summarized_on_resume() {
        let (points, _) = plan(&[1024, 4096], 2);
        let mut fake = FakeRunner::new(1);
        let metrics = |f: &mut FakeRunner| Metrics::from_report(&f.run(&points[0].spec).unwrap());
        // Point 0: both repetitions stored; point 1: one of two.
        let prior = BTreeMap::from([
            (0, vec![metrics(&mut fake), metrics(&mut fake)]),
            (1, vec![metrics(&mut fake)]),
        ]);
        let order = vec![(1, 1)];
        let mut sink = Keep::default();
        let out = execute(
            &points,
            2,
            &order,
            prior,
            &RetryPolicy::default(),
            Hooks {
                runner: &mut fake,
                sink: &mut sink,
                progress: &mut NoProgress,
                stop: &|| false,
                wait: &|_| true,
            },
        )
        .unwrap();
        assert_eq!(out.reps, 1);
        assert_eq!(sink.0, vec![1], "only point 1 is measured");
        assert_eq!(sink.2, vec![0, 1], "both points are summarized");
    }
}
