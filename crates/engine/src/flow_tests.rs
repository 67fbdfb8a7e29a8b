//! The flow loops' tests: [`super::run_group`] and [`super::run_select`] over
//! real loopback sockets.

use std::net::{TcpListener, TcpStream, UdpSocket};
use std::sync::Arc;

use netsonde_model::spec::{FlowDir, TestKind, TestSpec};
use netsonde_model::units::{BitRate, Bytes, Nanos};

use super::*;
use crate::stream::{TcpReceiver, TcpSender};
use crate::udp::{UdpReceiver, UdpSender};

fn ctx(spec: &Arc<TestSpec>, id: u32, stop: &Arc<AtomicBool>) -> FlowCtx {
    FlowCtx {
        id,
        dir: FlowDir::Up,
        spec: spec.clone(),
        clock: FlowClock::new(Instant::now(), spec),
        counters: Arc::default(),
        stop: stop.clone(),
        format: Default::default(),
    }
}

/// A connected pair of loopback TCP sockets from `l`: (client, server).
fn pair(l: &TcpListener) -> (TcpStream, TcpStream) {
    let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
    (c, l.accept().unwrap().0)
}

fn spec(test: TestKind, size: u64) -> Arc<TestSpec> {
    let mut s = TestSpec::new(test);
    s.size = Bytes(size);
    s.duration = Nanos::from_millis(300);
    s.warmup = Nanos::from_millis(50);
    s.tx_io = IoStrategy::Epoll;
    s.rx_io = IoStrategy::Epoll;
    s.verify = true;
    Arc::new(s)
}

/// Both ends of three TCP streams on one thread: the group must interleave
/// them, or the senders fill their buffers and nothing drains them.
#[test]
fn one_thread_carries_both_ends_of_several_tcp_streams() {
    let spec = spec(TestKind::TcpStream, 3000);
    let stop = Arc::new(AtomicBool::new(false));
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut flows: Vec<Box<dyn Flow>> = Vec::new();
    for id in 0..3 {
        let (c, s) = pair(&l);
        let cx = ctx(&spec, id, &stop);
        flows.push(Box::new(TcpSender::new(c, &cx).unwrap()));
        flows.push(Box::new(TcpReceiver::new(s, &cx).unwrap()));
    }
    let clock = FlowClock::new(Instant::now(), &spec);
    let t = Instant::now();
    let out = run_group(flows, clock, &stop);
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    assert_eq!(out.len(), 6);
    for pair in out.chunks(2) {
        let (tx, rx) = (pair[0].as_ref().unwrap(), pair[1].as_ref().unwrap());
        assert!(tx.result.bytes_total.0 > 100_000, "{:?}", tx.result);
        assert_eq!(tx.result.bytes_total, rx.result.bytes_total);
        let io = rx.result.io.as_ref().unwrap();
        assert_eq!(io.verify_errors, Some(0));
        assert_eq!(io.thread_flows, Some(6));
        assert!(tx.result.bytes.0 > 0 && tx.result.bytes < tx.result.bytes_total);
    }
    assert!(!stop.load(Ordering::Relaxed));
}

type Outputs = Vec<Result<FlowOutput, EngineError>>;

/// `n` TCP streams of 3000-byte messages between a peer whose flows run in an
/// epoll group and an iperf3 client's session served in one select loop
/// ([`run_select`]); the server sends the `i`th when `server_sends(i)`. The
/// peer's outputs and the server's, each in order, and whether a flow failed.
fn served(n: u32, server_sends: impl Fn(u32) -> bool) -> (Outputs, Outputs, bool) {
    let peer = spec(TestKind::TcpStream, 3000);
    let mut s = (*peer).clone();
    s.tx_io = IoStrategy::Copy;
    s.rx_io = IoStrategy::Copy;
    s.iperf3_io = true;
    let server = Arc::new(s);
    let stop = Arc::new(AtomicBool::new(false));
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut theirs: Vec<Box<dyn Flow>> = Vec::new();
    let mut ours: Vec<Box<dyn Flow>> = Vec::new();
    for id in 0..n {
        let (c, s) = pair(&l);
        let (c_cx, s_cx) = (ctx(&peer, id, &stop), ctx(&server, id, &stop));
        if server_sends(id) {
            theirs.push(Box::new(TcpReceiver::new(c, &c_cx).unwrap()));
            ours.push(Box::new(TcpSender::new(s, &s_cx).unwrap()));
        } else {
            theirs.push(Box::new(TcpSender::new(c, &c_cx).unwrap()));
            ours.push(Box::new(TcpReceiver::new(s, &s_cx).unwrap()));
        }
    }
    let clock = FlowClock::new(Instant::now(), &peer);
    let (theirs, ours) = std::thread::scope(|scope| {
        let peer = scope.spawn(|| run_group(theirs, clock, &stop));
        let ours = run_select(ours, Vec::new(), clock, &stop);
        (peer.join().unwrap(), ours)
    });
    (theirs, ours, stop.load(Ordering::Relaxed))
}

/// An iperf3 client's streams as iperf3 3.12's server reads them: the
/// three receivers on one thread, each read at most one message long, every
/// byte counted; their senders elsewhere, as the client is.
#[test]
fn one_select_loop_reads_several_streams_a_message_at_a_time() {
    let (sent, got, failed) = served(3, |_| false);
    for (tx, rx) in sent.iter().zip(&got) {
        let (tx, rx) = (tx.as_ref().unwrap(), rx.as_ref().unwrap());
        assert!(tx.result.bytes_total.0 > 100_000, "{:?}", tx.result);
        assert_eq!(tx.result.bytes_total, rx.result.bytes_total);
        // No read is longer than a message (a message may take several).
        assert!(
            rx.result.calls * 3000 >= rx.result.bytes.0,
            "{:?}",
            rx.result
        );
        let io = rx.result.io.as_ref().unwrap();
        assert!(
            io.note.as_deref().unwrap_or("").contains("iperf3 3.12"),
            "{io:?}"
        );
        assert_eq!(io.thread_flows, Some(3));
    }
    assert!(!failed);
}

/// An iperf3 client's `--bidir` as iperf3 3.12's server serves it: its two
/// receivers and two senders on one thread, in one select loop, every byte
/// counted both ways; each sender writes a block at a time as `Nwrite` does,
/// and ends by draining to its peer's close without holding up the loop.
#[test]
fn one_select_loop_serves_streams_both_ways() {
    let t = Instant::now();
    let (theirs, ours, failed) = served(4, |id| id % 2 == 1);
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    for (id, (a, b)) in theirs.iter().zip(&ours).enumerate() {
        let (a, b) = (a.as_ref().unwrap(), b.as_ref().unwrap());
        assert!(a.result.bytes_total.0 > 100_000, "{id}: {:?}", a.result);
        assert_eq!(a.result.bytes_total, b.result.bytes_total, "{id}");
        let io = b.result.io.as_ref().unwrap();
        assert!(
            io.note.as_deref().unwrap_or("").contains("iperf3 3.12"),
            "{io:?}"
        );
        assert_eq!(io.thread_flows, Some(4));
        if id % 2 == 1 {
            // The server's sender counts blocks, not writes: a block is
            // whole, or its rest goes on in the next call.
            let r = &b.result;
            assert!(r.calls >= r.messages, "{r:?}");
            assert!((r.bytes.0 / 3000).abs_diff(r.messages) <= 2, "{r:?}");
            assert_eq!(a.result.io.as_ref().unwrap().verify_errors, Some(0));
        }
    }
    assert!(!failed);
}

/// Paced UDP flows on one thread: the pacing timers and the FINs run in the
/// group, the datagrams arrive (loopback, low rate), and the receiver learns
/// the sender's count from the FIN.
#[test]
fn one_thread_paces_several_udp_streams() {
    let mut s = (*spec(TestKind::UdpStream, 1000)).clone();
    s.rate = Some(BitRate(20e6));
    let spec = Arc::new(s);
    let stop = Arc::new(AtomicBool::new(false));
    let mut flows: Vec<Box<dyn Flow>> = Vec::new();
    for id in 0..2 {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        a.connect(b.local_addr().unwrap()).unwrap();
        b.connect(a.local_addr().unwrap()).unwrap();
        let cx = ctx(&spec, id, &stop);
        flows.push(Box::new(UdpSender::new(a, &cx).unwrap()));
        flows.push(Box::new(UdpReceiver::new(b, None, &cx).unwrap()));
    }
    let clock = FlowClock::new(Instant::now(), &spec);
    let out = run_group(flows, clock, &stop);
    for pair in out.chunks(2) {
        let (tx, rx) = (pair[0].as_ref().unwrap(), pair[1].as_ref().unwrap());
        let sent = tx.result.datagrams_sent.unwrap();
        // 20 Mbit/s of 1000-byte datagrams for 350 ms: about 875.
        assert!((600..=1100).contains(&sent), "{sent}");
        // The receiver learned the sender's count from its FIN. (On a starved
        // host the pacer catches up in a burst that may overflow the receive
        // buffer, so some loss is allowed, not a wrong count.)
        let udp = rx.result.udp.as_ref().unwrap();
        assert_eq!(udp.packets_total + udp.lost, sent, "{udp:?}");
        assert!(udp.lost <= sent / 5, "{udp:?}");
        assert_eq!(rx.result.io.as_ref().unwrap().verify_errors, Some(0));
    }
}

/// Both ends of several request/response flows, TCP and UDP, on one thread:
/// every flow completes transactions, each requester's count matches its
/// responder's, and every measured one is timed.
#[test]
fn one_thread_serves_both_ends_of_request_response_flows() {
    use crate::rr::{TcpRequester, TcpResponder, UdpRequester, UdpResponder};
    let mut tcp = (*spec(TestKind::TcpRr, 1)).clone();
    tcp.request_size = Bytes(100);
    tcp.response_size = Bytes(3000);
    let tcp = Arc::new(tcp);
    let mut udp = (*tcp).clone();
    udp.test = TestKind::UdpRr;
    let udp = Arc::new(udp);
    let stop = Arc::new(AtomicBool::new(false));
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut flows: Vec<Box<dyn Flow>> = Vec::new();
    for id in 0..3 {
        let (c, s) = pair(&l);
        let cx = ctx(&tcp, id, &stop);
        flows.push(Box::new(TcpRequester::new(c, &cx).unwrap()));
        flows.push(Box::new(TcpResponder::new(s, &cx).unwrap()));
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        a.connect(b.local_addr().unwrap()).unwrap();
        b.connect(a.local_addr().unwrap()).unwrap();
        let cx = ctx(&udp, 10 + id, &stop);
        flows.push(Box::new(UdpRequester::new(a, &cx).unwrap()));
        flows.push(Box::new(UdpResponder::new(b, &cx).unwrap()));
    }
    let clock = FlowClock::new(Instant::now(), &tcp);
    let t = Instant::now();
    let out = run_group(flows, clock, &stop);
    assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());
    for pair in out.chunks(2) {
        let (req, resp) = (pair[0].as_ref().unwrap(), pair[1].as_ref().unwrap());
        let n = req.result.transactions_total;
        assert!(n > 50, "{:?}", req.result);
        // The requester may end with one request answered but not yet read.
        assert!(
            resp.result.transactions_total.abs_diff(n) <= 1,
            "{n} vs {:?}",
            resp.result
        );
        let hist = req.latency.as_ref().unwrap();
        assert_eq!(hist.len(), req.result.transactions, "{:?}", req.result);
        assert_eq!(req.result.io.as_ref().unwrap().thread_flows, Some(12));
    }
}

/// A flow that fails ends the others: the group returns promptly with the
/// error in that flow's place.
#[test]
fn a_failing_flow_stops_the_group() {
    let spec = spec(TestKind::TcpStream, 1000);
    let stop = Arc::new(AtomicBool::new(false));
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
    let (s, _) = l.accept().unwrap();
    // The peer of the second sender is gone: its writes are reset.
    let c2 = TcpStream::connect(l.local_addr().unwrap()).unwrap();
    let (s2, _) = l.accept().unwrap();
    drop(s2);
    let mut long = (*spec).clone();
    long.duration = Nanos::from_secs(30);
    let long = Arc::new(long);
    let cx = ctx(&long, 0, &stop);
    let flows: Vec<Box<dyn Flow>> = vec![
        Box::new(TcpSender::new(c, &cx).unwrap()),
        Box::new(TcpReceiver::new(s, &cx).unwrap()),
        Box::new(TcpSender::new(c2, &ctx(&long, 1, &stop)).unwrap()),
    ];
    let t = Instant::now();
    let out = run_group(flows, FlowClock::new(Instant::now(), &long), &stop);
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert!(stop.load(Ordering::Relaxed));
    assert!(
        matches!(out[2], Err(EngineError::PeerClosed { flow: 1 })),
        "{:?}",
        out[2]
    );
}
