//! Encrypted tests end to end: `tls-stream` over loopback moves the bytes it
//! says, with the suite asked for, checked byte for byte; its verdict names the
//! encryption when that is what holds a thread; bad TLS input is refused
//! before any traffic; a sweep takes it beside tcp-stream.

use std::time::Duration;

use serde_json::Value;

use crate::sweeps::{ok, s, tmpdir};
use crate::util::{json, run};

/// Every direction's bytes arrived whole and every flow's strategy is TLS,
/// its note starting with `version, suite`.
fn check(doc: &Value, note_start: &str) {
    for d in doc["directions"].as_array().unwrap() {
        let (sent, got) = (
            d["sender_bytes_total"].as_u64().unwrap(),
            d["receiver_bytes_total"].as_u64().unwrap(),
        );
        assert!(sent > 0 && sent == got, "sent {sent}, received {got}");
    }
    for end in ["client", "server"] {
        for f in doc[end]["flows"].as_array().unwrap() {
            let io = &f["io"];
            assert_eq!(io["strategy"], "tls", "{end}: {io}");
            let note = io["note"].as_str().unwrap();
            assert!(note.starts_with(note_start), "{end}: {note}");
            if let Some(e) = io["verify_errors"].as_u64() {
                assert_eq!(e, 0, "{end}: damaged bytes");
            }
        }
    }
}

#[test]
fn a_tls_stream_arrives_whole_both_ways_under_tls_1_3() {
    let doc = json(&[
        "-T",
        "tls-stream",
        "--bidir",
        "-P",
        "2",
        "-t",
        "1",
        "-l",
        "40K",
        "--verify",
        "--no-store",
    ]);
    assert_eq!(doc["directions"].as_array().unwrap().len(), 2);
    check(&doc, "TLS 1.3, TLS13_");
    let checked: u64 = doc["server"]["flows"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["io"]["verify_errors"].as_u64())
        .count() as u64;
    assert!(checked >= 2, "--verify checked the receiving flows");
}

#[test]
fn a_suite_given_sets_the_version_and_is_the_one_used() {
    for (suite, version) in [
        ("TLS13_CHACHA20_POLY1305_SHA256", "TLS 1.3"),
        ("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS 1.2"),
    ] {
        let doc = json(&[
            "-T",
            "tls-stream",
            "-R",
            "-t",
            "0.5",
            "--tls-suite",
            suite,
            "--no-store",
        ]);
        check(&doc, &format!("{version}, {suite} "));
    }
}

#[test]
fn a_saturated_tls_thread_is_called_encryption_bound() {
    let doc = json(&["-T", "tls-stream", "-t", "1", "--no-store"]);
    let v = &doc["diagnosis"];
    let text = v.to_string();
    // On loopback one end's flow thread is the limit; whichever it is, its
    // user time is the crypto, which the verdict says and advises on.
    if text.contains("flow thread") {
        assert!(text.contains("encryption is the limit"), "{text}");
        assert!(text.contains("--tls-suite"), "{text}");
    } else {
        panic!("a loopback TLS stream not bound by a flow thread: {text}");
    }
}

#[test]
fn bad_tls_input_is_refused_before_traffic() {
    for (args, says) in [
        (
            &["-T", "tls-stream", "--tls-suite", "TLS_RSA_WITH_NULL_MD5"][..],
            "not a suite netsonde has",
        ),
        (
            &[
                "-T",
                "tcp-stream",
                "--tls-suite",
                "TLS13_AES_128_GCM_SHA256",
            ][..],
            "only a TLS test encrypts",
        ),
        (
            &["-T", "tls-stream", "--io", "batch"][..],
            "TLS writes and reads its own records",
        ),
    ] {
        let mut all = vec!["client"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["-t", "0.3", "--no-store"]);
        let out = run(&all, Duration::from_secs(30));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{all:?}: {err}");
        assert!(err.contains(says), "{all:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    }
}

#[test]
fn a_sweep_takes_tls_beside_tcp() {
    let d = tmpdir("tls-sweep");
    let db = d.join("tls.db");
    let out = ok(&[
        "sweep",
        "--tests",
        "tcp-stream,tls-stream",
        "--directions",
        "out",
        "--sizes",
        "16K",
        "--repeat",
        "1",
        "-t",
        "0.3",
        "--no-report",
        "--db",
        s(&db),
    ]);
    let lines: Vec<&str> = out.lines().collect();
    for t in ["tcp-stream", "tls-stream"] {
        assert!(
            lines.iter().any(|l| l.contains(t) && l.contains("bit/s")),
            "no {t} point with a goodput: {out}"
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}
