//! `tls-rr`: tcp-rr's request and response as TLS records on one kept
//! connection per flow, its handshake done as the flow starts
//! ([`netsonde_engine::rr::Pipe`]). A message is counted as sent only once its
//! records are all on the socket, so the request/response turn never waits on
//! records held back in the library.

use std::io::{self, Read, Write};
use std::net::TcpStream;

use netsonde_engine::rr::Pipe;
use netsonde_engine::EngineError;
use netsonde_model::result::IoReport;
use netsonde_model::spec::TestSpec;

use crate::{handshake, report, Session};

/// tls-rr's pipe for this end, its handshake done: the TLS client's
/// (`client`, the requester) or the server's.
pub fn rr_pipe(
    sock: &TcpStream,
    spec: &TestSpec,
    client: bool,
) -> Result<Box<dyn Pipe>, EngineError> {
    Ok(Box::new(TlsPipe {
        s: handshake(sock, spec, client)?,
        sealed: 0,
    }))
}

struct TlsPipe {
    s: Session,
    /// Plaintext bytes sealed into records not yet all written.
    sealed: usize,
}

impl Pipe for TlsPipe {
    fn send(&mut self, mut sock: &TcpStream, data: &[u8]) -> io::Result<usize> {
        if self.sealed == 0 {
            self.sealed = self.s.conn.writer().write(data)?;
        }
        while self.s.conn.wants_write() {
            self.s.conn.write_tls(&mut sock)?;
        }
        Ok(std::mem::take(&mut self.sealed))
    }

    fn recv(&mut self, mut sock: &TcpStream, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.s.conn.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // The peer closed without close_notify: its end of stream.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
                Err(e) => return Err(e),
            }
            if self.s.conn.read_tls(&mut sock)? == 0 {
                return Ok(0);
            }
            self.s
                .conn
                .process_new_packets()
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        }
    }

    fn report(&self) -> IoReport {
        report(&self.s)
    }
}
