//! A lab's processes once the link is up: a daemon (the lab's server, or a
//! cluster host's agent) started in its own process group and awaited until it
//! listens, its last log lines kept to explain a failure; and the invocation
//! (`netsonde lab run -- ...`) supervised: its link requests answered, a stop
//! passed on, ended if the emulator stops.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use netsonde_model::link::{LinkRecord, LinkSpec, Mechanism};

use crate::control;
use crate::emulator::EmulatorStats;
use crate::error::{LabError, Result};
use crate::topology::{terminate, Lab, SERVER_ADDR};

/// How long a daemon has to say it listens.
pub const STARTUP: Duration = Duration::from_secs(10);

/// How long an invocation asked to stop has before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(30);

/// The log lines a daemon keeps.
const LOG_LINES: usize = 50;

/// How a daemon is started: its own process group (Ctrl-C goes to the
/// invocation, which finishes its measurement; the lab stops the daemon
/// afterwards), no input, its log piped to the lab.
pub fn daemon_command(c: &mut Command) {
    c.process_group(0)
        .stdin(Stdio::null())
        .stderr(Stdio::piped());
}

/// A daemon that said it listens, and its last log lines.
#[derive(Debug)]
pub struct Daemon {
    /// The process.
    pub child: Child,
    log: Arc<Mutex<Vec<String>>>,
}

impl Daemon {
    /// Waits until `child` (started with [`daemon_command`]) says it listens
    /// on its first log line, at most [`STARTUP`]; otherwise kills it and says
    /// what it said instead. `what` names it in that error.
    pub fn await_listening(mut child: Child, what: &str) -> Result<Daemon> {
        let stderr = child
            .stderr
            .take()
            .ok_or_else(|| LabError::DaemonStart(format!("{what}: its log is not piped")))?;
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = mpsc::channel();
        let keep = log.clone();
        std::thread::spawn(move || {
            let mut first = Some(tx);
            for line in BufReader::new(stderr).lines().map_while(|l| l.ok()) {
                if let Some(tx) = first.take() {
                    let _ = tx.send(line.clone());
                }
                let mut l = keep.lock().unwrap_or_else(|e| e.into_inner());
                if l.len() >= LOG_LINES {
                    l.remove(0);
                }
                l.push(line);
            }
        });
        let why = match rx.recv_timeout(STARTUP) {
            Ok(line) if line.contains("listening") => return Ok(Daemon { child, log }),
            Ok(line) => format!("{what} did not start: {line}"),
            Err(_) => format!("{what} did not start within {} s", STARTUP.as_secs()),
        };
        let _ = child.kill();
        let _ = child.wait();
        Err(LabError::DaemonStart(why))
    }

    /// Its last `n` log lines, oldest first.
    pub fn last_lines(&self, n: usize) -> Vec<String> {
        let log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        log[log.len().saturating_sub(n)..].to_vec()
    }
}

/// The environment of an invocation inside `lab`, whose link is `rec`: where
/// the server is, the link, the control socket, and the lab's own process.
pub fn invocation_env(lab: &Lab, rec: &LinkRecord) -> Vec<(String, String)> {
    vec![
        ("NETSONDE_HOST".to_string(), SERVER_ADDR.to_string()),
        (
            control::ENV_LINK.to_string(),
            serde_json::to_string(rec).expect("records serialize"),
        ),
        (
            control::ENV_CONTROL.to_string(),
            lab.socket_path().display().to_string(),
        ),
        (control::ENV_PID.to_string(), std::process::id().to_string()),
    ]
}

/// Waits for the invocation `child` and returns its exit code, answering its
/// link requests (each a point's axes over `base`; `changed` hears each new
/// link) and passing `stop` on to it: asked to stop, then killed after a grace
/// period. An emulator that stops ends the invocation with an error.
pub fn supervise(
    lab: &mut Lab,
    base: &LinkSpec,
    child: &mut Child,
    requests: &mpsc::Receiver<control::Request>,
    stop: &AtomicBool,
    changed: &mut dyn FnMut(&LinkRecord),
) -> Result<u8> {
    let mut asked_to_stop: Option<Instant> = None;
    loop {
        let exited = child
            .try_wait()
            .map_err(|e| LabError::io("waiting for the invocation", e))?;
        if let Some(st) = exited {
            return Ok(st.code().map_or(1, |c| c.clamp(0, 255) as u8));
        }
        if stop.load(Ordering::Relaxed) {
            match asked_to_stop {
                None => {
                    // Ctrl-C reached the child too (same process group); SIGTERM to
                    // the lab alone is passed on. Either way the child stops cleanly.
                    terminate(child.id());
                    asked_to_stop = Some(Instant::now());
                }
                Some(t) if t.elapsed() > STOP_GRACE => {
                    let _ = child.kill();
                }
                Some(_) => {}
            }
        }
        if lab.emulator_failed() {
            let _ = child.kill();
            let _ = child.wait();
            return Err(LabError::EmulatorStopped);
        }
        match requests.recv_timeout(Duration::from_millis(50)) {
            Ok(req) => {
                let spec = base.with_point(&req.point);
                let same = lab.record().is_some_and(|r| r.spec == spec);
                let r = lab.apply(&spec);
                if let (Ok(rec), false) = (&r, same) {
                    changed(rec);
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

/// The lab `name`'s link as said when it is made: the settings (the emulator's
/// seed), the mechanism and what it built.
pub fn describe(name: &str, rec: &LinkRecord) -> String {
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

/// The emulator's counters, a line per direction.
pub fn emulator_summary(s: &EmulatorStats) -> String {
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

/// A lab that stays up (`lab up`): made with `spec`, its emulator (when the link
/// needs one) in a process of its own that has attached, and a netsonde server
/// on `port` in the server host. Returns the link and the two namespaces
/// (client, server); the lab is kept for `lab down`.
pub fn bring_up(
    dir: &crate::StateDir,
    name: &str,
    spec: &LinkSpec,
    port: u16,
) -> Result<(LinkRecord, [String; 2])> {
    let mut lab = Lab::create(dir, name, crate::Kind::Up)?;
    lab.emulate_elsewhere();
    let rec = lab.apply(spec)?;
    if rec.mechanism == Mechanism::Emulator {
        let args = vec!["lab".to_string(), "emulate".to_string(), name.to_string()];
        let mut emu = lab.spawn(crate::Side::Client, "emulator", &args, &[], true, |_| {})?;
        // Ready when the TUN devices have a reader (carrier up).
        lab.wait_attached(&mut emu, Duration::from_secs(5))?;
    }
    let args: Vec<String> = ["server", "--bind", "0.0.0.0", "--port", &port.to_string()]
        .map(String::from)
        .to_vec();
    lab.spawn(crate::Side::Server, "server", &args, &[], true, |_| {})?;
    let namespaces = [
        lab.namespace(crate::Side::Client).to_string(),
        lab.namespace(crate::Side::Server).to_string(),
    ];
    lab.keep();
    Ok((rec, namespaces))
}

/// `lab emulate NAME`: the emulator of the `lab up` lab `name`, until `stop`
/// is raised or it fails.
pub fn emulate(dir: &crate::StateDir, name: &str, stop: &AtomicBool) -> Result<EmulatorStats> {
    let path = dir.state_path(name);
    let st = crate::state::LabState::load(&path)?;
    let rec = st.link.ok_or_else(|| LabError::State {
        path,
        message: "the lab has no link yet".into(),
    })?;
    let [cli, srv] = crate::topology::namespaces_of(name);
    let cfg = crate::emulator::EmulatorConfig {
        client_ns: cli,
        server_ns: srv,
        dev: crate::topology::DEV.into(),
        up: rec.spec.up,
        down: rec.spec.down,
        seed: rec.spec.seed,
    };
    let emu = crate::emulator::Emulator::start(&cfg)?;
    while !stop.load(Ordering::Relaxed) && !emu.failed() {
        std::thread::sleep(Duration::from_millis(100));
    }
    emu.stop()
}
