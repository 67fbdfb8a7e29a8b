//! MPTCP across two paths of different rates between two namespaces: a
//! `--mptcp` stream adds them up, and each subflow's share is reported.
//! Needs root and the kernel's MPTCP (`net.mptcp.enabled`); skips out loud
//! without them.

use crate::util::{ip, is_root, json_in, tbf, NsServer, VethPair};

/// Why this host cannot run the test, if it cannot.
fn missing() -> Option<&'static str> {
    if !is_root() {
        return Some("needs root for namespaces");
    }
    match std::fs::read_to_string("/proc/sys/net/mptcp/enabled") {
        Ok(v) if v.trim() == "1" => None,
        Ok(_) => Some("net.mptcp.enabled is 0"),
        Err(_) => Some("this kernel has no MPTCP"),
    }
}

/// The payload a TCP connection can carry at `rate` bit/s of Ethernet frames
/// of 1500-byte IP packets: 1448 bytes of each 1514 (timestamps on), less
/// MPTCP's data-sequence option (a DSS of 20 bytes on most segments).
fn payload_ceiling(rate: f64) -> f64 {
    rate * (1448.0 - 20.0) / 1514.0
}

#[test]
fn an_mptcp_stream_adds_up_two_paths_and_reports_each_subflow() {
    if let Some(why) = missing() {
        eprintln!("skipped: {why}");
        return;
    }
    // Path A: 10.231.1.0/30 at 100 Mbit/s; path B: 10.231.2.0/30 at 50 Mbit/s.
    let pair = VethPair::new("mp", "10.231.1", 1500);
    let (s, c) = (pair.server.as_str(), pair.client.as_str());
    ip(&[
        "link", "add", "vmp2s", "netns", s, "type", "veth", "peer", "name", "vmp2c", "netns", c,
    ]);
    ip(&["-n", s, "addr", "add", "10.231.2.1/30", "dev", "vmp2s"]);
    ip(&["-n", c, "addr", "add", "10.231.2.2/30", "dev", "vmp2c"]);
    ip(&["-n", s, "link", "set", "vmp2s", "up"]);
    ip(&["-n", c, "link", "set", "vmp2c", "up"]);
    tbf(c, "vmpc", "100mbit");
    tbf(c, "vmp2c", "50mbit");
    // The server announces its second address (with a port of its own, which
    // the kernel listens on for joins); the client accepts it and opens a
    // second subflow to it, over path B.
    for ns in [s, c] {
        ip(&[
            "-n",
            ns,
            "mptcp",
            "limits",
            "set",
            "subflow",
            "2",
            "add_addr_accepted",
            "2",
        ]);
    }
    ip(&[
        "-n",
        s,
        "mptcp",
        "endpoint",
        "add",
        "10.231.2.1",
        "port",
        "5301",
        "dev",
        "vmp2s",
        "signal",
    ]);
    let _server = NsServer::start(s, "10.231.1.1");
    let doc = json_in(
        c,
        &[
            "client",
            "10.231.1.1",
            "--port",
            "5300",
            "--mptcp",
            "-t",
            "4",
            "--warmup",
            "1",
            "--json",
            "--no-store",
        ],
    );
    let goodput = doc["directions"][0]["goodput"].as_f64().unwrap();
    let ceiling = payload_ceiling(150e6);
    assert!(
        goodput >= 0.9 * ceiling,
        "{:.1} Mbit/s over two paths, the sum's payload ceiling {:.1}",
        goodput / 1e6,
        ceiling / 1e6
    );
    assert!(goodput <= 1.02 * ceiling, "{goodput} above the links");
    // The sender's subflows: one per path, each carrying about its path's
    // share (2/3 and 1/3 of what was acknowledged).
    let subs = doc["client"]["flows"][0]["mptcp"]
        .as_array()
        .expect("subflows");
    assert_eq!(subs.len(), 2, "{subs:?}");
    let acked = |net: &str| -> f64 {
        subs.iter()
            .filter(|x| x["remote"].as_str().unwrap().starts_with(net))
            .map(|x| x["bytes_acked"].as_u64().unwrap() as f64)
            .sum()
    };
    let (a, b) = (acked("10.231.1."), acked("10.231.2."));
    let share_a = a / (a + b);
    eprintln!(
        "MPTCP over 100 + 50 Mbit/s: {:.1} Mbit/s, {:.1}% of the sum's payload ceiling \
         ({:.1}); path A carried {:.1}%, path B {:.1}%",
        goodput / 1e6,
        100.0 * goodput / ceiling,
        ceiling / 1e6,
        100.0 * share_a,
        100.0 * (1.0 - share_a)
    );
    assert!(
        (0.55..0.78).contains(&share_a),
        "path A carried {:.0}% (a {a} B, b {b} B)",
        100.0 * share_a
    );
}
