//! QUIC in user space, measured like TCP in the kernel: the `quic-stream`,
//! `quic-rr` and `quic-crr` flows.
//!
//! Each flow (but a quic-crr's, which opens a connection per transaction over
//! its endpoint: `crr.rs`) is one QUIC connection (quinn 0.11, its TLS 1.3 from rustls with
//! `ring`, ALPN `perf`) over the flow's own UDP socket, which the session has
//! already tied to its peer with the data preamble; the netsonde client is the
//! QUIC client. Its streams are the QUIC performance protocol's requests
//! (`perf.rs`): a quic-stream is one request, carrying the upload when the
//! client sends and asking for the download when the server does; a quic-rr
//! transaction is one request on a stream of its own (`rr.rs`). So a netsonde
//! client measures another stack's perf server as it measures its own. The
//! sending end writes the test's message over and over (each write hands
//! quinn the same reference-counted buffer: no copy or allocation of
//! netsonde's own per message); the receiving end reads it in order to its
//! end, and `--verify` checks the pattern. Both ends count with the engine's
//! `Meter` on the engine's clock, so phases, warm-up, intervals and volume
//! ends are the same as TCP's; the connection runs on a current-thread tokio
//! runtime on the flow's thread, so the flow thread's CPU is QUIC's whole
//! cost (crypto, packetization, acknowledgements, congestion control,
//! pacing), against which TCP's sits largely in the kernel. quinn sends with
//! UDP GSO and receives with GRO where the kernel has them; `--no-gso` turns
//! segmentation off; `-w` sets the flow-control windows.
//!
//! The report's note gives the handshake's time and quinn's own counts: UDP
//! datagrams and the system calls that carried them (GSO batches), packets
//! lost, congestion events and the path's RTT.

use std::io;
use std::net::UdpSocket;
use std::sync::Arc;
use std::time::{Duration, Instant};

use netsonde_engine::meter::{FlowCtx, Meter};
use netsonde_engine::{EngineError, FlowOutput};
use netsonde_model::result::{IoReport, Role};
use netsonde_model::spec::{TestKind, TestSpec};
use quinn::crypto::rustls::{QuicClientConfig, QuicServerConfig};
use quinn::{Connection, Endpoint, EndpointConfig, TokioRuntime, TransportConfig, VarInt};

/// How long the handshake (and the first stream) may take.
const HANDSHAKE: Duration = Duration::from_secs(5);
/// How often a waiting receiver looks at its clock and stop flag.
const WAKE: Duration = Duration::from_millis(200);
/// A connection silent this long is gone (its peer vanished).
const IDLE: Duration = Duration::from_secs(5);
/// The stream's and the connection's receive windows, and the send buffer
/// (what the server's budget counts: `footprint`).
const STREAM_WINDOW: u32 = netsonde_engine::footprint::QUIC_STREAM_WINDOW as u32;
const WINDOW: u32 = netsonde_engine::footprint::QUIC_WINDOW as u32;

fn fail(op: &'static str) -> impl Fn(&dyn std::fmt::Display) -> EngineError {
    move |e| EngineError::Io {
        op,
        source: io::Error::other(e.to_string()),
    }
}

/// The flow's windows: `-w` (or its `--window` share) as both the stream's
/// and the connection's flow-control window and the send buffer, so that a
/// QUIC flow is held to window/RTT as a TCP one is; else the defaults.
fn windows(spec: &TestSpec, flow: u32) -> (u32, u32) {
    match spec.window_of(Some(flow)) {
        Some(w) => {
            let w = w.0.clamp(1024, u64::from(u32::MAX >> 2)) as u32;
            (w, w)
        }
        None => (STREAM_WINDOW, WINDOW),
    }
}

fn transport(spec: &TestSpec, flow: u32) -> Arc<TransportConfig> {
    // The client's perf-protocol requests: quic-stream's one, or quic-rr's
    // one at a time (the credit for the next must never be what it waits on).
    let bidi = if spec.test.is_rr() {
        100
    } else {
        spec.quic_streams()
    };
    let (stream_window, window) = windows(spec, flow);
    let mut t = TransportConfig::default();
    t.stream_receive_window(VarInt::from_u32(stream_window))
        .receive_window(VarInt::from_u32(window))
        .send_window(u64::from(window))
        .max_concurrent_bidi_streams(VarInt::from_u32(bidi))
        .max_concurrent_uni_streams(VarInt::from_u32(0))
        .keep_alive_interval(Some(Duration::from_secs(1)))
        .enable_segmentation_offload(!spec.no_gso);
    if let Ok(idle) = IDLE.try_into() {
        t.max_idle_timeout(Some(idle));
    }
    Arc::new(t)
}

/// Runs one QUIC flow on the calling thread: this end sends (`sends`) or
/// receives a quic-stream, or requests (`sends`) or responds in a quic-rr, as
/// the QUIC client (`client`) or server.
pub fn run(
    sock: UdpSocket,
    ctx: &FlowCtx,
    sends: bool,
    client: bool,
) -> Result<FlowOutput, EngineError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| fail("tokio runtime")(&e))?;
    rt.block_on(flow(sock, ctx, sends, client))
}

/// A flow's endpoint over its socket, before any connection.
struct Prepared {
    pub(crate) ep: Endpoint,
    /// The client's configuration and its peer; `None` at the server.
    pub(crate) dial: Option<(quinn::ClientConfig, std::net::SocketAddr)>,
    /// The socket's receive and send buffers as granted.
    pub(crate) buffers: (usize, usize),
}

/// What a connection is and how it began.
struct Connected {
    /// The endpoint that holds it.
    ep: Endpoint,
    conn: Connection,
    handshake: Duration,
    /// The socket's receive and send buffers as granted.
    buffers: (usize, usize),
}

/// The endpoint over `sock`, as the QUIC client (`client`) or server: its
/// socket's buffers, the TLS and transport configuration (resumption only for
/// a quic-crr with `--tls-resume`). Inside the flow's runtime.
fn prepare(
    sock: UdpSocket,
    spec: &TestSpec,
    flow: u32,
    client: bool,
) -> Result<Prepared, EngineError> {
    let peer = sock.peer_addr().map_err(|e| fail("quic socket")(&e))?;
    if spec.window.is_none() && spec.flow_windows.is_empty() {
        // A QUIC stack's socket holds a window's worth of datagrams, as QUIC's
        // own perf tools ask (the kernel caps it at net.core.rmem_max and
        // wmem_max; the report gives what was granted).
        let s = socket2::SockRef::from(&sock);
        let _ = s.set_recv_buffer_size(WINDOW as usize);
        let _ = s.set_send_buffer_size(WINDOW as usize);
    }
    let granted = socket2::SockRef::from(&sock);
    let buffers = (
        granted.recv_buffer_size().unwrap_or(0),
        granted.send_buffer_size().unwrap_or(0),
    );
    sock.set_read_timeout(None)
        .and_then(|()| sock.set_write_timeout(None))
        .and_then(|()| sock.set_nonblocking(true))
        .map_err(|e| fail("quic socket")(&e))?;
    let alpn = vec![b"perf".to_vec()];
    let resume = spec.tls_resume;
    let endpoint = |server: Option<quinn::ServerConfig>, sock| {
        Endpoint::new(
            EndpointConfig::default(),
            server,
            sock,
            Arc::new(TokioRuntime),
        )
        .map_err(|e| fail("quic endpoint")(&e))
    };
    let (ep, dial) = if client {
        let mut tls = netsonde_tls::client_config(spec)?;
        tls.alpn_protocols = alpn;
        if !resume {
            tls.resumption = rustls::client::Resumption::disabled();
        }
        let crypto = QuicClientConfig::try_from(tls).map_err(|e| fail("quic tls")(&e))?;
        let mut cfg = quinn::ClientConfig::new(Arc::new(crypto));
        cfg.transport_config(transport(spec, flow));
        (endpoint(None, sock)?, Some((cfg, peer)))
    } else {
        let mut tls = netsonde_tls::server_config(spec)?;
        tls.alpn_protocols = alpn;
        tls.max_early_data_size = 0;
        if resume {
            tls.send_tls13_tickets = 1;
        }
        let crypto = QuicServerConfig::try_from(tls).map_err(|e| fail("quic tls")(&e))?;
        let mut cfg = quinn::ServerConfig::with_crypto(Arc::new(crypto));
        cfg.transport_config(transport(spec, flow));
        (endpoint(Some(cfg), sock)?, None)
    };
    Ok(Prepared { ep, dial, buffers })
}

/// The connection over `sock`, as the QUIC client (`client`) or server.
async fn connect(
    sock: UdpSocket,
    spec: &TestSpec,
    flow: u32,
    client: bool,
) -> Result<Connected, EngineError> {
    let start = Instant::now();
    let Prepared { ep, dial, buffers } = prepare(sock, spec, flow, client)?;
    let conn = tokio::time::timeout(HANDSHAKE, shake(&ep, dial))
        .await
        .map_err(|_| fail("quic handshake")(&"no answer in 5 s"))?
        .map_err(|e| fail("quic handshake")(&e))?;
    Ok(Connected {
        ep,
        conn,
        handshake: start.elapsed(),
        buffers,
    })
}

/// The handshake: dialing `peer` with the client's configuration, or taking
/// the first client that comes.
async fn shake(
    ep: &Endpoint,
    dial: Option<(quinn::ClientConfig, std::net::SocketAddr)>,
) -> Result<Connection, String> {
    let connecting = match dial {
        Some((cfg, peer)) => ep
            .connect_with(cfg, peer, "netsonde")
            .map_err(|e| e.to_string())?,
        None => ep
            .accept()
            .await
            .ok_or("the endpoint closed")?
            .accept()
            .map_err(|e| e.to_string())?,
    };
    connecting.await.map_err(|e| e.to_string())
}

async fn flow(
    sock: UdpSocket,
    ctx: &FlowCtx,
    sends: bool,
    client: bool,
) -> Result<FlowOutput, EngineError> {
    // This thread's crypto from here on is this flow's.
    let _ = netsonde_tls::take_crypto();
    if ctx.spec.test == TestKind::QuicCrr {
        return crr::flow(prepare(sock, &ctx.spec, ctx.id, client)?, ctx).await;
    }
    let Connected {
        ep,
        conn,
        handshake,
        buffers,
    } = connect(sock, &ctx.spec, ctx.id, client).await?;
    let mut m = Meter::new(ctx);
    let (mut latency, mut verified) = (None, None);
    let end = match (ctx.spec.test.is_rr(), sends, client) {
        (true, true, _) => {
            let (end, hist) = rr::request(&conn, ctx, &mut m).await?;
            latency = Some(hist);
            end
        }
        (true, false, _) => rr::respond(&conn, ctx, &mut m).await?,
        (false, true, true) => perf::upload(&conn, ctx, &mut m).await?,
        (false, false, true) => {
            let (end, v) = perf::download(&conn, ctx, &mut m).await?;
            verified = v;
            end
        }
        (false, sends, false) => {
            let (end, v) = perf::serve(&conn, ctx, &mut m, sends).await?;
            verified = v;
            end
        }
    };
    let role = match (ctx.spec.test.is_rr(), sends) {
        (true, true) => Role::Requester,
        (true, false) => Role::Responder,
        (false, true) => Role::Sender,
        (false, false) => Role::Receiver,
    };
    let mut result = m.finish(end, ctx.id, ctx.dir, role);
    let s = conn.stats();
    let streams = match ctx.spec.quic_streams() {
        1 => String::new(),
        n if !ctx.spec.test.is_rr() => format!(", {n} streams on the connection"),
        _ => String::new(),
    };
    let gso = if ctx.spec.no_gso {
        "GSO off"
    } else {
        "GSO where the kernel has it"
    };

    result.io = Some(IoReport {
        strategy: "quic".into(),
        note: Some(format!(
            "QUIC v1 (quinn 0.11, TLS 1.3 by rustls, ring){streams}; handshake {:.2} ms; socket buffers \
             {} B receive, {} B send; {gso}: {} UDP datagrams sent in {} calls, {} received \
             in {}; {} packets lost, {} congestion events; rtt {:.1} us; goodput counts stream \
             bytes",
            handshake.as_secs_f64() * 1e3,
            buffers.0,
            buffers.1,
            s.udp_tx.datagrams,
            s.udp_tx.ios,
            s.udp_rx.datagrams,
            s.udp_rx.ios,
            s.path.lost_packets,
            s.path.congestion_events,
            s.path.rtt.as_secs_f64() * 1e6
        )),
        verify_errors: verified,
        crypto: Some(netsonde_tls::take_crypto()),
        rtt: Some(netsonde_model::units::Nanos(s.path.rtt.as_nanos() as u64)),
        ..IoReport::default()
    });
    conn.close(VarInt::from_u32(0), b"done");
    // The close goes out before the endpoint does.
    let _ = tokio::time::timeout(Duration::from_millis(200), ep.wait_idle()).await;
    Ok(FlowOutput { result, latency })
}

mod crr;
mod perf;
mod perf_server;
pub mod probe;
mod rr;

pub use perf_server::{serve as perf_serve, PerfLimits, PerfTotals};

#[cfg(test)]
mod amplification_tests;
#[cfg(test)]
mod tests;
