//! Issue 35: right on a busy host. The induced bottlenecks of docs/DIAGNOSIS.md,
//! each diagnosed while another process moves traffic on loopback and a CPU hog
//! holds about half of each core, at the first attempt (no retries): the verdict
//! names the induced cause, the load is measured as foreign, and the test's CPU
//! stays within its threads' own time, the processes that carry it and its share
//! of the kernel's network work. In the `quiet` binary: the load is this test's
//! own, and no other test may add to it.

use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::lab_util::*;

/// Other work on the host for as long as it lives: a netsonde client moving
/// paced traffic on loopback (another process, started again each time its
/// 60 s are over) and two threads that each spin 4 ms and sleep 4 ms (about
/// half of each of two cores); all of it for at most 10 minutes. Dropping it
/// stops both.
struct Load {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

/// The longest a load runs, whatever happens to the test.
const LOAD_LIMIT: Duration = Duration::from_secs(600);

impl Load {
    fn start() -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let until = Instant::now() + LOAD_LIMIT;
        let mut threads: Vec<std::thread::JoinHandle<()>> = (0..2)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let mut x = 0u64;
                    while !stop.load(Ordering::Relaxed) && Instant::now() < until {
                        let spin = Instant::now() + Duration::from_millis(4);
                        while Instant::now() < spin {
                            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
                        }
                        std::thread::sleep(Duration::from_millis(4));
                    }
                })
            })
            .collect();
        let traffic_stop = stop.clone();
        threads.push(std::thread::spawn(move || {
            while !traffic_stop.load(Ordering::Relaxed) && Instant::now() < until {
                let Ok(mut child): std::io::Result<Child> = crate::util::cmd()
                    .args(["client", "-t", "60", "-b", "2G", "--no-store"])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                else {
                    return;
                };
                while !traffic_stop.load(Ordering::Relaxed)
                    && Instant::now() < until
                    && matches!(child.try_wait(), Ok(None))
                {
                    std::thread::sleep(Duration::from_millis(50));
                }
                let _ = child.kill();
                let _ = child.wait();
            }
        }));
        // Let the traffic reach its rate before the first measurement.
        std::thread::sleep(Duration::from_secs(1));
        Load { stop, threads }
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

fn cores(doc: &Value, side: &str, field: &str) -> f64 {
    doc[format!("{side}_cost")][field].as_f64().unwrap_or(0.0)
}

/// The test's CPU (both ends, on one host) against what it can be: its flow
/// threads' own clocks, the processes that carry it (the lab's emulator), its
/// share of the host's busy time, and 0.1 cores for the rest of its processes
/// (control connections, samplers).
fn attribution(doc: &Value) -> Result<String, String> {
    let test = cores(doc, "client", "test_cores") + cores(doc, "server", "test_cores");
    let foreign = cores(doc, "client", "foreign_cores");
    let busy = cores(doc, "client", "busy_cores");
    let share = cores(doc, "client", "stack_share");
    let cpu = |side: &str, field: &str| {
        let c = &doc[side]["cpu"];
        c[field].as_f64().unwrap_or(0.0) / c["elapsed"].as_f64().unwrap_or(1.0).max(1.0)
    };
    let threads = cpu("client", "threads") + cpu("server", "threads");
    let partners = cpu("client", "partners").max(cpu("server", "partners"));
    let bound = threads + partners + share * busy + 0.1;
    let line = format!(
        "test {test:.3} cores (threads {threads:.3}, partners {partners:.3}, stack share \
         {share:.4}), foreign {foreign:.3}, busy {busy:.3}"
    );
    if foreign < 0.3 {
        return Err(format!("the load was not measured as foreign: {line}"));
    }
    if test > bound {
        return Err(format!("the test's CPU is above {bound:.3}: {line}"));
    }
    Ok(line)
}

/// The crypto each end's flow threads timed (TLS records, QUIC packets,
/// handshakes) within those threads' own CPU time: a timing the scheduler
/// stretched (a preempted sample) would put it above what the thread ran.
fn crypto_within_threads(doc: &Value) -> Result<(), String> {
    for side in ["client", "server"] {
        let crypto: f64 = doc[side]["flows"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| {
                let c = &f["io"]["crypto"];
                let share = f["bytes"].as_f64()? / f["bytes_total"].as_f64()?.max(1.0);
                Some((c["ns"].as_f64()? + c["handshake_ns"].as_f64().unwrap_or(0.0)) * share)
            })
            .sum();
        let cpu = doc[side]["cpu"]["threads"].as_f64().unwrap_or(0.0);
        if crypto > 1.02 * cpu {
            return Err(format!(
                "{side}: crypto {crypto:.0} ns timed on threads that ran {cpu:.0} ns"
            ));
        }
    }
    Ok(())
}

/// A `cpu` verdict names the test's own CPU: a flow thread that ran at least
/// 90% of the interval (not counting what it waited for a core), or one that
/// waited for the test's own other threads (the test the majority of the
/// host's busy time, which the evidence says), or a core without a thread,
/// which the rule names only when the test was that majority.
fn own_cpu(doc: &Value) -> bool {
    let b = &doc["diagnosis"]["bottleneck"];
    let evidence = doc["diagnosis"]["evidence"].as_str().unwrap_or("");
    match b["thread"]["what"].as_str() {
        Some("flow thread") => {
            b["thread"]["busy"].as_f64().is_some_and(|r| r >= 90.0)
                || evidence.contains("the test's own other threads")
        }
        Some(_) => false,
        None => b["core"].is_u64(),
    }
}

#[test]
fn induced_bottlenecks_are_each_diagnosed_on_a_busy_host() {
    let Some(_g) = ready("busy-host") else { return };
    let before = Before::take();
    /// Name, link flags, client flags, the verdicts that name the induced limit.
    type Case<'a> = (&'a str, &'a [&'a str], &'a [&'a str], &'a [&'a str]);
    let cases: [Case; 12] = [
        ("link", &["--rate", "200M"], &[], &["link"]),
        (
            "window over a long RTT",
            &["--delay", "10ms"],
            &["-w", "64K"],
            &["window", "receiver-window", "sender-buffer"],
        ),
        (
            "receiver window",
            &["--delay", "10ms"],
            &["--rcv-window", "4K"],
            &["receiver-window"],
        ),
        // 8 KiB, not lab_precise's 32: on a busy host the receiver lags
        // now and then, and its full buffer advertises as little as 40 KiB
        // (a CI run saw it, verdict "window" at 100% of 40 KiB/RTT). And a
        // receiver advertises little more than what arrives, so TCP_INFO
        // splits the time between the sender's buffer and the receiver's
        // window (runs saw 45% and 0%, 26% and 24%, and 0% and 52%): the
        // granted buffers (16 KiB against 8 MiB) make it the sender's buffer;
        // a window verdict naming sndbuf_limited is the induced limit too.
        (
            "sender buffer",
            &["--delay", "10ms"],
            &["-w", "8K", "--rcv-window", "4M"],
            &["sender-buffer", "window"],
        ),
        (
            "loss",
            &["--delay", "5ms", "--loss", "1%"],
            &["-C", "cubic"],
            &["loss"],
        ),
        (
            "pacing",
            &["--rate", "1G"],
            &["-b", "100M"],
            &["application"],
        ),
        ("MSS clamp", &["--rate", "100M"], &["-M", "200"], &["link"]),
        // A CPU-bound thread on a busy host: its CPU limit when it ran
        // (nearly) all the interval, or a core the test was the majority of;
        // a thread the load kept waiting for a core is starved: host busy.
        (
            "sender CPU thread",
            &[],
            &["-l", "1K"],
            &["cpu", "host-busy"],
        ),
        // A receiver checking every byte and kept waiting for a core lets its
        // window fill: TCP_INFO's direct evidence, judged before a starved
        // thread.
        (
            "receiver CPU thread",
            &[],
            &["--verify"],
            &["cpu", "host-busy", "receiver-window"],
        ),
        // TLS with small records: encryption holds a flow thread, and the
        // crypto timed on it stays within the thread's own time.
        (
            "TLS records",
            &[],
            &["-T", "tls-stream", "-l", "1K"],
            &["cpu", "receiver-window", "host-busy"],
        ),
        (
            "round trip",
            &["--delay", "5ms"],
            &["-T", "tcp-rr"],
            &["round-trip"],
        ),
        (
            "round trip, 4 flows",
            &["--delay", "5ms"],
            &["-T", "tcp-rr", "-P", "4"],
            &["round-trip"],
        ),
    ];
    let load = Load::start();
    let mut misses = Vec::new();
    for (what, link, client, want) in cases {
        let mut args = client.to_vec();
        args.extend_from_slice(&["-t", "3", "--warmup", "1"]);
        let doc = lab_json(link, &args);
        let got = doc["diagnosis"]["bottleneck"]["kind"]
            .as_str()
            .unwrap_or("")
            .to_string();
        let cpu_case = got == "cpu";
        let attributed = attribution(&doc);
        eprintln!("{what}: {}; {attributed:?}", doc["diagnosis"]);
        let evidence = doc["diagnosis"]["evidence"].as_str().unwrap_or("");
        if !want.contains(&got.as_str())
            || (what == "sender buffer" && got == "window" && !evidence.contains("sndbuf_limited"))
        {
            misses.push(format!("{what}: verdict {got}: {}", doc["diagnosis"]));
        } else if cpu_case && !own_cpu(&doc) {
            // A CPU verdict on a busy host is the test's own: a flow thread
            // that ran (nearly) all the interval, or a core it was most of.
            misses.push(format!(
                "{what}: not the test's own CPU: {}",
                doc["diagnosis"]
            ));
        }
        if let Err(e) = attributed {
            misses.push(format!("{what}: {e}"));
        }
        if let Err(e) = crypto_within_threads(&doc) {
            misses.push(format!("{what}: {e}"));
        }
    }
    drop(load);
    before.assert_restored();
    assert!(misses.is_empty(), "{misses:#?}");
}

/// Issue 35: `compare` does not cry wolf on a busy host. Ten pairs of identical
/// 5-repetition loopback sweeps under the same background load: no regression
/// (exit 0, no "REGRESSION" line) in any pair, without retries. Then a real
/// change in the lab, a link 30% slower under the same load: caught as a
/// regression of goodput, with the right sign.
#[test]
fn compare_under_the_same_load_finds_no_regression_and_a_slower_link() {
    let Some(_g) = ready("busy-host-compare") else {
        return;
    };
    let before = Before::take();
    let dir = std::env::temp_dir().join(format!("netsonde-busy-aa-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("aa.db");
    let db = db.to_str().unwrap();
    let sweep = |prefix: &[&str]| {
        let mut args: Vec<&str> = prefix.to_vec();
        args.extend_from_slice(&[
            "sweep",
            "--tests",
            "tcp-stream,tcp-rr",
            "--directions",
            "out",
            "--sizes",
            "1K,64K",
            "--repeat",
            "5",
            "-t",
            "0.3",
            "--warmup",
            "0.1",
            "--no-report",
            "--db",
            db,
        ]);
        let out = crate::util::run(&args, Duration::from_secs(300));
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let compare = |a: usize, b: usize| {
        let (a, b) = (a.to_string(), b.to_string());
        let out = crate::util::run(&["compare", &a, &b, "--db", db], Duration::from_secs(60));
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        (out.status.code(), text)
    };
    let load = Load::start();
    let mut alarms = Vec::new();
    for pair in 0..10 {
        sweep(&[]);
        sweep(&[]);
        let (code, text) = compare(2 * pair + 1, 2 * pair + 2);
        eprintln!("A/A pair {}: exit {code:?}\n{text}", pair + 1);
        if code != Some(0) || text.contains("REGRESSION") {
            alarms.push(format!("pair {}: exit {code:?}\n{text}", pair + 1));
        }
    }
    // The same sweep through a lab link, then through one 30% slower.
    let lab = |rate: &str| sweep(&["lab", "run", "--rate", rate, "--"]);
    lab("100M");
    lab("70M");
    let (code, text) = compare(21, 22);
    eprintln!("100M against 70M: exit {code:?}\n{text}");
    drop(load);
    before.assert_restored();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(alarms.is_empty(), "A/A regressions: {alarms:#?}");
    assert_eq!(code, Some(3), "a 30% slower link is a regression: {text}");
    let goodput = text
        .lines()
        .find(|l| l.contains("goodput") && l.contains("REGRESSION"))
        .unwrap_or_else(|| panic!("no goodput regression: {text}"));
    assert!(
        goodput.contains("-2") || goodput.contains("-3"),
        "{goodput}"
    );
}
