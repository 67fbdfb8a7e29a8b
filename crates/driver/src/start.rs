//! When a test starts at each end: when its `Start` left the client or came to
//! the server, not when this end's control thread was next given a core.
//!
//! Each end starts its phases at its own `Start`; a control thread that waited
//! for a core after the frame came (or before the client timed its sending)
//! would put this end's phases that much after the other's, and a receiver's
//! interval would end that much before its peer's sender stopped. The kernel
//! counts what the thread waited (`schedstat`'s run delay), so it is taken off.

use std::time::Instant;

use netsonde_model::units::Nanos;

/// A moment on this thread, with what it had waited for a core by then.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mark {
    at: Instant,
    wait: Option<Nanos>,
}

impl Mark {
    /// Now: taken before the wait that brings `Start` (the server), or before
    /// sending it (the client).
    pub(crate) fn now() -> Mark {
        Mark {
            wait: netsonde_cpu::thread::own_wait(),
            at: Instant::now(),
        }
    }

    /// When the test starts: now, less what this thread waited for a core
    /// since the mark (never before the mark). Called on the marking thread.
    pub(crate) fn start(&self) -> Instant {
        let wait = netsonde_cpu::thread::own_wait();
        let now = Instant::now();
        let waited = match (self.wait, wait) {
            (Some(a), Some(b)) => b.saturating_sub(a).as_duration(),
            _ => std::time::Duration::ZERO,
        };
        now.checked_sub(waited).unwrap_or(now).max(self.at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_start_lies_between_the_mark_and_now() {
        let m = Mark::now();
        // Spin a little: run time is not taken off, only waits.
        let until = Instant::now() + std::time::Duration::from_millis(5);
        while Instant::now() < until {}
        let s = m.start();
        assert!(s >= m.at && s <= Instant::now());
    }
}
