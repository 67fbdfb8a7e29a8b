//! The executor's tests: scripted runners, busy servers, failures and resumes.

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
    let once = RetryPolicy {
        failed_tries: 1,
        ..RetryPolicy::default()
    };
    let (out, sink, _) = run(&points, 3, &order, &mut r, &once);
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
    let once = RetryPolicy {
        failed_tries: 1,
        ..RetryPolicy::default()
    };
    let mut r = Scripted::new(vec![refused(), gone(), refused(), gone(), gone()]);
    let (out, sink, _) = run(&points, 1, &order, &mut r, &once);
    assert_eq!(out.failures.len(), 5);
    assert!(out.gave_up.is_none(), "refusals are the points' own");
    let mut r = Scripted::new(vec![None, gone(), gone(), gone(), None]);
    let (out, _, _) = run(&points, 1, &order, &mut r, &once);
    assert_eq!(out.reps, 1);
    assert_eq!(out.failures.len(), 3);
    assert!(out.gave_up.unwrap().contains("3 measurements in a row"));
    drop(sink);
}

/// A measurement that fails for a reason not its setup's (a test cut short
/// on a busy host) is tried again, at most twice: each failed try is stored
/// and said, and the repetition is measured when a try succeeds.
#[test]
fn a_failed_measurement_is_tried_again_at_most_twice() {
    let (points, order) = plan(&[1024, 4096], 1);
    let cut = || Some(RunError::failed("incomplete test: cut short"));
    let mut r = Scripted::new(vec![cut(), cut(), None, None]);
    let (out, sink, _) = run(&points, 1, &order, &mut r, &RetryPolicy::default());
    assert_eq!(out.reps, 2, "both points measured");
    assert!(out.failures.is_empty());
    assert_eq!(out.retried.len(), 2);
    assert_eq!(sink.1.len(), 2, "each failed try is stored");
    // A third failure is the repetition's: stored, the point left pending.
    let mut r = Scripted::new(vec![cut(), cut(), cut(), None]);
    let (out, sink, _) = run(&points, 1, &order, &mut r, &RetryPolicy::default());
    assert_eq!(out.reps, 1);
    assert_eq!(out.failures.len(), 1);
    assert_eq!(out.retried.len(), 2);
    assert_eq!(sink.1.len(), 3);
    // A refusal is the point's own: not tried again.
    let mut r = Scripted::new(vec![Some(RunError::refused("limit")), None]);
    let (out, _, _) = run(&points, 1, &order, &mut r, &RetryPolicy::default());
    assert!(out.retried.is_empty());
    assert_eq!(out.failures.len(), 1);
}

/// A stop asked for while a measurement fails: it is not tried again (a
/// Ctrl-C would otherwise start more tests), its failure is kept.
#[test]
fn a_failed_measurement_is_not_tried_again_after_a_stop() {
    let (points, order) = plan(&[1024], 1);
    let mut r = Scripted::new(vec![Some(RunError::failed("cut short")), None]);
    let mut sink = Keep::default();
    let asked = std::cell::Cell::new(0);
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
            // Free before the step, stopped once the measurement failed.
            stop: &|| {
                asked.set(asked.get() + 1);
                asked.get() > 1
            },
            wait: &|_| true,
        },
    )
    .unwrap();
    assert!(out.retried.is_empty());
    assert_eq!(out.failures.len(), 1);
    assert_eq!(sink.1.len(), 1);
    assert_eq!(out.reps, 0);
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
