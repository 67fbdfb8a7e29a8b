//! What the fleet tests share: a key, a scratch folder, agents named a, b,
//! c..., a mesh run against a database, and its stored pairs. Included by the
//! themed `tests` binary (fleet.rs) and the `quiet` one (fleet_heavy.rs).

use std::collections::BTreeMap;
use std::time::Duration;

use netsonde_store::{PointStatus, Store};

use crate::util::{run, ServerProc};

pub fn key(dir: &std::path::Path) -> String {
    let k = dir.join("fleet.key");
    let out = run(
        &["keygen", "--out", k.to_str().unwrap()],
        Duration::from_secs(10),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    k.to_str().unwrap().to_string()
}

pub fn scratch(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("netsonde-fleet-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `--agent a=127.0.0.1:P,...` for these agents, named a, b, c...
pub fn agent_list(agents: &[&ServerProc]) -> String {
    agents
        .iter()
        .enumerate()
        .map(|(i, a)| format!("{}={}", (b'a' + i as u8) as char, a.addr()))
        .collect::<Vec<_>>()
        .join(",")
}

/// `netsonde mesh` with the key, the store and no report, then `args`.
fn mesh_args<'a>(args: &[&'a str], db: &'a std::path::Path, key: &'a str) -> Vec<&'a str> {
    let mut all = vec![
        "mesh",
        "--auth-key",
        key,
        "--db",
        db.to_str().unwrap(),
        "--no-report",
    ];
    all.extend_from_slice(args);
    all
}

/// Runs a mesh to its end.
pub fn mesh(args: &[&str], db: &std::path::Path, key: &str) -> std::process::Output {
    run(&mesh_args(args, db, key), Duration::from_secs(120))
}

/// Starts a mesh in the background (its standard error piped), for a test
/// that acts while it runs.
pub fn spawn_mesh(args: &[&str], db: &std::path::Path, key: &str) -> std::process::Child {
    crate::util::cmd()
        .args(mesh_args(args, db, key))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Each point's (src, dst) and status.
pub fn pairs(db: &std::path::Path) -> BTreeMap<(String, String), (PointStatus, Option<String>)> {
    let store = Store::open(db).unwrap();
    let run = store.runs().unwrap()[0].id;
    store
        .points(run)
        .unwrap()
        .into_iter()
        .map(|p| {
            let axes: BTreeMap<String, String> = serde_json::from_str(&p.axes_json).unwrap();
            (
                (axes["src"].clone(), axes["dst"].clone()),
                (p.status, p.reason),
            )
        })
        .collect()
}

/// The mesh's standard output, once it succeeded with `n` pairs all measured.
pub fn every_pair_done(out: &std::process::Output, db: &std::path::Path, n: usize) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = pairs(db);
    assert_eq!(got.len(), n, "{got:?}");
    assert!(
        got.values().all(|(s, _)| *s == PointStatus::Done),
        "{got:?}"
    );
    stdout
}

pub const QUICK: &[&str] = &[
    "--tests",
    "tcp-stream",
    "--sizes",
    "128K",
    "-t",
    "0.4",
    "--warmup",
    "0.1",
    "--repeat",
    "1",
];

/// A port that answers every connection with HTTP garbage, not netsonde.
pub fn garbage_agent() -> u16 {
    use std::io::Write;
    let garbage = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = garbage.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut s in garbage.incoming().flatten() {
            let _ = s.write_all(b"HTTP/1.1 200 OK\r\n\r\nthis is not netsonde\n");
        }
    });
    port
}

/// A process stopped with SIGSTOP, continued (SIGCONT) when this is dropped.
pub struct Stopped(String);

impl Stopped {
    /// Stops `pid`.
    pub fn stop(pid: u32) -> Stopped {
        let pid = pid.to_string();
        assert!(std::process::Command::new("kill")
            .args(["-STOP", &pid])
            .status()
            .unwrap()
            .success());
        Stopped(pid)
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
            .args(["-CONT", &self.0])
            .status();
    }
}
