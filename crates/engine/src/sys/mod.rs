//! The engine's only unsafe code: socket options that `socket2` does not wrap,
//! and the calls it makes through `libc` and `rustix`'s unsafe functions.

#![allow(unsafe_code)]

use std::io;
use std::os::fd::AsRawFd;

/// Caps the C allocator's arenas at two: the main one and one that every other
/// thread shares.
///
/// glibc gives each thread that allocates an arena of its own, up to eight per core,
/// and each reserves 64 MiB of address space. A server that had run 16 flow
/// threads held 15 such reservations, 1 GiB it never used; under an address-space
/// limit (`ulimit -v 524288`) they, not the buffers the memory budget counts, made
/// a 16 MiB x 4 request/response test fail to map its buffers. Flow threads
/// allocate only while they set up, never per message, so sharing an arena costs
/// the data path nothing. Elsewhere than glibc, this does nothing.
pub fn limit_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a tunable of the allocator; any value is valid.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

/// `struct tcp_info` from `linux/tcp.h`, up to `tcpi_snd_wnd` (Linux 6.2).
/// Older kernels fill a prefix and leave the rest zero.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct TcpInfoRaw {
    pub state: u8,
    pub ca_state: u8,
    pub retransmits: u8,
    pub probes: u8,
    pub backoff: u8,
    pub options: u8,
    pub wscale: u8,
    pub flags: u8,
    pub rto: u32,
    pub ato: u32,
    pub snd_mss: u32,
    pub rcv_mss: u32,
    pub unacked: u32,
    pub sacked: u32,
    pub lost: u32,
    pub retrans: u32,
    pub fackets: u32,
    pub last_data_sent: u32,
    pub last_ack_sent: u32,
    pub last_data_recv: u32,
    pub last_ack_recv: u32,
    pub pmtu: u32,
    pub rcv_ssthresh: u32,
    pub rtt: u32,
    pub rttvar: u32,
    pub snd_ssthresh: u32,
    pub snd_cwnd: u32,
    pub advmss: u32,
    pub reordering: u32,
    pub rcv_rtt: u32,
    pub rcv_space: u32,
    pub total_retrans: u32,
    pub pacing_rate: u64,
    pub max_pacing_rate: u64,
    pub bytes_acked: u64,
    pub bytes_received: u64,
    pub segs_out: u32,
    pub segs_in: u32,
    pub notsent_bytes: u32,
    pub min_rtt: u32,
    pub data_segs_in: u32,
    pub data_segs_out: u32,
    pub delivery_rate: u64,
    pub busy_time: u64,
    pub rwnd_limited: u64,
    pub sndbuf_limited: u64,
    pub delivered: u32,
    pub delivered_ce: u32,
    pub bytes_sent: u64,
    pub bytes_retrans: u64,
    pub dsack_dups: u32,
    pub reord_seen: u32,
    pub rcv_ooopack: u32,
    /// The peer's advertised receive window after scaling, bytes (Linux 6.2).
    pub snd_wnd: u32,
}

/// Reads `TCP_INFO`, zero-filling what an older kernel does not report.
pub fn tcp_info(sock: &impl AsRawFd) -> io::Result<TcpInfoRaw> {
    let mut info = TcpInfoRaw::default();
    let mut len = std::mem::size_of::<TcpInfoRaw>() as libc::socklen_t;
    // SAFETY: `info` is a plain-old-data repr(C) struct of `len` bytes that lives for
    // the call; the kernel writes at most `len` bytes and updates `len`.
    let rc = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut TcpInfoRaw).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(info)
}

/// Calls a libc function returning -1 on error, as `io::Result` (mio's `syscall!`).
macro_rules! syscall {
    ($fn: ident ( $($arg: expr),* $(,)* ) ) => {{
        // SAFETY: the caller passes arguments that satisfy the function's contract;
        // each use site states why.
        #[allow(unused_unsafe)]
        let res = unsafe { libc::$fn($($arg, )*) };
        if res == -1 {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(res)
        }
    }};
}

pub mod fdtable;
pub mod mptcp;
pub mod net;
pub mod select;
pub mod uring;
pub mod xdp;

/// Sets an integer socket option.
pub fn setsockopt_int(fd: &impl AsRawFd, level: i32, name: i32, value: i32) -> io::Result<()> {
    // SAFETY: `value` is a live i32 and its size is passed.
    syscall!(setsockopt(
        fd.as_raw_fd(),
        level,
        name,
        (&value as *const i32).cast(),
        std::mem::size_of::<i32>() as libc::socklen_t
    ))
    .map(drop)
}

/// Puts a descriptor in non-blocking mode.
pub fn set_nonblocking(fd: &impl AsRawFd) -> io::Result<()> {
    let flags = syscall!(fcntl(fd.as_raw_fd(), libc::F_GETFL))?;
    syscall!(fcntl(
        fd.as_raw_fd(),
        libc::F_SETFL,
        flags | libc::O_NONBLOCK
    ))
    .map(drop)
}
