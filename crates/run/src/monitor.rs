//! `netsonde monitor`: a mesh measured round after round on a schedule
//! (`netsonde_sweep::cadence`: a slot per interval, a random delay into it, an
//! overrunning round's slots skipped and said, never stacked). Each round is
//! measured into a private in-memory store and then copied whole into the
//! results store as a mesh run labelled with the monitor's name, so a
//! restarted monitor goes on from the store (its rounds are its history), and
//! a store out of reach stops nothing: the rounds wait in memory (at most
//! [`MAX_HELD`]) and are written, oldest first, once it answers again. After
//! each round every pair's test is judged against its own normal
//! ([`crate::judge`]) into a [`PairWatch`]; [`Watch`] holds the latest for
//! `--metrics`. A pair's round never shares an agent with another test (the
//! mesh's runner sees to it); a dead, stopped or lying agent fails its own
//! pairs only.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use netsonde_model::watch::{AgentWatch, PairState, PairWatch, Watched};
use netsonde_report::view::RunView;
use netsonde_store::{RunId, RunStatus, Store};
use netsonde_sweep::cadence::Cadence;
use netsonde_sweep::exec::{measuring_secs, NoProgress};
use netsonde_sweep::plan::Plan;

use crate::judge;
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
    /// Slots begin when the wall clock is this far into an interval
    /// (`--phase`); `None`: from the start.
    pub phase: Option<Duration>,
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

/// The most rounds held in memory while the store is out of reach (a day of
/// rounds every 30 minutes); past it, or past [`MAX_HELD_BYTES`], the oldest
/// is dropped, and said.
pub const MAX_HELD: usize = 48;

/// The most memory the held rounds' stores may take (a round of 180 tests
/// with their reports and samples takes a few MiB): well inside the 512 MiB
/// the shipped manifests give a monitor.
pub const MAX_HELD_BYTES: u64 = 128 << 20;

/// What a measurement costs beyond its measured time in a round: the job to
/// the agent, the control handshake, the data connections (a few round trips
/// and the server's setup, well under this on a LAN).
const SETUP_SECS: f64 = 0.5;

/// How far ahead a round of pairs measured at once is started
/// (`agents::ROUND_LEAD_MS`).
const LEAD_SECS: f64 = 1.0;

/// Seconds a round of `plan` takes, about: each measurement's time and its
/// setup, shared among the pairs that run at once (`concurrency`, at most one
/// pair per two agents), each batch of those started a second ahead.
pub fn round_secs(plan: &Plan, concurrency: usize) -> f64 {
    let (points, _) = plan.points();
    let reps = f64::from(plan.repeat.max(1));
    let each: f64 = points
        .iter()
        .map(|p| measuring_secs(&p.spec) + SETUP_SECS)
        .sum::<f64>()
        * reps;
    let agents = plan.mesh.as_ref().map_or(2, |m| m.agents.len());
    let at_once = concurrency.clamp(1, (agents / 2).max(1));
    if at_once == 1 {
        return each;
    }
    let batches = (points.len() as f64 * reps / at_once as f64).ceil();
    each / at_once as f64 + batches * LEAD_SECS
}

/// Refuses an interval a round of `plan` is estimated to overrun
/// ([`round_secs`]), with the estimate and what to change, unless the slots it
/// runs past are to be skipped (`--skip-overrun`).
pub fn check_interval(
    plan: &Plan,
    concurrency: usize,
    every: Duration,
    skip_overrun: bool,
) -> Result<(), SweepError> {
    let round = round_secs(plan, concurrency);
    let every = every.as_secs_f64();
    if round <= every || skip_overrun {
        return Ok(());
    }
    Err(SweepError::Usage(format!(
        "a round is estimated at {round:.0} s (each measurement's time and about half a second \
         of setup, {concurrency} pair(s) at once) but --every is {every:.0} s: widen --every, \
         measure less per round (--sizes, --tests, -t, --repeat), raise --concurrency, or pass \
         --skip-overrun to skip the slots a round runs past"
    )))
}

/// The monitor's stored rounds, oldest first: the runs labelled `label` that
/// are not still running (a round killed mid-way by an older netsonde stayed
/// `running` for ever: it is not a round).
pub fn rounds(store: &Store, label: &str) -> Result<Vec<RunId>, SweepError> {
    let mut ids: Vec<RunId> = store
        .runs()
        .map_err(crate::PipelineError::from)?
        .into_iter()
        .filter(|r| r.label == label && r.status != RunStatus::Running)
        .map(|r| r.id)
        .collect();
    ids.sort_unstable();
    Ok(ids)
}

/// The analysed views of `ids`.
fn views(store: &Store, ids: &[RunId]) -> Result<Vec<RunView>, SweepError> {
    ids.iter()
        .map(|id| crate::view(store, *id).map_err(SweepError::from))
        .collect()
}

/// How many of the latest rounds judging needs: twice the window, room for
/// the normal to pass over worse rounds, and the latest.
fn needed(window: usize) -> usize {
    2 * window + 1 + netsonde_model::watch::JUDGED_ROUNDS as usize
}

/// Every pair of the latest of `views` judged, and its agents.
fn judged(views: &[RunView], window: usize) -> (Vec<PairWatch>, Vec<AgentWatch>) {
    let pairs = judge::judge(views, window);
    let agents = judge::agents(&pairs, views);
    (pairs, agents)
}

/// A round's outcome in a line: how many pairs are in each state, and the
/// ones that are not ok.
pub fn round_line(round: &str, pairs: &[PairWatch]) -> String {
    let counts: Vec<String> = PairState::ALL
        .iter()
        .map(|&s| {
            format!(
                "{} {}",
                pairs.iter().filter(|p| p.state == s).count(),
                s.name()
            )
        })
        .collect();
    let mut line = format!("round {round}: {}", counts.join(", "));
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

/// Waits until `at` from `t0` (which may be ahead: a phase's first slot), or
/// until `stop` is raised; returns whether it was raised.
fn wait_until(t0: Instant, at: Duration, stop: &AtomicBool) -> bool {
    let deadline = t0 + at;
    loop {
        let now = Instant::now();
        if stop.load(Ordering::Relaxed) || now >= deadline {
            break;
        }
        std::thread::sleep((deadline - now).min(Duration::from_millis(100)));
    }
    stop.load(Ordering::Relaxed)
}

/// A round measured and not yet in the results store.
struct Held {
    spool: Store,
    run: RunId,
    view: RunView,
    /// What its store's pages take.
    bytes: u64,
}

/// The rounds a monitor knows: the latest stored ones, and those waiting for
/// the store.
struct Rounds {
    stored: VecDeque<RunView>,
    held: VecDeque<Held>,
    /// Whether the store is believed to answer (said once when it stops).
    store_up: bool,
    keep: usize,
}

impl Rounds {
    fn views(&self) -> Vec<RunView> {
        self.stored
            .iter()
            .cloned()
            .chain(self.held.iter().map(|h| h.view.clone()))
            .collect()
    }

    fn keep_stored(&mut self, view: RunView) {
        self.stored.push_back(view);
        while self.stored.len() > self.keep {
            self.stored.pop_front();
        }
    }

    /// Writes the held rounds into the store, oldest first, until one fails
    /// (the store reopened first when it failed before).
    fn flush(&mut self, store: &mut Store, req: &MonitorRequest, say: &dyn Fn(&str)) {
        if self.held.is_empty() {
            return;
        }
        if !self.store_up {
            match Store::open_at(&req.sweep.db) {
                Ok(s) => *store = s,
                Err(e) => return say(&format!("the store is still out of reach: {e}")),
            }
        }
        while let Some(h) = self.held.front() {
            match store.import_run(&h.spool, h.run) {
                Ok(id) => {
                    let mut h = self.held.pop_front().expect("a front");
                    h.view.run.id = id;
                    if !self.store_up {
                        say(&format!(
                            "the store answers again: round written as run {id}"
                        ));
                    }
                    self.store_up = true;
                    self.keep_stored(h.view);
                }
                Err(e) => {
                    if self.store_up {
                        say(&format!(
                            "cannot write the round to the store ({e}): it is held in memory, \
                             with those after it, until the store answers (at most {MAX_HELD})"
                        ));
                    }
                    self.store_up = false;
                    return;
                }
            }
        }
    }
}

/// Measures one round into a store of its own: the round's run there.
fn measure_round(req: &MonitorRequest, stop: &AtomicBool) -> Result<Held, SweepError> {
    let mut spool = Store::open_in_memory().map_err(crate::PipelineError::from)?;
    let prepared = crate::sweep::prepare(&mut spool, &req.sweep)?;
    let done = prepared.measure(&mut spool, &req.sweep, &mut NoProgress, stop)?;
    let view = crate::view(&spool, done.run)?;
    let bytes = spool
        .sqlite_bytes()
        .map_err(crate::PipelineError::from)?
        .unwrap_or(0);
    Ok(Held {
        spool,
        run: done.run,
        view,
        bytes,
    })
}

/// Runs the monitor until `stop` is raised (SIGTERM ends the round in
/// progress as a sweep ends: what it measured is stored, what it did not is
/// no pair's failure) or its rounds are done; `say` hears a line per round.
/// Returns the rounds run.
pub fn run(
    store: &mut Store,
    req: &MonitorRequest,
    watch: &Watch,
    stop: &AtomicBool,
    say: &dyn Fn(&str),
) -> Result<u64, SweepError> {
    let label = &req.sweep.label;
    watch.update(|w| w.every_s = req.cadence.every.as_secs_f64());
    let ids = rounds(store, label)?;
    let keep = needed(req.window);
    let mut known = Rounds {
        stored: views(store, &ids[ids.len().saturating_sub(keep)..])?.into(),
        held: VecDeque::new(),
        store_up: true,
        keep,
    };
    // A restarted monitor shows what its stored rounds say from the start.
    if !ids.is_empty() {
        let (pairs, agents) = judged(&known.views(), req.window);
        let last = known.stored.back().map(|v| v.run.created_at);
        watch.update(|w| (w.pairs, w.agents, w.last_round_unix_s) = (pairs, agents, last));
        say(&format!(
            "{} stored round(s); going on from them",
            ids.len()
        ));
    }
    // With a phase, the slots begin on the wall clock's: the first after now.
    let now_unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let t0 = Instant::now()
        + req
            .phase
            .map_or(Duration::ZERO, |p| req.cadence.until_phase(p, now_unix));
    let (mut slot, mut at) = (0, req.cadence.start_of(0, draw()));
    let mut ran = 0u64;
    loop {
        if wait_until(t0, at, stop) {
            break;
        }
        let round = measure_round(req, stop)?;
        ran += 1;
        known.held.push_back(round);
        let over = |h: &VecDeque<Held>| {
            h.len() > MAX_HELD || h.iter().map(|r| r.bytes).sum::<u64>() > MAX_HELD_BYTES
        };
        while known.held.len() > 1 && over(&known.held) {
            known.held.pop_front();
            say(&format!(
                "the oldest round held for the store is dropped: at most {MAX_HELD} rounds \
                 or {} MiB are held",
                MAX_HELD_BYTES >> 20
            ));
        }
        known.flush(store, req, say);
        let views = known.views();
        let (pairs, agents) = judged(&views, req.window);
        let latest = views.last().map(|v| v.run.created_at);
        let name = match known.held.back() {
            Some(_) => format!("held for the store ({} held)", known.held.len()),
            None => format!("stored as run {}", views.last().map_or(0, |v| v.run.id)),
        };
        say(&round_line(&name, &pairs));
        watch.update(|w| {
            (w.pairs, w.agents, w.last_round_unix_s) = (pairs, agents, latest);
            w.rounds = ran;
            w.store_up = known.store_up;
            w.held_rounds = known.held.len() as u64;
        });
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
    if !known.held.is_empty() {
        known.flush(store, req, say);
        if !known.held.is_empty() {
            say(&format!(
                "{} round(s) could not be written: the store is out of reach",
                known.held.len()
            ));
        }
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

/// What a monitor's stored rounds say now: each pair's latest judgement,
/// its agents, and when its last round started.
#[derive(Debug, Clone, Default)]
pub struct Latest {
    /// Each pair's test, as its latest round left it.
    pub pairs: Vec<PairWatch>,
    /// Each agent as the latest round saw it.
    pub agents: Vec<AgentWatch>,
    /// When the last round started, Unix seconds.
    pub last_round_unix_s: Option<i64>,
}

/// The latest judgement of each pair of the monitor `label`.
pub fn latest(store: &Store, label: &str, window: usize) -> Result<Latest, SweepError> {
    let ids = rounds(store, label)?;
    let views = views(store, &ids[ids.len().saturating_sub(needed(window))..])?;
    let (pairs, agents) = judged(&views, window);
    Ok(Latest {
        pairs,
        agents,
        last_round_unix_s: views.last().map(|v| v.run.created_at),
    })
}

/// One pair's test over the monitor's last `limit` rounds, each judged as the
/// rounds before it make it, oldest first.
pub fn history(
    store: &Store,
    label: &str,
    (src, dst, test): (&str, &str, &str),
    window: usize,
    limit: usize,
) -> Result<Vec<PairWatch>, SweepError> {
    let ids = rounds(store, label)?;
    let views = views(
        store,
        &ids[ids.len().saturating_sub(limit + needed(window))..],
    )?;
    let Some(p) = views.iter().rev().find_map(|v| {
        v.points.iter().find(|p| {
            p.axes.get("src").map(String::as_str) == Some(src)
                && p.axes.get("dst").map(String::as_str) == Some(dst)
                && netsonde_report::view::pair_test_label(&p.axes) == test
        })
    }) else {
        return Ok(Vec::new());
    };
    let all = judge::walk(&views, window, p);
    Ok(all[all.len().saturating_sub(limit)..].to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use netsonde_model::spec::TestKind;
    use netsonde_model::units::{Bytes, Nanos};
    use netsonde_sweep::mesh::{Agent, Mesh, Pattern};

    /// Ten agents all to all, two tests of one size for 2 s, once: 180
    /// measurements of 2.5 s, or 36 batches of five pairs at once.
    #[test]
    fn a_round_is_its_measurements_and_their_setup_shared_among_pairs_at_once() {
        let mut plan = Plan::default_characterization();
        plan.tests = vec![TestKind::TcpStream, TestKind::TcpRr];
        plan.sizes = vec![Bytes(128 * 1024)];
        plan.repeat = 1;
        plan.base.duration = Nanos::from_secs(2);
        plan.base.warmup = Nanos(0);
        let agents = (1..=10)
            .map(|i| Agent::parse(&format!("h{i}=10.0.0.{i}"), 5300).unwrap())
            .collect();
        plan.mesh = Some(Mesh::new(agents, Pattern::parse("all-to-all").unwrap()).unwrap());
        let n = plan.points().0.len();
        assert_eq!(n, 180);
        assert!((round_secs(&plan, 1) - 180.0 * 2.5).abs() < 1e-9);
        assert!((round_secs(&plan, 5) - (180.0 * 2.5 / 5.0 + 36.0)).abs() < 1e-9);
        // More at once than the agents allow (one pair per two agents).
        assert_eq!(round_secs(&plan, 64), round_secs(&plan, 5));
        let every = Duration::from_secs(120);
        let Err(SweepError::Usage(why)) = check_interval(&plan, 5, every, false) else {
            panic!("a 126 s round in a 120 s slot accepted");
        };
        assert!(why.starts_with("a round is estimated at 126 s"), "{why}");
        assert!(check_interval(&plan, 5, every, true).is_ok());
        assert!(check_interval(&plan, 5, Duration::from_secs(900), false).is_ok());
    }
}
