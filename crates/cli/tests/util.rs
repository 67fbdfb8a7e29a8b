//! Helpers: running the binary, a server subprocess that is killed on drop.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use netsonde_model::spec::TestSpec;
use netsonde_proto::{Frame, FrameDecoder, Hello, Message};

/// The binary's path: private, so that every netsonde a test starts goes through
/// [`cmd`] or [`wrapped`] and runs in this process's [`sandbox`] (the compiler
/// checks that no test starts one another way).
fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_netsonde")
}

/// This test process's own folder for what netsonde writes by default: `data/`
/// is the data directory (so the default results store is
/// `data/netsonde/netsonde.db`) and `work/` the working directory (where a
/// sweep's default `netsonde-report-N/` goes). Tests must never touch the
/// user's store or working tree.
pub fn sandbox() -> &'static std::path::Path {
    static DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("netsonde-tests-{}", std::process::id()));
        for sub in ["data", "work"] {
            std::fs::create_dir_all(dir.join(sub)).expect("create the test sandbox");
        }
        dir
    })
}

/// Points `c` (netsonde, or a wrapper that starts it and passes its environment
/// and working directory on: `ip netns exec`, `sh`, `setpriv`) at the sandbox.
fn isolate(c: &mut Command) -> &mut Command {
    // A store named in the environment is the user's: never the tests'.
    c.env("XDG_DATA_HOME", sandbox().join("data"))
        .env_remove("NETSONDE_DB")
        .current_dir(sandbox().join("work"))
}

/// The binary, in this test process's [`sandbox`].
pub fn cmd() -> Command {
    let mut c = Command::new(bin());
    isolate(&mut c);
    c
}

/// `PROGRAM BEFORE... netsonde`, in the [`sandbox`]: netsonde started through a
/// wrapper (`ip netns exec NS`, `setpriv ...`, `sh -c 'ulimit ...; exec "$0" "$@"'`);
/// netsonde's own arguments follow with `.args`.
pub fn wrapped(program: &str, before: &[&str]) -> Command {
    let mut c = Command::new(program);
    c.args(before).arg(bin());
    isolate(&mut c);
    c
}

/// `ip netns exec NS netsonde`, in the [`sandbox`].
pub fn in_netns(ns: &str) -> Command {
    wrapped("ip", &["netns", "exec", ns])
}

/// Runs netsonde with `args`, failing the test if it takes longer than `limit`.
/// Output is drained on threads so a chatty child never blocks on a full pipe.
pub fn run(args: &[&str], limit: Duration) -> Output {
    let child = cmd()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn netsonde");
    wait_bounded(child, limit)
}

/// Waits for a netsonde process spawned with piped output, reading both pipes
/// as it runs; kills it and fails the test if it takes longer than `limit`.
pub fn wait_bounded(mut child: std::process::Child, limit: Duration) -> Output {
    let drain = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            v
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("piped stdout")));
    let err = drain(Box::new(child.stderr.take().expect("piped stderr")));
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            let err = err.join().unwrap_or_default();
            panic!(
                "netsonde hung for {limit:?}; stderr: {}",
                String::from_utf8_lossy(&err)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    }
}

/// Runs a client test with `--json` and returns the parsed document.
pub fn json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["client"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = run(&all, Duration::from_secs(60));
    assert!(
        out.status.success(),
        "netsonde {all:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON document")
}

/// Shapes `dev`'s egress in namespace `ns` to `rate` (tc's syntax: `100mbit`)
/// with a token bucket of 32 kB and 100 ms of queue.
pub fn tbf(ns: &str, dev: &str, rate: &str) {
    let out = Command::new("ip")
        .args([
            "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev, "root", "tbf",
        ])
        .args(["rate", rate, "burst", "32kb", "latency", "100ms"])
        .output()
        .expect("tc");
    assert!(
        out.status.success(),
        "tc on {dev} in {ns}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `netsonde ARGS` inside namespace `ns` (a minute at most), fails the
/// test if it fails, and returns its stdout as one JSON document.
pub fn json_in(ns: &str, args: &[&str]) -> serde_json::Value {
    let child = in_netns(ns)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn netsonde in a namespace");
    let out = wait_bounded(child, Duration::from_secs(60));
    assert!(
        out.status.success(),
        "netsonde {args:?} in {ns}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON document")
}

/// A `netsonde server` subprocess on a free port, killed on drop. Its log lines
/// are kept in `log`.
pub struct ServerProc {
    pub child: Child,
    pub port: u16,
    pub log: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl ServerProc {
    pub fn start() -> ServerProc {
        ServerProc::start_with(&[])
    }

    /// Starts a server with extra arguments.
    pub fn start_with(extra: &[&str]) -> ServerProc {
        // Ask the kernel for a free port, then hand it to the server.
        let port = free_port();
        ServerProc::start_on(port, extra)
    }

    /// Starts a server on `port` with extra arguments.
    pub fn start_on(port: u16, extra: &[&str]) -> ServerProc {
        ServerProc::start_as("server", port, extra)
    }

    /// Starts `netsonde agent` on a free port with the key at `key`.
    pub fn agent(key: &str) -> ServerProc {
        ServerProc::agent_with(key, &[])
    }

    /// Starts `netsonde agent` on a free port with the key and `extra`.
    pub fn agent_with(key: &str, extra: &[&str]) -> ServerProc {
        let port = free_port();
        let mut args = vec!["--auth-key", key];
        args.extend_from_slice(extra);
        ServerProc::start_as("agent", port, &args)
    }

    /// Starts `netsonde COMMAND` (server or agent) on `port`.
    pub fn start_as(command: &str, port: u16, extra: &[&str]) -> ServerProc {
        let p = port.to_string();
        let mut child = cmd()
            .args([command, "--port", &p])
            .args(if extra.contains(&"--bind") {
                &[][..]
            } else {
                &["--bind", "127.0.0.1"][..]
            })
            .args(extra)
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn server");
        // Wait for "listening".
        let stderr = child.stderr.take().unwrap();
        let mut lines = BufReader::new(stderr).lines();
        let first = lines.next().expect("server said something").unwrap();
        assert!(first.contains("listening"), "{first}");
        // Keep draining the log so the server never blocks on a full pipe.
        let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let keep = log.clone();
        std::thread::spawn(move || {
            for l in lines.map_while(Result::ok) {
                keep.lock().unwrap().push(l);
            }
        });
        ServerProc { child, port, log }
    }

    pub fn port(&self) -> String {
        self.port.to_string()
    }

    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Log lines so far.
    pub fn lines(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    /// Open file descriptors and threads of the server process.
    pub fn fds_and_threads(&self) -> (usize, usize) {
        let count = |d: &str| {
            std::fs::read_dir(format!("/proc/{}/{d}", self.child.id()))
                .map(|r| r.count())
                .unwrap_or(0)
        };
        (count("fd"), count("task"))
    }

    /// Peak resident memory in KiB (VmHWM).
    pub fn peak_rss_kib(&self) -> u64 {
        std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("VmHWM:"))
                    .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
            })
            .unwrap_or(0)
    }
}

impl Drop for ServerProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether we are root (namespaces, veth).
pub fn is_root() -> bool {
    nix_like_geteuid() == 0
}

fn nix_like_geteuid() -> u32 {
    // /proc/self/status: "Uid:\treal\teffective\t..."
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(str::to_string))
        })
        .and_then(|u| u.parse().ok())
        .unwrap_or(u32::MAX)
}

/// Two network namespaces this test made, joined by a veth pair; removed on drop,
/// also on panic. The server side is `NET.1`, the client side `NET.2` (a /30).
pub struct VethPair {
    /// Server namespace.
    pub server: String,
    /// Client namespace.
    pub client: String,
    /// Server-side interface (in `server`).
    pub server_dev: String,
}

impl Drop for VethPair {
    fn drop(&mut self) {
        for n in [&self.server, &self.client] {
            let _ = Command::new("ip").args(["netns", "del", n]).status();
        }
    }
}

/// Runs `ip` and fails the test if it fails.
pub fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("ip");
    assert!(
        out.status.success(),
        "ip {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl VethPair {
    /// Creates `sonde-{tag}-s{pid}` and `sonde-{tag}-c{pid}`, addresses `net.1` and
    /// `net.2`, the given MTU, links up.
    pub fn new(tag: &str, net: &str, mtu: u32) -> VethPair {
        let pid = std::process::id();
        let pair = VethPair {
            server: format!("sonde-{tag}-s{pid}"),
            client: format!("sonde-{tag}-c{pid}"),
            server_dev: format!("v{tag}s"),
        };
        let client_dev = format!("v{tag}c");
        let (a, b) = (&pair.server, &pair.client);
        ip(&["netns", "add", a]);
        ip(&["netns", "add", b]);
        ip(&[
            "link",
            "add",
            &pair.server_dev,
            "netns",
            a,
            "type",
            "veth",
            "peer",
            "name",
            &client_dev,
            "netns",
            b,
        ]);
        ip(&[
            "-n",
            a,
            "addr",
            "add",
            &format!("{net}.1/30"),
            "dev",
            &pair.server_dev,
        ]);
        ip(&[
            "-n",
            b,
            "addr",
            "add",
            &format!("{net}.2/30"),
            "dev",
            &client_dev,
        ]);
        let mtu = mtu.to_string();
        for (ns, dev) in [(a, &pair.server_dev), (b, &client_dev)] {
            ip(&["-n", ns, "link", "set", dev, "mtu", &mtu, "up"]);
            ip(&["-n", ns, "link", "set", "lo", "up"]);
        }
        pair
    }
}

/// Starts `netsonde server` inside a namespace and waits until it listens; killed
/// on drop.
pub struct NsServer(pub Child);

impl NsServer {
    pub fn start(ns: &str, bind: &str) -> NsServer {
        NsServer::start_as(ns, "server", bind, &[])
    }

    /// `netsonde COMMAND` (server or agent) in `ns` on port 5300.
    pub fn start_as(ns: &str, command: &str, bind: &str, extra: &[&str]) -> NsServer {
        let mut child = in_netns(ns)
            .args([command, "--bind", bind, "--port", "5300"])
            .args(extra)
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn server in namespace");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let first = lines.next().and_then(Result::ok).unwrap_or_default();
        assert!(
            first.contains("listening"),
            "server in {ns} did not start: {first}"
        );
        std::thread::spawn(move || lines.for_each(drop));
        NsServer(child)
    }
}

impl Drop for NsServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A raw protocol client for misbehaving on purpose.
pub struct Raw {
    pub s: TcpStream,
    dec: FrameDecoder,
}

impl Raw {
    pub fn connect(addr: &str) -> Raw {
        let s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        Raw {
            s,
            dec: FrameDecoder::new(),
        }
    }
    pub fn send(&mut self, f: Frame) {
        let _ = self.s.write_all(&f.to_bytes());
    }
    pub fn recv(&mut self) -> Option<Frame> {
        let mut buf = [0u8; 4096];
        loop {
            if let Ok(Some(f)) = self.dec.next_frame() {
                return Some(f);
            }
            match self.s.read(&mut buf) {
                Ok(0) | Err(_) => return None,
                Ok(n) => self.dec.push(&buf[..n]),
            }
        }
    }
    /// Hello and setup; returns the server's answer to the setup.
    pub fn setup_reply(&mut self, spec: TestSpec) -> Option<Frame> {
        self.send(Frame::Hello(Hello::ours()));
        assert!(matches!(self.recv(), Some(Frame::Hello(_))));
        self.send(Frame::Message(Message::Setup {
            spec: Box::new(spec),
        }));
        self.recv()
    }
    /// Hello and setup; returns the setup-ack.
    pub fn setup(&mut self, spec: TestSpec) -> netsonde_proto::SetupAck {
        self.send(Frame::Hello(Hello::ours()));
        assert!(matches!(self.recv(), Some(Frame::Hello(_))));
        self.send(Frame::Message(Message::Setup {
            spec: Box::new(spec),
        }));
        match self.recv() {
            Some(Frame::Message(Message::SetupAck(a))) => *a,
            other => panic!("{other:?}"),
        }
    }
    /// Waits for the server to close (or an error frame and close).
    pub fn closed_within(&mut self, limit: Duration) -> bool {
        let start = Instant::now();
        self.s
            .set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let mut buf = [0u8; 256];
        while start.elapsed() < limit {
            match self.s.read(&mut buf) {
                Ok(0) => return true,
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
                _ => {}
            }
        }
        false
    }
}

/// Strategies `netsonde caps` says this host supports.
pub fn supported() -> Vec<String> {
    let out = run(&["caps"], Duration::from_secs(30));
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let mut yes = Vec::new();
    for line in text.lines().skip(1) {
        let mut w = line.split_whitespace();
        match (w.next(), w.next()) {
            (Some(name), Some("yes")) => yes.push(name.to_string()),
            (Some(name), _) => eprintln!("SKIPPED strategy {name}: {line}"),
            _ => {}
        }
    }
    yes
}

/// A port no one listens on now (the kernel's pick, released at once).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The sockets in a descriptor table (`/proc/PID[/task/TID]/fd`), each once
/// however many descriptors it has, and whether the table holds anything but
/// sockets above standard error. A receiving flow thread's own `schedstat`,
/// which it opens, reads and closes at a stretch without data
/// (`engine::stall`), is neither.
pub fn sockets_in(fd_dir: &std::path::Path) -> (Vec<String>, bool) {
    let (mut socks, mut other) = (Vec::new(), false);
    for e in std::fs::read_dir(fd_dir).into_iter().flatten().flatten() {
        let target = std::fs::read_link(e.path()).unwrap_or_default();
        let target = target.to_string_lossy();
        let fd: u32 = e.file_name().to_string_lossy().parse().unwrap_or(0);
        let own_wait = target.starts_with("/proc/") && target.ends_with("/schedstat");
        match target.strip_prefix("socket:") {
            Some(inode) => socks.push(inode.to_string()),
            None => other |= fd > 2 && !own_wait,
        }
    }
    socks.sort();
    socks.dedup();
    (socks, other)
}

/// How contended this host's cores were while a test ran: a thread samples the
/// kernel's count of runnable tasks (`procs_running` in /proc/stat) every 20 ms,
/// for at most ten minutes. A UDP sender's pace and a receiver's loss are
/// physics on an idle host and the other work's on a contended one (CI's
/// parallel suite: an iperf3 client at 0.85 of its 200 Mbit/s, 10-13% lost).
pub struct Contention {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    sampler: Option<std::thread::JoinHandle<(u64, u64)>>,
}

impl Contention {
    /// Starts sampling.
    pub fn start() -> Contention {
        use std::sync::atomic::Ordering;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let sampler = std::thread::spawn(move || {
            let until = Instant::now() + Duration::from_secs(600);
            let (mut sum, mut n) = (0u64, 0u64);
            while !flag.load(Ordering::Relaxed) && Instant::now() < until {
                let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
                let running = stat
                    .lines()
                    .find_map(|l| l.strip_prefix("procs_running "))
                    .and_then(|v| v.trim().parse::<u64>().ok());
                if let Some(r) = running {
                    // This sampler is running while it reads.
                    sum += r.saturating_sub(1);
                    n += 1;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            (sum, n)
        });
        Contention {
            stop,
            sampler: Some(sampler),
        }
    }

    /// Stops sampling: the mean number of runnable tasks, per core this process
    /// may use (above 1, tasks waited for cores), and whether it was above 1.
    pub fn stop(mut self) -> (f64, bool) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let (sum, n) = self
            .sampler
            .take()
            .and_then(|s| s.join().ok())
            .unwrap_or((0, 0));
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get()) as f64;
        let per_core = if n == 0 {
            0.0
        } else {
            sum as f64 / n as f64 / cores
        };
        (per_core, per_core > 1.0)
    }
}

impl Drop for Contention {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// A paced UDP sender's rate against the rate asked. Both tools' pacers forgive
/// lateness beyond a few milliseconds rather than burst to make it up, so on a VM
/// whose vCPUs the hypervisor takes in slices (steal) they fall behind: up to 7%
/// seen on this project's VM. What each end counted of the same stream is held
/// to 5% by `close`; the rate only to 15% below, and on a host whose cores were
/// contended while it ran ([`Contention`]) not from below at all: there the
/// sender waited for a core (CI's parallel suite: 0.85 and 0.69 of the rate).
/// Never above the rate.
pub fn paced(got: f64, asked: f64, what: &str, contended: bool) {
    let r = got / asked;
    if contended && r < 0.85 {
        eprintln!("{what}: {r:.3} of the rate, on a host whose cores were contended");
        assert!(r <= 1.05, "{what}: {got} vs {asked} ({r:.3})");
        return;
    }
    assert!(
        (0.85..=1.05).contains(&r),
        "{what}: {got} vs {asked} ({r:.3})"
    );
}

/// The loss a paced UDP stream on loopback may show: under 5% on a host with
/// cores to spare; any share on a contended one, where the receiver waited for
/// a core while its buffer overflowed.
pub fn loss_ok(lost_pct: f64, what: &str, contended: bool) {
    assert!(
        (0.0..=100.0).contains(&lost_pct),
        "{what}: {lost_pct}% lost"
    );
    if contended {
        eprintln!("{what}: {lost_pct:.2}% lost, on a host whose cores were contended");
    } else {
        assert!(lost_pct < 5.0, "{what}: {lost_pct}% lost");
    }
}
