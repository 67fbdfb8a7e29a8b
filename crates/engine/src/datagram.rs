//! The test datagram's header, which every UDP strategy writes and every UDP
//! receiver reads (all big-endian):
//!
//! ```text
//! data : seq:u64  tx_ns:u64  pattern...        (tx_ns: sender clock since its t0)
//! fin  : 0xffff_ffff_ffff_ffff  sent:u64        (sent: datagrams sent, whole test)
//! hello: the data preamble "NSDATA01" token flow (client -> server, echoed back)
//! ```
//!
//! Its own module so that the I/O strategies ([`crate::io`]) and the UDP flows
//! ([`crate::udp`]), which use the strategies, both import it without importing
//! each other.

use netsonde_model::spec::UDP_HEADER_LEN;

/// Bytes of the datagram header: sequence number and send time.
pub const HEADER: usize = UDP_HEADER_LEN as usize;

/// The sequence number a FIN carries.
pub const FIN: u64 = u64::MAX;

/// Writes a datagram's header.
#[inline]
pub fn stamp(d: &mut [u8], seq: u64, tx_ns: u64) {
    d[..8].copy_from_slice(&seq.to_be_bytes());
    d[8..16].copy_from_slice(&tx_ns.to_be_bytes());
}
