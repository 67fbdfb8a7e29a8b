//! Host facts: who this end is and what bounds its results (kernel, CPU, network
//! sysctls, the interface the test used). [`host_facts`] never fails: a fact that
//! cannot be read is left empty, zero or `None`, because a missing fact should not
//! stop a measurement. The parsing is in pure functions beside it, tested on fixtures.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::PathBuf;

use netsonde_model::host::{HostFacts, InterfaceFacts};

use crate::sampler::read_proc_stat;

/// The sysctls recorded with every result, by their dotted names: socket buffer
/// limits, congestion control, queueing discipline, busy polling and the TCP options
/// that change throughput.
pub const SYSCTLS: &[&str] = &[
    "net.core.rmem_max",
    "net.core.wmem_max",
    "net.core.rmem_default",
    "net.core.wmem_default",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
    "net.ipv4.tcp_congestion_control",
    "net.ipv4.tcp_available_congestion_control",
    "net.core.default_qdisc",
    "net.core.busy_poll",
    "net.core.busy_read",
    "net.ipv4.tcp_mtu_probing",
    "net.ipv4.tcp_timestamps",
    "net.ipv4.tcp_sack",
    "net.ipv4.tcp_window_scaling",
    "net.core.netdev_max_backlog",
    "net.ipv4.tcp_notsent_lowat",
];

/// Gathers the facts about this host. `local_ip` is the local address of the test
/// connection; the interface holding it is reported with its MTU. `None` or an
/// unspecified address (`0.0.0.0`, `::`) gives no interface.
pub fn host_facts(local_ip: Option<IpAddr>) -> HostFacts {
    HostFacts {
        hostname: rustix::system::uname()
            .nodename()
            .to_string_lossy()
            .into_owned(),
        kernel: rustix::system::uname()
            .release()
            .to_string_lossy()
            .into_owned(),
        cpu_model: std::fs::read_to_string("/proc/cpuinfo")
            .map(|text| parse_cpu_model(&text))
            .unwrap_or_default(),
        cores: online_cores(),
        sysctls: read_sysctls(),
        interface: local_ip.and_then(interface_facts),
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        boot_id: std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
            .map(|s| s.trim().to_string())
            .unwrap_or_default(),
    }
}

/// The CPU model from the text of `/proc/cpuinfo`: the first `model name` (x86,
/// recent arm64), else `Hardware` (older ARM), else `cpu model` (MIPS), else empty.
/// Runs of whitespace are collapsed to one space.
pub fn parse_cpu_model(cpuinfo: &str) -> String {
    let value_of = |wanted: &str| {
        cpuinfo.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            (key.trim() == wanted).then(|| normalise_sysctl(value))
        })
    };
    ["model name", "Hardware", "cpu model"]
        .into_iter()
        .find_map(value_of)
        .unwrap_or_default()
}

/// A sysctl value as recorded: trimmed, whitespace runs (the tabs in `tcp_rmem`)
/// collapsed to a single space.
pub fn normalise_sysctl(raw: &str) -> String {
    raw.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The file under `/proc/sys` that holds a dotted sysctl name.
pub fn sysctl_path(key: &str) -> PathBuf {
    PathBuf::from("/proc/sys").join(key.replace('.', "/"))
}

/// Reads [`SYSCTLS`]; those this kernel does not have (or hides) are omitted.
fn read_sysctls() -> BTreeMap<String, String> {
    SYSCTLS
        .iter()
        .filter_map(|&key| {
            let raw = std::fs::read_to_string(sysctl_path(key)).ok()?;
            Some((key.to_string(), normalise_sysctl(&raw)))
        })
        .collect()
}

/// Online cores: `cpuN` lines in `/proc/stat`, else what the scheduler allows us,
/// else 0.
fn online_cores() -> u32 {
    match read_proc_stat() {
        Ok(stat) if !stat.cores.is_empty() => u32::try_from(stat.cores.len()).unwrap_or(0),
        _ => std::thread::available_parallelism()
            .map(|n| u32::try_from(n.get()).unwrap_or(0))
            .unwrap_or(0),
    }
}

/// The cores this process may run on (its CPU mask, `sched_getaffinity`),
/// by their numbers: those `--affinity` names. Empty where the mask cannot be
/// read.
pub fn allowed_cores() -> Vec<u32> {
    match rustix::thread::sched_getaffinity(None) {
        Ok(set) => (0..rustix::thread::CpuSet::MAX_CPU)
            .filter(|&c| set.is_set(c))
            .map(|c| c as u32)
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// Cores as the kernel lists a mask: runs of consecutive numbers as `a-b`,
/// the rest alone, comma-separated (`0-1`, `1`, `0,2-3`).
pub fn core_list(cores: &[u32]) -> String {
    let mut sorted = cores.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for c in sorted {
        match runs.last_mut() {
            Some((_, end)) if *end + 1 == c => *end = c,
            _ => runs.push((c, c)),
        }
    }
    runs.iter()
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// The first of `asked` that this process may not run on, with the cores it
/// may: a core named by number must be in the mask, not merely below the
/// count of cores it holds (a mask of core 1 alone holds one core, core 1).
pub fn core_not_allowed(asked: &[usize]) -> Option<(usize, String)> {
    let allowed = allowed_cores();
    if allowed.is_empty() {
        return None;
    }
    asked
        .iter()
        .find(|&&c| u32::try_from(c).map_or(true, |c| !allowed.contains(&c)))
        .map(|&c| (c, core_list(&allowed)))
}

/// One address configured on an interface.
#[derive(Debug, Clone, PartialEq, Eq)]
struct IfAddr {
    name: String,
    addr: IpAddr,
    netmask: Option<IpAddr>,
}

/// The interface holding `local_ip`, with its MTU (0 when `/sys` cannot tell)
/// and its NIC's facts.
fn interface_facts(local_ip: IpAddr) -> Option<InterfaceFacts> {
    let name = interface_of(local_ip)?;
    let mtu = std::fs::read_to_string(format!("/sys/class/net/{name}/mtu"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    let nic = Some(crate::nic::read_facts(&name));
    Some(InterfaceFacts { name, mtu, nic })
}

/// The name of the interface holding `local_ip` (as [`host_facts`] finds it),
/// or `None` for an unspecified or unknown address.
pub fn interface_of(local_ip: IpAddr) -> Option<String> {
    let addrs: Vec<IfAddr> = if_addrs::get_if_addrs()
        .ok()?
        .into_iter()
        .map(|ifa| IfAddr {
            addr: ifa.ip(),
            netmask: Some(match &ifa.addr {
                if_addrs::IfAddr::V4(a) => IpAddr::V4(a.netmask),
                if_addrs::IfAddr::V6(a) => IpAddr::V6(a.netmask),
            }),
            name: ifa.name,
        })
        .collect();
    match_interface(&addrs, local_ip)
}

/// The interface that owns `ip`: the one with exactly that address, else the one
/// whose subnet contains it (`127.0.0.2` is on `lo` though only `127.0.0.1/8` is
/// listed). IPv4-mapped IPv6 addresses (from dual-stack sockets) match as IPv4.
/// Unspecified addresses match nothing.
fn match_interface(addrs: &[IfAddr], ip: IpAddr) -> Option<String> {
    let ip = ip.to_canonical();
    if ip.is_unspecified() {
        return None;
    }
    addrs
        .iter()
        .find(|a| a.addr == ip)
        .or_else(|| {
            addrs.iter().find(|a| match a.netmask {
                Some(mask) => in_subnet(ip, a.addr, mask),
                None => false,
            })
        })
        .map(|a| a.name.clone())
}

/// Whether `ip` is in `net`/`mask`. A zero mask would claim every address, so it
/// claims none.
fn in_subnet(ip: IpAddr, net: IpAddr, mask: IpAddr) -> bool {
    match (ip, net, mask) {
        (IpAddr::V4(ip), IpAddr::V4(net), IpAddr::V4(mask)) => {
            let m = u32::from(mask);
            m != 0 && u32::from(ip) & m == u32::from(net) & m
        }
        (IpAddr::V6(ip), IpAddr::V6(net), IpAddr::V6(mask)) => {
            let m = u128::from(mask);
            m != 0 && u128::from(ip) & m == u128::from(net) & m
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::net::{Ipv4Addr, Ipv6Addr};

    use super::*;

    #[test]
    fn cores_are_listed_as_the_kernel_lists_a_mask() {
        assert_eq!(core_list(&[0, 1]), "0-1");
        assert_eq!(core_list(&[1]), "1");
        assert_eq!(core_list(&[3, 0, 2, 2]), "0,2-3");
        assert_eq!(core_list(&[]), "");
    }

    /// This process's own mask: each of its cores is allowed, a core past
    /// them is refused with the mask named.
    #[test]
    fn a_core_outside_the_mask_is_refused_and_one_inside_is_not() {
        let mine = allowed_cores();
        let Some(&last) = mine.last() else {
            eprintln!("skipped: the CPU mask could not be read");
            return;
        };
        let asked: Vec<usize> = mine.iter().map(|&c| c as usize).collect();
        assert_eq!(core_not_allowed(&asked), None);
        let past = last as usize + 1;
        let (core, list) = core_not_allowed(&[past]).unwrap();
        assert_eq!((core, list), (past, core_list(&mine)));
    }

    const CPUINFO_X86: &str = include_str!("../tests/fixtures/cpuinfo_x86.txt");
    const CPUINFO_ARM: &str = include_str!("../tests/fixtures/cpuinfo_arm.txt");

    #[test]
    fn cpu_model_from_model_name() {
        assert_eq!(
            parse_cpu_model(CPUINFO_X86),
            "Intel(R) Xeon(R) Gold 6140 CPU @ 2.30GHz"
        );
    }

    #[test]
    fn cpu_model_falls_back_to_hardware_then_cpu_model() {
        assert_eq!(parse_cpu_model(CPUINFO_ARM), "BCM2835");
        let mips = "system type\t\t: MediaTek MT7621\ncpu model\t\t: MIPS 1004Kc V2.15\n";
        assert_eq!(parse_cpu_model(mips), "MIPS 1004Kc V2.15");
        assert_eq!(parse_cpu_model("processor\t: 0\n"), "");
        assert_eq!(parse_cpu_model(""), "");
    }

    #[test]
    fn sysctl_values_are_normalised() {
        assert_eq!(
            normalise_sysctl("4096\t131072\t6291456\n"),
            "4096 131072 6291456"
        );
        assert_eq!(normalise_sysctl("reno cubic  bbr\n"), "reno cubic bbr");
        assert_eq!(normalise_sysctl("  212992 \n"), "212992");
        assert_eq!(normalise_sysctl("\n"), "");
    }

    #[test]
    fn sysctl_names_map_to_proc_sys() {
        assert_eq!(
            sysctl_path("net.ipv4.tcp_rmem"),
            PathBuf::from("/proc/sys/net/ipv4/tcp_rmem")
        );
    }

    fn addrs() -> Vec<IfAddr> {
        let v4 = |name: &str, a: [u8; 4], m: [u8; 4]| IfAddr {
            name: name.into(),
            addr: Ipv4Addr::from(a).into(),
            netmask: Some(Ipv4Addr::from(m).into()),
        };
        vec![
            v4("lo", [127, 0, 0, 1], [255, 0, 0, 0]),
            v4("eth0", [192, 168, 1, 20], [255, 255, 255, 0]),
            v4("eth1", [10, 0, 0, 2], [255, 255, 255, 0]),
            IfAddr {
                name: "lo".into(),
                addr: Ipv6Addr::LOCALHOST.into(),
                netmask: None,
            },
        ]
    }

    #[test]
    fn interface_is_matched_by_address_then_subnet() {
        let a = addrs();
        let m = |ip: &str| match_interface(&a, ip.parse().unwrap());
        assert_eq!(m("127.0.0.1").as_deref(), Some("lo"));
        assert_eq!(m("192.168.1.20").as_deref(), Some("eth0"));
        assert_eq!(m("10.0.0.2").as_deref(), Some("eth1"));
        assert_eq!(m("::1").as_deref(), Some("lo"));
        assert_eq!(m("::ffff:192.168.1.20").as_deref(), Some("eth0"));
        assert_eq!(m("127.0.0.2").as_deref(), Some("lo"));
        assert_eq!(m("172.16.0.1"), None);
        assert_eq!(m("0.0.0.0"), None);
        assert_eq!(m("::"), None);
    }

    #[test]
    fn zero_netmask_claims_nothing() {
        let any = IpAddr::from([0u8, 0, 0, 0]);
        assert!(!in_subnet([8, 8, 8, 8].into(), [10, 0, 0, 1].into(), any));
    }

    #[test]
    fn live_host_facts_on_loopback() {
        let f = host_facts(Some(IpAddr::V4(Ipv4Addr::LOCALHOST)));
        let iface = f.interface.expect("loopback interface");
        assert_eq!(iface.name, "lo");
        assert!(iface.mtu > 0);
        let nic = iface.nic.expect("loopback's NIC facts");
        assert_eq!(nic.interface, "lo");
        assert!(!f.kernel.is_empty());
        assert!(!f.hostname.is_empty());
        assert!(f.cores >= 1);
        assert_eq!(f.tool_version, env!("CARGO_PKG_VERSION"));
        let rmem_max = &f.sysctls["net.core.rmem_max"];
        assert!(rmem_max.parse::<u64>().is_ok(), "{rmem_max}");
        assert!(f.sysctls.keys().all(|k| SYSCTLS.contains(&k.as_str())));
        assert!(f.sysctls.values().all(|v| !v.contains('\t')));
    }

    #[test]
    fn no_interface_for_unknown_or_unspecified() {
        assert_eq!(host_facts(None).interface, None);
        assert_eq!(
            host_facts(Some(IpAddr::V4(Ipv4Addr::UNSPECIFIED))).interface,
            None
        );
    }
}
