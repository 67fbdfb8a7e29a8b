//! Command-line arguments. Parsing of units lives in `netsonde_model::units`; this
//! only maps flags onto a `TestSpec`.

use std::net::IpAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use netsonde_model::spec::{Direction, IoStrategy, TestKind, TestSpec};
use netsonde_model::units::{BitRate, Bytes, Nanos, RateUnit};

/// A usage mistake that clap's own checks cannot see (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// netsonde: how close do this host and this path get to wire speed, and why not closer?
#[derive(Debug, Parser)]
#[command(name = "netsonde", version, propagate_version = true, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
    /// Append everything this command prints (results and messages alike) to
    /// FILE instead of the terminal, as iperf3's --logfile.
    #[arg(long, global = true, value_name = "FILE")]
    pub logfile: Option<PathBuf>,
    /// More detail: a test's text report adds each end's kernel, network sysctls
    /// and interface (iperf3's -V/--verbose; here -V is --version, as elsewhere).
    #[arg(short, long, global = true)]
    pub verbose: bool,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Listen for tests (one at a time unless --max-sessions says more; others
    /// are told "busy" with the time left). Serves iperf3 clients too, on the
    /// same port (`netsonde -s` works as `netsonde server`).
    Server(ServerArgs),
    /// A server that also takes jobs from a controller (`netsonde mesh`): it runs
    /// the tests it is asked for as a client against other agents and sends back
    /// the reports. Needs --auth-key: only a holder of the key may direct it.
    Agent(AgentArgs),
    /// Measure between many hosts, each running `netsonde agent`: every ordered
    /// pair of a pattern (all-to-all, ring, star, listed pairs) runs the sweep's
    /// tests, one pair at a time, stored as one run whose points are (source,
    /// destination, test...); prints the matrix of pairs.
    Mesh(Box<MeshArgs>),
    /// Run one test against a server, or against an embedded loopback server when
    /// no HOST is given.
    Client(Box<ClientArgs>),
    /// Write a new random pre-shared key for --auth-key.
    Keygen(KeygenArgs),
    /// Which I/O strategies this host supports, probed on real sockets.
    Caps,
    /// Characterize: a grid of tests over sizes, windows, directions and streams,
    /// with repetitions, stored and reported. With no arguments, a short
    /// characterization of this host's stack on loopback.
    Sweep(Box<SweepArgs>),
    /// Run a sweep described by an experiment file (TOML, see docs/EXPERIMENTS.md).
    Run(RunArgs),
    /// Loss-free rate search (RFC 2544 throughput): per UDP frame size and I/O
    /// strategy, the highest offered rate with no loss (NDR) and with loss at or
    /// below a ratio (PDR).
    Search(Box<SearchArgs>),
    /// Browse stored runs.
    Runs(RunsArgs),
    /// Compare two runs point by point; exits 3 when RUN_B regressed beyond noise.
    Compare(CompareArgs),
    /// Write a run's report (HTML with plots, or Markdown) from the store.
    Report(ReportArgs),
    /// Rerun a reference study (000 oc48c, 001 dsnic, 002 hp-atm, 003 kisti-lfn,
    /// 004 copy-semantics): its sweeps, in the lab where it needs a link, stored;
    /// then a report that sets the seed's published figures beside today's and
    /// decides each of its findings from the data.
    Study(StudyArgs),
    /// Emulated paths on this host: namespaces joined by a link with MTU, rate,
    /// delay, jitter, loss and reordering (root).
    Lab(Box<LabArgs>),
    /// Print a shell completion script: netsonde completions bash >
    /// /usr/share/bash-completion/completions/netsonde (zsh, fish likewise).
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// Write the man pages (netsonde.1 and one per command) into DIR.
    Man {
        /// Where: e.g. /usr/local/share/man/man1.
        #[arg(default_value = ".")]
        dir: std::path::PathBuf,
    },
}

/// Options of `netsonde search`.
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// Server host. Without it, an embedded server runs on loopback in this process.
    pub host: Option<String>,
    /// Server control port.
    #[arg(short, long, default_value_t = netsonde_driver::client::DEFAULT_PORT)]
    pub port: u16,
    /// What to search: `udp`, the highest rate of datagrams with no loss; or
    /// `tcp`, the highest paced rate of one TCP connection with no
    /// retransmission (messages sent one segment each, TCP_NODELAY).
    #[arg(long, value_enum, default_value_t = SearchTest::Udp)]
    pub test: SearchTest,
    /// Ethernet frame sizes in bytes (MAC header and FCS included, as RFC 2544
    /// counts them); the UDP payload is the frame less 46 B, a TCP segment's the
    /// frame less 70 B [default: 64,128,256,512,1024,1280,1518; for tcp from 128].
    #[arg(long, value_delimiter = ',')]
    pub frames: Option<Vec<u32>>,
    /// I/O strategies to search, each on its own: copy,batch,uring,xdp,... (both
    /// ends; a strategy that only receives, xdp, sends with copy).
    #[arg(long, value_delimiter = ',', default_value = "copy", value_parser = IO)]
    pub io: Vec<IoStrategy>,
    /// One sender for every point, so the receivers of --io are compared behind it:
    /// `--tx-io batch --io copy,xdp`.
    #[arg(long, value_parser = IO)]
    pub tx_io: Option<IoStrategy>,
    /// Measured time of one trial.
    #[arg(long, default_value = "1s", value_parser = parse_time)]
    pub trial: Nanos,
    /// Warm-up before each trial's measured time (its traffic is not counted).
    #[arg(long, default_value = "250ms", value_parser = parse_time)]
    pub warmup: Nanos,
    /// Socket buffers of both ends (the kernel caps them at net.core.rmem_max and
    /// wmem_max): the tester's own receive buffer should not be what loses the
    /// packets when its thread is late by a millisecond. `default` leaves the
    /// kernel's (about 200 KB: a third of a millisecond of 1518 B frames at
    /// 10 Gbit/s).
    #[arg(short = 'w', long, default_value = "4M")]
    pub window: String,
    /// The bounds' width, relative to the rate, at which a rate counts as found.
    #[arg(long, default_value = "1%", value_parser = parse_ratio)]
    pub precision: f64,
    /// PDR's loss ratio: the highest rate losing at most this share.
    #[arg(long, default_value = "0.5%", value_parser = parse_ratio)]
    pub pdr_loss: f64,
    /// Trials at the NDR found that must lose nothing.
    #[arg(long, default_value_t = 2)]
    pub final_trials: u32,
    /// At most this many trials per frame size and strategy (and as many bursts
    /// with --back-to-back).
    #[arg(long, default_value_t = 40)]
    pub max_trials: u32,
    /// Also find the longest burst at the sender's full rate that loses nothing
    /// (RFC 2544 §26.4 back-to-back frames), after NDR and PDR.
    #[arg(long)]
    pub back_to_back: bool,
    /// Also measure latency beside a load at 10, 50, 90 and 100% of the NDR found
    /// (RFC 2544 §26.2): UDP probes echoed by the server, 100 a second, alone for
    /// 0.5 s and then beside at least 2 s of the load; round-trip percentiles and
    /// the one-way delay on one clock.
    #[arg(long)]
    pub latency: bool,
    /// Search each frame size and strategy this many times, one search after
    /// another: one search's rate moves between runs (on loopback by 10% and
    /// more), so `compare` judges two searches by their repeats (5 a side let it
    /// judge a table of 7 sizes).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: u32,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
    /// A label for the stored run.
    #[arg(long, default_value = "search")]
    pub label: String,
    /// Go on with a stored search that was interrupted or left incomplete (run id,
    /// or `last`): its trials so far are kept and its searches pick up from them.
    #[arg(long, value_name = "RUN")]
    pub resume: Option<String>,
    #[command(flatten)]
    pub common: SweepCommon,
}

/// What `netsonde search` searches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SearchTest {
    /// UDP datagrams: loss is datagrams that never arrived.
    Udp,
    /// One TCP connection: loss is retransmitted segments.
    Tcp,
}

/// A ratio as `0.5%` or `0.005`.
fn parse_ratio(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
        None => t.parse::<f64>(),
    }
    .map_err(|_| format!("not a ratio: '{s}' (0.5% or 0.005)"))?;
    if (0.0..1.0).contains(&v) {
        Ok(v)
    } else if t.ends_with('%') || v < 0.0 {
        Err(format!(
            "a ratio must be at least 0 and below 100%, got '{s}'"
        ))
    } else {
        Err(format!(
            "'{s}' is {}% as a ratio; write {s}% for {s} percent (or {})",
            v * 100.0,
            v / 100.0
        ))
    }
}

/// Options shared by every command that touches the store or writes a report.
#[derive(Debug, Args)]
pub struct StoreArgs {
    /// Results database: a SQLite file (default: the platform data directory,
    /// netsonde/netsonde.db) or a shared PostgreSQL database, postgres://USER@HOST:PORT/DB
    /// (password from PGPASSWORD).
    #[arg(long, value_name = "PATH|URL", global = true)]
    pub db: Option<netsonde_store::Location>,
}

/// Options of sweeps, from the command line or a file.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Server host. Without it, an embedded server runs on loopback.
    pub host: Option<String>,
    /// Server control port [default: 5300; 5201 with --peer iperf3].
    #[arg(short, long)]
    pub port: Option<u16>,
    /// Tests: tcp-stream,udp-stream,tcp-rr,udp-rr,tcp-crr.
    #[arg(long)]
    pub tests: Option<String>,
    /// Directions: out,in,bidir.
    #[arg(long)]
    pub directions: Option<String>,
    /// Message sizes: 64,256,1K..64K (x2 steps), 1K..1M*4, 1K..8K+1K.
    #[arg(long)]
    pub sizes: Option<String>,
    /// Windows: default,64K,256K.
    #[arg(long)]
    pub windows: Option<String>,
    /// Parallel streams: 1,2,4.
    #[arg(long)]
    pub parallel: Option<String>,
    /// I/O strategies to compare: copy,batch,zerocopy,uring,auto (see `netsonde caps`).
    #[arg(long)]
    pub io: Option<String>,
    /// Pacing per stream, an axis on any path: 100M,1G,0 (0: unpaced; stream tests).
    #[arg(long)]
    pub pacing: Option<String>,
    /// Repetitions per point.
    #[arg(long)]
    pub repeat: Option<u32>,
    /// Measured time per repetition.
    #[arg(short = 't', long)]
    pub time: Option<String>,
    /// Warm-up per repetition.
    #[arg(long)]
    pub warmup: Option<String>,
    /// Seed of the randomised run order.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Line rate for efficiency figures: 10G.
    #[arg(long)]
    pub line_rate: Option<String>,
    /// A label for `runs list`.
    #[arg(long)]
    pub label: Option<String>,
    /// Lab link axis (inside `netsonde lab run`): MTUs, 1500,9000,65535.
    #[arg(long)]
    pub mtus: Option<String>,
    /// Lab link axis: rates, 100M,1G (0 is unlimited).
    #[arg(long)]
    pub rates: Option<String>,
    /// Lab link axis: one-way delays each way, 0,10ms,100ms.
    #[arg(long)]
    pub delays: Option<String>,
    /// Lab link axis: random losses each way, 0,1% (Gilbert-Elliott in a file).
    #[arg(long)]
    pub losses: Option<String>,
    /// Lab link axis: bottleneck queues each way, 10p,1000p (packets), 64K
    /// (bytes) or 5ms,50ms (time at the rate).
    #[arg(long)]
    pub queues: Option<String>,
    /// Finish an interrupted run (number or `latest`).
    #[arg(long, value_name = "RUN", conflicts_with_all = ["tests", "directions", "sizes", "windows", "parallel", "repeat", "time", "warmup", "seed", "line_rate", "mtus", "rates", "delays", "losses", "queues"])]
    pub resume: Option<String>,
    #[command(flatten)]
    pub common: SweepCommon,
}

/// `netsonde mesh`.
#[derive(Debug, Args)]
pub struct MeshArgs {
    /// Agents, `NAME=HOST[:PORT]` (repeat the flag or separate with commas);
    /// the name is the host when none is given.
    #[arg(long = "agent", value_delimiter = ',', value_name = "NAME=HOST[:PORT]")]
    pub agents: Vec<String>,
    /// A file of agents, one `NAME=HOST[:PORT]` per line (# starts a comment).
    #[arg(long, value_name = "FILE")]
    pub agents_file: Option<std::path::PathBuf>,
    /// Every address this name resolves to is an agent, named by its address:
    /// a Kubernetes headless Service in front of the agents' DaemonSet
    /// (`netsonde-agents.netsonde.svc:5300`; see deploy/kubernetes).
    #[arg(long, value_name = "NAME[:PORT]")]
    pub agents_dns: Option<String>,
    /// Which ordered pairs run: all-to-all, ring, star:NAME (every other agent
    /// to NAME) or pairs:SRC-DST,SRC-DST.
    #[arg(long, default_value = "all-to-all")]
    pub pattern: String,
    /// Run up to N pairs at once, never two that share an agent, each round
    /// started at one moment (the hosts' clocks synchronised, NTP or PTP); the
    /// start skew each round measured is stored with its tests. 1: one pair
    /// at a time.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub concurrency: u32,
    /// Run a mesh whose measuring time is estimated at over an hour.
    #[arg(long)]
    pub yes: bool,
    /// Serve OpenMetrics on `http://ADDR/metrics` while the mesh runs: the last
    /// result of each pair and test (goodput, latency, loss, CPU per KiB,
    /// verdict), as an agent's `--metrics` serves its own jobs'.
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<std::net::SocketAddr>,
    /// Tests, directions, sizes, repetitions, times, as `netsonde sweep` takes
    /// them; --port is the agents' control port where an agent names none, and
    /// there is no HOST.
    #[command(flatten)]
    pub sweep: SweepArgs,
}

/// Where a sweep's results go.
#[derive(Debug, Args)]
pub struct SweepCommon {
    #[command(flatten)]
    pub store: StoreArgs,
    /// Report folder (default netsonde-report-RUN).
    #[arg(long, value_name = "DIR")]
    pub out: Option<std::path::PathBuf>,
    /// Do not write a report.
    #[arg(long)]
    pub no_report: bool,
    /// Measurement engine: `real`, or `fake` (scripted, deterministic; for tests).
    #[arg(long, default_value = "real", hide = true, value_parser = ["real", "fake"])]
    pub engine: String,
    /// Authenticate with this pre-shared key.
    #[arg(long, value_name = "FILE")]
    pub auth_key: Option<std::path::PathBuf>,
    /// Delay per fake repetition in milliseconds (tests).
    #[arg(long, default_value_t = 0, hide = true)]
    pub fake_delay_ms: u64,
    /// Fake engine speed factor (tests: 0.8 is a 20% regression).
    #[arg(long, default_value_t = 1.0, hide = true)]
    pub fake_scale: f64,
    /// What the server is: netsonde, or an unmodified `iperf3 -s` (stream
    /// tests with whole-second times; other points are skipped with why), so
    /// a fleet with only iperf3 installed can be characterised.
    #[arg(long, value_enum, default_value = "netsonde")]
    pub peer: PeerArg,
}

/// `netsonde run FILE.toml`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The experiment file.
    pub file: std::path::PathBuf,
    #[command(flatten)]
    pub common: SweepCommon,
}

/// `netsonde runs ...`.
#[derive(Debug, Args)]
pub struct RunsArgs {
    #[command(subcommand)]
    pub command: RunsCommand,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Run browsing.
#[derive(Debug, Subcommand)]
pub enum RunsCommand {
    /// One line per run, newest first.
    List,
    /// A run's tables (Markdown).
    Show {
        /// Run number or `latest`.
        run: String,
    },
    /// A run's points and statistics as CSV or JSON.
    Export {
        /// Run number or `latest`.
        run: String,
        /// CSV, one row per point and metric.
        #[arg(long, conflicts_with = "json")]
        csv: bool,
        /// JSON: the analysed run.
        #[arg(long)]
        json: bool,
    },
    /// Delete a run and everything recorded for it.
    Delete {
        /// Run number.
        run: String,
    },
}

/// `netsonde compare A B`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Baseline run.
    pub run_a: String,
    /// Run to judge.
    pub run_b: String,
    /// Raise every metric's smallest relative change that counts to at least this
    /// (5% or 0.05). Without it each kind of metric has its own: throughput and
    /// median latency 5%, CPU 10%, tail latency 20% (docs/EXPERIMENTS.md).
    #[arg(long, visible_alias = "min-change", value_name = "RATIO", value_parser = parse_ratio)]
    pub threshold: Option<f64>,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// `netsonde study NAME`.
#[derive(Debug, Args)]
pub struct StudyArgs {
    /// The study: its number (000) or name (oc48c), or `all`; `--list` shows them.
    #[arg(required_unless_present = "list")]
    pub name: Option<String>,
    /// List the studies and their parts.
    #[arg(long)]
    pub list: bool,
    /// Fewer points, one repetition, short trials: under two minutes, for CI.
    #[arg(long)]
    pub quick: bool,
    /// Output folder for the report and its figures (default study-NAME; for
    /// `all`, one folder per study under it, default studies/).
    #[arg(long, value_name = "DIR")]
    pub out: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// `netsonde report RUN`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Run number or `latest` (default).
    pub run: Option<String>,
    /// Output folder (default netsonde-report-RUN).
    #[arg(long, value_name = "DIR")]
    pub out: Option<std::path::PathBuf>,
    /// Format.
    #[arg(long, value_enum, default_value = "html")]
    pub format: crate::runs::Format,
    #[command(flatten)]
    pub store: StoreArgs,
}

impl SweepArgs {
    /// The experiment these flags describe.
    pub fn experiment(&self) -> Result<netsonde_sweep::file::Experiment, UsageError> {
        use netsonde_sweep::file::strings;
        let list = |v: &Option<String>| v.as_deref().map(strings).transpose().map_err(UsageError);
        Ok(netsonde_sweep::file::Experiment {
            label: self.label.clone(),
            host: self.host.clone(),
            port: self.port,
            tests: list(&self.tests)?,
            directions: list(&self.directions)?,
            sizes: self.sizes.clone(),
            windows: list(&self.windows)?,
            parallel: self
                .parallel
                .as_deref()
                .map(|p| netsonde_sweep::axes::parse_list(p, |i| i.parse::<u32>()))
                .transpose()
                .map_err(UsageError)?,
            io: list(&self.io)?,
            pacing: list(&self.pacing)?,
            repeat: self.repeat,
            time: self.time.clone(),
            warmup: self.warmup.clone(),
            interval: None,
            seed: self.seed,
            line_rate: self.line_rate.clone(),
            options: None,
            mtus: list(&self.mtus)?,
            rates: list(&self.rates)?,
            delays: list(&self.delays)?,
            losses: list(&self.losses)?,
            queues: list(&self.queues)?,
            link: None,
        })
    }
}

/// `netsonde agent`: a server's options, and how its jobs are measured.
#[derive(Debug, Args)]
pub struct AgentArgs {
    #[command(flatten)]
    pub server: ServerArgs,
    /// How jobs are measured: `real`, or `fake` (a scripted report at once, no
    /// traffic; for testing controllers at scale).
    #[arg(long, default_value = "real", hide = true, value_parser = ["real", "fake"])]
    pub engine: String,
    /// The fake engine's speed factor (tests: 1e6 makes an agent whose reports
    /// no link could produce).
    #[arg(long, default_value_t = 1.0, hide = true)]
    pub fake_scale: f64,
}

/// `netsonde server`.
#[derive(Debug, Args)]
pub struct ServerArgs {
    /// Control port.
    #[arg(short, long, default_value_t = netsonde_driver::client::DEFAULT_PORT)]
    pub port: u16,
    /// Address to listen on: `::` (the default) takes IPv6 and IPv4 clients, as
    /// iperf3 -s does (IPv4 alone on a host without IPv6); 0.0.0.0 for IPv4 only.
    #[arg(short = 'B', long, default_value = "::")]
    pub bind: IpAddr,
    /// Require clients to prove they hold this key (made by `netsonde keygen`);
    /// the whole session is then integrity-protected. The file must be mode 600.
    #[arg(long, value_name = "FILE")]
    pub auth_key: Option<std::path::PathBuf>,
    /// Serve OpenMetrics on `http://ADDR/metrics` for Prometheus: sessions by
    /// outcome, tests running, the budget held, and, for an agent, the last
    /// result of each job it ran (goodput, latency, loss, CPU per KiB, verdict).
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<std::net::SocketAddr>,
    /// Session log format on stderr. With json, an iperf3 client asking for
    /// --get-server-output gets it as JSON too, as from iperf3 -s -J (else as text)
    #[arg(long, value_enum, default_value = "text")]
    pub log_format: LogFormatArg,
    /// Longest test (warm-up plus time) a client may ask for.
    #[arg(long, default_value = "300s", value_parser = parse_time)]
    pub max_duration: Nanos,
    /// Most parallel streams per direction.
    #[arg(long, default_value_t = 64)]
    pub max_parallel: u32,
    /// Largest message, request, response or window.
    #[arg(long, default_value = "64M", value_parser = parse_bytes)]
    pub max_size: Bytes,
    /// Highest pacing rate per stream.
    #[arg(long, default_value = "100G", value_parser = parse_rate)]
    pub max_rate: BitRate,
    /// Tests (sessions) running at once, netsonde's and iperf3 clients' alike;
    /// others are told "busy" with the time left. One by default, so tests do not
    /// disturb each other's figures.
    #[arg(long, visible_alias = "max-sessions", default_value_t = 1)]
    pub max_tests: usize,
    /// Control connections at once.
    #[arg(long, default_value_t = 64)]
    pub max_connections: usize,
    /// Control connections at once from one address.
    #[arg(long, default_value_t = 8)]
    pub max_per_address: usize,
    /// Buffer memory one test may use (message sizes x flows x buffers, checked
    /// at setup) [default: half of what this process may use, at most 1 GiB].
    #[arg(long, value_parser = parse_bytes)]
    pub max_session_memory: Option<Bytes>,
    /// Buffer memory all running tests may use together [default: as
    /// --max-session-memory, times --max-tests, within half of what this process
    /// may use].
    #[arg(long, value_parser = parse_bytes)]
    pub max_memory: Option<Bytes>,
    /// Deadline of every protocol phase (hello, authentication, setup, data
    /// connections, done) [default: 5 s for hello and done, 10 s for setup and data
    /// connections].
    #[arg(long, value_parser = parse_time)]
    pub phase_timeout: Option<Nanos>,
    /// Do not store iperf3 clients' sessions. By default each is stored as a run
    /// of one point (no netsonde client is there to store it): this end's CPU
    /// and TCP_INFO, and what the iperf3 client reported of its side.
    #[arg(long)]
    pub no_store: bool,
    /// Serve iperf3 clients with netsonde's own receiver (1 MiB reads, woken once
    /// about 1 ms of data is queued). By default an iperf3 client's streams are
    /// read as iperf3's server reads them (one -l per read, woken per segment),
    /// so swapping `iperf3 -s` for `netsonde server` keeps its figures.
    #[arg(long)]
    pub iperf3_fast_receiver: bool,
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Log formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormatArg {
    /// key=value pairs.
    Text,
    /// One JSON object per line.
    Json,
}

/// `netsonde keygen`.
#[derive(Debug, Args)]
pub struct KeygenArgs {
    /// Where to write the key (created with mode 600; never overwritten).
    #[arg(long, value_name = "FILE")]
    pub out: std::path::PathBuf,
}

fn parse_time(s: &str) -> Result<Nanos, String> {
    s.parse::<Nanos>().map_err(|e| e.to_string())
}
fn parse_bytes(s: &str) -> Result<Bytes, String> {
    s.parse::<Bytes>().map_err(|e| e.to_string())
}
fn parse_rate(s: &str) -> Result<BitRate, String> {
    s.parse::<BitRate>().map_err(|e| e.to_string())
}
/// A value parser that also lists the values it takes, for `--help` and the
/// shell completions; `parse` alone decides what is valid.
#[derive(Clone, Copy)]
pub struct Listed<T: 'static> {
    names: fn() -> Vec<&'static str>,
    parse: fn(&str) -> Result<T, String>,
}

impl<T: Clone + Send + Sync + 'static> clap::builder::TypedValueParser for Listed<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<T, clap::Error> {
        self.parse.parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            (self.names)()
                .into_iter()
                .map(clap::builder::PossibleValue::new),
        ))
    }
}

fn io_names() -> Vec<&'static str> {
    IoStrategy::ALL.iter().map(|s| s.name()).collect()
}
fn test_names() -> Vec<&'static str> {
    TestKind::ALL.iter().map(|t| t.name()).collect()
}
fn parse_io_str(s: &str) -> Result<IoStrategy, String> {
    s.parse::<IoStrategy>().map_err(|e| e.to_string())
}
fn parse_test_str(s: &str) -> Result<TestKind, String> {
    s.parse::<TestKind>().map_err(|e| e.to_string())
}
/// An I/O strategy, its names offered.
const IO: Listed<IoStrategy> = Listed {
    names: io_names,
    parse: parse_io_str,
};
/// A test kind, its names offered.
const TEST: Listed<TestKind> = Listed {
    names: test_names,
    parse: parse_test_str,
};
/// A rate unit letter, the letters offered.
const RATE_UNIT: Listed<RateUnit> = Listed {
    names: || RateUnit::LETTERS.to_vec(),
    parse: parse_rate_unit,
};
fn parse_rate_unit(s: &str) -> Result<RateUnit, String> {
    RateUnit::from_letter(s).ok_or_else(|| {
        format!(
            "'{s}' is not a unit: one of {} (bit/s in lower case, bytes/s in upper)",
            RateUnit::LETTERS.join(", ")
        )
    })
}
/// A comma-separated list of core numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoreList(pub Vec<usize>);

fn parse_cores(s: &str) -> Result<CoreList, String> {
    s.split(',')
        .map(|c| {
            c.trim()
                .parse::<usize>()
                .map_err(|_| format!("'{c}' is not a core number"))
        })
        .collect::<Result<_, _>>()
        .map(CoreList)
}

/// `netsonde client`.
#[derive(Debug, Args)]
pub struct ClientArgs {
    /// Server host. Without it, an embedded server runs on loopback in this process.
    /// iperf3's `-c HOST` works too: `netsonde -c HOST` is `netsonde client HOST`.
    pub host: Option<String>,
    /// Server control port [default: 5300; 5201 with --peer iperf3].
    #[arg(short, long)]
    pub port: Option<u16>,
    /// What the server is: netsonde, or an unmodified `iperf3 -s` (stream tests;
    /// this end is measured as always, the server's side is what iperf3 reports).
    #[arg(long, value_enum, default_value = "netsonde")]
    pub peer: PeerArg,
    /// Test: tcp-stream, udp-stream, tcp-rr, udp-rr, tcp-crr. (Unlike iperf3,
    /// whose -T is a title.)
    #[arg(short = 'T', long, default_value = "tcp-stream", value_parser = TEST)]
    pub test: TestKind,
    /// UDP, as iperf3's -u: the same as --test udp-stream.
    #[arg(short = 'u', long, conflicts_with = "test")]
    pub udp: bool,
    /// Only IPv4 addresses of HOST.
    #[arg(short = '4', long, conflicts_with = "ipv6")]
    pub ipv4: bool,
    /// Only IPv6 addresses of HOST (`[::1]` or `::1` work as HOST too).
    #[arg(short = '6', long)]
    pub ipv6: bool,
    /// Message size (stream tests): 128K = 128 KiB; 64kB = 64000 B.
    /// Default 128 KiB for TCP, 1472 B for UDP.
    #[arg(short = 'l', long, value_parser = parse_bytes)]
    pub size: Option<Bytes>,
    /// Request size (RR, CRR).
    #[arg(long, default_value = "1", value_parser = parse_bytes)]
    pub request_size: Bytes,
    /// Response size (RR, CRR).
    #[arg(long, default_value = "1", value_parser = parse_bytes)]
    pub response_size: Bytes,
    /// Socket buffer (SO_SNDBUF and SO_RCVBUF) on both ends; the granted value is
    /// reported. A list gives each flow its own, cycled over the flows: 128K,32K.
    #[arg(short = 'w', long, value_parser = parse_byte_list)]
    pub window: Option<ByteList>,
    /// DSCP (0-63) of each flow's packets, cycled over the flows: 46 (EF) for
    /// all, or 46,0,10 for one each.
    #[arg(long, value_parser = parse_dscp_list)]
    pub dscp: Option<DscpList>,
    /// Latency under load: probes (a kept TCP connection, UDP datagrams, a new
    /// TCP connection each) measure round trips alone for --probe-idle, beside
    /// the load, and alone again after it; reports added latency, responsiveness
    /// (RPM), fairness and each flow over time. Stream tests.
    #[arg(long)]
    pub probe: bool,
    /// Probes of each kind per second (1-100).
    #[arg(long, default_value_t = 20, requires = "probe")]
    pub probe_rate: u32,
    /// Probing alone before and after the load.
    #[arg(long, default_value = "2", value_parser = parse_time, requires = "probe")]
    pub probe_idle: Nanos,
    /// Write the load-latency figure (latency over time with the phases shaded,
    /// each flow's goodput, the distribution idle against loaded) to this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<std::path::PathBuf>,
    /// Do not store this test in the results store (by default every test is
    /// stored as a run of one point, so `runs`, `report` and `compare` work on it).
    #[arg(long)]
    pub no_store: bool,
    #[command(flatten)]
    pub store: StoreArgs,
    /// Realtime response under load (flent's RRUL): tcp-stream both ways with
    /// -P 4 (unless -P is given), --probe, 2 s warm-up (unless -O is given).
    #[arg(long, conflicts_with_all = ["test", "udp", "reverse"])]
    pub rrul: bool,
    /// Receive buffer of the receiving end of each stream only (the sender keeps
    /// -w or the kernel's default): a receiver window below the sender's.
    #[arg(long, value_parser = parse_bytes)]
    pub rcv_window: Option<Bytes>,
    /// TCP maximum segment size.
    #[arg(short = 'M', long)]
    pub mss: Option<u32>,
    /// Disable Nagle's algorithm (always on for RR tests).
    #[arg(short = 'N', long)]
    pub nodelay: bool,
    /// TCP congestion control on both ends (bbr, cubic, reno, ...).
    #[arg(short = 'C', long)]
    pub congestion: Option<String>,
    /// Pacing rate per stream, in bit/s: 100M, 10G (decimal); 0 is unpaced. UDP default 1G.
    #[arg(short = 'b', long, value_parser = parse_rate)]
    pub rate: Option<BitRate>,
    /// Parallel streams per direction, each on its own thread [default: 1].
    #[arg(short = 'P', long)]
    pub parallel: Option<u32>,
    /// Measured duration: 10 (seconds), 500ms, 2m [default: 10 s; with -n or -k,
    /// a cap of 300 s less the warm-up].
    #[arg(short = 't', long, value_parser = parse_time)]
    pub time: Option<Nanos>,
    /// End by volume, as iperf3's -n: the bytes each direction sends in the
    /// measured interval (10G, 500M; K, M, G are binary as in iperf3), shared by
    /// its streams. The test ends when they are sent; -t caps it.
    #[arg(short = 'n', long = "bytes", value_parser = parse_bytes, conflicts_with = "blockcount")]
    pub volume: Option<Bytes>,
    /// End by volume in messages (iperf3's -k): --bytes of this many -l writes.
    #[arg(short = 'k', long)]
    pub blockcount: Option<u64>,
    /// Fail the test when a receiving stream gets nothing for this long
    /// (iperf3's --rcv-timeout, whose number is in ms: give 120s or 500ms)
    /// [default: wait to the end].
    #[arg(long, value_parser = parse_time)]
    pub rcv_timeout: Option<Nanos>,
    /// Deadline of the control connection's connect (iperf3's
    /// --connect-timeout, in ms there: give 3s or 500ms) [default: 5 s].
    #[arg(long, value_parser = parse_time)]
    pub connect_timeout: Option<Nanos>,
    /// Local address of every connection (iperf3's -B on a client).
    #[arg(short = 'B', long)]
    pub bind: Option<IpAddr>,
    /// Local port of the data connections (iperf3's --cport): flow k uses
    /// PORT+k [default: any].
    #[arg(long, value_name = "PORT")]
    pub cport: Option<u16>,
    /// Warm-up before the measured interval, excluded from results (iperf3's
    /// -O/--omit) [default: 0].
    #[arg(short = 'O', long, visible_alias = "omit", value_parser = parse_time)]
    pub warmup: Option<Nanos>,
    /// Print a line per interval.
    #[arg(short = 'i', long, value_parser = parse_time)]
    pub interval: Option<Nanos>,
    /// The server sends.
    #[arg(short = 'R', long, conflicts_with = "bidir")]
    pub reverse: bool,
    /// Both directions at once, on separate connections.
    #[arg(long)]
    pub bidir: bool,
    /// Pin client flow threads to these cores, round-robin: 0,1.
    #[arg(short = 'A', long, value_parser = parse_cores)]
    pub affinity: Option<CoreList>,
    /// Pin server flow threads to these cores, round-robin.
    #[arg(long, value_parser = parse_cores)]
    pub server_affinity: Option<CoreList>,
    /// The link's line rate (10G), for the diagnosis: the goodput's ceiling after
    /// header overhead at the interface's MTU. In the lab the link's own rate is
    /// used when this is not given.
    #[arg(long, value_parser = parse_rate)]
    pub line_rate: Option<BitRate>,
    /// One JSON document (see docs/JSON.md); iperf3's -J.
    #[arg(short = 'J', long, conflicts_with = "jsonl")]
    pub json: bool,
    /// JSON Lines: interval records as they happen, then a summary record.
    #[arg(long)]
    pub jsonl: bool,
    /// JSON lines as iperf3 3.17's --json-stream writes them: one object a line,
    /// `{"event": "start" | "interval" | "end", "data": ...}`.
    #[arg(long, conflicts_with_all = ["json", "jsonl"])]
    pub json_stream: bool,
    /// Rates in the text output's tables and interval lines in this unit, as
    /// iperf3's -f: k, m, g, t for kbit/s to Tbit/s, K, M, G, T for KiB/s to
    /// TiB/s (the verdict's sentences keep their own) [default: the unit that
    /// suits each rate].
    #[arg(short = 'f', long = "format", value_name = "UNIT", value_parser = RATE_UNIT)]
    pub format: Option<RateUnit>,
    /// Begin every line of the text output with this and a colon (iperf3's
    /// --title).
    #[arg(long)]
    pub title: Option<String>,
    /// Send with zero copy, as iperf3's -Z: the senders use sendfile (the same as
    /// --tx-io sendfile; --tx-io zerocopy is MSG_ZEROCOPY).
    #[arg(short = 'Z', long = "zerocopy", conflicts_with = "tx_io")]
    pub zero_copy: bool,
    /// Authenticate with this pre-shared key (the server must use the same).
    #[arg(long, value_name = "FILE")]
    pub auth_key: Option<std::path::PathBuf>,
    /// I/O strategy for both sending and receiving flows: copy, epoll, batch,
    /// zerocopy, sendfile, splice, uring, busypoll, auto (see `netsonde caps`).
    #[arg(long, value_parser = IO)]
    pub io: Option<IoStrategy>,
    /// I/O strategy of the sending flows (overrides --io).
    #[arg(long, value_parser = IO)]
    pub tx_io: Option<IoStrategy>,
    /// I/O strategy of the receiving flows (overrides --io).
    #[arg(long, value_parser = IO)]
    pub rx_io: Option<IoStrategy>,
    /// Check every received byte against the pattern the sender writes.
    #[arg(long)]
    pub verify: bool,
}

/// `--peer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PeerArg {
    /// `netsonde server`.
    Netsonde,
    /// An unmodified `iperf3 -s`.
    Iperf3,
}

impl From<PeerArg> for netsonde_driver::client::Peer {
    fn from(p: PeerArg) -> Self {
        match p {
            PeerArg::Netsonde => netsonde_driver::client::Peer::Netsonde,
            PeerArg::Iperf3 => netsonde_driver::client::Peer::Iperf3,
        }
    }
}

impl ClientArgs {
    /// The control port: given, or the peer's default.
    pub fn port(&self) -> u16 {
        self.port
            .unwrap_or(netsonde_driver::client::Peer::from(self.peer).default_port())
    }
}

/// A list of sizes: `128K,32K`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ByteList(pub Vec<Bytes>);

fn parse_byte_list(s: &str) -> Result<ByteList, String> {
    s.split(',')
        .map(|v| parse_bytes(v.trim()))
        .collect::<Result<Vec<_>, _>>()
        .map(ByteList)
}

/// A list of DSCP values: `46,0`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DscpList(pub Vec<u8>);

fn parse_dscp_list(s: &str) -> Result<DscpList, String> {
    s.split(',')
        .map(|v| match v.trim().parse::<u8>() {
            Ok(d) if d <= 63 => Ok(d),
            _ => Err(format!("'{v}' is not a DSCP (0-63)")),
        })
        .collect::<Result<Vec<_>, _>>()
        .map(DscpList)
}

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// Human text.
    Text,
    /// `--json`.
    Json,
    /// `--jsonl`.
    Jsonl,
    /// `--json-stream`.
    JsonStream,
}

impl ClientArgs {
    /// The output format.
    pub fn output(&self) -> Output {
        if self.json {
            Output::Json
        } else if self.jsonl {
            Output::Jsonl
        } else if self.json_stream {
            Output::JsonStream
        } else {
            Output::Text
        }
    }

    /// How long and how much: the warm-up, the volume (`-n`, or `-k` writes of
    /// `-l`), the measured time (capped when ending by volume), the receive
    /// timeout.
    fn timing(&self, s: &mut TestSpec) {
        s.warmup = self.warmup.unwrap_or(if self.rrul {
            Nanos::from_secs(2)
        } else {
            Nanos::ZERO
        });
        s.volume = match (self.volume, self.blockcount) {
            (Some(v), _) => Some(v),
            (None, Some(k)) => Some(Bytes(k.saturating_mul(s.size.0))),
            (None, None) => None,
        };
        s.duration = match (self.time, s.volume) {
            (Some(t), _) => t,
            (None, Some(_)) => netsonde_model::spec::VOLUME_CAP.saturating_sub(s.warmup),
            (None, None) => Nanos::from_secs(10),
        };
        s.rcv_timeout = self.rcv_timeout;
    }

    /// The validated spec.
    pub fn spec(&self) -> Result<TestSpec, UsageError> {
        let mut s = TestSpec::new(if self.udp {
            TestKind::UdpStream
        } else {
            self.test
        });
        if let Some(size) = self.size {
            if self.test.is_rr() {
                return Err(UsageError(format!(
                    "--size makes no sense with {}: use --request-size and --response-size",
                    self.test
                )));
            }
            s.size = size;
        }
        s.request_size = self.request_size;
        s.response_size = self.response_size;
        match self.window.as_ref().map(|w| w.0.as_slice()) {
            Some([one]) => s.window = Some(*one),
            Some(many) => s.flow_windows = many.to_vec(),
            None => {}
        }
        s.dscp = self.dscp.clone().map(|d| d.0).unwrap_or_default();
        s.rcv_window = self.rcv_window;
        s.mss = self.mss;
        s.nodelay |= self.nodelay;
        s.congestion = self.congestion.clone();
        if let Some(r) = self.rate {
            s.rate = netsonde_model::spec::pacing(r);
        }
        s.parallel = self.parallel.unwrap_or(if self.rrul { 4 } else { 1 });
        self.timing(&mut s);
        s.interval = self.interval;
        if self.probe || self.rrul {
            s.probe = Some(netsonde_model::spec::ProbeSpec {
                rate: self.probe_rate,
                idle: self.probe_idle,
            });
        }
        s.direction = if self.bidir || self.rrul {
            Direction::Bidir
        } else if self.reverse {
            Direction::In
        } else {
            Direction::Out
        };
        s.client_affinity = self.affinity.clone().map(|c| c.0).unwrap_or_default();
        s.server_affinity = self
            .server_affinity
            .clone()
            .map(|c| c.0)
            .unwrap_or_default();
        let (tx, rx) = self.io.unwrap_or_default().sides(s.test);
        s.tx_io = self
            .tx_io
            .or(self.zero_copy.then_some(IoStrategy::Sendfile))
            .unwrap_or(tx);
        s.rx_io = self.rx_io.unwrap_or(rx);
        s.verify = self.verify;
        if let Some(p) = self.cport {
            let flows = s.flows().len() as u32;
            if u32::from(p) + flows.saturating_sub(1) > u32::from(u16::MAX) {
                return Err(UsageError(format!(
                    "--cport {p}: its {flows} data connections need ports up to {}, above 65535",
                    u32::from(p) + flows - 1
                )));
            }
        }
        s.validate().map_err(|e| UsageError(e.to_string()))?;
        Ok(s)
    }
}

/// `netsonde lab ...`.
#[derive(Debug, Args)]
pub struct LabArgs {
    #[command(subcommand)]
    pub command: LabCommand,
}

/// Lab commands.
#[derive(Debug, Subcommand)]
pub enum LabCommand {
    /// Build a lab, run a client or sweep invocation in it against a server in
    /// it, and tear it down: `netsonde lab run --rate 200M --delay 10ms -- client -T tcp-rr`.
    Run(LabRunArgs),
    /// Build a lab with a server in it and leave it running.
    Up(LabUpArgs),
    /// Build a cluster (hosts h1..hN on one bridge, each in its own namespace
    /// running `netsonde agent`, some pairs slower), run `mesh ...` from the
    /// bridge against every host, and tear it down:
    /// `netsonde lab mesh --hosts 5 --slow h2-h4=100M -- mesh -t 3`.
    Mesh(LabMeshArgs),
    /// Tear down a lab made by `lab up`.
    Down {
        /// Its name.
        #[arg(default_value = "lab")]
        name: String,
    },
    /// Remove what killed lab runs left (namespaces, processes, state); with
    /// --all, also every lab made by `lab up`. Never touches anything a lab did not
    /// make.
    Clean {
        /// Also remove labs made by `lab up`.
        #[arg(long)]
        all: bool,
    },
    /// List labs.
    List,
    /// Run the userspace emulator of a `lab up` lab (started by `lab up`).
    #[command(hide = true)]
    Emulate {
        /// The lab.
        name: String,
    },
}

/// Link settings. Each takes one value for both directions or UP/DOWN
/// (client->server/server->client): `--delay 10ms/30ms`.
#[derive(Debug, Args, Default)]
pub struct LinkFlags {
    /// MTU of the link's interfaces, 68 to 65535.
    #[arg(long)]
    pub mtu: Option<String>,
    /// Line rate (decimal, 38 B of Ethernet framing per packet): 100M, 1G.
    #[arg(long)]
    pub rate: Option<String>,
    /// One-way delay: 10ms.
    #[arg(long)]
    pub delay: Option<String>,
    /// Uniform jitter around the delay (does not reorder): 1ms.
    #[arg(long)]
    pub jitter: Option<String>,
    /// Loss: 1% (random) or gemodel:P,R,BAD,GOOD (Gilbert-Elliott bursts; BAD and
    /// GOOD optional, default 100% and 0%).
    #[arg(long)]
    pub loss: Option<String>,
    /// Share of packets sent ahead of the delay (reordered): 5%.
    #[arg(long)]
    pub reorder: Option<String>,
    /// Share of packets delivered twice: 1%.
    #[arg(long)]
    pub duplicate: Option<String>,
    /// Bottleneck queue: 100p (packets) or bytes (256K). Default 50 ms at the rate.
    #[arg(long)]
    pub queue: Option<String>,
    /// Rate limiter on veth links: tbf or htb.
    #[arg(long)]
    pub shaper: Option<String>,
    /// auto (veth; netem or the userspace emulator for impairments), kernel, or
    /// emulator.
    #[arg(long)]
    pub mechanism: Option<String>,
    /// Seed of the emulator's random source (loss, reordering, duplication, jitter).
    #[arg(long)]
    pub seed: Option<u64>,
}

impl LinkFlags {
    pub(crate) fn settings(&self) -> netsonde_model::link::LinkSettings {
        use netsonde_model::link::LinkSettings;
        LinkSettings {
            mtu: self.mtu.clone(),
            rate: self.rate.clone(),
            delay: self.delay.clone(),
            jitter: self.jitter.clone(),
            loss: self.loss.clone(),
            reorder: self.reorder.clone(),
            duplicate: self.duplicate.clone(),
            queue: self.queue.clone(),
            shaper: self.shaper.clone(),
            mechanism: self.mechanism.clone(),
            seed: self.seed,
        }
    }
}

/// `netsonde lab run`.
#[derive(Debug, Args)]
pub struct LabRunArgs {
    /// A lab or experiment file (TOML): its `link` table sets the link (flags
    /// override it). An experiment file with no invocation runs as `run FILE`.
    pub file: Option<PathBuf>,
    #[command(flatten)]
    pub link: LinkFlags,
    /// Lab name (namespaces sonde-NAME-cli and sonde-NAME-srv); default rPID.
    #[arg(long)]
    pub name: Option<String>,
    /// Write the userspace emulator's counters (packets, drops, delivery error
    /// percentiles per direction) to this file as JSON at the end.
    #[arg(long, value_name = "FILE")]
    pub stats: Option<PathBuf>,
    /// What to run in the client host: `client ...`, `search ...`, `sweep ...` or
    /// `run FILE`.
    /// Without a HOST it targets the lab's server.
    #[arg(last = true, value_name = "INVOCATION")]
    pub invocation: Vec<String>,
}

/// `netsonde lab mesh`.
#[derive(Debug, Args)]
pub struct LabMeshArgs {
    /// Hosts, 2 to 64: h1 at 10.78.0.1 ... hN at 10.78.0.N.
    #[arg(long, default_value_t = 4)]
    pub hosts: usize,
    /// Every host's egress rate, counted as an Ethernet line: 1G (default:
    /// unshaped, as fast as the host's CPU moves it).
    #[arg(long)]
    pub rate: Option<String>,
    /// A slower link between two hosts, each way: h2-h4=100M (repeat for more).
    #[arg(long, value_name = "hA-hB=RATE")]
    pub slow: Vec<String>,
    /// Lab name (namespaces sonde-NAME-h1 ... and sonde-NAME-br); default mPID.
    #[arg(long)]
    pub name: Option<String>,
    /// What to run on the bridge: `mesh ...`; the lab adds every host as an
    /// --agent and the key it made for them.
    #[arg(last = true, value_name = "INVOCATION")]
    pub invocation: Vec<String>,
}

/// `netsonde lab up`.
#[derive(Debug, Args)]
pub struct LabUpArgs {
    /// A lab file (TOML) whose `link` table sets the link.
    pub file: Option<PathBuf>,
    #[command(flatten)]
    pub link: LinkFlags,
    /// Lab name.
    #[arg(long, default_value = "lab")]
    pub name: String,
    /// Control port of the server in the lab.
    #[arg(short, long, default_value_t = netsonde_driver::client::DEFAULT_PORT)]
    pub port: u16,
}
