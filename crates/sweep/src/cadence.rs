//! When a monitor's rounds run (`netsonde monitor --every`): slot `k` begins
//! `k` intervals after the monitor started, each round a random share of the
//! interval into its slot (`--jitter`), so monitors started together do not
//! stay in step. A round that runs past the next slot's start makes that slot
//! (and any other it covers) skipped and said, not stacked: the next round
//! starts in the first slot that begins after it ended. Sans-IO: the caller
//! owns the clock and the random draw.

use std::time::Duration;

/// A monitor's schedule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cadence {
    /// The interval between slots.
    pub every: Duration,
    /// The largest random delay of a round into its slot, as a share of the
    /// interval (0 to 0.5).
    pub jitter: f64,
}

/// The next round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Next {
    /// Its slot.
    pub slot: u64,
    /// When it starts, from the monitor's start.
    pub at: Duration,
    /// Slots skipped because the last round overran them.
    pub skipped: u64,
}

impl Cadence {
    /// The largest jitter allowed: half the interval, so a round never starts
    /// in its neighbour's half.
    pub const MAX_JITTER: f64 = 0.5;

    /// The round after the one in `slot` that ended at `ended` (from the
    /// monitor's start); `draw` is a uniform random number in `[0, 1)`.
    pub fn next(&self, slot: u64, ended: Duration, draw: f64) -> Next {
        let every = self.every.as_nanos().max(1);
        let ended = ended.as_nanos();
        // The first slot after `slot` whose start is not before the end.
        let first = slot + 1;
        let first_start = u128::from(first) * every;
        let next = if ended <= first_start {
            first
        } else {
            let past = (ended - first_start).div_ceil(every);
            first + u64::try_from(past).unwrap_or(u64::MAX - first)
        };
        Next {
            slot: next,
            at: self.start_of(next, draw),
            skipped: next - first,
        }
    }

    /// With `--phase`: how long from `now_unix` (seconds since the epoch,
    /// fractional) until the wall clock next reads `phase` into an interval
    /// (slots then begin at the same moments of the clock whenever a monitor
    /// starts, so two monitors given different phases never overlap).
    pub fn until_phase(&self, phase: Duration, now_unix: f64) -> Duration {
        let every = self.every.as_secs_f64();
        if every <= 0.0 {
            return Duration::ZERO;
        }
        let wait = (phase.as_secs_f64() - now_unix).rem_euclid(every);
        Duration::from_secs_f64(wait)
    }

    /// When slot `slot`'s round starts: its beginning plus its jitter.
    pub fn start_of(&self, slot: u64, draw: f64) -> Duration {
        let share = self.jitter.clamp(0.0, Self::MAX_JITTER) * draw.clamp(0.0, 1.0);
        self.every * u32::try_from(slot).unwrap_or(u32::MAX) + self.every.mul_f64(share)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_phase_is_a_moment_of_the_wall_clocks_interval() {
        let c = Cadence {
            every: Duration::from_secs(900),
            jitter: 0.0,
        };
        // 10:07:00 UTC: 420 s into a quarter hour.
        let now = 1_795_000_020.0;
        assert_eq!(now % 900.0, 420.0);
        assert_eq!(
            c.until_phase(Duration::from_secs(450), now),
            Duration::from_secs(30)
        );
        assert_eq!(c.until_phase(Duration::ZERO, now), Duration::from_secs(480));
        assert_eq!(c.until_phase(Duration::from_secs(420), now), Duration::ZERO);
    }

    fn c(jitter: f64) -> Cadence {
        Cadence {
            every: Duration::from_secs(60),
            jitter,
        }
    }

    #[test]
    fn a_round_within_its_slot_is_followed_by_the_next() {
        let n = c(0.0).next(0, Duration::from_secs(20), 0.0);
        assert_eq!(
            n,
            Next {
                slot: 1,
                at: Duration::from_secs(60),
                skipped: 0
            }
        );
    }

    #[test]
    fn an_overrun_skips_the_slots_it_covered_and_never_stacks() {
        // Slot 3 began at 180 s; the round ended at 250 s: slot 4 (240 s) is
        // skipped, slot 5 (300 s) is next.
        let n = c(0.0).next(3, Duration::from_secs(250), 0.0);
        assert_eq!((n.slot, n.skipped, n.at), (5, 1, Duration::from_secs(300)));
        // Ending exactly at a slot's start is in time for it.
        assert_eq!(c(0.0).next(0, Duration::from_secs(60), 0.0).skipped, 0);
    }

    #[test]
    fn jitter_delays_a_round_into_its_slot_and_no_further_than_half() {
        assert_eq!(c(0.1).start_of(2, 0.5), Duration::from_secs(123));
        assert_eq!(c(3.0).start_of(0, 0.999).as_secs(), 29);
    }
}
