//! `netsonde mesh`'s plan: the agents of the command line, a file, a DNS
//! name and a Kubernetes Service (`netsonde_run::kube`), and the sweep's flags
//! once per pair of the pattern. The runner that sends each point to its
//! agents is `netsonde_run::agents`.

use std::net::ToSocketAddrs;

use netsonde_sweep::mesh::{Agent, Mesh, Pattern, MAX_AGENTS};

use netsonde_args::{MeshArgs, UsageError};

/// Estimated measuring time above which a mesh needs --yes.
const LONG_MESH_SECS: f64 = 3600.0;

/// The agents of the command line and the file, in that order.
fn agents(a: &MeshArgs, port: u16) -> anyhow::Result<Vec<Agent>> {
    let mut list = a.agents.clone();
    if let Some(path) = &a.agents_file {
        let text = crate::files::read_small(path, "agents file", crate::files::TEXT_FILE_MAX)?;
        list.extend(
            text.lines()
                .map(|l| l.split('#').next().unwrap_or("").trim())
                .filter(|l| !l.is_empty())
                .map(str::to_string),
        );
    }
    if let Some(name) = &a.agents_dns {
        list.extend(discover(name, port)?);
    }
    if let Some(svc) = &a.agents_k8s {
        use netsonde_run::kube::{Access, KubeError, ServiceRef, SERVICE_ACCOUNT};
        let svc: ServiceRef = svc
            .parse()
            .map_err(|e: KubeError| UsageError(e.to_string()))?;
        let access = Access::in_cluster(std::path::Path::new(SERVICE_ACCOUNT))?;
        list.extend(access.agents(&svc, port)?);
    }
    if list.len() > MAX_AGENTS {
        return Err(UsageError(format!("{} agents: at most {MAX_AGENTS}", list.len())).into());
    }
    list.iter()
        .map(|s| Agent::parse(s, port).map_err(|e| UsageError(e).into()))
        .collect()
}

/// Every address `NAME[:PORT]` resolves to, as agents named by their address
/// (`10.1.2.3=10.1.2.3:5300`): a Kubernetes headless Service's name resolves to
/// every ready pod behind it, so a controller Job finds the agents' DaemonSet.
/// Sorted, so one name gives one mesh.
fn discover(name: &str, port: u16) -> anyhow::Result<Vec<String>> {
    let (host, port) = match name.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') => (
            h,
            p.parse::<u16>()
                .ok()
                .filter(|&p| p > 0)
                .ok_or_else(|| UsageError(format!("--agents-dns '{name}': bad port")))?,
        ),
        _ => (name, port),
    };
    let addrs: std::collections::BTreeSet<std::net::IpAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|e| UsageError(format!("--agents-dns '{host}': {e}")))?
        .map(|a| a.ip())
        .collect();
    if addrs.is_empty() {
        return Err(UsageError(format!("--agents-dns '{host}' resolves to no address")).into());
    }
    Ok(addrs
        .into_iter()
        .map(|ip| match ip {
            std::net::IpAddr::V4(v4) => format!("{v4}={v4}:{port}"),
            std::net::IpAddr::V6(v6) => format!("{v6}=[{v6}]:{port}"),
        })
        .collect())
}

/// The plan of a new mesh: the sweep's flags, once per pair of the pattern.
pub(crate) fn plan(a: &MeshArgs, port: u16) -> anyhow::Result<netsonde_sweep::Plan> {
    if a.sweep.host.is_some() {
        return Err(UsageError(
            "a mesh runs between agents: name them with --agent NAME=HOST[:PORT], not a HOST"
                .into(),
        )
        .into());
    }
    let pattern = Pattern::parse(&a.pattern).map_err(UsageError)?;
    let mesh = Mesh::new(agents(a, port)?, pattern).map_err(UsageError)?;
    let exp = a.sweep.experiment()?;
    let mut plan = exp.plan().map_err(|e| UsageError(e.to_string()))?;
    plan.mesh = Some(mesh);
    let (points, _) = plan.points();
    let secs = plan.measured_secs(points.len());
    if secs > LONG_MESH_SECS && !a.yes {
        return Err(UsageError(format!(
            "this mesh is {} point(s) (pairs x tests) x {} repetition(s): about {:.1} h of \
             measuring, one pair at a time; pass --yes to run it, or fewer agents, tests or \
             repetitions",
            points.len(),
            plan.repeat,
            secs / 3600.0
        ))
        .into());
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_every_address_it_resolves_to() {
        assert_eq!(
            discover("127.0.0.1:5301", 5300).unwrap(),
            vec!["127.0.0.1=127.0.0.1:5301".to_string()]
        );
        let local = discover("localhost", 5300).unwrap();
        assert!(
            local.contains(&"127.0.0.1=127.0.0.1:5300".to_string()),
            "{local:?}"
        );
        for a in &local {
            assert!(Agent::parse(a, 1).is_ok(), "{a}");
        }
        assert!(discover("localhost:0", 5300).is_err());
        assert!(discover("no-such-host.invalid", 5300).is_err());
    }
}
