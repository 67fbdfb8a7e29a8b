//! Interval records of a running test, made by the control thread from the
//! flows' published counters, off the data path; and whether a test that ends
//! by volume has moved it.
//!
//! A netsonde client's records of a direction it sends over TCP count the bytes
//! its receiver acknowledged (`TCP_INFO`, read by the control thread): bytes
//! written into a socket buffer can outrun the link for an interval (a 50 Mbit/s
//! link showed 126 Mbit/s in a 250 ms interval as a send buffer filled), bytes
//! acknowledged cannot. An iperf3 end's records count what it wrote or read, as
//! iperf3's do, so they add up to its totals.

use std::time::{Duration, Instant};

use netsonde_model::result::IntervalRecord;
use netsonde_model::spec::{FlowDir, TestSpec};
use netsonde_model::units::{BitRate, Bytes, Nanos};

use crate::flows::Running;

/// Interval records, made by the control thread from the flows' published
/// counters, off the data path.
pub(crate) struct Intervals {
    clock: netsonde_engine::FlowClock,
    period: Option<Duration>,
    next: Option<Instant>,
    last: Option<[(u64, u64, u64); 2]>,
    /// Whether a sending direction's bytes are those acknowledged (see the module).
    delivered: bool,
    /// Each direction's bytes acknowledged as the last record ended (`None`: not
    /// sent over TCP here, or not counted so).
    last_acked: [Option<u64>; 2],
    /// The records so far.
    pub(crate) records: Vec<IntervalRecord>,
}

/// Each direction's counts (bytes, messages, transactions) across its flows.
fn sum(running: &Running) -> [(u64, u64, u64); 2] {
    let mut by_dir = [(0u64, 0u64, 0u64); 2];
    for (_, dir, c) in &running.counters {
        let (b, m, t) = c.load();
        let e = &mut by_dir[usize::from(*dir == FlowDir::Down)];
        *e = (e.0 + b, e.1 + m, e.2 + t);
    }
    by_dir
}

/// Each direction's bytes acknowledged across this end's sending TCP flows;
/// `None` for a direction it does not send over TCP (or whose `TCP_INFO` the
/// kernel refused).
fn acked(running: &Running) -> [Option<u64>; 2] {
    let mut by_dir = [Some(0u64); 2];
    let mut any = [false; 2];
    for ((_, dir, _), sock) in running.counters.iter().zip(&running.acked_by) {
        let k = usize::from(*dir == FlowDir::Down);
        let Some(sock) = sock else { continue };
        any[k] = true;
        by_dir[k] = by_dir[k]
            .zip(netsonde_engine::sockopt::bytes_acked(sock))
            .map(|(a, b)| a + b);
    }
    [0, 1].map(|k| by_dir[k].filter(|_| any[k]))
}

/// Each direction's bytes acknowledged as the measured interval began, from
/// the sending flows themselves; `None` for a direction this end does not send
/// over TCP, or one of whose flows has not noted it.
fn acked_at_start(running: &Running) -> [Option<u64>; 2] {
    let mut by_dir = [Some(0u64); 2];
    let mut any = [false; 2];
    for ((_, dir, c), sock) in running.counters.iter().zip(&running.acked_by) {
        if sock.is_none() {
            continue;
        }
        let k = usize::from(*dir == FlowDir::Down);
        any[k] = true;
        by_dir[k] = by_dir[k].zip(c.load_acked_start()).map(|(a, b)| a + b);
    }
    [0, 1].map(|k| by_dir[k].filter(|_| any[k]))
}

/// Where each flow's counts stood as the measured interval began: exactly, from
/// the flow itself (a flow not there yet counts from where it is now).
fn at_start(running: &Running) -> [(u64, u64, u64); 2] {
    let mut by_dir = [(0u64, 0u64, 0u64); 2];
    for (_, dir, c) in &running.counters {
        let (b, m, t) = c.load_start().unwrap_or_else(|| c.load());
        let e = &mut by_dir[usize::from(*dir == FlowDir::Down)];
        *e = (e.0 + b, e.1 + m, e.2 + t);
    }
    by_dir
}

/// Whether a test that ends by volume has moved it, in either direction, in
/// its measured interval (as an iperf3 client decides when to end: by what it
/// sent or what it received).
pub(crate) fn volume_moved(running: &Running, spec: &TestSpec) -> bool {
    let Some(v) = spec.volume else { return false };
    let mut by_dir = [0u64; 2];
    for (_, dir, c) in &running.counters {
        if let Some((start, _, _)) = c.load_start() {
            let (now, _, _) = c.load();
            by_dir[usize::from(*dir == FlowDir::Down)] += now.saturating_sub(start);
        }
    }
    by_dir.iter().any(|&b| b >= v.0)
}

impl Intervals {
    /// A netsonde client's records, every `--interval`: a direction it sends over
    /// TCP counts the bytes acknowledged.
    pub(crate) fn new(running: &Running, spec: &TestSpec) -> Intervals {
        Intervals::with_period(running, spec.interval.map(Nanos::as_duration), true)
    }

    /// An iperf3 client's records, every `--interval`, of what it wrote or read.
    pub(crate) fn written(running: &Running, spec: &TestSpec) -> Intervals {
        Intervals::with_period(running, spec.interval.map(Nanos::as_duration), false)
    }

    /// Records every `period`, whatever the spec says, of what this end wrote or
    /// read (an iperf3 client's session on the server reports each second, as
    /// iperf3 -s does).
    pub(crate) fn every(running: &Running, period: Duration) -> Intervals {
        Intervals::with_period(running, Some(period), false)
    }

    fn with_period(running: &Running, period: Option<Duration>, delivered: bool) -> Intervals {
        let clock = running.clock;
        Intervals {
            clock,
            period,
            next: period.map(|p| clock.warm_end + p),
            last: None,
            delivered,
            last_acked: [None; 2],
            records: Vec::new(),
        }
    }

    /// How long the control thread may wait before the next record is due, or
    /// the measured interval begins (when the acknowledged bytes are read as its
    /// baseline), at most 100 ms.
    pub(crate) fn wait(&self) -> Duration {
        let due = match self.last {
            None if self.period.is_some() => Some(self.clock.warm_end),
            _ => self.next,
        };
        due.map(|at| at.saturating_duration_since(Instant::now()))
            .unwrap_or(Duration::from_millis(100))
            .min(Duration::from_millis(100))
    }

    /// Makes every record due now.
    pub(crate) fn tick(&mut self, running: &Running, on_interval: &mut dyn FnMut(&IntervalRecord)) {
        self.make(running, Instant::now(), on_interval);
    }

    /// The flows are done: every record still due is made from the final counts
    /// (else a late wake-up of the control thread would lose the last one).
    pub(crate) fn close(
        &mut self,
        running: &Running,
        on_interval: &mut dyn FnMut(&IntervalRecord),
    ) {
        let at = running.end() + self.period.unwrap_or_default();
        self.make(running, at, on_interval);
    }

    fn make(
        &mut self,
        running: &Running,
        now_i: Instant,
        on_interval: &mut dyn FnMut(&IntervalRecord),
    ) {
        let mut clock = self.clock;
        // A test that ended by volume before its clock: its last record ends
        // when the flows did.
        clock.end = running.end();
        if self.last.is_none() && self.period.is_some() && now_i >= clock.warm_end {
            self.last = Some(at_start(running));
            if self.delivered {
                self.last_acked = acked(running);
            }
        }
        while let (Some(at), Some(p), Some(prev)) = (self.next, self.period, self.last) {
            if !(now_i >= at && at <= clock.end + p / 2) {
                break;
            }
            // By the first record every flow has passed the start, so its own
            // count from that moment is there.
            let prev = if self.records.is_empty() {
                // The flows' own readings at the start, where they made them
                // (else the one taken as the interval began, a wake-up late).
                for (last, exact) in self.last_acked.iter_mut().zip(acked_at_start(running)) {
                    if last.is_some() && exact.is_some() {
                        *last = exact;
                    }
                }
                at_start(running)
            } else {
                prev
            };
            let cur = sum(running);
            let cur_acked = if self.delivered {
                acked(running)
            } else {
                [None; 2]
            };
            let start = Nanos::from(at.saturating_duration_since(clock.warm_end))
                .saturating_sub(Nanos::from(p));
            let len = p.min(clock.end.saturating_duration_since(at - p));
            for (i, dir) in [FlowDir::Up, FlowDir::Down].into_iter().enumerate() {
                if !running.counters.iter().any(|(_, d, _)| *d == dir) {
                    continue;
                }
                let bytes = Bytes(match (cur_acked[i], self.last_acked[i]) {
                    (Some(now), Some(then)) => now.saturating_sub(then),
                    _ => cur[i].0 - prev[i].0,
                });
                let rec = IntervalRecord {
                    start,
                    end: start.saturating_add(Nanos::from(len)),
                    dir,
                    bytes,
                    rate: BitRate::from_bytes(bytes, len),
                    messages: cur[i].1 - prev[i].1,
                    transactions: cur[i].2 - prev[i].2,
                };
                on_interval(&rec);
                self.records.push(rec);
            }
            self.last = Some(cur);
            self.last_acked = cur_acked;
            self.next = Some(at + p);
        }
    }
}
