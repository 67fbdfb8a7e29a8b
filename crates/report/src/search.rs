//! A loss-free rate search's results (`netsonde search`): one row per frame size
//! and strategy from the stored run's analysed view, the tables it prints, and
//! the `--json` document (`docs/JSON.md`).

use std::fmt::Write;

use netsonde_model::search::{
    frame_of, Bounds, Goal, SearchConfig, SearchOutcome, Trial, WIRE_GAP,
};
use netsonde_model::units::{BitRate, Nanos, PacketRate};
use serde::Serialize;

use crate::view::RunView;

/// One frame size and strategy's result.
#[derive(Debug, Serialize)]
pub struct SearchRow {
    /// Ethernet frame bytes (MAC header and FCS included).
    pub frame: u32,
    /// The payload: UDP's, or a TCP segment's.
    pub payload: u32,
    /// The receiving strategy.
    pub io: String,
    /// The sending strategy.
    pub tx_io: String,
    /// The lab link's frame rate at this size (its rate over the frame plus
    /// preamble and gap, the slower direction's): the bound a loss-free rate
    /// cannot pass. Absent off the lab or on an unlimited link.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_pps: Option<f64>,
    /// What the search found.
    #[serde(flatten)]
    pub outcome: SearchOutcome,
}

impl SearchRow {
    /// The strategy as the tables show it: the receiver's, and the sender's when
    /// it differs (`xdp (tx batch)`).
    pub fn label(&self) -> String {
        if self.io == self.tx_io {
            self.io.clone()
        } else {
            format!("{} (tx {})", self.io, self.tx_io)
        }
    }
}

/// Bits per second on an Ethernet line for `pps` frames of `frame` bytes
/// (preamble and inter-frame gap included).
fn wire(pps: f64, frame: u32) -> String {
    BitRate(pps * f64::from(frame + WIRE_GAP) * 8.0).to_string()
}

/// Where the packets at the upper bound were lost.
fn where_lost(o: &SearchOutcome, tcp: bool, link_pps: Option<f64>) -> String {
    if o.sender_bound {
        // A shaped link's qdisc on the sending host holds an unpaced sender to
        // the link's rate instead of dropping.
        if let (Some(n), Some(l)) = (o.ndr.lower, link_pps) {
            if n >= 0.98 * l {
                return "link (nothing lost: its qdisc held the sender to its rate)".into();
            }
        }
        return "sender (nothing lost unpaced)".into();
    }
    if tcp {
        // A retransmission says a segment (or its ACK) was lost or late, not
        // where.
        return "path: retransmitted segments".into();
    }
    let lossy: Vec<&Trial> = o.trials.iter().filter(|t| t.lost > 0).collect();
    let (lost, rcv, snd, ring) = lossy.iter().fold((0, 0, 0, 0), |a, t| {
        (
            a.0 + t.lost,
            a.1 + t.rcvbuf_errors.unwrap_or(0),
            a.2 + t.sndbuf_errors.unwrap_or(0),
            a.3 + t.ring_drops.unwrap_or(0),
        )
    });
    if lost == 0 {
        "-".into()
    } else if rcv * 10 >= lost * 9 {
        "receiver (RcvbufErrors)".into()
    } else if ring * 10 >= lost * 9 {
        "receiver (AF_XDP rings)".into()
    } else if snd * 10 >= lost * 9 {
        // The kernel counts a datagram a qdisc or device queue dropped on the
        // sending host as a send-buffer error too.
        "sending host: socket or queue (SndbufErrors)".into()
    } else {
        format!(
            "path: {:.0}% not in the hosts' UDP counters",
            100.0 * (lost.saturating_sub(rcv + snd + ring)) as f64 / lost as f64
        )
    }
}

/// The searched points of `study`, one row each; `link_bps` is the lab link's
/// rate when the run had one (its frame rate per size is then each row's
/// bound).
pub fn rows(study: &RunView, link_bps: Option<f64>) -> Vec<SearchRow> {
    study
        .points
        .iter()
        .filter_map(|p| {
            let outcome = p.search.clone()?;
            let frame = frame_of(&p.spec) as u32;
            Some(SearchRow {
                frame,
                payload: p.spec.size.0 as u32,
                link_pps: link_bps.map(|b| b / (f64::from(frame + WIRE_GAP) * 8.0)),
                io: p.spec.rx_io.to_string(),
                tx_io: p.spec.tx_io.to_string(),
                outcome,
            })
        })
        .collect()
}

/// The `--json` document of run `run`'s rows.
pub fn json(
    run: i64,
    cfg: &SearchConfig,
    trial: Nanos,
    warmup: Nanos,
    rows: &[SearchRow],
) -> serde_json::Value {
    serde_json::json!({
        "schema_version": 1,
        "run": run,
        "config": cfg,
        "trial": trial,
        "warmup": warmup,
        "searches": rows,
    })
}

/// The tables a search prints: NDR and PDR per row, with the lab link's bound
/// where there is one and where the loss was; then back-to-back bursts,
/// repeated searches and latency at rate when measured; then what the columns
/// mean and the caveats that apply. `tcp`: a TCP search's rows.
pub fn text(
    cfg: &SearchConfig,
    trial: Nanos,
    warmup: Nanos,
    tcp: bool,
    link_bps: Option<f64>,
    rows: &[SearchRow],
) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\nloss-free rate (RFC 2544 throughput), {}; trials of {} after {} warm-up; \
         precision {:.2}%, PDR at {:.2}% loss, NDR confirmed by {} trial(s)",
        if tcp {
            "one TCP connection over IPv4, a segment per message; loss: retransmitted \
             segments over the connection, warm-up included"
        } else {
            "UDP over IPv4"
        },
        trial,
        warmup,
        100.0 * cfg.precision,
        100.0 * cfg.loss_ratio,
        cfg.final_trials
    );
    let w = rows
        .iter()
        .map(|r| r.label().len())
        .max()
        .unwrap_or(0)
        .max(8);
    // On a lab link: its frame rate per size, and NDR's share of it.
    let link = |r: &SearchRow| match r.link_pps {
        Some(l) => format!(
            " {:>13} {:>7}",
            PacketRate(l).to_string(),
            r.outcome
                .ndr
                .lower
                // Above the link's rate: marked here, explained in the notes.
                .map_or("-".into(), |n| {
                    let mark = if n > l { "*" } else { "" };
                    format!("{:.1}%{mark}", 100.0 * n / l)
                })
        ),
        None => String::new(),
    };
    let _ = writeln!(
        s,
        "{:>6} {:>7} {:<w$} {:>13} {:>16} {:>13} {:>16}{} {:>6}  lost where",
        "frame",
        "payload",
        "io",
        "NDR",
        "NDR on the wire",
        "PDR",
        "PDR on the wire",
        if link_bps.is_some() {
            format!(" {:>13} {:>7}", "link's rate", "NDR/it")
        } else {
            String::new()
        },
        "trials"
    );
    for r in rows {
        let o = &r.outcome;
        let show = |b: &Bounds| match b.lower {
            Some(v) => (PacketRate(v).to_string(), wire(v, r.frame)),
            None => ("none".into(), "-".into()),
        };
        let (n, nw) = show(&o.ndr);
        let (p, pw) = show(&o.pdr);
        let _ = writeln!(
            s,
            "{:>4} B {:>5} B {:<w$} {:>13} {:>16} {:>13} {:>16}{} {:>6}  {}{}",
            r.frame,
            r.payload,
            r.label(),
            n,
            nw,
            p,
            pw,
            link(r),
            o.trials.len(),
            where_lost(o, tcp, r.link_pps),
            if o.converged {
                ""
            } else {
                "  (not converged: trial budget spent)"
            }
        );
    }
    back_to_back(&mut s, rows);
    repeated(&mut s, rows);
    latency_at_rate(&mut s, rows);
    notes(&mut s, trial, tcp, link_bps, rows);
    s
}

/// Back-to-back bursts, where measured.
fn back_to_back(s: &mut String, rows: &[SearchRow]) {
    let bursts: Vec<_> = rows
        .iter()
        .filter_map(|r| Some((r, r.outcome.back_to_back.as_ref()?)))
        .collect();
    if !bursts.is_empty() {
        let _ = writeln!(
            s,
            "\nback-to-back (RFC 2544 §26.4): the longest burst at the sender's full rate that lost nothing"
        );
        for (r, b) in bursts {
            let line = match (b.lower, b.upper) {
                (Some(l), None) => {
                    format!("{l} datagrams or more: a whole trial at full rate lost nothing")
                }
                (Some(l), Some(u)) => format!("{l} datagrams (a burst of {u} lost)"),
                (None, Some(u)) => format!("none: even {u} datagram(s) lost"),
                (None, None) => "not measured".into(),
            };
            let _ = writeln!(
                s,
                "{:>4} B {:<8} {line}, {} bursts{}",
                r.frame,
                r.label(),
                b.trials.len(),
                if b.found { "" } else { " (not converged)" }
            );
        }
    }
}

/// Repeated searches: the median and range of their bounds.
fn repeated(s: &mut String, rows: &[SearchRow]) {
    let repeated: Vec<_> = rows
        .iter()
        .filter(|r| !r.outcome.repeats.is_empty())
        .collect();
    if !repeated.is_empty() {
        let _ = writeln!(
            s,
            "\nrepeated searches (--repeat): the table above is each point's first; the median \
             and range of the lower bounds over all of them"
        );
        for r in repeated {
            let o = &r.outcome;
            let spread = |goal| {
                let mut v = o.lower_bounds(goal);
                v.sort_by(f64::total_cmp);
                match (v.first(), v.last()) {
                    (Some(lo), Some(hi)) => format!(
                        "{} [{} – {}] over {}",
                        PacketRate(v[v.len() / 2]),
                        PacketRate(*lo),
                        PacketRate(*hi),
                        v.len()
                    ),
                    _ => "none found".into(),
                }
            };
            let _ = writeln!(
                s,
                "{:>4} B {:<8} NDR {}; PDR {}; {} searches",
                r.frame,
                r.label(),
                spread(Goal::Ndr),
                spread(Goal::Pdr),
                o.searches().count()
            );
        }
    }
}

/// Latency beside a load at shares of the NDR.
fn latency_at_rate(s: &mut String, rows: &[SearchRow]) {
    let latency: Vec<_> = rows
        .iter()
        .filter(|r| !r.outcome.latency.is_empty())
        .collect();
    if !latency.is_empty() {
        let _ = writeln!(
            s,
            "\nlatency at rate (RFC 2544 §26.2): UDP probes' round trip, idle and beside the load; \
             one-way: the median in the load's direction"
        );
        let _ = writeln!(
            s,
            "{:>6} {:<8} {:>6} {:>13} {:>7} {:>10} {:>10} {:>10} {:>10} {:>9} {:>9}",
            "frame",
            "io",
            "of NDR",
            "load",
            "lost",
            "idle p50",
            "p50",
            "p90",
            "p99",
            "one-way",
            "probes"
        );
        for r in latency {
            for l in &r.outcome.latency {
                let at = |p: Option<netsonde_model::units::Nanos>| {
                    p.map_or("-".to_string(), |v| v.to_string())
                };
                let (p50, p90, p99, n) = match &l.loaded {
                    Some(p) => (at(p.p50), at(p.p90), at(p.p99), p.answered.to_string()),
                    None => ("-".into(), "-".into(), "-".into(), "0".into()),
                };
                let _ = writeln!(
                    s,
                    "{:>4} B {:<8} {:>5.0}% {:>13} {:>6.3}% {:>10} {:>10} {:>10} {:>10} {:>9} {:>9}",
                    r.frame,
                    r.label(),
                    100.0 * l.fraction,
                    PacketRate(l.trial.offered_pps()).to_string(),
                    100.0 * l.trial.loss_ratio(),
                    at(l.idle.as_ref().and_then(|p| p.p50)),
                    p50,
                    p90,
                    p99,
                    l.one_way_ms
                        .map_or("-".to_string(), |ms| format!("{:.3} ms", ms)),
                    n
                );
            }
        }
    }
}

/// What the columns mean, and the caveats that apply.
fn notes(s: &mut String, trial: Nanos, tcp: bool, link_bps: Option<f64>, rows: &[SearchRow]) {
    let _ = writeln!(
        s,
        "NDR/PDR: offered packets per second as the sender sent them; on the wire: that \
         rate of Ethernet frames with preamble and gap (frame + 20 B)"
    );
    if link_bps.is_some() {
        let _ = writeln!(
            s,
            "link's rate: the lab link's frame rate at each size (its rate over frame + 20 B), \
             which no loss-free rate can pass; NDR/it: NDR's share of it"
        );
        if rows
            .iter()
            .any(|r| matches!((r.outcome.ndr.lower, r.link_pps), (Some(n), Some(l)) if n > l))
        {
            let _ = writeln!(
                s,
                "*: an NDR above the link's rate passed because the link's queue and its \
                 shaper's burst absorbed the excess within one trial of {trial}: the longer \
                 the trials (--trial), the less they can hide"
            );
        }
    }
    if rows
        .iter()
        .any(|r| !tcp && matches!(r.tx_io.as_str(), "batch" | "auto"))
    {
        let _ = writeln!(
            s,
            "batch (and auto, which may pick it) sends UDP GSO: the kernel cuts a super-packet \
             into frames only where a device needs them; across loopback or a veth pair it \
             stays whole (unless an XDP program there needs frames), so its rates count \
             datagrams, not frames that crossed a wire"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial(offered: f64, lost: u64, ring: Option<u64>) -> Trial {
        Trial {
            asked_pps: Some(offered),
            offered_pps: offered,
            sent: offered as u64,
            lost,
            rcvbuf_errors: Some(0),
            sndbuf_errors: Some(0),
            ring_drops: ring,
        }
    }

    fn row(io: &str, tx: &str, ndr: f64, trials: Vec<Trial>, link_pps: Option<f64>) -> SearchRow {
        let b = Bounds {
            lower: Some(ndr),
            upper: Some(ndr * 1.01),
            found: true,
        };
        SearchRow {
            frame: 1518,
            payload: 1472,
            io: io.into(),
            tx_io: tx.into(),
            link_pps,
            outcome: SearchOutcome {
                ndr: b,
                pdr: b,
                sender_bound: false,
                trials,
                converged: true,
                back_to_back: None,
                latency: Vec::new(),
                repeats: Vec::new(),
            },
        }
    }

    /// Issue 35: an NDR above the link's frame rate is marked in its own row,
    /// and the mark explained.
    #[test]
    fn an_ndr_above_the_links_rate_is_marked_in_its_row() {
        let link = 100e6 / (1538.0 * 8.0);
        let rows = [row("copy", "copy", link * 1.024, vec![], Some(link))];
        let t = text(
            &SearchConfig::default(),
            Nanos::from_secs(1),
            Nanos::from_millis(250),
            false,
            Some(100e6),
            &rows,
        );
        let line = t
            .lines()
            .find(|l| l.contains("102.4%"))
            .unwrap_or_else(|| panic!("{t}"));
        assert!(line.contains("102.4%*"), "{line}");
        assert!(t.contains("*: an NDR above the link's rate passed"), "{t}");
    }

    #[test]
    fn a_lab_link_shows_its_frame_rate_and_loss_at_the_af_xdp_rings_is_the_receivers() {
        let link = 100e6 / (1538.0 * 8.0);
        let rows = [row(
            "xdp",
            "batch",
            8000.0,
            vec![trial(8000.0, 0, Some(0)), trial(9000.0, 900, Some(900))],
            Some(link),
        )];
        let t = text(
            &SearchConfig::default(),
            Nanos::from_secs(1),
            Nanos::from_millis(250),
            false,
            Some(100e6),
            &rows,
        );
        let line = t.lines().find(|l| l.contains("xdp (tx batch)")).unwrap();
        assert!(
            line.contains("8.1 kpps") && line.contains("98.4%"),
            "{line}"
        );
        assert!(line.contains("receiver (AF_XDP rings)"), "{line}");
        assert!(t.contains("link's rate: the lab link's frame rate"), "{t}");
        // A GSO sender's rates are datagrams', said under the table.
        assert!(
            t.contains("batch (and auto, which may pick it) sends UDP GSO"),
            "{t}"
        );
        assert!(!t.contains("an NDR above the link's rate"), "{t}");
    }

    #[test]
    fn an_ndr_above_the_links_rate_is_explained_and_no_link_means_no_columns() {
        let link = 100e6 / (1538.0 * 8.0);
        let above = [row(
            "copy",
            "copy",
            link * 1.007,
            vec![trial(8200.0, 0, None)],
            Some(link),
        )];
        let t = text(
            &SearchConfig::default(),
            Nanos::from_secs(1),
            Nanos::ZERO,
            false,
            Some(100e6),
            &above,
        );
        assert!(t.contains("100.7%"), "{t}");
        assert!(t.contains("an NDR above the link's rate passed"), "{t}");
        assert!(!t.contains("sends UDP GSO"), "{t}");
        let plain = [row(
            "copy",
            "copy",
            8000.0,
            vec![trial(8000.0, 0, None)],
            None,
        )];
        let t = text(
            &SearchConfig::default(),
            Nanos::from_secs(1),
            Nanos::ZERO,
            false,
            None,
            &plain,
        );
        assert!(!t.contains("link's rate") && !t.contains("NDR/it"), "{t}");
        let doc = json(
            7,
            &SearchConfig::default(),
            Nanos::ZERO,
            Nanos::ZERO,
            &plain,
        );
        assert_eq!(doc["searches"][0]["io"], "copy");
        assert!(doc["searches"][0].get("link_pps").is_none(), "{doc}");
    }
}
