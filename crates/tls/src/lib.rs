//! TLS over a flow's TCP connection: what encryption costs a host.
//!
//! A `tls-stream` flow is a `tcp-stream` flow whose sending and receiving
//! strategies write and read TLS records (rustls, with `ring`'s crypto) instead
//! of the bytes themselves: [`tx`] and [`rx`] shake hands on the connected
//! socket (the netsonde client is the TLS client, whichever way the bytes go),
//! then hand the engine a [`Tx`] or [`Rx`] that the engine's TCP loops drive
//! like any other strategy, so pacing, phases, counters, `--verify`, `TCP_INFO`
//! and the CPU accounting are the same as TCP's. The figures count plaintext
//! bytes (goodput); the records' framing and tags are on the wire beside them.
//!
//! The server's certificate is self-signed (ECDSA P-256), made once per process;
//! the client checks the handshake's signatures with it (the cost of a real
//! handshake) but not who signed it: the test's peer is the one its control
//! connection admitted, and the bytes are test bytes. A suite is chosen by its
//! IANA name ([`suites`]); it also sets the protocol version (TLS 1.3 or 1.2).
//!
//! The sender is rustls 0.23's buffered connection, the receiver its
//! unbuffered API (`rx.rs`: the socket read in large reads, records opened in
//! place). The library copies each record's plaintext once on each side (into
//! its record on sending, into its queue on receiving) and allocates each
//! sealed record and each opened one: that is the TLS library's cost, inside
//! the measured CPU; this crate's own loop allocates nothing per message.

use std::io::{self, Write};
use std::net::TcpStream;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use netsonde_engine::io::{Moved, Rx, Sock, Tx};
use netsonde_engine::EngineError;
use netsonde_model::result::IoReport;
use netsonde_model::spec::TestSpec;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, Connection, DigitallySignedStruct, ServerConfig, SupportedCipherSuite};

/// The records a sender seals before writing them, at least.
const SEAL_AHEAD: usize = 256 << 10;

/// How long a handshake may take before the flow fails.
const HANDSHAKE: Duration = Duration::from_secs(5);

/// Why a TLS flow could not start.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A suite this build does not have.
    #[error("--tls-suite {given}: not a suite netsonde has (it has {have})")]
    UnknownSuite {
        /// The name given.
        given: String,
        /// The names it has.
        have: String,
    },
    /// Building a configuration failed.
    #[error("TLS setup: {0}")]
    Config(String),
    /// The handshake failed or took too long.
    #[error("TLS handshake: {0}")]
    Handshake(String),
}

impl From<TlsError> for EngineError {
    fn from(e: TlsError) -> EngineError {
        EngineError::Io {
            op: "tls",
            source: io::Error::other(e),
        }
    }
}

/// The suites a `tls-stream` test can use, by IANA name, TLS 1.3's first: the
/// provider's own that the server's ECDSA certificate can sign for.
pub fn suites() -> Vec<&'static str> {
    rustls::crypto::ring::ALL_CIPHER_SUITES
        .iter()
        .filter(|s| usable(s))
        .filter_map(|s| s.suite().as_str())
        .collect()
}

fn usable(s: &SupportedCipherSuite) -> bool {
    match s {
        SupportedCipherSuite::Tls13(_) => true,
        // The server's key is ECDSA: TLS 1.2's ECDHE_ECDSA suites.
        SupportedCipherSuite::Tls12(_) => s.suite().as_str().is_some_and(|n| n.contains("_ECDSA_")),
    }
}

/// The provider for `spec`: its suite alone, or the provider's TLS 1.3 suites.
fn provider(spec: &TestSpec) -> Result<Arc<CryptoProvider>, TlsError> {
    let mut p = rustls::crypto::ring::default_provider();
    p.cipher_suites.retain(usable);
    match &spec.tls_suite {
        Some(name) => p
            .cipher_suites
            .retain(|s| s.suite().as_str() == Some(name.as_str())),
        None => p
            .cipher_suites
            .retain(|s| matches!(s, SupportedCipherSuite::Tls13(_))),
    }
    if p.cipher_suites.is_empty() {
        return Err(TlsError::UnknownSuite {
            given: spec.tls_suite.clone().unwrap_or_default(),
            have: suites().join(", "),
        });
    }
    p.cipher_suites = timed::timed(&p.cipher_suites);
    p.kx_groups = pubkey::kx_groups(&p.kx_groups);
    p.key_provider = &pubkey::KEYS;
    Ok(Arc::new(p))
}

fn versions(p: &CryptoProvider) -> Vec<&'static rustls::SupportedProtocolVersion> {
    let mut v: Vec<_> = p.cipher_suites.iter().map(|s| s.version()).collect();
    v.dedup();
    v
}

/// The server's certificate and key, made once per process.
fn identity() -> Result<&'static (CertificateDer<'static>, Vec<u8>), TlsError> {
    static ID: OnceLock<Result<(CertificateDer<'static>, Vec<u8>), String>> = OnceLock::new();
    ID.get_or_init(|| {
        let c = rcgen::generate_simple_self_signed(vec!["netsonde".to_string()])
            .map_err(|e| e.to_string())?;
        Ok((c.cert.der().clone(), c.signing_key.serialize_der()))
    })
    .as_ref()
    .map_err(|e| TlsError::Config(format!("making a certificate: {e}")))
}

/// The server's configuration for `spec`: its certificate, the suites `spec`
/// allows. QUIC's server builds on it ([`ServerConfig::alpn_protocols`]).
pub fn server_config(spec: &TestSpec) -> Result<ServerConfig, TlsError> {
    let p = provider(spec)?;
    let vs = versions(&p);
    let (cert, key) = identity()?;
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.clone()));
    let mut c = ServerConfig::builder_with_provider(p)
        .with_protocol_versions(&vs)
        .map_err(|e| TlsError::Config(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(vec![cert.clone()], key)
        .map_err(|e| TlsError::Config(e.to_string()))?;
    // Every flow's handshake is a full one: no tickets to resume with.
    c.send_tls13_tickets = 0;
    Ok(c)
}

/// The client's configuration for `spec`: the suites `spec` allows, the
/// server's signatures checked (see the crate's doc). QUIC's client builds
/// on it.
pub fn client_config(spec: &TestSpec) -> Result<ClientConfig, TlsError> {
    let p = provider(spec)?;
    let vs = versions(&p);
    let verifier = Arc::new(Signatures(p.clone()));
    Ok(ClientConfig::builder_with_provider(p)
        .with_protocol_versions(&vs)
        .map_err(|e| TlsError::Config(e.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth())
}

/// Checks the handshake's signatures against the server's certificate, not
/// who signed the certificate (see the crate's doc).
#[derive(Debug)]
struct Signatures(Arc<CryptoProvider>);

impl ServerCertVerifier for Signatures {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        pubkey::check(|| {
            verify_tls12_signature(
                message,
                cert,
                dss,
                &self.0.signature_verification_algorithms,
            )
        })
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        pubkey::check(|| {
            verify_tls13_signature(
                message,
                cert,
                dss,
                &self.0.signature_verification_algorithms,
            )
        })
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// A TLS connection over a flow's socket, its handshake done.
struct Session {
    conn: Connection,
    /// What the report says: version, suite, handshake time.
    note: String,
}

/// Shakes hands on `sock` as the TLS client (`client`) or server.
fn handshake(sock: &TcpStream, spec: &TestSpec, client: bool) -> Result<Session, TlsError> {
    let fail = |e: &dyn std::fmt::Display| TlsError::Handshake(e.to_string());
    let mut conn: Connection = if client {
        let name = ServerName::try_from("netsonde").map_err(|e| fail(&e))?;
        rustls::ClientConnection::new(Arc::new(client_config(spec)?), name)
            .map_err(|e| fail(&e))?
            .into()
    } else {
        rustls::ServerConnection::new(Arc::new(server_config(spec)?))
            .map_err(|e| fail(&e))?
            .into()
    };
    let start = Instant::now();
    // This thread's crypto from here on is this flow's.
    let _ = timed::take();
    let mut s = sock;
    while conn.is_handshaking() {
        if start.elapsed() > HANDSHAKE {
            return Err(fail(&format!("no answer in {HANDSHAKE:?}")));
        }
        match conn.complete_io(&mut s) {
            Ok(_) => {}
            // The socket's wake-up timeout: look at the clock, go on.
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(e) => return Err(fail(&e)),
        }
    }
    // A client's last flight (TLS 1.3's Finished) may still be queued.
    while conn.wants_write() {
        conn.write_tls(&mut s).map_err(|e| fail(&e))?;
    }
    let note = describe(
        conn.protocol_version(),
        conn.negotiated_cipher_suite(),
        start.elapsed(),
    );
    Ok(Session { conn, note })
}

/// What a flow's report says of its connection: version, suite, handshake.
fn describe(
    version: Option<rustls::ProtocolVersion>,
    suite: Option<SupportedCipherSuite>,
    took: Duration,
) -> String {
    let version = match version {
        Some(rustls::ProtocolVersion::TLSv1_3) => "TLS 1.3",
        Some(rustls::ProtocolVersion::TLSv1_2) => "TLS 1.2",
        _ => "TLS",
    };
    let suite = suite.and_then(|s| s.suite().as_str()).unwrap_or("?");
    format!(
        "{version}, {suite} (rustls, ring); handshake {:.2} ms; goodput counts plaintext",
        took.as_secs_f64() * 1e3
    )
}

/// The TLS sending strategy of a flow whose end is the TLS client (`client`)
/// or server: the handshake now, then records of the test's messages.
pub fn tx(sock: &TcpStream, spec: &TestSpec, client: bool) -> Result<Box<dyn Tx>, EngineError> {
    let mut s = handshake(sock, spec, client)?;
    // A whole message's records sealed before one `writev` of them (the
    // library's default is 64 KiB: two calls for a 128 KiB message).
    s.conn
        .set_buffer_limit(Some((spec.size.0 as usize).max(SEAL_AHEAD)));
    let mut msg = vec![0; (spec.size.0 as usize).max(1)];
    netsonde_engine::fill_pattern(&mut msg);
    Ok(Box::new(TlsTx {
        s,
        msg,
        off: 0,
        closed: false,
    }))
}

/// The TLS receiving strategy (as [`tx`]), on rustls's unbuffered API
/// (`rx.rs`).
pub fn rx(sock: &TcpStream, spec: &TestSpec, client: bool) -> Result<Box<dyn Rx>, EngineError> {
    Ok(Box::new(rx::TlsRx::handshake(sock, spec, client)?))
}

/// Records of the test's messages: more of a message is sealed (a record per
/// 16 KiB, up to the library's 64 KiB of records waiting) only once the
/// records before are all written; each call writes what is queued (one
/// `writev`).
struct TlsTx {
    s: Session,
    msg: Vec<u8>,
    /// How far into the message the sealed bytes reach.
    off: usize,
    closed: bool,
}

impl Tx for TlsTx {
    fn send(&mut self, sock: Sock<'_>, _seq: u64, _tx_ns: u64) -> io::Result<Moved> {
        let Sock::Tcp(mut t) = sock else {
            return Err(io::Error::other("TLS runs over TCP"));
        };
        let mut mv = Moved::default();
        // Until some new plaintext is sealed: a call that only flushed
        // earlier records goes on, so none returns 0 bytes (which a TCP
        // sender takes for a closed peer); a socket that takes nothing in its
        // timeout is the wait's error.
        loop {
            if !self.s.conn.wants_write() {
                let n = self.s.conn.writer().write(&self.msg[self.off..])?;
                self.off += n;
                if self.off == self.msg.len() {
                    self.off = 0;
                    mv.messages = 1;
                }
                mv.bytes = n as u64;
            }
            mv.calls += 1;
            match self.s.conn.write_tls(&mut t) {
                Ok(_) if mv.bytes > 0 => return Ok(mv),
                Ok(_) => {}
                // Sealed but not yet written: counted now, written by the next call.
                Err(e) if mv.bytes > 0 && is_wait(&e) => return Ok(mv),
                Err(e) => return Err(e),
            }
        }
    }

    fn finish(&mut self, sock: Sock<'_>) -> IoReport {
        if let (Sock::Tcp(mut t), false) = (sock, self.closed) {
            self.closed = true;
            self.s.conn.send_close_notify();
            let deadline = Instant::now() + Duration::from_secs(1);
            while self.s.conn.wants_write() && Instant::now() < deadline {
                match self.s.conn.write_tls(&mut t) {
                    Ok(_) => {}
                    Err(e) if is_wait(&e) => {}
                    Err(_) => break,
                }
            }
        }
        report(&self.s)
    }

    fn idle(&self) -> bool {
        !self.s.conn.wants_write()
    }
}

/// The flow's report, with what its records' crypto took on this thread
/// (called as the flow ends, on its thread).
fn report(s: &Session) -> IoReport {
    IoReport {
        strategy: "tls".into(),
        note: Some(s.note.clone()),
        crypto: Some(timed::take()),
        ..IoReport::default()
    }
}

pub(crate) fn is_wait(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
    )
}

mod crr;
mod pubkey;
mod rr;
mod rx;
mod timed;
pub use crr::{crr_layer, CrrLayer};
pub use rr::rr_pipe;
pub use timed::take as take_crypto;

#[cfg(test)]
mod tests;
