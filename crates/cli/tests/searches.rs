//! Loss-free rate searches end to end: every trial reported with consistent
//! bounds, latency at shares of the NDR, and a killed search resumed from its
//! stored trials.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use crate::sweeps::{ok, s, tmpdir};
use crate::util::run;

/// `netsonde search` on loopback: every trial reported, the unpaced probe first,
/// the bounds consistent with the trials, and nonsense refused in one line.
#[test]
fn search_reports_every_trial_and_consistent_bounds() {
    // A search that spends its trial budget without converging exits 4: on two
    // cores shared with the other tests' load, loopback's loss-free rate can move
    // between trials. That is the search's honest answer, so it is tried again,
    // up to three times; any other failure fails at once.
    let mut attempt = 0;
    let out = loop {
        attempt += 1;
        let out = run(
            &[
                "search",
                "--frames",
                "64,1518",
                "--trial",
                "0.3s",
                "--warmup",
                "0.1s",
                "--precision",
                "5%",
                "--json",
                "--no-report",
            ],
            Duration::from_secs(180),
        );
        if out.status.code() == Some(4) && attempt < 3 {
            eprintln!("search did not converge (attempt {attempt}); again");
            continue;
        }
        break out;
    };
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let searches = doc["searches"].as_array().unwrap();
    assert_eq!(searches.len(), 2);
    for s in searches {
        let trials = s["trials"].as_array().unwrap();
        assert!(
            trials[0]["asked_pps"].is_null(),
            "the probe is unpaced: {s}"
        );
        let offered = |t: &serde_json::Value| t["offered_pps"].as_f64().unwrap();
        let probe = offered(&trials[0]);
        for t in trials {
            assert!(t["lost"].as_u64().unwrap() <= t["sent"].as_u64().unwrap());
        }
        // NDR: a rate at which a trial lost nothing, at most what the sender reached.
        let ndr = s["ndr"]["lower"].as_f64().expect("an NDR on loopback");
        assert!(ndr <= probe * 1.0001, "{ndr} above the probe's {probe}");
        assert!(trials
            .iter()
            .any(|t| t["lost"] == 0 && (offered(t) - ndr).abs() < 1e-6 * ndr));
        if let Some(pdr) = s["pdr"]["lower"].as_f64() {
            assert!(pdr >= ndr, "PDR {pdr} below NDR {ndr}");
        }
        assert_eq!(
            s["payload"].as_u64().unwrap() + 46,
            s["frame"].as_u64().unwrap()
        );
    }
    // A frame too small to carry the datagram header is refused before any trial.
    let out = run(&["search", "--frames", "40"], Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("frame size 40"), "{err}");
    // A TCP segment needs a 128 B frame at least, and back-to-back is UDP's.
    for (args, says) in [
        (
            &["search", "--test", "tcp", "--frames", "64"][..],
            "frame size 64",
        ),
        (
            &["search", "--test", "tcp", "--back-to-back"][..],
            "--back-to-back",
        ),
    ] {
        let out = run(args, Duration::from_secs(10));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(says), "{err}");
    }
}

/// `search --latency` on loopback: after the rate search, one probed trial at
/// 10, 50, 90 and 100% of the NDR found, each with the UDP probes' round trip
/// idle and beside the load (at least 2 s of it, 100 probes a second: a 99th
/// percentile), the load offered at its share, and the one-way delay on the one
/// clock loopback has.
#[test]
fn search_measures_latency_at_shares_of_the_ndr() {
    let out = run(
        &[
            "search",
            "--frames",
            "1518",
            "--trial",
            "0.3s",
            "--warmup",
            "0.1s",
            "--precision",
            "5%",
            "--max-trials",
            "12",
            "--latency",
            "--json",
            "--no-report",
        ],
        Duration::from_secs(180),
    );
    // Exit 4 is a search that spent its budget; latency is measured at what it
    // found all the same.
    assert!(
        matches!(out.status.code(), Some(0 | 4)),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &doc["searches"][0];
    let ndr = s["ndr"]["lower"].as_f64().expect("an NDR on loopback");
    let lat = s["latency"].as_array().expect("latency measured");
    let shares: Vec<f64> = lat
        .iter()
        .map(|l| l["fraction"].as_f64().unwrap())
        .collect();
    assert_eq!(shares.len(), 4, "{shares:?}");
    for (got, want) in shares.iter().zip([0.1, 0.5, 0.9, 1.0]) {
        assert!((got - want).abs() < 1e-6, "{shares:?}");
    }
    for l in lat {
        // The trial asks for its share of the rate found, and the sender
        // offers no more than it was asked, bar pacing's noise. It may offer
        // less: a busy host's sender reached the NDR during the search and
        // 63,676 of the 129,923 pps asked at 0.9 of it later (a CI run);
        // the JSON says both.
        let asked = l["trial"]["asked_pps"].as_f64().unwrap();
        let offered = l["trial"]["offered_pps"].as_f64().unwrap();
        let share = l["fraction"].as_f64().unwrap();
        assert!(
            (asked / (ndr * share) - 1.0).abs() < 0.05,
            "asked {asked} pps for {share} of {ndr}: {l}"
        );
        assert!(
            offered > 0.0 && offered <= asked * 1.05,
            "{offered} pps offered, {asked} asked: {l}"
        );
        let loaded = &l["loaded"];
        assert_eq!(loaded["phase"], "loaded", "{l}");
        assert!(loaded["answered"].as_u64().unwrap() >= 100, "{l}");
        let (p50, p99) = (
            loaded["p50"].as_u64().unwrap(),
            loaded["p99"].as_u64().unwrap(),
        );
        assert!(p50 > 0 && p50 <= p99, "{l}");
        assert!(l["idle"]["p50"].as_u64().unwrap() > 0, "{l}");
        let one_way = l["one_way_ms"].as_f64().expect("one clock on loopback");
        assert!(one_way > 0.0 && one_way * 1e6 <= p99 as f64 * 1.5, "{l}");
    }
}

/// A search is a stored run: killed mid-way (SIGKILL), `search --resume` keeps
/// every trial it had, goes on from them without starting over, and finds the
/// scripted receiver's limit; `report` renders its table and figures.
#[test]
fn a_killed_search_resumes_from_its_stored_trials() {
    let d = tmpdir("search-kill");
    let db = d.join("t.db");
    let mut child = crate::util::cmd()
        .args([
            "search",
            "--engine",
            "fake",
            "--fake-delay-ms",
            "30",
            "--frames",
            "64,1518",
            "--no-report",
            "--db",
            s(&db),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait for a few trials to be stored, then kill it without warning.
    let trials = |db: &Path| -> Vec<(u32, String)> {
        let Ok(store) = netsonde_store::Store::open(db) else {
            return Vec::new();
        };
        let Ok(points) = store.points(1) else {
            return Vec::new();
        };
        points
            .iter()
            .flat_map(|p| p.reps.iter().map(move |r| (p.idx, r.report_json.clone())))
            .collect()
    };
    let start = std::time::Instant::now();
    while trials(&db).len() < 4 && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = trials(&db);
    assert!(before.len() >= 4, "{} trials stored", before.len());
    let out = ok(&[
        "search",
        "--resume",
        "1",
        "--json",
        "--no-report",
        "--db",
        s(&db),
    ]);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["run"], 1);
    let after = trials(&db);
    assert!(
        after.len() > before.len(),
        "{} then {}",
        before.len(),
        after.len()
    );
    // Every trial stored before the kill is still there, unchanged.
    for t in &before {
        assert!(after.contains(t), "a stored trial changed or went");
    }
    let searches = doc["searches"].as_array().unwrap();
    assert_eq!(searches.len(), 2);
    for srch in searches {
        assert_eq!(srch["converged"], true, "{srch}");
        let trials = srch["trials"].as_array().unwrap();
        // One unpaced probe: the resumed search did not start over.
        assert_eq!(
            trials.iter().filter(|t| t["asked_pps"].is_null()).count(),
            1,
            "{srch}"
        );
        // The scripted receiver takes 1 / (0.4 ns x payload + 5 us) datagrams/s.
        let payload = srch["payload"].as_f64().unwrap();
        let cap = 1e9 / (0.4 * payload + 5000.0);
        let ndr = srch["ndr"]["lower"].as_f64().unwrap();
        assert!(ndr <= cap && ndr >= cap * 0.95, "NDR {ndr} vs {cap}");
    }
    // The report shows the search's table and figures.
    let rep = d.join("rep");
    ok(&["report", "1", "--db", s(&db), "--out", s(&rep)]);
    let html = std::fs::read_to_string(rep.join("report.html")).unwrap();
    assert!(html.contains("Loss-free rate search") && html.contains("Search trials"));
    // Its trials are not repetitions of one setting: the header says so.
    assert!(
        html.contains("each point searched for its loss-free rate")
            && !html.contains("repetitions per point"),
        "the header"
    );
    assert!(rep.join("search-loss-64.svg").exists());
    assert!(rep.join("search-rate-frame.svg").exists());
    let _ = std::fs::remove_dir_all(&d);
}
