//! The executor: runs a plan's order through a [`Runner`] into a [`Sink`].
//!
//! Every repetition goes to the sink as soon as it ends (the store commits it in its
//! own transaction), and a point's summary follows its last repetition. A resumed run
//! passes the repetitions already stored in `prior` and an order without them. The
//! stop hook is checked before each repetition, so Ctrl-C ends the run between
//! measurements and keeps everything completed.

use std::collections::BTreeMap;

use netsonde_analysis::{estimate_all, point_quality};
use netsonde_model::result::TestReport;
use netsonde_model::spec::TestSpec;
use netsonde_model::sweep::{Metrics, PointSummary};

use crate::plan::Point;

/// Runs one measurement.
pub trait Runner {
    /// Runs `spec` once; an error is one line saying why.
    fn run(&mut self, spec: &TestSpec) -> Result<TestReport, String>;

    /// Readies the path for a repetition of `point` (in the lab: the point's link
    /// axes); an error fails the point. Called before every repetition; nothing by
    /// default.
    fn prepare(&mut self, point: &Point) -> Result<(), String> {
        let _ = point;
        Ok(())
    }
}

/// Where results go.
pub trait Sink {
    /// One repetition finished.
    fn rep_done(
        &mut self,
        point: &Point,
        rep: u32,
        report: &TestReport,
        metrics: &Metrics,
    ) -> Result<(), String>;
    /// A point has all its repetitions.
    fn point_done(&mut self, point: &Point, summary: &PointSummary) -> Result<(), String>;
    /// A point could not be measured; its remaining repetitions are skipped.
    fn point_failed(&mut self, point: &Point, reason: &str) -> Result<(), String>;
}

/// Progress reports.
pub trait Progress {
    /// A repetition is about to run.
    fn begin(&mut self, point: &Point, rep: u32);
    /// It ended with `outcome` (a short figure or an error).
    fn end(&mut self, point: &Point, rep: u32, outcome: &str);
}

/// Does nothing: for tests and quiet runs.
#[derive(Debug, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn begin(&mut self, _: &Point, _: u32) {}
    fn end(&mut self, _: &Point, _: u32, _: &str) {}
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

/// How a run ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// Repetitions measured by this call.
    pub reps: usize,
    /// Points that failed.
    pub failed: Vec<(u32, String)>,
    /// Whether the stop hook ended it early.
    pub interrupted: bool,
}

/// Why a run could not go on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExecError {
    /// The sink (the store) failed: nothing more can be kept.
    #[error("cannot record results: {0}")]
    Sink(String),
    /// The order names a point the plan lacks.
    #[error("run order names point {0}, which the plan does not have")]
    NoSuchPoint(u32),
}

/// What the executor works through: a runner, a sink, progress and a stop hook.
pub struct Hooks<'a> {
    /// Runs measurements.
    pub runner: &'a mut dyn Runner,
    /// Keeps results.
    pub sink: &'a mut dyn Sink,
    /// Shows progress.
    pub progress: &'a mut dyn Progress,
    /// Asked before each repetition; true ends the run.
    pub stop: &'a dyn Fn() -> bool,
}

impl std::fmt::Debug for Hooks<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Hooks")
    }
}

/// Runs `order` (pairs of point index and repetition). `prior` holds the metrics of
/// repetitions already recorded (a resumed run).
pub fn execute(
    points: &[Point],
    repeat: u32,
    order: &[(u32, u32)],
    mut prior: BTreeMap<u32, Vec<Metrics>>,
    hooks: Hooks<'_>,
) -> Result<Outcome, ExecError> {
    let Hooks {
        runner,
        sink,
        progress,
        stop,
    } = hooks;
    let mut out = Outcome::default();
    // A run killed between a point's last repetition and its summary left the point
    // with every repetition stored and no summary: nothing is left to measure, so
    // summarize it now.
    for (&idx, reps) in &prior {
        if reps.len() >= repeat as usize && !order.iter().any(|&(i, _)| i == idx) {
            let point = points
                .get(idx as usize)
                .ok_or(ExecError::NoSuchPoint(idx))?;
            let summary = summarize(&point.spec, reps);
            sink.point_done(point, &summary).map_err(ExecError::Sink)?;
        }
    }
    let mut failed: BTreeMap<u32, ()> = BTreeMap::new();
    for &(idx, rep) in order {
        if stop() {
            out.interrupted = true;
            break;
        }
        if failed.contains_key(&idx) {
            continue;
        }
        let point = points
            .get(idx as usize)
            .ok_or(ExecError::NoSuchPoint(idx))?;
        progress.begin(point, rep);
        match runner.prepare(point).and_then(|()| runner.run(&point.spec)) {
            Ok(report) => {
                let metrics = Metrics::from_report(&report);
                let fig = metrics
                    .get("goodput")
                    .map(|g| format!("{}", netsonde_model::units::BitRate(g)))
                    .or_else(|| {
                        metrics
                            .get("latency_p50")
                            .map(|l| format!("p50 {}", netsonde_model::units::Nanos(l as u64)))
                    })
                    .unwrap_or_default();
                sink.rep_done(point, rep, &report, &metrics)
                    .map_err(ExecError::Sink)?;
                out.reps += 1;
                progress.end(point, rep, &fig);
                let reps = prior.entry(idx).or_default();
                reps.push(metrics);
                if reps.len() == repeat as usize {
                    let summary = summarize(&point.spec, reps);
                    sink.point_done(point, &summary).map_err(ExecError::Sink)?;
                }
            }
            Err(reason) => {
                progress.end(point, rep, &format!("failed: {reason}"));
                sink.point_failed(point, &reason).map_err(ExecError::Sink)?;
                failed.insert(idx, ());
                out.failed.push((idx, reason));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake::FakeRunner;
    use crate::Plan;

    /// The fake engine, with a `prepare` that records link keys and refuses one.
    struct Lab {
        fake: FakeRunner,
        links: Vec<String>,
    }

    impl Runner for Lab {
        fn run(&mut self, spec: &TestSpec) -> Result<TestReport, String> {
            self.fake.run(spec)
        }
        fn prepare(&mut self, point: &Point) -> Result<(), String> {
            let key = crate::plan::link_key(&point.axes);
            if key.contains("mtu=9000") {
                return Err("no 9000 here".into());
            }
            self.links.push(key);
            Ok(())
        }
    }

    /// Repetitions, failures and summaries, by point index.
    #[derive(Default)]
    struct Keep(Vec<u32>, Vec<u32>, Vec<u32>);

    impl Sink for Keep {
        fn rep_done(
            &mut self,
            p: &Point,
            _: u32,
            _: &TestReport,
            _: &Metrics,
        ) -> Result<(), String> {
            self.0.push(p.idx);
            Ok(())
        }
        fn point_done(&mut self, p: &Point, _: &PointSummary) -> Result<(), String> {
            self.2.push(p.idx);
            Ok(())
        }
        fn point_failed(&mut self, p: &Point, _: &str) -> Result<(), String> {
            self.1.push(p.idx);
            Ok(())
        }
    }

    #[test]
    fn prepare_runs_before_each_repetition_and_its_error_fails_the_point() {
        let mut plan = Plan::default_characterization();
        plan.tests = vec![netsonde_model::spec::TestKind::TcpStream];
        plan.sizes = vec![netsonde_model::units::Bytes(1024)];
        plan.link_axes.mtu = vec![1500, 9000];
        plan.repeat = 2;
        let (points, _) = plan.points();
        let order = plan.order(points.len());
        let mut lab = Lab {
            fake: FakeRunner::new(1),
            links: Vec::new(),
        };
        let mut sink = Keep::default();
        let out = execute(
            &points,
            plan.repeat,
            &order,
            BTreeMap::new(),
            Hooks {
                runner: &mut lab,
                sink: &mut sink,
                progress: &mut NoProgress,
                stop: &|| false,
            },
        )
        .unwrap();
        assert_eq!(out.reps, 2);
        assert_eq!(lab.links, vec!["mtu=1500", "mtu=1500"]);
        assert_eq!(out.failed.len(), 1);
        assert!(out.failed[0].1.contains("no 9000"));
    }

    /// A resumed run whose point has every repetition stored but no summary (the
    /// process died between the two writes) summarizes it without measuring again.
    #[test]
    fn a_point_with_all_its_repetitions_but_no_summary_is_summarized_on_resume() {
        let mut plan = Plan::default_characterization();
        plan.tests = vec![netsonde_model::spec::TestKind::TcpStream];
        plan.sizes = vec![
            netsonde_model::units::Bytes(1024),
            netsonde_model::units::Bytes(4096),
        ];
        plan.repeat = 2;
        let (points, _) = plan.points();
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
            plan.repeat,
            &order,
            prior,
            Hooks {
                runner: &mut fake,
                sink: &mut sink,
                progress: &mut NoProgress,
                stop: &|| false,
            },
        )
        .unwrap();
        assert_eq!(out.reps, 1);
        assert_eq!(sink.0, vec![1], "only point 1 is measured");
        assert_eq!(sink.2, vec![0, 1], "both points are summarized");
    }
}
