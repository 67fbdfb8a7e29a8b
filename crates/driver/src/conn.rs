//! The client side of a connection to a server, whatever it speaks: what to
//! run against whom ([`ClientConfig`]), what can go wrong ([`ClientError`]),
//! resolving the host and opening a data connection with the spec's options.

use std::io::Write;
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

use netsonde_engine::{sockopt, EngineError};
use netsonde_model::spec::{SpecError, TestSpec};
use netsonde_proto::{Deadlines, ErrorCode, ProtoError};
use socket2::{Domain, Protocol, Socket, Type};

use crate::server::ServerError;

pub use netsonde_model::spec::Peer;

/// Default control port.
pub const DEFAULT_PORT: u16 = Peer::Netsonde.default_port();

/// What to run, against whom.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// Server host; `None` runs an embedded server on loopback.
    pub host: Option<String>,
    /// Server control port.
    pub port: u16,
    /// The test.
    pub spec: TestSpec,
    /// Phase deadlines.
    pub deadlines: Deadlines,
    /// Authenticate with this key (and insist the server does).
    pub auth_key: Option<netsonde_proto::auth::Key>,
    /// What the server is.
    pub peer: Peer,
    /// Where this end's connections come from.
    pub local: Local,
    /// Deadline of the control connection's connect.
    pub connect_timeout: Duration,
    /// Set from another thread to end the test before its time: its flows stop
    /// and it fails with [`ClientError::Cancelled`] (an agent whose controller
    /// went away frees its test slot at once). `None`: it runs to its end.
    pub cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

/// Where a client's connections come from (iperf3's `-B` and `--cport`); by
/// default the kernel chooses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Local {
    /// Local address of every connection.
    pub ip: Option<IpAddr>,
    /// Local port of data connection (flow) 0; flow `k` uses this plus `k`.
    pub data_port: Option<u16>,
}

/// The control connection's connect deadline when none is given.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

impl ClientConfig {
    /// Opens the control connection to `addr`: from [`Local::ip`] when given,
    /// within the connect deadline.
    pub(crate) fn connect_control(&self, addr: SocketAddr) -> std::io::Result<TcpStream> {
        let s = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
        if let Some(ip) = self.local.ip {
            s.bind(&SocketAddr::new(ip, 0).into())?;
        }
        s.connect_timeout(&addr.into(), self.connect_timeout)?;
        Ok(s.into())
    }

    /// The local address of flow `id`'s data socket, when one is asked for
    /// (`None`: the kernel's choice); `ctl_ip` is the control connection's.
    pub(crate) fn data_local(&self, ctl_ip: IpAddr, id: u32) -> Option<SocketAddr> {
        let port = match self.local.data_port {
            Some(p) => Some(u16::try_from(u32::from(p) + id).ok()?),
            None => None,
        };
        (self.local.ip.is_some() || port.is_some())
            .then(|| SocketAddr::new(ctl_ip, port.unwrap_or(0)))
    }
}

/// Why a test could not run or finish.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The spec is invalid.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// `--affinity` names a core this process may not run on (its CPU mask).
    #[error("--affinity: this process may not run on core {core} (its CPU mask allows {allowed})")]
    Affinity {
        /// The core asked for.
        core: usize,
        /// The cores it may run on, as the kernel lists a mask.
        allowed: String,
    },
    /// The host name did not resolve.
    #[error("cannot resolve '{host}': {source}")]
    Resolve {
        /// The name.
        host: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The embedded server could not start.
    #[error("cannot start the embedded server: {0}")]
    Embedded(#[source] ServerError),
    /// The control connection could not be made.
    #[error("cannot connect to {addr}: {source}")]
    Connect {
        /// The server.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The server runs another test.
    #[error("{addr}: {message}")]
    Busy {
        /// The server.
        addr: SocketAddr,
        /// Its words.
        message: String,
        /// When to retry.
        retry_after_ms: Option<u64>,
    },
    /// The server refused the test.
    #[error("{addr} refused the test: {message}")]
    Refused {
        /// The server.
        addr: SocketAddr,
        /// Its words.
        message: String,
    },
    /// The server accepted the connection and sent no hello: not a netsonde
    /// server, most likely an `iperf3 -s`.
    #[error(
        "{addr} accepted the connection but sent no netsonde hello: if it is `iperf3 -s` \
         (it waits silently for its cookie), add --peer iperf3"
    )]
    Silent {
        /// The server.
        addr: SocketAddr,
    },
    /// The server answered netsonde's opening as an `iperf3 -s` answers a
    /// cookie: an iperf3 server, told within a round trip.
    #[error(
        "{addr} is an iperf3 server (it answered as `iperf3 -s` answers a client): add \
         --peer iperf3 to test against it"
    )]
    Iperf3Server {
        /// The server.
        addr: SocketAddr,
    },
    /// The test ran, but not whole: a flow ended early, or the server's side is
    /// missing. Its figures are not a result.
    #[error("incomplete test: {0}")]
    Incomplete(String),
    /// The test was stopped before its end by whoever ran it
    /// ([`ClientConfig::cancel`]).
    #[error("the test was stopped before its end")]
    Cancelled,
    /// An agent's job report is for another test than the job's, or holds
    /// figures no link could produce ([`crate::vet`]); nothing of it is kept.
    #[error("{addr} sent a job report this controller does not believe: {why}")]
    Unbelievable {
        /// The agent.
        addr: SocketAddr,
        /// What is wrong with it.
        why: String,
    },
    /// The control session failed.
    #[error("session with {addr} failed: {source}")]
    Session {
        /// The server.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: ProtoError,
    },
    /// A data connection could not be set up.
    #[error("data connection {flow} to {addr} failed: {source}")]
    Data {
        /// The flow.
        flow: u32,
        /// Its address.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: EngineError,
    },
    /// A flow failed while running.
    #[error("test failed: {0}")]
    Flow(#[source] EngineError),
    /// An iperf3 peer needs a host: there is no embedded iperf3 server.
    #[error("--peer iperf3 needs a server host (there is no embedded iperf3 server)")]
    Iperf3NeedsHost,
    /// Another tool's server cannot run the test asked.
    #[error("--peer {peer} cannot run {why}")]
    PeerCannot {
        /// The peer's name.
        peer: &'static str,
        /// What it cannot run, and why.
        why: String,
    },
    /// The iperf3 session failed.
    #[error("iperf3 server {addr}: {source}")]
    Iperf3 {
        /// The server.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: netsonde_proto::iperf3::Iperf3Error,
    },
}

impl ClientError {
    /// Whether the request was refused before any test traffic: what was
    /// asked (the spec, a core, the key) or the server's answer to it (its
    /// limits, busy, another key, another version). The binary exits 2 on
    /// these, as on bad arguments; a test that failed once running exits 1.
    pub fn refused_before_traffic(&self) -> bool {
        use netsonde_proto::iperf3::Iperf3Error;
        match self {
            ClientError::Spec(_)
            | ClientError::Affinity { .. }
            | ClientError::Busy { .. }
            | ClientError::Refused { .. }
            | ClientError::Iperf3NeedsHost
            | ClientError::PeerCannot { .. }
            // Not a netsonde server (an `iperf3 -s`): what was asked needs
            // --peer iperf3.
            | ClientError::Silent { .. }
            | ClientError::Iperf3Server { .. } => true,
            ClientError::Session { source, .. } => matches!(
                source,
                ProtoError::VersionMismatch { .. }
                    | ProtoError::ClientHasNoKey
                    | ProtoError::ServerNeedsKey
                    | ProtoError::ServerNotAuthenticating
                    | ProtoError::AuthFailed
                    | ProtoError::Remote {
                        code: ErrorCode::AuthRequired
                            | ErrorCode::AuthFailed
                            | ErrorCode::VersionMismatch
                            | ErrorCode::BadSpec
                            | ErrorCode::Busy,
                        ..
                    }
            ),
            ClientError::Iperf3 { source, .. } => matches!(source, Iperf3Error::Denied),
            _ => false,
        }
    }
}

pub(crate) fn session_error(addr: SocketAddr, e: ProtoError) -> ClientError {
    match e {
        ProtoError::Remote {
            code: ErrorCode::Busy,
            message,
            retry_after_ms,
        } => ClientError::Busy {
            addr,
            message,
            retry_after_ms,
        },
        ProtoError::Remote {
            code: ErrorCode::BadSpec,
            message,
            ..
        } => ClientError::Refused { addr, message },
        // A server that takes the connection and says nothing: an `iperf3 -s`
        // reads a 37-byte cookie first, and waits for the rest of it.
        ProtoError::Deadline {
            phase: "the server's hello",
        } => ClientError::Silent { addr },
        ProtoError::Frame(netsonde_proto::FrameError::Iperf3Server(_)) => {
            ClientError::Iperf3Server { addr }
        }
        source => ClientError::Session { addr, source },
    }
}

pub(crate) fn resolve(host: &str, port: u16) -> Result<SocketAddr, ClientError> {
    let resolve_err = |source| ClientError::Resolve {
        host: host.to_string(),
        source,
    };
    let mut addrs = (host, port).to_socket_addrs().map_err(resolve_err)?;
    addrs.next().ok_or_else(|| {
        resolve_err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "no addresses",
        ))
    })
}

/// Opens flow `id`'s TCP data connection to `addr` with the spec's socket
/// options, and sends `first` (netsonde's preamble, or iperf3's cookie).
pub(crate) fn connect_tcp(
    spec: &TestSpec,
    addr: SocketAddr,
    local: Option<SocketAddr>,
    id: u32,
    first: &[u8],
) -> Result<(TcpStream, netsonde_model::result::SocketFacts), ClientError> {
    let fail = |source| ClientError::Data {
        flow: id,
        addr,
        source,
    };
    let io = |op| move |e| fail(EngineError::Io { op, source: e });
    let protocol = sockopt::stream_protocol(spec);
    let s = Socket::new(Domain::for_address(addr), Type::STREAM, Some(protocol)).map_err(|e| {
        match sockopt::mptcp_unavailable(&e).filter(|_| spec.mptcp) {
            Some(why) => fail(EngineError::Io {
                op: "--mptcp",
                source: std::io::Error::new(e.kind(), why),
            }),
            None => fail(EngineError::Io {
                op: "socket",
                source: e,
            }),
        }
    })?;
    // A client receives a server-to-client flow: its own buffer before the
    // handshake, so the window scale agreed covers it.
    let receives = spec
        .flows()
        .iter()
        .any(|&(f, d)| f == id && d == netsonde_model::spec::FlowDir::Down);
    sockopt::apply_flow(&s, spec, id, receives).map_err(fail)?;
    if let Some(from) = local {
        // A fixed port may still have an old connection in TIME_WAIT.
        s.set_reuse_address(true).map_err(io("setsockopt"))?;
        s.bind(&from.into()).map_err(io("bind"))?;
    }
    s.connect_timeout(&addr.into(), Duration::from_secs(5))
        .map_err(io("connect"))?;
    sockopt::set_wake(&s).map_err(fail)?;
    let facts = sockopt::facts(&s, true);
    let mut t: TcpStream = s.into();
    t.write_all(first).map_err(io("send the first bytes"))?;
    Ok((t, facts))
}
