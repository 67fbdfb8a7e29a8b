//! The client: one test from hello to [`TestReport`]. With no host it starts an
//! embedded server on loopback in the same process.

use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream, ToSocketAddrs, UdpSocket};
use std::sync::Arc;
use std::time::{Duration, Instant};

use netsonde_engine::latency::{new_histogram, summarize};
use netsonde_engine::{sockopt, udp, EngineError};
use netsonde_model::result::{IntervalRecord, SideResult, TestReport};
use netsonde_model::spec::{FlowDir, SpecError, TestKind, TestSpec};
use netsonde_model::units::{BitRate, Bytes, Nanos};
use netsonde_proto::message::encode_preamble;
use netsonde_proto::{ClientSession, Deadlines, ErrorCode, Event, ProtoError, SetupAck};
use socket2::{Domain, Protocol, Socket, Type};

use crate::control::Control;
use crate::flows::{self, End, FlowPlan, FlowSocket, Running};
use crate::now;
use crate::probes::{ProbeConnections, Probing};
use crate::server::{Server, ServerConfig, ServerError, ServerHandle};

pub use netsonde_model::spec::Peer;

/// Default control port.
pub const DEFAULT_PORT: u16 = Peer::Netsonde.default_port();

/// What to run, against whom.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// Server host; `None` runs an embedded server on loopback.
    pub host: Option<String>,
    /// Server control port.
    pub port: u16,
    /// The test.
    pub spec: TestSpec,
    /// Phase deadlines.
    pub deadlines: Deadlines,
    /// Authenticate with this key (and insist the server does).
    pub auth_key: Option<netsonde_proto::auth::Key>,
    /// What the server is.
    pub peer: Peer,
    /// Where this end's connections come from.
    pub local: Local,
    /// Deadline of the control connection's connect.
    pub connect_timeout: Duration,
}

/// Where a client's connections come from (iperf3's `-B` and `--cport`); by
/// default the kernel chooses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Local {
    /// Local address of every connection.
    pub ip: Option<IpAddr>,
    /// Local port of data connection (flow) 0; flow `k` uses this plus `k`.
    pub data_port: Option<u16>,
}

/// The control connection's connect deadline when none is given.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

impl ClientConfig {
    /// Opens the control connection to `addr`: from [`Local::ip`] when given,
    /// within the connect deadline.
    pub(crate) fn connect_control(&self, addr: SocketAddr) -> std::io::Result<TcpStream> {
        let s = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
        if let Some(ip) = self.local.ip {
            s.bind(&SocketAddr::new(ip, 0).into())?;
        }
        s.connect_timeout(&addr.into(), self.connect_timeout)?;
        Ok(s.into())
    }

    /// The local address of flow `id`'s data socket, when one is asked for
    /// (`None`: the kernel's choice); `ctl_ip` is the control connection's.
    pub(crate) fn data_local(&self, ctl_ip: IpAddr, id: u32) -> Option<SocketAddr> {
        let port = match self.local.data_port {
            Some(p) => Some(u16::try_from(u32::from(p) + id).ok()?),
            None => None,
        };
        (self.local.ip.is_some() || port.is_some())
            .then(|| SocketAddr::new(ctl_ip, port.unwrap_or(0)))
    }
}

/// Why a test could not run or finish.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The spec is invalid.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// `--affinity` names a core this host lacks.
    #[error("--affinity: this host has no core {core} (it has {cores})")]
    Affinity {
        /// The core asked for.
        core: usize,
        /// Cores present.
        cores: usize,
    },
    /// The host name did not resolve.
    #[error("cannot resolve '{host}': {source}")]
    Resolve {
        /// The name.
        host: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The embedded server could not start.
    #[error("cannot start the embedded server: {0}")]
    Embedded(#[source] ServerError),
    /// The control connection could not be made.
    #[error("cannot connect to {addr}: {source}")]
    Connect {
        /// The server.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The server runs another test.
    #[error("{addr}: {message}")]
    Busy {
        /// The server.
        addr: SocketAddr,
        /// Its words.
        message: String,
        /// When to retry.
        retry_after_ms: Option<u64>,
    },
    /// The server refused the test.
    #[error("{addr} refused the test: {message}")]
    Refused {
        /// The server.
        addr: SocketAddr,
        /// Its words.
        message: String,
    },
    /// The server accepted the connection and sent no hello: not a netsonde
    /// server, most likely an `iperf3 -s`.
    #[error(
        "{addr} accepted the connection but sent no netsonde hello: if it is `iperf3 -s` \
         (it waits silently for its cookie), add --peer iperf3"
    )]
    Silent {
        /// The server.
        addr: SocketAddr,
    },
    /// The control session failed.
    #[error("session with {addr} failed: {source}")]
    Session {
        /// The server.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: ProtoError,
    },
    /// A data connection could not be set up.
    #[error("data connection {flow} to {addr} failed: {source}")]
    Data {
        /// The flow.
        flow: u32,
        /// Its address.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: EngineError,
    },
    /// A flow failed while running.
    #[error("test failed: {0}")]
    Flow(#[source] EngineError),
    /// An iperf3 peer needs a host: there is no embedded iperf3 server.
    #[error("--peer iperf3 needs a server host (there is no embedded iperf3 server)")]
    Iperf3NeedsHost,
    /// The iperf3 session failed.
    #[error("iperf3 server {addr}: {source}")]
    Iperf3 {
        /// The server.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: netsonde_proto::iperf3::Iperf3Error,
    },
}

fn session_error(addr: SocketAddr, e: ProtoError) -> ClientError {
    match e {
        ProtoError::Remote {
            code: ErrorCode::Busy,
            message,
            retry_after_ms,
        } => ClientError::Busy {
            addr,
            message,
            retry_after_ms,
        },
        ProtoError::Remote {
            code: ErrorCode::BadSpec,
            message,
            ..
        } => ClientError::Refused { addr, message },
        // A server that takes the connection and says nothing: an `iperf3 -s`
        // reads a 37-byte cookie first, and waits for the rest of it.
        ProtoError::Deadline {
            phase: "the server's hello",
        } => ClientError::Silent { addr },
        source => ClientError::Session { addr, source },
    }
}

pub(crate) fn resolve(host: &str, port: u16) -> Result<SocketAddr, ClientError> {
    let resolve_err = |source| ClientError::Resolve {
        host: host.to_string(),
        source,
    };
    let mut addrs = (host, port).to_socket_addrs().map_err(resolve_err)?;
    addrs.next().ok_or_else(|| {
        resolve_err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "no addresses",
        ))
    })
}

/// Runs one test. `on_interval` sees each interval record as it is made.
pub fn run(
    cfg: &ClientConfig,
    on_interval: &mut dyn FnMut(&IntervalRecord),
) -> Result<TestReport, ClientError> {
    if cfg.peer == Peer::Iperf3 {
        return crate::iperf3::run_client(cfg, on_interval);
    }
    let spec = cfg.spec.clone();
    spec.validate()?;
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    if let Some(&core) = spec.client_affinity.iter().find(|&&c| c >= cores) {
        return Err(ClientError::Affinity { core, cores });
    }
    let mut _embedded: Option<ServerHandle> = None;
    let (addr, label) = match &cfg.host {
        None => {
            let mut sc = ServerConfig::new(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0));
            sc.log = crate::policy::LogFormat::Off;
            sc.deadlines = cfg.deadlines;
            sc.auth_key = cfg.auth_key.clone();
            let h = Server::bind(sc).map_err(ClientError::Embedded)?.spawn();
            let a = h.addr;
            _embedded = Some(h);
            (a, format!("embedded {a}"))
        }
        Some(host) => {
            let a = resolve(host, cfg.port)?;
            (a, a.to_string())
        }
    };
    let stream = cfg
        .connect_control(addr)
        .map_err(|source| ClientError::Connect { addr, source })?;
    let local_ip = stream
        .local_addr()
        .map(|a| a.ip())
        .map_err(|source| ClientError::Connect { addr, source })?;
    let mut ctl = Control::new(stream).map_err(|source| ClientError::Connect { addr, source })?;
    let auth = match &cfg.auth_key {
        None => None,
        Some(k) => Some((
            k.clone(),
            crate::random_bytes::<32>().map_err(|source| ClientError::Connect { addr, source })?,
        )),
    };
    let mut s = ClientSession::new(now(), spec.clone(), cfg.deadlines, auth);

    let ack = 'ack: loop {
        for ev in ctl.pump(&mut s, Duration::from_secs(1)) {
            match ev {
                Event::SetupAcked(ack) => break 'ack *ack,
                Event::Failed(e) => return Err(session_error(addr, e)),
                _ => {}
            }
        }
    };
    let deadline = Instant::now() + cfg.deadlines.connect.as_duration();
    let (plans, socket) = match connect_flows(cfg, &spec, &ack, addr.ip(), local_ip, deadline) {
        Ok(v) => v,
        // The server may have said why (a receiver it could not set up).
        Err(e) => return Err(server_reason(&mut ctl, &mut s, addr).unwrap_or(e)),
    };
    let probe_conns = match spec.probe_flows() {
        Some(f) => Some(connect_probes(&ack, f, addr.ip(), local_ip, deadline)?),
        None => None,
    };
    s.start(now());
    ctl.flush(&mut s);
    let spec = Arc::new(spec);
    // A load-latency test probes from now; its load starts after the idle phase.
    let probing = probe_conns.map(|c| Probing::start(&spec, c));
    let idle = spec.probe.map_or(Duration::ZERO, |p| p.idle.as_duration());
    let running = flows::start(
        End::Client,
        spec.clone(),
        Instant::now() + idle,
        plans,
        &spec.client_affinity,
    );
    let (running, server, intervals) = supervise(&mut ctl, &mut s, running, &spec, on_interval)
        .map_err(|e| session_error(addr, e))?;
    let load_clock = running.clock;
    let finished = running.finish();
    if let Some(e) = finished.error {
        return Err(ClientError::Flow(e));
    }
    let load = match probing {
        Some(p) => {
            let load_end = Instant::now();
            // The after phase: probes alone again.
            std::thread::sleep(idle);
            let t0 = p.t0;
            let probes = p.finish().map_err(ClientError::Flow)?;
            let since = |at: Instant| Nanos::from(at.saturating_duration_since(t0));
            Some(netsonde_model::load::LoadLatency {
                phases: netsonde_model::load::Phases {
                    load_start: since(load_clock.t0),
                    measured_start: since(load_clock.warm_end),
                    measured_end: since(load_clock.end),
                    load_end: since(load_end),
                    end: since(Instant::now()),
                },
                probes,
                same_clock: false,
                summary: None,
            })
        }
        None => None,
    };
    let mut merged = None;
    for o in &finished.outputs {
        if let Some(h) = &o.latency {
            let m = merged.get_or_insert_with(new_histogram);
            // Same bounds everywhere: adding cannot fail.
            let _ = m.add(h);
        }
    }
    let client = SideResult {
        host: netsonde_cpu::host_facts(Some(local_ip)),
        flows: finished.outputs.into_iter().map(|o| o.result).collect(),
        cpu: finished.cpu,
        socket,
        tcp_samples: finished.tcp_samples,
    };
    let mut report = TestReport::assemble(
        (*spec).clone(),
        label,
        client,
        server,
        intervals,
        merged.as_ref().map(summarize),
    );
    report.load = load.map(|mut l| {
        l.same_clock = report.client.same_clock(&report.server);
        l
    });
    Ok(report)
}

/// Opens a load-latency test's probe connections: the kept TCP connection and
/// the UDP socket (the last port the server announced), both handshaken.
fn connect_probes(
    ack: &SetupAck,
    flows: netsonde_model::spec::ProbeFlows,
    server_ip: IpAddr,
    local_ip: IpAddr,
    deadline: Instant,
) -> Result<ProbeConnections, ClientError> {
    let data_addr = SocketAddr::new(server_ip, ack.data_port);
    let mut plain = TestSpec::new(TestKind::TcpRr);
    plain.nodelay = true;
    let (tcp, _) = connect_tcp(
        &plain,
        data_addr,
        // From the control connection's address, which the server checks.
        Some(SocketAddr::new(local_ip, 0)),
        flows.tcp,
        &encode_preamble(&ack.token, flows.tcp),
    )?;
    let port = *ack.udp_ports.last().ok_or_else(|| ClientError::Data {
        flow: flows.udp,
        addr: data_addr,
        source: EngineError::Io {
            op: "setup",
            source: std::io::Error::other("server announced no UDP port for the probe"),
        },
    })?;
    let to = SocketAddr::new(server_ip, port);
    let fail = |source| ClientError::Data {
        flow: flows.udp,
        addr: to,
        source,
    };
    let io = |op| move |e| fail(EngineError::Io { op, source: e });
    let udp = UdpSocket::bind(SocketAddr::new(local_ip, 0)).map_err(io("bind"))?;
    udp.connect(to).map_err(io("connect"))?;
    udp::client_handshake(&udp, &ack.token, flows.udp, deadline).map_err(fail)?;
    Ok(ProbeConnections {
        tcp,
        udp,
        data_addr,
        token: ack.token,
        flows,
    })
}

type Connected = (Vec<FlowPlan>, Option<netsonde_model::result::SocketFacts>);

fn connect_flows(
    cfg: &ClientConfig,
    spec: &TestSpec,
    ack: &SetupAck,
    server_ip: IpAddr,
    local_ip: IpAddr,
    deadline: Instant,
) -> Result<Connected, ClientError> {
    let data_addr = SocketAddr::new(server_ip, ack.data_port);
    let mut plans = Vec::new();
    let mut facts = None;
    for (id, dir) in spec.flows() {
        let socket = if spec.test == TestKind::TcpCrr {
            FlowSocket::CrrConnect(data_addr, ack.token)
        } else if spec.test.is_tcp() {
            let (t, f) = connect_tcp(
                spec,
                data_addr,
                cfg.data_local(local_ip, id),
                id,
                &encode_preamble(&ack.token, id),
            )?;
            facts.get_or_insert(f);
            FlowSocket::Tcp(t)
        } else {
            let port = *ack
                .udp_ports
                .get(id as usize)
                .ok_or_else(|| ClientError::Data {
                    flow: id,
                    addr: data_addr,
                    source: EngineError::Io {
                        op: "setup",
                        source: std::io::Error::other("server announced too few UDP ports"),
                    },
                })?;
            let to = SocketAddr::new(server_ip, port);
            let fail = |source| ClientError::Data {
                flow: id,
                addr: to,
                source,
            };
            let io = |op| move |e| fail(EngineError::Io { op, source: e });
            let s = Socket::new(Domain::for_address(to), Type::DGRAM, Some(Protocol::UDP))
                .map_err(io("socket"))?;
            sockopt::apply_flow(&s, spec, id).map_err(fail)?;
            let from = cfg
                .data_local(local_ip, id)
                .unwrap_or(SocketAddr::new(local_ip, 0));
            s.bind(&from.into()).map_err(io("bind"))?;
            s.connect(&to.into()).map_err(io("connect"))?;
            facts.get_or_insert_with(|| sockopt::facts(&s, false));
            let u: UdpSocket = s.into();
            udp::client_handshake(&u, &ack.token, id, deadline).map_err(fail)?;
            u.set_read_timeout(Some(sockopt::WAKE))
                .map_err(io("setsockopt"))?;
            u.set_write_timeout(Some(sockopt::WAKE))
                .map_err(io("setsockopt"))?;
            crate::flows::udp_flow(crate::flows::End::Client, u, spec, dir).map_err(fail)?
        };
        plans.push(FlowPlan { id, dir, socket });
    }
    Ok((plans, facts))
}

/// Opens flow `id`'s TCP data connection to `addr` with the spec's socket
/// options, and sends `first` (netsonde's preamble, or iperf3's cookie).
pub(crate) fn connect_tcp(
    spec: &TestSpec,
    addr: SocketAddr,
    local: Option<SocketAddr>,
    id: u32,
    first: &[u8],
) -> Result<(TcpStream, netsonde_model::result::SocketFacts), ClientError> {
    let fail = |source| ClientError::Data {
        flow: id,
        addr,
        source,
    };
    let io = |op| move |e| fail(EngineError::Io { op, source: e });
    let s = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))
        .map_err(io("socket"))?;
    sockopt::apply_flow(&s, spec, id).map_err(fail)?;
    if let Some(from) = local {
        // A fixed port may still have an old connection in TIME_WAIT.
        s.set_reuse_address(true).map_err(io("setsockopt"))?;
        s.bind(&from.into()).map_err(io("bind"))?;
    }
    s.connect_timeout(&addr.into(), Duration::from_secs(5))
        .map_err(io("connect"))?;
    sockopt::set_wake(&s).map_err(fail)?;
    let facts = sockopt::facts(&s, true);
    let mut t: TcpStream = s.into();
    t.write_all(first).map_err(io("send the first bytes"))?;
    Ok((t, facts))
}

type Supervised = (Running, SideResult, Vec<IntervalRecord>);

/// Interval records, made by the control thread from the flows' published
/// counters, off the data path.
pub(crate) struct Intervals {
    clock: netsonde_engine::FlowClock,
    period: Option<Duration>,
    next: Option<Instant>,
    last: Option<[(u64, u64, u64); 2]>,
    /// The records so far.
    pub(crate) records: Vec<IntervalRecord>,
}

/// Each direction's counts (bytes, messages, transactions) across its flows.
fn sum(running: &Running) -> [(u64, u64, u64); 2] {
    let mut by_dir = [(0u64, 0u64, 0u64); 2];
    for (_, dir, c) in &running.counters {
        let (b, m, t) = c.load();
        let e = &mut by_dir[usize::from(*dir == FlowDir::Down)];
        *e = (e.0 + b, e.1 + m, e.2 + t);
    }
    by_dir
}

/// Where each flow's counts stood as the measured interval began: exactly, from
/// the flow itself (a flow not there yet counts from where it is now).
fn at_start(running: &Running) -> [(u64, u64, u64); 2] {
    let mut by_dir = [(0u64, 0u64, 0u64); 2];
    for (_, dir, c) in &running.counters {
        let (b, m, t) = c.load_start().unwrap_or_else(|| c.load());
        let e = &mut by_dir[usize::from(*dir == FlowDir::Down)];
        *e = (e.0 + b, e.1 + m, e.2 + t);
    }
    by_dir
}

/// Whether a test that ends by volume has moved it, in either direction, in
/// its measured interval (as an iperf3 client decides when to end: by what it
/// sent or what it received).
pub(crate) fn volume_moved(running: &Running, spec: &TestSpec) -> bool {
    let Some(v) = spec.volume else { return false };
    let mut by_dir = [0u64; 2];
    for (_, dir, c) in &running.counters {
        if let Some((start, _, _)) = c.load_start() {
            let (now, _, _) = c.load();
            by_dir[usize::from(*dir == FlowDir::Down)] += now.saturating_sub(start);
        }
    }
    by_dir.iter().any(|&b| b >= v.0)
}

impl Intervals {
    pub(crate) fn new(running: &Running, spec: &TestSpec) -> Intervals {
        Intervals::with_period(running, spec.interval.map(Nanos::as_duration))
    }

    /// Records every `period`, whatever the spec says (an iperf3 client's
    /// session on the server reports each second, as iperf3 -s does).
    pub(crate) fn every(running: &Running, period: Duration) -> Intervals {
        Intervals::with_period(running, Some(period))
    }

    fn with_period(running: &Running, period: Option<Duration>) -> Intervals {
        let clock = running.clock;
        Intervals {
            clock,
            period,
            next: period.map(|p| clock.warm_end + p),
            last: None,
            records: Vec::new(),
        }
    }

    /// How long the control thread may wait before the next record is due (at
    /// most 100 ms).
    pub(crate) fn wait(&self) -> Duration {
        self.next
            .map(|at| at.saturating_duration_since(Instant::now()))
            .unwrap_or(Duration::from_millis(100))
            .min(Duration::from_millis(100))
    }

    /// Makes every record due now.
    pub(crate) fn tick(&mut self, running: &Running, on_interval: &mut dyn FnMut(&IntervalRecord)) {
        self.make(running, Instant::now(), on_interval);
    }

    /// The flows are done: every record still due is made from the final counts
    /// (else a late wake-up of the control thread would lose the last one).
    pub(crate) fn close(
        &mut self,
        running: &Running,
        on_interval: &mut dyn FnMut(&IntervalRecord),
    ) {
        let at = running.end() + self.period.unwrap_or_default();
        self.make(running, at, on_interval);
    }

    fn make(
        &mut self,
        running: &Running,
        now_i: Instant,
        on_interval: &mut dyn FnMut(&IntervalRecord),
    ) {
        let mut clock = self.clock;
        // A test that ended by volume before its clock: its last record ends
        // when the flows did.
        clock.end = running.end();
        if self.last.is_none() && self.period.is_some() && now_i >= clock.warm_end {
            self.last = Some(at_start(running));
        }
        while let (Some(at), Some(p), Some(prev)) = (self.next, self.period, self.last) {
            if !(now_i >= at && at <= clock.end + p / 2) {
                break;
            }
            // By the first record every flow has passed the start, so its own
            // count from that moment is there.
            let prev = if self.records.is_empty() {
                at_start(running)
            } else {
                prev
            };
            let cur = sum(running);
            let start = Nanos::from(at.saturating_duration_since(clock.warm_end))
                .saturating_sub(Nanos::from(p));
            let len = p.min(clock.end.saturating_duration_since(at - p));
            for (i, dir) in [FlowDir::Up, FlowDir::Down].into_iter().enumerate() {
                if !running.counters.iter().any(|(_, d, _)| *d == dir) {
                    continue;
                }
                let bytes = Bytes(cur[i].0 - prev[i].0);
                let rec = IntervalRecord {
                    start,
                    end: start.saturating_add(Nanos::from(len)),
                    dir,
                    bytes,
                    rate: BitRate::from_bytes(bytes, len),
                    messages: cur[i].1 - prev[i].1,
                    transactions: cur[i].2 - prev[i].2,
                };
                on_interval(&rec);
                self.records.push(rec);
            }
            self.last = Some(cur);
            self.next = Some(at + p);
        }
    }
}

/// What the server said when a session failed on the client's side, if it said
/// anything within a second: its reason beats the client's view of the symptom
/// (a UDP handshake the server never answered).
fn server_reason(
    ctl: &mut Control,
    s: &mut ClientSession,
    addr: SocketAddr,
) -> Option<ClientError> {
    let until = Instant::now() + Duration::from_secs(1);
    while Instant::now() < until && !s.is_over() {
        for ev in ctl.pump(s, Duration::from_millis(100)) {
            if let Event::Failed(e) = ev {
                return Some(session_error(addr, e));
            }
        }
    }
    None
}

/// Waits for the local flows and the server's results, making interval records.
fn supervise(
    ctl: &mut Control,
    s: &mut ClientSession,
    mut running: Running,
    spec: &TestSpec,
    on_interval: &mut dyn FnMut(&IntervalRecord),
) -> Result<Supervised, ProtoError> {
    let mut intervals = Intervals::new(&running, spec);
    let mut server = None;
    loop {
        intervals.tick(&running, on_interval);
        let wait = intervals.wait();
        if s.is_over() {
            std::thread::sleep(wait.max(Duration::from_millis(1)));
        }
        for ev in ctl.pump(s, wait) {
            match ev {
                Event::Results(r) => server = Some(*r),
                Event::Failed(e) => {
                    running.stop();
                    let _ = running.finish();
                    return Err(e);
                }
                _ => {}
            }
        }
        if running.all_done() {
            if let Some(server) = server.take() {
                intervals.close(&running, on_interval);
                return Ok((running, server, intervals.records));
            }
        }
    }
}
