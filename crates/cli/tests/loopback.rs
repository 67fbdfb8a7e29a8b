//! Every test type and direction end to end on loopback, through the embedded
//! server and a separate server process.

use serde_json::Value;

use crate::util::{cmd, json, wait_bounded, ServerProc};

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// CPU figures present and sane on both ends.
fn check_cpu(doc: &Value) {
    for side in ["client", "server"] {
        let cpu = &doc[side]["cpu"];
        assert!(cpu.is_object(), "{side} has no cpu: {doc}");
        let cores = cpu["cores"].as_array().unwrap();
        assert!(!cores.is_empty());
        for c in cores.iter().chain([&cpu["total"]]) {
            let mut sum = 0.0;
            for k in [
                "user", "nice", "sys", "irq", "softirq", "iowait", "steal", "idle",
            ] {
                let v = f(&c[k]);
                assert!((0.0..=100.0 + 1e-6).contains(&v), "{side} {k} = {v}");
                sum += v;
            }
            assert!((sum - 100.0).abs() < 0.5, "{side} core sums to {sum}");
        }
        let busy = f(&cpu["busy_cores"]);
        assert!(busy >= 0.0 && busy <= cores.len() as f64 + 1e-6);
        assert!(u(&cpu["elapsed"]) > 0);
        assert!(doc[format!("{side}_cost")].is_object());
    }
    for side in ["client", "server"] {
        let h = &doc[side]["host"];
        assert!(!h["kernel"].as_str().unwrap().is_empty());
        assert!(u(&h["cores"]) >= 1);
        assert!(h["sysctls"]["net.core.rmem_max"].is_string());
        assert!(u(&h["interface"]["mtu"]) > 0);
    }
}

fn check_common(doc: &Value, test: &str) {
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["spec"]["test"], test);
    check_cpu(doc);
}

fn check_stream(doc: &Value, tcp: bool, dirs: usize) {
    let d = doc["directions"].as_array().unwrap();
    assert_eq!(d.len(), dirs, "{doc}");
    for dir in d {
        let sent = u(&dir["sender_bytes_total"]);
        let recv = u(&dir["receiver_bytes_total"]);
        assert!(sent > 0 && recv > 0, "{dir}");
        if tcp {
            assert_eq!(sent, recv, "TCP byte counts must agree: {dir}");
            assert!(dir["retransmits"].is_u64());
        } else {
            assert!(recv <= sent, "{dir}");
            let udp = &dir["udp"];
            assert!(u(&udp["packets_total"]) > 0);
            assert!(u(&dir["datagrams_sent"]) >= u(&udp["packets_total"]));
            assert!(f(&dir["loss"]) < 50.0, "{dir}");
        }
        assert!(u(&dir["bytes"]) > 0);
        assert!(f(&dir["goodput"]) > 0.0);
        assert!(f(&dir["messages_per_sec"]) > 0.0);
    }
    let no_mismatch = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .all(|w| w["kind"] != "byte-count-mismatch");
    assert!(no_mismatch, "{}", doc["warnings"]);
}

fn check_rr(doc: &Value) {
    let rr = &doc["rr"];
    assert!(u(&rr["transactions"]) > 0, "{rr}");
    let l = &rr["latency"];
    let order = ["min", "p50", "p90", "p99", "p999", "max"];
    for w in order.windows(2) {
        assert!(u(&l[w[0]]) <= u(&l[w[1]]), "{} > {}: {l}", w[0], w[1]);
    }
    assert!(u(&l["min"]) > 0);
    assert!(u(&l["mean"]) >= u(&l["min"]) && u(&l["mean"]) <= u(&l["max"]));
    assert!(f(&doc["client_cost"]["us_per_transaction"]) > 0.0);
}

#[test]
fn tcp_stream_every_direction() {
    for (flag, dirs) in [(None, 1), (Some("--reverse"), 1), (Some("--bidir"), 2)] {
        let mut args = vec!["-T", "tcp-stream", "-t", "1", "-l", "64K"];
        args.extend(flag);
        let doc = json(&args);
        check_common(&doc, "tcp-stream");
        check_stream(&doc, true, dirs);
        // TCP_INFO from the sender.
        let side = if flag == Some("--reverse") {
            "server"
        } else {
            "client"
        };
        let snd = doc[side]["flows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["role"] == "sender")
            .unwrap()
            .clone();
        assert!(u(&snd["tcp_info"]["cwnd"]) > 0, "{snd}");
        assert!(u(&snd["tcp_info"]["srtt"]) > 0, "{snd}");
    }
}

#[test]
fn udp_stream_every_direction() {
    for (flag, dirs) in [(None, 1), (Some("--reverse"), 1), (Some("--bidir"), 2)] {
        let mut args = vec!["-T", "udp-stream", "-t", "1", "-b", "200M"];
        args.extend(flag);
        let doc = json(&args);
        check_common(&doc, "udp-stream");
        check_stream(&doc, false, dirs);
    }
    // `-b 0` is unpaced, as in iperf3, and says what that makes of the loss.
    let doc = json(&["-T", "udp-stream", "-t", "0.5", "-l", "256", "-b", "0"]);
    assert!(doc["spec"]["rate"].is_null(), "{}", doc["spec"]);
    assert!(u(&doc["directions"][0]["datagrams_sent"]) > 0);
    let kinds: Vec<&str> = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["kind"].as_str())
        .collect();
    assert!(kinds.contains(&"unpaced-udp"), "{kinds:?}");
}

#[test]
fn request_response_tests() {
    for t in ["tcp-rr", "udp-rr", "tcp-crr"] {
        let doc = json(&["-T", t, "-t", "1"]);
        check_common(&doc, t);
        check_rr(&doc);
    }
    let doc = json(&[
        "-T",
        "tcp-rr",
        "-t",
        "1",
        "--request-size",
        "100",
        "--response-size",
        "10K",
    ]);
    check_rr(&doc);
    assert_eq!(doc["spec"]["response_size"], 10240);
}

#[test]
fn parallel_streams_and_warmup_against_a_server_process() {
    let srv = ServerProc::start();
    let doc = json(&[
        "127.0.0.1",
        "--port",
        &srv.port(),
        "-T",
        "tcp-stream",
        "-P",
        "2",
        "-t",
        "1",
        "--warmup",
        "300ms",
        "-w",
        "256K",
        "-C",
        "cubic",
    ]);
    check_stream(&doc, true, 1);
    assert_eq!(doc["client"]["flows"].as_array().unwrap().len(), 2);
    // Each end's CPU per flow thread: one thread per stream, each with its flow,
    // summing to the ends' thread total.
    for end in ["client", "server"] {
        let cpu = &doc[end]["cpu"];
        let per = cpu["flow_threads"].as_array().unwrap();
        let mut flows: Vec<u64> = per.iter().map(|t| u(&t["flows"][0])).collect();
        flows.sort_unstable();
        assert_eq!(flows, [0, 1], "{end}: {per:?}");
        assert!(per.iter().all(|t| u(&t["cpu"]) > 0), "{end}: {per:?}");
        let sum: u64 = per.iter().map(|t| u(&t["cpu"])).sum();
        assert_eq!(sum, u(&cpu["threads"]), "{end}");
    }
    // Warm-up bytes are excluded from the measured count but not from the totals.
    let d = &doc["directions"][0];
    assert!(u(&d["bytes"]) < u(&d["receiver_bytes_total"]));
    // The kernel doubles the requested buffer (or caps it) and we report it.
    let sndbuf = u(&doc["client"]["socket"]["sndbuf"]);
    assert!(sndbuf > 256 * 1024 && sndbuf <= 512 * 1024, "{sndbuf}");
    assert_eq!(doc["client"]["socket"]["congestion"], "cubic");
    assert_eq!(doc["server"]["socket"]["congestion"], "cubic");
    // The same server serves the next client without a restart.
    let doc = json(&[
        "127.0.0.1",
        "--port",
        &srv.port(),
        "-T",
        "tcp-rr",
        "-t",
        "0.5",
    ]);
    check_rr(&doc);
}

#[test]
fn intervals_in_text_and_jsonl() {
    let out = crate::util::run(
        &[
            "client",
            "-T",
            "tcp-stream",
            "-t",
            "1",
            "-i",
            "250ms",
            "--jsonl",
        ],
        std::time::Duration::from_secs(30),
    );
    assert!(out.status.success());
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    let intervals = lines.iter().filter(|l| l["type"] == "interval").count();
    assert!((3..=5).contains(&intervals), "{intervals} intervals");
    assert_eq!(lines.last().unwrap()["type"], "summary");
    assert!(lines.iter().all(|l| l["schema_version"] == 1));

    let out = crate::util::run(
        &["client", "-T", "tcp-rr", "-t", "1", "-i", "500ms"],
        std::time::Duration::from_secs(30),
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("trans"), "{text}");
    assert!(text.contains("latency: min"), "{text}");
}

/// Regression: `-A`/`--server-affinity` once panicked in argument parsing (clap
/// treated a parsed core list as repeated values).
#[test]
fn regression_affinity_flags_parse_and_pin() {
    let doc = json(&[
        "-T",
        "tcp-rr",
        "-t",
        "0.3",
        "-A",
        "0",
        "--server-affinity",
        "0",
    ]);
    assert_eq!(doc["spec"]["client_affinity"], serde_json::json!([0]));
    assert_eq!(doc["spec"]["server_affinity"], serde_json::json!([0]));
    check_rr(&doc);
}

/// `-n`/`-k`: each direction sends its volume (each stream its share, within
/// one message), the test ends then, not at its time cap, and the CPU is read
/// over the same span as the bytes.
#[test]
fn a_test_ends_by_volume_in_every_direction() {
    let mib = |m: u64| m * 1024 * 1024;
    let cases: [(&[&str], u64, u64, usize); 4] = [
        (&["-n", "400M", "-i", "0.1"], mib(400), 128 * 1024, 1),
        (
            &["-k", "3000", "-l", "64K", "-P", "2", "-R"],
            3000 * 65536,
            2 * 65536,
            1,
        ),
        (&["-n", "200M", "--bidir"], mib(200), 128 * 1024, 2),
        (
            &["-u", "-b", "500M", "-l", "1000", "-n", "20M"],
            mib(20),
            1000,
            1,
        ),
    ];
    for (args, volume, slack, dirs) in cases {
        let start = std::time::Instant::now();
        let doc = json(args);
        let took = start.elapsed();
        assert!(
            took.as_secs() < 20,
            "{args:?}: took {took:?}, not ended by volume"
        );
        assert_eq!(u(&doc["spec"]["volume"]), volume, "{args:?}");
        let tcp = !args.contains(&"-u");
        check_stream(&doc, tcp, dirs);
        for d in doc["directions"].as_array().unwrap() {
            let sent = u(&d["sender_bytes_total"]);
            assert!(
                sent >= volume && sent < volume + slack,
                "{args:?}: sent {sent} for {volume}"
            );
        }
        // The CPU's interval is the flows', not the 300 s cap's.
        let longest = ["client", "server"]
            .iter()
            .flat_map(|s| doc[*s]["flows"].as_array().unwrap())
            .map(|f| u(&f["elapsed"]))
            .max()
            .unwrap();
        for side in ["client", "server"] {
            let cpu = u(&doc[side]["cpu"]["elapsed"]);
            assert!(
                cpu <= longest + 100_000_000,
                "{args:?}: {side} CPU over {cpu} ns, flows {longest} ns"
            );
        }
        if args.contains(&"-i") {
            // Interval records stop where the flows did.
            let last = doc["intervals"].as_array().unwrap().last().unwrap().clone();
            assert!(u(&last["end"]) <= longest + 100_000_000, "{last}");
        }
    }
}

/// Issue 27: the hint after storing names the store when it is not the
/// default one, so the command it suggests finds the run.
#[test]
fn the_stored_hint_carries_a_non_default_store() {
    let dir = std::env::temp_dir().join(format!("netsonde-hint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("x.db");
    let db_s = db.to_str().unwrap();
    let out = crate::util::run(
        &["client", "-t", "0.3", "--db", db_s],
        std::time::Duration::from_secs(30),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(&format!("(netsonde report 1 --db {db_s};")),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// iperf3's habits: `-f` fixes the unit of every rate in the text, `--title`
/// begins every line, `--json-stream` writes iperf3 3.17's event lines, `-Z`
/// sends with sendfile.
#[test]
fn iperf3_habits_format_title_json_stream_and_zero_copy() {
    let limit = std::time::Duration::from_secs(60);
    let out = crate::util::run(
        &[
            "client",
            "-t",
            "0.5",
            "-i",
            "0.25",
            "-f",
            "m",
            "--title",
            "edge1",
            "--no-store",
        ],
        limit,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.lines().all(|l| l.starts_with("edge1:  ")), "{text}");
    // Every rate in the tables and interval lines (the verdict's sentences keep
    // the unit that suits each figure).
    let tables: String = text
        .lines()
        .map(|l| l.trim_start_matches("edge1:  "))
        .filter(|l| {
            !["verdict", "  candidates", "  try", "  caveat"]
                .iter()
                .any(|p| l.starts_with(p))
        })
        .collect::<Vec<_>>()
        .join("\n");
    let rates = tables.matches("bit/s").count();
    assert!(rates >= 3, "{text}");
    assert_eq!(tables.matches(" Mbit/s").count(), rates, "{text}");

    let out = crate::util::run(
        &[
            "client",
            "-t",
            "0.5",
            "-i",
            "0.25",
            "--json-stream",
            "-Z",
            "--no-store",
        ],
        limit,
    );
    assert!(out.status.success(), "{out:?}");
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let names: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(names.first(), Some(&"start"), "{names:?}");
    assert_eq!(names.last(), Some(&"end"), "{names:?}");
    assert!(
        names.iter().filter(|n| **n == "interval").count() >= 2,
        "{names:?}"
    );
    let end = &events.last().unwrap()["data"];
    assert_eq!(end["spec"]["tx_io"], "sendfile", "{end}");
    assert!(f(&end["directions"][0]["goodput"]) > 0.0);
}

/// `--rcv-window` sizes a UDP stream's receiving socket, and only it: while
/// the test runs, `ss` shows one UDP socket whose receive buffer is the
/// kernel's double of it (the sender keeps the default).
#[test]
fn rcv_window_sizes_a_udp_receivers_queue() {
    if std::process::Command::new("ss").arg("-V").output().is_err() {
        eprintln!("skipped: no ss (iproute2)");
        return;
    }
    let srv = ServerProc::start();
    let client = cmd()
        .args(["client", "127.0.0.1", "-p", &srv.port(), "-T", "udp-stream"])
        .args(["-b", "10M", "-t", "2", "--rcv-window", "96K", "--no-store"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let want = format!("rb{},", 2 * 96 * 1024);
    let start = std::time::Instant::now();
    let mut sized = 0;
    while sized == 0 && start.elapsed() < std::time::Duration::from_secs(2) {
        let out = std::process::Command::new("ss")
            .args(["-uanm"])
            .output()
            .unwrap();
        sized = String::from_utf8_lossy(&out.stdout).matches(&want).count();
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = wait_bounded(client, std::time::Duration::from_secs(30));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(sized, 1, "UDP sockets with {want} while the test ran");
}
