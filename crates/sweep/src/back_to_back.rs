//! The back-to-back search (RFC 2544 §26.4), sans-IO as the rate search
//! ([`crate::search`]) is: it proposes the next burst and is told what it saw.

use netsonde_model::search::{BurstOutcome, SearchConfig, Trial};

/// The back-to-back search (RFC 2544 §26.4): bursts at the sender's full rate,
/// each alone, for the longest that loses nothing. It starts from a whole trial's
/// worth (the unpaced probe's count), halves until a burst passes, then bisects
/// to `precision` (at least one datagram), and confirms the longest that passed
/// `final_trials` more times.
#[derive(Debug, Clone)]
pub struct Burst {
    cfg: SearchConfig,
    longest: u64,
    trials: Vec<(u64, Trial)>,
}

impl Burst {
    /// A search from bursts of `longest` datagrams down.
    pub fn new(cfg: SearchConfig, longest: u64) -> Burst {
        Burst {
            cfg,
            longest: longest.max(1),
            trials: Vec::new(),
        }
    }

    /// The bursts so far.
    pub fn measurements(&self) -> usize {
        self.trials.len()
    }

    /// Adds a burst's outcome.
    pub fn record(&mut self, n: u64, t: Trial) {
        self.trials.push((n, t));
    }

    fn bounds(&self) -> (Option<u64>, Option<u64>) {
        let upper = self
            .trials
            .iter()
            .filter(|(_, t)| t.lost > 0)
            .map(|(n, _)| *n)
            .min();
        let lower = self
            .trials
            .iter()
            .filter(|(n, t)| t.lost == 0 && upper.is_none_or(|u| *n < u))
            .map(|(n, _)| *n)
            .max();
        (lower, upper)
    }

    fn close(&self, l: u64, u: u64) -> bool {
        u - l <= ((self.cfg.precision * u as f64) as u64).max(1)
    }

    /// The next burst's length, or `None` when the search is over.
    pub fn next(&self) -> Option<u64> {
        if self.trials.len() as u32 >= self.cfg.max_trials {
            return None;
        }
        match self.bounds() {
            _ if self.trials.is_empty() => Some(self.longest),
            (_, None) => None,
            (None, Some(u)) => (u > 1).then_some(u / 2),
            (Some(l), Some(u)) if self.close(l, u) => {
                let passed = self
                    .trials
                    .iter()
                    .filter(|(n, t)| *n == l && t.lost == 0)
                    .count();
                (passed as u32 <= self.cfg.final_trials).then_some(l)
            }
            (Some(l), Some(u)) => Some(l + (u - l) / 2),
        }
    }

    /// What the bursts found.
    pub fn outcome(&self) -> BurstOutcome {
        let (lower, upper) = self.bounds();
        BurstOutcome {
            lower,
            upper,
            found: self.next().is_none() && (self.trials.len() as u32) < self.cfg.max_trials,
            trials: self.trials.clone(),
        }
    }
}
