//! uring: io_uring with a registered buffer (WRITE_FIXED) and batched, linked
//! submissions: a TCP sender queues 4 linked writes of up to 256 KiB per
//! `io_uring_enter`; a UDP sender submits 32 linked WRITE_FIXED, one datagram
//! each, per `io_uring_enter`. Receivers arm one multishot receive (Linux 6.0)
//! that fills buffers from a provided pool, and each call hands over every chunk
//! completed so far while giving the previous call's buffers back (one RECV per
//! call where multishot is refused).
//!
//! Senders try zero-copy first (SEND_ZC, Linux 6.0, with the kernel reporting
//! whether it copied, 6.2): the first [`ZC_PROBE`] notifications decide. If the
//! kernel copied every one (it always does when it delivers locally: loopback, a
//! veth pair), zero-copy only adds a notification per send, so the sender goes on
//! with WRITE_FIXED; otherwise it stays on SEND_ZC. The report counts the zero-copy
//! sends, their notifications and the copies, and the note says what was decided.

use std::io;
use std::os::fd::AsRawFd;
use std::time::Duration;

use netsonde_model::result::IoReport;
use netsonde_model::spec::IoStrategy;

use super::{report, unsupported, IoError, Moved, Rx, Sock, Tx};
use crate::sys::uring::{MultiRecv, Ring};

/// Notifications that decide whether SEND_ZC avoids the copy here.
pub const ZC_PROBE: u64 = 64;

/// Where a sender stands with zero-copy.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Zc {
    /// Sending SEND_ZC until [`ZC_PROBE`] notifications have come back.
    Probe,
    /// SEND_ZC for good: the kernel avoided the copy.
    On,
    /// WRITE_FIXED, and why.
    Off(String),
}

const WAIT: Duration = Duration::from_millis(200);
const LINKS: u32 = 4;
/// UDP datagrams per submission.
const UDP_BATCH: usize = 32;

/// io_uring sender.
pub struct UringTx {
    ring: Ring,
    size: usize,
    chunk: usize,
    pos: usize,
    udp: bool,
    zc: Zc,
}

fn ring(entries: u32, len: usize) -> Result<Ring, IoError> {
    Ring::new(entries, len)
        .map_err(|e| unsupported(IoStrategy::Uring, format!("io_uring_setup: {e}")))
}

impl UringTx {
    /// Builds it.
    pub fn new(sock: Sock<'_>, size: usize) -> Result<UringTx, IoError> {
        let udp = matches!(sock, Sock::Udp(_));
        // TCP: whole messages up to 256 KiB per write, plus one message so a write
        // can start anywhere within a message.
        let per = ((256 << 10) / size.max(1)).max(1);
        let chunk = per * size;
        let mut r = ring(64, if udp { size * UDP_BATCH } else { chunk + size })?;
        for m in r.buf().chunks_mut(size.max(1)) {
            crate::fill_pattern(m);
        }
        let zc = if r.has_send_zc() {
            Zc::Probe
        } else {
            Zc::Off("the kernel has no SEND_ZC (Linux 6.0)".into())
        };
        Ok(UringTx {
            ring: r,
            size,
            chunk,
            pos: 0,
            udp,
            zc,
        })
    }

    /// After a batch: decide once enough notifications have come back, or give up
    /// on zero-copy if the kernel refused the operation. Returns whether it was
    /// refused (the batch moved nothing and is to be sent again).
    fn judge(&mut self, error: Option<i32>, moved: usize) -> bool {
        if self.zc != Zc::Probe {
            return false;
        }
        if error == Some(rustix::io::Errno::INVAL.raw_os_error()) && moved == 0 {
            self.zc =
                Zc::Off("SEND_ZC with usage reports refused (EINVAL; Linux 6.2 has them)".into());
            return true;
        }
        let c = self.ring.zc();
        if c.completions >= ZC_PROBE {
            self.zc = if c.copied == c.completions {
                Zc::Off(format!(
                    "the kernel copied all of the first {} SEND_ZC sends (it delivers locally), so WRITE_FIXED from then on",
                    c.sends
                ))
            } else {
                Zc::On
            };
        }
        false
    }
}

impl Tx for UringTx {
    #[inline]
    fn send(&mut self, sock: Sock<'_>, seq: u64, tx_ns: u64) -> io::Result<Moved> {
        if self.udp {
            // A batch of datagrams, one slot each, stamped with consecutive sequence
            // numbers; while an earlier batch is still in flight, only wait for it.
            // Zero-copy: the slots are stamped again only once the kernel has let go
            // of them (every notification in).
            if !self.ring.busy() && !self.ring.idle() && !self.ring.settle(WAIT)? {
                return Err(io::Error::from(io::ErrorKind::WouldBlock));
            }
            if self.ring.idle() {
                for (i, d) in self.ring.buf().chunks_mut(self.size.max(1)).enumerate() {
                    crate::datagram::stamp(d, seq + i as u64, tx_ns);
                }
            }
            let b = self.ring.write_linked(
                sock.as_raw_fd(),
                (0, self.size),
                self.size,
                UDP_BATCH as u32,
                WAIT,
                !matches!(self.zc, Zc::Off(_)),
            )?;
            if self.judge(b.error, b.bytes) {
                return Err(io::Error::from(io::ErrorKind::WouldBlock));
            }
            let sent = b.bytes / self.size.max(1);
            return match (sent, b.done, b.error) {
                (0, 0, _) => Err(io::Error::from(io::ErrorKind::WouldBlock)),
                (0, _, Some(e)) => Err(io::Error::from_raw_os_error(e)),
                _ => Ok(Moved {
                    bytes: b.bytes as u64,
                    messages: sent as u64,
                    calls: 1,
                }),
            };
        }
        let zc = !matches!(self.zc, Zc::Off(_));
        let b =
            self.ring
                .write_linked(sock.as_raw_fd(), (self.pos, 0), self.chunk, LINKS, WAIT, zc)?;
        if self.judge(b.error, b.bytes) {
            return Err(io::Error::from(io::ErrorKind::WouldBlock));
        }
        if let Some(e) = b.error {
            if b.bytes == 0 {
                return Err(io::Error::from_raw_os_error(e));
            }
        }
        if b.done == 0 {
            return Err(io::Error::from(io::ErrorKind::WouldBlock));
        }
        let total = self.pos + b.bytes;
        self.pos = total % self.size;
        Ok(Moved {
            bytes: b.bytes as u64,
            messages: (total / self.size) as u64,
            calls: 1,
        })
    }

    fn finish(&mut self, _sock: Sock<'_>) -> IoReport {
        // Collect the notifications still out, off the measured path.
        let _ = self.ring.settle(Duration::from_secs(1));
        let c = self.ring.zc();
        let how = if self.ring.fixed() {
            "registered buffer (WRITE_FIXED)"
        } else {
            "SEND (buffer registration refused)"
        };
        let batching = if self.udp {
            format!("{UDP_BATCH} linked datagrams per submission")
        } else {
            format!("{LINKS} linked writes per submission")
        };
        let zc = match &self.zc {
            Zc::Probe => format!(
                "SEND_ZC still on trial at the end ({} of {ZC_PROBE} notifications in, {} copied)",
                c.completions, c.copied
            ),
            Zc::On => format!(
                "SEND_ZC: the kernel avoided the copy ({} of {} notifications not copied)",
                c.completions - c.copied,
                c.completions
            ),
            Zc::Off(why) if c.sends > 0 => format!("tried SEND_ZC first: {why}; {how}"),
            Zc::Off(why) => format!("{why}; {how}"),
        };
        IoReport {
            zc_sends: c.sends,
            zc_completions: c.completions,
            zc_copied: c.copied,
            note: Some(format!("{zc}, {batching}")),
            ..report(IoStrategy::Uring)
        }
    }

    fn set_pos(&mut self, pos: usize) {
        if !self.udp {
            self.pos = pos % self.size.max(1);
        }
    }

    fn idle(&self) -> bool {
        self.ring.idle()
    }
}

/// io_uring receiver: multishot receive into provided buffers, or one RECV per
/// call where the kernel refuses multishot (before Linux 6.0).
pub struct UringRx {
    mode: RxMode,
    len: usize,
    tcp: bool,
    eof: bool,
    note: Option<String>,
}

enum RxMode {
    Multi(MultiRecv),
    /// A ring whose buffer holds one receive of `len` bytes.
    Single(Ring),
}

/// Provided buffers for the multishot receive: TCP chunks of 64 KiB, UDP datagrams
/// of the message size (plus one byte, so an oversized datagram shows).
const TCP_CHUNK: usize = 64 << 10;
const NBUFS: u16 = 64;

impl UringRx {
    /// Builds it.
    pub fn new(sock: Sock<'_>, size: usize) -> Result<UringRx, IoError> {
        let tcp = matches!(sock, Sock::Tcp(_));
        let len = if tcp {
            (size * 16).clamp(64 << 10, 4 << 20)
        } else {
            size + 1
        };
        let (mode, note) = match MultiRecv::new(NBUFS, if tcp { TCP_CHUNK } else { size + 1 }) {
            Ok(m) => (RxMode::Multi(m), None),
            Err(e) => (
                RxMode::Single(ring(8, len)?),
                Some(format!("no provided buffers ({e}): one RECV per call")),
            ),
        };
        Ok(UringRx {
            mode,
            len,
            tcp,
            eof: false,
            note,
        })
    }
}

impl UringRx {
    /// One RECV per call, as on a kernel that refuses multishot: the fallback,
    /// built on purpose so that it is tested where multishot works.
    #[cfg(test)]
    fn single(sock: Sock<'_>, size: usize) -> Result<UringRx, IoError> {
        let mut rx = UringRx::new(sock, size)?;
        rx.mode = RxMode::Single(ring(8, rx.len)?);
        rx.note = Some("one RECV per call (test)".into());
        Ok(rx)
    }
}

impl Rx for UringRx {
    #[inline]
    fn recv(
        &mut self,
        sock: Sock<'_>,
        on: &mut dyn FnMut(&[u8], usize),
    ) -> io::Result<Option<Moved>> {
        let m = match &mut self.mode {
            RxMode::Multi(m) => m,
            RxMode::Single(ring) => {
                return match ring.recv(sock.as_raw_fd(), self.len, WAIT)? {
                    None => Err(io::Error::from(io::ErrorKind::WouldBlock)),
                    Some(r) if r < 0 => Err(io::Error::from_raw_os_error(-r)),
                    Some(0) if self.tcp => Ok(None),
                    Some(n) => {
                        let n = n as usize;
                        on(ring.data(n), n);
                        Ok(Some(Moved {
                            bytes: n as u64,
                            messages: 1,
                            calls: 1,
                        }))
                    }
                };
            }
        };
        if self.eof {
            return Ok(None);
        }
        match m.recv(sock.as_raw_fd(), WAIT, &mut |d| on(d, d.len())) {
            Ok(got) => {
                if got.eof && self.tcp {
                    self.eof = true;
                    if got.chunks == 0 {
                        return Ok(None);
                    }
                }
                if got.chunks == 0 {
                    return Err(io::Error::from(io::ErrorKind::WouldBlock));
                }
                Ok(Some(Moved {
                    bytes: got.bytes as u64,
                    messages: got.chunks,
                    calls: 1,
                }))
            }
            // Multishot receive refused on this kernel: one RECV per call from now.
            Err(e) if rustix::io::Errno::from_io_error(&e) == Some(rustix::io::Errno::INVAL) => {
                self.note = Some(format!(
                    "multishot receive refused ({e}): one RECV per call"
                ));
                self.mode = RxMode::Single(ring(8, self.len).map_err(io::Error::other)?);
                Err(io::Error::from(io::ErrorKind::WouldBlock))
            }
            Err(e) => Err(e),
        }
    }

    fn report(&mut self) -> IoReport {
        IoReport {
            note: Some(
                self.note
                    .clone()
                    .unwrap_or_else(|| "multishot receive into provided buffers".into()),
            ),
            ..report(IoStrategy::Uring)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::net::{TcpListener, TcpStream, UdpSocket};

    use super::*;
    use crate::verify::Verifier;

    fn drain(rx: &mut UringRx, sock: Sock<'_>, v: &mut Verifier, tcp: bool, want: u64) -> u64 {
        let mut got = 0;
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while got < want && std::time::Instant::now() < deadline {
            let r = rx.recv(sock, &mut |d, _| {
                if tcp {
                    v.stream(d)
                } else {
                    v.datagram(d)
                }
            });
            match r {
                Ok(Some(m)) => got += if tcp { m.bytes } else { m.messages },
                Ok(None) => break,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => panic!("{e}"),
            }
        }
        got
    }

    /// The receive paths: multishot into provided buffers, and the one-RECV
    /// fallback, over TCP and UDP, every byte checked against the pattern.
    #[test]
    fn both_receive_paths_deliver_every_byte() {
        for single in [false, true] {
            let size = 1000usize;
            let l = TcpListener::bind("127.0.0.1:0").unwrap();
            let mut c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
            let (s, _) = l.accept().unwrap();
            let build = if single {
                UringRx::single
            } else {
                UringRx::new
            };
            let mut rx = build(Sock::Tcp(&s), size).unwrap();
            let total = 3_000_000u64;
            let writer = std::thread::spawn(move || {
                let mut msg = vec![0u8; size];
                crate::fill_pattern(&mut msg);
                for _ in 0..total / size as u64 {
                    c.write_all(&msg).unwrap();
                }
            });
            let mut v = Verifier::new(size as u64);
            let got = drain(&mut rx, Sock::Tcp(&s), &mut v, true, total);
            writer.join().unwrap();
            assert_eq!(
                (got, v.errors, v.checked),
                (total, 0, total),
                "single {single}"
            );
            let note = rx.report().note.unwrap();
            assert_eq!(note.contains("one RECV"), single, "{note}");

            let a = UdpSocket::bind("127.0.0.1:0").unwrap();
            let b = UdpSocket::bind("127.0.0.1:0").unwrap();
            a.connect(b.local_addr().unwrap()).unwrap();
            b.connect(a.local_addr().unwrap()).unwrap();
            let mut rx = build(Sock::Udp(&b), size).unwrap();
            let mut d = vec![0u8; size];
            crate::fill_pattern(&mut d);
            // Rounds of 20, so the socket's receive buffer never overflows.
            let (mut v, mut got) = (Verifier::new(size as u64), 0);
            for round in 0..10u64 {
                for seq in 0..20 {
                    crate::datagram::stamp(&mut d, round * 20 + seq, 0);
                    a.send(&d).unwrap();
                }
                got += drain(&mut rx, Sock::Udp(&b), &mut v, false, 20);
            }
            assert_eq!((got, v.errors), (200, 0), "single {single}");
        }
    }
}
