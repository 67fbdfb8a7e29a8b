//! A receiver's stalls: stretches of its measured interval in which no data
//! came, less the time its thread waited for a core in them.
//!
//! A receiver that gets nothing for a while either had nothing sent to it (the
//! peer or the path stopped) or was not running to take it (its thread waited
//! for a core). The kernel counts the second for every thread (`schedstat`'s
//! run delay), so a stretch's share of it is read at the stretch's edges: at
//! the end of any stretch longer than [`GAP`], and once per [`PERIOD`] while
//! data flows, so the reading before a stretch is at most that old (what the
//! thread waited between it and the stretch's start is counted as the
//! stretch's: the figure is an upper bound). Off the per-message path: one
//! comparison per arrival, a `/proc` read only at those edges.

use std::io::Read;

use netsonde_model::result::Stall;
use netsonde_model::units::Nanos;

/// Stretches shorter than this are not looked at.
const GAP: u64 = 20_000_000;
/// The wait is read at least this often while data flows.
const PERIOD: u64 = 50_000_000;

/// The longest stretch without data in a measured interval, as the receiving
/// thread saw it.
#[derive(Debug)]
pub(crate) struct Stalls {
    warm_ns: u64,
    end_ns: u64,
    /// The thread's run delay at the last reading (ns since it was born: the
    /// first stretch is charged all of it, a bound), and the next reading's due time.
    wait: u64,
    next: u64,
    /// Whether `schedstat` can be read here (set false on the first failure).
    readable: bool,
    longest: Option<Stall>,
}

impl Stalls {
    /// For a measured interval from `warm_ns` to `end_ns` (ns since the test's start).
    pub(crate) fn new(warm_ns: u64, end_ns: u64) -> Stalls {
        Stalls {
            warm_ns,
            end_ns,
            wait: 0,
            next: 0,
            readable: true,
            longest: None,
        }
    }

    /// Data came at `now`; the last came at `last`. One comparison unless a
    /// reading is due.
    #[inline]
    pub(crate) fn data(&mut self, last: u64, now: u64) {
        if now.saturating_sub(last) >= GAP || now >= self.next {
            self.edge(last, now, None);
        }
    }

    /// The stretch from `last` to `now` is over (data came, or the flow ended
    /// at `now`); reads the thread's wait, and keeps the stretch if it is the
    /// longest not explained by it. `wait` is a reading for tests.
    #[cold]
    #[inline(never)]
    pub(crate) fn edge(&mut self, last: u64, now: u64, wait: Option<u64>) {
        let wait = wait.or_else(|| self.read_wait());
        let (start, end) = (last.max(self.warm_ns), now.min(self.end_ns));
        if now.saturating_sub(last) >= GAP && end > start {
            let gap = end - start;
            let waited = wait.map_or(0, |w| w.saturating_sub(self.wait)).min(gap);
            let s = Stall {
                at: Nanos(start - self.warm_ns),
                gap: Nanos(gap),
                waited: Nanos(waited),
            };
            if self
                .longest
                .is_none_or(|l| s.unexplained() > l.unexplained())
            {
                self.longest = Some(s);
            }
        }
        if let Some(w) = wait {
            self.wait = w;
        }
        self.next = now + PERIOD;
    }

    /// The longest stretch kept, if any was as long as [`GAP`].
    pub(crate) fn longest(&self) -> Option<Stall> {
        self.longest
    }

    /// This thread's run delay, ns (`/proc/thread-self/schedstat`'s second
    /// field). Opened, read and closed each time: no descriptor held for the
    /// flow's life, and a path this short is made on the stack.
    fn read_wait(&mut self) -> Option<u64> {
        if !self.readable {
            return None;
        }
        let mut buf = [0u8; 96];
        let n = std::fs::File::open("/proc/thread-self/schedstat")
            .and_then(|mut f| f.read(&mut buf))
            .ok();
        let w = n.and_then(|n| parse_wait(&buf[..n]));
        self.readable = w.is_some();
        w
    }
}

/// The run delay of a `schedstat` line ("run wait slices"), without allocating.
fn parse_wait(line: &[u8]) -> Option<u64> {
    let field = line.split(|b| b.is_ascii_whitespace()).nth(1)?;
    if field.is_empty() {
        return None;
    }
    field.iter().try_fold(0u64, |acc, &b| {
        b.is_ascii_digit()
            .then(|| acc.checked_mul(10)?.checked_add(u64::from(b - b'0')))
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn a_stretch_the_thread_spent_waiting_for_a_core_is_explained() {
        // Measured from 100 ms to 1100 ms. Readings: 0 waited at 150 ms; a
        // stretch from 200 ms to 360 ms in which the thread waited 150 ms.
        let mut s = Stalls::new(100 * MS, 1100 * MS);
        s.edge(140 * MS, 150 * MS, Some(0));
        s.edge(200 * MS, 360 * MS, Some(150 * MS));
        let l = s.longest().unwrap();
        assert_eq!(l.at, Nanos(100 * MS));
        assert_eq!(l.gap, Nanos(160 * MS));
        assert_eq!(l.waited, Nanos(150 * MS));
        assert_eq!(l.unexplained(), Nanos(10 * MS));
        // A stopped peer: 2 s of nothing, the thread asleep, not waiting.
        let mut s = Stalls::new(0, 5000 * MS);
        s.edge(0, 10 * MS, Some(5 * MS));
        s.edge(1000 * MS, 3000 * MS, Some(8 * MS));
        s.edge(3000 * MS, 3040 * MS, Some(30 * MS));
        let l = s.longest().unwrap();
        assert_eq!(
            (l.at, l.gap, l.waited),
            (Nanos(1000 * MS), Nanos(2000 * MS), Nanos(3 * MS))
        );
    }

    #[test]
    fn only_the_measured_interval_counts_and_short_gaps_are_not_kept() {
        let mut s = Stalls::new(500 * MS, 1500 * MS);
        // In warm-up: not measured.
        s.edge(0, 400 * MS, Some(0));
        assert_eq!(s.longest(), None);
        // Across the start: from the start on.
        s.edge(450 * MS, 600 * MS, Some(0));
        assert_eq!(s.longest().unwrap().gap, Nanos(100 * MS));
        // Shorter than GAP: not kept, however it is read.
        let mut s = Stalls::new(0, 1000 * MS);
        s.edge(100 * MS, 110 * MS, Some(0));
        assert_eq!(s.longest(), None);
        // Across the end: to the end.
        s.edge(900 * MS, 1400 * MS, Some(0));
        assert_eq!(s.longest().unwrap().gap, Nanos(100 * MS));
    }

    #[test]
    fn the_wait_is_read_from_the_kernel_where_it_keeps_it() {
        assert_eq!(parse_wait(b"240656516 22807369 833\n"), Some(22807369));
        assert_eq!(parse_wait(b"1 x 2"), None);
        assert_eq!(parse_wait(b"1"), None);
        let mut s = Stalls::new(0, 1000 * MS);
        match std::fs::read_to_string("/proc/thread-self/schedstat") {
            Ok(_) => assert!(s.read_wait().is_some()),
            Err(e) => eprintln!("skipped: no schedstat here ({e})"),
        }
    }
}
