//! iperf3's vocabulary: its constants and error numbers, the cookie, the
//! control states, the test's parameters and each side's results.

use netsonde_model::spec::{Direction, TestKind, TestSpec};
use netsonde_model::units::{BitRate, Bytes, Nanos};
use serde::{Deserialize, Serialize};

/// iperf3's default port.
pub const DEFAULT_PORT: u16 = netsonde_model::spec::Peer::Iperf3.default_port();
/// Bytes of a cookie on the wire, its NUL included.
pub const COOKIE_LEN: usize = 37;
/// The characters of a cookie.
const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
/// The largest parameters object an iperf3 server reads (`MAX_PARAMS_JSON_STRING`).
pub const MAX_PARAMS: usize = 8 * 1024;
/// The largest results object read: a peer's server output can be long, but
/// not unbounded.
pub const MAX_RESULTS: usize = 1 << 20;

/// The datagram a UDP stream opens with (client to server), in the byte order
/// an x86 iperf3 writes it: "9876".
pub const UDP_CONNECT_MSG: [u8; 4] = *b"9876";
/// The server's answer: "6789".
pub const UDP_CONNECT_REPLY: [u8; 4] = *b"6789";
/// The answer of iperf3 servers before 3.10 (987654321, little-endian).
pub const LEGACY_UDP_CONNECT_REPLY: [u8; 4] = 987_654_321u32.to_le_bytes();

/// `i_errno` a netsonde server sends with `SERVER_ERROR` for parameters it cannot
/// run (`IERECVPARAMS`).
pub const IE_RECV_PARAMS: u32 = 113;
/// `i_errno` for a server-side failure while running (`IESTREAMACCEPT`).
pub const IE_STREAM_ACCEPT: u32 = 121;
/// `i_errno`: the test is too long for this server (`IEDURATION`; iperf3 3.12's
/// numbering, which its client turns into its own message).
pub const IE_DURATION: u32 = 5;
/// `i_errno`: too many parallel streams (`IENUMSTREAMS`).
pub const IE_NUM_STREAMS: u32 = 6;
/// `i_errno`: the block size (`-l`) too large (`IEBLOCKSIZE`).
pub const IE_BLOCK_SIZE: u32 = 7;
/// `i_errno`: the socket buffer (`-w`) too large (`IEBUFSIZE`).
pub const IE_BUF_SIZE: u32 = 8;
/// `i_errno`: the test is not authorised (`IEAUTHTEST`): this server requires
/// netsonde's key, which an iperf3 client cannot give.
pub const IE_AUTH_TEST: u32 = 142;

/// What went wrong on an iperf3 control connection.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum Iperf3Error {
    /// The peer's first bytes are not an iperf3 cookie.
    #[error("not an iperf3 cookie")]
    BadCookie,
    /// A state byte that is not valid here.
    #[error("unexpected iperf3 state {got} while waiting for {waiting}")]
    UnexpectedState {
        /// The byte, as iperf3's signed state.
        got: i8,
        /// What the machine waited for.
        waiting: &'static str,
    },
    /// A JSON object longer than allowed.
    #[error("iperf3 {what} of {len} bytes is over the {max}-byte limit")]
    TooLong {
        /// Parameters or results.
        what: &'static str,
        /// Its announced length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// A JSON object that does not parse as what it should be.
    #[error("iperf3 {what} are not valid: {reason}")]
    BadJson {
        /// Parameters or results.
        what: &'static str,
        /// The parser's words.
        reason: String,
    },
    /// The server refused: it is running another test.
    #[error("the iperf3 server is busy running a test (access denied)")]
    Denied,
    /// The server reported an error.
    #[error("the iperf3 server reported error {code} (errno {errno})")]
    ServerError {
        /// iperf3's `i_errno`.
        code: u32,
        /// The OS error number on the server.
        errno: u32,
    },
    /// The peer ended the test.
    #[error("the iperf3 peer terminated the test")]
    Terminated,
    /// Parameters this end cannot run.
    #[error("iperf3 parameters netsonde cannot run: {0}")]
    Unsupported(String),
}

/// A test's cookie: it names the test on its control connection and on every one
/// of its data connections.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cookie(pub [u8; COOKIE_LEN]);

impl std::fmt::Debug for Cookie {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Cookie({})", String::from_utf8_lossy(&self.0[..36]))
    }
}

impl Cookie {
    /// A cookie from 36 random bytes, as iperf3 makes one.
    pub fn from_random(random: [u8; COOKIE_LEN - 1]) -> Cookie {
        let mut c = [0u8; COOKIE_LEN];
        for (o, r) in c.iter_mut().zip(random) {
            *o = ALPHABET[usize::from(r) % ALPHABET.len()];
        }
        Cookie(c)
    }

    /// Parses a cookie as read off the wire.
    pub fn parse(b: &[u8]) -> Result<Cookie, Iperf3Error> {
        let b: [u8; COOKIE_LEN] = b.try_into().map_err(|_| Iperf3Error::BadCookie)?;
        if b[36] != 0 || !b[..36].iter().all(|c| ALPHABET.contains(c)) {
            return Err(Iperf3Error::BadCookie);
        }
        Ok(Cookie(b))
    }

    /// Whether a connection whose first byte is `b` may be an iperf3 peer (a
    /// netsonde frame starts with its length's high byte, 0).
    pub fn may_start_with(b: u8) -> bool {
        ALPHABET.contains(&b)
    }
}

/// The control connection's state bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i8)]
pub enum State {
    /// The streams are up; the test starts.
    TestStart = 1,
    /// The test runs.
    TestRunning = 2,
    /// The client's time is up.
    TestEnd = 4,
    /// The client sends its parameters next.
    ParamExchange = 9,
    /// The client opens its streams now.
    CreateStreams = 10,
    /// The server ended the test early.
    ServerTerminate = 11,
    /// The client ended the test early.
    ClientTerminate = 12,
    /// Results are exchanged next.
    ExchangeResults = 13,
    /// The client may show its results.
    DisplayResults = 14,
    /// The client is done.
    IperfDone = 16,
    /// The server is busy.
    AccessDenied = -1,
    /// The server failed; two 32-bit error numbers follow.
    ServerError = -2,
}

impl State {
    /// The state a byte names.
    pub fn from_byte(b: u8) -> Option<State> {
        Some(match b as i8 {
            1 => State::TestStart,
            2 => State::TestRunning,
            4 => State::TestEnd,
            9 => State::ParamExchange,
            10 => State::CreateStreams,
            11 => State::ServerTerminate,
            12 => State::ClientTerminate,
            13 => State::ExchangeResults,
            14 => State::DisplayResults,
            16 => State::IperfDone,
            -1 => State::AccessDenied,
            -2 => State::ServerError,
            _ => return None,
        })
    }

    /// Its byte on the wire.
    pub fn byte(self) -> u8 {
        self as i8 as u8
    }
}

/// iperf3's number for the `k`-th stream the client opens (from 0).
pub fn stream_id(k: usize) -> i64 {
    if k == 0 {
        1
    } else {
        k as i64 + 2
    }
}

/// The client's test parameters (the fields netsonde reads or sends; others are
/// kept by iperf3 peers and ignored here).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Params {
    /// A TCP test.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcp: Option<bool>,
    /// A UDP test.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub udp: Option<bool>,
    /// An SCTP test (not run by netsonde).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sctp: Option<bool>,
    /// Seconds omitted at the start (warm-up).
    pub omit: u64,
    /// Seconds of test (0 when the test ends by volume).
    pub time: u64,
    /// Bytes to send (0: by time).
    pub num: u64,
    /// Blocks to send (0: by time).
    pub blockcount: u64,
    /// TCP maximum segment size.
    #[serde(rename = "MSS", skip_serializing_if = "Option::is_none")]
    pub mss: Option<u32>,
    /// `TCP_NODELAY`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodelay: Option<bool>,
    /// Streams (per direction).
    pub parallel: u32,
    /// The server sends.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reverse: Option<bool>,
    /// Both send.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bidirectional: Option<bool>,
    /// Socket buffer size.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<u64>,
    /// Bytes per write (UDP: per datagram).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub len: Option<u64>,
    /// Bits per second per stream (0: unlimited).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bandwidth: Option<u64>,
    /// Kernel pacing rate (fq), bits per second.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fqrate: Option<u64>,
    /// Congestion control.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub congestion: Option<String>,
    /// Whether the client wants the server's output in the results.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub get_server_output: Option<i64>,
    /// 64-bit UDP sequence numbers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub udp_counters_64bit: Option<i64>,
    /// The test's title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The client's version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_version: Option<String>,
    /// An authentication token (iperf3's RSA authentication: not supported).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub authtoken: Option<String>,
    /// Server core to pin to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_affinity: Option<i64>,
}

impl Params {
    /// The parameters that ask an iperf3 server for `spec`. `get_server_output`
    /// asks for the server's report (as JSON when `json`).
    pub fn from_spec(spec: &TestSpec) -> Result<Params, Iperf3Error> {
        if let Some(why) = netsonde_model::spec::Peer::Iperf3.cannot_run(spec) {
            return Err(Iperf3Error::Unsupported(why));
        }
        let udp = spec.test == TestKind::UdpStream;
        Ok(Params {
            tcp: (!udp).then_some(true),
            udp: udp.then_some(true),
            omit: spec.warmup.0 / 1_000_000_000,
            // iperf3 takes one end condition: by volume, its time is 0.
            time: if spec.volume.is_some() {
                0
            } else {
                spec.duration.0 / 1_000_000_000
            },
            num: spec.volume.map_or(0, |v| v.0),
            mss: spec.mss,
            nodelay: spec.nodelay.then_some(true),
            parallel: spec.parallel,
            reverse: (spec.direction == Direction::In).then_some(true),
            bidirectional: (spec.direction == Direction::Bidir).then_some(true),
            window: spec.window.map(|w| w.0),
            len: Some(spec.size.0),
            // iperf3's 0 is unlimited, and so is netsonde's `None`.
            bandwidth: Some(spec.rate.map_or(0, |r| r.0.round() as u64)),
            congestion: spec.congestion.clone(),
            get_server_output: Some(1),
            udp_counters_64bit: udp.then_some(1),
            client_version: Some(format!("netsonde {}", env!("CARGO_PKG_VERSION"))),
            ..Params::default()
        })
    }

    /// The test an iperf3 client asks for, as netsonde runs it. iperf3's default
    /// lengths (128 KiB TCP writes, 1460-byte datagrams) and rates (1 Mbit/s UDP,
    /// unlimited TCP) apply where the client sent none.
    pub fn to_spec(&self) -> Result<TestSpec, Iperf3Error> {
        let unsupported = |what: &str| Err(Iperf3Error::Unsupported(what.to_string()));
        if self.sctp == Some(true) {
            return unsupported("SCTP");
        }
        if self.authtoken.is_some() {
            return unsupported("iperf3's RSA authentication");
        }
        if self.fqrate.is_some_and(|r| r != 0) {
            return unsupported("--fq-rate");
        }
        let udp = self.udp == Some(true);
        let mut spec = TestSpec::new(if udp {
            TestKind::UdpStream
        } else {
            TestKind::TcpStream
        });
        spec.direction = match (self.reverse, self.bidirectional) {
            (_, Some(true)) => Direction::Bidir,
            (Some(true), _) => Direction::In,
            _ => Direction::Out,
        };
        spec.parallel = self.parallel.max(1);
        spec.duration = Nanos::from_secs(self.time);
        spec.warmup = Nanos::from_secs(self.omit);
        spec.size =
            Bytes(
                self.len
                    .filter(|&l| l > 0)
                    .unwrap_or(if udp { 1460 } else { 128 * 1024 }),
            );
        // iperf3's client ends the test (TEST_END) when it has sent, or
        // received, `num` bytes or `blockcount` writes; netsonde's senders stop
        // at their share, and `time` (0) is then capped.
        spec.volume = match (self.num, self.blockcount) {
            (0, 0) => None,
            (0, k) => Some(Bytes(k.saturating_mul(spec.size.0))),
            (n, _) => Some(Bytes(n)),
        };
        if spec.volume.is_some() && self.time == 0 {
            spec.duration = netsonde_model::spec::VOLUME_CAP.saturating_sub(spec.warmup);
        }
        spec.window = self.window.filter(|&w| w > 0).map(Bytes);
        spec.mss = self.mss.filter(|&m| m > 0);
        spec.nodelay = self.nodelay == Some(true);
        spec.congestion = self.congestion.clone();
        // iperf3's client sends `bandwidth` only when its rate is not 0 (its
        // UDP default of 1 Mbit/s is set before, so it is sent): none is -b 0,
        // unpaced. (Taken as the default, a stored `-b 0` session read
        // "15398% of the pacing rate 1.00 Mbit/s".)
        spec.rate = match self.bandwidth {
            Some(0) | None => None,
            Some(b) => Some(BitRate(b as f64)),
        };
        spec.validate()
            .map_err(|e| Iperf3Error::Unsupported(e.to_string()))?;
        Ok(spec)
    }

    /// Whether UDP datagrams carry 64-bit sequence numbers.
    pub fn counters_64bit(&self) -> bool {
        self.udp_counters_64bit.is_some_and(|v| v != 0)
    }
}

/// A number as an iperf3 peer writes it: cJSON may print -1 as 2^64 - 1, and
/// any count as a float.
fn lenient_i64<'de, D: serde::Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    let v = serde_json::Number::deserialize(d)?;
    Ok(if let Some(i) = v.as_i64() {
        i
    } else if let Some(u) = v.as_u64() {
        // Above i64::MAX: a negative number gone through an unsigned type.
        u as i64
    } else {
        v.as_f64().unwrap_or(0.0) as i64
    })
}

fn lenient_opt_i64<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    lenient_i64(d).map(Some)
}

fn lenient_u64<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    let v = serde_json::Number::deserialize(d)?;
    Ok(v.as_u64()
        .unwrap_or_else(|| v.as_f64().filter(|f| *f > 0.0).unwrap_or(0.0) as u64))
}

/// One stream's figures in a results exchange.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StreamResult {
    /// The stream's number ([`stream_id`]).
    #[serde(deserialize_with = "lenient_i64")]
    pub id: i64,
    /// Bytes this end sent (a sender, past the omitted time) or received.
    #[serde(deserialize_with = "lenient_u64")]
    pub bytes: u64,
    /// TCP retransmissions of a sender; -1 when not known.
    #[serde(deserialize_with = "lenient_i64")]
    pub retransmits: i64,
    /// UDP jitter, seconds (a receiver).
    pub jitter: f64,
    /// UDP datagrams lost (a receiver).
    #[serde(deserialize_with = "lenient_i64")]
    pub errors: i64,
    /// Lost during the omitted time.
    #[serde(
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient_opt_i64"
    )]
    pub omitted_errors: Option<i64>,
    /// UDP datagrams sent or received.
    #[serde(deserialize_with = "lenient_i64")]
    pub packets: i64,
    /// Of them, in the omitted time.
    #[serde(
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient_opt_i64"
    )]
    pub omitted_packets: Option<i64>,
    /// Seconds from the stream's start to the start of what `bytes` counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_time: Option<f64>,
    /// Seconds from the stream's start to the end of what `bytes` counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_time: Option<f64>,
}

/// One end's results.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Results {
    /// The process's CPU time over the test's wall time, percent of one core.
    pub cpu_util_total: f64,
    /// Its user part.
    pub cpu_util_user: f64,
    /// Its system part.
    pub cpu_util_system: f64,
    /// 1 when this end sent and knows TCP retransmissions, 0 when it sent and
    /// does not, -1 when it only received.
    #[serde(deserialize_with = "lenient_i64")]
    pub sender_has_retransmits: i64,
    /// The congestion control this end used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub congestion_used: Option<String>,
    /// Per stream.
    pub streams: Vec<StreamResult>,
    /// The server's report as JSON (when the client asked for JSON).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_output_json: Option<serde_json::Value>,
    /// The server's report as text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_output_text: Option<String>,
}

/// A JSON object on the wire: its length (u32, big-endian), then the object.
pub fn encode_json<T: Serialize>(v: &T) -> Vec<u8> {
    // Serializing these plain structs cannot fail.
    let body = serde_json::to_vec(v).unwrap_or_else(|_| b"{}".to_vec());
    let mut out = Vec::with_capacity(4 + body.len());
    out.extend_from_slice(&(body.len() as u32).to_be_bytes());
    out.extend_from_slice(&body);
    out
}

/// What a machine reports.
#[derive(Debug, Clone, PartialEq)]
pub enum Iperf3Event {
    /// Server: a client's cookie arrived; answer with `accept` or `deny`.
    Cookie(Cookie),
    /// Server: the client's parameters.
    Params(Box<Params>),
    /// Client: open the streams now.
    CreateStreams,
    /// Client: the streams are accepted; the test starts.
    TestStart,
    /// Client: the test runs (start sending).
    TestRunning,
    /// Server: the client's time is up.
    TestEnd,
    /// Client: send this end's results now (`send_results`).
    ExchangeResults,
    /// The peer's results.
    PeerResults(Box<Results>),
    /// The exchange is over (client: it sent IPERF_DONE; server: it got it).
    Done,
    /// The session failed; nothing more will happen.
    Failed(Iperf3Error),
}
