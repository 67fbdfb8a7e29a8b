//! UDP streams: paced datagrams carrying a sequence number and a send timestamp; the
//! receiver counts loss, duplicates and reordering ([`SeqTracker`]) and RFC 3550
//! interarrival jitter. Also the UDP handshake that ties a flow to its session.
//! The datagram layout is in [`crate::datagram`].

use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::os::fd::{AsFd, BorrowedFd};
use std::time::{Duration, Instant};

use netsonde_model::result::UdpStats;
use netsonde_model::units::Nanos;
use netsonde_proto::message::{
    decode_preamble, encode_preamble, Token, PREAMBLE_LEN, PREAMBLE_MAGIC,
};

use crate::datagram::{stamp, Format, FIN, HEADER};
use crate::flow::{run_one, run_stream, Flow, Progress};
use crate::io::{self, Sock};
use crate::meter::{FlowCtx, IdleLimit, Meter};
use crate::send::{Gate, Sending};
use crate::verify::Verifier;
use crate::{canonical, is_timeout, EngineError, FlowOutput};

/// How long a receiver waits past the end for the sender's FIN.
const FIN_WAIT: Duration = Duration::from_secs(1);
const WINDOW_BITS: u64 = 4096;

/// Loss, duplicate and reordering accounting over a sliding window of sequence
/// numbers. Fixed size: no allocation per datagram.
#[derive(Debug, Clone)]
pub struct SeqTracker {
    next: u64,
    bits: [u64; (WINDOW_BITS / 64) as usize],
    /// Distinct datagrams.
    pub unique: u64,
    /// Datagrams seen twice.
    pub duplicates: u64,
    /// Datagrams that arrived after a later one.
    pub reordered: u64,
}

/// What one arrival was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// In order or after a gap.
    New,
    /// Filled an earlier gap.
    Late,
    /// Seen before.
    Duplicate,
}

impl Default for SeqTracker {
    fn default() -> Self {
        SeqTracker {
            next: 0,
            bits: [0; (WINDOW_BITS / 64) as usize],
            unique: 0,
            duplicates: 0,
            reordered: 0,
        }
    }
}

impl SeqTracker {
    fn bit(&mut self, seq: u64) -> (&mut u64, u64) {
        let i = seq % WINDOW_BITS;
        (&mut self.bits[(i / 64) as usize], 1u64 << (i % 64))
    }

    /// Records one arrival.
    #[inline]
    pub fn observe(&mut self, seq: u64) -> Arrival {
        if seq >= self.next {
            // Clear the window slots of the gap being skipped (at most the window).
            let from = self.next.max(seq.saturating_sub(WINDOW_BITS - 1));
            for s in from..seq {
                let (w, b) = self.bit(s);
                *w &= !b;
            }
            let (w, b) = self.bit(seq);
            *w |= b;
            self.next = seq + 1;
            self.unique += 1;
            return Arrival::New;
        }
        if self.next - seq > WINDOW_BITS {
            // Too old to tell from a duplicate: count it as late.
            self.unique += 1;
            self.reordered += 1;
            return Arrival::Late;
        }
        let (w, b) = self.bit(seq);
        if *w & b != 0 {
            self.duplicates += 1;
            Arrival::Duplicate
        } else {
            *w |= b;
            self.unique += 1;
            self.reordered += 1;
            Arrival::Late
        }
    }

    /// Datagrams missing, given how many were sent (or, without a FIN, the highest
    /// sequence seen plus one).
    pub fn lost(&self, sent: Option<u64>) -> u64 {
        sent.unwrap_or(self.next).saturating_sub(self.unique)
    }
}

/// RFC 3550 section 6.4.1 interarrival jitter, in nanoseconds, kept as its
/// appendix A.8 keeps it: in integers, scaled by 16 (`J += |D| - (J + 8) / 16`),
/// so an arrival costs a subtraction, a shift and two additions.
#[derive(Debug, Clone, Default)]
pub struct Jitter {
    last_transit: Option<i64>,
    /// 16 times the estimate.
    j16: u64,
}

impl Jitter {
    /// Adds one arrival: the sender's and receiver's timestamps (any epochs).
    #[inline]
    pub fn observe(&mut self, tx_ns: u64, rx_ns: u64) {
        let transit = (rx_ns as i64).wrapping_sub(tx_ns as i64);
        if let Some(last) = self.last_transit {
            // A peer's stamps may be anything: the difference and the sum
            // saturate rather than wrap.
            let d = transit.abs_diff(last);
            let j = self.j16;
            // (j + 8) / 16 <= j for every j: no underflow.
            self.j16 = j.saturating_add(d) - (j.saturating_add(8) >> 4);
        }
        self.last_transit = Some(transit);
    }

    /// The current estimate.
    pub fn get(&self) -> Nanos {
        Nanos(crate::meter::UdpCounters::unscale(self.j16))
    }

    /// The estimate as kept (16 times it), for [`crate::UdpCounters::publish`]
    /// (the reader unscales it: [`crate::UdpCounters::unscale`]).
    #[inline]
    pub fn scaled(&self) -> u64 {
        self.j16
    }
}

/// Sends paced datagrams until the measured interval ends, then FINs.
pub fn udp_send(sock: UdpSocket, ctx: &FlowCtx) -> Result<FlowOutput, EngineError> {
    run_one(UdpSender::new(sock, ctx)?, ctx.spec.tx_io, ctx)
}

/// Receives datagrams until the sender's FIN (or a second past the end), with the
/// strategy built early when there is one ([`io::rx_early`]).
pub fn udp_recv(
    sock: UdpSocket,
    ready: Option<io::Ready>,
    ctx: &FlowCtx,
) -> Result<FlowOutput, EngineError> {
    run_stream(UdpReceiver::new(sock, ready, ctx)?, false, ctx)
}

/// FINs a sender sends, and how far apart.
const FINS: u8 = 5;
const FIN_SPACING: Duration = Duration::from_millis(10);

#[derive(Debug)]
enum SendState {
    Sending,
    /// Sending the FINs: how many are left, and when the next is due.
    Fin(u8, Instant),
    Done,
}

/// A UDP stream's sending end, as a [`Flow`].
#[derive(Debug)]
pub struct UdpSender {
    sock: UdpSocket,
    s: Sending,
    seq: u64,
    state: SendState,
    /// What is added to a send time since the flow's start to stamp it: 0 for
    /// netsonde's header, the Unix time of the start for iperf3's.
    epoch_ns: u64,
}

impl UdpSender {
    /// Builds the flow.
    pub fn new(sock: UdpSocket, ctx: &FlowCtx) -> Result<UdpSender, EngineError> {
        let epoch_ns = match ctx.format {
            Format::Netsonde => 0,
            Format::Iperf3 { .. } => {
                let wall = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as u64);
                let now = Instant::now();
                let ahead = ctx.clock.t0.saturating_duration_since(now).as_nanos() as u64;
                let behind = now.saturating_duration_since(ctx.clock.t0).as_nanos() as u64;
                (wall + ahead).saturating_sub(behind)
            }
        };
        Ok(UdpSender {
            s: Sending::new(Sock::Udp(&sock), ctx)?,
            sock,
            seq: 0,
            state: SendState::Sending,
            epoch_ns,
        })
    }
}

impl Flow for UdpSender {
    fn fd(&self) -> BorrowedFd<'_> {
        self.sock.as_fd()
    }

    #[inline]
    fn step(&mut self) -> Result<Progress, EngineError> {
        match self.state {
            SendState::Sending => {}
            SendState::Fin(left, due) => {
                let now = Instant::now();
                if now < due {
                    return Ok(Progress::Until(due));
                }
                let mut fin = [0u8; HEADER];
                stamp(&mut fin, FIN, self.seq);
                let _ = self.sock.send(&fin);
                self.state = match left {
                    0 | 1 => SendState::Done,
                    _ => SendState::Fin(left - 1, now + FIN_SPACING),
                };
                return Ok(Progress::Moved);
            }
            SendState::Done => return Ok(Progress::Done),
        }
        let now = match self.s.gate() {
            Gate::Over(now) => {
                self.s.stop(Sock::Udp(&self.sock), now);
                // iperf3's datagrams have no FIN: its receiver learns the end on
                // the control connection.
                self.state = match self.s.ctx.format {
                    Format::Netsonde => SendState::Fin(FINS, now),
                    Format::Iperf3 { .. } => SendState::Done,
                };
                return Ok(Progress::Moved);
            }
            Gate::Hold(until) => return Ok(Progress::Until(until)),
            Gate::Go(now) => now,
        };
        // A run of sends, each stamped with its own reading of the clock,
        // between two askings of the gate ([`Sending::run`]).
        let (run, boundary) = self.s.run(now);
        let flow = self.s.ctx.id;
        let mut now = now;
        for left in (0..run).rev() {
            match self
                .s
                .send(Sock::Udp(&self.sock), self.seq, now + self.epoch_ns)
            {
                None => return Ok(Progress::Done),
                Some(Ok(mv)) => self.seq += mv.messages,
                Some(Err(e)) => return send_error(e, flow),
            }
            if left > 0 {
                now = self.s.ctx.clock.now_ns();
                if now >= boundary {
                    break;
                }
            }
        }
        Ok(Progress::Moved)
    }

    fn finish(mut self: Box<Self>) -> Result<FlowOutput, EngineError> {
        if !self.s.stopped() {
            self.s.stop(Sock::Udp(&self.sock), Instant::now());
        }
        let this = *self;
        let mut result = this.s.finish();
        result.datagrams_sent = Some(this.seq);
        Ok(FlowOutput {
            result,
            latency: None,
        })
    }
}

/// What a failed send means: a full buffer or an interrupted call is a wait,
/// the peer's port closed ends the flow, anything else fails it.
fn send_error(e: std::io::Error, flow: u32) -> Result<Progress, EngineError> {
    match e {
        e if is_timeout(&e)
            || rustix::io::Errno::from_io_error(&e) == Some(rustix::io::Errno::NOBUFS) =>
        {
            Ok(Progress::Blocked)
        }
        e if e.kind() == std::io::ErrorKind::ConnectionRefused => {
            Err(EngineError::PeerClosed { flow })
        }
        e => Err(EngineError::io("send")(e)),
    }
}

/// What one receive call's datagrams came to.
#[derive(Debug, Clone, Copy, Default)]
struct Call {
    /// When the call's first datagram was handed over (ns since `t0`).
    arrived: Option<u64>,
    /// Datagrams sent in the measured interval, each counted once.
    fresh: u64,
    /// The sender's count, from its FIN.
    fin: Option<u64>,
    /// FIN and repeated handshake datagrams: protocol, not test bytes.
    skip_bytes: u64,
    skip_msgs: u64,
}

/// A receiver's per-datagram work and the state it keeps: loss, duplicates
/// and reordering ([`SeqTracker`]), jitter, `--verify`, and what the current
/// receive call's datagrams came to ([`Call`]).
struct Arrivals {
    clock: crate::meter::FlowClock,
    format: Format,
    seqs: SeqTracker,
    jitter: Jitter,
    verifier: Option<Verifier>,
    call: Call,
}

impl Arrivals {
    fn new(ctx: &FlowCtx) -> Arrivals {
        Arrivals {
            clock: ctx.clock,
            format: ctx.format,
            seqs: SeqTracker::default(),
            jitter: Jitter::default(),
            verifier: ctx.spec.verify.then(|| Verifier::new(ctx.spec.size.0)),
            call: Call::default(),
        }
    }

    /// One datagram of `len` bytes (`d` holds what fitted). The clock is read
    /// once per call, when its first datagram is handed over: after the
    /// receive returned, not before it blocked (a batch shares its arrival
    /// time).
    #[inline]
    fn arrive(&mut self, d: &[u8], len: usize) {
        let clock = &self.clock;
        let at = *self.call.arrived.get_or_insert_with(|| clock.now_ns());
        let Some((seq, tx)) = self.format.read(&d[..len.min(d.len())]) else {
            return;
        };
        // The sender's measured interval on its own clock, which stamps every
        // datagram: an arrival counts for the measured interval when it was
        // sent in it, so it matches the sender's count of the same datagrams.
        // An iperf3 sender's clock is not this test's: its datagrams count by
        // when they arrive.
        let netsonde = self.format == Format::Netsonde;
        let when = if netsonde { tx } else { at };
        if netsonde && (seq == FIN || (len == PREAMBLE_LEN && d[..8] == *PREAMBLE_MAGIC)) {
            if seq == FIN {
                self.call.fin = Some(tx);
            }
            self.call.skip_bytes += len as u64;
            self.call.skip_msgs += 1;
            return;
        }
        if self.seqs.observe(seq) != Arrival::Duplicate {
            self.jitter.observe(tx, at);
            if (clock.warm_ns..clock.end_ns).contains(&when) {
                self.call.fresh += 1;
            }
        }
        if let Some(v) = &mut self.verifier {
            v.datagram(d);
        }
    }
}

/// A UDP stream's receiving end, as a [`Flow`]: loss, duplicates, reordering,
/// jitter and `--verify` per datagram.
pub struct UdpReceiver {
    sock: UdpSocket,
    ctx: FlowCtx,
    rx: Box<dyn io::Rx>,
    m: Meter,
    /// The per-datagram accounting.
    acc: Arrivals,
    packets_measured: u64,
    /// The sender's count from its FIN.
    sent: Option<u64>,
    /// When to stop waiting for it (ns since `t0`).
    give_up: u64,
    done: bool,
    idle: IdleLimit,
}

impl UdpReceiver {
    /// Builds the flow, and its receiving strategy unless it was built early.
    pub fn new(
        sock: UdpSocket,
        ready: Option<io::Ready>,
        ctx: &FlowCtx,
    ) -> Result<UdpReceiver, EngineError> {
        let rx = match ready {
            Some(r) => r.into_rx(),
            None => io::rx(ctx.spec.rx_io, Sock::Udp(&sock), &ctx.spec)?,
        };
        Ok(UdpReceiver {
            rx,
            m: Meter::new(ctx),
            acc: Arrivals::new(ctx),
            packets_measured: 0,
            sent: None,
            give_up: ctx.clock.end_ns + FIN_WAIT.as_nanos() as u64,
            done: false,
            idle: IdleLimit::new(ctx, false),
            ctx: ctx.clone(),
            sock,
        })
    }
}

impl std::fmt::Debug for UdpReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UdpReceiver")
            .field("flow", &self.ctx.id)
            .finish_non_exhaustive()
    }
}

impl Flow for UdpReceiver {
    fn fd(&self) -> BorrowedFd<'_> {
        self.sock.as_fd()
    }

    #[inline]
    fn step(&mut self) -> Result<Progress, EngineError> {
        if self.done {
            return Ok(Progress::Done);
        }
        // Accounting per datagram happens in the callback, on one struct it
        // borrows whole (the receiver's per-datagram work: [`Arrivals::arrive`]).
        let acc = &mut self.acc;
        acc.call = Call::default();
        let r = self
            .rx
            .recv(Sock::Udp(&self.sock), &mut |d, len| acc.arrive(d, len));
        let Call {
            arrived,
            fresh,
            fin,
            skip_bytes,
            skip_msgs,
        } = acc.call;
        let clock = self.ctx.clock;
        let now = arrived.unwrap_or_else(|| clock.now_ns());
        self.m.tick_ns(now);
        self.packets_measured += fresh;
        if arrived.is_some() {
            // Per receive call, not per datagram: three relaxed stores the
            // interval reporter reads for its loss and jitter columns.
            self.ctx
                .counters
                .udp
                .publish(acc.seqs.next, acc.seqs.unique, acc.jitter.scaled());
        }
        let progress = match r {
            Ok(Some(mv)) => {
                self.m
                    .moved(mv.bytes - skip_bytes, mv.messages - skip_msgs, mv.calls);
                self.idle.data(now);
                Progress::Moved
            }
            Ok(None) => Progress::Moved,
            Err(e) if is_timeout(&e) || e.kind() == std::io::ErrorKind::ConnectionRefused => {
                self.m.call();
                if fin.is_none() && now < clock.end_ns && !self.ctx.stopped() {
                    self.idle.check(now, self.ctx.id)?;
                }
                Progress::Blocked
            }
            Err(e) => return Err(EngineError::io("recv")(e)),
        };
        if let Some(n) = fin {
            self.sent = Some(n);
            self.done = true;
        }
        if now >= self.give_up || self.ctx.stopped() {
            self.done = true;
        }
        if self.done {
            self.idle.ended(now);
        }
        Ok(if self.done { Progress::Done } else { progress })
    }

    fn finish(self: Box<Self>) -> Result<FlowOutput, EngineError> {
        let mut this = *self;
        let mut report = this.rx.report();
        report.verify_errors = this.acc.verifier.map(|v| v.errors);
        let (seqs, jitter) = (this.acc.seqs, this.acc.jitter);
        let mut result = this.idle.close(this.m, &this.ctx);
        let by_sequence = this.ctx.format != Format::Netsonde;
        result.udp = Some(UdpStats {
            packets: if by_sequence {
                seqs.unique
            } else {
                this.packets_measured
            },
            lost: seqs.lost(this.sent),
            duplicates: seqs.duplicates,
            reordered: seqs.reordered,
            jitter: jitter.get(),
            packets_total: seqs.unique,
            by_sequence,
        });
        result.io = Some(report);
        Ok(FlowOutput {
            result,
            latency: None,
        })
    }
}

/// Client side of the UDP handshake: sends the preamble from a connected socket
/// until the server echoes it, or the deadline passes.
pub fn client_handshake(
    sock: &UdpSocket,
    token: &Token,
    flow: u32,
    deadline: Instant,
) -> Result<(), EngineError> {
    let hello = encode_preamble(token, flow);
    let mut buf = [0u8; PREAMBLE_LEN + 1];
    let retry = Duration::from_millis(100);
    sock.set_read_timeout(Some(retry))
        .map_err(EngineError::io("setsockopt"))?;
    let refused = std::io::ErrorKind::ConnectionRefused;
    // Since when every hello has been refused (the port closed: the server has
    // not opened it yet, or gave up on the flow).
    let mut refused_since: Option<Instant> = None;
    while Instant::now() < deadline {
        let r = match sock.send(&hello) {
            Ok(_) => sock.recv(&mut buf),
            Err(e) => Err(e),
        };
        match r {
            Ok(n) if n == PREAMBLE_LEN && buf[..n] == hello => return Ok(()),
            Ok(_) => refused_since = None,
            Err(e) if is_timeout(&e) => refused_since = None,
            Err(e) if e.kind() == refused => {
                let since = *refused_since.get_or_insert_with(Instant::now);
                if since.elapsed() >= REFUSED_FOR {
                    return Err(EngineError::Io {
                        op: "UDP handshake",
                        source: std::io::Error::new(
                            refused,
                            "the server's port for this flow is closed",
                        ),
                    });
                }
                // An ICMP error answers at once: wait out the retry period.
                std::thread::sleep(retry);
            }
            Err(e) => return Err(EngineError::io("recv")(e)),
        }
    }
    Err(EngineError::Io {
        op: "UDP handshake",
        source: std::io::Error::new(std::io::ErrorKind::TimedOut, "no answer from the server"),
    })
}

/// How long every hello may be refused before the client gives up on the flow.
const REFUSED_FOR: Duration = Duration::from_secs(1);

/// Server side of the UDP handshake: waits for a preamble with `token` from
/// `peer_ip` (the control connection's peer, never an address the client names)
/// and connects the socket to its source. [`server_welcome`] echoes it once the
/// flow is ready to receive. Gives up at `deadline`, or within 100 ms of `cancel`
/// being set.
pub fn server_handshake(
    sock: &UdpSocket,
    token: &Token,
    peer_ip: IpAddr,
    deadline: Instant,
    cancel: &std::sync::atomic::AtomicBool,
) -> Result<(u32, SocketAddr), EngineError> {
    let mut buf = [0u8; PREAMBLE_LEN + 1];
    sock.set_read_timeout(Some(Duration::from_millis(100)))
        .map_err(EngineError::io("setsockopt"))?;
    while Instant::now() < deadline && !cancel.load(std::sync::atomic::Ordering::Relaxed) {
        match sock.recv_from(&mut buf) {
            Ok((PREAMBLE_LEN, from)) if canonical(from.ip()) == canonical(peer_ip) => {
                let pre: &[u8; PREAMBLE_LEN] = buf[..PREAMBLE_LEN].try_into().expect("len");
                if let Some((t, flow)) = decode_preamble(pre) {
                    if t == *token {
                        sock.connect(from).map_err(EngineError::io("connect"))?;
                        return Ok((flow, from));
                    }
                }
            }
            Ok(_) => {}
            Err(e) if is_timeout(&e) => {}
            Err(e) => return Err(EngineError::io("recv")(e)),
        }
    }
    Err(EngineError::Io {
        op: "UDP handshake",
        source: std::io::Error::new(std::io::ErrorKind::TimedOut, "no hello from the client"),
    })
}

/// Ends the server's side of the handshake: echoes flow `flow`'s preamble, which
/// tells the client the flow is ready (the client sends it again until then).
pub fn server_welcome(sock: &UdpSocket, token: &Token, flow: u32) -> Result<(), EngineError> {
    sock.send(&encode_preamble(token, flow))
        .map(drop)
        .map_err(EngineError::io("send"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_order_no_loss() {
        let mut t = SeqTracker::default();
        for s in 0..10_000 {
            assert_eq!(t.observe(s), Arrival::New);
        }
        assert_eq!(
            (t.unique, t.lost(Some(10_000)), t.reordered, t.duplicates),
            (10_000, 0, 0, 0)
        );
    }

    #[test]
    fn loss_reorder_duplicate() {
        let mut t = SeqTracker::default();
        for s in [0, 1, 3, 4, 2, 4, 7, 9] {
            t.observe(s);
        }
        // 5, 6, 8 never came; 2 came late; 4 came twice; 10 was sent too.
        assert_eq!(t.unique, 7);
        assert_eq!(t.reordered, 1);
        assert_eq!(t.duplicates, 1);
        assert_eq!(t.lost(Some(11)), 4);
        assert_eq!(t.lost(None), 3);
    }

    #[test]
    fn window_slots_are_reused_correctly() {
        let mut t = SeqTracker::default();
        t.observe(0);
        // Jump far ahead: slot of 0 is reused by 4096; it must not look like a dup.
        assert_eq!(t.observe(WINDOW_BITS), Arrival::New);
        assert_eq!(t.observe(WINDOW_BITS + 1), Arrival::New);
        assert_eq!(t.observe(5), Arrival::Late); // older than the window: late
        assert_eq!(t.observe(WINDOW_BITS - 3), Arrival::Late); // gap slot was cleared
        assert_eq!(t.observe(WINDOW_BITS - 3), Arrival::Duplicate);
    }

    #[test]
    fn jitter_from_a_peer_whose_stamps_are_anything_does_not_overflow() {
        let mut j = Jitter::default();
        let (hi, lo) = (i64::MAX as u64, i64::MIN as u64);
        for (tx, rx) in [(0, hi), (0, lo), (0, hi), (0, lo), (u64::MAX, 0)] {
            j.observe(tx, rx);
        }
        assert!(j.get().0 > 0);
    }

    #[test]
    fn jitter_of_constant_spacing_is_zero_and_grows_with_variation() {
        let mut j = Jitter::default();
        for i in 0..100u64 {
            j.observe(i * 1000, 5_000_000 + i * 1000);
        }
        assert_eq!(j.get(), Nanos(0));
        // Alternate transit by ±500 ns: |D| = 1000 every step, J converges to 1000.
        let mut j = Jitter::default();
        for i in 0..1000u64 {
            j.observe(i * 1000, i * 1000 + if i % 2 == 0 { 0 } else { 1000 });
        }
        assert!((j.get().0 as i64 - 1000).abs() <= 1, "{:?}", j.get());
    }
}
