//! Applying a spec's socket options and reading back what the kernel granted.

use std::time::Duration;

use netsonde_model::load::TcpSample;
use netsonde_model::result::{SocketFacts, Subflow, TcpInfoSummary};
use netsonde_model::spec::TestSpec;
use netsonde_model::units::{BitRate, Nanos};
use socket2::Socket;

use crate::EngineError;

/// How often a blocked loop wakes to check its deadline and stop flag.
pub const WAKE: Duration = Duration::from_millis(200);

fn opt(option: &'static str) -> impl FnOnce(std::io::Error) -> EngineError {
    move |source| EngineError::SockOpt { option, source }
}

/// Sets buffer sizes and, for TCP, MSS, Nagle and congestion control. Call before
/// `connect` or `listen` so the window scale is chosen with the buffer in place.
pub fn apply(sock: &Socket, spec: &TestSpec) -> Result<(), EngineError> {
    apply_window(sock, spec.window_of(None))?;
    apply_common(sock, spec)
}

/// A UDP socket for `local`'s family with [`apply`]'s options, not yet
/// bound: an iperf3 stream's, or a flow's to a QUIC perf server.
pub fn udp_socket(spec: &TestSpec, local: std::net::SocketAddr) -> std::io::Result<Socket> {
    use socket2::{Domain, Protocol, Type};
    let s = Socket::new(Domain::for_address(local), Type::DGRAM, Some(Protocol::UDP))?;
    apply(&s, spec).map_err(std::io::Error::other)?;
    Ok(s)
}

/// [`apply`] for flow `flow`'s socket: its own buffer (`--window A,B`) and
/// DSCP, and at the end that `receives` the flow, the receiver's own buffer
/// (`--rcv-window`) over `-w`'s, so that what is read back ([`facts`]) is
/// the buffer in force.
pub fn apply_flow(
    sock: &Socket,
    spec: &TestSpec,
    flow: u32,
    receives: bool,
) -> Result<(), EngineError> {
    apply_window(sock, spec.window_of(Some(flow)))?;
    if receives {
        apply_rcv_window(sock, spec)?;
    }
    apply_common(sock, spec)?;
    if let Some(d) = spec.dscp_of(flow) {
        set_dscp(sock, d)?;
    }
    Ok(())
}

/// Marks a socket's packets with a DSCP (the upper six bits of the IPv4 TOS or
/// the IPv6 traffic class).
pub fn set_dscp(sock: &Socket, dscp: u8) -> Result<(), EngineError> {
    let tos = u32::from(dscp) << 2;
    if sock.domain().map_err(opt("SO_DOMAIN"))? == socket2::Domain::IPV6 {
        sock.set_tclass_v6(tos).map_err(opt("IPV6_TCLASS"))
    } else {
        sock.set_tos_v4(tos).map_err(opt("IP_TOS"))
    }
}

/// The receiving end's own buffer (`--rcv-window`), set on a socket before
/// its connection's handshake (a listener's, or a receiving client's), so that
/// the window scale the handshake agrees on covers it: set only after, a
/// buffer above what the handshake's buffer allowed (`-w 32K`: 64 KiB) could
/// never be advertised.
pub fn apply_rcv_window(sock: &Socket, spec: &TestSpec) -> Result<(), EngineError> {
    if let Some(w) = spec.rcv_window {
        let w = usize::try_from(w.0).unwrap_or(usize::MAX);
        sock.set_recv_buffer_size(w).map_err(opt("SO_RCVBUF"))?;
    }
    Ok(())
}

fn apply_window(
    sock: &Socket,
    window: Option<netsonde_model::units::Bytes>,
) -> Result<(), EngineError> {
    if let Some(w) = window {
        let w = usize::try_from(w.0).unwrap_or(usize::MAX);
        sock.set_send_buffer_size(w).map_err(opt("SO_SNDBUF"))?;
        sock.set_recv_buffer_size(w).map_err(opt("SO_RCVBUF"))?;
    }
    Ok(())
}

fn apply_common(sock: &Socket, spec: &TestSpec) -> Result<(), EngineError> {
    if spec.test.is_tcp() {
        if let Some(m) = spec.mss {
            sock.set_tcp_mss(m).map_err(opt("TCP_MAXSEG"))?;
        }
        if spec.nodelay || spec.test.is_rr() {
            sock.set_tcp_nodelay(true).map_err(opt("TCP_NODELAY"))?;
        }
        if let Some(c) = &spec.congestion {
            sock.set_tcp_congestion(c.as_bytes()).map_err(|source| {
                EngineError::SockOpt {
                    option: "TCP_CONGESTION (is the algorithm in net.ipv4.tcp_available_congestion_control?)",
                    source,
                }
            })?;
        }
    }
    Ok(())
}

/// Sets the wake-up timeouts on a data socket.
pub fn set_wake(sock: &Socket) -> Result<(), EngineError> {
    sock.set_read_timeout(Some(WAKE))
        .map_err(opt("SO_RCVTIMEO"))?;
    sock.set_write_timeout(Some(WAKE))
        .map_err(opt("SO_SNDTIMEO"))
}

/// What the kernel granted on a socket.
pub fn facts(sock: &Socket, tcp: bool) -> SocketFacts {
    SocketFacts {
        sndbuf: sock.send_buffer_size().unwrap_or(0) as u64,
        rcvbuf: sock.recv_buffer_size().unwrap_or(0) as u64,
        mss: if tcp { sock.tcp_mss().ok() } else { None },
        congestion: if tcp {
            sock.tcp_congestion().ok().map(|v| {
                String::from_utf8_lossy(&v)
                    .trim_end_matches('\0')
                    .to_string()
            })
        } else {
            None
        },
    }
}

/// `TCP_INFO` for a connection, summarised; `None` if the kernel refuses.
pub fn tcp_info(sock: &impl std::os::fd::AsRawFd) -> Option<TcpInfoSummary> {
    let i = crate::sys::tcp_info(sock).ok()?;
    Some(TcpInfoSummary {
        retransmits: u64::from(i.total_retrans),
        cwnd: i.snd_cwnd,
        mss: i.snd_mss,
        pmtu: i.pmtu,
        srtt: Nanos(u64::from(i.rtt) * 1000),
        rttvar: Nanos(u64::from(i.rttvar) * 1000),
        delivery_rate: BitRate(i.delivery_rate as f64 * 8.0),
        busy: Nanos(i.busy_time * 1000),
        rwnd_limited: Nanos(i.rwnd_limited * 1000),
        sndbuf_limited: Nanos(i.sndbuf_limited * 1000),
        min_rtt: Nanos(u64::from(i.min_rtt) * 1000),
        bytes_sent: i.bytes_sent,
        bytes_retrans: i.bytes_retrans,
        data_segs_out: (i.data_segs_out > 0).then_some(u64::from(i.data_segs_out)),
        snd_wnd: (i.snd_wnd > 0).then_some(u64::from(i.snd_wnd)),
        dsack_dups: u64::from(i.dsack_dups),
    })
}

/// The protocol of a stream test's sockets: MPTCP with `--mptcp`
/// (`IPPROTO_MPTCP`, which falls back to TCP with a peer that has no MPTCP),
/// else TCP.
pub fn stream_protocol(spec: &TestSpec) -> socket2::Protocol {
    if spec.mptcp {
        socket2::Protocol::from(crate::sys::mptcp::IPPROTO_MPTCP)
    } else {
        socket2::Protocol::TCP
    }
}

/// What opening an MPTCP socket failing means, in one line.
pub fn mptcp_unavailable(e: &std::io::Error) -> Option<&'static str> {
    matches!(
        e.raw_os_error(),
        Some(libc::EPROTONOSUPPORT | libc::ENOPROTOOPT | libc::EINVAL)
    )
    .then_some("this kernel has no MPTCP, or net.mptcp.enabled is 0")
}

/// The transports beside plain TCP and UDP, as this host has them: each
/// name, and what it runs on or why it cannot run (`netsonde caps`).
pub fn transport_caps() -> Vec<(&'static str, Result<String, String>)> {
    let ulp = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_ulp")
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    let ktls = if ulp.split_whitespace().any(|u| u == "tls") {
        Ok(
            "the kernel's tls module is loaded; netsonde has no kTLS strategy yet: \
            tls-stream encrypts in user space"
                .to_string(),
        )
    } else {
        Err(format!(
            "the kernel has no tls module (net.ipv4.tcp_available_ulp: {}); tls-stream \
             encrypts in user space",
            if ulp.is_empty() { "empty" } else { &ulp }
        ))
    };
    let mptcp = match socket2::Socket::new(
        socket2::Domain::IPV4,
        socket2::Type::STREAM,
        Some(socket2::Protocol::from(crate::sys::mptcp::IPPROTO_MPTCP)),
    ) {
        Ok(_) => Ok(
            "the kernel's MPTCP (--mptcp); subflows are its path manager's \
                     (ip mptcp endpoint)"
                .to_string(),
        ),
        Err(e) => Err(mptcp_unavailable(&e).map_or_else(|| e.to_string(), str::to_string)),
    };
    vec![
        (
            "tls",
            Ok("rustls 0.23 (ring): tls-stream, TLS 1.3 and 1.2".to_string()),
        ),
        ("ktls", ktls),
        (
            "quic",
            Ok("quinn 0.11 over UDP: quic-stream, GSO/GRO where the kernel has them".to_string()),
        ),
        ("mptcp", mptcp),
    ]
}

/// An MPTCP connection's subflows as it ends (each one's path and what it
/// carried); `None` for a plain TCP connection.
pub fn mptcp_subflows(sock: &impl std::os::fd::AsRawFd) -> Option<Vec<Subflow>> {
    let all = crate::sys::mptcp::subflows(sock).ok()?;
    let addr = |a: Option<std::net::SocketAddr>| a.map_or_else(|| "?".into(), |a| a.to_string());
    Some(
        all.into_iter()
            .map(|(i, l, r)| Subflow {
                local: addr(l),
                remote: addr(r),
                bytes_acked: i.bytes_acked,
                bytes_received: i.bytes_received,
                srtt: Nanos(u64::from(i.rtt) * 1000),
                retransmits: u64::from(i.total_retrans),
            })
            .collect(),
    )
}

/// Bytes the peer has acknowledged on a connection: what a sender's receiver
/// got, unlike the bytes written into the socket buffer; `None` if the kernel
/// refuses. A TCP connection's `tcpi_bytes_acked`; an MPTCP connection's
/// (`mptcp`) data-level `mptcpi_bytes_acked`, over all its subflows (its
/// `TCP_INFO` is its first subflow's alone: the intervals of a two-path test
/// summed to 66.5% of its total), or `TCP_INFO`'s where it fell back to TCP.
pub fn bytes_acked(sock: &impl std::os::fd::AsRawFd, mptcp: bool) -> Option<u64> {
    if mptcp {
        if let Ok((i, len)) = crate::sys::mptcp::info(sock) {
            if len >= crate::sys::mptcp::INFO_WITH_BYTES {
                return Some(i.bytes_acked);
            }
        }
    }
    crate::sys::tcp_info(sock).ok().map(|i| i.bytes_acked)
}

/// An MPTCP flow's `TCP_INFO` summary with the counts of all its subflows:
/// the connection's own `TCP_INFO` is its first subflow's, which showed
/// `retrans 0` while the second retransmitted 30. The rest (cwnd, RTT, MSS)
/// stays the first subflow's; each subflow's own is in `subflows`.
pub fn with_subflows(info: &mut Option<TcpInfoSummary>, subflows: Option<&[Subflow]>) {
    if let (Some(i), Some(subs)) = (info.as_mut(), subflows) {
        if !subs.is_empty() {
            i.retransmits = subs.iter().map(|s| s.retransmits).sum();
        }
    }
}

/// One `TCP_INFO` reading for a load-latency test's over-time series; `None` if
/// the kernel refuses.
pub fn tcp_sample(sock: &impl std::os::fd::AsRawFd, t: Nanos) -> Option<TcpSample> {
    let i = crate::sys::tcp_info(sock).ok()?;
    Some(TcpSample {
        t,
        bytes_acked: i.bytes_acked,
        srtt: Nanos(u64::from(i.rtt) * 1000),
        cwnd: i.snd_cwnd,
        retransmits: u64::from(i.total_retrans),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use netsonde_model::spec::TestKind;
    use netsonde_model::units::Bytes;
    use socket2::{Domain, Protocol, Type};

    #[test]
    fn window_is_read_back_doubled_or_capped() {
        let s = Socket::new(Domain::IPV4, Type::STREAM, Some(Protocol::TCP)).unwrap();
        let mut spec = TestSpec::new(TestKind::TcpStream);
        spec.window = Some(Bytes(64 * 1024));
        apply(&s, &spec).unwrap();
        let f = facts(&s, true);
        // Linux doubles the request for bookkeeping; a cap can only lower it.
        assert!(f.sndbuf <= 128 * 1024 && f.sndbuf >= 4096, "{f:?}");
        assert!(f.congestion.is_some());
    }

    /// `-w 8K --rcv-window 256K`: the receiving end's buffer is its own, set
    /// over `-w`'s and read back as the one in force; the sending end keeps
    /// `-w`'s (a report once said 16 KiB at a receiver that had 512).
    #[test]
    fn the_receiving_end_reads_back_its_own_buffer() {
        let mut spec = TestSpec::new(TestKind::TcpStream);
        spec.window = Some(Bytes(8 * 1024));
        spec.rcv_window = Some(Bytes(256 * 1024));
        let at = |receives| {
            let s = Socket::new(Domain::IPV4, Type::STREAM, Some(Protocol::TCP)).unwrap();
            apply_flow(&s, &spec, 0, receives).unwrap();
            facts(&s, true)
        };
        let (receiver, sender) = (at(true), at(false));
        assert_eq!(receiver.sndbuf, sender.sndbuf, "{receiver:?} {sender:?}");
        assert!(sender.rcvbuf <= 16 * 1024, "{sender:?}");
        // Doubled, unless net.core.rmem_max caps the request below it.
        assert!(
            receiver.rcvbuf >= 8 * sender.rcvbuf,
            "{receiver:?} {sender:?}"
        );
    }

    #[test]
    fn unknown_congestion_is_a_clear_error() {
        let s = Socket::new(Domain::IPV4, Type::STREAM, Some(Protocol::TCP)).unwrap();
        let mut spec = TestSpec::new(TestKind::TcpStream);
        spec.congestion = Some("nosuchcc".into());
        let e = apply(&s, &spec).unwrap_err();
        assert!(e.to_string().contains("TCP_CONGESTION"), "{e}");
    }
}
