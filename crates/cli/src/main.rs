//! The `netsonde` binary: argument parsing and wiring only. Errors from the library
//! crates arrive typed; here they get context, are printed once on one line, and
//! map to the exit code: 0 success; 1 the test failed, or a sweep was interrupted
//! or could not record; 2 bad arguments (or a sweep with nothing to measure), or
//! a request refused before any traffic (the server's limits, busy, another key);
//! 3 `compare` found a regression; 4 a sweep ended with points still pending
//! because measurements failed (every measured repetition is kept; `--resume`
//! finishes it).
#![forbid(unsafe_code)]

mod client_cmd;
mod dashboard;
mod files;
mod keys;
mod lab;
mod lab_mesh;
mod man;
mod mesh;
mod monitor;
mod runs;
mod search;
mod server_cmd;
mod study;
mod sweep;

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use netsonde_driver::client::{self};

use netsonde_args::{self as args, Cli, Command};

fn main() -> ExitCode {
    let cli = match parse_args() {
        Ok(c) => c,
        Err(e) if !e.use_stderr() => {
            // --help and --version are not errors.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            // A bare `netsonde` (or `runs`, `lab`): the usage, as written, on
            // standard error; not what was asked, so exit 2.
            eprint!("{}", e.render());
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("netsonde: error: {}", clap_one_line(&e));
            return ExitCode::from(2);
        }
    };
    if let Some(path) = &cli.logfile {
        if let Err(e) = log_to(path) {
            eprintln!("netsonde: error: --logfile {}: {e}", path.display());
            return ExitCode::from(2);
        }
    }
    warn_password_on_command_line();
    match run(cli) {
        Ok(Exit::Ok) => ExitCode::SUCCESS,
        Ok(Exit::Regressed) => ExitCode::from(3),
        Ok(Exit::Code(c)) => ExitCode::from(c),
        Err(e) => {
            eprintln!("netsonde: error: {}", one_line(&e));
            ExitCode::from(exit_code(&e))
        }
    }
}

/// An error's exit status: 2 for bad arguments, files or settings and for a
/// request refused before any traffic (`ClientError::refused_before_traffic`:
/// the server's limits, a busy server, a key or version that does not match);
/// 1 for the rest (the test failed once running, the store, the system).
fn exit_code(e: &anyhow::Error) -> u8 {
    let refused = e.chain().any(|c| {
        c.downcast_ref::<args::UsageError>().is_some()
            || c.downcast_ref::<netsonde_driver::client::ClientError>()
                .is_some_and(|c| c.refused_before_traffic())
    });
    if refused {
        2
    } else {
        1
    }
}

/// `--logfile`: standard output and standard error both append to `path`.
fn log_to(path: &std::path::Path) -> std::io::Result<()> {
    // Looked at before opening: opening a FIFO would wait for its reader.
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        return Err(std::io::Error::other("not a regular file"));
    }
    let f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    rustix::stdio::dup2_stdout(&f)?;
    rustix::stdio::dup2_stderr(&f)?;
    Ok(())
}

/// Parses the command line. Every command takes negative numbers as values, so
/// `--max-parallel -1` is refused for its value, not taken for an unknown flag.
fn parse_args() -> Result<Cli, clap::Error> {
    use clap::{CommandFactory, FromArgMatches};
    fn negatives(cmd: clap::Command) -> clap::Command {
        cmd.allow_negative_numbers(true).mut_subcommands(negatives)
    }
    let mut cmd = negatives(Cli::command());
    let commands: Vec<String> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    let argv = iperf3_habits(std::env::args_os().collect(), &commands)
        .map_err(|e| cmd.error(clap::error::ErrorKind::ValueValidation, e))?;
    let matches = cmd.try_get_matches_from_mut(argv)?;
    Cli::from_arg_matches(&matches).map_err(|e| e.with_cmd(&cmd))
}

/// iperf3's habit of naming the role by a flag, anywhere on the line as
/// iperf3 takes it: `netsonde -p 5201 -R -c HOST ...` is `netsonde client -p
/// 5201 -R HOST ...` and `netsonde -D -s` is `netsonde server -D`
/// (`--client HOST`, `--client=HOST` and `-cHOST` too). A line that starts
/// with a command is left alone. `-c` without a host is refused: `netsonde
/// client` without one tests loopback, which an iperf3 user did not ask for.
fn iperf3_habits(
    mut v: Vec<std::ffi::OsString>,
    commands: &[String],
) -> Result<Vec<std::ffi::OsString>, String> {
    let first = v.get(1).and_then(|a| a.to_str()).unwrap_or_default();
    if commands.iter().any(|c| c == first) {
        return Ok(v);
    }
    let role = v.iter().enumerate().skip(1).find_map(|(i, a)| {
        let a = a.to_str()?;
        match a {
            "-c" | "--client" => Some((i, "client", None)),
            "-s" | "--server" => Some((i, "server", None)),
            _ => {
                let host = a
                    .strip_prefix("--client=")
                    .or_else(|| a.strip_prefix("-c").filter(|h| !h.starts_with('-')))?;
                Some((i, "client", Some(host.to_string())))
            }
        }
    });
    let Some((i, role, host)) = role else {
        return Ok(v);
    };
    match host {
        Some(h) if !h.is_empty() => v[i] = h.into(),
        _ => {
            v.remove(i);
            let next = v.get(i).and_then(|a| a.to_str());
            if role == "client" && next.is_none_or(|n| n.starts_with('-')) {
                return Err(
                    "-c needs the server's host, as iperf3's does (`netsonde client` \
                            with no host tests loopback against an embedded server)"
                        .into(),
                );
            }
        }
    }
    v.insert(1, role.into());
    // iperf3's client prints a line a second unless told otherwise (`-i`).
    let interval = |a: &std::ffi::OsString| {
        a.to_str().is_some_and(|a| {
            a == "--interval" || a.starts_with("--interval=") || a.starts_with("-i")
        })
    };
    if role == "client" && !v.iter().skip(2).any(interval) {
        v.extend(["--interval", "1s"].map(std::ffi::OsString::from));
    }
    Ok(v)
}

/// Writes `netsonde.1` and `netsonde-COMMAND.1` for each command into `dir`;
/// returns how many.
fn man_pages(dir: &std::path::Path) -> anyhow::Result<usize> {
    use clap::CommandFactory;
    man::write_pages(Cli::command(), dir)
}

/// A clap error on one line: its message and any tip, without the usage block.
fn clap_one_line(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let mut parts: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more"))
        .map(|l| l.strip_prefix("error: ").unwrap_or(l))
        .collect();
    parts.dedup();
    format!("{} (see --help)", parts.join("; "))
}

/// An error's whole chain, once, on one line: a cause already quoted by the
/// message before it is not repeated.
pub(crate) fn one_line(e: &anyhow::Error) -> String {
    let chain: Vec<String> = e.chain().map(|c| c.to_string()).collect();
    let mut line = chain[0].clone();
    for c in &chain[1..] {
        if !line.contains(c.as_str()) {
            line.push_str(": ");
            line.push_str(c);
        }
    }
    line.replace('\n', " ")
}

fn netsonde_engine_caps() -> Vec<(
    netsonde_model::spec::IoStrategy,
    Result<(), netsonde_driver::IoError>,
)> {
    netsonde_driver::io_caps()
}

/// How a successful command ends.
enum Exit {
    /// Normally.
    Ok,
    /// `compare` found a regression.
    Regressed,
    /// The exit code of a command `lab run` ran.
    Code(u8),
}

/// The server host when none is given: `NETSONDE_HOST` (the lab sets it inside
/// its client namespace), else none (an embedded loopback server).
fn default_host(given: Option<String>) -> Option<String> {
    given.or_else(|| {
        std::env::var("NETSONDE_HOST")
            .ok()
            .filter(|h| !h.is_empty())
    })
}

/// `-4`/`-6`: the host's first address of that family (as an address, so the
/// client connects to exactly it); brackets around an IPv6 literal are dropped.
fn family(host: Option<String>, v4: bool, v6: bool) -> anyhow::Result<Option<String>> {
    let Some(h) = host else { return Ok(None) };
    let h = h
        .strip_prefix('[')
        .and_then(|x| x.strip_suffix(']'))
        .map(str::to_string)
        .unwrap_or(h);
    if !v4 && !v6 {
        return Ok(Some(h));
    }
    use std::net::ToSocketAddrs;
    let addrs = (h.as_str(), 0)
        .to_socket_addrs()
        .with_context(|| format!("cannot resolve '{h}'"))?;
    let ip = addrs
        .map(|a| a.ip())
        .find(|ip| if v6 { ip.is_ipv6() } else { ip.is_ipv4() })
        .ok_or_else(|| {
            args::UsageError(format!(
                "'{h}' has no {} address",
                if v6 { "IPv6" } else { "IPv4" }
            ))
        })?;
    Ok(Some(ip.to_string()))
}

/// The command line as stored with a run and shown in its reports: a
/// PostgreSQL URL's password hidden (`netsonde_store::secrets::redact`).
fn command_line() -> String {
    std::env::args()
        .map(|a| netsonde_store::secrets::redact(&a).0)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Warns once when a PostgreSQL URL on the command line carries a password:
/// other users see it in the process list.
fn warn_password_on_command_line() {
    if std::env::args().any(|a| netsonde_store::secrets::redact(&a).1) {
        eprintln!(
            "netsonde: warning: the password in the PostgreSQL URL is visible to other users in \
             the process list (it is never stored or shown); use PGPASSWORD, a passfile \
             (~/.pgpass or PGPASSFILE), PGSERVICE, --db-file or $NETSONDE_DB instead"
        );
    }
}

fn sweep_request(
    plan: Option<netsonde_sweep::Plan>,
    host: Option<String>,
    port: u16,
    label: String,
    resume: Option<String>,
    c: args::SweepCommon,
) -> anyhow::Result<sweep::Request> {
    Ok(sweep::Request {
        run: netsonde_run::sweep::SweepRequest {
            plan,
            host,
            port,
            label,
            db: c
                .store
                .db
                .unwrap_or_else(netsonde_store::Location::default_file),
            resume: None,
            engine: c.engine,
            fake_delay: std::time::Duration::from_millis(c.fake_delay_ms),
            fake_scale: c.fake_scale,
            auth_key: keys::load_opt(c.auth_key.as_deref())?,
            command: command_line(),
            peer: c.peer.into(),
            search: None,
            concurrency: 1,
            mesh_results: None,
        },
        resume,
        out: c.out,
        no_report: c.no_report,
        ending: sweep::Ending::of(c.quiet, c.json),
    })
}

/// Exit 4: the run ended with points pending (its failures are stored).
fn sweep_exit(end: netsonde_run::sweep::SweepEnd) -> Exit {
    use netsonde_run::sweep::SweepEnd;
    match end {
        SweepEnd::Complete => Exit::Ok,
        SweepEnd::Incomplete | SweepEnd::Interrupted => Exit::Code(4),
    }
}

/// `netsonde sweep`: a plan from the flags (or a resumed run) measured and stored.
fn sweep_cmd(a: args::SweepArgs) -> anyhow::Result<Exit> {
    let plan = if a.resume.is_some() {
        None
    } else {
        let exp = a.experiment()?;
        Some(exp.plan().map_err(|e| args::UsageError(e.to_string()))?)
    };
    let label = a.label.clone().unwrap_or_else(|| {
        if a.tests.is_none() && a.sizes.is_none() {
            "characterization".into()
        } else {
            "sweep".into()
        }
    });
    let peer = client::Peer::from(a.common.peer);
    let (_, end) = sweep::sweep(sweep_request(
        plan,
        default_host(a.host),
        a.port.unwrap_or(peer.default_port()),
        label,
        a.resume,
        a.common,
    )?)?;
    Ok(sweep_exit(end))
}

/// `netsonde mesh`: a plan between agents (or a resumed one) measured, stored,
/// and shown as one matrix of pairs per test.
fn mesh_cmd(a: args::MeshArgs) -> anyhow::Result<Exit> {
    let port = a.sweep.port.unwrap_or(client::DEFAULT_PORT);
    if a.sweep.common.peer != args::PeerArg::Netsonde {
        return Err(args::UsageError(
            "a mesh runs between netsonde agents: --peer does not apply".into(),
        )
        .into());
    }
    let db = a.sweep.common.store.db.clone();
    let plan = match &a.sweep.resume {
        Some(r) => {
            let store = runs::open_store(db.as_ref())?;
            let run = runs::run_id(&store, Some(r))?;
            match netsonde_run::load(&store, run)?.0.plan.mesh {
                Some(m) => netsonde_run::agents::check_resume_place(run, &m)
                    .map_err(|e| args::UsageError(e.to_string()))?,
                None => {
                    return Err(args::UsageError(format!(
                        "run {run} is not a mesh: resume it with `netsonde sweep --resume {run}`"
                    ))
                    .into())
                }
            }
            None
        }
        None => Some(mesh::plan(&a, port)?),
    };
    let label = a.sweep.label.clone().unwrap_or_else(|| "mesh".into());
    let mut req = sweep_request(plan, None, port, label, a.sweep.resume, a.sweep.common)?;
    req.run.concurrency = a.concurrency as usize;
    if let Some(addr) = a.metrics {
        let results = std::sync::Arc::new(netsonde_run::agents::LastResults::default());
        let shown = results.clone();
        let render =
            std::sync::Arc::new(move || netsonde_report::openmetrics::render(None, &shown.all()));
        let bound = netsonde_serve::serve_metrics(addr, render)?;
        eprintln!("netsonde: metrics on http://{bound}/metrics");
        req.run.mesh_results = Some(results);
    }
    let (_, end) = sweep::sweep(req)?;
    Ok(sweep_exit(end))
}

/// `netsonde run FILE`: an experiment file's plan measured and stored.
fn run_file(a: args::RunArgs) -> anyhow::Result<Exit> {
    let text = files::read_small(&a.file, "experiment file", files::TEXT_FILE_MAX)?;
    let exp = netsonde_sweep::file::Experiment::parse(&text)
        .map_err(|e| args::UsageError(format!("{}: {e}", a.file.display())))?;
    let plan = exp
        .plan()
        .map_err(|e| args::UsageError(format!("{}: {e}", a.file.display())))?;
    let label = exp
        .label
        .clone()
        .unwrap_or_else(|| a.file.display().to_string());
    let port = exp
        .port
        .unwrap_or(client::Peer::from(a.common.peer).default_port());
    let (_, end) = sweep::sweep(sweep_request(
        Some(plan),
        default_host(exp.host),
        port,
        label,
        None,
        a.common,
    )?)?;
    Ok(sweep_exit(end))
}

/// `netsonde runs`: list, show, export or delete stored runs.
fn runs_cmd(a: args::RunsArgs) -> anyhow::Result<Exit> {
    let mut store = match a.command {
        args::RunsCommand::Delete { .. } => runs::open_store(a.store.db.as_ref())?,
        _ => runs::open_store_read_only(a.store.db.as_ref())?,
    };
    let out = match a.command {
        args::RunsCommand::List => runs::list(&store)?,
        args::RunsCommand::Show { run, full, json } => {
            let id = runs::run_id(&store, Some(&run))?;
            runs::show(&store, id, full, json, a.store.db.as_ref())?
        }
        args::RunsCommand::Export { run, csv, json } => {
            if !csv && !json {
                return Err(args::UsageError("runs export needs --csv or --json".into()).into());
            }
            let id = runs::run_id(&store, Some(&run))?;
            runs::export(&store, id, csv)?
        }
        args::RunsCommand::Delete { run } => {
            let id = runs::run_id(&store, Some(&run))?;
            store.delete_run(id)?;
            format!("deleted run {id}\n")
        }
    };
    std::io::stdout().write_all(out.as_bytes())?;
    Ok(Exit::Ok)
}

/// `netsonde caps`: which I/O strategies and transports this host supports.
fn caps() -> anyhow::Result<Exit> {
    let mut out = String::from("I/O strategies on this host (probed on loopback sockets):\n");
    for (s, r) in netsonde_engine_caps() {
        match r {
            Ok(()) => out.push_str(&format!("  {:<9} yes\n", s.name())),
            Err(why) => out.push_str(&format!("  {:<9} no: {why}\n", s.name())),
        }
    }
    out.push_str("Transports beside TCP and UDP:\n");
    for (name, r) in netsonde_driver::transport_caps() {
        match r {
            Ok(what) => out.push_str(&format!("  {name:<9} yes: {what}\n")),
            Err(why) => out.push_str(&format!("  {name:<9} no: {why}\n")),
        }
    }
    std::io::stdout().write_all(out.as_bytes())?;
    Ok(Exit::Ok)
}

fn run(mut cli: Cli) -> anyhow::Result<Exit> {
    if let Some(store) = cli.store_mut() {
        if let Some(path) = store.db_file.take() {
            store.db = Some(files::read_db_location(&path)?);
        }
    }
    let verbose = cli.verbose;
    // Started by the lab: its emulator carries this test's packets.
    if let Some(pid) = netsonde_lab::control::pid_from_env() {
        netsonde_cpu::processes::count_as_test(pid);
    }
    match cli.command {
        Command::Sweep(a) => sweep_cmd(*a),
        Command::Search(a) => Ok(if search::run(*a)? {
            Exit::Ok
        } else {
            // The trial budget ran out before a rate was found: incomplete.
            Exit::Code(4)
        }),
        Command::Run(a) => run_file(a),
        Command::Runs(a) => runs_cmd(a),
        Command::Compare(a) => {
            let store = runs::open_store_read_only(a.store.db.as_ref())?;
            let ra = runs::run_id(&store, Some(&a.run_a))?;
            let rb = runs::run_id(&store, Some(&a.run_b))?;
            let (text, regressed) = runs::compare(&store, ra, rb, a.threshold)?;
            std::io::stdout().write_all(text.as_bytes())?;
            Ok(if regressed { Exit::Regressed } else { Exit::Ok })
        }
        Command::Lab(a) => Ok(Exit::Code(lab::run(*a)?)),
        Command::Study(a) => Ok(match study::run(a)? {
            0 => Exit::Ok,
            c => Exit::Code(c),
        }),
        Command::Report(a) => {
            let store = runs::open_store_read_only(a.store.db.as_ref())?;
            let id = runs::run_id(&store, a.run.as_deref())?;
            let dir = a.out.unwrap_or_else(|| runs::default_report_dir(id));
            let path = runs::write_report(&store, id, &dir, a.format)?;
            println!("report: {}", path.display());
            Ok(Exit::Ok)
        }
        Command::Server(a) => server_cmd::run(a, None).map(|()| Exit::Ok),
        Command::Agent(a) => {
            let jobs = netsonde_run::real::agent_measure(a.engine, a.fake_scale);
            server_cmd::run(a.server, Some((jobs, a.allow_targets))).map(|()| Exit::Ok)
        }
        Command::Mesh(a) => mesh_cmd(*a),
        Command::Monitor(a) => monitor::run(*a).map(|()| Exit::Ok),
        Command::Dashboard(a) => dashboard::run(a).map(|()| Exit::Ok),
        Command::Completions { shell } => {
            use clap::CommandFactory;
            clap_complete::generate(
                shell,
                &mut Cli::command(),
                "netsonde",
                &mut std::io::stdout(),
            );
            Ok(Exit::Ok)
        }
        Command::Man { dir } => {
            let pages = man_pages(&dir)?;
            eprintln!("wrote {pages} man pages to {}", dir.display());
            Ok(Exit::Ok)
        }
        Command::Caps => caps(),
        Command::Keygen(a) => {
            keys::generate(&a.out)?;
            eprintln!("wrote a new key to {} (mode 600); give the same file to server and client with --auth-key", a.out.display());
            Ok(Exit::Ok)
        }
        Command::Client(a) => client_cmd::run(*a, verbose).map(|()| Exit::Ok),
    }
}

#[cfg(test)]
mod tests {
    use super::iperf3_habits;

    fn habits(line: &str) -> Result<String, String> {
        let commands = ["client", "server", "sweep"].map(String::from);
        let v = line.split(' ').map(std::ffi::OsString::from).collect();
        iperf3_habits(v, &commands).map(|v| {
            v.iter()
                .map(|a| a.to_str().unwrap())
                .collect::<Vec<_>>()
                .join(" ")
        })
    }

    /// Issue 37.3: iperf3 takes its options in any order.
    #[test]
    fn the_role_flag_may_come_anywhere() {
        let ok = |a: &str, b: &str| assert_eq!(habits(a).as_deref(), Ok(b), "{a}");
        // A line a second, as iperf3's client prints, unless -i says otherwise.
        ok("netsonde -c h -t 5", "netsonde client h -t 5 --interval 1s");
        ok(
            "netsonde -p 5201 -c h",
            "netsonde client -p 5201 h --interval 1s",
        );
        ok(
            "netsonde -R -c h -P 2",
            "netsonde client -R h -P 2 --interval 1s",
        );
        ok(
            "netsonde --client=h -R",
            "netsonde client h -R --interval 1s",
        );
        ok("netsonde -ch -R", "netsonde client h -R --interval 1s");
        ok("netsonde -c h -i 2", "netsonde client h -i 2");
        ok(
            "netsonde -c h --interval=500ms",
            "netsonde client h --interval=500ms",
        );
        ok("netsonde -p 5202 -s", "netsonde server -p 5202");
        ok("netsonde --server -p 1", "netsonde server -p 1");
        // A command first is left alone.
        ok("netsonde sweep -s 5", "netsonde sweep -s 5");
        ok("netsonde client -c", "netsonde client -c");
        for bad in ["netsonde -c", "netsonde -R -c", "netsonde -c -R"] {
            let e = habits(bad).unwrap_err();
            assert!(e.contains("-c needs the server's host"), "{bad}: {e}");
        }
    }
}
