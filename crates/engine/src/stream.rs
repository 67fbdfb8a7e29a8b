//! Bulk TCP transfer: the sender writes `size`-byte messages until the measured
//! interval ends, then half-closes; the receiver reads until end of stream. Both
//! count independently, so their totals can be compared.

use std::io::Read;
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

use netsonde_model::result::Role;

use crate::io::{self, Moved, Sock};
use crate::meter::{FlowCtx, Meter, Phase};
use crate::verify::Verifier;
use crate::{is_timeout, sockopt, EngineError, FlowOutput};

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

/// Sends until the measured interval ends, then half-closes and waits for the
/// receiver's close so that `TCP_INFO` covers every byte.
pub fn tcp_send(sock: TcpStream, ctx: &FlowCtx) -> Result<FlowOutput, EngineError> {
    let mut tx = io::tx(ctx.spec.tx_io, Sock::Tcp(&sock), &ctx.spec)?;
    let pacer = Pacer::new(ctx);
    let mut m = Meter::new(ctx);
    let mut sent = 0u64;
    loop {
        let now = Instant::now();
        if m.tick(now) == Phase::After || ctx.stopped() {
            break;
        }
        if let Some(p) = &pacer {
            if let Some(w) = p.wait(now, sent) {
                std::thread::sleep(w.min(ctx.clock.end.saturating_duration_since(now)));
                continue;
            }
        }
        match tx.send(Sock::Tcp(&sock), 0, 0) {
            Ok(Moved { bytes: 0, .. }) => return Err(EngineError::PeerClosed { flow: ctx.id }),
            Ok(mv) => {
                sent += mv.bytes;
                m.moved(mv.bytes, mv.messages, mv.calls);
            }
            Err(e) if is_timeout(&e) => m.call(),
            Err(e)
                if e.kind() == std::io::ErrorKind::BrokenPipe
                    || e.kind() == std::io::ErrorKind::ConnectionReset =>
            {
                return Err(EngineError::PeerClosed { flow: ctx.id })
            }
            Err(e) => return Err(EngineError::io("send")(e)),
        }
    }
    let end = Instant::now();
    let report = tx.finish(Sock::Tcp(&sock));
    drop(tx);
    // Back to blocking for the drain (epoll and busypoll made it non-blocking).
    let _ = sock.set_nonblocking(false);
    let _ = sock.shutdown(Shutdown::Write);
    // Wait for the receiver to read everything and close (bounded by hard_end).
    let mut scratch = [0u8; 64];
    let mut s = &sock;
    while Instant::now() < ctx.clock.hard_end && !ctx.stopped() {
        match s.read(&mut scratch) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if is_timeout(&e) => {}
            Err(_) => break,
        }
    }
    let mut result = m.finish(end, ctx.id, ctx.dir, Role::Sender);
    result.tcp_info = sockopt::tcp_info(&sock);
    result.io = Some(report);
    Ok(FlowOutput {
        result,
        latency: None,
    })
}

/// Receives until end of stream (or the hard deadline).
pub fn tcp_recv(sock: TcpStream, ctx: &FlowCtx) -> Result<FlowOutput, EngineError> {
    let mut rx = io::rx(ctx.spec.rx_io, Sock::Tcp(&sock), &ctx.spec)?;
    let mut verifier = ctx.spec.verify.then(|| Verifier::new(ctx.spec.size.0));
    let mut m = Meter::new(ctx);
    loop {
        let r = match &mut verifier {
            Some(v) => rx.recv(Sock::Tcp(&sock), &mut |d, _| v.stream(d)),
            None => rx.recv(Sock::Tcp(&sock), &mut |_, _| {}),
        };
        let now = Instant::now();
        m.tick(now);
        match r {
            Ok(None) => break,
            Ok(Some(mv)) => m.moved(mv.bytes, mv.messages, mv.calls),
            Err(e) if is_timeout(&e) => {
                m.call();
                if now >= ctx.clock.hard_end || ctx.stopped() {
                    break;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                return Err(EngineError::PeerClosed { flow: ctx.id })
            }
            Err(e) => return Err(EngineError::io("recv")(e)),
        }
    }
    let info = sockopt::tcp_info(&sock);
    let mut report = rx.report();
    report.verify_errors = verifier.map(|v| v.errors);
    drop(sock);
    let mut result = m.finish(Instant::now(), ctx.id, ctx.dir, Role::Receiver);
    result.tcp_info = info;
    result.io = Some(report);
    Ok(FlowOutput {
        result,
        latency: None,
    })
}
