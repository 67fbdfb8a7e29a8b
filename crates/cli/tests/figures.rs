//! Figures checked against their definitions (issue 11): interval records add up to
//! the summary, the first interval after a warm-up is not short, one MSS.

use crate::util::json;

/// The reported failure: with a warm-up, the first interval read about 30% low
/// (367 Mbit/s for a flow paced at 500M) and the intervals summed 2.4-3.1% below
/// the summary.
#[test]
fn interval_records_add_up_to_the_summary_after_a_warm_up() {
    for args in [
        &["-t", "2", "--warmup", "1", "-i", "0.5", "-b", "500M"][..],
        &["-t", "2", "--warmup", "0.5", "-i", "0.25", "--reverse"],
        &[
            "-T",
            "udp-stream",
            "-b",
            "200M",
            "-t",
            "2",
            "--warmup",
            "1",
            "-i",
            "0.5",
        ],
    ] {
        let doc = add_up(args);
        let iv = doc["intervals"].as_array().unwrap();
        // A paced flow past its warm-up is steady: nothing flagged.
        if doc["spec"]["rate"].is_number() {
            assert!(
                !doc["warnings"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|w| w["kind"] == "not-steady"),
                "{args:?}: {}",
                doc["warnings"]
            );
        }
        // The first interval after the warm-up reads like the others (it read
        // 30% low). Against the others, not the pace: a paced sender that two
        // busy cores hold back (CI saw 160 of 200 Mbit/s) is slow in every one,
        // and unevenly (CI: the first at 169, the others 184-193): there the
        // sum above, which a first record counted from the wrong instant
        // misses by 1.75% or more, is what checks the boundary.
        let paced = doc["diagnosis"]["bottleneck"]["kind"] == "application";
        if doc["spec"]["rate"].is_number() && !paced {
            eprintln!(
                "{args:?}: the sender did not reach its pace ({}); the first interval is \
                 checked by the sum only",
                doc["diagnosis"]["bottleneck"]
            );
        }
        if doc["spec"]["rate"].is_number() && paced {
            let rate = |i: &serde_json::Value| i["rate"].as_f64().unwrap();
            let first = rate(&iv[0]);
            let rest: Vec<f64> = iv[1..].iter().map(rate).collect();
            let mean = rest.iter().sum::<f64>() / rest.len() as f64;
            assert!(
                (first / mean - 1.0).abs() < 0.1,
                "{args:?}: first interval {first} bit/s, the others {rest:?}"
            );
        }
    }
}

/// A test with `args` whose interval records add up to its summary within
/// 0.5%, in one of three runs: the records of a TCP sender count bytes
/// acknowledged, the summary bytes read, so a receiver that two busy cores
/// hold back at a boundary puts what is in flight between them (CI: 5 blocks
/// of 128 KiB, 0.53%, where this host shows 0-1).
fn add_up(args: &[&str]) -> serde_json::Value {
    let mut doc = None;
    crate::lab_util::up_to_three(&format!("{args:?} intervals"), || {
        let d = json(args);
        let iv = d["intervals"].as_array().unwrap();
        let sum: f64 = iv.iter().map(|i| i["bytes"].as_f64().unwrap()).sum();
        let summary = d["directions"][0]["bytes"].as_f64().unwrap();
        // The intervals count what the sender sent; a UDP summary counts what
        // arrived: the datagrams lost (loopback loses some when two busy cores
        // run other tests beside this one) are the difference.
        let loss = d["directions"][0]["loss"].as_f64().unwrap_or(0.0) / 100.0;
        let arrived = sum * (1.0 - loss);
        doc = Some(d);
        if (arrived / summary - 1.0).abs() <= 0.005 {
            Ok(())
        } else {
            Err(format!(
                "{args:?}: intervals sum {sum}, {:.3}% lost, summary {summary}",
                loss * 100.0
            ))
        }
    });
    doc.expect("a run that added up")
}

/// The reported failure: at MTU 65535 `socket.mss` said 32741 (read at connect)
/// while `tcp_info.mss` said 65483.
#[test]
fn the_socket_mss_is_the_one_the_connection_used() {
    let doc = json(&["-t", "0.5"]);
    for side in ["client", "server"] {
        let s = &doc[side];
        let info = s["flows"]
            .as_array()
            .unwrap()
            .iter()
            .find_map(|f| f["tcp_info"]["mss"].as_u64());
        if let Some(m) = info {
            assert_eq!(
                s["socket"]["mss"].as_u64(),
                Some(m),
                "{side}: {}",
                s["socket"]
            );
        }
    }
}

/// UDP loss on loopback can only happen at a full receive buffer: when a test loses
/// datagrams, the kernel-drops caveat says so, with the kernel's own count.
#[test]
fn udp_loss_says_where_the_kernel_dropped() {
    let doc = json(&["-T", "udp-stream", "-b", "50G", "-t", "1"]);
    let loss = doc["directions"][0]["loss"].as_f64().unwrap_or(0.0);
    let drops = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "kernel-drops")
        .cloned();
    if loss > 0.5 {
        let w =
            drops.unwrap_or_else(|| panic!("{loss}% lost, no kernel-drops: {}", doc["warnings"]));
        assert!(w["rcvbuf"].as_u64().unwrap() > 0, "{w}");
    } else {
        eprintln!("this host kept up with 50G ({loss}% lost): nothing to attribute");
    }
}

/// Issue 52: `client --report DIR` writes the test's page over time, as
/// flent's first view: each flow's goodput, round trip, congestion window and
/// retransmissions from its sender's TCP_INFO, on one time axis; drawn in
/// Chromium at 1366x768 (with NETSONDE_SCREENSHOTS=DIR, its screenshot is
/// written there).
#[test]
fn a_client_reports_each_flow_over_time() {
    let dir = std::env::temp_dir().join(format!("netsonde-ts-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = crate::util::run(
        &[
            "client",
            "-P",
            "2",
            "-t",
            "2",
            "-i",
            "250ms",
            "--no-store",
            "--report",
            dir.to_str().unwrap(),
        ],
        std::time::Duration::from_secs(60),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let index = dir.join("index.html");
    let page = std::fs::read_to_string(&index).unwrap();
    for id in ["goodput-time", "rtt-time", "cwnd-time", "retransmits-time"] {
        assert!(
            page.contains(&format!("id=\"plot-{id}\"")),
            "no {id} figure"
        );
    }
    for flow in ["flow 0 (client sends)", "flow 1 (client sends)"] {
        assert!(page.contains(flow), "no series for {flow}");
    }
    assert!(
        page.contains("<pre>") && page.contains("goodput"),
        "no text report"
    );
    crate::webdriver::with_chromium((1366, 768), |wd| {
        wd.go(&format!("file://{}", index.display())).unwrap();
        assert_eq!(wd.find_all("div.plot svg").unwrap().len(), 4);
        assert!(wd
            .text("h1")
            .unwrap()
            .starts_with("netsonde tcp-stream out"));
        if let Some(d) = std::env::var_os("NETSONDE_SCREENSHOTS") {
            let d = std::path::PathBuf::from(d);
            wd.screenshot(&d.join("client-report.png")).unwrap();
        }
    });
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 52: off a terminal a client's report fits 80 columns: prose (the
/// verdict, its advice and caveats) wrapped under its lead, a table too wide
/// split into blocks that repeat what a row is.
#[test]
fn the_report_fits_80_columns_off_a_terminal() {
    for args in [
        &["-l", "1K", "--bidir", "-i", "0.25"][..],
        &["-T", "tcp-rr"],
        &["-T", "udp-stream", "-b", "100M"],
    ] {
        let mut all = vec!["client", "-t", "0.5", "--no-store"];
        all.extend_from_slice(args);
        let out = crate::util::run(&all, std::time::Duration::from_secs(60));
        assert!(out.status.success(), "{args:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("verdict: "), "{args:?}: {text}");
        let wide: Vec<&str> = text.lines().filter(|l| l.chars().count() > 80).collect();
        assert!(
            wide.is_empty(),
            "{args:?}: lines over 80 columns: {wide:#?}"
        );
    }
}

/// Issue 52: `sweep --samples` gives every point a page over time beside the
/// report (each flow's goodput, RTT, cwnd and retransmissions from its
/// sender's TCP_INFO), linked from it.
#[test]
fn a_sampled_sweep_reports_each_point_over_time() {
    let d = crate::sweeps::tmpdir("samples");
    let db = d.join("r.db");
    let out = d.join("rep");
    crate::sweeps::ok(&[
        "sweep",
        "--db",
        crate::sweeps::s(&db),
        "--out",
        crate::sweeps::s(&out),
        "--tests",
        "tcp-stream",
        "--sizes",
        "16K,64K",
        "--repeat",
        "1",
        "-t",
        "0.5",
        "--warmup",
        "0.1",
        "--samples",
    ]);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    for idx in 0..2 {
        let page = format!("point-{idx}.html");
        assert!(
            html.contains(&format!("href=\"{page}\"")),
            "no link to {page}"
        );
        let p = std::fs::read_to_string(out.join(&page)).unwrap();
        for id in ["goodput-time", "rtt-time", "cwnd-time"] {
            assert!(p.contains(&format!("id=\"plot-{id}\"")), "{page}: no {id}");
        }
        assert!(p.contains("flow 0 (client sends)"), "{page}");
    }
    let _ = std::fs::remove_dir_all(&d);
}
