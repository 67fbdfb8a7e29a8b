//! `netsonde lab`: run a test or a sweep over an emulated path on this host.
//!
//! `lab run [FILE] [LINK FLAGS] -- INVOCATION` makes a lab (two namespaces and a
//! link, `netsonde_lab`), starts `netsonde server` in the server namespace, runs
//! the invocation (`client ...`, `search ...`, `sweep ...` or `run FILE`) in the client namespace
//! with `NETSONDE_HOST` pointing at the server, answers the invocation's requests
//! for a new link between sweep points, and tears it all down: on success, on
//! error, on Ctrl-C and SIGTERM. `lab up` / `lab down` keep a lab between commands;
//! `lab clean` removes what a killed run left; every `lab` command first removes the
//! leftovers of killed runs.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::Parser;
use netsonde_lab::control::{self, ControlServer};
use netsonde_lab::emulator::EmulatorStats;
use netsonde_lab::{Kind, Lab, Side, StateDir, SERVER_ADDR};
use netsonde_model::link::{LinkRecord, LinkSettings, LinkSpec, Mechanism};

use crate::args::{
    Cli, Command, LabArgs, LabCommand, LabRunArgs, LabUpArgs, LinkFlags, UsageError,
};

/// Reads a file's `[link]` table (and whether it describes a sweep).
fn file_settings(file: &std::path::Path) -> anyhow::Result<(LinkSettings, bool)> {
    let text = crate::files::read_small(file, "experiment file", crate::files::TEXT_FILE_MAX)?;
    let exp = netsonde_sweep::file::Experiment::parse(&text)
        .map_err(|e| UsageError(format!("{}: {e}", file.display())))?;
    let sweep = netsonde_sweep::file::Experiment {
        link: None,
        ..exp.clone()
    } != Default::default();
    Ok((exp.link.unwrap_or_default(), sweep))
}

fn link_spec(
    file: Option<&std::path::Path>,
    flags: &LinkFlags,
) -> anyhow::Result<(LinkSpec, bool)> {
    let (mut s, sweep) = match file {
        Some(f) => file_settings(f)?,
        None => (LinkSettings::default(), false),
    };
    s.overlay(&flags.settings());
    let spec = s.spec().map_err(|e| UsageError(e.to_string()))?;
    Ok((spec, sweep))
}

/// What the lab needs to know about the invocation before it runs it.
struct Invocation {
    args: Vec<String>,
    port: u16,
    auth_key: Option<PathBuf>,
    /// Whether a sweep's link axes need delay or loss somewhere.
    axes_impaired: bool,
}

fn parse_invocation(args: Vec<String>) -> anyhow::Result<Invocation> {
    let cli = Cli::try_parse_from(std::iter::once("netsonde".to_string()).chain(args.clone()))
        .map_err(|e| UsageError(format!("the invocation after --: {}", e.to_string().trim())))?;
    let (port, auth_key, exp) = match cli.command {
        Command::Client(a) => (a.port(), a.auth_key.clone(), None),
        Command::Search(a) => (a.port, a.common.auth_key.clone(), None),
        Command::Sweep(a) => {
            let exp = a.experiment()?;
            let port = a.port.unwrap_or(netsonde_driver::client::DEFAULT_PORT);
            (port, a.common.auth_key.clone(), Some(exp))
        }
        Command::Run(a) => {
            let text =
                crate::files::read_small(&a.file, "experiment file", crate::files::TEXT_FILE_MAX)?;
            let exp = netsonde_sweep::file::Experiment::parse(&text)
                .map_err(|e| UsageError(format!("{}: {e}", a.file.display())))?;
            (
                exp.port.unwrap_or(netsonde_driver::client::DEFAULT_PORT),
                a.common.auth_key.clone(),
                Some(exp),
            )
        }
        _ => {
            return Err(UsageError(
                "lab run runs `client ...`, `search ...`, `sweep ...` or `run FILE` in the lab"
                    .into(),
            )
            .into())
        }
    };
    let axes_impaired = exp.as_ref().is_some_and(experiment_impaired);
    Ok(Invocation {
        args,
        port,
        auth_key,
        axes_impaired,
    })
}

/// Whether an experiment's link axes ask for delay or loss anywhere.
fn experiment_impaired(e: &netsonde_sweep::file::Experiment) -> bool {
    e.link_axes().map(|a| a.needs_impairment()).unwrap_or(false)
}

/// Removes the leftovers of killed lab runs, saying what went.
fn clean_stale(dir: &StateDir) {
    if !netsonde_lab::probe::privileged() {
        return;
    }
    match netsonde_lab::clean(dir, false) {
        Ok(rep) => {
            for (name, ns) in rep.removed {
                eprintln!(
                    "lab: removed the leftovers of killed lab '{name}' ({})",
                    ns.join(", ")
                );
            }
        }
        Err(e) => eprintln!("lab: could not check for leftovers: {e}"),
    }
}

fn describe(name: &str, rec: &LinkRecord) -> String {
    let seed = if rec.mechanism == Mechanism::Emulator {
        format!(" (seed {})", rec.spec.seed)
    } else {
        String::new()
    };
    format!(
        "lab {name}: {}{seed} via {}\nlab {name}: {}",
        rec.spec, rec.mechanism, rec.detail
    )
}

/// Runs a `lab` command; returns the exit code.
pub fn run(a: LabArgs) -> anyhow::Result<u8> {
    let dir = StateDir::default();
    match a.command {
        LabCommand::Run(r) => lab_run(&dir, r),
        LabCommand::Up(u) => lab_up(&dir, u).map(|_| 0),
        LabCommand::Mesh(m) => {
            clean_stale(&dir);
            crate::lab_mesh::run(&dir, m)
        }
        LabCommand::Down { name } => {
            clean_stale(&dir);
            let st = netsonde_lab::down(&dir, &name)?;
            eprintln!("lab {name}: removed ({})", st.namespaces.join(", "));
            Ok(0)
        }
        LabCommand::Clean { all } => {
            let rep = netsonde_lab::clean(&dir, all)?;
            for (name, ns) in &rep.removed {
                println!("removed lab {name} ({})", ns.join(", "));
            }
            for (name, why) in &rep.kept {
                println!("kept lab {name}: {why}");
            }
            for ns in &rep.foreign {
                println!("left alone: namespace {ns} (not made by the lab)");
            }
            if rep.removed.is_empty() {
                println!("nothing to clean");
            }
            if let Some(e) = rep.errors.first() {
                bail!("cleaning: {e}");
            }
            Ok(0)
        }
        LabCommand::List => {
            clean_stale(&dir);
            let all = dir.load_all();
            if all.is_empty() {
                println!("no labs");
            }
            for (path, st) in all {
                match st {
                    Ok(s) => println!(
                        "{:<16} {:<4} owner {:<7} {:<10} {}",
                        s.name,
                        match s.kind {
                            Kind::Run => "run",
                            Kind::Up => "up",
                        },
                        s.owner.pid,
                        if s.in_use() { "in use" } else { "" },
                        s.link
                            .map(|l| format!("{} via {}", l.spec, l.mechanism))
                            .unwrap_or_else(|| "no link yet".into())
                    ),
                    Err(e) => println!("{}: {e}", path.display()),
                }
            }
            Ok(0)
        }
        LabCommand::Emulate { name } => emulate(&dir, &name).map(|_| 0),
    }
}

fn lab_run(dir: &StateDir, r: LabRunArgs) -> anyhow::Result<u8> {
    let (spec, file_is_sweep) = link_spec(r.file.as_deref(), &r.link)?;
    let args = if r.invocation.is_empty() {
        match &r.file {
            Some(f) if file_is_sweep => vec!["run".to_string(), f.display().to_string()],
            _ => {
                return Err(UsageError(
                    "nothing to run: add `-- client ...`, `-- sweep ...` or `-- run FILE`".into(),
                )
                .into())
            }
        }
    } else {
        r.invocation
    };
    let inv = parse_invocation(args)?;
    let name = r.name.unwrap_or_else(|| format!("r{}", std::process::id()));

    // Ctrl-C and SIGTERM end the invocation and tear down, never leave the lab.
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone()).context("installing signal handlers")?;
    }
    clean_stale(dir);
    let mut lab = Lab::create(dir, &name, Kind::Run)?;
    lab.choose(&spec, inv.axes_impaired)?;
    let rec = lab.apply(&spec)?;
    eprintln!("{}", describe(&name, &rec));

    let mut server = start_server(&mut lab, inv.port, inv.auth_key.as_deref())?;
    let (control, requests) = ControlServer::bind(&lab.socket_path())?;
    let env = vec![
        ("NETSONDE_HOST".to_string(), SERVER_ADDR.to_string()),
        (
            control::ENV_LINK.to_string(),
            serde_json::to_string(&rec).expect("records serialize"),
        ),
        (
            control::ENV_CONTROL.to_string(),
            lab.socket_path().display().to_string(),
        ),
        (control::ENV_PID.to_string(), std::process::id().to_string()),
    ];
    let mut child = lab.spawn(Side::Client, "client", &inv.args, &env, false, |_| {})?;
    let code = supervise(&mut lab, &spec, &mut child, &requests, &stop)?;
    drop(control);
    if code != 0 && !stop.load(Ordering::Relaxed) {
        let log = server.log.lock().expect("log lock");
        if !log.is_empty() {
            eprintln!("lab {name}: the server's last log lines:");
            for l in log.iter().rev().take(5).rev() {
                eprintln!("  {l}");
            }
        }
    }
    if let Some(s) = lab.emulator_stats() {
        eprint!("{}", emulator_summary(&s));
        if let Some(path) = &r.stats {
            let json = serde_json::to_string_pretty(&s).expect("stats serialize");
            std::fs::write(path, json + "\n")
                .with_context(|| format!("writing {}", path.display()))?;
        }
    }
    let _ = server.child.try_wait();
    lab.down().context("tearing the lab down")?;
    let _ = server.child.wait();
    if stop.load(Ordering::Relaxed) {
        eprintln!("lab {name}: interrupted; torn down");
    }
    Ok(code)
}

/// Waits for the invocation, answering its link requests; forwards Ctrl-C/SIGTERM.
fn supervise(
    lab: &mut Lab,
    base: &LinkSpec,
    child: &mut Child,
    requests: &mpsc::Receiver<control::Request>,
    stop: &AtomicBool,
) -> anyhow::Result<u8> {
    let mut asked_to_stop: Option<Instant> = None;
    loop {
        if let Some(st) = child.try_wait().context("waiting for the invocation")? {
            return Ok(match st.code() {
                Some(c) => c.clamp(0, 255) as u8,
                None => 1,
            });
        }
        if stop.load(Ordering::Relaxed) {
            match asked_to_stop {
                None => {
                    // Ctrl-C reached the child too (same process group); SIGTERM to
                    // the lab alone is passed on. Either way the child stops cleanly.
                    netsonde_lab::topology::terminate(child.id());
                    asked_to_stop = Some(Instant::now());
                }
                Some(t) if t.elapsed() > Duration::from_secs(30) => {
                    let _ = child.kill();
                }
                Some(_) => {}
            }
        }
        if lab.emulator_failed() {
            let _ = child.kill();
            let _ = child.wait();
            bail!("the link emulator stopped; the invocation was ended");
        }
        match requests.recv_timeout(Duration::from_millis(50)) {
            Ok(req) => {
                let spec = base.with_point(&req.point);
                let same = lab.record().is_some_and(|r| r.spec == spec);
                let r = lab.apply(&spec);
                if let (Ok(rec), false) = (&r, same) {
                    eprintln!(
                        "lab {}: link now {} via {}",
                        lab.name(),
                        rec.spec,
                        rec.mechanism
                    );
                }
                req.answer(r);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                std::thread::sleep(Duration::from_millis(50))
            }
        }
    }
}

/// The server in the lab and its log (kept to explain a failure).
struct LabServer {
    child: Child,
    log: Arc<Mutex<Vec<String>>>,
}

fn start_server(
    lab: &mut Lab,
    port: u16,
    key: Option<&std::path::Path>,
) -> anyhow::Result<LabServer> {
    // The lab's server takes windows up to 1 GiB (a long fat network's study
    // needs 256 MiB; the kernel's rmem_max/wmem_max still cap what is granted).
    let mut args: Vec<String> = ["server", "--bind", "0.0.0.0", "--max-size", "1G", "--port"]
        .map(String::from)
        .to_vec();
    args.push(port.to_string());
    if let Some(k) = key {
        args.push("--auth-key".into());
        args.push(k.display().to_string());
    }
    let mut child = lab.spawn(Side::Server, "server", &args, &[], false, |c| {
        // Its own process group: Ctrl-C goes to the invocation, which finishes
        // its measurement; the lab stops the server afterwards.
        use std::os::unix::process::CommandExt;
        c.process_group(0)
            .stdin(Stdio::null())
            .stderr(Stdio::piped());
    })?;
    let stderr = child.stderr.take().expect("piped");
    let log = Arc::new(Mutex::new(Vec::new()));
    let (tx, rx) = mpsc::channel();
    let keep = log.clone();
    std::thread::spawn(move || {
        let mut first = Some(tx);
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(tx) = first.take() {
                let _ = tx.send(line.clone());
            }
            let mut l = keep.lock().expect("log lock");
            if l.len() >= 50 {
                l.remove(0);
            }
            l.push(line);
        }
    });
    match rx.recv_timeout(Duration::from_secs(10)) {
        Ok(line) if line.contains("listening") => Ok(LabServer { child, log }),
        Ok(line) => {
            let _ = child.kill();
            bail!("the lab's server did not start: {line}")
        }
        Err(_) => {
            let _ = child.kill();
            bail!("the lab's server did not start within 10 s")
        }
    }
}

/// Counters of the emulator, for stderr.
fn emulator_summary(s: &EmulatorStats) -> String {
    let mut out = String::new();
    for (dir, d) in [("client->server", &s.up), ("server->client", &s.down)] {
        out.push_str(&format!(
            "emulator {dir}: {} packets in, {} out; lost {}, queue drops {}, duplicated {}, \
             reordered {}, overflow {}; delivery error p50 {} us, p99 {} us, latest {:.0} us\n",
            d.packets_in,
            d.delivered,
            d.lost,
            d.queue_drops,
            d.duplicated,
            d.reordered,
            d.overflow,
            d.error_p50_us,
            d.error_p99_us,
            d.late_max_ns as f64 / 1e3
        ));
    }
    out
}

fn lab_up(dir: &StateDir, u: LabUpArgs) -> anyhow::Result<()> {
    let (spec, _) = link_spec(u.file.as_deref(), &u.link)?;
    clean_stale(dir);
    let mut lab = Lab::create(dir, &u.name, Kind::Up)?;
    lab.emulate_elsewhere();
    let rec = lab.apply(&spec)?;
    eprintln!("{}", describe(&u.name, &rec));
    if rec.mechanism == Mechanism::Emulator {
        let args = vec!["lab".to_string(), "emulate".to_string(), u.name.clone()];
        let mut emu = lab.spawn(Side::Client, "emulator", &args, &[], true, |_| {})?;
        // Ready when the TUN devices have a reader (carrier up).
        lab.wait_attached(&mut emu, Duration::from_secs(5))?;
    }
    let args: Vec<String> = vec![
        "server".into(),
        "--bind".into(),
        "0.0.0.0".into(),
        "--port".into(),
        u.port.to_string(),
    ];
    lab.spawn(Side::Server, "server", &args, &[], true, |_| {})?;
    let (cli, srv) = (
        lab.namespace(Side::Client).to_string(),
        lab.namespace(Side::Server).to_string(),
    );
    lab.keep();
    println!(
        "lab {name} is up: client host {cli} (10.77.0.2), server host {srv} (10.77.0.1, netsonde server on port {port})\n\
         try:    ip netns exec {cli} netsonde client 10.77.0.1 -p {port}\n\
         remove: netsonde lab down {name}",
        name = u.name,
        port = u.port
    );
    Ok(())
}

/// `lab emulate NAME`: the emulator of a `lab up` lab, until SIGTERM.
fn emulate(dir: &StateDir, name: &str) -> anyhow::Result<()> {
    let st = netsonde_lab::state::LabState::load(&dir.state_path(name))?;
    let rec = st.link.context("the lab has no link yet")?;
    let [cli, srv] = netsonde_lab::topology::namespaces_of(name);
    let cfg = netsonde_lab::emulator::EmulatorConfig {
        client_ns: cli,
        server_ns: srv,
        dev: netsonde_lab::topology::DEV.into(),
        up: rec.spec.up,
        down: rec.spec.down,
        seed: rec.spec.seed,
    };
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone()).context("installing signal handlers")?;
    }
    let emu = netsonde_lab::emulator::Emulator::start(&cfg)?;
    while !stop.load(Ordering::Relaxed) && !emu.failed() {
        std::thread::sleep(Duration::from_millis(100));
    }
    emu.stop()?;
    Ok(())
}
