//! Command-line arguments. Parsing of units lives in `netsonde_model::units`; this
//! only maps flags onto a `TestSpec`.

use std::net::IpAddr;

use clap::{Args, Parser, Subcommand};
use netsonde_model::spec::{Direction, TestKind, TestSpec};
use netsonde_model::units::{BitRate, Bytes, Nanos};

/// A usage mistake that clap's own checks cannot see (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// netsonde: how close do this host and this path get to wire speed, and why not closer?
#[derive(Debug, Parser)]
#[command(name = "netsonde", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Listen for tests (one at a time; others are told "busy, try again in N s").
    Server(ServerArgs),
    /// Run one test against a server, or against an embedded loopback server when
    /// no HOST is given.
    Client(Box<ClientArgs>),
}

/// `netsonde server`.
#[derive(Debug, Args)]
pub struct ServerArgs {
    /// Control port.
    #[arg(short, long, default_value_t = netsonde_driver::client::DEFAULT_PORT)]
    pub port: u16,
    /// Address to listen on.
    #[arg(short = 'B', long, default_value = "0.0.0.0")]
    pub bind: IpAddr,
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
fn parse_test(s: &str) -> Result<TestKind, String> {
    s.parse::<TestKind>().map_err(|e| e.to_string())
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
    pub host: Option<String>,
    /// Server control port.
    #[arg(short, long, default_value_t = netsonde_driver::client::DEFAULT_PORT)]
    pub port: u16,
    /// Test: tcp-stream, udp-stream, tcp-rr, udp-rr, tcp-crr.
    #[arg(short = 'T', long, default_value = "tcp-stream", value_parser = parse_test)]
    pub test: TestKind,
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
    /// Socket buffer (SO_SNDBUF and SO_RCVBUF) on both ends; the granted value is reported.
    #[arg(short = 'w', long, value_parser = parse_bytes)]
    pub window: Option<Bytes>,
    /// TCP maximum segment size.
    #[arg(short = 'M', long)]
    pub mss: Option<u32>,
    /// Disable Nagle's algorithm (always on for RR tests).
    #[arg(short = 'N', long)]
    pub nodelay: bool,
    /// TCP congestion control on both ends (bbr, cubic, reno, ...).
    #[arg(short = 'C', long)]
    pub congestion: Option<String>,
    /// Pacing rate per stream, in bit/s: 100M, 10G (decimal). UDP default 1G.
    #[arg(short = 'b', long, value_parser = parse_rate)]
    pub rate: Option<BitRate>,
    /// Parallel streams per direction, each on its own thread.
    #[arg(short = 'P', long, default_value_t = 1)]
    pub parallel: u32,
    /// Measured duration: 10 (seconds), 500ms, 2m.
    #[arg(short = 't', long, default_value = "10", value_parser = parse_time)]
    pub time: Nanos,
    /// Warm-up before the measured interval, excluded from results.
    #[arg(long, default_value = "0", value_parser = parse_time)]
    pub warmup: Nanos,
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
    /// One JSON document (see docs/JSON.md).
    #[arg(long, conflicts_with = "jsonl")]
    pub json: bool,
    /// JSON Lines: interval records as they happen, then a summary record.
    #[arg(long)]
    pub jsonl: bool,
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
}

impl ClientArgs {
    /// The output format.
    pub fn output(&self) -> Output {
        if self.json {
            Output::Json
        } else if self.jsonl {
            Output::Jsonl
        } else {
            Output::Text
        }
    }

    /// The validated spec.
    pub fn spec(&self) -> Result<TestSpec, UsageError> {
        let mut s = TestSpec::new(self.test);
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
        s.window = self.window;
        s.mss = self.mss;
        s.nodelay |= self.nodelay;
        s.congestion = self.congestion.clone();
        if self.rate.is_some() {
            s.rate = self.rate;
        }
        s.parallel = self.parallel;
        s.duration = self.time;
        s.warmup = self.warmup;
        s.interval = self.interval;
        s.direction = if self.bidir {
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
        s.validate().map_err(|e| UsageError(e.to_string()))?;
        Ok(s)
    }
}
