//! Fleets: `netsonde agent` on each host and `netsonde mesh` directing them,
//! as agents on loopback ports. The tests that start agents take the lab
//! tests' turn, so neither skews the other's figures; the ones that load the
//! host for long (a five-host lab, concurrent pairs) are in fleet_heavy.rs, in
//! the `quiet` binary.

use std::time::Duration;

use netsonde_store::PointStatus;

use crate::fleet_util::*;
use crate::util::{free_port, run, ServerProc};

/// Three agents, all to all: six ordered pairs, each measured from its source
/// agent against its destination, stored as one run, shown as a matrix.
#[test]
fn a_mesh_measures_every_ordered_pair_through_its_agents() {
    let _turn = crate::lab_util::serial();
    let dir = scratch("all");
    let k = key(&dir);
    let (a, b, c) = (
        ServerProc::agent(&k),
        ServerProc::agent(&k),
        ServerProc::agent(&k),
    );
    let db = dir.join("fleet.db");
    let list = agent_list(&[&a, &b, &c]);
    let mut args = vec!["--agent", &list, "--pattern", "all-to-all"];
    args.extend_from_slice(QUICK);
    let out = mesh(&args, &db, &k);
    let stdout = every_pair_done(&out, &db, 6);
    assert!(!pairs(&db).keys().any(|(s, d)| s == d));
    // The matrix: a row per source, its cells goodputs, the diagonal empty.
    assert!(
        stdout.contains("rows: source, columns: destination"),
        "{stdout}"
    );
    let row = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("b "))
        .unwrap();
    assert_eq!(row.matches("bit/s").count(), 2, "{stdout}");
    assert_eq!(row.matches('·').count(), 1, "{stdout}");
    // The HTML report shows the same pairs as a heat map.
    let rep = dir.join("report");
    let out = run(
        &[
            "report",
            "latest",
            "--db",
            db.to_str().unwrap(),
            "--out",
            rep.to_str().unwrap(),
        ],
        Duration::from_secs(60),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(rep.join("report.html")).unwrap();
    assert_eq!(html.matches("<table class=\"heat\">").count(), 1, "{html}");
    // Six shaded pairs in the grid (the legend's scale below it is not one).
    let grid = html.split("<p class=\"legend\">").next().unwrap();
    assert_eq!(grid.matches("background:hsl(210,65%").count(), 6, "{html}");
    assert!(html.contains("<p class=\"legend\">shade: the pair's share"));
    assert_eq!(html.matches("<td class=\"none\">").count(), 3, "{html}");
    // Each agent ran its jobs as a client and served the others' tests.
    std::thread::sleep(Duration::from_millis(200));
    for agent in [&a, &b, &c] {
        let lines = agent.lines().join("\n");
        assert_eq!(
            lines.matches("protocol=netsonde-job outcome=ok").count(),
            2,
            "{lines}"
        );
    }
}

/// An agent that is down fails only its own pairs, each stored with why;
/// the others are measured, and `--resume` finishes the run once it is back.
#[test]
fn a_dead_agent_fails_its_pairs_and_resume_finishes_them() {
    let _turn = crate::lab_util::serial();
    let dir = scratch("dead");
    let k = key(&dir);
    let (a, b) = (ServerProc::agent(&k), ServerProc::agent(&k));
    let mut c = ServerProc::agent(&k);
    let port_c = c.port;
    let list = agent_list(&[&a, &b, &c]);
    let _ = c.child.kill();
    let _ = c.child.wait();
    let db = dir.join("fleet.db");
    let mut args = vec!["--agent", &list];
    args.extend_from_slice(QUICK);
    let out = mesh(&args, &db, &k);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains("netsonde mesh --auth-key FILE --resume"),
        "{stderr}"
    );
    let got = pairs(&db);
    for ((s, d), (status, reason)) in &got {
        if s == "c" || d == "c" {
            assert_eq!(*status, PointStatus::Pending, "{s}->{d}");
            let why = reason.as_deref().unwrap_or("");
            assert!(
                why.contains("connect") || why.contains("did not answer"),
                "{s}->{d}: {why}"
            );
        } else {
            assert_eq!(*status, PointStatus::Done, "{s}->{d}: {reason:?}");
        }
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    // Under the matrix, each failure once with the pairs that got it.
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("c -> a") && l.contains(": failed")),
        "{stdout}"
    );
    // Back on its port: the resume measures the four pairs left.
    let _c = ServerProc::start_as("agent", port_c, &["--auth-key", &k]);
    let out = mesh(&["--resume", "latest"], &db, &k);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(pairs(&db).values().all(|(s, _)| *s == PointStatus::Done));
}

/// Bad input: one clear line and a non-zero exit each.
#[test]
fn fleet_mistakes_are_refused_with_why() {
    let dir = scratch("bad");
    let k = key(&dir);
    let db = dir.join("fleet.db");
    let err = |out: &std::process::Output| String::from_utf8_lossy(&out.stderr).to_string();
    // An agent without a key.
    let out = run(&["agent", "--port", "1"], Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(2), "{}", err(&out));
    assert!(err(&out).contains("needs --auth-key"), "{}", err(&out));
    // Unknown agent in the pattern; one agent; a HOST.
    let out = mesh(
        &[
            "--agent",
            "a=127.0.0.1:1,b=127.0.0.1:2",
            "--pattern",
            "pairs:a-z",
        ],
        &db,
        &k,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(err(&out).contains("unknown agent 'z'"), "{}", err(&out));
    let out = mesh(&["--agent", "a=127.0.0.1:1"], &db, &k);
    assert!(err(&out).contains("at least two agents"), "{}", err(&out));
    // Too long without --yes: the estimate, and nothing runs.
    let many: Vec<String> = (0..30)
        .map(|i| format!("h{i}=127.0.0.1:{}", 1000 + i))
        .collect();
    let many = many.join(",");
    let out = mesh(&["--agent", &many, "-t", "10", "--repeat", "3"], &db, &k);
    assert_eq!(out.status.code(), Some(2));
    assert!(err(&out).contains("pass --yes"), "{}", err(&out));
    // A plain server takes no jobs; an agent with another key refuses the controller.
    let server = ServerProc::start_with(&["--auth-key", &k]);
    let agent = ServerProc::agent(&k);
    let list = format!("s={},g={}", server.addr(), agent.addr());
    let mut args = vec!["--agent", list.as_str(), "--pattern", "pairs:s-g"];
    args.extend_from_slice(QUICK);
    let out = mesh(&args, &db, &k);
    assert_ne!(out.status.code(), Some(0));
    let got = pairs(&db);
    let why = got[&("s".to_string(), "g".to_string())]
        .1
        .clone()
        .unwrap_or_default();
    assert!(why.contains("not jobs"), "{why}");
    let other = scratch("other");
    let k2 = key(&other);
    let b = ServerProc::agent(&k2);
    let list = format!("g={},b={}", agent.addr(), b.addr());
    let mut args = vec!["--agent", list.as_str(), "--pattern", "pairs:b-g"];
    args.extend_from_slice(QUICK);
    let out = mesh(&args, &other.join("fleet.db"), &k);
    assert_ne!(out.status.code(), Some(0));
    let got = pairs(&other.join("fleet.db"));
    let why = got[&("b".to_string(), "g".to_string())]
        .1
        .clone()
        .unwrap_or_default();
    assert!(why.contains("key"), "{why}");
}

/// Each container's `args` in a rendered manifest (block sequences, as
/// kustomize writes them), quotes removed.
fn container_args(yaml: &str) -> Vec<Vec<String>> {
    let mut all = Vec::new();
    let mut lines = yaml.lines().peekable();
    while let Some(l) = lines.next() {
        if l.trim_start().trim_start_matches("- ") != "args:" {
            continue;
        }
        let mut args = Vec::new();
        while let Some(next) = lines.peek() {
            match next.trim_start().strip_prefix("- ") {
                Some(v) if !v.contains(": ") => {
                    args.push(v.trim_matches('"').to_string());
                    lines.next();
                }
                _ => break,
            }
        }
        all.push(args);
    }
    all
}

/// deploy/kubernetes renders offline (`kubectl kustomize`, no cluster needed)
/// and holds together: agents on the pod and the host network with the key
/// from the Secret at mode 0400 (root), the Job, the monitors and the
/// dashboard as nobody with the key at 0440, resources, headless Services the
/// controllers find the agents through, the store's URL in no argument, and
/// only flags netsonde has.
#[test]
fn the_kubernetes_manifests_render_and_hold_together() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../deploy/kubernetes");
    let Ok(out) = std::process::Command::new("kubectl")
        .args(["kustomize", dir])
        .output()
    else {
        eprintln!("SKIPPED fleet::kubernetes: no kubectl (apt-get install kubernetes-client)");
        return;
    };
    let y = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let count = |s: &str| y.matches(s).count();
    assert_eq!(count("kind: DaemonSet"), 2, "{y}");
    assert_eq!(count("kind: Job"), 1);
    // The two monitors (pod and host network) and the dashboard.
    assert_eq!(count("kind: Deployment"), 3);
    assert_eq!(count("clusterIP: None"), 2);
    assert_eq!(count("hostNetwork: true"), 1);
    assert_eq!(count("secretName: netsonde-key"), 5);
    // 0400 for the agents (root); 0440 for the Job and the monitors, which
    // run as nobody with fsGroup 65534 (netsonde takes a key root owns and
    // its group reads, never one others read).
    assert_eq!(count("defaultMode: 256"), 2);
    assert_eq!(count("defaultMode: 288"), 3);
    assert_eq!(count("runAsNonRoot: true"), 4);
    assert_eq!(count("limits:"), 6);
    // 2 DaemonSets, 4 Services, the Job, 3 Deployments, and rbac.yaml's 3
    // and its binding's subject.
    assert_eq!(count("namespace: netsonde"), 14);
    // The Job's and the monitors' service account may list EndpointSlices,
    // and nothing else.
    assert_eq!(count("serviceAccountName: netsonde-mesh"), 3);
    // The store they all reach comes from its Secret, in the environment.
    assert_eq!(count("name: netsonde-db"), 4);
    assert!(y.contains("  name: netsonde-monitor-metrics\n"), "{y}");
    assert!(
        y.contains("resources:\n  - endpointslices\n  verbs:\n  - list\n"),
        "{y}"
    );
    let args = container_args(&y);
    assert_eq!(args.len(), 6, "{args:?}");
    assert!(
        args.iter().all(|a| !a.iter().any(|f| f == "--db")),
        "{args:?}"
    );
    // A monitor per network, each at its own phase of the interval.
    let services: Vec<&String> = args
        .iter()
        .filter(|a| a[0] == "monitor")
        .map(|a| &a[a.iter().position(|f| f == "--agents-k8s").unwrap() + 1])
        .collect();
    assert_eq!(services, ["netsonde-agents", "netsonde-agents-host"]);
    // The Job finds the pod network's agents through their Service.
    let job = args.iter().find(|a| a[0] == "mesh").unwrap();
    let svc = &job[job.iter().position(|a| a == "--agents-k8s").unwrap() + 1];
    assert_eq!(svc, "netsonde-agents");
    assert!(y.contains("name: netsonde-agents\n"), "{y}");
    // Every flag the manifests pass is one the command takes.
    for a in &args {
        let help = run(&[&a[0], "--help"], Duration::from_secs(10));
        let help = String::from_utf8_lossy(&help.stdout);
        for flag in a.iter().filter(|f| f.starts_with("--")) {
            assert!(help.contains(flag.as_str()), "{} has no {flag}", a[0]);
        }
        if a[0] == "agent" {
            let port = &a[a.iter().position(|f| f == "--port").unwrap() + 1];
            assert!(y.contains(&format!("containerPort: {port}")), "{port}");
        }
    }
}

/// One HTTP GET on loopback: the body, or why not.
pub(crate) fn http_get(addr: &str, path: &str) -> Result<String, String> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .map_err(|e| e.to_string())?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").map_err(|e| e.to_string())?;
    let mut r = String::new();
    s.read_to_string(&mut r).map_err(|e| e.to_string())?;
    match r.split_once("\r\n\r\n") {
        Some((head, body)) if head.starts_with("HTTP/1.") && head.contains(" 200 ") => {
            Ok(body.to_string())
        }
        _ => Err(r),
    }
}

/// Prometheus in a temporary folder, scraping `targets` every second; killed on
/// drop.
struct Prometheus {
    child: std::process::Child,
    addr: String,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Prometheus {
    fn start(dir: &std::path::Path, targets: &[String]) -> Option<Prometheus> {
        let list: Vec<String> = targets.iter().map(|t| format!("'{t}'")).collect();
        let cfg = dir.join("prometheus.yml");
        std::fs::write(
            &cfg,
            format!(
                "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: netsonde\n    \
                 static_configs:\n      - targets: [{}]\n",
                list.join(", ")
            ),
        )
        .unwrap();
        let addr = format!("127.0.0.1:{}", free_port());
        let child = std::process::Command::new("prometheus")
            .arg(format!("--config.file={}", cfg.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("tsdb").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .ok()?;
        let p = Prometheus { child, addr };
        let until = std::time::Instant::now() + Duration::from_secs(30);
        while http_get(&p.addr, "/-/ready").is_err() {
            assert!(
                std::time::Instant::now() < until,
                "prometheus did not get ready"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        Some(p)
    }

    /// The series `query` returns now: (labels, value).
    fn query(&self, query: &str) -> Vec<(serde_json::Value, f64)> {
        let q: String = query
            .bytes()
            .map(|b| match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' => (b as char).to_string(),
                _ => format!("%{b:02X}"),
            })
            .collect();
        let body = http_get(&self.addr, &format!("/api/v1/query?query={q}")).unwrap();
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["status"], "success", "{v}");
        v["data"]["result"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let val = r["value"][1].as_str().unwrap().parse().unwrap();
                (r["metric"].clone(), val)
            })
            .collect()
    }
}

/// A real Prometheus (Debian's 2.42) scrapes two agents' `--metrics` and sees
/// their sessions and the last result of each job they ran: goodput, verdict.
#[test]
fn prometheus_scrapes_the_agents_health_and_last_results() {
    if std::process::Command::new("prometheus")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("SKIPPED fleet::prometheus: no prometheus (apt-get install prometheus)");
        return;
    }
    let _turn = crate::lab_util::serial();
    let dir = scratch("prom");
    let k = key(&dir);
    let (ma, mb) = (
        format!("127.0.0.1:{}", free_port()),
        format!("127.0.0.1:{}", free_port()),
    );
    let a = ServerProc::agent_with(&k, &["--metrics", &ma]);
    let b = ServerProc::agent_with(&k, &["--metrics", &mb]);
    let prom = Prometheus::start(&dir, &[ma.clone(), mb.clone()]).unwrap();
    let db = dir.join("fleet.db");
    let list = agent_list(&[&a, &b]);
    let mut args = vec!["--agent", &list];
    args.extend_from_slice(QUICK);
    every_pair_done(&mesh(&args, &db, &k), &db, 2);
    // The agents' own text, then what Prometheus made of it.
    let text = http_get(&ma, "/metrics").unwrap();
    assert!(
        text.contains("netsonde_pair_goodput_bytes_per_second{"),
        "{text}"
    );
    let until = std::time::Instant::now() + Duration::from_secs(30);
    let goodput = loop {
        let g = prom.query("netsonde_pair_goodput_bytes_per_second");
        if g.len() == 2 || std::time::Instant::now() > until {
            break g;
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    assert_eq!(goodput.len(), 2, "{goodput:?}");
    // Labelled HOST:PORT: two agents on one address stay two series.
    let (pa, pb) = (a.addr(), b.addr());
    assert!(
        goodput.iter().all(|(l, v)| *v > 1e6
            && ((l["src"] == pa && l["dst"] == pb) || (l["src"] == pb && l["dst"] == pa))),
        "{goodput:?}"
    );
    let jobs = prom.query(r#"netsonde_sessions_total{protocol="netsonde-job",outcome="ok"}"#);
    assert_eq!(jobs.len(), 2, "{jobs:?}");
    assert!(jobs.iter().all(|(_, v)| *v == 1.0), "{jobs:?}");
    // Each agent also served the other's test as a plain session.
    let served = prom.query(r#"netsonde_sessions_total{protocol="netsonde",outcome="ok"}"#);
    assert!(
        served.iter().all(|(_, v)| *v >= 1.0) && served.len() == 2,
        "{served:?}"
    );
    let verdicts = prom.query("netsonde_pair_verdict == 1");
    assert_eq!(verdicts.len(), 2, "{verdicts:?}");
    assert!(verdicts
        .iter()
        .all(|(l, _)| l["verdict"].as_str().is_some_and(|v| !v.is_empty())));
    let held = prom.query(r#"netsonde_budget{resource="memory_bytes",of="budget"}"#);
    assert!(
        held.iter().all(|(_, v)| *v > 0.0) && held.len() == 2,
        "{held:?}"
    );
}

/// Twenty agents, all one scripted agent (`--engine fake`) reached at twenty
/// loopback addresses: a ring of 20 pairs, too many agents for a grid, is
/// printed as a listing of the pairs.
#[test]
fn a_mesh_of_many_agents_is_listed_by_pair() {
    let _turn = crate::lab_util::serial();
    let dir = scratch("many");
    let k = key(&dir);
    let fake = ServerProc::agent_with(&k, &["--engine", "fake", "--bind", "0.0.0.0"]);
    let list: Vec<String> = (1..=20)
        .map(|i| format!("a{i:02}=127.0.0.{i}:{}", fake.port()))
        .collect();
    let file = dir.join("agents");
    std::fs::write(&file, list.join("\n")).unwrap();
    let db = dir.join("fleet.db");
    let mut args = vec!["--agents-file", file.to_str().unwrap(), "--pattern", "ring"];
    args.extend_from_slice(QUICK);
    let out = mesh(&args, &db, &k);
    let stdout = every_pair_done(&out, &db, 20);
    assert!(!stdout.contains("rows: source"), "{stdout}");
    assert!(
        stdout.contains(": 20 pair(s) of 20 agents, 20 measured, 0 failed; median "),
        "{stdout}"
    );
    assert!(stdout.contains("slowest of the rest:\n"), "{stdout}");
    assert!(stdout.contains("a20 -> a01"), "{stdout}");
}

/// An agent whose reports no link could produce (a scripted agent a million
/// times too fast): its pairs fail with why and store nothing it said; the
/// honest agent's pairs are measured.
#[test]
fn an_agent_that_lies_fails_its_pairs_and_nothing_it_said_is_kept() {
    let _turn = crate::lab_util::serial();
    let dir = scratch("liar");
    let k = key(&dir);
    let honest = ServerProc::agent_with(&k, &["--engine", "fake"]);
    let liar = ServerProc::agent_with(&k, &["--engine", "fake", "--fake-scale", "1e6"]);
    let list = agent_list(&[&honest, &liar]);
    let db = dir.join("fleet.db");
    let mut args = vec!["--agent", &list];
    args.extend_from_slice(QUICK);
    let out = mesh(&args, &db, &k);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    let got = pairs(&db);
    let (status, reason) = &got[&("b".to_string(), "a".to_string())];
    assert_eq!(*status, PointStatus::Pending, "{got:?}");
    let why = reason.as_deref().unwrap_or_default();
    assert!(
        why.contains("does not believe") && why.contains("more than any link carries"),
        "{why}"
    );
    assert_eq!(
        got[&("a".to_string(), "b".to_string())].0,
        PointStatus::Done,
        "{got:?}"
    );
    let store = netsonde_store::Store::open(&db).unwrap();
    let run = store.latest_run().unwrap().unwrap();
    let b_to_a = store
        .points(run)
        .unwrap()
        .into_iter()
        .find(|p| p.axes_json.contains(r#""src":"b""#))
        .unwrap();
    assert!(b_to_a.reps.is_empty(), "a lie was stored");
}

/// `mesh --metrics`: while the mesh runs, its endpoint serves the last result
/// of each pair measured so far.
#[test]
fn a_mesh_serves_each_pairs_last_result_while_it_runs() {
    let _turn = crate::lab_util::serial();
    let dir = scratch("meshmetrics");
    let k = key(&dir);
    let (a, b) = (ServerProc::agent(&k), ServerProc::agent(&k));
    let list = agent_list(&[&a, &b]);
    let addr = format!("127.0.0.1:{}", free_port());
    let db = dir.join("fleet.db");
    let mut running = spawn_mesh(
        &[
            "--agent",
            &list,
            "--metrics",
            &addr,
            "--tests",
            "tcp-stream",
            "--sizes",
            "128K",
            "-t",
            "1",
            "--warmup",
            "0.1",
            "--repeat",
            "2",
        ],
        &db,
        &k,
    );
    // The test named as a monitor names it: the point's own axes.
    let wanted =
        r#"netsonde_pair_goodput_bytes_per_second{src="a",dst="b",test="tcp-stream 128KiB"}"#;
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let (mut seen, mut om) = (String::new(), String::new());
    while std::time::Instant::now() < deadline && running.try_wait().unwrap().is_none() {
        if let Ok(body) = http_get(&addr, "/metrics") {
            if body.contains(wanted) {
                seen = body;
                // As Prometheus asks: OpenMetrics.
                om = ureq::get(&format!("http://{addr}/metrics"))
                    .header(
                        "Accept",
                        "application/openmetrics-text;version=1.0.0,text/plain;q=0.5",
                    )
                    .call()
                    .ok()
                    .and_then(|mut r| r.body_mut().read_to_string().ok())
                    .unwrap_or_default();
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = running.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(seen.contains(wanted), "never served while running: {seen}");
    assert!(seen.contains("netsonde_pair_verdict{"), "{seen}");
    // Asked for nothing in particular, the Prometheus text format; asked for
    // OpenMetrics, as Prometheus asks, OpenMetrics.
    assert!(
        !seen.contains("# EOF") && !seen.contains("# UNIT"),
        "{seen}"
    );
    assert!(om.ends_with("# EOF\n") && om.contains(wanted), "{om}");
}

/// An agent killed in the middle of a mesh: every pair without it is stored as
/// measured, its pairs stay pending with why, and a resume (with the agent
/// back) measures only those.
#[test]
fn an_agent_killed_mid_mesh_leaves_the_rest_stored_and_resume_finishes() {
    let _turn = crate::lab_util::serial();
    let dir = scratch("midkill");
    let k = key(&dir);
    let (a, b) = (ServerProc::agent(&k), ServerProc::agent(&k));
    let mut c = ServerProc::agent(&k);
    let port_c = c.port;
    let list = agent_list(&[&a, &b, &c]);
    let db = dir.join("fleet.db");
    let running = spawn_mesh(
        &[
            "--agent",
            &list,
            "--tests",
            "tcp-stream",
            "--sizes",
            "128K",
            "-t",
            "0.5",
            "--warmup",
            "0.1",
            "--repeat",
            "1",
        ],
        &db,
        &k,
    );
    // Kill c once the first pair is stored, with pairs still to come.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let done = |db: &std::path::Path| {
        netsonde_store::Store::open(db).ok().and_then(|s| {
            let run = s.latest_run().ok()??;
            Some(
                s.points(run)
                    .ok()?
                    .iter()
                    .filter(|p| p.status == PointStatus::Done)
                    .count(),
            )
        })
    };
    while done(&db).unwrap_or(0) == 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = c.child.kill();
    let _ = c.child.wait();
    let out = running.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    let got = pairs(&db);
    assert_eq!(got.len(), 6);
    for ((s, d), (status, reason)) in &got {
        if s != "c" && d != "c" {
            assert_eq!(*status, PointStatus::Done, "{s}->{d}: {reason:?}");
        }
    }
    assert!(
        got.values().any(|(s, _)| *s == PointStatus::Pending),
        "{got:?}"
    );
    let _c = ServerProc::start_as("agent", port_c, &["--auth-key", &k]);
    let out = mesh(&["--resume", "latest"], &db, &k);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(pairs(&db).values().all(|(s, _)| *s == PointStatus::Done));
}
