//! The receiving end of a `tls-stream` flow, on rustls's unbuffered API: the
//! socket is read into this flow's own buffer, up to [`READ`] bytes a call, and
//! its records are opened where they lie.
//!
//! rustls's buffered connection reads the socket 4 KiB at a time (its
//! deframer's `READ_SIZE`) and shrinks its buffer whenever it empties: four
//! or five `read(2)` calls for each 16 KiB record, a reallocation each time a
//! record ended on a read's edge. Here one `read(2)` takes what the socket
//! holds (up to [`READ`]), and the records are opened in place; rustls still
//! copies each record's plaintext once (into its own queue), as it does for
//! the buffered API.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Instant;

use netsonde_engine::io::{Moved, Rx, Sock};
use netsonde_model::result::IoReport;
use netsonde_model::spec::TestSpec;
use rustls::client::UnbufferedClientConnection;
use rustls::pki_types::ServerName;
use rustls::server::UnbufferedServerConnection;
use rustls::unbuffered::{ConnectionState, EncodeError, UnbufferedStatus};

use crate::{client_config, is_wait, server_config, timed, TlsError, HANDSHAKE};

/// The most one `read(2)` takes: the socket's usual share of a window on a
/// fast path, and a multiple of the 16 KiB records.
const READ: usize = 256 << 10;

/// Room kept past [`READ`] for a record that straddles a read's end (a TLS
/// record is at most 16 KiB of plaintext and 256 bytes of expansion, plus
/// its header).
const RECORD: usize = (16 << 10) + 256 + 5;

/// Either end's unbuffered connection.
enum Conn {
    Client(UnbufferedClientConnection),
    Server(UnbufferedServerConnection),
}

/// What one pass of the state machine asks for next.
enum Step {
    /// Handshake or alert bytes were encoded or sent: go on.
    Again,
    /// Application data was handed over: this many bytes.
    Data(u64),
    /// More of the peer's bytes are needed.
    Read,
    /// The peer closed (close_notify).
    Closed,
}

/// The receiving strategy over one flow's socket.
pub(crate) struct TlsRx {
    conn: Conn,
    /// The peer's bytes: `buf[start..used]` are not yet processed.
    buf: Box<[u8]>,
    start: usize,
    used: usize,
    /// Handshake and alert bytes encoded, not yet written.
    out: Vec<u8>,
    /// Test bytes that arrived with the handshake, handed over first.
    early: Vec<u8>,
    /// The peer closed (close_notify) before the first receive.
    closed: bool,
    note: String,
}

impl TlsRx {
    /// Shakes hands on `sock` as the TLS client (`client`) or server.
    pub(crate) fn handshake(
        sock: &TcpStream,
        spec: &TestSpec,
        client: bool,
    ) -> Result<TlsRx, TlsError> {
        let fail = |e: &dyn std::fmt::Display| TlsError::Handshake(e.to_string());
        let conn = if client {
            let name = ServerName::try_from("netsonde").map_err(|e| fail(&e))?;
            Conn::Client(
                UnbufferedClientConnection::new(Arc::new(client_config(spec)?), name)
                    .map_err(|e| fail(&e))?,
            )
        } else {
            Conn::Server(
                UnbufferedServerConnection::new(Arc::new(server_config(spec)?))
                    .map_err(|e| fail(&e))?,
            )
        };
        let mut rx = TlsRx {
            conn,
            buf: vec![0; READ + RECORD].into_boxed_slice(),
            start: 0,
            used: 0,
            out: Vec::new(),
            early: Vec::new(),
            closed: false,
            note: String::new(),
        };
        let began = Instant::now();
        // This thread's crypto from here on is this flow's.
        let _ = timed::take();
        let mut s = sock;
        // Test bytes that came with the handshake's last flight, kept for the
        // first receive.
        let mut early = Vec::new();
        loop {
            if began.elapsed() > HANDSHAKE {
                return Err(fail(&format!("no answer in {HANDSHAKE:?}")));
            }
            let step = rx
                .step(&mut s, &mut |d, _| early.extend_from_slice(d))
                .map_err(|e| fail(&e))?;
            let done = !rx.common().is_handshaking();
            match step {
                // Done once nothing is left to send: it waits for the peer, or
                // handed over data, or the peer has already closed (a short
                // test's every byte came with the last flight).
                Step::Read | Step::Data(_) if done => break,
                Step::Closed if done => {
                    rx.closed = true;
                    break;
                }
                Step::Read => match rx.fill(&mut s) {
                    Ok(0) => return Err(fail(&"the peer closed during the handshake")),
                    Ok(_) => {}
                    Err(e) if is_wait(&e) => {}
                    Err(e) => return Err(fail(&e)),
                },
                Step::Again | Step::Data(_) => {}
                Step::Closed => return Err(fail(&"the peer closed during the handshake")),
            }
        }
        let c = rx.common();
        rx.note = crate::describe(
            c.protocol_version(),
            c.negotiated_cipher_suite(),
            began.elapsed(),
        );
        rx.early = early;
        Ok(rx)
    }

    fn common(&self) -> &rustls::CommonState {
        match &self.conn {
            Conn::Client(c) => c,
            Conn::Server(c) => c,
        }
    }

    /// One pass of the state machine over the bytes not yet processed.
    fn step(
        &mut self,
        sock: &mut &TcpStream,
        on: &mut dyn FnMut(&[u8], usize),
    ) -> io::Result<Step> {
        let incoming = &mut self.buf[self.start..self.used];
        let out = &mut self.out;
        let (discard, step) = match &mut self.conn {
            Conn::Client(c) => handle(c.process_tls_records(incoming), out, sock, on)?,
            Conn::Server(c) => handle(c.process_tls_records(incoming), out, sock, on)?,
        };
        self.start += discard;
        if self.start == self.used {
            (self.start, self.used) = (0, 0);
        }
        Ok(step)
    }

    /// Reads once from the socket into the buffer: the bytes read (0 at its end).
    fn fill(&mut self, sock: &mut &TcpStream) -> io::Result<usize> {
        // A partial record at the end moves to the front once there is no room
        // for a whole one behind it.
        if self.buf.len() - self.used < RECORD {
            self.buf.copy_within(self.start..self.used, 0);
            (self.start, self.used) = (0, self.used - self.start);
        }
        let room = (self.buf.len() - self.used).min(READ);
        let n = sock.read(&mut self.buf[self.used..self.used + room])?;
        self.used += n;
        Ok(n)
    }
}

/// Handles one state: the bytes to discard from the front of the input, and
/// what comes next.
fn handle<Data>(
    status: UnbufferedStatus<'_, '_, Data>,
    out: &mut Vec<u8>,
    sock: &mut &TcpStream,
    on: &mut dyn FnMut(&[u8], usize),
) -> io::Result<(usize, Step)> {
    let bad = |e: rustls::Error| io::Error::new(io::ErrorKind::InvalidData, e);
    let mut discard = status.discard;
    let step = match status.state.map_err(bad)? {
        ConnectionState::ReadTraffic(mut r) => {
            let mut bytes = 0;
            while let Some(rec) = r.next_record() {
                let rec = rec.map_err(bad)?;
                discard += rec.discard;
                on(rec.payload, rec.payload.len());
                bytes += rec.payload.len() as u64;
            }
            Step::Data(bytes)
        }
        ConnectionState::EncodeTlsData(mut e) => {
            let at = out.len();
            let n = match e.encode(&mut []) {
                Ok(n) => n,
                Err(EncodeError::InsufficientSize(s)) => {
                    out.resize(at + s.required_size, 0);
                    e.encode(&mut out[at..])
                        .map_err(|e| io::Error::other(e.to_string()))?
                }
                Err(e) => return Err(io::Error::other(e.to_string())),
            };
            out.truncate(at + n);
            Step::Again
        }
        ConnectionState::TransmitTlsData(t) => {
            write_all(sock, out)?;
            out.clear();
            t.done();
            Step::Again
        }
        ConnectionState::BlockedHandshake | ConnectionState::WriteTraffic(_) => Step::Read,
        ConnectionState::PeerClosed | ConnectionState::Closed => Step::Closed,
        _ => return Err(io::Error::other("TLS: early data is not taken")),
    };
    Ok((discard, step))
}

/// Writes the whole of `bytes` through the socket's wake-up timeouts.
fn write_all(sock: &mut &TcpStream, mut bytes: &[u8]) -> io::Result<()> {
    let by = Instant::now() + HANDSHAKE;
    while !bytes.is_empty() {
        match sock.write(bytes) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if is_wait(&e) && Instant::now() < by => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

impl Rx for TlsRx {
    fn recv(
        &mut self,
        sock: Sock<'_>,
        on: &mut dyn FnMut(&[u8], usize),
    ) -> io::Result<Option<Moved>> {
        let Sock::Tcp(t) = sock else {
            return Err(io::Error::other("TLS runs over TCP"));
        };
        let mut s = t;
        if !self.early.is_empty() {
            let early = std::mem::take(&mut self.early);
            on(&early, early.len());
            return Ok(Some(Moved {
                bytes: early.len() as u64,
                messages: 0,
                calls: 0,
            }));
        }
        if self.closed {
            return Ok(None);
        }
        let mut calls = 0;
        loop {
            match self.step(&mut s, on)? {
                Step::Data(0) | Step::Again => {}
                Step::Data(n) => {
                    return Ok(Some(Moved {
                        bytes: n,
                        messages: 0,
                        calls,
                    }))
                }
                Step::Read => {
                    calls += 1;
                    if self.fill(&mut s)? == 0 {
                        // The peer closed without close_notify: its end of stream.
                        return Ok(None);
                    }
                }
                Step::Closed => return Ok(None),
            }
        }
    }

    fn report(&mut self) -> IoReport {
        IoReport {
            strategy: "tls".into(),
            note: Some(self.note.clone()),
            crypto: Some(timed::take()),
            ..IoReport::default()
        }
    }
}
