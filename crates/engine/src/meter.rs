//! The measurement discipline shared by every flow loop.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use netsonde_model::result::{FlowResult, Role};
use netsonde_model::spec::{FlowDir, TestSpec};
use netsonde_model::units::{Bytes, Nanos};

use crate::clock::NsClock;
use crate::stall::Stalls;

/// When a flow's phases begin and end, on this end's clock.
#[derive(Debug, Clone, Copy)]
pub struct FlowClock {
    /// The test started (both ends start at their own receipt of `Start`).
    pub t0: Instant,
    /// Warm-up ends, measurement begins.
    pub warm_end: Instant,
    /// Measurement ends; senders stop.
    pub end: Instant,
    /// Receivers give up waiting for the peer's end of stream.
    pub hard_end: Instant,
    /// The data path's clock, zero at `t0` ([`crate::clock`]).
    pub ns: NsClock,
    /// `warm_end` on it.
    pub warm_ns: u64,
    /// `end` on it.
    pub end_ns: u64,
    /// `hard_end` on it.
    pub hard_ns: u64,
}

impl FlowClock {
    /// The clock of a test starting at `t0`.
    pub fn new(t0: Instant, spec: &TestSpec) -> FlowClock {
        let warm_end = t0 + spec.warmup.as_duration();
        let end = warm_end + spec.duration.as_duration();
        FlowClock {
            t0,
            warm_end,
            end,
            hard_end: end + Duration::from_secs(5),
            ns: NsClock::since(t0),
            warm_ns: spec.warmup.0,
            end_ns: spec.warmup.0 + spec.duration.0,
            hard_ns: spec.warmup.0 + spec.duration.0 + 5_000_000_000,
        }
    }

    /// Now on the data path's clock: nanoseconds since `t0`.
    #[inline]
    pub fn now_ns(&self) -> u64 {
        self.ns.now()
    }

    /// The instant `ns` after `t0`.
    pub fn instant(&self, ns: u64) -> Instant {
        NsClock::instant(self.t0, ns)
    }
}

/// Counters a flow publishes for the interval reporter. One writer (the flow), any
/// number of readers; relaxed ordering is enough because each value is monotonic and
/// read on its own.
#[derive(Debug, Default)]
pub struct FlowCounters {
    /// Bytes moved, warm-up included.
    pub bytes: AtomicU64,
    /// Messages.
    pub messages: AtomicU64,
    /// Transactions.
    pub transactions: AtomicU64,
    /// Where the counts stood as the measured interval began, stored once by the
    /// flow at that moment (its first step past warm-up), so interval records start
    /// from exactly where the summary does.
    pub start: Boundary,
    /// Where they stood as it ended (the flow's meter closed), so the last record
    /// ends exactly where the summary does, not with what arrived after.
    pub end: Boundary,
    /// A UDP receiver's sequence accounting, for per-interval loss and jitter.
    pub udp: UdpCounters,
}

/// A UDP receiver's accounting as it stands, published once per receive call
/// (a batch's datagrams at once): the datagrams expected (the highest sequence
/// number seen, plus one), those that arrived, and the jitter. Zero until its
/// first datagram.
#[derive(Debug, Default)]
pub struct UdpCounters {
    expected: AtomicU64,
    arrived: AtomicU64,
    /// 16 times the jitter in ns ([`crate::udp::Jitter::scaled`]).
    jitter16: AtomicU64,
}

impl UdpCounters {
    /// Nanoseconds of a jitter kept as 16 times them (RFC 3550 appendix A.8),
    /// rounded.
    pub fn unscale(j16: u64) -> u64 {
        (j16 + 8) >> 4
    }

    /// Stores the receiver's figures (relaxed: each is read on its own); the
    /// jitter as the estimator holds it (16 times the ns), unscaled by the reader.
    #[inline]
    pub fn publish(&self, expected: u64, arrived: u64, jitter16: u64) {
        self.expected.store(expected, Ordering::Relaxed);
        self.arrived.store(arrived, Ordering::Relaxed);
        self.jitter16.store(jitter16, Ordering::Relaxed);
    }

    /// Expected, arrived and jitter; `None` before the first datagram (or on a
    /// flow that does not receive UDP).
    pub fn load(&self) -> Option<(u64, u64, Nanos)> {
        let expected = self.expected.load(Ordering::Relaxed);
        (expected > 0).then(|| {
            (
                expected,
                self.arrived.load(Ordering::Relaxed),
                Nanos(UdpCounters::unscale(self.jitter16.load(Ordering::Relaxed))),
            )
        })
    }
}

/// A flow's counts at one edge of the measured interval, stored once by the flow.
#[derive(Debug, Default)]
pub struct Boundary {
    /// Bytes, messages and transactions.
    counts: [AtomicU64; 3],
    /// Set (release) once `counts` holds them.
    set: AtomicBool,
    /// A TCP sender's bytes acknowledged (`tcpi_bytes_acked`) there, read once by
    /// the flow (with `--interval`): its interval records count what was
    /// acknowledged.
    acked: AtomicU64,
    /// Set (release) once `acked` holds it.
    acked_set: AtomicBool,
}

impl Boundary {
    /// Stores the counts (once per flow, off the per-message path).
    pub fn store(&self, c: (u64, u64, u64)) {
        self.counts[0].store(c.0, Ordering::Relaxed);
        self.counts[1].store(c.1, Ordering::Relaxed);
        self.counts[2].store(c.2, Ordering::Relaxed);
        self.set.store(true, Ordering::Release);
    }

    /// Stores the bytes acknowledged.
    pub fn store_acked(&self, acked: u64) {
        self.acked.store(acked, Ordering::Relaxed);
        self.acked_set.store(true, Ordering::Release);
    }

    /// Whether the flow got here.
    pub fn reached(&self) -> bool {
        self.set.load(Ordering::Acquire)
    }

    /// The counts, once the flow got here.
    pub fn load(&self) -> Option<(u64, u64, u64)> {
        self.reached().then(|| {
            (
                self.counts[0].load(Ordering::Relaxed),
                self.counts[1].load(Ordering::Relaxed),
                self.counts[2].load(Ordering::Relaxed),
            )
        })
    }

    /// The bytes acknowledged, once the flow read them here.
    pub fn load_acked(&self) -> Option<u64> {
        self.acked_set
            .load(Ordering::Acquire)
            .then(|| self.acked.load(Ordering::Relaxed))
    }
}

impl FlowCounters {
    /// Reads all three.
    pub fn load(&self) -> (u64, u64, u64) {
        (
            self.bytes.load(Ordering::Relaxed),
            self.messages.load(Ordering::Relaxed),
            self.transactions.load(Ordering::Relaxed),
        )
    }
}

/// Everything a flow loop needs besides its socket.
#[derive(Debug, Clone)]
pub struct FlowCtx {
    /// Flow number.
    pub id: u32,
    /// Direction of its bytes.
    pub dir: FlowDir,
    /// The test.
    pub spec: Arc<TestSpec>,
    /// Its phases.
    pub clock: FlowClock,
    /// Published counts.
    pub counters: Arc<FlowCounters>,
    /// Set by the driver to end the flow early (peer vanished, Ctrl-C).
    pub stop: Arc<AtomicBool>,
    /// The header UDP datagrams carry (iperf3's for an iperf3 peer).
    pub format: crate::datagram::Format,
}

impl FlowCtx {
    /// Whether the driver asked the flow to stop.
    #[inline]
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// When a receiver last got data, its idle limit (`TestSpec::rcv_timeout`,
/// iperf3's `--rcv-timeout`: a stream that gets no byte for that long fails the
/// test, instead of waiting for the end) and its stalls ([`Stalls`]). Where its
/// measured interval ends: a test that ends by time is measured to the end, or
/// to when the flow ended before it (the sender's end of stream, however late
/// the last bytes came); one that ends by volume to its last arrival, not to
/// when it noticed the end.
#[derive(Debug)]
pub(crate) struct IdleLimit {
    limit: Option<u64>,
    clock: FlowClock,
    /// On the data path's clock.
    last: u64,
    by_volume: bool,
    /// When the flow ended (ns since `t0`).
    ended: Option<u64>,
    /// A TCP stream's only: a UDP receiver's stretch without data is loss,
    /// which it measures, so it reads no run delay for it.
    stalls: Option<Stalls>,
}

impl IdleLimit {
    /// For a receiver; `stalls` keeps its longest stretch without data.
    pub(crate) fn new(ctx: &FlowCtx, stalls: bool) -> IdleLimit {
        IdleLimit {
            limit: ctx.spec.rcv_timeout.map(|n| n.0),
            clock: ctx.clock,
            last: 0,
            by_volume: ctx.spec.volume.is_some(),
            ended: None,
            stalls: stalls.then(|| Stalls::new(ctx.clock.warm_ns, ctx.clock.end_ns)),
        }
    }

    /// Data came at `now` (ns since `t0`).
    #[inline]
    pub(crate) fn data(&mut self, now: u64) {
        if let Some(s) = &mut self.stalls {
            s.data(self.last, now);
        }
        self.last = now;
    }

    /// Whether the flow has ended.
    #[inline]
    pub(crate) fn has_ended(&self) -> bool {
        self.ended.is_some()
    }

    /// The flow ended at `now` (its peer's end of stream, its hard end, a
    /// stop): the stretch since the last data is one too, for a test that
    /// ends by time.
    pub(crate) fn ended(&mut self, now: u64) {
        if self.ended.is_none() {
            self.ended = Some(now);
            if let Some(s) = self.stalls.as_mut().filter(|_| !self.by_volume) {
                s.edge(self.last, now, None);
            }
        }
    }

    /// The receiver's figures from its meter: its measured interval closed
    /// where it ends (to the flow's end for a test by time, its clock's end
    /// capping it; to the last arrival for one by volume), with its longest
    /// stretch without data.
    pub(crate) fn close(&self, m: Meter, ctx: &FlowCtx) -> FlowResult {
        let end = match self.ended {
            Some(e) if !self.by_volume => e,
            _ => self.last,
        };
        let mut r = m.finish(self.clock.instant(end), ctx.id, ctx.dir, Role::Receiver);
        r.stall = self.stalls.as_ref().and_then(Stalls::longest);
        r
    }

    /// After a wait that brought nothing, at `now` (ns since `t0`): fails once
    /// the limit has passed.
    pub(crate) fn check(&self, now: u64, flow: u32) -> Result<(), crate::EngineError> {
        match self.limit {
            Some(l) if now.saturating_sub(self.last) >= l => Err(crate::EngineError::Idle {
                flow,
                after: Nanos(l),
            }),
            _ => Ok(()),
        }
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    bytes: u64,
    messages: u64,
    calls: u64,
    transactions: u64,
}

impl Counts {
    /// Bytes, messages and transactions, as [`FlowCounters`] publishes them.
    fn triple(&self) -> (u64, u64, u64) {
        (self.bytes, self.messages, self.transactions)
    }
}

/// Where a loop is in the test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Before the measured interval.
    Warmup,
    /// In it.
    Measure,
    /// After it.
    After,
}

/// Per-flow counting with warm-up exclusion.
#[derive(Debug)]
pub struct Meter {
    /// The measured interval starts at the phase's boundary (every flow but a
    /// stream sender), not at the first step past it.
    at_boundary: bool,
    clock: FlowClock,
    counters: Arc<FlowCounters>,
    now: Counts,
    base: Counts,
    window_start: Option<Instant>,
    window: Option<(Counts, Nanos)>,
}

impl Meter {
    /// A meter for the flow: its measured interval is the test's phase,
    /// however late its thread is scheduled to notice the phase began.
    pub fn new(ctx: &FlowCtx) -> Meter {
        Meter {
            at_boundary: true,
            clock: ctx.clock,
            counters: ctx.counters.clone(),
            now: Counts::default(),
            base: Counts::default(),
            window_start: None,
            window: None,
        }
    }

    /// A stream sender's meter: its interval is the span of its completed
    /// writes, from its first step past the boundary to its last write (a
    /// writer blocked on a full buffer across the boundary starts when that
    /// write returns, as it ends at its last completed one), so that what it
    /// wrote is set against the time it was writing.
    pub fn sending(ctx: &FlowCtx) -> Meter {
        Meter {
            at_boundary: false,
            ..Meter::new(ctx)
        }
    }

    /// [`Meter::tick`] for `now` on the data path's clock (ns since `t0`): two
    /// integer comparisons, and an [`Instant`] made only at a boundary.
    #[inline]
    pub fn tick_ns(&mut self, now: u64) -> Phase {
        if self.window.is_some() {
            return Phase::After;
        }
        if now < self.clock.warm_ns {
            return Phase::Warmup;
        }
        if now >= self.clock.end_ns || self.window_start.is_none() {
            return self.tick(self.clock.instant(now));
        }
        Phase::Measure
    }

    /// Advances the phase for time `now`; snapshots counts at the two boundaries.
    #[inline]
    pub fn tick(&mut self, now: Instant) -> Phase {
        if self.window.is_some() {
            return Phase::After;
        }
        if now >= self.clock.end {
            self.close(now);
            return Phase::After;
        }
        if self.window_start.is_none() {
            if now < self.clock.warm_end {
                return Phase::Warmup;
            }
            // The measured interval is the test's phase, however late this
            // thread was scheduled to notice it began: what it moves from here
            // on is counted over the whole phase.
            self.window_start = Some(if self.at_boundary {
                self.clock.warm_end
            } else {
                now
            });
            self.base = self.now;
            // Once per flow, at the boundary: off the per-message path.
            self.counters.start.store(self.now.triple());
        }
        Phase::Measure
    }

    fn close(&mut self, now: Instant) {
        // A loop that never saw the measured interval (it ended in warm-up, or blocked
        // across the whole interval) measured nothing.
        let start = match self.window_start {
            Some(s) => s,
            None => {
                self.base = self.now;
                now
            }
        };
        let c = self.now;
        let b = self.base;
        self.counters.end.store(c.triple());
        self.window = Some((
            Counts {
                bytes: c.bytes - b.bytes,
                messages: c.messages - b.messages,
                calls: c.calls - b.calls,
                transactions: c.transactions - b.transactions,
            },
            // A loop that blocked across the end (its peer had stopped) notices
            // it late: the interval still ends at its end.
            Nanos::from(now.min(self.clock.end).saturating_duration_since(start)),
        ));
    }

    /// Counts one I/O call that moved `bytes` and completed `messages` messages.
    #[inline]
    pub fn io(&mut self, bytes: u64, messages: u64) {
        self.now.bytes += bytes;
        self.now.messages += messages;
        self.now.calls += 1;
        self.counters.bytes.store(self.now.bytes, Ordering::Relaxed);
        self.counters
            .messages
            .store(self.now.messages, Ordering::Relaxed);
    }

    /// Counts what a strategy call moved: bytes, whole messages, system calls.
    #[inline]
    pub fn moved(&mut self, bytes: u64, messages: u64, calls: u64) {
        self.now.bytes += bytes;
        self.now.messages += messages;
        self.now.calls += calls;
        self.counters.bytes.store(self.now.bytes, Ordering::Relaxed);
        self.counters
            .messages
            .store(self.now.messages, Ordering::Relaxed);
    }

    /// Counts an I/O call that moved nothing (a timeout, a connect, a close).
    #[inline]
    pub fn call(&mut self) {
        self.now.calls += 1;
    }

    /// Counts one completed transaction.
    #[inline]
    pub fn transaction(&mut self) {
        self.now.transactions += 1;
        self.counters
            .transactions
            .store(self.now.transactions, Ordering::Relaxed);
    }

    /// Bytes moved in the measured interval so far (0 before it).
    #[inline]
    pub fn measured_bytes(&self) -> u64 {
        match (self.window_start, self.window) {
            (_, Some((c, _))) => c.bytes,
            (Some(_), None) => self.now.bytes - self.base.bytes,
            (None, None) => 0,
        }
    }

    /// Whether `now` is inside the measured interval (no snapshotting).
    #[inline]
    pub fn measuring(&self) -> bool {
        self.window_start.is_some() && self.window.is_none()
    }

    /// The flow's figures. Closes the window at `now` if the loop ended early.
    pub fn finish(mut self, now: Instant, id: u32, dir: FlowDir, role: Role) -> FlowResult {
        if self.window.is_none() {
            self.close(now);
        }
        let (w, elapsed) = self.window.unwrap_or_default();
        FlowResult {
            id,
            dir,
            role,
            bytes_total: Bytes(self.now.bytes),
            bytes: Bytes(w.bytes),
            messages: w.messages,
            calls: w.calls,
            transactions: w.transactions,
            transactions_total: self.now.transactions,
            elapsed,
            datagrams_sent: None,
            tcp_info: None,
            udp: None,
            latency: None,
            io: None,
            mptcp: None,
            stall: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netsonde_model::spec::TestKind;

    fn ctx(warmup_ms: u64) -> FlowCtx {
        let mut spec = TestSpec::new(TestKind::TcpStream);
        spec.warmup = Nanos::from_millis(warmup_ms);
        spec.duration = Nanos::from_secs(1);
        let t0 = Instant::now();
        FlowCtx {
            id: 0,
            dir: FlowDir::Up,
            clock: FlowClock::new(t0, &spec),
            spec: Arc::new(spec),
            counters: Arc::default(),
            stop: Arc::default(),
            format: Default::default(),
        }
    }

    #[test]
    fn warmup_bytes_are_excluded() {
        let c = ctx(100);
        let t0 = c.clock.t0;
        let mut m = Meter::new(&c);
        assert_eq!(m.tick(t0), Phase::Warmup);
        m.io(1000, 1);
        assert_eq!(m.tick(t0 + Duration::from_millis(100)), Phase::Measure);
        m.io(500, 1);
        m.io(500, 1);
        assert_eq!(m.tick(t0 + Duration::from_millis(1100)), Phase::After);
        m.io(7, 1); // drained after the end: total only
        let r = m.finish(t0 + Duration::from_secs(2), 0, FlowDir::Up, Role::Receiver);
        assert_eq!(r.bytes_total, Bytes(2007));
        assert_eq!(r.bytes, Bytes(1000));
        assert_eq!(r.messages, 2);
        assert_eq!(r.calls, 2);
        assert_eq!(r.elapsed, Nanos::from_secs(1));
        assert_eq!(c.counters.load(), (2007, 4, 0));
    }

    #[test]
    fn a_thread_late_to_the_start_still_measures_the_whole_phase() {
        // Its first step past warm-up came 160 ms late (it waited for a core):
        // what it moved from then on is counted over the whole second.
        let c = ctx(100);
        let t0 = c.clock.t0;
        let mut m = Meter::new(&c);
        assert_eq!(m.tick(t0 + Duration::from_millis(260)), Phase::Measure);
        m.io(1000, 1);
        assert_eq!(m.tick(t0 + Duration::from_millis(1100)), Phase::After);
        let r = m.finish(t0 + Duration::from_secs(2), 0, FlowDir::Up, Role::Receiver);
        assert_eq!(r.elapsed, Nanos::from_secs(1));
        assert_eq!(r.bytes, Bytes(1000));
    }

    #[test]
    fn early_end_closes_window() {
        let c = ctx(0);
        let t0 = c.clock.t0;
        let mut m = Meter::new(&c);
        assert_eq!(m.tick(t0), Phase::Measure);
        m.io(10, 1);
        let r = m.finish(
            t0 + Duration::from_millis(300),
            0,
            FlowDir::Up,
            Role::Sender,
        );
        assert_eq!(r.bytes, Bytes(10));
        assert_eq!(r.elapsed, Nanos::from_millis(300));
    }
}
