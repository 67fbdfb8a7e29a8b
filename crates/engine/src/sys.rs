//! The engine's only unsafe code: socket options that `socket2` does not wrap.

#![allow(unsafe_code)]

use std::io;
use std::os::fd::AsRawFd;

/// `struct tcp_info` from `linux/tcp.h`, up to `tcpi_sndbuf_limited` (Linux 4.10).
/// Older kernels fill a prefix; `len` says how much.
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
