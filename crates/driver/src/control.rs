//! Pumping a protocol session over a TCP control connection.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use netsonde_proto::{Endpoint, Event, FrameDecoder};

use crate::now;

/// A control connection and its frame decoder.
#[derive(Debug)]
pub struct Control {
    stream: TcpStream,
    dec: FrameDecoder,
    buf: Vec<u8>,
    closed: bool,
}

impl Control {
    /// Wraps a connected stream. Writes time out after 5 s so a peer that stops
    /// reading cannot wedge us.
    pub fn new(stream: TcpStream) -> io::Result<Control> {
        stream.set_nodelay(true)?;
        stream.set_write_timeout(Some(Duration::from_secs(5)))?;
        Ok(Control {
            stream,
            dec: FrameDecoder::new(),
            buf: vec![0; 64 * 1024],
            closed: false,
        })
    }

    /// The underlying stream.
    pub fn stream(&self) -> &TcpStream {
        &self.stream
    }

    /// Writes every queued frame. A write failure is treated as the peer closing.
    pub fn flush(&mut self, ep: &mut impl Endpoint) {
        while let Some(f) = ep.poll_transmit() {
            if self.closed {
                continue;
            }
            if self.stream.write_all(&f.to_bytes()).is_err() {
                self.closed = true;
                ep.handle_eof(now());
            }
        }
    }

    /// Waits until the peer closes the connection or `until` passes, whichever is
    /// first, discarding anything it sends: a session that is over keeps its
    /// peer's side of the test alive no longer than the peer needs it.
    pub fn wait_closed(&mut self, until: std::time::Instant) {
        while !self.closed {
            let left = until.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return;
            }
            let _ = self
                .stream
                .set_read_timeout(Some(left.max(Duration::from_millis(1))));
            match self.stream.read(&mut self.buf) {
                Ok(0) => self.closed = true,
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock
                            | io::ErrorKind::TimedOut
                            | io::ErrorKind::Interrupted
                    ) => {}
                Err(_) => self.closed = true,
            }
        }
    }

    /// Flushes, then waits up to `max_wait` (or the session's deadline, if sooner)
    /// for input, feeds it, fires a passed deadline, flushes again, and returns the
    /// events the session produced.
    pub fn pump(&mut self, ep: &mut impl Endpoint, max_wait: Duration) -> Vec<Event> {
        self.flush(ep);
        if !ep.is_over() && !self.closed {
            let t = now();
            let mut wait = max_wait;
            if let Some(at) = ep.poll_timeout() {
                wait = wait.min(at.saturating_sub(t).as_duration());
            }
            match read_within(&mut self.stream, &mut self.buf, wait) {
                Ok(0) => {
                    self.closed = true;
                    match self.dec.finish() {
                        Err(e) => ep.handle_decode_error(now(), e),
                        Ok(()) => ep.handle_eof(now()),
                    }
                }
                Ok(n) => {
                    self.dec.push(&self.buf[..n]);
                    loop {
                        match self.dec.next_frame() {
                            Ok(Some(f)) => ep.handle_frame(now(), f),
                            Ok(None) => break,
                            Err(e) => {
                                ep.handle_decode_error(now(), e);
                                break;
                            }
                        }
                        if ep.is_over() {
                            break;
                        }
                    }
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock
                            | io::ErrorKind::TimedOut
                            | io::ErrorKind::Interrupted
                    ) => {}
                Err(_) => {
                    self.closed = true;
                    ep.handle_eof(now());
                }
            }
            if ep.poll_timeout().is_some_and(|at| at <= now()) {
                ep.handle_timeout(now());
            }
        }
        self.flush(ep);
        let mut events = Vec::new();
        while let Some(e) = ep.poll_event() {
            events.push(e);
        }
        events
    }
}

/// Reads what `stream` has within `wait` (at least 1 ms): waits in `poll`,
/// whose timeout is punctual (a socket's receive timeout is counted in
/// scheduler ticks, and interval records made after it came 10-40 ms late),
/// then reads; `TimedOut` when nothing came. The receive timeout only bounds a
/// read that finds nothing after all.
pub(crate) fn read_within(
    stream: &mut std::net::TcpStream,
    buf: &mut [u8],
    wait: Duration,
) -> io::Result<usize> {
    let wait = wait.max(Duration::from_millis(1));
    stream.set_read_timeout(Some(wait))?;
    let mut fds = [rustix::event::PollFd::new(
        &*stream,
        rustix::event::PollFlags::IN,
    )];
    let timeout = rustix::event::Timespec {
        tv_sec: wait.as_secs() as i64,
        tv_nsec: i64::from(wait.subsec_nanos()),
    };
    match rustix::event::poll(&mut fds, Some(&timeout)) {
        Ok(0) => Err(io::ErrorKind::TimedOut.into()),
        Err(rustix::io::Errno::INTR) => Err(io::ErrorKind::Interrupted.into()),
        _ => stream.read(buf),
    }
}
