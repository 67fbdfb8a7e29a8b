//! What every stream sender shares, TCP and UDP: the strategy, pacing, the meter
//! and the end of sending ([`Sending`]), and whether it may send now ([`Gate`]).

use std::time::Instant;

use netsonde_model::result::{FlowResult, IoReport, Role};
use netsonde_model::spec::IoStrategy;

use crate::io::{self, Moved, Sock};
use crate::meter::{FlowCtx, Meter, Phase};
use crate::EngineError;

/// Paces a sender to `rate` bit/s: returns how long to wait before the next write.
///
/// Sending time is allotted from the start, so a sender that was late by a
/// little (a timer's slack, one slow call) catches up at once and the rate over
/// the test is the one asked. A sender that stalled (its thread descheduled, the
/// socket full) may catch up only [`Pacer::credit`] of it: the rest of the
/// stall is forgone, not sent as a burst at line rate that a paced test exists
/// to avoid. Its offered rate then falls below the asked one, and says so.
#[derive(Debug)]
pub(crate) struct Pacer {
    /// On the data path's clock (ns since the test's `t0`).
    start: u64,
    ns_per_byte: f64,
    /// The most a late sender may catch up by sending unpaced, in ns.
    credit: u64,
}

impl Pacer {
    /// The catch-up allowed: 2 ms, or two messages' time when that is longer.
    const CREDIT: u64 = 2_000_000;

    pub(crate) fn new(ctx: &FlowCtx) -> Option<Pacer> {
        ctx.spec
            .rate
            .map(|r| Pacer::at(0, r.bps(), ctx.spec.size.0))
    }

    fn at(start: u64, bps: f64, message: u64) -> Pacer {
        let ns_per_byte = 8e9 / bps;
        Pacer {
            start,
            ns_per_byte,
            credit: Pacer::CREDIT.max((2.0 * message as f64 * ns_per_byte) as u64),
        }
    }

    /// Nanoseconds to wait at `now` (ns since `t0`) after sending `sent`
    /// bytes so far.
    #[inline]
    pub(crate) fn wait(&mut self, now: u64, sent: u64) -> Option<u64> {
        let due = self.start + (sent as f64 * self.ns_per_byte) as u64;
        if due > now {
            return Some(due - now);
        }
        // Behind (or on time): keep at most the credit of it.
        let late = now - due;
        if late > self.credit {
            self.start += late - self.credit;
        }
        None
    }
}

/// What the TCP and the UDP sender share: the strategy, pacing, the meter, and
/// the end of sending.
pub(crate) struct Sending {
    pub(crate) ctx: FlowCtx,
    tx: Option<Box<dyn io::Tx>>,
    pacer: Option<Pacer>,
    pub(crate) m: Meter,
    /// Bytes sent, for pacing.
    sent: u64,
    end: Option<Instant>,
    report: Option<IoReport>,
    /// Its strategy is epoll, or it is an iperf3 client's stream served as
    /// iperf3 serves ([`crate::io::served_as_iperf3`]): the socket stays
    /// non-blocking to the end, and the flow group does the waiting.
    grouped: bool,
    /// Its share of a test that ends by volume: it stops once it has sent this
    /// much in the measured interval.
    volume: u64,
}

impl std::fmt::Debug for Sending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sending")
            .field("flow", &self.ctx.id)
            .field("sent", &self.sent)
            .finish_non_exhaustive()
    }
}

/// Whether a sender may send now.
pub(crate) enum Gate {
    /// Yes; the time (ns since `t0`, [`crate::clock`]).
    Go(u64),
    /// No: pacing holds it until then.
    Hold(Instant),
    /// No: the measured interval is over, its volume sent, or the test
    /// stopped; the time.
    Over(Instant),
}

impl Sending {
    pub(crate) fn new(sock: Sock<'_>, ctx: &FlowCtx) -> Result<Sending, EngineError> {
        Ok(Sending::with(
            io::tx(ctx.spec.tx_io, sock, &ctx.spec, ctx.format)?,
            ctx,
        ))
    }

    /// Over a strategy built elsewhere.
    pub(crate) fn with(tx: Box<dyn io::Tx>, ctx: &FlowCtx) -> Sending {
        Sending {
            tx: Some(tx),
            pacer: Pacer::new(ctx),
            m: Meter::sending(ctx),
            ctx: ctx.clone(),
            sent: 0,
            end: None,
            report: None,
            grouped: ctx.spec.tx_io == IoStrategy::Epoll || io::served_as_iperf3(&ctx.spec, true),
            volume: ctx.spec.stream_volume().unwrap_or(u64::MAX),
        }
    }

    /// Before a send.
    #[inline]
    pub(crate) fn gate(&mut self) -> Gate {
        let clock = &self.ctx.clock;
        let now = clock.now_ns();
        if self.m.tick_ns(now) == Phase::After
            || self.ctx.stopped()
            || self.m.measured_bytes() >= self.volume
        {
            return Gate::Over(clock.instant(now));
        }
        if let Some(p) = &mut self.pacer {
            if let Some(w) = p.wait(now, self.sent) {
                return Gate::Hold(clock.instant(now + w.min(clock.end_ns.saturating_sub(now))));
            }
        }
        Gate::Go(now)
    }

    /// How many strategy calls may follow a [`Gate::Go`] at `now` before the
    /// gate is asked again, and the time (ns since `t0`) at which the run ends
    /// if it has not: one when paced (each call waits its turn) or when the
    /// test ends by volume (each call may be its last); else up to
    /// [`Sending::RUN`], never across the next phase boundary, where the meter
    /// snapshots its counts. A sender that reads the clock per call anyway (a
    /// UDP sender stamps each datagram) then asks only that it has not reached
    /// the boundary; a stop request is seen within a run.
    #[inline]
    pub(crate) fn run(&self, now: u64) -> (u32, u64) {
        if self.pacer.is_some() || self.volume != u64::MAX {
            return (1, u64::MAX);
        }
        let clock = &self.ctx.clock;
        let boundary = if now < clock.warm_ns {
            clock.warm_ns
        } else {
            clock.end_ns
        };
        (Sending::RUN, boundary)
    }

    /// The most calls in a run ([`Sending::run`]): at 64-byte datagrams
    /// about 30 us, within which a stop request is seen.
    pub(crate) const RUN: u32 = 32;

    /// One strategy call; `None` once sending has stopped.
    #[inline]
    pub(crate) fn send(
        &mut self,
        sock: Sock<'_>,
        seq: u64,
        tx_ns: u64,
    ) -> Option<std::io::Result<Moved>> {
        let r = self.tx.as_mut()?.send(sock, seq, tx_ns);
        match &r {
            Ok(mv) => {
                self.sent += mv.bytes;
                self.m.moved(mv.bytes, mv.messages, mv.calls);
            }
            Err(_) => self.m.call(),
        }
        Some(r)
    }

    /// Stops sending at `now`: collects the strategy's report (and its outstanding
    /// completions), and puts the socket back to blocking unless a flow group
    /// waits for it.
    pub(crate) fn stop(&mut self, sock: Sock<'_>, now: Instant) {
        self.end.get_or_insert(now);
        if let Some(mut tx) = self.tx.take() {
            self.report = Some(tx.finish(sock));
        }
        if !self.grouped {
            let _ = match sock {
                Sock::Tcp(s) => s.set_nonblocking(false),
                Sock::Udp(s) => s.set_nonblocking(false),
            };
        }
    }

    /// Whether the loop the flow runs in waits for its socket (a flow group's
    /// epoll, or a `select`): the socket is non-blocking to the end.
    pub(crate) fn waits_in_loop(&self) -> bool {
        self.grouped
    }

    /// Whether sending has stopped.
    pub(crate) fn stopped(&self) -> bool {
        self.tx.is_none()
    }

    /// The sender's figures.
    pub(crate) fn finish(self) -> FlowResult {
        let end = self.end.unwrap_or_else(Instant::now);
        let mut result = self.m.finish(end, self.ctx.id, self.ctx.dir, Role::Sender);
        result.io = self.report;
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use netsonde_model::spec::{TestKind, TestSpec};
    use netsonde_model::units::{BitRate, Bytes, Nanos};

    use crate::meter::FlowClock;

    fn sending(sock: &std::net::UdpSocket, f: &dyn Fn(&mut TestSpec)) -> Sending {
        let mut spec = TestSpec::new(TestKind::UdpStream);
        spec.warmup = Nanos::from_millis(100);
        spec.duration = Nanos::from_secs(1);
        spec.rate = None;
        f(&mut spec);
        let ctx = FlowCtx {
            id: 0,
            dir: netsonde_model::spec::FlowDir::Up,
            clock: FlowClock::new(Instant::now(), &spec),
            spec: Arc::new(spec),
            counters: Arc::default(),
            stop: Arc::default(),
            format: Default::default(),
        };
        Sending::new(Sock::Udp(sock), &ctx).unwrap()
    }

    /// Sends between two askings of the gate: up to RUN, ending at the next
    /// phase boundary (the warm-up's end, then the measured interval's); one
    /// when paced or when the test ends by volume.
    #[test]
    fn a_run_of_sends_ends_at_the_next_boundary_and_is_one_when_paced_or_by_volume() {
        let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let s = sending(&sock, &|_| {});
        let c = s.ctx.clock;
        assert_eq!(s.run(0), (Sending::RUN, c.warm_ns));
        assert_eq!(s.run(c.warm_ns - 1), (Sending::RUN, c.warm_ns));
        assert_eq!(s.run(c.warm_ns), (Sending::RUN, c.end_ns));
        let paced = sending(&sock, &|s| s.rate = Some(BitRate(1e9)));
        assert_eq!(paced.run(c.warm_ns), (1, u64::MAX));
        let by_volume = sending(&sock, &|s| s.volume = Some(Bytes(1 << 20)));
        assert_eq!(by_volume.run(c.warm_ns), (1, u64::MAX));
    }

    #[test]
    fn a_stalled_sender_catches_up_only_its_credit() {
        let t0 = 0;
        // 1 Gbit/s of 1000-byte messages: one every 8 us; the credit is 2 ms.
        let mut p = Pacer::at(t0, 1e9, 1000);
        let ms = |n: u64| n * 1_000_000;
        // On time: waits for the next slot.
        assert_eq!(p.wait(t0, 1000), Some(8_000));
        // 100 ms stalled after 1000 bytes: it may send unpaced for 2 ms' worth
        // (250 messages), then it is paced again.
        let now = t0 + ms(100);
        let mut sent = 1000;
        while p.wait(now, sent).is_none() {
            sent += 1000;
            assert!(sent < 1_000_000, "a burst beyond the credit");
        }
        let burst = sent - 1000;
        assert!((249_000..=251_000).contains(&burst), "{burst} bytes");
        // A little late (under the credit) is caught up whole.
        let mut q = Pacer::at(t0, 1e9, 1000);
        let now = t0 + ms(1);
        let mut sent = 0;
        while q.wait(now, sent).is_none() {
            sent += 1000;
        }
        assert_eq!(sent, 126_000, "1 ms at 1 Gbit/s, and the next slot");
        // Slow messages: the credit is two of them.
        let r = Pacer::at(t0, 1e6, 1472);
        assert_eq!(r.credit, 2 * 1472 * 8000);
    }
}
