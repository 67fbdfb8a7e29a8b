//! `netsonde search`: a run whose points (frame size x strategy) are each
//! searched for their loss-free rate ([`netsonde_sweep::search`]) through the
//! sweep's pipeline, so every trial is stored and a search resumes; then prints
//! what it found from the store.

use std::io::Write;

use anyhow::Context;
use netsonde_model::spec::{Direction, TestKind, TestSpec};
use netsonde_model::units::{BitRate, Bytes, PacketRate};
use netsonde_sweep::search::{
    frame_of, Bounds, SearchConfig, SearchOutcome, Trial, FRAME_OVERHEAD, RFC2544_FRAMES,
    TCP_FRAME_OVERHEAD, WIRE_GAP,
};
use netsonde_sweep::Plan;
use serde::Serialize;

use crate::args::{SearchArgs, SearchTest, UsageError};

/// One frame size and strategy's result.
#[derive(Debug, Serialize)]
struct Row {
    frame: u32,
    payload: u32,
    /// The receiving strategy.
    io: String,
    /// The sending strategy.
    tx_io: String,
    /// The lab link's frame rate at this size (its rate over the frame plus
    /// preamble and gap, the slower direction's): the bound a loss-free rate
    /// cannot pass. Absent off the lab or on an unlimited link.
    #[serde(skip_serializing_if = "Option::is_none")]
    link_pps: Option<f64>,
    #[serde(flatten)]
    outcome: SearchOutcome,
}

impl Row {
    /// The strategy as the tables show it: the receiver's, and the sender's when
    /// it differs (`xdp (tx batch)`).
    fn label(&self) -> String {
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

/// The plan of a search: one point per frame size and strategy, each a UDP
/// stream of the frame's payload, or a TCP stream of one segment per message.
fn plan(a: &SearchArgs) -> anyhow::Result<Plan> {
    let tcp = a.test == SearchTest::Tcp;
    // A TCP segment's payload is the frame less 70 B: from 128 B frames on.
    let frames: Vec<u32> = match &a.frames {
        Some(f) => f.clone(),
        None => RFC2544_FRAMES
            .into_iter()
            .filter(|&f| !tcp || f >= 128)
            .collect(),
    };
    if frames.is_empty() || a.io.is_empty() {
        return Err(UsageError("nothing to search: give --frames and --io".into()).into());
    }
    let (overhead, least, what) = if tcp {
        (
            TCP_FRAME_OVERHEAD,
            128,
            "a TCP segment's payload is the frame less 70 B: from 128 B frames, a 58 B payload",
        )
    } else {
        // The datagram carries a 16-byte sequence number and send time.
        (
            FRAME_OVERHEAD,
            FRAME_OVERHEAD + 16,
            "the UDP payload is the frame less 46 B and carries a 16-byte header",
        )
    };
    let most = if tcp { 9_018 } else { 65_535 };
    for &f in &frames {
        if !(least..=most).contains(&f) {
            return Err(UsageError(format!(
                "frame size {f} B: between {least} and {most} B ({what})"
            ))
            .into());
        }
    }
    if tcp && a.back_to_back {
        return Err(UsageError(
            "--back-to-back is a UDP search's: a TCP sender's bursts are its congestion window's"
                .into(),
        )
        .into());
    }
    let window = match a.window.trim() {
        "default" => None,
        w => Some(
            w.parse::<Bytes>()
                .map_err(|e| UsageError(format!("--window: {e}")))?,
        ),
    };
    let test = if tcp {
        TestKind::TcpStream
    } else {
        TestKind::UdpStream
    };
    let mut base = TestSpec::new(test);
    base.duration = a.trial;
    base.warmup = a.warmup;
    base.window = window;
    // One segment per message, sent when written.
    base.nodelay = tcp;
    base.validate().map_err(|e| UsageError(e.to_string()))?;
    let mut plan = Plan::default_characterization();
    plan.base = base;
    plan.tests = vec![test];
    plan.directions = vec![Direction::Out];
    plan.sizes = frames
        .iter()
        .map(|&f| Bytes(u64::from(f - overhead)))
        .collect();
    plan.windows = vec![window];
    plan.parallel = vec![1];
    plan.io = a.io.clone();
    plan.tx_io = a.tx_io;
    plan.repeat = 1;
    Ok(plan)
}

pub(crate) fn run(a: SearchArgs) -> anyhow::Result<bool> {
    if a.common.peer != crate::args::PeerArg::Netsonde {
        return Err(UsageError(
            "search needs a netsonde server: it counts the datagrams sent in each trial's \
             measured time and the hosts' drop counters, which iperf3 does not report"
                .into(),
        )
        .into());
    }
    let plan = match a.resume {
        Some(_) => None,
        None => Some(plan(&a)?),
    };
    let cfg = SearchConfig {
        loss_ratio: a.pdr_loss,
        precision: a.precision.max(1e-4),
        final_trials: a.final_trials,
        max_trials: a.max_trials.max(1),
        back_to_back: a.back_to_back,
        latency: a.latency,
        searches: a.repeat,
        ..SearchConfig::default()
    };
    let db = a.common.store.db.clone();
    let json = a.json;
    let req = crate::sweep::SweepRequest {
        plan,
        host: crate::default_host(a.host),
        port: a.port,
        label: a.label,
        db: db.clone(),
        out: a.common.out,
        resume: a.resume,
        engine: a.common.engine,
        fake_delay: std::time::Duration::from_millis(a.common.fake_delay_ms),
        fake_scale: a.common.fake_scale,
        auth_key: a.common.auth_key,
        no_report: a.common.no_report,
        command: crate::command_line(),
        peer: a.common.peer.into(),
        stdout_is_data: a.json,
        search: Some(cfg),
    };
    let (run, end) = crate::sweep::sweep(req)?;
    let store = crate::runs::open_store(db.as_deref())?;
    let (stored, _) = netsonde_run::load(&store, run)?;
    let Some(cfg) = stored.search else {
        return Err(UsageError(format!(
            "run {run} is a sweep, not a search: resume it with `netsonde sweep --resume {run}`"
        ))
        .into());
    };
    let study = crate::runs::study(&store, run)?;
    let link_bps = store
        .run(run)?
        .link_json
        .and_then(|j| serde_json::from_str::<netsonde_model::link::LinkRecord>(&j).ok())
        .and_then(|l| l.rate_bps());
    let rows: Vec<Row> = study
        .points
        .iter()
        .filter_map(|p| {
            let outcome = p.search.clone()?;
            let payload = p.spec.size.0 as u32;
            let frame = frame_of(&p.spec) as u32;
            Some(Row {
                frame,
                payload,
                link_pps: link_bps.map(|b| b / (f64::from(frame + WIRE_GAP) * 8.0)),
                io: p.spec.rx_io.to_string(),
                tx_io: p.spec.tx_io.to_string(),
                outcome,
            })
        })
        .collect();
    let trial = stored.plan.base.duration;
    let warmup = stored.plan.base.warmup;
    let mut out = std::io::stdout().lock();
    let converged =
        end == crate::sweep::SweepEnd::Complete && rows.iter().all(|r| r.outcome.converged);
    if json {
        let doc = serde_json::json!({
            "schema_version": 1,
            "run": run,
            "config": cfg,
            "trial": trial,
            "warmup": warmup,
            "searches": rows,
        });
        writeln!(out, "{doc}").context("writing the result")?;
        return Ok(converged);
    }
    let tcp = stored.plan.base.test == TestKind::TcpStream;
    writeln!(
        out,
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
    )?;
    let w = rows
        .iter()
        .map(|r| r.label().len())
        .max()
        .unwrap_or(0)
        .max(8);
    // On a lab link: its frame rate per size, and NDR's share of it.
    let link = |r: &Row| match r.link_pps {
        Some(l) => format!(
            " {:>13} {:>7}",
            PacketRate(l).to_string(),
            r.outcome
                .ndr
                .lower
                .map_or("-".into(), |n| format!("{:.1}%", 100.0 * n / l))
        ),
        None => String::new(),
    };
    writeln!(
        out,
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
    )?;
    for r in &rows {
        let o = &r.outcome;
        let show = |b: &Bounds| match b.lower {
            Some(v) => (PacketRate(v).to_string(), wire(v, r.frame)),
            None => ("none".into(), "-".into()),
        };
        let (n, nw) = show(&o.ndr);
        let (p, pw) = show(&o.pdr);
        writeln!(
            out,
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
        )?;
    }
    let bursts: Vec<_> = rows
        .iter()
        .filter_map(|r| Some((r, r.outcome.back_to_back.as_ref()?)))
        .collect();
    if !bursts.is_empty() {
        writeln!(
            out,
            "\nback-to-back (RFC 2544 §26.4): the longest burst at the sender's full rate that lost nothing"
        )?;
        for (r, b) in bursts {
            let line = match (b.lower, b.upper) {
                (Some(l), None) => {
                    format!("{l} datagrams or more: a whole trial at full rate lost nothing")
                }
                (Some(l), Some(u)) => format!("{l} datagrams (a burst of {u} lost)"),
                (None, Some(u)) => format!("none: even {u} datagram(s) lost"),
                (None, None) => "not measured".into(),
            };
            writeln!(
                out,
                "{:>4} B {:<8} {line}, {} bursts{}",
                r.frame,
                r.label(),
                b.trials.len(),
                if b.found { "" } else { " (not converged)" }
            )?;
        }
    }
    let repeated: Vec<_> = rows
        .iter()
        .filter(|r| !r.outcome.repeats.is_empty())
        .collect();
    if !repeated.is_empty() {
        writeln!(
            out,
            "\nrepeated searches (--repeat): the table above is each point's first; the median \
             and range of the lower bounds over all of them"
        )?;
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
            writeln!(
                out,
                "{:>4} B {:<8} NDR {}; PDR {}; {} searches",
                r.frame,
                r.label(),
                spread(netsonde_model::search::Goal::Ndr),
                spread(netsonde_model::search::Goal::Pdr),
                o.searches().count()
            )?;
        }
    }
    let latency: Vec<_> = rows
        .iter()
        .filter(|r| !r.outcome.latency.is_empty())
        .collect();
    if !latency.is_empty() {
        writeln!(
            out,
            "\nlatency at rate (RFC 2544 §26.2): UDP probes' round trip, idle and beside the load; \
             one-way: the median in the load's direction"
        )?;
        writeln!(
            out,
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
        )?;
        for r in latency {
            for l in &r.outcome.latency {
                let at = |p: Option<netsonde_model::units::Nanos>| {
                    p.map_or("-".to_string(), |v| v.to_string())
                };
                let (p50, p90, p99, n) = match &l.loaded {
                    Some(p) => (at(p.p50), at(p.p90), at(p.p99), p.answered.to_string()),
                    None => ("-".into(), "-".into(), "-".into(), "0".into()),
                };
                writeln!(
                    out,
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
                )?;
            }
        }
    }
    writeln!(
        out,
        "NDR/PDR: offered packets per second as the sender sent them; on the wire: that \
         rate of Ethernet frames with preamble and gap (frame + 20 B)"
    )?;
    if link_bps.is_some() {
        writeln!(
            out,
            "link's rate: the lab link's frame rate at each size (its rate over frame + 20 B), \
             which no loss-free rate can pass; NDR/it: NDR's share of it"
        )?;
        if rows
            .iter()
            .any(|r| matches!((r.outcome.ndr.lower, r.link_pps), (Some(n), Some(l)) if n > l))
        {
            writeln!(
                out,
                "an NDR above the link's rate passed because the link's queue and its \
                 shaper's burst absorbed the excess within one trial of {trial}: the longer \
                 the trials (--trial), the less they can hide"
            )?;
        }
    }
    if rows
        .iter()
        .any(|r| !tcp && matches!(r.tx_io.as_str(), "batch" | "auto"))
    {
        writeln!(
            out,
            "batch (and auto, which may pick it) sends UDP GSO: the kernel cuts a super-packet \
             into frames only where a device needs them; across loopback or a veth pair it \
             stays whole (unless an XDP program there needs frames), so its rates count \
             datagrams, not frames that crossed a wire"
        )?;
    }
    Ok(converged)
}
