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

/// Which header the datagrams of a flow carry: netsonde's own, or iperf3's (for
/// an iperf3 peer: `sec:u32 usec:u32 count`, the count from 1, 64 bits when the
/// client asked for 64-bit counters, else 32; big-endian; no FIN).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// [`stamp`]'s header.
    #[default]
    Netsonde,
    /// iperf3's.
    Iperf3 {
        /// 64-bit counters (`--udp-counters-64bit`).
        counters64: bool,
    },
}

impl Format {
    /// Writes a datagram's header: sequence number `seq` (from 0) and send time
    /// `tx_ns` (netsonde: since the flow's start; iperf3: since the Unix epoch).
    #[inline]
    pub fn stamp(self, d: &mut [u8], seq: u64, tx_ns: u64) {
        match self {
            Format::Netsonde => stamp(d, seq, tx_ns),
            Format::Iperf3 { counters64 } => {
                d[..4].copy_from_slice(&((tx_ns / 1_000_000_000) as u32).to_be_bytes());
                d[4..8].copy_from_slice(&((tx_ns % 1_000_000_000 / 1_000) as u32).to_be_bytes());
                if counters64 {
                    d[8..16].copy_from_slice(&(seq + 1).to_be_bytes());
                } else {
                    d[8..12].copy_from_slice(&((seq + 1) as u32).to_be_bytes());
                }
            }
        }
    }

    /// Reads a header written by [`Format::stamp`]: the sequence number (from 0)
    /// and the send time; `None` when `d` is shorter than a header.
    #[inline]
    pub fn read(self, d: &[u8]) -> Option<(u64, u64)> {
        let be32 = |b: &[u8]| u64::from(u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
        let be64 = |b: &[u8]| u64::from_be_bytes(b[..8].try_into().expect("8 bytes"));
        match self {
            Format::Netsonde if d.len() >= HEADER => Some((be64(&d[..8]), be64(&d[8..16]))),
            Format::Iperf3 { counters64 } if d.len() >= if counters64 { 16 } else { 12 } => {
                let count = if counters64 {
                    be64(&d[8..16])
                } else {
                    be32(&d[8..12])
                };
                Some((
                    count.wrapping_sub(1),
                    be32(&d[..4]) * 1_000_000_000 + be32(&d[4..8]) * 1_000,
                ))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_headers_read_back_what_was_written() {
        for f in [
            Format::Netsonde,
            Format::Iperf3 { counters64: true },
            Format::Iperf3 { counters64: false },
        ] {
            let mut d = [0u8; 32];
            f.stamp(&mut d, 41, 1_700_000_000_123_456_000);
            assert_eq!(f.read(&d), Some((41, 1_700_000_000_123_456_000)), "{f:?}");
        }
        // iperf3's first datagram carries count 1, its time in seconds and
        // microseconds.
        let mut d = [0u8; 16];
        Format::Iperf3 { counters64: false }.stamp(&mut d, 0, 5_000_250_000);
        assert_eq!(d[..12], [0, 0, 0, 5, 0, 0, 0, 250, 0, 0, 0, 1]);
        assert_eq!(Format::Iperf3 { counters64: true }.read(&d[..12]), None);
    }
}
