//! Reading an interface's static facts from sysfs, `/proc` and ethtool requests.
//! Nothing here fails: what cannot be read is `None` or empty.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use netsonde_model::nic::{Channels, Coalesce, Duplex, NicFacts, NicIrq, Offloads, Rings};

use super::interrupts::{nic_lines, parse_cpulist, parse_interrupts, NicIds};
use crate::sys::ethtool::{Ethtool, FLAG_LRO, SS_FEATURES};

/// Where the kernel lists network interfaces.
const SYS_NET: &str = "/sys/class/net";

/// An interface name that is safe to put in a sysfs path and fits `IFNAMSIZ`.
pub(crate) fn valid_ifname(name: &str) -> bool {
    !name.is_empty()
        && name.len() < 16
        && name != "."
        && name != ".."
        && !name.contains(['/', '\0'])
        && !name.chars().any(char::is_whitespace)
}

/// Reads a trimmed sysfs or procfs file.
pub(crate) fn read_trim(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

/// Reads a file holding one integer.
pub(crate) fn read_num<T: std::str::FromStr>(path: &Path) -> Option<T> {
    read_trim(path)?.parse().ok()
}

/// The facts of `ifname`. An unknown or invalid name gives facts with only the
/// name.
pub fn read_facts(ifname: &str) -> NicFacts {
    let mut facts = NicFacts {
        interface: ifname.to_string(),
        numa_of_cores: numa_of_cores(),
        ..NicFacts::default()
    };
    if !valid_ifname(ifname) {
        return facts;
    }
    let base = Path::new(SYS_NET).join(ifname);
    let dev = DeviceIds::read(ifname);
    let ethtool = Ethtool::open(ifname).ok();
    let drvinfo = ethtool.as_ref().and_then(|e| e.drvinfo().ok());
    facts.driver = driver_of(&base)
        .or_else(|| drvinfo.map(|d| d.driver))
        .filter(|d| !d.is_empty())
        .or_else(|| (read_num::<u32>(&base.join("type")) == Some(772)).then(|| "loopback".into()));
    // sysfs says -1 (or EINVAL) where the speed is unknown.
    facts.speed_mbps = read_num::<i64>(&base.join("speed"))
        .filter(|&s| s > 0)
        .and_then(|s| u32::try_from(s).ok());
    facts.duplex = match read_trim(&base.join("duplex")).as_deref() {
        Some("full") => Some(Duplex::Full),
        Some("half") => Some(Duplex::Half),
        _ => None,
    };
    if let Some(e) = &ethtool {
        facts.offloads = offloads(e);
        facts.rings = e.rings().ok().map(|[rx_max, tx_max, rx, tx]| Rings {
            rx,
            rx_max,
            tx,
            tx_max,
        });
        facts.coalesce = e
            .coalesce()
            .ok()
            .map(|[rx_usecs, rx_frames, tx_usecs, ar, at]| Coalesce {
                rx_usecs,
                rx_frames,
                tx_usecs,
                adaptive_rx: ar != 0,
                adaptive_tx: at != 0,
            });
        facts.channels = e.channels().ok().map(|c| Channels {
            max_rx: c[0],
            max_tx: c[1],
            max_combined: c[3],
            rx: c[4],
            tx: c[5],
            combined: c[7],
        });
    }
    facts.rx_queues = count_prefixed(&base.join("queues"), "rx-");
    facts.tx_queues = count_prefixed(&base.join("queues"), "tx-");
    facts.numa_node = dev
        .dirs
        .iter()
        .find_map(|d| read_num::<i64>(&d.join("numa_node")))
        .filter(|&n| n >= 0)
        .and_then(|n| u32::try_from(n).ok());
    facts.irqs = nic_irqs(&dev, ifname);
    facts
}

/// The basename of `device/driver`: the bound driver of a real device.
fn driver_of(base: &Path) -> Option<String> {
    let link = std::fs::read_link(base.join("device/driver")).ok()?;
    Some(link.file_name()?.to_string_lossy().into_owned())
}

/// What identifies an interface's device in sysfs and `/proc/interrupts`.
#[derive(Debug, Clone, Default)]
pub(crate) struct DeviceIds {
    /// `device` and its parent (a virtio device's PCI function), resolved.
    pub dirs: Vec<PathBuf>,
    /// The IRQs in the first of `dirs` that has `msi_irqs/`.
    pub msi: Vec<u32>,
    /// The PCI address, when one of `dirs` is a PCI function.
    pub pci: Option<String>,
    /// The virtio device (`virtio2`), when `device` is one.
    pub virtio: Option<String>,
}

impl DeviceIds {
    /// Reads them for `ifname`; a virtual interface has none.
    pub(crate) fn read(ifname: &str) -> DeviceIds {
        let mut ids = DeviceIds::default();
        if !valid_ifname(ifname) {
            return ids;
        }
        let Ok(device) = std::fs::canonicalize(Path::new(SYS_NET).join(ifname).join("device"))
        else {
            return ids;
        };
        let parent = device.parent().map(Path::to_path_buf);
        ids.dirs = std::iter::once(device).chain(parent).collect();
        let base = |d: &Path| {
            d.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        ids.virtio = ids
            .dirs
            .first()
            .map(|d| base(d))
            .filter(|n| n.starts_with("virtio"));
        ids.pci = ids.dirs.iter().map(|d| base(d)).find(|n| is_pci_address(n));
        ids.msi = ids
            .dirs
            .iter()
            .find_map(|d| std::fs::read_dir(d.join("msi_irqs")).ok())
            .map(|rd| {
                let mut v: Vec<u32> = rd
                    .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                    .collect();
                v.sort_unstable();
                v
            })
            .unwrap_or_default();
        ids
    }

    /// As [`NicIds`] for [`nic_lines`].
    pub(crate) fn as_ids<'a>(&'a self, ifname: &'a str) -> NicIds<'a> {
        NicIds {
            ifname,
            pci: self.pci.as_deref(),
            virtio: self.virtio.as_deref(),
            msi: &self.msi,
        }
    }
}

/// `0000:81:00.0`: domain, bus, device and function.
fn is_pci_address(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 12
        && b[4] == b':'
        && b[7] == b':'
        && b[10] == b'.'
        && b.iter()
            .enumerate()
            .all(|(i, c)| matches!(i, 4 | 7 | 10) || c.is_ascii_hexdigit())
}

/// The NIC's interrupt lines from `/proc/interrupts`, with their affinity.
fn nic_irqs(dev: &DeviceIds, ifname: &str) -> Vec<NicIrq> {
    let Ok(text) = std::fs::read_to_string("/proc/interrupts") else {
        return Vec::new();
    };
    let lines = parse_interrupts(&text);
    nic_lines(&lines, &dev.as_ids(ifname))
        .into_iter()
        .map(|l| NicIrq {
            irq: l.irq,
            name: l.name().to_string(),
            affinity: read_trim(&PathBuf::from(format!(
                "/proc/irq/{}/smp_affinity_list",
                l.irq
            )))
            .map(|s| parse_cpulist(&s))
            .unwrap_or_default(),
        })
        .collect()
}

/// How many entries of `dir` start with `prefix`.
fn count_prefixed(dir: &Path, prefix: &str) -> Option<u32> {
    let n = std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .count();
    u32::try_from(n).ok()
}

/// Offloads from the feature bits (`ethtool -k`), else from the legacy
/// requests.
fn offloads(e: &Ethtool) -> Offloads {
    let features = e.set_len(SS_FEATURES).ok().and_then(|n| {
        let names = e.strings(SS_FEATURES, n).ok()?;
        let bits = e.features(n).ok()?;
        Some(
            names
                .into_iter()
                .zip(bits.into_iter().map(|b| b.active))
                .collect::<BTreeMap<String, bool>>(),
        )
    });
    match features {
        Some(f) => offloads_from_features(&f),
        None => {
            let [tso, gso, gro, rx, tx, flags] = e.legacy_offloads();
            Offloads {
                tso: tso.map(|v| v != 0),
                gso: gso.map(|v| v != 0),
                gro: gro.map(|v| v != 0),
                lro: flags.map(|v| v & FLAG_LRO != 0),
                rx_checksum: rx.map(|v| v != 0),
                tx_checksum: tx.map(|v| v != 0),
            }
        }
    }
}

/// Offloads from feature names and whether each is active.
pub fn offloads_from_features(f: &BTreeMap<String, bool>) -> Offloads {
    let one = |n: &str| f.get(n).copied();
    let tx_sum = [
        "tx-checksum-ipv4",
        "tx-checksum-ip-generic",
        "tx-checksum-ipv6",
    ]
    .iter()
    .filter_map(|n| one(n))
    .reduce(|a, b| a || b);
    Offloads {
        tso: one("tx-tcp-segmentation"),
        gso: one("tx-generic-segmentation"),
        gro: one("rx-gro"),
        lro: one("rx-lro"),
        rx_checksum: one("rx-checksum"),
        tx_checksum: tx_sum,
    }
}

/// Each online core's NUMA node, from `/sys/devices/system/node/nodeN/cpulist`.
fn numa_of_cores() -> BTreeMap<u32, u32> {
    let mut map = BTreeMap::new();
    let Ok(rd) = std::fs::read_dir("/sys/devices/system/node") else {
        return map;
    };
    for e in rd.filter_map(Result::ok) {
        let name = e.file_name();
        let Some(node) = name
            .to_str()
            .and_then(|n| n.strip_prefix("node"))
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if let Some(list) = read_trim(&e.path().join("cpulist")) {
            for core in parse_cpulist(&list) {
                map.insert(core, node);
            }
        }
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_addresses() {
        assert!(valid_ifname("eth0"));
        assert!(valid_ifname("enp193s0f0np0"));
        assert!(!valid_ifname(""));
        assert!(!valid_ifname("../etc"));
        assert!(!valid_ifname(".."));
        assert!(!valid_ifname("a b"));
        assert!(!valid_ifname("sixteen-chars-xx"));
        assert!(is_pci_address("0000:81:00.0"));
        assert!(is_pci_address("0000:00:1f.6"));
        assert!(!is_pci_address("virtio2"));
        assert!(!is_pci_address("0000:81:00:0"));
    }

    #[test]
    fn offloads_from_feature_names() {
        let f: BTreeMap<String, bool> = [
            ("tx-tcp-segmentation", true),
            ("tx-generic-segmentation", true),
            ("rx-gro", false),
            ("rx-checksum", true),
            ("tx-checksum-ipv4", false),
            ("tx-checksum-ip-generic", true),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let o = offloads_from_features(&f);
        assert_eq!(o.tso, Some(true));
        assert_eq!(o.gro, Some(false));
        assert_eq!(o.lro, None);
        assert_eq!(o.tx_checksum, Some(true));
        assert_eq!(
            offloads_from_features(&BTreeMap::new()),
            Offloads::default()
        );
    }
}
