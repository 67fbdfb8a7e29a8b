//! The server's settings, and what its sessions share: the busy slot, the
//! budget, the address table and the log limiter.

use std::net::SocketAddr;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use netsonde_model::spec::TestSpec;
use netsonde_proto::auth::Key;
use netsonde_proto::Deadlines;

use crate::budget::{Budget, Need};
use crate::policy::{AddressTable, Limits, LogFormat, LogLimiter, SessionLog, SessionSink};

/// Server settings.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Control address.
    pub bind: SocketAddr,
    /// Phase deadlines.
    pub deadlines: Deadlines,
    /// Abuse limits.
    pub limits: Limits,
    /// One line per session on stderr, in this format.
    pub log: LogFormat,
    /// Require clients to prove they hold this key (and seal the session).
    pub auth_key: Option<Key>,
    /// Where each finished iperf3 client's session goes as a report (no
    /// netsonde client is there to store it): both sides, this end's CPU and
    /// `TCP_INFO` included.
    pub iperf3_sessions: Option<SessionSink>,
    /// Serve iperf3 clients with netsonde's own receiver (1 MiB reads, woken per
    /// ~1 ms of data) rather than iperf3's (one `-l` read per call, woken per
    /// segment), which is the default so that swapping servers keeps the path.
    pub iperf3_fast_receiver: bool,
    /// Take jobs from an authenticated controller with this handler (`netsonde
    /// agent` gives `agent::handler`): run a test as a client against another
    /// agent and send back its report. `None`: jobs are refused.
    pub jobs: Option<crate::jobs::JobHandler>,
}

impl ServerConfig {
    /// Defaults for `addr`.
    pub fn new(bind: SocketAddr) -> ServerConfig {
        ServerConfig {
            bind,
            deadlines: Deadlines::default(),
            limits: Limits::default(),
            log: LogFormat::Text,
            auth_key: None,
            iperf3_sessions: None,
            iperf3_fast_receiver: false,
            jobs: None,
        }
    }
}

#[derive(Debug)]
pub(super) struct Shared {
    pub(super) cfg: ServerConfig,
    /// When each running test is expected to be over (the end of its measured
    /// interval, plus [`AFTER_TEST`] for results), one entry per running test.
    pub(super) running: Mutex<Vec<(u64, Instant)>>,
    /// Memory, threads and descriptors: what running sessions hold.
    pub(super) budget: Arc<Budget>,
    pub(super) next_id: AtomicUsize,
    pub(super) connections: AtomicUsize,
    pub(super) addresses: AddressTable,
    pub(super) log_limit: LogLimiter,
    /// Sessions ended, for `--metrics`.
    pub(super) tally: crate::health::Tally,
    /// Running iperf3 sessions, where their data connections go.
    pub(super) iperf3: crate::iperf3_server::Registry,
    /// The listening socket under a descriptor of its own, for the wait an
    /// iperf3 client's streams are read in (iperf3's `select` covers it);
    /// taken and closed with the listener, so the port closes with it.
    pub(super) listening: Mutex<Option<Arc<std::os::fd::OwnedFd>>>,
}

impl Shared {
    /// A server's state for `cfg`, its budget sized from the limits.
    pub(super) fn new(cfg: ServerConfig) -> Shared {
        let limits = &cfg.limits;
        let budget = Arc::new(Budget::new(
            limits.max_session_memory,
            Need {
                memory: limits.max_memory,
                // Two threads per flow at most, per running test, and one per
                // control connection.
                threads: limits.max_tests as u64 * (2 * u64::from(limits.max_parallel) + 3)
                    + limits.max_connections as u64,
                fds: crate::budget::fd_budget(limits.max_connections + limits.other_fds),
            },
        ));
        Shared {
            cfg,
            running: Mutex::new(Vec::new()),
            budget,
            next_id: AtomicUsize::new(0),
            connections: AtomicUsize::new(0),
            addresses: AddressTable::default(),
            log_limit: LogLimiter::default(),
            iperf3: Default::default(),
            tally: Default::default(),
            listening: Mutex::new(None),
        }
    }

    /// The listening socket's second descriptor, while the server listens.
    pub(super) fn listening_socket(&self) -> Option<Arc<std::os::fd::OwnedFd>> {
        let held = self.listening.lock().unwrap_or_else(|e| e.into_inner());
        held.clone()
    }

    pub(super) fn log(&self, entry: &SessionLog) {
        self.tally.count(entry.protocol, entry.outcome);
        let second = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let (write, suppressed) = self.log_limit.admit(second);
        if let Some(n) = suppressed {
            if self.cfg.log != LogFormat::Off {
                eprintln!("netsonde server: {n} session log line(s) suppressed in the last second");
            }
        }
        if !write {
            return;
        }
        if let Some(line) = entry.line(self.cfg.log) {
            eprintln!("{line}");
        }
    }
}

/// Holds a test slot; frees it when dropped, whatever the session's fate.
pub(super) struct BusyGuard(pub(super) Arc<Shared>, pub(super) u64);

/// What a test takes after its measured interval: flows drain, results travel
/// (tens of milliseconds on loopback; this leaves room for a slower path).
pub(super) const AFTER_TEST: Duration = Duration::from_millis(250);

impl BusyGuard {
    /// The test started at `at`: it is expected to end at the end of its measured
    /// interval, plus [`AFTER_TEST`].
    pub(super) fn started(&self, at: Instant, spec: &TestSpec) {
        let end = at + spec.span().as_duration() + AFTER_TEST;
        let mut r = self.0.running.lock().unwrap_or_else(|e| e.into_inner());
        for (id, e) in r.iter_mut() {
            if *id == self.1 {
                *e = end;
            }
        }
    }

    /// The test's flows ended: the session is expected to end within
    /// [`AFTER_TEST`] (its results), not at its planned end.
    pub(super) fn ending(&self) {
        let end = Instant::now() + AFTER_TEST;
        let mut r = self.0.running.lock().unwrap_or_else(|e| e.into_inner());
        for (id, e) in r.iter_mut() {
            if *id == self.1 && end < *e {
                *e = end;
            }
        }
    }
}

impl Drop for BusyGuard {
    fn drop(&mut self) {
        let mut r = self.0.running.lock().unwrap_or_else(|e| e.into_inner());
        r.retain(|(id, _)| *id != self.1);
    }
}
