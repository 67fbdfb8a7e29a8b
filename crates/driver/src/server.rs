//! The server: an accept loop with one thread per control connection.
//!
//! **One test at a time.** Concurrent tests on one host disturb each other's
//! figures, so the server runs a single test and answers any other client that asks
//! meanwhile with `Error { code: busy, retry_after_ms }` (the time the running test
//! has left), at once. Control connections themselves are served concurrently, so a
//! silent or slow client never blocks another: it only holds a handshake thread
//! until its phase deadline, and never the busy slot, which is taken only once a
//! valid setup arrives and is released by a guard on every path out of a session.
//!
//! **Budgets.** A setup reserves what its test will hold (buffer memory, threads,
//! descriptors: [`crate::budget`]) before any socket is opened, and is refused by
//! name above the server's limits; the reservation, the data listener and its
//! acceptor thread go as soon as the session ends, however it ends.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use netsonde_engine::sockopt;
use netsonde_model::result::{SideResult, SocketFacts};
use netsonde_model::spec::{FlowDir, TestKind, TestSpec};
use netsonde_proto::auth::Key;
use netsonde_proto::message::{decode_preamble, PREAMBLE_LEN};
use netsonde_proto::{Deadlines, ErrorCode, Event, ServerSession, SetupAck, Token};
use nix::errno::Errno;
use socket2::{Domain, Protocol, Socket, Type};

use crate::budget::{Budget, Need, Reservation};
use crate::control::Control;
use crate::flows::{self, End, FlowPlan, FlowSocket};
use crate::jobs::Refusal;
use crate::now;
use crate::policy::{AddressTable, Limits, LogFormat, LogLimiter, SessionLog};

/// Why the server could not run.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// Binding the control port failed.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// Accepting failed in a way that is not per-connection.
    #[error("accept failed: {0}")]
    Accept(#[source] std::io::Error),
    /// The configuration cannot serve any test.
    #[error("{0}")]
    Config(String),
}

/// Server settings.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Control address.
    pub bind: SocketAddr,
    /// Phase deadlines.
    pub deadlines: Deadlines,
    /// Abuse limits.
    pub limits: Limits,
    /// One line per session on stderr, in this format.
    pub log: LogFormat,
    /// Require clients to prove they hold this key (and seal the session).
    pub auth_key: Option<Key>,
    /// Where each finished iperf3 client's session goes as a report (no
    /// netsonde client is there to store it): both sides, this end's CPU and
    /// `TCP_INFO` included.
    pub iperf3_sessions: Option<SessionSink>,
    /// Serve iperf3 clients with netsonde's own receiver (1 MiB reads, woken per
    /// ~1 ms of data) rather than iperf3's (one `-l` read per call, woken per
    /// segment), which is the default so that swapping servers keeps the path.
    pub iperf3_fast_receiver: bool,
    /// Take jobs from an authenticated controller with this handler (`netsonde
    /// agent` gives `agent::handler`): run a test as a client against another
    /// agent and send back its report. `None`: jobs are refused.
    pub jobs: Option<crate::jobs::JobHandler>,
}

pub use crate::policy::SessionSink;

impl ServerConfig {
    /// Defaults for `addr`.
    pub fn new(bind: SocketAddr) -> ServerConfig {
        ServerConfig {
            bind,
            deadlines: Deadlines::default(),
            limits: Limits::default(),
            log: LogFormat::Text,
            auth_key: None,
            iperf3_sessions: None,
            iperf3_fast_receiver: false,
            jobs: None,
        }
    }
}

#[derive(Debug)]
struct Shared {
    cfg: ServerConfig,
    /// When each running test is expected to be over (the end of its measured
    /// interval, plus [`AFTER_TEST`] for results), one entry per running test.
    running: Mutex<Vec<(u64, Instant)>>,
    /// Memory, threads and descriptors: what running sessions hold.
    budget: Arc<Budget>,
    next_id: AtomicUsize,
    connections: AtomicUsize,
    addresses: AddressTable,
    log_limit: LogLimiter,
    /// Sessions ended, for `--metrics`.
    tally: crate::health::Tally,
    /// Running iperf3 sessions, where their data connections go.
    iperf3: crate::iperf3_server::Registry,
}

impl Shared {
    /// A server's state for `cfg`, its budget sized from the limits.
    fn new(cfg: ServerConfig) -> Shared {
        let limits = &cfg.limits;
        let budget = Arc::new(Budget::new(
            limits.max_session_memory,
            Need {
                memory: limits.max_memory,
                // Two threads per flow at most, per running test, and one per
                // control connection.
                threads: limits.max_tests as u64 * (2 * u64::from(limits.max_parallel) + 3)
                    + limits.max_connections as u64,
                fds: crate::budget::fd_budget(limits.max_connections),
            },
        ));
        Shared {
            cfg,
            running: Mutex::new(Vec::new()),
            budget,
            next_id: AtomicUsize::new(0),
            connections: AtomicUsize::new(0),
            addresses: AddressTable::default(),
            log_limit: LogLimiter::default(),
            iperf3: Default::default(),
            tally: Default::default(),
        }
    }

    fn log(&self, entry: &SessionLog) {
        self.tally.count(entry.protocol, entry.outcome);
        let second = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let (write, suppressed) = self.log_limit.admit(second);
        if let Some(n) = suppressed {
            if self.cfg.log != LogFormat::Off {
                eprintln!("netsonde server: {n} session log line(s) suppressed in the last second");
            }
        }
        if !write {
            return;
        }
        if let Some(line) = entry.line(self.cfg.log) {
            eprintln!("{line}");
        }
    }
}

/// Holds a test slot; frees it when dropped, whatever the session's fate.
struct BusyGuard(Arc<Shared>, u64);

/// What a test takes after its measured interval: flows drain, results travel
/// (tens of milliseconds on loopback; this leaves room for a slower path).
const AFTER_TEST: Duration = Duration::from_millis(250);

impl BusyGuard {
    /// The test started at `at`: it is expected to end at the end of its measured
    /// interval, plus [`AFTER_TEST`].
    fn started(&self, at: Instant, spec: &TestSpec) {
        let end = at + spec.span().as_duration() + AFTER_TEST;
        let mut r = self.0.running.lock().unwrap_or_else(|e| e.into_inner());
        for (id, e) in r.iter_mut() {
            if *id == self.1 {
                *e = end;
            }
        }
    }
}

impl Drop for BusyGuard {
    fn drop(&mut self) {
        let mut r = self.0.running.lock().unwrap_or_else(|e| e.into_inner());
        r.retain(|(id, _)| *id != self.1);
    }
}

/// Tells a connection we will not serve it why, in one unsealed error frame (a
/// client reads it in place of the server's hello), and closes it.
fn refuse_connection(mut stream: TcpStream, reason: &str) {
    let frame = netsonde_proto::Frame::Message(netsonde_proto::Message::Error {
        code: ErrorCode::Busy,
        message: reason.to_string(),
        retry_after_ms: Some(1000),
    });
    let _ = stream.set_write_timeout(Some(Duration::from_millis(200)));
    let _ = std::io::Write::write_all(&mut stream, &frame.to_bytes());
}

/// accept() errors that concern one connection or pass with time.
const TRANSIENT_ACCEPT: [Errno; 5] = [
    Errno::ECONNABORTED,
    Errno::EMFILE,
    Errno::ENFILE,
    Errno::ENOBUFS,
    Errno::ENOMEM,
];

/// A bound server.
#[derive(Debug)]
pub struct Server {
    listener: TcpListener,
    shared: Arc<Shared>,
}

/// A server running on a background thread; stopped and joined on drop.
#[derive(Debug)]
pub struct ServerHandle {
    /// Where it listens.
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Result<(), ServerError>>>,
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn listen(addr: SocketAddr, backlog: i32, spec: Option<&TestSpec>) -> std::io::Result<Socket> {
    let s = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    s.set_reuse_address(true)?;
    if addr.ip() == IpAddr::V6(Ipv6Addr::UNSPECIFIED) {
        // `::` takes IPv4 clients too, whatever net.ipv6.bindv6only says (as
        // iperf3 -s does); their addresses are read back canonical.
        s.set_only_v6(false)?;
    }
    if let Some(spec) = spec {
        sockopt::apply(&s, spec).map_err(std::io::Error::other)?;
    }
    s.bind(&addr.into())?;
    s.listen(backlog)?;
    // SO_RCVTIMEO bounds accept() on Linux: the loop can notice stop requests.
    s.set_read_timeout(Some(sockopt::WAKE))?;
    Ok(s)
}

impl Server {
    /// Binds the control port; refuses limits under which no test could run.
    pub fn bind(cfg: ServerConfig) -> Result<Server, ServerError> {
        // Before any session thread exists: the address space the threads reserve
        // stays within what the memory budget assumes.
        netsonde_engine::limit_malloc_arenas();
        cfg.limits
            .validate()
            .map_err(|e| ServerError::Config(e.to_string()))?;
        if cfg.deadlines.hello.0 == 0
            || cfg.deadlines.setup.0 == 0
            || cfg.deadlines.connect.0 == 0
            || cfg.deadlines.done.0 == 0
        {
            return Err(ServerError::Config(
                "--phase-timeout must be above 0".into(),
            ));
        }
        let addr = cfg.bind;
        let listener = match listen(addr, 128, None) {
            // A host without IPv6: the dual-stack default falls back to IPv4's.
            Err(e)
                if addr.ip() == IpAddr::V6(Ipv6Addr::UNSPECIFIED)
                    && e.raw_os_error() == Some(nix::errno::Errno::EAFNOSUPPORT as i32) =>
            {
                let v4 = SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), addr.port());
                listen(v4, 128, None).map_err(|source| ServerError::Bind { addr: v4, source })?
            }
            r => r.map_err(|source| ServerError::Bind { addr, source })?,
        };
        Ok(Server {
            listener: listener.into(),
            shared: Arc::new(Shared::new(cfg)),
        })
    }

    /// Reads this server's health (sessions ended, tests running, the budget
    /// held) from any thread, for `--metrics`.
    pub fn health(&self) -> crate::health::HealthProbe {
        let shared = self.shared.clone();
        std::sync::Arc::new(move || {
            let running = shared
                .running
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .len();
            shared.tally.snapshot(
                running,
                shared.connections.load(Ordering::Relaxed),
                shared.budget.held(),
                shared.budget.total(),
            )
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.listener.local_addr().unwrap_or(self.shared.cfg.bind)
    }

    /// Serves until `stop` is set, then drains: stops accepting, lets running
    /// sessions finish (each is bounded by its own deadlines) and returns.
    pub fn run(self, stop: Arc<AtomicBool>) -> Result<(), ServerError> {
        let shared = &self.shared;
        let limits = &shared.cfg.limits;
        // The order connections were accepted in (iperf3's streams are told
        // apart by it).
        let mut accepted = 0u64;
        while !stop.load(Ordering::Relaxed) {
            let (stream, peer) = match self.listener.accept() {
                // An IPv4 client of a dual-stack listener is an IPv4 peer.
                Ok((s, p)) => (s, SocketAddr::new(p.ip().to_canonical(), p.port())),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock
                            | std::io::ErrorKind::TimedOut
                            | std::io::ErrorKind::Interrupted
                    ) =>
                {
                    continue
                }
                Err(e)
                    if e.raw_os_error()
                        .is_some_and(|n| TRANSIENT_ACCEPT.iter().any(|t| *t as i32 == n)) =>
                {
                    // Per-connection or transient: back off briefly, keep serving.
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                }
                Err(e) => return Err(ServerError::Accept(e)),
            };
            let refuse = if shared.connections.load(Ordering::Acquire) >= limits.max_connections {
                Some(format!(
                    "server busy: {} connections already",
                    limits.max_connections
                ))
            } else if !shared.addresses.enter(peer.ip(), limits.max_per_address) {
                Some(format!(
                    "too many connections from {} (at most {})",
                    peer.ip(),
                    limits.max_per_address
                ))
            } else {
                None
            };
            if let Some(reason) = refuse {
                refuse_connection(stream, &reason);
                shared.log(&SessionLog {
                    peer: peer.to_string(),
                    outcome: "refused",
                    reason,
                    ..SessionLog::default()
                });
                continue;
            }
            shared.connections.fetch_add(1, Ordering::AcqRel);
            let shared = self.shared.clone();
            let seq = accepted;
            accepted += 1;
            std::thread::spawn(move || {
                let started = Instant::now();
                // An iperf3 stream handed to its session has nothing to log.
                if let Some(mut entry) = serve_connection(stream, peer, seq, &shared) {
                    entry.peer = peer.to_string();
                    entry.seconds = started.elapsed().as_secs_f64();
                    shared.log(&entry);
                }
                shared.addresses.leave(peer.ip());
                shared.connections.fetch_sub(1, Ordering::AcqRel);
            });
        }
        // Drain: every session ends by its own deadlines; wait for them.
        drop(self.listener);
        let drain_until = Instant::now()
            + limits.max_duration.as_duration()
            + self.shared.cfg.deadlines.grace.as_duration()
            + Duration::from_secs(30);
        while self.shared.connections.load(Ordering::Acquire) > 0 && Instant::now() < drain_until {
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }

    /// Control connections being served now.
    pub fn active(&self) -> usize {
        self.shared.connections.load(Ordering::Acquire)
    }

    /// Runs on a background thread.
    pub fn spawn(self) -> ServerHandle {
        let addr = self.local_addr();
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        ServerHandle {
            addr,
            stop,
            thread: Some(std::thread::spawn(move || self.run(s))),
        }
    }
}

/// Answers a session's setup: validation, the busy slot, the budget, sockets.
struct Prepared {
    ack: SetupAck,
    listener: Arc<TcpListener>,
    udp: Vec<UdpSocket>,
    busy: BusyGuard,
    _reserved: Reservation,
}

/// The thread accepting a session's data flows. Dropping it (the session ended,
/// the control connection closed) shuts the listener down, which wakes a blocked
/// `accept` at once (a UDP handshake notices within 100 ms), and joins it, so an
/// abandoned setup leaves no thread, listener or socket behind.
struct Acceptor {
    cancel: Arc<AtomicBool>,
    /// The data listener, shut down on cancel so a blocked `accept` returns at
    /// once.
    listener: Arc<TcpListener>,
    thread: Option<JoinHandle<Result<Accepted, String>>>,
}

impl Acceptor {
    /// Its result, once it has one (a flow it could not set up, before the
    /// client asks to start, is told to the client at once).
    fn poll(&mut self) -> Option<Result<Accepted, String>> {
        if !self.thread.as_ref()?.is_finished() {
            return None;
        }
        Some(match self.thread.take().map(JoinHandle::join) {
            Some(Ok(r)) => r,
            _ => Err("data acceptor failed".into()),
        })
    }

    fn join(mut self) -> Result<Accepted, String> {
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(r)) => r,
            _ => Err("data acceptor failed".into()),
        }
    }
}

impl Drop for Acceptor {
    fn drop(&mut self) {
        // Only a session that ends before its flows were accepted gets here with
        // the thread still running; a joined acceptor leaves the listener alone
        // (tcp-crr flows go on accepting on it).
        if let Some(t) = self.thread.take() {
            self.cancel.store(true, Ordering::Relaxed);
            let _ = socket2::SockRef::from(&*self.listener).shutdown(std::net::Shutdown::Read);
            let _ = t.join();
        }
    }
}

/// Admits a test, whatever its protocol: the spec, the limits, a test slot and
/// the budget.
fn admit(spec: &TestSpec, shared: &Arc<Shared>) -> Result<(BusyGuard, Reservation), Refusal> {
    spec.validate()
        .map_err(|e| (ErrorCode::BadSpec, e.to_string(), None))?;
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    if let Some(&c) = spec.server_affinity.iter().find(|&&c| c >= cores) {
        return Err((
            ErrorCode::BadSpec,
            format!("server has no core {c} (it has {cores})"),
            None,
        ));
    }
    shared
        .cfg
        .limits
        .check(spec)
        .map_err(|e| (ErrorCode::BadSpec, e.to_string(), None))?;
    let busy = {
        let mut r = shared.running.lock().unwrap_or_else(|e| e.into_inner());
        if r.len() >= shared.cfg.limits.max_tests {
            let first = r
                .iter()
                .map(|(_, end)| *end)
                .min()
                .unwrap_or_else(Instant::now);
            let left = first.saturating_duration_since(Instant::now());
            return Err((
                ErrorCode::Busy,
                format!(
                    "server busy running another test, expected to end in {:.1} s",
                    left.as_secs_f64()
                ),
                Some((left.as_millis() as u64).max(100)),
            ));
        }
        let id = shared.next_id.fetch_add(1, Ordering::Relaxed) as u64;
        // Until it starts, the test is expected to start at once.
        let end = Instant::now() + spec.span().as_duration() + AFTER_TEST;
        r.push((id, end));
        BusyGuard(shared.clone(), id)
    };
    let reserved = shared
        .budget
        .reserve(Need::of(spec))
        .map_err(|e| (ErrorCode::BadSpec, e.to_string(), None))?;
    Ok((busy, reserved))
}

fn prepare(spec: &TestSpec, local_ip: IpAddr, shared: &Arc<Shared>) -> Result<Prepared, Refusal> {
    let (busy, reserved) = admit(spec, shared)?;
    let internal = |what: &str, e: std::io::Error| {
        (
            ErrorCode::Internal,
            format!("server cannot {what}: {e}"),
            None,
        )
    };
    let token = crate::random_token().map_err(|e| internal("draw a token", e))?;
    let listener = listen(SocketAddr::new(local_ip, 0), 1024, Some(spec))
        .map_err(|e| internal("open a data listener", e))?;
    let data_port = listener
        .local_addr()
        .ok()
        .and_then(|a| a.as_socket())
        .map(|a| a.port())
        .unwrap_or(0);
    let mut socket = spec.test.is_tcp().then(|| sockopt::facts(&listener, true));
    let mut udp = Vec::new();
    let udp_flows = if spec.test.is_tcp() {
        Vec::new()
    } else {
        spec.flows().into_iter().map(|(id, _)| Some(id)).collect()
    };
    // A load-latency test's UDP probe gets a socket of its own, announced last.
    let probe = spec.probe_flows().map(|_| None);
    {
        for flow in udp_flows.into_iter().chain(probe) {
            let s = Socket::new(
                Domain::for_address(SocketAddr::new(local_ip, 0)),
                Type::DGRAM,
                Some(Protocol::UDP),
            )
            .map_err(|e| internal("open a UDP socket", e))?;
            if let Some(id) = flow {
                sockopt::apply_flow(&s, spec, id)
                    .map_err(|e| internal("set UDP options", std::io::Error::other(e)))?;
            }
            s.bind(&SocketAddr::new(local_ip, 0).into())
                .map_err(|e| internal("bind a UDP socket", e))?;
            if flow.is_some() {
                socket.get_or_insert_with(|| sockopt::facts(&s, false));
            }
            udp.push(UdpSocket::from(s));
        }
    }
    let udp_ports = udp
        .iter()
        .map(|u| u.local_addr().map(|a| a.port()).unwrap_or(0))
        .collect();
    Ok(Prepared {
        ack: SetupAck {
            token,
            data_port,
            udp_ports,
            host: netsonde_cpu::host_facts(Some(local_ip)),
            socket,
        },
        listener: Arc::new(listener.into()),
        udp,
        busy,
        _reserved: reserved,
    })
}

/// How long a data connection may take to send its preamble.
const FIRST_BYTES: Duration = Duration::from_secs(1);

/// A load-latency test's probe sockets at the server.
struct ProbeSockets {
    tcp: TcpStream,
    udp: UdpSocket,
    /// The data listener, where each new-connection probe arrives.
    listener: Arc<TcpListener>,
}

/// What the acceptor hands over: the load's flows and, for a load-latency test,
/// the probes' sockets.
type Accepted = (Vec<FlowPlan>, Option<ProbeSockets>);

/// Accepts the data flows of a session until all are in, the deadline passes or
/// `cancel` is set. Connections from another address, without the session's token,
/// or silent for [`FIRST_BYTES`], are dropped.
fn accept_flows(
    spec: &TestSpec,
    token: Token,
    peer_ip: IpAddr,
    listener: Arc<TcpListener>,
    mut udp: Vec<UdpSocket>,
    deadline: Instant,
    cancel: &AtomicBool,
) -> Result<Accepted, String> {
    let wanted = spec.flows();
    let probe = spec.probe_flows();
    let handshake = |sock: &UdpSocket, id: u32| -> Result<(), String> {
        let (flow, _) =
            netsonde_engine::udp::server_handshake(sock, &token, peer_ip, deadline, cancel)
                .map_err(|e| e.to_string())?;
        if flow != id {
            return Err(format!("UDP flow {id} announced itself as flow {flow}"));
        }
        sock.set_read_timeout(Some(sockopt::WAKE))
            .map_err(|e| e.to_string())?;
        sock.set_write_timeout(Some(sockopt::WAKE))
            .map_err(|e| e.to_string())
    };
    let welcome = |sock: &UdpSocket, id: u32| -> Result<(), String> {
        netsonde_engine::udp::server_welcome(sock, &token, id).map_err(|e| e.to_string())
    };
    let probe_udp = match probe {
        Some(p) => {
            let sock = udp.pop().ok_or("no UDP socket for the probe")?;
            Some((p, sock))
        }
        None => None,
    };
    let mut plans = Vec::new();
    // TCP connections wanted, by flow number: the load's (tcp-stream, tcp-rr) and
    // the kept probe connection.
    let mut tcp: Vec<(u32, FlowDir, Option<TcpStream>)> = Vec::new();
    if spec.test == TestKind::TcpCrr {
        plans.extend(wanted.into_iter().map(|(id, dir)| FlowPlan {
            id,
            dir,
            socket: FlowSocket::CrrAccept(listener.clone(), token, peer_ip),
        }));
    } else if spec.test.is_tcp() {
        tcp.extend(wanted.into_iter().map(|(id, dir)| (id, dir, None)));
    } else {
        for ((id, dir), sock) in wanted.into_iter().zip(udp) {
            handshake(&sock, id)?;
            // A receiving strategy built early is ready before the client hears
            // back, so before it can start.
            let socket = crate::flows::udp_flow(crate::flows::End::Server, sock, spec, dir)
                .map_err(|e| e.to_string())?;
            if let FlowSocket::Udp(sock) | FlowSocket::UdpReady(sock, _) = &socket {
                welcome(sock, id)?;
            }
            plans.push(FlowPlan { id, dir, socket });
        }
    }
    if let Some((p, sock)) = &probe_udp {
        handshake(sock, p.udp)?;
        welcome(sock, p.udp)?;
    }
    let load_tcp = tcp.len();
    if let Some(p) = probe {
        tcp.push((p.tcp, FlowDir::Up, None));
    }
    while tcp.iter().any(|(_, _, s)| s.is_none()) {
        if cancel.load(Ordering::Relaxed) {
            return Err("the session ended before its data connections".into());
        }
        if Instant::now() >= deadline {
            let missing = tcp.iter().filter(|(_, _, s)| s.is_none()).count();
            return Err(format!("{missing} data connection(s) never arrived"));
        }
        let (mut s, from) = match listener.accept() {
            Ok(c) => c,
            Err(_) => continue,
        };
        if from.ip().to_canonical() != peer_ip {
            continue;
        }
        let mut pre = [0u8; PREAMBLE_LEN];
        let _ = s.set_read_timeout(Some(FIRST_BYTES));
        if std::io::Read::read_exact(&mut s, &mut pre).is_err() {
            continue;
        }
        let Some((t, flow)) = decode_preamble(&pre) else {
            continue;
        };
        let Some(slot) = tcp.iter_mut().find(|(id, _, _)| *id == flow) else {
            continue;
        };
        if t != token || slot.2.is_some() {
            continue;
        }
        let sock = Socket::from(s);
        let set = if probe.is_some_and(|p| p.tcp == flow) {
            sock.set_tcp_nodelay(true)
                .map_err(|source| netsonde_engine::EngineError::SockOpt {
                    option: "TCP_NODELAY",
                    source,
                })
        } else {
            sockopt::apply_flow(&sock, spec, flow)
        };
        if set.and_then(|_| sockopt::set_wake(&sock)).is_err() {
            continue;
        }
        slot.2 = Some(sock.into());
    }
    let mut tcp = tcp.into_iter();
    plans.extend(tcp.by_ref().take(load_tcp).map(|(id, dir, s)| FlowPlan {
        id,
        dir,
        socket: FlowSocket::Tcp(s.expect("all present")),
    }));
    let probes = match (tcp.next(), probe_udp) {
        (Some((_, _, Some(tcp))), Some((_, udp))) => Some(ProbeSockets { tcp, udp, listener }),
        _ => None,
    };
    Ok((plans, probes))
}

/// Runs one control connection to its end; returns its log record (none for an
/// iperf3 data connection, which goes to its session).
fn serve_connection(
    stream: TcpStream,
    peer: SocketAddr,
    seq: u64,
    shared: &Arc<Shared>,
) -> Option<SessionLog> {
    let mut log = SessionLog {
        outcome: "dropped",
        ..SessionLog::default()
    };
    // iperf3 opens with its cookie (a letter or digit); netsonde with a frame
    // length, whose first byte is 0.
    let d = shared.cfg.deadlines;
    let mut first = [0u8; 1];
    let _ = stream.set_read_timeout(Some(d.hello.as_duration()));
    if matches!(stream.peek(&mut first), Ok(1))
        && netsonde_proto::iperf3::Cookie::may_start_with(first[0])
    {
        if shared.cfg.auth_key.is_some() {
            log.protocol = "iperf3";
            log.reason = "an iperf3 client, and this server requires a key".into();
            crate::iperf3_server::refuse_unauthorised(stream, d);
            return Some(log);
        }
        let admit = |spec: &TestSpec| {
            admit(spec, shared)
                .map(|held| Box::new(held) as Box<dyn std::any::Any>)
                .map_err(|(code, why, _)| {
                    let errno = shared
                        .cfg
                        .limits
                        .check(spec)
                        .err()
                        .map_or(netsonde_proto::iperf3::IE_RECV_PARAMS, |e| e.iperf3_errno());
                    (code == ErrorCode::Busy, why, errno)
                })
        };
        let handed = crate::iperf3_server::serve(
            stream,
            peer,
            seq,
            crate::iperf3_server::ServeCtx {
                registry: &shared.iperf3,
                deadlines: d,
                admit: &admit,
                log: &mut log,
                sink: shared.cfg.iperf3_sessions.as_ref(),
                opts: crate::iperf3_server::SessionOpts {
                    fast_receiver: shared.cfg.iperf3_fast_receiver,
                    json_output: shared.cfg.log == LogFormat::Json,
                },
            },
        );
        return handed.map(|()| log);
    }
    Some(serve_connection_netsonde(stream, peer, shared, log))
}

/// A netsonde client's control connection.
fn serve_connection_netsonde(
    stream: TcpStream,
    peer: SocketAddr,
    shared: &Arc<Shared>,
    mut log: SessionLog,
) -> SessionLog {
    let fail = |mut log: SessionLog, outcome: &'static str, reason: String| {
        log.outcome = outcome;
        log.reason = reason;
        log
    };
    let local_ip = match stream.local_addr() {
        Ok(a) => a.ip().to_canonical(),
        Err(e) => return fail(log, "dropped", e.to_string()),
    };
    let mut ctl = match Control::new(stream) {
        Ok(c) => c,
        Err(e) => return fail(log, "dropped", e.to_string()),
    };
    let d = shared.cfg.deadlines;
    let auth = match &shared.cfg.auth_key {
        None => None,
        Some(k) => match crate::random_bytes::<32>() {
            Ok(n) => Some((k.clone(), n)),
            Err(e) => return fail(log, "dropped", format!("no randomness for a nonce: {e}")),
        },
    };
    let mut s = ServerSession::new(now(), d, auth);
    let tick = Duration::from_millis(100);

    // Hello, authentication and setup.
    let spec = 'setup: loop {
        for ev in ctl.pump(&mut s, Duration::from_secs(1)) {
            match ev {
                Event::SetupRequested(spec) => break 'setup *spec,
                Event::JobRequested(job) => {
                    log.authenticated = s.authenticated();
                    log.protocol = "netsonde-job";
                    let Some(handler) = &shared.cfg.jobs else {
                        let why = "this is `netsonde server`: it runs tests for clients, not \
                                   jobs; start `netsonde agent` on this host to take jobs from \
                                   a controller";
                        s.reject(now(), ErrorCode::BadSpec, why.into(), None);
                        ctl.flush(&mut s);
                        return fail(log, "refused", why.into());
                    };
                    let admit = |spec: &TestSpec| {
                        admit(spec, shared).map(|held| Box::new(held) as Box<dyn std::any::Any>)
                    };
                    let ctx = crate::jobs::ServeCtx {
                        key: shared.cfg.auth_key.as_ref(),
                        deadlines: d,
                        admit: &admit,
                        log: &mut log,
                    };
                    (handler.0)(&mut ctl, &mut s, *job, ctx);
                    return log;
                }
                Event::Failed(e) => {
                    log.authenticated = s.authenticated();
                    return fail(log, "failed", format!("before setup: {e}"));
                }
                _ => {}
            }
        }
        if s.is_over() {
            return fail(log, "dropped", "closed before setup".into());
        }
    };
    log.authenticated = s.authenticated();
    log.test = Some(spec.clone());
    let prepared = match prepare(&spec, local_ip, shared) {
        Ok(p) => p,
        Err((code, msg, retry)) => {
            s.reject(now(), code, msg.clone(), retry);
            ctl.flush(&mut s);
            return fail(log, "refused", msg);
        }
    };
    let Prepared {
        ack,
        listener,
        udp,
        busy,
        _reserved,
    } = prepared;
    let token = ack.token;
    let host = ack.host.clone();
    let socket: Option<SocketFacts> = ack.socket.clone();
    s.accept_setup(now(), ack);
    let spec = Arc::new(spec);
    let mut acceptor = {
        let (spec, listener) = (spec.clone(), listener.clone());
        let deadline = Instant::now() + d.connect.as_duration();
        let cancel = Arc::new(AtomicBool::new(false));
        let stop = cancel.clone();
        Acceptor {
            cancel,
            listener: listener.clone(),
            thread: Some(std::thread::spawn(move || {
                accept_flows(&spec, token, peer.ip(), listener, udp, deadline, &stop)
            })),
        }
    };
    // The listener lives in the acceptor (and, for tcp-crr, the flows) only: when
    // the session ends early, dropping the acceptor shuts it down and closes it.
    drop(listener);

    // Wait for start.
    let mut accepted = None;
    'start: loop {
        if accepted.is_none() {
            match acceptor.poll() {
                Some(Ok(a)) => accepted = Some(a),
                Some(Err(msg)) => {
                    s.abort(now(), ErrorCode::Internal, format!("server: {msg}"));
                    ctl.flush(&mut s);
                    return fail(log, "failed", msg);
                }
                None => {}
            }
        }
        for ev in ctl.pump(&mut s, tick) {
            match ev {
                Event::StartRequested => break 'start,
                Event::Failed(e) => return fail(log, "failed", format!("before start: {e}")),
                _ => {}
            }
        }
        if s.is_over() {
            return fail(log, "dropped", "closed before start".into());
        }
    }
    let (plans, probes) = match accepted.map_or_else(|| acceptor.join(), Ok) {
        Ok(p) => p,
        Err(msg) => {
            s.abort(now(), ErrorCode::Internal, format!("server: {msg}"));
            ctl.flush(&mut s);
            return fail(log, "failed", msg);
        }
    };
    // What the kernel granted on an accepted data connection (the listener's own
    // figures, sent in the ack, predate any handshake: no MSS yet).
    let socket = plans
        .iter()
        .find_map(|p| match &p.socket {
            FlowSocket::Tcp(t) => Some(sockopt::facts(&socket2::SockRef::from(t), true)),
            _ => None,
        })
        .or(socket);

    // Run: a load-latency test's probes are answered from now until the session
    // ends (the guard stops them on every way out); its load starts after the idle
    // phase.
    busy.started(Instant::now(), &spec);
    let answering = match (probes, spec.probe_flows()) {
        (Some(p), Some(f)) => Some(crate::probes::Answering::start(
            p.tcp,
            p.udp,
            p.listener,
            token,
            f.connect,
            peer.ip(),
        )),
        _ => None,
    };
    let idle = spec.probe.map_or(Duration::ZERO, |p| p.idle.as_duration());
    let mut running = flows::start(
        End::Server,
        spec.clone(),
        Instant::now() + idle,
        plans,
        &spec.server_affinity,
    );
    let mut failure = None;
    while !running.all_done() {
        for ev in ctl.pump(&mut s, tick) {
            if let Event::Failed(e) = ev {
                failure.get_or_insert(e);
            }
        }
        if failure.is_some() || s.is_over() {
            running.stop();
            break;
        }
    }
    let finished = running.finish();
    log.bytes = finished.bytes_total();
    if let Some(e) = failure {
        return fail(log, "failed", format!("while running: {e}"));
    }
    if let Some(e) = finished.error {
        let msg = format!("server flow failed: {e}");
        s.abort(now(), ErrorCode::Internal, msg.clone());
        ctl.flush(&mut s);
        return fail(log, "failed", msg);
    }
    let result = SideResult {
        host,
        flows: finished.outputs.into_iter().map(|o| o.result).collect(),
        cpu: finished.cpu,
        socket,
        tcp_samples: finished.tcp_samples,
    };
    s.finish(now(), result);
    // A load-latency test's client probes for its after phase once the load is
    // over: the answers go on that long (and a second more) past this end's load.
    let answer_until = Instant::now() + idle + Duration::from_secs(1);
    loop {
        for ev in ctl.pump(&mut s, tick) {
            match ev {
                Event::Finished => {
                    if answering.is_some() {
                        // The client closes the control connection once its
                        // after phase is over: answers stop then.
                        ctl.wait_closed(answer_until);
                    }
                    return fail(log, "ok", String::new());
                }
                Event::Failed(e) => return fail(log, "failed", format!("after results: {e}")),
                _ => {}
            }
        }
        if s.is_over() {
            return fail(log, "ok", String::new());
        }
    }
}

#[cfg(test)]
#[path = "server_tests.rs"]
mod tests;
