//! The loss-free rate search (RFC 2544 §26.1 throughput, in the spirit of
//! FD.io's MLRsearch): the highest offered rate with no loss (NDR) and the
//! highest with loss at or below a ratio (PDR), for one frame size, by trials
//! whose next rate depends on the last results.
//!
//! [`Search`] is sans-IO: it proposes the next trial ([`Search::next`]) and is
//! told what the trial saw ([`Search::record`]); [`run`] drives it with any
//! [`Runner`] (the real client, or a scripted one in tests).
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
//! judged at the rate it sent.

use netsonde_model::result::TestReport;
use netsonde_model::spec::TestSpec;
use netsonde_model::units::BitRate;
use serde::{Deserialize, Serialize};

use crate::exec::{RunError, Runner};

/// Ethernet bytes of a frame beyond the IP packet that RFC 2544's frame sizes
/// count: MAC header 14 and FCS 4.
pub const FRAME_L2: u32 = 18;
/// Bytes a frame carries beyond its UDP payload: L2 18, IPv4 20, UDP 8.
pub const FRAME_OVERHEAD: u32 = FRAME_L2 + 28;
/// Bytes on the wire per frame beyond the frame: preamble 8, inter-frame gap 12.
pub const WIRE_GAP: u32 = 20;
/// RFC 2544's frame sizes for Ethernet (§9.1), in bytes.
pub const RFC2544_FRAMES: [u32; 7] = [64, 128, 256, 512, 1024, 1280, 1518];

/// How a search runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SearchConfig {
    /// PDR's loss ratio (0.005 is 0.5%).
    pub loss_ratio: f64,
    /// The bounds' relative width at which a goal is found (0.01 is 1%).
    pub precision: f64,
    /// Below this many packets per second a goal is given up (nothing passes).
    pub min_pps: f64,
    /// Trials at the NDR found that must see no loss.
    pub final_trials: u32,
    /// At most this many trials in all.
    pub max_trials: u32,
}

impl Default for SearchConfig {
    fn default() -> SearchConfig {
        SearchConfig {
            loss_ratio: 0.005,
            precision: 0.01,
            min_pps: 100.0,
            final_trials: 2,
            max_trials: 40,
        }
    }
}

impl SearchConfig {
    /// About how many trials one search takes (for the estimate a user sees before
    /// it starts): the probe, a few narrowing steps per goal, and the confirmations.
    pub fn expected_trials(&self) -> u32 {
        let halvings = (1.0 / self.precision.max(1e-6)).log2().ceil() as u32;
        (1 + 2 * (2 + halvings / 2) + self.final_trials).min(self.max_trials)
    }
}

/// What one trial saw.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    /// The rate asked, in packets per second; `None` for the unpaced probe.
    pub asked_pps: Option<f64>,
    /// The rate offered: datagrams per second the sender sent in its measured
    /// interval.
    pub offered_pps: f64,
    /// Datagrams the sender sent in its measured interval.
    pub sent: u64,
    /// Datagrams lost of those.
    pub lost: u64,
    /// Datagrams the host's kernel dropped at full receive buffers
    /// (`RcvbufErrors`) during the trial: the receiver could not keep up.
    pub rcvbuf_errors: u64,
    /// Datagrams dropped on the sending host (`SndbufErrors`): at a full send
    /// buffer, or by a qdisc or device queue there (the kernel counts both).
    pub sndbuf_errors: u64,
}

impl Trial {
    /// The offered rate, packets per second.
    pub fn offered_pps(&self) -> f64 {
        self.offered_pps
    }

    /// The forwarding rate: packets per second that arrived.
    pub fn received_pps(&self) -> f64 {
        self.offered_pps * (1.0 - self.loss_ratio())
    }

    /// Lost over sent.
    pub fn loss_ratio(&self) -> f64 {
        if self.sent == 0 {
            0.0
        } else {
            self.lost as f64 / self.sent as f64
        }
    }

    /// The trial of a UDP stream's report: its first direction's counts over the
    /// measured interval, and the kernel's drop counters over it (one host's when
    /// both ends share it).
    pub fn from_report(asked_pps: Option<f64>, r: &TestReport) -> Option<Trial> {
        let d = r.directions.first()?;
        let udp = d.udp.as_ref()?;
        let sent = d.datagrams_sent_measured?;
        let drops = |s: &netsonde_model::result::SideResult| {
            s.cpu.as_ref().and_then(|c| c.udp_drops).unwrap_or_default()
        };
        let (c, s) = (drops(&r.client), drops(&r.server));
        let one_host = r.client.same_host(&r.server);
        Some(Trial {
            asked_pps,
            offered_pps: d.messages_per_sec,
            sent,
            lost: udp.lost,
            rcvbuf_errors: if one_host {
                c.rcvbuf_errors.max(s.rcvbuf_errors)
            } else {
                c.rcvbuf_errors + s.rcvbuf_errors
            },
            sndbuf_errors: if one_host {
                c.sndbuf_errors.max(s.sndbuf_errors)
            } else {
                c.sndbuf_errors + s.sndbuf_errors
            },
        })
    }
}

/// NDR or PDR.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Goal {
    /// No loss.
    Ndr,
    /// Loss at or below the configured ratio.
    Pdr,
}

/// What the trials say about one goal.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bounds {
    /// The highest offered rate that met the goal (below every failure), pps.
    pub lower: Option<f64>,
    /// The lowest offered rate that did not, pps; `None` if every trial met it.
    pub upper: Option<f64>,
    /// Whether the bounds are as close as asked (or nothing passes above the
    /// floor, or nothing failed).
    pub found: bool,
}

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

    /// The bounds the trials give `goal`.
    pub fn bounds(&self, goal: Goal) -> Bounds {
        let upper = self
            .trials
            .iter()
            .filter(|t| !self.meets(goal, t))
            .map(Trial::offered_pps)
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
            .filter(|t| t.asked_pps.is_some_and(|a| a == ndr) && t.lost == 0)
            .count();
        at as u32 > self.cfg.final_trials
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
            // What the receiver took when offered too much: the rate it forwards
            // is usually just under the limit, so it narrows the interval faster
            // than halving from the first upper bound (up to 100x above it).
            let p = self.cfg.precision;
            let forwarding = self
                .trials
                .iter()
                .filter(|t| !self.meets(goal, t))
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
                        .filter(|t| t.offered_pps() == upper)
                        .map(Trial::received_pps)
                        .fold(upper, f64::min);
                    let mut r = at * 0.98;
                    if r >= upper * (1.0 - self.cfg.precision) {
                        r = upper * (1.0 - 2.0 * self.cfg.precision);
                    }
                    r.max(self.cfg.min_pps)
                }
            };
            return Next::Trial(Some(rate));
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
        }
    }
}

/// A finished search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchOutcome {
    /// No-drop rate bounds.
    pub ndr: Bounds,
    /// Partial-drop rate bounds.
    pub pdr: Bounds,
    /// Nothing was lost even unpaced: the sender is the limit.
    pub sender_bound: bool,
    /// Every trial, in order.
    pub trials: Vec<Trial>,
    /// False when the trial budget ran out first.
    pub converged: bool,
}

/// Runs one search of `base` (a UDP stream; its size is the datagram's payload)
/// through `runner`, calling `each` after every trial.
pub fn run(
    runner: &mut dyn Runner,
    base: &TestSpec,
    cfg: SearchConfig,
    each: &mut dyn FnMut(&Trial),
) -> Result<SearchOutcome, RunError> {
    let mut s = Search::new(cfg);
    let bits_per_packet = base.size.0 as f64 * 8.0;
    while let Next::Trial(pps) = s.next() {
        let mut spec = base.clone();
        spec.rate = pps.map(|p| BitRate(p * bits_per_packet));
        let report = runner.run(&spec)?;
        let t = Trial::from_report(pps, &report).ok_or_else(|| {
            RunError::Failed("the trial's report has no UDP counts (is it a udp-stream?)".into())
        })?;
        each(&t);
        s.record(t);
    }
    Ok(s.outcome())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scripted path: the sender reaches `max` pps; the receiver takes at most
    /// `cap` pps and loses the rest.
    fn trial(asked: Option<f64>, max: f64, cap: f64) -> Trial {
        let offered = asked.unwrap_or(max).min(max);
        let sent = offered as u64;
        let got = cap.min(sent as f64) as u64;
        Trial {
            asked_pps: asked,
            offered_pps: offered,
            sent,
            lost: sent - got,
            rcvbuf_errors: sent - got,
            sndbuf_errors: 0,
        }
    }

    fn search(max: f64, cap: f64, cfg: SearchConfig) -> SearchOutcome {
        let mut s = Search::new(cfg);
        while let Next::Trial(pps) = s.next() {
            s.record(trial(pps, max, cap));
        }
        s.outcome()
    }

    #[test]
    fn a_receiver_limit_is_found_within_the_precision() {
        let cfg = SearchConfig::default();
        for cap in [1_000.0, 123_456.0, 790_000.0] {
            let o = search(1_000_000.0, cap, cfg);
            assert!(o.converged, "{o:?}");
            let ndr = o.ndr.lower.unwrap();
            assert!(
                ndr <= cap * (1.0 + 1e-9) && ndr >= cap * (1.0 - cfg.precision),
                "cap {cap}: {o:?}"
            );
            // PDR: up to 0.5% lost, so up to cap / 0.995.
            let pdr = o.pdr.lower.unwrap();
            let want = cap / (1.0 - cfg.loss_ratio);
            assert!(
                pdr <= want * (1.0 + 1e-9) && pdr >= want * (1.0 - cfg.precision),
                "{pdr} vs {want}"
            );
            // NDR was confirmed by its final trials.
            let at = o
                .trials
                .iter()
                .filter(|t| t.offered_pps() == ndr && t.lost == 0)
                .count();
            assert!(at as u32 > cfg.final_trials, "{at}");
            assert!(
                o.trials.len() as u32 <= cfg.expected_trials() + 6,
                "{}",
                o.trials.len()
            );
        }
    }

    #[test]
    fn a_sender_that_loses_nothing_is_the_limit() {
        let o = search(500_000.0, 1e9, SearchConfig::default());
        assert!(o.sender_bound);
        assert_eq!(o.trials.len(), 1);
        assert_eq!(o.ndr.lower, Some(500_000.0));
    }

    #[test]
    fn nothing_passing_above_the_floor_ends_the_search() {
        let o = search(1e6, 0.0, SearchConfig::default());
        assert!(o.converged);
        assert_eq!(o.ndr.lower, None);
        assert!(o.ndr.upper.unwrap() <= 100.0);
    }

    #[test]
    fn a_loss_at_the_confirmation_reopens_the_search() {
        let cfg = SearchConfig::default();
        let mut s = Search::new(cfg);
        let mut flaky_once = true;
        while let Next::Trial(pps) = s.next() {
            let mut t = trial(pps, 1e6, 50_000.0);
            // The first confirmation at the found rate loses one packet.
            let b = s.bounds(Goal::Ndr);
            if flaky_once && b.found && b.lower.is_some() && t.lost == 0 {
                t.lost = 1;
                flaky_once = false;
            }
            s.record(t);
        }
        let o = s.outcome();
        assert!(!flaky_once);
        let ndr = o.ndr.lower.unwrap();
        assert!(
            ndr < 50_000.0 * (1.0 - cfg.precision / 2.0) && ndr > 45_000.0,
            "{o:?}"
        );
    }

    #[test]
    fn a_runaway_search_stops_at_its_trial_budget() {
        let cfg = SearchConfig {
            precision: 1e-9,
            max_trials: 12,
            ..SearchConfig::default()
        };
        let o = search(1e6, 400_000.0, cfg);
        assert_eq!(o.trials.len(), 12);
        assert!(!o.converged);
    }
}
