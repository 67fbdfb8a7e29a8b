//! Several measurements at once: rounds of points that may run together (a
//! mesh's pairs that share no host), each round started at one moment by a
//! [`BatchRunner`], settled as [`crate::exec::drive`] settles one measurement.

use std::collections::VecDeque;

use netsonde_model::result::TestReport;
use netsonde_model::spec::TestSpec;

use crate::exec::{
    ExecError, Outcome, Progress, RetryPolicy, RunError, Schedule, Settle, Sink, Step,
};
use crate::plan::Point;

/// Runs a round of measurements at once.
pub trait BatchRunner {
    /// Runs every (point, spec) of `batch` together; one result each, in order.
    fn run_batch(&mut self, batch: &[(&Point, &TestSpec)]) -> Vec<Result<TestReport, RunError>>;
}

/// What [`drive_rounds`] works through.
pub struct RoundHooks<'a> {
    /// Runs rounds.
    pub runner: &'a mut dyn BatchRunner,
    /// Keeps results.
    pub sink: &'a mut dyn Sink,
    /// Shows progress.
    pub progress: &'a mut dyn Progress,
    /// Asked before each round; true ends the run.
    pub stop: &'a dyn Fn() -> bool,
}

impl std::fmt::Debug for RoundHooks<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RoundHooks")
    }
}

/// A measurement the schedule asked for and the round had no room for yet.
type Held = (u32, u32, Option<TestSpec>);

/// Runs `schedule` in rounds of at most `width` measurements whose points are
/// `apart` from each other, until it is done, stopped, or gives up. A step
/// whose point is not apart from the round's waits for a later round (the
/// schedule's order is kept otherwise). A busy answer is a failed attempt here
/// (the points of a round share no host, so nothing of ours keeps it busy).
pub fn drive_rounds(
    points: &[Point],
    schedule: &mut dyn Schedule,
    policy: &RetryPolicy,
    hooks: RoundHooks<'_>,
    width: usize,
    apart: &dyn Fn(&Point, &Point) -> bool,
) -> Result<Outcome, ExecError> {
    let RoundHooks {
        runner,
        sink,
        progress,
        stop,
    } = hooks;
    let mut settle = Settle::new(sink, progress, policy);
    let point_at = |idx: u32| points.get(idx as usize).ok_or(ExecError::NoSuchPoint(idx));
    let width = width.max(1);
    let mut held: VecDeque<Held> = VecDeque::new();
    let mut tried: std::collections::BTreeMap<(u32, u32), u32> = Default::default();
    let mut exhausted = false;
    loop {
        if stop() {
            settle.out.interrupted = true;
            break;
        }
        let mut round: Vec<Held> = Vec::new();
        let fits = |round: &[Held], idx: u32| -> Result<bool, ExecError> {
            let p = point_at(idx)?;
            for (other, _, _) in round {
                if *other == idx || !apart(p, point_at(*other)?) {
                    return Ok(false);
                }
            }
            Ok(true)
        };
        let mut waiting = VecDeque::new();
        while let Some(h) = held.pop_front() {
            if settle.failed.contains(&h.0) {
                continue;
            }
            if round.len() < width && fits(&round, h.0)? {
                round.push(h);
            } else {
                waiting.push_back(h);
            }
        }
        held = waiting;
        // Look ahead at most a few rounds' worth for steps that fit.
        while !exhausted && round.len() < width && held.len() < 4 * width {
            match schedule.next(points) {
                Step::Done => exhausted = true,
                Step::Complete { idx, summary } => settle.complete(point_at(idx)?, &summary)?,
                Step::Measure { idx, rep, spec } => {
                    if fits(&round, idx)? {
                        round.push((idx, rep, spec));
                    } else {
                        held.push_back((idx, rep, spec));
                    }
                }
            }
        }
        if round.is_empty() {
            if exhausted && held.is_empty() {
                break;
            }
            continue;
        }
        let batch: Vec<(&Point, &TestSpec)> = round
            .iter()
            .map(|(idx, _, spec)| {
                let p = point_at(*idx)?;
                Ok((p, spec.as_ref().unwrap_or(&p.spec)))
            })
            .collect::<Result<_, ExecError>>()?;
        for ((p, _), (_, rep, _)) in batch.iter().zip(&round) {
            settle.begin(p, *rep);
        }
        let results = runner.run_batch(&batch);
        let mut going = true;
        let mut again = Vec::new();
        for (((p, _), h), r) in batch.iter().zip(&round).zip(results) {
            // A measurement that failed for a reason not its setup's is tried
            // again in a later round, within the policy's tries.
            let failed = tried.entry((h.0, h.1)).or_insert(0);
            *failed += u32::from(r.is_err());
            if settle.again(p, h.1, *failed, &r)? {
                again.push(h.clone());
                continue;
            }
            going &= settle.settle(schedule, p, h.1, 1, r)?;
        }
        for h in again.into_iter().rev() {
            held.push_front(h);
        }
        if !going {
            break;
        }
    }
    // What completed while the last round ran.
    if !settle.out.interrupted && settle.out.gave_up.is_none() {
        while let Step::Complete { idx, summary } = schedule.next(points) {
            settle.complete(point_at(idx)?, &summary)?;
        }
    }
    Ok(settle.out)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::exec::{NoProgress, Repeated, SinkError, Summary};
    use crate::fake::FakeRunner;
    use crate::Plan;
    use netsonde_model::sweep::Metrics;

    /// Records what it ran in each round; fails the points in `fail`.
    struct Rounds {
        fake: FakeRunner,
        rounds: Vec<Vec<u32>>,
        fail: Vec<u32>,
    }

    impl BatchRunner for Rounds {
        fn run_batch(
            &mut self,
            batch: &[(&Point, &TestSpec)],
        ) -> Vec<Result<TestReport, RunError>> {
            self.rounds.push(batch.iter().map(|(p, _)| p.idx).collect());
            batch
                .iter()
                .map(|(p, spec)| {
                    if self.fail.contains(&p.idx) {
                        Err(RunError::failed("agent down"))
                    } else {
                        crate::exec::Runner::run(&mut self.fake, spec)
                    }
                })
                .collect()
        }
    }

    #[derive(Default)]
    struct Kept {
        reps: Vec<(u32, u32)>,
        done: Vec<u32>,
        failed: Vec<u32>,
    }

    impl Sink for Kept {
        fn rep_done(
            &mut self,
            p: &Point,
            rep: u32,
            _: &TestReport,
            _: &Metrics,
        ) -> Result<(), SinkError> {
            self.reps.push((p.idx, rep));
            Ok(())
        }
        fn point_done(&mut self, p: &Point, _: &Summary) -> Result<(), SinkError> {
            self.done.push(p.idx);
            Ok(())
        }
        fn rep_failed(&mut self, p: &Point, _: u32, _: &RunError) -> Result<(), SinkError> {
            self.failed.push(p.idx);
            Ok(())
        }
    }

    /// Points whose `host` axes are two names: apart when they share none.
    fn mesh_points(pairs: &[(&str, &str)]) -> Vec<Point> {
        let base = Plan::default_characterization().points().0[0].clone();
        pairs
            .iter()
            .enumerate()
            .map(|(i, (a, b))| {
                let mut axes = base.axes.clone();
                axes.insert("src".into(), a.to_string());
                axes.insert("dst".into(), b.to_string());
                Point {
                    idx: i as u32,
                    axes,
                    spec: base.spec.clone(),
                }
            })
            .collect()
    }

    fn apart(a: &Point, b: &Point) -> bool {
        let hosts = |p: &Point| [p.axes["src"].clone(), p.axes["dst"].clone()];
        let (x, y) = (hosts(a), hosts(b));
        !x.iter().any(|h| y.contains(h))
    }

    fn go(points: &[Point], repeat: u32, width: usize, fail: Vec<u32>) -> (Rounds, Kept, Outcome) {
        let order: Vec<(u32, u32)> = (0..repeat)
            .flat_map(|r| (0..points.len() as u32).map(move |i| (i, r)))
            .collect();
        let mut schedule = Repeated::new(repeat, order, BTreeMap::new());
        let mut runner = Rounds {
            fake: FakeRunner::new(1),
            rounds: Vec::new(),
            fail,
        };
        let mut sink = Kept::default();
        let out = drive_rounds(
            points,
            &mut schedule,
            &RetryPolicy {
                max_consecutive_failures: 100,
                ..RetryPolicy::default()
            },
            RoundHooks {
                runner: &mut runner,
                sink: &mut sink,
                progress: &mut NoProgress,
                stop: &|| false,
            },
            width,
            &apart,
        )
        .unwrap();
        (runner, sink, out)
    }

    #[test]
    fn rounds_hold_only_pairs_that_share_no_host() {
        // All to all over four hosts: 12 pairs, at most 2 at once.
        let hosts = ["a", "b", "c", "d"];
        let pairs: Vec<(&str, &str)> = hosts
            .iter()
            .flat_map(|x| hosts.iter().filter(move |y| *y != x).map(move |y| (*x, *y)))
            .collect();
        let points = mesh_points(&pairs);
        let (runner, sink, out) = go(&points, 2, 4, vec![]);
        assert_eq!(out.reps, 24);
        assert_eq!(sink.done.len(), 12);
        assert!(runner.rounds.iter().all(|r| r.len() <= 2));
        for r in &runner.rounds {
            for (i, x) in r.iter().enumerate() {
                for y in &r[i + 1..] {
                    assert!(apart(&points[*x as usize], &points[*y as usize]), "{r:?}");
                }
            }
        }
        // Most rounds are full: 24 measurements in at most 16 rounds.
        assert!(runner.rounds.len() <= 16, "{:?}", runner.rounds);
        // Every repetition ran exactly once.
        let mut ran: Vec<u32> = runner.rounds.concat();
        ran.sort();
        assert_eq!(ran.len(), 24);
    }

    #[test]
    fn a_failed_point_stays_pending_and_the_others_go_on() {
        let points = mesh_points(&[("a", "b"), ("c", "d"), ("b", "a"), ("d", "c")]);
        let (runner, sink, out) = go(&points, 2, 2, vec![1]);
        assert_eq!(out.failures.len(), 1);
        // Tried again twice, in later rounds, each failure stored.
        assert_eq!(out.retried.len(), 2);
        assert_eq!(sink.failed, vec![1, 1, 1]);
        // Point 1's second repetition never ran; the others have both.
        assert_eq!(
            runner.rounds.concat().iter().filter(|&&i| i == 1).count(),
            3
        );
        let mut done = sink.done.clone();
        done.sort();
        assert_eq!(done, vec![0, 2, 3]);
        assert_eq!(sink.reps.len(), 6);
    }
}
