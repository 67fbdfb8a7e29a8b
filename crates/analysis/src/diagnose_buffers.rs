//! The window rules: the receiver's advertised window, the sender's socket
//! buffer, the two together (TCP_INFO's `rwnd_limited` and `sndbuf_limited`),
//! and goodput at the granted window over the round trip.
//!
//! TCP_INFO tells the two buffers apart only by which state the sender was in,
//! and a receiver advertises little more than what arrives: its window opens
//! as data comes, so a sender held by its own small buffer also finds the
//! receiver's window closed now and then (a busy host's CI run: 52%
//! `rwnd_limited` behind `-w 8K` with 4 MiB at the receiver). The granted
//! buffers decide it: a send buffer the user set at a quarter or less of the
//! receive buffer the receiver was granted is the tighter of the two.

use super::{bdp_advice, positive, rate, verdict, Bytes, Nanos, LIMITED_SHARE, NEAR};
use super::{Bottleneck, Diagnosis, DiagnosisInput, WINDOW_ABOVE, WINDOW_SHARE};

/// A receive buffer this many times the sender's or more is never the
/// tighter: the receiver's window, which opens as data arrives, could grow
/// past all the sender can hold.
pub const BUFFER_RATIO: f64 = 4.0;

/// The sender's buffer when the user set it and the receiver was granted
/// [`BUFFER_RATIO`] times as much: a verdict on the share of the sender's
/// busy time either buffer state held it, the receiver's window being only
/// what the sender's buffer let arrive.
fn behind_the_senders_buffer(d: &DiagnosisInput) -> Option<Diagnosis> {
    let (snd_buf, rcv_buf) = (
        positive(d.sender_buffer_bytes)?,
        positive(d.receiver_buffer_bytes)?,
    );
    if rcv_buf < BUFFER_RATIO * snd_buf {
        return None;
    }
    let snd = d.sndbuf_limited.filter(|s| s.is_finite()).unwrap_or(0.0);
    let rwnd = d.rwnd_limited.filter(|s| s.is_finite()).unwrap_or(0.0);
    Some(verdict(
        Bottleneck::SenderBuffer,
        format!(
            "the sender's socket buffer ({} granted) held it {:.0}% of its busy time: \
             {:.0}% at its own buffer (TCP_INFO sndbuf_limited) and {:.0}% at the \
             receiver's window (rwnd_limited), which opens only as data arrives: the \
             receiver was granted {}, {:.0}x the sender's buffer",
            Bytes(snd_buf as u64),
            100.0 * (snd + rwnd),
            100.0 * snd,
            100.0 * rwnd,
            Bytes(rcv_buf as u64),
            rcv_buf / snd_buf
        ),
        bdp_advice(
            d,
            "a larger send buffer: -w, or raise net.ipv4.tcp_wmem's maximum (and \
             net.core.wmem_max)",
        ),
    ))
}

pub(super) fn receiver_window(d: &DiagnosisInput, near: &mut Vec<String>) -> Option<Diagnosis> {
    let share = d.rwnd_limited.filter(|s| s.is_finite())?;
    if share >= LIMITED_SHARE {
        if let Some(v) = behind_the_senders_buffer(d) {
            return Some(v);
        }
        return Some(verdict(
            Bottleneck::ReceiverWindow,
            format!(
                "the receiver's advertised window held the sender {:.0}% of its busy time \
                 (TCP_INFO rwnd_limited)",
                100.0 * share
            ),
            bdp_advice(
                d,
                "a larger receive buffer: -w, or raise net.ipv4.tcp_rmem's maximum \
                 (and net.core.rmem_max)",
            ),
        ));
    }
    if share >= NEAR * LIMITED_SHARE {
        near.push(Bottleneck::ReceiverWindow.name());
    }
    None
}

pub(super) fn sender_buffer(d: &DiagnosisInput, near: &mut Vec<String>) -> Option<Diagnosis> {
    let share = d.sndbuf_limited.filter(|s| s.is_finite())?;
    if share >= LIMITED_SHARE {
        return Some(verdict(
            Bottleneck::SenderBuffer,
            format!(
                "the sender's socket buffer held it {:.0}% of its busy time (TCP_INFO \
                 sndbuf_limited)",
                100.0 * share
            ),
            bdp_advice(
                d,
                "a larger send buffer: -w, or raise net.ipv4.tcp_wmem's maximum (and \
                 net.core.wmem_max)",
            ),
        ));
    }
    if share >= NEAR * LIMITED_SHARE {
        near.push(Bottleneck::SenderBuffer.name());
    }
    None
}

/// The sender's buffer and the receiver's window together: TCP_INFO keeps
/// one of its limited states at a time, so `sndbuf_limited + rwnd_limited` is
/// the share of the sender's busy time a buffer held it. On a busy host the
/// two split it (a receiver advertises little more than what arrives, so a
/// small sender buffer also shows as the receiver's window), and neither
/// alone reaches its rule.
pub(super) fn buffers_together(d: &DiagnosisInput, near: &mut Vec<String>) -> Option<Diagnosis> {
    let snd = d.sndbuf_limited.filter(|s| s.is_finite())?;
    let rwnd = d.rwnd_limited.filter(|s| s.is_finite())?;
    // A candidate of its own only where neither alone is one.
    let alone = snd.max(rwnd) >= NEAR * LIMITED_SHARE;
    if !alone && (NEAR * LIMITED_SHARE..LIMITED_SHARE).contains(&(snd + rwnd)) {
        near.push(format!(
            "window (both buffers held the sender {:.0}%)",
            100.0 * (snd + rwnd)
        ));
    }
    if snd + rwnd < LIMITED_SHARE {
        return None;
    }
    behind_the_senders_buffer(d).or_else(|| {
        Some(verdict(
            Bottleneck::Window,
            format!(
                "the sender's socket buffer and the receiver's window together held the \
                 sender {:.0}% of its busy time (TCP_INFO sndbuf_limited {:.0}%, rwnd_limited \
                 {:.0}%): neither alone, and which end's buffer is the tighter TCP_INFO does \
                 not tell apart",
                100.0 * (snd + rwnd),
                100.0 * snd,
                100.0 * rwnd
            ),
            bdp_advice(d, "larger buffers at both ends: -w"),
        ))
    })
}

pub(super) fn window(d: &DiagnosisInput, near: &mut Vec<String>) -> Option<Diagnosis> {
    let (w, rtt) = (positive(d.window_bytes)?, positive(d.rtt_ns)?);
    let g = d.goodput_bps;
    let window_rate = w * 8.0 / (rtt * 1e-9);
    let share = g / window_rate;
    if (NEAR * WINDOW_SHARE..WINDOW_SHARE).contains(&share) {
        near.push(format!(
            "{} ({:.0}% of window/RTT = {})",
            Bottleneck::Window.name(),
            100.0 * share,
            rate(window_rate)
        ));
    }
    (WINDOW_SHARE..=WINDOW_ABOVE).contains(&share).then(|| {
        let source = if d.window_source.is_empty() {
            String::new()
        } else {
            format!(" ({})", d.window_source)
        };
        let evidence = format!(
            "goodput {} is {:.0}% of window/RTT = {}{source} / {} = {}",
            rate(g),
            100.0 * share.min(1.0),
            Bytes(w as u64),
            Nanos(rtt as u64),
            rate(window_rate)
        );
        // Which buffer held the window, as TCP_INFO tells the two apart: a
        // receiver that is never asked for more advertises little more than
        // what arrives, so the advertised window alone cannot say.
        let (snd, rwnd) = (
            d.sndbuf_limited.unwrap_or(0.0),
            d.rwnd_limited.unwrap_or(0.0),
        );
        if snd > rwnd {
            return verdict(
                Bottleneck::SenderBuffer,
                format!(
                    "{evidence}; the sender's socket buffer held it {:.0}% of its busy time \
                     (TCP_INFO sndbuf_limited), the receiver's window {:.0}%",
                    100.0 * snd,
                    100.0 * rwnd
                ),
                bdp_advice(d, "a larger send buffer: -w"),
            );
        }
        verdict(Bottleneck::Window, evidence, bdp_advice(d, "a larger -w"))
    })
}
