//! Whose CPU is it: a busy loop on another core is foreign load, named in a
//! warning with its size, and the test's service demand stays its own. In its own
//! test binary (`quiet`), since other tests running beside it are foreign load too.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::util::json;

fn rr() -> serde_json::Value {
    json(&[
        "-T",
        "tcp-rr",
        "-t",
        "1.5",
        "--warmup",
        "0.3",
        "-A",
        "0",
        "--server-affinity",
        "0",
    ])
}

fn demand(doc: &serde_json::Value) -> f64 {
    doc["client_cost"]["us_per_transaction"].as_f64().unwrap()
        + doc["server_cost"]["us_per_transaction"].as_f64().unwrap()
}

fn foreign(doc: &serde_json::Value) -> Option<f64> {
    doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "foreign-load")
        .map(|w| w["cores"].as_f64().unwrap())
}

/// The reported failure: with a busy loop on the other core, tcp-rr service demand
/// doubled (2.00 busy cores while both netsonde processes used about 1.0).
#[test]
fn a_busy_loop_on_another_core_is_foreign_load_not_the_tests() {
    let _alone = crate::lab_util::serial();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cores < 2 {
        eprintln!("skipped: one core, no other core to load");
        return;
    }
    if Command::new("taskset").arg("--version").output().is_err() {
        eprintln!("skipped: no taskset");
        return;
    }
    let quiet = rr();
    let mut hog = Command::new("taskset")
        .args(["-c", "1", "sh", "-c", "while :; do :; done"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let loaded = rr();
    let _ = hog.kill();
    let _ = hog.wait();
    let f = foreign(&loaded)
        .unwrap_or_else(|| panic!("no foreign-load warning: {}", loaded["warnings"]));
    assert!(
        (0.7..=1.1).contains(&f),
        "foreign load {f} cores, the loop is one core"
    );
    // The bug doubled it; sharing a core with the loop (time slices, moves
    // between cores, colder caches) costs each transaction up to a third more
    // on this VM.
    let (q, l) = (demand(&quiet), demand(&loaded));
    assert!(
        (l / q - 1.0).abs() <= 0.5,
        "service demand {q:.2} us/trans quiet, {l:.2} loaded"
    );
    // System-wide, the loop is in the figure: about one more core per transaction's
    // worth of time.
    let sys = loaded["client_cost"]["system_us_per_transaction"]
        .as_f64()
        .unwrap();
    assert!(
        sys > loaded["client_cost"]["us_per_transaction"]
            .as_f64()
            .unwrap()
    );
}

/// The first test a new user runs, `netsonde client` on loopback, names the
/// flow thread that was the limit (issue 24: it said "no single bottleneck" in
/// three runs of four with its sender thread at 100%).
#[test]
fn the_default_test_names_its_cpu_bound_thread() {
    let _alone = crate::lab_util::serial();
    for _ in 0..3 {
        let doc = json(&["-t", "2"]);
        let d = &doc["diagnosis"];
        // With a large share of the vCPUs taken by the hypervisor (27% seen on
        // this project's VM) the thread's own clock cannot carry the verdict:
        // the report must then name it as the first candidate and say the steal.
        if d["bottleneck"]["kind"] != "cpu" {
            let said = |what: &str| {
                d["caveats"]
                    .as_array()
                    .is_some_and(|c| c.iter().any(|c| c.as_str().unwrap_or("").contains(what)))
            };
            let first = d["candidates"][0].as_str().unwrap_or("");
            assert!(
                said("(steal)") && first.contains("client flow thread"),
                "{d}"
            );
            continue;
        }
        assert_eq!(d["bottleneck"]["thread"]["what"], "flow thread", "{d}");
        let ev = d["evidence"].as_str().unwrap();
        assert!(
            ev.contains("flow 0 (sender)") && ev.contains("system"),
            "{d}"
        );
    }
}

/// An `iperf3 -s` on this host is the test's other end: its CPU is not foreign
/// load, and its one thread at ~100% is the verdict (issue 24: "no single
/// bottleneck" with the iperf3 sender at 98.7%, and its CPU counted as foreign).
#[test]
fn a_local_iperf3_server_is_the_tests_not_foreign_and_its_thread_is_the_limit() {
    let _alone = crate::lab_util::serial();
    if !Command::new("iperf3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        eprintln!("skipped: no iperf3 binary (apt-get install iperf3)");
        return;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = Command::new("iperf3")
        .args(["-s", "-1", "-B", "127.0.0.1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let hex = format!(":{port:04X} ");
    let start = std::time::Instant::now();
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
    let port_s = port.to_string();
    let doc = json(&[
        "127.0.0.1",
        "--peer",
        "iperf3",
        "-p",
        &port_s,
        "-R",
        "-t",
        "3",
    ]);
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(foreign(&doc), None, "{}", doc["warnings"]);
    let d = &doc["diagnosis"];
    // Under heavy steal (25% seen) iperf3's own CPU figure cannot carry the
    // verdict; the report must then say the steal.
    if d["bottleneck"]["kind"] != "cpu" {
        let steal = d["caveats"].as_array().is_some_and(|c| {
            c.iter()
                .any(|c| c.as_str().unwrap_or("").contains("(steal)"))
        });
        assert!(steal, "{d}");
        return;
    }
    let what = d["bottleneck"]["thread"]["what"].as_str().unwrap_or("");
    assert!(
        what == "iperf3 process" || what == "flow thread",
        "not a thread's bound: {d}"
    );
}
