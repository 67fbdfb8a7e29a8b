//! The RFC 6349 metrics of a TCP stream test ([`rfc6349`]): transfer time ratio,
//! TCP efficiency, buffer delay, and the path's bandwidth-delay product.
//!
//! - Baseline RTT: the least round trip the senders' connections measured
//!   (TCP_INFO `min_rtt`, which includes the handshake: taken before the load built
//!   a queue). RFC 6349 §3.2.1 asks for the RTT of the path when it is not
//!   congested.
//! - BDP: the path's rate × the baseline RTT (§3.2.1).
//! - Maximum achievable TCP throughput: the rate less Ethernet (preamble, header,
//!   FCS, gap), IP and TCP (with timestamps) overhead at the MTU (§3.3.1).
//! - TCP transfer time ratio: the actual transfer time over the ideal one for the
//!   same bytes, `ideal / goodput` (§3.3.1).
//! - TCP efficiency: `(bytes sent − bytes retransmitted) / bytes sent` (§3.3.2),
//!   from TCP_INFO's byte counters (Linux 4.19 and later).
//! - Buffer delay: `(mean RTT − baseline RTT) / baseline RTT` (§3.3.3), with the
//!   senders' smoothed RTT at the end of the transfer as the mean. Over a
//!   baseline below [`HOST_RTT`] (loopback, the lab without delay, one switch)
//!   the arithmetic is kept but flagged `host_queueing`: the added delay is the
//!   host's own queues, and a tiny base makes its percentage huge. Not where the
//!   lab shapes the link: its shaper's queue is a path buffer, whatever the
//!   baseline.
//! - Maximum achievable throughput uses the payload the segments carried on the
//!   wire (a clamped MSS pays its headers per segment; see
//!   [`crate::link::segment_payload`]).

use netsonde_model::result::{Rfc6349, TestReport, HOST_RTT};
use netsonde_model::units::{BitRate, Bytes, Nanos};

use crate::link::bdp_bytes;

/// The RFC 6349 metrics of a TCP stream test, or `None` (not TCP, not a stream, no
/// TCP_INFO). `line_rate_bps` is the path's rate as given; in the lab the link's
/// own rate stands in.
pub fn rfc6349(r: &TestReport, line_rate_bps: Option<f64>) -> Option<Rfc6349> {
    if !r.spec.test.is_tcp() || r.spec.test.is_rr() {
        return None;
    }
    let senders: Vec<_> = crate::link::tcp_senders(r)
        .into_iter()
        .map(|(_, t)| t)
        .collect();
    let baseline = senders
        .iter()
        .map(|t| t.min_rtt)
        .filter(|m| m.0 > 0)
        .min()?;
    let mean = Nanos(senders.iter().map(|t| t.srtt.0).sum::<u64>() / senders.len() as u64);
    let sent: u64 = senders.iter().map(|t| t.bytes_sent).sum();
    let retrans: u64 = senders.iter().map(|t| t.bytes_retrans).sum();
    let goodput: f64 = r.directions.iter().map(|d| d.goodput.bps()).sum();
    let (rate, ideal) = crate::link::path_ceiling(r, line_rate_bps);
    Some(Rfc6349 {
        baseline_rtt: baseline,
        mean_rtt: mean,
        buffer_delay_pct: 100.0 * (mean.0 as f64 - baseline.0 as f64) / baseline.0 as f64,
        tcp_efficiency_pct: (sent > 0)
            .then(|| 100.0 * sent.saturating_sub(retrans) as f64 / sent as f64),
        bdp: rate.map(|r| Bytes(bdp_bytes(r, baseline.0 as f64) as u64)),
        ideal: ideal.map(BitRate),
        transfer_time_ratio: ideal.filter(|_| goodput > 0.0).map(|i| i / goodput),
        // A link the lab shapes queues in its shaper, a path buffer, however
        // short the baseline: host queueing only where no such link is known.
        host_queueing: baseline < HOST_RTT && !(rate.is_some() && line_rate_bps.is_none()),
    })
}
