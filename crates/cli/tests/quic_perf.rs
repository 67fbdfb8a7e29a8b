//! `--peer quic-perf`: netsonde's client against a QUIC perf server
//! (draft-banks-quic-performance-00) with no control connection. The server
//! here is `netsonde_quic::perf_serve`, which answers any perf client's
//! requests and counts what it read and sent itself, so the client's figures
//! are checked against the server's own count. (Against another stack's perf
//! server, quinn's: bench/quic-perf.sh.)

use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use netsonde_quic::PerfTotals;
use serde_json::Value;

use crate::util::{json, run};

/// A perf server on a loopback port for up to a minute: its port, its
/// counts, and what stops it.
fn perf_server() -> (
    u16,
    Arc<PerfTotals>,
    Arc<AtomicBool>,
    std::thread::JoinHandle<()>,
) {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = sock.local_addr().unwrap().port();
    let totals = Arc::new(PerfTotals::default());
    let stop = Arc::new(AtomicBool::new(false));
    let (t, s) = (totals.clone(), stop.clone());
    let h = std::thread::spawn(move || {
        let limits = netsonde_quic::PerfLimits {
            connections: 4,
            answer: Duration::from_secs(30),
        };
        netsonde_quic::perf_serve(
            sock,
            Instant::now() + Duration::from_secs(60),
            &s,
            limits,
            t,
        )
        .unwrap()
    });
    (port, totals, stop, h)
}

fn sum(doc: &Value, end: &str, key: &str) -> u64 {
    doc[end]["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f[key].as_u64().unwrap())
        .sum()
}

#[test]
fn a_quic_perf_server_is_measured_both_ways_and_by_request() {
    let (port, totals, stop, h) = perf_server();
    let port = port.to_string();
    let base = [
        "client",
        "127.0.0.1",
        "-p",
        &port,
        "--peer",
        "quic-perf",
        "--no-store",
    ];
    let with = |extra: &[&str]| {
        let mut a: Vec<&str> = base[1..].to_vec();
        a.extend_from_slice(extra);
        json(&a)
    };
    // Upload, two connections: every byte the client says it sent, the
    // server read (its empty answer confirmed it), and its own count agrees.
    let read_before = totals.read.load(Ordering::Relaxed);
    let up = with(&["-T", "quic-stream", "-P", "2", "-t", "1", "-l", "16K"]);
    let sent = sum(&up, "client", "bytes_total");
    assert!(sent > 1_000_000, "{sent} bytes");
    assert_eq!(totals.read.load(Ordering::Relaxed) - read_before, sent);
    let d = &up["directions"][0];
    assert!(d["goodput"].as_f64().unwrap() > 1e7, "{d}");
    assert_eq!(d["sender_bytes_total"], d["receiver_bytes_total"]);
    assert!(
        up["server_address"]
            .as_str()
            .unwrap_or("")
            .contains("QUIC perf server")
            || up["server"].is_object()
    );
    // Download: the client asks for no end and stops at its own; the server
    // sent at least what it read.
    let sent_before = totals.sent.load(Ordering::Relaxed);
    let down = with(&["-T", "quic-stream", "-R", "-t", "1"]);
    let got = sum(&down, "client", "bytes_total");
    assert!(got > 1_000_000, "{got} bytes");
    assert!(totals.sent.load(Ordering::Relaxed) - sent_before >= got);
    // Request/response: a stream per transaction, each answered.
    let requests = totals.requests.load(Ordering::Relaxed);
    let rr = with(&[
        "-T",
        "quic-rr",
        "-t",
        "1",
        "--request-size",
        "200",
        "--response-size",
        "3000",
    ]);
    let done = rr["rr"]["transactions"].as_u64().unwrap();
    assert!(done > 100, "{done} transactions");
    assert!(rr["rr"]["latency"]["p50"].as_u64().unwrap() > 0);
    let answered = totals.requests.load(Ordering::Relaxed) - requests;
    let whole = rr["rr"]["client_transactions_total"].as_u64().unwrap();
    assert!(
        answered >= whole && answered <= whole + 1,
        "{answered} for {whole}"
    );
    // Three streams on one connection: three requests, every byte read.
    let (read, requests) = (
        totals.read.load(Ordering::Relaxed),
        totals.requests.load(Ordering::Relaxed),
    );
    let three = with(&["-T", "quic-stream", "--quic-streams", "3", "-t", "1"]);
    assert_eq!(totals.requests.load(Ordering::Relaxed) - requests, 3);
    assert_eq!(
        totals.read.load(Ordering::Relaxed) - read,
        sum(&three, "client", "bytes_total")
    );
    // A connection per transaction: each one a connection the server took
    // and a request it answered.
    let (conns, requests) = (
        totals.connections.load(Ordering::Relaxed),
        totals.requests.load(Ordering::Relaxed),
    );
    let crr = with(&["-T", "quic-crr", "-t", "0.5"]);
    let whole = crr["rr"]["client_transactions_total"].as_u64().unwrap();
    assert!(whole > 20, "{whole} connections");
    assert_eq!(totals.connections.load(Ordering::Relaxed) - conns, whole);
    assert_eq!(totals.requests.load(Ordering::Relaxed) - requests, whole);
    assert_eq!(totals.connections.load(Ordering::Relaxed), 5 + whole);
    // What a perf server cannot run is refused before traffic, in a line.
    for (args, says) in [
        (&["-T", "tcp-stream"][..], "cannot run tcp-stream"),
        (
            &["-T", "quic-stream", "-R", "--verify"][..],
            "--verify on bytes it sends",
        ),
    ] {
        let mut a = base.to_vec();
        a.extend_from_slice(args);
        a.extend_from_slice(&["-t", "0.3"]);
        let out = run(&a, Duration::from_secs(30));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{a:?}: {err}");
        assert!(
            err.contains(says) && err.trim().lines().count() == 1,
            "{err}"
        );
    }
    stop.store(true, Ordering::Relaxed);
    h.join().unwrap();
}

/// `netsonde server --quic-perf PORT` answers any perf client beside its own
/// (here netsonde's, as `--peer quic-perf`): uploads, downloads and requests;
/// on SIGTERM it says what it answered. With `--auth-key` it is refused (the
/// perf protocol cannot authenticate a client).
#[test]
fn a_netsonde_server_answers_quic_perf_clients() {
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = udp.local_addr().unwrap().port().to_string();
    drop(udp);
    let mut srv = crate::util::ServerProc::start_with(&[
        "--quic-perf",
        &port,
        "--no-store",
        "--metrics",
        "127.0.0.1:0",
    ]);
    let said = |what: &str| srv.lines().iter().any(|l| l.contains(what));
    let until = Instant::now() + Duration::from_secs(5);
    while !said("QUIC perf server on udp") && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(said("QUIC perf server on udp"), "{:?}", srv.lines());
    let c = [
        "127.0.0.1",
        "-p",
        &port,
        "--peer",
        "quic-perf",
        "--no-store",
        "-t",
        "0.5",
    ];
    let mut up = c.to_vec();
    up.extend_from_slice(&["-T", "quic-stream"]);
    let doc = json(&up);
    let d = &doc["directions"][0];
    assert!(d["bytes"].as_u64().unwrap() > 100_000, "{d}");
    let mut rr = c.to_vec();
    rr.extend_from_slice(&["-T", "quic-rr"]);
    let doc = json(&rr);
    let whole = doc["rr"]["client_transactions_total"].as_u64().unwrap();
    assert!(whole > 50, "{whole} transactions");
    // --metrics serves its perf server's counts as they grow.
    let metrics = srv
        .lines()
        .iter()
        .find_map(|l| {
            l.split("metrics on http://")
                .nth(1)
                .and_then(|a| a.strip_suffix("/metrics"))
                .map(str::to_string)
        })
        .expect("the metrics address");
    let text = crate::fleet::http_get(&metrics, "/metrics").unwrap();
    let value = |series: &str| -> u64 {
        text.lines()
            .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
            .unwrap_or_else(|| panic!("{series} in {text}"))
    };
    assert_eq!(
        value(r#"netsonde_quic_perf_connections_total{outcome="accepted"}"#),
        2
    );
    assert!(value("netsonde_quic_perf_requests_total") > whole, "{text}");
    assert!(value(r#"netsonde_quic_perf_bytes_total{direction="read"}"#) > 100_000);
    // SIGTERM: it drains and says what its perf server answered.
    let st = std::process::Command::new("kill")
        .args(["-TERM", &srv.child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let start = Instant::now();
    let code = loop {
        if let Some(s) = srv.child.try_wait().unwrap() {
            break s.code();
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "no exit after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(code, Some(0), "{:?}", srv.lines());
    std::thread::sleep(Duration::from_millis(100));
    let line = srv
        .lines()
        .into_iter()
        .find(|l| l.contains("QUIC perf:"))
        .unwrap_or_default();
    let requests: u64 = line
        .split(" requests")
        .next()
        .and_then(|p| p.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(line.contains("2 connections (0 refused)"), "{line}");
    assert!(
        requests > whole,
        "{line}: {whole} transactions and an upload"
    );
    // Not with a key.
    let dir = crate::sweeps::tmpdir("quic-perf-key");
    let key = dir.join("key");
    let k = key.to_str().unwrap();
    assert!(run(&["keygen", "--out", k], Duration::from_secs(10))
        .status
        .success());
    let out = run(
        &["server", "--quic-perf", &port, "--auth-key", k, "-p", "1"],
        Duration::from_secs(10),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("not with --auth-key"), "{err}");
}

/// Issue 54: `--peer quic-perf` at a closed port fails from the ICMP and says the
/// port is closed (it waited out quinn's 5 s handshake timeout, deaf to the
/// ICMP port unreachable), in one line, with a non-zero exit.
#[test]
fn a_quic_perf_peer_at_a_closed_port_is_named_at_once() {
    let closed = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port().to_string();
    drop(closed);
    let out = run(
        &[
            "client",
            "127.0.0.1",
            "-p",
            &port,
            "--peer",
            "quic-perf",
            "-T",
            "quic-stream",
            "-t",
            "1",
            "--no-store",
        ],
        Duration::from_secs(30),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("port is closed") && err.contains(&port),
        "{err}"
    );
    // Heard from the ICMP, not guessed from the 5 s handshake timeout.
    assert!(!err.contains("no answer"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}
