//! A control plane you can expose: authentication, abuse guards, and a server that
//! survives anything a client does (issue 6).

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use netsonde_model::spec::{TestKind, TestSpec};
use netsonde_proto::{Frame, Hello, Message};

use crate::util::{json, run, Raw, ServerProc};

fn key_file(dir: &std::path::Path, name: &str) -> String {
    let p = dir.join(name);
    let out = run(
        &["keygen", "--out", p.to_str().unwrap()],
        Duration::from_secs(10),
    );
    assert!(out.status.success());
    p.to_str().unwrap().to_string()
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("netsonde-cp-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Waits until the server's log has `n` lines matching `pred`, or 10 s.
fn wait_log(srv: &ServerProc, pred: impl Fn(&str) -> bool, n: usize) -> Vec<String> {
    let start = Instant::now();
    loop {
        let hits: Vec<String> = srv.lines().into_iter().filter(|l| pred(l)).collect();
        if hits.len() >= n || start.elapsed() > Duration::from_secs(10) {
            return hits;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Fails with exit status `code` (2: refused before any traffic, as the man
/// page says; 1: failed) and one line saying `needle`.
fn fails_with(args: &[&str], code: i32, needle: &str) {
    let out = run(args, Duration::from_secs(30));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    assert!(
        err.contains(needle),
        "{args:?}: expected '{needle}' in {err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

#[test]
fn authentication_outcomes() {
    let d = tmp("auth");
    let (a, b) = (key_file(&d, "a.key"), key_file(&d, "b.key"));
    let keyed = ServerProc::start_with(&["--auth-key", &a]);
    let open = ServerProc::start();
    // The right key works, and the whole session runs sealed.
    let doc = json(&[
        "127.0.0.1",
        "--port",
        &keyed.port(),
        "--auth-key",
        &a,
        "-T",
        "tcp-rr",
        "-t",
        "0.3",
    ]);
    assert!(doc["rr"]["transactions"].as_u64().unwrap() > 0);
    // Wrong key, no key, keyed client against an open server.
    fails_with(
        &[
            "client",
            "127.0.0.1",
            "--port",
            &keyed.port(),
            "--auth-key",
            &b,
            "-t",
            "1",
        ],
        2,
        "authentication failed",
    );
    fails_with(
        &["client", "127.0.0.1", "--port", &keyed.port(), "-t", "1"],
        2,
        "pass --auth-key FILE",
    );
    fails_with(
        &[
            "client",
            "127.0.0.1",
            "--port",
            &open.port(),
            "--auth-key",
            &a,
            "-t",
            "1",
        ],
        2,
        "refusing to run unauthenticated",
    );
    // No test traffic for any of them: the server logged each with zero bytes.
    let failed = wait_log(&keyed, |l| l.contains("outcome=failed"), 2);
    assert_eq!(failed.len(), 2, "{failed:?}");
    assert!(
        failed
            .iter()
            .all(|l| l.contains("bytes=0") && l.contains("auth=false")),
        "{failed:?}"
    );
    assert!(failed
        .iter()
        .any(|l| l.contains("wrong key") || l.contains("does not hold the same key")));
    assert!(failed.iter().any(|l| l.contains("client has no key")));
    // A key file others can read is refused with the fix, as bad input
    // (exit 2, as the man page's EXIT STATUS says).
    let loose = d.join("loose.key");
    std::fs::copy(&a, &loose).unwrap();
    std::os::unix::fs::PermissionsExt::set_mode(
        &mut std::fs::metadata(&loose).unwrap().permissions(),
        0o644,
    );
    std::fs::set_permissions(&loose, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    fails_with(
        &["client", "--auth-key", loose.to_str().unwrap(), "-t", "1"],
        2,
        "chmod 600",
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// A man in the middle: forwards both ways, recording what the client sent, and
/// flips one bit in the client's `flip`-th frame if asked.
fn proxy(to: String, flip: Option<usize>) -> (u16, std::thread::JoinHandle<Vec<u8>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let h = std::thread::spawn(move || {
        let (mut c, _) = l.accept().unwrap();
        let mut s = TcpStream::connect(to).unwrap();
        let (mut c2, mut s2) = (c.try_clone().unwrap(), s.try_clone().unwrap());
        let back = std::thread::spawn(move || {
            let _ = std::io::copy(&mut s2, &mut c2);
            let _ = c2.shutdown(Shutdown::Write);
        });
        let mut recorded = Vec::new();
        let mut frames = 0;
        loop {
            let mut len = [0u8; 4];
            if c.read_exact(&mut len).is_err() {
                break;
            }
            let n = u32::from_be_bytes(len) as usize;
            let mut body = vec![0u8; n];
            if c.read_exact(&mut body).is_err() {
                break;
            }
            if Some(frames) == flip && n > 20 {
                body[n / 2] ^= 0x04;
            }
            frames += 1;
            recorded.extend_from_slice(&len);
            recorded.extend_from_slice(&body);
            if s.write_all(&len).and_then(|_| s.write_all(&body)).is_err() {
                break;
            }
        }
        let _ = s.shutdown(Shutdown::Write);
        let _ = back.join();
        recorded
    });
    (port, h)
}

#[test]
fn tampered_frame_and_replayed_transcript_fail() {
    let d = tmp("mitm");
    let a = key_file(&d, "a.key");
    let srv = ServerProc::start_with(&["--auth-key", &a]);
    // Frames from the client: 0 hello, 1 padding (to an iperf3 cookie's
    // length), 2 auth-response, 3 setup (sealed): flip it.
    let (port, h) = proxy(srv.addr(), Some(3));
    fails_with(
        &[
            "client",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--auth-key",
            &a,
            "-t",
            "1",
        ],
        2,
        "tampered",
    );
    h.join().unwrap();
    let hits = wait_log(&srv, |l| l.contains("tampered"), 1);
    assert_eq!(hits.len(), 1, "{:?}", srv.lines());
    // Record an honest session's client bytes, then replay them on a new connection.
    let (port, h) = proxy(srv.addr(), None);
    let ok = run(
        &[
            "client",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            "--auth-key",
            &a,
            "-T",
            "tcp-rr",
            "-t",
            "0.3",
        ],
        Duration::from_secs(30),
    );
    assert!(ok.status.success());
    let transcript = h.join().unwrap();
    let mut s = TcpStream::connect(srv.addr()).unwrap();
    s.write_all(&transcript).unwrap();
    let _ = s.shutdown(Shutdown::Write);
    let mut sink = Vec::new();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = s.read_to_end(&mut sink);
    let hits = wait_log(
        &srv,
        |l| l.contains("outcome=failed") && l.contains("authentication failed"),
        1,
    );
    assert_eq!(hits.len(), 1, "{:?}", srv.lines());
    assert!(hits[0].contains("bytes=0"));
    let _ = std::fs::remove_dir_all(&d);
}

/// Waits until the server is back to its idle fd and thread counts.
fn back_to_idle(srv: &ServerProc, idle: (usize, usize), limit: Duration) -> (usize, usize) {
    let start = Instant::now();
    loop {
        let now = srv.fds_and_threads();
        if (now.0 <= idle.0 && now.1 <= idle.1) || start.elapsed() > limit {
            return now;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn slow_and_lying_peers_are_dropped_at_their_deadline() {
    let srv = ServerProc::start_with(&["--phase-timeout", "1s"]);
    std::thread::sleep(Duration::from_millis(200));
    let idle = srv.fds_and_threads();
    // One byte a second: dropped at the hello deadline, not kept alive by trickling.
    let mut slow = Raw::connect(&srv.addr());
    let hello = Frame::Hello(Hello::ours()).to_bytes();
    let t = Instant::now();
    let mut closed = false;
    for b in &hello[..3] {
        if slow.s.write_all(std::slice::from_ref(b)).is_err() {
            closed = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(600));
    }
    assert!(closed || slow.closed_within(Duration::from_secs(3)));
    assert!(t.elapsed() < Duration::from_secs(5));
    // Stops after the hello.
    let mut quiet = Raw::connect(&srv.addr());
    quiet.send(Frame::Hello(Hello::ours()));
    assert!(quiet.closed_within(Duration::from_secs(4)));
    // Data connections with a wrong token, a reused token, and never a start.
    let mut liar = Raw::connect(&srv.addr());
    let ack = liar.setup(TestSpec::new(TestKind::TcpStream));
    let data = format!("127.0.0.1:{}", ack.data_port);
    let mut wrong = TcpStream::connect(&data).unwrap();
    wrong
        .write_all(&netsonde_proto::message::encode_preamble(
            &netsonde_proto::Token([0; 16]),
            0,
        ))
        .unwrap();
    let mut good = TcpStream::connect(&data).unwrap();
    good.write_all(&netsonde_proto::message::encode_preamble(&ack.token, 0))
        .unwrap();
    let mut reused = TcpStream::connect(&data).unwrap();
    let _ = reused.write_all(&netsonde_proto::message::encode_preamble(&ack.token, 0));
    // No start: the session times out and everything is released.
    assert!(liar.closed_within(Duration::from_secs(4)));
    let reasons = wait_log(
        &srv,
        |l| l.contains("outcome=failed") || l.contains("outcome=dropped"),
        3,
    );
    assert!(reasons.len() >= 3, "{:?}", srv.lines());
    assert!(reasons.iter().all(|l| l.contains("reason=")), "{reasons:?}");
    drop((wrong, good, reused));
    let now = back_to_idle(&srv, idle, Duration::from_secs(8));
    assert!(
        now.0 <= idle.0 && now.1 <= idle.1,
        "leaked: idle {idle:?}, now {now:?}"
    );
    // And it still serves.
    let doc = json(&[
        "127.0.0.1",
        "--port",
        &srv.port(),
        "-T",
        "tcp-rr",
        "-t",
        "0.3",
    ]);
    assert!(doc["rr"]["transactions"].as_u64().unwrap() > 0);
}

/// 200 sessions, each killed at a random phase: a client process SIGKILLed at a
/// random moment, or a raw client that drops its socket after a random step.
#[test]
fn chaos_200_killed_sessions() {
    let srv = ServerProc::start_with(&["--phase-timeout", "1s", "--max-per-address", "64"]);
    std::thread::sleep(Duration::from_millis(200));
    let idle = srv.fds_and_threads();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut rnd = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let started = Instant::now();
    for i in 0..200 {
        if i % 5 == 0 {
            // A real client, SIGKILLed somewhere between connect and the end.
            let mut c = crate::util::cmd()
                .args([
                    "client",
                    "127.0.0.1",
                    "--port",
                    &srv.port(),
                    "-T",
                    if i % 2 == 0 { "tcp-stream" } else { "udp-rr" },
                    "-t",
                    "0.5",
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            std::thread::sleep(Duration::from_millis(rnd(400)));
            let _ = c.kill();
            let _ = c.wait();
        } else {
            let mut r = Raw::connect(&srv.addr());
            let step = rnd(4);
            if step >= 1 {
                r.send(Frame::Hello(Hello::ours()));
                let _ = r.recv();
            }
            if step >= 2 {
                let mut spec = TestSpec::new(TestKind::TcpRr);
                spec.duration = netsonde_model::units::Nanos::from_millis(300);
                r.send(Frame::Message(Message::Setup {
                    spec: Box::new(spec),
                }));
                let _ = r.recv();
            }
            if step >= 3 {
                r.send(Frame::Message(Message::Start));
            }
            drop(r);
        }
    }
    eprintln!("chaos: 200 sessions in {:?}", started.elapsed());
    let now = back_to_idle(&srv, idle, Duration::from_secs(15));
    assert!(
        now.0 <= idle.0 && now.1 <= idle.1,
        "leaked: idle {idle:?}, now {now:?}"
    );
    let t = Instant::now();
    let doc = json(&[
        "127.0.0.1",
        "--port",
        &srv.port(),
        "-T",
        "tcp-rr",
        "-t",
        "0.2",
    ]);
    assert!(doc["rr"]["transactions"].as_u64().unwrap() > 0);
    assert!(
        t.elapsed() < Duration::from_secs(2) + Duration::from_millis(900),
        "took {:?}",
        t.elapsed()
    );
    assert!(!srv.lines().iter().any(|l| l.contains("panicked")));
}

#[test]
fn load_64_clients_at_once() {
    let srv = ServerProc::start_with(&["--max-per-address", "100"]);
    let children: Vec<_> = (0..64)
        .map(|_| {
            crate::util::cmd()
                .args([
                    "client",
                    "127.0.0.1",
                    "--port",
                    &srv.port(),
                    "-T",
                    "tcp-rr",
                    "-t",
                    "0.3",
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let start = Instant::now();
    let (mut served, mut busy) = (0, 0);
    for c in children {
        let out = c.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        if out.status.success() {
            served += 1;
        } else {
            assert!(err.contains("busy"), "neither served nor told busy: {err}");
            busy += 1;
        }
    }
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "hung: {:?}",
        start.elapsed()
    );
    assert!(served >= 1, "nobody was served");
    let rss = srv.peak_rss_kib();
    eprintln!("load: 64 clients, {served} served, {busy} told busy, server peak RSS {rss} KiB");
    assert!(rss < 256 * 1024, "peak RSS {rss} KiB");
}

/// Random and mutated frames against a live server: it never panics or hangs, and
/// serves a well-formed client right after. 100,000 inputs.
#[test]
fn fuzzed_frames_against_a_live_server() {
    let srv = ServerProc::start_with(&["--phase-timeout", "1s", "--max-per-address", "64"]);
    let addr = srv.addr();
    let seeds: Vec<Vec<u8>> = {
        let hello = Frame::Hello(Hello::ours()).to_bytes();
        let setup = Frame::Message(Message::Setup {
            spec: Box::new(TestSpec::new(TestKind::TcpRr)),
        })
        .to_bytes();
        let start = Frame::Message(Message::Start).to_bytes();
        let mut hs = hello.clone();
        hs.extend_from_slice(&setup);
        let mut hss = hs.clone();
        hss.extend_from_slice(&start);
        vec![hello, hs, hss, Frame::Sealed(vec![0; 64]).to_bytes()]
    };
    let threads = 4;
    let per = 10_000;
    let started = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (addr, seeds) = (addr.clone(), seeds.clone());
            std::thread::spawn(move || {
                let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ (t as u64 + 1);
                let mut rnd = move || {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x
                };
                let mut batch = Vec::with_capacity(8192);
                for _ in 0..per {
                    // Several inputs share a connection when they are garbage that
                    // the server must read through; each connection is one input
                    // stream of 1..=8 mutated inputs.
                    batch.clear();
                    let k = 1 + (rnd() % 8) as usize;
                    for _ in 0..k {
                        let mut m = seeds[(rnd() % seeds.len() as u64) as usize].clone();
                        match rnd() % 5 {
                            0 => m = (0..(rnd() % 64)).map(|_| rnd() as u8).collect(),
                            1 => {
                                let n = m.len();
                                m.truncate((rnd() as usize) % (n + 1));
                            }
                            2 => {
                                for _ in 0..1 + rnd() % 4 {
                                    let n = m.len().max(1);
                                    let j = (rnd() as usize) % n;
                                    if let Some(b) = m.get_mut(j) {
                                        *b ^= 1 << (rnd() % 8);
                                    }
                                }
                            }
                            3 => {
                                // A random length field.
                                let n = m.len().min(4);
                                let len = (rnd() as u32).to_be_bytes();
                                m[..n].copy_from_slice(&len[..n]);
                            }
                            _ => {}
                        }
                        batch.extend_from_slice(&m);
                    }
                    let Ok(mut s) = TcpStream::connect(&addr) else {
                        continue;
                    };
                    let _ = s.write_all(&batch);
                    let _ = s.shutdown(Shutdown::Write);
                    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
                    let mut sink = [0u8; 4096];
                    while let Ok(n) = s.read(&mut sink) {
                        if n == 0 {
                            break;
                        }
                    }
                }
                per
            })
        })
        .collect();
    let mut inputs = 0;
    for h in handles {
        inputs += h.join().unwrap();
    }
    assert_eq!(inputs, 40_000);
    eprintln!(
        "fuzz: {inputs} connections of random and mutated frames in {:?}",
        started.elapsed()
    );
    assert!(srv.child.id() > 0);
    let doc = json(&[
        "127.0.0.1",
        "--port",
        &srv.port(),
        "-T",
        "tcp-rr",
        "-t",
        "0.3",
    ]);
    assert!(doc["rr"]["transactions"].as_u64().unwrap() > 0);
    assert!(!srv.lines().iter().any(|l| l.contains("panicked")));
}

#[test]
fn sigterm_drains_running_tests_then_exits_zero() {
    let mut srv = ServerProc::start();
    let port = srv.port();
    let client = std::thread::spawn(move || {
        run(
            &[
                "client",
                "127.0.0.1",
                "--port",
                &port,
                "-T",
                "tcp-rr",
                "-t",
                "2",
            ],
            Duration::from_secs(30),
        )
    });
    std::thread::sleep(Duration::from_millis(700));
    let st = Command::new("kill")
        .args(["-TERM", &srv.child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let out = client.join().unwrap();
    assert!(
        out.status.success(),
        "the running test was cut: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let start = Instant::now();
    let code = loop {
        if let Some(s) = srv.child.try_wait().unwrap() {
            break s.code();
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "server did not exit after draining"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(code, Some(0));
    // No new tests after SIGTERM.
    let out = run(
        &["client", "127.0.0.1", "--port", &srv.port(), "-t", "0.2"],
        Duration::from_secs(10),
    );
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn server_limits_are_reported_to_the_client() {
    let srv = ServerProc::start_with(&[
        "--max-duration",
        "2s",
        "--max-parallel",
        "2",
        "--log-format",
        "json",
    ]);
    let out = run(
        &["client", "127.0.0.1", "--port", &srv.port(), "-t", "5"],
        Duration::from_secs(10),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    // Refused before any traffic: 2, as the man page says.
    assert_eq!(out.status.code(), Some(2));
    assert!(
        err.contains("server limit: warm-up plus --time at most 2.00 s"),
        "{err}"
    );
    let out = run(
        &[
            "client",
            "127.0.0.1",
            "--port",
            &srv.port(),
            "-P",
            "4",
            "-t",
            "1",
        ],
        Duration::from_secs(10),
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("--parallel at most 2"));
    let lines = wait_log(&srv, |l| l.contains("\"outcome\":\"refused\""), 2);
    assert_eq!(lines.len(), 2, "{:?}", srv.lines());
    for l in lines {
        let v: serde_json::Value = serde_json::from_str(&l).expect("JSON log line");
        assert!(v["reason"].as_str().unwrap().starts_with("server limit"));
    }
}
