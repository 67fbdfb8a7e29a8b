//! Bulk TCP transfer: the sender writes `size`-byte messages until the measured
//! interval ends, then half-closes; the receiver reads until end of stream. Both
//! count independently, so their totals can be compared.

use std::io::Read;
use std::net::{Shutdown, TcpStream};
use std::os::fd::{AsFd, BorrowedFd};
use std::time::{Duration, Instant};

use netsonde_model::spec::IoStrategy;

use crate::flow::{run_stream, Flow, Progress, Want};
use crate::io::{self, Moved, Sock};
use crate::meter::{FlowCtx, IdleLimit, Meter};
use crate::send::{Gate, Sending};
use crate::verify::Verifier;
use crate::{is_timeout, sockopt, EngineError, FlowOutput};

/// Sends until the measured interval ends, then half-closes and waits for the
/// receiver's close so that `TCP_INFO` covers every byte.
pub fn tcp_send(sock: TcpStream, ctx: &FlowCtx) -> Result<FlowOutput, EngineError> {
    run_stream(TcpSender::new(sock, ctx)?, true, ctx)
}

/// Receives until end of stream (or the hard deadline).
pub fn tcp_recv(sock: TcpStream, ctx: &FlowCtx) -> Result<FlowOutput, EngineError> {
    run_stream(TcpReceiver::new(sock, ctx)?, false, ctx)
}

/// [`tcp_send`] over a strategy built elsewhere ([`TcpSender::with`]).
pub fn tcp_send_with(
    sock: TcpStream,
    tx: Box<dyn io::Tx>,
    ctx: &FlowCtx,
) -> Result<FlowOutput, EngineError> {
    run_stream(TcpSender::with(sock, tx, ctx)?, true, ctx)
}

/// [`tcp_recv`] over a strategy built elsewhere ([`TcpReceiver::with`]).
pub fn tcp_recv_with(
    sock: TcpStream,
    rx: Box<dyn io::Rx>,
    ctx: &FlowCtx,
) -> Result<FlowOutput, EngineError> {
    run_stream(TcpReceiver::with(sock, rx, ctx)?, false, ctx)
}

#[derive(Debug)]
enum SendState {
    Sending,
    /// Half-closed; reading until the receiver closes.
    Draining,
    Done,
}

/// How often an unpaced TCP sender reads the clock: every `every` writes, with
/// `every` doubled while the clock moves less than [`Stride::FINE`] between
/// reads and halved when it moves more than [`Stride::COARSE`]. A 64-byte write
/// takes about 300 ns, and reading the clock (`clock_gettime`, 5% of such a
/// sender's CPU) for each one buys nothing: the clock only decides when the phases
/// begin and end, and a boundary seen 10 µs late moves no byte between phases
/// unseen (the meter's window starts when it is seen). A paced sender reads it on
/// every write, and so does a UDP sender, which stamps each datagram.
#[derive(Debug)]
struct Stride {
    every: u32,
    left: u32,
    /// ns since `t0`.
    last: u64,
}

impl Stride {
    /// 2 µs, in ns.
    const FINE: u64 = 2_000;
    /// 10 µs.
    const COARSE: u64 = 10_000;
    const MAX: u32 = 64;

    fn new() -> Stride {
        Stride {
            every: 1,
            left: 0,
            last: 0,
        }
    }

    /// Whether this write should read the clock.
    #[inline]
    fn due(&mut self) -> bool {
        if self.left > 0 {
            self.left -= 1;
            return false;
        }
        true
    }

    /// After a clock reading at `now`: sets how many writes to skip next.
    #[inline]
    fn read(&mut self, now: u64) {
        let moved = now.saturating_sub(self.last);
        if moved < Self::FINE {
            self.every = (self.every * 2).min(Self::MAX);
        } else if moved > Self::COARSE {
            self.every = (self.every / 2).max(1);
        }
        self.left = self.every - 1;
        self.last = now;
    }
}

/// A TCP stream's sending end, as a [`Flow`].
#[derive(Debug)]
pub struct TcpSender {
    sock: TcpStream,
    s: Sending,
    state: SendState,
    scratch: [u8; 64],
    /// `None` for a paced sender, or one that ends by volume: it reads the
    /// clock for every write.
    stride: Option<Stride>,
    /// Whether the bytes acknowledged as the measured interval began are noted
    /// (or need not be: no `--interval`).
    acked_noted: bool,
}

/// How long a draining sender waits for its peer's close before it looks at
/// its stop flag again.
const DRAIN_STEP: Duration = Duration::from_millis(10);

/// Whether `sock` has something to read (data, or the peer's close) within
/// `wait`.
fn readable(sock: &TcpStream, wait: Duration) -> bool {
    let mut p = [rustix::event::PollFd::new(
        sock,
        rustix::event::PollFlags::IN,
    )];
    let t = rustix::event::Timespec {
        tv_sec: 0,
        tv_nsec: wait.as_nanos() as i64,
    };
    // An error (EINTR) counts as readable: the read that follows says what
    // it is.
    rustix::event::poll(&mut p, Some(&t)).map_or(true, |n| n > 0)
}

impl TcpSender {
    /// Builds the flow, with the strategy `ctx.spec.tx_io` names.
    pub fn new(sock: TcpStream, ctx: &FlowCtx) -> Result<TcpSender, EngineError> {
        let tx = io::tx(ctx.spec.tx_io, Sock::Tcp(&sock), &ctx.spec, ctx.format)?;
        TcpSender::with(sock, tx, ctx)
    }

    /// Builds the flow over a sending strategy built elsewhere: a transport
    /// layered on the connection (TLS), which writes its own records.
    pub fn with(
        sock: TcpStream,
        tx: Box<dyn io::Tx>,
        ctx: &FlowCtx,
    ) -> Result<TcpSender, EngineError> {
        Ok(TcpSender {
            s: Sending::with(tx, ctx),
            sock,
            state: SendState::Sending,
            scratch: [0; 64],
            // A sender that ends by volume looks at every write, so it stops
            // within one message of its share.
            stride: (ctx.spec.rate.is_none() && ctx.spec.volume.is_none()).then(Stride::new),
            acked_noted: ctx.spec.interval.is_none(),
        })
    }

    /// Once the meter has stored where the measured interval began: notes the
    /// bytes acknowledged by then, once per flow (one `TCP_INFO` read, off the
    /// per-message path), for the interval records.
    fn note_acked_start(&mut self) {
        let start = &self.s.ctx.counters.start;
        if !start.reached() {
            return;
        }
        self.acked_noted = true;
        if let Some(a) = crate::sockopt::bytes_acked(&self.sock, self.s.ctx.spec.mptcp) {
            start.store_acked(a);
        }
    }

    fn stop_sending(&mut self, now: Instant) {
        self.s.stop(Sock::Tcp(&self.sock), now);
        // As the measured interval ends (the meter has closed): what had been
        // acknowledged by then, for the last interval record.
        if self.s.ctx.spec.interval.is_some() {
            if let Some(a) = crate::sockopt::bytes_acked(&self.sock, self.s.ctx.spec.mptcp) {
                self.s.ctx.counters.end.store_acked(a);
            }
        }
        let _ = self.sock.shutdown(Shutdown::Write);
        self.state = SendState::Draining;
    }
}

impl Flow for TcpSender {
    fn fd(&self) -> BorrowedFd<'_> {
        self.sock.as_fd()
    }

    fn wants(&self) -> Want {
        match self.state {
            SendState::Sending => Want::Write,
            SendState::Draining => Want::Read,
            SendState::Done => Want::Nothing,
        }
    }

    #[inline]
    fn step(&mut self) -> Result<Progress, EngineError> {
        match self.state {
            SendState::Sending => {}
            SendState::Draining => {
                // Wait for the receiver to read everything and close (bounded by
                // hard_end).
                let ctx = &self.s.ctx;
                if Instant::now() >= ctx.clock.hard_end || ctx.stopped() {
                    self.state = SendState::Done;
                    return Ok(Progress::Done);
                }
                // The peer's close is waited for in short steps, so a stop is
                // seen within one (an iperf3 client closes its streams only
                // after the results: a blocking read held the end 200 ms). A
                // sender whose loop waits for its socket with others' reads
                // at once, and is blocked until the loop sees it readable.
                if !self.s.waits_in_loop() && !readable(&self.sock, DRAIN_STEP) {
                    return Ok(Progress::Blocked);
                }
                return Ok(match (&self.sock).read(&mut self.scratch) {
                    Ok(0) => {
                        self.state = SendState::Done;
                        Progress::Done
                    }
                    Ok(_) => Progress::Moved,
                    Err(e) if is_timeout(&e) => Progress::Blocked,
                    Err(_) => {
                        self.state = SendState::Done;
                        Progress::Done
                    }
                });
            }
            SendState::Done => return Ok(Progress::Done),
        }
        let look = self.stride.as_mut().is_none_or(Stride::due);
        if look || self.s.ctx.stopped() {
            match self.s.gate() {
                Gate::Over(now) => {
                    self.stop_sending(now);
                    return Ok(Progress::Moved);
                }
                Gate::Hold(until) => return Ok(Progress::Until(until)),
                Gate::Go(now) => {
                    if let Some(s) = &mut self.stride {
                        s.read(now);
                    }
                    if !self.acked_noted {
                        self.note_acked_start();
                    }
                }
            }
        }
        let flow = self.s.ctx.id;
        match self.s.send(Sock::Tcp(&self.sock), 0, 0) {
            None => Ok(Progress::Done),
            Some(Ok(Moved { bytes: 0, .. })) => Err(EngineError::PeerClosed { flow }),
            Some(Ok(_)) => Ok(Progress::Moved),
            Some(Err(e)) if is_timeout(&e) => Ok(Progress::Blocked),
            Some(Err(e))
                if e.kind() == std::io::ErrorKind::BrokenPipe
                    || e.kind() == std::io::ErrorKind::ConnectionReset =>
            {
                // A receiver that closes once the measured interval is over (an
                // iperf3 server on TEST_END, which may come before this thread's
                // last write) ends the flow, not with an error.
                let now = Instant::now();
                if now >= self.s.ctx.clock.end {
                    self.s.stop(Sock::Tcp(&self.sock), now);
                    self.state = SendState::Done;
                    return Ok(Progress::Done);
                }
                Err(EngineError::PeerClosed { flow })
            }
            Some(Err(e)) => Err(EngineError::io("send")(e)),
        }
    }

    fn finish(mut self: Box<Self>) -> Result<FlowOutput, EngineError> {
        if !self.s.stopped() {
            self.stop_sending(Instant::now());
        }
        let this = *self;
        let mut tcp_info = sockopt::tcp_info(&this.sock);
        let mptcp = sockopt::mptcp_subflows(&this.sock);
        sockopt::with_subflows(&mut tcp_info, mptcp.as_deref());
        let mut result = this.s.finish();
        result.tcp_info = tcp_info;
        result.mptcp = mptcp;
        Ok(FlowOutput {
            result,
            latency: None,
        })
    }
}

/// How long a receiver may let data wait in the socket before it is woken: about
/// this much time's worth at the rate it has been reading.
const WAKE_EVERY: Duration = Duration::from_millis(1);

/// How often the receive low-water mark is reconsidered.
const LOWAT_WINDOW: Duration = Duration::from_millis(20);

/// The receive low-water mark (SO_RCVLOWAT) of a reader that blocks or waits in
/// epoll: the kernel wakes it once about [`WAKE_EVERY`] of data is queued, up to
/// the read size, not at every arriving segment.
///
/// On loopback each wake-up is paid by the sending core (the receive path runs in
/// its softirq, and so does the wake-up of the reader on the other core): with a
/// mark of one read, a 128 KiB stream on the project's 2-core VM went from about
/// 20 to 26 Gbit/s, the reader's voluntary context switches from 60,000 to 6,000
/// in 3 s. The mark follows the rate it measures (once per [`LOWAT_WINDOW`], at
/// most one `setsockopt` then; none per message), so a slow or paced stream is
/// still read within about a millisecond, and a stalled one within the socket's
/// 200 ms timeout, which returns what has come. The bytes, and when the sender
/// sent them, are the same; only when the reader looks changes.
#[derive(Debug)]
struct RcvLowat {
    cap: usize,
    set: usize,
    /// ns since `t0`.
    since: u64,
    bytes: u64,
}

impl RcvLowat {
    fn new(cap: usize) -> RcvLowat {
        RcvLowat {
            cap: cap.max(1),
            set: 1,
            since: 0,
            bytes: 0,
        }
    }

    /// After a read of `n` bytes at `now` (ns since `t0`).
    #[inline]
    fn read(&mut self, sock: &TcpStream, now: u64, n: u64) {
        self.bytes += n;
        let took = now.saturating_sub(self.since);
        if took < LOWAT_WINDOW.as_nanos() as u64 {
            return;
        }
        let per_wake = self.bytes as f64 * WAKE_EVERY.as_secs_f64() / (took as f64 / 1e9);
        let want = (per_wake as usize).clamp(1, self.cap);
        // Only a change of more than 2x is worth a system call.
        if want > self.set * 2 || want < self.set / 2 {
            let v = i32::try_from(want).unwrap_or(i32::MAX);
            if crate::sys::setsockopt_int(
                sock,
                crate::sys::net::SOL_SOCKET,
                crate::sys::net::SO_RCVLOWAT,
                v,
            )
            .is_ok()
            {
                self.set = want;
            }
        }
        self.since = now;
        self.bytes = 0;
    }
}

/// A TCP stream's receiving end, as a [`Flow`].
pub struct TcpReceiver {
    sock: TcpStream,
    ctx: FlowCtx,
    rx: Box<dyn io::Rx>,
    verifier: Option<Verifier>,
    m: Meter,
    lowat: Option<RcvLowat>,
    idle: IdleLimit,
}

impl TcpReceiver {
    /// Builds the flow, with the strategy `ctx.spec.rx_io` names.
    pub fn new(sock: TcpStream, ctx: &FlowCtx) -> Result<TcpReceiver, EngineError> {
        let rx = io::rx(ctx.spec.rx_io, Sock::Tcp(&sock), &ctx.spec)?;
        TcpReceiver::with(sock, rx, ctx)
    }

    /// Builds the flow over a receiving strategy built elsewhere (as
    /// [`TcpSender::with`]).
    pub fn with(
        sock: TcpStream,
        rx: Box<dyn io::Rx>,
        ctx: &FlowCtx,
    ) -> Result<TcpReceiver, EngineError> {
        Ok(TcpReceiver {
            rx,
            // A reader that blocks until data comes. (An epoll group's flows share
            // one wait: a mark on one would hold back the others' turns.) An
            // iperf3 sender that ends by volume does not close its stream, so its
            // last bytes, below the mark, would wait for the socket's timeout: it
            // is read as it comes.
            lowat: (ctx.spec.rx_io == IoStrategy::Copy
                && !ctx.spec.iperf3_io
                && (ctx.spec.volume.is_none() || ctx.format == crate::datagram::Format::Netsonde))
                .then(|| RcvLowat::new((ctx.spec.size.0 as usize).max(io::TCP_READ))),
            verifier: ctx.spec.verify.then(|| Verifier::new(ctx.spec.size.0)),
            m: Meter::new(ctx),
            idle: IdleLimit::new(ctx, true),
            ctx: ctx.clone(),
            sock,
        })
    }
}

impl std::fmt::Debug for TcpReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TcpReceiver")
            .field("flow", &self.ctx.id)
            .finish_non_exhaustive()
    }
}

impl Flow for TcpReceiver {
    fn fd(&self) -> BorrowedFd<'_> {
        self.sock.as_fd()
    }

    #[inline]
    fn step(&mut self) -> Result<Progress, EngineError> {
        if self.idle.has_ended() {
            return Ok(Progress::Done);
        }
        let sock = Sock::Tcp(&self.sock);
        let r = match &mut self.verifier {
            Some(v) => self.rx.recv(sock, &mut |d, _| v.stream(d)),
            None => self.rx.recv(sock, &mut |_, _| {}),
        };
        let clock = &self.ctx.clock;
        let ns = clock.now_ns();
        self.m.tick_ns(ns);
        match r {
            Ok(None) => {
                self.idle.ended(ns);
                Ok(Progress::Done)
            }
            Ok(Some(mv)) => {
                self.m.moved(mv.bytes, mv.messages, mv.calls);
                self.idle.data(ns);
                if let Some(l) = &mut self.lowat {
                    l.read(&self.sock, ns, mv.bytes);
                }
                Ok(Progress::Moved)
            }
            Err(e) if is_timeout(&e) => {
                self.m.call();
                if ns >= clock.hard_ns || self.ctx.stopped() {
                    self.idle.ended(ns);
                    return Ok(Progress::Done);
                }
                if ns < clock.end_ns {
                    self.idle.check(ns, self.ctx.id)?;
                }
                Ok(Progress::Blocked)
            }
            // A sender that resets once the measured interval is over ends the
            // flow; before, the test lost its peer.
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                if ns >= clock.end_ns {
                    self.idle.ended(ns);
                    return Ok(Progress::Done);
                }
                Err(EngineError::PeerClosed { flow: self.ctx.id })
            }
            Err(e) => Err(EngineError::io("recv")(e)),
        }
    }

    fn finish(self: Box<Self>) -> Result<FlowOutput, EngineError> {
        let mut this = *self;
        let info = sockopt::tcp_info(&this.sock);
        let mptcp = sockopt::mptcp_subflows(&this.sock);
        let mut report = this.rx.report();
        report.verify_errors = this.verifier.map(|v| v.errors);
        drop(this.sock);
        let mut result = this.idle.close(this.m, &this.ctx);
        result.tcp_info = info;
        result.mptcp = mptcp;
        result.io = Some(report);
        Ok(FlowOutput {
            result,
            latency: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_receiver_that_gets_nothing_for_its_idle_limit_fails_the_test() {
        use netsonde_model::spec::{FlowDir, TestKind, TestSpec};
        use netsonde_model::units::Nanos;
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let _quiet_peer = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (sock, _) = l.accept().unwrap();
        sock.set_read_timeout(Some(Duration::from_millis(20)))
            .unwrap();
        let mut spec = TestSpec::new(TestKind::TcpStream);
        spec.duration = Nanos::from_secs(10);
        spec.rcv_timeout = Some(Nanos::from_millis(300));
        let ctx = FlowCtx {
            id: 3,
            dir: FlowDir::Up,
            clock: crate::FlowClock::new(Instant::now(), &spec),
            spec: std::sync::Arc::new(spec),
            counters: Default::default(),
            stop: Default::default(),
            format: Default::default(),
        };
        let start = Instant::now();
        let e = tcp_recv(sock, &ctx).unwrap_err();
        let took = start.elapsed();
        assert!(matches!(e, EngineError::Idle { flow: 3, .. }), "{e}");
        assert!(e.to_string().contains("--rcv-timeout"), "{e}");
        assert!(
            took >= Duration::from_millis(300) && took < Duration::from_secs(3),
            "{took:?}"
        );
    }

    #[test]
    fn the_clock_stride_follows_how_fast_writes_are() {
        let mut s = Stride::new();
        let t = s.last;
        // Writes 1 µs apart: the stride doubles up to its cap.
        for i in 1..=10 {
            assert!(s.due());
            s.read(t + i * 1_000);
            while !s.due() {}
        }
        assert_eq!(s.every, Stride::MAX);
        // A write that took 50 µs halves it at once.
        s.read(t + 100 * 1_000);
        assert_eq!(s.every, Stride::MAX / 2);
    }

    #[test]
    fn the_low_water_mark_is_about_a_millisecond_of_data_up_to_the_read() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let sock = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let mut w = RcvLowat::new(1 << 20);
        let t = w.since;
        // 100 MB in 40 ms (20 Gbit/s): 2.5 MB a millisecond, capped at the read.
        w.read(&sock, t + 40 * 1_000_000, 100_000_000);
        assert_eq!(w.set, 1 << 20);
        // 10 Mbit/s: 1,250 B a millisecond.
        w.read(&sock, t + 140 * 1_000_000, 125_000);
        assert_eq!(w.set, 1250);
        // Within 2x of the mark: no system call.
        w.read(&sock, t + 240 * 1_000_000, 200_000);
        assert_eq!(w.set, 1250);
        // Reads closer together than the window only add up.
        w.read(&sock, t + 245 * 1_000_000, 1_000_000);
        assert_eq!(w.set, 1250);
    }
}
