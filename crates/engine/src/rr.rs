//! Request/response: the requester sends `request_size` bytes and waits for
//! `response_size` bytes, one transaction at a time per flow, timing each; the
//! responder answers every request. Over TCP (one connection per flow) and UDP.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream, UdpSocket};
use std::time::Instant;

use netsonde_model::result::{Role, UdpStats};
use netsonde_proto::message::PREAMBLE_LEN;

use crate::io::{self, Waiter};
use crate::latency::{new_histogram, Histogram};
use crate::meter::{FlowCtx, Meter, Phase};
use crate::{is_timeout, EngineError, FlowOutput};

/// What a blocking exchange step ended with.
pub(crate) enum Step {
    /// Done.
    Ok,
    /// The peer closed cleanly before the step began.
    Eof,
    /// Deadline or stop.
    Gave,
}

/// Writes all of `buf`, counting calls; gives up at the hard end or on stop.
pub(crate) fn write_all(
    sock: &mut TcpStream,
    buf: &[u8],
    m: &mut Meter,
    ctx: &FlowCtx,
    messages: u64,
    w: &mut Waiter,
) -> Result<Step, EngineError> {
    let mut off = 0;
    while off < buf.len() {
        match sock.write(&buf[off..]) {
            Ok(0) => return Err(EngineError::PeerClosed { flow: ctx.id }),
            Ok(n) => {
                off += n;
                m.io(n as u64, if off == buf.len() { messages } else { 0 });
            }
            Err(e) if is_timeout(&e) => {
                m.call();
                if ctx.stopped() || Instant::now() >= ctx.clock.hard_end {
                    return Ok(Step::Gave);
                }
                w.wait();
            }
            Err(e) => return Err(EngineError::io("send")(e)),
        }
    }
    Ok(Step::Ok)
}

/// Reads exactly `buf.len()` bytes, counting calls. End of stream before the first
/// byte is [`Step::Eof`]; in the middle it is an error.
pub(crate) fn read_exact(
    sock: &mut TcpStream,
    buf: &mut [u8],
    m: &mut Meter,
    ctx: &FlowCtx,
    w: &mut Waiter,
) -> Result<Step, EngineError> {
    let mut off = 0;
    while off < buf.len() {
        match sock.read(&mut buf[off..]) {
            Ok(0) if off == 0 => return Ok(Step::Eof),
            Ok(0) => return Err(EngineError::PeerClosed { flow: ctx.id }),
            Ok(n) => {
                off += n;
                m.io(n as u64, 0);
            }
            Err(e) if is_timeout(&e) => {
                m.call();
                if ctx.stopped() || Instant::now() >= ctx.clock.hard_end {
                    return Ok(Step::Gave);
                }
                w.wait();
            }
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                return Err(EngineError::PeerClosed { flow: ctx.id })
            }
            Err(e) => return Err(EngineError::io("recv")(e)),
        }
    }
    Ok(Step::Ok)
}

fn record(h: &mut Histogram, start: Instant, end: Instant) {
    h.saturating_record(end.saturating_duration_since(start).as_nanos() as u64);
}

/// TCP requester: transactions until the measured interval ends.
pub fn tcp_requester(mut sock: TcpStream, ctx: &FlowCtx) -> Result<FlowOutput, EngineError> {
    let mode = io::rr_mode(&ctx.spec);
    let mut w = Waiter::new(mode, &sock).map_err(EngineError::io("socket mode"))?;
    let mut req = vec![0u8; ctx.spec.request_size.0 as usize];
    crate::fill_pattern(&mut req);
    let mut resp = vec![0u8; ctx.spec.response_size.0 as usize];
    let mut hist = new_histogram();
    let mut m = Meter::new(ctx);
    loop {
        let start = Instant::now();
        let phase = m.tick(start);
        if phase == Phase::After || ctx.stopped() {
            break;
        }
        if !matches!(
            write_all(&mut sock, &req, &mut m, ctx, 1, &mut w)?,
            Step::Ok
        ) {
            break;
        }
        match read_exact(&mut sock, &mut resp, &mut m, ctx, &mut w)? {
            Step::Ok => {}
            Step::Eof => return Err(EngineError::PeerClosed { flow: ctx.id }),
            Step::Gave => break,
        }
        let done = Instant::now();
        if phase == Phase::Measure {
            record(&mut hist, start, done);
        }
        m.transaction();
    }
    let end = Instant::now();
    let info = crate::sockopt::tcp_info(&sock);
    let _ = sock.shutdown(Shutdown::Write);
    let mut result = m.finish(end, ctx.id, ctx.dir, Role::Requester);
    result.tcp_info = info;
    Ok(FlowOutput {
        result,
        latency: Some(hist),
    })
}

/// TCP responder: answers requests until the requester closes.
pub fn tcp_responder(mut sock: TcpStream, ctx: &FlowCtx) -> Result<FlowOutput, EngineError> {
    let mode = io::rr_mode(&ctx.spec);
    let mut w = Waiter::new(mode, &sock).map_err(EngineError::io("socket mode"))?;
    let mut req = vec![0u8; ctx.spec.request_size.0 as usize];
    let mut resp = vec![0u8; ctx.spec.response_size.0 as usize];
    crate::fill_pattern(&mut resp);
    let mut m = Meter::new(ctx);
    while let Step::Ok = read_exact(&mut sock, &mut req, &mut m, ctx, &mut w)? {
        m.tick(Instant::now());
        if !matches!(
            write_all(&mut sock, &resp, &mut m, ctx, 1, &mut w)?,
            Step::Ok
        ) {
            break;
        }
        m.transaction();
    }
    let info = crate::sockopt::tcp_info(&sock);
    let mut result = m.finish(Instant::now(), ctx.id, ctx.dir, Role::Responder);
    result.tcp_info = info;
    Ok(FlowOutput {
        result,
        latency: None,
    })
}

/// UDP requester. A request or response lost in the network costs one socket
/// timeout and is counted in `udp.lost`; the transaction is retried.
pub fn udp_requester(sock: UdpSocket, ctx: &FlowCtx) -> Result<FlowOutput, EngineError> {
    let mode = io::rr_mode(&ctx.spec);
    let mut w = Waiter::new(mode, &sock).map_err(EngineError::io("socket mode"))?;
    // Non-blocking sockets return at once: count a lost datagram only after the
    // usual timeout has passed without an answer.
    let lost_after = crate::sockopt::WAKE;
    let mut req = vec![0u8; ctx.spec.request_size.0 as usize];
    crate::fill_pattern(&mut req);
    let mut resp = vec![0u8; ctx.spec.response_size.0 as usize + 1];
    let mut hist = new_histogram();
    let mut m = Meter::new(ctx);
    let mut lost = 0u64;
    'outer: loop {
        let start = Instant::now();
        let phase = m.tick(start);
        if phase == Phase::After || ctx.stopped() {
            break;
        }
        match sock.send(&req) {
            Ok(n) => m.io(n as u64, 1),
            Err(e) if is_timeout(&e) || e.raw_os_error() == Some(libc::ENOBUFS) => {
                m.call();
                continue;
            }
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                return Err(EngineError::PeerClosed { flow: ctx.id })
            }
            Err(e) => return Err(EngineError::io("send")(e)),
        }
        loop {
            match sock.recv(&mut resp) {
                Ok(PREAMBLE_LEN) if resp[..8] == *b"NSDATA01" => m.call(),
                Ok(n) => {
                    m.io(n as u64, 0);
                    break;
                }
                Err(e) if is_timeout(&e) => {
                    m.call();
                    if Instant::now().duration_since(start) < lost_after && !ctx.stopped() {
                        w.wait();
                        continue;
                    }
                    lost += 1;
                    continue 'outer;
                }
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                    return Err(EngineError::PeerClosed { flow: ctx.id })
                }
                Err(e) => return Err(EngineError::io("recv")(e)),
            }
        }
        let done = Instant::now();
        if phase == Phase::Measure {
            record(&mut hist, start, done);
        }
        m.transaction();
    }
    let mut result = m.finish(Instant::now(), ctx.id, ctx.dir, Role::Requester);
    result.udp = Some(UdpStats {
        lost,
        ..UdpStats::default()
    });
    Ok(FlowOutput {
        result,
        latency: Some(hist),
    })
}

/// UDP responder: echoes a response to every request until a second past the end.
pub fn udp_responder(sock: UdpSocket, ctx: &FlowCtx) -> Result<FlowOutput, EngineError> {
    let mode = io::rr_mode(&ctx.spec);
    let mut w = Waiter::new(mode, &sock).map_err(EngineError::io("socket mode"))?;
    let mut req = vec![0u8; (ctx.spec.request_size.0 as usize).max(PREAMBLE_LEN) + 1];
    let mut resp = vec![0u8; ctx.spec.response_size.0 as usize];
    crate::fill_pattern(&mut resp);
    let mut m = Meter::new(ctx);
    let give_up = ctx.clock.end + std::time::Duration::from_secs(1);
    loop {
        let r = sock.recv(&mut req);
        let now = Instant::now();
        m.tick(now);
        match r {
            Ok(PREAMBLE_LEN) if req[..8] == *b"NSDATA01" => m.call(),
            Ok(n) => {
                m.io(n as u64, 0);
                match sock.send(&resp) {
                    Ok(n) => {
                        m.io(n as u64, 1);
                        m.transaction();
                    }
                    Err(e) if is_timeout(&e) || e.raw_os_error() == Some(libc::ENOBUFS) => m.call(),
                    Err(_) => m.call(),
                }
            }
            Err(e) if is_timeout(&e) || e.kind() == std::io::ErrorKind::ConnectionRefused => {
                m.call();
                w.wait();
            }
            Err(e) => return Err(EngineError::io("recv")(e)),
        }
        if now >= give_up || ctx.stopped() {
            break;
        }
    }
    let result = m.finish(Instant::now(), ctx.id, ctx.dir, Role::Responder);
    Ok(FlowOutput {
        result,
        latency: None,
    })
}
