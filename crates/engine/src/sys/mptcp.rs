//! An MPTCP connection as the kernel keeps it (`SOL_MPTCP`, `linux/mptcp.h`):
//! the whole connection's counters (`MPTCP_INFO`), and each subflow's
//! `TCP_INFO` (`MPTCP_TCPINFO`) and addresses (`MPTCP_SUBFLOW_ADDRS`). The
//! subflow answers are a `struct mptcp_subflow_data` header followed by one
//! entry per subflow, `size_user` bytes apart.

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::os::fd::AsRawFd;

use super::TcpInfoRaw;

/// `IPPROTO_MPTCP`: a stream socket of this protocol is an MPTCP connection.
pub const IPPROTO_MPTCP: i32 = 262;
const SOL_MPTCP: i32 = 284;
const MPTCP_INFO: i32 = 1;
const MPTCP_TCPINFO: i32 = 2;
const MPTCP_SUBFLOW_ADDRS: i32 = 3;
/// The most subflows read (the kernel's own limit is 8).
const MAX_SUBFLOWS: usize = 8;

/// `struct mptcp_info` as Linux 6.x has it (the byte counters came in 6.5, the
/// timestamps in 6.7); an older kernel fills a prefix ([`info`] says how much).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct MptcpInfoRaw {
    pub subflows: u8,
    pub add_addr_signal: u8,
    pub add_addr_accepted: u8,
    pub subflows_max: u8,
    pub add_addr_signal_max: u8,
    pub add_addr_accepted_max: u8,
    pub flags: u32,
    pub token: u32,
    pub write_seq: u64,
    pub snd_una: u64,
    pub rcv_nxt: u64,
    pub local_addr_used: u8,
    pub local_addr_max: u8,
    pub csum_enabled: u8,
    /// Data-level retransmissions: data sent again on another subflow.
    pub retransmits: u32,
    pub bytes_retrans: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Bytes the peer acknowledged at the data level (DATA_ACK): what the
    /// connection delivered, over all its subflows.
    pub bytes_acked: u64,
    /// Subflows ever made, the first included.
    pub subflows_total: u8,
    pub reserved: [u8; 3],
    pub last_data_sent: u32,
    pub last_data_recv: u32,
    pub last_ack_recv: u32,
}

/// Where `bytes_acked` ends in [`MptcpInfoRaw`]: a kernel that filled less has
/// no data-level byte counters.
pub const INFO_WITH_BYTES: usize = std::mem::offset_of!(MptcpInfoRaw, bytes_acked) + 8;

/// The connection's `MPTCP_INFO` and how many of its bytes the kernel filled;
/// an error for a socket that is not MPTCP or fell back to TCP.
pub fn info(sock: &impl AsRawFd) -> io::Result<(MptcpInfoRaw, usize)> {
    let mut info = MptcpInfoRaw::default();
    let mut len = std::mem::size_of::<MptcpInfoRaw>() as libc::socklen_t;
    // SAFETY: `info` is a plain-old-data repr(C) struct of `len` bytes that
    // lives for the call; the kernel writes at most `len` bytes and updates it.
    let rc = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            SOL_MPTCP,
            MPTCP_INFO,
            (&mut info as *mut MptcpInfoRaw).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((info, len as usize))
}

/// `struct mptcp_subflow_data`.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
struct SubflowData {
    size_subflow_data: u32,
    num_subflows: u32,
    size_kernel: u32,
    size_user: u32,
}

const HEADER: usize = std::mem::size_of::<SubflowData>();
/// `struct mptcp_subflow_addrs`: two `__kernel_sockaddr_storage` unions.
const ADDRS: usize = 256;

/// One `SOL_MPTCP` answer of up to [`MAX_SUBFLOWS`] entries of `entry` bytes:
/// the entries' bytes.
fn subflow_data(sock: &impl AsRawFd, opt: i32, entry: usize) -> io::Result<Vec<Vec<u8>>> {
    // Aligned for the header and for `TcpInfoRaw`'s u64 fields.
    let mut buf = vec![0u64; (HEADER + MAX_SUBFLOWS * entry).div_ceil(8)];
    let head = SubflowData {
        size_subflow_data: HEADER as u32,
        num_subflows: 0,
        size_kernel: 0,
        size_user: entry as u32,
    };
    // SAFETY: `buf` holds at least HEADER bytes, 8-byte aligned; SubflowData is
    // plain old data.
    unsafe { std::ptr::write(buf.as_mut_ptr().cast::<SubflowData>(), head) };
    let mut len = (buf.len() * 8) as libc::socklen_t;
    // SAFETY: `buf` is `len` bytes that live for the call; the kernel writes at
    // most `len` bytes and updates `len`.
    let rc = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            SOL_MPTCP,
            opt,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above; the kernel filled the header.
    let head = unsafe { std::ptr::read(buf.as_ptr().cast::<SubflowData>()) };
    // SAFETY: `buf`'s u64s are `buf.len() * 8` initialised bytes.
    let bytes = unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<u8>(), buf.len() * 8) };
    let stride = head.size_user as usize;
    let start = head.size_subflow_data as usize;
    let n = (head.num_subflows as usize).min(MAX_SUBFLOWS);
    let take = entry.min(stride).min(head.size_kernel.max(1) as usize);
    Ok((0..n)
        .filter_map(|i| {
            let at = start + i * stride;
            bytes.get(at..at + take).map(|b| {
                let mut e = b.to_vec();
                e.resize(entry, 0);
                e
            })
        })
        .collect())
}

/// A `sockaddr_in` or `sockaddr_in6` at the start of `b`.
fn sockaddr(b: &[u8]) -> Option<SocketAddr> {
    let family = i32::from(u16::from_ne_bytes([b[0], b[1]]));
    let port = u16::from_be_bytes([b[2], b[3]]);
    match family {
        libc::AF_INET => {
            let ip = Ipv4Addr::new(b[4], b[5], b[6], b[7]);
            Some(SocketAddr::V4(SocketAddrV4::new(ip, port)))
        }
        libc::AF_INET6 => {
            let ip: [u8; 16] = b[8..24].try_into().ok()?;
            Some(SocketAddr::V6(SocketAddrV6::new(
                Ipv6Addr::from(ip),
                port,
                0,
                0,
            )))
        }
        _ => None,
    }
}

/// One subflow: its `TCP_INFO`, its local address and its remote one.
pub type SubflowRaw = (TcpInfoRaw, Option<SocketAddr>, Option<SocketAddr>);

/// Each subflow's `TCP_INFO` and its local and remote addresses; an error
/// for a socket that is not MPTCP (or a kernel without these options).
pub fn subflows(sock: &impl AsRawFd) -> io::Result<Vec<SubflowRaw>> {
    let size = std::mem::size_of::<TcpInfoRaw>();
    let infos = subflow_data(sock, MPTCP_TCPINFO, size)?;
    let addrs = subflow_data(sock, MPTCP_SUBFLOW_ADDRS, ADDRS).unwrap_or_default();
    Ok(infos
        .iter()
        .enumerate()
        .map(|(i, b)| {
            // SAFETY: `b` is `size` bytes (resized above, zero past what the
            // kernel filled); TcpInfoRaw is plain old data of that size, read
            // unaligned.
            let info = unsafe { std::ptr::read_unaligned(b.as_ptr().cast::<TcpInfoRaw>()) };
            let (l, r) = addrs
                .get(i)
                .map_or((None, None), |a| (sockaddr(&a[..128]), sockaddr(&a[128..])));
            (info, l, r)
        })
        .collect())
}
