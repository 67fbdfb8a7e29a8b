//! Kernel link shaping as `tc` argument lists (pure, so they are tested as text):
//! tbf or htb for a rate and a queue, netem for delay, jitter, loss, reordering and
//! duplication where the kernel has it.
//!
//! A rate counts what a real Ethernet line carries per frame: the IP packet, the
//! 14-byte MAC header (which a veth's `skb->len` already includes) and 24 bytes of
//! preamble, frame check sequence and inter-frame gap, given to the shaper as
//! `overhead 24`. So `--rate 1G` behaves like a 1 Gbit/s Ethernet line: TCP over
//! MTU 1500 reaches 1448/1538 of it, 941 Mbit/s.
//!
//! A shaper charges its overhead once per packet it queues, and a veth queues GSO
//! super-packets of up to 64 KiB. The headers of each frame in one are counted (the
//! kernel's `qdisc_pkt_len_init`), the 24 bytes are not: TCP at MTU 1500 would get
//! 1.56% more than the line carries. So tbf is given a peak-rate bucket of two
//! frames ([`PEAK_FACTOR`] times the rate, never the limit): a packet larger than
//! that bucket is split into its frames before it is queued (`tbf_segment`), and
//! each frame pays its overhead. That is exact, at a price of CPU per frame (about
//! one core for a 1 Gbit/s line at MTU 1500 on a small VM). htb cannot split, so it
//! stays cheap at 10 Gbit/s and charges per GSO packet: the link detail says so.

use netsonde_model::link::{DirLink, Loss, Queue, Shaper};

/// Bytes a veth's `skb->len` counts beyond the IP packet (the MAC header).
pub const MAC_HEADER: u64 = 14;
/// Bytes of a frame on the wire beyond the MAC header and IP packet: preamble and
/// SFD 8, FCS 4, inter-frame gap 12. Given to shapers as `overhead`.
pub const WIRE_EXTRA: u64 = 24;
/// Bytes the rate counts per packet beyond the IP packet.
pub const FRAME_OVERHEAD: u64 = MAC_HEADER + WIRE_EXTRA;

/// The queue a rate-limited direction gets when none is asked for: 50 ms at the
/// rate, and at least 100 full-size frames.
pub fn default_queue_bytes(d: &DirLink) -> u64 {
    let frame = u64::from(d.mtu) + FRAME_OVERHEAD;
    let at_rate = d.rate.map_or(0.0, |r| r.bytes_per_sec() * 0.050) as u64;
    at_rate.max(100 * frame)
}

/// The queue in bytes and, if it is counted in packets, the packet limit.
pub fn queue_limits(d: &DirLink) -> (u64, Option<u32>) {
    match d.queue {
        None => (default_queue_bytes(d), None),
        Some(Queue::Bytes(b)) => (b, None),
        Some(Queue::Packets(p)) => (u64::from(p) * (u64::from(d.mtu) + FRAME_OVERHEAD), Some(p)),
        // At the rate (a time queue without one is refused when the link is
        // validated), and at least one full frame.
        Some(Queue::Time(t)) => {
            let frame = u64::from(d.mtu) + FRAME_OVERHEAD;
            let at_rate = d.rate.map_or(0.0, |r| r.bytes_per_sec() * t.as_secs_f64()) as u64;
            (at_rate.max(frame), None)
        }
    }
}

/// The token bucket's depth: 10 ms at the rate, and at least two full frames. A
/// shallower bucket loses capacity whenever the qdisc's timer fires late (a few
/// milliseconds under CPU load on a small VM): tokens beyond the depth are gone.
/// The price is that an idle link may send 10 ms worth at once.
fn burst(d: &DirLink, rate_bps: f64) -> u64 {
    let frame = u64::from(d.mtu) + FRAME_OVERHEAD;
    ((rate_bps / 8.0 * 0.010) as u64).max(2 * frame)
}

/// What an htb link's detail says: it charges the frame overhead once per GSO
/// packet.
pub const HTB_CAVEAT: &str =
    "overhead charged once per GSO packet: TCP may exceed the line's payload share by up to 1.6%";

/// tbf's peak rate over its rate: high enough that the peak bucket never limits
/// (a frame's processing takes longer than its time at the peak rate), there only
/// for the largest packet tbf queues whole, which is the peak bucket.
pub const PEAK_FACTOR: f64 = 20.0;

/// tbf's peak bucket: two full frames as `skb->len` counts them (IP packet and MAC
/// header). A GSO packet larger than this is split into frames.
fn peak_bucket(d: &DirLink) -> u64 {
    2 * (u64::from(d.mtu) + MAC_HEADER)
}

fn s(v: impl ToString) -> String {
    v.to_string()
}

/// `tc` commands (after `tc -n NS`) that remove any root qdisc from `dev`; the
/// caller ignores "no qdisc" errors.
pub fn clear(dev: &str) -> Vec<String> {
    ["qdisc", "del", "dev", dev, "root"].map(s).to_vec()
}

/// `tc` commands that shape `dev` to `d.rate` with `shaper`; none without a rate.
pub fn shaper(dev: &str, d: &DirLink, shaper: Shaper) -> Vec<Vec<String>> {
    let Some(rate) = d.rate else {
        return Vec::new();
    };
    let bps = rate.bps().round() as u64;
    let (qbytes, qpkts) = queue_limits(d);
    let b = burst(d, rate.bps());
    let leaf = |parent: &str| -> Vec<String> {
        match qpkts {
            Some(p) => [
                "qdisc", "add", "dev", dev, "parent", parent, "handle", "10:", "pfifo", "limit",
            ]
            .map(s)
            .into_iter()
            .chain([s(p)])
            .collect(),
            None => [
                "qdisc", "add", "dev", dev, "parent", parent, "handle", "10:", "bfifo", "limit",
            ]
            .map(s)
            .into_iter()
            .chain([s(qbytes)])
            .collect(),
        }
    };
    match shaper {
        Shaper::Tbf => {
            let mut cmds = vec![[
                s("qdisc"),
                s("add"),
                s("dev"),
                s(dev),
                s("root"),
                s("handle"),
                s("1:"),
                s("tbf"),
                s("rate"),
                format!("{bps}bit"),
                s("burst"),
                s(b),
                s("limit"),
                // With a packet limit, the child pfifo decides; tbf's own byte limit
                // must not bite first.
                s(if qpkts.is_some() {
                    qbytes.max(b) * 4
                } else {
                    qbytes.max(b)
                }),
                s("overhead"),
                s(WIRE_EXTRA),
                s("peakrate"),
                format!("{}bit", (rate.bps() * PEAK_FACTOR).round() as u64),
                s("mtu"),
                s(peak_bucket(d)),
            ]
            .to_vec()];
            if qpkts.is_some() {
                cmds.push(leaf("1:1"));
            }
            cmds
        }
        Shaper::Htb => {
            let quantum = (u64::from(d.mtu) + MAC_HEADER).clamp(1600, 200_000);
            vec![
                [
                    "qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", "1",
                ]
                .map(s)
                .to_vec(),
                vec![
                    s("class"),
                    s("add"),
                    s("dev"),
                    s(dev),
                    s("parent"),
                    s("1:"),
                    s("classid"),
                    s("1:1"),
                    s("htb"),
                    s("rate"),
                    format!("{bps}bit"),
                    s("ceil"),
                    format!("{bps}bit"),
                    s("burst"),
                    s(b),
                    s("cburst"),
                    s(b),
                    s("overhead"),
                    s(WIRE_EXTRA),
                    s("quantum"),
                    s(quantum),
                    s("mtu"),
                    s(u64::from(d.mtu) + MAC_HEADER),
                ],
                leaf("1:1"),
            ]
        }
    }
}

/// The `tc` command that gives `dev` netem with `d`'s delay, jitter, loss,
/// reordering, duplication and rate (netem's own, with the same frame overhead).
/// netem's queue counts packets; a byte queue becomes the number of full-size
/// frames it holds.
pub fn netem(dev: &str, d: &DirLink) -> Vec<String> {
    let mut a: Vec<String> = ["qdisc", "add", "dev", dev, "root", "handle", "1:", "netem"]
        .map(s)
        .to_vec();
    let (qbytes, qpkts) = queue_limits(d);
    let limit = qpkts
        .map(u64::from)
        .unwrap_or_else(|| (qbytes / (u64::from(d.mtu) + FRAME_OVERHEAD)).max(1))
        .max(if d.rate.is_none() { 10_000 } else { 1 });
    a.extend([s("limit"), s(limit)]);
    if d.delay.0 > 0 || d.jitter.0 > 0 {
        a.extend([s("delay"), format!("{}us", d.delay.0 / 1000)]);
        if d.jitter.0 > 0 {
            a.push(format!("{}us", d.jitter.0 / 1000));
        }
    }
    match d.loss {
        Loss::None => {}
        Loss::Random { percent } => a.extend([s("loss"), s("random"), format!("{percent}%")]),
        Loss::GilbertElliott { p, r, bad, good } => a.extend([
            s("loss"),
            s("gemodel"),
            format!("{p}%"),
            format!("{r}%"),
            format!("{bad}%"),
            format!("{good}%"),
        ]),
    }
    if d.duplicate > 0.0 {
        a.extend([s("duplicate"), format!("{}%", d.duplicate)]);
    }
    if d.reorder > 0.0 {
        a.extend([s("reorder"), format!("{}%", d.reorder)]);
    }
    if let Some(r) = d.rate {
        a.extend([
            s("rate"),
            format!("{}bit", r.bps().round() as u64),
            s(WIRE_EXTRA),
        ]);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use netsonde_model::units::{BitRate, Nanos};

    fn line(v: &[String]) -> String {
        v.join(" ")
    }

    #[test]
    fn tbf_with_default_and_packet_queues() {
        let mut d = DirLink {
            rate: Some(BitRate(1e8)),
            ..DirLink::default()
        };
        let c = shaper("sonde0", &d, Shaper::Tbf);
        assert_eq!(c.len(), 1);
        // 50 ms at 100 Mbit/s is 625,000 B; the burst 10 ms, 125,000 B.
        assert_eq!(
            line(&c[0]),
            "qdisc add dev sonde0 root handle 1: tbf rate 100000000bit burst 125000 limit 625000 overhead 24 peakrate 2000000000bit mtu 3028"
        );
        d.queue = Some(Queue::Packets(20));
        let c = shaper("sonde0", &d, Shaper::Tbf);
        assert_eq!(
            line(&c[1]),
            "qdisc add dev sonde0 parent 1:1 handle 10: pfifo limit 20"
        );
        d.rate = None;
        assert!(shaper("sonde0", &d, Shaper::Tbf).is_empty());
    }

    #[test]
    fn htb_has_a_class_and_a_leaf() {
        let d = DirLink {
            rate: Some(BitRate(1e9)),
            mtu: 9000,
            queue: Some(Queue::Bytes(1 << 20)),
            ..DirLink::default()
        };
        let c = shaper("sonde0", &d, Shaper::Htb);
        assert_eq!(c.len(), 3);
        assert!(line(&c[1]).contains("rate 1000000000bit ceil 1000000000bit burst 1250000"));
        assert!(line(&c[1]).contains("overhead 24 quantum 9014 mtu 9014"));
        assert_eq!(
            line(&c[2]),
            "qdisc add dev sonde0 parent 1:1 handle 10: bfifo limit 1048576"
        );
    }

    #[test]
    fn netem_arguments() {
        let d = DirLink {
            delay: Nanos::from_millis(10),
            jitter: Nanos::from_millis(1),
            loss: Loss::GilbertElliott {
                p: 1.0,
                r: 25.0,
                bad: 100.0,
                good: 0.0,
            },
            reorder: 5.0,
            duplicate: 1.0,
            rate: Some(BitRate(2e8)),
            ..DirLink::default()
        };
        assert_eq!(
            line(&netem("sonde0", &d)),
            "qdisc add dev sonde0 root handle 1: netem limit 812 delay 10000us 1000us \
             loss gemodel 1% 25% 100% 0% duplicate 1% reorder 5% rate 200000000bit 24"
        );
        let d = DirLink {
            loss: Loss::Random { percent: 0.5 },
            ..DirLink::default()
        };
        assert_eq!(
            line(&netem("sonde0", &d)),
            "qdisc add dev sonde0 root handle 1: netem limit 10000 loss random 0.5%"
        );
    }
}
