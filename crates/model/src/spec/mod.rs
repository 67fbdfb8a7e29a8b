//! What a user asks for: a [`TestSpec`], validated once by [`TestSpec::validate`]
//! before anything touches a socket, sent to the server in the control protocol and
//! echoed with every result so a run can be reproduced from its output.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::units::{BitRate, Bytes, Nanos};

pub use io_strategy::IoStrategy;

/// The largest message, window or datagram size netsonde accepts.
pub const MAX_SIZE: Bytes = Bytes(Bytes::GIB);
/// The longest test.
pub const MAX_DURATION: Nanos = Nanos::from_secs(24 * 3600);

/// The longest a test that ends by volume runs, warm-up included, when no time
/// is given: netsonde server's default `--max-duration`.
pub const VOLUME_CAP: Nanos = Nanos::from_secs(300);
/// The most parallel streams.
pub const MAX_PARALLEL: u32 = 256;
/// Most streams one quic-stream connection carries (`--quic-streams`).
pub const MAX_QUIC_STREAMS: u32 = 64;
/// Every UDP stream datagram starts with this header: sequence number and send time.
pub const UDP_HEADER_LEN: u64 = 16;
/// The largest UDP payload over IPv4.
pub const MAX_UDP_PAYLOAD: u64 = 65_507;

/// The workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TestKind {
    /// Bulk TCP transfer.
    TcpStream,
    /// Paced UDP datagrams with loss, duplicate, reordering and jitter accounting.
    UdpStream,
    /// TCP request/response on one connection per flow.
    TcpRr,
    /// UDP request/response.
    UdpRr,
    /// TCP connect, request, response, close.
    TcpCrr,
    /// Bulk transfer over TLS (rustls) on a TCP connection per flow: what the
    /// encryption costs each end.
    TlsStream,
    /// Bulk transfer over QUIC (quinn, in user space) on a UDP socket per
    /// flow: one connection and one stream per flow.
    QuicStream,
    /// tcp-crr with a TLS handshake on every connection: handshakes per
    /// second, full or resumed (`--tls-resume`).
    TlsCrr,
    /// tcp-rr over TLS: request/response as records on one kept TLS
    /// connection per flow.
    TlsRr,
    /// Request/response over QUIC: one connection per flow, each transaction
    /// a request on a bidirectional stream of its own.
    QuicRr,
    /// QUIC connect, request, response, close: a new QUIC connection per
    /// transaction over the flow's UDP socket (a full handshake, or a resumed
    /// one with `--tls-resume`): handshakes per second.
    QuicCrr,
}

impl TestKind {
    /// All kinds, for help texts and sweeps.
    pub const ALL: [TestKind; 11] = [
        TestKind::TcpStream,
        TestKind::UdpStream,
        TestKind::TcpRr,
        TestKind::UdpRr,
        TestKind::TcpCrr,
        TestKind::TlsStream,
        TestKind::QuicStream,
        TestKind::TlsCrr,
        TestKind::TlsRr,
        TestKind::QuicRr,
        TestKind::QuicCrr,
    ];

    /// The name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            TestKind::TcpStream => "tcp-stream",
            TestKind::UdpStream => "udp-stream",
            TestKind::TcpRr => "tcp-rr",
            TestKind::UdpRr => "udp-rr",
            TestKind::TcpCrr => "tcp-crr",
            TestKind::TlsStream => "tls-stream",
            TestKind::QuicStream => "quic-stream",
            TestKind::TlsCrr => "tls-crr",
            TestKind::TlsRr => "tls-rr",
            TestKind::QuicRr => "quic-rr",
            TestKind::QuicCrr => "quic-crr",
        }
    }

    /// The plain-TCP test an encrypted one is measured against (tls-stream and
    /// quic-stream against tcp-stream, the rr and crr tests likewise); `None`
    /// for a test that is not encrypted.
    pub fn plain(self) -> Option<TestKind> {
        match self {
            TestKind::TlsStream | TestKind::QuicStream => Some(TestKind::TcpStream),
            TestKind::TlsRr | TestKind::QuicRr => Some(TestKind::TcpRr),
            TestKind::TlsCrr | TestKind::QuicCrr => Some(TestKind::TcpCrr),
            _ => None,
        }
    }

    /// Whether the test's bytes are encrypted (TLS over its TCP connections).
    pub fn is_tls(self) -> bool {
        matches!(
            self,
            TestKind::TlsStream | TestKind::TlsCrr | TestKind::TlsRr
        )
    }

    /// Whether the test opens a TCP connection per transaction (connect,
    /// request, response, close). quic-crr opens QUIC connections over one
    /// UDP socket per flow instead.
    pub fn is_crr(self) -> bool {
        matches!(self, TestKind::TcpCrr | TestKind::TlsCrr)
    }

    /// Whether the test is a bulk stream, TCP (plain or under TLS) or UDP.
    pub fn is_stream(self) -> bool {
        matches!(
            self,
            TestKind::TcpStream | TestKind::UdpStream | TestKind::TlsStream | TestKind::QuicStream
        )
    }

    /// Whether the test's messages are bare datagrams (UDP), which may be
    /// lost, duplicated or reordered on the way, rather than a reliable
    /// stream (TCP, TLS, QUIC).
    pub fn is_datagram(self) -> bool {
        matches!(self, TestKind::UdpStream | TestKind::UdpRr)
    }

    /// Whether the test runs its own transport in user space over UDP (QUIC).
    pub fn is_quic(self) -> bool {
        matches!(
            self,
            TestKind::QuicStream | TestKind::QuicRr | TestKind::QuicCrr
        )
    }

    /// Whether the test uses TCP data connections.
    pub fn is_tcp(self) -> bool {
        matches!(
            self,
            TestKind::TcpStream
                | TestKind::TcpRr
                | TestKind::TcpCrr
                | TestKind::TlsStream
                | TestKind::TlsCrr
                | TestKind::TlsRr
        )
    }

    /// Whether the test is a request/response test (reports transactions and latency).
    pub fn is_rr(self) -> bool {
        matches!(
            self,
            TestKind::TcpRr
                | TestKind::UdpRr
                | TestKind::TcpCrr
                | TestKind::TlsCrr
                | TestKind::TlsRr
                | TestKind::QuicRr
                | TestKind::QuicCrr
        )
    }
}

impl fmt::Display for TestKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TestKind {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TestKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| SpecError::UnknownTest(s.to_string()))
    }
}

/// Which way test bytes flow, seen from the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    /// The client sends (the default).
    Out,
    /// The server sends (`--reverse`).
    In,
    /// Both at once, on separate connections (`--bidir`).
    Bidir,
}

impl Direction {
    /// Whether the client sends test bytes.
    pub fn client_sends(self) -> bool {
        matches!(self, Direction::Out | Direction::Bidir)
    }

    /// Whether the server sends test bytes.
    pub fn server_sends(self) -> bool {
        matches!(self, Direction::In | Direction::Bidir)
    }

    /// Name used in JSON and the store.
    pub fn name(self) -> &'static str {
        match self {
            Direction::Out => "out",
            Direction::In => "in",
            Direction::Bidir => "bidir",
        }
    }
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which way one flow's bytes go, seen from the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FlowDir {
    /// Client to server.
    Up,
    /// Server to client.
    Down,
}

impl FlowDir {
    /// Name used in text output.
    pub fn name(self) -> &'static str {
        match self {
            FlowDir::Up => "client->server",
            FlowDir::Down => "server->client",
        }
    }
}

/// A complete, validated description of one test. Both ends run from the same spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestSpec {
    /// The workload.
    pub test: TestKind,
    /// Which way the bytes flow.
    pub direction: Direction,
    /// Message size for stream tests (bytes per write; for UDP, the datagram payload).
    pub size: Bytes,
    /// Request size for RR and CRR tests.
    pub request_size: Bytes,
    /// Response size for RR and CRR tests.
    pub response_size: Bytes,
    /// Socket send and receive buffer requested on both ends (`SO_SNDBUF`/`SO_RCVBUF`).
    pub window: Option<Bytes>,
    /// Receive buffer (`SO_RCVBUF`) of the receiving end of each stream only: a
    /// receiver window below (or above) the sender's. Set before the handshake
    /// where it can be (a receiving client's socket; the server's listener when
    /// the server receives every stream), so the window scale covers it, and
    /// again on the connection once it is up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rcv_window: Option<Bytes>,
    /// TCP maximum segment size (`TCP_MAXSEG`).
    pub mss: Option<u32>,
    /// Disable Nagle (`TCP_NODELAY`). Always on for RR and CRR tests.
    pub nodelay: bool,
    /// TCP congestion control algorithm on both ends.
    pub congestion: Option<String>,
    /// Per-stream pacing rate for senders; `None` sends as fast as it can (see
    /// [`pacing`]).
    pub rate: Option<BitRate>,
    /// Parallel streams per direction, each on its own thread.
    pub parallel: u32,
    /// Measured duration.
    pub duration: Nanos,
    /// Time before the measured interval whose traffic is excluded from results.
    pub warmup: Nanos,
    /// Interval report period, if any.
    pub interval: Option<Nanos>,
    /// Cores to pin the client's flow threads to, round-robin. Empty: no pinning.
    pub client_affinity: Vec<usize>,
    /// Cores to pin the server's flow threads to, round-robin. Empty: no pinning.
    pub server_affinity: Vec<usize>,
    /// I/O strategy of sending flows (on whichever end sends).
    #[serde(default)]
    pub tx_io: IoStrategy,
    /// I/O strategy of receiving flows.
    #[serde(default)]
    pub rx_io: IoStrategy,
    /// Check every received byte against the known pattern.
    #[serde(default)]
    pub verify: bool,
    /// The receivers read as iperf3 does: a wait for readiness (`poll`, as
    /// iperf3's `select` loop) before every read, and one message (`size`) per
    /// read with no low-water mark. By default a TCP receiver reads
    /// up to 1 MiB and is woken once about 1 ms of data is queued
    /// (`SO_RCVLOWAT`). A server serves iperf3 clients this way unless told
    /// otherwise, so a user swapping `iperf3 -s` for `netsonde server` measures
    /// the same path.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub iperf3_io: bool,
    /// A load-latency test: probes before, during and after the load (`--probe`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<ProbeSpec>,
    /// Each TCP sender's `TCP_INFO` read every [`TestSpec::sample_period`]
    /// (bytes acknowledged, RTT, cwnd, retransmissions), for its time series
    /// (`client --report`); a load-latency test reads them anyway. Read by a
    /// thread of its own, off the flows' path.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub samples: bool,
    /// Whether each end samples its flow threads with call chains for the CPU
    /// breakdown (`--cpu-breakdown`); `None`: for stream tests only (see
    /// [`TestSpec::breakdown`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub breakdown: Option<bool>,
    /// DSCP of each flow's packets, cycled over the flows (`--dscp 46,0`); empty:
    /// the system's default (0).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dscp: Vec<u8>,
    /// Socket buffer of each flow, cycled over the flows, in place of `window`
    /// (`--window 128K,32K`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flow_windows: Vec<Bytes>,
    /// End by volume (iperf3's `-n`, and `-k` times the message size): the bytes
    /// each direction sends in the measured interval, shared evenly by its
    /// streams (each sends at least its share, the last message may pass it).
    /// The test ends when they are sent; `duration` is then only a cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume: Option<Bytes>,
    /// A receiving stream that gets no byte for this long fails the test
    /// (iperf3's `--rcv-timeout`); `None`: it waits to the test's end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rcv_timeout: Option<Nanos>,
    /// A TLS test's cipher suite, by its IANA name (`TLS13_AES_128_GCM_SHA256`,
    /// `TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256`, ...), which also picks
    /// the protocol version; `None`: the TLS library's first choice, TLS 1.3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_suite: Option<String>,
    /// Stream and request/response connections are MPTCP (`--mptcp`): the
    /// kernel's multipath TCP, its subflows over the paths its path manager
    /// opens.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mptcp: bool,
    /// UDP batching without the kernel's segmentation and receive offloads
    /// (`--no-gso`): `--io batch` sends with `sendmmsg` and receives with
    /// `recvmmsg`, every datagram a packet of its own even on loopback.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_gso: bool,
    /// tls-crr: resume the flow's earlier sessions (`--tls-resume`: TLS 1.3
    /// tickets, TLS 1.2 session IDs) instead of a full handshake each time.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tls_resume: bool,
    /// quic-stream: streams per flow's connection (`--quic-streams`), each a
    /// perf request of its own, sharing the connection's flow control and
    /// congestion window; `None` is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quic_streams: Option<u32>,
}

/// The probes of a load-latency test. Each kind (a kept TCP connection, UDP
/// datagrams, a new TCP connection per probe) sends `rate` probes a second, one
/// at a time per kind, from the start: alone for `idle`, then beside the load,
/// then alone for `idle` again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeSpec {
    /// Probes of each kind per second (at most [`MAX_PROBE_RATE`]).
    pub rate: u32,
    /// Probing alone before the load, and again after it.
    pub idle: Nanos,
}

/// The most probes of one kind per second (the responsiveness draft's MPS).
pub const MAX_PROBE_RATE: u32 = 100;
/// The most probes one test may send (their records are kept in memory).
pub const MAX_PROBES: u64 = 1_000_000;

impl Default for ProbeSpec {
    /// 20 probes a second of each kind, 2 s alone before and after.
    fn default() -> ProbeSpec {
        ProbeSpec {
            rate: 20,
            idle: Nanos::from_secs(2),
        }
    }
}

/// The flow numbers of a load-latency test's probes, after the load's flows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeFlows {
    /// The kept TCP connection.
    pub tcp: u32,
    /// The UDP socket.
    pub udp: u32,
    /// Each new connection's preamble carries this number.
    pub connect: u32,
}

/// Why a spec was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SpecError {
    /// `--test` named no known test.
    #[error(
        "unknown test '{0}' (expected one of tcp-stream, udp-stream, tcp-rr, udp-rr, tcp-crr)"
    )]
    UnknownTest(String),
    /// A test to end by volume was given none.
    #[error("--bytes/--blockcount must be above 0")]
    ZeroVolume,
    /// A size was zero or larger than [`MAX_SIZE`].
    #[error("{what} must be between 1 B and 1 GiB, got {value}")]
    SizeOutOfRange {
        /// Which option.
        what: &'static str,
        /// What was given.
        value: Bytes,
    },
    /// The duration was zero or longer than [`MAX_DURATION`].
    #[error(
        "{what} must be between {min} and 24 h, got {}",
        if value.0 == 0 {
            "0 (iperf3's -t 0 runs until stopped; netsonde needs an end: a time, or -n/-k \
             to end by volume)"
                .to_string()
        } else {
            value.to_string()
        }
    )]
    DurationOutOfRange {
        /// Which option.
        what: &'static str,
        /// The least allowed.
        min: Nanos,
        /// What was given.
        value: Nanos,
    },
    /// `--parallel` was zero or above [`MAX_PARALLEL`].
    #[error("--parallel must be between 1 and {MAX_PARALLEL}, got {0}")]
    ParallelOutOfRange(u32),
    /// `--quic-streams` was zero or above [`MAX_QUIC_STREAMS`].
    #[error("--quic-streams must be between 1 and {MAX_QUIC_STREAMS}, got {0}")]
    QuicStreamsOutOfRange(u32),
    /// An option that does not apply to the chosen test.
    #[error("{option} makes no sense with {test}: {why}")]
    NotApplicable {
        /// The option.
        option: &'static str,
        /// The test.
        test: TestKind,
        /// Why.
        why: &'static str,
    },
    /// A UDP datagram outside what UDP can carry.
    #[error("UDP datagram size must be between {min} and {max} bytes, got {value}")]
    DatagramSize {
        /// The least allowed.
        min: u64,
        /// The most allowed.
        max: u64,
        /// What was given.
        value: u64,
    },
    /// `--mss` outside what TCP accepts.
    #[error("--mss must be between 88 and 65495, got {0}")]
    MssOutOfRange(u32),
    /// `--rate` of zero or non-finite.
    #[error("--rate must be a positive rate, got {0}")]
    BadRate(BitRate),
    /// `--io` named no known strategy.
    #[error("unknown I/O strategy '{0}' (expected one of copy, epoll, batch, zerocopy, sendfile, splice, uring, busypoll, auto)")]
    UnknownIo(String),
    /// A strategy that does not apply to the test or side.
    #[error("--{side}-io {io} makes no sense with {test}: {why}")]
    IoNotApplicable {
        /// `tx` or `rx`.
        side: &'static str,
        /// The strategy.
        io: IoStrategy,
        /// The test.
        test: TestKind,
        /// Why.
        why: &'static str,
    },
    /// A congestion control name that cannot be one.
    #[error("--congestion '{0}' is not a valid algorithm name")]
    BadCongestion(String),
    /// A DSCP outside its six bits.
    #[error("--dscp must be between 0 and 63, got {0}")]
    BadDscp(u8),
    /// Probe settings out of range.
    #[error("--probe: {0}")]
    BadProbe(String),
}

/// A pacing rate as users write it: `0` means unpaced (as iperf3's `-b 0`), any
/// other rate paces each stream to it.
pub fn pacing(rate: BitRate) -> Option<BitRate> {
    (rate.0 != 0.0).then_some(rate)
}

impl TestSpec {
    /// Defaults for a test kind: 128 KiB TCP writes, 1472-byte UDP datagrams (one
    /// 1500-byte Ethernet frame), 1-byte requests and responses, one stream, 10 s.
    pub fn new(test: TestKind) -> TestSpec {
        TestSpec {
            test,
            direction: Direction::Out,
            size: match test {
                TestKind::UdpStream => Bytes(1472),
                _ => Bytes(128 * Bytes::KIB),
            },
            request_size: Bytes(1),
            response_size: Bytes(1),
            window: None,
            rcv_window: None,
            mss: None,
            nodelay: test.is_rr(),
            congestion: None,
            rate: match test {
                // An unpaced UDP sender mostly measures its own drops; iperf3's 1 Mbit/s
                // default measures nothing. 1 Gbit/s per stream is a useful middle.
                TestKind::UdpStream => Some(BitRate(1e9)),
                _ => None,
            },
            parallel: 1,
            duration: Nanos::from_secs(10),
            warmup: Nanos::ZERO,
            interval: None,
            client_affinity: Vec::new(),
            server_affinity: Vec::new(),
            tx_io: IoStrategy::Copy,
            rx_io: IoStrategy::Copy,
            verify: false,
            iperf3_io: false,
            probe: None,
            samples: false,
            breakdown: None,
            dscp: Vec::new(),
            flow_windows: Vec::new(),
            volume: None,
            rcv_timeout: None,
            tls_suite: None,
            mptcp: false,
            no_gso: false,
            tls_resume: false,
            quic_streams: None,
        }
    }

    /// The bytes each sending stream sends in the measured interval before it
    /// stops, for a test that ends by volume: its even share, rounded up.
    pub fn stream_volume(&self) -> Option<u64> {
        self.volume
            .map(|v| v.0.div_ceil(u64::from(self.parallel.max(1))))
    }

    /// Streams on each quic-stream connection (`--quic-streams`, else one).
    pub fn quic_streams(&self) -> u32 {
        self.quic_streams.unwrap_or(1)
    }

    /// The test in a few words, with iperf3's flags for what differs from a
    /// plain test: `tcp-stream -R -P 4`, `udp-stream --bidir`.
    pub fn label(&self) -> String {
        let mut l = self.test.to_string();
        match self.direction {
            Direction::Out => {}
            Direction::In => l.push_str(" -R"),
            Direction::Bidir => l.push_str(" --bidir"),
        }
        if self.parallel > 1 {
            l.push_str(&format!(" -P {}", self.parallel));
        }
        if self.quic_streams() > 1 {
            l.push_str(&format!(" --quic-streams {}", self.quic_streams()));
        }
        l
    }

    /// The flows of this test: one per stream per direction, numbered from 0.
    pub fn flows(&self) -> Vec<(u32, FlowDir)> {
        let mut v = Vec::new();
        let mut id = 0;
        for dir in [FlowDir::Up, FlowDir::Down] {
            let on = match dir {
                FlowDir::Up => self.direction.client_sends() || self.test.is_rr(),
                FlowDir::Down => self.direction.server_sends() && !self.test.is_rr(),
            };
            if on {
                for _ in 0..self.parallel {
                    v.push((id, dir));
                    id += 1;
                }
            }
        }
        v
    }

    /// How long a test can run before either end gives up on it: the probes'
    /// idle phases, warm-up, the measured time and a fixed allowance for
    /// start-up and drain.
    pub fn deadline(&self) -> Nanos {
        self.span().saturating_add(Nanos::from_secs(10))
    }

    /// How long the test runs: warm-up and the measured time, and a load-latency
    /// test's idle phases before and after.
    pub fn span(&self) -> Nanos {
        let idle = self.probe.map_or(Nanos::ZERO, |p| p.idle);
        self.warmup
            .saturating_add(self.duration)
            .saturating_add(idle)
            .saturating_add(idle)
    }

    /// The probes' flow numbers, when this is a load-latency test.
    pub fn probe_flows(&self) -> Option<ProbeFlows> {
        self.probe.map(|_| {
            let n = self.flows().len() as u32;
            ProbeFlows {
                tcp: n,
                udp: n + 1,
                connect: n + 2,
            }
        })
    }

    /// The socket buffer of flow `flow` (`None`: the listening socket, which gets
    /// the largest, so every flow's window scale fits its buffer).
    pub fn window_of(&self, flow: Option<u32>) -> Option<Bytes> {
        if self.flow_windows.is_empty() {
            return self.window;
        }
        match flow {
            Some(f) => Some(self.flow_windows[f as usize % self.flow_windows.len()]),
            None => self.flow_windows.iter().copied().max(),
        }
    }

    /// The DSCP of flow `flow`, if one was asked for.
    pub fn dscp_of(&self, flow: u32) -> Option<u8> {
        (!self.dscp.is_empty()).then(|| self.dscp[flow as usize % self.dscp.len()])
    }

    /// Whether the flow threads are sampled for the CPU breakdown: as asked,
    /// or by default for stream tests, whose goodput it costs under 2%, and
    /// not for request/response tests, whose every sleep and wake-up it slows
    /// (a per-thread sampling timer is stopped and started at each: in a VM,
    /// a fifth of tcp-rr's transaction rate; docs/CPU-BREAKDOWN.md).
    pub fn breakdown(&self) -> bool {
        self.breakdown.unwrap_or(self.test.is_stream())
    }

    /// How often a load-latency test reads its loaded flows' `TCP_INFO`: the
    /// interval (100 ms without one), lengthened so a side's readings stay under
    /// 4,000 (they travel in one control message).
    pub fn sample_period(&self) -> Nanos {
        let base = self.interval.unwrap_or(Nanos::from_millis(100));
        let span = self
            .warmup
            .saturating_add(self.duration)
            .saturating_add(Nanos::from_secs(5));
        let flows = self.flows().len().max(1) as u64;
        base.max(Nanos(span.0.saturating_mul(flows) / 4000))
    }
}

mod io_strategy;
mod iperf3_flags;
mod peer;
mod validate;

pub use peer::Peer;

#[cfg(test)]
mod tests;
