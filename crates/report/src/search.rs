//! A loss-free rate search's results (`netsonde search`): one row per frame size
//! and strategy from the stored run's analysed view, the tables it prints, and
//! the `--json` document (`docs/JSON.md`).

use std::fmt::Write;

use netsonde_model::search::{frame_of, Bounds, Goal, SearchOutcome, Trial, WIRE_GAP};
use netsonde_model::units::{Nanos, PacketRate};
use serde::Serialize;

use crate::view::{RunView, SearchMeta};

/// One frame size and strategy's result.
#[derive(Debug, Serialize)]
pub struct SearchRow {
    /// The run's point it is.
    pub point: u32,
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
    crate::layout::bit_rate(pps * f64::from(frame + WIRE_GAP) * 8.0)
}

/// Where the packets at the upper bound were lost, in a few words
/// ([`LOST_WHERE`] says what each means).
pub(crate) fn where_lost(o: &SearchOutcome, tcp: bool, link_pps: Option<f64>) -> String {
    if o.sender_bound {
        // A shaped link's qdisc on the sending host holds an unpaced sender to
        // the link's rate instead of dropping.
        if let (Some(n), Some(l)) = (o.ndr.lower, link_pps) {
            if n >= 0.98 * l {
                return "link's qdisc".into();
            }
        }
        return "none: the sender".into();
    }
    if tcp {
        // A retransmission says a segment (or its ACK) was lost or late, not
        // where.
        return "path: retransmits".into();
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
        "receiver socket".into()
    } else if ring * 10 >= lost * 9 {
        "AF_XDP rings".into()
    } else if snd * 10 >= lost * 9 {
        // The kernel counts a datagram a qdisc or device queue dropped on the
        // sending host as a send-buffer error too.
        "sending host".into()
    } else {
        format!(
            "path ({:.0}% unseen)",
            100.0 * (lost.saturating_sub(rcv + snd + ring)) as f64 / lost as f64
        )
    }
}

/// What [`where_lost`]'s words mean (a path's share is any number).
const LOST_WHERE: [(&str, &str); 7] = [
    (
        "receiver socket",
        "its receive buffer overflowed (RcvbufErrors)",
    ),
    ("AF_XDP rings", "the receiver's rings were full"),
    (
        "sending host",
        "a socket or queue there dropped (SndbufErrors)",
    ),
    (
        "path (",
        "that share of the loss is in no host's UDP counters",
    ),
    ("none: the sender", "nothing was lost even unpaced"),
    (
        "link's qdisc",
        "a shaped link held the unpaced sender to its rate",
    ),
    (
        "path: retransmits",
        "TCP resent segments, which does not say where",
    ),
];

/// The note on the words in the table's last column, those used only.
fn lost_where_note(used: &[String]) -> Option<String> {
    let said: Vec<String> = LOST_WHERE
        .iter()
        .filter(|(w, _)| used.iter().any(|u| u.starts_with(w)))
        .map(|(w, m)| format!("{}: {m}", w.trim_end_matches(" (")))
        .collect();
    (!said.is_empty()).then(|| format!("lost where: {}", said.join("; ")))
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
                point: p.idx,
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

/// A search's rows as text, fitted to `width` columns: its settings in a line;
/// per frame size and strategy (each row its point's number) NDR, in
/// datagrams (segments) per second and on the wire, PDR, the share of the lab
/// link's frame rate where there is one, and where the loss was; then bursts
/// and repeated searches where measured, and what the figures mean.
pub fn text(meta: &SearchMeta, run: i64, rows: &[SearchRow], width: usize) -> String {
    let mut s = String::new();
    let cfg = &meta.config;
    let _ = writeln!(
        s,
        "loss-free rate (RFC 2544 throughput), {}; trials of {} after {} warm-up; \
         precision {:.2}%, PDR at {:.2}% loss, NDR confirmed by {} trial(s)",
        if meta.tcp {
            "one TCP connection over IPv4, a segment per message; loss: retransmitted \
             segments over the connection, warm-up included"
        } else {
            "UDP over IPv4"
        },
        meta.trial,
        meta.warmup,
        100.0 * cfg.precision,
        100.0 * cfg.loss_ratio,
        cfg.final_trials
    );
    let s = crate::layout::wrapped(&s, width, "");
    let mut s = s;
    let link = meta.link_bps.is_some();
    let mut table = vec![{
        let mut h = vec!["#", "frame", "io", "NDR", "on the wire", "PDR"];
        if link {
            h.push("NDR/link");
        }
        h.extend(["trials", "lost where"]);
        h.into_iter().map(String::from).collect::<Vec<_>>()
    }];
    for r in rows {
        let o = &r.outcome;
        let rate = |b: &Bounds| b.lower.map_or("none".into(), |v| PacketRate(v).to_string());
        let mut cells = vec![
            r.point.to_string(),
            format!("{} B", r.frame),
            r.label(),
            // Not converged: marked, and explained under the table.
            format!("{}{}", rate(&o.ndr), if o.converged { "" } else { "?" }),
            o.ndr.lower.map_or("-".into(), |v| wire(v, r.frame)),
            rate(&o.pdr),
        ];
        if link {
            // Above the link's rate: marked here, explained in the notes.
            cells.push(match (o.ndr.lower, r.link_pps) {
                (Some(n), Some(l)) => {
                    let mark = if n > l { "*" } else { "" };
                    format!("{:.1}%{mark}", 100.0 * n / l)
                }
                _ => "-".into(),
            });
        }
        cells.push(
            o.searches()
                .map(|x| x.trials.len())
                .sum::<usize>()
                .to_string(),
        );
        cells.push(where_lost(o, meta.tcp, r.link_pps));
        table.push(cells);
    }
    let (text, cut) = crate::layout::columns_cut(&table, &[2], 10, width);
    if cut {
        // Where each point lost, whole, under a table without it: a cell
        // would cut it.
        let short: Vec<Vec<String>> = table.iter().map(|r| r[..r.len() - 1].to_vec()).collect();
        s.push_str(&crate::layout::columns(&short, &[2], width));
        for (r, cells) in rows.iter().zip(&table[1..]) {
            let lost = cells.last().map(String::as_str).unwrap_or("");
            s.push_str(&crate::layout::wrapped(
                lost,
                width,
                &format!("  point {} lost: ", r.point),
            ));
        }
    } else {
        s.push_str(&text);
    }
    back_to_back(&mut s, rows);
    repeated(&mut s, rows);
    if rows.iter().any(|r| !r.outcome.latency.is_empty()) {
        let _ = writeln!(
            s,
            "latency at rate (RFC 2544 §26.2): in the report, or `netsonde runs show {run} --full`"
        );
    }
    for n in notes(meta.trial, meta.tcp, meta.link_bps, rows) {
        s.push_str(&crate::layout::wrapped(&n, width, "- "));
    }
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

/// What the columns mean, and the caveats that apply, a line each.
fn notes(trial: Nanos, tcp: bool, link_bps: Option<f64>, rows: &[SearchRow]) -> Vec<String> {
    let mut n = vec![
        "NDR/PDR: offered packets per second as the sender sent them; on the wire: that \
         rate of Ethernet frames with preamble and gap (frame + 20 B)"
            .to_string(),
    ];
    let used: Vec<String> = rows
        .iter()
        .map(|r| where_lost(&r.outcome, tcp, r.link_pps))
        .collect();
    n.extend(lost_where_note(&used));
    if rows.iter().any(|r| !r.outcome.converged) {
        n.push(
            "?: not converged, the trial budget (--max-trials) was spent before the bounds \
             came within the precision: the NDR shown is the highest that passed"
                .into(),
        );
    }
    if link_bps.is_some() {
        n.push(
            "NDR/link: NDR's share of the lab link's frame rate at each size (its rate over \
             frame + 20 B), which no loss-free rate can pass"
                .into(),
        );
        if rows
            .iter()
            .any(|r| matches!((r.outcome.ndr.lower, r.link_pps), (Some(n), Some(l)) if n > l))
        {
            n.push(format!(
                "*: an NDR above the link's rate passed because the link's queue and its \
                 shaper's burst absorbed the excess within one trial of {trial}: the longer \
                 the trials (--trial), the less they can hide"
            ));
        }
    }
    if rows
        .iter()
        .any(|r| !tcp && matches!(r.tx_io.as_str(), "batch" | "auto"))
    {
        n.push(
            "batch (and auto, which may pick it) sends UDP GSO: the kernel cuts a super-packet \
             into frames only where a device needs them; across loopback or a veth pair it \
             stays whole (unless an XDP program there needs frames), so its rates count \
             datagrams, not frames that crossed a wire"
                .into(),
        );
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use netsonde_model::search::SearchConfig;

    fn meta(warmup: Nanos, link_bps: Option<f64>) -> SearchMeta {
        SearchMeta {
            config: SearchConfig::default(),
            trial: Nanos::from_secs(1),
            warmup,
            tcp: false,
            link_bps,
        }
    }

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
            point: 0,
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
        let t = text(&meta(Nanos::from_millis(250), Some(100e6)), 1, &rows, 120);
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
        let t = text(&meta(Nanos::from_millis(250), Some(100e6)), 1, &rows, 120);
        let line = t.lines().find(|l| l.contains("xdp (tx batch)")).unwrap();
        assert!(
            line.contains("8.0 kpps") && line.contains("98.4%"),
            "{line}"
        );
        assert!(line.contains("AF_XDP rings"), "{line}");
        assert!(
            t.contains("NDR/link: NDR's share of the lab link's frame rate"),
            "{t}"
        );
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
        let t = text(&meta(Nanos::ZERO, Some(100e6)), 1, &above, 120);
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
        let t = text(&meta(Nanos::ZERO, None), 1, &plain, 120);
        assert!(!t.contains("link's") && !t.contains("NDR/link"), "{t}");
        let doc = serde_json::to_value(&plain).unwrap();
        assert_eq!(doc[0]["io"], "copy");
        assert!(doc[0].get("link_pps").is_none(), "{doc}");
    }
}
