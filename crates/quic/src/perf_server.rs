//! A QUIC perf server (draft-banks-quic-performance-00) for any client: each
//! bidirectional stream is a request (8 bytes, network order, asking for that
//! many bytes back; the upload; its FIN), answered once the upload has been
//! read to its FIN with the bytes asked for and a FIN on the same stream; a
//! unidirectional one is answered on a unidirectional stream of the server's.
//! A request for [`crate::perf::ENDLESS`] bytes is answered until the client
//! stops reading. It counts what it read and sent ([`PerfTotals`]), so what a
//! client says it moved can be checked against the server's own count.

use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use netsonde_engine::EngineError;
use netsonde_model::spec::{TestKind, TestSpec};
use quinn::crypto::rustls::QuicServerConfig;
use quinn::{Connection, Endpoint, EndpointConfig, RecvStream, SendStream, TokioRuntime, VarInt};

use crate::fail;
use crate::perf::{message, HEADER};

/// What a perf server allows: any client may reach it (the protocol has no
/// authentication), so it bounds what one can make it do.
#[derive(Debug, Clone, Copy)]
pub struct PerfLimits {
    /// Connections at once; more are refused.
    pub connections: u64,
    /// The longest a request's answer is sent (a request for no end stops
    /// here; a netsonde server's `--max-duration`).
    pub answer: Duration,
}

/// What a perf server read and sent, all connections.
#[derive(Debug, Default)]
pub struct PerfTotals {
    /// Connections accepted.
    pub connections: AtomicU64,
    /// Requests answered (or cut short by their client).
    pub requests: AtomicU64,
    /// Upload bytes read, headers not counted.
    pub read: AtomicU64,
    /// Bytes sent in answers.
    pub sent: AtomicU64,
    /// Connections refused at the limit.
    pub refused: AtomicU64,
    /// Clients asked to retry with a token (their address not yet
    /// validated): every client's first Initial.
    pub retries: AtomicU64,
    /// Connections open now.
    open: AtomicU64,
}

/// Serves perf clients on `sock` until `until` or `stop`, on the calling
/// thread (a current-thread runtime), within `limits`, counting into `totals`.
pub fn serve(
    sock: UdpSocket,
    until: Instant,
    stop: &AtomicBool,
    limits: PerfLimits,
    totals: Arc<PerfTotals>,
) -> Result<(), EngineError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| fail("tokio runtime")(&e))?;
    rt.block_on(async {
        let mut tls = netsonde_tls::server_config(&TestSpec::new(TestKind::QuicStream))?;
        tls.alpn_protocols = vec![b"perf".to_vec()];
        tls.max_early_data_size = 0;
        let crypto = QuicServerConfig::try_from(tls).map_err(|e| fail("quic tls")(&e))?;
        let mut cfg = quinn::ServerConfig::with_crypto(Arc::new(crypto));
        let mut t = quinn::TransportConfig::default();
        t.max_concurrent_bidi_streams(VarInt::from_u32(100))
            .max_concurrent_uni_streams(VarInt::from_u32(100));
        cfg.transport_config(Arc::new(t));
        sock.set_nonblocking(true)
            .map_err(|e| fail("quic socket")(&e))?;
        let ep = Endpoint::new(
            EndpointConfig::default(),
            Some(cfg),
            sock,
            Arc::new(TokioRuntime),
        )
        .map_err(|e| fail("quic endpoint")(&e))?;
        // The bytes every answer is cut from: one buffer for all connections.
        let body = message(1 << 20);
        while Instant::now() < until && !stop.load(Ordering::Relaxed) {
            let Ok(Some(incoming)) =
                tokio::time::timeout(Duration::from_millis(100), ep.accept()).await
            else {
                continue;
            };
            // RFC 9000 §8.1: until a client's address is validated, a server
            // sends at most 3x what it received, and quinn lets one whole
            // datagram past that (quinn#1082: 3,738 B answered 1,200 B with
            // its resend). A perf client cannot be authenticated: its address
            // is validated first by a Retry (§8.1.2), a packet smaller than
            // what it answers, for one round trip more per connection.
            if !incoming.remote_address_validated() {
                if incoming.retry().is_ok() {
                    totals.retries.fetch_add(1, Ordering::Relaxed);
                }
                continue;
            }
            if totals.open.load(Ordering::Relaxed) >= limits.connections {
                totals.refused.fetch_add(1, Ordering::Relaxed);
                incoming.refuse();
                continue;
            }
            totals.open.fetch_add(1, Ordering::Relaxed);
            let (totals, body) = (totals.clone(), body.clone());
            tokio::spawn(async move {
                if let Ok(conn) = incoming.await {
                    totals.connections.fetch_add(1, Ordering::Relaxed);
                    connection(conn, body, limits.answer, totals.clone()).await;
                }
                totals.open.fetch_sub(1, Ordering::Relaxed);
            });
        }
        ep.close(VarInt::from_u32(0), b"done");
        Ok(())
    })
}

/// Answers a connection's requests until it closes.
async fn connection(conn: Connection, body: Bytes, answer_for: Duration, totals: Arc<PerfTotals>) {
    loop {
        let t = totals.clone();
        let b = body.clone();
        tokio::select! {
            bi = conn.accept_bi() => match bi {
                Ok((send, recv)) => {
                    tokio::spawn(async move { answer(recv, send, b, answer_for, t).await });
                }
                Err(_) => return,
            },
            uni = conn.accept_uni() => match uni {
                Ok(recv) => {
                    let c = conn.clone();
                    tokio::spawn(async move {
                        if let Ok(send) = c.open_uni().await {
                            answer(recv, send, b, answer_for, t).await;
                        }
                    });
                }
                Err(_) => return,
            },
        }
    }
}

/// One request: its header, its upload read to the FIN, then the bytes asked
/// for (until the client stops them) and a FIN.
async fn answer(
    mut recv: RecvStream,
    mut send: SendStream,
    body: Bytes,
    answer_for: Duration,
    totals: Arc<PerfTotals>,
) {
    let mut header = [0u8; HEADER];
    if recv.read_exact(&mut header).await.is_err() {
        return;
    }
    while let Ok(Some(c)) = recv.read_chunk(usize::MAX, true).await {
        totals
            .read
            .fetch_add(c.bytes.len() as u64, Ordering::Relaxed);
    }
    totals.requests.fetch_add(1, Ordering::Relaxed);
    let mut left = u64::from_be_bytes(header);
    let until = Instant::now() + answer_for;
    while left > 0 && Instant::now() < until {
        let n = left.min(body.len() as u64);
        if send.write_chunk(body.slice(..n as usize)).await.is_err() {
            return;
        }
        totals.sent.fetch_add(n, Ordering::Relaxed);
        left -= n;
    }
    let _ = send.finish();
    let _ = send.stopped().await;
}
