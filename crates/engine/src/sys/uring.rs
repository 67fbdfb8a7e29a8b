//! A safe wrapper over the `io-uring` crate for the engine's needs: one ring, one
//! registered buffer, batches of linked writes and single receives, each call
//! bounded by a timeout, and no operation ever left in flight over a buffer that
//! could be freed (the ring is dropped, cancelling everything, before the buffer).

use std::io;
use std::os::fd::RawFd;
use std::time::Duration;

use io_uring::{cqueue, opcode, squeue, types, IoUring};

use crate::buf::PageBuf;

/// `IORING_SEND_ZC_REPORT_USAGE` (Linux 6.2): the notification says whether the
/// kernel copied the data after all.
const SEND_ZC_REPORT_USAGE: u16 = 1 << 3;
/// `IORING_NOTIF_USAGE_ZC_COPIED`: set in a notification's result when it copied.
const NOTIF_USAGE_ZC_COPIED: u32 = 1 << 31;

/// Zero-copy sends (SEND_ZC) and their notifications, counted.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ZcCounts {
    /// SEND_ZC operations that completed with a notification to follow.
    pub sends: u64,
    /// Notifications received: the kernel let go of the buffer.
    pub completions: u64,
    /// Notifications reporting that the kernel copied the data anyway.
    pub copied: u64,
}

/// A ring with a registered buffer.
pub struct Ring {
    // Field order matters: the ring drops (cancelling in-flight operations) before
    // the buffer they point into.
    ring: IoUring,
    buf: PageBuf,
    inflight: u32,
    /// SEND_ZC notifications still to come (the kernel still holds the buffer).
    notifs: u32,
    zc: ZcCounts,
    fixed: bool,
}

impl std::fmt::Debug for Ring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Ring(buf {} B, inflight {})",
            self.buf.len(),
            self.inflight
        )
    }
}

/// The outcome of a batch.
#[derive(Debug, Default, Clone, Copy)]
pub struct Batch {
    /// Bytes moved by the completed operations.
    pub bytes: usize,
    /// Operations completed (successfully or not).
    pub done: u32,
    /// The first real error (not a cancellation of a linked follower).
    pub error: Option<i32>,
}

impl Ring {
    /// A ring of `entries` with a registered buffer of `len` bytes (filled by the
    /// caller through [`Ring::buf`]).
    pub fn new(entries: u32, len: usize) -> io::Result<Ring> {
        let ring = IoUring::new(entries)?;
        let buf = PageBuf::zeroed(len)?;
        let iov = [libc::iovec {
            iov_base: buf.as_ptr() as *mut _,
            iov_len: buf.len(),
        }];
        // SAFETY: the buffer lives as long as the ring (same struct, dropped after
        // it) and is never reallocated.
        let fixed = unsafe { ring.submitter().register_buffers(&iov) }.is_ok();
        Ok(Ring {
            ring,
            buf,
            inflight: 0,
            notifs: 0,
            zc: ZcCounts::default(),
            fixed,
        })
    }

    /// Whether the kernel has the zero-copy send operation (SEND_ZC, Linux 6.0).
    pub fn has_send_zc(&self) -> bool {
        let mut probe = io_uring::Probe::new();
        self.ring.submitter().register_probe(&mut probe).is_ok()
            && probe.is_supported(opcode::SendZc::CODE)
    }

    /// Whether operations are in flight (notifications aside).
    pub fn busy(&self) -> bool {
        self.inflight > 0
    }

    /// Whether nothing is in flight and the kernel holds no part of the buffer.
    pub fn idle(&self) -> bool {
        self.inflight == 0 && self.notifs == 0
    }

    /// Zero-copy sends so far.
    pub fn zc(&self) -> ZcCounts {
        self.zc
    }

    /// Waits up to `timeout` for every outstanding SEND_ZC notification (operations
    /// in flight are waited for too). Returns whether the ring is now idle.
    pub fn settle(&mut self, timeout: Duration) -> io::Result<bool> {
        let deadline = std::time::Instant::now() + timeout;
        let mut acc = Batch::default();
        while !self.idle() {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                break;
            }
            self.wait(self.inflight + self.notifs, left, &mut acc)?;
        }
        Ok(self.idle())
    }

    /// Whether the buffer is registered (WRITE_FIXED) or plain (SEND).
    pub fn fixed(&self) -> bool {
        self.fixed
    }

    /// The buffer, to fill before use. Only while nothing is in flight.
    pub fn buf(&mut self) -> &mut [u8] {
        assert!(self.idle(), "buffer in use by the kernel");
        &mut self.buf
    }

    fn reap(&mut self, acc: &mut Batch) {
        for cqe in self.ring.completion() {
            let flags = cqe.flags();
            if cqueue::notif(flags) {
                // The second completion of a SEND_ZC: the buffer is free again.
                self.notifs = self.notifs.saturating_sub(1);
                self.zc.completions += 1;
                if cqe.result() as u32 & NOTIF_USAGE_ZC_COPIED != 0 {
                    self.zc.copied += 1;
                }
                continue;
            }
            if cqueue::more(flags) {
                self.notifs += 1;
                self.zc.sends += 1;
            }
            self.inflight -= 1;
            acc.done += 1;
            let r = cqe.result();
            if r >= 0 {
                acc.bytes += r as usize;
            } else if r != -libc::ECANCELED && acc.error.is_none() {
                acc.error = Some(-r);
            }
        }
    }

    fn wait(&mut self, want: u32, timeout: Duration, acc: &mut Batch) -> io::Result<()> {
        let ts = types::Timespec::new()
            .sec(timeout.as_secs())
            .nsec(timeout.subsec_nanos());
        let args = types::SubmitArgs::new().timespec(&ts);
        match self.ring.submitter().submit_with_args(want as usize, &args) {
            Ok(_) => {}
            Err(e)
                if e.raw_os_error() == Some(libc::ETIME)
                    || e.raw_os_error() == Some(libc::EINTR) => {}
            Err(e) => return Err(e),
        }
        self.reap(acc);
        Ok(())
    }

    /// Queues `n` linked writes, the `i`th of `len` bytes from buffer offset
    /// `off + i * stride`, and waits up to `timeout` for them. A short write cancels
    /// its followers (the stream stays in order). If operations are still in flight
    /// from an earlier call, only waits for those.
    ///
    /// `zc`: zero-copy sends (SEND_ZC, MSG_WAITALL so that a stream write is whole
    /// or failed), each followed later by a notification that [`Ring::idle`] and
    /// [`Ring::zc`] account for; the bytes may be handed to the kernel before the
    /// notification, so the caller must not change them until the ring is idle.
    pub fn write_linked(
        &mut self,
        fd: RawFd,
        (off, stride): (usize, usize),
        len: usize,
        n: u32,
        timeout: Duration,
        zc: bool,
    ) -> io::Result<Batch> {
        let mut acc = Batch::default();
        if self.inflight == 0 {
            let last = off + stride * (n.max(1) as usize - 1);
            if last + len > self.buf.len() {
                return Err(io::Error::other("io_uring write beyond its buffer"));
            }
            for i in 0..n {
                // SAFETY: every write's `[start, start + len)` is within the registered
                // buffer (checked above), which outlives the operation (field order).
                let ptr = unsafe { self.buf.as_ptr().add(off + stride * i as usize) };
                let e = if zc {
                    opcode::SendZc::new(types::Fd(fd), ptr, len as u32)
                        .buf_index(self.fixed.then_some(0))
                        .flags(libc::MSG_WAITALL)
                        .zc_flags(SEND_ZC_REPORT_USAGE)
                        .build()
                } else if self.fixed {
                    opcode::WriteFixed::new(types::Fd(fd), ptr, len as u32, 0).build()
                } else {
                    opcode::Send::new(types::Fd(fd), ptr, len as u32).build()
                };
                let e = if i + 1 < n {
                    e.flags(squeue::Flags::IO_LINK)
                } else {
                    e
                };
                // SAFETY: the entry's buffer stays valid until its completion is reaped
                // (the ring owns the buffer's lifetime as above).
                unsafe { self.ring.submission().push(&e) }
                    .map_err(|_| io::Error::other("io_uring submission queue full"))?;
                self.inflight += 1;
            }
        }
        let want = self.inflight;
        self.wait(want, timeout, &mut acc)?;
        Ok(acc)
    }

    /// One receive into the buffer's first `len` bytes, waiting up to `timeout`.
    /// Returns `Ok(None)` if it is still in flight (call again to keep waiting).
    pub fn recv(&mut self, fd: RawFd, len: usize, timeout: Duration) -> io::Result<Option<i32>> {
        if self.inflight == 0 {
            let e = opcode::Recv::new(
                types::Fd(fd),
                self.buf.as_mut_ptr(),
                len.min(self.buf.len()) as u32,
            )
            .build();
            // SAFETY: as in `write_linked`: the buffer outlives the operation.
            unsafe { self.ring.submission().push(&e) }
                .map_err(|_| io::Error::other("io_uring submission queue full"))?;
            self.inflight = 1;
        }
        let mut acc = Batch::default();
        self.wait(1, timeout, &mut acc)?;
        if acc.done == 0 {
            return Ok(None);
        }
        Ok(Some(match acc.error {
            Some(e) => -e,
            None => acc.bytes as i32,
        }))
    }

    /// The received bytes (after `recv`).
    pub fn data(&self, n: usize) -> &[u8] {
        &self.buf[..n]
    }
}

/// Buffer group of [`MultiRecv`]'s provided buffers.
const BGID: u16 = 1;
const UD_RECV: u64 = 1;
const UD_PROVIDE: u64 = 2;

/// What one [`MultiRecv::recv`] call saw.
#[derive(Debug, Default, Clone, Copy)]
pub struct Received {
    /// Bytes delivered to the callback.
    pub bytes: usize,
    /// Completions that carried data (TCP: chunks; UDP: datagrams).
    pub chunks: u64,
    /// The peer closed (a zero-length completion).
    pub eof: bool,
}

/// Multishot receive (IORING_RECV_MULTISHOT, Linux 6.0): one armed request keeps
/// posting a completion per arrival into buffers the kernel picks from a provided
/// pool; each call hands the received chunks to the caller and gives their buffers
/// back in the same `io_uring_enter` that waits for more.
pub struct MultiRecv {
    // Field order matters: the ring drops (cancelling the armed receive) before
    // the pool it writes into.
    ring: IoUring,
    pool: PageBuf,
    buf_len: usize,
    armed: bool,
    /// Buffers whose data the caller has seen, to give back (capacity: the pool).
    seen: Vec<u16>,
}

impl std::fmt::Debug for MultiRecv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "MultiRecv({} x {} B, armed {})",
            self.pool.len() / self.buf_len.max(1),
            self.buf_len,
            self.armed
        )
    }
}

impl MultiRecv {
    /// A ring and a pool of `nbufs` buffers of `buf_len` bytes, provided to the
    /// kernel.
    pub fn new(nbufs: u16, buf_len: usize) -> io::Result<MultiRecv> {
        let nbufs = nbufs.max(1);
        let buf_len = buf_len.clamp(1, i32::MAX as usize);
        let mut ring = IoUring::new(u32::from(nbufs) + 4)?;
        let mut pool = PageBuf::zeroed(usize::from(nbufs) * buf_len)?;
        let e = opcode::ProvideBuffers::new(pool.as_mut_ptr(), buf_len as i32, nbufs, BGID, 0)
            .build()
            .user_data(UD_PROVIDE);
        // SAFETY: the pool outlives the ring (field order) and is never moved or
        // resized; the kernel writes only within `nbufs * buf_len` bytes of it.
        unsafe { ring.submission().push(&e) }
            .map_err(|_| io::Error::other("io_uring submission queue full"))?;
        ring.submit_and_wait(1)?;
        if let Some(c) = ring.completion().next() {
            if c.result() < 0 {
                return Err(io::Error::from_raw_os_error(-c.result()));
            }
        }
        Ok(MultiRecv {
            ring,
            pool,
            buf_len,
            armed: false,
            seen: Vec::with_capacity(usize::from(nbufs)),
        })
    }

    /// Gives back the buffers seen, arms the receive if it is not armed, waits up
    /// to `timeout` for completions and calls `on` with each chunk received.
    pub fn recv(
        &mut self,
        fd: RawFd,
        timeout: Duration,
        on: &mut dyn FnMut(&[u8]),
    ) -> io::Result<Received> {
        for &bid in &self.seen {
            // SAFETY: `bid` indexes a buffer of the pool, as above.
            let ptr = unsafe { self.pool.as_mut_ptr().add(usize::from(bid) * self.buf_len) };
            let e = opcode::ProvideBuffers::new(ptr, self.buf_len as i32, 1, BGID, bid)
                .build()
                .user_data(UD_PROVIDE);
            // SAFETY: as in `new`.
            unsafe { self.ring.submission().push(&e) }
                .map_err(|_| io::Error::other("io_uring submission queue full"))?;
        }
        self.seen.clear();
        if !self.armed {
            let e = opcode::RecvMulti::new(types::Fd(fd), BGID)
                .build()
                .user_data(UD_RECV);
            // SAFETY: the receive writes only into provided buffers of the pool.
            unsafe { self.ring.submission().push(&e) }
                .map_err(|_| io::Error::other("io_uring submission queue full"))?;
            self.armed = true;
        }
        let ts = types::Timespec::new()
            .sec(timeout.as_secs())
            .nsec(timeout.subsec_nanos());
        let args = types::SubmitArgs::new().timespec(&ts);
        match self.ring.submitter().submit_with_args(1, &args) {
            Ok(_) => {}
            Err(e)
                if e.raw_os_error() == Some(libc::ETIME)
                    || e.raw_os_error() == Some(libc::EINTR) => {}
            Err(e) => return Err(e),
        }
        let mut got = Received::default();
        let mut error = None;
        for c in self.ring.completion() {
            let r = c.result();
            if c.user_data() == UD_PROVIDE {
                if r < 0 && error.is_none() {
                    error = Some(-r);
                }
                continue;
            }
            if !io_uring::cqueue::more(c.flags()) {
                self.armed = false;
            }
            if r > 0 {
                let Some(bid) = io_uring::cqueue::buffer_select(c.flags()) else {
                    error.get_or_insert(libc::EIO);
                    continue;
                };
                let start = usize::from(bid) * self.buf_len;
                let n = (r as usize).min(self.buf_len);
                on(&self.pool[start..start + n]);
                self.seen.push(bid);
                got.bytes += n;
                got.chunks += 1;
            } else if r == 0 {
                got.eof = true;
            } else if r != -libc::ENOBUFS && error.is_none() {
                // ENOBUFS: every buffer was in use; they are given back next call
                // and the receive re-armed.
                error = Some(-r);
            }
        }
        match error {
            Some(e) if got.chunks == 0 => Err(io::Error::from_raw_os_error(e)),
            _ => Ok(got),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;
    use std::net::{TcpListener, TcpStream};
    use std::os::fd::AsRawFd;

    use super::*;

    /// Hundreds of linked SEND_ZC batches over a loopback connection: the stream
    /// arrives whole and in order, every send gets its notification, and loopback
    /// reports each one copied.
    #[test]
    fn send_zc_keeps_the_stream_whole_and_counts_every_notification() {
        let mut ring = Ring::new(64, 64 << 10).unwrap();
        if !ring.has_send_zc() {
            eprintln!("SKIPPED: this kernel has no io_uring SEND_ZC");
            return;
        }
        crate::fill_pattern(ring.buf());
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (mut s, _) = l.accept().unwrap();
        let (batches, chunk) = (300usize, 16usize << 10);
        let reader = std::thread::spawn(move || {
            let (mut buf, mut at, mut bad) = (vec![0u8; 1 << 16], 0usize, 0usize);
            loop {
                let n = s.read(&mut buf).unwrap();
                if n == 0 {
                    return (at, bad);
                }
                for (i, b) in buf[..n].iter().enumerate() {
                    // Each write starts at buffer offset 0, so the pattern restarts
                    // every `chunk` bytes.
                    bad += usize::from(*b != ((at + i) % chunk % 251) as u8);
                }
                at += n;
            }
        });
        let mut sent = 0usize;
        let mut ops = 0u64;
        while ops < (batches * 4) as u64 {
            let b = ring
                .write_linked(
                    c.as_raw_fd(),
                    (0, 0),
                    chunk,
                    4,
                    Duration::from_secs(5),
                    true,
                )
                .unwrap();
            assert_eq!(b.error, None);
            sent += b.bytes;
            ops += u64::from(b.done);
        }
        assert!(ring.settle(Duration::from_secs(5)).unwrap());
        drop(c);
        let (got, bad) = reader.join().unwrap();
        assert_eq!((got, bad), (sent, 0));
        assert_eq!(sent, batches * 4 * chunk);
        let zc = ring.zc();
        assert_eq!(zc.sends, ops);
        assert_eq!(zc.completions, zc.sends);
        assert_eq!(zc.copied, zc.completions, "loopback copies: {zc:?}");
    }
}
