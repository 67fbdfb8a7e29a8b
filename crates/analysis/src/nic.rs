//! The NIC rules: what the test interface's facts and counters say about a
//! test's limit ([`findings`]). Each rule gives one [`NicFinding`] with its
//! evidence; [`NicFinding::is_bottleneck`] tells a limit (drops, a saturated
//! interrupt core, the link's speed) from a caveat (an offload off, cross-NUMA
//! placement). Which finding becomes the verdict is the diagnosis's choice.
//!
//! | rule | evidence |
//! |---|---|
//! | ring drops | NIC counters of receive-ring or buffer exhaustion moved |
//! | softnet drops | `/proc/net/softnet_stat` column 2 moved on some core |
//! | time squeeze | `/proc/net/softnet_stat` column 3 moved on some core |
//! | IRQ core saturated | the core that took the most of the NIC's interrupts (at least [`IRQ_SHARE_MIN`]%) was ≥ [`BUSY_MIN`]% busy, softirq ≥ [`SOFTIRQ_SHARE_MIN`] of that |
//! | offload off | TSO, GSO or GRO off |
//! | cross-NUMA | a flow thread's core is on another node than the NIC |
//! | link speed | negotiated speed below the line rate given, or goodput ≥ [`LINK_SHARE_MIN`] of it; not for a virtual interface |

use netsonde_model::cpu::CoreUsage;
use netsonde_model::nic::{DropClass, NicActivity, NicFacts, NicFinding, Offload};

/// A core at least this busy (percent) is saturated.
pub const BUSY_MIN: f64 = 90.0;
/// Softirq at least this share of a saturated core's busy time makes it the
/// receive path's.
pub const SOFTIRQ_SHARE_MIN: f64 = 0.5;
/// The top interrupt core must have taken at least this share (percent) of the
/// NIC's interrupts.
pub const IRQ_SHARE_MIN: f64 = 25.0;
/// Goodput at least this share of the negotiated speed is link-bound.
pub const LINK_SHARE_MIN: f64 = 0.9;

/// The NIC findings of one end. `cores` is that end's per-core CPU over the
/// interval, `flow_cores` the cores its flow threads ran on, `line_rate_bps` the
/// line rate the user gave (if any), `goodput_bps` the test's goodput.
pub fn findings(
    facts: Option<&NicFacts>,
    activity: Option<&NicActivity>,
    cores: &[CoreUsage],
    flow_cores: &[u32],
    line_rate_bps: Option<f64>,
    goodput_bps: f64,
) -> Vec<NicFinding> {
    let mut out = Vec::new();
    if let Some(a) = activity {
        out.extend(ring_drops(facts, a));
        out.extend(softnet(a));
        out.extend(irq_core(a, cores));
    }
    if let Some(f) = facts {
        out.extend(offload_off(f));
        out.extend(cross_numa(f, flow_cores));
        out.extend(link_speed(f, line_rate_bps, goodput_bps));
    }
    out
}

/// Rule (a): receive-ring or buffer exhaustion drops.
fn ring_drops(facts: Option<&NicFacts>, a: &NicActivity) -> Option<NicFinding> {
    let counters: Vec<(String, u64)> = a
        .drops
        .iter()
        .filter(|d| d.class == DropClass::RxRing && d.delta > 0)
        .map(|d| (d.name.clone(), d.delta))
        .collect();
    let total = a.total(DropClass::RxRing);
    if total == 0 {
        return None;
    }
    let rings = facts.and_then(|f| f.rings);
    Some(NicFinding::NicRingDrops {
        interface: a.interface.clone(),
        counters,
        total,
        rx_ring: rings.map(|r| r.rx),
        rx_max: rings.map(|r| r.rx_max),
    })
}

/// Rule (b): backlog drops and squeezes.
fn softnet(a: &NicActivity) -> Vec<NicFinding> {
    let mut out = Vec::new();
    let dropped = a.softnet_dropped();
    if dropped > 0 {
        out.push(NicFinding::SoftnetDrops {
            dropped,
            cores: a
                .softnet
                .iter()
                .filter(|s| s.dropped > 0)
                .map(|s| s.core)
                .collect(),
        });
    }
    let squeezed = a.time_squeezed();
    if squeezed > 0 {
        out.push(NicFinding::TimeSqueeze {
            squeezed,
            cores: a
                .softnet
                .iter()
                .filter(|s| s.time_squeeze > 0)
                .map(|s| s.core)
                .collect(),
        });
    }
    out
}

/// Rule (c): the core that took the most of the NIC's interrupts was saturated,
/// mostly in softirq.
fn irq_core(a: &NicActivity, cores: &[CoreUsage]) -> Option<NicFinding> {
    let total = a.irqs();
    if total == 0 {
        return None;
    }
    let (&core, &n) = a
        .irqs_per_core
        .iter()
        .max_by_key(|(c, n)| (**n, u32::MAX - **c))?;
    let share = 100.0 * n as f64 / total as f64;
    let usage = cores.iter().find(|c| c.core == Some(core))?;
    let busy = usage.busy().0;
    let softirq = usage.softirq.0;
    (share >= IRQ_SHARE_MIN && busy >= BUSY_MIN && softirq >= SOFTIRQ_SHARE_MIN * busy).then(|| {
        NicFinding::IrqCoreSaturated {
            interface: a.interface.clone(),
            core,
            irq_share: share,
            busy,
            softirq,
        }
    })
}

/// Rule (d): segmentation or receive offloads off.
fn offload_off(f: &NicFacts) -> Option<NicFinding> {
    let o = f.offloads;
    let which: Vec<Offload> = [
        (o.tso, Offload::Tso),
        (o.gso, Offload::Gso),
        (o.gro, Offload::Gro),
    ]
    .into_iter()
    .filter(|(on, _)| *on == Some(false))
    .map(|(_, which)| which)
    .collect();
    (!which.is_empty()).then(|| NicFinding::OffloadOff {
        interface: f.interface.clone(),
        which,
    })
}

/// Rule (e): flow threads on another NUMA node than the NIC.
fn cross_numa(f: &NicFacts, flow_cores: &[u32]) -> Option<NicFinding> {
    let nic_node = f.numa_node?;
    let mut nodes: Vec<u32> = flow_cores
        .iter()
        .filter_map(|c| f.numa_of_cores.get(c).copied())
        .collect();
    nodes.sort_unstable();
    nodes.dedup();
    nodes
        .iter()
        .any(|&n| n != nic_node)
        .then_some(NicFinding::CrossNuma {
            nic_node,
            flow_cores_nodes: nodes,
        })
}

/// Rule (f): the negotiated speed bounds the result.
fn link_speed(f: &NicFacts, line_rate_bps: Option<f64>, goodput_bps: f64) -> Option<NicFinding> {
    // A virtual interface's speed is a number its driver reports, not a wire.
    if f.is_virtual() {
        return None;
    }
    let speed_mbps = f.speed_mbps.filter(|&s| s > 0)?;
    let speed = f64::from(speed_mbps) * 1e6;
    let below = line_rate_bps.is_some_and(|l| speed < l);
    let at_ceiling = goodput_bps.is_finite() && goodput_bps >= LINK_SHARE_MIN * speed;
    (below || at_ceiling).then(|| NicFinding::LinkSpeedBelowLineRate {
        interface: f.interface.clone(),
        speed_mbps,
        line_rate_bps,
        goodput_bps,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use netsonde_model::nic::{DropCounter, Offloads, Rings, SoftnetCore};
    use netsonde_model::units::Percent;

    use super::*;

    fn facts() -> NicFacts {
        NicFacts {
            interface: "eth0".into(),
            driver: Some("mlx5_core".into()),
            speed_mbps: Some(25_000),
            offloads: Offloads {
                tso: Some(true),
                gso: Some(true),
                gro: Some(true),
                ..Offloads::default()
            },
            rings: Some(Rings {
                rx: 1024,
                rx_max: 8192,
                tx: 1024,
                tx_max: 8192,
            }),
            numa_node: Some(0),
            numa_of_cores: BTreeMap::from([(0, 0), (1, 0), (2, 1), (3, 1)]),
            ..NicFacts::default()
        }
    }

    fn activity() -> NicActivity {
        NicActivity {
            interface: "eth0".into(),
            ..NicActivity::default()
        }
    }

    fn core(n: u32, sys: f64, softirq: f64) -> CoreUsage {
        CoreUsage {
            core: Some(n),
            sys: Percent(sys),
            softirq: Percent(softirq),
            idle: Percent(100.0 - sys - softirq),
            ..CoreUsage::default()
        }
    }

    fn run(f: Option<&NicFacts>, a: Option<&NicActivity>, cores: &[CoreUsage]) -> Vec<NicFinding> {
        findings(f, a, cores, &[0], None, 1e9)
    }

    #[test]
    fn quiet_evidence_gives_nothing() {
        assert!(run(Some(&facts()), Some(&activity()), &[]).is_empty());
        assert!(run(None, None, &[]).is_empty());
    }

    #[test]
    fn ring_drops_name_their_counters_and_the_ring_to_grow() {
        let mut a = activity();
        a.drops = vec![
            DropCounter {
                name: "rx_out_of_buffer".into(),
                class: DropClass::RxRing,
                delta: 40,
            },
            DropCounter {
                name: "rx_discards_phy".into(),
                class: DropClass::RxPort,
                delta: 9,
            },
        ];
        let f = run(Some(&facts()), Some(&a), &[]);
        let NicFinding::NicRingDrops {
            counters, total, ..
        } = &f[0]
        else {
            panic!("{f:?}")
        };
        assert_eq!(*total, 40);
        assert_eq!(counters, &[("rx_out_of_buffer".to_string(), 40)]);
        assert!(f[0].is_bottleneck());
        assert!(f[0].advice().contains("ethtool -G eth0 rx 8192"));
    }

    #[test]
    fn softnet_drops_and_squeezes() {
        let mut a = activity();
        a.softnet = vec![
            SoftnetCore {
                core: 2,
                dropped: 5,
                time_squeeze: 0,
            },
            SoftnetCore {
                core: 3,
                dropped: 0,
                time_squeeze: 7,
            },
        ];
        let f = run(None, Some(&a), &[]);
        assert_eq!(
            f,
            [
                NicFinding::SoftnetDrops {
                    dropped: 5,
                    cores: vec![2]
                },
                NicFinding::TimeSqueeze {
                    squeezed: 7,
                    cores: vec![3]
                }
            ]
        );
        assert!(f[0].advice().contains("netdev_max_backlog"));
        assert!(f[1].advice().contains("netdev_budget"));
    }

    #[test]
    fn irq_core_saturated_in_softirq() {
        let mut a = activity();
        a.irqs_per_core = BTreeMap::from([(1, 900), (2, 100)]);
        let busy_softirq = [core(1, 20.0, 75.0), core(2, 10.0, 10.0)];
        let f = run(None, Some(&a), &busy_softirq);
        let NicFinding::IrqCoreSaturated {
            core: c, irq_share, ..
        } = f[0]
        else {
            panic!("{f:?}")
        };
        assert_eq!(c, 1);
        assert!((irq_share - 90.0).abs() < 1e-9);
        assert!(f[0].to_string().contains("core 1 took 90%"));
        // Busy, but in system time: not the receive path's core.
        assert!(run(None, Some(&a), &[core(1, 80.0, 15.0)]).is_empty());
        // Softirq-heavy but not saturated.
        assert!(run(None, Some(&a), &[core(1, 10.0, 60.0)]).is_empty());
    }

    #[test]
    fn offloads_off_are_a_caveat() {
        let mut f = facts();
        f.offloads.gro = Some(false);
        f.offloads.tso = Some(false);
        let got = run(Some(&f), None, &[]);
        assert_eq!(
            got,
            [NicFinding::OffloadOff {
                interface: "eth0".into(),
                which: vec![Offload::Tso, Offload::Gro]
            }]
        );
        assert!(!got[0].is_bottleneck());
        assert!(got[0].advice().contains("ethtool -K eth0 tso on gro on"));
        // Unknown is not off.
        f.offloads = Offloads::default();
        assert!(run(Some(&f), None, &[]).is_empty());
    }

    #[test]
    fn flow_threads_on_another_node() {
        let f = facts();
        let got = findings(Some(&f), None, &[], &[1, 2], None, 1e9);
        assert_eq!(
            got,
            [NicFinding::CrossNuma {
                nic_node: 0,
                flow_cores_nodes: vec![0, 1]
            }]
        );
        assert!(!got[0].is_bottleneck());
        assert!(findings(Some(&f), None, &[], &[0, 1], None, 1e9).is_empty());
        let mut none = f.clone();
        none.numa_node = None;
        assert!(findings(Some(&none), None, &[], &[2], None, 1e9).is_empty());
    }

    #[test]
    fn link_speed_below_line_rate_or_at_its_ceiling() {
        let f = facts(); // 25 Gbit/s
        let below = findings(Some(&f), None, &[], &[0], Some(100e9), 1e9);
        assert!(matches!(
            below[0],
            NicFinding::LinkSpeedBelowLineRate {
                speed_mbps: 25_000,
                ..
            }
        ));
        assert!(below[0].is_bottleneck());
        assert!(
            below[0].to_string().contains("below the 100000 Mbit/s"),
            "{}",
            below[0]
        );
        let ceiling = findings(Some(&f), None, &[], &[0], None, 23.5e9);
        assert_eq!(ceiling.len(), 1);
        assert!(ceiling[0].to_string().contains("94%"), "{}", ceiling[0]);
        assert!(findings(Some(&f), None, &[], &[0], Some(25e9), 10e9).is_empty());
        let mut unknown = f.clone();
        unknown.speed_mbps = None;
        assert!(findings(Some(&unknown), None, &[], &[0], Some(100e9), 99e9).is_empty());
        // A veth says 10000 Mbit/s and carried 10.5 Gbit/s between namespaces:
        // its speed bounds nothing.
        let mut veth = f.clone();
        veth.driver = Some("veth".into());
        veth.speed_mbps = Some(10_000);
        assert!(findings(Some(&veth), None, &[], &[0], None, 10.48e9).is_empty());
    }
}
