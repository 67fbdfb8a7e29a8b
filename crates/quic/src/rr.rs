//! `quic-rr`: request/response over QUIC, one transaction at a time per flow
//! as tcp-rr's, on one bidirectional stream the requester (the QUIC client)
//! opens and keeps: each transaction's time is its request's write and its
//! response's read through quinn, the user-space stack's round trip against
//! the kernel's.

use std::time::Instant;

use bytes::Bytes;
use netsonde_engine::latency::{new_histogram, Histogram};
use netsonde_engine::meter::{FlowCtx, Meter, Phase};
use netsonde_engine::EngineError;
use quinn::{Connection, RecvStream};

use crate::{fail, HANDSHAKE, WAKE};

/// Fills `buf` from `stream`, looking at the clock and the stop flag every
/// [`WAKE`]: `Ok(false)` when the stream ended (or the flow must) before it
/// was full. Cancel-safe reads: a wake-up loses nothing.
async fn fill(stream: &mut RecvStream, buf: &mut [u8], ctx: &FlowCtx) -> Result<bool, EngineError> {
    let mut off = 0;
    while off < buf.len() {
        match tokio::time::timeout(WAKE, stream.read(&mut buf[off..])).await {
            Ok(Ok(Some(n))) => off += n,
            Ok(Ok(None)) => return Ok(false),
            Ok(Err(e)) => return Err(fail("quic receive")(&e)),
            Err(_) if ctx.stopped() || Instant::now() >= ctx.clock.hard_end => return Ok(false),
            Err(_) => {}
        }
    }
    Ok(true)
}

fn message(len: u64) -> Bytes {
    let mut m = vec![0u8; len as usize];
    netsonde_engine::fill_pattern(&mut m);
    Bytes::from(m)
}

/// The requester: transactions until the measured interval ends, each timed;
/// then the stream's end, and a wait for the responder to close. When
/// requests stopped, and the transactions' times.
pub(crate) async fn request(
    conn: &Connection,
    ctx: &FlowCtx,
    m: &mut Meter,
) -> Result<(Instant, Histogram), EngineError> {
    let (mut send, mut recv) = conn.open_bi().await.map_err(|e| fail("quic stream")(&e))?;
    let req = message(ctx.spec.request_size.0);
    let mut resp = vec![0u8; ctx.spec.response_size.0 as usize];
    let mut hist = new_histogram();
    let end = loop {
        let start = Instant::now();
        let phase = m.tick(start);
        if phase == Phase::After || ctx.stopped() {
            break start;
        }
        send.write_chunk(req.clone())
            .await
            .map_err(|e| fail("quic send")(&e))?;
        m.io(req.len() as u64, 1);
        if !fill(&mut recv, &mut resp, ctx).await? {
            return Err(EngineError::PeerClosed { flow: ctx.id });
        }
        m.io(resp.len() as u64, 0);
        if phase == Phase::Measure {
            hist.saturating_record(start.elapsed().as_nanos() as u64);
        }
        m.transaction();
    };
    let _ = send.finish();
    let left = ctx.clock.hard_end.saturating_duration_since(Instant::now());
    let _ = tokio::time::timeout(left, conn.closed()).await;
    Ok((end, hist))
}

/// The responder: answers every request until the requester ends its stream
/// (or the hard deadline, or a stop).
pub(crate) async fn respond(
    conn: &Connection,
    ctx: &FlowCtx,
    m: &mut Meter,
) -> Result<Instant, EngineError> {
    let (mut send, mut recv) = tokio::time::timeout(HANDSHAKE, conn.accept_bi())
        .await
        .map_err(|_| fail("quic stream")(&"none opened in 5 s"))?
        .map_err(|e| fail("quic stream")(&e))?;
    let mut req = vec![0u8; ctx.spec.request_size.0 as usize];
    let resp = message(ctx.spec.response_size.0);
    while fill(&mut recv, &mut req, ctx).await? {
        m.io(req.len() as u64, 0);
        m.tick(Instant::now());
        send.write_chunk(resp.clone())
            .await
            .map_err(|e| fail("quic send")(&e))?;
        m.io(resp.len() as u64, 1);
        m.transaction();
    }
    let _ = send.finish();
    Ok(Instant::now())
}
