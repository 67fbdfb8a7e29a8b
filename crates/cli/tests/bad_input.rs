//! Bad input of every kind: one clear line on stderr, a non-zero exit, no panic, no
//! hang.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::Duration;

use crate::util::run;

/// Runs and checks: exit code `code`, one line on stderr containing `needle`.
fn fails(args: &[&str], code: i32, needle: &str) {
    let out = run(args, Duration::from_secs(30));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    assert!(
        err.contains(needle),
        "{args:?}: expected '{needle}' in: {err}"
    );
    if code == 1 {
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "{args:?}: not one line: {err}"
        );
    }
}

/// Issue 51: a label is one printable line; the store's location can come
/// from the environment or a file (no password in the arguments), and a file
/// that names none is said so, without quoting it.
#[test]
fn labels_are_printable_and_the_store_comes_from_a_file_or_the_environment() {
    fails(
        &["sweep", "--engine", "fake", "--label", "a\u{1b}[31mred"],
        2,
        "a label is printable text on one line",
    );
    let dir = std::env::temp_dir().join(format!("netsonde-dbfile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("s.db");
    let sweep = [
        "sweep",
        "--engine",
        "fake",
        "--no-report",
        "--repeat",
        "1",
        "--tests",
        "tcp-stream",
        "--sizes",
        "1K",
        "-q",
    ];
    let named = dir.join("url");
    std::fs::write(&named, format!("\n{}\n", db.display())).unwrap();
    let mut args = sweep.to_vec();
    args.extend(["--db-file", named.to_str().unwrap()]);
    let out = run(&args, Duration::from_secs(60));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed = crate::util::cmd()
        .args(["runs", "list"])
        .env("NETSONDE_DB", &db)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&listed.stdout);
    assert_eq!(text.lines().count(), 2, "{text}");
    let empty = dir.join("empty");
    std::fs::write(&empty, "\n  \n").unwrap();
    fails(
        &["runs", "list", "--db-file", empty.to_str().unwrap()],
        2,
        "the file names no database",
    );
    let keywords = dir.join("keywords");
    std::fs::write(&keywords, "host=db user=u password=secret dbname=x\n").unwrap();
    let out = run(
        &["runs", "list", "--db-file", keywords.to_str().unwrap()],
        Duration::from_secs(30),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.contains("secret"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_arguments() {
    fails(
        &["client", "-l", "0"],
        2,
        "--size must be between 1 B and 1 GiB",
    );
    fails(
        &["client", "-l", "2G"],
        2,
        "--size must be between 1 B and 1 GiB",
    );
    fails(&["client", "-t", "-5"], 2, "error");
    fails(&["client", "--time=-5"], 2, "out of range");
    fails(&["client", "-t", "100000000"], 2, "--time must be between");
    fails(&["client", "-t", "0"], 2, "--time must be between");
    fails(&["client", "-T", "tcp-foo"], 2, "unknown test 'tcp-foo'");
    fails(
        &["client", "-T", "tcp-rr", "--bidir"],
        2,
        "--bidir makes no sense with tcp-rr",
    );
    fails(
        &["client", "-T", "udp-stream", "-M", "1000"],
        2,
        "--mss makes no sense",
    );
    fails(&["client", "-l", "12XB"], 2, "unknown unit");
    fails(&["client", "-b", "10GB/s"], 2, "unknown unit");
    fails(
        &["client", "-P", "0"],
        2,
        "--parallel must be between 1 and 256",
    );
    fails(
        &["client", "-T", "tcp-rr", "-l", "100"],
        2,
        "--size makes no sense with tcp-rr",
    );
    fails(
        &["client", "-A", "999", "-t", "0.2"],
        2,
        "may not run on core 999 (its CPU mask allows ",
    );
    fails(
        &["client", "-C", "nosuchcc", "-t", "0.2"],
        1,
        "TCP_CONGESTION",
    );
}

#[test]
fn refused_and_unresolvable_hosts() {
    // A port where nothing listens.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    fails(
        &[
            "client",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "-t",
            "1",
        ],
        1,
        "cannot connect to 127.0.0.1",
    );
    fails(
        &["client", "no-such-host.invalid", "-t", "1"],
        1,
        "cannot resolve 'no-such-host.invalid'",
    );
}

#[test]
fn wrong_protocol_version() {
    // A fake server that answers with a hello of version 99.
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port().to_string();
    let t = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let mut buf = [0u8; 23];
        let _ = s.read_exact(&mut buf);
        let mut hello = vec![0, 0, 0, 19, 1];
        hello.extend_from_slice(b"NETSONDE");
        hello.extend_from_slice(&99u16.to_be_bytes());
        hello.extend_from_slice(&[0; 8]);
        s.write_all(&hello).unwrap();
        std::thread::sleep(Duration::from_millis(200));
    });
    fails(
        &["client", "127.0.0.1", "--port", &port, "-t", "1"],
        2,
        "peer speaks version 99",
    );
    t.join().unwrap();
}

#[test]
fn a_server_that_is_not_netsonde() {
    // Something that answers with HTTP.
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port().to_string();
    let t = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n");
        std::thread::sleep(Duration::from_millis(200));
    });
    fails(
        &["client", "127.0.0.1", "--port", &port, "-t", "1"],
        1,
        "bad frame from peer",
    );
    t.join().unwrap();
}

#[test]
fn a_server_that_says_nothing_times_out() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port().to_string();
    let t = std::thread::spawn(move || {
        let (_s, _) = l.accept().unwrap();
        std::thread::sleep(Duration::from_secs(7));
    });
    // Not a netsonde server (as `iperf3 -s`): what was asked needs --peer
    // iperf3, so bad input, exit 2 as the man page's EXIT STATUS says.
    fails(
        &["client", "127.0.0.1", "--port", &port, "-t", "1"],
        2,
        "accepted the connection but sent no netsonde hello",
    );
    t.join().unwrap();
    // A key file that is not there: bad input too.
    fails(
        &[
            "client",
            "--auth-key",
            "/nonexistent/netsonde.key",
            "-t",
            "1",
        ],
        2,
        "reading key file /nonexistent/netsonde.key",
    );
}

/// A server whose listen queue is full drops the SYN: `--connect-timeout`
/// bounds the wait, and the error says so in one line. The other new flags'
/// bad values are refused with the flag named.
#[test]
fn connect_timeout_and_volume_flags() {
    let l = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    l.bind(&std::net::SocketAddr::from(([127, 0, 0, 1], 0)).into())
        .unwrap();
    l.listen(0).unwrap();
    let addr = l.local_addr().unwrap().as_socket().unwrap();
    // Fill the queue (never accepted); the next connection's SYN is dropped.
    let mut fill = Vec::new();
    for _ in 0..3 {
        let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        s.set_nonblocking(true).unwrap();
        let _ = s.connect(&addr.into());
        fill.push(s);
    }
    std::thread::sleep(Duration::from_millis(100));
    let port = addr.port().to_string();
    let start = std::time::Instant::now();
    fails(
        &[
            "client",
            "127.0.0.1",
            "-p",
            &port,
            "--connect-timeout",
            "300ms",
            "--no-store",
        ],
        1,
        "cannot connect to 127.0.0.1",
    );
    assert!(
        start.elapsed() < Duration::from_secs(4),
        "{:?}",
        start.elapsed()
    );
    drop(fill);
    fails(
        &["client", "-n", "0"],
        2,
        "--bytes/--blockcount must be above 0",
    );
    fails(
        &["client", "-T", "tcp-rr", "-n", "1M"],
        2,
        "only stream tests end by volume",
    );
    fails(&["client", "-n", "1M", "-k", "5"], 2, "cannot be used with");
    fails(
        &["client", "--rcv-timeout", "1ms"],
        2,
        "--rcv-timeout must be",
    );
    fails(
        &["client", "--logfile", "/dev/null"],
        2,
        "not a regular file",
    );
    fails(
        &["client", "--cport", "65535", "-P", "2"],
        2,
        "need ports up to 65536",
    );
}

/// Issue 27: a bare command prints its usage on several lines (not one line of
/// 2,195 characters) and exits 2; -V is the version everywhere; a ratio given
/// as a bare number says how to write a percentage.
#[test]
fn usage_version_and_ratios_are_said_plainly() {
    for args in [&[][..], &["runs"][..], &["lab"][..]] {
        let out = run(args, Duration::from_secs(30));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.lines().count() > 5, "{args:?}: one line: {err}");
        assert!(err.contains("Usage: netsonde"), "{args:?}: {err}");
        assert!(err.lines().all(|l| l.len() < 400), "{args:?}: {err}");
    }
    for cmd in ["client", "server", "sweep", "search", "runs"] {
        let out = run(&[cmd, "-V"], Duration::from_secs(30));
        assert!(out.status.success(), "{cmd} -V: {out:?}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains(env!("CARGO_PKG_VERSION")),
            "{cmd} -V: {out:?}"
        );
    }
    fails(
        &["search", "--precision", "10"],
        2,
        "write 10% for 10 percent (or 0.1)",
    );
    fails(
        &["search", "--precision", "150%"],
        2,
        "at least 0 and below 100%",
    );
    // A conflict known before connecting is a usage error (exit 2), not a
    // failed test: nothing listens on port 9 of loopback.
    fails(
        &[
            "client",
            "--peer",
            "iperf3",
            "-T",
            "tcp-rr",
            "127.0.0.1",
            "-p",
            "9",
        ],
        2,
        "iperf3 runs stream tests only",
    );
}

/// Issue 35: the probe options need probes, which `--rrul` runs as `--probe`
/// does: `--rrul --probe-idle 0.5` is taken, `--probe-idle` alone refused.
#[test]
fn rrul_takes_the_probe_options() {
    fails(
        &["client", "--probe-idle", "0.2", "-t", "1"],
        2,
        "<--probe|--rrul>",
    );
    let out = run(
        &[
            "client",
            "--rrul",
            "--probe-idle",
            "0.5",
            "--probe-rate",
            "10",
            "-t",
            "0.5",
            "--no-store",
            "--json",
        ],
        Duration::from_secs(60),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert!(
        doc["load"].is_object() || doc["spec"]["probe"].is_object(),
        "{doc}"
    );
}

#[test]
fn transport_options_on_tests_they_do_not_fit_are_refused_before_traffic() {
    fails(
        &["client", "-T", "udp-stream", "--mptcp", "-t", "0.3"],
        2,
        "--mptcp makes no sense with udp-stream",
    );
    fails(
        &["client", "-T", "tcp-crr", "--mptcp", "-t", "0.3"],
        2,
        "--mptcp makes no sense with tcp-crr",
    );
    fails(
        &["client", "-T", "tcp-stream", "--no-gso", "-t", "0.3"],
        2,
        "--no-gso makes no sense with tcp-stream",
    );
}
