//! The lab's tests whose figures need the host to themselves: a userspace
//! emulator's rate within 0.5%, the verdict of each induced bottleneck, and the
//! loss-free searches' frame rates within 2%. In the `quiet` binary, which cargo
//! runs after the themed `tests` binary and its parallel load; they take the
//! binary's one lock, so no other quiet test runs beside them.

use serde_json::Value;

use crate::lab_util::*;

#[test]
fn a_rate_limit_gives_tcp_the_payload_share_of_each_frame() {
    let Some(_g) = ready("rate") else { return };
    let before = Before::take();
    // TCP payload per frame: MTU less IPv4 (20) and TCP with timestamps (32); the
    // rate counts the IP packet plus 38 bytes of Ethernet framing. tbf and the
    // emulator charge every frame: within 0.5%. htb charges once per GSO packet (the
    // link detail says so): up to 24 bytes a frame less, 0.27% at MTU 9000.
    for (mechanism, shaper, mtu, rate, below, above) in [
        ("kernel", "tbf", 1500.0, 100e6, 0.005, 0.005),
        ("kernel", "tbf", 1500.0, 200e6, 0.005, 0.005),
        ("kernel", "htb", 9000.0, 200e6, 0.005, 24.0 / 9038.0 + 0.002),
        ("emulator", "tbf", 1500.0, 100e6, 0.005, 0.005),
    ] {
        let (m, r) = (format!("{mtu}"), format!("{rate}"));
        let what = format!("{mechanism}/{shaper} mtu {mtu} goodput");
        // The emulator is a userspace process, and a kernel shaper's queue is
        // served in softirq on a vCPU too: while the hypervisor takes the vCPUs
        // (steal), packets wait unserved and the link idles. A shortfall under
        // steal is not the shaper's arithmetic; it is noted, and if every
        // attempt was starved, judged by what the tool must do then: stay
        // within the share the hypervisor took, and say it took it.
        let mut starved = Vec::new();
        tried_three(&what, || {
            let link = [
                "--mechanism",
                mechanism,
                "--shaper",
                shaper,
                "--mtu",
                &m,
                "--rate",
                &r,
            ];
            let steal_before = steal_ticks();
            let doc = lab_json(&link, &["-t", "3", "--warmup", "1"]);
            let steal = steal_share(steal_before, steal_ticks());
            let l = &doc["link"];
            let expect = if mechanism == "kernel" {
                "veth"
            } else {
                "emulator"
            };
            assert_eq!(l["mechanism"], expect, "{l}");
            assert_eq!(f(&l["spec"]["up"]["rate"]), rate);
            if mechanism == "kernel" {
                let detail = l["detail"].as_str().unwrap();
                assert!(detail.contains(shaper), "{l}");
                assert_eq!(detail.contains("per GSO packet"), shaper == "htb", "{l}");
            }
            let want = rate * (mtu - 52.0) / (mtu + 38.0);
            let got = f(&doc["directions"][0]["goodput"]);
            let err = got / want - 1.0;
            eprintln!(
                "{what}: got {got:.5e}, want {want:.5e}, error {:+.3}% (steal {:.1}%)",
                err * 100.0,
                steal * 100.0
            );
            if (-below..=above).contains(&err) {
                return Ok(());
            }
            if steal >= STARVED_STEAL && err < 0.0 {
                let caveats = doc["diagnosis"]["caveats"].as_array().cloned();
                let said = caveats.unwrap_or_default().iter().any(|c| {
                    c.as_str()
                        .is_some_and(|c| c.contains("the hypervisor took"))
                });
                starved.push((err, steal, said));
            }
            Err(format!(
                "{what}: {got:.5e} is {:+.3}% from {want:.5e} (allowed -{:.2}% to +{:.2}%), \
                 steal {:.1}%",
                err * 100.0,
                below * 100.0,
                above * 100.0,
                steal * 100.0
            ))
        })
        .or_else(|misses| {
            // Every attempt missed, each under steal: the link could not be
            // judged on this host to 0.5%. Each miss is within the share the
            // hypervisor took (and 2%), and where it took 10% or more the
            // report's diagnosis says so (analysis::STEAL_PCT is 5% of the
            // measured interval; this share is of the whole lab run).
            let excused =
                |(e, st, said): &(f64, f64, bool)| *e > -(st + 0.02) && (*st < 0.10 || *said);
            if starved.len() == misses.len() && starved.iter().all(excused) {
                eprintln!(
                    "SKIPPED precision of {what}: the hypervisor took {:.0}-{:.0}% of the vCPUs \
                     in every attempt (misses {:?}); each within that share, the steal said",
                    starved.iter().map(|s| s.1 * 100.0).fold(f64::MAX, f64::min),
                    starved.iter().map(|s| s.1 * 100.0).fold(0.0, f64::max),
                    starved
                        .iter()
                        .map(|s| format!("{:+.2}%", s.0 * 100.0))
                        .collect::<Vec<_>>()
                );
                Ok(())
            } else {
                Err(misses)
            }
        })
        .unwrap_or_else(|misses| panic!("{what}: three misses: {misses:#?}"));
    }
    before.assert_restored();
}

/// Induced bottlenecks, each diagnosed by `client` (issues 11 and 24): the
/// verdict names the limit the lab put there, with the evidence that shows it,
/// at the first attempt (no retries: a verdict that needs luck is wrong).
#[test]
fn induced_bottlenecks_are_each_diagnosed() {
    let Some(_g) = ready("diagnosis") else { return };
    let before = Before::take();
    /// Name, link flags, client flags, the verdicts that name the induced limit,
    /// and what else the document must say.
    type Case<'a> = (
        &'a str,
        &'a [&'a str],
        &'a [&'a str],
        &'a [&'a str],
        fn(&Value) -> Result<(), String>,
    );
    fn nothing(_: &Value) -> Result<(), String> {
        Ok(())
    }
    /// The CPU-bound thread is `side`'s, and its flows did `role`.
    fn thread_of(doc: &Value, side: &str, role: &str) -> Result<(), String> {
        let b = &doc["diagnosis"]["bottleneck"];
        let ev = doc["diagnosis"]["evidence"].as_str().unwrap_or("");
        if b["side"] == side && b["thread"]["what"] == "flow thread" && ev.contains(role) {
            Ok(())
        } else {
            Err(format!(
                "not the {side} {role} thread: {}",
                doc["diagnosis"]
            ))
        }
    }
    let cases: [Case; 10] = [
        ("link", &["--rate", "200M"], &[], &["link"], nothing),
        (
            "window",
            &["--delay", "10ms"],
            &["-w", "64K"],
            &["window", "receiver-window", "sender-buffer"],
            |doc| {
                // Never more than the window in force allows.
                let ev = doc["diagnosis"]["evidence"].as_str().unwrap_or("");
                match ev
                    .split("% of window/RTT")
                    .next()
                    .and_then(|p| p.rsplit(' ').next()?.parse::<f64>().ok())
                {
                    Some(pct) if pct > 100.0 => Err(format!("{pct}% of window/RTT: {ev}")),
                    _ => Ok(()),
                }
            },
        ),
        (
            "receiver window",
            &["--delay", "10ms"],
            &["--rcv-window", "4K"],
            &["receiver-window"],
            nothing,
        ),
        // 8 KiB, not 64: at 64 KiB the sender's buffer and the receiver's
        // advertised window (80 KiB here) are within reach of each other, and
        // which one TCP_INFO blames more varied from run to run (3 of 4 said
        // the receiver's window); at 32 KiB a CI run had sndbuf_limited under
        // 30% and no verdict. With 8 KiB the sender's buffer binds, alone or
        // (a receiver opens its window from what arrives) with the
        // receiver's window: the window verdict that names both.
        (
            "sender buffer",
            &["--delay", "10ms"],
            &["-w", "8K", "--rcv-window", "4M"],
            &["sender-buffer", "window"],
            |doc: &Value| {
                let d = &doc["diagnosis"];
                let evidence = d["evidence"].as_str().unwrap_or("");
                if d["bottleneck"]["kind"] == "window" && !evidence.contains("sndbuf_limited") {
                    Err(format!("a window verdict without the sender's buffer: {d}"))
                } else {
                    Ok(())
                }
            },
        ),
        (
            "loss",
            &["--delay", "5ms", "--loss", "1%"],
            &["-C", "cubic"],
            &["loss"],
            nothing,
        ),
        (
            "pacing",
            &["--rate", "1G"],
            &["-b", "100M"],
            &["application"],
            nothing,
        ),
        ("sender CPU thread", &[], &["-l", "1K"], &["cpu"], |doc| {
            thread_of(doc, "client", "sender")
        }),
        ("receiver CPU thread", &[], &["--verify"], &["cpu"], |doc| {
            thread_of(doc, "server", "receiver")
        }),
        (
            "MSS clamp",
            &["--rate", "100M"],
            &["-M", "200"],
            &["link"],
            |doc| {
                // 188 B of payload in 278 B on the wire: 67.6 Mbit/s.
                let ideal = f(&doc["rfc6349"]["ideal"]);
                within("ceiling at MSS 200", ideal, 100e6 * 188.0 / 278.0, 0.01)
            },
        ),
        (
            "UDP overload",
            &["--rate", "100M", "--mechanism", "emulator"],
            &["-u", "-l", "4K"],
            &["link-overload"],
            |doc| {
                let warned = doc["warnings"]
                    .as_array()
                    .is_some_and(|w| w.iter().any(|w| w["kind"] == "total-loss"));
                if warned {
                    Ok(())
                } else {
                    Err(format!("no total-loss warning: {}", doc["warnings"]))
                }
            },
        ),
    ];
    let mut misses = Vec::new();
    for (what, link, client, want, check) in cases {
        let mut args = client.to_vec();
        args.extend_from_slice(&["-t", "3", "--warmup", "1"]);
        let doc = lab_json(link, &args);
        let got = doc["diagnosis"]["bottleneck"]["kind"]
            .as_str()
            .unwrap_or("")
            .to_string();
        eprintln!("{what}: {}", doc["diagnosis"]);
        if !want.contains(&got.as_str()) {
            misses.push(format!("{what}: verdict {got}: {}", doc["diagnosis"]));
        } else if let Err(e) = check(&doc) {
            misses.push(format!("{what}: {e}"));
        }
    }
    before.assert_restored();
    assert!(misses.is_empty(), "{misses:#?}");
}

/// The TCP search (`--test tcp`) on a 100 Mbit/s link with a 10-frame queue: the
/// highest paced rate of one connection without a retransmission is the link's
/// frame rate for 1518 B frames (1448 B segments with timestamps), 8,127.6
/// frames/s, within 2%; above it the connection retransmits.
#[test]
fn the_tcp_search_finds_a_shaped_links_frame_rate() {
    let Some(_g) = ready("search-tcp") else {
        return;
    };
    let before = Before::take();
    up_to_three("TCP NDR at 1518 B on 100 Mbit/s", || {
        let s = search_on_a_100m_link(&["--test", "tcp"])?;
        assert_eq!(s["payload"], 1448);
        assert_eq!(s["frame"], 1518);
        let ndr = f(&s["ndr"]["lower"]);
        let want = 100e6 / (1538.0 * 8.0);
        let err = ndr / want - 1.0;
        eprintln!(
            "TCP NDR {ndr:.1} frames/s, want {want:.1}: {:+.2}%",
            err * 100.0
        );
        if s["converged"] != true || err.abs() > 0.02 {
            return Err(format!(
                "NDR {ndr:.1} is {:+.2}% from {want:.1}: {s}",
                err * 100.0
            ));
        }
        assert!(
            s["trials"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["lost"].as_u64().unwrap() > 0),
            "above the link's rate the connection retransmits: {s}"
        );
        // The UDP drop counters do not describe a TCP trial.
        assert!(s["trials"][0]["rcvbuf_errors"].is_null(), "{s}");
        Ok(())
    });
    before.assert_restored();
}

/// The loss-free rate search on a 100 Mbit/s link with a 10-frame queue: NDR at
/// 1518 B frames is the link's frame rate, 100e6 / (1538 x 8) = 8,127.6 frames/s,
/// within 2% (issue 14), and the losses above it are not the hosts' (the qdisc's).
#[test]
fn the_search_finds_a_shaped_links_frame_rate() {
    let Some(_g) = ready("search") else { return };
    let before = Before::take();
    up_to_three("NDR at 1518 B on 100 Mbit/s", || {
        let s = search_on_a_100m_link(&[])?;
        let ndr = f(&s["ndr"]["lower"]);
        let want = 100e6 / (1538.0 * 8.0);
        let err = ndr / want - 1.0;
        eprintln!(
            "NDR {ndr:.1} frames/s, want {want:.1}: {:+.2}% after {} trials",
            err * 100.0,
            s["trials"].as_array().unwrap().len()
        );
        assert_eq!(s["payload"], 1472);
        assert_eq!(s["converged"], true, "{s}");
        if err.abs() > 0.02 {
            return Err(format!(
                "NDR {ndr:.1} is {:+.2}% from {want:.1}",
                err * 100.0
            ));
        }
        // Above the link's rate the qdisc drops, not a socket buffer.
        let lossy: Vec<&Value> = s["trials"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["lost"].as_u64().unwrap() > 0)
            .collect();
        assert!(!lossy.is_empty());
        for t in lossy {
            assert_eq!(t["rcvbuf_errors"], 0, "{t}");
        }
        Ok(())
    });
    before.assert_restored();
}

/// The same search with the AF_XDP receiver (`--io xdp`, sent with copy): its
/// program runs in the veth driver, it finds the same frame rate, and above it
/// the link's queue drops, not the socket's rings.
#[test]
fn the_xdp_receiver_finds_a_shaped_links_frame_rate() {
    let Some(_g) = ready("search-xdp") else {
        return;
    };
    if !crate::util::supported().iter().any(|s| s == "xdp") {
        eprintln!("SKIPPED lab::search-xdp: this host cannot run xdp (netsonde caps says why)");
        return;
    }
    let before = Before::take();
    up_to_three("NDR at 1518 B on 100 Mbit/s through AF_XDP", || {
        let s = search_on_a_100m_link(&["--io", "xdp"])?;
        assert_eq!((&s["io"], &s["tx_io"]), (&"xdp".into(), &"copy".into()));
        let ndr = f(&s["ndr"]["lower"]);
        let want = 100e6 / (1538.0 * 8.0);
        let err = ndr / want - 1.0;
        eprintln!(
            "xdp NDR {ndr:.1} frames/s, want {want:.1}: {:+.2}%",
            err * 100.0
        );
        if s["converged"] != true || err.abs() > 0.02 {
            return Err(format!(
                "NDR {ndr:.1} is {:+.2}% from {want:.1}: {s}",
                err * 100.0
            ));
        }
        let trials = s["trials"].as_array().unwrap();
        assert!(trials.iter().any(|t| t["lost"].as_u64().unwrap() > 0));
        for t in trials {
            assert_eq!(t["ring_drops"], 0, "{t}");
        }
        Ok(())
    });
    before.assert_restored();
}
