//! This process's own CPU use, from `getrusage(RUSAGE_SELF)`.
//!
//! This is what iperf3 reports as "CPU utilization". It is only part of the cost of a
//! test: see the crate docs for what it misses.

use crate::sys::usage::{rusage_self, Stamp};
use netsonde_model::units::Nanos;

use crate::CpuError;

/// Process usage snapshot from `getrusage(RUSAGE_SELF)`, cumulative since the process
/// started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RusageSnapshot {
    /// User CPU time.
    pub user: Nanos,
    /// System CPU time.
    pub sys: Nanos,
    /// Voluntary context switches (the process blocked).
    pub voluntary_ctxsw: u64,
    /// Involuntary context switches (the process was preempted).
    pub involuntary_ctxsw: u64,
}

/// Reads this process's resource usage now (all threads).
pub fn read_rusage() -> Result<RusageSnapshot, CpuError> {
    let usage = rusage_self().map_err(|source| CpuError::Rusage { source })?;
    Ok(RusageSnapshot {
        user: timeval_nanos(usage.user),
        sys: timeval_nanos(usage.sys),
        voluntary_ctxsw: u64::try_from(usage.nvcsw).unwrap_or(0),
        involuntary_ctxsw: u64::try_from(usage.nivcsw).unwrap_or(0),
    })
}

/// A `timeval` as nanoseconds; negative values (never produced by getrusage) read as 0.
fn timeval_nanos((sec, usec): Stamp) -> Nanos {
    let secs = u64::try_from(sec).unwrap_or(0);
    let micros = u64::try_from(usec).unwrap_or(0);
    Nanos(
        secs.saturating_mul(1_000_000_000)
            .saturating_add(micros * 1_000),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeval_converts_to_nanos() {
        assert_eq!(timeval_nanos((2, 500_000)), Nanos(2_500_000_000));
        assert_eq!(timeval_nanos((0, 1)), Nanos(1_000));
        assert_eq!(timeval_nanos((-1, 0)), Nanos(0));
    }

    #[test]
    fn rusage_is_monotonic() {
        let a = read_rusage().unwrap();
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
        let b = read_rusage().unwrap();
        assert!(b.user >= a.user && b.sys >= a.sys);
        assert!(b.voluntary_ctxsw >= a.voluntary_ctxsw);
    }
}
