//! The network interface card a test used, as evidence for the diagnosis: its static
//! facts ([`NicFacts`]: driver, link speed, offloads, rings, coalescing, channels,
//! NUMA node, interrupt lines), what it counted over the measured interval
//! ([`NicActivity`]: NIC drop counters, the kernel's per-core backlog drops and
//! squeezes, the NIC's interrupts per core), and what those say ([`NicFinding`]:
//! one variant per rule, each with its evidence as data, a one-line sentence and
//! one thing to try). How they are read lives in `netsonde-cpu`; the rules live in
//! `netsonde-analysis`. This is only the vocabulary.
//!
//! Every fact is optional: a driver that does not answer an ethtool request, or a
//! virtual interface without the sysfs file, leaves it `None`.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// The negotiated duplex of a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Duplex {
    /// Both directions at once.
    Full,
    /// One direction at a time.
    Half,
}

/// Offloads, on or off; `None` where the driver did not say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Offloads {
    /// TCP segmentation offload (`tx-tcp-segmentation`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tso: Option<bool>,
    /// Generic segmentation offload (`tx-generic-segmentation`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gso: Option<bool>,
    /// Generic receive offload (`rx-gro`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gro: Option<bool>,
    /// Large receive offload, in the NIC (`rx-lro`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lro: Option<bool>,
    /// Receive checksum offload (`rx-checksum`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rx_checksum: Option<bool>,
    /// Transmit checksum offload (any of `tx-checksum-*`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tx_checksum: Option<bool>,
}

/// Descriptor ring sizes (`ethtool -g`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Rings {
    /// Receive descriptors in use.
    pub rx: u32,
    /// The most receive descriptors the driver allows.
    pub rx_max: u32,
    /// Transmit descriptors in use.
    pub tx: u32,
    /// The most transmit descriptors the driver allows.
    pub tx_max: u32,
}

/// Interrupt coalescing (`ethtool -c`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Coalesce {
    /// Microseconds a receive interrupt is delayed after a packet.
    pub rx_usecs: u32,
    /// Packets a receive interrupt waits for.
    pub rx_frames: u32,
    /// Microseconds a transmit completion interrupt is delayed.
    pub tx_usecs: u32,
    /// Whether the driver adapts the receive delay to the packet rate.
    pub adaptive_rx: bool,
    /// Whether the driver adapts the transmit delay to the packet rate.
    pub adaptive_tx: bool,
}

/// Queue (channel) counts (`ethtool -l`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Channels {
    /// Receive-only channels in use.
    pub rx: u32,
    /// Transmit-only channels in use.
    pub tx: u32,
    /// Combined (receive and transmit) channels in use.
    pub combined: u32,
    /// The most receive-only channels the driver allows.
    pub max_rx: u32,
    /// The most transmit-only channels the driver allows.
    pub max_tx: u32,
    /// The most combined channels the driver allows.
    pub max_combined: u32,
}

/// One interrupt line of the NIC.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NicIrq {
    /// The IRQ number (first column of `/proc/interrupts`).
    pub irq: u32,
    /// Its action name (last column: `virtio2-input.0`, `ice-eth0-TxRx-3`,
    /// `mlx5_comp0@pci:0000:81:00.0`).
    pub name: String,
    /// The cores it may be delivered to (`/proc/irq/N/smp_affinity_list`); empty
    /// where unreadable.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub affinity: Vec<u32>,
}

/// Drivers whose reported speed is a number, not a wire: their bytes never
/// leave the host (a veth says 10000 Mbit/s and moves whatever the CPUs do).
pub const VIRTUAL_DRIVERS: &[&str] = &[
    "veth",
    "tun",
    "bridge",
    "loopback",
    "dummy",
    "vxlan",
    "geneve",
    "macvlan",
    "ipvlan",
    "vrf",
    "wireguard",
];

/// The static facts of the interface a test used.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NicFacts {
    /// The interface's name, as the facts were read for it.
    #[serde(default)]
    pub interface: String,
    /// Kernel driver (`mlx5_core`, `ice`, `virtio_net`, `veth`, `loopback`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    /// Negotiated link speed in Mbit/s; `None` where unknown (virtual links).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_mbps: Option<u32>,
    /// Negotiated duplex; `None` where unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplex: Option<Duplex>,
    /// Offloads on or off.
    #[serde(default)]
    pub offloads: Offloads,
    /// Ring sizes; `None` where the driver does not report them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rings: Option<Rings>,
    /// Interrupt coalescing; `None` where the driver does not report it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coalesce: Option<Coalesce>,
    /// Channel counts; `None` where the driver does not report them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channels: Option<Channels>,
    /// Receive queues the kernel has (`queues/rx-*` in sysfs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rx_queues: Option<u32>,
    /// Transmit queues the kernel has (`queues/tx-*` in sysfs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tx_queues: Option<u32>,
    /// The NUMA node the NIC is attached to; `None` for none (`-1`) or unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa_node: Option<u32>,
    /// The NIC's interrupt lines, with their affinity.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub irqs: Vec<NicIrq>,
    /// Each online core's NUMA node (from `/sys/devices/system/node/nodeN/cpulist`),
    /// by core number; empty where the kernel has no NUMA information.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty", with = "pairs")]
    pub numa_of_cores: BTreeMap<u32, u32>,
}

impl NicFacts {
    /// Whether the interface is virtual ([`VIRTUAL_DRIVERS`]): its speed bounds
    /// nothing.
    pub fn is_virtual(&self) -> bool {
        self.driver
            .as_deref()
            .is_some_and(|d| VIRTUAL_DRIVERS.contains(&d))
    }
}

/// A map keyed by core number, written as a list of `[key, value]` pairs: JSON
/// object keys are strings, which a control frame's tagged enums cannot read
/// back as numbers.
mod pairs {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer, V: Serialize>(
        m: &BTreeMap<u32, V>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(m.iter())
    }

    pub fn deserialize<'de, D: Deserializer<'de>, V: Deserialize<'de>>(
        d: D,
    ) -> Result<BTreeMap<u32, V>, D::Error> {
        Ok(Vec::<(u32, V)>::deserialize(d)?.into_iter().collect())
    }
}

/// What a NIC drop counter counts, by its name and driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DropClass {
    /// The host's receive ring or buffers ran out: the host did not post buffers
    /// as fast as packets came (mlx5 `rx_out_of_buffer`, ixgbe
    /// `rx_no_buffer_count`, `rx_missed_errors`, ice `rx_dropped`, virtio
    /// `rx_queue_N_drops`).
    RxRing,
    /// The port's own buffer overflowed before the host's rings were involved
    /// (mlx5 `rx_discards_phy`, `rx_prioN_buf_discard`).
    RxPort,
    /// An XDP program dropped or could not forward packets (a decision, not
    /// congestion).
    Xdp,
    /// Received frames that were bad (CRC, length, descriptor errors).
    RxError,
    /// Other receive drops the driver counted (interface down, software drops).
    RxOther,
    /// Transmit drops and errors.
    Tx,
}

/// One NIC counter classified as a drop, and its change over the interval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DropCounter {
    /// The counter's name as `ethtool -S` prints it.
    pub name: String,
    /// What it counts.
    pub class: DropClass,
    /// Its change over the interval.
    pub delta: u64,
}

/// The interface's generic drop counters (`/sys/class/net/DEV/statistics/`),
/// changes over the interval; `None` where a file could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LinkDrops {
    /// `rx_dropped`: packets received and dropped by the kernel or driver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rx_dropped: Option<u64>,
    /// `rx_missed_errors`: packets the NIC missed for lack of host buffers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rx_missed_errors: Option<u64>,
    /// `rx_fifo_errors`: receive FIFO overruns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rx_fifo_errors: Option<u64>,
    /// `rx_over_errors`: receive ring overruns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rx_over_errors: Option<u64>,
    /// `tx_dropped`: packets dropped on transmit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tx_dropped: Option<u64>,
}

/// One core's `/proc/net/softnet_stat` changes over the interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SoftnetCore {
    /// The core.
    pub core: u32,
    /// Packets dropped because the core's input backlog was full
    /// (`net.core.netdev_max_backlog`).
    pub dropped: u64,
    /// Times the receive softirq ran out of budget or time with work left
    /// (`net.core.netdev_budget`, `netdev_budget_usecs`).
    pub time_squeeze: u64,
}

/// What the NIC and the kernel's receive path counted over the measured interval.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NicActivity {
    /// The interface.
    pub interface: String,
    /// The NIC counters classified as drops that changed over the interval.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drops: Vec<DropCounter>,
    /// The interface's generic drop counters.
    #[serde(default)]
    pub link: LinkDrops,
    /// Per core backlog drops and squeezes; cores where both are zero are left
    /// out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub softnet: Vec<SoftnetCore>,
    /// The NIC's interrupts each core took over the interval (all its lines
    /// summed), by core number; cores that took none are left out.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty", with = "pairs")]
    pub irqs_per_core: BTreeMap<u32, u64>,
}

impl NicActivity {
    /// The sum of the drop counters of one class.
    pub fn total(&self, class: DropClass) -> u64 {
        self.drops
            .iter()
            .filter(|d| d.class == class)
            .map(|d| d.delta)
            .fold(0, u64::saturating_add)
    }

    /// Backlog drops summed over cores.
    pub fn softnet_dropped(&self) -> u64 {
        self.softnet
            .iter()
            .map(|s| s.dropped)
            .fold(0, u64::saturating_add)
    }

    /// Squeezes summed over cores.
    pub fn time_squeezed(&self) -> u64 {
        self.softnet
            .iter()
            .map(|s| s.time_squeeze)
            .fold(0, u64::saturating_add)
    }

    /// The NIC's interrupts summed over cores.
    pub fn irqs(&self) -> u64 {
        self.irqs_per_core
            .values()
            .copied()
            .fold(0, u64::saturating_add)
    }
}

/// An offload a finding can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Offload {
    /// TCP segmentation offload.
    Tso,
    /// Generic segmentation offload.
    Gso,
    /// Generic receive offload.
    Gro,
}

impl Offload {
    /// Its name in `ethtool -K`.
    pub fn ethtool_name(self) -> &'static str {
        match self {
            Offload::Tso => "tso",
            Offload::Gso => "gso",
            Offload::Gro => "gro",
        }
    }
}

/// What the NIC evidence says, one variant per rule, with its evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum NicFinding {
    /// The NIC dropped packets because the host's receive ring or buffers ran
    /// out.
    NicRingDrops {
        /// The interface.
        interface: String,
        /// The ring-exhaustion counters that moved, with their deltas.
        counters: Vec<(String, u64)>,
        /// Their sum.
        total: u64,
        /// The receive ring size in use, when known.
        rx_ring: Option<u32>,
        /// The largest the driver allows, when known.
        rx_max: Option<u32>,
    },
    /// Cores dropped packets because their input backlog was full.
    SoftnetDrops {
        /// Drops summed over cores.
        dropped: u64,
        /// The cores that dropped.
        cores: Vec<u32>,
    },
    /// The receive softirq ran out of budget with work left.
    TimeSqueeze {
        /// Squeezes summed over cores.
        squeezed: u64,
        /// The cores that were squeezed.
        cores: Vec<u32>,
    },
    /// A core that took most of the NIC's interrupts was saturated, mostly in
    /// softirq.
    IrqCoreSaturated {
        /// The interface.
        interface: String,
        /// The core.
        core: u32,
        /// Its share of the NIC's interrupts, in percent.
        irq_share: f64,
        /// Its busy share, in percent.
        busy: f64,
        /// Its softirq share, in percent of the core.
        softirq: f64,
    },
    /// Segmentation or receive offloads were off.
    OffloadOff {
        /// The interface.
        interface: String,
        /// The offloads that were off.
        which: Vec<Offload>,
    },
    /// The flow threads ran on another NUMA node than the NIC's.
    CrossNuma {
        /// The NIC's node.
        nic_node: u32,
        /// The nodes of the cores the flow threads ran on.
        flow_cores_nodes: Vec<u32>,
    },
    /// The negotiated link speed bounds the result: it is below the line rate
    /// asked for, or the goodput reached 90% of it.
    LinkSpeedBelowLineRate {
        /// The interface.
        interface: String,
        /// The negotiated speed, Mbit/s.
        speed_mbps: u32,
        /// The line rate the user gave, bit/s, when given.
        line_rate_bps: Option<f64>,
        /// The test's goodput, bit/s.
        goodput_bps: f64,
    },
}

impl NicFinding {
    /// Whether this finding can explain a limit (a bottleneck: drops, a
    /// saturated interrupt core, the link's speed) or only qualifies the result
    /// (a caveat: an offload off, a cross-NUMA placement).
    ///
    /// A time squeeze is a caveat: the softirq ran out of budget with work left,
    /// a symptom of a busy receive core that the interrupt-core and drop rules
    /// judge; squeezes alone lose nothing.
    pub fn is_bottleneck(&self) -> bool {
        match self {
            NicFinding::NicRingDrops { .. }
            | NicFinding::SoftnetDrops { .. }
            | NicFinding::IrqCoreSaturated { .. }
            | NicFinding::LinkSpeedBelowLineRate { .. } => true,
            NicFinding::TimeSqueeze { .. }
            | NicFinding::OffloadOff { .. }
            | NicFinding::CrossNuma { .. } => false,
        }
    }

    /// The rule's short name, for a verdict's heading.
    pub fn name(&self) -> &'static str {
        match self {
            NicFinding::NicRingDrops { .. } => "receive ring drops",
            NicFinding::SoftnetDrops { .. } => "backlog drops",
            NicFinding::TimeSqueeze { .. } => "softirq time squeeze",
            NicFinding::IrqCoreSaturated { .. } => "interrupt core saturated",
            NicFinding::OffloadOff { .. } => "offload off",
            NicFinding::CrossNuma { .. } => "cross-NUMA",
            NicFinding::LinkSpeedBelowLineRate { .. } => "link speed",
        }
    }

    /// One concrete thing to try.
    pub fn advice(&self) -> String {
        match self {
            NicFinding::NicRingDrops {
                interface,
                rx_ring,
                rx_max,
                ..
            } => match (rx_ring, rx_max) {
                (Some(now), Some(max)) if max > now => format!(
                    "enlarge the receive ring: ethtool -G {interface} rx {max} (now {now}, max {max})"
                ),
                (Some(now), Some(_)) => format!(
                    "the receive ring is at its maximum ({now}): spread receive over more \
                     queues (ethtool -L {interface} combined N) or lower the packet rate"
                ),
                _ => format!(
                    "enlarge the receive ring: ethtool -G {interface} rx N (up to the maximum \
                     ethtool -g {interface} shows)"
                ),
            },
            NicFinding::SoftnetDrops { .. } => {
                "raise the per-core backlog: sysctl -w net.core.netdev_max_backlog=16384, or \
                 spread receive over more cores (RSS, RPS)"
                    .to_string()
            }
            NicFinding::TimeSqueeze { .. } => {
                "give the receive softirq more budget: sysctl -w net.core.netdev_budget=600 \
                 net.core.netdev_budget_usecs=8000"
                    .to_string()
            }
            NicFinding::IrqCoreSaturated { interface, .. } => format!(
                "spread the NIC's interrupts: more channels (ethtool -L {interface} combined N), \
                 RSS, or irqbalance / /proc/irq/N/smp_affinity_list"
            ),
            NicFinding::OffloadOff { interface, which } => {
                let on: Vec<String> = which
                    .iter()
                    .map(|o| format!("{} on", o.ethtool_name()))
                    .collect();
                format!("turn them on: ethtool -K {interface} {}", on.join(" "))
            }
            NicFinding::CrossNuma { nic_node, .. } => format!(
                "run the flows on the NIC's node: --affinity with cores of node {nic_node} \
                 (numactl --cpunodebind={nic_node})"
            ),
            NicFinding::LinkSpeedBelowLineRate { interface, .. } => format!(
                "check the link's negotiated speed (ethtool {interface}): cable, switch port, \
                 autonegotiation; or test over a faster link"
            ),
        }
    }
}

impl fmt::Display for NicFinding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NicFinding::NicRingDrops {
                interface,
                counters,
                total,
                ..
            } => {
                let named: Vec<String> =
                    counters.iter().map(|(n, d)| format!("{n} +{d}")).collect();
                write!(
                    f,
                    "{interface} dropped {total} packets for lack of receive buffers ({})",
                    named.join(", ")
                )
            }
            NicFinding::SoftnetDrops { dropped, cores } => write!(
                f,
                "{dropped} packets dropped at full per-core backlogs (cores {})",
                list(cores)
            ),
            NicFinding::TimeSqueeze { squeezed, cores } => write!(
                f,
                "the receive softirq ran out of budget {squeezed} times (cores {})",
                list(cores)
            ),
            NicFinding::IrqCoreSaturated {
                interface,
                core,
                irq_share,
                busy,
                softirq,
            } => write!(
                f,
                "core {core} took {irq_share:.0}% of {interface}'s interrupts and was {busy:.0}% \
                 busy, {softirq:.0}% in softirq"
            ),
            NicFinding::OffloadOff { interface, which } => {
                let names: Vec<&str> = which.iter().map(|o| o.ethtool_name()).collect();
                write!(f, "{interface} has {} off", names.join(", "))
            }
            NicFinding::CrossNuma {
                nic_node,
                flow_cores_nodes,
            } => write!(
                f,
                "the NIC is on NUMA node {nic_node}, the flow threads ran on node(s) {}",
                list(flow_cores_nodes)
            ),
            NicFinding::LinkSpeedBelowLineRate {
                interface,
                speed_mbps,
                line_rate_bps,
                goodput_bps,
            } => {
                let speed = f64::from(*speed_mbps) * 1e6;
                match line_rate_bps {
                    Some(line) if speed < *line => write!(
                        f,
                        "{interface} negotiated {speed_mbps} Mbit/s, below the {:.0} Mbit/s line \
                         rate given",
                        line / 1e6
                    ),
                    _ => write!(
                        f,
                        "goodput {:.0} Mbit/s is {:.0}% of {interface}'s negotiated \
                         {speed_mbps} Mbit/s",
                        goodput_bps / 1e6,
                        100.0 * goodput_bps / speed.max(1.0)
                    ),
                }
            }
        }
    }
}

/// `1, 2, 3`.
fn list(items: &[u32]) -> String {
    let parts: Vec<String> = items.iter().map(u32::to_string).collect();
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_round_trip_and_old_documents_load() {
        let facts = NicFacts {
            interface: "eth0".into(),
            driver: Some("ice".into()),
            speed_mbps: Some(100_000),
            duplex: Some(Duplex::Full),
            rings: Some(Rings {
                rx: 2048,
                rx_max: 8160,
                tx: 2048,
                tx_max: 8160,
            }),
            irqs: vec![NicIrq {
                irq: 78,
                name: "ice-lan1-TxRx-0".into(),
                affinity: vec![0],
            }],
            numa_of_cores: BTreeMap::from([(0, 0), (1, 1)]),
            ..NicFacts::default()
        };
        let json = serde_json::to_string(&facts).unwrap();
        assert_eq!(serde_json::from_str::<NicFacts>(&json).unwrap(), facts);
        // A document with only the name loads, everything else unknown.
        let bare: NicFacts = serde_json::from_str(r#"{"interface":"lo"}"#).unwrap();
        assert_eq!(bare.driver, None);
        assert_eq!(bare.offloads, Offloads::default());
    }

    #[test]
    fn activity_sums_by_class() {
        let a = NicActivity {
            interface: "eth0".into(),
            drops: vec![
                DropCounter {
                    name: "rx_out_of_buffer".into(),
                    class: DropClass::RxRing,
                    delta: 5,
                },
                DropCounter {
                    name: "rx_discards_phy".into(),
                    class: DropClass::RxPort,
                    delta: 7,
                },
            ],
            softnet: vec![SoftnetCore {
                core: 1,
                dropped: 2,
                time_squeeze: 3,
            }],
            irqs_per_core: BTreeMap::from([(0, 10), (1, 30)]),
            ..NicActivity::default()
        };
        assert_eq!(a.total(DropClass::RxRing), 5);
        assert_eq!(a.total(DropClass::Tx), 0);
        assert_eq!(a.softnet_dropped(), 2);
        assert_eq!(a.time_squeezed(), 3);
        assert_eq!(a.irqs(), 40);
        // Inside an internally tagged message (a control frame), the per-core
        // map still reads back: it is written as pairs, not as an object.
        #[derive(Serialize, Deserialize, PartialEq, Debug)]
        #[serde(tag = "type")]
        enum Frame {
            Report { nic: NicActivity },
        }
        let f = Frame::Report { nic: a };
        let json = serde_json::to_string(&f).unwrap();
        assert!(
            json.contains(r#""irqs_per_core":[[0,10],[1,30]]"#),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<Frame>(&json).unwrap(), f);
    }

    #[test]
    fn findings_say_bottleneck_or_caveat_with_advice() {
        let ring = NicFinding::NicRingDrops {
            interface: "eth0".into(),
            counters: vec![("rx_out_of_buffer".into(), 12)],
            total: 12,
            rx_ring: Some(1024),
            rx_max: Some(8192),
        };
        assert!(ring.is_bottleneck());
        assert!(ring.advice().contains("ethtool -G eth0 rx 8192"));
        assert!(ring.to_string().contains("rx_out_of_buffer +12"));
        let off = NicFinding::OffloadOff {
            interface: "eth0".into(),
            which: vec![Offload::Gro, Offload::Tso],
        };
        assert!(!off.is_bottleneck());
        assert_eq!(off.advice(), "turn them on: ethtool -K eth0 gro on tso on");
        let json = serde_json::to_string(&off).unwrap();
        assert!(json.contains(r#""rule":"offload_off""#), "{json}");
        assert_eq!(serde_json::from_str::<NicFinding>(&json).unwrap(), off);
    }
}
