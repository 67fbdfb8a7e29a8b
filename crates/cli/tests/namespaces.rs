//! Accuracy across a veth pair between two namespaces this test creates: the goodput
//! the client reports must match the interface's own byte counters within 2% once
//! header overhead is taken out. Needs root; skips out loud without it.

use std::process::Command;

use crate::util::{bin, is_root, NsServer, VethPair};

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
    let out = Command::new("ip")
        .args([
            "netns",
            "exec",
            &b,
            bin(),
            "client",
            "10.203.0.1",
            "-t",
            "2",
            "--json",
        ])
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
    // What remains is test payload plus the small control connection traffic.
    let payload = rx.saturating_sub(pk * (14 + 20 + 32)) as f64;
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
