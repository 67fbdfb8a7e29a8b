//! The data path's clock: nanoseconds since a test's start, read once per
//! message.
//!
//! A sender stamps every datagram with its send time and a receiver every
//! arrival with its own (RFC 3550 jitter needs both per datagram), so at 64-byte
//! datagrams the clock is read about a million times a second at each end. Read
//! through `std::time::Instant` that is a vDSO `clock_gettime` (about 16 ns on
//! a KVM guest) and then `timespec` arithmetic (a subtraction with a carry, a
//! 128-bit multiply) per message. [`NsClock`] reads the CPU's invariant time
//! stamp counter instead where the CPU has one (`rdtsc`, about 7 ns) and scales
//! it with one multiply and one shift, calibrated once per process against
//! `CLOCK_MONOTONIC` by `quanta`; elsewhere it reads `CLOCK_MONOTONIC` itself.
//! Either way it yields plain `u64` nanoseconds since the test's `t0`, which the
//! loops compare and subtract as integers; an [`Instant`] is made from them only
//! where one is kept (a phase boundary, a wait's deadline).

use std::sync::OnceLock;
use std::time::{Duration, Instant};

static SOURCE: OnceLock<quanta::Clock> = OnceLock::new();

fn source() -> &'static quanta::Clock {
    SOURCE.get_or_init(quanta::Clock::new)
}

/// Calibrates the clock for this process now (up to 200 ms, once), so that the
/// first test's start does not pay for it. Called when a session is set up.
pub fn calibrate() {
    source();
}

/// Nanoseconds since a test's `t0`, as a `u64`. Copy, one per test.
#[derive(Debug, Clone, Copy)]
pub struct NsClock {
    /// The calibrated source, held so a read does not look it up.
    src: &'static quanta::Clock,
    raw0: u64,
    /// `t0`'s distance from `raw0`, in ns (negative when `t0` is ahead).
    ns0: i64,
}

impl NsClock {
    /// A clock whose zero is `t0`.
    pub fn since(t0: Instant) -> NsClock {
        let c = source();
        let raw0 = c.raw();
        let now = Instant::now();
        let behind = now.saturating_duration_since(t0).as_nanos() as i64;
        let ahead = t0.saturating_duration_since(now).as_nanos() as i64;
        NsClock {
            src: c,
            raw0,
            ns0: behind - ahead,
        }
    }

    /// Nanoseconds since `t0` (0 before it).
    #[inline]
    pub fn now(&self) -> u64 {
        let c = self.src;
        let d = c.delta_as_nanos(self.raw0, c.raw());
        (self.ns0 + d as i64).max(0) as u64
    }

    /// The instant `ns` after `t0`.
    pub fn instant(t0: Instant, ns: u64) -> Instant {
        t0 + Duration::from_nanos(ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_keeps_time_with_the_monotonic_clock() {
        let t0 = Instant::now();
        let c = NsClock::since(t0);
        let a = c.now();
        std::thread::sleep(Duration::from_millis(50));
        let b = c.now();
        let by_std = t0.elapsed().as_nanos() as u64;
        assert!(a < 5_000_000, "{a} ns at the start");
        assert!(b >= a + 50_000_000, "{a} then {b}");
        // Within 1% (and 1 ms) of std's own reading taken right after.
        assert!(
            by_std.abs_diff(b) < 1_000_000 + by_std / 100,
            "{b} vs {by_std}"
        );
    }

    #[test]
    fn a_start_ahead_reads_zero_until_it_comes() {
        let t0 = Instant::now() + Duration::from_millis(30);
        let c = NsClock::since(t0);
        assert_eq!(c.now(), 0);
        std::thread::sleep(Duration::from_millis(40));
        assert!(c.now() > 5_000_000);
    }
}
