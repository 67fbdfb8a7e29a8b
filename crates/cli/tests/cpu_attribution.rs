//! Whose CPU is it: a busy loop on another core is foreign load, named in a
//! warning with its size, and the test's service demand stays its own. In its own
//! test binary (`quiet`), since other tests running beside it are foreign load too.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::util::json;

/// The tests of this binary measure CPU: one at a time.
static ALONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

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
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
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
    let (q, l) = (demand(&quiet), demand(&loaded));
    assert!(
        (l / q - 1.0).abs() <= 0.2,
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
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    for _ in 0..3 {
        let doc = json(&["-t", "2"]);
        let d = &doc["diagnosis"];
        assert_eq!(d["bottleneck"]["kind"], "cpu", "{d}");
        assert_eq!(d["bottleneck"]["thread"]["what"], "flow thread", "{d}");
        let ev = d["evidence"].as_str().unwrap();
        assert!(
            ev.contains("flow 0 (sender)") && ev.contains("system"),
            "{d}"
        );
    }
}
