//! `quic-crr`: connect, request, response, close over QUIC, as tcp-crr and
//! tls-crr do over TCP: handshakes per second. Each transaction is a new QUIC
//! connection from the flow's endpoint (its UDP socket, tied to the peer's):
//! the handshake (a full one, or resumed with `--tls-resume`: TLS 1.3 tickets
//! in QUIC's CRYPTO frames, no 0-RTT), one perf-protocol request on a stream
//! ([`crate::rr::exchange`]), and the client's CONNECTION_CLOSE. Its time is
//! all of that, from the first Initial to the response's FIN, as tcp-crr's is
//! from connect() to the last byte. The server's endpoint accepts one
//! connection at a time, answers its request and waits for the client's close
//! (at most [`FIRST_BYTES`]), so the close, like TIME_WAIT in tcp-crr, is the
//! client's; a connection whose handshake or request fails is dropped
//! unanswered, as tcp-crr drops one.

use std::time::{Duration, Instant};

use bytes::Bytes;
use netsonde_engine::crr::FIRST_BYTES;
use netsonde_engine::latency::new_histogram;
use netsonde_engine::meter::{FlowCtx, Meter, Phase};
use netsonde_engine::{EngineError, FlowOutput};
use netsonde_model::result::{IoReport, Role};
use quinn::{ConnectionStats, Endpoint, VarInt};

use crate::perf::{message, request as perf_request, HEADER};
use crate::{fail, rr, Prepared, HANDSHAKE, WAKE};

/// What a flow's connections added up to, for its note.
#[derive(Debug, Default)]
struct Totals {
    connections: u64,
    handshake_ns: u64,
    datagrams_out: u64,
    datagrams_in: u64,
    lost: u64,
}

impl Totals {
    fn add(&mut self, handshake: Duration, s: &ConnectionStats) {
        self.connections += 1;
        self.handshake_ns += handshake.as_nanos() as u64;
        self.datagrams_out += s.udp_tx.datagrams;
        self.datagrams_in += s.udp_rx.datagrams;
        self.lost += s.path.lost_packets;
    }
}

/// A quic-crr flow on `p`'s endpoint: the requester at the QUIC client, the
/// responder at the server.
pub(crate) async fn flow(p: Prepared, ctx: &FlowCtx) -> Result<FlowOutput, EngineError> {
    let mut m = Meter::new(ctx);
    let mut totals = Totals::default();
    let client = p.dial.is_some();
    let (end, latency) = match &p.dial {
        Some((cfg, peer)) => {
            let (end, hist) = request(&p.ep, cfg, *peer, ctx, &mut m, &mut totals).await?;
            (end, Some(hist))
        }
        None => (respond(&p.ep, ctx, &mut m, &mut totals).await?, None),
    };
    let role = if client {
        Role::Requester
    } else {
        Role::Responder
    };
    let mut result = m.finish(end, ctx.id, ctx.dir, role);
    let mean_ms = totals.handshake_ns as f64 / totals.connections.max(1) as f64 / 1e6;
    let crypto = netsonde_tls::take_crypto();
    // A full handshake signs at the server and checks at the client; a
    // resumed one does neither.
    let full = crypto.signatures.min(totals.connections);
    result.io = Some(IoReport {
        strategy: "quic".into(),
        note: Some(format!(
            "QUIC v1 (quinn 0.11, TLS 1.3 by rustls, ring): {} connections ({full} full \
             handshakes, {} resumed), each a handshake ({mean_ms:.2} ms on average{}), one \
             request stream and the client's close; socket buffers {} B receive, {} B send; \
             {} UDP datagrams sent, {} received; {} packets lost",
            totals.connections,
            totals.connections - full,
            if client {
                ""
            } else {
                " from Initial to accepted"
            },
            p.buffers.0,
            p.buffers.1,
            totals.datagrams_out,
            totals.datagrams_in,
            totals.lost
        )),
        crypto: Some(crypto),
        ..IoReport::default()
    });
    // Closes still draining go out before the endpoint does.
    let _ = tokio::time::timeout(Duration::from_millis(200), p.ep.wait_idle()).await;
    Ok(FlowOutput { result, latency })
}

/// The requester: a connection per transaction until the measured interval
/// ends, each timed from its first packet to its response's end.
async fn request(
    ep: &Endpoint,
    cfg: &quinn::ClientConfig,
    peer: std::net::SocketAddr,
    ctx: &FlowCtx,
    m: &mut Meter,
    totals: &mut Totals,
) -> Result<(Instant, netsonde_engine::latency::Histogram), EngineError> {
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
        let connecting = ep
            .connect_with(cfg.clone(), peer, "netsonde")
            .map_err(|e| fail("quic connect")(&e))?;
        let conn = match tokio::time::timeout(HANDSHAKE, connecting).await {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => return Err(fail("quic handshake")(&e)),
            Err(_) => return Err(fail("quic handshake")(&"no answer in 5 s")),
        };
        let shook = start.elapsed();
        if !rr::exchange(&conn, &req, &mut resp, ctx).await? {
            return Err(EngineError::PeerClosed { flow: ctx.id });
        }
        conn.close(VarInt::from_u32(0), b"done");
        m.io(req_len, 1);
        m.io(resp_len, 0);
        if phase == Phase::Measure {
            hist.saturating_record(start.elapsed().as_nanos() as u64);
        }
        totals.add(shook, &conn.stats());
        m.transaction();
    };
    Ok((end, hist))
}

/// The responder: accepts a connection at a time and answers its one request,
/// until a second past the end (or a stop).
async fn respond(
    ep: &Endpoint,
    ctx: &FlowCtx,
    m: &mut Meter,
    totals: &mut Totals,
) -> Result<Instant, EngineError> {
    let req_len = ctx.spec.request_size.0 as usize;
    let mut req = vec![0u8; HEADER + req_len];
    let resp: Bytes = message(ctx.spec.response_size.0);
    let give_up = ctx.clock.end + Duration::from_secs(1);
    loop {
        let now = Instant::now();
        m.tick(now);
        if now >= give_up || ctx.stopped() {
            break;
        }
        let incoming = match tokio::time::timeout(WAKE, ep.accept()).await {
            Ok(Some(i)) => i,
            Ok(None) => break,
            Err(_) => continue,
        };
        let start = Instant::now();
        let Ok(connecting) = incoming.accept() else {
            continue;
        };
        let until = HANDSHAKE.min(give_up.saturating_duration_since(start));
        let Ok(Ok(conn)) = tokio::time::timeout(until, connecting).await else {
            continue;
        };
        let shook = start.elapsed();
        let Ok(Ok((mut send, mut recv))) =
            tokio::time::timeout(FIRST_BYTES, conn.accept_bi()).await
        else {
            continue;
        };
        let Ok(asked) = rr::answer(&mut send, &mut recv, &mut req, &resp, ctx).await else {
            continue;
        };
        m.io(req_len as u64, 0);
        m.io(asked, 1);
        // The client closes first; one that does not, within FIRST_BYTES, does
        // not hold the responder.
        let _ = tokio::time::timeout(FIRST_BYTES, conn.closed()).await;
        totals.add(shook, &conn.stats());
        m.transaction();
    }
    Ok(Instant::now())
}
