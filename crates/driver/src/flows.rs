//! Running a test's flows on threads, one per flow, with the CPU sampler covering
//! exactly the measured interval.

use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, TryRecvError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use netsonde_engine::{
    crr, rr, stream, udp, EngineError, FlowClock, FlowCounters, FlowCtx, FlowOutput,
};
use netsonde_model::cpu::CpuReport;
use netsonde_model::spec::{FlowDir, TestKind, TestSpec};
use netsonde_proto::Token;

/// Which end runs the flows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The client.
    Client,
    /// The server.
    Server,
}

/// A flow's transport, connected and ready.
#[derive(Debug)]
pub enum FlowSocket {
    /// A TCP data connection.
    Tcp(TcpStream),
    /// A connected UDP socket.
    Udp(UdpSocket),
    /// CRR requester: where to connect for each transaction.
    CrrConnect(SocketAddr, Token),
    /// CRR responder: the session's data listener.
    CrrAccept(Arc<TcpListener>, Token),
}

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

/// Flows that are running.
#[derive(Debug)]
pub struct Running {
    /// Flow number, direction and published counters, for interval reports.
    pub counters: Vec<(u32, FlowDir, Arc<FlowCounters>)>,
    /// The shared clock.
    pub clock: FlowClock,
    stop: Arc<AtomicBool>,
    flows: Vec<JoinHandle<Result<FlowOutput, EngineError>>>,
    cpu: JoinHandle<Option<CpuReport>>,
    done: Receiver<()>,
    pending: usize,
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
}

fn pin(core: usize) -> Result<(), EngineError> {
    let mut set = nix::sched::CpuSet::new();
    set.set(core).map_err(|e| EngineError::SockOpt {
        option: "sched_setaffinity (no such core)",
        source: std::io::Error::from(e),
    })?;
    nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), &set).map_err(|e| {
        EngineError::SockOpt {
            option: "sched_setaffinity",
            source: std::io::Error::from(e),
        }
    })
}

fn run_flow(end: End, socket: FlowSocket, ctx: &FlowCtx) -> Result<FlowOutput, EngineError> {
    let sends = matches!(
        (end, ctx.dir),
        (End::Client, FlowDir::Up) | (End::Server, FlowDir::Down)
    );
    match (ctx.spec.test, socket) {
        (TestKind::TcpStream, FlowSocket::Tcp(s)) if sends => stream::tcp_send(s, ctx),
        (TestKind::TcpStream, FlowSocket::Tcp(s)) => stream::tcp_recv(s, ctx),
        (TestKind::UdpStream, FlowSocket::Udp(s)) if sends => udp::udp_send(s, ctx),
        (TestKind::UdpStream, FlowSocket::Udp(s)) => udp::udp_recv(s, ctx),
        (TestKind::TcpRr, FlowSocket::Tcp(s)) if end == End::Client => rr::tcp_requester(s, ctx),
        (TestKind::TcpRr, FlowSocket::Tcp(s)) => rr::tcp_responder(s, ctx),
        (TestKind::UdpRr, FlowSocket::Udp(s)) if end == End::Client => rr::udp_requester(s, ctx),
        (TestKind::UdpRr, FlowSocket::Udp(s)) => rr::udp_responder(s, ctx),
        (TestKind::TcpCrr, FlowSocket::CrrConnect(a, t)) => crr::crr_requester(a, &t, ctx),
        (TestKind::TcpCrr, FlowSocket::CrrAccept(l, t)) => crr::crr_responder(&l, &t, ctx),
        (t, s) => Err(EngineError::Io {
            op: "flow setup",
            source: std::io::Error::other(format!("{t} cannot run over {s:?}")),
        }),
    }
}

/// Sleeps until `at`, waking early when `stop` is set. Returns whether it stopped.
fn sleep_until(at: Instant, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return true;
        }
        let now = Instant::now();
        if now >= at {
            return false;
        }
        std::thread::sleep((at - now).min(Duration::from_millis(50)));
    }
}

/// Starts every flow at `t0` on its own thread, pinned round-robin to `affinity`
/// when it is not empty.
pub fn start(
    end: End,
    spec: Arc<TestSpec>,
    t0: Instant,
    plans: Vec<FlowPlan>,
    affinity: &[usize],
) -> Running {
    let clock = FlowClock::new(t0, &spec);
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, done) = channel();
    let mut counters = Vec::new();
    let mut flows = Vec::new();
    for (i, plan) in plans.into_iter().enumerate() {
        let ctx = FlowCtx {
            id: plan.id,
            dir: plan.dir,
            spec: spec.clone(),
            clock,
            counters: Arc::default(),
            stop: stop.clone(),
        };
        counters.push((plan.id, plan.dir, ctx.counters.clone()));
        let core = (!affinity.is_empty()).then(|| affinity[i % affinity.len()]);
        let tx = tx.clone();
        let socket = plan.socket;
        flows.push(std::thread::spawn(move || {
            let r = core
                .map(pin)
                .transpose()
                .and_then(|_| run_flow(end, socket, &ctx));
            if r.is_err() {
                // One failed flow ends the test for all.
                ctx.stop.store(true, Ordering::Relaxed);
            }
            let _ = tx.send(());
            r
        }));
    }
    let cpu_stop = stop.clone();
    let cpu = std::thread::spawn(move || {
        if sleep_until(clock.warm_end, &cpu_stop) {
            return None;
        }
        let sampler = netsonde_cpu::CpuSampler::start().ok()?;
        sleep_until(clock.end, &cpu_stop);
        sampler.finish().ok()
    });
    Running {
        pending: flows.len(),
        counters,
        clock,
        stop,
        flows,
        cpu,
        done,
    }
}

impl Running {
    /// Whether every flow has returned.
    pub fn all_done(&mut self) -> bool {
        loop {
            match self.done.try_recv() {
                Ok(()) => self.pending = self.pending.saturating_sub(1),
                Err(TryRecvError::Empty) => return self.pending == 0,
                Err(TryRecvError::Disconnected) => return true,
            }
        }
    }

    /// Asks every flow to stop now.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Waits for every flow and the CPU sampler.
    pub fn finish(self) -> Finished {
        let mut outputs = Vec::new();
        let mut error = None;
        for h in self.flows {
            match h.join() {
                Ok(Ok(o)) => outputs.push(o),
                Ok(Err(e)) => {
                    error.get_or_insert(e);
                }
                Err(_) => {
                    error.get_or_insert(EngineError::Io {
                        op: "flow thread",
                        source: std::io::Error::other("a flow thread panicked"),
                    });
                }
            }
        }
        let cpu = self.cpu.join().ok().flatten();
        Finished {
            outputs,
            cpu,
            error,
        }
    }
}
