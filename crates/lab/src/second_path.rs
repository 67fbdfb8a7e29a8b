//! A lab's second path (`--second-path`), for MPTCP to add to the first: a veth
//! pair `sonde1` with the client at 10.77.1.2 and the server at 10.77.1.1 (a
//! /30), rate-limited by the link's shaper like the first path's veth, with the
//! first path's MTU and no impairments. The kernel's MPTCP path manager is told
//! of it in both namespaces: the server signals its second address, the client
//! accepts one more subflow to it (joins go to port [`JOIN_PORT`]). Plain TCP and UDP keep to the first path (the
//! server's address is on it); an MPTCP connection to 10.77.0.1 joins a subflow
//! over the second.

use std::net::Ipv4Addr;

use netsonde_model::link::{DirLink, LinkSpec, SecondPath, Shaper};

use crate::cmd::{ip, ip_in, tc_in};
use crate::error::Result;
use crate::qdisc;

/// The second path's interface name inside each namespace.
pub const DEV: &str = "sonde1";
/// The server's address on the second path.
pub const SERVER_ADDR: Ipv4Addr = Ipv4Addr::new(10, 77, 1, 1);
/// The client's address on the second path.
pub const CLIENT_ADDR: Ipv4Addr = Ipv4Addr::new(10, 77, 1, 2);
/// The port the server's second address takes joins on. The kernel listens on
/// it for MPTCP joins alone, so a join reaches the connection whatever address
/// and port its server listens on (netsonde's data port is ephemeral).
pub const JOIN_PORT: u16 = 5390;
/// Subflows per MPTCP connection the path manager allows at each end (the
/// kernel's default is 2 for subflows and 0 for addresses accepted).
const SUBFLOWS: &str = "2";

/// Whether this kernel has MPTCP turned on (`net.mptcp.enabled`, which a new
/// namespace inherits as the kernel's default).
pub fn mptcp_enabled() -> bool {
    std::fs::read_to_string("/proc/sys/net/mptcp/enabled").is_ok_and(|v| v.trim() == "1")
}

/// Why a lab cannot have a second path here.
pub const NO_MPTCP: &str =
    "--second-path is for MPTCP, which this kernel lacks or has off (net.mptcp.enabled)";

/// Makes the second path between namespaces `cli` and `srv` and tells MPTCP of
/// it ([`mptcp_enabled`] is the caller's check).
pub(crate) fn make(cli: &str, srv: &str) -> Result<()> {
    ip(&[
        "link", "add", DEV, "netns", cli, "type", "veth", "peer", "name", DEV, "netns", srv,
    ])?;
    for (ns, addr) in [(cli, CLIENT_ADDR), (srv, SERVER_ADDR)] {
        let _ = ip_in(ns, &["link", "set", DEV, "addrgenmode", "none"]);
        ip_in(ns, &["addr", "add", &format!("{addr}/30"), "dev", DEV])?;
        ip_in(
            ns,
            &[
                "mptcp",
                "limits",
                "set",
                "subflow",
                SUBFLOWS,
                "add_addr_accepted",
                SUBFLOWS,
            ],
        )?;
    }
    ip_in(
        srv,
        &[
            "mptcp",
            "endpoint",
            "add",
            &SERVER_ADDR.to_string(),
            "port",
            &JOIN_PORT.to_string(),
            "dev",
            DEV,
            "signal",
        ],
    )?;
    Ok(())
}

/// Each direction of the second path as a [`DirLink`]: its rate, the first
/// path's MTU in that direction, nothing else.
pub fn directions(p: &SecondPath, spec: &LinkSpec) -> [DirLink; 2] {
    [(p.up, spec.up.mtu), (p.down, spec.down.mtu)].map(|(rate, mtu)| DirLink {
        mtu,
        rate,
        ..DirLink::default()
    })
}

/// Sets the second path's MTU and shaper when `change` (it was made, or its
/// rate or MTU changed), and returns its part of the link's detail.
pub(crate) fn shape(
    cli: &str,
    srv: &str,
    p: &SecondPath,
    spec: &LinkSpec,
    change: bool,
) -> Result<String> {
    let mut parts = Vec::new();
    for (ns, d) in [cli, srv].into_iter().zip(directions(p, spec)) {
        let cmds = qdisc::shaper(DEV, &d, spec.shaper);
        if change {
            ip_in(ns, &["link", "set", DEV, "mtu", &d.mtu.to_string(), "up"])?;
            let _ = tc_in(ns, &qdisc::clear(DEV));
            for c in &cmds {
                tc_in(ns, c)?;
            }
        }
        parts.push(match cmds.first() {
            None => "no qdisc".to_string(),
            Some(c) if spec.shaper == Shaper::Htb => {
                format!("{} ({})", c[4..].join(" "), qdisc::HTB_CAVEAT)
            }
            Some(c) => c[4..].join(" "),
        });
    }
    Ok(format!(
        "second path veth {DEV} ({CLIENT_ADDR} to {SERVER_ADDR}, signalled to MPTCP \
         with join port {JOIN_PORT}); \
         client->server: {}; server->client: {}",
        parts[0], parts[1]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use netsonde_model::link::LinkSettings;

    #[test]
    fn the_second_path_takes_its_rate_and_the_first_paths_mtu() {
        let spec = LinkSettings {
            mtu: Some("9000/1500".into()),
            rate: Some("100M".into()),
            second_path: Some("50M/20M".into()),
            ..LinkSettings::default()
        }
        .spec()
        .unwrap();
        let p = spec.second.unwrap();
        let [up, down] = directions(&p, &spec);
        assert_eq!((up.mtu, down.mtu), (9000, 1500));
        assert_eq!(up.rate.unwrap().bps(), 50e6);
        assert_eq!(down.rate.unwrap().bps(), 20e6);
        assert!(up.delay.0 == 0 && !up.impaired());
        // Shaped like the first path: a tbf for each direction.
        assert!(qdisc::shaper(DEV, &up, spec.shaper)[0]
            .join(" ")
            .contains("tbf"));
    }
}
