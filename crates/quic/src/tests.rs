use std::sync::atomic::AtomicBool;
use std::thread;

use netsonde_engine::FlowClock;
use netsonde_model::spec::{FlowDir, TestKind};
use netsonde_model::units::{Bytes, Nanos};

use super::*;

fn ctx(spec: &Arc<TestSpec>, t0: Instant) -> FlowCtx {
    FlowCtx {
        id: 0,
        dir: FlowDir::Up,
        spec: spec.clone(),
        clock: FlowClock::new(t0, spec),
        counters: Arc::default(),
        stop: Arc::new(AtomicBool::new(false)),
        format: Default::default(),
    }
}

/// A connected pair of UDP sockets: (client's, server's).
fn pair() -> (UdpSocket, UdpSocket) {
    let c = UdpSocket::bind("127.0.0.1:0").unwrap();
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    c.connect(s.local_addr().unwrap()).unwrap();
    s.connect(c.local_addr().unwrap()).unwrap();
    (c, s)
}

/// Runs a flow from the client to the server for `spec`: (sender's, receiver's).
fn transfer(spec: TestSpec) -> (FlowOutput, FlowOutput) {
    let spec = Arc::new(spec);
    let (c, s) = pair();
    let t0 = Instant::now();
    let (sc, rc) = (ctx(&spec, t0), ctx(&spec, t0));
    let server = thread::spawn(move || run(s, &rc, false, false).unwrap());
    let sent = run(c, &sc, true, true).unwrap();
    (sent, server.join().unwrap())
}

#[test]
fn a_quic_stream_arrives_whole_and_in_order() {
    let mut spec = TestSpec::new(TestKind::QuicStream);
    spec.duration = Nanos::from_millis(400);
    spec.size = Bytes(10_000);
    spec.verify = true;
    let (tx, rx) = transfer(spec);
    assert!(tx.result.bytes_total.0 > 1_000_000, "{:?}", tx.result);
    assert_eq!(
        tx.result.bytes_total, rx.result.bytes_total,
        "every byte written is read"
    );
    let io = rx.result.io.unwrap();
    assert_eq!(io.strategy, "quic");
    assert_eq!(io.verify_errors, Some(0), "the pattern survives");
    let note = io.note.unwrap();
    assert!(
        note.contains("handshake") && note.contains("UDP datagrams"),
        "{note}"
    );
}

#[test]
fn without_gso_every_datagram_is_a_call_of_its_own() {
    let mut spec = TestSpec::new(TestKind::QuicStream);
    spec.duration = Nanos::from_millis(300);
    spec.no_gso = true;
    let (tx, _) = transfer(spec);
    let note = tx.result.io.unwrap().note.unwrap();
    assert!(note.contains("GSO off"), "{note}");
    // "N UDP datagrams sent in M calls": N == M without segmentation offload.
    let words: Vec<&str> = note.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "datagrams").unwrap();
    let (n, calls) = (words[at - 2], words[at + 3]);
    assert_eq!(n, calls, "{note}");
}

#[test]
fn a_paced_quic_stream_keeps_to_its_rate() {
    let mut spec = TestSpec::new(TestKind::QuicStream);
    spec.duration = Nanos::from_millis(500);
    spec.size = Bytes(1200);
    spec.rate = Some(netsonde_model::units::BitRate(50e6));
    let (tx, _) = transfer(spec);
    let r = &tx.result;
    let rate = r.bytes.0 as f64 * 8.0 / (r.elapsed.0 as f64 / 1e9);
    assert!((45e6..52e6).contains(&rate), "{rate} bit/s paced at 50M");
}

#[test]
fn a_peer_that_never_answers_fails_the_handshake_in_time() {
    let spec = Arc::new(TestSpec::new(TestKind::QuicStream));
    let (c, _s) = pair();
    let start = Instant::now();
    let e = run(c, &ctx(&spec, Instant::now()), true, true)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("quic handshake"), "{e}");
    assert!(start.elapsed() < HANDSHAKE + Duration::from_secs(2));
}
