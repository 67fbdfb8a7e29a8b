//! Issue 50: advice is always runnable and new. Every verdict that suggests a
//! flag, for every test kind and with the values already set that advice
//! would repeat, suggests only flags the test accepts (the spec with them
//! validates) and that change it.

use netsonde_model::diagnosis::Bottleneck;
use netsonde_model::spec::{IoStrategy, TestKind, TestSpec};
use netsonde_model::units::Bytes;

use crate::diagnose::{diagnose, CoreLoad, DiagnosisInput, ThreadLoad};

/// The tests advice is given for: every kind, as it comes and with what a
/// verdict might suggest already set.
fn specs() -> Vec<TestSpec> {
    let mut out = Vec::new();
    for kind in TestKind::ALL {
        let base = TestSpec::new(kind);
        let variants: [&dyn Fn(&mut TestSpec); 8] = [
            &|_| {},
            &|s| s.parallel = 2,
            &|s| s.size = Bytes(256 * 1024),
            &|s| s.size = Bytes(63 * 1024),
            &|s| {
                s.tx_io = IoStrategy::Batch;
                s.rx_io = IoStrategy::Batch;
            },
            &|s| s.congestion = Some("bbr".into()),
            &|s| {
                s.tls_resume = true;
                s.tls_suite = Some("TLS13_AES_128_GCM_SHA256".into());
            },
            &|s| {
                s.verify = true;
                s.client_affinity = vec![0];
            },
        ];
        for v in variants {
            let mut s = base.clone();
            v(&mut s);
            if s.validate().is_ok() {
                out.push(s);
            }
        }
    }
    out
}

fn thread(role: &str, busy: f64, user: f64, sys: f64) -> ThreadLoad {
    ThreadLoad {
        side: "client".into(),
        flows: vec![0],
        role: role.into(),
        busy,
        user: Some(user),
        sys: Some(sys),
        core: Some(1),
        ..ThreadLoad::default()
    }
}

/// An input for each verdict whose advice names flags.
fn verdicts() -> Vec<DiagnosisInput> {
    let quiet = DiagnosisInput {
        goodput_bps: 2e9,
        rtt_ns: Some(1e6),
        rwnd_limited: Some(0.0),
        sndbuf_limited: Some(0.0),
        retransmit_pct: Some(0.0),
        ..DiagnosisInput::default()
    };
    let core = |user: f64, sys: f64, softirq: f64| DiagnosisInput {
        client_core: Some(CoreLoad {
            core: Some(0),
            busy: 97.0,
            user,
            sys,
            softirq,
            test_pct: Some(90.0),
            ..CoreLoad::default()
        }),
        ..quiet.clone()
    };
    let one = |t: ThreadLoad| DiagnosisInput {
        threads: vec![t],
        ..quiet.clone()
    };
    let rr = |t: Option<ThreadLoad>| DiagnosisInput {
        goodput_bps: 0.0,
        transactions_per_sec: Some(95.0),
        round_trip_bound: Some(100.0),
        threads: t.into_iter().collect(),
        ..quiet.clone()
    };
    vec![
        core(10.0, 80.0, 5.0),
        core(80.0, 10.0, 5.0),
        core(10.0, 10.0, 75.0),
        DiagnosisInput {
            datagrams: true,
            ..core(80.0, 10.0, 5.0)
        },
        DiagnosisInput {
            datagrams: true,
            ..core(10.0, 80.0, 5.0)
        },
        one(thread("sender", 99.0, 1.0, 98.0)),
        one(thread("receiver", 99.0, 1.0, 98.0)),
        one(thread("requester", 99.0, 1.0, 98.0)),
        one(thread("sender", 99.0, 90.0, 9.0)),
        one(ThreadLoad {
            verifies: true,
            ..thread("receiver", 99.0, 90.0, 9.0)
        }),
        one(ThreadLoad {
            encrypts: true,
            ..thread("sender", 99.0, 90.0, 9.0)
        }),
        one(ThreadLoad {
            quic: true,
            ..thread("sender", 99.0, 90.0, 9.0)
        }),
        DiagnosisInput {
            datagrams: true,
            ..one(thread("sender", 99.0, 10.0, 89.0))
        },
        DiagnosisInput {
            retransmit_pct: Some(2.0),
            ..quiet.clone()
        },
        rr(None),
        rr(Some(ThreadLoad {
            encrypts: true,
            handshakes: Some(20.0),
            ..thread("requester", 50.0, 30.0, 20.0)
        })),
        DiagnosisInput {
            client_core: Some(CoreLoad {
                busy: 97.0,
                test_pct: Some(10.0),
                ..CoreLoad::default()
            }),
            ..quiet.clone()
        },
        one(ThreadLoad {
            waited: Some(70.0),
            ..thread("sender", 25.0, 1.0, 24.0)
        }),
    ]
}

/// The flags an advice names, as (flag, value).
fn flags(advice: &str) -> Vec<(String, Option<String>)> {
    let toks: Vec<&str> = advice
        .split(|c: char| c.is_whitespace() || "(),;:".contains(c))
        .filter(|t| !t.is_empty())
        .collect();
    let mut out = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        let valued = [
            "-l",
            "-P",
            "--io",
            "--tx-io",
            "--rx-io",
            "--congestion",
            "--tls-suite",
        ];
        if valued.contains(t) {
            out.push((t.to_string(), toks.get(i + 1).map(|v| v.to_string())));
        } else if ["--tls-resume", "-A"].contains(t) {
            out.push((t.to_string(), None));
        } else if *t == "--verify" && i > 0 && toks[i - 1] == "off" {
            out.push(("no-verify".into(), None));
        }
    }
    out
}

fn io(name: &str) -> IoStrategy {
    IoStrategy::ALL
        .into_iter()
        .find(|s| s.name() == name)
        .unwrap_or_else(|| panic!("no strategy {name}"))
}

fn size(v: &str) -> u64 {
    match v.strip_suffix('K') {
        Some(k) => k.parse::<u64>().unwrap() * 1024,
        None => v.parse().unwrap(),
    }
}

/// The spec with a flag set; panics on a flag this test does not know.
fn with(spec: &TestSpec, flag: &str, value: Option<&str>) -> TestSpec {
    let mut s = spec.clone();
    let v = || value.unwrap_or_else(|| panic!("{flag} without a value"));
    match flag {
        "-l" => s.size = Bytes(size(v())),
        "-P" => s.parallel = v().parse().unwrap(),
        "--io" => {
            s.tx_io = io(v());
            s.rx_io = io(v());
        }
        "--tx-io" => s.tx_io = io(v()),
        "--rx-io" => s.rx_io = io(v()),
        "--congestion" => s.congestion = Some(v().into()),
        "--tls-suite" => s.tls_suite = Some(v().into()),
        "--tls-resume" => s.tls_resume = true,
        "-A" => s.client_affinity = vec![0],
        "no-verify" => s.verify = false,
        other => panic!("unknown flag {other}"),
    }
    s
}

#[test]
fn every_flag_advised_is_accepted_and_new() {
    let (mut checked, mut verdicts_seen) = (0, std::collections::BTreeSet::new());
    for spec in specs() {
        for input in verdicts() {
            let d = DiagnosisInput {
                spec: Some(spec.clone()),
                ..input
            };
            let v = diagnose(&d);
            verdicts_seen.insert(v.bottleneck.name());
            assert_ne!(v.bottleneck, Bottleneck::Unknown, "{d:?}");
            for (flag, value) in flags(&v.advice) {
                let changed = with(&spec, &flag, value.as_deref());
                assert!(
                    changed != spec,
                    "{:?} {:?}: {flag} {value:?} is what the test ran with: {}",
                    spec.test,
                    v.bottleneck.name(),
                    v.advice
                );
                if let Err(e) = changed.validate() {
                    panic!(
                        "{:?} {:?}: {flag} {value:?} is refused ({e}): {}",
                        spec.test,
                        v.bottleneck.name(),
                        v.advice
                    );
                }
                if flag == "-l" {
                    assert!(changed.size > spec.size, "{}", v.advice);
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 500, "{checked}");
    assert!(verdicts_seen.len() >= 8, "{verdicts_seen:?}");
}
