//! A mesh's agents found through the Kubernetes API (`netsonde mesh
//! --agents-k8s`): the ready endpoints of a Service's EndpointSlices, each
//! named by the node it runs on, so a matrix reads `node-a → node-b` rather
//! than pod addresses. From inside the cluster only (the controller's Job): the
//! API's address from `KUBERNETES_SERVICE_HOST`/`_PORT`, the pod's service
//! account token and CA from `/var/run/secrets/kubernetes.io/serviceaccount`,
//! whose Role must allow `list` on `endpointslices` (deploy/kubernetes/rbac.yaml).

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use serde::Deserialize;

/// Where a pod's service account is mounted.
pub const SERVICE_ACCOUNT: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// How long the API may take to answer.
const TIMEOUT: Duration = Duration::from_secs(15);

/// The most of an error answer's body quoted in a message.
const QUOTED: usize = 200;

/// What went wrong finding the agents.
#[derive(Debug, thiserror::Error)]
pub enum KubeError {
    /// `--agents-k8s` names no Service.
    #[error("--agents-k8s '{0}': expected [NAMESPACE/]SERVICE[:PORT]")]
    BadService(String),
    /// Not in a pod: no API address or no service account.
    #[error(
        "not inside a Kubernetes pod ({0}): run the mesh as deploy/kubernetes's Job, \
         or name the agents with --agents-dns or --agent"
    )]
    NotInCluster(String),
    /// A service account file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The API could not be reached.
    #[error("the Kubernetes API at {base}: {reason}")]
    Unreachable {
        /// Its address.
        base: String,
        /// What failed.
        reason: String,
    },
    /// The API refused or failed the request.
    #[error("the Kubernetes API answered {status} to listing the EndpointSlices of {service}{hint}: {body}")]
    Status {
        /// The Service.
        service: String,
        /// The HTTP status.
        status: u16,
        /// What to do about it.
        hint: &'static str,
        /// The start of the answer.
        body: String,
    },
    /// The answer is not an EndpointSlice list.
    #[error("the Kubernetes API's EndpointSlices of {service}: {reason}")]
    Answer {
        /// The Service.
        service: String,
        /// What is wrong.
        reason: String,
    },
}

/// A Service to find the agents behind: `[NAMESPACE/]NAME[:PORT]`, the
/// namespace the pod's own when none is given, the port the endpoints' own
/// (the one named `control`, else the only TCP one) when none is given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceRef {
    /// Its namespace, when given.
    pub namespace: Option<String>,
    /// Its name.
    pub name: String,
    /// The agents' port, when given.
    pub port: Option<u16>,
}

impl FromStr for ServiceRef {
    type Err = KubeError;

    fn from_str(s: &str) -> Result<ServiceRef, KubeError> {
        let bad = || KubeError::BadService(s.to_string());
        let (rest, port) = match s.rsplit_once(':') {
            Some((r, p)) => (
                r,
                Some(p.parse::<u16>().ok().filter(|&p| p > 0).ok_or_else(bad)?),
            ),
            None => (s, None),
        };
        let (namespace, name) = match rest.split_once('/') {
            Some((ns, n)) => (Some(ns.to_string()), n),
            None => (None, rest),
        };
        // Kubernetes names: DNS labels (lower-case letters, digits, '-').
        let label = |n: &str| {
            !n.is_empty()
                && n.len() <= 63
                && n.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        };
        if !label(name) || !namespace.as_deref().is_none_or(label) {
            return Err(bad());
        }
        Ok(ServiceRef {
            namespace,
            name: name.to_string(),
            port,
        })
    }
}

/// The API, as a pod reaches it.
#[derive(Debug, Clone)]
pub struct Access {
    /// `https://HOST:PORT`.
    pub base: String,
    /// The service account's token.
    pub token: String,
    /// The API's CA (PEM).
    pub ca_pem: Vec<u8>,
    /// The pod's namespace.
    pub namespace: String,
}

impl Access {
    /// The API as this pod reaches it: its address from the environment, the
    /// service account from `dir` ([`SERVICE_ACCOUNT`]).
    pub fn in_cluster(dir: &Path) -> Result<Access, KubeError> {
        let env = |name: &str| {
            std::env::var(name)
                .ok()
                .filter(|v| !v.is_empty())
                .ok_or_else(|| KubeError::NotInCluster(format!("{name} is not set")))
        };
        let (host, port) = (
            env("KUBERNETES_SERVICE_HOST")?,
            env("KUBERNETES_SERVICE_PORT")?,
        );
        Access::at(&host, &port, dir)
    }

    /// The API at `host` and `port`, with the service account of `dir`.
    pub fn at(host: &str, port: &str, dir: &Path) -> Result<Access, KubeError> {
        if !dir.join("token").is_file() {
            return Err(KubeError::NotInCluster(format!(
                "no service account token in {}",
                dir.display()
            )));
        }
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read(&path).map_err(|source| KubeError::Read { path, source })
        };
        let text = |b: Vec<u8>| String::from_utf8_lossy(&b).trim().to_string();
        let host = if host.contains(':') {
            format!("[{host}]")
        } else {
            host.to_string()
        };
        Ok(Access {
            base: format!("https://{host}:{port}"),
            token: text(read("token")?),
            ca_pem: read("ca.crt")?,
            namespace: text(read("namespace")?),
        })
    }

    /// The agents behind `svc`, as `NAME=ADDRESS:PORT` (a mesh's `--agent`
    /// form), sorted by name; `port` when neither `svc` nor its endpoints say.
    pub fn agents(&self, svc: &ServiceRef, port: u16) -> Result<Vec<String>, KubeError> {
        let ns = svc.namespace.as_deref().unwrap_or(&self.namespace);
        let service = format!("{ns}/{}", svc.name);
        let url = format!(
            "{}/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3D{}",
            self.base, svc.name
        );
        let unreachable = |reason: String| KubeError::Unreachable {
            base: self.base.clone(),
            reason,
        };
        let ca = ureq::tls::Certificate::from_pem(&self.ca_pem)
            .map_err(|e| unreachable(format!("its CA (ca.crt): {e}")))?;
        let tls = ureq::tls::TlsConfig::builder()
            .root_certs(ureq::tls::RootCerts::new_with_certs(&[ca]))
            .build();
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .tls_config(tls)
            .timeout_global(Some(TIMEOUT))
            .http_status_as_error(false)
            .build()
            .into();
        let mut answer = agent
            .get(&url)
            .header("Authorization", &format!("Bearer {}", self.token))
            .header("Accept", "application/json")
            .call()
            .map_err(|e| unreachable(e.to_string()))?;
        let status = answer.status().as_u16();
        let body = answer
            .body_mut()
            .with_config()
            .limit(16 << 20)
            .read_to_string()
            .map_err(|e| unreachable(e.to_string()))?;
        if status != 200 {
            let hint = match status {
                401 => " (the service account's token was refused)",
                403 => " (the pod's service account may not list endpointslices there: deploy/kubernetes/rbac.yaml)",
                404 => " (no such namespace, or an API older than discovery.k8s.io/v1, Kubernetes 1.21)",
                _ => "",
            };
            let body: String = body.chars().take(QUOTED).collect();
            return Err(KubeError::Status {
                service,
                status,
                hint,
                body: body.replace('\n', " "),
            });
        }
        let list: SliceList = serde_json::from_str(&body).map_err(|e| KubeError::Answer {
            service: service.clone(),
            reason: e.to_string(),
        })?;
        let agents = agents_of(&list, svc.port, port);
        if agents.is_empty() {
            return Err(KubeError::Answer {
                service,
                reason: "no ready endpoint (are the agents' pods running and ready?)".into(),
            });
        }
        Ok(agents)
    }
}

/// An EndpointSliceList, the parts read here.
#[derive(Debug, Deserialize)]
struct SliceList {
    items: Vec<Slice>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Slice {
    address_type: String,
    #[serde(default)]
    endpoints: Vec<Endpoint>,
    #[serde(default)]
    ports: Option<Vec<SlicePort>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Endpoint {
    addresses: Vec<String>,
    #[serde(default)]
    conditions: Conditions,
    node_name: Option<String>,
    target_ref: Option<TargetRef>,
}

#[derive(Debug, Default, Deserialize)]
struct Conditions {
    ready: Option<bool>,
}

#[derive(Debug, Deserialize)]
struct TargetRef {
    name: Option<String>,
}

#[derive(Debug, Deserialize)]
struct SlicePort {
    name: Option<String>,
    port: Option<u16>,
    protocol: Option<String>,
}

/// The port of a slice's endpoints: the one named `control`, else its only
/// TCP one.
fn slice_port(ports: &[SlicePort]) -> Option<u16> {
    let tcp: Vec<&SlicePort> = ports
        .iter()
        .filter(|p| p.protocol.as_deref().unwrap_or("TCP") == "TCP")
        .collect();
    tcp.iter()
        .find(|p| p.name.as_deref() == Some("control"))
        .or(if tcp.len() == 1 { tcp.first() } else { None })
        .and_then(|p| p.port)
}

/// The ready endpoints of `list` as agents: each named by its node when no
/// other endpoint shares it (an agents' DaemonSet), else by its pod, else by
/// its address; one per address (a dual-stack Service lists a pod in two
/// slices, one per family: IPv4 is kept). A ready condition that is absent
/// counts as ready, as the API says it should.
fn agents_of(list: &SliceList, given: Option<u16>, default: u16) -> Vec<String> {
    let mut found: Vec<(String, Option<String>, String, u16)> = Vec::new();
    let mut slices: Vec<&Slice> = list.items.iter().collect();
    // IPv4 slices first, so a pod in both families is reached over IPv4.
    slices.sort_by_key(|s| s.address_type != "IPv4");
    for s in slices {
        if !matches!(s.address_type.as_str(), "IPv4" | "IPv6") {
            continue;
        }
        let port = given
            .or_else(|| s.ports.as_deref().and_then(slice_port))
            .unwrap_or(default);
        for e in &s.endpoints {
            let Some(addr) = e.addresses.first() else {
                continue;
            };
            let pod = e.target_ref.as_ref().and_then(|t| t.name.clone());
            let seen = |f: &(String, Option<String>, String, u16)| {
                f.2 == *addr || (pod.is_some() && f.1 == pod)
            };
            if e.conditions.ready == Some(false) || found.iter().any(seen) {
                continue;
            }
            let node = e.node_name.clone().unwrap_or_default();
            found.push((node, pod, addr.clone(), port));
        }
    }
    let mut agents: Vec<String> = found
        .iter()
        .map(|(node, pod, addr, port)| {
            let alone = !node.is_empty() && found.iter().filter(|f| f.0 == *node).count() == 1;
            let name = match pod {
                _ if alone => node.clone(),
                Some(p) => p.clone(),
                None => addr.clone(),
            };
            let host = if addr.contains(':') {
                format!("[{addr}]")
            } else {
                addr.clone()
            };
            format!("{name}={host}:{port}")
        })
        .collect();
    agents.sort();
    agents
}

#[cfg(test)]
#[path = "kube_tests.rs"]
mod tests;
