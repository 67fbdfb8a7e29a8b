//! The studies' definitions parse, and each finding follows the data: runs whose
//! numbers contradict a finding get it reported as "does not hold", and runs that
//! support it get "holds".

use std::collections::BTreeMap;

use netsonde_model::spec::{TestKind, TestSpec};
use netsonde_model::sweep::{Estimate, Metric, PointSummary};
use netsonde_report::view::{PointView, RunMeta, RunView};

use super::*;

/// A made-up point: its axes and its medians.
pub(crate) type Pt<'a> = (&'a [(&'a str, &'a str)], &'a [(Metric, f64)]);

/// A stored run made of points with the given axes and medians.
pub(crate) fn run(line_rate: Option<f64>, pts: &[Pt]) -> RunView {
    let points = pts
        .iter()
        .enumerate()
        .map(|(i, (axes, values))| {
            let axes: BTreeMap<String, String> = axes
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let test = axes
                .get("test")
                .and_then(|t| t.parse().ok())
                .unwrap_or(TestKind::TcpStream);
            let estimates = values
                .iter()
                .map(|(m, v)| {
                    (
                        m.name().to_string(),
                        Estimate {
                            n: 3,
                            median: *v,
                            mean: *v,
                            ci_low: None,
                            ci_high: None,
                            ci_coverage: None,
                            cv: 0.0,
                        },
                    )
                })
                .collect();
            let mut spec = TestSpec::new(test);
            if axes.get("direction").map(String::as_str) == Some("bidir") {
                spec.direction = netsonde_model::spec::Direction::Bidir;
            }
            PointView {
                breakdown: Vec::new(),
                idx: i as u32,
                axes,
                spec,
                status: "done".into(),
                reason: None,
                summary: Some(PointSummary {
                    reps: 3,
                    estimates,
                    quality: vec![],
                }),
                diagnosis: None,
                search: None,
            }
        })
        .collect();
    RunView::build(
        RunMeta {
            id: 1,
            label: "fake".into(),
            created_at: 0,
            tool_version: "test".into(),
            command: "test".into(),
            status: "complete".into(),
            client_host: None,
            server_host: None,
            line_rate,
            repeat: 3,
            link: None,
            link_rtt_ns: None,
            mesh_agents: Vec::new(),
            search: None,
        },
        points,
    )
}

pub(crate) fn verdict(a: &Analysis, starts: &str) -> Verdict {
    a.findings
        .iter()
        .find(|f| f.claim.starts_with(starts))
        .unwrap_or_else(|| panic!("no finding '{starts}' in {:#?}", a.findings))
        .verdict
}

#[test]
fn every_study_and_part_parses_full_and_quick() {
    for d in all() {
        assert_eq!(find(d.id).unwrap().id, d.id);
        assert_eq!(find(d.slug).unwrap().id, d.id);
        for p in d.parts {
            for quick in [false, true] {
                let e = p.experiment(d.id, quick).unwrap();
                assert_eq!(
                    e.is_some(),
                    matches!(p.kind, PartKind::Sweep { .. }),
                    "{}/{}",
                    d.id,
                    p.name
                );
                if let Some(e) = e {
                    // A part runs in the lab exactly when it sets a link.
                    assert_eq!(
                        e.link.is_some() || e.mtus.is_some(),
                        p.lab,
                        "{}/{}",
                        d.id,
                        p.name
                    );
                }
            }
        }
        // With no data at all every finding is "not measured", never decided.
        let a = (d.analyse)(&Data::default());
        assert!(!a.findings.is_empty());
        assert!(
            a.findings.iter().all(|f| f.verdict == Verdict::NotMeasured),
            "{}",
            d.id
        );
    }
    assert!(matches!(find("nope"), Err(StudyError::Unknown(_))));
    assert_eq!(find("3").unwrap().id, "003");
}

#[test]
fn batching_that_does_not_raise_short_packet_throughput_contradicts_000() {
    let short = |batch: f64| {
        run(
            None,
            &[
                (
                    &[("size", "64"), ("io", "copy")],
                    &[(Metric::Goodput, 100e6)],
                ),
                (
                    &[("size", "64"), ("io", "batch")],
                    &[(Metric::Goodput, batch)],
                ),
                (
                    &[("size", "64"), ("io", "busypoll")],
                    &[(Metric::Goodput, 90e6)],
                ),
                (
                    &[("size", "64"), ("io", "auto")],
                    &[(Metric::Goodput, batch * 0.95)],
                ),
            ],
        )
    };
    let mut d = Data::default();
    d.sweeps.insert("short", short(99e6));
    let a = (s000::DEF.analyse)(&d);
    assert_eq!(verdict(&a, "Non-interrupt-driven"), Verdict::DoesNotHold);
    assert_eq!(verdict(&a, "Adaptive"), Verdict::Holds);
    d.sweeps.insert("short", short(160e6));
    let a = (s000::DEF.analyse)(&d);
    assert_eq!(verdict(&a, "Non-interrupt-driven"), Verdict::Holds);
    d.sweeps.insert("short", short(112e6));
    assert_eq!(
        verdict(&(s000::DEF.analyse)(&d), "Non-interrupt-driven"),
        Verdict::Partly
    );
    // The loss-free rate: a batched NDR below the plain one contradicts the seed.
    d.searches.insert(
        "lossfree",
        vec![
            SearchRow {
                frame: 4096,
                io: "copy".into(),
                ndr_pps: Some(100e3),
                pdr_pps: None,
                converged: true,
            },
            SearchRow {
                frame: 4096,
                io: "batch".into(),
                ndr_pps: Some(95e3),
                pdr_pps: None,
                converged: true,
            },
        ],
    );
    assert_eq!(
        verdict(&(s000::DEF.analyse)(&d), "Batched receiving"),
        Verdict::DoesNotHold
    );
    // Wire speed from 16 KiB holds; from 4 KiB, in part; already at 64 B, not.
    let size = |from: f64| {
        let rows: Vec<(String, f64)> = [64.0, 4096.0, 16384.0, 61440.0]
            .iter()
            .map(|&b| (format!("{b}"), if b >= from { 2.39e9 } else { 0.5e9 }))
            .collect();
        let axes: Vec<[(&str, &str); 3]> = rows
            .iter()
            .map(|(b, _)| {
                [
                    ("test", "udp-stream"),
                    ("size", b.as_str()),
                    ("mtu", "65535"),
                ]
            })
            .collect();
        let vals: Vec<[(Metric, f64); 1]> =
            rows.iter().map(|(_, g)| [(Metric::Goodput, *g)]).collect();
        let pts: Vec<Pt> = axes
            .iter()
            .zip(&vals)
            .map(|(a, v)| (a.as_slice(), v.as_slice()))
            .collect();
        run(Some(2.4e9), &pts)
    };
    for (from, want) in [
        (16384.0, Verdict::Holds),
        (4096.0, Verdict::Partly),
        (64.0, Verdict::DoesNotHold),
    ] {
        d.sweeps.insert("size", size(from));
        assert_eq!(
            verdict(&(s000::DEF.analyse)(&d), "Wire speed"),
            want,
            "from {from}"
        );
    }
    // A peak below a stored result is not the database's highest.
    d.sweeps.insert(
        "peak",
        run(None, &[(&[("parallel", "1")], &[(Metric::Goodput, 30e9)])]),
    );
    d.stored_peak = Some(StoredPeak {
        runs: 2,
        points: 5,
        best: Some((40e9, 7, "earlier".into())),
    });
    assert_eq!(
        verdict(&(s000::DEF.analyse)(&d), "The peak TCP"),
        Verdict::DoesNotHold
    );
    d.stored_peak = Some(StoredPeak {
        runs: 2,
        points: 5,
        best: Some((20e9, 7, "earlier".into())),
    });
    assert_eq!(
        verdict(&(s000::DEF.analyse)(&d), "The peak TCP"),
        Verdict::Holds
    );
}

#[test]
fn polling_that_is_no_faster_contradicts_001() {
    let lat = |poll_ns: f64| {
        run(
            None,
            &[
                (
                    &[("test", "tcp-rr"), ("io", "copy")],
                    &[(Metric::LatencyP50, 100_000.0)],
                ),
                (
                    &[("test", "tcp-rr"), ("io", "busypoll")],
                    &[(Metric::LatencyP50, poll_ns)],
                ),
            ],
        )
    };
    let mut d = Data::default();
    d.sweeps.insert("latency", lat(99_000.0));
    assert_eq!(
        verdict(&(s001::DEF.analyse)(&d), "Handling a message"),
        Verdict::DoesNotHold
    );
    d.sweeps.insert("latency", lat(40_000.0));
    assert_eq!(
        verdict(&(s001::DEF.analyse)(&d), "Handling a message"),
        Verdict::Holds
    );
}

#[test]
fn a_64k_window_that_already_fills_the_link_contradicts_002() {
    let win = |w64: f64| {
        run(
            Some(622e6),
            &[
                (&[("window", "32768")], &[(Metric::Goodput, 200e6)]),
                (&[("window", "65536")], &[(Metric::Goodput, w64)]),
                (&[("window", "147456")], &[(Metric::Goodput, 580e6)]),
                (&[("window", "1048576")], &[(Metric::Goodput, 585e6)]),
            ],
        )
    };
    let mut d = Data::default();
    d.sweeps.insert("window", win(584e6));
    assert_eq!(
        verdict(&(s002::DEF.analyse)(&d), "A 64 KB window"),
        Verdict::DoesNotHold
    );
    d.sweeps.insert("window", win(380e6));
    assert_eq!(
        verdict(&(s002::DEF.analyse)(&d), "A 64 KB window"),
        Verdict::Holds
    );
    // The MTU: equal goodput at both MTUs contradicts "the large MTU carries more".
    d.sweeps.insert(
        "directions",
        run(
            Some(622e6),
            &[
                (
                    &[("direction", "out"), ("mtu", "9000")],
                    &[(Metric::Goodput, 590e6), (Metric::ClientUsPerKib, 1.0)],
                ),
                (
                    &[("direction", "out"), ("mtu", "1500")],
                    &[(Metric::Goodput, 589e6), (Metric::ClientUsPerKib, 2.0)],
                ),
                (
                    &[("direction", "bidir"), ("mtu", "9000")],
                    &[(Metric::Goodput, 1170e6)],
                ),
            ],
        ),
    );
    let a = (s002::DEF.analyse)(&d);
    assert_eq!(verdict(&a, "The large MTU carries"), Verdict::DoesNotHold);
    assert_eq!(verdict(&a, "The large MTU costs"), Verdict::Holds);
    assert_eq!(verdict(&a, "Both ways"), Verdict::Holds);
}

#[test]
fn the_bdp_the_data_support_decides_003() {
    let lfn = |best: f64, srtt_ms: f64| {
        run(
            Some(1e9),
            &[
                (
                    &[("mtu", "1500"), ("window", "65536")],
                    &[(Metric::Goodput, 2.3e6), (Metric::Srtt, srtt_ms * 1e6)],
                ),
                (
                    &[("mtu", "9000"), ("window", "268435456")],
                    &[(Metric::Goodput, best), (Metric::Srtt, srtt_ms * 1e6)],
                ),
                (
                    &[("mtu", "9000"), ("window", "16777216")],
                    &[(Metric::Goodput, best * 0.5), (Metric::Srtt, srtt_ms * 1e6)],
                ),
            ],
        )
    };
    let mut d = Data::default();
    d.sweeps.insert("windows", lfn(950e6, 230.0));
    let a = (s003::DEF.analyse)(&d);
    assert_eq!(
        verdict(&a, "The path's bandwidth-delay"),
        Verdict::DoesNotHold
    );
    assert_eq!(verdict(&a, "The best throughput"), Verdict::Holds);
    assert_eq!(verdict(&a, "Below the bandwidth-delay"), Verdict::Holds);
    // A dual test above the link's ceiling is left out and named, never shown.
    d.sweeps.insert(
        "dual",
        run(
            Some(1e9),
            &[(
                &[
                    ("direction", "bidir"),
                    ("mtu", "9000"),
                    ("window", "67108864"),
                ],
                &[
                    (Metric::Goodput, 2.1e9),
                    (Metric::GoodputOut, 1.2e9),
                    (Metric::GoodputIn, 0.9e9),
                ],
            )],
        ),
    );
    let a = (s003::DEF.analyse)(&d);
    assert!(
        a.caveats.iter().any(|c| c.contains("dual: 64 MiB window")),
        "{:?}",
        a.caveats
    );
    assert!(!a.then_now.iter().any(|t| t.now.contains("1.20 Gbit/s")));
    // Half the rate at the same round trip: 14.3 MB is the nearer.
    d.sweeps.insert("windows", lfn(500e6, 230.0));
    assert_eq!(
        verdict(&(s003::DEF.analyse)(&d), "The path's bandwidth-delay"),
        Verdict::Holds
    );
}

#[test]
fn a_model_that_misses_the_measurement_contradicts_004() {
    // Time per message 1 us + 0.1 ns/B: goodput B*8 / t.
    let g = |b: f64| b * 8.0 / (1000.0 + 0.1 * b) * 1e9;
    let stream = |at60: f64, zc: f64| {
        let mut v: Vec<(Vec<(&str, String)>, f64)> = Vec::new();
        for b in [1024.0, 8192.0, 16384.0, 32768.0, 61440.0] {
            let copy = if b == 61440.0 { at60 } else { g(b) };
            v.push((vec![("io", "copy".into()), ("size", format!("{b}"))], copy));
            v.push((
                vec![("io", "zerocopy".into()), ("size", format!("{b}"))],
                copy * zc,
            ));
        }
        v
    };
    let build = |rows: Vec<(Vec<(&str, String)>, f64)>| {
        let axes: Vec<Vec<(&str, &str)>> = rows
            .iter()
            .map(|(a, _)| a.iter().map(|(k, v)| (*k, v.as_str())).collect())
            .collect();
        let vals: Vec<[(Metric, f64); 1]> =
            rows.iter().map(|(_, g)| [(Metric::Goodput, *g)]).collect();
        let pts: Vec<Pt> = axes
            .iter()
            .zip(&vals)
            .map(|(a, v)| (a.as_slice(), v.as_slice()))
            .collect();
        run(None, &pts)
    };
    let mut d = Data::default();
    d.sweeps.insert("stream", build(stream(g(61440.0), 1.5)));
    d.memcpy_bps = Some(1e12);
    let a = (s004::DEF.analyse)(&d);
    assert_eq!(verdict(&a, "The linear model"), Verdict::Holds);
    assert_eq!(verdict(&a, "Avoiding the copy"), Verdict::Holds);
    assert_eq!(verdict(&a, "Memory-copy"), Verdict::Holds);
    // The 60 KiB measurement far off the line, zero-copy no better, and a copy
    // faster than memory: all three contradicted.
    d.sweeps
        .insert("stream", build(stream(g(61440.0) * 0.5, 1.0)));
    d.memcpy_bps = Some(1e9);
    let a = (s004::DEF.analyse)(&d);
    assert_eq!(verdict(&a, "The linear model"), Verdict::DoesNotHold);
    assert_eq!(verdict(&a, "Avoiding the copy"), Verdict::DoesNotHold);
    assert_eq!(verdict(&a, "Memory-copy"), Verdict::DoesNotHold);
}

/// Issue 35: 003's claim about MTU 9000 with a 256 MB window is "not measured"
/// when that point was left out as physically impossible (above the link's
/// ceiling), never judged against the largest window that was left.
#[test]
fn a_claim_whose_point_was_impossible_is_not_measured_003() {
    let mut d = Data::default();
    d.sweeps.insert(
        "windows",
        run(
            Some(1e9),
            &[
                (
                    &[("mtu", "1500"), ("window", "16777216")],
                    &[(Metric::Goodput, 600e6), (Metric::Srtt, 230e6)],
                ),
                (
                    &[("mtu", "9000"), ("window", "16777216")],
                    &[(Metric::Goodput, 400e6), (Metric::Srtt, 230e6)],
                ),
                (
                    &[("mtu", "9000"), ("window", "268435456")],
                    &[(Metric::Goodput, 1.13e9), (Metric::Srtt, 230e6)],
                ),
            ],
        ),
    );
    let a = (s003::DEF.analyse)(&d);
    assert_eq!(verdict(&a, "The best throughput"), Verdict::NotMeasured);
    let f = a
        .findings
        .iter()
        .find(|f| f.claim.starts_with("The best throughput"))
        .unwrap();
    assert!(f.evidence.contains("256 MiB"), "{}", f.evidence);
}

/// Issue 35: `study 004 --quick` fits two sizes; a line through two points is
/// not judged, and says why. Issue 52: the findings that need no line (copy
/// against zero-copy, the memory-copy ceiling) are judged from what the
/// quick run measured at 60 KiB, never "the stream part did not run".
#[test]
fn a_line_through_two_sizes_is_not_judged_004() {
    let g = |b: f64| b * 8.0 / (1000.0 + 0.1 * b) * 1e9;
    let sizes = [8192.0, 61440.0, 16384.0];
    let axes: Vec<String> = sizes.iter().map(|b| format!("{b}")).collect();
    let vals: Vec<[(Metric, f64); 1]> = ["copy", "zerocopy"]
        .iter()
        .flat_map(|io| {
            let gain = if *io == "copy" { 1.0 } else { 1.5 };
            sizes.iter().map(move |b| [(Metric::Goodput, gain * g(*b))])
        })
        .collect();
    let rows: Vec<[(&str, &str); 2]> = ["copy", "zerocopy"]
        .iter()
        .flat_map(|io| {
            axes.iter()
                .map(move |a| [("io", *io), ("size", a.as_str())])
        })
        .collect();
    // 8 KiB and 16 KiB to fit, 60 KiB to predict: two sizes.
    let pts: Vec<Pt> = rows
        .iter()
        .zip(&vals)
        .map(|(a, v)| (&a[..], &v[..]))
        .collect();
    let mut d = Data::default();
    d.sweeps.insert("stream", run(None, &pts));
    d.memcpy_bps = Some(1e12);
    let a = (s004::DEF.analyse)(&d);
    assert_eq!(verdict(&a, "The linear model"), Verdict::NotMeasured);
    let f = a
        .findings
        .iter()
        .find(|f| f.claim.starts_with("The linear model"))
        .unwrap();
    assert!(f.evidence.contains("fewer than 3 sizes"), "{}", f.evidence);
    assert_eq!(verdict(&a, "Avoiding the copy"), Verdict::Holds);
    assert_eq!(verdict(&a, "Memory-copy"), Verdict::Holds);
    // Without the memory-copy figure, that part is what is missing.
    d.memcpy_bps = None;
    let a = (s004::DEF.analyse)(&d);
    let f = a
        .findings
        .iter()
        .find(|f| f.claim.starts_with("Memory-copy"))
        .unwrap();
    assert_eq!(f.verdict, Verdict::NotMeasured);
    assert!(
        f.evidence.contains("memory-copy part did not run"),
        "{}",
        f.evidence
    );
}

#[test]
fn the_report_says_each_verdict_and_cites_the_seed() {
    let d = Data::default();
    let def = s001::DEF;
    let a = (def.analyse)(&d);
    let md = markdown(
        &def,
        &d,
        &a,
        &[],
        false,
        &BTreeMap::new(),
        &BTreeMap::new(),
        "netsonde study 001",
    );
    assert!(md.contains("shared/reference/001_00ac1a174c9c56b7.txt"));
    assert!(md.contains("## Then and now") && md.contains("67 µs"));
    assert!(md.contains("**not measured**"));
    assert!(md.contains("Regenerate: `netsonde study 001`"));
}

/// A study part's run: UDP goodput and CPU at three datagram sizes.
pub(crate) fn sweep_view() -> RunView {
    let pts: [Pt; 3] = [
        (
            &[("test", "udp-stream"), ("size", "64")],
            &[
                (Metric::Goodput, 310e6),
                (Metric::ClientUsPerKib, 3.1),
                (Metric::ServerUsPerKib, 2.7),
            ],
        ),
        (
            &[("test", "udp-stream"), ("size", "1472")],
            &[
                (Metric::Goodput, 2.41e9),
                (Metric::ClientUsPerKib, 0.31),
                (Metric::ServerUsPerKib, 0.29),
            ],
        ),
        (
            &[("test", "udp-stream"), ("size", "16384")],
            &[
                (Metric::Goodput, 2.39e9),
                (Metric::ClientUsPerKib, 0.12),
                (Metric::ServerUsPerKib, 0.11),
            ],
        ),
    ];
    run(Some(2.4e9), &pts)
}
