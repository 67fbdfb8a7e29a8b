//! What one flow does at one end: the one mapping from the test kind, the end
//! and the flow's direction to a workload ([`Workload::of`]), and how each
//! workload runs, on a thread of its own ([`run_flow`]) or sharing one
//! ([`shared_flow`]).

use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::Arc;

use netsonde_engine::flow::Flow;
use netsonde_engine::{crr, io, rr, stream, udp, EngineError, FlowCtx, FlowOutput};
use netsonde_model::spec::{FlowDir, IoStrategy, TestKind, TestSpec};
use netsonde_proto::Token;

/// Which end runs the flows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The client.
    Client,
    /// The server.
    Server,
}

/// A flow's transport, connected and ready.
#[derive(Debug)]
pub enum FlowSocket {
    /// A TCP data connection.
    Tcp(TcpStream),
    /// A connected UDP socket.
    Udp(UdpSocket),
    /// A connected UDP socket whose receiving strategy was built before the start
    /// ([`crate::flows::udp_flow`]).
    UdpReady(UdpSocket, netsonde_engine::io::Ready),
    /// CRR requester: where to connect for each transaction.
    CrrConnect(SocketAddr, Token),
    /// CRR responder: the session's data listener.
    CrrAccept(Arc<TcpListener>, Token, std::net::IpAddr),
}

pub(crate) fn sends(end: End, dir: FlowDir) -> bool {
    matches!(
        (end, dir),
        (End::Client, FlowDir::Up) | (End::Server, FlowDir::Down)
    )
}

/// Whether a flow runs in a shared epoll thread at this end: stream flows whose
/// strategy here is epoll, and request/response flows whose waiting policy is.
pub(crate) fn shares_thread(end: End, spec: &TestSpec, dir: FlowDir) -> bool {
    if served_as_iperf3(end, spec, dir) {
        return true;
    }
    match spec.test {
        TestKind::TcpStream | TestKind::UdpStream => {
            let strategy = if sends(end, dir) {
                spec.tx_io
            } else {
                spec.rx_io
            };
            strategy == IoStrategy::Epoll
        }
        TestKind::TcpRr | TestKind::UdpRr => io::rr_mode(spec) == IoStrategy::Epoll,
        // TLS writes and reads its records on the flow's own thread; QUIC
        // runs its connection there.
        TestKind::TcpCrr
        | TestKind::TlsCrr
        | TestKind::TlsStream
        | TestKind::TlsRr
        | TestKind::QuicStream
        | TestKind::QuicRr
        | TestKind::QuicCrr => false,
    }
}

/// Whether the flow is one of an iperf3 client's streams that this server
/// serves as iperf3 3.12's server does: all of them on one thread, a wait for
/// readiness over all of them before each round of reads and writes
/// ([`netsonde_engine::flow::run_select`], [`io::served_as_iperf3`]).
pub(crate) fn served_as_iperf3(end: End, spec: &TestSpec, dir: FlowDir) -> bool {
    matches!(spec.test, TestKind::TcpStream | TestKind::UdpStream)
        && io::served_as_iperf3(spec, sends(end, dir))
}

/// What one flow does at this end, with its socket: the one mapping from the
/// test kind, this end and the flow's direction to a workload
/// ([`Workload::of`]); each way of running a flow matches it whole, so a new
/// kind or socket that is not handled fails the build.
pub(crate) enum Workload {
    TcpSender(TcpStream),
    TcpReceiver(TcpStream),
    UdpSender(UdpSocket),
    UdpReceiver(UdpSocket, Option<io::Ready>),
    TcpRequester(TcpStream),
    TcpResponder(TcpStream),
    UdpRequester(UdpSocket),
    UdpResponder(UdpSocket),
    /// A connect-request-response flow's ends; whether each connection is TLS.
    CrrRequester(SocketAddr, Token, bool),
    CrrResponder(Arc<TcpListener>, Token, std::net::IpAddr, bool),
    /// A TLS stream's sending end; whether this end is the TLS client.
    TlsSender(TcpStream, bool),
    /// Its receiving end.
    TlsReceiver(TcpStream, bool),
    /// A tls-rr flow's requester (the TLS client) and responder.
    TlsRequester(TcpStream),
    TlsResponder(TcpStream),
    /// A QUIC flow's end over its UDP socket; whether it sends (quic-stream)
    /// or requests (quic-rr), whether this end is the QUIC client.
    Quic(UdpSocket, bool, bool),
}

/// A socket that does not carry `test` (a driver fault, said as a setup error).
fn mismatch(test: TestKind, socket: &FlowSocket) -> EngineError {
    EngineError::Io {
        op: "flow setup",
        source: std::io::Error::other(format!("{test} cannot run over {socket:?}")),
    }
}

impl Workload {
    pub(crate) fn of(
        test: TestKind,
        end: End,
        dir: FlowDir,
        socket: FlowSocket,
    ) -> Result<Workload, EngineError> {
        use FlowSocket as S;
        let (sends, client) = (sends(end, dir), end == End::Client);
        Ok(match (test, socket) {
            (TestKind::TcpStream, S::Tcp(s)) if sends => Workload::TcpSender(s),
            (TestKind::TcpStream, S::Tcp(s)) => Workload::TcpReceiver(s),
            (TestKind::UdpStream, S::Udp(s)) if sends => Workload::UdpSender(s),
            (TestKind::UdpStream, S::Udp(s)) => Workload::UdpReceiver(s, None),
            (TestKind::UdpStream, S::UdpReady(s, r)) => Workload::UdpReceiver(s, Some(r)),
            (TestKind::TcpRr, S::Tcp(s)) if client => Workload::TcpRequester(s),
            (TestKind::TcpRr, S::Tcp(s)) => Workload::TcpResponder(s),
            (TestKind::UdpRr, S::Udp(s)) if client => Workload::UdpRequester(s),
            (TestKind::UdpRr, S::Udp(s)) => Workload::UdpResponder(s),
            (t @ (TestKind::TcpCrr | TestKind::TlsCrr), S::CrrConnect(a, token)) => {
                Workload::CrrRequester(a, token, t.is_tls())
            }
            (t @ (TestKind::TcpCrr | TestKind::TlsCrr), S::CrrAccept(l, token, peer)) => {
                Workload::CrrResponder(l, token, peer, t.is_tls())
            }
            (TestKind::TlsStream, S::Tcp(s)) if sends => Workload::TlsSender(s, client),
            (TestKind::TlsStream, S::Tcp(s)) => Workload::TlsReceiver(s, client),
            (TestKind::TlsRr, S::Tcp(s)) if client => Workload::TlsRequester(s),
            (TestKind::TlsRr, S::Tcp(s)) => Workload::TlsResponder(s),
            (TestKind::QuicStream, S::Udp(s)) => Workload::Quic(s, sends, client),
            (TestKind::QuicRr | TestKind::QuicCrr, S::Udp(s)) => Workload::Quic(s, client, client),
            (
                t @ (TestKind::TcpStream | TestKind::TcpRr | TestKind::TlsStream | TestKind::TlsRr),
                s @ (S::Udp(_) | S::UdpReady(..) | S::CrrConnect(..) | S::CrrAccept(..)),
            )
            | (t @ TestKind::UdpStream, s @ (S::Tcp(_) | S::CrrConnect(..) | S::CrrAccept(..)))
            | (
                t @ TestKind::UdpRr,
                s @ (S::Tcp(_) | S::UdpReady(..) | S::CrrConnect(..) | S::CrrAccept(..)),
            )
            | (
                t @ (TestKind::TcpCrr | TestKind::TlsCrr),
                s @ (S::Tcp(_) | S::Udp(_) | S::UdpReady(..)),
            )
            | (
                t @ (TestKind::QuicStream | TestKind::QuicRr | TestKind::QuicCrr),
                s @ (S::Tcp(_) | S::UdpReady(..) | S::CrrConnect(..) | S::CrrAccept(..)),
            ) => return Err(mismatch(t, &s)),
        })
    }
}

/// A flow built to share a thread. Connect-request-response flows each run on
/// a thread of their own ([`shares_thread`]).
pub(crate) fn shared_flow(work: Workload, ctx: &FlowCtx) -> Result<Box<dyn Flow>, EngineError> {
    Ok(match work {
        Workload::TcpSender(s) => Box::new(stream::TcpSender::new(s, ctx)?),
        Workload::TcpReceiver(s) => Box::new(stream::TcpReceiver::new(s, ctx)?),
        Workload::UdpSender(s) => Box::new(udp::UdpSender::new(s, ctx)?),
        Workload::UdpReceiver(s, r) => Box::new(udp::UdpReceiver::new(s, r, ctx)?),
        Workload::TcpRequester(s) => Box::new(rr::TcpRequester::new(s, ctx)?),
        Workload::TcpResponder(s) => Box::new(rr::TcpResponder::new(s, ctx)?),
        Workload::UdpRequester(s) => Box::new(rr::UdpRequester::new(s, ctx)?),
        Workload::UdpResponder(s) => Box::new(rr::UdpResponder::new(s, ctx)?),
        Workload::TlsSender(s, c) => {
            let tx = netsonde_tls::tx(&s, &ctx.spec, c)?;
            Box::new(stream::TcpSender::with(s, tx, ctx)?)
        }
        Workload::TlsReceiver(s, c) => {
            let rx = netsonde_tls::rx(&s, &ctx.spec, c)?;
            Box::new(stream::TcpReceiver::with(s, rx, ctx)?)
        }
        Workload::CrrRequester(..)
        | Workload::CrrResponder(..)
        | Workload::TlsRequester(..)
        | Workload::TlsResponder(..)
        | Workload::Quic(..) => {
            return Err(EngineError::Io {
                op: "flow setup",
                source: std::io::Error::other(
                    "crr, tls-rr and QUIC flows run on threads of their own",
                ),
            })
        }
    })
}

/// A flow on a thread of its own.
pub(crate) fn run_flow(work: Workload, ctx: &FlowCtx) -> Result<FlowOutput, EngineError> {
    match work {
        Workload::TcpSender(s) => stream::tcp_send(s, ctx),
        Workload::TcpReceiver(s) => stream::tcp_recv(s, ctx),
        Workload::UdpSender(s) => udp::udp_send(s, ctx),
        Workload::UdpReceiver(s, r) => udp::udp_recv(s, r, ctx),
        Workload::TcpRequester(s) => rr::tcp_requester(s, ctx),
        Workload::TcpResponder(s) => rr::tcp_responder(s, ctx),
        Workload::UdpRequester(s) => rr::udp_requester(s, ctx),
        Workload::UdpResponder(s) => rr::udp_responder(s, ctx),
        Workload::CrrRequester(a, t, tls) => {
            let layer = tls
                .then(|| netsonde_tls::crr_layer(&ctx.spec, true))
                .transpose()?;
            crr::crr_requester_with(a, &t, ctx, layer)
        }
        Workload::CrrResponder(l, t, peer, tls) => {
            let layer = tls
                .then(|| netsonde_tls::crr_layer(&ctx.spec, false))
                .transpose()?;
            crr::crr_responder_with(&l, &t, peer, ctx, layer)
        }
        Workload::TlsSender(s, c) => {
            let tx = netsonde_tls::tx(&s, &ctx.spec, c)?;
            stream::tcp_send_with(s, tx, ctx)
        }
        Workload::TlsReceiver(s, c) => {
            let rx = netsonde_tls::rx(&s, &ctx.spec, c)?;
            stream::tcp_recv_with(s, rx, ctx)
        }
        Workload::TlsRequester(s) => {
            let pipe = netsonde_tls::rr_pipe(&s, &ctx.spec, true)?;
            rr::tcp_requester_with(s, pipe, ctx)
        }
        Workload::TlsResponder(s) => {
            let pipe = netsonde_tls::rr_pipe(&s, &ctx.spec, false)?;
            rr::tcp_responder_with(s, pipe, ctx)
        }
        Workload::Quic(s, sends, client) => netsonde_quic::run(s, ctx, sends, client),
    }
}
