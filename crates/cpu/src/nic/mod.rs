//! The NIC a test used, as evidence: its static facts ([`read_facts`] →
//! [`NicFacts`](netsonde_model::nic::NicFacts)) and what it counted over the
//! measured interval ([`NicSnapshot::read`] at start and finish, then the pure
//! [`NicSnapshot::since`] → [`NicActivity`]).
//!
//! - [`stats`]: `ethtool -S` text and which counters count drops, per driver.
//! - [`interrupts`]: `/proc/interrupts`, which lines are the NIC's, CPU lists.
//! - [`softnet`]: `/proc/net/softnet_stat`, per-core backlog drops and squeezes.
//! - [`facts`]: reading the facts from sysfs, `/proc` and ethtool requests
//!   (`crate::sys::ethtool`).
//!
//! Everything is read at the start and the end of the interval, never on the
//! data path, and reading never fails: what cannot be read is `None` or empty.

use std::path::Path;

use netsonde_model::nic::{LinkDrops, NicActivity};

pub mod facts;
pub mod interrupts;
pub mod softnet;
pub mod stats;

pub use facts::read_facts;
use facts::{read_num, valid_ifname, DeviceIds};
use interrupts::{irq_deltas, nic_lines, parse_interrupts, IrqLine};
use softnet::{parse_softnet, softnet_deltas, SoftnetRow};
use stats::{drop_deltas, Stat};

/// The generic drop counters read from `statistics/` in sysfs, in
/// [`LinkDrops`]' order.
const LINK_STATS: [&str; 5] = [
    "rx_dropped",
    "rx_missed_errors",
    "rx_fifo_errors",
    "rx_over_errors",
    "tx_dropped",
];

/// The NIC's and the receive path's counters at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NicSnapshot {
    /// The interface.
    pub interface: String,
    /// Its driver, which decides what some counters mean.
    pub driver: Option<String>,
    /// `ethtool -S` counters.
    pub stats: Vec<Stat>,
    /// `statistics/` counters, in `LINK_STATS` order.
    pub link: [Option<u64>; 5],
    /// `/proc/net/softnet_stat`.
    pub softnet: Vec<SoftnetRow>,
    /// The NIC's lines of `/proc/interrupts`.
    pub irqs: Vec<IrqLine>,
}

impl NicSnapshot {
    /// Reads everything now. An unknown interface gives empty NIC counters (the
    /// softnet counters are the host's and are read anyway).
    pub fn read(ifname: &str) -> NicSnapshot {
        let mut snap = NicSnapshot {
            interface: ifname.to_string(),
            softnet: std::fs::read_to_string("/proc/net/softnet_stat")
                .map(|t| parse_softnet(&t))
                .unwrap_or_default(),
            ..NicSnapshot::default()
        };
        if !valid_ifname(ifname) {
            return snap;
        }
        let base = Path::new("/sys/class/net").join(ifname);
        snap.link = LINK_STATS.map(|s| read_num(&base.join("statistics").join(s)));
        if let Ok(e) = crate::sys::ethtool::Ethtool::open(ifname) {
            snap.driver = e.drvinfo().ok().map(|d| d.driver);
            snap.stats = ethtool_stats(&e).unwrap_or_default();
        }
        let dev = DeviceIds::read(ifname);
        if let Ok(text) = std::fs::read_to_string("/proc/interrupts") {
            let lines = parse_interrupts(&text);
            snap.irqs = nic_lines(&lines, &dev.as_ids(ifname))
                .into_iter()
                .cloned()
                .collect();
        }
        snap
    }

    /// What changed from `earlier` to this snapshot (pure).
    pub fn since(&self, earlier: &NicSnapshot) -> NicActivity {
        let link = |i: usize| Some(self.link[i]?.saturating_sub(earlier.link[i]?));
        let irqs: Vec<u32> = self.irqs.iter().map(|l| l.irq).collect();
        NicActivity {
            interface: self.interface.clone(),
            drops: drop_deltas(self.driver.as_deref(), &earlier.stats, &self.stats),
            link: LinkDrops {
                rx_dropped: link(0),
                rx_missed_errors: link(1),
                rx_fifo_errors: link(2),
                rx_over_errors: link(3),
                tx_dropped: link(4),
            },
            softnet: softnet_deltas(&earlier.softnet, &self.softnet),
            irqs_per_core: irq_deltas(&earlier.irqs, &self.irqs, &irqs),
        }
    }
}

/// The `ethtool -S` counters through `ETHTOOL_GSTRINGS` and `ETHTOOL_GSTATS`.
fn ethtool_stats(e: &crate::sys::ethtool::Ethtool) -> std::io::Result<Vec<Stat>> {
    use crate::sys::ethtool::SS_STATS;
    let n = e.set_len(SS_STATS)?;
    let names = e.strings(SS_STATS, n)?;
    let values = e.stats(n)?;
    Ok(names.into_iter().zip(values).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::stats::parse_ethtool_s;
    use netsonde_model::nic::DropClass;

    /// Whether `/sys/class/net/NAME` exists; says why when not.
    fn have(name: &str) -> bool {
        let here = Path::new("/sys/class/net").join(name).exists();
        if !here {
            eprintln!("skipped: no interface {name} on this host");
        }
        here
    }

    #[test]
    fn since_gives_deltas_of_every_source() {
        let before = NicSnapshot {
            interface: "eth0".into(),
            driver: Some("virtio_net".into()),
            stats: parse_ethtool_s(
                "NIC statistics:\n     rx_queue_0_drops: 3\n     rx_queue_0_packets: 10\n",
            ),
            link: [Some(1), Some(0), None, Some(0), Some(4)],
            softnet: parse_softnet("00000001 00000002 00000003\n"),
            irqs: parse_interrupts("CPU0 CPU1\n 38: 10 20 PCI-MSIX virtio2-input.0\n"),
        };
        let after = NicSnapshot {
            stats: parse_ethtool_s(
                "NIC statistics:\n     rx_queue_0_drops: 8\n     rx_queue_0_packets: 99\n",
            ),
            link: [Some(6), Some(0), Some(1), Some(0), Some(3)],
            softnet: parse_softnet("00000009 00000004 00000003\n"),
            irqs: parse_interrupts("CPU0 CPU1\n 38: 10 70 PCI-MSIX virtio2-input.0\n"),
            ..before.clone()
        };
        let a = after.since(&before);
        assert_eq!(a.total(DropClass::RxRing), 5);
        assert_eq!(a.drops[0].name, "rx_queue_0_drops");
        assert_eq!(a.link.rx_dropped, Some(5));
        assert_eq!(a.link.rx_fifo_errors, None, "unknown at the start");
        assert_eq!(a.link.tx_dropped, Some(0), "a counter going back counts 0");
        assert_eq!(a.softnet_dropped(), 2);
        assert_eq!(a.time_squeezed(), 0);
        assert_eq!(a.irqs_per_core, [(1, 50)].into_iter().collect());
    }

    #[test]
    fn live_loopback_facts() {
        if !have("lo") {
            return;
        }
        let f = read_facts("lo");
        assert_eq!(f.interface, "lo");
        assert_eq!(f.driver.as_deref(), Some("loopback"), "{f:?}");
        assert_eq!(f.speed_mbps, None);
        assert!(f.irqs.is_empty(), "{:?}", f.irqs);
        assert!(f.offloads.gro.is_some(), "{:?}", f.offloads);
        let s = NicSnapshot::read("lo");
        assert!(s.link[0].is_some());
        let a = NicSnapshot::read("lo").since(&s);
        assert!(a.irqs_per_core.is_empty());
    }

    #[test]
    fn live_virtio_eth0_facts() {
        if !have("eth0") {
            return;
        }
        let f = read_facts("eth0");
        if f.driver.as_deref() != Some("virtio_net") {
            eprintln!("skipped: eth0 is {:?}, not virtio_net", f.driver);
            return;
        }
        assert!(!f.irqs.is_empty(), "{f:?}");
        assert!(
            f.irqs.iter().all(|i| !i.affinity.is_empty()),
            "{:?}",
            f.irqs
        );
        assert!(f.rx_queues.unwrap_or(0) >= 1);
        assert!(f.rings.is_some(), "virtio_net reports its rings: {f:?}");
        let s = NicSnapshot::read("eth0");
        assert!(!s.stats.is_empty());
        assert!(!s.irqs.is_empty());
        // Reading again (no traffic is sent) gives sane, non-negative deltas.
        let _ = NicSnapshot::read("eth0").since(&s);
    }

    #[test]
    fn unknown_or_bad_names_read_nothing() {
        for name in ["nosuchdev0", "", "../../etc", "way-too-long-name-x"] {
            let f = read_facts(name);
            assert_eq!(f.driver, None, "{name}");
            assert!(f.irqs.is_empty());
            let s = NicSnapshot::read(name);
            assert!(s.stats.is_empty() && s.irqs.is_empty());
        }
    }

    /// Removes the namespace it names when dropped, however the test ends.
    struct Netns(&'static str);

    impl Drop for Netns {
        fn drop(&mut self) {
            let _ = std::process::Command::new("ip")
                .args(["netns", "del", self.0])
                .status();
        }
    }

    /// Runs `ip ARGS`; false (with the reason said) when it fails.
    fn ip(args: &[&str]) -> bool {
        match std::process::Command::new("ip").args(args).output() {
            Ok(o) if o.status.success() => true,
            Ok(o) => {
                eprintln!("ip {args:?}: {}", String::from_utf8_lossy(&o.stderr).trim());
                false
            }
            Err(e) => {
                eprintln!("ip {args:?}: {e}");
                false
            }
        }
    }

    #[test]
    fn live_veth_facts_in_a_namespace() {
        if !rustix::process::geteuid().is_root() {
            eprintln!("skipped: creating a veth pair needs root");
            return;
        }
        let ns = Netns("sondenictest");
        // A namespace left by an earlier run that was killed.
        let _ = std::process::Command::new("ip")
            .args(["netns", "del", ns.0])
            .stderr(std::process::Stdio::null())
            .status();
        if !ip(&["netns", "add", ns.0]) {
            eprintln!("skipped: cannot create a network namespace");
            return;
        }
        assert!(ip(&[
            "-n", ns.0, "link", "add", "sondev0", "type", "veth", "peer", "name", "sondev1"
        ]));
        assert!(ip(&["-n", ns.0, "link", "set", "sondev0", "up"]));
        assert!(ip(&["-n", ns.0, "link", "set", "sondev1", "up"]));
        // Read from inside the namespace: a thread that joined it.
        let got = std::thread::spawn(|| {
            let f = std::fs::File::open("/run/netns/sondenictest").ok()?;
            rustix::thread::move_into_link_name_space(
                std::os::fd::AsFd::as_fd(&f),
                Some(rustix::thread::LinkNameSpaceType::Network),
            )
            .ok()?;
            // sysfs shows the namespace of the process that mounted it: the
            // ioctls see this thread's, so the driver and offloads are the
            // veth's.
            Some((read_facts("sondev0"), NicSnapshot::read("sondev0")))
        })
        .join()
        .expect("reader thread");
        let Some((f, s)) = got else {
            eprintln!("skipped: cannot enter the namespace");
            return;
        };
        assert_eq!(f.driver.as_deref(), Some("veth"), "{f:?}");
        assert!(
            f.offloads.gro.is_some() && f.offloads.tso.is_some(),
            "{f:?}"
        );
        assert!(f.irqs.is_empty());
        assert!(s.stats.iter().any(|(n, _)| n == "peer_ifindex"), "{s:?}");
        drop(ns);
        assert!(!Path::new("/run/netns/sondenictest").exists());
    }
}
