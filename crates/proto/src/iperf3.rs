//! iperf3's control protocol, sans-IO: so that an unmodified `iperf3` client can
//! test against `netsonde server`, and `netsonde client --peer iperf3` can drive an
//! unmodified `iperf3 -s`.
//!
//! The facts below are those of the public iperf3 source (`iperf_api.c`,
//! `iperf_server_api.c`, `iperf_client_api.c`, `iperf_tcp.c`, `iperf_udp.c`); no
//! code of it is used here.
//!
//! ```text
//! control connection (TCP, the server's port, 5201 by default):
//!   client -> server  cookie: 36 characters of "a-z2-7" and a NUL (37 bytes)
//!   server -> client  state PARAM_EXCHANGE (one signed byte), or ACCESS_DENIED if busy
//!   client -> server  parameters: length:u32be, then a JSON object
//!   server -> client  CREATE_STREAMS
//!                     (the client opens its streams: TCP connections to the same
//!                      port, each sending the cookie first; UDP: a 4-byte datagram
//!                      to the same port, answered with a 4-byte reply)
//!   server -> client  TEST_START, TEST_RUNNING          (the test runs)
//!   client -> server  TEST_END                          (when its time is up)
//!   server -> client  EXCHANGE_RESULTS
//!   client -> server  its results (length + JSON); server -> client: its own
//!   server -> client  DISPLAY_RESULTS
//!   client -> server  IPERF_DONE
//! a server error is SERVER_ERROR followed by i_errno:u32be and errno:u32be.
//! ```
//!
//! Streams are numbered in the order the client opens them: 1, 3, 4, 5, …
//! (iperf3's own numbering, which skips 2 for compatibility between its versions).
//! With `bidirectional`, the client's sending streams come first.
//!
//! The [`ClientMachine`] and [`ServerMachine`] here take bytes as they arrive and
//! say what happened ([`Iperf3Event`]); what to send is queued for the caller to
//! write. The caller owns sockets, deadlines and the data streams.

use std::collections::VecDeque;

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
        spec.rate = match self.bandwidth {
            Some(0) => None,
            Some(b) => Some(BitRate(b as f64)),
            None if udp => Some(BitRate(1e6)),
            None => None,
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

/// What the reader waits for next.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Want {
    /// Nothing until the caller acts.
    Nothing,
    /// The 37-byte cookie.
    Cookie,
    /// A state byte; the name says which phase, for errors.
    State(&'static str),
    /// SERVER_ERROR's two numbers.
    ErrorCodes,
    /// A JSON object: parameters or results.
    Json(&'static str, usize),
    /// Over.
    Over,
}

/// The part both machines share: bytes in, a queue of bytes out.
#[derive(Debug)]
struct Wire {
    inbox: Vec<u8>,
    outbox: Vec<u8>,
    want: Want,
    events: VecDeque<Iperf3Event>,
}

impl Wire {
    fn new(want: Want) -> Wire {
        Wire {
            inbox: Vec::new(),
            outbox: Vec::new(),
            want,
            events: VecDeque::new(),
        }
    }

    /// Takes bytes read; a peer that sends more than the largest object it may
    /// send, ahead of its turn, fails the session (nothing is buffered without
    /// bound).
    fn push(&mut self, bytes: &[u8]) -> bool {
        if self.inbox.len() + bytes.len() > MAX_RESULTS + 4 {
            self.fail(Iperf3Error::TooLong {
                what: "unread input",
                len: self.inbox.len() + bytes.len(),
                max: MAX_RESULTS + 4,
            });
            return false;
        }
        self.inbox.extend_from_slice(bytes);
        true
    }

    fn fail(&mut self, e: Iperf3Error) {
        self.want = Want::Over;
        self.inbox.clear();
        self.events.push_back(Iperf3Event::Failed(e));
    }

    /// The next complete item the reader waits for, if it has arrived.
    fn take(&mut self) -> Option<Item> {
        match self.want {
            Want::Nothing | Want::Over => None,
            Want::Cookie => (self.inbox.len() >= COOKIE_LEN).then(|| {
                let b: Vec<u8> = self.inbox.drain(..COOKIE_LEN).collect();
                Item::Cookie(b)
            }),
            Want::State(_) => (!self.inbox.is_empty()).then(|| Item::State(self.inbox.remove(0))),
            Want::ErrorCodes => (self.inbox.len() >= 8).then(|| {
                let b: Vec<u8> = self.inbox.drain(..8).collect();
                Item::Codes(
                    u32::from_be_bytes([b[0], b[1], b[2], b[3]]),
                    u32::from_be_bytes([b[4], b[5], b[6], b[7]]),
                )
            }),
            Want::Json(what, max) => {
                if self.inbox.len() < 4 {
                    return None;
                }
                let len = u32::from_be_bytes([
                    self.inbox[0],
                    self.inbox[1],
                    self.inbox[2],
                    self.inbox[3],
                ]) as usize;
                if len > max {
                    return Some(Item::TooLong(what, len, max));
                }
                (self.inbox.len() >= 4 + len).then(|| {
                    let b: Vec<u8> = self.inbox.drain(..4 + len).skip(4).collect();
                    Item::Json(what, b)
                })
            }
        }
    }
}

/// One complete item read.
enum Item {
    Cookie(Vec<u8>),
    State(u8),
    Codes(u32, u32),
    Json(&'static str, Vec<u8>),
    TooLong(&'static str, usize, usize),
}

fn parse<T: for<'de> Deserialize<'de>>(what: &'static str, b: &[u8]) -> Result<T, Iperf3Error> {
    serde_json::from_slice(b).map_err(|e| Iperf3Error::BadJson {
        what,
        reason: e.to_string(),
    })
}

/// netsonde as an iperf3 client: cookie, parameters, results, done.
#[derive(Debug)]
pub struct ClientMachine {
    wire: Wire,
    params: Params,
    /// Whether this end's results went out (then the server's come).
    sent_results: bool,
}

impl ClientMachine {
    /// A session for `params`, its cookie queued to send.
    pub fn new(cookie: Cookie, params: Params) -> ClientMachine {
        let mut wire = Wire::new(Want::State("the server's first state"));
        wire.outbox.extend_from_slice(&cookie.0);
        ClientMachine {
            wire,
            params,
            sent_results: false,
        }
    }

    /// Bytes to write to the server now.
    pub fn take_output(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.wire.outbox)
    }

    /// Whether the session is over (done or failed).
    pub fn is_over(&self) -> bool {
        self.wire.want == Want::Over
    }

    /// Bytes read from the server; then read [`ClientMachine::poll`].
    pub fn feed(&mut self, bytes: &[u8]) {
        if self.wire.want == Want::Over {
            return;
        }
        if !self.wire.push(bytes) {
            return;
        }
        while let Some(item) = self.wire.take() {
            self.step(item);
        }
    }

    /// The next event, if any.
    pub fn poll(&mut self) -> Option<Iperf3Event> {
        self.wire.events.pop_front()
    }

    /// The client's time is up: tell the server.
    pub fn test_end(&mut self) {
        if self.wire.want != Want::Over {
            self.wire.outbox.push(State::TestEnd.byte());
        }
    }

    /// This end's results, after [`Iperf3Event::ExchangeResults`].
    pub fn send_results(&mut self, r: &Results) {
        if self.wire.want == Want::Over || self.sent_results {
            return;
        }
        self.sent_results = true;
        self.wire.outbox.extend_from_slice(&encode_json(r));
        self.wire.want = Want::Json("results", MAX_RESULTS);
        // Bytes that came early are read now.
        while let Some(item) = self.wire.take() {
            self.step(item);
        }
    }

    /// Ends the test early (the user interrupted, or this end failed).
    pub fn terminate(&mut self) {
        if self.wire.want != Want::Over {
            self.wire.outbox.push(State::ClientTerminate.byte());
            self.wire.want = Want::Over;
        }
    }

    fn step(&mut self, item: Item) {
        let w = &mut self.wire;
        match item {
            Item::State(b) => {
                let waiting = match w.want {
                    Want::State(s) => s,
                    _ => "nothing",
                };
                match State::from_byte(b) {
                    Some(State::ParamExchange) => {
                        w.outbox.extend_from_slice(&encode_json(&self.params));
                    }
                    Some(State::CreateStreams) => w.events.push_back(Iperf3Event::CreateStreams),
                    Some(State::TestStart) => w.events.push_back(Iperf3Event::TestStart),
                    Some(State::TestRunning) => w.events.push_back(Iperf3Event::TestRunning),
                    Some(State::ExchangeResults) => {
                        w.want = Want::Nothing;
                        w.events.push_back(Iperf3Event::ExchangeResults);
                    }
                    Some(State::DisplayResults) if self.sent_results => {
                        w.outbox.push(State::IperfDone.byte());
                        w.want = Want::Over;
                        w.events.push_back(Iperf3Event::Done);
                    }
                    Some(State::AccessDenied) => w.fail(Iperf3Error::Denied),
                    Some(State::ServerError) => w.want = Want::ErrorCodes,
                    Some(State::ServerTerminate) => w.fail(Iperf3Error::Terminated),
                    _ => w.fail(Iperf3Error::UnexpectedState {
                        got: b as i8,
                        waiting,
                    }),
                }
            }
            Item::Codes(code, errno) => w.fail(Iperf3Error::ServerError { code, errno }),
            Item::Json(what, b) => match parse::<Results>(what, &b) {
                Ok(r) => {
                    w.want = Want::State("DISPLAY_RESULTS");
                    w.events.push_back(Iperf3Event::PeerResults(Box::new(r)));
                }
                Err(e) => w.fail(e),
            },
            Item::TooLong(what, len, max) => w.fail(Iperf3Error::TooLong { what, len, max }),
            Item::Cookie(_) => w.fail(Iperf3Error::BadCookie),
        }
    }
}

/// netsonde as an iperf3 server, for one client's control connection.
#[derive(Debug)]
pub struct ServerMachine {
    wire: Wire,
    /// Whether the client's results arrived (then this end's go out).
    stage: ServerStage,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum ServerStage {
    Cookie,
    Params,
    Running,
    Results,
    Done,
}

impl Default for ServerMachine {
    fn default() -> Self {
        ServerMachine::new()
    }
}

impl ServerMachine {
    /// A session waiting for the client's cookie.
    pub fn new() -> ServerMachine {
        ServerMachine {
            wire: Wire::new(Want::Cookie),
            stage: ServerStage::Cookie,
        }
    }

    /// Bytes to write to the client now.
    pub fn take_output(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.wire.outbox)
    }

    /// Whether the session is over (done or failed).
    pub fn is_over(&self) -> bool {
        self.wire.want == Want::Over
    }

    /// Bytes read from the client; then read [`ServerMachine::poll`].
    pub fn feed(&mut self, bytes: &[u8]) {
        if self.wire.want == Want::Over {
            return;
        }
        if !self.wire.push(bytes) {
            return;
        }
        while let Some(item) = self.wire.take() {
            self.step(item);
        }
    }

    /// The next event, if any.
    pub fn poll(&mut self) -> Option<Iperf3Event> {
        self.wire.events.pop_front()
    }

    /// Refuses the client: another test is running.
    pub fn deny(&mut self) {
        self.wire.outbox.push(State::AccessDenied.byte());
        self.wire.want = Want::Over;
    }

    /// Accepts the client: its parameters come next.
    pub fn accept(&mut self) {
        if self.stage == ServerStage::Cookie && self.wire.want == Want::Nothing {
            self.wire.outbox.push(State::ParamExchange.byte());
            self.wire.want = Want::Json("parameters", MAX_PARAMS);
            self.stage = ServerStage::Params;
            while let Some(item) = self.wire.take() {
                self.step(item);
            }
        }
    }

    /// Fails the session with iperf3's error numbers.
    pub fn error(&mut self, code: u32, errno: u32) {
        if self.wire.want != Want::Over {
            self.wire.outbox.push(State::ServerError.byte());
            self.wire.outbox.extend_from_slice(&code.to_be_bytes());
            self.wire.outbox.extend_from_slice(&errno.to_be_bytes());
            self.wire.want = Want::Over;
        }
    }

    /// The client may open its streams.
    pub fn create_streams(&mut self) {
        self.wire.outbox.push(State::CreateStreams.byte());
    }

    /// Every stream is in: the test starts and runs; the client's TEST_END is
    /// awaited.
    pub fn start(&mut self) {
        self.wire.outbox.push(State::TestStart.byte());
        self.wire.outbox.push(State::TestRunning.byte());
        self.stage = ServerStage::Running;
        self.wire.want = Want::State("TEST_END");
        while let Some(item) = self.wire.take() {
            self.step(item);
        }
    }

    /// After [`Iperf3Event::TestEnd`]: asks for the client's results.
    pub fn exchange_results(&mut self) {
        if self.wire.want != Want::Over {
            self.wire.outbox.push(State::ExchangeResults.byte());
            self.wire.want = Want::Json("results", MAX_RESULTS);
            self.stage = ServerStage::Results;
            while let Some(item) = self.wire.take() {
                self.step(item);
            }
        }
    }

    /// After the client's results: this end's, then DISPLAY_RESULTS; IPERF_DONE
    /// is awaited.
    pub fn send_results(&mut self, r: &Results) {
        if self.wire.want != Want::Over && self.stage == ServerStage::Done {
            self.wire.outbox.extend_from_slice(&encode_json(r));
            self.wire.outbox.push(State::DisplayResults.byte());
            self.wire.want = Want::State("IPERF_DONE");
            while let Some(item) = self.wire.take() {
                self.step(item);
            }
        }
    }

    fn step(&mut self, item: Item) {
        let w = &mut self.wire;
        match item {
            Item::Cookie(b) => match Cookie::parse(&b) {
                Ok(c) => {
                    w.want = Want::Nothing;
                    w.events.push_back(Iperf3Event::Cookie(c));
                }
                Err(e) => w.fail(e),
            },
            Item::Json(what, b) if self.stage == ServerStage::Params => {
                match parse::<Params>(what, &b) {
                    Ok(p) => {
                        w.want = Want::Nothing;
                        w.events.push_back(Iperf3Event::Params(Box::new(p)));
                    }
                    Err(e) => w.fail(e),
                }
            }
            Item::Json(what, b) => match parse::<Results>(what, &b) {
                Ok(r) => {
                    w.want = Want::Nothing;
                    self.stage = ServerStage::Done;
                    w.events.push_back(Iperf3Event::PeerResults(Box::new(r)));
                }
                Err(e) => w.fail(e),
            },
            Item::State(b) => {
                let waiting = match w.want {
                    Want::State(s) => s,
                    _ => "nothing",
                };
                match State::from_byte(b) {
                    Some(State::TestEnd) if self.stage == ServerStage::Running => {
                        w.want = Want::Nothing;
                        w.events.push_back(Iperf3Event::TestEnd);
                    }
                    Some(State::IperfDone) if self.stage == ServerStage::Done => {
                        w.want = Want::Over;
                        w.events.push_back(Iperf3Event::Done);
                    }
                    Some(State::ClientTerminate) => w.fail(Iperf3Error::Terminated),
                    _ => w.fail(Iperf3Error::UnexpectedState {
                        got: b as i8,
                        waiting,
                    }),
                }
            }
            Item::TooLong(what, len, max) => w.fail(Iperf3Error::TooLong { what, len, max }),
            Item::Codes(..) => w.fail(Iperf3Error::BadCookie),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cookie() -> Cookie {
        Cookie::from_random([7u8; 36])
    }

    /// Runs both machines against each other, byte by byte where it matters.
    #[test]
    fn a_whole_session_between_the_two_machines() {
        let spec = {
            let mut s = TestSpec::new(TestKind::TcpStream);
            s.parallel = 4;
            s.duration = Nanos::from_secs(3);
            s.warmup = Nanos::from_secs(1);
            s.direction = Direction::Bidir;
            s
        };
        let params = Params::from_spec(&spec).unwrap();
        let mut c = ClientMachine::new(cookie(), params.clone());
        let mut s = ServerMachine::new();
        // The cookie, one byte at a time: nothing until all 37 are in.
        for b in c.take_output() {
            assert_eq!(s.poll(), None);
            s.feed(&[b]);
        }
        assert_eq!(s.poll(), Some(Iperf3Event::Cookie(cookie())));
        s.accept();
        c.feed(&s.take_output());
        s.feed(&c.take_output());
        let Some(Iperf3Event::Params(p)) = s.poll() else {
            panic!("no parameters")
        };
        assert_eq!(*p, params);
        let back = p.to_spec().unwrap();
        assert_eq!(
            (back.parallel, back.direction, back.duration, back.warmup),
            (4, Direction::Bidir, spec.duration, spec.warmup)
        );
        s.create_streams();
        c.feed(&s.take_output());
        assert_eq!(c.poll(), Some(Iperf3Event::CreateStreams));
        s.start();
        c.feed(&s.take_output());
        assert_eq!(c.poll(), Some(Iperf3Event::TestStart));
        assert_eq!(c.poll(), Some(Iperf3Event::TestRunning));
        c.test_end();
        s.feed(&c.take_output());
        assert_eq!(s.poll(), Some(Iperf3Event::TestEnd));
        s.exchange_results();
        c.feed(&s.take_output());
        assert_eq!(c.poll(), Some(Iperf3Event::ExchangeResults));
        let mine = Results {
            cpu_util_total: 12.5,
            sender_has_retransmits: 1,
            streams: (0..8)
                .map(|k| StreamResult {
                    id: stream_id(k),
                    bytes: 1000 * k as u64,
                    ..StreamResult::default()
                })
                .collect(),
            ..Results::default()
        };
        c.send_results(&mine);
        s.feed(&c.take_output());
        assert_eq!(
            s.poll(),
            Some(Iperf3Event::PeerResults(Box::new(mine.clone())))
        );
        let theirs = Results {
            server_output_text: Some("hello".into()),
            ..mine.clone()
        };
        s.send_results(&theirs);
        c.feed(&s.take_output());
        assert_eq!(c.poll(), Some(Iperf3Event::PeerResults(Box::new(theirs))));
        assert_eq!(c.poll(), Some(Iperf3Event::Done));
        assert!(c.is_over());
        s.feed(&c.take_output());
        assert_eq!(s.poll(), Some(Iperf3Event::Done));
        assert!(s.is_over());
    }

    #[test]
    fn a_busy_or_failing_server_ends_the_client_with_its_reason() {
        let mut c = ClientMachine::new(cookie(), Params::default());
        c.feed(&[State::AccessDenied.byte()]);
        assert_eq!(c.poll(), Some(Iperf3Event::Failed(Iperf3Error::Denied)));
        assert!(c.is_over());

        let mut c = ClientMachine::new(cookie(), Params::default());
        let mut s = ServerMachine::new();
        s.feed(&c.take_output());
        s.poll();
        s.error(IE_RECV_PARAMS, 0);
        c.feed(&s.take_output());
        assert_eq!(
            c.poll(),
            Some(Iperf3Event::Failed(Iperf3Error::ServerError {
                code: IE_RECV_PARAMS,
                errno: 0
            }))
        );
    }

    #[test]
    fn garbage_fails_in_one_step_and_never_buffers_without_bound() {
        let mut s = ServerMachine::new();
        s.feed(&[0u8; 37]);
        assert_eq!(s.poll(), Some(Iperf3Event::Failed(Iperf3Error::BadCookie)));
        let mut s = ServerMachine::new();
        s.feed(&cookie().0);
        s.poll();
        s.accept();
        s.feed(&u32::MAX.to_be_bytes());
        assert!(matches!(
            s.poll(),
            Some(Iperf3Event::Failed(Iperf3Error::TooLong { .. }))
        ));
        let mut s = ServerMachine::new();
        s.feed(&cookie().0);
        s.poll();
        s.accept();
        let mut bad = 5u32.to_be_bytes().to_vec();
        bad.extend_from_slice(b"{oops");
        s.feed(&bad);
        assert!(matches!(
            s.poll(),
            Some(Iperf3Event::Failed(Iperf3Error::BadJson { .. }))
        ));
        // A state byte out of turn.
        let mut c = ClientMachine::new(cookie(), Params::default());
        c.feed(&[State::DisplayResults.byte()]);
        assert!(matches!(
            c.poll(),
            Some(Iperf3Event::Failed(Iperf3Error::UnexpectedState {
                got: 14,
                ..
            }))
        ));
    }

    #[test]
    fn parameters_of_a_real_iperf3_client_become_a_spec() {
        // What iperf3 3.12 sends for `-u -b 0 -l 1400 -P 2 -R -t 5 -O 1`.
        let json = br#"{"udp":true,"omit":1,"time":5,"num":0,"blockcount":0,"parallel":2,"reverse":true,"len":1400,"pacing_timer":1000,"client_version":"3.12"}"#;
        let p: Params = serde_json::from_slice(json).unwrap();
        let s = p.to_spec().unwrap();
        assert_eq!(s.test, TestKind::UdpStream);
        assert_eq!(s.direction, Direction::In);
        assert_eq!(s.size, Bytes(1400));
        assert_eq!(s.rate, Some(BitRate(1e6)), "iperf3's UDP default");
        assert_eq!(
            (s.parallel, s.duration, s.warmup),
            (2, Nanos::from_secs(5), Nanos::from_secs(1))
        );
        let by_bytes: Params =
            serde_json::from_slice(br#"{"tcp":true,"time":0,"num":1000000,"parallel":1}"#).unwrap();
        let s = by_bytes.to_spec().unwrap();
        assert_eq!(s.volume, Some(Bytes(1_000_000)));
        assert_eq!(
            s.duration,
            netsonde_model::spec::VOLUME_CAP,
            "time 0 is capped"
        );
        // -k: blocks of the write length; -O comes off the cap.
        let by_blocks: Params = serde_json::from_slice(
            br#"{"tcp":true,"time":0,"omit":2,"blockcount":10,"len":1000,"parallel":2}"#,
        )
        .unwrap();
        let s = by_blocks.to_spec().unwrap();
        assert_eq!(s.volume, Some(Bytes(10_000)));
        assert_eq!(s.stream_volume(), Some(5_000));
        assert_eq!(
            s.duration.saturating_add(s.warmup),
            netsonde_model::spec::VOLUME_CAP
        );
        // And back: one end condition, as iperf3 insists.
        let p = Params::from_spec(&s).unwrap();
        assert_eq!((p.num, p.time), (10_000, 0));
    }

    #[test]
    fn results_as_iperf3_writes_them_parse() {
        // iperf3 3.12's receiver results: -1 retransmits printed unsigned.
        let json = br#"{"cpu_util_total":1.5,"cpu_util_user":0.2,"cpu_util_system":1.3,"sender_has_retransmits":18446744073709551615,"streams":[{"id":1,"bytes":5423218688,"retransmits":18446744073709551615,"jitter":0,"errors":0,"omitted_errors":0,"packets":0,"omitted_packets":0,"start_time":0,"end_time":2.000114}]}"#;
        let r: Results = serde_json::from_slice(json).unwrap();
        assert_eq!(r.sender_has_retransmits, -1);
        assert_eq!(r.streams[0].retransmits, -1);
        assert_eq!(r.streams[0].bytes, 5_423_218_688);
        assert_eq!(r.streams[0].end_time, Some(2.000114));
    }

    #[test]
    fn cookies_and_stream_numbers_are_iperf3s() {
        let c = cookie();
        assert_eq!(c.0[36], 0);
        assert!(Cookie::parse(&c.0).is_ok());
        assert!(Cookie::may_start_with(c.0[0]));
        assert!(!Cookie::may_start_with(0), "a netsonde frame starts with 0");
        assert_eq!((0..4).map(stream_id).collect::<Vec<_>>(), [1, 3, 4, 5]);
        assert_eq!(LEGACY_UDP_CONNECT_REPLY, [0xb1, 0x68, 0xde, 0x3a]);
    }
}
