//! RFC 9000 §8.1 at the perf server: a client whose address is not validated
//! gets at most three times what it sent.

use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use netsonde_model::spec::{TestKind, TestSpec};

/// A real Initial (quinn-proto's client, sans IO), sent once from a plain
/// UDP socket that never answers: everything the perf server sends back in
/// 3.5 s, its loss-detection resends included, is at most 3x the Initial's
/// bytes. quinn alone sent 3,738 B for 1,200 (a whole datagram past the
/// limit with its resend); the server now answers with a Retry.
#[test]
fn a_client_that_never_completes_gets_at_most_three_times_what_it_sent() {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let server = sock.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let totals: Arc<crate::PerfTotals> = Arc::default();
    let serving = {
        let (stop, totals) = (stop.clone(), totals.clone());
        std::thread::spawn(move || {
            let limits = crate::PerfLimits {
                connections: 4,
                answer: Duration::from_secs(1),
            };
            let until = Instant::now() + Duration::from_secs(10);
            crate::perf_serve(sock, until, &stop, limits, totals)
        })
    };
    let mut tls = netsonde_tls::client_config(&TestSpec::new(TestKind::QuicStream)).unwrap();
    tls.alpn_protocols = vec![b"perf".to_vec()];
    let crypto = quinn::crypto::rustls::QuicClientConfig::try_from(tls).unwrap();
    let mut ep = quinn_proto::Endpoint::new(Arc::default(), None, false, Some([7; 32]));
    let cfg = quinn_proto::ClientConfig::new(Arc::new(crypto));
    let (_, mut conn) = ep.connect(Instant::now(), cfg, server, "netsonde").unwrap();
    let mut buf = Vec::new();
    let t = conn
        .poll_transmit(Instant::now(), 1, &mut buf)
        .expect("an Initial to send");
    let initial = &buf[..t.size];
    let client = UdpSocket::bind("127.0.0.1:0").unwrap();
    client.connect(server).unwrap();
    client.send(initial).unwrap();
    let sent = initial.len();
    let mut got = 0usize;
    let deadline = Instant::now() + Duration::from_millis(3500);
    let mut rx = [0u8; 65536];
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        client
            .set_read_timeout(Some(left.max(Duration::from_millis(1))))
            .unwrap();
        match client.recv(&mut rx) {
            Ok(n) => got += n,
            Err(_) => break,
        }
    }
    stop.store(true, Ordering::Relaxed);
    serving.join().unwrap().unwrap();
    eprintln!(
        "sent {sent} B, got {got} B back ({:.2}x)",
        got as f64 / sent as f64
    );
    assert!(sent >= 1200, "{sent}");
    assert!(got > 0, "no answer at all");
    assert!(got <= 3 * sent, "{got} B answered {sent} B");
    assert_eq!(totals.retries.load(Ordering::Relaxed), 1);
    assert_eq!(totals.connections.load(Ordering::Relaxed), 0);
}
