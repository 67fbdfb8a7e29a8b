//! Link arithmetic: the theoretical maximum goodput of an Ethernet link for an MTU
//! and transport ([`theoretical_goodput`]), the efficiency of a measurement against
//! it ([`efficiency`]), and the bandwidth-delay product ([`bdp_bytes`]).
//!
//! Every frame on the wire carries a fixed overhead around the IP packet
//! ([`ETHERNET_WIRE_OVERHEAD`]), and every packet carries IP and transport headers,
//! so only `payload / (mtu + 38)` of the line rate can be goodput. For MTU 1500 and
//! TCP with timestamps that is 1448/1538: 9.415 Gbit/s on a 10 Gbit/s link.
//! IPv4 without options is assumed.

use serde::{Deserialize, Serialize};

/// Ethernet per-frame overhead on the wire, in bytes, beyond the IP packet:
/// preamble and start-of-frame delimiter 8, MAC header 14, frame check sequence 4,
/// inter-frame gap 12.
pub const ETHERNET_WIRE_OVERHEAD: u64 = 38;

/// IPv4 header without options, in bytes.
pub const IPV4_HEADER: u64 = 20;

/// TCP header without options, in bytes.
pub const TCP_HEADER: u64 = 20;

/// The TCP timestamps option as Linux sends it on every segment (10 bytes padded to
/// 12), in bytes.
pub const TCP_TIMESTAMPS_OPTION: u64 = 12;

/// UDP header, in bytes.
pub const UDP_HEADER: u64 = 8;

/// The transport whose headers share each packet with the payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum L4 {
    /// TCP.
    Tcp {
        /// Whether segments carry the timestamps option (Linux default: yes).
        timestamps: bool,
    },
    /// UDP.
    Udp,
}

impl L4 {
    /// IP plus transport header bytes per packet.
    fn header_bytes(self) -> u64 {
        IPV4_HEADER
            + match self {
                L4::Tcp { timestamps: false } => TCP_HEADER,
                L4::Tcp { timestamps: true } => TCP_HEADER + TCP_TIMESTAMPS_OPTION,
                L4::Udp => UDP_HEADER,
            }
    }
}

/// Payload bytes per frame for an MTU (the IP packet size): the MTU less the IPv4 and
/// transport headers; 0 if the MTU cannot hold the headers.
pub fn payload_per_frame(mtu: u64, l4: L4) -> u64 {
    mtu.saturating_sub(l4.header_bytes())
}

/// Share of the line rate that can be goodput: `payload / (mtu + 38)`.
pub fn payload_share(mtu: u64, l4: L4) -> f64 {
    payload_per_frame(mtu, l4) as f64 / (mtu + ETHERNET_WIRE_OVERHEAD) as f64
}

/// Theoretical maximum goodput in bit/s for a line rate in bit/s:
/// `line_rate · payload_share`.
pub fn theoretical_goodput(line_rate_bps: f64, mtu: u64, l4: L4) -> f64 {
    line_rate_bps * payload_share(mtu, l4)
}

/// Efficiency: measured goodput over the theoretical maximum, as a fraction (1.0 is
/// the best the link allows). 0 when the theoretical maximum is 0.
pub fn efficiency(measured_bps: f64, line_rate_bps: f64, mtu: u64, l4: L4) -> f64 {
    let max = theoretical_goodput(line_rate_bps, mtu, l4);
    if max == 0.0 {
        0.0
    } else {
        measured_bps / max
    }
}

/// Share of the line rate that can be goodput when each TCP segment carries
/// `segment` payload bytes (a clamped MSS, small writes with `TCP_NODELAY`), at
/// most what the MTU holds: `payload / (payload + headers + 38)`.
pub fn tcp_share(mtu: u64, l4: L4, segment: Option<u64>) -> f64 {
    segment_share(mtu, l4.header_bytes(), segment)
}

/// Share of the line rate that can be payload when each packet carries
/// `headers` bytes of IP and transport headers and `segment` payload bytes,
/// at most what the MTU leaves.
fn segment_share(mtu: u64, headers: u64, segment: Option<u64>) -> f64 {
    let full = mtu.saturating_sub(headers);
    let payload = segment.filter(|&s| s > 0).map_or(full, |s| s.min(full));
    if payload == 0 {
        return 0.0;
    }
    payload as f64 / (payload + headers + ETHERNET_WIRE_OVERHEAD) as f64
}

/// Share of the line rate that can be goodput for UDP datagrams of `size` bytes:
/// one frame each when the datagram fits the MTU, else IP fragments, each with
/// its own IP header and frame overhead (fragment payloads are multiples of 8).
pub fn udp_share(mtu: u64, size: u64) -> f64 {
    if size == 0 || mtu <= IPV4_HEADER + UDP_HEADER {
        return 0.0;
    }
    let datagram = size + UDP_HEADER;
    let per_fragment = (mtu - IPV4_HEADER) / 8 * 8;
    let frames = if datagram + IPV4_HEADER <= mtu {
        1
    } else {
        datagram.div_ceil(per_fragment.max(8))
    };
    size as f64 / (datagram + frames * (IPV4_HEADER + ETHERNET_WIRE_OVERHEAD)) as f64
}

/// The DSS option Linux puts on every MPTCP data segment, in bytes: kind,
/// length and flags (4), a 64-bit data ACK (8), a 64-bit data sequence number
/// (8), the subflow sequence number (4), the data-level length (2) and the
/// checksum or two bytes of padding (2). With the timestamps it fills the 40
/// bytes TCP options may take.
pub const MPTCP_DSS_OPTION: u64 = 28;

/// Share of the line rate that can be an MPTCP connection's data when each
/// segment carries `segment` payload bytes: as [`tcp_share`] with timestamps,
/// with [`MPTCP_DSS_OPTION`] in every segment's header (the ceiling left it
/// out: 141.04 Mbit/s over two paths of 100 and 50 whose interface counters
/// put the data at 138.8).
pub fn mptcp_share(mtu: u64, segment: Option<u64>) -> f64 {
    let ts = L4::Tcp { timestamps: true };
    segment_share(mtu, ts.header_bytes() + MPTCP_DSS_OPTION, segment)
}

/// The most UDP payload quinn puts in a datagram: the upper bound of its path
/// MTU discovery (quinn-proto 0.11's `MtuDiscoveryConfig` default), which
/// netsonde leaves as it is.
pub const QUIC_MAX_DATAGRAM: u64 = 1452;

/// What a QUIC 1-RTT packet carries beside its stream bytes, in bytes: the
/// short header (a flags byte, quinn's 8-byte connection ID, a packet number
/// of 2 to 4, 3 counted), the STREAM frame's header (type 1, stream ID 1,
/// offset 4, length 2) and the AEAD tag (16).
pub const QUIC_PACKET_OVERHEAD: u64 = 1 + 8 + 3 + 8 + 16;

/// Share of the line rate that can be a QUIC stream's bytes: each datagram
/// as large as quinn makes it on the path ([`QUIC_MAX_DATAGRAM`], at most what
/// the MTU holds), less [`QUIC_PACKET_OVERHEAD`], over the datagram with its
/// UDP, IP and frame overhead. Goodput counts stream bytes, so the ceiling
/// does too (it counted the UDP payload, and goodput read 100.8% of it).
pub fn quic_share(mtu: u64) -> f64 {
    let datagram = QUIC_MAX_DATAGRAM.min(mtu.saturating_sub(IPV4_HEADER + UDP_HEADER));
    if datagram <= QUIC_PACKET_OVERHEAD {
        return 0.0;
    }
    (datagram - QUIC_PACKET_OVERHEAD) as f64
        / (datagram + IPV4_HEADER + UDP_HEADER + ETHERNET_WIRE_OVERHEAD) as f64
}

/// Bandwidth-delay product in bytes: `rate_bps / 8 · rtt_ns / 10⁹`, the data in
/// flight that keeps a path of that rate and round-trip time full, and so the window
/// a single flow needs.
pub fn bdp_bytes(rate_bps: f64, rtt_ns: f64) -> f64 {
    rate_bps / 8.0 * rtt_ns / 1e9
}

/// A test's path: its line rate (the one given, else the lab link's: both its
/// paths' for an MPTCP test when it has two) and the
/// goodput ceiling that rate allows after header overhead at the path's MTU (the
/// lab link's, else the client interface's), summed over the test's directions.
/// The ceiling is `None` for request/response tests and without a rate or MTU.
pub fn path_ceiling(
    r: &netsonde_model::result::TestReport,
    line_rate_bps: Option<f64>,
) -> (Option<f64>, Option<f64>) {
    let line =
        line_rate_bps.or_else(|| r.link.as_ref().and_then(|l| l.rate_bps_over(r.spec.mptcp)));
    let mtu = r
        .link
        .as_ref()
        .map(|l| u64::from(l.spec.up.mtu))
        .or_else(|| r.client.host.interface.as_ref().map(|i| u64::from(i.mtu)));
    let share = |m: u64| {
        if r.spec.test.is_quic() {
            quic_share(m)
        } else if r.spec.test.is_tcp() && r.spec.mptcp {
            mptcp_share(m, segment_payload(r))
        } else if r.spec.test.is_tcp() {
            tcp_share(m, L4::Tcp { timestamps: true }, segment_payload(r))
        } else {
            udp_share(m, r.spec.size.0)
        }
    };
    let directions = r.directions.len().max(1) as f64;
    let ceiling = match (line, mtu) {
        (Some(l), Some(m)) if !r.spec.test.is_rr() => Some(l * share(m) * directions),
        _ => None,
    };
    (line, ceiling)
}

/// The payload each TCP segment of a test carried on the wire: the senders'
/// bytes over their data segments (TCP_INFO, counted after GSO/TSO cut them),
/// else the MSS in force; `None` without TCP_INFO. A clamped MSS (`-M`) or small
/// writes with `TCP_NODELAY` put more headers on the link per byte than the MTU
/// alone says.
pub fn segment_payload(r: &netsonde_model::result::TestReport) -> Option<u64> {
    let senders = tcp_senders(r);
    let (bytes, segs) = senders
        .iter()
        .filter_map(|(_, t)| Some((t.bytes_sent, t.data_segs_out?)))
        .fold((0u64, 0u64), |(b, s), (tb, ts)| (b + tb, s + ts));
    if segs > 0 && bytes > 0 {
        return Some(bytes.div_ceil(segs));
    }
    senders
        .iter()
        .map(|(_, t)| u64::from(t.mss))
        .filter(|&m| m > 0)
        .min()
}

/// The TCP senders of a test (both ends) with their `TCP_INFO`.
pub fn tcp_senders(
    r: &netsonde_model::result::TestReport,
) -> Vec<(
    &netsonde_model::result::FlowResult,
    &netsonde_model::result::TcpInfoSummary,
)> {
    r.client
        .flows
        .iter()
        .chain(&r.server.flows)
        .filter(|f| f.role == netsonde_model::result::Role::Sender)
        .filter_map(|f| Some((f, f.tcp_info.as_ref()?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TCP_TS: L4 = L4::Tcp { timestamps: true };

    /// A QUIC stream's ceiling counts stream bytes: on a 1500-byte path
    /// 1416 of each 1518 bytes on the line (quinn's 1452-byte datagrams), on
    /// a 1280-byte one what the MTU holds; the lab's 100 Mbit/s link with GSO
    /// off carried 93.45 Mbit/s of stream bytes, 100.2% of it.
    #[test]
    fn a_quic_ceiling_counts_stream_bytes() {
        assert!((quic_share(1500) - 1416.0 / 1518.0).abs() < 1e-12);
        assert!((quic_share(9000) - 1416.0 / 1518.0).abs() < 1e-12);
        let small = 1280 - 28;
        assert!((quic_share(1280) - (small - 36) as f64 / (small + 66) as f64).abs() < 1e-12);
        assert_eq!(quic_share(60), 0.0);
        let ceiling = 100e6 * quic_share(1500);
        assert!((93.45e6 / ceiling - 1.0).abs() < 0.005, "{ceiling}");
    }

    /// An MPTCP segment carries 28 bytes of DSS beside the timestamps: 1420
    /// bytes of data in a 1500-byte packet, and a segment of 1413 (a lab
    /// test's mean) in 1531 bytes on the line.
    #[test]
    fn an_mptcp_ceiling_counts_its_dss_option() {
        assert!((mptcp_share(1500, None) - 1420.0 / 1538.0).abs() < 1e-12);
        assert!((mptcp_share(1500, Some(1413)) - 1413.0 / 1531.0).abs() < 1e-12);
        assert!((mptcp_share(1500, Some(9000)) - 1420.0 / 1538.0).abs() < 1e-12);
        assert!(mptcp_share(1500, None) < tcp_share(1500, TCP_TS, None));
        assert_eq!(mptcp_share(80, None), 0.0);
    }

    #[test]
    fn payload_per_frame_at_1500() {
        assert_eq!(payload_per_frame(1500, TCP_TS), 1448);
        assert_eq!(payload_per_frame(1500, L4::Tcp { timestamps: false }), 1460);
        assert_eq!(payload_per_frame(1500, L4::Udp), 1472);
        assert_eq!(payload_per_frame(9000, TCP_TS), 8948);
        assert_eq!(payload_per_frame(40, TCP_TS), 0);
    }

    #[test]
    fn payload_shares() {
        assert_eq!(payload_share(1500, TCP_TS), 1448.0 / 1538.0);
        assert_eq!(payload_share(1500, L4::Udp), 1472.0 / 1538.0);
        assert_eq!(payload_share(9000, TCP_TS), 8948.0 / 9038.0);
    }

    #[test]
    fn ten_gig_at_1500_is_9_415_gbit() {
        let g = theoretical_goodput(10e9, 1500, TCP_TS);
        // 10e9 * 1448 / 1538 = 9_414_824_447.3...
        assert!((g - 9_414_824_447.334).abs() < 1.0, "{g}");
        assert_eq!((g / 1e6).round(), 9415.0);
        let e = efficiency(9.0e9, 10e9, 1500, TCP_TS);
        assert!((e - 9.0e9 / g).abs() < 1e-12);
        assert!((e - 0.95594).abs() < 1e-4, "{e}");
        assert_eq!(efficiency(1e9, 10e9, 40, TCP_TS), 0.0);
    }

    #[test]
    fn a_clamped_segment_pays_its_headers_per_frame() {
        // -M 200 with timestamps: 188 B of payload in 188 + 52 + 38 B on the wire.
        let s = tcp_share(1500, TCP_TS, Some(188));
        assert!((s - 188.0 / 278.0).abs() < 1e-12, "{s}");
        // A segment larger than the MTU holds is the MTU's.
        assert_eq!(
            tcp_share(1500, TCP_TS, Some(65_000)),
            payload_share(1500, TCP_TS)
        );
        assert_eq!(tcp_share(1500, TCP_TS, None), payload_share(1500, TCP_TS));
    }

    #[test]
    fn udp_datagrams_pay_per_frame_and_per_fragment() {
        assert_eq!(udp_share(1500, 1472), 1472.0 / 1538.0);
        // 64 B datagrams: 64 of 64 + 8 + 20 + 38 on the wire.
        assert_eq!(udp_share(1500, 64), 64.0 / 130.0);
        // 4 KiB over MTU 1500: 4104 B in three fragments of at most 1480.
        assert_eq!(udp_share(1500, 4096), 4096.0 / (4104.0 + 3.0 * 58.0));
        assert_eq!(udp_share(20, 100), 0.0);
    }

    #[test]
    fn bdp_of_a_long_fat_path() {
        // 1 Gbit/s × 228 ms = 125 MB/s × 0.228 s = 28.5 MB.
        let b = bdp_bytes(1e9, 228e6);
        assert!((b - 28.5e6).abs() < 1e-6, "{b}");
    }

    #[test]
    fn l4_serializes_with_a_kind_tag() {
        let json = serde_json::to_string(&TCP_TS).unwrap();
        assert_eq!(json, r#"{"kind":"tcp","timestamps":true}"#);
        let back: L4 = serde_json::from_str(r#"{"kind":"udp"}"#).unwrap();
        assert_eq!(back, L4::Udp);
    }
}
