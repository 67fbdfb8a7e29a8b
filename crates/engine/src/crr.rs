//! Connect, request, response, close: one TCP connection per transaction. Each
//! connection opens with the session preamble in the same write as the request, so
//! tying it to the session costs no extra system call.

use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use netsonde_model::result::{IoReport, Role};
use netsonde_proto::message::{decode_preamble, encode_preamble, Token, PREAMBLE_LEN};
use socket2::{Domain, Protocol, Socket, Type};

use crate::buf::PageBuf;
use crate::latency::new_histogram;
use crate::meter::{FlowCtx, Meter, Phase};
use crate::sys::net;
use crate::{is_timeout, sockopt, EngineError, FlowOutput};

/// What a blocking exchange step ended with.
enum Step {
    /// Done.
    Ok,
    /// The peer closed cleanly before the step began.
    Eof,
    /// Deadline or stop.
    Gave,
}

/// Writes all of `buf` (a blocking socket, whose timeout bounds each call),
/// counting calls; gives up at the hard end or on stop.
fn write_all(
    sock: &mut TcpStream,
    buf: &[u8],
    m: &mut Meter,
    ctx: &FlowCtx,
    messages: u64,
) -> Result<Step, EngineError> {
    let mut off = 0;
    while off < buf.len() {
        match net::send_once(&*sock, &buf[off..]) {
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
            }
            Err(e) => return Err(EngineError::io("send")(e)),
        }
    }
    Ok(Step::Ok)
}

/// Reads exactly `buf.len()` bytes, counting calls; gives up ([`Step::Gave`]) at
/// `until` or on stop. End of stream before the first byte is [`Step::Eof`]; in the
/// middle it is an error.
fn read_exact(
    sock: &mut TcpStream,
    buf: &mut [u8],
    m: &mut Meter,
    ctx: &FlowCtx,
    until: Instant,
) -> Result<Step, EngineError> {
    let mut off = 0;
    while off < buf.len() {
        match net::recv_once(&*sock, &mut buf[off..]) {
            Ok(0) if off == 0 => return Ok(Step::Eof),
            Ok(0) => return Err(EngineError::PeerClosed { flow: ctx.id }),
            Ok(n) => {
                off += n;
                m.io(n as u64, 0);
            }
            Err(e) if is_timeout(&e) => {
                m.call();
                if ctx.stopped() || Instant::now() >= until {
                    return Ok(Step::Gave);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                return Err(EngineError::PeerClosed { flow: ctx.id })
            }
            Err(e) => return Err(EngineError::io("recv")(e)),
        }
    }
    Ok(Step::Ok)
}

/// A message buffer of its own mapping, as in [`crate::rr`]: a failure to get one
/// is the session's error, not an abort of the server.
fn buffer(len: usize) -> Result<PageBuf, EngineError> {
    PageBuf::zeroed(len).map_err(EngineError::io("message buffer"))
}

/// What a connect-request-response flow runs on each connection after its
/// preamble, in place of the plain request and response: a TLS handshake and
/// the two messages as records (`tls-crr`). Each call works on a blocking
/// socket whose timeout bounds each read and write; a call that is still not
/// done by `until` fails with a timeout.
pub trait Layer: Send {
    /// The client's end: handshake, `request` out, `response` in, close.
    fn request(
        &mut self,
        sock: &TcpStream,
        request: &[u8],
        response: &mut [u8],
        until: Instant,
    ) -> std::io::Result<()>;
    /// The server's end: handshake, `request` in, `response` out.
    fn respond(
        &mut self,
        sock: &TcpStream,
        request: &mut [u8],
        response: &[u8],
        until: Instant,
    ) -> std::io::Result<()>;
    /// What the report says of it (its handshakes, full and resumed, and
    /// what its crypto took).
    fn report(&self) -> IoReport;
}

/// Opens a connection per transaction to `addr` until the measured interval ends.
pub fn crr_requester(
    addr: SocketAddr,
    token: &Token,
    ctx: &FlowCtx,
) -> Result<FlowOutput, EngineError> {
    crr_requester_with(addr, token, ctx, None)
}

/// [`crr_requester`], each connection through `layer` when there is one.
pub fn crr_requester_with(
    addr: SocketAddr,
    token: &Token,
    ctx: &FlowCtx,
    mut layer: Option<Box<dyn Layer>>,
) -> Result<FlowOutput, EngineError> {
    // The preamble and the request, sent as one.
    let mut first = buffer(PREAMBLE_LEN + ctx.spec.request_size.0 as usize)?;
    first[..PREAMBLE_LEN].copy_from_slice(&encode_preamble(token, ctx.id));
    crate::fill_pattern(&mut first[PREAMBLE_LEN..]);
    let mut resp = buffer(ctx.spec.response_size.0 as usize)?;
    let mut hist = new_histogram();
    let mut m = Meter::new(ctx);
    let mut last_info = None;
    loop {
        let start = Instant::now();
        let phase = m.tick(start);
        if phase == Phase::After || ctx.stopped() {
            break;
        }
        let s = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))
            .map_err(EngineError::io("socket"))?;
        sockopt::apply(&s, &ctx.spec)?;
        // SO_SNDTIMEO bounds connect() on Linux, so a dead server cannot hang us.
        sockopt::set_wake(&s)?;
        m.call();
        match s.connect(&addr.into()) {
            Ok(()) => {}
            Err(e)
                if is_timeout(&e)
                    || rustix::io::Errno::from_io_error(&e)
                        == Some(rustix::io::Errno::INPROGRESS) =>
            {
                continue
            }
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                return Err(EngineError::PeerClosed { flow: ctx.id })
            }
            Err(e) => return Err(EngineError::io("connect")(e)),
        }
        let mut sock: TcpStream = s.into();
        if let Some(l) = &mut layer {
            // The preamble in the clear, then the layer's own exchange.
            let (pre, req) = first.split_at(PREAMBLE_LEN);
            if !matches!(write_all(&mut sock, pre, &mut m, ctx, 0)?, Step::Ok) {
                break;
            }
            match l.request(&sock, req, &mut resp, ctx.clock.hard_end) {
                Ok(()) => m.io((req.len() + resp.len()) as u64, 1),
                Err(e) if is_timeout(&e) => break,
                Err(e) => return Err(EngineError::io("tls exchange")(e)),
            }
        } else {
            if !matches!(write_all(&mut sock, &first, &mut m, ctx, 1)?, Step::Ok) {
                break;
            }
            match read_exact(&mut sock, &mut resp, &mut m, ctx, ctx.clock.hard_end)? {
                Step::Ok => {}
                Step::Eof => return Err(EngineError::PeerClosed { flow: ctx.id }),
                Step::Gave => break,
            }
        }
        if ctx.stopped() || Instant::now() >= ctx.clock.end {
            last_info = sockopt::tcp_info(&sock);
        }
        drop(sock);
        m.call();
        let done = Instant::now();
        if phase == Phase::Measure {
            hist.saturating_record(done.saturating_duration_since(start).as_nanos() as u64);
        }
        m.transaction();
    }
    let mut result = m.finish(Instant::now(), ctx.id, ctx.dir, Role::Requester);
    result.tcp_info = last_info;
    result.io = layer.map(|l| l.report());
    Ok(FlowOutput {
        result,
        latency: Some(hist),
    })
}

/// How long an accepted connection may take to deliver its preamble, and to close
/// after its response.
pub const FIRST_BYTES: Duration = Duration::from_secs(1);

/// Accepts connections on a shared listener (whose `SO_RCVTIMEO` bounds `accept`)
/// and answers one request on each, until a second past the end. Connections from
/// another address than `peer` (the control connection's), whose preamble does not
/// carry the session token, or that send nothing for [`FIRST_BYTES`], are dropped
/// unanswered, so no stranger and no silent connection holds the responder.
pub fn crr_responder(
    listener: &TcpListener,
    token: &Token,
    peer: IpAddr,
    ctx: &FlowCtx,
) -> Result<FlowOutput, EngineError> {
    crr_responder_with(listener, token, peer, ctx, None)
}

/// [`crr_responder`], each connection through `layer` when there is one.
pub fn crr_responder_with(
    listener: &TcpListener,
    token: &Token,
    peer: IpAddr,
    ctx: &FlowCtx,
    mut layer: Option<Box<dyn Layer>>,
) -> Result<FlowOutput, EngineError> {
    let mut first = buffer(PREAMBLE_LEN + ctx.spec.request_size.0 as usize)?;
    let mut resp = buffer(ctx.spec.response_size.0 as usize)?;
    crate::fill_pattern(&mut resp);
    let mut scratch = [0u8; 16];
    let mut m = Meter::new(ctx);
    let give_up = ctx.clock.end + Duration::from_secs(1);
    loop {
        let now = Instant::now();
        m.tick(now);
        if now >= give_up || ctx.stopped() {
            break;
        }
        let mut sock = match listener.accept() {
            Ok((s, from)) if crate::canonical(from.ip()) == crate::canonical(peer) => s,
            Ok(_) => continue,
            Err(e) if is_timeout(&e) => continue,
            Err(e)
                if rustix::io::Errno::from_io_error(&e) == Some(rustix::io::Errno::CONNABORTED) =>
            {
                continue
            }
            Err(e) => return Err(EngineError::io("accept")(e)),
        };
        m.call();
        // Accepted sockets inherit the listener's timeouts. The preamble must come
        // soon; the request behind it may take as long as the test allows.
        let (pre, req) = first.split_at_mut(PREAMBLE_LEN);
        let soon = (Instant::now() + FIRST_BYTES).min(give_up);
        match read_exact(&mut sock, pre, &mut m, ctx, soon) {
            Ok(Step::Ok) => {}
            _ => continue,
        }
        let pre: &[u8; PREAMBLE_LEN] = (&*pre).try_into().expect("len");
        if decode_preamble(pre).map(|(t, _)| t) != Some(*token) {
            continue;
        }
        if let Some(l) = &mut layer {
            // A connection that fails its exchange is dropped, as one that
            // sends nothing is.
            if l.respond(&sock, req, &resp, give_up).is_err() {
                continue;
            }
            m.io((req.len() + resp.len()) as u64, 1);
        } else {
            match read_exact(&mut sock, req, &mut m, ctx, give_up) {
                Ok(Step::Ok) => {}
                _ => continue,
            }
            if !matches!(write_all(&mut sock, &resp, &mut m, ctx, 1), Ok(Step::Ok)) {
                continue;
            }
        }
        // Let the client close first, so TIME_WAIT stays on the client as in netperf;
        // one that does not close within FIRST_BYTES does not hold the responder.
        let close_by = (Instant::now() + FIRST_BYTES).min(give_up);
        loop {
            match std::io::Read::read(&mut sock, &mut scratch) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if is_timeout(&e) && Instant::now() < close_by => {}
                Err(_) => break,
            }
        }
        m.call();
        m.transaction();
    }
    let mut result = m.finish(Instant::now(), ctx.id, ctx.dir, Role::Responder);
    result.io = layer.map(|l| l.report());
    Ok(FlowOutput {
        result,
        latency: None,
    })
}
