//! What this host allows: privileges, iproute2, TUN, netem. Probes ask the system
//! rather than guess from version numbers; netem is probed inside a namespace the
//! lab made, on its loopback device, so the probe touches nothing else.

use crate::cmd;
use crate::error::{LabError, Result};

/// CAP_NET_ADMIN.
const CAP_NET_ADMIN: u32 = 12;
/// CAP_SYS_ADMIN (network namespaces are bind mounts under /run/netns).
const CAP_SYS_ADMIN: u32 = 21;

/// The effective capability set of this process (`CapEff` in
/// `/proc/self/status`), if readable.
fn effective_caps() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("CapEff:"))?;
    u64::from_str_radix(line.split_whitespace().nth(1)?, 16).ok()
}

/// Whether this process may make namespaces, interfaces and qdiscs.
pub fn privileged() -> bool {
    let need = (1u64 << CAP_NET_ADMIN) | (1u64 << CAP_SYS_ADMIN);
    effective_caps().is_some_and(|c| c & need == need)
}

/// [`LabError::NotRoot`] unless [`privileged`].
pub fn require_root() -> Result<()> {
    if privileged() {
        Ok(())
    } else {
        Err(LabError::NotRoot)
    }
}

/// `ip` and `tc` must run.
pub fn require_tools() -> Result<()> {
    cmd::run("ip", &["-V"])?;
    cmd::run("tc", &["-V"])?;
    Ok(())
}

/// The TUN driver must be there.
pub fn require_tun() -> Result<()> {
    if std::path::Path::new("/dev/net/tun").exists() {
        Ok(())
    } else {
        Err(LabError::Unsupported(
            "the userspace emulator needs /dev/net/tun (CONFIG_TUN; `modprobe tun`)".into(),
        ))
    }
}

/// Whether netem can be attached: tries it on the loopback device of namespace
/// `ns` (one the lab made) and removes it again.
pub fn netem(ns: &str) -> bool {
    let add = ["qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms"].map(String::from);
    if cmd::tc_in(ns, &add).is_err() {
        return false;
    }
    let _ = cmd::tc_in(ns, &["qdisc", "del", "dev", "lo", "root"].map(String::from));
    true
}
