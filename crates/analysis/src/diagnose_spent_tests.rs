//! A saturated thread's verdict names what its sampled CPU went to, and
//! advises from it.

use netsonde_model::profile::Category;

use super::tests::base;
use super::*;

fn saturated(role: &str, spent: &[(Category, f64)]) -> DiagnosisInput {
    DiagnosisInput {
        goodput_bps: 26e9,
        line_rate_bps: None,
        theoretical_bps: None,
        client_core: Some(CoreLoad::busy(82.0)),
        server_core: None,
        one_host: true,
        threads: vec![ThreadLoad {
            side: "client".into(),
            flows: vec![0],
            role: role.into(),
            busy: 99.5,
            user: Some(1.0),
            sys: Some(98.0),
            core: Some(0),
            idle_cores: Some(0.8),
            spent: spent.to_vec(),
            ..ThreadLoad::default()
        }],
        ..base()
    }
}

#[test]
fn a_sender_that_mostly_copies_is_told_to_send_without_the_copy() {
    let v = diagnose(&saturated(
        "sender",
        &[
            (Category::DataCopy, 0.55),
            (Category::TcpIp, 0.29),
            (Category::Memory, 0.05),
        ],
    ));
    assert!(
        v.evidence
            .contains("its sampled CPU went to copy 55%, TCP/IP 29%, memory 5%"),
        "{v}"
    );
    assert!(v.advice.starts_with("55% of its CPU copies data"), "{v}");
    assert!(v.advice.contains("--tx-io sendfile"), "{v}");
    assert!(v.advice.contains("--tx-io zerocopy"), "{v}");
}

#[test]
fn per_packet_work_asks_for_fewer_larger_packets() {
    let v = diagnose(&saturated(
        "sender",
        &[(Category::TcpIp, 0.5), (Category::DataCopy, 0.24)],
    ));
    assert!(v.advice.contains("per-packet work (TCP/IP)"), "{v}");
    assert!(v.advice.contains("-l 256K"), "{v}");
    assert!(v.advice.contains("GSO/GRO"), "{v}");
}

#[test]
fn wake_ups_ask_for_polling_or_batching() {
    let v = diagnose(&saturated(
        "receiver",
        &[(Category::Scheduling, 0.4), (Category::DataCopy, 0.3)],
    ));
    assert!(v.advice.contains("--io busypoll"), "{v}");
    assert!(v.advice.contains("--io batch"), "{v}");
}

#[test]
fn no_dominant_category_leaves_the_advice_to_the_split() {
    let spread = [
        (Category::DataCopy, 0.25),
        (Category::TcpIp, 0.25),
        (Category::Skb, 0.25),
        (Category::Memory, 0.25),
    ];
    let v = diagnose(&saturated("sender", &spread));
    assert!(
        v.advice.contains("fewer system calls and copies per byte"),
        "{v}"
    );
    let none = diagnose(&saturated("sender", &[]));
    assert!(!none.evidence.contains("sampled"), "{none}");
}
