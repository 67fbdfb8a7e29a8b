//! What a netsonde server sends an iperf3 client that asked for
//! `--get-server-output`: this end's view of the test in iperf3's own shapes, so
//! scripts that read `iperf3 -s`'s output read ours.
//!
//! The iperf3 client does not tell the server whether it runs with `-J`, so,
//! as `iperf3 -s` does, the server's own output mode decides: [`text`] (iperf3's
//! report lines) by default, [`json`] (iperf3's document, with netsonde's record
//! of this end under `netsonde`) when the server logs JSON (`--log-format json`,
//! as `iperf3 -s -J`).
//!
//! Intervals are this end's own, one a second, summed over the streams of a
//! direction (a `[SUM]` line when there are several): the flows publish one
//! counter per direction to the control thread, not one per stream. A UDP
//! receiver's lines have the interval's jitter and lost/total too (its flows
//! publish their sequence accounting once per receive call). The JSON's totals
//! (`sum_sent`, `sum_received`) take the client's counts for what this end did
//! not see, which `iperf3 -s` leaves at 0: it is made once the client's results
//! came.

use netsonde_model::result::{FlowResult, IntervalRecord, Role, SideResult};
use netsonde_model::spec::FlowDir;
use netsonde_proto::iperf3::{Cookie, Results, COOKIE_LEN};

/// `v` as iperf3's adaptive units print it (`unit_snprintf` with `'a'`/`'A'`):
/// bytes in powers of 1024, bits in powers of 1000, with 3 significant digits.
pub fn unit(v: f64, bits: bool) -> String {
    let (base, what) = if bits {
        (1000.0, "bits")
    } else {
        (1024.0, "Bytes")
    };
    let mut x = if v.is_finite() { v.max(0.0) } else { 0.0 };
    let mut i = 0;
    while x >= base && i < 4 {
        x /= base;
        i += 1;
    }
    let prefix = ["", "K", "M", "G", "T"][i];
    let num = if x < 9.995 {
        format!("{x:4.2}")
    } else if x < 99.95 {
        format!("{x:4.1}")
    } else {
        format!("{x:4.0}")
    };
    format!("{num} {prefix}{what}")
}

fn header(udp_receiver: bool, tcp_sender: bool) -> String {
    let mut h = String::from("[ ID] Interval           Transfer     Bitrate");
    if udp_receiver {
        h.push_str("         Jitter    Lost/Total Datagrams");
    } else if tcp_sender {
        h.push_str("         Retr");
    }
    h.push('\n');
    h
}

fn line(label: &str, start: f64, end: f64, bytes: u64) -> String {
    let secs = end - start;
    let rate = if secs > 0.0 {
        bytes as f64 * 8.0 / secs
    } else {
        0.0
    };
    format!(
        "{label} {start:6.2}-{end:<6.2} sec  {}  {}/sec",
        unit(bytes as f64, false),
        unit(rate, true)
    )
}

fn role(f: &FlowResult) -> &'static str {
    match f.role {
        Role::Sender | Role::Requester => "sender",
        Role::Receiver | Role::Responder => "receiver",
    }
}

/// A UDP receiver's columns as iperf3 prints them: jitter, lost/total and the
/// share lost.
fn udp_columns(jitter: netsonde_model::units::Nanos, lost: u64, total: u64) -> String {
    let pct = if total > 0 {
        100.0 * lost as f64 / total as f64
    } else {
        0.0
    };
    format!(
        "  {:.3} ms  {lost}/{total} ({pct:.2}%)",
        jitter.0 as f64 / 1e6
    )
}

/// The stream's label: iperf3 numbers its streams from its socket; ours is the
/// stream id the client knows.
fn label(id: i64) -> String {
    format!("[{id:>3}]")
}

/// This end's report as `iperf3 -s` prints it: the connection, one line a second,
/// and per stream its total with its role (and, for a UDP receiver, jitter and
/// loss; for a TCP sender, retransmissions).
pub fn text(
    side: &SideResult,
    r: &Results,
    records: &[IntervalRecord],
    local: std::net::SocketAddr,
    peer: std::net::SocketAddr,
) -> String {
    let mut o = format!(
        "Accepted connection from {}, port {}\nnetsonde server (iperf3 protocol), local {} port {}\n",
        peer.ip(),
        peer.port(),
        local.ip(),
        local.port()
    );
    let udp = side.flows.iter().any(|f| f.udp.is_some());
    let receives = side.flows.iter().any(|f| f.role == Role::Receiver);
    let sends = side.flows.iter().any(|f| f.role == Role::Sender);
    let one = side.flows.len() == 1;
    let interval_label = match r.streams.first() {
        Some(s) if one => label(s.id),
        _ => "[SUM]".into(),
    };
    o.push_str(&header(records.iter().any(|r| r.udp.is_some()), false));
    for rec in records {
        let (s, e) = (rec.start.as_secs_f64(), rec.end.as_secs_f64());
        o.push_str(&line(&interval_label, s, e, rec.bytes.0));
        if let Some(u) = &rec.udp {
            o.push_str(&udp_columns(u.jitter, u.lost, u.packets));
        }
        o.push('\n');
    }
    o.push_str("- - - - - - - - - - - - - - - - - - - - - - - - -\n");
    o.push_str(&header(udp && receives, !udp && sends));
    for (f, s) in side.flows.iter().zip(&r.streams) {
        let secs = f.elapsed.as_secs_f64();
        let mut l = line(&label(s.id), 0.0, secs, f.bytes.0);
        match (&f.udp, f.role) {
            (Some(u), Role::Receiver) => {
                l.push_str(&udp_columns(u.jitter, u.lost, u.packets + u.lost));
            }
            (None, Role::Sender) if s.retransmits >= 0 => {
                l.push_str(&format!("  {:>4}", s.retransmits));
            }
            _ => {}
        }
        l.push_str(&format!("  {}\n", role(f)));
        o.push_str(&l);
    }
    if !one {
        let secs = side
            .flows
            .iter()
            .map(|f| f.elapsed.as_secs_f64())
            .fold(0.0, f64::max);
        let bytes = side.flows.iter().map(|f| f.bytes.0).sum();
        o.push_str(&line("[SUM]", 0.0, secs, bytes));
        o.push('\n');
    }
    o.push_str(&format!(
        "CPU utilization (this process, % of one core): {:.1}% ({:.1}% user, {:.1}% system)\n",
        r.cpu_util_total, r.cpu_util_user, r.cpu_util_system
    ));
    o
}

/// One stream's or a sum's figures over `[start, end]` as iperf3's JSON has them.
fn figures(start: f64, end: f64, bytes: u64, sender: bool) -> serde_json::Value {
    let secs = end - start;
    serde_json::json!({
        "start": start, "end": end, "seconds": secs, "bytes": bytes,
        "bits_per_second": if secs > 0.0 { bytes as f64 * 8.0 / secs } else { 0.0 },
        "omitted": false, "sender": sender,
    })
}

/// A UDP receiver's figures as iperf3's JSON has them.
fn udp_figures(
    v: &mut serde_json::Value,
    jitter: netsonde_model::units::Nanos,
    lost: u64,
    total: u64,
) {
    v["jitter_ms"] = (jitter.0 as f64 / 1e6).into();
    v["lost_packets"] = lost.into();
    v["packets"] = total.into();
    v["lost_percent"] = if total > 0 {
        100.0 * lost as f64 / total as f64
    } else {
        0.0
    }
    .into();
}

/// The totals of `flows` as iperf3's `end.sum_sent` and `end.sum_received`
/// have them: what the sender sent and the receiver received, each stream's
/// count from the end that sent or received it (this end's, or the client's
/// `theirs`), over the longest stream's time.
fn sums(
    flows: &[(&FlowResult, i64)],
    theirs: &Results,
    udp: bool,
) -> (serde_json::Value, serde_json::Value) {
    let peer = |id: i64| {
        theirs
            .streams
            .iter()
            .find(|s| s.id == id)
            .map_or(0, |s| s.bytes)
    };
    let (mut sent, mut received) = (0u64, 0u64);
    for (f, id) in flows {
        let (s, r) = match f.role {
            Role::Sender | Role::Requester => (f.bytes.0, peer(*id)),
            Role::Receiver | Role::Responder => (peer(*id), f.bytes.0),
        };
        sent += s;
        received += r;
    }
    let secs = flows
        .iter()
        .map(|(f, _)| f.elapsed.as_secs_f64())
        .fold(0.0, f64::max);
    let mut s = figures(0.0, secs, sent, true);
    let r = figures(0.0, secs, received, false);
    if !udp {
        let retr: i64 = theirs.streams.iter().map(|s| s.retransmits.max(0)).sum();
        s["retransmits"] = retr.into();
    }
    (s, r)
}

/// This end's report as `iperf3 -s -J` writes it: `start`, one interval a
/// second (`streams` when there is one stream, `sum` always), `end` with each
/// stream's totals under `sender`, `receiver` or `udp`, `sum_sent` and
/// `sum_received` (and `_bidir_reverse` for the server-to-client streams of
/// `--bidir`), the TCP congestion control of each end, and netsonde's full
/// record of this end under `netsonde`. Retransmissions are given for TCP
/// senders only, never as -1. `theirs` is what the client reported.
pub fn json(
    side: &SideResult,
    r: &Results,
    theirs: &Results,
    records: &[IntervalRecord],
    cookie: &Cookie,
) -> serde_json::Value {
    let sends = side.flows.iter().any(|f| f.role == Role::Sender);
    let one = side.flows.len() == 1;
    let intervals: Vec<_> = records
        .iter()
        .map(|rec| {
            let mut sum = figures(
                rec.start.as_secs_f64(),
                rec.end.as_secs_f64(),
                rec.bytes.0,
                sends,
            );
            if let Some(u) = &rec.udp {
                udp_figures(&mut sum, u.jitter, u.lost, u.packets);
            }
            let streams = match r.streams.first() {
                Some(s) if one => {
                    let mut v = sum.clone();
                    v["socket"] = s.id.into();
                    vec![v]
                }
                _ => Vec::new(),
            };
            serde_json::json!({ "streams": streams, "sum": sum })
        })
        .collect();
    let streams: Vec<_> = side
        .flows
        .iter()
        .zip(&r.streams)
        .map(|(f, s)| {
            let sender = f.role == Role::Sender;
            let mut v = figures(0.0, f.elapsed.as_secs_f64(), f.bytes.0, sender);
            v["socket"] = s.id.into();
            match &f.udp {
                Some(u) => {
                    udp_figures(&mut v, u.jitter, u.lost, u.packets + u.lost);
                    serde_json::json!({ "udp": v })
                }
                None if sender => {
                    if s.retransmits >= 0 {
                        v["retransmits"] = s.retransmits.into();
                    }
                    serde_json::json!({ "sender": v })
                }
                None => serde_json::json!({ "receiver": v }),
            }
        })
        .collect();
    let udp = side.flows.iter().any(|f| f.udp.is_some());
    let ids: Vec<(&FlowResult, i64)> = side
        .flows
        .iter()
        .zip(r.streams.iter().map(|s| s.id))
        .collect();
    let (up, down): (Vec<_>, Vec<_>) = ids.iter().partition(|(f, _)| f.dir == FlowDir::Up);
    // The client-to-server streams are iperf3's forward ones; with -R alone the
    // server-to-client streams are.
    let (forward, reverse) = if up.is_empty() {
        (down, Vec::new())
    } else {
        (up, down)
    };
    let mut end = serde_json::json!({
        "streams": streams,
        "cpu_utilization_percent": {
            "host_total": r.cpu_util_total,
            "host_user": r.cpu_util_user,
            "host_system": r.cpu_util_system,
        },
    });
    let (sent, received) = sums(&forward, theirs, udp);
    if udp {
        // `sum`: the receiving side's figures with its loss and jitter (this
        // end's receivers; with -R, the sending side's).
        let recv: Vec<_> = side
            .flows
            .iter()
            .filter_map(|f| Some((f, f.udp.as_ref()?)))
            .collect();
        let mut sum = if recv.is_empty() {
            sent.clone()
        } else {
            received.clone()
        };
        if !recv.is_empty() {
            let lost: u64 = recv.iter().map(|(_, u)| u.lost).sum();
            let total: u64 = recv.iter().map(|(_, u)| u.packets + u.lost).sum();
            let jitter = recv.iter().map(|(_, u)| u.jitter).max().unwrap_or_default();
            udp_figures(&mut sum, jitter, lost, total);
        }
        end["sum"] = sum;
    }
    end["sum_sent"] = sent;
    end["sum_received"] = received;
    if !reverse.is_empty() {
        let (s, r) = sums(&reverse, theirs, udp);
        end["sum_sent_bidir_reverse"] = s;
        end["sum_received_bidir_reverse"] = r;
    }
    if !udp {
        // The forward streams' sender and receiver: the client and this end,
        // or the other way round with -R.
        let ours = side.socket.as_ref().and_then(|s| s.congestion.clone());
        let client = theirs.congestion_used.clone();
        let we_send = forward.first().is_some_and(|(f, _)| f.role == Role::Sender);
        let (snd, rcv) = if we_send {
            (ours, client)
        } else {
            (client, ours)
        };
        end["sender_tcp_congestion"] = snd.into();
        end["receiver_tcp_congestion"] = rcv.into();
    }
    serde_json::json!({
        "start": {
            "version": format!("netsonde {}", env!("CARGO_PKG_VERSION")),
            "cookie": String::from_utf8_lossy(&cookie.0[..COOKIE_LEN - 1]),
        },
        "intervals": intervals,
        "end": end,
        "netsonde": side,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_iperf3s() {
        assert_eq!(unit(851_443_712.0, false), " 812 MBytes");
        assert_eq!(unit(6.81e9, true), "6.81 Gbits");
        assert_eq!(unit(12.5e9, true), "12.5 Gbits");
        assert_eq!(unit(131_072.0, false), " 128 KBytes");
        assert_eq!(unit(0.0, true), "0.00 bits");
        assert_eq!(unit(f64::NAN, false), "0.00 Bytes");
        assert_eq!(
            line("[  5]", 0.0, 1.0, 851_443_712),
            "[  5]   0.00-1.00   sec   812 MBytes  6.81 Gbits/sec"
        );
    }
}
