//! Socket calls beyond `std` and `socket2`: vectored and multi-message sends and
//! receives, zero-copy sends and their error-queue completions, and receives that
//! discard the data. All buffers are owned by the caller and reused across calls;
//! nothing here allocates.

use std::io;
use std::os::fd::{AsFd, AsRawFd};

use rustix::net::{RecvFlags, SendFlags};

use crate::buf::PageBuf;

/// One `send(MSG_NOSIGNAL)`: the data path's write. rustix makes the system call
/// itself; glibc's `send` and `write`, which `std` calls, are thread-cancellation
/// points that mark and unmark the thread around every call, 9% of a 64-byte
/// sender's CPU on the project's VM.
#[inline]
pub fn send_once(fd: impl AsFd, buf: &[u8]) -> io::Result<usize> {
    Ok(rustix::net::send(fd, buf, SendFlags::NOSIGNAL)?)
}

/// One `recv`: the data path's read, as [`send_once`].
#[inline]
pub fn recv_once(fd: impl AsFd, buf: &mut [u8]) -> io::Result<usize> {
    Ok(rustix::net::recv(fd, buf, RecvFlags::empty())?.0)
}

/// One `read(2)` on a socket, the call iperf3 reads its streams with
/// (`recv_once` is `recvfrom(2)`, which the kernel takes on a shorter path).
pub fn read_once(fd: impl AsFd, buf: &mut [u8]) -> io::Result<usize> {
    Ok(rustix::io::read(fd, buf)?)
}

/// One `write(2)` on a socket, the call iperf3 writes its streams with (a
/// peer gone is `EPIPE`: Rust ignores `SIGPIPE`).
pub fn write_once(fd: impl AsFd, buf: &[u8]) -> io::Result<usize> {
    Ok(rustix::io::write(fd, buf)?)
}

// Kernel ABI constants (include/uapi), stable since the Linux versions noted.
/// `SOL_SOCKET`.
pub const SOL_SOCKET: i32 = libc::SOL_SOCKET;
/// `SO_RCVLOWAT`.
pub const SO_RCVLOWAT: i32 = libc::SO_RCVLOWAT;
/// `MSG_ZEROCOPY` (4.14).
pub const MSG_ZEROCOPY: i32 = libc::MSG_ZEROCOPY;
/// `MSG_TRUNC`.
pub const MSG_TRUNC: i32 = libc::MSG_TRUNC;
/// `SO_ZEROCOPY` (4.14).
pub const SO_ZEROCOPY: i32 = 60;
/// `SO_BUSY_POLL` (3.11).
pub const SO_BUSY_POLL: i32 = 46;
/// `SO_PREFER_BUSY_POLL` (5.11).
pub const SO_PREFER_BUSY_POLL: i32 = 69;
/// `UDP_SEGMENT`, UDP GSO (4.18).
pub const UDP_SEGMENT: i32 = 103;
/// `UDP_GRO` (5.0).
pub const UDP_GRO: i32 = 104;
/// `SOL_UDP`.
pub const SOL_UDP: i32 = 17;
const SO_EE_ORIGIN_ZEROCOPY: u8 = 5;
const SO_EE_CODE_ZEROCOPY_COPIED: u8 = 1;
const IP_RECVERR: i32 = 11;
const IPV6_RECVERR: i32 = 25;

/// `struct sock_extended_err` from `linux/errqueue.h`.
#[repr(C)]
struct SockExtendedErr {
    ee_errno: u32,
    ee_origin: u8,
    ee_type: u8,
    ee_code: u8,
    ee_pad: u8,
    ee_info: u32,
    ee_data: u32,
}

/// `writev` of `iov`.
pub fn writev(fd: &impl AsRawFd, iov: &[libc::iovec]) -> io::Result<usize> {
    // SAFETY: every iovec points into a live buffer of at least its length (the
    // caller's invariant, see `Iovecs`), and `iov.len()` entries are passed.
    syscall!(writev(fd.as_raw_fd(), iov.as_ptr(), iov.len() as i32)).map(|n| n as usize)
}

/// A TCP sender's batch: one message and the iovecs that send the rest of it from
/// any position followed by `copies` whole copies, in one `writev`. The iovecs are
/// built once; a call only rewrites the first.
pub struct RepeatIov {
    msg: PageBuf,
    iov: Vec<libc::iovec>,
}

// SAFETY: the iovecs point into `msg`, a mapping this struct owns and never moves
// or resizes; moving the struct between threads does not move the mapping.
unsafe impl Send for RepeatIov {}

impl RepeatIov {
    /// `IOV_MAX` on Linux.
    pub const MAX_IOV: usize = 1024;

    /// Sends from `msg` (non-empty), with up to `copies` whole copies per call
    /// (capped so the call has at most [`RepeatIov::MAX_IOV`] iovecs).
    pub fn new(msg: PageBuf, copies: usize) -> RepeatIov {
        let n = (1 + copies).clamp(2, Self::MAX_IOV);
        let iov = (0..n)
            .map(|_| libc::iovec {
                iov_base: msg.as_ptr() as *mut libc::c_void,
                iov_len: msg.len(),
            })
            .collect();
        RepeatIov { msg, iov }
    }

    /// The message length.
    pub fn len(&self) -> usize {
        self.msg.len()
    }

    /// One `writev` of the message's bytes from `pos` on, then the whole copies.
    pub fn writev(&mut self, fd: &impl AsRawFd, pos: usize) -> io::Result<usize> {
        let pos = pos.min(self.msg.len());
        self.iov[0] = libc::iovec {
            iov_base: self.msg[pos..].as_ptr() as *mut libc::c_void,
            iov_len: self.msg.len() - pos,
        };
        writev(fd, &self.iov)
    }
}

impl std::fmt::Debug for RepeatIov {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RepeatIov({} B x {})", self.msg.len(), self.iov.len())
    }
}

/// `send` with flags (MSG_ZEROCOPY, MSG_DONTWAIT).
pub fn send(fd: &impl AsRawFd, buf: &[u8], flags: i32) -> io::Result<usize> {
    // SAFETY: `buf` is a live slice of `buf.len()` bytes.
    syscall!(send(fd.as_raw_fd(), buf.as_ptr().cast(), buf.len(), flags)).map(|n| n as usize)
}

/// `recv` into `buf` with flags. The kernel is given `buf.len()` and writes at
/// most that: with MSG_TRUNC a datagram socket still returns the datagram's full
/// length, the rest of it dropped.
pub fn recv(fd: &impl AsRawFd, buf: &mut [u8], flags: i32) -> io::Result<usize> {
    // SAFETY: `buf` is a live, writable slice of `buf.len()` bytes and the kernel
    // writes at most `buf.len()` bytes into it.
    syscall!(recv(
        fd.as_raw_fd(),
        buf.as_mut_ptr().cast(),
        buf.len(),
        flags
    ))
    .map(|n| n as usize)
}

/// Takes up to `len` bytes off a TCP stream without copying them (`recv` with
/// MSG_TRUNC and no buffer, which only a stream socket accepts: a datagram
/// socket would write the datagram to the buffer, so only a `TcpStream` is
/// taken).
pub fn discard(stream: &std::net::TcpStream, len: usize) -> io::Result<usize> {
    // SAFETY: on a TCP socket MSG_TRUNC makes the kernel drop the bytes and write
    // nothing, so a null buffer of any length is never written.
    syscall!(recv(
        stream.as_raw_fd(),
        std::ptr::null_mut(),
        len,
        libc::MSG_TRUNC
    ))
    .map(|n| n as usize)
}

/// Preallocated headers for `sendmmsg`/`recvmmsg`: one iovec per message, each
/// pointing into a caller-owned slot of a contiguous buffer.
pub struct MmsgBufs {
    /// The slots, `count * slot` bytes.
    pub data: PageBuf,
    slot: usize,
    iov: Vec<libc::iovec>,
    hdrs: Vec<libc::mmsghdr>,
}

// SAFETY: the raw pointers in `iov` and `hdrs` point into `data` and `iov`, which
// this struct owns and never reallocates after construction; moving the struct
// between threads moves the heap buffers' owners, not the buffers.
unsafe impl Send for MmsgBufs {}

impl std::fmt::Debug for MmsgBufs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MmsgBufs({} x {} B)", self.hdrs.len(), self.slot)
    }
}

impl MmsgBufs {
    /// `count` slots of `slot` bytes.
    pub fn new(count: usize, slot: usize) -> io::Result<MmsgBufs> {
        let mut b = MmsgBufs {
            data: PageBuf::zeroed(count * slot)?,
            slot,
            iov: Vec::with_capacity(count),
            hdrs: Vec::with_capacity(count),
        };
        for i in 0..count {
            // SAFETY: `i * slot` is within `data`, which is never reallocated.
            let base = unsafe { b.data.as_mut_ptr().add(i * slot) };
            b.iov.push(libc::iovec {
                iov_base: base.cast(),
                iov_len: slot,
            });
        }
        for i in 0..count {
            // SAFETY: an all-zero mmsghdr is valid (null name and control).
            let mut h: libc::mmsghdr = unsafe { std::mem::zeroed() };
            // SAFETY: `iov` is never reallocated after this loop starts (capacity
            // reserved above).
            h.msg_hdr.msg_iov = unsafe { b.iov.as_mut_ptr().add(i) };
            h.msg_hdr.msg_iovlen = 1;
            b.hdrs.push(h);
        }
        Ok(b)
    }

    /// Slot `i`.
    pub fn slot(&mut self, i: usize) -> &mut [u8] {
        &mut self.data[i * self.slot..(i + 1) * self.slot]
    }

    /// Length received into slot `i` by the last `recvmmsg`.
    pub fn received(&self, i: usize) -> usize {
        self.hdrs[i].msg_len as usize
    }

    /// Number of slots.
    pub fn count(&self) -> usize {
        self.hdrs.len()
    }

    /// Sends the first `n` slots, each `len` bytes; returns messages sent.
    pub fn sendmmsg(&mut self, fd: &impl AsRawFd, n: usize, len: usize) -> io::Result<usize> {
        let n = n.min(self.hdrs.len());
        for i in 0..n {
            self.iov[i].iov_len = len.min(self.slot);
        }
        // SAFETY: the first `n` headers point at iovecs into live slots.
        syscall!(sendmmsg(
            fd.as_raw_fd(),
            self.hdrs.as_mut_ptr(),
            n as u32,
            0
        ))
        .map(|r| r as usize)
    }

    /// Receives up to every slot; returns messages received (lengths via
    /// `received`). `flags` may hold MSG_DONTWAIT; MSG_WAITFORONE is always set so
    /// the call returns as soon as one message is in.
    pub fn recvmmsg(&mut self, fd: &impl AsRawFd, flags: i32) -> io::Result<usize> {
        for i in 0..self.hdrs.len() {
            self.iov[i].iov_len = self.slot;
        }
        // SAFETY: every header points at an iovec into a live slot of `slot` bytes.
        syscall!(recvmmsg(
            fd.as_raw_fd(),
            self.hdrs.as_mut_ptr(),
            self.hdrs.len() as u32,
            flags | libc::MSG_WAITFORONE,
            std::ptr::null_mut()
        ))
        .map(|r| r as usize)
    }
}

/// Sends `len` bytes of `buf` as one UDP GSO super-datagram that the kernel
/// splits into `seg`-byte datagrams (UDP_SEGMENT as a control message).
pub fn send_gso(fd: &impl AsRawFd, buf: &[u8], seg: u16) -> io::Result<usize> {
    let mut control = [0u64; 4];
    let mut iov = libc::iovec {
        iov_base: buf.as_ptr() as *mut _,
        iov_len: buf.len(),
    };
    // SAFETY: msghdr points at one iovec over `buf` and a control buffer large
    // enough for one u16 cmsg; both outlive the call.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = libc::CMSG_SPACE(2) as usize;
        let c = libc::CMSG_FIRSTHDR(&msg);
        (*c).cmsg_level = SOL_UDP;
        (*c).cmsg_type = UDP_SEGMENT;
        (*c).cmsg_len = libc::CMSG_LEN(2) as usize;
        std::ptr::write_unaligned(libc::CMSG_DATA(c) as *mut u16, seg);
        syscall!(sendmsg(fd.as_raw_fd(), &msg, 0)).map(|n| n as usize)
    }
}

/// Zero-copy completion counts read from the socket's error queue.
#[derive(Debug, Default, Clone, Copy)]
pub struct ZcCompletions {
    /// Completed sends (each notification covers a range of sends).
    pub completed: u64,
    /// Of those, ranges the kernel copied after all.
    pub copied: u64,
}

/// Reads every pending MSG_ZEROCOPY notification without blocking.
pub fn read_zc_completions(fd: &impl AsRawFd, acc: &mut ZcCompletions) -> io::Result<()> {
    let mut control = [0u64; 16];
    loop {
        // SAFETY: a zeroed msghdr with only a control buffer is valid for an
        // error-queue read; `control` outlives the call.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&control);
        match syscall!(recvmsg(
            fd.as_raw_fd(),
            &mut msg,
            libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT
        )) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) => return Err(e),
        }
        // SAFETY: CMSG_* walk the control buffer the kernel just filled, within
        // `msg_controllen`.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(&msg);
            while !c.is_null() {
                let is_recverr = ((*c).cmsg_level == libc::SOL_IP && (*c).cmsg_type == IP_RECVERR)
                    || ((*c).cmsg_level == libc::SOL_IPV6 && (*c).cmsg_type == IPV6_RECVERR);
                if is_recverr {
                    let ee = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const SockExtendedErr);
                    if ee.ee_origin == SO_EE_ORIGIN_ZEROCOPY {
                        let n = u64::from(ee.ee_data.wrapping_sub(ee.ee_info)) + 1;
                        acc.completed += n;
                        if ee.ee_code & SO_EE_CODE_ZEROCOPY_COPIED != 0 {
                            acc.copied += n;
                        }
                    }
                }
                c = libc::CMSG_NXTHDR(&msg, c);
            }
        }
    }
}

/// One `recvmsg` on a socket with UDP_GRO on: returns the bytes received and the
/// segment size of a coalesced super-datagram (0 when it is a single datagram).
pub fn recv_gro(fd: &impl AsRawFd, buf: &mut [u8], flags: i32) -> io::Result<(usize, usize)> {
    let mut control = [0u64; 8];
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: one iovec over `buf` and a control buffer, both outliving the call;
    // the cmsg walk stays within what the kernel wrote.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&control);
        let n = syscall!(recvmsg(fd.as_raw_fd(), &mut msg, flags))? as usize;
        let mut seg = 0usize;
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == SOL_UDP && (*c).cmsg_type == UDP_GRO {
                seg = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const i32) as usize;
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
        Ok((n, seg))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A datagram longer than the buffer: its full length comes back, and not
    /// a byte is written past the slice given.
    #[test]
    fn recv_with_trunc_never_writes_past_its_buffer() {
        let a = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        b.connect(a.local_addr().unwrap()).unwrap();
        b.send(&[7u8; 100]).unwrap();
        let mut buf = [0u8; 16];
        let n = recv(&a, &mut buf[..4], libc::MSG_TRUNC).unwrap();
        assert_eq!(n, 100);
        assert_eq!(buf[..4], [7; 4]);
        assert_eq!(buf[4..], [0; 12]);
    }

    /// A stream's bytes are taken off without a buffer.
    #[test]
    fn discard_takes_stream_bytes_without_a_buffer() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, _) = l.accept().unwrap();
        std::io::Write::write_all(&mut c, &[1u8; 1000]).unwrap();
        drop(c);
        let mut got = 0;
        loop {
            match discard(&s, 1 << 20).unwrap() {
                0 => break,
                n => got += n,
            }
        }
        assert_eq!(got, 1000);
    }
}
