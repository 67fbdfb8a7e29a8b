//! Request/response: the requester sends `request_size` bytes and waits for
//! `response_size` bytes, one transaction at a time per flow, timing each; the
//! responder answers every request. Over TCP (one connection per flow) and UDP.

use std::net::{Shutdown, TcpStream, UdpSocket};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::time::Instant;

use netsonde_model::result::{Role, UdpStats};
use netsonde_model::spec::IoStrategy;
use netsonde_proto::message::{PREAMBLE_LEN, PREAMBLE_MAGIC};

use crate::buf::PageBuf;
use crate::flow::{run_one, Flow, Progress};
use crate::io::{self, Waiter};
use crate::latency::{new_histogram, Histogram};
use crate::meter::{FlowCtx, Meter, Phase};
use crate::sys::net;
use crate::{is_timeout, EngineError, FlowOutput};

fn record(h: &mut Histogram, start: Instant, end: Instant) {
    h.saturating_record(end.saturating_duration_since(start).as_nanos() as u64);
}

/// TCP requester: transactions until the measured interval ends.
pub fn tcp_requester(sock: TcpStream, ctx: &FlowCtx) -> Result<FlowOutput, EngineError> {
    run_one(TcpRequester::new(sock, ctx)?, io::rr_mode(&ctx.spec), ctx)
}

/// TCP responder: answers requests until the requester closes.
pub fn tcp_responder(sock: TcpStream, ctx: &FlowCtx) -> Result<FlowOutput, EngineError> {
    run_one(TcpResponder::new(sock, ctx)?, io::rr_mode(&ctx.spec), ctx)
}

/// [`tcp_requester`], its messages through `pipe` (TLS records).
pub fn tcp_requester_with(
    sock: TcpStream,
    pipe: Box<dyn Pipe>,
    ctx: &FlowCtx,
) -> Result<FlowOutput, EngineError> {
    let flow = TcpRequester::with(sock, Some(pipe), ctx)?;
    run_one(flow, io::rr_mode(&ctx.spec), ctx)
}

/// [`tcp_responder`], its messages through `pipe` (TLS records).
pub fn tcp_responder_with(
    sock: TcpStream,
    pipe: Box<dyn Pipe>,
    ctx: &FlowCtx,
) -> Result<FlowOutput, EngineError> {
    let flow = TcpResponder::with(sock, Some(pipe), ctx)?;
    run_one(flow, io::rr_mode(&ctx.spec), ctx)
}

/// UDP requester. A request or response lost in the network costs one socket
/// timeout and is counted in `udp.lost`; the transaction is retried.
pub fn udp_requester(sock: UdpSocket, ctx: &FlowCtx) -> Result<FlowOutput, EngineError> {
    run_one(UdpRequester::new(sock, ctx)?, io::rr_mode(&ctx.spec), ctx)
}

/// UDP responder: echoes a response to every request until a second past the end.
pub fn udp_responder(sock: UdpSocket, ctx: &FlowCtx) -> Result<FlowOutput, EngineError> {
    run_one(UdpResponder::new(sock, ctx)?, io::rr_mode(&ctx.spec), ctx)
}

/// What a TCP request/response flow's messages travel through in place of
/// the connection's own bytes: TLS records (`tls-rr`), its handshake done
/// before the flow starts. Each call works like one `send(2)` or `recv(2)` on
/// the flow's socket, whose timeouts and would-block errors it passes on.
pub trait Pipe: Send {
    /// Sends some of `data`, all the way to the socket: how many of its bytes
    /// went (none may be held back once counted).
    fn send(&mut self, sock: &TcpStream, data: &[u8]) -> std::io::Result<usize>;
    /// Receives some into `buf`: how many bytes, 0 at the peer's end.
    fn recv(&mut self, sock: &TcpStream, buf: &mut [u8]) -> std::io::Result<usize>;
    /// What the report says of it.
    fn report(&self) -> netsonde_model::result::IoReport;
}

/// Where a transaction stands: how much of the message in hand has moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Leg {
    Send(usize),
    Recv(usize),
    Done,
}

/// The common parts of a request/response flow.
struct Rr<S> {
    sock: S,
    ctx: FlowCtx,
    w: Waiter,
    /// Its strategy is epoll: the flow group waits, the flow never does.
    grouped: bool,
    m: Meter,
    req: PageBuf,
    resp: PageBuf,
    leg: Leg,
    /// Sends requests (else answers them).
    requester: bool,
    /// What the messages travel through, when not the socket's bytes.
    pipe: Option<Box<dyn Pipe>>,
}

/// What a flow's receive buffer holds beyond the message it expects.
#[derive(Clone, Copy)]
enum Room {
    /// TCP: messages are read to their length.
    Exact,
    /// One byte more than the response, so an oversized one shows.
    UdpRequester,
    /// The handshake preamble, and one byte more than the request.
    UdpResponder,
}

impl<S: AsFd + AsRawFd> Rr<S> {
    /// `room` is what the buffer this end receives into holds beyond its message
    /// (UDP's handshake preamble, and a byte so an oversized datagram shows).
    fn new(sock: S, ctx: &FlowCtx, requester: bool, room: Room) -> Result<Rr<S>, EngineError> {
        let mode = io::rr_mode(&ctx.spec);
        let w = Waiter::new(mode, &sock).map_err(EngineError::io("socket mode"))?;
        let (req, resp) = (
            ctx.spec.request_size.0 as usize,
            ctx.spec.response_size.0 as usize,
        );
        let (req, resp) = match room {
            Room::Exact => (req, resp),
            Room::UdpRequester => (req, resp + 1),
            Room::UdpResponder => (req.max(PREAMBLE_LEN) + 1, resp),
        };
        // Own mappings, like the stream buffers: page-aligned, handed back to the
        // kernel when the flow ends, and a failure to get them is an error the
        // session reports rather than an abort of the whole server.
        let buf = |len| PageBuf::zeroed(len).map_err(EngineError::io("message buffer"));
        let (mut req, mut resp) = (buf(req)?, buf(resp)?);
        crate::fill_pattern(if requester { &mut req } else { &mut resp });
        Ok(Rr {
            sock,
            ctx: ctx.clone(),
            w,
            grouped: mode == IoStrategy::Epoll,
            m: Meter::new(ctx),
            req,
            resp,
            leg: if requester {
                Leg::Send(0)
            } else {
                Leg::Recv(0)
            },
            requester,
            pipe: None,
        })
    }

    /// After a call that would block: whether the flow must end now (deadline or
    /// stop); else waits the strategy's way.
    fn blocked(&mut self) -> Progress {
        self.m.call();
        if self.ctx.stopped() || Instant::now() >= self.ctx.clock.hard_end {
            self.leg = Leg::Done;
            return Progress::Done;
        }
        self.w.wait();
        Progress::Blocked
    }
}

/// What one call on a TCP request/response leg came to.
enum Moved {
    /// Part of the message; more to come.
    Part,
    /// The request (requester) or response (responder) went out whole; now
    /// receiving.
    Sent,
    /// The whole message came in; now sending.
    Received,
    /// Nothing moved: wait, or the flow is done.
    Idle(Progress),
    /// The peer closed cleanly between transactions.
    Eof,
}

impl Rr<TcpStream> {
    /// One read or write of the leg under way; moves to the other leg when a
    /// message is complete. A requester sends requests and receives responses, a
    /// responder the other way round.
    #[inline]
    fn tcp_leg(&mut self) -> Result<Moved, EngineError> {
        let flow = self.ctx.id;
        let (out, inn) = if self.requester {
            (&self.req, &mut self.resp)
        } else {
            (&self.resp, &mut self.req)
        };
        match self.leg {
            Leg::Send(off) => match match &mut self.pipe {
                Some(p) => p.send(&self.sock, &out[off..]),
                None => net::send_once(&self.sock, &out[off..]),
            } {
                Ok(0) => Err(EngineError::PeerClosed { flow }),
                Ok(n) => {
                    let off = off + n;
                    let whole = off == out.len();
                    self.m.io(n as u64, u64::from(whole));
                    if whole {
                        self.leg = Leg::Recv(0);
                        return Ok(Moved::Sent);
                    }
                    self.leg = Leg::Send(off);
                    Ok(Moved::Part)
                }
                Err(e) if is_timeout(&e) => Ok(Moved::Idle(self.blocked())),
                Err(e) => Err(EngineError::io("send")(e)),
            },
            Leg::Recv(off) => match match &mut self.pipe {
                Some(p) => p.recv(&self.sock, &mut inn[off..]),
                None => net::recv_once(&self.sock, &mut inn[off..]),
            } {
                Ok(0) if off == 0 => Ok(Moved::Eof),
                Ok(0) => Err(EngineError::PeerClosed { flow }),
                Ok(n) => {
                    self.m.io(n as u64, 0);
                    let off = off + n;
                    if off == inn.len() {
                        self.leg = Leg::Send(0);
                        return Ok(Moved::Received);
                    }
                    self.leg = Leg::Recv(off);
                    Ok(Moved::Part)
                }
                Err(e) if is_timeout(&e) => Ok(Moved::Idle(self.blocked())),
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                    Err(EngineError::PeerClosed { flow })
                }
                Err(e) => Err(EngineError::io("recv")(e)),
            },
            Leg::Done => Ok(Moved::Idle(Progress::Done)),
        }
    }
}

impl<S> std::fmt::Debug for Rr<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rr")
            .field("flow", &self.ctx.id)
            .field("leg", &self.leg)
            .finish_non_exhaustive()
    }
}

/// A TCP requester, as a [`Flow`]: one transaction at a time, each timed.
#[derive(Debug)]
pub struct TcpRequester {
    rr: Rr<TcpStream>,
    hist: Histogram,
    start: Instant,
    phase: Phase,
    /// The next step begins a transaction.
    fresh: bool,
    end: Option<Instant>,
}

impl TcpRequester {
    /// Builds the flow.
    pub fn new(sock: TcpStream, ctx: &FlowCtx) -> Result<TcpRequester, EngineError> {
        TcpRequester::with(sock, None, ctx)
    }

    /// Builds the flow, its messages through `pipe` when there is one.
    pub fn with(
        sock: TcpStream,
        pipe: Option<Box<dyn Pipe>>,
        ctx: &FlowCtx,
    ) -> Result<TcpRequester, EngineError> {
        let mut rr = Rr::new(sock, ctx, true, Room::Exact)?;
        rr.pipe = pipe;
        Ok(TcpRequester {
            rr,
            hist: new_histogram(),
            start: Instant::now(),
            phase: Phase::Warmup,
            fresh: true,
            end: None,
        })
    }
}

impl Flow for TcpRequester {
    fn fd(&self) -> BorrowedFd<'_> {
        self.rr.sock.as_fd()
    }

    #[inline]
    fn step(&mut self) -> Result<Progress, EngineError> {
        let rr = &mut self.rr;
        if self.fresh {
            // A new transaction (its clock keeps running if the first write blocks).
            self.fresh = false;
            let now = Instant::now();
            self.phase = rr.m.tick(now);
            if self.phase == Phase::After || rr.ctx.stopped() {
                self.end = Some(now);
                rr.leg = Leg::Done;
                return Ok(Progress::Done);
            }
            self.start = now;
        }
        Ok(match rr.tcp_leg()? {
            Moved::Part | Moved::Sent => Progress::Moved,
            Moved::Received => {
                if self.phase == Phase::Measure {
                    record(&mut self.hist, self.start, Instant::now());
                }
                rr.m.transaction();
                self.fresh = true;
                Progress::Moved
            }
            Moved::Idle(p) => p,
            Moved::Eof => return Err(EngineError::PeerClosed { flow: rr.ctx.id }),
        })
    }

    fn finish(self: Box<Self>) -> Result<FlowOutput, EngineError> {
        let this = *self;
        let end = this.end.unwrap_or_else(Instant::now);
        let info = crate::sockopt::tcp_info(&this.rr.sock);
        let mptcp = crate::sockopt::mptcp_subflows(&this.rr.sock);
        let _ = this.rr.sock.shutdown(Shutdown::Write);
        let mut result = this
            .rr
            .m
            .finish(end, this.rr.ctx.id, this.rr.ctx.dir, Role::Requester);
        result.tcp_info = info;
        result.mptcp = mptcp;
        result.io = this.rr.pipe.as_ref().map(|p| p.report());
        Ok(FlowOutput {
            result,
            latency: Some(this.hist),
        })
    }
}

/// A TCP responder, as a [`Flow`]: answers every request until the requester
/// closes.
#[derive(Debug)]
pub struct TcpResponder {
    rr: Rr<TcpStream>,
}

impl TcpResponder {
    /// Builds the flow.
    pub fn new(sock: TcpStream, ctx: &FlowCtx) -> Result<TcpResponder, EngineError> {
        TcpResponder::with(sock, None, ctx)
    }

    /// Builds the flow, its messages through `pipe` when there is one.
    pub fn with(
        sock: TcpStream,
        pipe: Option<Box<dyn Pipe>>,
        ctx: &FlowCtx,
    ) -> Result<TcpResponder, EngineError> {
        let mut rr = Rr::new(sock, ctx, false, Room::Exact)?;
        rr.pipe = pipe;
        Ok(TcpResponder { rr })
    }
}

impl Flow for TcpResponder {
    fn fd(&self) -> BorrowedFd<'_> {
        self.rr.sock.as_fd()
    }

    #[inline]
    fn step(&mut self) -> Result<Progress, EngineError> {
        let rr = &mut self.rr;
        Ok(match rr.tcp_leg()? {
            Moved::Part => Progress::Moved,
            Moved::Received => {
                rr.m.tick(Instant::now());
                Progress::Moved
            }
            Moved::Sent => {
                rr.m.transaction();
                Progress::Moved
            }
            Moved::Idle(p) => p,
            Moved::Eof => {
                rr.leg = Leg::Done;
                Progress::Done
            }
        })
    }

    fn finish(self: Box<Self>) -> Result<FlowOutput, EngineError> {
        let rr = self.rr;
        let info = crate::sockopt::tcp_info(&rr.sock);
        let mptcp = crate::sockopt::mptcp_subflows(&rr.sock);
        let mut result =
            rr.m.finish(Instant::now(), rr.ctx.id, rr.ctx.dir, Role::Responder);
        result.tcp_info = info;
        result.mptcp = mptcp;
        result.io = rr.pipe.as_ref().map(|p| p.report());
        Ok(FlowOutput {
            result,
            latency: None,
        })
    }
}

/// A UDP requester, as a [`Flow`]. A transaction whose request or response is
/// lost is given up after the socket timeout ([`crate::sockopt::WAKE`]), counted
/// in `udp.lost` and retried.
#[derive(Debug)]
pub struct UdpRequester {
    rr: Rr<UdpSocket>,
    hist: Histogram,
    start: Instant,
    phase: Phase,
    lost: u64,
}

impl UdpRequester {
    /// Builds the flow.
    pub fn new(sock: UdpSocket, ctx: &FlowCtx) -> Result<UdpRequester, EngineError> {
        let rr = Rr::new(sock, ctx, true, Room::UdpRequester)?;
        Ok(UdpRequester {
            rr,
            hist: new_histogram(),
            start: Instant::now(),
            phase: Phase::Warmup,
            lost: 0,
        })
    }
}

impl Flow for UdpRequester {
    fn fd(&self) -> BorrowedFd<'_> {
        self.rr.sock.as_fd()
    }

    #[inline]
    fn step(&mut self) -> Result<Progress, EngineError> {
        let rr = &mut self.rr;
        match rr.leg {
            Leg::Send(_) => {
                let now = Instant::now();
                self.phase = rr.m.tick(now);
                if self.phase == Phase::After || rr.ctx.stopped() {
                    rr.leg = Leg::Done;
                    return Ok(Progress::Done);
                }
                self.start = now;
                match net::send_once(&rr.sock, &rr.req) {
                    Ok(n) => {
                        rr.m.io(n as u64, 1);
                        rr.leg = Leg::Recv(0);
                        Ok(Progress::Moved)
                    }
                    Err(e)
                        if is_timeout(&e)
                            || rustix::io::Errno::from_io_error(&e)
                                == Some(rustix::io::Errno::NOBUFS) =>
                    {
                        rr.m.call();
                        Ok(Progress::Blocked)
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                        Err(EngineError::PeerClosed { flow: rr.ctx.id })
                    }
                    Err(e) => Err(EngineError::io("send")(e)),
                }
            }
            Leg::Recv(_) => match net::recv_once(&rr.sock, &mut rr.resp) {
                Ok(PREAMBLE_LEN) if rr.resp[..8] == *PREAMBLE_MAGIC => {
                    rr.m.call();
                    Ok(Progress::Moved)
                }
                Ok(n) => {
                    rr.m.io(n as u64, 0);
                    if self.phase == Phase::Measure {
                        record(&mut self.hist, self.start, Instant::now());
                    }
                    rr.m.transaction();
                    rr.leg = Leg::Send(0);
                    Ok(Progress::Moved)
                }
                Err(e) if is_timeout(&e) => {
                    rr.m.call();
                    // Non-blocking sockets return at once: the answer counts as
                    // lost only once the usual timeout has passed without it.
                    let lost_at = self.start + crate::sockopt::WAKE;
                    if Instant::now() < lost_at && !rr.ctx.stopped() {
                        if rr.grouped {
                            return Ok(Progress::Until(lost_at));
                        }
                        rr.w.wait();
                        return Ok(Progress::Blocked);
                    }
                    self.lost += 1;
                    rr.leg = Leg::Send(0);
                    Ok(Progress::Moved)
                }
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                    Err(EngineError::PeerClosed { flow: rr.ctx.id })
                }
                Err(e) => Err(EngineError::io("recv")(e)),
            },
            Leg::Done => Ok(Progress::Done),
        }
    }

    fn finish(self: Box<Self>) -> Result<FlowOutput, EngineError> {
        let this = *self;
        let rr = this.rr;
        let mut result =
            rr.m.finish(Instant::now(), rr.ctx.id, rr.ctx.dir, Role::Requester);
        result.udp = Some(UdpStats {
            lost: this.lost,
            ..UdpStats::default()
        });
        Ok(FlowOutput {
            result,
            latency: Some(this.hist),
        })
    }
}

/// A UDP responder, as a [`Flow`]: echoes a response to every request until a
/// second past the end.
#[derive(Debug)]
pub struct UdpResponder {
    rr: Rr<UdpSocket>,
    give_up: Instant,
}

impl UdpResponder {
    /// Builds the flow.
    pub fn new(sock: UdpSocket, ctx: &FlowCtx) -> Result<UdpResponder, EngineError> {
        let rr = Rr::new(sock, ctx, false, Room::UdpResponder)?;
        Ok(UdpResponder {
            rr,
            give_up: ctx.clock.end + std::time::Duration::from_secs(1),
        })
    }
}

impl Flow for UdpResponder {
    fn fd(&self) -> BorrowedFd<'_> {
        self.rr.sock.as_fd()
    }

    #[inline]
    fn step(&mut self) -> Result<Progress, EngineError> {
        let rr = &mut self.rr;
        if rr.leg == Leg::Done {
            return Ok(Progress::Done);
        }
        let r = net::recv_once(&rr.sock, &mut rr.req);
        let now = Instant::now();
        rr.m.tick(now);
        let progress = match r {
            Ok(PREAMBLE_LEN) if rr.req[..8] == *PREAMBLE_MAGIC => {
                rr.m.call();
                Progress::Moved
            }
            Ok(n) => {
                rr.m.io(n as u64, 0);
                match net::send_once(&rr.sock, &rr.resp) {
                    Ok(n) => {
                        rr.m.io(n as u64, 1);
                        rr.m.transaction();
                    }
                    Err(_) => rr.m.call(),
                }
                Progress::Moved
            }
            Err(e) if is_timeout(&e) || e.kind() == std::io::ErrorKind::ConnectionRefused => {
                rr.m.call();
                rr.w.wait();
                Progress::Blocked
            }
            Err(e) => return Err(EngineError::io("recv")(e)),
        };
        if now >= self.give_up || rr.ctx.stopped() {
            rr.leg = Leg::Done;
            return Ok(Progress::Done);
        }
        Ok(progress)
    }

    fn finish(self: Box<Self>) -> Result<FlowOutput, EngineError> {
        let rr = self.rr;
        let result =
            rr.m.finish(Instant::now(), rr.ctx.id, rr.ctx.dir, Role::Responder);
        Ok(FlowOutput {
            result,
            latency: None,
        })
    }
}
