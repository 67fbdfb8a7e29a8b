//! The server: an accept loop with one thread per control connection.
//!
//! **One test at a time.** Concurrent tests on one host disturb each other's
//! figures, so the server runs a single test and answers any other client that asks
//! meanwhile with `Error { code: busy, retry_after_ms }` (the time the running test
//! has left), at once. Control connections themselves are served concurrently, so a
//! silent or slow client never blocks another: it only holds a handshake thread
//! until its phase deadline, and never the busy slot, which is taken only once a
//! valid setup arrives and is released by a guard on every path out of a session.
//!
//! **Budgets.** A setup reserves what its test will hold (buffer memory, threads,
//! descriptors: [`crate::budget`]) before any socket is opened, and is refused by
//! name above the server's limits; the reservation, the data listener and its
//! acceptor thread go as soon as the session ends, however it ends.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use netsonde_proto::ErrorCode;
use rustix::io::Errno;

use crate::policy::SessionLog;

mod config;
mod session;

pub use crate::policy::SessionSink;
pub use config::ServerConfig;
use config::Shared;
use session::{listen, serve_connection};

/// Why the server could not run.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// Binding the control port failed.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// Accepting failed in a way that is not per-connection.
    #[error("accept failed: {0}")]
    Accept(#[source] std::io::Error),
    /// The configuration cannot serve any test.
    #[error("{0}")]
    Config(String),
}

/// Tells a connection we will not serve it why, in one unsealed error frame (a
/// client reads it in place of the server's hello), and closes it.
fn refuse_connection(mut stream: TcpStream, reason: &str) {
    let frame = netsonde_proto::Frame::Message(netsonde_proto::Message::Error {
        code: ErrorCode::Busy,
        message: reason.to_string(),
        retry_after_ms: Some(1000),
    });
    let _ = stream.set_write_timeout(Some(Duration::from_millis(200)));
    let _ = std::io::Write::write_all(&mut stream, &frame.to_bytes());
}

/// accept() errors that concern one connection or pass with time.
const TRANSIENT_ACCEPT: [Errno; 5] = [
    Errno::CONNABORTED,
    Errno::MFILE,
    Errno::NFILE,
    Errno::NOBUFS,
    Errno::NOMEM,
];

/// A bound server.
#[derive(Debug)]
pub struct Server {
    listener: TcpListener,
    shared: Arc<Shared>,
}

/// A server running on a background thread; stopped and joined on drop.
#[derive(Debug)]
pub struct ServerHandle {
    /// Where it listens.
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Result<(), ServerError>>>,
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Server {
    /// Binds the control port; refuses limits under which no test could run.
    pub fn bind(cfg: ServerConfig) -> Result<Server, ServerError> {
        // Before any session thread exists: the address space the threads reserve
        // stays within what the memory budget assumes.
        netsonde_engine::limit_malloc_arenas();
        cfg.limits
            .validate()
            .map_err(|e| ServerError::Config(e.to_string()))?;
        if cfg.deadlines.hello.0 == 0
            || cfg.deadlines.setup.0 == 0
            || cfg.deadlines.connect.0 == 0
            || cfg.deadlines.done.0 == 0
        {
            return Err(ServerError::Config(
                "--phase-timeout must be above 0".into(),
            ));
        }
        let addr = cfg.bind;
        let listener = match listen(addr, 128, None) {
            // A host without IPv6: the dual-stack default falls back to IPv4's.
            Err(e)
                if addr.ip() == IpAddr::V6(Ipv6Addr::UNSPECIFIED)
                    && Errno::from_io_error(&e) == Some(Errno::AFNOSUPPORT) =>
            {
                let v4 = SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), addr.port());
                listen(v4, 128, None).map_err(|source| ServerError::Bind { addr: v4, source })?
            }
            r => r.map_err(|source| ServerError::Bind { addr, source })?,
        };
        let listener: TcpListener = listener.into();
        let shared = Shared::new(cfg);
        *shared.listening.lock().unwrap_or_else(|e| e.into_inner()) =
            listener.as_fd().try_clone_to_owned().ok().map(Arc::new);
        Ok(Server {
            listener,
            shared: Arc::new(shared),
        })
    }

    /// Reads this server's health (sessions ended, tests running, the budget
    /// held) from any thread, for `--metrics`.
    pub fn health(&self) -> crate::health::HealthProbe {
        let shared = self.shared.clone();
        std::sync::Arc::new(move || {
            let running = shared
                .running
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .len();
            shared.tally.snapshot(
                running,
                shared.connections.load(Ordering::Relaxed),
                shared.budget.held(),
                shared.budget.total(),
            )
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.listener.local_addr().unwrap_or(self.shared.cfg.bind)
    }

    /// Serves until `stop` is set, then drains: stops accepting, lets running
    /// sessions finish (each is bounded by its own deadlines) and returns.
    pub fn run(self, stop: Arc<AtomicBool>) -> Result<(), ServerError> {
        let shared = &self.shared;
        let limits = &shared.cfg.limits;
        // The order connections were accepted in (iperf3's streams are told
        // apart by it).
        let mut accepted = 0u64;
        while !stop.load(Ordering::Relaxed) {
            let (stream, peer) = match self.listener.accept() {
                // An IPv4 client of a dual-stack listener is an IPv4 peer.
                Ok((s, p)) => (s, SocketAddr::new(p.ip().to_canonical(), p.port())),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock
                            | std::io::ErrorKind::TimedOut
                            | std::io::ErrorKind::Interrupted
                    ) =>
                {
                    continue
                }
                Err(e)
                    if e.raw_os_error().is_some_and(|n| {
                        TRANSIENT_ACCEPT.iter().any(|t| t.raw_os_error() == n)
                    }) =>
                {
                    // Per-connection or transient: back off briefly, keep serving.
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                }
                Err(e) => return Err(ServerError::Accept(e)),
            };
            // Past the per-address cap a connection is still let in, to see
            // whether it is a running iperf3 session's stream (its client opens
            // them on the control port): an admitted session's connections are
            // never refused by the cap; anything else is, by its thread.
            let mut over_cap = None;
            let refuse = if shared.connections.load(Ordering::Acquire) >= limits.max_connections {
                Some(format!(
                    "server busy: {} connections already",
                    limits.max_connections
                ))
            } else {
                if !shared.addresses.enter(peer.ip(), limits.max_per_address) {
                    shared.addresses.force_enter(peer.ip());
                    over_cap = Some(format!(
                        "too many connections from {} (at most {})",
                        peer.ip(),
                        limits.max_per_address
                    ));
                }
                None
            };
            if let Some(reason) = refuse {
                refuse_connection(stream, &reason);
                shared.log(&SessionLog {
                    peer: peer.to_string(),
                    outcome: "refused",
                    reason,
                    ..SessionLog::default()
                });
                continue;
            }
            shared.connections.fetch_add(1, Ordering::AcqRel);
            let shared = self.shared.clone();
            let seq = accepted;
            accepted += 1;
            std::thread::spawn(move || {
                let started = Instant::now();
                // An iperf3 stream handed to its session has nothing to log.
                if let Some(mut entry) = serve_connection(stream, peer, seq, &shared, over_cap) {
                    entry.peer = peer.to_string();
                    entry.seconds = started.elapsed().as_secs_f64();
                    shared.log(&entry);
                }
                shared.addresses.leave(peer.ip());
                shared.connections.fetch_sub(1, Ordering::AcqRel);
            });
        }
        // Drain: every session ends by its own deadlines; wait for them.
        drop(self.listener);
        drop(
            self.shared
                .listening
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take(),
        );
        let drain_until = Instant::now()
            + limits.max_duration.as_duration()
            + self.shared.cfg.deadlines.grace.as_duration()
            + Duration::from_secs(30);
        while self.shared.connections.load(Ordering::Acquire) > 0 && Instant::now() < drain_until {
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }

    /// Control connections being served now.
    pub fn active(&self) -> usize {
        self.shared.connections.load(Ordering::Acquire)
    }

    /// Runs on a background thread.
    pub fn spawn(self) -> ServerHandle {
        let addr = self.local_addr();
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        ServerHandle {
            addr,
            stop,
            thread: Some(std::thread::spawn(move || self.run(s))),
        }
    }
}

#[cfg(test)]
mod tests;
