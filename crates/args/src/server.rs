//! `netsonde server`, `agent` and `keygen`.

use std::net::IpAddr;

use clap::Args;
use netsonde_model::units::{BitRate, Bytes, Nanos};

use super::*;

/// `netsonde agent`: a server's options, and how its jobs are measured.
#[derive(Debug, Args)]
pub struct AgentArgs {
    #[command(flatten)]
    pub server: ServerArgs,
    /// How jobs are measured: `real`, or `fake` (a scripted report at once, no
    /// traffic; for testing controllers at scale).
    #[arg(long, default_value = "real", hide = true, value_parser = parse::engine())]
    pub engine: netsonde_run::Engine,
    /// The fake engine's speed factor (tests: 1e6 makes an agent whose reports
    /// no link could produce).
    #[arg(long, default_value_t = 1.0, hide = true)]
    pub fake_scale: f64,
    /// The targets this agent may test: addresses and networks, comma-separated
    /// (10.0.0.0/8,192.0.2.7,fd00::/8). A job for any other address is refused
    /// before a packet leaves. Without it, any target (said at start).
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_target)]
    pub allow_targets: Option<Vec<ipnet::IpNet>>,
}

/// One `--allow-targets` entry: a network (`10.0.0.0/8`) or one address.
fn parse_target(s: &str) -> Result<ipnet::IpNet, String> {
    let s = s.trim();
    s.parse::<ipnet::IpNet>()
        .or_else(|_| s.parse::<IpAddr>().map(ipnet::IpNet::from))
        .map_err(|_| format!("'{s}' is neither an address nor a network (ADDR/PREFIX)"))
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
    /// Also answer any QUIC perf client (draft-banks-quic-performance: quinn's
    /// perf, msquic's secnetperf, picoquic's quicperf) on this UDP port of the
    /// listening address: no authentication (not with --auth-key), at most 16
    /// connections, each answer at most --max-duration.
    #[arg(long, value_name = "PORT")]
    pub quic_perf: Option<u16>,
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
