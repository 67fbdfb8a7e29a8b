//! Where the cycles go: each end's CPU breakdown (its flow threads sampled with
//! call chains) agrees with their CPU clocks, sees a copy that sendfile removes,
//! and sees TLS's encryption as its timed crypto does. In the `quiet` binary:
//! other tests beside it would take the cores these figures are read on.

use serde_json::Value;

use crate::util::json;

/// The end's breakdown, or `None` after saying why it was not taken (no
/// permission to sample: the test is skipped).
fn taken<'a>(doc: &'a Value, side: &str) -> Option<&'a Value> {
    let p = &doc[side]["cpu"]["profile"];
    if p["state"] == "taken" {
        return Some(p);
    }
    eprintln!("skipped: {side}'s breakdown not taken: {}", p["why"]);
    None
}

/// `category`'s microseconds per KiB at `side`.
fn per_kib(doc: &Value, side: &str, category: &str) -> f64 {
    doc[format!("{side}_cost")]["breakdown"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["category"] == category)
        .map_or(0.0, |c| c["us_per_kib"].as_f64().unwrap_or(0.0))
}

/// `category`'s share of `side`'s classified samples.
fn share(p: &Value, category: &str) -> f64 {
    let cats = p["categories"].as_array().unwrap();
    let all: f64 = cats.iter().map(|c| c["samples"].as_f64().unwrap()).sum();
    cats.iter()
        .find(|c| c["category"] == category)
        .map_or(0.0, |c| c["samples"].as_f64().unwrap() / all)
}

/// `category`'s samples in user space, as a share of `side`'s classified
/// samples.
fn user_share(p: &Value, category: &str) -> f64 {
    let cats = p["categories"].as_array().unwrap();
    let all: f64 = cats.iter().map(|c| c["samples"].as_f64().unwrap()).sum();
    cats.iter()
        .find(|c| c["category"] == category)
        .map_or(0.0, |c| c["user"].as_f64().unwrap_or(0.0) / all)
}

#[test]
fn each_ends_sampled_cpu_agrees_with_its_threads_clocks() {
    let _alone = crate::lab_util::serial();
    let doc = json(&["-t", "2", "--warmup", "0.5", "--cpu-breakdown", "on"]);
    for side in ["client", "server"] {
        let Some(p) = taken(&doc, side) else { return };
        let samples = p["samples"].as_f64().unwrap();
        let sampled = samples * p["period"].as_f64().unwrap();
        // Their CPU clocks over the window the samples cover.
        let clocks = p["clock"].as_f64().unwrap();
        let ratio = sampled / clocks;
        // A thread that ran most of the interval (the sender) within 10%. One
        // that sleeps and wakes all the time (the receiver) gains samples on a
        // busy host, where it is preempted often: cpu-clock restarts its timer
        // at every switch (docs/CPU-BREAKDOWN.md, "Caveats"); within 25%.
        let busy = clocks / doc[side]["cpu"]["elapsed"].as_f64().unwrap();
        let band = if busy >= 0.8 { 0.1 } else { 0.25 };
        eprintln!(
            "{side}: {samples} samples, {sampled:.0} ns against {clocks:.0} ns: {ratio:.3} \
             ({busy:.2} cores, within {band})"
        );
        assert!((ratio - 1.0).abs() <= band, "{side}: {ratio:.3}: {p}");
        assert!(samples >= 200.0, "{side}: {p}");
        let unclassified = p["unclassified"].as_f64().unwrap();
        assert!(unclassified < 0.05 * samples, "{side}: {p}");
        assert_eq!(p["event"], "cpu-clock");
        // Every core sampled for the kernel's work outside processes, or why not.
        assert!(
            p["elsewhere"]["cores"].as_u64().is_some_and(|c| c >= 1)
                || p["elsewhere_why"].as_str().is_some(),
            "{side}: {p}"
        );
    }
    // The per-KiB split adds up to the flow threads' CPU per KiB, beside the
    // test's share of the kernel's network work outside processes.
    let parts: f64 = doc["client_cost"]["breakdown"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let outside = c["elsewhere"].as_f64().unwrap_or(0.0);
            c["us_per_kib"].as_f64().unwrap() * (1.0 - outside)
        })
        .sum();
    let moved: f64 = doc["directions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["bytes"].as_f64().unwrap())
        .sum();
    let threads_us = doc["client"]["cpu"]["threads"].as_f64().unwrap() / 1e3;
    let whole = threads_us / (moved / 1024.0);
    assert!(
        (parts / whole - 1.0).abs() < 1e-6,
        "{parts} against {whole}"
    );
}

#[test]
fn sendfile_cuts_the_senders_copy_by_half_or_more() {
    let _alone = crate::lab_util::serial();
    let run = |io: &str| json(&["-t", "1.5", "--warmup", "0.3", "--tx-io", io]);
    let (copy, sendfile) = (run("copy"), run("sendfile"));
    if taken(&copy, "client").is_none() || taken(&sendfile, "client").is_none() {
        return;
    }
    let (a, b) = (
        per_kib(&copy, "client", "data_copy"),
        per_kib(&sendfile, "client", "data_copy"),
    );
    eprintln!("the sender's data copy: {a:.4} us/KiB copying, {b:.4} with sendfile");
    assert!(a > 0.0, "a copying sender copies: {}", copy["client_cost"]);
    assert!(b <= 0.5 * a, "copy {a:.4} us/KiB, sendfile {b:.4}");
}

#[test]
fn tls_encryption_matches_its_timed_crypto() {
    let _alone = crate::lab_util::serial();
    let doc = json(&["-T", "tls-stream", "-t", "2", "--warmup", "0.5"]);
    for side in ["client", "server"] {
        let Some(p) = taken(&doc, side) else { return };
        let threads = doc[side]["cpu"]["threads"].as_f64().unwrap();
        // The sealing end's timed calls copy the plaintext into the record they
        // seal (rustls's encrypt), which the breakdown counts as a copy in
        // user space; the opening end's decrypt in place.
        let sealed_copy = if side == "client" {
            user_share(p, "data_copy")
        } else {
            0.0
        };
        let sampled = (share(p, "encryption") + sealed_copy) * threads;
        // The AEAD's own time over the interval, as the flows timed it.
        let timed: f64 = doc[side]["flows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                let c = &f["io"]["crypto"];
                let part = f["bytes"].as_f64().unwrap() / f["bytes_total"].as_f64().unwrap();
                (c["ns"].as_f64().unwrap() + c["handshake_ns"].as_f64().unwrap()) * part.min(1.0)
            })
            .sum();
        let ratio = sampled / timed;
        eprintln!("{side}: encryption sampled {sampled:.0} ns, timed {timed:.0} ns: {ratio:.3}");
        assert!((0.8..=1.2).contains(&ratio), "{side}: {ratio:.3}: {p}");
    }
}

/// The per-packet work at `side` per KiB: TCP/IP, the device layer, skbs,
/// memory and checksums.
fn protocol_per_kib(doc: &Value, side: &str) -> f64 {
    ["tcp_ip", "netdevice", "skb", "memory", "checksum"]
        .iter()
        .map(|c| per_kib(doc, side, c))
        .sum()
}

#[test]
fn offloads_off_raise_and_a_larger_mtu_lowers_the_per_kib_protocol_cost() {
    let Some(_lab) = crate::lab_util::ready("offloads_off_raise_the_protocol_cost") else {
        return;
    };
    if std::process::Command::new("ethtool")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: no ethtool to turn a veth's offloads off");
        return;
    }
    let client = ["-t", "1.5", "--warmup", "0.3"];
    let run = |link: &[&str]| crate::lab_util::lab_json(link, &client);
    let on = run(&["--mtu", "1500"]);
    let off = run(&["--mtu", "1500", "--offloads", "off"]);
    let jumbo = run(&["--mtu", "9000", "--offloads", "off"]);
    if [&on, &off, &jumbo]
        .iter()
        .any(|d| taken(d, "server").is_none())
    {
        return;
    }
    let (a, b) = (
        protocol_per_kib(&on, "server"),
        protocol_per_kib(&off, "server"),
    );
    eprintln!("the receiver's per-packet work: {a:.4} us/KiB with offloads, {b:.4} without");
    // Measured 4-5x: without GRO every 1448 B segment goes up the stack alone.
    assert!(b > 1.5 * a, "offloads on {a:.4} us/KiB, off {b:.4}");
    let both = |d: &Value| protocol_per_kib(d, "client") + protocol_per_kib(d, "server");
    let (small, large) = (both(&off), both(&jumbo));
    eprintln!("both ends' per-packet work without offloads: {small:.4} us/KiB at 1500, {large:.4} at 9000");
    // Measured about 3x: six times fewer packets per byte.
    assert!(
        large < 0.67 * small,
        "MTU 1500 {small:.4} us/KiB, 9000 {large:.4}"
    );
}
