//! iperf3 peers, over the protocol of [`netsonde_proto::iperf3`]:
//!
//! - [`run_client`]: netsonde's client against an unmodified `iperf3 -s`. This end
//!   measures itself as it always does (CPU, `TCP_INFO`, per-flow figures); the
//!   server's side is what iperf3 reports of it.
//! - `serve`: an unmodified iperf3 client's session on `netsonde server`, which
//!   tells the two protocols apart by their first byte and runs the test with
//!   netsonde's own flows, CPU accounting and limits.
//!
//! The data streams are netsonde's own (`crate::flows`); TCP streams open with the
//! cookie instead of netsonde's preamble, and UDP datagrams carry iperf3's header
//! (`netsonde_engine::datagram::Format::Iperf3`).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, UdpSocket};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use netsonde_engine::datagram::Format;
use netsonde_engine::{sockopt, EngineError};
use netsonde_model::cpu::CpuReport;
use netsonde_model::result::{
    FlowResult, IntervalRecord, PeerReport, Role, SideResult, SocketFacts, TestReport, UdpStats,
    Warning,
};
use netsonde_model::spec::{FlowDir, TestKind, TestSpec};
use netsonde_model::units::{Bytes, Nanos};
use netsonde_proto::iperf3::{
    self as ip, ClientMachine, Cookie, Iperf3Error, Iperf3Event, Params, Results, ServerMachine,
    StreamResult, COOKIE_LEN,
};
use socket2::{Domain, Protocol, Socket, Type};

use crate::client::{connect_tcp, resolve, volume_moved, ClientConfig, ClientError, Intervals};
use crate::flows::{self, End, Finished, FlowPlan, FlowSocket};

/// The two machines, as the control loop drives them.
trait Machine {
    fn take_output(&mut self) -> Vec<u8>;
    fn feed(&mut self, bytes: &[u8]);
    fn poll(&mut self) -> Option<Iperf3Event>;
}

impl Machine for ClientMachine {
    fn take_output(&mut self) -> Vec<u8> {
        ClientMachine::take_output(self)
    }
    fn feed(&mut self, bytes: &[u8]) {
        ClientMachine::feed(self, bytes);
    }
    fn poll(&mut self) -> Option<Iperf3Event> {
        ClientMachine::poll(self)
    }
}

impl Machine for ServerMachine {
    fn take_output(&mut self) -> Vec<u8> {
        ServerMachine::take_output(self)
    }
    fn feed(&mut self, bytes: &[u8]) {
        ServerMachine::feed(self, bytes);
    }
    fn poll(&mut self) -> Option<Iperf3Event> {
        ServerMachine::poll(self)
    }
}

/// Writes what the machine queued, then reads for up to `wait` and returns what
/// happened. A closed connection is an error unless the machine is over.
fn pump(
    stream: &mut TcpStream,
    m: &mut impl Machine,
    wait: Duration,
) -> std::io::Result<Vec<Iperf3Event>> {
    flush(stream, m)?;
    let mut events = Vec::new();
    while let Some(e) = m.poll() {
        events.push(e);
    }
    if !events.is_empty() {
        return Ok(events);
    }
    stream.set_read_timeout(Some(wait.max(Duration::from_millis(1))))?;
    let mut buf = [0u8; 4096];
    match stream.read(&mut buf) {
        Ok(0) => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the peer closed the control connection",
            ))
        }
        Ok(n) => m.feed(&buf[..n]),
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock
                    | std::io::ErrorKind::TimedOut
                    | std::io::ErrorKind::Interrupted
            ) => {}
        Err(e) => return Err(e),
    }
    while let Some(e) = m.poll() {
        events.push(e);
    }
    flush(stream, m)?;
    Ok(events)
}

fn flush(stream: &mut TcpStream, m: &mut impl Machine) -> std::io::Result<()> {
    let out = m.take_output();
    if !out.is_empty() {
        stream.set_write_timeout(Some(Duration::from_secs(5)))?;
        stream.write_all(&out)?;
    }
    Ok(())
}

/// iperf3's number of netsonde flow `id` (flows are in the order iperf3 opens
/// its streams: the client's sending ones first).
fn iperf3_id(id: u32) -> i64 {
    ip::stream_id(id as usize)
}

/// This end's results as iperf3 reads them.
fn results_of(flows: &[FlowResult], cpu: Option<&CpuReport>, spec: &TestSpec) -> Results {
    let (user, sys, wall) = cpu.map_or((0.0, 0.0, 0.0), |c| {
        (
            c.process.user.as_secs_f64(),
            c.process.sys.as_secs_f64(),
            c.elapsed.as_secs_f64(),
        )
    });
    let pct = |x: f64| if wall > 0.0 { 100.0 * x / wall } else { 0.0 };
    let sends = |f: &FlowResult| f.role == Role::Sender;
    let tcp = spec.test == TestKind::TcpStream;
    Results {
        cpu_util_total: pct(user + sys),
        cpu_util_user: pct(user),
        cpu_util_system: pct(sys),
        sender_has_retransmits: if flows.iter().any(sends) {
            i64::from(tcp)
        } else {
            -1
        },
        congestion_used: None,
        streams: flows
            .iter()
            .map(|f| {
                let udp = f.udp.as_ref();
                StreamResult {
                    id: iperf3_id(f.id),
                    bytes: f.bytes.0,
                    retransmits: match (&f.tcp_info, sends(f)) {
                        (Some(t), true) => t.retransmits as i64,
                        _ => -1,
                    },
                    jitter: udp.map_or(0.0, |u| u.jitter.as_secs_f64()),
                    errors: udp.map_or(0, |u| u.lost as i64),
                    omitted_errors: None,
                    packets: match udp {
                        Some(u) => u.packets as i64,
                        None if !tcp => f.messages as i64,
                        None => 0,
                    },
                    omitted_packets: None,
                    start_time: Some(0.0),
                    end_time: Some(f.elapsed.as_secs_f64()),
                }
            })
            .collect(),
        server_output_json: None,
        server_output_text: None,
    }
}

/// The peer's side as netsonde reports it: its per-stream figures, no CPU of ours.
/// iperf3 leaves its omitted period (`-O`) out of its byte counts, so with one
/// its totals are not this end's and cannot be set against them: no byte-count
/// mismatch is claimed.
fn no_totals_after_omit(report: &mut TestReport) {
    if report.spec.warmup.0 > 0 {
        report
            .warnings
            .retain(|w| !matches!(w, Warning::ByteCountMismatch { .. }));
    }
}

fn peer_side(spec: &TestSpec, end: End, r: &Results) -> SideResult {
    let flows = spec
        .flows()
        .into_iter()
        .map(|(id, dir)| {
            let s = r.streams.iter().find(|s| s.id == iperf3_id(id));
            let role = match (end, dir) {
                // The peer of a client is a server: it sends the Down flows.
                (End::Client, FlowDir::Down) | (End::Server, FlowDir::Up) => Role::Sender,
                _ => Role::Receiver,
            };
            let bytes = Bytes(s.map_or(0, |s| s.bytes));
            let elapsed = s
                .and_then(|s| Some(s.end_time? - s.start_time.unwrap_or(0.0)))
                .filter(|t| t.is_finite() && *t > 0.0)
                .map_or(Nanos::ZERO, |t| Nanos((t * 1e9) as u64));
            let udp = spec.test == TestKind::UdpStream;
            FlowResult {
                id,
                dir,
                role,
                bytes_total: bytes,
                bytes,
                messages: if udp {
                    s.map_or(0, |s| s.packets.max(0) as u64)
                } else {
                    0
                },
                calls: 0,
                transactions: 0,
                transactions_total: 0,
                elapsed,
                datagrams_sent: (udp && role == Role::Sender)
                    .then(|| s.map_or(0, |s| s.packets.max(0) as u64)),
                tcp_info: None,
                // iperf3 counts by sequence number: `errors` are the gaps after
                // the omitted time. Every datagram is `len` bytes, so its bytes
                // after the omitted time say how many arrived (iperf3 3.12 sends
                // no omitted count).
                udp: (udp && role == Role::Receiver).then(|| {
                    let s = s.cloned().unwrap_or_default();
                    let lost = (s.errors - s.omitted_errors.unwrap_or(0)).max(0) as u64;
                    UdpStats {
                        packets: bytes.0 / spec.size.0.max(1),
                        lost,
                        duplicates: 0,
                        reordered: 0,
                        jitter: Nanos((s.jitter.max(0.0) * 1e9) as u64),
                        packets_total: s.packets.max(0) as u64,
                        by_sequence: true,
                    }
                }),
                latency: None,
                io: None,
            }
        })
        .collect();
    SideResult {
        tcp_samples: Vec::new(),
        host: Default::default(),
        flows,
        cpu: None,
        socket: None,
    }
}

/// What the peer said of itself that has no place in a [`SideResult`].
fn peer_report(r: &Results) -> PeerReport {
    PeerReport {
        tool: "iperf3".into(),
        cpu_util_total: r.cpu_util_total,
        cpu_util_user: r.cpu_util_user,
        cpu_util_system: r.cpu_util_system,
        retransmits: (r.sender_has_retransmits == 1).then(|| {
            r.streams
                .iter()
                .filter(|s| s.retransmits > 0)
                .map(|s| s.retransmits as u64)
                .sum()
        }),
        congestion: r.congestion_used.clone(),
        output: r
            .server_output_text
            .clone()
            .or_else(|| r.server_output_json.as_ref().map(|j| j.to_string())),
    }
}

/// How a UDP stream is connected to an iperf3 peer.
fn udp_socket(spec: &TestSpec, local: SocketAddr) -> std::io::Result<Socket> {
    let s = Socket::new(Domain::for_address(local), Type::DGRAM, Some(Protocol::UDP))?;
    sockopt::apply(&s, spec).map_err(std::io::Error::other)?;
    Ok(s)
}

/// Opens the client's streams as iperf3 does.
fn connect_streams(
    cfg: &ClientConfig,
    spec: &TestSpec,
    server: SocketAddr,
    local_ip: IpAddr,
    cookie: &Cookie,
    deadline: Instant,
) -> Result<(Vec<FlowPlan>, Option<SocketFacts>), ClientError> {
    let mut plans = Vec::new();
    let mut facts = None;
    for (id, dir) in spec.flows() {
        let fail = |source| ClientError::Data {
            flow: id,
            addr: server,
            source,
        };
        let io = |op| move |e| fail(EngineError::Io { op, source: e });
        let socket = if spec.test.is_tcp() {
            let (t, f) = connect_tcp(spec, server, cfg.data_local(local_ip, id), id, &cookie.0)?;
            facts.get_or_insert(f);
            FlowSocket::Tcp(t)
        } else {
            let from = cfg
                .data_local(local_ip, id)
                .unwrap_or(SocketAddr::new(local_ip, 0));
            let s = udp_socket(spec, from).map_err(io("socket"))?;
            s.bind(&from.into()).map_err(io("bind"))?;
            s.connect(&server.into()).map_err(io("connect"))?;
            facts.get_or_insert_with(|| sockopt::facts(&s, false));
            let u: UdpSocket = s.into();
            u.set_read_timeout(Some(Duration::from_millis(100)))
                .map_err(io("setsockopt"))?;
            // The server answers each stream's first datagram; iperf3 sends it
            // once. A lost one is sent again here, which an iperf3 server takes
            // for the next stream's only if that stream's socket is not yet
            // there: it is, by the time the reply came.
            let mut reply = [0u8; 4];
            loop {
                if Instant::now() >= deadline {
                    return Err(io("UDP connect")(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "the iperf3 server never answered the stream's first datagram",
                    )));
                }
                u.send(&ip::UDP_CONNECT_MSG).map_err(io("send"))?;
                match u.recv(&mut reply) {
                    Ok(4)
                        if reply == ip::UDP_CONNECT_REPLY
                            || reply == ip::LEGACY_UDP_CONNECT_REPLY =>
                    {
                        break
                    }
                    _ => continue,
                }
            }
            u.set_read_timeout(Some(sockopt::WAKE))
                .map_err(io("setsockopt"))?;
            u.set_write_timeout(Some(sockopt::WAKE))
                .map_err(io("setsockopt"))?;
            FlowSocket::Udp(u)
        };
        plans.push(FlowPlan { id, dir, socket });
    }
    Ok((plans, facts))
}

/// Runs one test against an iperf3 server (`netsonde client --peer iperf3`).
pub fn run_client(
    cfg: &ClientConfig,
    on_interval: &mut dyn FnMut(&IntervalRecord),
) -> Result<TestReport, ClientError> {
    let spec = cfg.spec.clone();
    spec.validate()?;
    let host = cfg.host.as_deref().ok_or(ClientError::Iperf3NeedsHost)?;
    let addr = resolve(host, cfg.port)?;
    let proto = |source| ClientError::Iperf3 { addr, source };
    let params = Params::from_spec(&spec).map_err(proto)?;
    let io = |source| ClientError::Connect { addr, source };
    let mut ctl = cfg.connect_control(addr).map_err(io)?;
    ctl.set_nodelay(true).map_err(io)?;
    let local_ip = ctl.local_addr().map_err(io)?.ip();
    // An iperf3 server on this host is the test's other end, not foreign load.
    if let Some(pid) = netsonde_cpu::processes::listener_of(addr) {
        netsonde_cpu::processes::count_as_test(pid);
    }
    let cookie = Cookie::from_random(crate::random_bytes::<{ COOKIE_LEN - 1 }>().map_err(io)?);
    let mut m = ClientMachine::new(cookie, params);
    let failed = |e: Iperf3Error| match e {
        Iperf3Error::Denied => ClientError::Busy {
            addr,
            message: e.to_string(),
            retry_after_ms: None,
        },
        e => ClientError::Iperf3 { addr, source: e },
    };
    let timeout = |what: &str| {
        io(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("the iperf3 server did not {what} in time"),
        ))
    };

    // Cookie, parameters, streams, start.
    let setup_deadline = Instant::now() + cfg.deadlines.setup.as_duration();
    let mut plans = None;
    'running: loop {
        for ev in pump(&mut ctl, &mut m, Duration::from_millis(100)).map_err(io)? {
            match ev {
                Iperf3Event::CreateStreams => {
                    let deadline = Instant::now() + cfg.deadlines.connect.as_duration();
                    plans = Some(connect_streams(
                        cfg, &spec, addr, local_ip, &cookie, deadline,
                    )?);
                }
                Iperf3Event::TestRunning => break 'running,
                Iperf3Event::Failed(e) => return Err(failed(e)),
                _ => {}
            }
        }
        if Instant::now() >= setup_deadline {
            return Err(timeout("start the test"));
        }
    }
    let (plans, socket) = plans.ok_or_else(|| {
        failed(Iperf3Error::UnexpectedState {
            got: ip::State::TestRunning as i8,
            waiting: "CREATE_STREAMS",
        })
    })?;
    let spec = Arc::new(spec);
    let mut running = flows::start_with(
        End::Client,
        spec.clone(),
        Instant::now(),
        plans,
        &spec.client_affinity,
        // netsonde asks for 64-bit counters (`Params::from_spec`).
        Format::Iperf3 { counters64: true },
    );
    let clock = running.clock;
    let mut intervals = Intervals::new(&running, &spec);

    // The measured interval; then TEST_END, and the server closes its streams.
    let abort = |running: flows::Running, m: &mut ClientMachine, ctl: &mut TcpStream| {
        m.terminate();
        let _ = flush(ctl, m);
        running.stop();
        let _ = running.finish();
    };
    // A test by volume ends (TEST_END) once it has moved it either way.
    while Instant::now() < clock.end && !volume_moved(&running, &spec) && !running.all_done() {
        intervals.tick(&running, on_interval);
        let mut wait = intervals
            .wait()
            .min(clock.end.saturating_duration_since(Instant::now()));
        if spec.volume.is_some() {
            // The server's figures end at TEST_END: send it within 2 ms.
            wait = wait.min(Duration::from_millis(2));
        }
        match pump(&mut ctl, &mut m, wait) {
            Ok(evs) => {
                if let Some(Iperf3Event::Failed(e)) = evs
                    .into_iter()
                    .find(|e| matches!(e, Iperf3Event::Failed(_)))
                {
                    abort(running, &mut m, &mut ctl);
                    return Err(failed(e));
                }
            }
            Err(e) => {
                abort(running, &mut m, &mut ctl);
                return Err(io(e));
            }
        }
    }
    m.test_end();
    let results_deadline = clock.end + Duration::from_secs(10);
    let mut asked = false;
    loop {
        intervals.tick(&running, on_interval);
        match pump(&mut ctl, &mut m, Duration::from_millis(20)) {
            Ok(evs) => {
                for ev in evs {
                    match ev {
                        // The server has closed its streams: receivers that wait
                        // for more (UDP has no end of stream) stop now.
                        Iperf3Event::ExchangeResults => {
                            asked = true;
                            running.stop();
                        }
                        Iperf3Event::Failed(e) => {
                            abort(running, &mut m, &mut ctl);
                            return Err(failed(e));
                        }
                        _ => {}
                    }
                }
            }
            Err(e) => {
                abort(running, &mut m, &mut ctl);
                return Err(io(e));
            }
        }
        if asked && running.all_done() {
            break;
        }
        if Instant::now() >= results_deadline {
            abort(running, &mut m, &mut ctl);
            return Err(timeout("ask for results"));
        }
    }
    intervals.close(&running, on_interval);
    let Finished {
        outputs,
        cpu,
        error,
        ..
    } = running.finish();
    if let Some(e) = error {
        return Err(ClientError::Flow(e));
    }
    let client = SideResult {
        tcp_samples: Vec::new(),
        host: netsonde_cpu::host_facts(Some(local_ip)),
        flows: outputs.into_iter().map(|o| o.result).collect(),
        cpu,
        socket,
    };
    m.send_results(&results_of(&client.flows, client.cpu.as_ref(), &spec));
    let mut theirs = None;
    loop {
        for ev in pump(&mut ctl, &mut m, Duration::from_millis(100)).map_err(io)? {
            match ev {
                Iperf3Event::PeerResults(r) => theirs = Some(*r),
                Iperf3Event::Done => {
                    let _ = flush(&mut ctl, &mut m);
                    let r = theirs.take().ok_or_else(|| timeout("send its results"))?;
                    let server = peer_side(&spec, End::Client, &r);
                    let mut report = TestReport::assemble(
                        (*spec).clone(),
                        format!("iperf3 {addr}"),
                        client,
                        server,
                        intervals.records,
                        None,
                    );
                    report.peer = Some(peer_report(&r));
                    no_totals_after_omit(&mut report);
                    return Ok(report);
                }
                Iperf3Event::Failed(e) => return Err(failed(e)),
                _ => {}
            }
        }
        if Instant::now() >= results_deadline {
            return Err(timeout("send its results"));
        }
    }
}

/// Tells an iperf3 client that this server (which requires netsonde's key)
/// cannot authorise its test: its cookie is read, then `SERVER_ERROR` with
/// `IEAUTHTEST`, so the client says "test authorization failed" rather than
/// seeing its connection reset. Bounded by the hello deadline.
pub(crate) fn refuse_unauthorised(mut stream: TcpStream, d: netsonde_proto::Deadlines) {
    let _ = stream.set_read_timeout(Some(d.hello.as_duration()));
    let _ = stream.set_write_timeout(Some(d.hello.as_duration()));
    let mut cookie = [0u8; ip::COOKIE_LEN];
    if stream.read_exact(&mut cookie).is_err() {
        return;
    }
    let mut out = vec![ip::State::ServerError.byte()];
    out.extend_from_slice(&ip::IE_AUTH_TEST.to_be_bytes());
    out.extend_from_slice(&0u32.to_be_bytes());
    let _ = stream.write_all(&out);
    let _ = stream.shutdown(std::net::Shutdown::Write);
    // Until the client has read it and closed (bounded), so no reset races it.
    let mut rest = [0u8; 64];
    while matches!(stream.read(&mut rest), Ok(n) if n > 0) {}
}

/// A data connection handed to its session, with its place in the server's
/// accept order: an iperf3 client opens its streams one after another, and that
/// order says which stream is which.
type Arrival = (u64, TcpStream);

/// The iperf3 sessions a server is running, by cookie: where their data
/// connections, which arrive on the control port, are handed.
#[derive(Debug, Default)]
pub(crate) struct Registry(Mutex<HashMap<Cookie, SyncSender<Arrival>>>);

/// A session's place in the registry, removed when dropped.
struct Registered<'a>(&'a Registry, Cookie);

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.0
             .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.1);
    }
}

impl Registry {
    fn register(&self, c: Cookie, max_streams: usize) -> (Registered<'_>, Receiver<Arrival>) {
        let (tx, rx) = sync_channel(max_streams);
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(c, tx);
        (Registered(self, c), rx)
    }

    /// Hands a data connection to the session with its cookie (`None`: taken, or
    /// dropped when that session has all its streams); a cookie no session has
    /// comes back: a new session.
    fn hand_over(&self, c: &Cookie, s: TcpStream, seq: u64) -> Option<TcpStream> {
        let map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match map.get(c) {
            Some(tx) => {
                let _ = tx.try_send((seq, s));
                None
            }
            None => Some(s),
        }
    }
}

/// What admitting a test holds until the session ends (its slot, its budget).
pub(crate) type Held = Box<dyn std::any::Any>;
/// Why a test was not admitted: whether another test is running, and the words.
/// A refused test: busy (the slot is taken), why, and the iperf3 error that
/// names it to the client when not busy.
pub(crate) type Refused = (bool, String, u32);
/// The server's admission of a test.
pub(crate) type Admit<'a> = &'a dyn Fn(&TestSpec) -> Result<Held, Refused>;

/// What [`serve`] needs of the server.
pub(crate) struct ServeCtx<'a> {
    pub registry: &'a Registry,
    pub deadlines: netsonde_proto::Deadlines,
    /// Admits a test (limits, the busy slot, the budget): a guard holding what
    /// it took, or (busy, why).
    pub admit: Admit<'a>,
    pub log: &'a mut crate::policy::SessionLog,
    /// Where the finished session's report goes.
    pub sink: Option<&'a crate::server::SessionSink>,
    /// How this server serves iperf3 clients.
    pub opts: SessionOpts,
}

/// How a server serves iperf3 clients.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SessionOpts {
    /// Receive with netsonde's own reader, not iperf3's way
    /// ([`crate::server::ServerConfig::iperf3_fast_receiver`]).
    pub fast_receiver: bool,
    /// Send `--get-server-output` as JSON, as `iperf3 -s -J` does (the server
    /// logs JSON); else as text.
    pub json_output: bool,
}

/// Serves an iperf3 client's connection on the control port: a data connection
/// of a running session is handed to it (`None` is returned: nothing to log), any
/// other is a new session.
pub(crate) fn serve(
    mut stream: TcpStream,
    peer: SocketAddr,
    seq: u64,
    cx: ServeCtx<'_>,
) -> Option<()> {
    let log = cx.log;
    log.protocol = "iperf3";
    let mut m = ServerMachine::new();
    let _ = stream.set_read_timeout(Some(cx.deadlines.hello.as_duration()));
    let mut first = [0u8; COOKIE_LEN];
    if let Err(e) = stream.read_exact(&mut first) {
        log.outcome = "dropped";
        log.reason = format!("no iperf3 cookie: {e}");
        return Some(());
    }
    m.feed(&first);
    let cookie = match m.poll() {
        Some(Iperf3Event::Cookie(c)) => c,
        Some(Iperf3Event::Failed(e)) => {
            log.outcome = "dropped";
            log.reason = e.to_string();
            return Some(());
        }
        _ => return Some(()),
    };
    let Ok(local) = stream.local_addr() else {
        return Some(());
    };
    let local = SocketAddr::new(local.ip().to_canonical(), local.port());
    // A data connection of a running session goes to it (it checks the address).
    let stream = cx.registry.hand_over(&cookie, stream, seq)?;
    run_session(
        stream,
        peer,
        local,
        cookie,
        m,
        cx.registry,
        cx.deadlines,
        cx.admit,
        log,
        cx.sink,
        cx.opts,
    );
    Some(())
}

#[allow(clippy::too_many_arguments)]
fn run_session(
    mut ctl: TcpStream,
    peer: SocketAddr,
    local: SocketAddr,
    cookie: Cookie,
    mut m: ServerMachine,
    registry: &Registry,
    d: netsonde_proto::Deadlines,
    admit: Admit<'_>,
    log: &mut crate::policy::SessionLog,
    sink: Option<&crate::server::SessionSink>,
    opts: SessionOpts,
) {
    let started = Instant::now();
    let _ = ctl.set_nodelay(true);
    let fail = |log: &mut crate::policy::SessionLog, outcome, reason: String| {
        log.outcome = outcome;
        log.reason = reason;
    };
    m.accept();
    // Parameters.
    let params = loop {
        match pump(&mut ctl, &mut m, Duration::from_millis(100)) {
            Ok(evs) => {
                if let Some(ev) = evs.into_iter().next() {
                    match ev {
                        Iperf3Event::Params(p) => break *p,
                        Iperf3Event::Failed(e) => return fail(log, "failed", e.to_string()),
                        _ => {}
                    }
                }
            }
            Err(e) => return fail(log, "dropped", format!("before parameters: {e}")),
        }
        if started.elapsed() >= d.setup.as_duration() {
            return fail(log, "dropped", "no parameters in time".into());
        }
    };
    let spec = match params.to_spec() {
        Ok(mut s) => {
            // Read as iperf3's server does, unless told to use ours.
            s.iperf3_io = !opts.fast_receiver;
            s
        }
        Err(e) => {
            m.error(ip::IE_RECV_PARAMS, 0);
            let _ = flush(&mut ctl, &mut m);
            return fail(log, "refused", e.to_string());
        }
    };
    log.test = Some(spec.clone());
    let _held = match admit(&spec) {
        Ok(g) => g,
        Err((busy, why, errno)) => {
            if busy {
                m.deny();
            } else {
                m.error(errno, 0);
            }
            let _ = flush(&mut ctl, &mut m);
            return fail(log, "refused", why);
        }
    };
    let wanted = spec.flows();
    let (_registered, arrivals) = registry.register(cookie, wanted.len());
    // UDP: the first stream's socket is bound to the control port before the
    // client is told to open its streams.
    let udp_first = if spec.test.is_tcp() {
        None
    } else {
        match udp_listener(&spec, local) {
            Ok(s) => Some(s),
            Err(e) => {
                m.error(ip::IE_STREAM_ACCEPT, e.raw_os_error().unwrap_or(0) as u32);
                let _ = flush(&mut ctl, &mut m);
                return fail(log, "failed", format!("cannot open a UDP socket: {e}"));
            }
        }
    };
    m.create_streams();
    if let Err(e) = flush(&mut ctl, &mut m) {
        return fail(log, "dropped", e.to_string());
    }
    let deadline = Instant::now() + d.connect.as_duration();
    let plans = match accept_streams(&spec, peer.ip(), local, udp_first, &arrivals, deadline) {
        Ok(p) => p,
        Err(e) => {
            m.error(ip::IE_STREAM_ACCEPT, 0);
            let _ = flush(&mut ctl, &mut m);
            return fail(log, "failed", e);
        }
    };
    let socket = plans.iter().find_map(|p| match &p.socket {
        FlowSocket::Tcp(t) => Some(sockopt::facts(&socket2::SockRef::from(t), true)),
        _ => None,
    });
    m.start();
    if let Err(e) = flush(&mut ctl, &mut m) {
        return fail(log, "dropped", e.to_string());
    }
    let spec = Arc::new(spec);
    let running = flows::start_with(
        End::Server,
        spec.clone(),
        Instant::now(),
        plans,
        &spec.server_affinity,
        Format::Iperf3 {
            counters64: params.counters_64bit(),
        },
    );
    // Until the client's TEST_END (bounded: the test's own deadline), with this
    // end's intervals for --get-server-output, one a second as iperf3 -s's.
    let mut intervals = Intervals::every(&running, Duration::from_secs(1));
    let end_by = Instant::now() + spec.deadline().as_duration();
    let mut ended = false;
    let mut error = None;
    while !ended {
        intervals.tick(&running, &mut |_| {});
        match pump(&mut ctl, &mut m, Duration::from_millis(100)) {
            Ok(evs) => {
                for ev in evs {
                    match ev {
                        Iperf3Event::TestEnd => ended = true,
                        Iperf3Event::Failed(e) => error = Some(e.to_string()),
                        _ => {}
                    }
                }
            }
            Err(e) => error = Some(e.to_string()),
        }
        if error.is_some() || Instant::now() >= end_by {
            break;
        }
    }
    running.stop();
    intervals.close(&running, &mut |_| {});
    let records = intervals.records;
    let finished = running.finish();
    log.bytes = finished
        .outputs
        .iter()
        .map(|o| o.result.bytes_total.0)
        .sum();
    if let Some(e) = error {
        return fail(log, "failed", format!("while running: {e}"));
    }
    if !ended {
        m.error(ip::IE_STREAM_ACCEPT, 0);
        let _ = flush(&mut ctl, &mut m);
        return fail(log, "failed", "the client never ended the test".into());
    }
    if let Some(e) = &finished.error {
        m.error(ip::IE_STREAM_ACCEPT, 0);
        let _ = flush(&mut ctl, &mut m);
        return fail(log, "failed", format!("server flow failed: {e}"));
    }
    let flows: Vec<FlowResult> = finished.outputs.into_iter().map(|o| o.result).collect();
    let mut mine = results_of(&flows, finished.cpu.as_ref(), &spec);
    mine.congestion_used = socket.as_ref().and_then(|s| s.congestion.clone());
    let side = SideResult {
        tcp_samples: Vec::new(),
        host: netsonde_cpu::host_facts(Some(local.ip())),
        flows,
        cpu: finished.cpu,
        socket,
    };
    if params.get_server_output.is_some_and(|g| g != 0) {
        if opts.json_output {
            let j = crate::iperf3_output::json(&side, &mine, &records, &cookie);
            mine.server_output_json = Some(j);
        } else {
            let t = crate::iperf3_output::text(&side, &mine, &records, local, peer);
            mine.server_output_text = Some(t);
        }
    }
    // Once the client's results come: the session as a report of both sides.
    let mut side = Some(side);
    let mut record = |r: &Results| {
        if let (Some(sink), Some(server)) = (sink, side.take()) {
            let client = peer_side(&spec, End::Server, r);
            let mut report = TestReport::assemble(
                (*spec).clone(),
                format!("{local} (serving the iperf3 client {peer})"),
                client,
                server,
                Vec::new(),
                None,
            );
            report.peer = Some(peer_report(r));
            no_totals_after_omit(&mut report);
            (sink.0)(report);
        }
    };
    m.exchange_results();
    let done_by = Instant::now() + d.done.as_duration();
    loop {
        match pump(&mut ctl, &mut m, Duration::from_millis(100)) {
            Ok(evs) => {
                for ev in evs {
                    match ev {
                        Iperf3Event::PeerResults(r) => {
                            m.send_results(&mine);
                            let _ = flush(&mut ctl, &mut m);
                            record(&r);
                        }
                        Iperf3Event::Done => return fail(log, "ok", String::new()),
                        Iperf3Event::Failed(e) => {
                            return fail(log, "failed", format!("after the test: {e}"))
                        }
                        _ => {}
                    }
                }
            }
            // iperf3 clients may close at once after IPERF_DONE.
            Err(_) if m.is_over() => return fail(log, "ok", String::new()),
            Err(e) => return fail(log, "failed", format!("after the test: {e}")),
        }
        if Instant::now() >= done_by {
            return fail(log, "failed", "no results exchange in time".into());
        }
    }
}

/// A UDP socket on the control port's address, as iperf3's stream listener.
fn udp_listener(spec: &TestSpec, local: SocketAddr) -> std::io::Result<UdpSocket> {
    let s = udp_socket(spec, local)?;
    s.set_reuse_address(true)?;
    s.bind(&local.into())?;
    let u: UdpSocket = s.into();
    u.set_read_timeout(Some(Duration::from_millis(100)))?;
    Ok(u)
}

/// The session's streams: TCP connections handed over by cookie, in the order
/// the server accepted them, or UDP streams announced by their first datagram;
/// only from the control peer's address.
fn accept_streams(
    spec: &TestSpec,
    peer_ip: IpAddr,
    local: SocketAddr,
    mut udp_next: Option<UdpSocket>,
    arrivals: &Receiver<Arrival>,
    deadline: Instant,
) -> Result<Vec<FlowPlan>, String> {
    let wanted = spec.flows();
    let late = |got: usize| format!("{got} of {} streams arrived in time", wanted.len());
    if spec.test.is_tcp() {
        let mut got: Vec<Arrival> = Vec::new();
        while got.len() < wanted.len() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(late(got.len()));
            }
            let Ok((seq, t)) = arrivals.recv_timeout(left.min(Duration::from_millis(100))) else {
                continue;
            };
            if t.peer_addr().map(|a| a.ip().to_canonical()).ok() != Some(peer_ip) {
                continue;
            }
            got.push((seq, t));
        }
        got.sort_by_key(|(seq, _)| *seq);
        let mut plans = Vec::new();
        for ((id, dir), (_, t)) in wanted.into_iter().zip(got) {
            let s = Socket::from(t);
            sockopt::apply(&s, spec)
                .and_then(|_| sockopt::set_wake(&s))
                .map_err(|e| e.to_string())?;
            plans.push(FlowPlan {
                id,
                dir,
                socket: FlowSocket::Tcp(s.into()),
            });
        }
        return Ok(plans);
    }
    let mut plans = Vec::new();
    for (id, dir) in wanted.iter().copied() {
        let socket = loop {
            if Instant::now() >= deadline {
                return Err(late(plans.len()));
            }
            let Some(u) = &udp_next else {
                return Err("no UDP socket for the next stream".into());
            };
            let mut b = [0u8; 64];
            let Ok((_, from)) = u.recv_from(&mut b) else {
                continue;
            };
            if from.ip() != peer_ip {
                continue;
            }
            let u = udp_next.take().expect("present");
            u.connect(from).map_err(|e| e.to_string())?;
            u.send(&ip::UDP_CONNECT_REPLY).map_err(|e| e.to_string())?;
            let s = Socket::from(u);
            sockopt::set_wake(&s).map_err(|e| e.to_string())?;
            // The next stream's socket, before the client can send to it.
            if plans.len() + 1 < wanted.len() {
                udp_next = Some(udp_listener(spec, local).map_err(|e| e.to_string())?);
            }
            break FlowSocket::Udp(s.into());
        };
        plans.push(FlowPlan { id, dir, socket });
    }
    Ok(plans)
}
