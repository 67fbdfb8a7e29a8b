//! What the lab's tests share (in both test binaries): the lab tests' lock,
//! the check that a test left the namespaces and links as it found them,
//! `lab run` helpers, and tries-with-misses.

use std::collections::BTreeSet;
use std::process::Command;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use serde_json::Value;

use crate::util::{is_root, run};

static SERIAL: Mutex<()> = Mutex::new(());

/// The lab tests' turn, for tests elsewhere whose load would skew a lab
/// test's figures (a mesh of agents on loopback) or that build namespaces.
pub(crate) fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

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
pub(crate) struct Before {
    netns: BTreeSet<String>,
    links: BTreeSet<String>,
}

pub(crate) fn netns() -> BTreeSet<String> {
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
    pub(crate) fn take() -> Before {
        Before {
            netns: netns(),
            links: links(),
        }
    }

    pub(crate) fn assert_restored(&self) {
        assert_eq!(netns(), self.netns, "namespace list changed");
        assert_eq!(links(), self.links, "link list changed");
    }
}

/// `netsonde lab run LINK... -- client CLIENT... --json`, parsed.
pub(crate) fn lab_json(link: &[&str], client: &[&str]) -> Value {
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

pub(crate) fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Whether `got` is within `rel` of `want`, saying how close.
pub(crate) fn within(what: &str, got: f64, want: f64, rel: f64) -> Result<(), String> {
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

/// Steal share of this host's CPU time at or above which a userspace
/// emulator's precision cannot be judged.
pub(crate) const STARVED_STEAL: f64 = 0.03;

/// This host's (steal, total) CPU ticks so far, from /proc/stat.
pub(crate) fn steal_ticks() -> (u64, u64) {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let cpu: Vec<u64> = stat
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .skip(1)
        .filter_map(|v| v.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal (guest time is in user).
    (cpu.get(7).copied().unwrap_or(0), cpu.iter().take(8).sum())
}

/// The share of CPU time stolen between two readings.
pub(crate) fn steal_share(a: (u64, u64), b: (u64, u64)) -> f64 {
    let total = b.1.saturating_sub(a.1);
    if total == 0 {
        0.0
    } else {
        b.0.saturating_sub(a.0) as f64 / total as f64
    }
}

/// Runs a measurement and its check up to three times: `Ok` at the first
/// pass, else every miss.
pub(crate) fn tried_three(
    what: &str,
    mut f: impl FnMut() -> Result<(), String>,
) -> Result<(), Vec<String>> {
    let mut misses = Vec::new();
    for attempt in 1..=3 {
        match f() {
            Ok(()) => return Ok(()),
            Err(e) => {
                eprintln!("{what}: attempt {attempt} missed: {e}");
                misses.push(e);
            }
        }
    }
    Err(misses)
}

/// Runs a measurement and its check up to three times; fails with every miss.
pub(crate) fn up_to_three(what: &str, f: impl FnMut() -> Result<(), String>) {
    if let Err(misses) = tried_three(what, f) {
        panic!("{what}: three misses: {misses:#?}");
    }
}

/// `netsonde search` at 1518 B frames (1 s trials) over a 100 Mbit/s lab link
/// with a 10-frame queue, `extra` added: its one search, or why it failed.
pub(crate) fn search_on_a_100m_link(extra: &[&str]) -> Result<Value, String> {
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
