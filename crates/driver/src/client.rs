//! The client: one test from hello to [`TestReport`]. With no host it starts an
//! embedded server on loopback in the same process.

use std::net::{IpAddr, Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::{Duration, Instant};

use netsonde_engine::latency::{new_histogram, summarize};
use netsonde_engine::{sockopt, udp, EngineError};
use netsonde_model::result::{IntervalRecord, SideResult, TestReport};
use netsonde_model::spec::{TestKind, TestSpec};
use netsonde_model::units::Nanos;
use netsonde_proto::message::encode_preamble;
use netsonde_proto::{ClientSession, Event, ProtoError, SetupAck};
use socket2::{Domain, Protocol, Socket, Type};

use crate::control::Control;
use crate::flows::{self, End, FlowPlan, FlowSocket, Running};
use crate::now;
use crate::probes::{ProbeConnections, Probing};
use crate::server::{Server, ServerConfig, ServerHandle};

use crate::conn::{connect_tcp, resolve, session_error};
pub use crate::conn::{ClientConfig, ClientError, Local, Peer, CONNECT_TIMEOUT, DEFAULT_PORT};
use crate::intervals::Intervals;

/// Runs one test. `on_interval` sees each interval record as it is made.
pub fn run(
    cfg: &ClientConfig,
    on_interval: &mut dyn FnMut(&IntervalRecord),
) -> Result<TestReport, ClientError> {
    if cfg.spec.breakdown() {
        // The kernel's symbols, read once, before any interval is measured.
        netsonde_cpu::profile::prepare();
    }
    match cfg.peer {
        Peer::Iperf3 => return crate::iperf3_client::run_client(cfg, on_interval),
        Peer::QuicPerf => return crate::quic_perf_client::run_client(cfg, on_interval),
        Peer::Netsonde => {}
    }
    let spec = cfg.spec.clone();
    spec.validate()?;
    if let Some((core, allowed)) = netsonde_cpu::host::core_not_allowed(&spec.client_affinity) {
        return Err(ClientError::Affinity { core, allowed });
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
    // The test starts as `Start` leaves, however late this thread is given a
    // core after it.
    let mark = crate::start::Mark::now();
    s.start(now());
    ctl.flush(&mut s);
    let started = mark.start();
    let spec = Arc::new(spec);
    // A load-latency test probes from now; its load starts after the idle phase.
    let probing = probe_conns.map(|c| Probing::start(&spec, c));
    let idle = spec.probe.map_or(Duration::ZERO, |p| p.idle.as_duration());
    let running = flows::start(
        End::Client,
        spec.clone(),
        started + idle,
        plans,
        &spec.client_affinity,
    );
    let cancel = cfg.cancel.as_deref();
    let (running, server, intervals) =
        supervise(&mut ctl, &mut s, running, &spec, cancel, on_interval).map_err(|e| match e {
            Ended::Session(e) => session_error(addr, e),
            Ended::Cancelled => ClientError::Cancelled,
        })?;
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
    whole(&report)?;
    Ok(report)
}

/// A flow whose measured interval ran for less than this share of the test's
/// time ended early: the test was cut short.
pub const CUT_SHORT: f64 = 0.9;

/// The shortfall a flow's interval may have whatever the test's length: a
/// thread's start and stop on a loaded host.
const SHORTFALL_FLOOR: Duration = Duration::from_millis(50);

/// The stretch without data a receiver may have whatever the test's length,
/// beyond what its own wait for a core explains: a sender that waited for a
/// core (a CPU quota throttles a whole process for up to its period, 100 ms by
/// default) is not a stopped one.
const STALL_FLOOR: Duration = Duration::from_millis(200);

/// Whether a report is a whole test: the server's side is there, and every
/// receiving, requesting and responding flow of a test that ends by time
/// measured (nearly) all of it, with data all along.
///
/// A flow's measured interval is the test's phase however late its thread
/// was scheduled (`engine::meter`), and each end's phase starts when `Start`
/// left or came, not when its control thread next had a core
/// (`start::Mark`): a flow that still measured less than the time asked, by
/// more than 10% of it, 50 ms or (request/response) twice its longest
/// transaction, ended before its peer's phase did. A TCP stream receiver
/// that got no data for longer than 10% of the time, 200 ms, or twice a paced
/// sender's time between messages, beyond what its thread waited for a core
/// then ([`netsonde_model::result::Stall`]), had its peer or path stop (a
/// stopped server, a link down); a UDP receiver's is loss, measured as such.
/// Either is an error that says which flow and how much, never a result.
fn whole(report: &TestReport) -> Result<(), ClientError> {
    if report.server.flows.is_empty() && !report.client.flows.is_empty() {
        return Err(ClientError::Incomplete(
            "the server reported no flows: its side of the test is missing".into(),
        ));
    }
    let spec = &report.spec;
    if spec.volume.is_some() {
        return Ok(());
    }
    let asked = spec.duration;
    // A request/response flow's interval starts and ends with whole
    // transactions: it may fall short by the longest one at either edge
    // (timed at the requester).
    let longest = report.rr.as_ref().map_or(0, |rr| rr.latency.max.0);
    let may_miss = ((1.0 - CUT_SHORT) * asked.0 as f64)
        .max(SHORTFALL_FLOOR.as_nanos() as f64)
        .max(2.0 * longest as f64);
    // A paced sender's messages come that far apart by design.
    let between = spec
        .rate
        .filter(|r| r.0 > 0.0)
        .map_or(0.0, |r| spec.size.0 as f64 * 8.0 / r.0 * 1e9);
    let may_stall = ((1.0 - CUT_SHORT) * asked.0 as f64)
        .max(STALL_FLOOR.as_nanos() as f64)
        .max(2.0 * between);
    for (side, r) in [("client", &report.client), ("server", &report.server)] {
        // A sender's interval ends with its last write that completed: one
        // blocked on a full buffer (a paced flow, a shaped link) ends early by
        // design. Its receiver, timed to the end, says whether data stopped.
        for f in r
            .flows
            .iter()
            .filter(|f| f.role != netsonde_model::result::Role::Sender)
        {
            if (asked.0 as f64) - (f.elapsed.0 as f64) > may_miss {
                return Err(ClientError::Incomplete(format!(
                    "the {side}'s flow {} measured {} of the {} asked: its peer ended early, the test was cut short",
                    f.id, f.elapsed, asked
                )));
            }
            // A UDP receiver's stretch without data is loss, which the test
            // measures (a link overloaded or down, a receiver that stopped
            // and overflowed its buffer): only a stream that waits for every
            // byte was stopped by one.
            let stall = f.stall.filter(|_| f.udp.is_none());
            if let Some(st) = stall.filter(|st| st.unexplained().0 as f64 > may_stall) {
                return Err(ClientError::Incomplete(format!(
                    "the {side}'s flow {} got no data for {} from {} into the {} asked (its thread waited {} of it for a core): the peer or the path stopped, the test was cut short",
                    f.id, st.gap, st.at, asked, st.waited
                )));
            }
        }
    }
    Ok(())
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
    // Before the test's clock starts: the data path's clock calibrates once.
    netsonde_engine::clock::calibrate();
    let data_addr = SocketAddr::new(server_ip, ack.data_port);
    let mut plans = Vec::new();
    let mut facts = None;
    for (id, dir) in spec.flows() {
        let socket = if spec.test.is_crr() {
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
            sockopt::apply_flow(&s, spec, id, dir == netsonde_model::spec::FlowDir::Down)
                .map_err(fail)?;
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

type Supervised = (Running, SideResult, Vec<IntervalRecord>);

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

/// Why a test ended before its results.
enum Ended {
    /// The session failed.
    Session(ProtoError),
    /// Whoever ran it stopped it ([`ClientConfig::cancel`]).
    Cancelled,
}

/// Waits for the local flows and the server's results, making interval records;
/// `cancel`, once set, stops the flows and ends the test.
fn supervise(
    ctl: &mut Control,
    s: &mut ClientSession,
    mut running: Running,
    spec: &TestSpec,
    cancel: Option<&std::sync::atomic::AtomicBool>,
    on_interval: &mut dyn FnMut(&IntervalRecord),
) -> Result<Supervised, Ended> {
    let mut intervals = Intervals::new(&running, spec);
    let mut server = None;
    loop {
        if cancel.is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed)) {
            // The server hears of it first, on the control connection, while
            // it still watches that beside its flows: it drops its end of the
            // test at once instead of finishing its results for nobody.
            let _ = ctl.stream().shutdown(std::net::Shutdown::Both);
            let _ = running.abandon();
            return Err(Ended::Cancelled);
        }
        intervals.tick(&running, on_interval);
        let wait = intervals.wait();
        if s.is_over() {
            std::thread::sleep(wait.max(Duration::from_millis(1)));
        }
        for ev in ctl.pump(s, wait) {
            match ev {
                Event::Results(r) => server = Some(*r),
                Event::Failed(e) => {
                    let _ = running.abandon();
                    return Err(Ended::Session(e));
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
