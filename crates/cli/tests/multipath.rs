//! MPTCP across the lab's two paths of different rates (`netsonde lab run
//! --rate 100M --second-path 50M`): a `--mptcp` stream adds them up, each
//! subflow's share is reported, and the verdict holds it to the sum of the
//! links; plain TCP in the same lab keeps to the first path. Needs root and the
//! kernel's MPTCP (`net.mptcp.enabled`); skips out loud without them.

use serde_json::Value;

use crate::lab_util::{f, lab_json, ready, up_to_three, Before};

/// Why this host cannot run the test, if it cannot (beyond the lab's needs).
fn no_mptcp() -> Option<&'static str> {
    match std::fs::read_to_string("/proc/sys/net/mptcp/enabled") {
        Ok(v) if v.trim() == "1" => None,
        Ok(_) => Some("net.mptcp.enabled is 0"),
        Err(_) => Some("this kernel has no MPTCP"),
    }
}

/// The payload a TCP connection can carry at `rate` bit/s of Ethernet frames
/// of 1500-byte IP packets: 1448 bytes of each 1538 on the line (timestamps
/// on). MPTCP's data-sequence option takes some of the 1448 on most segments,
/// so this is the ceiling's upper bound and a share of it a lower bound.
fn payload_ceiling(rate: f64) -> f64 {
    rate * 1448.0 / 1538.0
}

const LINK: [&str; 4] = ["--rate", "100M", "--second-path", "50M"];

/// The sender's bytes acknowledged on subflows to addresses in `net`.
fn acked(subs: &[Value], net: &str) -> f64 {
    subs.iter()
        .filter(|x| x["remote"].as_str().unwrap_or("").starts_with(net))
        .map(|x| f(&x["bytes_acked"]))
        .sum()
}

#[test]
fn an_mptcp_stream_adds_up_the_labs_two_paths_and_reports_each_subflow() {
    if let Some(why) = no_mptcp() {
        eprintln!("skipped: {why}");
        return;
    }
    let Some(_g) = ready("mptcp-two-paths") else {
        return;
    };
    let before = Before::take();
    let ceiling = payload_ceiling(150e6);
    up_to_three("--mptcp over 100 + 50 Mbit/s", || {
        let doc = lab_json(&LINK, &["--mptcp", "-t", "4", "--warmup", "1"]);
        let goodput = f(&doc["directions"][0]["goodput"]);
        let subs = doc["client"]["flows"][0]["mptcp"]
            .as_array()
            .ok_or("no subflows reported")?;
        let (a, b) = (acked(subs, "10.77.0."), acked(subs, "10.77.1."));
        let share_a = a / (a + b);
        let d = &doc["diagnosis"];
        eprintln!(
            "MPTCP over 100 + 50 Mbit/s: {:.1} Mbit/s, {:.1}% of the sum's payload ceiling \
             ({:.1}); path A carried {:.1}%, path B {:.1}%; {}",
            goodput / 1e6,
            100.0 * goodput / ceiling,
            ceiling / 1e6,
            100.0 * share_a,
            100.0 * (1.0 - share_a),
            d["evidence"]
        );
        assert!(goodput <= 1.02 * ceiling, "{goodput} above the links");
        if goodput < 0.9 * ceiling {
            return Err(format!("{goodput:.3e} bit/s, under 90% of {ceiling:.3e}"));
        }
        // One subflow per path, each carrying about its path's share (2/3, 1/3).
        if subs.len() != 2 || !(0.55..0.78).contains(&share_a) {
            return Err(format!("subflows {subs:?}"));
        }
        // The verdict holds it to both links, not to the first alone.
        if d["bottleneck"]["kind"] != "link" {
            return Err(format!("verdict {d}"));
        }
        Ok(())
    });
    // Plain TCP in the same lab takes the first path only, and is held to it.
    up_to_three("plain TCP beside a second path", || {
        let doc = lab_json(&LINK, &["-t", "3", "--warmup", "1"]);
        let goodput = f(&doc["directions"][0]["goodput"]);
        let d = &doc["diagnosis"];
        let one = payload_ceiling(100e6);
        eprintln!("TCP: {:.1} Mbit/s; {}", goodput / 1e6, d["evidence"]);
        assert!(goodput <= 1.02 * one, "{goodput} above the first path");
        if goodput < 0.9 * one || d["bottleneck"]["kind"] != "link" {
            return Err(format!("{goodput:.3e} bit/s; verdict {d}"));
        }
        Ok(())
    });
    before.assert_restored();
}
