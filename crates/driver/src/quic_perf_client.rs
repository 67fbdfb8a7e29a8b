//! netsonde's client against another QUIC stack's perf server
//! (draft-banks-quic-performance: quinn's `perf`, msquic's `secnetperf`,
//! picoquic's `quicperf`), `--peer quic-perf` ([`run_client`]). There is no
//! control connection: each flow is a QUIC connection from its own UDP
//! socket to the server's port, speaking the perf protocol as netsonde's QUIC
//! flows always do (`netsonde_quic`), and the test starts as soon as the
//! sockets are ready. This end is measured as it always is (CPU, the flows'
//! figures, quinn's counts). The server's side is what the protocol confirms:
//! an upload's empty answer comes only once the server has read every byte,
//! so its flows mirror this end's; it reports no figures of its own.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::{Duration, Instant};

use netsonde_engine::datagram::Format;
use netsonde_engine::latency::{new_histogram, summarize};
use netsonde_engine::EngineError;
use netsonde_model::result::{FlowResult, IntervalRecord, Role, SideResult, TestReport};
use netsonde_model::spec::Peer;

use crate::conn::{resolve, ClientConfig, ClientError};
use crate::flows::{self, End, Finished, FlowPlan, FlowSocket};
use crate::intervals::{volume_moved, Intervals};

/// A flow's UDP socket, bound where `cfg` says and tied to the server.
fn socket(
    cfg: &ClientConfig,
    server: SocketAddr,
    id: u32,
) -> Result<(UdpSocket, netsonde_model::result::SocketFacts), ClientError> {
    let fail = |op| {
        move |source| ClientError::Data {
            flow: id,
            addr: server,
            source: EngineError::Io { op, source },
        }
    };
    let any: IpAddr = if server.is_ipv4() {
        Ipv4Addr::UNSPECIFIED.into()
    } else {
        Ipv6Addr::UNSPECIFIED.into()
    };
    let from = cfg.data_local(any, id).unwrap_or(SocketAddr::new(any, 0));
    let s = netsonde_engine::sockopt::udp_socket(&cfg.spec, from).map_err(fail("socket"))?;
    s.bind(&from.into()).map_err(fail("bind"))?;
    s.connect(&server.into()).map_err(fail("connect"))?;
    let facts = netsonde_engine::sockopt::facts(&s, false);
    Ok((s.into(), facts))
}

/// The server's side as the protocol confirms it: each of this end's flows,
/// mirrored (what this end sent, the server read; what it received, the
/// server sent), with none of the server's own figures.
fn confirmed(flows: &[FlowResult]) -> Vec<FlowResult> {
    flows
        .iter()
        .map(|f| FlowResult {
            role: match f.role {
                Role::Sender => Role::Receiver,
                Role::Receiver => Role::Sender,
                Role::Requester | Role::Responder => Role::Responder,
            },
            messages: 0,
            calls: 0,
            datagrams_sent: None,
            tcp_info: None,
            udp: None,
            latency: None,
            io: None,
            mptcp: None,
            stall: None,
            ..f.clone()
        })
        .collect()
}

/// Runs one test against a QUIC perf server (`netsonde client --peer
/// quic-perf`).
pub fn run_client(
    cfg: &ClientConfig,
    on_interval: &mut dyn FnMut(&IntervalRecord),
) -> Result<TestReport, ClientError> {
    let spec = cfg.spec.clone();
    spec.validate()?;
    let cannot = |why: String| ClientError::PeerCannot {
        peer: Peer::QuicPerf.name(),
        why,
    };
    if let Some(why) = Peer::QuicPerf.cannot_run(&spec) {
        return Err(cannot(why));
    }
    let host = cfg
        .host
        .as_deref()
        .ok_or_else(|| cannot("without a server host (there is no embedded perf server)".into()))?;
    let addr = resolve(host, cfg.port)?;
    // A closed port says so at once (ICMP), where quinn's dial would wait out
    // its handshake timeout.
    if let Ok(netsonde_quic::probe::Answer::Refused(e)) =
        netsonde_quic::probe::probe(addr, Duration::from_millis(300))
    {
        return Err(ClientError::Connect {
            addr,
            source: std::io::Error::new(
                e.kind(),
                format!("no QUIC server there: the port is closed (ICMP port unreachable: {e})"),
            ),
        });
    }
    // A perf server on this host is the test's other end, not foreign load.
    if let Some(pid) = netsonde_cpu::processes::udp_server_of(addr) {
        netsonde_cpu::processes::count_as_test(pid);
    }
    netsonde_engine::clock::calibrate();
    let mut plans = Vec::new();
    let mut facts = None;
    for (id, dir) in spec.flows() {
        let (s, f) = socket(cfg, addr, id)?;
        facts.get_or_insert(f);
        plans.push(FlowPlan {
            id,
            dir,
            socket: FlowSocket::Udp(s),
        });
    }
    let local_ip = match &plans.first().map(|p| &p.socket) {
        Some(FlowSocket::Udp(s)) => s.local_addr().ok().map(|a| a.ip()),
        _ => None,
    };
    let spec = Arc::new(spec);
    let mut running = flows::start_with(
        End::Client,
        spec.clone(),
        Instant::now(),
        plans,
        &spec.client_affinity,
        Format::Netsonde,
        Vec::new(),
    );
    let clock = running.clock;
    let mut intervals = Intervals::new(&running, &spec);
    while Instant::now() < clock.hard_end && !running.all_done() {
        intervals.tick(&running, on_interval);
        let mut wait = intervals.wait().min(Duration::from_millis(50));
        if Instant::now() >= clock.end || volume_moved(&running, &spec) {
            wait = Duration::from_millis(5);
        }
        std::thread::sleep(wait);
    }
    if !running.all_done() {
        running.stop();
    }
    intervals.close(&running, on_interval);
    let Finished {
        outputs,
        cpu,
        error,
        tcp_samples,
    } = running.finish();
    if let Some(e) = error {
        return Err(ClientError::Flow(e));
    }
    let mut merged = None;
    for o in &outputs {
        if let Some(h) = &o.latency {
            // Same bounds everywhere: adding cannot fail.
            let _ = merged.get_or_insert_with(new_histogram).add(h);
        }
    }
    let client = SideResult {
        tcp_samples,
        host: netsonde_cpu::host_facts(local_ip),
        flows: outputs.into_iter().map(|o| o.result).collect(),
        cpu,
        socket: facts,
    };
    let server = SideResult {
        host: Default::default(),
        flows: confirmed(&client.flows),
        cpu: None,
        socket: None,
        tcp_samples: Vec::new(),
    };
    Ok(TestReport::assemble(
        (*spec).clone(),
        format!("QUIC perf server {addr} (its side: what the protocol confirmed)"),
        client,
        server,
        intervals.records,
        merged.as_ref().map(summarize),
    ))
}
