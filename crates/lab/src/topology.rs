//! A lab: two network namespaces (`sonde-NAME-cli`, `sonde-NAME-srv`) joined by
//! one link, `sonde0` in each, with the client at 10.77.0.2 and the server at
//! 10.77.0.1 (a /30). The link is a veth pair shaped by tbf/htb (or netem), or a
//! TUN device in each namespace joined by the userspace emulator. A lab may have
//! a second path for MPTCP ([`crate::second_path`]).
//!
//! [`Lab::create`] writes the state file first and then makes the namespaces;
//! [`Lab::apply`] builds the link and rebuilds only what a new [`LinkSpec`]
//! changes; [`Lab::spawn`] starts a process inside a namespace and records it;
//! dropping a [`Lab`] tears everything down (processes, emulator, namespaces,
//! state), also on error and panic. [`Lab::keep`] leaves a `lab up` lab running.

use std::fs::File;
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use netsonde_model::link::{DirLink, LinkRecord, LinkSpec, Mechanism, MechanismChoice, Shaper};

use crate::cmd::{ethtool_in, ip, ip_in, tc_in};
use crate::emulator::{Emulator, EmulatorConfig};
use crate::error::{LabError, Result};
use crate::state::{Kind, LabState, ProcId, Started, StateDir, STATE_VERSION};
use crate::{probe, qdisc, second_path};

/// Every namespace the lab makes starts with this.
pub const PREFIX: &str = "sonde-";
/// The link's interface name inside each namespace.
pub const DEV: &str = "sonde0";
/// The server's address.
pub const SERVER_ADDR: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 1);
/// The client's address.
pub const CLIENT_ADDR: Ipv4Addr = Ipv4Addr::new(10, 77, 0, 2);
/// Packets a TUN device queues before the emulator reads them.
const TUN_QUEUE: &str = "2000";

/// Which host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The client host.
    Client,
    /// The server host.
    Server,
}

/// Checks a lab name: 1 to 16 of `a-z`, `0-9`, `-`.
pub fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 16
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(LabError::BadName(name.into()))
    }
}

/// The namespace names of lab `name`.
pub fn namespaces_of(name: &str) -> [String; 2] {
    [format!("{PREFIX}{name}-cli"), format!("{PREFIX}{name}-srv")]
}

/// The link as built.
#[derive(Debug)]
struct Built {
    record: LinkRecord,
}

/// A lab. Torn down on drop unless [`Lab::keep`] was called.
#[derive(Debug)]
pub struct Lab {
    dir: StateDir,
    state: LabState,
    /// The mechanism, fixed for the lab's life so that sweep points compare.
    mechanism: Option<Mechanism>,
    built: Option<Built>,
    emulator: Option<Emulator>,
    /// Whether [`Lab::apply`] runs the emulator in this process (`lab run`), or
    /// leaves it to a daemon (`lab up`).
    emulate_here: bool,
    netem: Option<bool>,
    done: bool,
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Lab {
    /// Makes lab `name`: checks privileges and tools, takes the state directory's
    /// lock, refuses a name in use or a namespace it did not make, writes the state
    /// file, then creates the namespaces with loopback up.
    pub fn create(dir: &StateDir, name: &str, kind: Kind) -> Result<Lab> {
        let names = namespaces_of(name);
        let (state, _lock) = claim(dir, name, kind, names.to_vec())?;
        let lab = Lab {
            dir: dir.clone(),
            state,
            mechanism: None,
            built: None,
            emulator: None,
            emulate_here: true,
            netem: None,
            done: false,
        };
        for ns in &names {
            ip(&["netns", "add", ns])?;
            ip_in(ns, &["link", "set", "lo", "up"])?;
        }
        Ok(lab)
    }

    /// The lab's name.
    pub fn name(&self) -> &str {
        &self.state.name
    }

    /// A host's namespace.
    pub fn namespace(&self, side: Side) -> &str {
        &self.state.namespaces[match side {
            Side::Client => 0,
            Side::Server => 1,
        }]
    }

    /// The control socket path for this lab.
    pub fn socket_path(&self) -> PathBuf {
        self.dir.socket_path(&self.state.name)
    }

    /// Leaves the emulator to a separate process (`lab up`).
    pub fn emulate_elsewhere(&mut self) {
        self.emulate_here = false;
    }

    /// Whether the kernel has netem (probed once, inside this lab's namespace).
    pub fn has_netem(&mut self) -> bool {
        if self.netem.is_none() {
            self.netem = Some(probe::netem(self.namespace(Side::Client)));
        }
        self.netem == Some(true)
    }

    /// Fixes the mechanism for the lab's life. `impaired_anywhere` says whether any
    /// link the lab will apply (a sweep's axes included) needs delay, jitter, loss,
    /// reordering or duplication.
    pub fn choose(&mut self, spec: &LinkSpec, impaired_anywhere: bool) -> Result<Mechanism> {
        let impaired = impaired_anywhere || spec.impaired();
        let m = match spec.mechanism {
            MechanismChoice::Emulator => Mechanism::Emulator,
            _ if !impaired => Mechanism::Veth,
            MechanismChoice::Kernel => {
                if self.has_netem() {
                    Mechanism::Netem
                } else {
                    return Err(LabError::Unsupported(
                        "delay, jitter, loss, reordering or duplication need netem, which this \
                         kernel lacks (CONFIG_NET_SCH_NETEM); drop --mechanism kernel to use the \
                         userspace emulator"
                            .into(),
                    ));
                }
            }
            MechanismChoice::Auto => {
                if self.has_netem() {
                    Mechanism::Netem
                } else {
                    Mechanism::Emulator
                }
            }
        };
        if m == Mechanism::Emulator {
            probe::require_tun()?;
        }
        self.mechanism = Some(m);
        Ok(m)
    }

    /// The link as built, if built.
    pub fn record(&self) -> Option<&LinkRecord> {
        self.built.as_ref().map(|b| &b.record)
    }

    /// Builds the link for `spec`, or changes the built one: only what differs is
    /// redone (nothing when `spec` is the link already built).
    pub fn apply(&mut self, spec: &LinkSpec) -> Result<LinkRecord> {
        spec.validate()?;
        let mech = match self.mechanism {
            Some(m) => m,
            None => self.choose(spec, false)?,
        };
        if let Some(b) = &self.built {
            if b.record.spec == *spec {
                return Ok(b.record.clone());
            }
        }
        let [cli, srv] = [
            self.namespace(Side::Client).to_string(),
            self.namespace(Side::Server).to_string(),
        ];
        let old = self.built.as_ref().map(|b| b.record.spec.clone());
        if old
            .as_ref()
            .is_some_and(|o| o.second.is_some() != spec.second.is_some())
        {
            return Err(LabError::Unsupported(
                "a lab's second path is made with the lab; a sweep point cannot add or remove it"
                    .into(),
            ));
        }
        if old.is_none() && spec.second.is_some() && !second_path::mptcp_enabled() {
            return Err(LabError::Unsupported(second_path::NO_MPTCP.into()));
        }
        self.built = None;
        if old.is_none() {
            self.make_devices(mech, &cli, &srv)?;
            if spec.second.is_some() {
                second_path::make(&cli, &srv)?;
            }
        }
        let mtu_changed = old
            .as_ref()
            .is_none_or(|o| o.up.mtu != spec.up.mtu || o.down.mtu != spec.down.mtu);
        if mtu_changed {
            ip_in(
                &cli,
                &["link", "set", DEV, "mtu", &spec.up.mtu.to_string(), "up"],
            )?;
            ip_in(
                &srv,
                &["link", "set", DEV, "mtu", &spec.down.mtu.to_string(), "up"],
            )?;
        }
        let offloads_changed = old
            .as_ref()
            .map_or(!(spec.up.offloads && spec.down.offloads), |o| {
                o.up.offloads != spec.up.offloads || o.down.offloads != spec.down.offloads
            });
        if offloads_changed && mech != Mechanism::Emulator {
            set_offloads(&cli, &srv, spec)?;
        }
        let detail = match mech {
            Mechanism::Veth | Mechanism::Netem => {
                let mut parts = Vec::new();
                for (ns, d) in [(&cli, &spec.up), (&srv, &spec.down)] {
                    let cmds = if mech == Mechanism::Netem {
                        vec![qdisc::netem(DEV, d)]
                    } else {
                        qdisc::shaper(DEV, d, spec.shaper)
                    };
                    let _ = tc_in(ns, &qdisc::clear(DEV));
                    for c in &cmds {
                        tc_in(ns, c)?;
                    }
                    parts.push(if cmds.is_empty() {
                        "no qdisc".to_string()
                    } else if mech == Mechanism::Veth && spec.shaper == Shaper::Htb {
                        format!("{} ({})", cmds[0][4..].join(" "), qdisc::HTB_CAVEAT)
                    } else {
                        cmds[0][4..].join(" ")
                    });
                }
                let off = |d: &DirLink| if d.offloads { "" } else { ", offloads off" };
                format!(
                    "veth {DEV}; client->server: {}{}; server->client: {}{}",
                    parts[0],
                    off(&spec.up),
                    parts[1],
                    off(&spec.down)
                )
            }
            Mechanism::Emulator => {
                if let Some(e) = self.emulator.take() {
                    e.stop()?;
                }
                if self.emulate_here {
                    self.emulator = Some(Emulator::start(&self.emulator_config(spec))?);
                }
                format!(
                    "TUN {DEV} in each namespace, userspace emulator (seed {}, per-direction random sources)",
                    spec.seed
                )
            }
        };
        let detail = match &spec.second {
            Some(p) => {
                let change = old.as_ref().is_none_or(|o| {
                    o.second != spec.second
                        || o.up.mtu != spec.up.mtu
                        || o.down.mtu != spec.down.mtu
                });
                format!(
                    "{detail}; {}",
                    second_path::shape(&cli, &srv, p, spec, change)?
                )
            }
            None => detail,
        };
        let record = LinkRecord {
            spec: spec.clone(),
            mechanism: mech,
            detail,
        };
        self.state.link = Some(record.clone());
        self.state.save(&self.dir)?;
        self.built = Some(Built {
            record: record.clone(),
        });
        Ok(record)
    }

    /// Where the emulator for `spec` attaches.
    pub fn emulator_config(&self, spec: &LinkSpec) -> EmulatorConfig {
        EmulatorConfig {
            client_ns: self.namespace(Side::Client).into(),
            server_ns: self.namespace(Side::Server).into(),
            dev: DEV.into(),
            up: spec.up,
            down: spec.down,
            seed: spec.seed,
        }
    }

    /// Whether the in-process emulator has stopped by itself (an error).
    pub fn emulator_failed(&self) -> bool {
        self.emulator.as_ref().is_some_and(Emulator::failed)
    }

    /// The in-process emulator's counters.
    pub fn emulator_stats(&self) -> Option<crate::emulator::EmulatorStats> {
        self.emulator.as_ref().map(Emulator::stats)
    }

    fn make_devices(&mut self, mech: Mechanism, cli: &str, srv: &str) -> Result<()> {
        match mech {
            Mechanism::Veth | Mechanism::Netem => {
                ip(&[
                    "link", "add", DEV, "netns", cli, "type", "veth", "peer", "name", DEV, "netns",
                    srv,
                ])?;
            }
            Mechanism::Emulator => {
                for ns in [cli, srv] {
                    ip_in(ns, &["tuntap", "add", "dev", DEV, "mode", "tun"])?;
                    // The device's own queue, before the emulator reads: deep enough
                    // that a burst the emulator takes a moment to drain is not
                    // dropped there (500 by default). The emulated queue is the
                    // emulator's.
                    ip_in(ns, &["link", "set", DEV, "txqueuelen", TUN_QUEUE])?;
                }
            }
        }
        for (ns, addr) in [(cli, CLIENT_ADDR), (srv, SERVER_ADDR)] {
            // No IPv6 link-local address: no router or neighbour chatter on the link.
            let _ = ip_in(ns, &["link", "set", DEV, "addrgenmode", "none"]);
            ip_in(ns, &["addr", "add", &format!("{addr}/30"), "dev", DEV])?;
        }
        Ok(())
    }

    /// Starts `args` (a netsonde command line) inside `side`'s namespace as `ip
    /// netns exec NS <this executable> args...`, records it in the state file, and
    /// returns it. `daemon` processes (for `lab up`) get their own session and no
    /// terminal; the others are killed when this process's calling thread ends,
    /// even by SIGKILL.
    pub fn spawn(
        &mut self,
        side: Side,
        role: &str,
        args: &[String],
        env: &[(String, String)],
        daemon: bool,
        configure: impl FnOnce(&mut Command),
    ) -> Result<Child> {
        let ns = self.namespace(side).to_string();
        let how = Spawn {
            role,
            args,
            env,
            daemon,
        };
        spawn_recorded(&self.dir, &mut self.state, &ns, how, configure)
    }

    /// Waits until the emulator process `emu` has attached to the link (the
    /// server's TUN device has a reader: its carrier is up), at most `within`.
    /// An emulator that exits first, or never attaches, is an error.
    pub fn wait_attached(&self, emu: &mut Child, within: Duration) -> Result<()> {
        let end = Instant::now() + within;
        loop {
            if let Some(st) = emu
                .try_wait()
                .map_err(|e| LabError::io("waiting for the emulator", e))?
            {
                return Err(LabError::EmulatorStart(format!("it exited ({st})")));
            }
            let shown = ip_in(self.namespace(Side::Server), &["link", "show", DEV])?;
            if shown.contains("LOWER_UP") {
                return Ok(());
            }
            if Instant::now() > end {
                return Err(LabError::EmulatorStart(format!(
                    "it did not attach within {} s",
                    within.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Leaves the lab in place (`lab up`): nothing is torn down on drop.
    pub fn keep(mut self) {
        self.done = true;
    }

    /// Tears the lab down now and reports the first error.
    pub fn down(mut self) -> Result<()> {
        self.done = true;
        let emu = self.emulator.take().map(Emulator::stop);
        let r = teardown(&self.dir, &self.state);
        if let Some(Err(e)) = emu {
            return Err(e);
        }
        r
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        if !self.done {
            self.done = true;
            drop(self.emulator.take());
            if let Err(e) = teardown(&self.dir, &self.state) {
                eprintln!("netsonde lab: tearing down '{}': {e}", self.state.name);
            }
        }
    }
}

/// Claims lab `name` for `namespaces`: checks the name, privileges and tools,
/// takes the state directory's lock (returned: hold it while making the lab),
/// refuses a name in use or a namespace it did not make, and writes the state
/// file before anything is made.
pub(crate) fn claim(
    dir: &StateDir,
    name: &str,
    kind: Kind,
    namespaces: Vec<String>,
) -> Result<(LabState, File)> {
    check_name(name)?;
    probe::require_root()?;
    probe::require_tools()?;
    let lock = dir.lock()?;
    let path = dir.state_path(name);
    if path.exists() {
        let why = match LabState::load(&path) {
            Ok(s) if s.in_use() => format!("in use by process {}", s.owner.pid),
            Ok(s) if s.kind == Kind::Up => {
                format!("made by `lab up`; remove it with `netsonde lab down {name}`")
            }
            Ok(_) => "left by a killed run; `netsonde lab clean` removes it".into(),
            Err(e) => e.to_string(),
        };
        return Err(LabError::Exists {
            name: name.into(),
            why,
        });
    }
    let existing = crate::cmd::namespaces()?;
    if let Some(n) = namespaces.iter().find(|n| existing.contains(n)) {
        return Err(LabError::Exists {
            name: name.into(),
            why: format!("namespace {n} exists and this lab did not make it; it is left alone"),
        });
    }
    let state = LabState {
        version: STATE_VERSION,
        name: name.into(),
        kind,
        owner: ProcId::me(),
        namespaces,
        processes: Vec::new(),
        link: None,
        created_at: unix_now(),
    };
    state.save(dir)?;
    Ok((state, lock))
}

/// What to start inside a namespace.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Spawn<'a> {
    /// What it is, for the state file and errors (`server`, `agent h2`).
    pub role: &'a str,
    /// The netsonde command line.
    pub args: &'a [String],
    /// Its environment, beyond this process's.
    pub env: &'a [(String, String)],
    /// A daemon (`lab up`) gets its own session and no terminal; anything else
    /// dies with this process's calling thread, even by SIGKILL.
    pub daemon: bool,
}

/// Starts `how.args` inside namespace `ns` as `ip netns exec NS <this
/// executable> args...` and records it in `state` (saved to `dir`), so a
/// teardown or `lab clean` stops it.
pub(crate) fn spawn_recorded(
    dir: &StateDir,
    state: &mut LabState,
    ns: &str,
    how: Spawn<'_>,
    configure: impl FnOnce(&mut Command),
) -> Result<Child> {
    let exe = std::env::current_exe().map_err(|e| LabError::io("finding this executable", e))?;
    let mut cmd = Command::new("ip");
    cmd.args(["netns", "exec", ns])
        .arg(exe)
        .args(how.args)
        .envs(how.env.iter().map(|(k, v)| (k, v)));
    if how.daemon {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
    } else {
        crate::sys::die_with_parent(&mut cmd);
    }
    configure(&mut cmd);
    let child = cmd
        .spawn()
        .map_err(|e| LabError::io(format!("starting the {}", how.role), e))?;
    if let Some(p) = ProcId::of(child.id()) {
        state.processes.push(Started {
            role: how.role.into(),
            proc: p,
        });
        state.save(dir)?;
    }
    Ok(child)
}

/// Sends SIGTERM to a child this process started (by PID).
pub fn terminate(pid: u32) {
    if let Some(pid) = rustix::process::Pid::from_raw(pid as i32) {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
    }
}

/// Stops a recorded process: SIGTERM, then SIGKILL after `grace`. Only if it is
/// still the very process the lab started (same PID and start time).
pub fn stop_process(p: &ProcId, grace: Duration) {
    use rustix::process::{kill_process, Pid, Signal};
    let Some(pid) = Pid::from_raw(p.pid as i32) else {
        return;
    };
    if !p.alive() {
        return;
    }
    let _ = kill_process(pid, Signal::TERM);
    let end = Instant::now() + grace;
    while p.alive() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(10));
    }
    if p.alive() {
        let _ = kill_process(pid, Signal::KILL);
        let end = Instant::now() + Duration::from_secs(1);
        while p.alive() && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Removes what a state file records: its processes (if still the same
/// processes), its namespaces (only names the lab gives, `sonde-...`), its socket
/// and the state file itself. Carries on past errors and returns the first.
pub fn teardown(dir: &StateDir, state: &LabState) -> Result<()> {
    let mut first: Option<LabError> = None;
    for p in state.processes.iter().rev() {
        stop_process(&p.proc, Duration::from_secs(3));
    }
    let existing = crate::cmd::namespaces().unwrap_or_default();
    for ns in &state.namespaces {
        if !ns.starts_with(PREFIX) || !existing.contains(ns) {
            continue;
        }
        if let Err(e) = ip(&["netns", "del", ns]) {
            first.get_or_insert(e);
        }
    }
    let _ = std::fs::remove_file(dir.socket_path(&state.name));
    if let Err(e) = std::fs::remove_file(dir.state_path(&state.name)) {
        if e.kind() != std::io::ErrorKind::NotFound {
            first.get_or_insert(LabError::io("removing the state file", e));
        }
    }
    first.map_or(Ok(()), Err)
}

/// What [`clean`] did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CleanReport {
    /// Labs removed, with their namespaces.
    pub removed: Vec<(String, Vec<String>)>,
    /// Labs left alone, and why.
    pub kept: Vec<(String, String)>,
    /// `sonde*` namespaces no state file claims: not the lab's, left alone.
    pub foreign: Vec<String>,
    /// Errors met on the way.
    pub errors: Vec<String>,
    /// Host settings a killed run had changed, put back
    /// ([`crate::host_settings::restore_orphans`]).
    pub restored: Vec<String>,
}

impl std::fmt::Display for CleanReport {
    /// What `lab clean` says: a line per lab removed, kept or foreign
    /// namespace left alone; "nothing to clean" when nothing was removed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (name, ns) in &self.removed {
            writeln!(f, "removed lab {name} ({})", ns.join(", "))?;
        }
        for (name, why) in &self.kept {
            writeln!(f, "kept lab {name}: {why}")?;
        }
        for ns in &self.foreign {
            writeln!(f, "left alone: namespace {ns} (not made by the lab)")?;
        }
        for r in &self.restored {
            writeln!(f, "host setting: {r}")?;
        }
        if self.removed.is_empty() && self.restored.is_empty() {
            writeln!(f, "nothing to clean")?;
        }
        Ok(())
    }
}

/// Removes leftovers: every `lab run` lab whose owner is gone (killed), and with
/// `all`, every `lab up` lab too. Labs in use are left alone, and so is every
/// namespace no state file claims, whatever its name.
pub fn clean(dir: &StateDir, all: bool) -> Result<CleanReport> {
    probe::require_root()?;
    let _lock = dir.lock()?;
    let mut rep = CleanReport {
        restored: crate::host_settings::restore_orphans(dir),
        ..CleanReport::default()
    };
    let mut claimed: Vec<String> = Vec::new();
    for (path, st) in dir.load_all() {
        let st = match st {
            Ok(s) => s,
            Err(e) => {
                rep.errors.push(format!("{}: {e}", path.display()));
                continue;
            }
        };
        claimed.extend(st.namespaces.iter().cloned());
        if st.in_use() {
            rep.kept.push((
                st.name.clone(),
                format!("in use by process {}", st.owner.pid),
            ));
            continue;
        }
        if st.kind == Kind::Up && !all {
            rep.kept.push((
                st.name.clone(),
                "made by `lab up` (`lab down NAME` or `lab clean --all`)".into(),
            ));
            continue;
        }
        match teardown(dir, &st) {
            Ok(()) => rep.removed.push((st.name.clone(), st.namespaces.clone())),
            Err(e) => rep.errors.push(format!("{}: {e}", st.name)),
        }
    }
    if let Ok(names) = crate::cmd::namespaces() {
        rep.foreign = names
            .into_iter()
            .filter(|n| n.starts_with("sonde") && !claimed.contains(n))
            .collect();
    }
    Ok(rep)
}

/// Tears down lab `name` (`lab down`): only a lab with a state file, and not one
/// a running `lab run` owns.
pub fn down(dir: &StateDir, name: &str) -> Result<LabState> {
    check_name(name)?;
    probe::require_root()?;
    let _lock = dir.lock()?;
    let path = dir.state_path(name);
    if !path.exists() {
        return Err(LabError::NoSuchLab(name.into()));
    }
    let st = LabState::load(&path)?;
    if st.in_use() {
        return Err(LabError::Exists {
            name: name.into(),
            why: format!(
                "in use by `lab run` (process {}); it tears down when that ends",
                st.owner.pid
            ),
        });
    }
    teardown(dir, &st)?;
    Ok(st)
}

/// Each direction's segmentation and receive offloads: the sending end's TSO
/// and GSO and the receiving end's GRO off, or back to a veth's defaults (TSO
/// and GSO on; GRO off, which a veth does not need: its segments arrive whole).
fn set_offloads(cli: &str, srv: &str, spec: &LinkSpec) -> Result<()> {
    let word = |on: bool| if on { "on" } else { "off" };
    for (sender, receiver, d) in [(cli, srv, &spec.up), (srv, cli, &spec.down)] {
        let v = word(d.offloads);
        ethtool_in(sender, &["-K", DEV, "tso", v, "gso", v])?;
        if !d.offloads {
            ethtool_in(receiver, &["-K", DEV, "gro", "off"])?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(check_name("r123").is_ok());
        assert!(check_name("my-lab-1").is_ok());
        for bad in ["", "Lab", "a/b", "a b", "seventeen-chars-x", "x.y"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
        assert_eq!(
            namespaces_of("x"),
            ["sonde-x-cli".to_string(), "sonde-x-srv".to_string()]
        );
    }
}
