//! `netsonde client`, and its flags as a `TestSpec`.

use std::net::IpAddr;

use clap::Args;
use netsonde_model::spec::{Direction, IoStrategy, TestKind, TestSpec};
use netsonde_model::units::{BitRate, Bytes, Nanos, RateUnit};

use super::*;

/// `netsonde client`.
#[derive(Debug, Args)]
// The probe options need probes: --probe, or --rrul, which probes.
#[group(skip)]
#[command(group(clap::ArgGroup::new("probing").args(["probe", "rrul"]).multiple(true)))]
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
    /// With --peer iperf3: receive with netsonde's own receiver (reads of up
    /// to 1 MiB, woken once about 1 ms of data is queued) instead of as
    /// iperf3's client reads (one -l per read, woken per segment, the session's
    /// streams on one thread), which is the default so that swapping `iperf3
    /// -c` for `netsonde -c` keeps its -R and --bidir figures.
    #[arg(long)]
    pub iperf3_fast_receiver: bool,
    /// Test: tcp-stream, udp-stream, tcp-rr, udp-rr, tcp-crr, tls-stream,
    /// tls-rr, tls-crr, quic-stream, quic-rr, quic-crr. (Unlike iperf3, whose
    /// -T is a title.)
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
    #[arg(long, default_value_t = 20, requires = "probing")]
    pub probe_rate: u32,
    /// Probing alone before and after the load.
    #[arg(long, default_value = "2", value_parser = parse_time, requires = "probing")]
    pub probe_idle: Nanos,
    /// Write the load-latency figure (latency over time with the phases shaded,
    /// each flow's goodput, the distribution idle against loaded) to this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<std::path::PathBuf>,
    /// Write the test's HTML report to DIR/index.html: each flow's goodput,
    /// round trip, congestion window and retransmissions over time (every TCP
    /// sender's TCP_INFO read each -i, 100 ms without it), the probes' latency
    /// under load, and the text report.
    #[arg(long, value_name = "DIR")]
    pub report: Option<std::path::PathBuf>,
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
    /// tls-stream: the cipher suite by its IANA name, which also picks TLS 1.3
    /// or 1.2 (TLS13_AES_128_GCM_SHA256, TLS13_CHACHA20_POLY1305_SHA256,
    /// TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, ...); default: TLS 1.3's first.
    #[arg(long, value_name = "SUITE", value_parser = crate::parse::TLS_SUITE)]
    pub tls_suite: Option<String>,
    /// Multipath TCP: each stream's (or request/response flow's) connection is
    /// the kernel's MPTCP, over the subflows its path manager opens (`ip mptcp
    /// endpoint`); each subflow's path and share are reported.
    #[arg(long)]
    pub mptcp: bool,
    /// UDP with --io batch: sendmmsg and recvmmsg of 64 without GSO/GRO, so
    /// every datagram crosses as a packet of its own (on loopback and veth a
    /// GSO super-datagram never does).
    #[arg(long)]
    pub no_gso: bool,
    /// tls-crr, quic-crr: resume the flow's earlier TLS sessions (tickets,
    /// session IDs) instead of a full handshake on every connection.
    #[arg(long)]
    pub tls_resume: bool,
    /// quic-stream: streams on each flow's one QUIC connection, 1 to 64, each
    /// a perf request of its own sharing the connection's flow control and
    /// congestion window (-P opens more connections) [default: 1].
    #[arg(long, value_name = "N")]
    pub quic_streams: Option<u32>,
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
    /// zerocopy, sendfile, splice, uring, busypoll, auto, and xdp for UDP
    /// receivers only (see `netsonde caps`).
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
    /// Sample the flow threads for the CPU breakdown (where each end's CPU
    /// went: copy, TCP/IP, ...): auto does for stream tests (under 2% of their
    /// goodput) and not for request/response tests, whose every wake-up the
    /// sampling slows (a fifth of tcp-rr's rate in a VM); on and off force it.
    #[arg(long, value_name = "WHEN", default_value = "auto", value_parser = ["auto", "on", "off"])]
    pub cpu_breakdown: String,
    /// The same as --cpu-breakdown off.
    #[arg(long)]
    pub no_cpu_breakdown: bool,
}

/// `--peer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PeerArg {
    /// `netsonde server`.
    Netsonde,
    /// An unmodified `iperf3 -s`.
    Iperf3,
    /// Another QUIC stack's perf server (draft-banks-quic-performance), for
    /// -T quic-stream and quic-rr: this end measured as always, the server's
    /// side what the protocol confirms.
    QuicPerf,
}

impl From<PeerArg> for netsonde_driver::client::Peer {
    fn from(p: PeerArg) -> Self {
        match p {
            PeerArg::Netsonde => netsonde_driver::client::Peer::Netsonde,
            PeerArg::Iperf3 => netsonde_driver::client::Peer::Iperf3,
            PeerArg::QuicPerf => netsonde_driver::client::Peer::QuicPerf,
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

pub use netsonde_report::output::Output;

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
        s.tls_suite = self.tls_suite.clone();
        s.mptcp = self.mptcp;
        s.no_gso = self.no_gso;
        s.tls_resume = self.tls_resume;
        s.quic_streams = self.quic_streams;
        if let Some(r) = self.rate {
            s.rate = netsonde_model::spec::pacing(r);
        }
        s.parallel = self.parallel.unwrap_or(if self.rrul { 4 } else { 1 });
        self.timing(&mut s);
        if self.iperf3_fast_receiver && self.peer != PeerArg::Iperf3 {
            return Err(UsageError(
                "--iperf3-fast-receiver is for --peer iperf3 (a netsonde server's client \
                 always reads with netsonde's receiver)"
                    .into(),
            ));
        }
        // Against iperf3, read as its client reads unless told otherwise.
        s.iperf3_io = self.peer == PeerArg::Iperf3 && !self.iperf3_fast_receiver;
        // The report's time series read every TCP sender's TCP_INFO.
        s.samples = self.report.is_some();
        s.breakdown = match self.cpu_breakdown.as_str() {
            _ if self.no_cpu_breakdown => Some(false),
            "on" => Some(true),
            "off" => Some(false),
            _ => None,
        };
        // iperf3 3.17's JSON stream has a line a second unless told otherwise.
        s.interval = self
            .interval
            .or(self.json_stream.then(|| Nanos::from_secs(1)));
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

#[cfg(test)]
mod help_tests {
    use netsonde_model::spec::{IoStrategy, TestKind};

    /// `client --help` names every test and every I/O strategy there is.
    #[test]
    fn client_help_names_every_test_and_strategy() {
        use clap::CommandFactory;
        let mut cmd = crate::Cli::command();
        let help = cmd
            .find_subcommand_mut("client")
            .unwrap()
            .render_long_help()
            .to_string();
        for k in TestKind::ALL {
            assert!(help.contains(k.name()), "{} not in: {help}", k.name());
        }
        for s in IoStrategy::ALL {
            assert!(help.contains(s.name()), "{} not in: {help}", s.name());
        }
    }

    /// Every list of names has them as values, for completion: every
    /// command's tests and I/O strategies.
    #[test]
    fn completion_offers_every_test_and_strategy() {
        use clap::CommandFactory;
        let cmd = crate::Cli::command();
        let values = |sub: &str, arg: &str| -> Vec<String> {
            let sub = cmd.find_subcommand(sub).unwrap();
            let a = sub.get_arguments().find(|a| a.get_id() == arg).unwrap();
            a.get_possible_values()
                .iter()
                .map(|v| v.get_name().to_string())
                .collect()
        };
        let tests: Vec<String> = TestKind::ALL.iter().map(|t| t.name().into()).collect();
        let io: Vec<String> = IoStrategy::ALL.iter().map(|s| s.name().into()).collect();
        assert_eq!(values("client", "test"), tests);
        assert_eq!(values("sweep", "tests"), tests);
        assert_eq!(values("sweep", "io"), io);
        assert_eq!(values("search", "io"), io);
    }
}
