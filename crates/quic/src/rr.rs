//! `quic-rr`: request/response over QUIC, one transaction at a time per flow
//! as tcp-rr's, each a request of the QUIC performance protocol
//! ([`crate::perf`]): a new bidirectional stream carrying the response size
//! asked for, the request and its FIN, answered with the response and its
//! FIN, as HTTP/3 carries a request per stream. Each transaction's time is
//! its stream opened, its request written and its response read through
//! quinn: the user-space stack's round trip against the kernel's.

use std::time::Instant;

use bytes::Bytes;
use netsonde_engine::latency::{new_histogram, Histogram};
use netsonde_engine::meter::{FlowCtx, Meter, Phase};
use netsonde_engine::EngineError;
use quinn::{Connection, RecvStream, SendStream};

use crate::perf::{fill, message, request as perf_request, HEADER};
use crate::{fail, HANDSHAKE, WAKE};

/// Whether `recv` ends here (its FIN, which comes with a message's last
/// bytes), rather than going on.
async fn ended(recv: &mut RecvStream) -> Result<bool, EngineError> {
    match tokio::time::timeout(HANDSHAKE, recv.read_chunk(usize::MAX, true)).await {
        Ok(Ok(None)) => Ok(true),
        Ok(Ok(Some(_))) | Err(_) => Ok(false),
        Ok(Err(e)) => Err(fail("quic receive")(&e)),
    }
}

/// One transaction on `conn`: a request stream opened, `req` (a perf
/// request) written with its FIN, the response read into `resp` to its FIN.
/// `Ok(false)` when the peer ended it early.
pub(crate) async fn exchange(
    conn: &Connection,
    req: &Bytes,
    resp: &mut [u8],
    ctx: &FlowCtx,
) -> Result<bool, EngineError> {
    let (mut send, mut recv) = conn.open_bi().await.map_err(|e| fail("quic stream")(&e))?;
    send.write_chunk(req.clone())
        .await
        .map_err(|e| fail("quic send")(&e))?;
    let _ = send.finish();
    Ok(fill(&mut recv, resp, ctx).await? && ended(&mut recv).await?)
}

/// The requester: transactions until the measured interval ends, each timed.
/// When requests stopped, and the transactions' times.
pub(crate) async fn request(
    conn: &Connection,
    ctx: &FlowCtx,
    m: &mut Meter,
) -> Result<(Instant, Histogram), EngineError> {
    let (req_len, resp_len) = (ctx.spec.request_size.0, ctx.spec.response_size.0);
    let req = perf_request(resp_len, &message(req_len));
    let mut resp = vec![0u8; resp_len as usize];
    let mut hist = new_histogram();
    let end = loop {
        let start = Instant::now();
        let phase = m.tick(start);
        if phase == Phase::After || ctx.stopped() {
            break start;
        }
        if !exchange(conn, &req, &mut resp, ctx).await? {
            return Err(EngineError::PeerClosed { flow: ctx.id });
        }
        m.io(req_len, 1);
        m.io(resp_len, 0);
        if phase == Phase::Measure {
            hist.saturating_record(start.elapsed().as_nanos() as u64);
        }
        m.transaction();
    };
    Ok((end, hist))
}

/// Answers the request on `send`/`recv`: reads it into `req` (its header and
/// the request's bytes) to its FIN, then writes the bytes its header asks
/// for, from `resp`, and the FIN. The bytes answered.
pub(crate) async fn answer(
    send: &mut SendStream,
    recv: &mut RecvStream,
    req: &mut [u8],
    resp: &Bytes,
    ctx: &FlowCtx,
) -> Result<u64, EngineError> {
    if !fill(recv, req, ctx).await? || !ended(recv).await? {
        return Err(fail("quic perf")(&format!(
            "a request was not {} bytes after its header, then its end",
            req.len() - HEADER
        )));
    }
    let asked = u64::from_be_bytes(req[..HEADER].try_into().expect("8 bytes"));
    if asked > resp.len() as u64 {
        return Err(fail("quic perf")(&format!(
            "a request asked for {asked} bytes; the test's response is {}",
            resp.len()
        )));
    }
    send.write_chunk(resp.slice(..asked as usize))
        .await
        .map_err(|e| fail("quic send")(&e))?;
    let _ = send.finish();
    Ok(asked)
}

/// The responder: answers every request (its header's size, from the
/// response it holds) until the requester closes the connection (or the hard
/// deadline, or a stop).
pub(crate) async fn respond(
    conn: &Connection,
    ctx: &FlowCtx,
    m: &mut Meter,
) -> Result<Instant, EngineError> {
    let req_len = ctx.spec.request_size.0 as usize;
    let mut req = vec![0u8; HEADER + req_len];
    let resp: Bytes = message(ctx.spec.response_size.0);
    loop {
        let (mut send, mut recv) = match tokio::time::timeout(WAKE, conn.accept_bi()).await {
            Ok(Ok(s)) => s,
            // The requester's close ends the flow.
            Ok(Err(_)) => break,
            Err(_) if ctx.stopped() || Instant::now() >= ctx.clock.hard_end => break,
            Err(_) => continue,
        };
        let asked = answer(&mut send, &mut recv, &mut req, &resp, ctx).await?;
        m.io(req_len as u64, 0);
        m.tick(Instant::now());
        m.io(asked, 1);
        m.transaction();
    }
    Ok(Instant::now())
}
