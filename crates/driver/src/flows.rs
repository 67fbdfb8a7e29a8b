//! Running a test's flows on threads, with the CPU sampler covering exactly the
//! measured interval. A flow has a thread of its own, except stream and
//! request/response flows whose strategy at this end is `epoll`: those share
//! threads, several flows to one edge-triggered epoll
//! ([`netsonde_engine::flow::run_group`]), one thread per core of the affinity
//! list (or per online core without one), never more threads than flows.

use std::net::{TcpStream, UdpSocket};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, TryRecvError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use netsonde_engine::datagram::Format;
use netsonde_engine::flow::{run_group, run_select};
use netsonde_engine::{sockopt, EngineError, FlowClock, FlowCounters, FlowCtx, FlowOutput};
use netsonde_model::cpu::CpuReport;
use netsonde_model::load::FlowSamples;
use netsonde_model::spec::{FlowDir, TestKind, TestSpec};
use netsonde_model::units::Nanos;

use crate::cpu_watch::{
    breakdown_of, sample_cpu, sleep_until, udp_baseline, CpuWatch, Last, ThreadFlows,
};
use crate::workload::{run_flow, sends, served_as_iperf3, shared_flow, shares_thread, Workload};
pub use crate::workload::{End, FlowSocket};

/// One flow ready to start.
#[derive(Debug)]
pub struct FlowPlan {
    /// Flow number.
    pub id: u32,
    /// Direction.
    pub dir: FlowDir,
    /// Transport.
    pub socket: FlowSocket,
}

/// A flow's place in the plan order, and what it produced.
type Outcome = (usize, Result<FlowOutput, EngineError>);
/// A flow waiting for its thread: its place, socket and context.
type Member = (usize, FlowSocket, FlowCtx);

/// Flows that are running.
#[derive(Debug)]
pub struct Running {
    /// Flow number, direction and published counters, for interval reports.
    pub counters: Vec<(u32, FlowDir, Arc<FlowCounters>)>,
    /// With `--interval`, a copy of the socket of each TCP stream flow this end
    /// sends on (beside `counters`; `None` for the others), whose `TCP_INFO` says
    /// what its receiver acknowledged: a sending end's interval records count that,
    /// not the bytes written into the socket buffer, which can outrun the link.
    pub acked_by: Vec<Option<TcpStream>>,
    /// The shared clock.
    pub clock: FlowClock,
    stop: Arc<AtomicBool>,
    /// Set when nobody wants the results ([`Running::abandon`]): the CPU
    /// sampler then names no samples.
    abandoned: Arc<AtomicBool>,
    /// Each thread's flows: their place in the plan order, and what each produced.
    flows: Vec<JoinHandle<Vec<Outcome>>>,
    cpu: JoinHandle<Option<CpuReport>>,
    /// A load-latency test's `TCP_INFO` reader of this end's sending flows.
    sampler: Option<(Arc<AtomicBool>, JoinHandle<Vec<FlowSamples>>)>,
    done: Receiver<()>,
    pending: usize,
    /// When the last flow thread returned, once [`Running::all_done`] has seen
    /// it (a test that ends by volume ends before its clock does).
    ended: Option<Instant>,
    /// When the last flow thread to end so far ended.
    last_end: Arc<std::sync::Mutex<Option<Instant>>>,
}

/// What the flows produced.
#[derive(Debug)]
pub struct Finished {
    /// Each flow's output, in flow order.
    pub outputs: Vec<FlowOutput>,
    /// CPU over the measured interval (none if the test was cut short before it).
    pub cpu: Option<CpuReport>,
    /// The first flow error, if any.
    pub error: Option<EngineError>,
    /// A load-latency test: this end's sending TCP flows over time.
    pub tcp_samples: Vec<FlowSamples>,
}

impl Finished {
    /// Every test byte the flows moved, warm-up included (a session's log line).
    pub fn bytes_total(&self) -> u64 {
        self.outputs.iter().map(|o| o.result.bytes_total.0).sum()
    }
}

fn pin(core: usize) -> Result<(), EngineError> {
    if core >= rustix::thread::CpuSet::MAX_CPU {
        return Err(EngineError::SockOpt {
            option: "sched_setaffinity (no such core)",
            source: std::io::Error::from(std::io::ErrorKind::InvalidInput),
        });
    }
    let mut set = rustix::thread::CpuSet::new();
    set.set(core);
    rustix::thread::sched_setaffinity(None, &set).map_err(|e| EngineError::SockOpt {
        option: "sched_setaffinity",
        source: std::io::Error::from(e),
    })
}

/// A UDP flow's transport at `end`: the socket, with its receiving strategy
/// built now when this end receives and the strategy is one built early
/// ([`netsonde_engine::io::rx_early`]), so it is ready when the sender starts.
pub fn udp_flow(
    end: End,
    sock: UdpSocket,
    spec: &TestSpec,
    dir: FlowDir,
) -> Result<FlowSocket, EngineError> {
    if spec.test != TestKind::UdpStream || sends(end, dir) {
        return Ok(FlowSocket::Udp(sock));
    }
    Ok(
        match netsonde_engine::io::rx_early(
            spec.rx_io,
            netsonde_engine::io::Sock::Udp(&sock),
            spec,
        )? {
            Some(r) => FlowSocket::UdpReady(sock, r),
            None => FlowSocket::Udp(sock),
        },
    )
}

/// Starts every flow at `t0`: each on its own thread, pinned round-robin to
/// `affinity` when it is not empty, except the flows that share epoll threads.
pub fn start(
    end: End,
    spec: Arc<TestSpec>,
    t0: Instant,
    plans: Vec<FlowPlan>,
    affinity: &[usize],
) -> Running {
    start_with(end, spec, t0, plans, affinity, Format::Netsonde, Vec::new())
}

/// The flow threads: each flow that runs alone on its own (pinned round-robin
/// to `affinity`), and the flows that share threads grouped one thread per
/// distinct core of the affinity list, pinned to it; without a list, one per
/// core this process may run on, unpinned.
fn group_threads(
    alone: Vec<Member>,
    shared: Vec<Member>,
    affinity: &[usize],
) -> Vec<(Option<usize>, Vec<Member>)> {
    let mut threads: Vec<(Option<usize>, Vec<Member>)> = alone
        .into_iter()
        .map(|(i, socket, ctx)| {
            let core = (!affinity.is_empty()).then(|| affinity[i % affinity.len()]);
            (core, vec![(i, socket, ctx)])
        })
        .collect();
    if shared.is_empty() {
        return threads;
    }
    let mut cores = affinity.to_vec();
    cores.sort_unstable();
    cores.dedup();
    let one = shared.first().is_some_and(|(_, _, ctx)| ctx.spec.iperf3_io);
    let count = if one {
        // An iperf3 client's streams: one thread, as iperf3 3.12's server.
        1
    } else if cores.is_empty() {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        cores.len()
    };
    let groups = count.clamp(1, shared.len());
    let mut grouped: Vec<(Option<usize>, Vec<Member>)> = (0..groups)
        .map(|g| (cores.get(g).copied(), Vec::new()))
        .collect();
    for (k, flow) in shared.into_iter().enumerate() {
        grouped[k % groups].1.push(flow);
    }
    threads.extend(grouped);
    threads
}

/// [`start`], with UDP datagrams carrying `format`'s header (iperf3's for an
/// iperf3 peer). `also` are the sockets, read elsewhere, that the wait an
/// iperf3 client's streams are read in covers beside them, as iperf3's
/// `select` does ([`run_select`]); none for any other test.
pub fn start_with(
    end: End,
    spec: Arc<TestSpec>,
    t0: Instant,
    plans: Vec<FlowPlan>,
    affinity: &[usize],
    format: Format,
    also: Vec<OwnedFd>,
) -> Running {
    // Before the flow threads exist, so they share an arena (see its doc).
    netsonde_engine::limit_malloc_arenas();
    let clock = FlowClock::new(t0, &spec);
    let udp_at_start = udp_baseline(&spec);
    let iface = interface_of(&plans);
    let stop = Arc::new(AtomicBool::new(false));
    let abandoned = Arc::new(AtomicBool::new(false));
    let (tx, done) = channel();
    let mut counters = Vec::new();
    let mut acked_by = Vec::new();
    let mut alone = Vec::new();
    let mut shared = Vec::new();
    let sampler = (spec.probe.is_some() || spec.samples)
        .then(|| start_sampler(end, &spec, clock, &plans, stop.clone()));
    for (i, plan) in plans.into_iter().enumerate() {
        let ctx = FlowCtx {
            id: plan.id,
            dir: plan.dir,
            spec: spec.clone(),
            clock,
            counters: Arc::default(),
            stop: stop.clone(),
            format,
        };
        counters.push((plan.id, plan.dir, ctx.counters.clone()));
        acked_by.push(match &plan.socket {
            FlowSocket::Tcp(t)
                if spec.interval.is_some()
                    && spec.test == TestKind::TcpStream
                    && sends(end, plan.dir) =>
            {
                t.try_clone().ok()
            }
            _ => None,
        });
        if shares_thread(end, &spec, plan.dir) {
            shared.push((i, plan.socket, ctx));
        } else {
            alone.push((i, plan.socket, ctx));
        }
    }
    let threads = group_threads(alone, shared, affinity);
    let mut flows = Vec::new();
    // Each flow thread says who it is, once, before its flows start, so the CPU
    // sampler can read its clock: the test's own CPU.
    // A thread that ends before the sampler's last reading leaves its clock's last
    // value behind.
    let tids: Arc<std::sync::Mutex<Vec<ThreadFlows>>> = Arc::default();
    let ended: Arc<std::sync::Mutex<Vec<Last>>> = Arc::default();
    let n_threads = threads.len();
    // Flow threads still running: the CPU is read until the measured interval
    // ends or they all have, whichever is first.
    let left = Arc::new(std::sync::atomic::AtomicUsize::new(n_threads));
    let last_end: Arc<std::sync::Mutex<Option<Instant>>> = Arc::default();
    let mut also = Some(also);
    for (core, members) in threads {
        // The sockets the select covers go to the thread that waits in one.
        let also = match members.first() {
            Some((_, _, ctx)) if served_as_iperf3(end, &ctx.spec, ctx.dir) => also.take(),
            _ => None,
        }
        .unwrap_or_default();
        let left = left.clone();
        let last_end = last_end.clone();
        let tx = tx.clone();
        let stop = stop.clone();
        let (tids, ended) = (tids.clone(), ended.clone());
        let ids: Vec<u32> = members.iter().map(|(_, _, ctx)| ctx.id).collect();
        flows.push(std::thread::spawn(move || {
            let tid = netsonde_cpu::thread::current_tid();
            tids.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((tid, ids));
            let out = run_thread(end, core, members, also, clock, &stop);
            if let Some(t) = netsonde_cpu::thread::cpu_time(tid) {
                let stat = netsonde_cpu::thread::task_stat(tid);
                ended
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((tid, t, stat));
            }
            if out.iter().any(|(_, r)| r.is_err()) {
                // One failed flow ends the test for all.
                stop.store(true, Ordering::Relaxed);
            }
            {
                // Once per thread, as it ends: off the data path.
                let mut e = last_end.lock().unwrap_or_else(|e| e.into_inner());
                let now = Instant::now();
                *e = Some(e.map_or(now, |t| t.max(now)));
            }
            left.fetch_sub(1, Ordering::Release);
            let _ = tx.send(());
            out
        }));
    }
    let watch = CpuWatch {
        clock,
        stop: stop.clone(),
        tids,
        n_threads,
        udp_at_start,
        iface,
        volume: spec.volume.is_some(),
        left,
        ended,
        breakdown: breakdown_of(&spec),
        cores: spec.test.is_stream(),
        abandoned: abandoned.clone(),
    };
    let cpu = std::thread::spawn(move || sample_cpu(watch));
    Running {
        pending: flows.len(),
        counters,
        acked_by,
        clock,
        stop,
        abandoned,
        flows,
        cpu,
        sampler,
        done,
        ended: None,
        last_end,
    }
}

/// Reads the `TCP_INFO` of this end's sending TCP flows every
/// [`TestSpec::sample_period`] from the load's start to a period past its
/// measured end (on copies of their descriptors: a sending socket is shut down by
/// its flow, never closed by the copy's holder before the flow is joined).
fn start_sampler(
    end: End,
    spec: &TestSpec,
    clock: FlowClock,
    plans: &[FlowPlan],
    stop: Arc<AtomicBool>,
) -> (Arc<AtomicBool>, JoinHandle<Vec<FlowSamples>>) {
    let socks: Vec<(u32, TcpStream)> = plans
        .iter()
        .filter(|p| spec.test == TestKind::TcpStream && sends(end, p.dir))
        .filter_map(|p| match &p.socket {
            FlowSocket::Tcp(t) => t.try_clone().ok().map(|t| (p.id, t)),
            _ => None,
        })
        .collect();
    let period = spec.sample_period().as_duration();
    let last = clock.end + period;
    let cap = (last.saturating_duration_since(clock.t0).as_nanos() / period.as_nanos().max(1))
        as usize
        + 2;
    let done = Arc::new(AtomicBool::new(false));
    let quit = done.clone();
    let thread = std::thread::spawn(move || {
        let mut out: Vec<FlowSamples> = socks
            .iter()
            .map(|(id, _)| FlowSamples {
                flow: *id,
                samples: Vec::with_capacity(cap),
            })
            .collect();
        for k in 0..cap as u32 {
            let at = clock.t0 + period * k;
            if at > last || sleep_until(at, &quit) || stop.load(Ordering::Relaxed) {
                break;
            }
            let t = Nanos::from(at - clock.t0);
            for ((_, sock), series) in socks.iter().zip(&mut out) {
                if let Some(s) = sockopt::tcp_sample(sock, t) {
                    series.samples.push(s);
                }
            }
        }
        out
    });
    (done, thread)
}

/// The interface the data connections use, whose NIC counters the CPU sampler
/// reads at the start and the end of the interval.
fn interface_of(plans: &[FlowPlan]) -> Option<String> {
    plans
        .iter()
        .find_map(|p| match &p.socket {
            FlowSocket::Tcp(t) => t.local_addr().ok(),
            FlowSocket::Udp(u) | FlowSocket::UdpReady(u, _) => u.local_addr().ok(),
            FlowSocket::CrrAccept(l, ..) => l.local_addr().ok(),
            FlowSocket::CrrConnect(..) => None,
        })
        .and_then(|a| netsonde_cpu::interface_of(a.ip()))
}

/// One thread's work: a flow of its own, or a group sharing an epoll.
fn run_thread(
    end: End,
    core: Option<usize>,
    members: Vec<Member>,
    also: Vec<OwnedFd>,
    clock: FlowClock,
    stop: &AtomicBool,
) -> Vec<Outcome> {
    if let Some(Err(e)) = core.map(pin) {
        let mut out = Vec::new();
        let mut e = Some(e);
        for (i, _, _) in members {
            out.push((
                i,
                Err(e.take().unwrap_or(EngineError::Io {
                    op: "sched_setaffinity",
                    source: std::io::Error::other("pinning the flow's thread failed"),
                })),
            ));
        }
        return out;
    }
    let (shared, select) = members.first().map_or((false, false), |(_, _, ctx)| {
        let select = served_as_iperf3(end, &ctx.spec, ctx.dir);
        (select || shares_thread(end, &ctx.spec, ctx.dir), select)
    });
    // Before the start, as the thread waits: a table of its own costs a copy
    // of the process's and a short-lived thread.
    let table = own_table(&members, &also);
    // A load-latency test starts its load after the probes' idle phase.
    sleep_until(clock.t0, stop);
    if !shared {
        return members
            .into_iter()
            .map(|(i, socket, ctx)| {
                let work = Workload::of(ctx.spec.test, end, ctx.dir, socket);
                (i, work.and_then(|w| run_flow(w, &ctx)))
            })
            .collect();
    }
    // Build every flow of the group; one that cannot be built fails alone.
    let mut order = Vec::new();
    let mut failed = Vec::new();
    let mut built = Vec::new();
    for (i, socket, ctx) in members {
        match Workload::of(ctx.spec.test, end, ctx.dir, socket).and_then(|w| shared_flow(w, &ctx)) {
            Ok(f) => {
                order.push(i);
                built.push(f);
            }
            Err(e) => failed.push((i, Err(e))),
        }
    }
    let ran = if select {
        run_select(built, also, clock, stop)
    } else {
        run_group(built, clock, stop)
    };
    let mut out: Vec<_> = order.into_iter().zip(ran).collect();
    if let (true, Err(why)) = (select, table) {
        // The report says why this session's streams cost more per call than
        // iperf3's own.
        for o in out.iter_mut().filter_map(|(_, r)| r.as_mut().ok()) {
            let io = o.result.io.get_or_insert_with(Default::default);
            let shared = format!(
                "its thread shared the process's descriptor table ({why}): each call \
                 looked its sockets up at a cost iperf3's one thread does not pay"
            );
            io.note = Some(
                io.note
                    .take()
                    .map_or(shared.clone(), |n| format!("{n}; {shared}")),
            );
        }
    }
    out.extend(failed);
    out
}

/// Gives a flow thread a descriptor table that holds only its sockets, as a
/// one-thread program (iperf3, a bare loop) has: each `send`, `recv`, `select`
/// or `read` then looks them up without taking a reference on the file and
/// dropping it at the call's end, two atomic operations per call
/// ([`netsonde_engine::own_table`], which has the figures). The thread holds no
/// other descriptor yet: its flows are built after, and what they open (a
/// ring, an epoll, a QUIC connection's runtime) is its own. The copies the
/// CPU sampler and the interval reporter read are other numbers in the shared
/// table, left open there. A socket whose strategy was built beforehand (it may
/// hold descriptors of its own), and a CRR flow (its listener is the session's,
/// shared by its flows), keep the shared table, as does a thread whose table
/// could not be copied: the same test, at the shared table's cost; an iperf3
/// session's reports say why.
fn own_table(members: &[Member], also: &[OwnedFd]) -> Result<(), String> {
    let fds: Option<Vec<BorrowedFd<'_>>> = members
        .iter()
        .map(|(_, socket, _)| match socket {
            FlowSocket::Tcp(t) => Some(t.as_fd()),
            FlowSocket::Udp(u) => Some(u.as_fd()),
            FlowSocket::UdpReady(..) | FlowSocket::CrrConnect(..) | FlowSocket::CrrAccept(..) => {
                None
            }
        })
        .chain(also.iter().map(|f| Some(f.as_fd())))
        .collect();
    let fds = fds.ok_or("a receiver built before the start may hold descriptors of its own")?;
    netsonde_engine::own_table(&fds).map_err(|e| format!("no table of its own: {e}"))
}

impl Running {
    /// Whether every flow has returned.
    pub fn all_done(&mut self) -> bool {
        let done = loop {
            match self.done.try_recv() {
                Ok(()) => self.pending = self.pending.saturating_sub(1),
                Err(TryRecvError::Empty) => break self.pending == 0,
                Err(TryRecvError::Disconnected) => break true,
            }
        };
        if done && self.ended.is_none() {
            let last = *self.last_end.lock().unwrap_or_else(|e| e.into_inner());
            self.ended = Some(last.unwrap_or_else(Instant::now));
        }
        done
    }

    /// When this end's test is over: the end of its measured interval, or when
    /// its flows all returned before it (a test that ends by volume), as far as
    /// [`Running::all_done`] has seen.
    pub fn end(&self) -> Instant {
        self.ended.map_or(self.clock.end, |e| e.min(self.clock.end))
    }

    /// Waits up to `limit` for every flow to return (stopped, each does within
    /// its socket timeout); whether they all did.
    pub fn wait_done(&mut self, limit: Duration) -> bool {
        let until = Instant::now() + limit;
        loop {
            if self.all_done() {
                return true;
            }
            if Instant::now() >= until {
                return false;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Asks every flow to stop now.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Stops the flows of a test whose results nobody will read (its session
    /// failed, or whoever ran it cancelled it) and waits for them, without the
    /// CPU breakdown's naming: a cancelled mesh job's client and its
    /// destination free their slots at once. Returns the bytes they moved.
    pub fn abandon(self) -> u64 {
        self.abandoned.store(true, Ordering::Relaxed);
        self.stop();
        self.finish().bytes_total()
    }

    /// Waits for every flow and the CPU sampler.
    pub fn finish(self) -> Finished {
        let mut results = Vec::new();
        let mut error = None;
        for h in self.flows {
            match h.join() {
                Ok(out) => results.extend(out),
                Err(_) => {
                    error.get_or_insert(EngineError::Io {
                        op: "flow thread",
                        source: std::io::Error::other("a flow thread panicked"),
                    });
                }
            }
        }
        results.sort_by_key(|(i, _)| *i);
        let mut outputs = Vec::new();
        for (_, r) in results {
            match r {
                Ok(o) => outputs.push(o),
                Err(e) => {
                    error.get_or_insert(e);
                }
            }
        }
        let cpu = self.cpu.join().ok().flatten();
        let tcp_samples = self
            .sampler
            .map(|(quit, t)| {
                quit.store(true, Ordering::Relaxed);
                t.join().unwrap_or_default()
            })
            .unwrap_or_default();
        Finished {
            outputs,
            cpu,
            error,
            tcp_samples,
        }
    }
}
