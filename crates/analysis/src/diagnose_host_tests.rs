//! Whose CPU it was (issue 50): a thread is the test's limit by the time it
//! ran; one that waited for a core was starved by other work, its own other
//! threads or a cgroup's quota; round trip before a busy host.

use super::*;

/// Issue 50: a thread is the test's CPU limit by the time it ran. One that
/// ran 20.5% and waited 74.1% for a core was starved: the host's other work
/// had the cores, and the verdict names it; direct evidence over its threshold
/// (here the receiver's window) is the verdict before it.
#[test]
fn a_thread_that_waited_for_a_core_is_starved_not_cpu_bound() {
    let foreign = CoreLoad {
        core: Some(1),
        busy: 80.0,
        test_pct: Some(20.0),
        foreign: vec!["hog (pid 7): 1.90 cores".into()],
        ..CoreLoad::default()
    };
    let starved = ThreadLoad {
        waited: Some(74.1),
        idle_cores: Some(0.0),
        ..thread("server", "receiver", 20.5, 0.5, 20.0)
    };
    let d = DiagnosisInput {
        client_core: Some(foreign.clone()),
        one_host: true,
        threads: vec![starved.clone()],
        ..base()
    };
    let v = diagnose(&d);
    assert!(matches!(v.bottleneck, Bottleneck::HostBusy { .. }), "{v}");
    assert!(
        v.evidence.contains("ran 20.5%") && v.evidence.contains("waited 74.1%"),
        "{v}"
    );
    assert!(v.evidence.contains("hog (pid 7)"), "{v}");
    assert!(!v.advice.contains("--rx-io"), "{v}");
    // The receiver's window held the sender 67%: that is the verdict.
    let d = DiagnosisInput {
        rwnd_limited: Some(0.67),
        ..d
    };
    assert_eq!(kind(&d), Bottleneck::ReceiverWindow);
    // A TLS thread that ran 10.5% and waited 82%: not "encryption is the limit".
    let tls = ThreadLoad {
        encrypts: true,
        waited: Some(82.0),
        crypto: Some(8.0),
        ..thread("client", "sender", 10.5, 9.0, 1.5)
    };
    let d = DiagnosisInput {
        client_core: Some(foreign.clone()),
        one_host: true,
        threads: vec![tls],
        ..base()
    };
    let v = diagnose(&d);
    assert!(matches!(v.bottleneck, Bottleneck::HostBusy { .. }), "{v}");
    assert!(!v.evidence.contains("encryption is the limit"), "{v}");
    // The test's own threads had the cores (more flow threads than cores,
    // both ends pinned to one): its CPU limit all the same, the thread named
    // with what it spent its time on.
    let d = DiagnosisInput {
        client_core: Some(CoreLoad {
            test_pct: Some(85.0),
            ..foreign
        }),
        one_host: true,
        threads: vec![starved],
        ..base()
    };
    let v = diagnose(&d);
    assert!(
        matches!(
            v.bottleneck,
            Bottleneck::Cpu {
                thread: Some(_),
                ..
            }
        ),
        "{v}"
    );
    assert!(v.evidence.contains("the test's own other threads"), "{v}");
    // One that slept (blocked on its socket) is neither.
    let d = DiagnosisInput {
        threads: vec![ThreadLoad {
            waited: Some(2.0),
            ..thread("client", "sender", 60.0, 1.0, 59.0)
        }],
        ..base()
    };
    assert_eq!(kind(&d), Bottleneck::Unknown);
}

/// Issue 50: a tcp-rr at 95% of what its round trip allows, on a host whose
/// busiest core was mostly other work: round trip is judged first.
#[test]
fn round_trip_is_judged_before_host_busy() {
    let d = DiagnosisInput {
        goodput_bps: 0.0,
        client_core: Some(CoreLoad {
            core: Some(0),
            busy: 97.0,
            test_pct: Some(12.0),
            ..CoreLoad::default()
        }),
        one_host: true,
        transactions_per_sec: Some(47.5),
        round_trip_bound: Some(50.0),
        ..base()
    };
    assert_eq!(kind(&d), Bottleneck::RoundTrip);
    let d = DiagnosisInput {
        transactions_per_sec: Some(20.0),
        ..d
    };
    assert!(matches!(kind(&d), Bottleneck::HostBusy { .. }));
}

/// Issue 50: a client in a cgroup of 0.3 CPU, throttled in 31 of 31 periods:
/// the quota is named, with the figures; below half the periods it is a
/// candidate; the direct evidence still comes first.
#[test]
fn a_throttled_cgroup_is_the_cpu_quota() {
    let cg = netsonde_model::cpu::CgroupCpu {
        version: 1,
        path: "/sonde-q".into(),
        quota_cores: Some(0.3),
        period: Some(Nanos::from_millis(100)),
        periods: 31,
        throttled_periods: 31,
        throttled: Nanos::from_millis(2150),
        cpus: None,
    };
    let d = DiagnosisInput {
        quotas: vec![SideQuota {
            side: "client".into(),
            cgroup: cg.clone(),
        }],
        threads: vec![ThreadLoad {
            waited: Some(67.4),
            ..thread("client", "sender", 29.0, 1.0, 28.0)
        }],
        ..base()
    };
    let v = diagnose(&d);
    assert!(
        matches!(v.bottleneck, Bottleneck::CpuQuota { ref side, throttled_periods: 31, periods: 31, .. } if side == "client"),
        "{v}"
    );
    assert!(v.evidence.contains("quota of 0.30 CPU"), "{v}");
    assert!(v.evidence.contains("31 of 31 periods"), "{v}");
    assert!(v.evidence.contains("waited 67.4%"), "{v}");
    assert!(v.advice.contains("raise the quota"), "{v}");
    assert_eq!(v.bottleneck.name(), "CPU quota (client cgroup)");
    let d2 = DiagnosisInput {
        rwnd_limited: Some(0.8),
        ..d.clone()
    };
    assert_eq!(kind(&d2), Bottleneck::ReceiverWindow);
    let d3 = DiagnosisInput {
        quotas: vec![SideQuota {
            side: "client".into(),
            cgroup: netsonde_model::cpu::CgroupCpu {
                throttled_periods: 7,
                ..cg
            },
        }],
        threads: Vec::new(),
        ..d
    };
    let v = diagnose(&d3);
    assert_eq!(v.bottleneck, Bottleneck::Unknown);
    assert!(v.candidates.iter().any(|c| c.contains("CPU quota")), "{v}");
}

/// Both ends' TLS threads pinned to one core, each running about half of it
/// and waiting the rest: the core is the limit, named with the thread that
/// ran most and what it spent its time on (its crypto).
#[test]
fn a_core_filled_by_the_tests_threads_is_named_with_them() {
    let tls = |side: &str, role: &str, busy: f64| ThreadLoad {
        encrypts: true,
        waited: Some(38.0),
        core: Some(0),
        ..thread(side, role, busy, 0.8 * busy, 0.2 * busy)
    };
    let d = DiagnosisInput {
        client_core: Some(CoreLoad {
            core: Some(0),
            busy: 100.0,
            user: 76.0,
            sys: 21.0,
            softirq: 3.0,
            test_pct: Some(96.0),
            ..CoreLoad::default()
        }),
        server_core: None,
        one_host: true,
        threads: vec![
            tls("client", "sender", 49.0),
            tls("server", "receiver", 47.0),
        ],
        ..base()
    };
    let v = diagnose(&d);
    assert!(
        matches!(v.bottleneck, Bottleneck::Cpu { thread: Some(ref t), .. } if t.busy == 49.0),
        "{v}"
    );
    assert!(v.evidence.contains("encryption is the limit"), "{v}");
    assert!(v.evidence.contains("core 0 was 100.0% busy"), "{v}");
    assert!(v.advice.contains("--tls-suite"), "{v}");
    // Threads that ran a third of it: the core, not them.
    let d = DiagnosisInput {
        threads: vec![
            tls("client", "sender", 20.0),
            tls("server", "receiver", 15.0),
        ],
        ..d
    };
    assert!(matches!(
        diagnose(&d).bottleneck,
        Bottleneck::Cpu { thread: None, .. }
    ));
}
