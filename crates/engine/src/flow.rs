//! A stream flow as a state machine, and the ways of running it: alone on its
//! own thread ([`run_alone`]), where the I/O strategy waits for the socket its own
//! way; with other flows on one thread ([`run_group`]), where one edge-triggered
//! epoll waits for all of them (`--io epoll`); or as iperf3 3.12's server serves
//! its streams ([`run_select`]): one thread, one `select(2)` over all of them
//! before every round, one message read from each ready receiver, then up to
//! ten written to each ready sender.
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
use crate::sys::select::SelectSet;
pub use crate::sys::select::Want;
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
    /// What it waits for when it is blocked, for a loop that waits for each
    /// socket to read or to write ([`run_select`]): a receiver reads.
    fn wants(&self) -> Want {
        Want::Read
    }
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

/// Runs one stream flow that `sends` (else receives): one of an iperf3
/// client's streams served as iperf3 serves ([`run_select`], a round of its
/// own), else as [`run_one`] does.
pub(crate) fn run_stream<F: Flow + 'static>(
    flow: F,
    sends: bool,
    ctx: &FlowCtx,
) -> Result<FlowOutput, EngineError> {
    if !crate::io::served_as_iperf3(&ctx.spec, sends) {
        let strategy = if sends {
            ctx.spec.tx_io
        } else {
            ctx.spec.rx_io
        };
        return run_one(flow, strategy, ctx);
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
/// After the measured interval, the longest wait: the flows only wind down
/// (a sender drains to its peer's close, which an iperf3 client sends only
/// after the results), so a stop is seen within this.
const WIND_DOWN: Duration = Duration::from_millis(10);

/// A loop's wait until `at` from `now`: rounded up to the millisecond, so a
/// timer is never woken for early; at most a [`SWEEP`], or once `clock`'s
/// measured interval is over, [`WIND_DOWN`].
fn timeout_until(at: Instant, now: Instant, clock: &FlowClock) -> Timespec {
    let most = if now >= clock.end { WIND_DOWN } else { SWEEP };
    let ms = at
        .saturating_duration_since(now)
        .min(most)
        .as_micros()
        .div_ceil(1000);
    Timespec {
        tv_sec: 0,
        tv_nsec: ms as i64 * 1_000_000,
    }
}

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
            timeout_until(at, now, &clock)
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

/// Blocks each ready sender of [`run_select`] sends a round, at most: iperf3's
/// `multisend`, its passes over the ready senders after one `select`.
const MULTISEND: usize = 10;

/// Runs an iperf3 client's streams on the calling thread as iperf3 3.12's
/// server serves them (its `iperf_run_server` loop): every round waits in one
/// `select(2)` over all of them, each in the read set or the write set as it
/// wants ([`Flow::wants`]), the sets copied before the call as iperf3 copies
/// them; then each ready receiver is stepped once (its strategy reads one
/// message as iperf3's `Nread` does: [`crate::io`]'s `PlainRx`), then the
/// ready senders are stepped in up to 10 passes (`MULTISEND`), one block each a
/// pass (written as iperf3's `Nwrite` writes: `PlainTx`), as `iperf_send`
/// does, a pass that found a socket full going on to the next as iperf3's
/// does. Each flow's strategy must be non-blocking and return `WouldBlock`
/// without waiting. The wait ends at the next pacing time, phase boundary of
/// `clock` or sweep at most, when every flow is stepped.
///
/// `also` are the other sockets iperf3's `select` covers beside the streams
/// (its listening socket, the session's control connection), which other
/// threads read here: each is in the set until it is first readable, then
/// left to its reader (`sys::select::SelectSet`). A `select` costs more with
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
/// server does not put there. And the senders are here, not on threads of
/// their own: with `--bidir` an iperf3 client measured 1.37x more against
/// netsonde's server when its sending had a thread of its own than against
/// `iperf3 -s`, which sends and reads on one. The caller gives the thread a
/// descriptor table of its own first ([`crate::own_table`]), as iperf3's one
/// thread has: in a table several threads share, each call's look-up of each
/// socket takes a reference, and an iperf3 client's `-l 1K` measured 5-10%
/// less against the streams than against `iperf3 -s`.
///
/// Returns each flow's output in the order given; the first error sets `stop`.
pub fn run_select(
    flows: Vec<Box<dyn Flow>>,
    also: Vec<OwnedFd>,
    clock: FlowClock,
    stop: &AtomicBool,
) -> Vec<Result<FlowOutput, EngineError>> {
    let n = flows.len();
    let mut set = match SelectSet::new(also, flows.iter().map(|f| (f.fd(), f.wants()))) {
        Ok(set) => set,
        Err(e) => return failed_setup(&flows, "select setup", &e, stop),
    };
    let mut slots: Vec<Slot> = flows.into_iter().map(Slot::Live).collect();
    let mut live = n;
    // The first round steps every flow: its meter starts.
    let mut ready: Vec<bool> = vec![true; n];
    let mut until: Vec<Option<Instant>> = vec![None; n];
    let mut now = Instant::now();
    let mut next_sweep = now + SWEEP;
    let boundaries = [clock.warm_end, clock.end, clock.hard_end];
    let mut next_boundary = boundaries.iter().take_while(|b| **b <= now).count();
    while live > 0 {
        let mut round = Round {
            slots: &mut slots,
            ready: &mut ready,
            until: &mut until,
            set: &mut set,
            live: &mut live,
            stop,
        };
        round.reads();
        if round.writes() {
            // A round of writes takes up to milliseconds: the wait is from now.
            now = Instant::now();
        }
        if live == 0 {
            break;
        }
        let mut at = boundaries
            .get(next_boundary)
            .map_or(next_sweep, |b| next_sweep.min(*b));
        for t in until.iter().flatten() {
            at = at.min(*t);
        }
        match set.wait(&timeout_until(at, now, &clock)) {
            Ok(_) => {
                set.readable().for_each(|i| ready[i] = true);
                set.writable().for_each(|i| ready[i] = true);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => {
                // As in run_group: never spin on a wait that fails; sweep.
                std::thread::sleep(Duration::from_millis(1));
                next_sweep = Instant::now();
            }
        }
        now = Instant::now();
        for (i, t) in until.iter_mut().enumerate() {
            if t.is_some_and(|t| t <= now) {
                *t = None;
                ready[i] = true;
            }
        }
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

/// One round of [`run_select`] after its wait: the ready flows stepped.
struct Round<'a> {
    slots: &'a mut [Slot],
    ready: &'a mut [bool],
    until: &'a mut [Option<Instant>],
    set: &'a mut SelectSet,
    live: &'a mut usize,
    stop: &'a AtomicBool,
}

impl Round<'_> {
    /// Each ready flow that does not wait to write, stepped once.
    fn reads(&mut self) {
        for i in 0..self.slots.len() {
            let Slot::Live(flow) = &mut self.slots[i] else {
                continue;
            };
            if !self.ready[i] || flow.wants() == Want::Write {
                continue;
            }
            self.ready[i] = false;
            let outcome = flow.step();
            self.settle(i, outcome);
        }
    }

    /// The ready senders, in up to [`MULTISEND`] passes of a step each; a
    /// pass in which none could go on ends them. Whether any was stepped.
    fn writes(&mut self) -> bool {
        let mut stepped = false;
        for _ in 0..MULTISEND {
            let mut active = false;
            for i in 0..self.slots.len() {
                let Slot::Live(flow) = &mut self.slots[i] else {
                    continue;
                };
                if !self.ready[i] || flow.wants() != Want::Write {
                    continue;
                }
                let outcome = flow.step();
                stepped = true;
                active |= matches!(outcome, Ok(Progress::Moved | Progress::Blocked));
                self.settle(i, outcome);
            }
            if !active {
                break;
            }
        }
        if stepped {
            // As iperf3 clears its write set: the next round's wait says who is.
            for (i, slot) in self.slots.iter().enumerate() {
                if let Slot::Live(flow) = slot {
                    if flow.wants() == Want::Write {
                        self.ready[i] = false;
                    }
                }
            }
        }
        stepped
    }

    /// After the `i`th flow's step: a flow held until a time waits for
    /// nothing until then; one that is done is retired; any other waits for
    /// what it wants now.
    fn settle(&mut self, i: usize, outcome: Result<Progress, EngineError>) {
        let n = self.slots.len();
        let slot = &mut self.slots[i];
        match outcome {
            Ok(Progress::Until(t)) => {
                self.until[i] = Some(t);
                self.ready[i] = false;
                self.set.want(i, Want::Nothing);
            }
            Ok(Progress::Moved | Progress::Blocked) => {
                if let Slot::Live(flow) = slot {
                    self.set.want(i, flow.wants());
                }
            }
            Ok(Progress::Done) | Err(_) => {
                self.set.remove(i);
                self.ready[i] = false;
                retire(slot, outcome, n, self.stop);
                *self.live -= 1;
            }
        }
    }
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
#[path = "flow_tests.rs"]
mod tests;
