//! `netsonde search`: wires the loss-free rate search
//! ([`netsonde_sweep::search`]) to the real client, and prints what it found.

use std::io::Write;

use anyhow::Context;
use netsonde_model::spec::{TestKind, TestSpec};
use netsonde_model::units::Bytes;
use netsonde_sweep::search::{self, SearchConfig, SearchOutcome, Trial, FRAME_OVERHEAD, WIRE_GAP};
use serde::Serialize;

use crate::args::{SearchArgs, UsageError};

/// One frame size and strategy's result.
#[derive(Debug, Serialize)]
struct Row {
    frame: u32,
    payload: u32,
    io: String,
    #[serde(flatten)]
    outcome: SearchOutcome,
}

fn kpps(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.3} Mpps", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1} kpps", v / 1e3)
    } else {
        format!("{v:.0} pps")
    }
}

/// Bits per second on an Ethernet line for `pps` frames of `frame` bytes
/// (preamble and inter-frame gap included).
fn wire(pps: f64, frame: u32) -> String {
    netsonde_model::units::BitRate(pps * f64::from(frame + WIRE_GAP) * 8.0).to_string()
}

fn trial_line(frame: u32, io: &str, n: usize, t: &Trial) -> String {
    let asked = t.asked_pps.map_or("unpaced".to_string(), kpps);
    format!(
        "  {frame:>5} B {io:<8} trial {n:>2}: asked {asked:<12} offered {:<12} lost {:>7.3}% \
         (kernel: {} at full receive buffers, {} at the sender's buffers or queues)",
        kpps(t.offered_pps()),
        100.0 * t.loss_ratio(),
        t.rcvbuf_errors,
        t.sndbuf_errors
    )
}

/// Where the packets at the upper bound were lost.
fn where_lost(o: &SearchOutcome) -> String {
    if o.sender_bound {
        return "sender (nothing lost unpaced)".into();
    }
    let lossy: Vec<&Trial> = o.trials.iter().filter(|t| t.lost > 0).collect();
    let (lost, rcv, snd) = lossy.iter().fold((0, 0, 0), |a, t| {
        (a.0 + t.lost, a.1 + t.rcvbuf_errors, a.2 + t.sndbuf_errors)
    });
    if lost == 0 {
        "-".into()
    } else if rcv * 10 >= lost * 9 {
        "receiver (RcvbufErrors)".into()
    } else if snd * 10 >= lost * 9 {
        // The kernel counts a datagram a qdisc or device queue dropped on the
        // sending host as a send-buffer error too.
        "sending host: socket or queue (SndbufErrors)".into()
    } else {
        format!(
            "path: {:.0}% not in the hosts' UDP counters",
            100.0 * (lost.saturating_sub(rcv + snd)) as f64 / lost as f64
        )
    }
}

pub(crate) fn run(a: &SearchArgs) -> anyhow::Result<bool> {
    if a.frames.is_empty() || a.io.is_empty() {
        return Err(UsageError("nothing to search: give --frames and --io".into()).into());
    }
    for &f in &a.frames {
        // The datagram carries a 16-byte sequence number and send time.
        if !(FRAME_OVERHEAD + 16..=65_535).contains(&f) {
            return Err(UsageError(format!(
                "frame size {f} B: between {} and 65535 B (the UDP payload is the frame less {FRAME_OVERHEAD} B and carries a 16-byte header)",
                FRAME_OVERHEAD + 16
            ))
            .into());
        }
    }
    let cfg = SearchConfig {
        loss_ratio: a.pdr_loss,
        precision: a.precision.max(1e-4),
        final_trials: a.final_trials,
        max_trials: a.max_trials.max(1),
        ..SearchConfig::default()
    };
    let window = match a.window.trim() {
        "default" => None,
        w => Some(
            w.parse::<Bytes>()
                .map_err(|e| UsageError(format!("--window: {e}")))?,
        ),
    };
    let key = crate::keys::load_opt(a.auth_key.as_deref())?;
    let mut runner = crate::sweep::RealRunner::new(
        crate::default_host(a.host.clone()),
        a.port,
        key,
        Default::default(),
    )?;
    let searches = a.frames.len() * a.io.len();
    let per_trial = a.trial.as_secs_f64() + a.warmup.as_secs_f64() + 0.3;
    let expected = f64::from(cfg.expected_trials()) * per_trial * searches as f64;
    eprintln!(
        "search: {} frame size(s) x {} strategy(ies), about {} trials of {:.2} s each: about {:.0} s \
         (at most {:.0} s)",
        a.frames.len(),
        a.io.len(),
        cfg.expected_trials(),
        per_trial,
        expected,
        f64::from(cfg.max_trials) * per_trial * searches as f64
    );
    let mut rows = Vec::new();
    let mut out = std::io::stdout().lock();
    for &io in &a.io {
        for &frame in &a.frames {
            let payload = frame - FRAME_OVERHEAD;
            let mut spec = TestSpec::new(TestKind::UdpStream);
            spec.size = Bytes(u64::from(payload));
            spec.duration = a.trial;
            spec.warmup = a.warmup;
            spec.tx_io = io;
            spec.rx_io = io;
            spec.window = window;
            spec.validate().map_err(|e| UsageError(e.to_string()))?;
            let name = io.to_string();
            let mut n = 0;
            let text = !a.json;
            let outcome = search::run(&mut runner, &spec, cfg, &mut |t| {
                n += 1;
                if text {
                    let _ = writeln!(std::io::stderr(), "{}", trial_line(frame, &name, n, t));
                }
            })
            .map_err(|e| anyhow::anyhow!("{e}"))
            .with_context(|| format!("searching {frame} B frames with --io {io}"))?;
            rows.push(Row {
                frame,
                payload,
                io: name,
                outcome,
            });
        }
    }
    let converged = rows.iter().all(|r| r.outcome.converged);
    if a.json {
        let doc = serde_json::json!({
            "schema_version": 1,
            "config": cfg,
            "trial": a.trial,
            "warmup": a.warmup,
            "searches": rows,
        });
        writeln!(out, "{doc}").context("writing the result")?;
        return Ok(converged);
    }
    writeln!(
        out,
        "\nloss-free rate (RFC 2544 throughput), UDP over IPv4; trials of {} after {} warm-up; \
         precision {:.2}%, PDR at {:.2}% loss, NDR confirmed by {} trial(s)",
        a.trial,
        a.warmup,
        100.0 * cfg.precision,
        100.0 * cfg.loss_ratio,
        cfg.final_trials
    )?;
    writeln!(
        out,
        "{:>6} {:>7} {:<8} {:>13} {:>16} {:>13} {:>16} {:>6}  lost where",
        "frame", "payload", "io", "NDR", "NDR on the wire", "PDR", "PDR on the wire", "trials"
    )?;
    for r in &rows {
        let o = &r.outcome;
        let show = |b: &search::Bounds| match b.lower {
            Some(v) => (kpps(v), wire(v, r.frame)),
            None => ("none".into(), "-".into()),
        };
        let (n, nw) = show(&o.ndr);
        let (p, pw) = show(&o.pdr);
        writeln!(
            out,
            "{:>4} B {:>5} B {:<8} {:>13} {:>16} {:>13} {:>16} {:>6}  {}{}",
            r.frame,
            r.payload,
            r.io,
            n,
            nw,
            p,
            pw,
            o.trials.len(),
            where_lost(o),
            if o.converged {
                ""
            } else {
                "  (not converged: trial budget spent)"
            }
        )?;
    }
    writeln!(
        out,
        "NDR/PDR: offered packets per second as the sender sent them; on the wire: that \
         rate of Ethernet frames with preamble and gap (frame + 20 B)"
    )?;
    Ok(converged)
}
