//! A server's own figures for `--metrics`: sessions ended by protocol and
//! outcome (counted as each session's log record is written, never on the data
//! path), and a snapshot of what runs and what the budget holds.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use netsonde_model::health::{Resources, ServerHealth};

use crate::budget::Need;

/// Reads a running server's health, from any thread.
pub type HealthProbe = Arc<dyn Fn() -> ServerHealth + Send + Sync>;

/// Sessions ended, by (protocol, outcome).
#[derive(Debug, Default)]
pub(crate) struct Tally(Mutex<BTreeMap<(&'static str, &'static str), u64>>);

impl Tally {
    /// One session ended so.
    pub(crate) fn count(&self, protocol: &'static str, outcome: &'static str) {
        let protocol = if protocol.is_empty() {
            "netsonde"
        } else {
            protocol
        };
        *self
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry((protocol, outcome))
            .or_default() += 1;
    }

    /// The health these counts and the server's state make.
    pub(crate) fn snapshot(
        &self,
        running: usize,
        connections: usize,
        held: Need,
        total: Need,
    ) -> ServerHealth {
        let res = |n: Need| Resources {
            memory: n.memory.0,
            threads: n.threads,
            fds: n.fds,
        };
        ServerHealth {
            sessions: self
                .0
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .map(|((p, o), n)| ((p.to_string(), o.to_string()), *n))
                .collect(),
            running_tests: running as u64,
            connections: connections as u64,
            held: res(held),
            budget: res(total),
            quic_perf: None,
        }
    }
}
