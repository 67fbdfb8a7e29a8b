//! A stream flow as a state machine, and the ways of running it: alone on its
//! own thread ([`run_alone`]), where the I/O strategy waits for the socket its own
//! way; with other flows on one thread ([`run_group`]), where one edge-triggered
//! epoll waits for all of them (`--io epoll`); or as iperf3 3.12's server reads
//! its streams ([`run_select`]): one thread, one `select(2)` over all of them
//! before every round, one message read from each ready one.
//!
//! A flow's [`Flow::step`] makes one strategy call (or one pacing or teardown
//! decision) and says what it came to. The same step code runs in both modes, so a
//! flow measures the same way whether it has a thread to itself or not.

use std::collections::VecDeque;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rustix::event::epoll::{self, CreateFlags, Event, EventData, EventFlags};
use rustix::event::Timespec;

use netsonde_model::result::IoReport;
use netsonde_model::spec::IoStrategy;

use crate::meter::{FlowClock, FlowCtx};
use crate::sys::select::ReadSet;
use crate::{EngineError, FlowOutput};

/// What one step of a flow came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// It moved something (or changed state): step again.
    Moved,
    /// The socket would block, or its timeout passed: wait for it.
    Blocked,
    /// Nothing to do before this time (pacing, spacing the UDP FINs).
    Until(Instant),
    /// The flow is over: collect its output.
    Done,
}

/// One flow's loop, a step at a time.
pub trait Flow: Send {
    /// The socket, for epoll.
    fn fd(&self) -> BorrowedFd<'_>;
    /// One call's worth of work.
    fn step(&mut self) -> Result<Progress, EngineError>;
    /// The figures, once [`Flow::step`] has said [`Progress::Done`] (or the group
    /// gave up on it).
    fn finish(self: Box<Self>) -> Result<FlowOutput, EngineError>;
}

/// Runs one flow on the calling thread until it is done. Its strategy waits for the
/// socket (blocking, spinning or in io_uring); pacing sleeps here.
pub fn run_alone<F: Flow>(mut flow: F) -> Result<FlowOutput, EngineError> {
    loop {
        match flow.step()? {
            Progress::Done => break,
            Progress::Until(t) => {
                if let Some(d) = t.checked_duration_since(Instant::now()) {
                    std::thread::sleep(d);
                }
            }
            Progress::Moved | Progress::Blocked => {}
        }
    }
    Box::new(flow).finish()
}

/// Runs one flow: in a group of its own when its strategy is epoll (which never
/// waits by itself), else alone.
pub(crate) fn run_one<F: Flow + 'static>(
    flow: F,
    strategy: IoStrategy,
    ctx: &FlowCtx,
) -> Result<FlowOutput, EngineError> {
    if strategy == IoStrategy::Epoll {
        only(run_group(vec![Box::new(flow)], ctx.clock, &ctx.stop))
    } else {
        run_alone(flow)
    }
}

/// Runs one receiving flow: one of an iperf3 client's streams read as iperf3
/// reads ([`run_select`], a round of its own), else as [`run_one`] does.
pub(crate) fn run_receiver<F: Flow + 'static>(
    flow: F,
    ctx: &FlowCtx,
) -> Result<FlowOutput, EngineError> {
    if !(ctx.spec.iperf3_io && ctx.spec.rx_io == IoStrategy::Copy) {
        return run_one(flow, ctx.spec.rx_io, ctx);
    }
    only(run_select(
        vec![Box::new(flow)],
        Vec::new(),
        ctx.clock,
        &ctx.stop,
    ))
}

/// The output of a group of one flow.
fn only(mut out: Vec<Result<FlowOutput, EngineError>>) -> Result<FlowOutput, EngineError> {
    out.pop().unwrap_or_else(|| {
        Err(EngineError::Io {
            op: "flow group",
            source: std::io::Error::other("no output"),
        })
    })
}

/// Steps a ready flow gets before the next one's turn.
const BUDGET: u32 = 64;
/// Every live flow is stepped at least this often, so it sees its deadlines and a
/// stop request even when its socket stays quiet.
const SWEEP: Duration = Duration::from_millis(200);

enum Slot {
    Live(Box<dyn Flow>),
    Over(Box<Result<FlowOutput, EngineError>>),
    Taken,
}

/// A flow of a group of `n` that is done (or failed) becomes its output; a
/// failure stops the others.
fn retire(slot: &mut Slot, outcome: Result<Progress, EngineError>, n: usize, stop: &AtomicBool) {
    let Slot::Live(flow) = std::mem::replace(slot, Slot::Taken) else {
        return;
    };
    *slot = Slot::Over(Box::new(match outcome {
        Err(e) => {
            stop.store(true, Ordering::Relaxed);
            Err(e)
        }
        Ok(_) => flow.finish().map(|mut out| {
            // Request/response flows report no strategy of their own; every
            // flow here waits in this epoll.
            let io = out.result.io.get_or_insert_with(|| IoReport {
                strategy: IoStrategy::Epoll.name().into(),
                ..IoReport::default()
            });
            io.thread_flows = Some(n as u32);
            out
        }),
    }));
}

/// An epoll with every flow's socket in it, for `flags`, each known by its
/// index; or, when one cannot be made, every flow's output as that error (and
/// `stop` set).
fn epoll_of(
    flows: &[Box<dyn Flow>],
    flags: EventFlags,
    stop: &AtomicBool,
) -> Result<std::os::fd::OwnedFd, Vec<Result<FlowOutput, EngineError>>> {
    let made = epoll::create(CreateFlags::CLOEXEC).and_then(|ep| {
        for (i, f) in flows.iter().enumerate() {
            epoll::add(&ep, f.fd(), EventData::new_u64(i as u64), flags)?;
        }
        Ok(ep)
    });
    made.map_err(|errno| failed_setup(flows, "epoll setup", &errno.into(), stop))
}

/// Every flow's output when the wait for them could not be set up; `stop` is
/// set, so the test's other flows end too.
fn failed_setup(
    flows: &[Box<dyn Flow>],
    op: &'static str,
    e: &std::io::Error,
    stop: &AtomicBool,
) -> Vec<Result<FlowOutput, EngineError>> {
    stop.store(true, Ordering::Relaxed);
    let each = || match e.raw_os_error() {
        Some(code) => std::io::Error::from_raw_os_error(code),
        None => std::io::Error::new(e.kind(), e.to_string()),
    };
    flows
        .iter()
        .map(|_| Err(EngineError::Io { op, source: each() }))
        .collect()
}

/// Runs several flows on the calling thread, over one edge-triggered epoll. Each
/// flow's strategy must be non-blocking and return `WouldBlock` without waiting
/// (`--io epoll` builds it so). A ready flow gets up to 64 steps (`BUDGET`), then the
/// next ready flow gets its turn; the loop waits in epoll only when none is ready,
/// and until the next pacing time, phase boundary of `clock` or sweep at most.
///
/// Returns each flow's output in the order given. The first error sets `stop`, so
/// the test's other flows (here and on other threads) end too.
pub fn run_group(
    flows: Vec<Box<dyn Flow>>,
    clock: FlowClock,
    stop: &AtomicBool,
) -> Vec<Result<FlowOutput, EngineError>> {
    let n = flows.len();
    let flags = EventFlags::IN | EventFlags::OUT | EventFlags::RDHUP | EventFlags::ET;
    let epoll = match epoll_of(&flows, flags, stop) {
        Ok(ep) => ep,
        Err(failed) => return failed,
    };
    let mut slots: Vec<Slot> = flows.into_iter().map(Slot::Live).collect();
    let mut ready: VecDeque<usize> = (0..n).collect();
    let mut queued = vec![true; n];
    let mut until: Vec<Option<Instant>> = vec![None; n];
    let none = Event {
        flags: EventFlags::empty(),
        data: EventData::new_u64(0),
    };
    let mut events = vec![none; n.clamp(1, 256)];
    let mut live = n;
    let start = Instant::now();
    let mut next_sweep = start + SWEEP;
    // The phase boundaries still ahead: every flow is stepped as each passes, so
    // its meter snaps the measured interval on time.
    let boundaries = [clock.warm_end, clock.end, clock.hard_end];
    let mut next_boundary = boundaries.iter().take_while(|b| **b <= start).count();
    while live > 0 {
        // One round over the flows that are ready now.
        for _ in 0..ready.len() {
            let Some(i) = ready.pop_front() else { break };
            queued[i] = false;
            let Slot::Live(flow) = &mut slots[i] else {
                continue;
            };
            let mut outcome = Ok(Progress::Moved);
            for _ in 0..BUDGET {
                outcome = flow.step();
                if !matches!(outcome, Ok(Progress::Moved)) {
                    break;
                }
            }
            match outcome {
                Ok(Progress::Moved) => {
                    ready.push_back(i);
                    queued[i] = true;
                }
                Ok(Progress::Blocked) => {}
                Ok(Progress::Until(t)) => until[i] = Some(t),
                Ok(Progress::Done) | Err(_) => {
                    let _ = epoll::delete(&epoll, flow.fd());
                    retire(&mut slots[i], outcome, n, stop);
                    live -= 1;
                }
            }
        }
        if live == 0 {
            break;
        }
        // Wait: not at all while some flow is still ready (but collect the edges
        // of the others), else until the next timer.
        let now = Instant::now();
        let timeout = if ready.is_empty() {
            let mut at = next_sweep;
            if let Some(b) = boundaries.get(next_boundary) {
                at = at.min(*b);
            }
            for t in until.iter().flatten() {
                at = at.min(*t);
            }
            // Round up, so a timer is never woken for early.
            let ms = at.saturating_duration_since(now).as_micros().div_ceil(1000);
            Timespec {
                tv_sec: 0,
                tv_nsec: ms.min(200) as i64 * 1_000_000,
            }
        } else {
            Timespec::default()
        };
        let got = match epoll::wait(&epoll, &mut events[..], Some(&timeout)) {
            Ok(k) => k,
            Err(rustix::io::Errno::INTR) => 0,
            Err(_) => {
                // epoll_wait cannot fail on a valid epoll and buffer; if it does,
                // degrade to sweeping every flow each millisecond.
                std::thread::sleep(Duration::from_millis(1));
                next_sweep = Instant::now();
                0
            }
        };
        let wake = |i: usize, ready: &mut VecDeque<usize>, queued: &mut [bool]| {
            if !queued[i] && matches!(slots[i], Slot::Live(_)) {
                queued[i] = true;
                ready.push_back(i);
            }
        };
        for ev in &events[..got] {
            wake(ev.data.u64() as usize, &mut ready, &mut queued);
        }
        let now = Instant::now();
        for (i, t) in until.iter_mut().enumerate() {
            if t.is_some_and(|t| t <= now) {
                *t = None;
                wake(i, &mut ready, &mut queued);
            }
        }
        let mut crossed = false;
        while boundaries.get(next_boundary).is_some_and(|b| *b <= now) {
            next_boundary += 1;
            crossed = true;
        }
        if now >= next_sweep || crossed || stop.load(Ordering::Relaxed) {
            for i in 0..n {
                wake(i, &mut ready, &mut queued);
            }
            next_sweep = now + SWEEP;
        }
    }
    collect(slots)
}

/// Runs receiving flows on the calling thread as iperf3 3.12's server reads its
/// streams (how an iperf3 client's streams are served): every round waits for
/// readiness over all of them in one `select(2)`, the set copied before the
/// call as iperf3 copies it, then steps each flow that is ready once (its
/// strategy reads one message as iperf3's `Nread` does: [`crate::io`]'s
/// `PlainRx`). Each flow's strategy must be non-blocking and return
/// `WouldBlock` without waiting. The wait ends at the next phase boundary of
/// `clock` or sweep at most, when every flow is stepped.
///
/// `also` are the other sockets iperf3's `select` covers beside the streams
/// (its listening socket, the session's control connection), which other
/// threads read here: each is in the set until it is first readable, then
/// left to its reader (`sys::select::ReadSet`). A `select` costs more with
/// every socket it looks at, and at `-l 1K` that cost is the rate: an iperf3
/// client measured 8-10% more against the streams alone than against
/// `iperf3 -s`.
///
/// The calls are iperf3's own, not merely alike, because at small messages the
/// server's cost per call sets the rate: with `poll(2)` and `recvfrom(2)` an
/// iperf3 client's `-l 1K` ran 1.3-1.5x faster than against `iperf3 -s`. Not
/// an epoll: one stays registered on every socket between waits, so each
/// segment that arrives runs its callback in the sender's softirq, a cost on
/// the iperf3 client's side (on loopback, its own thread) that iperf3's
/// server does not put there.
///
/// Returns each flow's output in the order given; the first error sets `stop`.
pub fn run_select(
    flows: Vec<Box<dyn Flow>>,
    also: Vec<OwnedFd>,
    clock: FlowClock,
    stop: &AtomicBool,
) -> Vec<Result<FlowOutput, EngineError>> {
    let n = flows.len();
    let mut set = match ReadSet::new(also, flows.iter().map(|f| f.fd())) {
        Ok(set) => set,
        Err(e) => return failed_setup(&flows, "select setup", &e, stop),
    };
    let mut slots: Vec<Slot> = flows.into_iter().map(Slot::Live).collect();
    let mut live = n;
    // The first round steps every flow: its meter starts.
    let mut ready: Vec<bool> = vec![true; n];
    // Read once a round, after the wait: the clock a round's steps take is
    // their meters', and a timeout from a reading a round old is late by one
    // round's steps at most, well inside the millisecond it is rounded up to.
    let mut now = Instant::now();
    let mut next_sweep = now + SWEEP;
    let boundaries = [clock.warm_end, clock.end, clock.hard_end];
    let mut next_boundary = boundaries.iter().take_while(|b| **b <= now).count();
    while live > 0 {
        for (i, slot) in slots.iter_mut().enumerate() {
            let Slot::Live(flow) = slot else { continue };
            if !std::mem::take(&mut ready[i]) {
                continue;
            }
            let outcome = flow.step();
            if let Ok(Progress::Done) | Err(_) = outcome {
                set.remove(i);
                retire(slot, outcome, n, stop);
                live -= 1;
            }
        }
        if live == 0 {
            break;
        }
        let at = boundaries
            .get(next_boundary)
            .map_or(next_sweep, |b| next_sweep.min(*b));
        let ms = at.saturating_duration_since(now).as_micros().div_ceil(1000);
        let timeout = Timespec {
            tv_sec: 0,
            tv_nsec: ms.min(200) as i64 * 1_000_000,
        };
        match set.wait(&timeout) {
            Ok(_) => set.ready().for_each(|i| ready[i] = true),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => {
                // As in run_group: never spin on a wait that fails; sweep.
                std::thread::sleep(Duration::from_millis(1));
                next_sweep = Instant::now();
            }
        }
        now = Instant::now();
        let mut crossed = false;
        while boundaries.get(next_boundary).is_some_and(|b| *b <= now) {
            next_boundary += 1;
            crossed = true;
        }
        if now >= next_sweep || crossed || stop.load(Ordering::Relaxed) {
            ready.fill(true);
            next_sweep = now + SWEEP;
        }
    }
    collect(slots)
}

/// Each slot's output, in order; a flow left unfinished is an error.
fn collect(slots: Vec<Slot>) -> Vec<Result<FlowOutput, EngineError>> {
    slots
        .into_iter()
        .map(|s| match s {
            Slot::Over(r) => *r,
            Slot::Live(_) | Slot::Taken => Err(EngineError::Io {
                op: "flow group",
                source: std::io::Error::other("a flow was left unfinished"),
            }),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::net::{TcpListener, TcpStream, UdpSocket};
    use std::sync::Arc;

    use netsonde_model::spec::{FlowDir, TestKind, TestSpec};
    use netsonde_model::units::{BitRate, Bytes, Nanos};

    use super::*;
    use crate::stream::{TcpReceiver, TcpSender};
    use crate::udp::{UdpReceiver, UdpSender};

    fn ctx(spec: &Arc<TestSpec>, id: u32, stop: &Arc<AtomicBool>) -> FlowCtx {
        FlowCtx {
            id,
            dir: FlowDir::Up,
            spec: spec.clone(),
            clock: FlowClock::new(Instant::now(), spec),
            counters: Arc::default(),
            stop: stop.clone(),
            format: Default::default(),
        }
    }

    fn spec(test: TestKind, size: u64) -> Arc<TestSpec> {
        let mut s = TestSpec::new(test);
        s.size = Bytes(size);
        s.duration = Nanos::from_millis(300);
        s.warmup = Nanos::from_millis(50);
        s.tx_io = IoStrategy::Epoll;
        s.rx_io = IoStrategy::Epoll;
        s.verify = true;
        Arc::new(s)
    }

    /// Both ends of three TCP streams on one thread: the group must interleave
    /// them, or the senders fill their buffers and nothing drains them.
    #[test]
    fn one_thread_carries_both_ends_of_several_tcp_streams() {
        let spec = spec(TestKind::TcpStream, 3000);
        let stop = Arc::new(AtomicBool::new(false));
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut flows: Vec<Box<dyn Flow>> = Vec::new();
        for id in 0..3 {
            let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
            let (s, _) = l.accept().unwrap();
            let cx = ctx(&spec, id, &stop);
            flows.push(Box::new(TcpSender::new(c, &cx).unwrap()));
            flows.push(Box::new(TcpReceiver::new(s, &cx).unwrap()));
        }
        let clock = FlowClock::new(Instant::now(), &spec);
        let t = Instant::now();
        let out = run_group(flows, clock, &stop);
        assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
        assert_eq!(out.len(), 6);
        for pair in out.chunks(2) {
            let (tx, rx) = (pair[0].as_ref().unwrap(), pair[1].as_ref().unwrap());
            assert!(tx.result.bytes_total.0 > 100_000, "{:?}", tx.result);
            assert_eq!(tx.result.bytes_total, rx.result.bytes_total);
            let io = rx.result.io.as_ref().unwrap();
            assert_eq!(io.verify_errors, Some(0));
            assert_eq!(io.thread_flows, Some(6));
            assert!(tx.result.bytes.0 > 0 && tx.result.bytes < tx.result.bytes_total);
        }
        assert!(!stop.load(Ordering::Relaxed));
    }

    /// An iperf3 client's streams as iperf3 3.12's server reads them: the
    /// three receivers on one thread, each read at most one message long, every
    /// byte counted; their senders elsewhere, as the client is.
    #[test]
    fn one_select_loop_reads_several_streams_a_message_at_a_time() {
        let senders = spec(TestKind::TcpStream, 3000);
        let mut r = (*senders).clone();
        r.rx_io = IoStrategy::Copy;
        r.iperf3_io = true;
        let receivers = Arc::new(r);
        let stop = Arc::new(AtomicBool::new(false));
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut tx: Vec<Box<dyn Flow>> = Vec::new();
        let mut rx: Vec<Box<dyn Flow>> = Vec::new();
        for id in 0..3 {
            let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
            let (s, _) = l.accept().unwrap();
            tx.push(Box::new(
                TcpSender::new(c, &ctx(&senders, id, &stop)).unwrap(),
            ));
            rx.push(Box::new(
                TcpReceiver::new(s, &ctx(&receivers, id, &stop)).unwrap(),
            ));
        }
        let clock = FlowClock::new(Instant::now(), &senders);
        let (sent, got) = std::thread::scope(|scope| {
            let sending = scope.spawn(|| run_group(tx, clock, &stop));
            let got = run_select(rx, Vec::new(), clock, &stop);
            (sending.join().unwrap(), got)
        });
        for (tx, rx) in sent.iter().zip(&got) {
            let (tx, rx) = (tx.as_ref().unwrap(), rx.as_ref().unwrap());
            assert!(tx.result.bytes_total.0 > 100_000, "{:?}", tx.result);
            assert_eq!(tx.result.bytes_total, rx.result.bytes_total);
            // No read is longer than a message (a message may take several).
            assert!(
                rx.result.calls * 3000 >= rx.result.bytes.0,
                "{:?}",
                rx.result
            );
            let io = rx.result.io.as_ref().unwrap();
            assert!(
                io.note.as_deref().unwrap_or("").contains("iperf3 3.12"),
                "{io:?}"
            );
            assert_eq!(io.thread_flows, Some(3));
        }
        assert!(!stop.load(Ordering::Relaxed));
    }

    /// Paced UDP flows on one thread: the pacing timers and the FINs run in the
    /// group, the datagrams arrive (loopback, low rate), and the receiver learns
    /// the sender's count from the FIN.
    #[test]
    fn one_thread_paces_several_udp_streams() {
        let mut s = (*spec(TestKind::UdpStream, 1000)).clone();
        s.rate = Some(BitRate(20e6));
        let spec = Arc::new(s);
        let stop = Arc::new(AtomicBool::new(false));
        let mut flows: Vec<Box<dyn Flow>> = Vec::new();
        for id in 0..2 {
            let a = UdpSocket::bind("127.0.0.1:0").unwrap();
            let b = UdpSocket::bind("127.0.0.1:0").unwrap();
            a.connect(b.local_addr().unwrap()).unwrap();
            b.connect(a.local_addr().unwrap()).unwrap();
            let cx = ctx(&spec, id, &stop);
            flows.push(Box::new(UdpSender::new(a, &cx).unwrap()));
            flows.push(Box::new(UdpReceiver::new(b, None, &cx).unwrap()));
        }
        let clock = FlowClock::new(Instant::now(), &spec);
        let out = run_group(flows, clock, &stop);
        for pair in out.chunks(2) {
            let (tx, rx) = (pair[0].as_ref().unwrap(), pair[1].as_ref().unwrap());
            let sent = tx.result.datagrams_sent.unwrap();
            // 20 Mbit/s of 1000-byte datagrams for 350 ms: about 875.
            assert!((600..=1100).contains(&sent), "{sent}");
            // The receiver learned the sender's count from its FIN. (On a starved
            // host the pacer catches up in a burst that may overflow the receive
            // buffer, so some loss is allowed, not a wrong count.)
            let udp = rx.result.udp.as_ref().unwrap();
            assert_eq!(udp.packets_total + udp.lost, sent, "{udp:?}");
            assert!(udp.lost <= sent / 5, "{udp:?}");
            assert_eq!(rx.result.io.as_ref().unwrap().verify_errors, Some(0));
        }
    }

    /// Both ends of several request/response flows, TCP and UDP, on one thread:
    /// every flow completes transactions, each requester's count matches its
    /// responder's, and every measured one is timed.
    #[test]
    fn one_thread_serves_both_ends_of_request_response_flows() {
        use crate::rr::{TcpRequester, TcpResponder, UdpRequester, UdpResponder};
        let mut tcp = (*spec(TestKind::TcpRr, 1)).clone();
        tcp.request_size = Bytes(100);
        tcp.response_size = Bytes(3000);
        let tcp = Arc::new(tcp);
        let mut udp = (*tcp).clone();
        udp.test = TestKind::UdpRr;
        let udp = Arc::new(udp);
        let stop = Arc::new(AtomicBool::new(false));
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut flows: Vec<Box<dyn Flow>> = Vec::new();
        for id in 0..3 {
            let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
            let (s, _) = l.accept().unwrap();
            let cx = ctx(&tcp, id, &stop);
            flows.push(Box::new(TcpRequester::new(c, &cx).unwrap()));
            flows.push(Box::new(TcpResponder::new(s, &cx).unwrap()));
            let a = UdpSocket::bind("127.0.0.1:0").unwrap();
            let b = UdpSocket::bind("127.0.0.1:0").unwrap();
            a.connect(b.local_addr().unwrap()).unwrap();
            b.connect(a.local_addr().unwrap()).unwrap();
            let cx = ctx(&udp, 10 + id, &stop);
            flows.push(Box::new(UdpRequester::new(a, &cx).unwrap()));
            flows.push(Box::new(UdpResponder::new(b, &cx).unwrap()));
        }
        let clock = FlowClock::new(Instant::now(), &tcp);
        let t = Instant::now();
        let out = run_group(flows, clock, &stop);
        assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());
        for pair in out.chunks(2) {
            let (req, resp) = (pair[0].as_ref().unwrap(), pair[1].as_ref().unwrap());
            let n = req.result.transactions_total;
            assert!(n > 50, "{:?}", req.result);
            // The requester may end with one request answered but not yet read.
            assert!(
                resp.result.transactions_total.abs_diff(n) <= 1,
                "{n} vs {:?}",
                resp.result
            );
            let hist = req.latency.as_ref().unwrap();
            assert_eq!(hist.len(), req.result.transactions, "{:?}", req.result);
            assert_eq!(req.result.io.as_ref().unwrap().thread_flows, Some(12));
        }
    }

    /// A flow that fails ends the others: the group returns promptly with the
    /// error in that flow's place.
    #[test]
    fn a_failing_flow_stops_the_group() {
        let spec = spec(TestKind::TcpStream, 1000);
        let stop = Arc::new(AtomicBool::new(false));
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, _) = l.accept().unwrap();
        // The peer of the second sender is gone: its writes are reset.
        let c2 = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s2, _) = l.accept().unwrap();
        drop(s2);
        let mut long = (*spec).clone();
        long.duration = Nanos::from_secs(30);
        let long = Arc::new(long);
        let cx = ctx(&long, 0, &stop);
        let flows: Vec<Box<dyn Flow>> = vec![
            Box::new(TcpSender::new(c, &cx).unwrap()),
            Box::new(TcpReceiver::new(s, &cx).unwrap()),
            Box::new(TcpSender::new(c2, &ctx(&long, 1, &stop)).unwrap()),
        ];
        let t = Instant::now();
        let out = run_group(flows, FlowClock::new(Instant::now(), &long), &stop);
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
        assert!(stop.load(Ordering::Relaxed));
        assert!(
            matches!(out[2], Err(EngineError::PeerClosed { flow: 1 })),
            "{:?}",
            out[2]
        );
    }
}
