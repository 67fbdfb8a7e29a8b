//! iperf3 peers, over the protocol of [`netsonde_proto::iperf3`]: what the
//! client half ([`crate::iperf3_client`]: netsonde's client against an unmodified
//! `iperf3 -s`) and the server half ([`crate::iperf3_server`]: an unmodified
//! iperf3 client's session on `netsonde server`) share: driving the protocol
//! machines over the control connection, and iperf3's results from netsonde's
//! flows and back.
//!
//! The data streams are netsonde's own (`crate::flows`); TCP streams open with the
//! cookie instead of netsonde's preamble, and UDP datagrams carry iperf3's header
//! (`netsonde_engine::datagram::Format::Iperf3`).

use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

use netsonde_model::cpu::CpuReport;
use netsonde_model::result::{
    FlowResult, PeerReport, Role, SideResult, TestReport, UdpStats, Warning,
};
use netsonde_model::spec::{FlowDir, TestKind, TestSpec};
use netsonde_model::units::{Bytes, Nanos};
use netsonde_proto::iperf3::{
    self as ip, ClientMachine, Iperf3Event, Results, ServerMachine, StreamResult,
};

use crate::flows::End;

/// The two machines, as the control loop drives them.
pub(crate) trait Machine {
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
pub(crate) fn pump(
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
    let mut buf = [0u8; 4096];
    match crate::control::read_within(stream, &mut buf, wait) {
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

pub(crate) fn flush(stream: &mut TcpStream, m: &mut impl Machine) -> std::io::Result<()> {
    let out = m.take_output();
    if !out.is_empty() {
        stream.set_write_timeout(Some(Duration::from_secs(5)))?;
        stream.write_all(&out)?;
    }
    Ok(())
}

/// iperf3's number of netsonde flow `id` (flows are in the order iperf3 opens
/// its streams: the client's sending ones first).
pub(crate) fn iperf3_id(id: u32) -> i64 {
    ip::stream_id(id as usize)
}

/// This end's results as iperf3 reads them.
pub(crate) fn results_of(
    flows: &[FlowResult],
    cpu: Option<&CpuReport>,
    spec: &TestSpec,
) -> Results {
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
                    // As iperf3's receiver counts them: the highest sequence
                    // number seen, so the client's total is what was sent and
                    // its loss `errors` of it (sending the datagrams received
                    // made the total too small and the loss above 100%).
                    packets: match udp {
                        Some(u) => (u.packets + u.lost) as i64,
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

/// iperf3's byte totals against this end's. iperf3 ends a test while data is
/// still in flight: what its sender had written and its receiver had read
/// differ by up to what the socket buffers of a stream hold, the sender's and
/// the receiver's (this end's granted sizes stand for the peer's, which `-w`
/// sets alike; without -w the kernel grows them up to `tcp_wmem` and
/// `tcp_rmem`'s maximum, which bound them then). A difference within that is not a mismatch; one beyond it
/// still says the peer stopped early or the run was cut. iperf3 also leaves
/// its omitted period (`-O`) out of its totals, so with one they cannot be set
/// against this end's at all.
pub(crate) fn judge_totals(report: &mut TestReport) {
    let omitted = report.spec.warmup.0 > 0;
    // What a stream's buffers can hold: the sizes granted at setup, or, where
    // the kernel tunes them (no -w), the most it may grow them to.
    let tuned_max = |key: &str| -> u64 {
        [&report.client, &report.server]
            .into_iter()
            .filter_map(|side| side.host.sysctls.get(key))
            .filter_map(|v| v.split_whitespace().nth(2)?.parse().ok())
            .max()
            .unwrap_or(0)
    };
    let tuned = tuned_max("net.ipv4.tcp_wmem") + tuned_max("net.ipv4.tcp_rmem");
    let buffers = [&report.client, &report.server]
        .into_iter()
        .find_map(|side| side.socket.as_ref())
        .map(|f| (f.sndbuf + f.rcvbuf).max(tuned));
    let flows = report.spec.flows();
    let streams = |dir: FlowDir| flows.iter().filter(|(_, d)| *d == dir).count() as u64;
    let in_flight = |dir: FlowDir| buffers.map(|b| b * streams(dir));
    report.warnings.retain(|w| match w {
        Warning::ByteCountMismatch {
            dir,
            sent,
            received,
        } => !omitted && in_flight(*dir).is_none_or(|max| sent.0.abs_diff(received.0) > max),
        _ => true,
    });
}

pub(crate) fn peer_side(spec: &TestSpec, end: End, r: &Results) -> SideResult {
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
                mptcp: None,
                stall: None,
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
pub(crate) fn peer_report(r: &Results) -> PeerReport {
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
