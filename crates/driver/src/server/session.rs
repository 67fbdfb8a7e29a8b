//! One control connection: an iperf3 client handed to its server, or a netsonde
//! client's test (admission, setup, its data connections, the run, the
//! results) or an agent's job.

use std::net::{IpAddr, Ipv6Addr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use netsonde_engine::sockopt;
use netsonde_model::result::{SideResult, SocketFacts};
use netsonde_model::spec::{FlowDir, TestSpec};
use netsonde_proto::message::{decode_preamble, PREAMBLE_LEN};
use netsonde_proto::{ErrorCode, Event, ProtoError, ServerSession, SetupAck, Token};
use socket2::{Domain, Protocol, Socket, Type};

use crate::budget::{Need, Reservation};
use crate::control::Control;
use crate::flows::{self, End, FlowPlan, FlowSocket};
use crate::jobs::Refusal;
use crate::now;
use crate::policy::{LogFormat, SessionLog};
use crate::start::Mark;

use super::config::{BusyGuard, Shared, AFTER_TEST};

pub(super) fn listen(
    addr: SocketAddr,
    backlog: i32,
    spec: Option<&TestSpec>,
) -> std::io::Result<Socket> {
    // A test's data listener is MPTCP with --mptcp (it takes plain TCP
    // connections too: probes, a peer without MPTCP).
    let protocol = spec.map_or(Protocol::TCP, sockopt::stream_protocol);
    let s = Socket::new(Domain::for_address(addr), Type::STREAM, Some(protocol)).map_err(|e| {
        match sockopt::mptcp_unavailable(&e).filter(|_| protocol != Protocol::TCP) {
            Some(why) => std::io::Error::new(e.kind(), format!("--mptcp: {why}")),
            None => e,
        }
    })?;
    s.set_reuse_address(true)?;
    if addr.ip() == IpAddr::V6(Ipv6Addr::UNSPECIFIED) {
        // `::` takes IPv4 clients too, whatever net.ipv6.bindv6only says (as
        // iperf3 -s does); their addresses are read back canonical.
        s.set_only_v6(false)?;
    }
    if let Some(spec) = spec {
        sockopt::apply(&s, spec).map_err(std::io::Error::other)?;
        if spec.direction == netsonde_model::spec::Direction::Out {
            // Every stream this listener takes, this end receives: their own
            // buffer (--rcv-window) before the handshake, as the client's.
            sockopt::apply_rcv_window(&s, spec).map_err(std::io::Error::other)?;
        }
    }
    s.bind(&addr.into())?;
    s.listen(backlog)?;
    // SO_RCVTIMEO bounds accept() on Linux: the loop can notice stop requests.
    s.set_read_timeout(Some(sockopt::WAKE))?;
    Ok(s)
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

    fn join(&mut self) -> Result<Accepted, String> {
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
pub(super) fn admit(
    spec: &TestSpec,
    shared: &Arc<Shared>,
) -> Result<(BusyGuard, Reservation), Refusal> {
    spec.validate()
        .map_err(|e| (ErrorCode::BadSpec, e.to_string(), None))?;
    if let Some((c, allowed)) = netsonde_cpu::host::core_not_allowed(&spec.server_affinity) {
        return Err((
            ErrorCode::BadSpec,
            format!(
                "--server-affinity: the server may not run on core {c} (its CPU mask allows \
                 {allowed})"
            ),
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
        spec.flows().into_iter().map(Some).collect()
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
            if let Some((id, dir)) = flow {
                sockopt::apply_flow(&s, spec, id, dir == FlowDir::Up)
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
    if spec.breakdown() {
        // The kernel's symbols, read once, before any interval is measured.
        netsonde_cpu::profile::prepare();
    }
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
    // Before the test's clock starts: the data path's clock calibrates once.
    netsonde_engine::clock::calibrate();
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
    if spec.test.is_crr() {
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
            // The server receives a client-to-server flow.
            sockopt::apply_flow(&sock, spec, flow, slot.1 == FlowDir::Up)
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
/// `over_cap`: the connection came in past the per-address cap, whose words
/// these are: only a running iperf3 session's stream may pass.
pub(super) fn serve_connection(
    stream: TcpStream,
    peer: SocketAddr,
    seq: u64,
    shared: &Arc<Shared>,
    over_cap: Option<String>,
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
        // A statement of its own: the lock is held for it alone, not for the
        // session (a data connection's hand-over takes it too). The descriptor
        // itself is duplicated only if a test starts.
        let listening = shared.listening_socket();
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
                listening,
                streams_only: over_cap,
            },
        );
        return handed.map(|()| log);
    }
    if let Some(reason) = over_cap {
        super::refuse_connection(stream, &reason);
        log.outcome = "refused";
        log.reason = reason;
        return Some(log);
    }
    Some(serve_connection_netsonde(stream, peer, shared, log))
}

/// How long a session's pump waits for the client between looks at its flows.
const TICK: Duration = Duration::from_millis(100);

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

    // Hello, authentication and setup (or a job, served to its end).
    let spec = match until_setup(&mut ctl, &mut s, shared, &mut log) {
        Ok(Some(spec)) => spec,
        Ok(None) => return log,
        Err((outcome, why)) => return fail(log, outcome, why),
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
    let ((plans, probes), started) = match until_start(&mut ctl, &mut s, &mut acceptor) {
        Ok(accepted) => accepted,
        Err((outcome, why)) => return fail(log, outcome, why),
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
        started + idle,
        plans,
        &spec.server_affinity,
    );
    let failure = until_flows_end(&mut ctl, &mut s, &mut running);
    // What is left is the results: a client told "busy" now waits that long.
    busy.ending();
    if let Some(e) = failure {
        log.bytes = running.abandon();
        return fail(log, "failed", format!("while running: {e}"));
    }
    let finished = running.finish();
    log.bytes = finished.bytes_total();
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
    let answer_until =
        (answering.is_some()).then(|| Instant::now() + idle + Duration::from_secs(1));
    let (outcome, why) = until_finished(&mut ctl, &mut s, answer_until);
    fail(log, outcome, why)
}

/// Answers the client while the flows run; stops them if the session fails.
fn until_flows_end(
    ctl: &mut Control,
    s: &mut ServerSession,
    running: &mut flows::Running,
) -> Option<ProtoError> {
    let mut failure = None;
    while !running.all_done() {
        for ev in ctl.pump(s, TICK) {
            if let Event::Failed(e) = ev {
                failure.get_or_insert(e);
            }
        }
        if failure.is_some() || s.is_over() {
            running.stop();
            break;
        }
    }
    failure
}

/// How a session ended, for its log: outcome and reason.
type Ended = (&'static str, String);

/// Serves the control connection up to the test's setup: the spec asked for,
/// or `None` once a job was handed to the agent's handler and served.
fn until_setup(
    ctl: &mut Control,
    s: &mut ServerSession,
    shared: &Arc<Shared>,
    log: &mut SessionLog,
) -> Result<Option<TestSpec>, Ended> {
    loop {
        for ev in ctl.pump(s, Duration::from_secs(1)) {
            match ev {
                Event::SetupRequested(spec) => return Ok(Some(*spec)),
                Event::JobRequested(job) => {
                    log.authenticated = s.authenticated();
                    log.protocol = "netsonde-job";
                    let Some(handler) = &shared.cfg.jobs else {
                        let why = "this is `netsonde server`: it runs tests for clients, not \
                                   jobs; start `netsonde agent` on this host to take jobs from \
                                   a controller";
                        s.reject(now(), ErrorCode::BadSpec, why.into(), None);
                        ctl.flush(s);
                        return Err(("refused", why.into()));
                    };
                    let admit = |spec: &TestSpec| {
                        admit(spec, shared).map(|held| Box::new(held) as Box<dyn std::any::Any>)
                    };
                    let ctx = crate::jobs::ServeCtx {
                        key: shared.cfg.auth_key.as_ref(),
                        deadlines: shared.cfg.deadlines,
                        admit: &admit,
                        log,
                    };
                    (handler.0)(ctl, s, *job, ctx);
                    return Ok(None);
                }
                Event::Failed(e) => {
                    log.authenticated = s.authenticated();
                    return Err(("failed", format!("before setup: {e}")));
                }
                _ => {}
            }
        }
        if s.is_over() {
            return Err(("dropped", "closed before setup".into()));
        }
    }
}

/// Waits for the client's `Start` while the data connections are accepted;
/// returns the accepted flows and when the test starts: when `Start` came,
/// less what this thread waited for a core since the wait that brought it
/// ([`Mark`]), taken at once (the processing after it is not the peer's).
fn until_start(
    ctl: &mut Control,
    s: &mut ServerSession,
    acceptor: &mut Acceptor,
) -> Result<(Accepted, Instant), Ended> {
    let mut accepted = None;
    let abort = |ctl: &mut Control, s: &mut ServerSession, msg: String| {
        s.abort(now(), ErrorCode::Internal, format!("server: {msg}"));
        ctl.flush(s);
        ("failed", msg)
    };
    let started = 'start: loop {
        if accepted.is_none() {
            match acceptor.poll() {
                Some(Ok(a)) => accepted = Some(a),
                Some(Err(msg)) => return Err(abort(ctl, s, msg)),
                None => {}
            }
        }
        let mark = Mark::now();
        for ev in ctl.pump(s, TICK) {
            match ev {
                Event::StartRequested => break 'start mark.start(),
                Event::Failed(e) => return Err(("failed", format!("before start: {e}"))),
                _ => {}
            }
        }
        if s.is_over() {
            return Err(("dropped", "closed before start".into()));
        }
    };
    accepted
        .map_or_else(|| acceptor.join(), Ok)
        .map(|a| (a, started))
        .map_err(|msg| abort(ctl, s, msg))
}

/// After the results: waits for the client to finish the session (and, for a
/// load-latency test, answers its probes until `answer_until`).
fn until_finished(
    ctl: &mut Control,
    s: &mut ServerSession,
    answer_until: Option<Instant>,
) -> Ended {
    loop {
        for ev in ctl.pump(s, TICK) {
            match ev {
                Event::Finished => {
                    if let Some(until) = answer_until {
                        // The client closes the control connection once its
                        // after phase is over: answers stop then.
                        ctl.wait_closed(until);
                    }
                    return ("ok", String::new());
                }
                Event::Failed(e) => return ("failed", format!("after results: {e}")),
                _ => {}
            }
        }
        if s.is_over() {
            return ("ok", String::new());
        }
    }
}
