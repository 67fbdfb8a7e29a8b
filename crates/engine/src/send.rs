//! What every stream sender shares, TCP and UDP: the strategy, pacing, the meter
//! and the end of sending ([`Sending`]), and whether it may send now ([`Gate`]).

use std::time::{Duration, Instant};

use netsonde_model::result::{FlowResult, IoReport, Role};
use netsonde_model::spec::IoStrategy;

use crate::io::{self, Moved, Sock};
use crate::meter::{FlowCtx, Meter, Phase};
use crate::EngineError;

/// Paces a sender to `rate` bit/s: returns how long to wait before the next write.
#[derive(Debug)]
pub(crate) struct Pacer {
    start: Instant,
    ns_per_byte: f64,
}

impl Pacer {
    pub(crate) fn new(ctx: &FlowCtx) -> Option<Pacer> {
        ctx.spec.rate.map(|r| Pacer {
            start: ctx.clock.t0,
            ns_per_byte: 8e9 / r.bps(),
        })
    }

    /// Time to wait at `now` after sending `sent` bytes so far.
    #[inline]
    pub(crate) fn wait(&self, now: Instant, sent: u64) -> Option<Duration> {
        let due = self.start + Duration::from_nanos((sent as f64 * self.ns_per_byte) as u64);
        due.checked_duration_since(now).filter(|d| !d.is_zero())
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
    /// Its strategy is epoll: the socket stays non-blocking to the end, and the
    /// flow group does the waiting.
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
    /// Yes; the time.
    Go(Instant),
    /// No: pacing holds it until then.
    Hold(Instant),
    /// No: the measured interval is over, its volume sent, or the test
    /// stopped; the time.
    Over(Instant),
}

impl Sending {
    pub(crate) fn new(sock: Sock<'_>, ctx: &FlowCtx) -> Result<Sending, EngineError> {
        Ok(Sending {
            tx: Some(io::tx(ctx.spec.tx_io, sock, &ctx.spec, ctx.format)?),
            pacer: Pacer::new(ctx),
            m: Meter::new(ctx),
            ctx: ctx.clone(),
            sent: 0,
            end: None,
            report: None,
            grouped: ctx.spec.tx_io == IoStrategy::Epoll,
            volume: ctx.spec.stream_volume().unwrap_or(u64::MAX),
        })
    }

    /// Before a send.
    #[inline]
    pub(crate) fn gate(&mut self) -> Gate {
        let now = Instant::now();
        if self.m.tick(now) == Phase::After
            || self.ctx.stopped()
            || self.m.measured_bytes() >= self.volume
        {
            return Gate::Over(now);
        }
        if let Some(p) = &self.pacer {
            if let Some(w) = p.wait(now, self.sent) {
                return Gate::Hold(now + w.min(self.ctx.clock.end.saturating_duration_since(now)));
            }
        }
        Gate::Go(now)
    }

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
