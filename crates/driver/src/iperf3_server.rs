//! An unmodified iperf3 client's session on `netsonde server` (`serve`): the
//! server tells the two protocols apart by their first byte and runs the test
//! with netsonde's own flows, CPU accounting and limits.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, UdpSocket};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use netsonde_engine::datagram::Format;
use netsonde_engine::sockopt;
use netsonde_model::result::{FlowResult, SideResult, TestReport};
use netsonde_model::spec::TestSpec;
use netsonde_proto::iperf3::{self as ip, Cookie, Iperf3Event, Results, ServerMachine, COOKIE_LEN};
use socket2::Socket;

use crate::flows::{self, End, FlowPlan, FlowSocket};

use crate::intervals::Intervals;
use crate::iperf3::{flush, judge_totals, peer_report, peer_side, pump, results_of};
use crate::policy::SessionSink;
use netsonde_engine::sockopt::udp_socket;

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
    pub sink: Option<&'a SessionSink>,
    /// How this server serves iperf3 clients.
    pub opts: SessionOpts,
    /// The server's listening socket (a second descriptor, closed with the
    /// listener once the sessions holding it end): iperf3's `select` covers it
    /// beside the streams, so the wait they are read in does too
    /// ([`netsonde_engine::flow::run_select`]).
    pub listening: Option<Arc<OwnedFd>>,
    /// The connection came in past the per-address cap (these are its words):
    /// it may be a running session's stream, and nothing else.
    pub streams_only: Option<String>,
}

/// How a server serves iperf3 clients.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SessionOpts {
    /// Receive with netsonde's own reader, not iperf3's way
    /// (the server's `--iperf3-fast-receiver`).
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
    if let Some(reason) = &cx.streams_only {
        // Told as iperf3 tells a client it cannot serve now (ACCESS_DENIED:
        // "the server is busy running a test. try again later"), not closed
        // bare, which the client reports as a control connection lost.
        let mut stream = stream;
        m.deny();
        let _ = flush(&mut stream, &mut m);
        let _ = stream.shutdown(std::net::Shutdown::Write);
        let _ = stream.set_read_timeout(Some(cx.deadlines.hello.as_duration()));
        let mut rest = [0u8; 64];
        while matches!(stream.read(&mut rest), Ok(n) if n > 0) {}
        log.outcome = "refused";
        log.reason = reason.clone();
        return Some(());
    }
    run_session(stream, (peer, local), cookie, m, ServeCtx { log, ..cx });
    Some(())
}

fn run_session(
    mut ctl: TcpStream,
    (peer, local): (SocketAddr, SocketAddr),
    cookie: Cookie,
    mut m: ServerMachine,
    cx: ServeCtx<'_>,
) {
    let ServeCtx {
        registry,
        deadlines: d,
        admit,
        log,
        sink,
        opts,
        listening,
        streams_only: _,
    } = cx;
    let started = Instant::now();
    let _ = ctl.set_nodelay(true);
    let fail = |log: &mut crate::policy::SessionLog, outcome, reason: String| {
        log.outcome = outcome;
        log.reason = reason;
    };
    m.accept();
    // Parameters.
    let params = match until_params(&mut ctl, &mut m, started + d.setup.as_duration()) {
        Ok(p) => p,
        Err((outcome, why)) => return fail(log, outcome, why),
    };
    let spec = match spec_of(&params, opts, &mut ctl, &mut m) {
        Ok(spec) => spec,
        Err(why) => return fail(log, "refused", why),
    };
    log.test = Some(spec.clone());
    let _held = match admit_or_refuse(&mut ctl, &mut m, admit, &spec) {
        Ok(held) => held,
        Err(why) => return fail(log, "refused", why),
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
                tell_error(
                    &mut ctl,
                    &mut m,
                    ip::IE_STREAM_ACCEPT,
                    e.raw_os_error().unwrap_or(0) as u32,
                );
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
            tell_error(&mut ctl, &mut m, ip::IE_STREAM_ACCEPT, 0);
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
    let mut running = flows::start_with(
        End::Server,
        spec.clone(),
        Instant::now(),
        plans,
        &spec.server_affinity,
        Format::Iperf3 {
            counters64: params.counters_64bit(),
        },
        beside_streams(listening, &ctl),
    );
    // Until the client's TEST_END (bounded: the test's own deadline), with this
    // end's intervals for --get-server-output, one a second as iperf3 -s's.
    let mut intervals = Intervals::every(&running, Duration::from_secs(1));
    let end_by = Instant::now() + spec.deadline().as_duration();
    let (ended, error) = until_test_end(&mut ctl, &mut m, &running, &mut intervals, end_by);
    running.stop();
    // The last record ends with each flow's own count as its measured interval
    // closed: a sender still in a write when the end passed counts it there.
    // Closed before the flows were, it missed that write (128 KiB short of the
    // totals in a CI run).
    running.wait_done(Duration::from_secs(2));
    intervals.close(&running, &mut |_| {});
    let records = intervals.records;
    let finished = running.finish();
    log.bytes = finished.bytes_total();
    if let Some(e) = error {
        return fail(log, "failed", format!("while running: {e}"));
    }
    if !ended {
        tell_error(&mut ctl, &mut m, ip::IE_STREAM_ACCEPT, 0);
        return fail(log, "failed", "the client never ended the test".into());
    }
    if let Some(e) = &finished.error {
        tell_error(&mut ctl, &mut m, ip::IE_STREAM_ACCEPT, 0);
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
    // Once the client's results come: `--get-server-output` (whose totals
    // need the client's counts), then the session as a report of both sides.
    let wanted = params.get_server_output.is_some_and(|g| g != 0);
    let mut side = Some(side);
    let mut record = |mine: &mut Results, r: &Results| {
        if let (true, Some(ours)) = (wanted, side.as_ref()) {
            let at = (&cookie, local, peer);
            server_output(mine, ours, r, &records, opts.json_output, at);
        }
        if let (Some(sink), Some(server)) = (sink, side.take()) {
            (sink.0)(session_report(&spec, (local, peer), server, r));
        }
    };
    m.exchange_results();
    let (outcome, why) = exchange(&mut ctl, &mut m, &mut mine, &mut record, d);
    fail(log, outcome, why)
}

/// The session as a report of both sides, once the client's results `r` came.
fn session_report(
    spec: &TestSpec,
    (local, peer): (SocketAddr, SocketAddr),
    server: SideResult,
    r: &Results,
) -> TestReport {
    let client = peer_side(spec, End::Server, r);
    let mut report = TestReport::assemble(
        spec.clone(),
        format!("{local} (serving the iperf3 client {peer})"),
        client,
        server,
        Vec::new(),
        None,
    );
    report.peer = Some(peer_report(r));
    judge_totals(&mut report);
    report
}

/// Tells the client the session failed with iperf3's error `code` (and
/// `errno`), as far as the control connection still takes it.
fn tell_error(ctl: &mut TcpStream, m: &mut ServerMachine, code: u32, errno: u32) {
    m.error(code, errno);
    let _ = flush(ctl, m);
}

/// `--get-server-output`: this end's side of the test as iperf3 -s would have
/// written it, JSON to a `-J` client and text to the others.
fn server_output(
    mine: &mut Results,
    side: &SideResult,
    theirs: &Results,
    records: &[netsonde_model::result::IntervalRecord],
    json: bool,
    (cookie, local, peer): (&Cookie, SocketAddr, SocketAddr),
) {
    if json {
        let doc = crate::iperf3_output::json(side, mine, theirs, records, cookie);
        mine.server_output_json = Some(doc);
    } else {
        let text = crate::iperf3_output::text(side, mine, records, local, peer);
        mine.server_output_text = Some(text);
    }
}

/// The test the client's parameters ask for, read as iperf3's server reads
/// unless told to use netsonde's receiver; or the client is told it cannot be.
fn spec_of(
    params: &ip::Params,
    opts: SessionOpts,
    ctl: &mut TcpStream,
    m: &mut ServerMachine,
) -> Result<TestSpec, String> {
    let mut spec = params.to_spec().map_err(|e| {
        m.error(ip::IE_RECV_PARAMS, 0);
        let _ = flush(ctl, m);
        e.to_string()
    })?;
    spec.iperf3_io = !opts.fast_receiver;
    Ok(spec)
}

/// Admits the test, or tells the client why not (iperf3's "access denied" when
/// busy, its error number otherwise).
fn admit_or_refuse(
    ctl: &mut TcpStream,
    m: &mut ServerMachine,
    admit: Admit<'_>,
    spec: &TestSpec,
) -> Result<Box<dyn std::any::Any>, String> {
    admit(spec).map_err(|(busy, why, errno)| {
        if busy {
            m.deny();
        } else {
            m.error(errno, 0);
        }
        let _ = flush(ctl, m);
        why
    })
}

/// How a session ended, for its log: outcome and reason.
type Ended = (&'static str, String);

/// The client's parameters, by `by`.
fn until_params(
    ctl: &mut TcpStream,
    m: &mut ServerMachine,
    by: Instant,
) -> Result<ip::Params, Ended> {
    loop {
        match pump(ctl, m, Duration::from_millis(100)) {
            Ok(evs) => {
                if let Some(ev) = evs.into_iter().next() {
                    match ev {
                        Iperf3Event::Params(p) => return Ok(*p),
                        Iperf3Event::Failed(e) => return Err(("failed", e.to_string())),
                        _ => {}
                    }
                }
            }
            Err(e) => return Err(("dropped", format!("before parameters: {e}"))),
        }
        if Instant::now() >= by {
            return Err(("dropped", "no parameters in time".into()));
        }
    }
}

/// Runs until the client's TEST_END (or `end_by`), this end's intervals
/// ticking: whether it came, and what failed if something did.
fn until_test_end(
    ctl: &mut TcpStream,
    m: &mut ServerMachine,
    running: &flows::Running,
    intervals: &mut Intervals,
    end_by: Instant,
) -> (bool, Option<String>) {
    let mut ended = false;
    let mut error = None;
    while !ended {
        intervals.tick(running, &mut |_| {});
        match pump(ctl, m, intervals.wait()) {
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
    (ended, error)
}

/// The results exchange: the client's results, then this end's, then the end
/// of the session; each of theirs goes to `record` with this end's, which it
/// may complete, before this end's are sent.
fn exchange(
    ctl: &mut TcpStream,
    m: &mut ServerMachine,
    mine: &mut Results,
    record: &mut dyn FnMut(&mut Results, &Results),
    d: netsonde_proto::Deadlines,
) -> Ended {
    let done_by = Instant::now() + d.done.as_duration();
    loop {
        match pump(ctl, m, Duration::from_millis(100)) {
            Ok(evs) => {
                for ev in evs {
                    match ev {
                        Iperf3Event::PeerResults(r) => {
                            record(mine, &r);
                            m.send_results(mine);
                            let _ = flush(ctl, m);
                        }
                        Iperf3Event::Done => return ("ok", String::new()),
                        Iperf3Event::Failed(e) => {
                            return ("failed", format!("after the test: {e}"))
                        }
                        _ => {}
                    }
                }
            }
            // iperf3 clients may close at once after IPERF_DONE.
            Err(_) if m.is_over() => return ("ok", String::new()),
            Err(e) => return ("failed", format!("after the test: {e}")),
        }
        if Instant::now() >= done_by {
            return ("failed", "no results exchange in time".into());
        }
    }
}

/// What iperf3's select covers beside the streams: its listening socket and
/// the session's control connection, each read on another thread here.
fn beside_streams(listening: Option<Arc<OwnedFd>>, ctl: &TcpStream) -> Vec<OwnedFd> {
    let listening = listening.and_then(|l| l.try_clone().ok());
    listening
        .into_iter()
        .chain(ctl.as_fd().try_clone_to_owned().ok())
        .collect()
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
    // Before the test's clock starts: the data path's clock calibrates once.
    netsonde_engine::clock::calibrate();
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

#[cfg(test)]
mod tests {
    use super::*;

    fn stream() -> TcpStream {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        drop(l.accept().unwrap());
        c
    }

    /// A data connection goes to the session that registered its cookie, in
    /// the order it came; an unknown cookie is a new session; a session that
    /// ended takes nothing more.
    #[test]
    fn data_connections_go_to_their_session() {
        let reg = Registry::default();
        let c = Cookie::from_random([b'a'; COOKIE_LEN - 1]);
        assert!(reg.hand_over(&c, stream(), 0).is_some());
        let (held, rx) = reg.register(c, 2);
        assert!(reg.hand_over(&c, stream(), 7).is_none());
        assert_eq!(rx.try_recv().unwrap().0, 7);
        let other = Cookie::from_random([b'b'; COOKIE_LEN - 1]);
        assert!(reg.hand_over(&other, stream(), 8).is_some());
        drop(held);
        assert!(reg.hand_over(&c, stream(), 9).is_some());
    }

    /// A full session's extra connections are dropped, not queued without end.
    #[test]
    fn a_session_takes_at_most_its_streams() {
        let reg = Registry::default();
        let c = Cookie::from_random([b'c'; COOKIE_LEN - 1]);
        let (_held, rx) = reg.register(c, 1);
        for seq in 0..3 {
            assert!(reg.hand_over(&c, stream(), seq).is_none());
        }
        assert_eq!(rx.try_iter().count(), 1);
    }
}
