//! Typed control messages (the JSON bodies of kind-2 frames) and the preamble that
//! ties a data connection to its session.

use std::fmt;

use netsonde_model::host::HostFacts;
use netsonde_model::result::{SideResult, SocketFacts, TestReport};
use netsonde_model::spec::TestSpec;
use netsonde_model::units::Nanos;
use serde::{Deserialize, Serialize};

/// A session's secret: data connections and UDP flows present it so that nobody else
/// can join a session. 16 random bytes, chosen by the server.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Token(pub [u8; 16]);

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print the secret itself.
        f.write_str("Token(..)")
    }
}

impl Serialize for Token {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let hex: String = self.0.iter().map(|b| format!("{b:02x}")).collect();
        s.serialize_str(&hex)
    }
}

impl<'de> Deserialize<'de> for Token {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s.len() != 32 || !s.is_ascii() {
            return Err(serde::de::Error::custom("token must be 32 hex digits"));
        }
        let mut out = [0u8; 16];
        for (i, o) in out.iter_mut().enumerate() {
            *o = u8::from_str_radix(&s[2 * i..2 * i + 2], 16)
                .map_err(|_| serde::de::Error::custom("token must be 32 hex digits"))?;
        }
        Ok(Token(out))
    }
}

/// 32 bytes carried as 64 hex digits: nonces and proofs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hex32(pub [u8; 32]);

impl Serialize for Hex32 {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&crate::auth::hex_encode(&self.0))
    }
}

impl<'de> Deserialize<'de> for Hex32 {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        crate::auth::hex_decode::<32>(&s)
            .map(Hex32)
            .ok_or_else(|| serde::de::Error::custom("expected 64 hex digits"))
    }
}

/// The first bytes a client sends on every data connection (TCP) and in every UDP
/// hello datagram: `"NSDATA01"`, the token, and the flow number (u32 big-endian).
pub const PREAMBLE_LEN: usize = 8 + 16 + 4;
/// The preamble's first 8 bytes.
pub const PREAMBLE_MAGIC: &[u8; 8] = b"NSDATA01";

/// Encodes a data preamble.
pub fn encode_preamble(token: &Token, flow: u32) -> [u8; PREAMBLE_LEN] {
    let mut out = [0u8; PREAMBLE_LEN];
    out[..8].copy_from_slice(PREAMBLE_MAGIC);
    out[8..24].copy_from_slice(&token.0);
    out[24..].copy_from_slice(&flow.to_be_bytes());
    out
}

/// Decodes a data preamble: the token and flow number, or `None` if it is not one.
pub fn decode_preamble(bytes: &[u8; PREAMBLE_LEN]) -> Option<(Token, u32)> {
    if &bytes[..8] != PREAMBLE_MAGIC {
        return None;
    }
    let token = Token(bytes[8..24].try_into().ok()?);
    let flow = u32::from_be_bytes(bytes[24..].try_into().ok()?);
    Some((token, flow))
}

/// Why a peer ended a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorCode {
    /// The protocol versions differ.
    VersionMismatch,
    /// A message arrived that the state does not allow.
    Protocol,
    /// The spec was refused (invalid, or beyond the server's limits).
    BadSpec,
    /// The server is running another test.
    Busy,
    /// A phase deadline passed.
    Timeout,
    /// Setting up or running the test failed on this end.
    Internal,
    /// The server requires a key and the client has none, or the reverse.
    AuthRequired,
    /// Authentication or frame integrity failed.
    AuthFailed,
    /// A job's target did not answer on its control channel: no address, no
    /// connection, no hello, or a session that broke or fell silent. An
    /// agent sends it for its job; a controller marks the target down on it
    /// alone, never on a test that ran and failed.
    Unreachable,
}

/// What the server tells the client after accepting a setup.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetupAck {
    /// The session token for data connections.
    pub token: Token,
    /// TCP port for data connections.
    pub data_port: u16,
    /// One UDP port per UDP flow, in flow order.
    pub udp_ports: Vec<u16>,
    /// The server's host facts.
    pub host: HostFacts,
    /// What the kernel granted on the server's data sockets.
    pub socket: Option<SocketFacts>,
}

/// The furthest ahead a job's start may be set: a controller starts concurrent
/// jobs together a moment from now, never minutes ahead.
pub const MAX_START_DELAY: Nanos = Nanos::from_secs(10);

/// Work for an agent (`netsonde agent`): run `spec` as a client against the
/// netsonde server or agent at `target_host`:`target_port`, and send back the
/// whole report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Job {
    /// The server's host, as the agent resolves it.
    pub target_host: String,
    /// Its control port.
    pub target_port: u16,
    /// The test.
    pub spec: TestSpec,
    /// When to start, in milliseconds since the Unix epoch (the hosts' clocks
    /// are synchronised): concurrent jobs start together. `None`: at once. At
    /// most [`MAX_START_DELAY`] ahead of the agent's clock.
    #[serde(default)]
    pub start_at_unix_ms: Option<u64>,
}

/// What an agent sends back for a job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobReport {
    /// The client's report, both sides.
    pub report: TestReport,
    /// When the agent started the test, in milliseconds since the Unix epoch
    /// (the start skew of concurrent jobs is measured from it).
    pub started_unix_ms: u64,
}

/// A control message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Message {
    /// Server to client: prove you hold the key (after hellos, when keyed).
    AuthChallenge {
        /// The server's fresh nonce.
        nonce: Hex32,
    },
    /// Client to server: the proof, and the client's own challenge.
    AuthResponse {
        /// The client's fresh nonce.
        nonce: Hex32,
        /// HMAC over both nonces (see `auth`).
        proof: Hex32,
    },
    /// Server to client: the server's proof; every later frame is sealed.
    AuthOk {
        /// HMAC over both nonces.
        proof: Hex32,
    },
    /// Client to server: run this test.
    Setup {
        /// The validated spec.
        spec: Box<TestSpec>,
    },
    /// Server to client: accepted; connect the data flows.
    SetupAck(Box<SetupAck>),
    /// Client to server: every data flow is connected; go.
    Start,
    /// Server to client: the server's figures.
    Results {
        /// The server's side.
        result: Box<SideResult>,
    },
    /// Client to server: results received; the session is over.
    Done,
    /// Controller to agent: run this job (instead of a setup).
    Job {
        /// The job.
        job: Box<Job>,
    },
    /// Agent to controller: the job's report.
    JobResult(Box<JobReport>),
    /// Either way: the session is over because of this.
    Error {
        /// Machine-readable reason.
        code: ErrorCode,
        /// One line for a human.
        message: String,
        /// For `Busy`: when to try again.
        retry_after_ms: Option<u64>,
    },
}

impl Message {
    /// The name of the message, for error texts.
    pub fn name(&self) -> &'static str {
        match self {
            Message::AuthChallenge { .. } => "auth-challenge",
            Message::AuthResponse { .. } => "auth-response",
            Message::AuthOk { .. } => "auth-ok",
            Message::Setup { .. } => "setup",
            Message::SetupAck(_) => "setup-ack",
            Message::Start => "start",
            Message::Results { .. } => "results",
            Message::Done => "done",
            Message::Job { .. } => "job",
            Message::JobResult(_) => "job-result",
            Message::Error { .. } => "error",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preamble_roundtrip() {
        let t = Token([7; 16]);
        let p = encode_preamble(&t, 42);
        assert_eq!(decode_preamble(&p), Some((t, 42)));
        let mut bad = p;
        bad[0] = b'X';
        assert_eq!(decode_preamble(&bad), None);
    }

    #[test]
    fn token_hex() {
        let t = Token([0xab; 16]);
        let s = serde_json::to_string(&t).unwrap();
        assert_eq!(s, format!("\"{}\"", "ab".repeat(16)));
        assert_eq!(serde_json::from_str::<Token>(&s).unwrap(), t);
        assert!(serde_json::from_str::<Token>("\"zz\"").is_err());
        assert_eq!(format!("{t:?}"), "Token(..)");
    }
}
