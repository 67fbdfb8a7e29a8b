//! Accuracy across a veth pair between two namespaces this test creates: the goodput
//! the client reports must match the interface's own byte counters within 2% once
//! header overhead is taken out. Needs root; skips out loud without it.

use std::process::Command;

use crate::util::{in_netns, is_root, NsServer, VethPair};

fn counter(ns: &str, dev: &str, name: &str) -> u64 {
    let out = Command::new("ip")
        .args([
            "netns",
            "exec",
            ns,
            "cat",
            &format!("/sys/class/net/{dev}/statistics/{name}"),
        ])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

fn skip(why: &str) -> bool {
    eprintln!("SKIPPED namespaces::veth_accuracy: {why}");
    true
}

#[test]
fn veth_goodput_matches_interface_counters() {
    if !is_root() && skip("needs root to create network namespaces") {
        return;
    }
    if Command::new("ip").arg("-V").output().is_err() && skip("iproute2 'ip' is not installed") {
        return;
    }
    let lab = VethPair::new("acc", "10.203.0", 1500);
    let (a, b, dev) = (
        lab.server.clone(),
        lab.client.clone(),
        lab.server_dev.clone(),
    );
    let server = NsServer::start(&a, "10.203.0.1");
    let rx0 = counter(&a, &dev, "rx_bytes");
    let pk0 = counter(&a, &dev, "rx_packets");
    let out = in_netns(&b)
        .args(["client", "10.203.0.1", "-t", "2", "--json"])
        .output()
        .unwrap();
    let rx = counter(&a, &dev, "rx_bytes") - rx0;
    let pk = counter(&a, &dev, "rx_packets") - pk0;
    drop(server);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let d = &doc["directions"][0];
    let reported = d["receiver_bytes_total"].as_u64().unwrap();
    assert_eq!(reported, d["sender_bytes_total"].as_u64().unwrap());
    // Every frame the server received carries Ethernet (14), IPv4 (20) and TCP with
    // timestamps (32) headers; veth counts a GRO/GSO aggregate as one packet with
    // one set of headers, so subtracting per counted packet is exact either way.
    // What remains is test payload, the segments the sender retransmitted
    // (on a busy host a veth reorders, and the sender resends: 2.2% of the
    // bytes once), and the small control connection traffic.
    let retransmitted: u64 = doc["client"]["flows"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["tcp_info"]["bytes_retrans"].as_u64())
        .sum();
    let payload = rx.saturating_sub(pk * (14 + 20 + 32) + retransmitted) as f64;
    let err = (payload - reported as f64).abs() / reported as f64;
    eprintln!("veth accuracy: reported {reported} B, interface payload {payload} B over {pk} packets: error {:.3}%", err * 100.0);
    assert!(
        err < 0.02,
        "reported {reported} vs interface {payload}: {:.2}%",
        err * 100.0
    );
    // And the goodput over the measured interval is consistent with the bytes.
    let goodput = d["goodput"].as_f64().unwrap();
    assert!(goodput > 0.0);
    drop(lab);
    let left = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let left = String::from_utf8_lossy(&left.stdout);
    assert!(
        !left.contains(&a) && !left.contains(&b),
        "namespaces left: {left}"
    );
}

/// Payload bytes the server's interface received since `rx0`/`pk0`: its bytes
/// less TCP/IPv4/Ethernet headers (with timestamps) per counted packet.
fn payload_since(ns: &str, dev: &str, rx0: u64, pk0: u64) -> f64 {
    let rx = counter(ns, dev, "rx_bytes") - rx0;
    let pk = counter(ns, dev, "rx_packets") - pk0;
    rx.saturating_sub(pk * (14 + 20 + 32)) as f64
}

fn within(a: f64, b: f64, what: &str) {
    let err = (a - b).abs() / b;
    eprintln!("{what}: {a} vs {b}: {:.3}%", err * 100.0);
    assert!(err < 0.05, "{what}: {a} vs {b}: {:.2}%", err * 100.0);
}

/// iperf3 interop, checked against the wire: an unmodified iperf3 client
/// against `netsonde server`, and `netsonde client --peer iperf3` against an
/// unmodified `iperf3 -s`, across a veth pair; what each side reports agrees
/// within 5% with the bytes the receiving interface counted.
#[test]
fn iperf3_interop_matches_interface_counters() {
    if !is_root() && skip("needs root to create network namespaces") {
        return;
    }
    let have = |b: &str| {
        Command::new(b)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !have("iperf3") && skip("no iperf3 binary (apt-get install iperf3)") {
        return;
    }
    let lab = VethPair::new("i3w", "10.204.0", 1500);
    let (a, b, dev) = (
        lab.server.clone(),
        lab.client.clone(),
        lab.server_dev.clone(),
    );
    let in_ns = |ns: &str, args: &[&str]| {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", ns]).args(args);
        c
    };
    let netsonde_in = |ns: &str, args: &[&str]| {
        let mut c = in_netns(ns);
        c.args(args);
        c
    };

    // iperf3 -c against netsonde server.
    let mut server = netsonde_in(
        &a,
        &[
            "server",
            "--bind",
            "10.204.0.1",
            "--port",
            "5201",
            "--no-store",
        ],
    )
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    let mut err = std::io::BufReader::new(server.stderr.take().unwrap());
    let mut first = String::new();
    std::io::BufRead::read_line(&mut err, &mut first).unwrap();
    assert!(first.contains("listening"), "{first}");
    let (rx0, pk0) = (
        counter(&a, &dev, "rx_bytes"),
        counter(&a, &dev, "rx_packets"),
    );
    let out = in_ns(&b, &["iperf3", "-c", "10.204.0.1", "-t", "2", "-J"])
        .output()
        .unwrap();
    let wire = payload_since(&a, &dev, rx0, pk0);
    let _ = server.kill();
    let _ = server.wait();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc.get("error").is_none(), "{}", doc["error"]);
    let end = &doc["end"];
    within(
        end["sum_received"]["bytes"].as_f64().unwrap(),
        wire,
        "netsonde server's received bytes vs the interface",
    );
    within(
        end["sum_sent"]["bytes"].as_f64().unwrap(),
        wire,
        "iperf3 client's sent bytes vs the interface",
    );

    // netsonde client --peer iperf3 against iperf3 -s.
    let mut iperf3 = in_ns(&a, &["iperf3", "-s", "-1", "-B", "10.204.0.1"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let (rx0, pk0) = (
        counter(&a, &dev, "rx_bytes"),
        counter(&a, &dev, "rx_packets"),
    );
    let mut out = None;
    for _ in 0..50 {
        let o = netsonde_in(
            &b,
            &[
                "client",
                "10.204.0.1",
                "--peer",
                "iperf3",
                "-t",
                "2",
                "--json",
                "--no-store",
            ],
        )
        .output()
        .unwrap();
        if o.status.success() {
            out = Some(o);
            break;
        }
        // iperf3 -s was not listening yet.
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let wire = payload_since(&a, &dev, rx0, pk0);
    let _ = iperf3.kill();
    let _ = iperf3.wait();
    let out = out.expect("netsonde client --peer iperf3 never ran");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let d = &doc["directions"][0];
    within(
        d["sender_bytes_total"].as_f64().unwrap(),
        wire,
        "netsonde client's sent bytes vs the interface",
    );
    within(
        d["receiver_bytes_total"].as_f64().unwrap(),
        wire,
        "iperf3 server's received bytes vs the interface",
    );
    drop(lab);
}
