//! zerocopy: `send(MSG_ZEROCOPY)` pins the buffer's pages instead of copying them;
//! the kernel reports on the socket's error queue when each send's pages are free,
//! and whether it had to copy after all (it always does on loopback, where the
//! receiver would otherwise see the sender's pages: the report says so). Receives
//! use `recv(MSG_TRUNC)`: on TCP the kernel discards the bytes without copying them
//! to user space, which measures what the receive copy costs; on UDP only the
//! 16-byte header is copied.

use std::io;

use netsonde_model::result::IoReport;
use netsonde_model::spec::IoStrategy;

use super::{report, unsupported, IoError, Moved, Rx, Sock, Tx};
use crate::buf::PageBuf;
use crate::sys::{self, net};

/// UDP datagrams in flight before the sender waits for completions (each slot is
/// stamped afresh, so it must be free first).
const UDP_SLOTS: usize = 256;

/// MSG_ZEROCOPY sender.
pub struct ZcTx {
    /// TCP: one message, never modified. UDP: a ring of `UDP_SLOTS` datagrams.
    buf: PageBuf,
    size: usize,
    pos: usize,
    sends: u64,
    zc: net::ZcCompletions,
    udp: bool,
}

impl ZcTx {
    /// Enables SO_ZEROCOPY (Linux 4.14) on the socket.
    pub fn new(sock: Sock<'_>, size: usize) -> Result<ZcTx, IoError> {
        sys::setsockopt_int(&sock, net::SOL_SOCKET, net::SO_ZEROCOPY, 1).map_err(|e| {
            unsupported(
                IoStrategy::Zerocopy,
                format!("SO_ZEROCOPY (Linux 4.14): {e}"),
            )
        })?;
        let udp = matches!(sock, Sock::Udp(_));
        let buf =
            PageBuf::pattern(if udp { size * UDP_SLOTS } else { size }, size).map_err(|e| {
                IoError::Setup {
                    strategy: IoStrategy::Zerocopy,
                    source: e,
                }
            })?;
        Ok(ZcTx {
            buf,
            size,
            pos: 0,
            sends: 0,
            zc: net::ZcCompletions::default(),
            udp,
        })
    }

    fn drain(&mut self, sock: Sock<'_>) -> io::Result<()> {
        net::read_zc_completions(&sock, &mut self.zc)
    }
}

impl Tx for ZcTx {
    #[inline]
    fn send(&mut self, sock: Sock<'_>, seq: u64, tx_ns: u64) -> io::Result<Moved> {
        let mut calls = 0;
        if self.sends.is_multiple_of(64) {
            self.drain(sock)?;
            calls += 1;
        }
        let r = if self.udp {
            if self.sends - self.zc.completed >= UDP_SLOTS as u64 {
                // Every slot is still pinned: collect completions before reusing one.
                self.drain(sock)?;
                return Err(io::Error::from(io::ErrorKind::WouldBlock));
            }
            let slot = (self.sends as usize) % UDP_SLOTS;
            let d = &mut self.buf[slot * self.size..(slot + 1) * self.size];
            crate::datagram::stamp(d, seq, tx_ns);
            net::send(&sock, d, net::MSG_ZEROCOPY)
        } else {
            net::send(&sock, &self.buf[self.pos..], net::MSG_ZEROCOPY)
        };
        calls += 1;
        match r {
            Ok(n) => {
                self.sends += 1;
                let messages = if self.udp {
                    1
                } else {
                    let total = self.pos + n;
                    self.pos = total % self.size;
                    (total / self.size) as u64
                };
                Ok(Moved {
                    bytes: n as u64,
                    messages,
                    calls,
                })
            }
            Err(e) if rustix::io::Errno::from_io_error(&e) == Some(rustix::io::Errno::NOBUFS) => {
                // The socket's option memory for notifications is full: drain.
                self.drain(sock)?;
                Err(io::Error::from(io::ErrorKind::WouldBlock))
            }
            Err(e) => Err(e),
        }
    }

    fn finish(&mut self, sock: Sock<'_>) -> IoReport {
        let until = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while self.zc.completed < self.sends && std::time::Instant::now() < until {
            if self.drain(sock).is_err() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let note = if self.zc.completed > 0 && self.zc.copied == self.zc.completed {
            Some("the kernel copied every zero-copy send (always so on loopback): no copy was avoided".into())
        } else if self.zc.copied > 0 {
            Some(format!(
                "{} of {} sends were copied after all",
                self.zc.copied, self.zc.completed
            ))
        } else {
            None
        };
        IoReport {
            zc_sends: self.sends,
            zc_completions: self.zc.completed,
            zc_copied: self.zc.copied,
            note,
            ..report(IoStrategy::Zerocopy)
        }
    }

    fn copied_anyway(&self) -> bool {
        self.zc.completed > 0 && self.zc.copied == self.zc.completed
    }

    fn set_pos(&mut self, pos: usize) {
        if !self.udp {
            self.pos = pos % self.size.max(1);
        }
    }
}

/// MSG_TRUNC receiver: no copy to user space.
pub struct TruncRx {
    hdr: [u8; 16],
    size: usize,
}

impl TruncRx {
    /// Builds it.
    pub fn new(_sock: Sock<'_>, size: usize) -> TruncRx {
        TruncRx { hdr: [0; 16], size }
    }
}

impl Rx for TruncRx {
    #[inline]
    fn recv(
        &mut self,
        sock: Sock<'_>,
        on: &mut dyn FnMut(&[u8], usize),
    ) -> io::Result<Option<Moved>> {
        match sock {
            Sock::Tcp(t) => {
                let n = net::discard(t, (self.size * 16).max(1 << 20))?;
                if n == 0 {
                    return Ok(None);
                }
                on(&[], n);
                Ok(Some(Moved {
                    bytes: n as u64,
                    messages: 1,
                    calls: 1,
                }))
            }
            Sock::Udp(_) => {
                let n = net::recv(&sock, &mut self.hdr, net::MSG_TRUNC)?;
                on(&self.hdr[..n.min(16)], n);
                Ok(Some(Moved {
                    bytes: n as u64,
                    messages: 1,
                    calls: 1,
                }))
            }
        }
    }

    fn report(&mut self) -> IoReport {
        IoReport {
            note: Some("MSG_TRUNC: the data is never copied to user space".into()),
            ..report(IoStrategy::Zerocopy)
        }
    }
}
