//! Issue 37: what a daily iperf3 user trips on, checked against Debian's
//! iperf3: options in any order, `-J`'s `error` on failure, the JSON stream's
//! intervals and `error` event, no false byte-count mismatch, the receiver
//! iperf3's client uses by default, and each documented exit status.

use std::time::Duration;

use crate::iperf3::{iperf3, Iperf3Server};
use crate::util::{free_port, run, ServerProc};

fn out(args: &[&str]) -> (Option<i32>, String, String) {
    let o = run(args, Duration::from_secs(60));
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).to_string(),
        String::from_utf8_lossy(&o.stderr).to_string(),
    )
}

/// Options before `-c HOST` are taken as iperf3 takes them; `-c` without a
/// host is refused, not a silent loopback test.
#[test]
fn options_come_in_any_order_and_c_needs_a_host() {
    let srv = ServerProc::start_with(&[]);
    let p = srv.port.to_string();
    let (code, stdout, err) = out(&["-p", &p, "-t", "0.3", "-c", "127.0.0.1", "-J"]);
    assert_eq!(code, Some(0), "{err}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(doc["directions"][0]["bytes"].as_u64().unwrap() > 0, "{doc}");
    let (code, _, err) = out(&["-R", "-t", "0.3", "--port", &p, "--client=127.0.0.1"]);
    assert_eq!(code, Some(0), "{err}");
    let (code, stdout, err) = out(&["-t", "1", "-c"]);
    assert_eq!(code, Some(2), "{stdout}");
    assert!(err.contains("-c needs the server's host"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

/// `-J` prints iperf3's `{"error": ...}` when the test fails, and the JSON
/// stream its `error` event; the stream has an interval a second without -i.
#[test]
fn json_outputs_say_a_failure_and_the_stream_has_intervals() {
    let closed = free_port().to_string();
    let (code, stdout, err) = out(&["-c", "127.0.0.1", "-p", &closed, "-J"]);
    assert_eq!(code, Some(1), "{err}");
    let doc: serde_json::Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert!(
        doc["error"].as_str().unwrap().contains("cannot connect"),
        "{doc}"
    );
    let (_, stdout, _) = out(&["-c", "127.0.0.1", "-p", &closed, "--json-stream"]);
    let last: serde_json::Value =
        serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap();
    assert_eq!(last["event"], "error", "{stdout}");
    let srv = ServerProc::start_with(&[]);
    let (code, stdout, err) = out(&[
        "-c",
        "127.0.0.1",
        "-p",
        &srv.port.to_string(),
        "-t",
        "2",
        "--json-stream",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let intervals = stdout
        .lines()
        .filter(|l| l.contains("\"event\":\"interval\""))
        .count();
    assert!(intervals >= 2, "one a second: {stdout}");
}

/// Each exit status the man page documents.
#[test]
fn every_documented_exit_status() {
    // 2: bad arguments; a key that does not match; a request beyond the
    // server's limits: refused before any traffic.
    assert_eq!(out(&["client", "--no-such-flag"]).0, Some(2));
    let dir = std::env::temp_dir().join(format!("netsonde-exit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let key = |name: &str| {
        let k = dir.join(name);
        let (code, _, err) = out(&["keygen", "--out", k.to_str().unwrap()]);
        assert_eq!(code, Some(0), "{err}");
        k.to_str().unwrap().to_string()
    };
    let (a, b) = (key("a.key"), key("b.key"));
    let locked = ServerProc::start_with(&["--auth-key", &a]);
    let p = locked.port.to_string();
    let (code, _, err) = out(&[
        "client",
        "127.0.0.1",
        "-p",
        &p,
        "--auth-key",
        &b,
        "-t",
        "0.3",
    ]);
    assert_eq!(code, Some(2), "another key: {err}");
    let (code, _, err) = out(&["client", "127.0.0.1", "-p", &p, "-t", "0.3"]);
    assert_eq!(code, Some(2), "no key: {err}");
    let limited = ServerProc::start_with(&["--max-duration", "1s"]);
    let (code, _, err) = out(&[
        "client",
        "127.0.0.1",
        "-p",
        &limited.port.to_string(),
        "-t",
        "5",
    ]);
    assert_eq!(code, Some(2), "beyond the server's limit: {err}");
    assert!(err.contains("refused the test"), "{err}");
    // 1: the test failed (nothing listens).
    let closed = free_port().to_string();
    assert_eq!(out(&["client", "127.0.0.1", "-p", &closed]).0, Some(1));
    // 0, 3 and 4: a sweep, a regression, points left pending.
    let db = dir.join("e.db");
    let db = db.to_str().unwrap();
    let sweep = |scale: &str| {
        out(&[
            "sweep",
            "--engine",
            "fake",
            "--fake-scale",
            scale,
            "--tests",
            "tcp-stream",
            "--sizes",
            "64K",
            "--repeat",
            "5",
            "--no-report",
            "--db",
            db,
        ])
        .0
    };
    assert_eq!(sweep("1"), Some(0));
    assert_eq!(sweep("0.5"), Some(0));
    assert_eq!(out(&["compare", "1", "2", "--db", db]).0, Some(3));
    let (code, _, err) = out(&[
        "search",
        "--engine",
        "fake",
        "--frames",
        "64",
        "--max-trials",
        "1",
        "--no-report",
        "--db",
        db,
    ]);
    assert_eq!(code, Some(4), "a search whose trial budget ran out: {err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Against `iperf3 -s`, this end reads as iperf3's client does unless told
/// otherwise, and says which; a clean run claims no byte-count mismatch.
#[test]
fn against_iperf3_this_end_reads_as_iperf3_and_claims_no_false_mismatch() {
    if iperf3().is_none() {
        return;
    }
    for (extra, fast) in [
        (&[][..], false),
        (&["-R"][..], false),
        (&["--bidir"][..], false),
        (&["-R", "--iperf3-fast-receiver"][..], true),
    ] {
        let srv = Iperf3Server::start();
        let p = srv.1.to_string();
        let mut args = vec![
            "-c",
            "127.0.0.1",
            "-p",
            &p,
            "--peer",
            "iperf3",
            "-t",
            "2",
            "-J",
        ];
        args.extend_from_slice(extra);
        let (code, stdout, err) = out(&args);
        assert_eq!(code, Some(0), "{extra:?}: {err}");
        let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(
            doc["spec"]["iperf3_io"].as_bool().unwrap_or(false),
            !fast,
            "{extra:?}: {}",
            doc["spec"]
        );
        let warnings = doc["warnings"].to_string();
        assert!(
            !warnings.contains("byte-count-mismatch"),
            "{extra:?}: {warnings}"
        );
    }
    let (code, _, err) = out(&["client", "--iperf3-fast-receiver", "-t", "0.3"]);
    assert_eq!(code, Some(2), "{err}");
}

/// A stored iperf3 session says what ran as the iperf3 flags that ask for it
/// (issue 52: -u -b 0 was stored as paced at iperf3's default 1 Mbit/s, and
/// the label had no -l, -w, -b).
#[test]
fn a_stored_iperf3_session_is_labelled_with_its_flags() {
    if iperf3().is_none() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("netsonde-i3label-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("s.db");
    let db = db.to_str().unwrap();
    let srv = ServerProc::start_with(&["--db", db]);
    crate::iperf3::iperf3_client(srv.port, &["-t", "1", "-R", "-P", "2"]);
    crate::iperf3::iperf3_client(
        srv.port,
        &["-u", "-b", "0", "-l", "64", "-w", "8K", "-t", "1"],
    );
    let want = [
        "iperf3 client: tcp-stream -l 128K -P 2 -R -t 1",
        "iperf3 client: udp-stream -u -b 0 -l 64 -w 8K -t 1",
    ];
    let start = std::time::Instant::now();
    loop {
        let (_, listed, _) = out(&["runs", "list", "--db", db]);
        if want.iter().all(|w| listed.contains(w)) {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(15), "{listed}");
        std::thread::sleep(Duration::from_millis(200));
    }
    // Stored unpaced: no pacing rate in what it says of itself.
    let (_, shown, _) = out(&["runs", "show", "latest", "--db", db]);
    assert!(!shown.contains("pacing rate"), "{shown}");
    drop(srv);
    let _ = std::fs::remove_dir_all(&dir);
}
