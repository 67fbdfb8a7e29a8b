//! The QUIC performance protocol (draft-banks-quic-performance-00), which
//! every netsonde QUIC flow speaks, so that its client can measure another
//! stack's perf server (quinn's `perf`, msquic's `secnetperf`, picoquic's
//! `quicperf`) as it measures a netsonde server.
//!
//! A request is a bidirectional stream the client opens: 8 bytes (network
//! order) saying how many bytes the server is to send back, the client's
//! upload, its FIN; the server reads the upload to its FIN and then sends the
//! bytes asked for and its FIN. So a quic-stream the client sends is one
//! request asking for nothing back (the server's empty answer confirms it
//! read every byte); one the server sends asks for the test's volume, or for
//! [`ENDLESS`] bytes and stops reading when its time is up; a quic-rr
//! transaction is one request of the request size asking for the response
//! size.

use std::cell::RefCell;
use std::time::{Duration, Instant};

use bytes::{BufMut, Bytes, BytesMut};
use futures_util::future::try_join_all;
use netsonde_engine::meter::{FlowCtx, Meter, Phase};
use netsonde_engine::verify::Verifier;
use netsonde_engine::EngineError;
use quinn::{Connection, RecvStream, SendStream, VarInt};

use crate::{fail, HANDSHAKE, WAKE};

/// The request's header: the bytes the server is to send back.
pub(crate) const HEADER: usize = 8;
/// A download with no end of its own: the client stops it.
pub(crate) const ENDLESS: u64 = u64::MAX;
/// How long a client's download goes on past the end for the server's FIN
/// (a netsonde server stops at the end; another stack's sends until stopped).
const FIN_WAIT: Duration = Duration::from_secs(1);

/// A request's header followed by `body`.
pub(crate) fn request(asked: u64, body: &[u8]) -> Bytes {
    let mut b = BytesMut::with_capacity(HEADER + body.len());
    b.put_u64(asked);
    b.put_slice(body);
    b.freeze()
}

/// The test's message: its pattern, `len` bytes.
pub(crate) fn message(len: u64) -> Bytes {
    let mut m = vec![0u8; len as usize];
    netsonde_engine::fill_pattern(&mut m);
    Bytes::from(m)
}

/// Fills `buf` from `stream`, looking at the clock and the stop flag every
/// [`WAKE`]: `Ok(false)` when the stream ended (or the flow must) before it
/// was full. Cancel-safe reads: a wake-up loses nothing.
pub(crate) async fn fill(
    stream: &mut RecvStream,
    buf: &mut [u8],
    ctx: &FlowCtx,
) -> Result<bool, EngineError> {
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

/// Reads `stream` to its FIN (or the hard deadline), discarding: a request's
/// tail, or an answer that should be empty. How many bytes there were.
async fn drain(stream: &mut RecvStream, ctx: &FlowCtx) -> Result<u64, EngineError> {
    let mut n = 0u64;
    let left = ctx.clock.hard_end.saturating_duration_since(Instant::now());
    let read = async {
        while let Some(c) = stream
            .read_chunk(usize::MAX, true)
            .await
            .map_err(|e| fail("quic receive")(&e))?
        {
            n += c.bytes.len() as u64;
        }
        Ok::<_, EngineError>(())
    };
    match tokio::time::timeout(left, read).await {
        Ok(r) => r.map(|()| n),
        Err(_) => Ok(n),
    }
}

/// One flow's meter, shared by its streams (they run as futures of one task
/// on the flow's thread, each borrowing it between awaits).
type Shared<'a> = RefCell<&'a mut Meter>;

/// Writes the message until the measured interval ends (or the flow's volume
/// is sent, or the test is stopped), paced to this stream's share of
/// `--rate` (`streams` share it). When sending stopped.
async fn pump_out(
    send: &mut SendStream,
    ctx: &FlowCtx,
    m: &Shared<'_>,
    streams: u32,
) -> Result<Instant, EngineError> {
    let msg = message(ctx.spec.size.0.max(1));
    let len = msg.len() as u64;
    let clock = ctx.clock;
    let volume = ctx.spec.stream_volume().unwrap_or(u64::MAX);
    let ns_per_byte = ctx.spec.rate.map(|r| 8e9 * f64::from(streams) / r.bps());
    let mut sent = 0u64;
    loop {
        let now = clock.now_ns();
        {
            let mut m = m.borrow_mut();
            if m.tick_ns(now) == Phase::After || ctx.stopped() || m.measured_bytes() >= volume {
                break;
            }
        }
        if let Some(p) = ns_per_byte {
            let due = (sent as f64 * p) as u64;
            if due > now {
                tokio::time::sleep(Duration::from_nanos(
                    (due - now).min(WAKE.as_nanos() as u64),
                ))
                .await;
                continue;
            }
        }
        send.write_chunk(msg.clone())
            .await
            .map_err(|e| fail("quic send")(&e))?;
        sent += len;
        m.borrow_mut().moved(len, 1, 1);
    }
    Ok(Instant::now())
}

/// Reads `recv` in order to its FIN (or `until`, ns on the test's clock, or
/// the hard deadline, or a stop), counting and checking what comes. When the
/// last bytes came, and the bytes `--verify` found damaged.
async fn pump_in(
    recv: &mut RecvStream,
    ctx: &FlowCtx,
    m: &Shared<'_>,
    until: u64,
) -> Result<(Instant, Option<u64>), EngineError> {
    let clock = ctx.clock;
    let mut verifier = ctx.spec.verify.then(|| Verifier::new(ctx.spec.size.0));
    let mut last = 0u64;
    loop {
        match tokio::time::timeout(WAKE, recv.read_chunk(usize::MAX, true)).await {
            Ok(Ok(Some(c))) => {
                let now = clock.now_ns();
                {
                    let mut m = m.borrow_mut();
                    m.tick_ns(now);
                    m.moved(c.bytes.len() as u64, 0, 1);
                }
                if let Some(v) = &mut verifier {
                    v.stream(&c.bytes);
                }
                last = now;
                if now >= until {
                    break;
                }
            }
            Ok(Ok(None)) => break,
            Ok(Err(e)) => return Err(fail("quic receive")(&e)),
            Err(_) => {
                let now = clock.now_ns();
                {
                    let mut m = m.borrow_mut();
                    m.tick_ns(now);
                    m.call();
                }
                if ctx.stopped() || now >= clock.hard_ns.min(until) {
                    break;
                }
            }
        }
    }
    Ok((clock.instant(last), verifier.map(|v| v.errors)))
}

/// Waits for the peer to close the connection (or the hard deadline): what
/// this end sent is all delivered by then.
async fn closed(conn: &Connection, ctx: &FlowCtx) {
    let left = ctx.clock.hard_end.saturating_duration_since(Instant::now());
    let _ = tokio::time::timeout(left, conn.closed()).await;
}

/// The streams' ends together: the last one's end, and the damaged bytes
/// `--verify` found on all of them.
fn together(each: Vec<(Instant, Option<u64>)>) -> (Instant, Option<u64>) {
    let end = each.iter().map(|e| e.0).max().unwrap_or_else(Instant::now);
    let damaged = each.iter().filter_map(|e| e.1).reduce(|a, b| a + b);
    (end, damaged)
}

/// The client sends: a request per stream (`--quic-streams`, all at once on
/// the one connection), each asking for nothing back, its upload and FIN,
/// and the server's empty answer (it has read every byte). When sending
/// stopped.
pub(crate) async fn upload(
    conn: &Connection,
    ctx: &FlowCtx,
    m: &mut Meter,
) -> Result<Instant, EngineError> {
    let n = ctx.spec.quic_streams();
    // Every request goes out before any upload: a stream that began first
    // would take all the connection's send buffer, and the others' requests
    // would wait behind it.
    let mut streams = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let (mut send, recv) = conn.open_bi().await.map_err(|e| fail("quic stream")(&e))?;
        send.write_chunk(request(0, &[]))
            .await
            .map_err(|e| fail("quic send")(&e))?;
        streams.push((send, recv));
    }
    let m = RefCell::new(m);
    let ends = try_join_all(
        streams
            .into_iter()
            .map(|(send, recv)| upload_one(send, recv, ctx, &m, n)),
    )
    .await?;
    Ok(ends.into_iter().max().unwrap_or_else(Instant::now))
}

async fn upload_one(
    mut send: SendStream,
    mut recv: RecvStream,
    ctx: &FlowCtx,
    m: &Shared<'_>,
    streams: u32,
) -> Result<Instant, EngineError> {
    let end = pump_out(&mut send, ctx, m, streams).await?;
    let _ = send.finish();
    let extra = drain(&mut recv, ctx).await?;
    if extra > 0 {
        return Err(fail("quic perf")(&format!(
            "the server answered {extra} bytes to a request for none"
        )));
    }
    Ok(end)
}

/// The client receives: a request per stream for its share of the test's
/// volume (or no end), and the server's bytes until each stream's FIN or a
/// second past the end.
pub(crate) async fn download(
    conn: &Connection,
    ctx: &FlowCtx,
    m: &mut Meter,
) -> Result<(Instant, Option<u64>), EngineError> {
    let n = ctx.spec.quic_streams();
    let m = RefCell::new(m);
    let asked = |i: u32| match ctx.spec.stream_volume() {
        Some(v) => v / u64::from(n) + u64::from(u64::from(i) < v % u64::from(n)),
        None => ENDLESS,
    };
    let each = try_join_all((0..n).map(|i| download_one(conn, ctx, &m, asked(i)))).await?;
    Ok(together(each))
}

async fn download_one(
    conn: &Connection,
    ctx: &FlowCtx,
    m: &Shared<'_>,
    asked: u64,
) -> Result<(Instant, Option<u64>), EngineError> {
    let (mut send, mut recv) = conn.open_bi().await.map_err(|e| fail("quic stream")(&e))?;
    send.write_chunk(request(asked, &[]))
        .await
        .map_err(|e| fail("quic send")(&e))?;
    let _ = send.finish();
    let until = ctx.clock.end_ns + FIN_WAIT.as_nanos() as u64;
    let r = pump_in(&mut recv, ctx, m, until).await?;
    let _ = recv.stop(VarInt::from_u32(0));
    Ok(r)
}

/// The server's end of a quic-stream: the client's requests (one per
/// stream), then each upload read to its FIN and an empty answer (this end
/// receives), or the test's bytes sent on each until the end (it sends);
/// then the client's close.
pub(crate) async fn serve(
    conn: &Connection,
    ctx: &FlowCtx,
    m: &mut Meter,
    sends: bool,
) -> Result<(Instant, Option<u64>), EngineError> {
    let n = ctx.spec.quic_streams();
    let mut streams = Vec::with_capacity(n as usize);
    for _ in 0..n {
        streams.push(
            tokio::time::timeout(HANDSHAKE, conn.accept_bi())
                .await
                .map_err(|_| fail("quic stream")(&"none opened in 5 s"))?
                .map_err(|e| fail("quic stream")(&e))?,
        );
    }
    let m = RefCell::new(m);
    let each = try_join_all(
        streams
            .into_iter()
            .map(|(send, recv)| serve_one(send, recv, ctx, &m, sends, n)),
    )
    .await?;
    closed(conn, ctx).await;
    Ok(together(each))
}

async fn serve_one(
    mut send: SendStream,
    mut recv: RecvStream,
    ctx: &FlowCtx,
    m: &Shared<'_>,
    sends: bool,
    streams: u32,
) -> Result<(Instant, Option<u64>), EngineError> {
    let mut header = [0u8; HEADER];
    if !fill(&mut recv, &mut header, ctx).await? {
        return Err(fail("quic perf")(&"the request ended before its header"));
    }
    let r = if sends {
        drain(&mut recv, ctx).await?;
        (pump_out(&mut send, ctx, m, streams).await?, None)
    } else {
        pump_in(&mut recv, ctx, m, u64::MAX).await?
    };
    let _ = send.finish();
    Ok(r)
}
