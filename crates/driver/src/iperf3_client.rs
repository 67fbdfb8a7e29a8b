//! netsonde's client against an unmodified `iperf3 -s` ([`run_client`]). This end
//! measures itself as it always does (CPU, `TCP_INFO`, per-flow figures); the
//! server's side is what iperf3 reports of it.

use std::net::{IpAddr, SocketAddr, TcpStream, UdpSocket};
use std::sync::Arc;
use std::time::{Duration, Instant};

use netsonde_engine::datagram::Format;
use netsonde_engine::{sockopt, EngineError};
use netsonde_model::result::{IntervalRecord, SideResult, SocketFacts, TestReport};
use netsonde_model::spec::TestSpec;
use netsonde_proto::iperf3::{
    self as ip, ClientMachine, Cookie, Iperf3Error, Iperf3Event, Params, COOKIE_LEN,
};

use crate::flows::{self, End, Finished, FlowPlan, FlowSocket};

use crate::conn::{connect_tcp, resolve, ClientConfig, ClientError};
use crate::intervals::{volume_moved, Intervals};
use crate::iperf3::{flush, judge_totals, peer_report, peer_side, pump, results_of};
use netsonde_engine::sockopt::udp_socket;

/// Opens the client's streams as iperf3 does.
fn connect_streams(
    cfg: &ClientConfig,
    spec: &TestSpec,
    server: SocketAddr,
    local_ip: IpAddr,
    cookie: &Cookie,
    deadline: Instant,
) -> Result<(Vec<FlowPlan>, Option<SocketFacts>), ClientError> {
    // Before the test's clock starts: the data path's clock calibrates once.
    netsonde_engine::clock::calibrate();
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
    let failed = |e| iperf3_failed(addr, e);
    let timeout = |what| timed_out(addr, what);

    // Cookie, parameters, streams, start.
    let (plans, socket) = until_running(cfg, &spec, (&mut ctl, &mut m), (addr, local_ip), &cookie)?;
    let spec = Arc::new(spec);
    let mut running = flows::start_with(
        End::Client,
        spec.clone(),
        Instant::now(),
        plans,
        &spec.client_affinity,
        // netsonde asks for 64-bit counters (`Params::from_spec`).
        Format::Iperf3 { counters64: true },
        Vec::new(),
    );
    let clock = running.clock;
    let mut intervals = Intervals::written(&running, &spec);

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
    let r = their_results(&mut ctl, &mut m, addr, results_deadline)?;
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
    judge_totals(&mut report);
    Ok(report)
}

/// Cookie, parameters, streams, start: the test's streams once the server says
/// it is running.
fn until_running(
    cfg: &ClientConfig,
    spec: &TestSpec,
    (ctl, m): (&mut TcpStream, &mut ClientMachine),
    (addr, local_ip): (SocketAddr, IpAddr),
    cookie: &Cookie,
) -> Result<(Vec<FlowPlan>, Option<SocketFacts>), ClientError> {
    let io = |source| ClientError::Connect { addr, source };
    let setup_deadline = Instant::now() + cfg.deadlines.setup.as_duration();
    let mut plans = None;
    'running: loop {
        for ev in pump(ctl, m, Duration::from_millis(100)).map_err(io)? {
            match ev {
                Iperf3Event::CreateStreams => {
                    let deadline = Instant::now() + cfg.deadlines.connect.as_duration();
                    plans = Some(connect_streams(
                        cfg, spec, addr, local_ip, cookie, deadline,
                    )?);
                }
                Iperf3Event::TestRunning => break 'running,
                Iperf3Event::Failed(e) => return Err(iperf3_failed(addr, e)),
                _ => {}
            }
        }
        if Instant::now() >= setup_deadline {
            return Err(timed_out(addr, "start the test"));
        }
    }
    plans.ok_or_else(|| {
        iperf3_failed(
            addr,
            Iperf3Error::UnexpectedState {
                got: ip::State::TestRunning as i8,
                waiting: "CREATE_STREAMS",
            },
        )
    })
}

/// An iperf3 server's error as the client's: a refusal to run is "busy".
fn iperf3_failed(addr: SocketAddr, e: Iperf3Error) -> ClientError {
    match e {
        Iperf3Error::Denied => ClientError::Busy {
            addr,
            message: e.to_string(),
            retry_after_ms: None,
        },
        e => ClientError::Iperf3 { addr, source: e },
    }
}

/// The iperf3 server did not do `what` in time.
fn timed_out(addr: SocketAddr, what: &str) -> ClientError {
    ClientError::Connect {
        addr,
        source: std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("the iperf3 server did not {what} in time"),
        ),
    }
}

/// After this end's results: the server's, once the test is done.
fn their_results(
    ctl: &mut TcpStream,
    m: &mut ClientMachine,
    addr: SocketAddr,
    deadline: Instant,
) -> Result<ip::Results, ClientError> {
    let io = |source| ClientError::Connect { addr, source };
    let mut theirs = None;
    loop {
        for ev in pump(ctl, m, Duration::from_millis(100)).map_err(io)? {
            match ev {
                Iperf3Event::PeerResults(r) => theirs = Some(*r),
                Iperf3Event::Done => {
                    let _ = flush(ctl, m);
                    return theirs.ok_or_else(|| timed_out(addr, "send its results"));
                }
                Iperf3Event::Failed(e) => return Err(iperf3_failed(addr, e)),
                _ => {}
            }
        }
        if Instant::now() >= deadline {
            return Err(timed_out(addr, "send its results"));
        }
    }
}
