//! netsonde's command line as data: every command's arguments and help (clap),
//! the value parsers that list their values for completions, and the mapping of
//! a client's flags onto a `TestSpec`. Parsing of units lives in
//! `netsonde_model::units`. The binary parses with [`Cli`]; its man pages and
//! completions are generated from it.
#![forbid(unsafe_code)]

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use netsonde_model::spec::{IoStrategy, TestKind};
use netsonde_model::units::Nanos;

mod client;
mod lab;
mod parse;
mod server;

pub use client::*;
pub use lab::*;
pub use parse::*;
pub use server::*;

/// Report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One self-contained HTML file, plus the SVG plots beside it.
    Html,
    /// Markdown tables.
    Md,
}

/// A usage mistake that clap's own checks cannot see (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// netsonde: how close do this host and this path get to wire speed, and why not closer?
#[derive(Debug, Parser)]
// `about` is the binary's description, not this crate's (clap would take
// this crate's from Cargo).
#[command(
    name = "netsonde",
    version,
    propagate_version = true,
    // Help fits the terminal, and 80 columns off one (or on a wider one).
    max_term_width = 80,
    about = "Measures how close a host and a network path get to wire speed, and explains why they fall short.",
    long_about = None
)]
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

impl Cli {
    /// The store options of the command, if it has any.
    pub fn store_mut(&mut self) -> Option<&mut StoreArgs> {
        match &mut self.command {
            Command::Server(a) => Some(&mut a.store),
            Command::Agent(a) => Some(&mut a.server.store),
            Command::Mesh(a) => Some(&mut a.sweep.common.store),
            Command::Monitor(a) => Some(&mut a.mesh.sweep.common.store),
            Command::Dashboard(a) => Some(&mut a.store),
            Command::Client(a) => Some(&mut a.store),
            Command::Sweep(a) => Some(&mut a.common.store),
            Command::Run(a) => Some(&mut a.common.store),
            Command::Search(a) => Some(&mut a.common.store),
            Command::Runs(a) => Some(&mut a.store),
            Command::Compare(a) => Some(&mut a.store),
            Command::Report(a) => Some(&mut a.store),
            Command::Study(a) => Some(&mut a.store),
            Command::Lab(_)
            | Command::Keygen(_)
            | Command::Caps
            | Command::Completions { .. }
            | Command::Man { .. } => None,
        }
    }
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
    /// Watch a mesh over time: its tests round after round on a schedule (with
    /// random jitter, an overrunning round's slot skipped), each round stored;
    /// every pair judged against its own normal (its past rounds): ok,
    /// learning, degraded or failed. Serves each pair's state on --metrics.
    Monitor(Box<MonitorArgs>),
    /// A read-only web page over the store: each monitor's grid of pairs
    /// coloured by state, a pair's history with its baseline band, the runs
    /// with their reports, and `compare` of two. Binds 127.0.0.1 by default.
    Dashboard(DashboardArgs),
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
    /// A label for the stored run.
    #[arg(long, default_value = "search", value_parser = parse_label)]
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

/// Options shared by every command that touches the store or writes a report.
#[derive(Debug, Args)]
pub struct StoreArgs {
    /// Results database: a SQLite file (default: the platform data directory,
    /// netsonde/netsonde.db) or a shared PostgreSQL database, postgres://USER@HOST:PORT/DB
    /// (password from PGPASSWORD; TLS as libpq's ?sslmode=, sslrootcert=, sslcert=,
    /// sslkey= say). Read from $NETSONDE_DB when not given.
    #[arg(
        long,
        value_name = "PATH|URL",
        global = true,
        env = "NETSONDE_DB",
        hide_env_values = true
    )]
    pub db: Option<netsonde_store::Location>,
    /// Read --db from FILE's first line (a mounted secret), so a database URL
    /// and its password never sit in the process's arguments.
    #[arg(long, value_name = "FILE", global = true, conflicts_with = "db")]
    pub db_file: Option<PathBuf>,
}

/// Options of sweeps, from the command line or a file.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Server host. Without it, an embedded server runs on loopback.
    pub host: Option<String>,
    /// Server control port [default: 5300; 5201 with --peer iperf3].
    #[arg(short, long)]
    pub port: Option<u16>,
    /// Tests: tcp-stream,udp-stream,tcp-rr,udp-rr,tcp-crr, and the encrypted
    /// ones: tls-stream,tls-rr,tls-crr,quic-stream,quic-rr,quic-crr.
    #[arg(long, value_delimiter = ',', value_parser = TEST)]
    pub tests: Option<Vec<TestKind>>,
    /// Directions: out,in,bidir.
    #[arg(long, value_hint = clap::ValueHint::Other)]
    pub directions: Option<String>,
    /// Message sizes: 64,256,1K..64K (x2 steps), 1K..1M*4, 1K..8K+1K.
    #[arg(long, value_hint = clap::ValueHint::Other)]
    pub sizes: Option<String>,
    /// Windows: default,64K,256K.
    #[arg(long, value_hint = clap::ValueHint::Other)]
    pub windows: Option<String>,
    /// Parallel streams: 1,2,4.
    #[arg(long, value_hint = clap::ValueHint::Other)]
    pub parallel: Option<String>,
    /// I/O strategies to compare: copy,batch,zerocopy,uring,auto (see `netsonde caps`).
    #[arg(long, value_delimiter = ',', value_parser = IO)]
    pub io: Option<Vec<IoStrategy>>,
    /// Pacing per stream, an axis on any path: 100M,1G,0 (0: unpaced; stream tests).
    #[arg(long, value_hint = clap::ValueHint::Other)]
    pub pacing: Option<String>,
    /// Repetitions per point.
    #[arg(long)]
    pub repeat: Option<u32>,
    /// Measured time per repetition.
    #[arg(short = 't', long, value_hint = clap::ValueHint::Other)]
    pub time: Option<String>,
    /// Warm-up per repetition.
    #[arg(long, value_hint = clap::ValueHint::Other)]
    pub warmup: Option<String>,
    /// Seed of the randomised run order.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Line rate for efficiency figures: 10G.
    #[arg(long, value_hint = clap::ValueHint::Other)]
    pub line_rate: Option<String>,
    /// A label for `runs list`.
    #[arg(long, value_hint = clap::ValueHint::Other, value_parser = parse_label)]
    pub label: Option<String>,
    /// Each point over time: every TCP sender's TCP_INFO read each sample
    /// period, and the report a page per point (point-N.html) with each
    /// flow's goodput, RTT, cwnd and retransmissions over time.
    #[arg(long)]
    pub samples: bool,
    /// Lab link axis (inside `netsonde lab run`): MTUs, 1500,9000,65535.
    #[arg(long, value_hint = clap::ValueHint::Other)]
    pub mtus: Option<String>,
    /// Lab link axis: rates, 100M,1G (0 is unlimited).
    #[arg(long, value_hint = clap::ValueHint::Other)]
    pub rates: Option<String>,
    /// Lab link axis: one-way delays each way, 0,10ms,100ms.
    #[arg(long, value_hint = clap::ValueHint::Other)]
    pub delays: Option<String>,
    /// Lab link axis: random losses each way, 0,1% (Gilbert-Elliott in a file).
    #[arg(long, value_hint = clap::ValueHint::Other)]
    pub losses: Option<String>,
    /// Lab link axis: bottleneck queues each way, 10p,1000p (packets), 64K
    /// (bytes) or 5ms,50ms (time at the rate).
    #[arg(long, value_hint = clap::ValueHint::Other)]
    pub queues: Option<String>,
    /// Lab link axis: segmentation and receive offloads (TSO/GSO and GRO on
    /// the veth link): off,on.
    #[arg(long, value_name = "off,on")]
    pub offloads: Option<String>,
    /// Finish an interrupted run (number or `latest`).
    #[arg(long, value_name = "RUN", conflicts_with_all = ["tests", "directions", "sizes", "windows", "parallel", "repeat", "time", "warmup", "seed", "line_rate", "mtus", "rates", "delays", "losses", "queues"])]
    pub resume: Option<String>,
    #[command(flatten)]
    pub common: SweepCommon,
}

/// `netsonde mesh`. It takes the sweep's flags but not its HOST: a mesh runs
/// between its agents.
#[derive(Debug, Args)]
#[command(mut_arg("host", |a| a.hide(true)))]
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
    /// The ready endpoints of this Kubernetes Service are the agents, each
    /// named by its node: listed through the API from inside the cluster (the
    /// controller's Job, whose service account may list endpointslices; see
    /// deploy/kubernetes). The namespace is the pod's own and the port the
    /// endpoints' `control` port when not given.
    #[arg(long, value_name = "[NAMESPACE/]SERVICE[:PORT]")]
    pub agents_k8s: Option<String>,
    /// Which ordered pairs run: all-to-all, ring, star:NAME (every other agent
    /// to NAME) or pairs:SRC-DST,SRC-DST.
    #[arg(long, default_value = "all-to-all", value_hint = clap::ValueHint::Other)]
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

/// `netsonde monitor`.
#[derive(Debug, Args)]
pub struct MonitorArgs {
    /// Interval between rounds (slots): each round starts a random share of
    /// --jitter into its slot; one that runs past the next slot's start makes
    /// that slot skipped, said and counted, never stacked.
    #[arg(long, default_value = "5m", value_parser = parse_time)]
    pub every: Nanos,
    /// The largest random delay of a round into its slot, as a share of the
    /// interval (at most 50%), so monitors started together do not stay in
    /// step.
    #[arg(long, default_value = "10%", value_parser = parse_ratio)]
    pub jitter: f64,
    /// Past rounds that make each pair's normal (its baseline): at least 5,
    /// the fewest a normal's spread is taken from.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(5..=1000))]
    pub window: u32,
    /// Begin each slot when the wall clock is this far into an interval
    /// (`--every 15m --phase 7m30s`: at :07:30, :22:30, ...), whenever the
    /// monitor starts: monitors given different phases take turns, never
    /// measuring through the same hosts at once. Default: slots count from
    /// the start.
    #[arg(long, value_parser = parse_time)]
    pub phase: Option<Nanos>,
    /// Start even when a round is estimated to take longer than --every: the
    /// slots a round runs past are skipped (said and counted). Without it
    /// such an interval is refused, with the estimate.
    #[arg(long)]
    pub skip_overrun: bool,
    /// Stop after this many rounds (default: until SIGTERM or SIGINT, which
    /// end the round in progress with what it measured stored).
    #[arg(long)]
    pub rounds: Option<u64>,
    /// The mesh measured each round: agents, pattern, tests, as `netsonde mesh`
    /// takes them. --label names the monitor (default `monitor`): its rounds are
    /// the stored runs with that label, and a restarted monitor of the same
    /// label goes on from them.
    #[command(flatten)]
    pub mesh: MeshArgs,
}

/// `netsonde dashboard`.
#[derive(Debug, Args)]
pub struct DashboardArgs {
    /// Where to serve it. 127.0.0.1 by default: the dashboard only reads, but
    /// it shows every stored run to whoever reaches it; put it behind a
    /// reverse proxy with authentication to share it.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: std::net::SocketAddr,
    /// Past rounds that make each pair's normal, as the monitor's --window.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(5..=1000))]
    pub window: u32,
    #[command(flatten)]
    pub store: StoreArgs,
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
    /// End with only where the report and the run are, not the summary of
    /// every point.
    #[arg(short, long, conflicts_with = "json")]
    pub quiet: bool,
    /// End with the summary as one JSON document on standard output (the
    /// progress and the report's path go to standard error).
    #[arg(long)]
    pub json: bool,
    /// Measurement engine: `real`, or `fake` (scripted, deterministic; for tests).
    #[arg(long, default_value = "real", hide = true, value_parser = parse::engine())]
    pub engine: netsonde_run::Engine,
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
    /// A run's summary: one line per point (figures, CPU, verdict), the
    /// warnings, as a sweep ends with it; --full for every table (Markdown).
    Show {
        /// Run number or `latest`.
        run: String,
        /// Every table of the report, as Markdown.
        #[arg(long, conflicts_with = "json")]
        full: bool,
        /// The summary as one JSON document.
        #[arg(long)]
        json: bool,
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
    /// End with only the findings and where the report is, not each part's
    /// summary.
    #[arg(short, long, conflicts_with = "json")]
    pub quiet: bool,
    /// End with each part's summary and the findings as one JSON document.
    #[arg(long)]
    pub json: bool,
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
    pub format: Format,
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
            tests: self
                .tests
                .as_ref()
                .map(|v| v.iter().map(|t| t.name().to_string()).collect()),
            directions: list(&self.directions)?,
            sizes: self.sizes.clone(),
            windows: list(&self.windows)?,
            parallel: self
                .parallel
                .as_deref()
                .map(|p| netsonde_sweep::axes::parse_list(p, |i| i.parse::<u32>()))
                .transpose()
                .map_err(UsageError)?,
            io: self
                .io
                .as_ref()
                .map(|v| v.iter().map(|t| t.name().to_string()).collect()),
            pacing: list(&self.pacing)?,
            repeat: self.repeat,
            time: self.time.clone(),
            warmup: self.warmup.clone(),
            interval: None,
            seed: self.seed,
            line_rate: self.line_rate.clone(),
            options: self.samples.then(|| netsonde_sweep::file::Options {
                samples: Some(true),
                ..Default::default()
            }),
            mtus: list(&self.mtus)?,
            rates: list(&self.rates)?,
            delays: list(&self.delays)?,
            losses: list(&self.losses)?,
            offloads: list(&self.offloads)?,
            queues: list(&self.queues)?,
            link: None,
        })
    }
}
