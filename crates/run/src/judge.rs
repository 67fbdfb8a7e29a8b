//! A monitor's rounds judged, pair by pair (`netsonde monitor`, its
//! `--metrics` and `netsonde dashboard` all judge the same way): each pair's
//! test walks its rounds oldest first.
//!
//! - A round that did not measure it (a stop came first) is not one of its
//!   rounds.
//! - A round whose test failed makes it failed.
//! - A round measured while a host at either end was busy with other work or
//!   throttled by its CPU quota (the verdict says so) is inconclusive: not
//!   judged, not part of the normal; a degraded pair stays degraded through it.
//! - Any other round is judged against the normal, the last `window` judged
//!   rounds that were within it (`netsonde_analysis::baseline`). The pair is
//!   degraded once [`WORSE_ROUNDS`] of its last [`JUDGED_ROUNDS`] were worse,
//!   and recovers once as many were not: one bad round never pages, and a
//!   worse round never becomes part of the normal it fell short of.

use std::collections::{BTreeMap, VecDeque};

use netsonde_model::diagnosis::Bottleneck;
use netsonde_model::sweep::Metric;
use netsonde_model::watch::{
    AgentWatch, MetricWatch, PairState, PairWatch, JUDGED_ROUNDS, WORSE_ROUNDS,
};
use netsonde_report::view::{PointView, RunView};

/// The metrics watched for a test's points: a stream's goodput, loss and CPU
/// per KiB; a request/response test's rate, median and tail latency and CPU
/// per transaction. The first is the pair's headline figure.
fn watched(rr: bool) -> &'static [Metric] {
    if rr {
        &[
            Metric::TransactionsPerSec,
            Metric::LatencyP50,
            Metric::LatencyP99,
            Metric::ClientUsPerTrans,
        ]
    } else {
        &[Metric::Goodput, Metric::Loss, Metric::ClientUsPerKib]
    }
}

/// The least CPU time behind a CPU-per-unit figure for it to be judged: the
/// interrupt time in it is counted in ticks (10 ms), so a figure from a few
/// ticks of CPU (a short test at a low rate) is noise, not a normal.
const MIN_CPU_SECONDS: f64 = 0.1;

/// Whether `p`'s figure of `m` stands on enough data to be judged: for the CPU
/// per KiB or per transaction, at least [`MIN_CPU_SECONDS`] of CPU behind it.
fn judgeable(p: &PointView, m: Metric) -> bool {
    let secs = p.spec.duration.0 as f64 / 1e9;
    let units = match m {
        Metric::ClientUsPerKib => p.median(Metric::Goodput.name()).map(|g| g / 8.0 / 1024.0),
        Metric::ClientUsPerTrans => p.median(Metric::TransactionsPerSec.name()),
        _ => return true,
    };
    match (units, p.median(m.name())) {
        (Some(u), Some(us)) => us * 1e-6 * u * secs >= MIN_CPU_SECONDS,
        _ => false,
    }
}

/// A figure of `metric` as a line says it (as the dashboard shows it).
fn show(metric: Metric, v: f64) -> String {
    netsonde_report::dashboard::show(metric.name(), v)
}

/// A point's axes but the pair: what makes it the same test in another round.
fn test_axes(p: &PointView) -> Vec<(&str, &str)> {
    p.axes
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "src" | "dst"))
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect()
}

/// What a round made of a pair's test before any judging.
enum Round<'a> {
    /// Not measured: the round stopped before it, or skipped it.
    Unmeasured,
    /// Its measurement failed, for this reason.
    Failed(String),
    /// Measured on a host too busy to say anything of the path: why.
    Inconclusive(String),
    /// Measured and judgeable.
    Measured(&'a PointView),
}

fn round_of(p: &PointView) -> Round<'_> {
    match p.status.as_str() {
        "done" => {}
        // A pending point with a reason had a failed attempt; without one it
        // was never tried (the round was stopped first).
        "pending" | "failed" => {
            return match &p.reason {
                Some(why) => Round::Failed(why.clone()),
                None => Round::Unmeasured,
            }
        }
        _ => return Round::Unmeasured,
    }
    match p.diagnosis.as_ref().map(|d| &d.bottleneck) {
        Some(b @ (Bottleneck::HostBusy { .. } | Bottleneck::CpuQuota { .. })) => {
            Round::Inconclusive(format!("not judged: {}", b.name()))
        }
        _ => Round::Measured(p),
    }
}

/// A pair's test walked round by round.
#[derive(Default)]
struct Walk {
    /// The judged rounds within their normal (all of them while learning).
    normal: Vec<PointView>,
    /// Of the last judged rounds, whether each was worse, newest last.
    recent: VecDeque<bool>,
    /// Whether it is degraded.
    degraded: bool,
}

impl Walk {
    /// Judges `p` against the last `window` rounds of the normal.
    fn judge(&mut self, p: &PointView, window: usize) -> (Vec<MetricWatch>, bool) {
        let from = self.normal.len().saturating_sub(window);
        let history = &self.normal[from..];
        let metrics: Vec<MetricWatch> = watched(p.spec.test.is_rr())
            .iter()
            .filter(|&&m| judgeable(p, m))
            .filter_map(|&m| {
                let now = p.median(m.name())?;
                let past: Vec<f64> = history
                    .iter()
                    .filter(|h| judgeable(h, m))
                    .filter_map(|h| h.median(m.name()))
                    .collect();
                Some(netsonde_analysis::baseline::judge(m, &past, now))
            })
            .collect();
        let learning = metrics.iter().all(|w| w.baseline.is_none());
        let worse = metrics.iter().any(|w| w.worse);
        if !worse {
            self.normal.push(p.clone());
        }
        if !learning {
            self.recent.push_back(worse);
            if self.recent.len() > JUDGED_ROUNDS as usize {
                self.recent.pop_front();
            }
            let bad = self.recent.iter().filter(|w| **w).count() as u32;
            let good = self.recent.len() as u32 - bad;
            if self.degraded {
                self.degraded = good < WORSE_ROUNDS;
            } else {
                self.degraded = bad >= WORSE_ROUNDS;
            }
        }
        (metrics, learning)
    }

    fn worse_of(&self) -> (u32, u32) {
        let bad = self.recent.iter().filter(|w| **w).count() as u32;
        (bad, self.recent.len() as u32)
    }
}

/// Judges the last of `views` (its rounds, oldest first): each pair's test of
/// the latest round, as its rounds up to it make it.
pub fn judge(views: &[RunView], window: usize) -> Vec<PairWatch> {
    let Some(latest) = views.last() else {
        return Vec::new();
    };
    latest
        .points
        .iter()
        .filter_map(|p| walk(views, window, p).pop())
        .collect()
}

/// The pair's test of `p` (its agents and axes) in each of `views` that
/// measured or tried it, oldest first, each round judged as the rounds before
/// it make it.
pub fn walk(views: &[RunView], window: usize, p: &PointView) -> Vec<PairWatch> {
    let (Some(src), Some(dst)) = (p.axes.get("src"), p.axes.get("dst")) else {
        return Vec::new();
    };
    let mut w = Walk::default();
    let mut out: Vec<PairWatch> = Vec::new();
    for v in views {
        let Some(q) = v.points.iter().find(|q| {
            q.axes.get("src") == Some(src)
                && q.axes.get("dst") == Some(dst)
                && test_axes(q) == test_axes(p)
        }) else {
            continue;
        };
        let mut pw = PairWatch {
            src: src.clone(),
            dst: dst.clone(),
            test: netsonde_report::view::pair_test_label(&q.axes),
            state: PairState::Failed,
            why: String::new(),
            verdict: q.diagnosis.as_ref().map(|d| d.bottleneck.name()),
            change: None,
            worse_ratio: None,
            worse_of: w.worse_of(),
            metrics: Vec::new(),
            run: v.run.id,
            at_unix_s: v.run.created_at,
        };
        match round_of(q) {
            Round::Unmeasured => continue,
            Round::Failed(why) => pw.why = why,
            Round::Inconclusive(why) => {
                pw.state = if w.degraded {
                    PairState::Degraded
                } else {
                    PairState::Inconclusive
                };
                pw.why = match out.last() {
                    Some(prev) if w.degraded => format!("{why}; still {}", prev.why),
                    _ => why,
                };
            }
            Round::Measured(q) => {
                let (metrics, learning) = w.judge(q, window);
                pw.worse_of = w.worse_of();
                said(&mut pw, &metrics, learning, w.degraded, w.normal.len());
                pw.metrics = metrics;
            }
        }
        out.push(pw);
    }
    out
}

/// A judged round's state, headline change and why, from its metrics.
fn said(
    pw: &mut PairWatch,
    metrics: &[MetricWatch],
    learning: bool,
    degraded: bool,
    normal: usize,
) {
    pw.change = metrics.first().and_then(|w| w.change);
    pw.worse_ratio = metrics
        .iter()
        .filter_map(|w| netsonde_analysis::baseline::worse_ratio(metric(w), w))
        .reduce(f64::max);
    let (bad, of) = pw.worse_of;
    let worst = metrics.iter().filter(|w| w.worse).max_by(|a, b| {
        let r = |w: &MetricWatch| netsonde_analysis::baseline::worse_ratio(metric(w), w);
        r(a).partial_cmp(&r(b)).unwrap_or(std::cmp::Ordering::Equal)
    });
    (pw.state, pw.why) = if learning {
        (
            PairState::Learning,
            format!(
                "learning its normal: {normal} of {} rounds",
                netsonde_analysis::baseline::MIN_ROUNDS
            ),
        )
    } else if degraded {
        let what = worst.map_or_else(|| "now within its normal".to_string(), line);
        (
            PairState::Degraded,
            format!("{what}; {bad} of its last {of} judged rounds worse"),
        )
    } else {
        match worst {
            Some(w) => (
                PairState::Ok,
                format!(
                    "{}; {bad} of its last {of} judged rounds worse, {WORSE_ROUNDS} make it degraded",
                    line(w)
                ),
            ),
            None => (PairState::Ok, "within its normal".into()),
        }
    };
}

fn metric(w: &MetricWatch) -> Metric {
    Metric::from_name(&w.metric).unwrap_or(Metric::Goodput)
}

/// A worse metric in a line: its figure, change and normal.
fn line(w: &MetricWatch) -> String {
    let m = metric(w);
    let change = w
        .change
        .map(|c| format!(" ({:+.0}%)", 100.0 * c))
        .unwrap_or_default();
    match w.baseline {
        Some(b) => format!(
            "{} {}{change}, against its normal of {} ({} to {}) over {} rounds",
            w.metric,
            show(m, w.latest),
            show(m, b.median),
            show(m, b.low),
            show(m, b.high),
            b.rounds
        ),
        None => format!("{} {}", w.metric, show(m, w.latest)),
    }
}

/// Each agent of the judged pairs as their rounds saw it: up unless none of
/// its pair-tests was measured in the latest round that tried one and some
/// failed (a dead host fails every test it is in); when a round last measured
/// one of its tests (from `views`, oldest first).
pub fn agents(pairs: &[PairWatch], views: &[RunView]) -> Vec<AgentWatch> {
    let mut out: BTreeMap<String, AgentWatch> = BTreeMap::new();
    for p in pairs {
        for name in [&p.src, &p.dst] {
            let a = out.entry(name.clone()).or_insert_with(|| AgentWatch {
                name: name.clone(),
                up: false,
                failed_pairs: 0,
                why: None,
                last_seen_unix_s: None,
            });
            if p.state == PairState::Failed {
                a.failed_pairs += 1;
                a.why.get_or_insert_with(|| p.why.clone());
            } else {
                a.up = true;
            }
        }
    }
    for v in views {
        for q in v.points.iter().filter(|q| q.status == "done") {
            for axis in ["src", "dst"] {
                if let Some(a) = q.axes.get(axis).and_then(|n| out.get_mut(n)) {
                    a.last_seen_unix_s = Some(v.run.created_at);
                }
            }
        }
    }
    for a in out.values_mut().filter(|a| a.up) {
        a.why = None;
    }
    out.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use netsonde_model::diagnosis::Bottleneck;
    use netsonde_report::fixture;

    /// The fixture's mesh as round `n` (started `n` minutes in), `f` applied
    /// to each point: a→b's goodput set to `ab` of its normal.
    fn round(n: i64, ab: f64, f: impl Fn(&mut PointView)) -> RunView {
        let mut v = fixture::mesh();
        v.run.id = n;
        v.run.created_at = 1_700_000_000 + 60 * n;
        for p in &mut v.points {
            // A few percent of noise round to round, as a real normal has.
            let noise = 1.0 + 0.01 * ((n * 7 + i64::from(p.idx)) % 5 - 2) as f64;
            let scale = if is(p, "a", "b") { ab * noise } else { noise };
            if let Some(e) = p
                .summary
                .as_mut()
                .and_then(|s| s.estimates.get_mut("goodput"))
            {
                e.median *= scale;
            }
            f(p);
        }
        v
    }

    fn is(p: &PointView, src: &str, dst: &str) -> bool {
        p.axes.get("src").is_some_and(|s| s == src) && p.axes.get("dst").is_some_and(|d| d == dst)
    }

    fn states(pairs: &[PairWatch], src: &str, dst: &str) -> Vec<PairState> {
        pairs
            .iter()
            .filter(|p| p.src == src && p.dst == dst)
            .map(|p| p.state)
            .collect()
    }

    fn normal(n: i64) -> Vec<RunView> {
        (0..n).map(|i| round(i, 1.0, |_| {})).collect()
    }

    /// One bad round is no alarm; the second of the last three is, with the
    /// change; two good rounds recover it. Untouched pairs stay ok.
    #[test]
    fn a_pair_is_degraded_after_two_of_three_worse_rounds_and_recovers_the_same_way() {
        let mut views = normal(6);
        let pairs = judge(&views, 10);
        assert_eq!(states(&pairs, "a", "b"), [PairState::Ok, PairState::Ok]);
        views.push(round(6, 0.5, |_| {}));
        let pairs = judge(&views, 10);
        assert_eq!(states(&pairs, "a", "b"), [PairState::Ok, PairState::Ok]);
        let ab = pairs.iter().find(|p| p.src == "a" && p.dst == "b").unwrap();
        assert_eq!(ab.worse_of, (1, 2), "{ab:?}");
        assert!(
            ab.why.contains("1 of its last 2 judged rounds worse"),
            "{}",
            ab.why
        );
        views.push(round(7, 0.5, |_| {}));
        let pairs = judge(&views, 10);
        assert_eq!(
            states(&pairs, "a", "b"),
            [PairState::Degraded, PairState::Degraded]
        );
        let ab = pairs.iter().find(|p| p.src == "a" && p.dst == "b").unwrap();
        assert!((ab.change.unwrap() + 0.5).abs() < 0.05, "{ab:?}");
        assert!((ab.worse_ratio.unwrap() - 0.5).abs() < 0.05, "{ab:?}");
        assert!(pairs
            .iter()
            .filter(|p| !(p.src == "a" && p.dst == "b"))
            .all(|p| matches!(p.state, PairState::Ok | PairState::Failed)));
        // One good round: still degraded (1 of 3 within); two: recovered.
        views.push(round(8, 1.0, |_| {}));
        assert_eq!(states(&judge(&views, 10), "a", "b")[0], PairState::Degraded);
        views.push(round(9, 1.0, |_| {}));
        assert_eq!(states(&judge(&views, 10), "a", "b")[0], PairState::Ok);
    }

    /// Rounds measured on a busy or throttled host are shown as inconclusive
    /// and neither count towards degraded nor join the normal; a degraded
    /// pair stays degraded through them.
    #[test]
    fn busy_host_rounds_are_inconclusive_and_never_degrade_a_pair() {
        let busy = |p: &mut PointView| {
            if is(p, "a", "b") {
                if let Some(d) = p.diagnosis.as_mut() {
                    d.bottleneck = Bottleneck::HostBusy {
                        side: "client".into(),
                        core: Some(0),
                        test_pct: 20.0,
                    };
                }
            }
        };
        let mut views = normal(6);
        for n in 6..10 {
            views.push(round(n, 0.3, busy));
        }
        let pairs = judge(&views, 10);
        assert_eq!(states(&pairs, "a", "b"), [PairState::Inconclusive; 2]);
        let ab = pairs.iter().find(|p| p.src == "a" && p.dst == "b").unwrap();
        assert!(ab.why.starts_with("not judged: host busy"), "{}", ab.why);
        views.push(round(10, 1.0, |_| {}));
        assert_eq!(states(&judge(&views, 10), "a", "b"), [PairState::Ok; 2]);
        // Degraded, then a busy round: still degraded.
        views.push(round(11, 0.5, |_| {}));
        views.push(round(12, 0.5, |_| {}));
        views.push(round(13, 0.3, busy));
        let pairs = judge(&views, 10);
        assert_eq!(states(&pairs, "a", "b"), [PairState::Degraded; 2]);
    }

    /// A round stopped before it measured a pair leaves the pair as it was;
    /// a failed attempt fails it; an agent none of whose tests was measured is
    /// down, with why.
    #[test]
    fn unmeasured_pairs_are_not_failed_and_a_dead_agent_is_down() {
        let mut views = normal(6);
        views.push(round(6, 1.0, |p| {
            if is(p, "a", "b") {
                p.status = "pending".into();
                p.reason = None;
            }
        }));
        let pairs = judge(&views, 10);
        assert_eq!(states(&pairs, "a", "b"), [PairState::Ok; 2]);
        let seen = agents(&pairs, &views);
        // The fixture's c -> a fails every round; c's other pairs do not.
        let c = seen.iter().find(|a| a.name == "c").unwrap();
        assert!(c.up && c.failed_pairs == 2, "{c:?}");
        views.push(round(7, 1.0, |p| {
            if p.axes.get("src").is_some_and(|s| s == "b")
                || p.axes.get("dst").is_some_and(|d| d == "b")
            {
                p.status = "pending".into();
                p.reason = Some("failed: cannot connect to 10.0.0.2:5300".into());
                p.summary = None;
            }
        }));
        let pairs = judge(&views, 10);
        assert_eq!(states(&pairs, "a", "b"), [PairState::Failed; 2]);
        let b = agents(&pairs, &views)
            .into_iter()
            .find(|a| a.name == "b")
            .unwrap();
        assert!(!b.up, "{b:?}");
        assert_eq!(b.failed_pairs, 8);
        assert_eq!(
            b.why.as_deref(),
            Some("failed: cannot connect to 10.0.0.2:5300")
        );
        assert_eq!(b.last_seen_unix_s, Some(1_700_000_000 + 60 * 6));
    }
}
