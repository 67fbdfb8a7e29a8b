//! Facts about a host that decide its results: kernel, CPU, network sysctls and the
//! interface the test ran over. Both ends send theirs; every result carries both.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The interface a test's traffic used on this host.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct InterfaceFacts {
    /// Interface name (`lo`, `eth0`, ...).
    pub name: String,
    /// Its MTU in bytes.
    pub mtu: u32,
    /// The NIC's facts (driver, speed, offloads, rings, interrupts), where read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nic: Option<crate::nic::NicFacts>,
}

/// Facts about one end.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct HostFacts {
    /// Host name.
    pub hostname: String,
    /// Kernel release (`uname -r`).
    pub kernel: String,
    /// CPU model name from `/proc/cpuinfo`.
    pub cpu_model: String,
    /// Online cores.
    pub cores: u32,
    /// Network sysctls that bound results (`net.core.rmem_max`, `net.ipv4.tcp_rmem`,
    /// congestion control, busy polling), by name.
    pub sysctls: BTreeMap<String, String>,
    /// The interface the test used, when known.
    pub interface: Option<InterfaceFacts>,
    /// netsonde version on this host.
    pub tool_version: String,
    /// The kernel's boot id (`/proc/sys/kernel/random/boot_id`): one per boot of
    /// one kernel, shared by its network namespaces. Two ends with the same one
    /// read the same clock.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub boot_id: String,
}
