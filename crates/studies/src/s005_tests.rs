//! Study 005's findings follow its figures: made-up steps that support each
//! finding get "holds", and a run that contradicts one gets "does not hold".

use netsonde_model::profile::Category::{self, *};
use netsonde_model::sweep::Metric;
use netsonde_report::view::SideBreakdown;

use super::*;
use crate::tests::{run, verdict};

fn side(side: &str, costs: &[(Category, f64)]) -> SideBreakdown {
    SideBreakdown {
        side: side.into(),
        unit: "us/KiB",
        categories: costs.to_vec(),
        reps: 3,
    }
}

/// A configuration (offloads, MTU, io) and its two ends' costs.
type Config<'a> = (&'a str, &'a str, &'a str, [&'a [(Category, f64)]; 2]);

/// A made-up point's axes and goodput.
type Made<'a> = ([(&'a str, &'a str); 3], [(Metric, f64); 1]);

/// The five configurations the study reads, each with its two ends' costs.
fn steps(zero_copy_sender_copy: f64) -> Data {
    let cfg: [Config; 5] = [
        (
            "off",
            "1500",
            "copy",
            [
                &[(DataCopy, 0.08), (TcpIp, 0.5), (Netdevice, 0.2)],
                &[(DataCopy, 0.13), (TcpIp, 0.1)],
            ],
        ),
        (
            "off",
            "9000",
            "copy",
            [
                &[(DataCopy, 0.08), (TcpIp, 0.15), (Netdevice, 0.05)],
                &[(DataCopy, 0.05), (TcpIp, 0.01)],
            ],
        ),
        (
            "on",
            "1500",
            "copy",
            [
                &[(DataCopy, 0.06), (TcpIp, 0.17)],
                &[(DataCopy, 0.036), (TcpIp, 0.009)],
            ],
        ),
        (
            "on",
            "9000",
            "copy",
            [
                &[(DataCopy, 0.06), (TcpIp, 0.12)],
                &[(DataCopy, 0.037), (TcpIp, 0.005)],
            ],
        ),
        (
            "on",
            "9000",
            "zerocopy",
            [
                &[(DataCopy, zero_copy_sender_copy), (TcpIp, 0.08)],
                &[(DataCopy, 0.02), (Scheduling, 0.03)],
            ],
        ),
    ];
    let pts: Vec<Made> = cfg
        .iter()
        .map(|(o, m, io, _)| {
            (
                [("offloads", *o), ("mtu", *m), ("io", *io)],
                [(Metric::Goodput, 20e9)],
            )
        })
        .collect();
    let pts: Vec<crate::tests::Pt> = pts.iter().map(|(a, m)| (&a[..], &m[..])).collect();
    let mut view = run(None, &pts);
    for (p, (_, _, _, [c, s])) in view.points.iter_mut().zip(cfg) {
        p.breakdown = vec![side("client", c), side("server", s)];
    }
    let mut d = Data::default();
    d.sweeps.insert("steps", view);
    d
}

#[test]
fn the_findings_follow_the_steps() {
    let a = (DEF.analyse)(&steps(0.02));
    assert_eq!(verdict(&a, "Without segmentation offloads"), Verdict::Holds);
    assert_eq!(verdict(&a, "TSO/GSO and GRO cut"), Verdict::Holds);
    assert_eq!(verdict(&a, "Jumbo frames cut"), Verdict::Holds);
    assert_eq!(
        verdict(&a, "With every optimization on, data copy"),
        Verdict::Holds
    );
    assert_eq!(verdict(&a, "Zero-copy sends remove"), Verdict::Holds);
    // The sender carries both stacks on a veth: the receiver is not the
    // bottleneck here.
    assert_eq!(verdict(&a, "The receiver's core"), Verdict::DoesNotHold);
    assert_eq!(a.tables.len(), 2);
    assert_eq!(a.tables[0].rows.len(), 4, "a row per step");
}

#[test]
fn a_zero_copy_that_still_copies_does_not_hold() {
    let a = (DEF.analyse)(&steps(0.07));
    assert_eq!(verdict(&a, "Zero-copy sends remove"), Verdict::DoesNotHold);
}

#[test]
fn without_breakdowns_nothing_is_claimed() {
    let mut d = steps(0.02);
    for p in &mut d.sweeps.get_mut("steps").unwrap().points {
        p.breakdown.clear();
    }
    let a = (DEF.analyse)(&d);
    assert!(
        a.findings.iter().all(|f| f.verdict == Verdict::NotMeasured),
        "{:?}",
        a.findings
    );
    let a = (DEF.analyse)(&Data::default());
    assert_eq!(a.findings.len(), 7);
    assert!(a.findings.iter().all(|f| f.verdict == Verdict::NotMeasured));
}
