//! How much memory a flow's buffers take, as an upper bound the server checks
//! against its budget before it agrees to a test.
//!
//! The bound follows what each strategy builds (see the `io` modules): buffers that
//! scale with the message size, and the fixed pools some strategies keep (io_uring's
//! provided buffers, recvmmsg slots, the 4 MiB cap on large reads). `auto` builds
//! every candidate it races, so it counts their sum. Every flow also counts its
//! thread's stack. Kernel socket buffers are not counted: the kernel bounds them
//! with `net.core.rmem_max`/`wmem_max` and its own memory pressure.

use netsonde_model::spec::{IoStrategy, TestKind, TestSpec};
use netsonde_model::units::Bytes;
use netsonde_proto::message::PREAMBLE_LEN;

/// Stack of a flow thread (Rust's default for spawned threads).
pub const THREAD_STACK: u64 = 2 << 20;

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;

/// The buffers of one strategy moving `size`-byte messages one way.
fn strategy(io: IoStrategy, size: u64, udp: bool, send: bool) -> u64 {
    // Large reads: 16 messages, at least 64 KiB, at most 4 MiB.
    let big_read = (size * 16).clamp(64 * KIB, 4 * MIB);
    match io {
        // A TCP receiver reads at least 1 MiB at a time (but in an epoll group).
        IoStrategy::Copy | IoStrategy::Busypoll if !udp && !send => {
            size.max(crate::io::TCP_READ as u64)
        }
        IoStrategy::Copy | IoStrategy::Epoll | IoStrategy::Busypoll | IoStrategy::Zerocopy => {
            size + 1
        }
        IoStrategy::Batch => match (udp, send) {
            // 64 sendmmsg/recvmmsg slots, or one GSO/GRO buffer of 64 KiB.
            (true, _) => 64 * (size + 1) + 64 * KIB,
            (false, true) => size,
            (false, false) => big_read,
        },
        // A memfd of whole messages, at least 1 MiB past any start, and a pipe.
        IoStrategy::Sendfile | IoStrategy::Splice => {
            if send {
                2 * (MIB + size) + size
            } else {
                MIB
            }
        }
        IoStrategy::Uring => match (udp, send) {
            (true, true) => 32 * size,
            (false, true) => 256 * KIB + 2 * size,
            // 64 provided buffers, and the one-RECV fallback's ring buffer.
            (true, false) => 128 * (size + 1),
            (false, false) => 64 * 64 * KIB + big_read,
        },
        // The AF_XDP socket's UMEM: 4096 frames of 4 KiB, whatever the size.
        IoStrategy::Xdp => 16 * MIB,
        IoStrategy::Auto => [
            IoStrategy::Batch,
            IoStrategy::Zerocopy,
            IoStrategy::Sendfile,
            IoStrategy::Splice,
            IoStrategy::Uring,
            IoStrategy::Copy,
        ]
        .into_iter()
        .map(|c| strategy(c, size, udp, send))
        .sum(),
    }
}

/// A quic-stream connection's receive window and send buffer (netsonde-quic
/// sets them).
pub const QUIC_WINDOW: u64 = 8 * MIB;
/// Its stream's receive window.
pub const QUIC_STREAM_WINDOW: u64 = 4 * MIB;

/// The largest of a QUIC flow's windows: `-w` (netsonde-quic's windows when
/// given; the largest of `--window`'s shares), else the defaults.
fn quic_window(spec: &TestSpec) -> u64 {
    spec.window_of(None)
        .map_or(QUIC_WINDOW.max(QUIC_STREAM_WINDOW), |w| w.0.max(1024))
}

/// An upper bound on the memory one flow of `spec` takes at the end that sends
/// (`send`) or receives its messages; for request/response tests, either end.
pub fn flow_bound(spec: &TestSpec, send: bool) -> Bytes {
    let buffers = match spec.test {
        TestKind::TcpRr | TestKind::UdpRr | TestKind::TcpCrr | TestKind::TlsCrr => {
            PREAMBLE_LEN as u64 + spec.request_size.0 + spec.response_size.0 + 64 * KIB
        }
        TestKind::TcpStream | TestKind::UdpStream => {
            let io = if send { spec.tx_io } else { spec.rx_io };
            strategy(io, spec.size.0, !spec.test.is_tcp(), send)
        }
        // The message, and the TLS library's buffers: sealed records waiting
        // (64 KiB), records read and not yet opened, plaintext not yet taken
        // (64 KiB each).
        TestKind::TlsStream => spec.size.0 + 3 * 64 * KIB,
        // Its connection's receive window, the stream's, the send buffer
        // (each `-w` when given), and the message with a MiB of packets in
        // flight.
        TestKind::QuicStream => 3 * quic_window(spec) + spec.size.0 + MIB,
        // The two messages, and the TLS library's buffers as tls-stream's.
        TestKind::TlsRr => spec.request_size.0 + spec.response_size.0 + 3 * 64 * KIB,
        // The two messages, and the connection's windows as quic-stream's.
        TestKind::QuicRr | TestKind::QuicCrr => {
            3 * quic_window(spec) + spec.request_size.0 + spec.response_size.0
        }
    };
    Bytes(buffers + THREAD_STACK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rr_flows_count_both_messages_and_streams_their_strategy() {
        let mut s = TestSpec::new(TestKind::TcpRr);
        s.request_size = Bytes(64 * MIB);
        s.response_size = Bytes(64 * MIB);
        assert!(flow_bound(&s, false).0 > 128 * MIB);
        let mut s = TestSpec::new(TestKind::TcpStream);
        s.size = Bytes(128 * KIB);
        let copy = flow_bound(&s, false).0;
        // The copying receiver reads 1 MiB at a time.
        assert!((MIB + THREAD_STACK..4 * MIB).contains(&copy), "{copy}");
        s.rx_io = IoStrategy::Uring;
        assert!(flow_bound(&s, false).0 > 4 * MIB);
        s.rx_io = IoStrategy::Auto;
        assert!(
            flow_bound(&s, false).0
                > flow_bound(
                    &{
                        let mut u = s.clone();
                        u.rx_io = IoStrategy::Uring;
                        u
                    },
                    false
                )
                .0
        );
    }
}
