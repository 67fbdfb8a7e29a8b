//! The lab (`netsonde lab`): the physics of the emulated link within stated
//! tolerances, on both mechanisms this kernel has (veth with tbf/htb, and the
//! userspace emulator on TUN), and cleanup on every path out (success, error,
//! SIGTERM, SIGKILL then `lab clean`). Every test checks that the namespace and
//! link lists are as they were. Needs root; skips out loud without it.
//!
//! Lab tests run one at a time (a lock): they measure timing and rates. The
//! tolerances hold on a quiet machine; the test binary runs other modules' tests
//! (loopback throughput, say) on the same two cores at the same time, so a physics
//! measurement that misses is repeated, up to three times, before it fails.

use std::collections::BTreeSet;
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::{bin, is_root, run};

static SERIAL: Mutex<()> = Mutex::new(());

/// The lock, or `None` (after saying why) when the lab cannot run here.
pub(crate) fn ready(test: &str) -> Option<MutexGuard<'static, ()>> {
    let why = if !is_root() {
        Some("needs root to create network namespaces")
    } else if Command::new("ip").arg("-V").output().is_err()
        || Command::new("tc").arg("-V").output().is_err()
    {
        Some("iproute2 ('ip', 'tc') is not installed")
    } else if !std::path::Path::new("/dev/net/tun").exists() {
        Some("no /dev/net/tun for the userspace emulator")
    } else {
        None
    };
    if let Some(why) = why {
        eprintln!("SKIPPED lab::{test}: {why}");
        return None;
    }
    Some(SERIAL.lock().unwrap_or_else(|e| e.into_inner()))
}

/// Namespaces and root-namespace links before a test. Namespaces that other test
/// modules make at the same time (`sonde-acc-*`, `sonde-io-*`: not a lab's
/// `sonde-NAME-cli`/`-srv`) are left out.
struct Before {
    netns: BTreeSet<String>,
    links: BTreeSet<String>,
}

fn netns() -> BTreeSet<String> {
    let out = Command::new("ip").args(["netns", "list"]).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| !n.starts_with("sonde-") || n.ends_with("-cli") || n.ends_with("-srv"))
        .map(str::to_string)
        .collect()
}

fn links() -> BTreeSet<String> {
    let out = Command::new("ip")
        .args(["-o", "link", "show"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split(':').nth(1))
        .map(|n| n.trim().to_string())
        .collect()
}

impl Before {
    fn take() -> Before {
        Before {
            netns: netns(),
            links: links(),
        }
    }

    fn assert_restored(&self) {
        assert_eq!(netns(), self.netns, "namespace list changed");
        assert_eq!(links(), self.links, "link list changed");
    }
}

/// `netsonde lab run LINK... -- client CLIENT... --json`, parsed.
fn lab_json(link: &[&str], client: &[&str]) -> Value {
    let mut args = vec!["lab", "run"];
    args.extend_from_slice(link);
    args.extend_from_slice(&["--", "client"]);
    args.extend_from_slice(client);
    args.push("--json");
    let out = run(&args, Duration::from_secs(90));
    assert!(
        out.status.success(),
        "netsonde {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON document")
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Whether `got` is within `rel` of `want`, saying how close.
fn within(what: &str, got: f64, want: f64, rel: f64) -> Result<(), String> {
    let err = (got - want).abs() / want;
    eprintln!(
        "{what}: got {got:.4e}, want {want:.4e}, error {:.2}% (tolerance {:.0}%)",
        err * 100.0,
        rel * 100.0
    );
    if err <= rel {
        Ok(())
    } else {
        Err(format!("{what}: {got} vs {want}: {:.2}%", err * 100.0))
    }
}

/// Runs a measurement and its check up to three times; fails with every miss.
fn up_to_three(what: &str, mut f: impl FnMut() -> Result<(), String>) {
    let mut misses = Vec::new();
    for attempt in 1..=3 {
        match f() {
            Ok(()) => return,
            Err(e) => {
                eprintln!("{what}: attempt {attempt} missed: {e}");
                misses.push(e);
            }
        }
    }
    panic!("{what}: three misses: {misses:#?}");
}

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
        up_to_three(&what, || {
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
            let doc = lab_json(&link, &["-t", "3", "--warmup", "1"]);
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
                "{what}: got {got:.5e}, want {want:.5e}, error {:+.3}%",
                err * 100.0
            );
            if (-below..=above).contains(&err) {
                Ok(())
            } else {
                Err(format!(
                    "{what}: {got:.5e} is {:+.3}% from {want:.5e} (allowed -{:.2}% to +{:.2}%)",
                    err * 100.0,
                    below * 100.0,
                    above * 100.0
                ))
            }
        });
    }
    before.assert_restored();
}

#[test]
fn a_larger_mtu_raises_udp_goodput_by_the_header_share_at_a_fixed_rate() {
    let Some(_g) = ready("mtu") else { return };
    let before = Before::take();
    let rate = 50e6;
    up_to_three("MTU 1500 -> 9000", || {
        let mut got = Vec::new();
        for mtu in [1500.0, 9000.0] {
            // The largest datagram that needs no fragment: MTU less IPv4 and UDP
            // headers; sent faster than the link so the link is the limit.
            let size = format!("{}", mtu - 28.0);
            let client = [
                "-T",
                "udp-stream",
                "-l",
                &size,
                "-b",
                "60M",
                "-t",
                "3",
                "--warmup",
                "500ms",
            ];
            let doc = lab_json(&["--mtu", &format!("{mtu}"), "--rate", "50M"], &client);
            assert_eq!(doc["server"]["host"]["interface"]["mtu"], mtu as u64);
            let d = &doc["directions"][0];
            let (goodput, pps) = (f(&d["goodput"]), f(&d["packets_per_sec"]));
            let share = (mtu - 28.0) / (mtu + 38.0);
            within(
                &format!("mtu {mtu} UDP goodput"),
                goodput,
                rate * share,
                0.05,
            )?;
            let want_pps = rate / 8.0 / (mtu + 38.0);
            within(&format!("mtu {mtu} packet rate"), pps, want_pps, 0.05)?;
            got.push((goodput, pps));
        }
        // 1500 -> 9000: goodput rises by the header share, the packet rate falls.
        let want = ((9000.0 - 28.0) / 9038.0) / ((1500.0 - 28.0) / 1538.0);
        within("goodput ratio 9000/1500", got[1].0 / got[0].0, want, 0.02)?;
        within(
            "packet rate ratio",
            got[1].1 / got[0].1,
            1538.0 / 9038.0,
            0.05,
        )
    });
    before.assert_restored();
}

#[test]
fn a_one_way_delay_adds_twice_itself_to_the_rr_latency() {
    let Some(_g) = ready("delay") else { return };
    let before = Before::take();
    let p50 = |link: &[&str]| -> f64 {
        let doc = lab_json(link, &["-T", "tcp-rr", "-t", "3", "--warmup", "300ms"]);
        assert_eq!(doc["link"]["mechanism"], "emulator");
        f(&doc["rr"]["latency"]["p50"])
    };
    for d_ms in [5.0, 20.0] {
        up_to_three(&format!("delay {d_ms} ms"), || {
            let base = p50(&["--mechanism", "emulator"]);
            let got = p50(&["--delay", &format!("{d_ms}ms")]);
            let want = 2.0 * d_ms * 1e6 + base;
            let tol = (0.05 * want).max(0.5e6);
            eprintln!(
                "delay {d_ms} ms each way: RR p50 {:.3} ms, want 2D + base ({:.1} us) = {:.3} ms ± {:.3} ms",
                got / 1e6,
                base / 1e3,
                want / 1e6,
                tol / 1e6
            );
            if (got - want).abs() <= tol {
                Ok(())
            } else {
                Err(format!("{got} vs {want}"))
            }
        });
    }
    before.assert_restored();
}

#[test]
fn a_window_below_the_bdp_gives_window_over_rtt() {
    let Some(_g) = ready("window") else { return };
    let before = Before::take();
    // RTT 50 ms; the BDP at the emulator's ~1 Gbit/s is about 6 MB.
    let name = format!("w{}", std::process::id());
    up_to_three("window 256K over 50 ms", || window_over_rtt(&name));
    before.assert_restored();
}

fn window_over_rtt(name: &str) -> Result<(), String> {
    let child = crate::util::cmd()
        .args([
            "lab", "run", "--name", name, "--delay", "25ms", "--", "client",
        ])
        .args(["-t", "4", "--warmup", "2", "-w", "256K", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The window Linux advertises for SO_RCVBUF W is 2W times the share of payload
    // in its buffers: read it from the sender's socket in the middle of the run.
    let ns = format!("sonde-{name}-cli");
    std::thread::sleep(Duration::from_millis(3500));
    let ss = Command::new("ip")
        .args(["netns", "exec", &ns, "ss", "-tni", "dst", "10.77.0.1"])
        .output()
        .unwrap();
    let ss = String::from_utf8_lossy(&ss.stdout).to_string();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let window = ss
        .split_whitespace()
        .filter_map(|w| w.strip_prefix("snd_wnd:"))
        .filter_map(|w| w.parse::<f64>().ok())
        .fold(0.0, f64::max);
    if !(262144.0..=2.0 * 262144.0).contains(&window) {
        return Err(format!("advertised window {window} for -w 256K: {ss}"));
    }
    let srtt = f(&doc["client"]["flows"][0]["tcp_info"]["srtt"]) / 1e9;
    assert!(srtt >= 0.040, "RTT {srtt}");
    let goodput = f(&doc["directions"][0]["goodput"]);
    assert!(
        window * 8.0 / srtt < 1e9,
        "the window must be below the BDP"
    );
    eprintln!("advertised window {window} B, RTT {:.2} ms", srtt * 1e3);
    within("window-limited goodput", goodput, window * 8.0 / srtt, 0.15)
}

#[test]
fn random_loss_on_udp_is_within_the_binomial_interval() {
    let Some(_g) = ready("loss") else { return };
    let before = Before::take();
    for (loss, p) in [("2%/0", 0.02), ("gemodel:1%,20%/0", 1.0 / 21.0)] {
        up_to_three(&format!("loss {loss}"), || {
            let doc = lab_json(
                &["--loss", loss, "--seed", "7"],
                &["-T", "udp-stream", "-l", "1000", "-b", "20M", "-t", "3"],
            );
            assert_eq!(doc["link"]["spec"]["seed"], 7);
            let d = &doc["directions"][0];
            let n = f(&d["udp"]["packets_total"]);
            let lost = f(&d["udp"]["lost"]);
            assert!(n > 5000.0, "{d}");
            let sd = (n * p * (1.0 - p)).sqrt();
            // Independent losses: the binomial 99% interval. Bursts (Gilbert-Elliott)
            // are correlated (mean burst 1/r = 5 packets): allow 5 times the variance.
            let z = if loss.starts_with("ge") {
                2.576 * 5.0_f64.sqrt()
            } else {
                2.576
            };
            eprintln!(
                "loss {loss}: {lost} of {n} ({:.3}%), want {:.3}% ± {:.3}%",
                100.0 * lost / n,
                100.0 * p,
                100.0 * z * sd / n
            );
            if (lost - n * p).abs() <= z * sd + 1.0 {
                Ok(())
            } else {
                Err(format!("{d}"))
            }
        });
    }
    before.assert_restored();
}

/// Polls until `f` holds or `limit` passes.
fn wait_for(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    f()
}

fn state(name: &str) -> Option<Value> {
    let text = std::fs::read_to_string(format!("/run/netsonde-lab/{name}.json")).ok()?;
    serde_json::from_str(&text).ok()
}

fn pid_alive(pid: u64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.contains(") Z "))
        .unwrap_or(false)
}

/// Starts a long lab run named `name` and waits until its link is built.
fn start_long_run(name: &str) -> (std::process::Child, Value) {
    let child = crate::util::cmd()
        .args([
            "lab", "run", "--name", name, "--delay", "1ms", "--", "client", "-t", "30",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut st = None;
    assert!(
        wait_for(Duration::from_secs(15), || {
            st = state(name).filter(|s| {
                s["link"].is_object() && s["processes"].as_array().is_some_and(|p| p.len() >= 2)
            });
            st.is_some()
        }),
        "lab {name} did not come up"
    );
    (child, st.unwrap())
}

#[test]
fn sigkill_leaves_leftovers_that_lab_clean_removes() {
    let Some(_g) = ready("sigkill") else { return };
    let before = Before::take();
    let name = format!("k{}", std::process::id());
    let (mut child, st) = start_long_run(&name);
    child.kill().unwrap(); // SIGKILL: no chance to clean up
    child.wait().unwrap();
    let leftover = netns();
    assert!(
        leftover.contains(&format!("sonde-{name}-cli")),
        "{leftover:?}"
    );
    // The server and the client die with the lab (parent-death signal).
    let pids: Vec<u64> = st["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["proc"]["pid"].as_u64().unwrap())
        .collect();
    assert!(
        wait_for(Duration::from_secs(5), || !pids
            .iter()
            .any(|&p| pid_alive(p))),
        "processes {pids:?} outlived the lab"
    );
    let out = run(&["lab", "clean"], Duration::from_secs(30));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains(&format!("removed lab {name}")), "{text}");
    assert!(state(&name).is_none());
    before.assert_restored();
}

#[test]
fn sigterm_and_failures_tear_the_lab_down() {
    let Some(_g) = ready("sigterm") else { return };
    let before = Before::take();
    let name = format!("t{}", std::process::id());
    let (child, _) = start_long_run(&name);
    let t0 = Instant::now();
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(t0.elapsed() < Duration::from_secs(15));
    assert!(!out.status.success(), "a stopped client is not a success");
    assert!(state(&name).is_none());
    before.assert_restored();
    // An invocation that fails (nothing listens on port 9 of the client host's
    // loopback): its exit code, and the lab torn down all the same.
    let out = run(
        &[
            "lab",
            "run",
            "--",
            "client",
            "127.0.0.1",
            "-p",
            "9",
            "-t",
            "1",
        ],
        Duration::from_secs(60),
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    before.assert_restored();
    // Bad link settings: a usage error before anything is made.
    let out = run(
        &["lab", "run", "--mtu", "70000", "--", "client"],
        Duration::from_secs(10),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--mtu"));
    before.assert_restored();
}

#[test]
fn the_lab_leaves_alone_what_it_did_not_make() {
    let Some(_g) = ready("foreign") else { return };
    let name = format!("f{}", std::process::id());
    let foreign = format!("sonde-{name}-cli");
    struct Guard(String);
    impl Drop for Guard {
        fn drop(&mut self) {
            let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
        }
    }
    assert!(Command::new("ip")
        .args(["netns", "add", &foreign])
        .status()
        .unwrap()
        .success());
    let _guard = Guard(foreign.clone());
    let before = Before::take();
    let out = run(
        &["lab", "run", "--name", &name, "--", "client", "-t", "1"],
        Duration::from_secs(30),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("did not make it"), "{err}");
    let out = run(&["lab", "clean"], Duration::from_secs(30));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("left alone: namespace {foreign}")),
        "{text}"
    );
    before.assert_restored();
    assert!(netns().contains(&foreign));
}

#[test]
fn without_root_the_lab_says_so() {
    let Some(_g) = ready("not-root") else { return };
    // Run as nobody, with no capabilities.
    let out = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
        ])
        .arg(bin())
        .args(["lab", "run", "--", "client", "-t", "1"])
        .output();
    let Ok(out) = out else {
        eprintln!("SKIPPED lab::not-root: setpriv is not installed");
        return;
    };
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("Permission denied") && !err.contains("netsonde") {
        eprintln!(
            "SKIPPED lab::not-root: nobody cannot execute {}: {err}",
            bin()
        );
        return;
    }
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("the lab needs root"), "{err}");
}

#[test]
fn lab_up_keeps_a_lab_with_a_server_until_lab_down() {
    let Some(_g) = ready("up-down") else { return };
    let before = Before::take();
    let name = format!("u{}", std::process::id());
    let out = run(
        &[
            "lab", "up", "--name", &name, "--delay", "5ms", "--port", "5399",
        ],
        Duration::from_secs(30),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let st = state(&name).expect("state file");
    let pids: Vec<u64> = st["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["proc"]["pid"].as_u64().unwrap())
        .collect();
    assert_eq!(pids.len(), 2, "emulator and server: {st}");
    // Down whatever happens below.
    struct Down(String);
    impl Drop for Down {
        fn drop(&mut self) {
            let _ = crate::util::cmd().args(["lab", "down", &self.0]).output();
        }
    }
    let down = Down(name.clone());
    // A test from inside the client namespace, by hand.
    let out = Command::new("ip")
        .args(["netns", "exec", &format!("sonde-{name}-cli"), bin()])
        .args([
            "client",
            "10.77.0.1",
            "-p",
            "5399",
            "-T",
            "tcp-rr",
            "-t",
            "1",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let p50 = f(&doc["rr"]["latency"]["p50"]);
    assert!(
        (10e6..12e6).contains(&p50),
        "RR p50 {p50} over 5 ms each way"
    );
    let out = run(&["lab", "down", &name], Duration::from_secs(30));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::mem::forget(down);
    assert!(!pids.iter().any(|&p| pid_alive(p)), "{pids:?} still run");
    assert!(state(&name).is_none());
    before.assert_restored();
}

#[test]
fn a_sweep_over_link_axes_rebuilds_the_link_per_point_and_records_it() {
    let Some(_g) = ready("sweep") else { return };
    let before = Before::take();
    let dir = std::env::temp_dir().join(format!("netsonde-lab-sweep-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("runs.db");
    let db = db.to_str().unwrap();
    let out = run(
        &[
            "lab",
            "run",
            "--rate",
            "100M",
            "--",
            "sweep",
            "--tests",
            "tcp-stream",
            "--sizes",
            "64K",
            "--mtus",
            "1500,9000",
            "--rates",
            "50M,100M",
            "--repeat",
            "2",
            "-t",
            "1",
            "--warmup",
            "300ms",
            "--db",
            db,
            "--no-report",
        ],
        Duration::from_secs(120),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // Four links, each built once per round (the order keeps a link's points
    // together): at most 2 rounds x 4 links, and never twice in a row.
    let changes = err.matches("link now").count();
    assert!((3..=8).contains(&changes), "{changes} link changes: {err}");
    let conn = netsonde_store::Store::open(std::path::Path::new(db)).unwrap();
    let row = conn.run(1).unwrap();
    let link: Value = serde_json::from_str(row.link_json.as_deref().unwrap()).unwrap();
    assert_eq!(link["mechanism"], "veth");
    for p in conn.points(1).unwrap() {
        let axes: Value = serde_json::from_str(&p.axes_json).unwrap();
        let mtu: u64 = axes["mtu"].as_str().unwrap().parse().unwrap();
        let rate: f64 = axes["rate"].as_str().unwrap().parse().unwrap();
        assert_eq!(p.reps.len(), 2);
        for r in &p.reps {
            let rep: Value = serde_json::from_str(&r.report_json).unwrap();
            assert_eq!(rep["link"]["spec"]["up"]["mtu"], mtu);
            assert_eq!(rep["client"]["host"]["interface"]["mtu"], mtu);
            assert_eq!(f(&rep["link"]["spec"]["down"]["rate"]), rate);
            let mtu = mtu as f64;
            let want = rate * (mtu - 52.0) / (mtu + 38.0);
            let got = f(&rep["directions"][0]["goodput"]);
            // One-second repetitions: the shaper's 10 ms bucket adds up to 1%.
            assert!((got / want - 1.0).abs() < 0.08, "{axes}: {got} vs {want}");
        }
    }
    // Outside the lab, link axes are refused before anything runs.
    let out = run(
        &["sweep", "--mtus", "9000", "--db", db, "--no-report"],
        Duration::from_secs(30),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("netsonde lab run"));
    let _ = std::fs::remove_dir_all(&dir);
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
        (
            "sender buffer",
            &["--delay", "10ms"],
            &["-w", "64K", "--rcv-window", "4M"],
            &["sender-buffer"],
            nothing,
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

/// CPU-bound: 64-byte messages on loopback, one write per message.
#[test]
fn small_messages_on_loopback_are_diagnosed_cpu_bound() {
    let Some(_g) = ready("cpu-bound") else { return };
    up_to_three("cpu-bound", || {
        let doc = crate::util::json(&["-l", "64", "-t", "2", "--warmup", "0.5"]);
        let d = &doc["diagnosis"];
        eprintln!("cpu-bound: {d}");
        if d["bottleneck"]["kind"] == "cpu" {
            Ok(())
        } else {
            Err(format!("verdict {d}"))
        }
    });
    // A line rate below what loopback carries is an input error, not an
    // efficiency above 100%.
    let doc = crate::util::json(&["-t", "1", "--line-rate", "1G"]);
    assert_eq!(
        doc["diagnosis"]["bottleneck"]["kind"], "line-rate-below-goodput",
        "{}",
        doc["diagnosis"]
    );
}

/// RFC 6349 metrics against hand computations on a link of known rate, delay and
/// loss: 100 Mbit/s, 10 ms each way (a 20 ms round trip), MTU 1500.
#[test]
fn rfc6349_metrics_match_the_links_physics() {
    let Some(_g) = ready("rfc6349") else { return };
    let before = Before::take();
    let rate = 100e6;
    // The maximum achievable TCP throughput: 1448 payload bytes of every 1538 on
    // the wire (Ethernet 38 with preamble and gap, IPv4 20, TCP with timestamps 32).
    let ideal = rate * 1448.0 / 1538.0;
    up_to_three("rfc6349, no loss", || {
        let doc = lab_json(
            &["--rate", "100M", "--delay", "10ms", "--mtu", "1500"],
            &["-t", "4", "--warmup", "1"],
        );
        let m = &doc["rfc6349"];
        eprintln!("{m}");
        let base = f(&m["baseline_rtt"]);
        within("baseline RTT", base, 20e6, 0.1)?;
        within("BDP", f(&m["bdp"]), rate * base * 1e-9 / 8.0, 0.001)?;
        within("ideal", f(&m["ideal"]), ideal, 0.001)?;
        let goodput = f(&doc["directions"][0]["goodput"]);
        within(
            "transfer time ratio",
            f(&m["transfer_time_ratio"]),
            ideal / goodput,
            0.001,
        )?;
        within(
            "transfer time ratio near 1",
            f(&m["transfer_time_ratio"]),
            1.0,
            0.06,
        )?;
        if f(&m["tcp_efficiency_pct"]) < 99.9 {
            return Err(format!(
                "efficiency {} without loss",
                m["tcp_efficiency_pct"]
            ));
        }
        // The default queue (50 ms at the rate) fills: the mean RTT rises.
        if f(&m["buffer_delay_pct"]) <= 0.0 {
            return Err(format!("no buffer delay with a full queue: {m}"));
        }
        Ok(())
    });
    up_to_three("rfc6349, 1% loss", || {
        let doc = lab_json(
            &["--rate", "100M", "--delay", "10ms", "--loss", "1%"],
            &["-C", "cubic", "-t", "4", "--warmup", "1"],
        );
        let m = &doc["rfc6349"];
        eprintln!("{m}");
        // About 1% of the segments are lost and sent again: the efficiency is about
        // 99%, and by definition the share not retransmitted.
        let e = f(&m["tcp_efficiency_pct"]);
        if !(97.0..99.8).contains(&e) {
            return Err(format!("efficiency {e}% at 1% loss"));
        }
        Ok(())
    });
    before.assert_restored();
}

/// Slow start over a 60 ms round trip, measured with no warm-up, is flagged with
/// when it settled. (That a steady flow is not flagged is checked on loopback, in
/// `figures`, where no other test's load makes a 50 Mbit/s link's rates swing.)
#[test]
fn a_ramp_is_flagged_with_when_it_settled() {
    let Some(_g) = ready("steady") else { return };
    let before = Before::take();
    let link = ["--rate", "50M", "--delay", "30ms"];
    up_to_three("ramp", || {
        let cold = lab_json(
            &link,
            &["-C", "cubic", "-t", "3", "-i", "0.25", "--warmup", "0"],
        );
        let w = cold["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["kind"] == "not-steady")
            .cloned()
            .ok_or("no not-steady warning with no warm-up")?;
        let after = f(&w["settled_after"]);
        if (0.2e9..=2.0e9).contains(&after) {
            Ok(())
        } else {
            Err(format!("settled after {after} ns: {w}"))
        }
    });
    before.assert_restored();
}

/// A sweep diagnoses its points too: each repetition's stored report carries its
/// verdict, and the report's point takes the one most repetitions got. A link
/// limited to 200 Mbit/s is link-bound; the same point paced at 50 Mbit/s is
/// application-bound.
#[test]
fn a_sweep_diagnoses_each_point_from_its_repetitions() {
    let Some(_g) = ready("sweep-diagnosis") else {
        return;
    };
    let before = Before::take();
    let dir = std::env::temp_dir().join(format!("netsonde-lab-diag-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("runs.db");
    let db = db.to_str().unwrap();
    for (rate, pace) in [(None, "link"), (Some("50M"), "application")] {
        let mut args = vec![
            "lab",
            "run",
            "--rate",
            "200M",
            "--",
            "sweep",
            "--tests",
            "tcp-stream",
            "--sizes",
            "64K",
            "--repeat",
            "3",
            "-t",
            "1",
            "--warmup",
            "500ms",
            "--db",
            db,
            "--no-report",
        ];
        let file;
        if let Some(r) = rate {
            // Pacing is an option of the run: through an experiment file.
            file = dir.join("paced.toml");
            std::fs::write(
                &file,
                format!("tests = [\"tcp-stream\"]\nsizes = \"64K\"\nrepeat = 3\ntime = \"1\"\nwarmup = \"500ms\"\n[options]\nrate = \"{r}\"\n"),
            )
            .unwrap();
            args = vec![
                "lab",
                "run",
                "--rate",
                "200M",
                "--",
                "run",
                file.to_str().unwrap(),
                "--db",
                db,
                "--no-report",
            ];
        }
        let out = run(&args, Duration::from_secs(120));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let store = netsonde_store::Store::open(std::path::Path::new(db)).unwrap();
        let id = store.latest_run().unwrap().unwrap();
        let export = run(
            &["runs", "export", &id.to_string(), "--json", "--db", db],
            Duration::from_secs(30),
        );
        let study: Value = serde_json::from_slice(&export.stdout).unwrap();
        let row = &study["efficiency"][0];
        assert_eq!(row["bottleneck"]["kind"], pace, "{row}");
        // Every repetition was diagnosed and stored with its verdict.
        for p in store.points(id).unwrap() {
            for r in &p.reps {
                let rep: Value = serde_json::from_str(&r.report_json).unwrap();
                assert!(rep["diagnosis"]["bottleneck"]["kind"].is_string(), "{rep}");
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    before.assert_restored();
}

/// `netsonde search` at 1518 B frames (1 s trials) over a 100 Mbit/s lab link
/// with a 10-frame queue, `extra` added: its one search, or why it failed.
fn search_on_a_100m_link(extra: &[&str]) -> Result<Value, String> {
    let args = [
        &[
            "lab", "run", "--rate", "100M", "--queue", "10p", "--", "search",
        ][..],
        extra,
        &[
            "--frames",
            "1518",
            "--trial",
            "1s",
            "--warmup",
            "0.3s",
            "--json",
            "--no-report",
        ],
    ]
    .concat();
    let out = run(&args, Duration::from_secs(120));
    if !out.status.success() {
        return Err(format!(
            "search failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let doc: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    Ok(doc["searches"][0].clone())
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
    if !crate::io_strategies::supported().iter().any(|s| s == "xdp") {
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

/// `lab run LINK -- client --probe ...`: the load summary's added median of
/// `kind` (ms), the one-way delays, and the document.
fn added_ms(doc: &Value, kind: &str) -> f64 {
    let added = doc["load"]["summary"]["added"].as_array().unwrap();
    f(&added.iter().find(|a| a["kind"] == kind).unwrap()["p50_ms"])
}

/// Bufferbloat on purpose: a UDP load at 1.5 times a 20 Mbit/s line keeps the
/// bottleneck queue full, so every probe waits behind the whole queue: the
/// loaded round trip is the 20 ms idle one plus queue/rate (each full-size
/// datagram is a 1538-byte frame on the line). A TCP load would not do: its
/// congestion control (BBR here, or Cubic's HyStart) keeps the queue short of
/// full within a test this long, so queue/rate is only its ceiling; that is
/// checked too.
#[test]
fn a_full_queue_adds_its_length_over_the_rate_to_every_round_trip() {
    let Some(_g) = ready("bufferbloat") else {
        return;
    };
    let before = Before::take();
    let frame_s = 1538.0 * 8.0 / 20e6;
    for packets in [1000.0, 10.0] {
        let q = format!("{packets}p");
        let want = packets * frame_s * 1e3;
        up_to_three(&format!("queue {q}"), || {
            let doc = lab_json(
                &["--rate", "20M", "--delay", "10ms", "--queue", &q],
                &["--probe", "-u", "-b", "30M", "-t", "4", "--warmup", "2"],
            );
            let s = &doc["load"]["summary"];
            let idle = s["phases"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["phase"] == "idle" && p["kind"] == "udp")
                .unwrap();
            let idle_ms = f(&idle["p50"]) / 1e6;
            if !(20.0..21.0).contains(&idle_ms) {
                return Err(format!("idle round trip {idle_ms} ms, not 20 ms"));
            }
            // The queue is on the way up: the one-way delays say so (one clock).
            let w = &s["one_way"];
            assert_eq!(w["clock"], "exact", "{w}");
            let down = f(&w["down_loaded_ms"]);
            if !(9.5..11.0).contains(&down) {
                return Err(format!("the unloaded direction took {down} ms"));
            }
            // Small datagrams wait behind full ones: within 20% of queue/rate, and
            // for the short queue, a packet's serialization more.
            within(
                &format!("added latency, queue {q}"),
                added_ms(&doc, "udp"),
                want,
                0.2 + if packets < 100.0 {
                    frame_s * 1e3 / want
                } else {
                    0.0
                },
            )
        });
    }
    // A TCP load (Cubic, one flow, 1000 packets): more latency than idle, never
    // more than the queue can hold.
    up_to_three("tcp load", || {
        let doc = lab_json(
            &["--rate", "20M", "--delay", "10ms", "--queue", "1000p"],
            &["--probe", "-C", "cubic", "-t", "4", "--warmup", "3"],
        );
        let added = added_ms(&doc, "udp");
        let ceiling = 1000.0 * frame_s * 1e3;
        eprintln!("tcp load: added {added:.1} ms, ceiling {ceiling:.1} ms");
        let p = &doc["load"]["summary"]["phases"];
        let worst = p
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["kind"] == "udp" && p["phase"] == "loaded")
            .map(|p| f(&p["p90"]) / 1e6)
            .fold(0.0, f64::max);
        if added > 20.0 && worst <= 20.0 + ceiling * 1.05 + 2.0 {
            Ok(())
        } else {
            Err(format!(
                "added {added} ms, loaded p90 {worst} ms, ceiling {ceiling} ms"
            ))
        }
    });
    before.assert_restored();
}

/// Four flows through a 100 Mbit/s link share it: Jain's index of at least 0.9,
/// their sum within 5% of the line's TCP payload share. One flow held to a
/// window 4 times smaller than the other three (at a 20 ms round trip, 32 KiB
/// carries about 13 Mbit/s, under a fair share) takes less, and the index drops.
#[test]
fn parallel_flows_share_a_link_fairly_unless_one_is_held_back() {
    let Some(_g) = ready("fairness") else { return };
    let before = Before::take();
    let ceiling = 100e6 * 1448.0 / 1538.0;
    let mut equal = 0.0;
    up_to_three("equal windows", || {
        let doc = lab_json(
            &["--rate", "100M", "--delay", "10ms"],
            &[
                "--probe",
                "--probe-idle",
                "1",
                "-P",
                "4",
                "-t",
                "5",
                "--warmup",
                "2",
                "-w",
                "128K",
            ],
        );
        let fair = &doc["load"]["summary"]["fairness"][0];
        assert_eq!(fair["flows"], 4, "{fair}");
        equal = f(&fair["jain"]);
        eprintln!("equal windows: Jain {equal:.4}");
        if equal < 0.9 {
            return Err(format!("Jain's index {equal} under 0.9"));
        }
        within(
            "sum of 4 flows",
            f(&doc["directions"][0]["goodput"]),
            ceiling,
            0.05,
        )
    });
    up_to_three("one small window", || {
        let doc = lab_json(
            &["--rate", "100M", "--delay", "10ms"],
            &[
                "--probe",
                "--probe-idle",
                "1",
                "-P",
                "4",
                "-t",
                "5",
                "--warmup",
                "2",
                "-w",
                "32K,128K,128K,128K",
            ],
        );
        let fair = &doc["load"]["summary"]["fairness"][0];
        let j = f(&fair["jain"]);
        let rates: Vec<(u64, f64)> = doc["server"]["flows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|fl| {
                (
                    fl["id"].as_u64().unwrap(),
                    f(&fl["bytes"]) * 8.0 / f(&fl["elapsed"]) * 1e9,
                )
            })
            .collect();
        eprintln!("one small window: Jain {j:.4} (equal: {equal:.4}); rates {rates:?}");
        let slowest = rates.iter().min_by(|a, b| a.1.total_cmp(&b.1)).unwrap().0;
        if j < equal - 0.02 && slowest == 0 {
            Ok(())
        } else {
            Err(format!("Jain {j} against {equal}; slowest flow {slowest}"))
        }
    });
    before.assert_restored();
}
