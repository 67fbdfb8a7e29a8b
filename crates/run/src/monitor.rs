//! `netsonde monitor`: a mesh measured round after round on a schedule
//! (`netsonde_sweep::cadence`: a slot per interval, a random delay into it, an
//! overrunning round's slots skipped and said, never stacked). Each round is
//! stored as a mesh run labelled with the monitor's name, so a restarted
//! monitor goes on from the store: its rounds are its history. After each
//! round every pair's test is judged against its own normal, the rounds before
//! it (`netsonde_analysis::baseline`), into a [`PairWatch`]: ok, learning,
//! degraded or failed, with why; [`Watch`] holds the latest for `--metrics`.
//! A pair's round never shares an agent with another test (the mesh's runner
//! sees to it); a dead, stopped or lying agent fails its own pairs only.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use netsonde_model::sweep::Metric;
use netsonde_model::watch::{MetricWatch, PairState, PairWatch, Watched};
use netsonde_report::view::{PointView, RunView};
use netsonde_store::{RunId, Store};
use netsonde_sweep::cadence::Cadence;
use netsonde_sweep::exec::NoProgress;

use crate::sweep::SweepRequest;
use crate::SweepError;

/// A monitor as asked.
#[derive(Debug)]
pub struct MonitorRequest {
    /// Each round: the mesh's plan, agents, key and store; its label names
    /// the monitor's rounds in the store.
    pub sweep: SweepRequest,
    /// When rounds run.
    pub cadence: Cadence,
    /// How many past rounds make a pair's normal.
    pub window: usize,
    /// Stop after this many rounds (`None`: until stopped).
    pub rounds: Option<u64>,
}

/// The monitor's state, shared with whoever shows it.
#[derive(Debug, Default)]
pub struct Watch(Mutex<Watched>);

impl Watch {
    /// A copy of what it holds.
    pub fn snapshot(&self) -> Watched {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn update(&self, f: impl FnOnce(&mut Watched)) {
        f(&mut self.0.lock().unwrap_or_else(|e| e.into_inner()));
    }
}

/// The metrics watched for a test's points: a stream's goodput, loss and CPU
/// per KiB; a request/response test's rate, median and tail latency and CPU
/// per transaction.
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

/// Judges the last of `views` (its rounds, oldest first): each pair's test
/// against its normal, the `window` rounds before it that were themselves
/// within their normal (ok or learning) — a degraded or failed round does not
/// become part of the normal it fell short of, so a lasting drop stays
/// degraded rather than teaching the baseline to expect it.
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

/// The pair's test of `p` (its agents and axes) in each of `views` that has
/// it, oldest first, each round judged against the normal so far.
fn walk(views: &[RunView], window: usize, p: &PointView) -> Vec<PairWatch> {
    let (Some(src), Some(dst)) = (p.axes.get("src"), p.axes.get("dst")) else {
        return Vec::new();
    };
    let mut normal: Vec<PointView> = Vec::new();
    let mut out = Vec::new();
    for v in views {
        let Some(q) = v.points.iter().find(|q| {
            q.axes.get("src") == Some(src)
                && q.axes.get("dst") == Some(dst)
                && test_axes(q) == test_axes(p)
        }) else {
            continue;
        };
        let from = normal.len().saturating_sub(window);
        let w = pair_watch(v, q, (src, dst), &normal[from..]);
        if matches!(w.state, PairState::Ok | PairState::Learning) {
            normal.push(q.clone());
        }
        out.push(w);
    }
    out
}

/// One pair's test in the latest round against its `history` (the same test
/// of the same pair in the rounds before, done ones only).
fn pair_watch(
    latest: &RunView,
    p: &PointView,
    (src, dst): (&str, &str),
    history: &[PointView],
) -> PairWatch {
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
    let (state, why) = if p.status != "done" {
        let why = p.reason.clone().unwrap_or_else(|| p.status.clone());
        (PairState::Failed, why)
    } else if let Some(w) = metrics.iter().find(|w| w.worse) {
        let m = Metric::from_name(&w.metric).unwrap_or(Metric::Goodput);
        let b = w.baseline.expect("a worse metric has a baseline");
        let change = w
            .change
            .map(|c| format!(" ({:+.0}%)", 100.0 * c))
            .unwrap_or_default();
        (
            PairState::Degraded,
            format!(
                "{} {}{change}, against its normal of {} ({} to {}) over {} rounds",
                w.metric,
                show(m, w.latest),
                show(m, b.median),
                show(m, b.low),
                show(m, b.high),
                b.rounds
            ),
        )
    } else if metrics.iter().all(|w| w.baseline.is_none()) {
        (
            PairState::Learning,
            format!(
                "learning its normal: {} of {} past rounds",
                history.len(),
                netsonde_analysis::baseline::MIN_ROUNDS
            ),
        )
    } else {
        (PairState::Ok, "within its normal".into())
    };
    PairWatch {
        src: src.into(),
        dst: dst.into(),
        test: latest.label_without(p, &["src", "dst"]),
        state,
        why,
        verdict: p.diagnosis.as_ref().map(|d| d.bottleneck.name()),
        metrics,
        run: latest.run.id,
        at_unix_s: latest.run.created_at,
    }
}

/// The monitor's stored rounds, oldest first: the runs labelled `label`.
pub fn rounds(store: &Store, label: &str) -> Result<Vec<RunId>, SweepError> {
    let mut ids: Vec<RunId> = store
        .runs()
        .map_err(crate::PipelineError::from)?
        .into_iter()
        .filter(|r| r.label == label)
        .map(|r| r.id)
        .collect();
    ids.sort_unstable();
    Ok(ids)
}

/// Judges the stored rounds labelled `label` (the last and up to `window`
/// before it) into `watch`; returns the pairs judged.
pub fn publish(
    store: &Store,
    label: &str,
    window: usize,
    watch: &Watch,
) -> Result<Vec<PairWatch>, SweepError> {
    let ids = rounds(store, label)?;
    // Twice the window: room for the normal to pass over degraded rounds.
    let recent = &ids[ids.len().saturating_sub(2 * window + 1)..];
    let views = recent
        .iter()
        .map(|id| crate::view(store, *id).map_err(SweepError::from))
        .collect::<Result<Vec<_>, _>>()?;
    let pairs = judge(&views, window);
    let last = views.last().map(|v| v.run.created_at);
    watch.update(|w| {
        w.pairs = pairs.clone();
        w.last_round_unix_s = last;
    });
    Ok(pairs)
}

/// A round's outcome in a line: how many pairs are in each state, and the
/// ones that are not ok.
pub fn round_line(round: RunId, pairs: &[PairWatch]) -> String {
    let count = |s: PairState| pairs.iter().filter(|p| p.state == s).count();
    let mut line = format!(
        "round stored as run {round}: {} ok, {} learning, {} degraded, {} failed",
        count(PairState::Ok),
        count(PairState::Learning),
        count(PairState::Degraded),
        count(PairState::Failed)
    );
    for p in pairs
        .iter()
        .filter(|p| matches!(p.state, PairState::Degraded | PairState::Failed))
    {
        line.push_str(&format!(
            "; {} {}->{} {}: {}",
            p.state.name(),
            p.src,
            p.dst,
            p.test,
            p.why
        ));
    }
    line
}

/// A number in `[0, 1)` that differs between hosts and moments: where in its
/// slot a round starts (the subsecond clock mixed with the process id).
fn draw() -> f64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mixed = u64::from(nanos) ^ u64::from(std::process::id()).wrapping_mul(2_654_435_761);
    (mixed % 1_000_000) as f64 / 1e6
}

/// Waits until `at` (from `t0`), or until `stop` is raised; returns whether
/// it was raised.
fn wait_until(t0: Instant, at: Duration, stop: &AtomicBool) -> bool {
    while t0.elapsed() < at {
        if stop.load(Ordering::Relaxed) {
            return true;
        }
        std::thread::sleep((at - t0.elapsed()).min(Duration::from_millis(100)));
    }
    stop.load(Ordering::Relaxed)
}

/// Runs the monitor until `stop` is raised (SIGTERM ends the round in
/// progress as a sweep ends: what it measured stays stored) or its rounds are
/// done; `say` hears a line per round. Returns the rounds run.
pub fn run(
    store: &mut Store,
    req: &MonitorRequest,
    watch: &Watch,
    stop: &AtomicBool,
    say: &dyn Fn(&str),
) -> Result<u64, SweepError> {
    let label = &req.sweep.label;
    watch.update(|w| w.every_s = req.cadence.every.as_secs_f64());
    // A restarted monitor shows what its stored rounds say from the start.
    let before = rounds(store, label)?.len();
    if before > 0 {
        publish(store, label, req.window, watch)?;
        say(&format!("{before} stored round(s); going on from them"));
    }
    let t0 = Instant::now();
    let (mut slot, mut at) = (0, req.cadence.start_of(0, draw()));
    let mut ran = 0u64;
    loop {
        if wait_until(t0, at, stop) {
            break;
        }
        let prepared = crate::sweep::prepare(store, &req.sweep)?;
        let done = prepared.measure(store, &req.sweep, &mut NoProgress, stop)?;
        ran += 1;
        let pairs = publish(store, label, req.window, watch)?;
        watch.update(|w| w.rounds = ran);
        say(&round_line(done.run, &pairs));
        if stop.load(Ordering::Relaxed) || req.rounds.is_some_and(|n| ran >= n) {
            break;
        }
        let next = req.cadence.next(slot, t0.elapsed(), draw());
        if next.skipped > 0 {
            say(&format!(
                "{} round(s) skipped: the last one ran past the next slot's start (every {:.0} s); \
                 widen --every or measure less per round",
                next.skipped,
                req.cadence.every.as_secs_f64()
            ));
            watch.update(|w| w.skipped += next.skipped);
        }
        (slot, at) = (next.slot, next.at);
    }
    Ok(ran)
}

/// The labels of the stored mesh runs (each monitor's, and each one-off
/// mesh's), the most recent first.
pub fn monitors(store: &Store) -> Result<Vec<String>, SweepError> {
    let mut labels: Vec<String> = Vec::new();
    for r in store.runs().map_err(crate::PipelineError::from)? {
        let mesh = crate::StoredPlan::parse(&r.plan_json).is_ok_and(|p| p.plan.mesh.is_some());
        if mesh && !labels.contains(&r.label) {
            labels.push(r.label);
        }
    }
    Ok(labels)
}

/// The latest judgement of each pair of the monitor `label`, and when its
/// last round started.
pub fn latest(
    store: &Store,
    label: &str,
    window: usize,
) -> Result<(Vec<PairWatch>, Option<i64>), SweepError> {
    let watch = Watch::default();
    let pairs = publish(store, label, window, &watch)?;
    Ok((pairs, watch.snapshot().last_round_unix_s))
}

/// One pair's test over the monitor's last `limit` rounds, each judged
/// against the `window` rounds before it, oldest first.
pub fn history(
    store: &Store,
    label: &str,
    (src, dst, test): (&str, &str, &str),
    window: usize,
    limit: usize,
) -> Result<Vec<PairWatch>, SweepError> {
    let ids = rounds(store, label)?;
    let from = ids.len().saturating_sub(limit + 2 * window);
    let views = ids[from..]
        .iter()
        .map(|id| crate::view(store, *id).map_err(SweepError::from))
        .collect::<Result<Vec<_>, _>>()?;
    let Some(p) = views.iter().rev().find_map(|v| {
        v.points.iter().find(|p| {
            p.axes.get("src").map(String::as_str) == Some(src)
                && p.axes.get("dst").map(String::as_str) == Some(dst)
                && v.label_without(p, &["src", "dst"]) == test
        })
    }) else {
        return Ok(Vec::new());
    };
    let all = walk(&views, window, p);
    Ok(all[all.len().saturating_sub(limit)..].to_vec())
}
