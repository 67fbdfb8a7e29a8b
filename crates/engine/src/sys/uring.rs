//! A safe wrapper over the `io-uring` crate for the engine's needs: one ring, one
//! registered buffer, batches of linked writes and single receives, each call
//! bounded by a timeout, and no operation ever left in flight over a buffer that
//! could be freed (the ring is dropped, cancelling everything, before the buffer).

use std::io;
use std::os::fd::RawFd;
use std::time::Duration;

use io_uring::{opcode, squeue, types, IoUring};

use crate::buf::PageBuf;

/// A ring with a registered buffer.
pub struct Ring {
    // Field order matters: the ring drops (cancelling in-flight operations) before
    // the buffer they point into.
    ring: IoUring,
    buf: PageBuf,
    inflight: u32,
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
            fixed,
        })
    }

    /// Whether nothing is in flight.
    pub fn idle(&self) -> bool {
        self.inflight == 0
    }

    /// Whether the buffer is registered (WRITE_FIXED) or plain (SEND).
    pub fn fixed(&self) -> bool {
        self.fixed
    }

    /// The buffer, to fill before use. Only while nothing is in flight.
    pub fn buf(&mut self) -> &mut [u8] {
        assert_eq!(self.inflight, 0, "buffer in use by the kernel");
        &mut self.buf
    }

    fn reap(&mut self, acc: &mut Batch) {
        for cqe in self.ring.completion() {
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

    /// Queues `n` linked writes, each of `len` bytes from buffer offset `off`, and
    /// waits up to `timeout` for them. A short write cancels its followers (the
    /// stream stays in order). If operations are still in flight from an earlier
    /// call, only waits for those.
    pub fn write_linked(
        &mut self,
        fd: RawFd,
        off: usize,
        len: usize,
        n: u32,
        timeout: Duration,
    ) -> io::Result<Batch> {
        let mut acc = Batch::default();
        if self.inflight == 0 {
            assert!(off + len <= self.buf.len());
            for i in 0..n {
                // SAFETY: `off + len` is within the registered buffer, which outlives
                // the operation (see the field order).
                let ptr = unsafe { self.buf.as_ptr().add(off) };
                let e = if self.fixed {
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
