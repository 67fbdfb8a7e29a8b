//! `netsonde lab mesh`: a cluster on this host (`netsonde_lab::cluster`), an
//! agent in each host's namespace, a fresh key for them, and the user's `mesh
//! ...` run from the bridge against all of them; everything torn down after, on
//! error and on Ctrl-C alike.

use anyhow::Context;
use netsonde_lab::cluster::{host_addr, Cluster, ClusterSpec, SlowPair, ENV_CLUSTER};
use netsonde_lab::{session, StateDir};

use netsonde_args::{LabMeshArgs, UsageError};

/// Every agent's control port.
const AGENT_PORT: u16 = 5300;

/// The cluster the flags describe.
fn spec(a: &LabMeshArgs) -> anyhow::Result<ClusterSpec> {
    let rate = a
        .rate
        .as_deref()
        .map(|r| {
            r.parse()
                .map_err(|e| UsageError(format!("--rate '{r}': {e}")))
        })
        .transpose()?;
    let slow = a
        .slow
        .iter()
        .map(|s| SlowPair::parse(s).map_err(UsageError))
        .collect::<Result<Vec<_>, _>>()?;
    let spec = ClusterSpec {
        hosts: a.hosts,
        rate,
        slow,
    };
    spec.validate().map_err(UsageError)?;
    Ok(spec)
}

/// The controller's command line: the user's `mesh ...` with every host as an
/// agent and the lab's key.
fn invocation(a: &LabMeshArgs, key: &std::path::Path) -> anyhow::Result<Vec<String>> {
    let mut inv = a.invocation.clone();
    if !matches!(inv.first().map(String::as_str), Some("mesh" | "monitor")) {
        return Err(UsageError(
            "lab mesh runs a mesh or a monitor: add `-- mesh [TEST FLAGS]` (the lab names the \
             agents)"
                .into(),
        )
        .into());
    }
    if inv
        .iter()
        .any(|w| w == "--agent" || w.starts_with("--agent=") || w == "--agents-file")
    {
        return Err(UsageError(
            "lab mesh names the agents itself (h1 ... hN): leave out --agent".into(),
        )
        .into());
    }
    let agents: Vec<String> = (1..=a.hosts)
        .map(|i| format!("h{i}={}:{AGENT_PORT}", host_addr(i)))
        .collect();
    inv.extend([
        "--agent".into(),
        agents.join(","),
        "--auth-key".into(),
        key.display().to_string(),
    ]);
    Ok(inv)
}

/// Applies the pairs slowed later (`--slow hA-hB=RATE@AFTER`) when each is
/// due, on a thread that ends early when the returned sender is dropped (the
/// invocation ended).
fn slow_later(
    lab: &Cluster,
    spec: &ClusterSpec,
    name: &str,
) -> (std::sync::mpsc::Sender<()>, std::thread::JoinHandle<()>) {
    let mut due: Vec<(std::time::Duration, String, Vec<String>)> = (1..=spec.hosts)
        .flat_map(|i| {
            let ns = lab.host_namespace(i).to_string();
            spec.later(i)
                .into_iter()
                .map(move |(t, cmd)| (std::time::Duration::from_nanos(t.0), ns.clone(), cmd))
        })
        .collect();
    due.sort_by_key(|d| d.0);
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let name = name.to_string();
    let start = std::time::Instant::now();
    let handle = std::thread::spawn(move || {
        for (at, ns, cmd) in due {
            let wait = at.saturating_sub(start.elapsed());
            if rx.recv_timeout(wait) != Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
                return;
            }
            match netsonde_lab::cluster::change(&ns, &cmd) {
                Ok(_) => eprintln!("lab {name}: {ns}: {}", cmd.join(" ")),
                Err(e) => eprintln!("lab {name}: slowing a pair failed: {e}"),
            }
        }
    });
    (tx, handle)
}

/// Starts host `i`'s agent and waits until it listens.
fn start_agent(lab: &mut Cluster, i: usize, key: &std::path::Path) -> anyhow::Result<()> {
    let args: Vec<String> = vec![
        "agent".into(),
        "--bind".into(),
        host_addr(i).to_string(),
        "--port".into(),
        AGENT_PORT.to_string(),
        "--auth-key".into(),
        key.display().to_string(),
        "--no-store".into(),
        "--log-format".into(),
        "json".into(),
    ];
    let ns = lab.host_namespace(i).to_string();
    let what = format!("agent h{i}");
    let child = lab.spawn(&ns, &what, &args, &[], session::daemon_command)?;
    // The agent runs on until the lab tears its host down.
    drop(session::Daemon::await_listening(child, &what)?);
    Ok(())
}

/// Builds the cluster, runs the mesh from its bridge, tears it down; returns
/// the mesh's exit code. (The caller has removed killed labs' leftovers.)
pub fn run(dir: &StateDir, a: LabMeshArgs) -> anyhow::Result<u8> {
    let spec = spec(&a)?;
    let name = a
        .name
        .clone()
        .unwrap_or_else(|| format!("m{}", std::process::id()));
    let key = std::env::temp_dir().join(format!("netsonde-lab-{name}-{}.key", std::process::id()));
    let inv = invocation(&a, &key)?;
    let mut lab = Cluster::create(dir, &name, &spec)?;
    let _ = std::fs::remove_file(&key);
    crate::keys::generate(&key)?;
    let result = (|| -> anyhow::Result<u8> {
        for i in 1..=spec.hosts {
            start_agent(&mut lab, i, &key)?;
        }
        let slow: Vec<String> = spec
            .slow
            .iter()
            .map(|s| format!("h{}-h{} at {}", s.a, s.b, s.rate))
            .collect();
        eprintln!(
            "lab {name}: {} hosts on a bridge (10.78.0.1-{}), {}{}; an agent on each",
            spec.hosts,
            spec.hosts,
            spec.rate
                .map_or("unshaped".to_string(), |r| format!("{r} each")),
            if slow.is_empty() {
                String::new()
            } else {
                format!(", slower: {}", slow.join(", "))
            }
        );
        let br = lab.bridge_namespace().to_string();
        let mut spec = spec.clone();
        let now = netsonde_run::agents::unix_now();
        for s in &mut spec.slow {
            s.from_unix_s = s.after.map(|t| now + t.0.div_ceil(1_000_000_000));
        }
        let env = [(ENV_CLUSTER.to_string(), serde_json::to_string(&spec)?)];
        let mut controller = lab.spawn(&br, "controller", &inv, &env, |_| {})?;
        let (done, changes) = slow_later(&lab, &spec, &name);
        let status = controller.wait().context("waiting for the mesh");
        drop(done);
        let _ = changes.join();
        Ok(status?.code().map_or(1, |c| c as u8))
    })();
    drop(lab);
    let _ = std::fs::remove_file(&key);
    result
}
