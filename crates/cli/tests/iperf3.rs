//! Interop with Debian's `iperf3` binary (CI installs it): an unmodified iperf3
//! client against `netsonde server`, and `netsonde client --peer iperf3` against
//! an unmodified `iperf3 -s`, on loopback, for TCP, UDP, -R, --bidir and -P 4.
//! Each side's figures must agree within 5% with the other's.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{json, ServerProc};

/// The iperf3 binary, or `None` (the test says why and skips).
fn iperf3() -> Option<&'static str> {
    let ok = Command::new("iperf3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipped: no iperf3 binary (apt-get install iperf3)");
    }
    ok.then_some("iperf3")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Runs `iperf3 -c` with `-J` and returns its document, within a time limit.
fn iperf3_client(port: u16, args: &[&str]) -> serde_json::Value {
    iperf3_client_at("127.0.0.1", port, args)
}

fn iperf3_client_at(host: &str, port: u16, args: &[&str]) -> serde_json::Value {
    let mut child = Command::new("iperf3")
        .args(["-c", host, "-p", &port.to_string(), "-J"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("iperf3 -c {args:?} hung");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "iperf3 -c {args:?}: {e}: {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    assert!(
        doc.get("error").is_none(),
        "iperf3 -c {args:?} failed: {}",
        doc["error"]
    );
    doc
}

/// `iperf3 -s -1` on a free port, killed on drop.
struct Iperf3Server(Child, u16);

impl Iperf3Server {
    fn start() -> Iperf3Server {
        let port = free_port();
        let child = Command::new("iperf3")
            .args(["-s", "-1", "-B", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Listening once the kernel says so (its output is block-buffered into
        // a pipe, and a probe connection would be its one client).
        let hex = format!(":{port:04X} ");
        let start = Instant::now();
        while !std::fs::read_to_string("/proc/net/tcp")
            .unwrap_or_default()
            .lines()
            .any(|l| l.contains(&hex) && l.split_whitespace().nth(3) == Some("0A"))
        {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "iperf3 -s did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Iperf3Server(child, port)
    }
}

impl Drop for Iperf3Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn close(a: f64, b: f64, what: &str) {
    assert!(a > 0.0 && b > 0.0, "{what}: {a} and {b}");
    let r = a / b;
    assert!((0.95..=1.05).contains(&r), "{what}: {a} vs {b} ({r:.3})");
}

#[test]
fn an_iperf3_client_runs_every_kind_of_test_against_netsonde_server() {
    if iperf3().is_none() {
        return;
    }
    let srv = ServerProc::start();
    let cases: [&[&str]; 6] = [
        &[],
        &["-R"],
        &["--bidir"],
        &["-P", "4"],
        &["-u", "-b", "200M", "-l", "1400"],
        &["-u", "-b", "200M", "-l", "1400", "-R"],
    ];
    for args in cases {
        let mut all = vec!["-t", "2", "--get-server-output"];
        all.extend_from_slice(args);
        let doc = iperf3_client(srv.port, &all);
        let end = &doc["end"];
        if args.contains(&"-u") {
            // The sender's and the receiver's (netsonde's or iperf3's) counts.
            let sum = &end["sum"];
            let sent = &end["streams"][0]["udp"];
            close(
                sum["bits_per_second"].as_f64().unwrap(),
                200e6,
                &format!("{args:?} UDP rate"),
            );
            let lost = sum["lost_percent"].as_f64().unwrap();
            assert!(lost < 5.0, "{args:?}: {lost}% lost");
            assert!(
                sent["packets"].as_u64().unwrap() > 10_000,
                "{args:?}: {sent}"
            );
        } else {
            close(
                end["sum_sent"]["bytes"].as_f64().unwrap(),
                end["sum_received"]["bytes"].as_f64().unwrap(),
                &format!("{args:?} bytes sent vs received"),
            );
            close(
                end["sum_sent"]["bits_per_second"].as_f64().unwrap(),
                end["sum_received"]["bits_per_second"].as_f64().unwrap(),
                &format!("{args:?} rate at each end"),
            );
            if args.contains(&"--bidir") {
                close(
                    end["sum_sent_bidir_reverse"]["bytes"].as_f64().unwrap(),
                    end["sum_received_bidir_reverse"]["bytes"].as_f64().unwrap(),
                    "--bidir reverse bytes",
                );
            }
            let streams = end["streams"].as_array().unwrap().len();
            let want = if args.contains(&"-P") {
                4
            } else if args.contains(&"--bidir") {
                2
            } else {
                1
            };
            assert_eq!(streams, want, "{args:?}");
        }
        // The server's own report comes back (iperf3-shaped, with netsonde's
        // record of its side).
        let server = &doc["server_output_json"];
        assert!(
            server["netsonde"]["flows"]
                .as_array()
                .is_some_and(|f| !f.is_empty()),
            "{args:?}: {server}"
        );
    }
    // The server logged each session as its own, with the protocol.
    std::thread::sleep(Duration::from_millis(300));
    let ok = srv
        .lines()
        .iter()
        .filter(|l| l.contains("protocol=iperf3") && l.contains("outcome=ok"))
        .count();
    assert_eq!(ok, cases.len(), "{:?}", srv.lines());
}

#[test]
fn netsonde_drives_an_iperf3_server_for_every_kind_of_test() {
    if iperf3().is_none() {
        return;
    }
    let cases: [&[&str]; 6] = [
        &[],
        &["-R"],
        &["--bidir"],
        &["-P", "4"],
        &["-u", "-b", "200M"],
        &["-u", "-b", "200M", "-R"],
    ];
    for args in cases {
        let srv = Iperf3Server::start();
        let port = srv.1.to_string();
        let mut all = vec!["127.0.0.1", "--peer", "iperf3", "-p", &port, "-t", "2"];
        all.extend_from_slice(args);
        let doc = json(&all);
        assert_eq!(doc["peer"]["tool"], "iperf3", "{args:?}");
        let dirs = doc["directions"].as_array().unwrap();
        assert_eq!(
            dirs.len(),
            if args.contains(&"--bidir") { 2 } else { 1 },
            "{args:?}"
        );
        for d in dirs {
            // This end's count and iperf3's of the same stream.
            close(
                d["sender_bytes_total"].as_f64().unwrap(),
                d["receiver_bytes_total"].as_f64().unwrap(),
                &format!("{args:?} {} bytes", d["dir"]),
            );
            assert!(d["goodput"].as_f64().unwrap() > 0.0, "{args:?}");
            if args.contains(&"-u") {
                close(
                    d["goodput"].as_f64().unwrap(),
                    200e6,
                    &format!("{args:?} UDP goodput"),
                );
                assert!(d["loss"].as_f64().unwrap() < 5.0, "{args:?}: {d}");
            }
        }
        let flows = |side: &str| doc[side]["flows"].as_array().unwrap().len();
        let want = if args.contains(&"-P") {
            4
        } else if args.contains(&"--bidir") {
            2
        } else {
            1
        };
        assert_eq!((flows("client"), flows("server")), (want, want), "{args:?}");
        // This end measured itself as always.
        assert!(
            doc["client"]["cpu"]["busy_cores"].as_f64().is_some(),
            "{args:?}"
        );
    }
}

#[test]
fn a_busy_netsonde_server_denies_a_second_iperf3_client() {
    if iperf3().is_none() {
        return;
    }
    let srv = ServerProc::start();
    let port = srv.port;
    let first = std::thread::spawn(move || iperf3_client(port, &["-t", "3"]));
    std::thread::sleep(Duration::from_millis(800));
    let out = Command::new("iperf3")
        .args(["-c", "127.0.0.1", "-p", &port.to_string(), "-t", "1"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("busy"), "{text}");
    let doc = first.join().unwrap();
    assert!(doc["end"]["sum_received"]["bytes"].as_f64().unwrap() > 0.0);
}

#[test]
fn ipv6_on_loopback_for_netsonde_and_iperf3_clients() {
    if std::net::TcpListener::bind("[::1]:0").is_err() {
        eprintln!("skipped: no IPv6 loopback (::1) on this host");
        return;
    }
    let port = free_port();
    let srv = ServerProc::start_on(port, &["--bind", "::1"]);
    let p = srv.port();
    for args in [
        &["-t", "1"][..],
        &["-t", "1", "-u", "-b", "100M"],
        &["-t", "1", "-T", "tcp-rr"],
    ] {
        let mut all = vec!["[::1]", "-6", "--port", &p];
        all.extend_from_slice(args);
        let doc = json(&all);
        assert!(
            doc["server_address"].as_str().unwrap().starts_with("[::1]"),
            "{doc}"
        );
        let moved = doc["directions"][0]["goodput"]
            .as_f64()
            .or_else(|| doc["rr"]["transactions"].as_f64())
            .unwrap();
        assert!(moved > 0.0, "{args:?}");
    }
    if iperf3().is_some() {
        let doc = iperf3_client_at("::1", port, &["-6", "-t", "1"]);
        assert!(doc["end"]["sum_received"]["bytes"].as_f64().unwrap() > 0.0);
    }
}
