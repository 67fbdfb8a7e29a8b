use std::net::{TcpListener, TcpStream};
use std::thread;

use netsonde_model::spec::{TestKind, TestSpec};

use super::*;

fn spec(suite: Option<&str>) -> TestSpec {
    let mut s = TestSpec::new(TestKind::TlsStream);
    s.size = netsonde_model::units::Bytes(40_000);
    s.tls_suite = suite.map(str::to_string);
    s
}

/// A connected pair: (client's end, server's end).
fn pair() -> (TcpStream, TcpStream) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
    let s = l.accept().unwrap().0;
    for t in [&c, &s] {
        t.set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        t.set_write_timeout(Some(Duration::from_millis(200)))
            .unwrap();
    }
    (c, s)
}

/// Sends `messages` of the spec's size from the client to the server over
/// TLS; what the server read, in order, and both reports.
fn transfer(spec: &TestSpec, messages: usize) -> (Vec<u8>, IoReport, IoReport) {
    let (c, s) = pair();
    let sp = spec.clone();
    let server = thread::spawn(move || {
        let mut rx = rx(&s, &sp, false).unwrap();
        let mut got = Vec::new();
        loop {
            match rx.recv(Sock::Tcp(&s), &mut |d, _| got.extend_from_slice(d)) {
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(e) if is_wait(&e) => {}
                Err(e) => panic!("{e}"),
            }
        }
        (got, rx.report())
    });
    let mut tx = tx(&c, spec, true).unwrap();
    let (mut sent, mut whole) = (0u64, 0);
    while whole < messages as u64 {
        match tx.send(Sock::Tcp(&c), 0, 0) {
            Ok(m) => {
                sent += m.bytes;
                whole += m.messages;
            }
            Err(e) if is_wait(&e) => {}
            Err(e) => panic!("{e}"),
        }
    }
    let sent_report = tx.finish(Sock::Tcp(&c));
    c.shutdown(std::net::Shutdown::Write).unwrap();
    let (got, got_report) = server.join().unwrap();
    assert_eq!(got.len() as u64, sent, "every plaintext byte sent arrives");
    (got, sent_report, got_report)
}

#[test]
fn the_stream_arrives_whole_and_in_order_under_tls_1_3() {
    let s = spec(None);
    let (got, tx, rx) = transfer(&s, 25);
    assert_eq!(got.len(), 25 * 40_000);
    let mut v = netsonde_engine::verify::Verifier::new(40_000);
    v.stream(&got);
    assert_eq!(v.errors, 0, "the pattern survives the records");
    for r in [&tx, &rx] {
        assert_eq!(r.strategy, "tls");
        let note = r.note.as_deref().unwrap();
        assert!(note.starts_with("TLS 1.3, TLS13_"), "{note}");
    }
}

/// Each end counts the records it sealed or opened (40 KB messages: three
/// records each, and the handshake's few), times about one in eight, and
/// its estimate is a time a record can take: more than nothing, less than
/// the whole transfer took.
#[test]
fn each_end_counts_and_times_its_records_crypto() {
    let start = Instant::now();
    let (_, tx, rx) = transfer(&spec(Some("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256")), 400);
    let took = start.elapsed();
    for r in [&tx, &rx] {
        let c = r.crypto.unwrap();
        assert!((1200..1300).contains(&c.calls), "{c:?}");
        assert!(
            (c.calls / 16..c.calls / 4).contains(&c.sampled),
            "about one call in {}: {c:?}",
            timed::EVERY
        );
        assert!(
            c.ns.0 > 0 && c.ns.0 < took.as_nanos() as u64,
            "{c:?} in {took:?}"
        );
    }
}

#[test]
fn a_suite_given_is_the_suite_used_and_sets_the_version() {
    for name in [
        "TLS13_CHACHA20_POLY1305_SHA256",
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    ] {
        let (_, tx, rx) = transfer(&spec(Some(name)), 3);
        let version = if name.starts_with("TLS13") {
            "TLS 1.3"
        } else {
            "TLS 1.2"
        };
        for r in [tx, rx] {
            let note = r.note.unwrap();
            assert!(note.starts_with(&format!("{version}, {name} ")), "{note}");
        }
    }
}

#[test]
fn an_unknown_suite_is_refused_with_the_ones_there_are() {
    let (c, _s) = pair();
    let e = tx(&c, &spec(Some("TLS_RSA_WITH_NULL_MD5")), true)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("TLS_RSA_WITH_NULL_MD5"), "{e}");
    assert!(e.contains("TLS13_AES_128_GCM_SHA256"), "{e}");
    assert!(
        suites().iter().all(|s| !s.contains("RSA")),
        "{:?}",
        suites()
    );
}

#[test]
fn a_peer_that_never_answers_fails_the_handshake_in_time() {
    let (c, _s) = pair();
    let start = Instant::now();
    let e = tx(&c, &spec(None), true).err().unwrap().to_string();
    assert!(e.contains("handshake") && e.contains("no answer"), "{e}");
    assert!(start.elapsed() < HANDSHAKE + Duration::from_secs(2));
}

#[test]
fn a_peer_that_speaks_no_tls_fails_the_handshake() {
    let (c, s) = pair();
    let junk = thread::spawn(move || {
        let mut s = s;
        let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n");
        thread::sleep(Duration::from_millis(300));
    });
    let e = tx(&c, &spec(None), true).err().unwrap().to_string();
    assert!(e.contains("TLS handshake"), "{e}");
    junk.join().unwrap();
}

/// tls-rr's pipe: a 1 MiB request through a socket whose send buffer holds
/// far less (many records, many would-block returns on the way) is counted as
/// sent only once all of it is on the wire, so the requester's turn to
/// receive never waits on records the library still holds: the server gets
/// every byte in order and answers, and the client reads the answer.
#[test]
fn a_pipe_counts_a_message_sent_only_when_its_records_are_written() {
    let (c, s) = pair();
    socket2::SockRef::from(&c)
        .set_send_buffer_size(16 * 1024)
        .unwrap();
    let sp = spec(None);
    let mut request = vec![0u8; 1 << 20];
    netsonde_engine::fill_pattern(&mut request);
    let want = request.clone();
    let until = Instant::now() + Duration::from_secs(20);
    let server = thread::spawn(move || {
        let mut p = rr_pipe(&s, &sp, false).unwrap();
        let mut got = vec![0u8; 1 << 20];
        let mut off = 0;
        while off < got.len() && Instant::now() < until {
            match p.recv(&s, &mut got[off..]) {
                Ok(0) => break,
                Ok(n) => off += n,
                Err(e) if is_wait(&e) => {}
                Err(e) => panic!("{e}"),
            }
        }
        while p.send(&s, b"!").map_or_else(|e| is_wait(&e), |n| n == 0) {}
        (got, off)
    });
    let mut p = rr_pipe(&c, &spec(None), true).unwrap();
    let mut off = 0;
    while off < request.len() {
        assert!(Instant::now() < until, "sending stalled at {off}");
        match p.send(&c, &request[off..]) {
            Ok(n) => off += n,
            Err(e) if is_wait(&e) => {}
            Err(e) => panic!("{e}"),
        }
    }
    let mut answer = [0u8; 1];
    loop {
        assert!(Instant::now() < until, "no answer");
        match p.recv(&c, &mut answer) {
            Ok(1) => break,
            Ok(n) => panic!("read {n}"),
            Err(e) if is_wait(&e) => {}
            Err(e) => panic!("{e}"),
        }
    }
    let (got, n) = server.join().unwrap();
    assert_eq!(n, want.len());
    assert!(got == want, "the request arrived damaged");
    assert_eq!(&answer, b"!");
    assert!(p.report().note.unwrap().starts_with("TLS 1.3"));
}

/// A sender whose socket takes less than a record at a time (a small send
/// buffer, a slow reader) never reports a send of no plaintext: a TCP sender
/// takes 0 bytes for a closed peer. (Through a 50 ms lab link with `-w`,
/// every tls-stream failed so: a call that only flushed earlier records
/// returned 0 bytes.)
#[test]
fn a_send_that_only_flushes_earlier_records_is_never_zero_bytes() {
    let (c, s) = pair();
    socket2::SockRef::from(&c)
        .set_send_buffer_size(4096)
        .unwrap();
    socket2::SockRef::from(&s)
        .set_recv_buffer_size(4096)
        .unwrap();
    let sp = spec(None);
    let reader = thread::spawn(move || {
        let mut rx = rx(&s, &sp, false).unwrap();
        let mut got = 0usize;
        loop {
            // Slower than the sender's socket timeout (200 ms): its writes
            // time out part way.
            thread::sleep(Duration::from_millis(250));
            match rx.recv(Sock::Tcp(&s), &mut |d, _| got += d.len()) {
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(e) if is_wait(&e) => {}
                Err(e) => panic!("{e}"),
            }
        }
        got
    });
    let mut tx = tx(&c, &spec(None), true).unwrap();
    let (mut sent, mut waits) = (0u64, 0);
    let until = Instant::now() + Duration::from_millis(1500);
    while Instant::now() < until {
        match tx.send(Sock::Tcp(&c), 0, 0) {
            Ok(m) => {
                assert!(m.bytes > 0, "a send of no plaintext: {m:?}");
                sent += m.bytes;
            }
            Err(e) if is_wait(&e) => waits += 1,
            Err(e) => panic!("{e}"),
        }
    }
    tx.finish(Sock::Tcp(&c));
    c.shutdown(std::net::Shutdown::Write).unwrap();
    // What arrived is what was sealed, less what finish's one second could
    // not flush to so slow a reader.
    let got = reader.join().unwrap() as u64;
    assert!(got > 0 && got <= sent, "{got} of {sent}; {waits} waits");
}
