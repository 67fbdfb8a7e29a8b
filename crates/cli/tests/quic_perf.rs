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
        netsonde_quic::perf_serve(sock, Instant::now() + Duration::from_secs(60), &s, t).unwrap()
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
    assert_eq!(totals.connections.load(Ordering::Relaxed), 4);
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
