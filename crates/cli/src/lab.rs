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

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::{bail, Context};
use clap::Parser;
use netsonde_lab::control::ControlServer;
use netsonde_lab::{session, Kind, Lab, Side, StateDir};
use netsonde_model::link::{LinkRecord, LinkSettings, LinkSpec};

use netsonde_args::{
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
            print!("{rep}");
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
                    Ok(s) => println!("{}", s.line()),
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
    eprintln!("{}", session::describe(&name, &rec));

    let mut server = start_server(&mut lab, inv.port, inv.auth_key.as_deref())?;
    let (control, requests) = ControlServer::bind(&lab.socket_path())?;
    let env = session::invocation_env(&lab, &rec);
    let mut child = lab.spawn(Side::Client, "client", &inv.args, &env, false, |_| {})?;
    let mut changed =
        |rec: &LinkRecord| eprintln!("lab {name}: link now {} via {}", rec.spec, rec.mechanism);
    let code = session::supervise(&mut lab, &spec, &mut child, &requests, &stop, &mut changed)?;
    drop(control);
    if code != 0 && !stop.load(Ordering::Relaxed) {
        let log = server.last_lines(5);
        if !log.is_empty() {
            eprintln!("lab {name}: the server's last log lines:");
            for l in log {
                eprintln!("  {l}");
            }
        }
    }
    if let Some(s) = lab.emulator_stats() {
        eprint!("{}", session::emulator_summary(&s));
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

/// The lab's netsonde server, listening in the server host.
fn start_server(
    lab: &mut Lab,
    port: u16,
    key: Option<&std::path::Path>,
) -> anyhow::Result<session::Daemon> {
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
    let child = lab.spawn(
        Side::Server,
        "server",
        &args,
        &[],
        false,
        session::daemon_command,
    )?;
    Ok(session::Daemon::await_listening(child, "the lab's server")?)
}

fn lab_up(dir: &StateDir, u: LabUpArgs) -> anyhow::Result<()> {
    let (spec, _) = link_spec(u.file.as_deref(), &u.link)?;
    clean_stale(dir);
    let (rec, [cli, srv]) = session::bring_up(dir, &u.name, &spec, u.port)?;
    eprintln!("{}", session::describe(&u.name, &rec));
    let second = if rec.spec.second.is_some() {
        "; a second path between 10.77.1.2 and 10.77.1.1 for --mptcp"
    } else {
        ""
    };
    println!(
        "lab {name} is up: client host {cli} (10.77.0.2), server host {srv} (10.77.0.1, netsonde server on port {port}){second}\n\
         try:    ip netns exec {cli} netsonde client 10.77.0.1 -p {port}\n\
         remove: netsonde lab down {name}",
        name = u.name,
        port = u.port
    );
    Ok(())
}

/// `lab emulate NAME`: the emulator of a `lab up` lab, until SIGTERM.
fn emulate(dir: &StateDir, name: &str) -> anyhow::Result<()> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone()).context("installing signal handlers")?;
    }
    session::emulate(dir, name, &stop)?;
    Ok(())
}
