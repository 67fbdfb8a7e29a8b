//! I/O strategies: one module per way of moving a flow's bytes through the kernel,
//! behind one pair of traits.
//!
//! # The contract (every strategy keeps it)
//!
//! - A strategy is built once per flow, before the measured loop, by [`tx`] or
//!   [`rx`]. Building probes the kernel feature it needs and fails with
//!   [`IoError::Unsupported`] naming it; nothing is probed inside the loop.
//! - The loop calls [`Tx::send`] / [`Rx::recv`] repeatedly. Each call makes one
//!   or a few system calls and returns what moved ([`Moved`]: bytes, whole
//!   messages, system calls made). It never allocates, locks or formats: buffers,
//!   iovecs and message headers are preallocated at build time.
//! - A call that could not move anything returns `Err` of kind `WouldBlock` (or
//!   `TimedOut`) within about 200 ms, so the loop can check its deadline; blocking
//!   strategies rely on the socket timeouts, non-blocking ones wait in epoll or spin.
//! - TCP senders send the message template (the byte pattern) over and over and
//!   count whole messages; UDP senders stamp each datagram with its sequence number
//!   and send time. TCP receivers hand each received chunk to the loop's callback,
//!   UDP receivers each datagram (its first bytes and its full length), so loss,
//!   reordering and `--verify` work the same for every strategy.
//! - Every buffer a strategy sends from or receives into is a page-aligned
//!   `PageBuf`, so no result depends on where the allocator placed it.
//! - [`Tx::finish`] / [`Rx::report`] run after the loop: outstanding zero-copy
//!   completions are collected there, off the measured path.
//!
//! | strategy | TCP send | TCP receive | UDP send | UDP receive |
//! |---|---|---|---|---|
//! | copy | write; with `iperf3_io` (iperf3 clients), a TCP stream as iperf3 3.12 writes: the rest of its message with `write(2)` until it is whole or the socket is full (`Nwrite`), up to 10 a round | read of at least 1 MiB, woken per ~1 ms of data (SO_RCVLOWAT); with `iperf3_io` (iperf3 clients), as iperf3 3.12 reads: a ready stream read with `read(2)` until its message is whole or it is empty (`Nread`); the session's streams, sending and receiving, on one thread waiting in one `select(2)` before each round (`flow::run_select`) | send | recv |
//! | epoll | non-blocking write; the flow group's shared ET epoll waits ([`crate::flow::run_group`]) | non-blocking read of one message, same | same | same |
//! | busypoll | non-blocking spin, SO_BUSY_POLL | same | same | same |
//! | batch | writev of up to 1023 messages (about 1 MiB) | large reads | UDP GSO (sendmmsg without it) | UDP GRO (recvmmsg without it) |
//! | zerocopy | send(MSG_ZEROCOPY) + error-queue completions | recv(MSG_TRUNC): no copy | send(MSG_ZEROCOPY) | recv(MSG_TRUNC) of the header only |
//! | sendfile | sendfile from a memfd | — | — | — |
//! | splice | splice memfd → pipe → socket | splice socket → pipe → /dev/null | — | — |
//! | uring | SEND_ZC on trial, then 4 linked WRITE_FIXED (or SEND_ZC where it avoids the copy) per submission | multishot RECV into provided buffers | 32 linked datagrams per submission, SEND_ZC on trial as for TCP | multishot RECV |
//! | auto | races the send candidates on the live connection, keeps the winner, re-checks | races batch, splice, zerocopy (batch alone with --verify) | same as TCP | races batch, zerocopy |
//! | xdp | — | — | — | an XDP program redirects the flow's datagrams to an AF_XDP socket; frames read from its ring, `poll` when empty |

mod auto;
mod batch;
mod file;
mod plain;
mod uring;
mod xdp;
mod zerocopy;

use crate::datagram::Format;
use std::io;
use std::net::{TcpStream, UdpSocket};

use netsonde_model::result::IoReport;
use netsonde_model::spec::{IoStrategy, TestKind, TestSpec};

pub use plain::Waiter;

/// The least a TCP stream's copying receiver reads per call (more when a message is
/// larger): 1 MiB. How a receiver reads a byte stream is its own business, not
/// the sender's message size: 64-byte writes read 64 bytes at a time cost a
/// system call per message on the receiving side, which no receiving application
/// would pay. With [`crate::stream`]'s receive low-water mark it also sets how
/// much the receiver waits for per wake-up.
pub const TCP_READ: usize = 1 << 20;

/// The waiting policy of a request/response socket, which both sends and
/// receives: busypoll if either side asks for it, else epoll if either does, else
/// blocking.
pub fn rr_mode(spec: &TestSpec) -> IoStrategy {
    let both = [spec.tx_io, spec.rx_io];
    if both.contains(&IoStrategy::Busypoll) {
        IoStrategy::Busypoll
    } else if both.contains(&IoStrategy::Epoll) {
        IoStrategy::Epoll
    } else {
        IoStrategy::Copy
    }
}

/// What one call moved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Moved {
    /// Bytes.
    pub bytes: u64,
    /// Whole messages (TCP: message-size chunks sent; UDP: datagrams).
    pub messages: u64,
    /// System calls made.
    pub calls: u64,
}

/// A flow's socket, borrowed for one call.
#[derive(Debug, Clone, Copy)]
pub enum Sock<'a> {
    /// TCP.
    Tcp(&'a TcpStream),
    /// UDP (connected).
    Udp(&'a UdpSocket),
}

impl std::os::fd::AsRawFd for Sock<'_> {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        match self {
            Sock::Tcp(s) => s.as_raw_fd(),
            Sock::Udp(s) => s.as_raw_fd(),
        }
    }
}

/// Why a strategy cannot run here.
#[derive(Debug, thiserror::Error)]
pub enum IoError {
    /// The kernel (or the socket type) lacks a feature the strategy needs.
    #[error("--io {strategy} is not supported here: {feature}")]
    Unsupported {
        /// The strategy.
        strategy: IoStrategy,
        /// What is missing.
        feature: String,
    },
    /// Setting it up failed.
    #[error("setting up --io {strategy}: {source}")]
    Setup {
        /// The strategy.
        strategy: IoStrategy,
        /// The OS error.
        #[source]
        source: io::Error,
    },
}

/// Sends a flow's messages.
pub trait Tx: Send {
    /// Sends once (one or a few system calls). `seq` is the next datagram's
    /// sequence number and `tx_ns` the send time (UDP); TCP ignores both.
    fn send(&mut self, sock: Sock<'_>, seq: u64, tx_ns: u64) -> io::Result<Moved>;
    /// After the last send: collects outstanding completions; what happened.
    fn finish(&mut self, sock: Sock<'_>) -> IoReport;
    /// TCP: continue the stream from `pos` bytes into a message (another strategy
    /// sent the bytes before). Used by `auto` when it switches.
    fn set_pos(&mut self, _pos: usize) {}
    /// Whether nothing is in flight, so another strategy may take over the socket.
    fn idle(&self) -> bool {
        true
    }
    /// Zero-copy senders: whether the kernel has reported copying every send so far
    /// (and has reported some), so no copy was avoided.
    fn copied_anyway(&self) -> bool {
        false
    }
}

/// Receives a flow's bytes.
pub trait Rx: Send {
    /// Receives once. Calls `on(data, full_len)` per chunk (TCP) or datagram (UDP);
    /// `data` may be shorter than `full_len` when the strategy skips the copy.
    /// `Ok(None)` is end of stream (TCP).
    fn recv(
        &mut self,
        sock: Sock<'_>,
        on: &mut dyn FnMut(&[u8], usize),
    ) -> io::Result<Option<Moved>>;
    /// What happened.
    fn report(&mut self) -> IoReport;
}

fn setup(strategy: IoStrategy) -> impl FnOnce(io::Error) -> IoError {
    move |source| IoError::Setup { strategy, source }
}

fn unsupported(strategy: IoStrategy, feature: impl Into<String>) -> IoError {
    IoError::Unsupported {
        strategy,
        feature: feature.into(),
    }
}

fn report(strategy: IoStrategy) -> IoReport {
    IoReport {
        strategy: strategy.name().into(),
        ..IoReport::default()
    }
}

/// Whether a flow of `spec` that `sends` (else receives) is one of an iperf3
/// client's streams served as iperf3 3.12's server serves them: on one thread
/// with the session's other streams, waiting in one `select(2)` before every
/// round ([`crate::flow::run_select`]), each ready stream read or written a
/// message at a time ([`Waiter::Select`]). Its receivers
/// with `copy`, TCP or UDP; its TCP senders with `copy` (iperf3's UDP senders
/// block, paced by its timers: netsonde's pace on threads of their own).
pub fn served_as_iperf3(spec: &TestSpec, sends: bool) -> bool {
    spec.iperf3_io
        && if sends {
            spec.tx_io == IoStrategy::Copy && spec.test == TestKind::TcpStream
        } else {
            spec.rx_io == IoStrategy::Copy
        }
}

/// Builds the sending strategy for a flow. UDP datagrams carry `format`'s header;
/// iperf3's is written by the copy, epoll and busypoll strategies only.
pub fn tx(
    strategy: IoStrategy,
    sock: Sock<'_>,
    spec: &TestSpec,
    format: Format,
) -> Result<Box<dyn Tx>, IoError> {
    let size = spec.size.0 as usize;
    let plain = matches!(
        strategy,
        IoStrategy::Copy | IoStrategy::Epoll | IoStrategy::Busypoll
    );
    if format != Format::Netsonde && matches!(sock, Sock::Udp(_)) && !plain {
        return Err(unsupported(
            strategy,
            "iperf3's datagram header is written by copy, epoll and busypoll only",
        ));
    }
    Ok(match strategy {
        IoStrategy::Copy | IoStrategy::Epoll | IoStrategy::Busypoll => Box::new(
            plain::PlainTx::new(strategy, sock, size, format, served_as_iperf3(spec, true))?,
        ),
        IoStrategy::Batch => batch::tx(sock, size, !spec.no_gso)?,
        IoStrategy::Zerocopy => Box::new(zerocopy::ZcTx::new(sock, size)?),
        IoStrategy::Sendfile | IoStrategy::Splice => {
            Box::new(file::FileTx::new(strategy, sock, size)?)
        }
        IoStrategy::Uring => Box::new(uring::UringTx::new(sock, size)?),
        IoStrategy::Auto => auto::tx(sock, spec)?,
        IoStrategy::Xdp => return Err(unsupported(strategy, "xdp only receives")),
    })
}

/// Builds the receiving strategy for a flow.
pub fn rx(strategy: IoStrategy, sock: Sock<'_>, spec: &TestSpec) -> Result<Box<dyn Rx>, IoError> {
    let size = spec.size.0 as usize;
    Ok(match strategy {
        IoStrategy::Copy | IoStrategy::Epoll | IoStrategy::Busypoll => {
            Box::new(plain::PlainRx::new(strategy, sock, size, spec.iperf3_io)?)
        }
        IoStrategy::Batch => batch::rx(sock, size, None, !spec.no_gso)?,
        IoStrategy::Auto => auto::rx(sock, spec)?,
        IoStrategy::Zerocopy => Box::new(zerocopy::TruncRx::new(sock, size)),
        IoStrategy::Splice => Box::new(file::SpliceRx::new(sock)?),
        IoStrategy::Uring => Box::new(uring::UringRx::new(sock, size)?),
        IoStrategy::Sendfile => return Err(unsupported(strategy, "sendfile only sends")),
        IoStrategy::Xdp => match sock {
            Sock::Udp(u) => Box::new(xdp::XdpRx::new(u, spec)?),
            Sock::Tcp(_) => return Err(unsupported(strategy, "xdp receives UDP datagrams")),
        },
    })
}

/// A flow's receiving strategy built before the flow starts ([`rx_early`]).
pub struct Ready(Box<dyn Rx>);

impl std::fmt::Debug for Ready {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Ready")
    }
}

impl Ready {
    /// The strategy.
    pub fn into_rx(self) -> Box<dyn Rx> {
        self.0
    }
}

/// Builds now, while the flow's socket waits for the start, a receiving strategy
/// whose building takes long enough to lose the first datagrams if the flow built
/// it as it starts (both ends start at once): xdp, whose program takes 30-50 ms to
/// load and attach. `None` for the others, which the flow builds itself.
pub fn rx_early(
    strategy: IoStrategy,
    sock: Sock<'_>,
    spec: &TestSpec,
) -> Result<Option<Ready>, IoError> {
    match strategy {
        IoStrategy::Xdp => rx(strategy, sock, spec).map(|r| Some(Ready(r))),
        _ => Ok(None),
    }
}

/// What this host supports, strategy by strategy, probed on real sockets: each
/// strategy built on a loopback TCP connection (both ends) and a UDP socket;
/// xdp, which would attach to an interface, by opening an AF_XDP socket and
/// having the kernel load its program.
pub fn caps() -> Vec<(IoStrategy, Result<(), IoError>)> {
    use std::net::{TcpListener, UdpSocket};
    let probe = |s: IoStrategy| -> Result<(), IoError> {
        if s == IoStrategy::Xdp {
            return xdp::probe();
        }
        // The probe's own sockets failing is a setup failure of the strategy's
        // probe, said as such.
        let socket = |source| IoError::Setup {
            strategy: s,
            source,
        };
        let l = TcpListener::bind("127.0.0.1:0").map_err(socket)?;
        let c = TcpStream::connect(l.local_addr().map_err(socket)?).map_err(socket)?;
        let mut spec = TestSpec::new(netsonde_model::spec::TestKind::TcpStream);
        spec.size = netsonde_model::units::Bytes(1024);
        tx(s, Sock::Tcp(&c), &spec, Format::Netsonde)?;
        if s != IoStrategy::Sendfile {
            rx(s, Sock::Tcp(&c), &spec)?;
        }
        if !matches!(s, IoStrategy::Sendfile | IoStrategy::Splice) {
            let u = UdpSocket::bind("127.0.0.1:0").map_err(socket)?;
            u.connect(u.local_addr().map_err(socket)?).map_err(socket)?;
            spec.test = netsonde_model::spec::TestKind::UdpStream;
            tx(s, Sock::Udp(&u), &spec, Format::Netsonde)?;
            rx(s, Sock::Udp(&u), &spec)?;
        }
        Ok(())
    };
    IoStrategy::ALL.into_iter().map(|s| (s, probe(s))).collect()
}
