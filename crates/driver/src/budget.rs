//! What a session may take from the server: memory, threads and file descriptors.
//!
//! A session's needs are computed from its spec at setup ([`Need::of`]), checked
//! against a per-session memory limit and against what is left of the server-wide
//! budget, and reserved before any buffer or socket exists. The [`Reservation`] is
//! released when it is dropped, on every path out of the session. So the server's
//! footprint is bounded by its configuration, never by what a peer asks for.
//!
//! The server-wide budget defaults to what this process may really use: half the
//! smallest of physical memory, the cgroup's `memory.max` and `RLIMIT_AS` (at most
//! 1 GiB), and the descriptors `RLIMIT_NOFILE` leaves after a reserve for control
//! connections.

use std::sync::{Arc, Mutex};

use netsonde_engine::footprint;
use netsonde_model::spec::{FlowDir, TestSpec};
use netsonde_model::units::Bytes;

/// What one session needs at the server end.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Need {
    /// Buffer memory and thread stacks.
    pub memory: Bytes,
    /// Threads: one per flow (fewer when flows share a thread), the data acceptor
    /// and the CPU sampler.
    pub threads: u64,
    /// Descriptors: one per flow, the data listener, and a connection in setup.
    pub fds: u64,
}

impl Need {
    /// The server end's needs for `spec`.
    pub fn of(spec: &TestSpec) -> Need {
        let flows = spec.flows();
        let memory = flows
            .iter()
            .map(|&(_, dir)| {
                // The server sends the flows that go down, and answers requests.
                let send = dir == FlowDir::Down;
                footprint::flow_bound(spec, send).0
            })
            .sum();
        let n = flows.len() as u64;
        let crr_extra = if spec.test.is_crr() { n } else { 0 };
        // A load-latency test: three answering threads and the TCP_INFO reader;
        // the kept probe connection, its UDP socket, a new connection at a time,
        // and the reader's copies of the sending sockets.
        let (probe_threads, probe_fds) = if spec.probe.is_some() {
            (4, 3 + n)
        } else {
            (0, 0)
        };
        Need {
            memory: Bytes(memory),
            threads: n + 2 + probe_threads,
            fds: n + crr_extra + 2 + probe_fds,
        }
    }

    fn plus(self, o: Need) -> Need {
        Need {
            memory: Bytes(self.memory.0 + o.memory.0),
            threads: self.threads + o.threads,
            fds: self.fds + o.fds,
        }
    }

    fn minus(self, o: Need) -> Need {
        Need {
            memory: Bytes(self.memory.0.saturating_sub(o.memory.0)),
            threads: self.threads.saturating_sub(o.threads),
            fds: self.fds.saturating_sub(o.fds),
        }
    }
}

/// The server-wide budget and what running sessions hold of it.
#[derive(Debug)]
pub struct Budget {
    /// The most one session may reserve.
    session_memory: Bytes,
    /// The most all sessions together may hold.
    total: Need,
    held: Mutex<Need>,
}

/// A session's share of the budget, given back when dropped.
#[derive(Debug)]
pub struct Reservation {
    budget: Arc<Budget>,
    need: Need,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let mut held = self.budget.held.lock().unwrap_or_else(|e| e.into_inner());
        *held = held.minus(self.need);
    }
}

/// Why a test cannot have what it needs: what the client is told.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BudgetError {
    /// More buffer memory than one session may take.
    #[error("server limit: a session may use at most {max} of buffer memory (--max-session-memory); this test needs {need} (message sizes x flows); use smaller messages or fewer flows")]
    Session {
        /// `--max-session-memory`.
        max: Bytes,
        /// What the test needs.
        need: Bytes,
    },
    /// More than what running tests leave.
    #[error("server limit: at most {what}; this test needs {} of memory, {} threads, {} descriptors", need.memory, need.threads, need.fds)]
    Total {
        /// The resource that ran out.
        what: Scarce,
        /// What the test needs.
        need: Need,
    },
}

/// The resource a test found too little of.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum Scarce {
    /// Buffer memory.
    #[error("{total} of buffer memory (--max-memory), {held} held by running tests")]
    Memory {
        /// The server's total.
        total: Bytes,
        /// Held by running tests.
        held: Bytes,
    },
    /// Threads.
    #[error("{total} threads, {held} held by running tests")]
    Threads {
        /// The server's total.
        total: u64,
        /// Held by running tests.
        held: u64,
    },
    /// File descriptors.
    #[error(
        "{total} file descriptors (RLIMIT_NOFILE less a reserve), {held} held by running tests"
    )]
    Fds {
        /// The server's total.
        total: u64,
        /// Held by running tests.
        held: u64,
    },
}

impl Budget {
    /// A budget of `total`, of which one session may take `session_memory`.
    pub fn new(session_memory: Bytes, total: Need) -> Budget {
        Budget {
            session_memory,
            total,
            held: Mutex::new(Need::default()),
        }
    }

    /// Reserves `need`, or says which limit it is over.
    pub fn reserve(self: &Arc<Self>, need: Need) -> Result<Reservation, BudgetError> {
        if need.memory > self.session_memory {
            return Err(BudgetError::Session {
                max: self.session_memory,
                need: need.memory,
            });
        }
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let after = held.plus(need);
        let over = if after.memory > self.total.memory {
            Some(Scarce::Memory {
                total: self.total.memory,
                held: held.memory,
            })
        } else if after.threads > self.total.threads {
            Some(Scarce::Threads {
                total: self.total.threads,
                held: held.threads,
            })
        } else if after.fds > self.total.fds {
            Some(Scarce::Fds {
                total: self.total.fds,
                held: held.fds,
            })
        } else {
            None
        };
        if let Some(what) = over {
            return Err(BudgetError::Total { what, need });
        }
        *held = after;
        Ok(Reservation {
            budget: self.clone(),
            need,
        })
    }

    /// The most all sessions together may hold.
    pub fn total(&self) -> Need {
        self.total
    }

    /// What running sessions hold now.
    pub fn held(&self) -> Need {
        *self.held.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Memory this process may use: the smallest of physical memory, the cgroup's
/// `memory.max` and `RLIMIT_AS`, where each is known.
pub fn memory_ceiling() -> Option<Bytes> {
    let physical = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        m.lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map(|kib| kib * 1024)
    });
    let cgroup = std::fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|c| {
            c.lines()
                .find_map(|l| l.strip_prefix("0::"))
                .map(str::to_string)
        })
        .and_then(|path| {
            std::fs::read_to_string(format!("/sys/fs/cgroup{}/memory.max", path.trim())).ok()
        })
        .and_then(|v| v.trim().parse::<u64>().ok());
    // `None` is no limit.
    let address_space = rustix::process::getrlimit(rustix::process::Resource::As).current;
    [physical, cgroup, address_space]
        .into_iter()
        .flatten()
        .min()
        .map(Bytes)
}

/// The default server-wide memory budget: half of [`memory_ceiling`], at most
/// 1 GiB.
pub fn default_memory() -> Bytes {
    let cap = Bytes::GIB;
    Bytes(memory_ceiling().map_or(cap, |c| (c.0 / 2).min(cap)))
}

/// Descriptors the sessions may hold: `RLIMIT_NOFILE` less a reserve for the
/// control connections (`connections`) and the process's own.
pub fn fd_budget(connections: usize) -> u64 {
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .unwrap_or(u64::MAX);
    limit.saturating_sub(connections as u64 + 32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use netsonde_model::spec::{Direction, TestKind};

    fn budget(session: u64, total: u64) -> Arc<Budget> {
        Arc::new(Budget::new(
            Bytes(session),
            Need {
                memory: Bytes(total),
                threads: 100,
                fds: 100,
            },
        ))
    }

    #[test]
    fn a_session_over_its_memory_limit_is_refused_by_name() {
        let mut s = TestSpec::new(TestKind::TcpRr);
        s.request_size = Bytes(64 * Bytes::MIB);
        s.response_size = Bytes(64 * Bytes::MIB);
        s.parallel = 64;
        let need = Need::of(&s);
        assert!(need.memory.0 > 64 * 128 * Bytes::MIB);
        let b = budget(512 * Bytes::MIB, Bytes::GIB);
        let e = b.reserve(need).unwrap_err();
        assert!(e.to_string().contains("--max-session-memory"), "{e}");
        assert_eq!(b.held(), Need::default());
    }

    #[test]
    fn reservations_add_up_and_are_given_back() {
        let mut s = TestSpec::new(TestKind::TcpStream);
        s.direction = Direction::Bidir;
        s.parallel = 4;
        let need = Need::of(&s);
        assert_eq!(need.threads, 10);
        let b = budget(need.memory.0, need.memory.0 * 2);
        let one = b.reserve(need).unwrap();
        let two = b.reserve(need).unwrap();
        assert!(b
            .reserve(need)
            .unwrap_err()
            .to_string()
            .contains("--max-memory"));
        drop(one);
        let three = b.reserve(need).unwrap();
        drop((two, three));
        assert_eq!(b.held(), Need::default());
    }

    #[test]
    fn the_host_ceiling_is_read() {
        let c = memory_ceiling().expect("this host has /proc/meminfo");
        assert!(c.0 > 64 * Bytes::MIB);
        assert!(default_memory() <= Bytes(Bytes::GIB));
        assert!(fd_budget(64) > 0);
    }
}
