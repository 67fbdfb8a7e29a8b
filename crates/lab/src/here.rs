//! The lab link a test from this process crosses, found wherever the test was
//! started: `lab run` tells its invocation ([`control::ENV_LINK`]); a process
//! started by hand inside a `lab up` lab (`ip netns exec sonde-NAME-cli
//! netsonde client 10.77.0.1`, as docs/LAB.md shows) finds it in that lab's
//! state file, by the network namespace it runs in. Either way the diagnosis
//! knows the link's rate, delay and second path, as it does under `lab run`.
//!
//! Only a test to the lab's own server address (first or second path) from
//! its client namespace crosses the link; any other address, namespace or lab
//! kind (a mesh's hosts) has none.

use std::net::IpAddr;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use netsonde_model::link::LinkRecord;

use crate::state::StateDir;
use crate::{control, second_path, topology};

/// Where `ip netns add` mounts named namespaces.
pub const NETNS_DIR: &str = "/run/netns";

/// The link a test from this process to `server` crosses: the lab's, from
/// the environment `lab run` set, else from the `lab up` lab whose client
/// namespace this process is in. `None` outside a lab.
pub fn link_to(server: IpAddr) -> Option<LinkRecord> {
    control::link_from_env().or_else(|| {
        up_link(
            &StateDir::default(),
            Path::new(NETNS_DIR),
            Path::new("/proc/self/ns/net"),
            server,
        )
    })
}

/// [`link_to`] the server of a report (`HOST:PORT`, or `embedded`: the lab's
/// environment alone).
pub fn link_of(server_address: &str) -> Option<LinkRecord> {
    match server_address.parse::<std::net::SocketAddr>() {
        Ok(a) => link_to(a.ip()),
        Err(_) => control::link_from_env(),
    }
}

/// The namespace a path names, as the kernel knows it: an nsfs file's device
/// and inode (a bind mount under [`NETNS_DIR`] and `/proc/PID/ns/net` of a
/// process inside agree).
fn ns_id(path: &Path) -> Option<(u64, u64)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.dev(), m.ino()))
}

/// The link of the lab in `dir` whose client namespace (named under
/// `netns_dir`) is `me`, when `server` is that lab's server.
fn up_link(dir: &StateDir, netns_dir: &Path, me: &Path, server: IpAddr) -> Option<LinkRecord> {
    let servers = [topology::SERVER_ADDR, second_path::SERVER_ADDR].map(IpAddr::V4);
    if !servers.contains(&server) {
        return None;
    }
    let me = ns_id(me)?;
    dir.load_all()
        .into_iter()
        .filter_map(|(_, s)| s.ok())
        .find(|s| {
            let [cli, _] = topology::namespaces_of(&s.name);
            s.namespaces.contains(&cli) && ns_id(&netns_dir.join(&cli)) == Some(me)
        })
        .and_then(|s| s.link)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{Kind, LabState, ProcId, STATE_VERSION};
    use netsonde_model::link::{LinkSpec, Mechanism};

    /// A lab `name` in a fresh state directory, its client namespace under a
    /// fresh netns directory standing for `ns` (a link to a namespace file).
    fn lab(tag: &str, ns: &str) -> (StateDir, std::path::PathBuf) {
        let root = std::env::temp_dir().join(format!("sonde-here-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let (dir, netns) = (root.join("state"), root.join("netns"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(&netns).unwrap();
        let mut spec = LinkSpec::default();
        spec.up.rate = Some("100M".parse().unwrap());
        let state = LabState {
            version: STATE_VERSION,
            name: "demo".into(),
            kind: Kind::Up,
            owner: ProcId::me(),
            namespaces: topology::namespaces_of("demo").to_vec(),
            processes: Vec::new(),
            link: Some(LinkRecord {
                spec,
                mechanism: Mechanism::Veth,
                detail: "veth, tbf rate 100 Mbit/s".into(),
            }),
            created_at: 0,
        };
        std::fs::write(
            dir.join("demo.json"),
            serde_json::to_string(&state).unwrap(),
        )
        .unwrap();
        std::os::unix::fs::symlink(ns, netns.join("sonde-demo-cli")).unwrap();
        (StateDir::new(dir), netns)
    }

    #[test]
    fn a_process_in_the_client_namespace_finds_its_labs_link() {
        let me = Path::new("/proc/self/ns/net");
        let (dir, netns) = lab("in", "/proc/self/ns/net");
        let server = IpAddr::V4(topology::SERVER_ADDR);
        let link = up_link(&dir, &netns, me, server).expect("the lab's link");
        assert_eq!(link.rate_bps(), Some(100e6));
        // Over the second path too; never to another address.
        assert!(up_link(&dir, &netns, me, IpAddr::V4(second_path::SERVER_ADDR)).is_some());
        assert!(up_link(&dir, &netns, me, "127.0.0.1".parse().unwrap()).is_none());
        // A process in another namespace (here: the mount namespace's file,
        // another nsfs inode) crosses no lab link.
        let (dir, netns) = lab("out", "/proc/self/ns/mnt");
        assert!(up_link(&dir, &netns, me, server).is_none());
        for tag in ["in", "out"] {
            let root = format!("sonde-here-{tag}-{}", std::process::id());
            let _ = std::fs::remove_dir_all(std::env::temp_dir().join(root));
        }
    }
}
