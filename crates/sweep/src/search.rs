//! The loss-free rate search (RFC 2544 §26.1 throughput, in the spirit of
//! FD.io's MLRsearch): the highest offered rate with no loss (NDR) and the
//! highest with loss at or below a ratio (PDR), for one frame size, by trials
//! whose next rate depends on the last results.
//!
//! [`Search`] is sans-IO: it proposes the next trial ([`Search::next`]) and is
//! told what the trial saw ([`Search::record`]). [`SearchSchedule`] searches a
//! run's points one after another as a [`Schedule`] of the executor
//! ([`crate::exec::drive`]), which sweeps use too: each trial is stored as a
//! repetition of its point, and a resumed search goes on from its stored trials.
//!
//! The method:
//! 1. A first trial unpaced finds the most the sender offers (the maximum
//!    offered load). If nothing is lost there, NDR and PDR are that rate: the
//!    sender, not the path, is the limit, and the result says so.
//! 2. Each goal (NDR, then PDR) keeps a lower bound, the highest offered rate of
//!    a trial that met it, and an upper bound, the lowest that did not. A pass
//!    above a failure does not count (the failure is the newer evidence). Without
//!    a lower bound the next rate is just below the forwarding rate the upper
//!    bound's trial saw (what the receiver took); with one, the midpoint between
//!    the lower bound and the upper bound, or 2 precisions above the lowest
//!    forwarding rate seen when that is nearer (a receiver-limited path loses
//!    just above it).
//! 3. A goal is found when its bounds are within `precision` of each other, or
//!    when the upper bound falls below `min_pps`.
//! 4. NDR is confirmed by `final_trials` more trials at its lower bound; a loss
//!    there makes that rate the upper bound and the search goes on.
//!
//! Rates are offered packets per second as the sender reached them (its own
//! count over the measured time), not as asked: a sender that falls short is
//! judged at the rate it sent. A failed trial whose paced sender under-delivered
//! (below 97% of the rate asked: it stalled, and between stalls ran at the rate
//! asked or caught up in a burst) does not set an upper bound: the rate is tried
//! again, and only a second shortfall there makes it one (one search came out
//! 2.4% low when a stalled trial set it), at the rate the sender ran at between
//! its stalls, the ask over its running shortfall, not at the average it
//! offered (a CI search on a busy host ran out of trials after two stalled
//! losses at an ask of 9.1k frames/s put the bound at their 7.6k average, 6.5%
//! under the link's rate and under smooth passes at 8.1k); never where a
//! smooth trial offered as much and met the goal.
//! A sender that falls short when it is not stalled is asked for more: the
//! ask is the rate wanted times the least of asked over offered in its last 5
//! paced trials when that is more than half the precision (at most 1.25
//! times), so that what it offers lands on the rate wanted (a debug build's
//! sender, 4-6% short, kept asking one rate 30 times, each offered under the
//! lower bound; a timer's ±2% scatter rarely raises it).

use netsonde_model::load::{Phase, ProbeKind};
use netsonde_model::result::TestReport;
pub use netsonde_model::search::{
    frame_of, Bounds, BurstOutcome, Goal, LatencyAt, SearchConfig, SearchOutcome, Trial, FRAME_L2,
    FRAME_OVERHEAD, LATENCY_AT, RFC2544_FRAMES, TCP_FRAME_OVERHEAD, WIRE_GAP,
};
use netsonde_model::search::{LATENCY_IDLE, LATENCY_MIN_TRIAL, LATENCY_PROBE_RATE};
use netsonde_model::spec::TestSpec;
use netsonde_model::units::{BitRate, PacketRate};

use crate::back_to_back::Burst;
use crate::exec::{RunError, Schedule, Step, Summary};
use crate::plan::Point;

/// Paced trials whose shortfalls say how far the sender falls short when
/// it is not stalled ([`Search`]'s `running_shortfall`, which raises its ask).
const SHORTFALL_TRIALS: usize = 5;
/// The most the ask is raised over the rate the search wants offered.
const MAX_ASK_RAISE: f64 = 1.25;

/// What to do next.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Next {
    /// Run a trial at this many packets per second; `None`: unpaced.
    Trial(Option<f64>),
    /// The search is over.
    Done,
}

/// One search's state: its trials.
#[derive(Debug, Clone)]
pub struct Search {
    cfg: SearchConfig,
    trials: Vec<Trial>,
}

impl Search {
    /// A new search.
    pub fn new(cfg: SearchConfig) -> Search {
        Search {
            cfg,
            trials: Vec::new(),
        }
    }

    /// The trials so far.
    pub fn trials(&self) -> &[Trial] {
        &self.trials
    }

    /// Adds a trial's outcome.
    pub fn record(&mut self, t: Trial) {
        self.trials.push(t);
    }

    fn meets(&self, goal: Goal, t: &Trial) -> bool {
        match goal {
            Goal::Ndr => t.lost == 0,
            Goal::Pdr => t.loss_ratio() <= self.cfg.loss_ratio,
        }
    }

    /// The rate at which a trial bounds `goal` from above: none when it met
    /// the goal. A smooth trial bounds it at the rate it offered. A trial whose
    /// paced sender under-delivered stalled, and between its stalls ran at the
    /// rate asked or caught up in a burst: its loss says that running rate
    /// loses, not the average it offered. It is tried again, and bounds only
    /// when it falls short twice at that asked rate, at the rate the sender ran
    /// at (the ask over its running shortfall, [`Search::running_shortfall`]),
    /// and only when no smooth trial offered as much and met the goal: then
    /// the path carries that rate, and the loss came from the sender's bursts
    /// (one retransmission in a stalled TCP trial at 70% of a link's rate put
    /// a search's bound there).
    fn fails_at(&self, goal: Goal, t: &Trial) -> Option<f64> {
        if self.meets(goal, t) {
            return None;
        }
        let Some(asked) = t.asked_pps.filter(|_| t.under_delivered()) else {
            return Some(t.offered_pps());
        };
        let twice = self
            .trials
            .iter()
            .filter(|o| o.under_delivered() && o.asked_pps == t.asked_pps)
            .count()
            >= 2;
        let running = (asked / self.running_shortfall()).max(t.offered_pps());
        let carried = self
            .trials
            .iter()
            .any(|o| !o.under_delivered() && self.meets(goal, o) && o.offered_pps() >= running);
        (twice && !carried).then_some(running)
    }

    /// The bounds the trials give `goal`.
    pub fn bounds(&self, goal: Goal) -> Bounds {
        let upper = self
            .trials
            .iter()
            .filter_map(|t| self.fails_at(goal, t))
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.min(v))));
        let lower = self
            .trials
            .iter()
            .filter(|t| self.meets(goal, t))
            .map(Trial::offered_pps)
            .filter(|&v| upper.is_none_or(|u| v < u))
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
        let found = match (lower, upper) {
            (_, None) => !self.trials.is_empty(),
            (Some(l), Some(u)) => u - l <= self.cfg.precision * u,
            (None, Some(u)) => u <= self.cfg.min_pps,
        };
        Bounds {
            lower,
            upper,
            found,
        }
    }

    /// Whether NDR's lower bound has its confirmations: the trial that found it and
    /// `final_trials` more, all without loss.
    fn confirmed(&self, ndr: f64) -> bool {
        let at = self
            .trials
            .iter()
            // The asked rate as a stored trial's spec gives it back: within
            // rounding of the one asked.
            .filter(|t| t.asked_pps.is_some_and(|a| (a - ndr).abs() <= 1e-9 * ndr) && t.lost == 0)
            .count();
        at as u32 > self.cfg.final_trials
    }

    /// Asked over offered of the last [`SHORTFALL_TRIALS`] paced trials,
    /// latest first.
    fn shortfalls(&self) -> impl Iterator<Item = f64> + '_ {
        self.trials
            .iter()
            .rev()
            .filter_map(|t| {
                t.asked_pps
                    .filter(|&a| a > 0.0 && t.offered_pps > 0.0)
                    .map(|a| a / t.offered_pps)
            })
            .take(SHORTFALL_TRIALS)
    }

    /// How far the sender falls short when it is not stalled: the least of
    /// its recent shortfalls ([`Search::shortfalls`]), at least 1 and at most
    /// [`MAX_ASK_RAISE`]. A stall only lowers what one trial offered, so the
    /// best of the last few is the sender running.
    fn running_shortfall(&self) -> f64 {
        self.shortfalls()
            .reduce(f64::min)
            .map_or(1.0, |r| r.clamp(1.0, MAX_ASK_RAISE))
    }

    /// The rate to ask for so that the sender offers `target`. A paced sender on
    /// a busy host falls short of the rate asked, by late timer wake-ups it
    /// does not make up in a burst (a steady 1.2% at 8k frames/s in a debug
    /// build here, 4-6% in another) and by stalls when its CPU is taken
    /// (10-20% on a busy 2-core host); a trial that offers less than the lower
    /// bound teaches the search nothing, and it would ask that rate again. So
    /// once there are 3 paced trials the ask is raised by the sender's running
    /// shortfall ([`Search::running_shortfall`]) when that is more than half
    /// the precision: the offered rate, which is what a trial is judged at,
    /// lands on the target. A shortfall under that still lands a trial asked at
    /// the middle of the bounds between them, and a timer's scatter (±2%) is
    /// not one: the least of 5 scattered trials is rarely that far short.
    fn ask(&self, target: f64) -> f64 {
        if self.shortfalls().count() < 3 {
            return target;
        }
        let running = self.running_shortfall();
        if running > 1.0 + self.cfg.precision / 2.0 {
            target * running
        } else {
            target
        }
    }

    /// The trial to run next.
    pub fn next(&self) -> Next {
        let Some(probe) = self.trials.first() else {
            return Next::Trial(None);
        };
        if self.trials.len() as u32 >= self.cfg.max_trials {
            return Next::Done;
        }
        for goal in [Goal::Ndr, Goal::Pdr] {
            let b = self.bounds(goal);
            if b.found {
                continue;
            }
            let upper = b.upper.unwrap_or_else(|| probe.offered_pps());
            // What the receiver took when offered too much, smoothly: the rate
            // it forwards is usually just under the limit, so it narrows the
            // interval faster than halving from the first upper bound (up to
            // 100x above it).
            let p = self.cfg.precision;
            let forwarding = self
                .trials
                .iter()
                .filter(|t| !t.under_delivered() && self.fails_at(goal, t).is_some())
                .map(Trial::received_pps)
                .fold(f64::INFINITY, f64::min);
            let rate = match b.lower {
                Some(l) => {
                    let estimate = forwarding * (1.0 + 2.0 * p);
                    let top = if estimate > l * (1.0 + p) && estimate < upper {
                        estimate
                    } else {
                        upper
                    };
                    (l + top) / 2.0
                }
                None => {
                    // Just below what the receiver took at the upper bound.
                    let at = self
                        .trials
                        .iter()
                        .filter(|t| self.fails_at(goal, t) == Some(upper))
                        .map(Trial::received_pps)
                        .fold(upper, f64::min);
                    let mut r = at * 0.98;
                    if r >= upper * (1.0 - self.cfg.precision) {
                        r = upper * (1.0 - 2.0 * self.cfg.precision);
                    }
                    r.max(self.cfg.min_pps)
                }
            };
            return Next::Trial(Some(self.ask(rate)));
        }
        // Both found: confirm NDR where it was found at a paced rate.
        let b = self.bounds(Goal::Ndr);
        if let (Some(l), Some(_)) = (b.lower, b.upper) {
            let asked = self
                .trials
                .iter()
                .filter(|t| t.lost == 0 && t.offered_pps() == l)
                .find_map(|t| t.asked_pps);
            if let Some(a) = asked {
                if !self.confirmed(a) {
                    return Next::Trial(Some(a));
                }
            }
        }
        Next::Done
    }

    /// What the search found.
    pub fn outcome(&self) -> SearchOutcome {
        SearchOutcome {
            ndr: self.bounds(Goal::Ndr),
            pdr: self.bounds(Goal::Pdr),
            sender_bound: self.bounds(Goal::Ndr).upper.is_none() && !self.trials.is_empty(),
            trials: self.trials.clone(),
            converged: matches!(self.next(), Next::Done)
                && (self.trials.len() as u32) < self.cfg.max_trials,
            back_to_back: None,
            latency: Vec::new(),
            repeats: Vec::new(),
        }
    }
}

/// The asked rate of a trial of `spec`, packets per second: its rate over its
/// datagram's bits (`None`: unpaced). A live trial and one read back from the
/// store compute it alike.
fn asked_pps(spec: &TestSpec) -> Option<f64> {
    let bits = spec.size.0 as f64 * 8.0;
    spec.rate.filter(|r| r.0 > 0.0).map(|r| r.0 / bits)
}

/// A spec for a trial at `pps` packets per second (`None`: unpaced).
fn at_rate(base: &TestSpec, pps: Option<f64>) -> TestSpec {
    let mut spec = base.clone();
    spec.rate = pps.map(|p| BitRate(p * spec.size.0 as f64 * 8.0));
    spec
}

/// The trial `report` is; an error when it has no UDP counts.
pub fn trial_of(report: &TestReport) -> Result<Trial, RunError> {
    Trial::from_report(asked_pps(&report.spec), report).ok_or_else(|| {
        RunError::failed("the trial's report has neither UDP counts nor the TCP senders' TCP_INFO")
    })
}

/// One stored measurement of a searched point.
#[derive(Debug, Clone, PartialEq)]
pub enum Measured {
    /// A trial at a rate (or unpaced) of the NDR/PDR search.
    Rate(Trial),
    /// A back-to-back burst of this many datagrams.
    Burst(u64, Trial),
    /// A latency trial: probes beside a load at a fraction of NDR (the fraction
    /// is set when the search places it, from its asked rate).
    Latency(Box<LatencyAt>),
}

/// What `report` was in a search: a latency trial carries probes, a burst ends
/// by volume, a rate trial by time.
pub fn measured(report: &TestReport) -> Result<Measured, RunError> {
    let t = trial_of(report)?;
    let spec = &report.spec;
    if spec.probe.is_some() {
        return latency_of(t, report).map(|l| Measured::Latency(Box::new(l)));
    }
    Ok(match spec.volume {
        Some(v) => Measured::Burst(v.0 / spec.size.0.max(1), t),
        None => Measured::Rate(t),
    })
}

/// What a latency trial's UDP probes saw, idle and beside the load.
fn latency_of(trial: Trial, report: &TestReport) -> Result<LatencyAt, RunError> {
    let summary = netsonde_analysis::load::summarize(report).ok_or_else(|| {
        RunError::failed("the latency trial's report has no probes (was --probe refused?)")
    })?;
    let udp = |phase| {
        summary
            .phases
            .iter()
            .find(|p| p.kind == ProbeKind::Udp && p.phase == phase)
            .cloned()
    };
    let exact = summary.one_way.as_ref().filter(|o| o.clock == "exact");
    Ok(LatencyAt {
        fraction: f64::NAN,
        trial,
        idle: udp(Phase::Idle),
        loaded: udp(Phase::Loaded),
        one_way_ms: exact.and_then(|o| o.up_loaded_ms),
        one_way_idle_ms: exact.and_then(|o| o.up_idle_ms),
    })
}

/// A latency trial at `pps`: the load at that rate for at least
/// [`LATENCY_MIN_TRIAL`], with UDP, TCP and connection probes at
/// [`LATENCY_PROBE_RATE`] a second, alone for [`LATENCY_IDLE`] before and after.
pub fn latency_spec(base: &TestSpec, pps: f64) -> TestSpec {
    let mut spec = at_rate(base, Some(pps));
    spec.duration = spec.duration.max(LATENCY_MIN_TRIAL);
    spec.probe = Some(netsonde_model::spec::ProbeSpec {
        rate: LATENCY_PROBE_RATE,
        idle: LATENCY_IDLE,
    });
    spec
}

/// A burst of `n` datagrams at full rate: unpaced, no warm-up (the burst is the
/// first thing sent), ended by its volume; time only caps it.
fn burst_spec(base: &TestSpec, n: u64) -> TestSpec {
    let mut spec = at_rate(base, None);
    spec.warmup = netsonde_model::units::Nanos::ZERO;
    spec.volume = Some(netsonde_model::units::Bytes(n * spec.size.0));
    spec.duration = netsonde_model::units::Nanos(base.duration.0.saturating_mul(2));
    spec
}

/// One point's search: the rates, then (when asked) the bursts.
#[derive(Debug, Clone)]
struct PointSearch {
    rates: Search,
    bursts: Option<Burst>,
    latency: Vec<LatencyAt>,
}

impl PointSearch {
    fn new(cfg: SearchConfig, stored: &[Measured]) -> PointSearch {
        let mut p = PointSearch {
            rates: Search::new(cfg),
            bursts: None,
            latency: Vec::new(),
        };
        for m in stored {
            p.record(m.clone());
        }
        p
    }

    fn record(&mut self, m: Measured) {
        match m {
            Measured::Rate(t) => self.rates.record(t),
            Measured::Latency(mut l) => {
                l.fraction = l
                    .trial
                    .asked_pps
                    .and_then(|a| self.latency_fraction(a))
                    .unwrap_or(f64::NAN);
                self.latency.push(*l)
            }
            Measured::Burst(n, t) => {
                let longest = self.longest();
                self.bursts
                    .get_or_insert_with(|| Burst::new(self.rates.cfg, longest))
                    .record(n, t)
            }
        }
    }

    /// A whole trial's worth at full rate: what the unpaced probe sent.
    fn longest(&self) -> u64 {
        self.rates
            .trials()
            .iter()
            .find(|t| t.asked_pps.is_none())
            .map_or(1, |t| t.sent)
    }

    fn measurements(&self) -> usize {
        self.rates.trials().len()
            + self.bursts.as_ref().map_or(0, Burst::measurements)
            + self.latency.len()
    }

    /// The rate latency is measured against: the asked rate of the NDR trials
    /// (so that 100% repeats them), or the unpaced probe's offered rate when the
    /// sender was the limit; `None` when nothing passed.
    /// The rate to ask for latency at `fraction` of NDR: that share of the NDR
    /// shown (the offered rate of the trial that found it), so "10% of NDR" is
    /// 10% of the figure in the table and "at NDR" is never above it (asking
    /// the NDR trial's own asked rate again could offer more than it did).
    fn latency_rate(&self, fraction: f64) -> Option<f64> {
        Some(fraction * self.rates.bounds(Goal::Ndr).lower?)
    }

    /// The fraction of NDR a latency trial that asked `asked` was placed at.
    fn latency_fraction(&self, asked: f64) -> Option<f64> {
        let ndr = self.rates.bounds(Goal::Ndr).lower.filter(|&n| n > 0.0)?;
        Some(asked / ndr)
    }

    /// The next latency trial's rate, once the rates and bursts are found.
    fn next_latency(&self) -> Option<f64> {
        if !self.rates.cfg.latency {
            return None;
        }
        LATENCY_AT
            .into_iter()
            .find(|f| !self.latency.iter().any(|l| (l.fraction - f).abs() < 1e-6))
            .and_then(|f| self.latency_rate(f))
    }

    /// The next burst, once the rates are found; `None` when there is none to run.
    fn next_burst(&mut self) -> Option<u64> {
        let cfg = self.rates.cfg;
        let o = self.rates.outcome();
        // Nothing lost unpaced for a whole trial: no burst can lose either.
        if !cfg.back_to_back || o.sender_bound || o.trials.is_empty() {
            return None;
        }
        let longest = self.longest();
        self.bursts
            .get_or_insert_with(|| Burst::new(cfg, longest))
            .next()
    }

    /// The next measurement's spec from the point's `base`; `None`: this search
    /// is over.
    fn next_spec(&mut self, base: &TestSpec) -> Option<TestSpec> {
        if let Next::Trial(pps) = self.rates.next() {
            return Some(at_rate(base, pps));
        }
        if let Some(n) = self.next_burst() {
            return Some(burst_spec(base, n));
        }
        self.next_latency().map(|pps| latency_spec(base, pps))
    }

    fn outcome(&self) -> SearchOutcome {
        let mut o = self.rates.outcome();
        let cfg = self.rates.cfg;
        o.back_to_back = match &self.bursts {
            Some(b) => Some(b.outcome()),
            None if cfg.back_to_back && o.sender_bound => Some(BurstOutcome {
                lower: Some(self.longest()),
                upper: None,
                found: true,
                trials: Vec::new(),
            }),
            None => None,
        };
        if let Some(b) = &o.back_to_back {
            o.converged &= b.found;
        }
        o.latency = self.latency.clone();
        o
    }
}

/// A point's independent searches (`SearchConfig::searches`), one after another.
/// Each starts with its unpaced probe, so stored measurements split into their
/// searches there.
#[derive(Debug, Clone)]
struct PointSearches {
    cfg: SearchConfig,
    runs: Vec<PointSearch>,
}

impl PointSearches {
    fn new(cfg: SearchConfig, stored: &[Measured]) -> PointSearches {
        let mut p = PointSearches {
            cfg,
            runs: vec![PointSearch::new(cfg, &[])],
        };
        for m in stored {
            p.record(m.clone());
        }
        p
    }

    fn record(&mut self, m: Measured) {
        let starts = matches!(&m, Measured::Rate(t) if t.asked_pps.is_none());
        let last = self.runs.last_mut().expect("one search at least");
        if starts && !last.rates.trials().is_empty() {
            self.runs.push(PointSearch::new(self.cfg, &[]));
        }
        self.runs.last_mut().expect("pushed").record(m);
    }

    fn measurements(&self) -> usize {
        self.runs.iter().map(PointSearch::measurements).sum()
    }

    /// The next measurement, starting the next search when one is over.
    fn next_spec(&mut self, base: &TestSpec) -> Option<TestSpec> {
        let last = self.runs.last_mut().expect("one search at least");
        if let Some(spec) = last.next_spec(base) {
            return Some(spec);
        }
        if (self.runs.len() as u32) < self.cfg.searches.max(1) {
            self.runs.push(PointSearch::new(self.cfg, &[]));
            return self.runs.last_mut().expect("pushed").next_spec(base);
        }
        None
    }

    /// The first search's outcome, with the others as its `repeats`.
    fn outcome(&self) -> SearchOutcome {
        let mut o = self.runs[0].outcome();
        o.repeats = self.runs[1..].iter().map(PointSearch::outcome).collect();
        o.converged &= o.repeats.iter().all(|r| r.converged)
            && self.runs.len() as u32 >= self.cfg.searches.max(1);
        o
    }
}

/// What a point's stored measurements say: the outcome the searches that made
/// them would give (a report shows this version's search of the stored trials).
pub fn replay(cfg: SearchConfig, stored: &[Measured]) -> SearchOutcome {
    PointSearches::new(cfg, stored).outcome()
}

/// Searches each pending point in turn, as a [`Schedule`] for the executor: each
/// trial is one measurement of its point (stored as a repetition), and a point is
/// complete when its search is over ([`Summary::Search`]). A resumed run hands it
/// the measurements already stored; the search picks up where they leave it,
/// since it decides only from them.
#[derive(Debug)]
pub struct SearchSchedule {
    cfg: SearchConfig,
    queue: std::collections::VecDeque<(u32, Vec<Measured>)>,
    current: Option<(u32, PointSearches)>,
}

impl SearchSchedule {
    /// Searches `pending` points, each with the measurements it already has.
    pub fn new(cfg: SearchConfig, pending: Vec<(u32, Vec<Measured>)>) -> SearchSchedule {
        SearchSchedule {
            cfg,
            queue: pending.into(),
            current: None,
        }
    }

    /// Each point still to search, and about how many measurements it needs.
    fn left(&self) -> impl Iterator<Item = (u32, usize)> + '_ {
        let latency = if self.cfg.latency {
            LATENCY_AT.len()
        } else {
            0
        };
        let per = (self.cfg.expected_trials() as usize * if self.cfg.back_to_back { 2 } else { 1 }
            + latency)
            * self.cfg.searches.max(1) as usize;
        let current = self
            .current
            .as_ref()
            .map(|(i, s)| (*i, per.saturating_sub(s.measurements()).max(1)));
        current.into_iter().chain(
            self.queue
                .iter()
                .map(move |(i, t)| (*i, per.saturating_sub(t.len()).max(1))),
        )
    }
}

impl Schedule for SearchSchedule {
    fn next(&mut self, points: &[Point]) -> Step {
        let (idx, search) = match &mut self.current {
            Some(c) => c,
            None => match self.queue.pop_front() {
                None => return Step::Done,
                Some((idx, stored)) => self
                    .current
                    .insert((idx, PointSearches::new(self.cfg, &stored))),
            },
        };
        let idx = *idx;
        let rep = search.measurements() as u32;
        let Some(base) = points.get(idx as usize).map(|p| &p.spec) else {
            // A missing point gets no spec; the executor reports it.
            return Step::Measure {
                idx,
                rep,
                spec: None,
            };
        };
        if let Some(spec) = search.next_spec(base) {
            return Step::Measure {
                idx,
                rep,
                spec: Some(spec),
            };
        }
        let summary = Summary::Search(search.outcome());
        self.current = None;
        Step::Complete { idx, summary }
    }

    fn record(&mut self, idx: u32, _: u32, report: &TestReport) -> Result<(), RunError> {
        let m = measured(report)?;
        match &mut self.current {
            Some((i, s)) if *i == idx => {
                s.record(m);
                Ok(())
            }
            _ => Err(RunError::failed(format!(
                "a trial of point {idx}, which is not being searched"
            ))),
        }
    }

    fn failed(&mut self, idx: u32) {
        if self.current.as_ref().is_some_and(|(i, _)| *i == idx) {
            self.current = None;
        }
    }

    fn headline(&self, report: &TestReport) -> String {
        match measured(report) {
            Ok(Measured::Rate(t)) => t.to_string(),
            Ok(Measured::Burst(n, t)) => format!(
                "burst of {n} at full rate: {} sent, {} lost (kernel: {} at full receive buffers)",
                t.sent,
                t.lost,
                t.rcvbuf_errors.unwrap_or(0)
            ),
            Ok(Measured::Latency(l)) => format!(
                "latency beside {}: {}",
                PacketRate(l.trial.offered_pps()),
                l.loaded
                    .as_ref()
                    .and_then(|p| Some(format!(
                        "round trip median {}, 90th {} over {} probes",
                        p.p50?, p.p90?, p.answered
                    )))
                    .unwrap_or_else(|| "no probe answered".into())
            ),
            Err(e) => e.to_string(),
        }
    }

    fn remaining(&self) -> usize {
        self.left().map(|(_, n)| n).sum()
    }

    fn remaining_secs(&self, points: &[Point]) -> f64 {
        // Each search of a point ends with its latency trials.
        let latency = if self.cfg.latency {
            LATENCY_AT.len() * self.cfg.searches.max(1) as usize
        } else {
            0
        };
        self.left()
            .filter_map(|(idx, n)| Some((points.get(idx as usize)?, n)))
            .map(|(p, n)| {
                // Latency trials last longer; bursts are a fraction of a trial.
                let lat = latency.min(n);
                let lat_secs =
                    lat as f64 * crate::exec::measuring_secs(&latency_spec(&p.spec, 1.0));
                lat_secs + (n - lat) as f64 * crate::exec::measuring_secs(&p.spec)
            })
            .sum()
    }
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod tests;
