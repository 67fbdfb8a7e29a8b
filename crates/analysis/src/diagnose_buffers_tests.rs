//! The window and loss rules against what the kernel granted and which
//! congestion control ran: a receiver's window behind a small send buffer,
//! BBR under loss.

use super::tests::{base, kind};
use super::*;

/// A receiver's window opens only as data arrives: behind a sender held to
/// a small buffer of its own, TCP_INFO can blame the receiver's window (a
/// busy CI run: `rwnd_limited` 52% with `-w 8K --rcv-window 4M`). The granted
/// buffers tell which is the tighter; equal buffers leave it to TCP_INFO.
#[test]
fn a_receivers_window_behind_a_small_send_buffer_is_the_senders() {
    let behind = DiagnosisInput {
        rwnd_limited: Some(0.52),
        sndbuf_limited: Some(0.03),
        sender_buffer_bytes: Some(16384.0),
        receiver_buffer_bytes: Some(8388608.0),
        ..base()
    };
    let v = diagnose(&behind);
    assert_eq!(v.bottleneck, Bottleneck::SenderBuffer, "{v}");
    assert!(
        v.evidence.contains("(16 KiB granted) held it 55%")
            && v.evidence.contains("3% at its own buffer")
            && v.evidence.contains("52% at the receiver's window")
            && v.evidence
                .contains("granted 8 MiB, 512x the sender's buffer"),
        "{v}"
    );
    assert!(v.advice.contains("a larger send buffer"), "{v}");
    // The two split under 30% each: still the sender's, not "either end's".
    let split = DiagnosisInput {
        rwnd_limited: Some(0.24),
        sndbuf_limited: Some(0.26),
        ..behind.clone()
    };
    assert_eq!(kind(&split), Bottleneck::SenderBuffer);
    // Equal buffers (-w alone), or a send buffer the user did not set: the
    // receiver's window is the receiver's.
    for (snd, rcv) in [(Some(131072.0), Some(131072.0)), (None, Some(8388608.0))] {
        let d = DiagnosisInput {
            sender_buffer_bytes: snd,
            receiver_buffer_bytes: rcv,
            ..behind.clone()
        };
        assert_eq!(kind(&d), Bottleneck::ReceiverWindow, "{snd:?} {rcv:?}");
    }
    // Below 30% together, no buffer verdict at all.
    let little = DiagnosisInput {
        rwnd_limited: Some(0.1),
        sndbuf_limited: Some(0.05),
        ..behind
    };
    assert!(!matches!(
        kind(&little),
        Bottleneck::SenderBuffer | Bottleneck::ReceiverWindow | Bottleneck::Window
    ));
}

/// BBR paces at what it measures and does not back off on loss below 20%:
/// a BBR flow's retransmissions are a candidate, never the verdict (a busy CI
/// run called a CPU-bound BBR sender's 0.13% "loss"); cubic's are the limit.
#[test]
fn loss_does_not_hold_a_bbr_flow_back() {
    let d = DiagnosisInput {
        retransmit_pct: Some(1.2),
        congestion: Some("bbr".into()),
        ..base()
    };
    let v = diagnose(&d);
    assert_ne!(v.bottleneck, Bottleneck::Loss, "{v}");
    assert!(v.candidates.iter().any(|c| c.contains("BBR paces")), "{v}");
    let cubic = DiagnosisInput {
        congestion: Some("cubic".into()),
        ..d.clone()
    };
    assert_eq!(kind(&cubic), Bottleneck::Loss);
    let policed = DiagnosisInput {
        retransmit_pct: Some(25.0),
        goodput_bps: 1e6,
        ..d
    };
    assert_eq!(kind(&policed), Bottleneck::Loss);
}
