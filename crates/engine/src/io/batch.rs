//! batch: many messages per system call. TCP sends `writev` up to 64 messages at
//! once and receives into a buffer 16 messages large; UDP sends GSO
//! super-datagrams (UDP_SEGMENT: one call, up to 64 datagrams, segmented by the
//! kernel) or, without GSO, `sendmmsg`; it receives with UDP_GRO (coalesced
//! super-datagrams, split here) or, without it, `recvmmsg`.

use std::io;

use netsonde_model::result::IoReport;
use netsonde_model::spec::IoStrategy;

use super::{report, IoError, Moved, Rx, Sock, Tx};
use crate::buf::PageBuf;
use crate::sys::{self, net};

const BATCH: usize = 64;
/// Bytes a TCP `writev` carries (whole messages, at least one).
const WRITEV_BYTES: usize = 1 << 20;

fn setup(e: io::Error) -> IoError {
    IoError::Setup {
        strategy: IoStrategy::Batch,
        source: e,
    }
}

/// Builds the batching sender for a socket; UDP with GSO where the kernel has
/// it, unless `gso` is false.
pub fn tx(sock: Sock<'_>, size: usize, gso: bool) -> Result<Box<dyn Tx>, IoError> {
    Ok(match sock {
        Sock::Tcp(_) => Box::new(WritevTx::new(size)?),
        Sock::Udp(u) => {
            // Probe GSO on this socket; a datagram of at most 64 KiB holds the batch.
            let per = (65_000 / size.max(1)).min(BATCH);
            if gso
                && per >= 2
                && size <= u16::MAX as usize
                && sys::setsockopt_int(u, net::SOL_UDP, net::UDP_SEGMENT, size as i32).is_ok()
            {
                Box::new(GsoTx::new(size, per)?)
            } else {
                let mut bufs = net::MmsgBufs::new(BATCH, size).map_err(setup)?;
                for i in 0..BATCH {
                    crate::fill_pattern(bufs.slot(i));
                }
                Box::new(MmsgTx {
                    bufs,
                    size,
                    note: Some(
                        if gso {
                            "no UDP GSO: sendmmsg"
                        } else {
                            "sendmmsg without GSO (--no-gso)"
                        }
                        .into(),
                    ),
                })
            }
        }
    })
}

/// Builds the batching receiver for a socket; UDP with GRO where the kernel
/// has it, unless `gro` is false.
pub fn rx(
    sock: Sock<'_>,
    size: usize,
    note: Option<&str>,
    gro: bool,
) -> Result<Box<dyn Rx>, IoError> {
    let note = note.map(str::to_string);
    Ok(match sock {
        Sock::Tcp(_) => Box::new(BigReadRx {
            buf: PageBuf::zeroed((size * 16).clamp(64 * 1024, 4 << 20)).map_err(setup)?,
            note,
        }),
        Sock::Udp(u) => {
            if gro && sys::setsockopt_int(u, net::SOL_UDP, net::UDP_GRO, 1).is_ok() {
                Box::new(GroRx {
                    buf: PageBuf::zeroed(65_536).map_err(setup)?,
                    note,
                })
            } else {
                Box::new(MmsgRx {
                    bufs: net::MmsgBufs::new(BATCH, size + 1).map_err(setup)?,
                    note: note.or(Some(
                        if gro {
                            "no UDP GRO: recvmmsg"
                        } else {
                            "recvmmsg without GRO (--no-gso)"
                        }
                        .into(),
                    )),
                })
            }
        }
    })
}

/// TCP: one `writev` of the rest of the current message and then whole copies, up
/// to about 1 MiB or `IOV_MAX` iovecs a call.
struct WritevTx {
    iov: net::RepeatIov,
    pos: usize,
}

impl WritevTx {
    fn new(size: usize) -> Result<WritevTx, IoError> {
        let msg = PageBuf::pattern(size.max(1), size.max(1)).map_err(setup)?;
        let copies = (WRITEV_BYTES / size.max(1)).max(1);
        Ok(WritevTx {
            iov: net::RepeatIov::new(msg, copies),
            pos: 0,
        })
    }
}

impl Tx for WritevTx {
    #[inline]
    fn send(&mut self, sock: Sock<'_>, _seq: u64, _tx_ns: u64) -> io::Result<Moved> {
        let size = self.iov.len();
        let n = self.iov.writev(&sock, self.pos)?;
        let total = self.pos + n;
        self.pos = total % size;
        Ok(Moved {
            bytes: n as u64,
            messages: (total / size) as u64,
            calls: 1,
        })
    }

    fn finish(&mut self, _sock: Sock<'_>) -> IoReport {
        report(IoStrategy::Batch)
    }

    fn set_pos(&mut self, pos: usize) {
        self.pos = pos % self.iov.len().max(1);
    }
}

/// UDP with GSO: one super-datagram of `per` segments per call.
struct GsoTx {
    buf: PageBuf,
    size: usize,
    per: usize,
}

impl GsoTx {
    fn new(size: usize, per: usize) -> Result<GsoTx, IoError> {
        let buf = PageBuf::pattern(size * per, size).map_err(setup)?;
        Ok(GsoTx { buf, size, per })
    }
}

impl Tx for GsoTx {
    #[inline]
    fn send(&mut self, sock: Sock<'_>, seq: u64, tx_ns: u64) -> io::Result<Moved> {
        for (i, seg) in self.buf.chunks_mut(self.size).enumerate() {
            crate::datagram::stamp(seg, seq + i as u64, tx_ns);
        }
        let n = net::send_gso(&sock, &self.buf, self.size as u16)?;
        Ok(Moved {
            bytes: n as u64,
            messages: (n / self.size) as u64,
            calls: 1,
        })
    }

    fn finish(&mut self, _sock: Sock<'_>) -> IoReport {
        IoReport {
            note: Some(format!("UDP GSO, {} datagrams per call", self.per)),
            ..report(IoStrategy::Batch)
        }
    }
}

/// UDP without GSO: `sendmmsg` of 64 datagrams.
struct MmsgTx {
    bufs: net::MmsgBufs,
    size: usize,
    note: Option<String>,
}

impl Tx for MmsgTx {
    #[inline]
    fn send(&mut self, sock: Sock<'_>, seq: u64, tx_ns: u64) -> io::Result<Moved> {
        for i in 0..self.bufs.count() {
            crate::datagram::stamp(self.bufs.slot(i), seq + i as u64, tx_ns);
        }
        let n = self.bufs.sendmmsg(&sock, BATCH, self.size)?;
        Ok(Moved {
            bytes: (n * self.size) as u64,
            messages: n as u64,
            calls: 1,
        })
    }

    fn finish(&mut self, _sock: Sock<'_>) -> IoReport {
        IoReport {
            note: self.note.clone(),
            ..report(IoStrategy::Batch)
        }
    }
}

/// TCP: reads of up to 16 messages.
struct BigReadRx {
    buf: PageBuf,
    note: Option<String>,
}

impl Rx for BigReadRx {
    #[inline]
    fn recv(
        &mut self,
        sock: Sock<'_>,
        on: &mut dyn FnMut(&[u8], usize),
    ) -> io::Result<Option<Moved>> {
        let n = net::recv(&sock, &mut self.buf, 0)?;
        if n == 0 {
            return Ok(None);
        }
        on(&self.buf[..n], n);
        Ok(Some(Moved {
            bytes: n as u64,
            messages: 1,
            calls: 1,
        }))
    }

    fn report(&mut self) -> IoReport {
        IoReport {
            note: self.note.clone(),
            ..report(IoStrategy::Batch)
        }
    }
}

/// UDP with GRO: one coalesced super-datagram per call, split at the segment size.
struct GroRx {
    buf: PageBuf,
    note: Option<String>,
}

impl Rx for GroRx {
    #[inline]
    fn recv(
        &mut self,
        sock: Sock<'_>,
        on: &mut dyn FnMut(&[u8], usize),
    ) -> io::Result<Option<Moved>> {
        let (n, seg) = net::recv_gro(&sock, &mut self.buf, 0)?;
        let seg = if seg == 0 { n.max(1) } else { seg };
        let mut msgs = 0;
        for d in self.buf[..n].chunks(seg) {
            on(d, d.len());
            msgs += 1;
        }
        Ok(Some(Moved {
            bytes: n as u64,
            messages: msgs,
            calls: 1,
        }))
    }

    fn report(&mut self) -> IoReport {
        IoReport {
            note: self.note.clone().or(Some("UDP GRO".into())),
            ..report(IoStrategy::Batch)
        }
    }
}

/// UDP without GRO: `recvmmsg` of up to 64 datagrams.
struct MmsgRx {
    bufs: net::MmsgBufs,
    note: Option<String>,
}

impl Rx for MmsgRx {
    #[inline]
    fn recv(
        &mut self,
        sock: Sock<'_>,
        on: &mut dyn FnMut(&[u8], usize),
    ) -> io::Result<Option<Moved>> {
        let n = self.bufs.recvmmsg(&sock, 0)?;
        let mut bytes = 0;
        for i in 0..n {
            let len = self.bufs.received(i);
            bytes += len as u64;
            let slot = self.bufs.slot(i);
            on(&slot[..len.min(slot.len())], len);
        }
        Ok(Some(Moved {
            bytes,
            messages: n as u64,
            calls: 1,
        }))
    }

    fn report(&mut self) -> IoReport {
        IoReport {
            note: self.note.clone(),
            ..report(IoStrategy::Batch)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::UdpSocket;

    /// Without GSO/GRO (`--no-gso`), a batch is sendmmsg and recvmmsg: every
    /// datagram is sent and received as itself, each counted.
    #[test]
    fn without_gso_a_batch_is_datagrams_each_its_own() {
        let r = UdpSocket::bind("127.0.0.1:0").unwrap();
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        s.connect(r.local_addr().unwrap()).unwrap();
        r.connect(s.local_addr().unwrap()).unwrap();
        r.set_read_timeout(Some(std::time::Duration::from_millis(200)))
            .unwrap();
        let mut tx = tx(Sock::Udp(&s), 64, false).unwrap();
        let mut rx = rx(Sock::Udp(&r), 64, None, false).unwrap();
        let sent = tx.send(Sock::Udp(&s), 0, 0).unwrap();
        assert_eq!(sent.messages, BATCH as u64);
        assert_eq!(sent.calls, 1);
        let (mut got, mut sizes) = (0, Vec::new());
        while got < sent.messages {
            let m = rx
                .recv(Sock::Udp(&r), &mut |_, len| sizes.push(len))
                .unwrap()
                .unwrap();
            got += m.messages;
        }
        assert!(sizes.iter().all(|&l| l == 64), "{sizes:?}");
        assert_eq!(sizes.len(), BATCH);
        let note = tx.finish(Sock::Udp(&s)).note.unwrap();
        assert!(note.contains("--no-gso"), "{note}");
        assert!(rx.report().note.unwrap().contains("--no-gso"));
    }
}
