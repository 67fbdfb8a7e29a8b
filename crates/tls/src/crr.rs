//! `tls-crr`: a TLS handshake on every connection of a connect-request-response
//! flow, then the request and the response as records and the client's
//! close_notify: handshakes per second, full ones (the default: the server
//! sends no tickets and the client keeps no sessions), or resumed ones with
//! `--tls-resume` (TLS 1.3 tickets, TLS 1.2 session IDs, the flow's client
//! keeping its sessions), counted by kind in the report.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Instant;

use netsonde_engine::crr::Layer;
use netsonde_engine::EngineError;
use netsonde_model::result::IoReport;
use netsonde_model::spec::TestSpec;
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, HandshakeKind, ServerConfig, ServerConnection};

/// Which end a [`CrrLayer`] is, with its configuration (one for all its
/// connections, so a client may resume).
enum End {
    Client(Arc<ClientConfig>),
    Server(Arc<ServerConfig>),
}

/// One flow's end of tls-crr, and its handshakes by kind.
pub struct CrrLayer {
    end: End,
    full: u64,
    resumed: u64,
    version: Option<&'static str>,
}

impl std::fmt::Debug for CrrLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CrrLayer")
            .field("full", &self.full)
            .field("resumed", &self.resumed)
            .finish_non_exhaustive()
    }
}

/// tls-crr's layer for this end: the TLS client's (`client`) or the server's.
pub fn crr_layer(spec: &TestSpec, client: bool) -> Result<Box<dyn Layer>, EngineError> {
    let end = if client {
        let mut c = crate::client_config(spec)?;
        if !spec.tls_resume {
            c.resumption = rustls::client::Resumption::disabled();
        }
        End::Client(Arc::new(c))
    } else {
        let mut s = crate::server_config(spec)?;
        if spec.tls_resume {
            s.send_tls13_tickets = 1;
        } else {
            s.session_storage = Arc::new(rustls::server::NoServerSessionStorage {});
        }
        End::Server(Arc::new(s))
    };
    Ok(Box::new(CrrLayer {
        end,
        full: 0,
        resumed: 0,
        version: None,
    }))
}

/// Drives `conn` over `sock` until `done` holds, or `until` passes (a
/// timeout), or the peer fails it.
fn drive(
    conn: &mut rustls::Connection,
    mut sock: &TcpStream,
    until: Instant,
    done: impl Fn(&rustls::Connection) -> bool,
) -> io::Result<()> {
    while !done(conn) {
        if Instant::now() >= until {
            return Err(io::Error::from(io::ErrorKind::TimedOut));
        }
        match conn.complete_io(&mut sock) {
            Ok(_) => {}
            Err(e) if crate::is_wait(&e) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Reads `buf` whole from `conn`'s plaintext, driving it as needed.
fn read_all(
    conn: &mut rustls::Connection,
    sock: &TcpStream,
    buf: &mut [u8],
    until: Instant,
) -> io::Result<()> {
    let mut got = 0;
    while got < buf.len() {
        match conn.reader().read(&mut buf[got..]) {
            Ok(0) => return Err(io::Error::from(io::ErrorKind::UnexpectedEof)),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                let mut s = sock;
                if Instant::now() >= until {
                    return Err(io::Error::from(io::ErrorKind::TimedOut));
                }
                match conn.read_tls(&mut s) {
                    Ok(0) => return Err(io::Error::from(io::ErrorKind::UnexpectedEof)),
                    Ok(_) => {
                        conn.process_new_packets().map_err(io::Error::other)?;
                    }
                    Err(e) if crate::is_wait(&e) => {}
                    Err(e) => return Err(e),
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

impl CrrLayer {
    fn count(&mut self, conn: &rustls::Connection) {
        match conn.handshake_kind() {
            Some(HandshakeKind::Resumed) => self.resumed += 1,
            _ => self.full += 1,
        }
        self.version.get_or_insert(match conn.protocol_version() {
            Some(rustls::ProtocolVersion::TLSv1_2) => "TLS 1.2",
            _ => "TLS 1.3",
        });
    }
}

impl Layer for CrrLayer {
    fn request(
        &mut self,
        sock: &TcpStream,
        request: &[u8],
        response: &mut [u8],
        until: Instant,
    ) -> io::Result<()> {
        let End::Client(cfg) = &self.end else {
            return Err(io::Error::other(
                "tls-crr: the server's end makes no request",
            ));
        };
        let cfg = cfg.clone();
        let name = ServerName::try_from("netsonde").map_err(io::Error::other)?;
        let mut conn: rustls::Connection = ClientConnection::new(cfg, name)
            .map_err(io::Error::other)?
            .into();
        // Sent once the handshake is done, in the flight after the client's
        // Finished.
        conn.writer().write_all(request)?;
        drive(&mut conn, sock, until, |c| {
            !c.is_handshaking() && !c.wants_write()
        })?;
        read_all(&mut conn, sock, response, until)?;
        self.count(&conn);
        conn.send_close_notify();
        drive(&mut conn, sock, until, |c| !c.wants_write())
    }

    fn respond(
        &mut self,
        sock: &TcpStream,
        request: &mut [u8],
        response: &[u8],
        until: Instant,
    ) -> io::Result<()> {
        let End::Server(cfg) = &self.end else {
            return Err(io::Error::other(
                "tls-crr: the client's end answers no request",
            ));
        };
        let cfg = cfg.clone();
        let mut conn: rustls::Connection =
            ServerConnection::new(cfg).map_err(io::Error::other)?.into();
        drive(&mut conn, sock, until, |c| !c.is_handshaking())?;
        read_all(&mut conn, sock, request, until)?;
        conn.writer().write_all(response)?;
        drive(&mut conn, sock, until, |c| !c.wants_write())?;
        self.count(&conn);
        Ok(())
    }

    fn report(&self) -> IoReport {
        IoReport {
            strategy: "tls".into(),
            note: Some(format!(
                "{} (rustls, ring): {} full handshakes, {} resumed; a handshake, the request \
                 and the response as records and a close_notify per connection",
                self.version.unwrap_or("TLS"),
                self.full,
                self.resumed
            )),
            crypto: Some(crate::timed::take()),
            ..IoReport::default()
        }
    }
}
